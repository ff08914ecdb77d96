"""Chat messages, tool calls and tool specs: the vocabulary every other layer speaks.

Messages are immutable pydantic models so that token counts and digests can be cached by
identity of content. Plain ``{"role", "content"}`` dicts are accepted wherever a message is
expected and converted with :func:`as_message`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Role = Literal["system", "user", "assistant", "tool"]


RECALLED_NAME = "recalled"
"""The ``name`` of a system message that quotes an earlier message of the conversation, brought back
because it is relevant to the input (the context builder's default mode); the shaping step gives a
run of them one heading, :data:`RECALLED_HEADING`, in the context block after the input's text."""
RECALLED_HEADING = "earlier in this conversation"


class ToolCall(BaseModel):
    """One function call requested by the assistant. ``arguments`` is the raw JSON text."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> Any:
        """The arguments decoded from JSON (raises ``ValueError`` on malformed JSON)."""
        return json.loads(self.arguments or "{}")


class Message(BaseModel):
    """One chat message.

    ``turn`` is the user turn the message belongs to (1-based) when the runtime knows it;
    ``name`` labels a section or a tool. Both are metadata: ``turn`` is never sent to a provider.
    """

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    turn: int | None = None

    def wire(self) -> dict[str, Any]:
        """The message as an OpenAI-style dict (what a provider is sent, minus metadata)."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role in ("user", "tool"):
            out["name"] = self.name
        return out

    def record(self) -> dict[str, Any]:
        """A lossless JSON-safe dict (for traces); :func:`as_message` reads it back."""
        return self.model_dump(mode="json", exclude_defaults=True) | {"role": self.role}

    def content_key(self) -> str:
        """The canonical JSON of :meth:`wire`: a stable key of everything sent for this message.

        Computed once per message (messages are immutable) and reused by token counting and
        request digests."""
        key = self.__dict__.get("_content_key")
        if key is None:
            key = canonical_json(self.wire())
            self.__dict__["_content_key"] = key
        return key

    def replace(self, **changes: Any) -> Message:
        return self.model_copy(update=changes)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Message:
        copy = super().model_copy(update=update, deep=deep)
        copy.__dict__.pop("_content_key", None)  # the copy may differ: never inherit the cached key
        return copy


class ToolSpec(BaseModel):
    """A function the model may call: name, description and a JSON schema for its arguments."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def wire(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


MessageLike = Message | Mapping[str, Any]


def as_message(value: MessageLike) -> Message:
    """Accept a :class:`Message` or a plain dict (OpenAI wire shape or :meth:`Message.record`)."""
    if isinstance(value, Message):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a Message or a dict with 'role' and 'content', got {type(value).__name__}")
    data = dict(value)
    if "role" not in data:
        raise ValueError(f"message dict has no 'role': {sorted(data)}")
    calls = data.get("tool_calls") or ()
    parsed: list[ToolCall] = []
    for c in calls:
        if isinstance(c, ToolCall):
            parsed.append(c)
        elif "function" in c:
            fn = c["function"]
            args = fn.get("arguments", "{}")
            parsed.append(
                ToolCall(id=c["id"], name=fn["name"], arguments=args if isinstance(args, str) else canonical_json(args))
            )
        else:
            args = c.get("arguments", "{}")
            parsed.append(
                ToolCall(id=c["id"], name=c["name"], arguments=args if isinstance(args, str) else canonical_json(args))
            )
    data["tool_calls"] = tuple(parsed)
    if data.get("content") is None:
        data["content"] = ""
    return Message.model_validate(data)


def as_messages(values: Iterable[MessageLike]) -> list[Message]:
    return [as_message(v) for v in values]


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the form every digest is computed over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any, length: int = 16) -> str:
    """SHA-256 of the canonical JSON of ``value``, hex, truncated to ``length`` characters."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:length]


def request_digest(messages: Iterable[Message], tools: Iterable[ToolSpec] = (), model: str = "") -> str:
    """The digest of a provider request: model, wire messages and tool specs.

    Equal to ``digest({"model": model, "messages": [m.wire() ...], "tools": [t.wire() ...]})``;
    assembled from each message's cached canonical JSON so a long prompt is not re-serialised."""
    text = (
        '{"messages":[' + ",".join(m.content_key() for m in messages) + '],"model":' + canonical_json(model)
        + ',"tools":' + canonical_json([t.wire() for t in tools]) + "}"
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]
