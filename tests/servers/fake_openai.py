"""Bodies of OpenAI's chat-completions protocol, for :class:`~servers.scripted.ScriptedServer`.

Shapes follow https://platform.openai.com/docs/api-reference/chat (``chat.completion`` and
``chat.completion.chunk``), including streamed tool-call fragments keyed by ``index`` and the
trailing usage chunk sent when ``stream_options.include_usage`` is set.
"""

from __future__ import annotations

from typing import Any

from .scripted import Reply

MODEL = "fake-gpt"


def usage(prompt: int = 11, completion: int = 7, cached: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                           "total_tokens": prompt + completion}
    if cached is not None:
        out["prompt_tokens_details"] = {"cached_tokens": cached}
    return out


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def completion(
    text: str | None = "Hello!",
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    prompt_tokens: int = 11,
    completion_tokens: int = 7,
    cached: int | None = None,
) -> Reply:
    """A non-streaming ``chat.completion`` reply."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return Reply(
        json={
            "id": "chatcmpl-123",
            "object": "chat.completion",
            "created": 1,
            "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
            "usage": usage(prompt_tokens, completion_tokens, cached),
        }
    )


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with a single choice."""
    return {
        "id": "chatcmpl-123",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}],
        **extra,
    }


def usage_chunk(prompt: int = 11, completion: int = 7, cached: int | None = None) -> dict[str, Any]:
    return {"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1, "model": MODEL,
            "choices": [], "usage": usage(prompt, completion, cached)}


def text_stream(pieces: list[str], *, finish_reason: str = "stop", cached: int | None = None,
                done: bool = True) -> list[tuple[str | None, Any]]:
    """SSE events streaming ``pieces`` as content deltas, then finish, usage and ``[DONE]``."""
    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
    events += [(None, chunk({"content": p})) for p in pieces]
    events.append((None, chunk({}, finish_reason)))
    events.append((None, usage_chunk(cached=cached)))
    if done:
        events.append((None, "[DONE]"))
    return events


def tool_call_stream(calls: list[tuple[str, str, list[str]]]) -> list[tuple[str | None, Any]]:
    """SSE events streaming tool calls ``(id, name, argument_fragments)`` the way OpenAI does:
    the first fragment of each call carries id, type and name, later ones only ``arguments``."""
    events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": None}))]
    for index, (call_id, name, fragments) in enumerate(calls):
        events.append((None, chunk({"tool_calls": [
            {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}]})))
        for fragment in fragments:
            events.append((None, chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})))
    events.append((None, chunk({}, "tool_calls")))
    events.append((None, usage_chunk()))
    events.append((None, "[DONE]"))
    return events


def error(status: int, message: str, kind: str = "invalid_request_error", **headers: str) -> Reply:
    """An error reply in OpenAI's shape ``{"error": {"message", "type", ...}}``."""
    return Reply(status=status, json={"error": {"message": message, "type": kind, "param": None, "code": None}},
                 headers=dict(headers))
