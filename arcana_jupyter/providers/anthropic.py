"""Anthropic's Messages API (``POST {base_url}/v1/messages``).

Our messages are OpenAI-shaped; the Messages API differs in four ways this module bridges:

- ``system`` is a top-level field. Consecutive system messages at the head of the conversation
  become it; a system message later in the conversation (a memory digest, an adaptive-context
  section) becomes a user-role text block wrapped in ``<system-context>`` tags, so the model reads
  it as context without us reordering the conversation.
- Roles must alternate: consecutive messages of the same role are merged into one message with
  several content blocks (tool results of one step land in one user message, as required).
- Tool calls are ``tool_use`` blocks (``input`` is a JSON object) and tool results are
  ``tool_result`` blocks in a user message.
- Usage: ``input_tokens`` excludes cached prompt tokens; we report ``input_tokens`` as the whole
  prompt (uncached + cache reads + cache writes) and ``cached_input_tokens`` as the cache reads,
  the same meaning as OpenAI's ``prompt_tokens`` and ``cached_tokens``.
- Prompt caching is explicit: a prefix is cached up to a block marked ``cache_control``, at most
  four per request, read back when a later request starts with the same blocks (tools, then
  system, then messages). :func:`cache_breakpoints` marks the stable prefix our prompts are laid
  out for: the last tool, the system text, the end of the conversation before the current turn's
  last message, and that message's own text before the per-turn ``<system-context>`` block (which
  changes with every question, so it is sent as a block of its own after the mark).

Streaming reads the event stream: ``message_start``, ``content_block_start`` /
``content_block_delta`` (``text_delta``, ``input_json_delta``) / ``content_block_stop``,
``message_delta`` (stop reason, output usage), ``message_stop``, ``ping`` and ``error``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..exceptions import ProviderError, StreamError
from ..messages import Message, ToolCall
from .base import LLMRequest, LLMResponse, Provider, StreamChunk, Usage
from .connection import HTTPConnection, RetryPolicy, StreamLimits, iter_sse
from .openai_compat import MALFORMED, count, malformed
from .shaping import PLACEHOLDER_TEXT, context_block

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
"""The Messages API requires ``max_tokens``; used when the request has none."""

_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}


def map_stop_reason(value: str | None) -> str:
    if not value:
        return "stop"
    return _STOP.get(value, value)


def parse_usage(data: Mapping[str, Any] | None) -> Usage:
    """Our :class:`Usage` from Anthropic's (cache reads and writes counted into ``input_tokens``)."""
    if not data:
        return Usage()
    cache_read = count(data.get("cache_read_input_tokens"))
    cache_write = count(data.get("cache_creation_input_tokens"))
    return Usage(
        input_tokens=count(data.get("input_tokens")) + cache_read + cache_write,
        output_tokens=count(data.get("output_tokens")),
        cached_input_tokens=cache_read,
    )


def to_anthropic(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """(``system``, ``messages``) for the Messages API from our conversation."""
    head: list[str] = []
    rest = list(messages)
    while rest and rest[0].role == "system":
        head.append(rest.pop(0).content)
    system = "\n\n".join(h for h in head if h) or None
    out: list[dict[str, Any]] = []
    for m in rest:
        role, blocks = _blocks(m)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if out and out[0]["role"] == "assistant":
        # the API requires the conversation to open with a user turn (a builder may have dropped it)
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": PLACEHOLDER_TEXT}]})
    return system, out


def _blocks(m: Message) -> tuple[str, list[dict[str, Any]]]:
    if m.role == "system":
        return "user", [{"type": "text", "text": context_block([(m.name, m.content)])}]
    if m.role == "tool":
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or "", "content": m.content}
        return "user", [result]
    blocks: list[dict[str, Any]] = []
    if m.content:
        blocks.append({"type": "text", "text": m.content})
    if m.role == "assistant":
        for call in m.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": _input_object(call.arguments)}
            )
    return m.role, blocks


CACHE_CONTROL = {"type": "ephemeral"}
"""Anthropic's one cache type (a 5-minute lifetime, renewed by each read)."""
MAX_BREAKPOINTS = 4
"""The Messages API refuses more ``cache_control`` blocks than this in one request."""
_CONTEXT_OPEN = "\n\n<system-context"


def _split_context(block: dict[str, Any]) -> list[dict[str, Any]]:
    """A text block that ends with a ``<system-context>`` block (the shaping step's per-turn context)
    as two text blocks: the text, then the context."""
    text = block.get("text") or ""
    at = text.rfind(_CONTEXT_OPEN)
    if block.get("type") != "text" or at <= 0 or not text.endswith("</system-context>"):
        return [block]
    return [{**block, "text": text[:at]}, {"type": "text", "text": text[at + 2:]}]


