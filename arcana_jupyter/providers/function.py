"""Providers backed by Python code: real implementations of the interface for tests and scripts.

:class:`FunctionProvider` calls your function with each :class:`LLMRequest`;
:class:`ScriptedProvider` plays a list of answers in order. Both stream like a real model (text
in word-sized chunks, tool calls as deltas, the whole response last) and report exact token usage
(tiktoken) when the answer does not carry its own.

    provider = FunctionProvider(lambda request: f"you said {request.messages[-1].content}")
    provider = ScriptedProvider(["Let me look.", tool_call("search", {"q": "x"}), "Done."])
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from ..exceptions import ProviderError
from ..messages import Message, ToolCall, as_message
from ..tokens import TokenCounter
from .base import LLMRequest, LLMResponse, Provider, StreamChunk, Usage

Answer = LLMResponse | Message | str | ToolCall | Sequence[ToolCall] | Mapping[str, Any]
"""What a function or a script may answer: a full response, an assistant message, text, one or
more tool calls, or a dict (``{"content": ..., "tool_calls": [...]}`` / ``{"tool": name, "args": {...}}``)."""

AnswerFunction = Callable[[LLMRequest], Answer | Awaitable[Answer]]

_WORDS = re.compile(r"\S+\s*|\s+")


def tool_call(name: str, arguments: Mapping[str, Any] | str | None = None, *, id: str | None = None) -> ToolCall:
    """A tool call for a script: ``tool_call("search", {"q": "x"})``."""
    raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments or {}))
    return ToolCall(id=id or f"call_{name}", name=name, arguments=raw)


class FunctionProvider(Provider):
    """A provider whose answers come from ``fn(request)`` (sync or async).

    Args:
        fn: called with each request; returns an :data:`Answer` (or an awaitable of one).
        model_name: reported as the response's model.
        name: the provider name (traces show it as ``gen_ai.system``).
        keep_requests: how many of the latest requests :attr:`requests` holds (None: every one, what a test
            inspects; a long scripted run or a benchmark keeps a few — each request holds its prompt, so
            keeping all of them grows the heap with the run, which a real provider does not).
    """

    count_margin = 1.0
    """Usage is counted with the session's own counter: exact by construction."""

    def __init__(self, fn: AnswerFunction, *, model_name: str = "function", name: str = "function",
                 keep_requests: int | None = None) -> None:
        if keep_requests is not None and keep_requests < 0:
            raise ValueError(f"keep_requests must be None or >= 0, not {keep_requests}")
        self.fn = fn
        self.keep_requests = keep_requests
        self.model_name = model_name
        self.name = name
        self.requests: list[LLMRequest] = []
        """The requests received, in order (the latest ``keep_requests`` when that is set)."""
        self._counter: TokenCounter | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_name={self.model_name!r})"

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        if self.keep_requests is not None and len(self.requests) > self.keep_requests:
            del self.requests[:len(self.requests) - self.keep_requests]
        answer = self.fn(request)
        if inspect.isawaitable(answer):
            answer = await answer
        return self._response(answer, request)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        response = await self.complete(request)
        for piece in _WORDS.findall(response.message.content):
            yield StreamChunk(text=piece)
        for call in response.message.tool_calls:
            yield StreamChunk(tool_call_delta=call)
        yield StreamChunk(response=response)

    def _response(self, answer: Any, request: LLMRequest) -> LLMResponse:
        if isinstance(answer, LLMResponse):
            return answer
        message = to_message(answer)
        counter = self._counter or TokenCounter(request.model or None)
        self._counter = counter
        usage = Usage(
            input_tokens=counter.count_messages(request.messages)
            + (counter.count_tools(request.tools) if request.tools else 0),
            output_tokens=counter.count_message(message),
        )
        return LLMResponse(
            message=message,
            usage=usage,
            finish_reason="tool_calls" if message.tool_calls else "stop",
            model=self.model_name,
        )


def to_message(answer: Any) -> Message:
    """The assistant message for an :data:`Answer` (an ``LLMResponse`` gives its message)."""
    if isinstance(answer, LLMResponse):
        return answer.message
    if isinstance(answer, Message):
        return answer
    if isinstance(answer, str):
        return Message(role="assistant", content=answer)
    if isinstance(answer, ToolCall):
        return Message(role="assistant", tool_calls=(answer,))
    if isinstance(answer, Mapping):
        if "tool" in answer:
            return Message(
                role="assistant", tool_calls=(tool_call(answer["tool"], answer.get("args"), id=answer.get("id")),)
            )
        return as_message({"role": "assistant", **answer})
    if isinstance(answer, Sequence) and answer and all(isinstance(c, ToolCall) for c in answer):
        return Message(role="assistant", tool_calls=tuple(answer))
    raise TypeError(
        f"a provider function must answer with an LLMResponse, Message, str, ToolCall(s) or dict, "
        f"got {type(answer).__name__}"
    )


class ScriptedProvider(FunctionProvider):
    """Plays ``answers`` in order, one per call; a call past the end raises
    :class:`~arcana_jupyter.exceptions.ProviderError` saying how many answers there were.

    An answer may also be a callable of the request (to compute a reply from what was asked).
    """

    def __init__(
        self, answers: Iterable[Answer | Callable[[LLMRequest], Answer]], *, model_name: str = "scripted"
    ) -> None:
        self.answers = list(answers)
        self.position = 0
        super().__init__(self._next, model_name=model_name, name="scripted")

    @property
    def remaining(self) -> int:
        return len(self.answers) - self.position

    def _next(self, request: LLMRequest) -> Answer:
        if self.position >= len(self.answers):
            raise ProviderError(
                f"scripted provider: call {self.position + 1} but the script has only {len(self.answers)} answer(s)",
                provider="scripted",
            )
        answer = self.answers[self.position]
        self.position += 1
        if callable(answer) and not isinstance(answer, LLMResponse | Message | str | ToolCall | Mapping):
            return answer(request)
        return answer  # type: ignore[return-value]
