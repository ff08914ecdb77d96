"""Bodies of Anthropic's Messages API, for :class:`~servers.scripted.ScriptedServer`.

Shapes follow https://docs.anthropic.com/en/api/messages and the streaming guide
(https://docs.anthropic.com/en/docs/build-with-claude/streaming): ``message_start``,
``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``) /
``content_block_stop``, ``message_delta`` with ``stop_reason`` and output usage, ``message_stop``,
``ping`` and ``error`` events.
"""

from __future__ import annotations

from typing import Any

from .scripted import Reply

MODEL = "claude-fake-1"


def usage(input_tokens: int = 20, output_tokens: int = 9, cache_read: int = 0, cache_write: int = 0) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_write}


def message(content: list[dict[str, Any]], *, stop_reason: str = "end_turn", **usage_kw: int) -> Reply:
    """A non-streaming ``message`` reply."""
    return Reply(json={
        "id": "msg_01", "type": "message", "role": "assistant", "model": MODEL, "content": content,
        "stop_reason": stop_reason, "stop_sequence": None, "usage": usage(**usage_kw),
    })


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(block_id: str, name: str, input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": block_id, "name": name, "input": input}


def event(name: str, **data: Any) -> tuple[str, dict[str, Any]]:
    return name, {"type": name, **data}


def stream(blocks: list[dict[str, Any]], *, stop_reason: str = "end_turn", input_tokens: int = 20,
           output_tokens: int = 9, cache_read: int = 0, split: int = 5) -> list[tuple[str | None, Any]]:
    """The event stream for ``blocks`` (text blocks sent in ``split``-character deltas, tool_use
    input as ``input_json_delta`` fragments of the JSON text)."""
    import json

    events: list[tuple[str | None, Any]] = [
        event("message_start", message={"id": "msg_01", "type": "message", "role": "assistant", "model": MODEL,
                                        "content": [], "stop_reason": None, "stop_sequence": None,
                                        "usage": usage(input_tokens, 1, cache_read)}),
        event("ping"),
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(event("content_block_start", index=index, content_block={"type": "text", "text": ""}))
            text = block["text"]
            for i in range(0, len(text), split):
                events.append(event("content_block_delta", index=index,
                                    delta={"type": "text_delta", "text": text[i:i + split]}))
        else:
            events.append(event("content_block_start", index=index, content_block={
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}))
            raw = json.dumps(block["input"])
            for i in range(0, len(raw), split):
                events.append(event("content_block_delta", index=index,
                                    delta={"type": "input_json_delta", "partial_json": raw[i:i + split]}))
        events.append(event("content_block_stop", index=index))
    events.append(event("message_delta", delta={"stop_reason": stop_reason, "stop_sequence": None},
                        usage={"output_tokens": output_tokens}))
    events.append(event("message_stop"))
    return events


def error(status: int, message: str, kind: str = "invalid_request_error", **headers: str) -> Reply:
    """An error reply in Anthropic's shape ``{"type": "error", "error": {"type", "message"}}``."""
    return Reply(status=status, json={"type": "error", "error": {"type": kind, "message": message}},
                 headers=dict(headers))