def cache_breakpoints(body: dict[str, Any]) -> int:
    """Mark the stable prefix of ``body`` (a Messages API request) with ``cache_control``, in place,
    within the API's rules (at most :data:`MAX_BREAKPOINTS`, never on an empty text block): the last
    tool, the system text, the last block of the message before the last one, and the last message's
    text before its per-turn context block (or its last block when it has none). Returns how many."""
    marks: list[dict[str, Any]] = []
    tools = body.get("tools") or []
    if tools:
        marks.append(tools[-1])
    system = body.get("system")
    if isinstance(system, str) and system:
        body["system"] = [{"type": "text", "text": system}]
        marks.append(body["system"][0])
    messages = body.get("messages") or []
    if len(messages) >= 2 and messages[-2]["content"]:
        marks.append(messages[-2]["content"][-1])
    if messages and messages[-1]["content"]:
        last = messages[-1]
        blocks = _split_context(last["content"][-1])
        last["content"][-1:] = blocks
        marks.append(blocks[0] if len(blocks) == 2 else blocks[-1])
    kept = [m for m in marks if not (m.get("type") == "text" and not m.get("text"))][-MAX_BREAKPOINTS:]
    for m in kept:
        m["cache_control"] = dict(CACHE_CONTROL)
    return len(kept)


