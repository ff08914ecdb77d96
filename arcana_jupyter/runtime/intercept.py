"""Intercepted tools: tool calls the runtime services itself instead of a user function.

``ask_user``, the cognitive primitives (``recall``, ``pin``, ``unpin``), the adaptive-context tools
and the memory tools are all :class:`InterceptedTool`: a :class:`ToolSpec` the model sees plus a
handler that gets the session and the arguments and returns a
:class:`~arcana_jupyter.schema.tools.ToolOutcome`. :meth:`InterceptedTool.run` checks the arguments
first with the one validator (:func:`~arcana_jupyter.schema.tools.validate_arguments`, against
``args_model`` or the spec's JSON schema); an exception escaping a handler becomes a ``failed``
outcome, so a tool call can never end a turn.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..messages import ToolSpec
from ..schema.tools import BAD_ARGUMENTS, FAILED, ToolOutcome, schema_model, to_json_text, validate_arguments

if TYPE_CHECKING:
    from .session import ChatSession

log = logging.getLogger("arcana_jupyter")

HandlerResult = ToolOutcome | Awaitable[ToolOutcome]
Handler = Callable[["ChatSession", dict[str, Any]], HandlerResult]
Rejected = Callable[["ChatSession", Any, ToolOutcome], None]
Shape = Callable[["ChatSession", Any, ToolOutcome], ToolOutcome]


@dataclass(frozen=True)
class InterceptedTool:
    spec: ToolSpec
    handler: Handler
    primitive: str | None = None
    """Set for cognitive primitives: their calls are also traced as ``cognitive_primitive`` events."""
    group: str = "runtime"
    """``runtime``, ``primitives``, ``adaptive`` or ``memory``: where the tool comes from."""
    args_model: type[BaseModel] | None = None
    """The arguments as a pydantic model; ``None``: a model derived from ``spec.parameters``."""
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

    @property
    def name(self) -> str:
        return self.spec.name

    @cached_property
    def model(self) -> type[BaseModel]:
        return self.args_model or schema_model(self.name, self.spec.parameters)

    async def run(self, session: ChatSession, raw: str | dict[str, Any] | None) -> ToolOutcome:
        """Validate ``raw`` and run the handler; never raises. A failure is given the tool's ``shape``."""
        outcome = await self._run(session, raw)
        if outcome.ok or self.shape is None:
            return outcome
        try:
            return self.shape(session, raw, outcome)
        except Exception:
            log.exception("arcana: shaping a failed %s call failed", self.name)
            return outcome

    async def _run(self, session: ChatSession, raw: str | dict[str, Any] | None) -> ToolOutcome:
        args = validate_arguments(self.name, raw, model=self.model, schema=self.spec.parameters)
        if isinstance(args, ToolOutcome):
            if self.on_bad_arguments is not None:
                try:
                    self.on_bad_arguments(session, raw, args)
                except Exception:
                    log.exception("arcana: recording a refused %s call failed", self.name)
            return args
        try:
            result = self.handler(session, args)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # structured, never an exception that ends the turn
            log.exception("arcana: intercepted tool %s failed", self.name)
            data = {"ok": False, "error": type(exc).__name__, "message": str(exc)}
            return ToolOutcome.failure(FAILED, f"{type(exc).__name__}: {exc}", data, content=to_json_text(data))
        return result


ASK_USER_SPEC = ToolSpec(
    name="ask_user",
    description="Ask the user a question and wait for the answer. Use it only when you cannot proceed without them.",
    parameters={
        "type": "object",
        "properties": {"question": {"type": "string", "description": "What to ask."}},
        "required": ["question"],
    },
)

AskUser = Callable[[str], str | Awaitable[str]]


async def _ask_user(session: ChatSession, args: dict[str, Any]) -> ToolOutcome:
    question = args.get("question")
    if not isinstance(question, str) or not question.strip():
        text = "question must be a non-empty string"
        data: dict[str, Any] = {"ok": False, "error": BAD_ARGUMENTS, "message": text}
        return ToolOutcome.failure(BAD_ARGUMENTS, text, data, content=to_json_text(data))
    callback = session.ask_user_callback
    if callback is None:
        text = "no user is available to answer; continue without"
        data = {"ok": False, "error": "no_user", "message": text}
        return ToolOutcome.failure("no_user", text, data, content=to_json_text(data))
    answer = callback(question)
    if inspect.isawaitable(answer):
        answer = await answer
    return ToolOutcome.success({"ok": True, "answer": str(answer)})


ASK_USER = InterceptedTool(ASK_USER_SPEC, _ask_user)
