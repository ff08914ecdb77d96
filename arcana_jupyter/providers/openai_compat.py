"""OpenAI chat completions, the wire format OpenAI, DeepSeek, vLLM, Ollama, llama.cpp and LM Studio share.

``POST {base_url}/chat/completions`` with ``{"model", "messages", "tools"?, ...}``; the answer is
``choices[0].message`` (text and/or ``tool_calls``) plus ``usage``. Streaming sends
``stream: true`` and ``stream_options: {"include_usage": true}`` and reads server-sent events: one
``chat.completion.chunk`` per ``data:`` line, tool calls arriving as fragments keyed by ``index``,
a last chunk with ``usage`` and an empty ``choices``, then ``data: [DONE]``.

Which endpoint is configuration (:mod:`.registry` presets), not code.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..exceptions import ProviderError, StreamError
from ..messages import Message, ToolCall
from .base import LLMRequest, LLMResponse, Provider, StreamChunk, Usage
from .chat_templates import detect_shape, shape_for_model
from .connection import HTTPConnection, RetryPolicy, StreamLimits, iter_sse
from .shaping import PromptShape

_FINISH = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "eos": "stop",
}


def map_finish_reason(value: str | None) -> str:
    """Our finish reason for an OpenAI-style one (unknown values pass through unchanged)."""
    if not value:
        return "stop"
    return _FINISH.get(value, value)


def parse_usage(data: Mapping[str, Any] | None, timings: Any = None) -> Usage:
    """``usage`` of a chat completion, cached tokens from ``prompt_tokens_details.cached_tokens``
    (OpenAI, vLLM, llama.cpp's server), ``prompt_cache_hit_tokens`` (DeepSeek) or — from the
    response's ``timings`` — llama.cpp's server's ``cache_n`` (prompt tokens its KV cache reused)."""
    if not data:
        return Usage()
    details = data.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
    if cached is None:
        cached = data.get("prompt_cache_hit_tokens")
    if cached is None and isinstance(timings, Mapping):
        cached = timings.get("cache_n")
    return Usage(
        input_tokens=count(data.get("prompt_tokens")),
        output_tokens=count(data.get("completion_tokens")),
        cached_input_tokens=count(cached),
    )


MAX_COUNT = 10**15
"""Token counts at or above this are wrong reports (no context window is a quadrillion tokens)."""


def count(value: Any) -> int:
    """A token count a server reported: a non-negative int below 10¹⁵, else 0 (``"abc"``, ``-3``,
    ``null``, ``1e400``, an integer of 400 digits: a wrong-shaped count is not worth failing an answer
    for, and no later arithmetic — pricing, calibration — overflows on it)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value if 0 <= value < MAX_COUNT else 0
    if isinstance(value, float) and value == value and abs(value) < MAX_COUNT:
        return max(0, int(value))
    if isinstance(value, str) and value.strip().isdigit() and len(value) < 16:
        return int(value)
    return 0


MALFORMED = (AttributeError, TypeError, ValueError, KeyError, IndexError, RecursionError)
"""What parsing a wrong-shaped (but valid JSON) answer can raise; turned into :class:`StreamError` /
:class:`ProviderError` at the provider's boundary (pydantic's ValidationError is a ValueError)."""


def malformed(provider: str, what: str, exc: BaseException, data: str) -> StreamError:
    """The :class:`StreamError` for an event of the documented protocol whose shape is wrong."""
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    return StreamError(
        f"{provider}: malformed {what} in the stream ({type(exc).__name__}: {detail}): {data[:200]!r}. "
        "The answer is incomplete.",
        provider=provider,
    )


class OpenAICompatProvider(Provider):
    """A chat-completions endpoint (OpenAI or any server speaking its wire format).

    Args:
        base_url: the API root, e.g. ``https://api.openai.com/v1`` or ``http://127.0.0.1:8080/v1``.
        api_key: sent as ``Authorization: Bearer``; ``None`` for local servers that need none.
        name: the provider name used in errors and traces (``openai``, ``deepseek``, ``ollama``...).
        timeout: seconds for connecting and between two bytes of an answer.
        max_retries: retries on 429 / 5xx / connection errors.
        key_hint: what to set when the key is rejected (``"OPENAI_API_KEY"``).
        max_tokens_field: the body field for ``max_tokens`` (OpenAI's newer models want
            ``max_completion_tokens``).
        extra_headers: more headers (organisation, project...).
        stream_tools: whether the server can stream a request that offers tools. llama.cpp's
            Python server cannot (it answers 200 and an empty stream); with ``False`` such a
            request is sent unstreamed and its answer handed out as chunks. An empty stream for a
            request with tools falls back the same way.
        retry: a full :class:`RetryPolicy` (tests inject ``sleep`` and ``rng`` here).
        transport: an httpx transport, for parsing tests.
        limits: the bytes and seconds one answer may take (:class:`~.connection.StreamLimits`: max reply
            bytes, max SSE line bytes, max stream wall time, idle time between data events).
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        name: str = "openai",
        timeout: float = 120.0,
        max_retries: int = 4,
        key_hint: str = "",
        max_tokens_field: str = "max_tokens",
        extra_headers: Mapping[str, str] | None = None,
        stream_tools: bool = True,
        retry: RetryPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        limits: StreamLimits | None = None,
        cache_key_field: str | None = None,
    ) -> None:
        self.name = name
        self.max_tokens_field = max_tokens_field
        self.cache_key_field = cache_key_field
        """The body field a request's ``cache_key`` goes in (``prompt_cache_key`` for OpenAI's own API);
        ``None``: not sent (servers that do not document one may refuse an unknown field)."""
        self.stream_tools = stream_tools
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        headers.update(extra_headers or {})
        self._http = HTTPConnection(
            provider=name,
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
        return f"OpenAICompatProvider(name={self.name!r}, base_url={self.base_url!r})"

    @property
    def base_url(self) -> str:
        return self._http.base_url

    async def aclose(self) -> None:
        await self._http.aclose()

    async def prompt_shape(self, model: str | None = None) -> PromptShape:
        """The model's own chat template where the server tells it — llama.cpp's server
        (``GET /props``: probed, see chat_templates.py), Ollama (``POST /api/show``: a Go template,
        so its model family) — else the family of the model's name, else the portable shape.
        Asked once per session, only of the ``llamacpp`` and ``ollama`` endpoints; any failure
        falls back to the name."""
        fallback = shape_for_model(model)
        if self.name not in ("llamacpp", "ollama"):
            return fallback
        root = self.base_url.rstrip("/").removesuffix("/v1")
        if self.name == "llamacpp":
            props = await self._http.probe_json(f"{root}/props")
            template = props.get("chat_template") if isinstance(props, dict) else None
            if isinstance(template, str) and template.strip():
                # probed out of process, bounded in time and memory; past the bounds: the family's shape
                return await asyncio.to_thread(detect_shape, template, fallback)
        else:
            data = await self._http.probe_json(f"{root}/api/show", {"model": model})
            details = data.get("details") if isinstance(data, dict) else None
            details = details if isinstance(details, dict) else {}
            families = details.get("families")
            for family in [details.get("family"), *(families if isinstance(families, list) else [])]:
                if isinstance(family, str):
                    found = shape_for_model(family)
                    if found.source != "default":
                        return found
        return fallback

    # -- request ----------------------------------------------------------------------------------

    def payload(self, request: LLMRequest, *, stream: bool) -> dict[str, Any]:
        """The JSON body for ``request``."""
        body: dict[str, Any] = {"model": request.model, "messages": [m.wire() for m in request.messages]}
        if request.tools:
            body["tools"] = [t.wire() for t in request.tools]
            # llama.cpp's function-calling handler only calls tools when asked to choose explicitly.
            body["tool_choice"] = request.tool_choice if request.tool_choice is not None else "auto"
        elif request.tool_choice is not None and request.tool_choice != "none":
            raise ProviderError(
                f"{self.name}: tool_choice={request.tool_choice!r} but the request has no tools", provider=self.name
            )
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body[self.max_tokens_field] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        if request.response_format is not None:
            body["response_format"] = request.response_format
        if self.cache_key_field and request.cache_key:
            body[self.cache_key_field] = request.cache_key
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    # -- complete ---------------------------------------------------------------------------------

    async def complete(self, request: LLMRequest) -> LLMResponse:
        data, attempts = await self._http.post_json("chat/completions", self.payload(request, stream=False))
        try:
            response = self.parse_response(data)
        except MALFORMED as exc:
            detail = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise self._bad(f"{type(exc).__name__}: {detail}") from None
        return response.model_copy(update={"attempts": attempts})

    def parse_response(self, data: Any) -> LLMResponse:
        """An :class:`LLMResponse` from a decoded ``chat.completion`` object."""
        if not isinstance(data, Mapping):
            raise self._bad(f"expected a JSON object, got {type(data).__name__}")
        if "error" in data and not data.get("choices"):
            raise self._bad(f"the answer is an error: {_error_text(data['error'])}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            raise self._bad(f"no choices in the answer (keys: {sorted(data)})")
        choice = choices[0]
        raw = choice.get("message")
        if not isinstance(raw, Mapping):
            raise self._bad("choices[0] has no message")
        calls = []
        for i, call in enumerate(raw.get("tool_calls") or ()):
            fn = call.get("function") or {}
            if not fn.get("name"):
                raise self._bad(f"tool call {i} has no function name: {call!r}"[:300])
            args = fn.get("arguments")
            calls.append(
                ToolCall(
                    id=call.get("id") or f"call_{i}",
                    name=fn["name"],
                    arguments=args if isinstance(args, str) else json.dumps(args if args is not None else {}),
                )
            )
        message = Message(role="assistant", content=raw.get("content") or "", tool_calls=tuple(calls))
        finish = choice.get("finish_reason")
        return LLMResponse(
            message=message,
            usage=parse_usage(data.get("usage"), data.get("timings")),
            finish_reason="tool_calls" if calls and finish in (None, "stop") else map_finish_reason(finish),
            model=str(data.get("model") or ""),
            raw_id=data.get("id"),
        )

    def _bad(self, problem: str) -> ProviderError:
        return ProviderError(
            f"{self.name}: unexpected chat completion from {self.base_url}: {problem}", provider=self.name
        )

    # -- stream -----------------------------------------------------------------------------------

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        if request.tools and not self.stream_tools:
            async for chunk in self._unstreamed(request):
                yield chunk
            return
        state = _StreamState(self.name)
        async with self._http.stream_lines("chat/completions", self.payload(request, stream=True)) as (
            lines,
            attempts,
        ):
            async for event in iter_sse(lines):
                if event.data.strip() == "[DONE]":
                    state.done = True
                    break
                try:
                    chunks = state.feed(event.data)
                except MALFORMED as exc:
                    raise malformed(self.name, f"event #{state.events}", exc, event.data) from None
                for chunk in chunks:
                    yield chunk
        if state.events == 0 and request.tools:
            # nothing was handed out yet, so asking again unstreamed duplicates nothing
            async for chunk in self._unstreamed(request):
                yield chunk
            return
        try:
            final = state.response(attempts)
        except MALFORMED as exc:
            raise malformed(self.name, "answer (assembled from the events)", exc, "") from None
        yield StreamChunk(response=final)

    async def _unstreamed(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        response = await self.complete(request)
        if response.message.content:
            yield StreamChunk(text=response.message.content)
        for call in response.message.tool_calls:
            yield StreamChunk(tool_call_delta=call)
        yield StreamChunk(response=response)


@dataclass
class _Pending:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class _StreamState:
    """Assembles ``chat.completion.chunk`` events into text, tool calls, usage and a finish reason."""

    provider: str
    text: list[str] = field(default_factory=list)
    calls: dict[int, _Pending] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    model: str = ""
    raw_id: str | None = None
    events: int = 0
    done: bool = False

    def feed(self, data: str) -> list[StreamChunk]:
        self.events += 1
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise StreamError(
                f"{self.provider}: malformed event #{self.events} in the stream (not JSON: {exc}): {data[:200]!r}",
                provider=self.provider,
            ) from None
        if not isinstance(chunk, Mapping):
            raise StreamError(
                f"{self.provider}: malformed event #{self.events} in the stream (not an object): {data[:200]!r}",
                provider=self.provider,
            )
        if "error" in chunk:
            raise StreamError(
                f"{self.provider}: the server reported an error mid-stream: {_error_text(chunk['error'])}",
                provider=self.provider,
            )
        self.model = chunk.get("model") or self.model
        self.raw_id = chunk.get("id") or self.raw_id
        if chunk.get("usage"):
            self.usage = parse_usage(chunk["usage"], chunk.get("timings"))
        out: list[StreamChunk] = []
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, Mapping) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if not isinstance(delta, Mapping):
                raise StreamError(
                    f"{self.provider}: event #{self.events} has a malformed delta", provider=self.provider
                )
            text = delta.get("content")
            if text:
                self.text.append(text)
                out.append(StreamChunk(text=text))
            for part in delta.get("tool_calls") or ():
                out.append(self._tool_delta(part))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return out

    def _tool_delta(self, part: Mapping[str, Any]) -> StreamChunk:
        index = part.get("index")
        if not isinstance(index, int):
            index = len(self.calls) if part.get("id") else max(self.calls, default=0)
        pending = self.calls.setdefault(index, _Pending())
        if part.get("id"):
            pending.id = part["id"]
        fn = part.get("function") or {}
        name = fn.get("name")
        if name and name != pending.name:
            # the name normally arrives whole in the first fragment; some servers split it
            pending.name += name
        fragment = fn.get("arguments") or ""
        if not isinstance(fragment, str):
            fragment = json.dumps(fragment)
        pending.arguments += fragment
        return StreamChunk(
            tool_call_delta=ToolCall(id=pending.id or f"call_{index}", name=pending.name, arguments=fragment)
        )

    def response(self, attempts: int) -> LLMResponse:
        """The whole answer once the stream ended; a stream cut short raises :class:`StreamError`."""
        if not self.done and self.finish_reason is None:
            raise StreamError(
                f"{self.provider}: the stream ended after {self.events} event(s) without a finish reason "
                "or [DONE]: the answer is incomplete.",
                provider=self.provider,
            )
        calls = []
        for index in sorted(self.calls):
            pending = self.calls[index]
            if not pending.name:
                raise StreamError(
                    f"{self.provider}: streamed tool call #{index} never received a function name",
                    provider=self.provider,
                )
            calls.append(
                ToolCall(id=pending.id or f"call_{index}", name=pending.name, arguments=pending.arguments or "{}")
            )
        finish = self.finish_reason
        return LLMResponse(
            message=Message(role="assistant", content="".join(self.text), tool_calls=tuple(calls)),
            usage=self.usage,
            finish_reason="tool_calls" if calls and finish in (None, "stop") else map_finish_reason(finish),
            model=self.model,
            raw_id=self.raw_id,
            attempts=attempts,
        )


def _error_text(error: Any) -> str:
    if isinstance(error, Mapping):
        message = error.get("message") or json.dumps(error)[:300]
        kind = error.get("type") or error.get("code")
        return f"{message} ({kind})" if isinstance(kind, str) and kind else str(message)
    return str(error)[:300]