def _input_object(arguments: str) -> dict[str, Any]:
    """A tool call's arguments as the JSON object ``tool_use.input`` must be."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        # the model produced invalid JSON; keep its text so the conversation stays faithful
        return {"_raw_arguments": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _arguments_text(value: Any) -> str:
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def _tool_choice(choice: str | dict[str, Any] | None) -> dict[str, Any] | None:
    if choice is None or choice == "auto":
        return {"type": "auto"}
    if choice == "required" or choice == "any":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, Mapping):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        if name:
            return {"type": "tool", "name": name}
    raise ProviderError(f"anthropic: unsupported tool_choice {choice!r}", provider="anthropic")


class AnthropicProvider(Provider):
    """Anthropic's Messages API.

    Args:
        api_key: sent as ``x-api-key``.
        base_url: the API root (``https://api.anthropic.com``); requests go to ``/v1/messages``.
        timeout / max_retries / retry / transport: as for
            :class:`~arcana_jupyter.providers.openai_compat.OpenAICompatProvider`.
        default_max_tokens: ``max_tokens`` when the request sets none (the API requires one).
        limits: the bytes and seconds one answer may take (:class:`~.connection.StreamLimits`).
        prompt_caching: mark the stable prefix of every request with ``cache_control``
            (:func:`cache_breakpoints`); ``False`` sends none.
    """

    name = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str = "https://api.anthropic.com",
        timeout: float = 120.0,
        max_retries: int = 4,
        key_hint: str = "",
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        extra_headers: Mapping[str, str] | None = None,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        limits: StreamLimits | None = None,
        prompt_caching: bool = True,
    ) -> None:
        self.default_max_tokens = default_max_tokens
        self.prompt_caching = prompt_caching
        headers = {"content-type": "application/json", "anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        headers.update(extra_headers or {})
        self._http = HTTPConnection(
            provider="anthropic",
            base_url=base_url,
            headers=headers,
            secrets=[api_key],
            timeout=timeout,
            retry=retry or RetryPolicy(max_retries=max_retries),
            key_hint=key_hint,
            transport=transport,
            limits=limits,
        )

    def __repr__(self) -> str:
        return f"AnthropicProvider(base_url={self._http.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    def payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        """The JSON body for ``request`` (``seed`` and ``response_format`` have no equivalent and are not sent)."""
        system, messages = to_anthropic(request.messages)
        body: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens if request.max_tokens is not None else self.default_max_tokens,
            "messages": messages,
        }
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
            ]
            choice = _tool_choice(request.tool_choice)
            if choice != {"type": "auto"}:
                body["tool_choice"] = choice
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if stream:
            body["stream"] = True
        if self.prompt_caching:
            cache_breakpoints(body)
        return body

    async def complete(self, request: LLMRequest) -> LLMResponse:
        data, attempts = await self._http.post_json("v1/messages", self.payload(request, stream=False))
        try:
            response = self.parse_response(data)
        except MALFORMED as exc:
            detail = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise ProviderError(f"anthropic: unexpected answer from /v1/messages ({type(exc).__name__}: {detail})",
                                provider="anthropic") from None
        return response.model_copy(update={"attempts": attempts})

    def parse_response(self, data: Any) -> LLMResponse:
        """An :class:`LLMResponse` from a decoded ``message`` object."""
        if not isinstance(data, Mapping) or not isinstance(data.get("content"), list):
            keys = sorted(data) if isinstance(data, Mapping) else type(data).__name__
            raise ProviderError(f"anthropic: unexpected answer from /v1/messages (no content list; got {keys})",
                                provider="anthropic")
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in data["content"]:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text") or "")
            elif kind == "tool_use":
                calls.append(
                    ToolCall(id=block["id"], name=block["name"], arguments=_arguments_text(block.get("input")))
                )
        return LLMResponse(
            message=Message(role="assistant", content="".join(texts), tool_calls=tuple(calls)),
            usage=parse_usage(data.get("usage")),
            finish_reason=map_stop_reason(data.get("stop_reason")),
            model=str(data.get("model") or ""),
            raw_id=data.get("id"),
        )

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        state = _EventState()
        async with self._http.stream_lines("v1/messages", self.payload(request, stream=True)) as (lines, attempts):
            async for event in iter_sse(lines):
                try:
                    chunks = state.feed(event.event, event.data)
                except MALFORMED as exc:
                    raise malformed("anthropic", f"event #{state.count} ({event.event or 'unnamed'})", exc,
                                    event.data) from None
                for chunk in chunks:
                    yield chunk
                if state.stopped:
                    break
        try:
            final = state.response(attempts)
        except MALFORMED as exc:
            raise malformed("anthropic", "answer (assembled from the events)", exc, "") from None
        yield StreamChunk(response=final)


@dataclass
class _Block:
    kind: str
    text: str = ""
    id: str = ""
    name: str = ""
    json: str = ""


@dataclass
class _EventState:
    blocks: dict[int, _Block] = field(default_factory=dict)
    raw_usage: dict[str, Any] = field(default_factory=dict)
    """``message_start``'s usage, updated by each ``message_delta``'s (cumulative counts)."""
    stop_reason: str | None = None
    model: str = ""
    raw_id: str | None = None
    started: bool = False
    stopped: bool = False
    count: int = 0

    def feed(self, name: str, data: str) -> list[StreamChunk]:
        self.count += 1
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise StreamError(
                f"anthropic: malformed event #{self.count} ({name or 'unnamed'}) in the stream (not JSON: {exc}): "
                f"{data[:200]!r}",
                provider="anthropic",
            ) from None
        if not isinstance(event, Mapping):
            raise StreamError(f"anthropic: malformed event #{self.count}: {data[:200]!r}", provider="anthropic")
        kind = event.get("type") or name
        if kind == "error":
            error = event.get("error") or {}
            raise StreamError(
                f"anthropic: the server reported an error mid-stream: {error.get('message', error)} "
                f"({error.get('type', 'error')})",
                provider="anthropic",
            )
        if kind == "message_start":
            message = event.get("message") or {}
            self.started = True
            self.model = message.get("model") or ""
            self.raw_id = message.get("id")
            self.raw_usage = dict(message.get("usage") or {})
        elif kind == "content_block_start":
            block = event.get("content_block") or {}
            index = int(event.get("index", len(self.blocks)))
            self.blocks[index] = _Block(kind=block.get("type", ""), text=block.get("text") or "",
                                        id=block.get("id", ""), name=block.get("name", ""))
            if block.get("type") == "tool_use":
                return [StreamChunk(
                    tool_call_delta=ToolCall(id=block.get("id", ""), name=block.get("name", ""), arguments="")
                )]
        elif kind == "content_block_delta":
            return self._delta(event)
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            self.stop_reason = delta.get("stop_reason") or self.stop_reason
            self.raw_usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _delta(self, event: Mapping[str, Any]) -> list[StreamChunk]:
        index = int(event.get("index", 0))
        block = self.blocks.get(index)
        if block is None:
            raise StreamError(
                f"anthropic: content_block_delta for block {index} that never started", provider="anthropic"
            )
        delta = event.get("delta") or {}
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text") or ""
            block.text += text
            return [StreamChunk(text=text)] if text else []
        if kind == "input_json_delta":
            fragment = delta.get("partial_json") or ""
            block.json += fragment
            return [StreamChunk(tool_call_delta=ToolCall(id=block.id, name=block.name, arguments=fragment))]
        # thinking_delta, signature_delta, citations_delta: not part of the answer text
        return []

    def response(self, attempts: int) -> LLMResponse:
        if not self.stopped:
            raise StreamError(
                f"anthropic: the stream ended after {self.count} event(s) without message_stop: "
                "the answer is incomplete.",
                provider="anthropic",
            )
        texts: list[str] = []
        calls: list[ToolCall] = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.kind == "text":
                texts.append(block.text)
            elif block.kind == "tool_use":
                try:
                    value = json.loads(block.json) if block.json.strip() else {}
                except ValueError as exc:
                    raise StreamError(
                        f"anthropic: the streamed input of tool call {block.name!r} is not valid JSON ({exc}): "
                        f"{block.json[:200]!r}",
                        provider="anthropic",
                    ) from None
                calls.append(ToolCall(id=block.id, name=block.name, arguments=_arguments_text(value)))
        return LLMResponse(
            message=Message(role="assistant", content="".join(texts), tool_calls=tuple(calls)),
            usage=parse_usage(self.raw_usage),
            finish_reason=map_stop_reason(self.stop_reason),
            model=self.model,
            raw_id=self.raw_id,
            attempts=attempts,
        )
