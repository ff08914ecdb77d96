"""Intercepted tools: tool calls the runtime services itself instead of a user function.

``ask_user``, the cognitive primitives (``recall``, ``pin``, ``unpin``), the adaptive-context tools
and the memory tools are all :class:`InterceptedTool`: a
:class:`~arcana_jupyter.schema.tools.ToolDeclaration` (name, description, arguments model; the
spec the model sees comes from it) plus a handler that gets the
:class:`~arcana_jupyter.runtime.context.SessionContext` and the validated arguments (a model
instance) and returns a :class:`~arcana_jupyter.schema.tools.ToolOutcome` or the structured result
as a dict. :meth:`InterceptedTool.run` validates the call once
(:meth:`~arcana_jupyter.schema.tools.ToolDeclaration.parse`); a handler raises
:class:`~arcana_jupyter.schema.tools.ModelRetry` for what the model must fix, and that becomes the
call's structured result; any other exception escaping a handler becomes a ``failed`` outcome, so
a tool call can never end a turn.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from ..messages import ToolSpec
from ..schema.tools import (
    BAD_ARGUMENTS,
    FAILED,
    ModelRetry,
    ToolArguments,
    ToolDeclaration,
    ToolOutcome,
    to_json_text,
)
from .context import AskUser, SessionContext

__all__ = ["ASK_USER", "AskUser", "InterceptedTool"]

log = logging.getLogger("arcana_jupyter")

HandlerResult = ToolOutcome | dict[str, Any]  # JSON edge: or the structured result
Handler = Callable[[SessionContext, Any], HandlerResult | Awaitable[HandlerResult]]
"""``(context, arguments) -> outcome``: ``arguments`` an instance of the declaration's model; a dict
is a success's structured result; :class:`ModelRetry` is what the model must fix."""
Rejected = Callable[[SessionContext, Any, ToolOutcome], None]
Shape = Callable[[SessionContext, Any, ToolOutcome], ToolOutcome]


@dataclass(frozen=True)
class InterceptedTool:
    declaration: ToolDeclaration[Any]
    """Name, description and arguments model (a bare :class:`ToolSpec` is accepted: its model is
    derived from the JSON schema)."""
    handler: Handler
    primitive: str | None = None
    """Set for cognitive primitives: their calls are also traced as ``cognitive_primitive`` events."""
    group: str = "runtime"
    """``runtime``, ``primitives``, ``adaptive`` or ``memory``: where the tool comes from."""
    on_bad_arguments: Rejected | None = None
    """Told about a call the validator refused (the adaptive engine records it as a ``context_action``)."""
    repeatable: bool = False
    """A repeated identical call in one turn runs again and answers for itself (the primitives: a
    second pin of the same content answers ``already_pinned: true``, a recall re-reads the turn the
    builder may have compressed since). Otherwise the loop guard answers it ``repeated_call`` and
    stops the loop (runtime/guard.py)."""
    shape: Shape | None = None
    """Makes every failed outcome (refused arguments, a failure of the handler, an exception) carry the
    tool's own failure keys next to the common ones (the primitives: ``found: false, note``,
    ``pinned: false, reason``, ``unpinned: false, reason``)."""

    def __post_init__(self) -> None:
        if isinstance(self.declaration, ToolSpec):
            object.__setattr__(self, "declaration", ToolDeclaration.from_spec(self.declaration))

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def spec(self) -> ToolSpec:
        return self.declaration.spec

    @property
    def model(self) -> type[BaseModel]:
        return self.declaration.args

    async def run(self, ctx: SessionContext,
                  raw: str | dict[str, Any] | None) -> ToolOutcome:  # JSON edge: the model's arguments
        """Validate ``raw`` and run the handler; never raises. A failure is given the tool's ``shape``."""
        outcome = await self._run(ctx, raw)
        if outcome.ok or self.shape is None:
            return outcome
        try:
            return self.shape(ctx, raw, outcome)
        except Exception:
            log.exception("arcana: shaping a failed %s call failed", self.name)
            return outcome

    async def _run(self, ctx: SessionContext,
                   raw: str | dict[str, Any] | None) -> ToolOutcome:  # JSON edge: the model's arguments
        args = self.declaration.parse(raw)
        if isinstance(args, ToolOutcome):
            if self.on_bad_arguments is not None:
                try:
                    self.on_bad_arguments(ctx, raw, args)
                except Exception:
                    log.exception("arcana: recording a refused %s call failed", self.name)
            return args
        try:
            result = self.handler(ctx, args)
            if inspect.isawaitable(result):
                result = await result
        except ModelRetry as retry:  # what the model must fix: its structured result
            return retry.outcome()
        except Exception as exc:  # structured, never an exception that ends the turn
            log.exception("arcana: intercepted tool %s failed", self.name)
            data = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
            return ToolOutcome.failure(FAILED, f"{type(exc).__name__}: {exc}", data, content=to_json_text(data))
        return result if isinstance(result, ToolOutcome) else ToolOutcome.success(result)


class AskUserArgs(ToolArguments):
    question: str = Field(description="What to ask.")


ASK_USER_DECLARATION = ToolDeclaration(
    name="ask_user",
    description="Ask the user a question and wait for the answer. Use it only when you cannot proceed without them.",
    args=AskUserArgs,
    parameters={  # as recorded since the first release (pydantic's would differ: key order, additionalProperties)
        "type": "object",
        "properties": {"question": {"type": "string", "description": "What to ask."}},
        "required": ["question"],
    },
)
ASK_USER_SPEC = ASK_USER_DECLARATION.spec


async def _ask_user(ctx: SessionContext, args: AskUserArgs) -> dict[str, Any]:  # JSON edge: the result
    if not args.question.strip():
        text = "question must be a non-empty string"
        raise ModelRetry(text, code=BAD_ARGUMENTS, data={"ok": False, "error": BAD_ARGUMENTS, "message": text})
    callback = ctx.ask_user
    if callback is None:
        text = "no user is available to answer; continue without"
        raise ModelRetry(text, code="no_user")
    answer = callback(args.question)
    if inspect.isawaitable(answer):
        answer = await answer
    return {"ok": True, "answer": str(answer)}


ASK_USER = InterceptedTool(ASK_USER_DECLARATION, _ask_user)
