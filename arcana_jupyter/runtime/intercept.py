"""Intercepted tools: tool calls the runtime services itself instead of a user function.

``ask_user``, the cognitive primitives (``recall``, ``pin``, ``unpin``), the adaptive-context tools
and the memory tools are all :class:`InterceptedTool`: a :class:`ToolSpec` the model sees plus a
handler that gets the session and the decoded arguments and returns a JSON-able dict. Handlers
report failures as structured results; an exception escaping a handler is caught by the session
and turned into one too, so a tool call can never end a turn.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..messages import ToolSpec

if TYPE_CHECKING:
    from .session import ChatSession

HandlerResult = dict[str, Any] | Awaitable[dict[str, Any]]
Handler = Callable[["ChatSession", dict[str, Any]], HandlerResult]


@dataclass(frozen=True)
class InterceptedTool:
    spec: ToolSpec
    handler: Handler
    primitive: str | None = None
    """Set for cognitive primitives: their calls are also traced as ``cognitive_primitive`` events."""
    group: str = "runtime"
    """``runtime``, ``primitives``, ``adaptive`` or ``memory``: where the tool comes from."""

    @property
    def name(self) -> str:
        return self.spec.name

    async def run(self, session: ChatSession, args: dict[str, Any]) -> dict[str, Any]:
        result = self.handler(session, args)
        if inspect.isawaitable(result):
            result = await result
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


async def _ask_user(session: ChatSession, args: dict[str, Any]) -> dict[str, Any]:
    question = args.get("question")
    if not isinstance(question, str) or not question.strip():
        return {"ok": False, "error": "invalid_arguments", "message": "question must be a non-empty string"}
    callback = session.ask_user_callback
    if callback is None:
        return {"ok": False, "error": "no_user", "message": "no user is available to answer; continue without"}
    answer = callback(question)
    if inspect.isawaitable(answer):
        answer = await answer
    return {"ok": True, "answer": str(answer)}


ASK_USER = InterceptedTool(ASK_USER_SPEC, _ask_user)
