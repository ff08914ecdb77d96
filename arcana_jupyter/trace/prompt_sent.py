"""The prompt as sent, recorded compactly: the ``prompt_sent`` event (docs/TRACE_FORMAT.md "The prompt as sent").

Every LLM call of a turn writes, beside its ``context_decision``, the shaped prompt exactly as the
provider was given it (``Message.wire()`` dicts), encoded against the previous ``prompt_sent`` of the
same agent so that a record costs what changed::

    {"step": 0, "digest": "<request digest>", "prev": "e_000123" | null, "keep": 41,
     "messages": [{"h": 57}, {"p": 40}, {"role": "user", "content": "..."}], "tokens": [12, 310, 95]}

- ``keep``: the first ``keep`` messages are the previous prompt's first ``keep`` (its resolved messages);
- ``messages``: the rest, each either a wire dict, ``{"h": i}`` (the history message recorded with
  ``history_index == i``, as ``Message.record()`` -> wire) or ``{"p": i}`` (message ``i`` of the
  previous prompt);
- ``tokens``: the counted tokens of the messages in ``messages`` (the kept ones keep theirs);
- ``prev``: the event id of the previous prompt_sent of the agent, ``null`` for a keyframe (then
  ``keep`` is 0 and no ``p`` reference occurs). A keyframe is written first and then every
  :data:`CHAIN_MAX` prompts, so a random read resolves at most that many records.

The writer's redaction applies to the inline messages as to any metadata; a reference resolves to the
recorded (equally redacted) transcript message, so the resolved prompt is the sent one with secrets
masked. It verifies (its request digest recomputed equals the recorded one) when nothing was masked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..messages import Message, ToolSpec, as_message, canonical_json

CHAIN_MAX = 32
"""A keyframe at least every this many prompts of one agent (the longest chain a random read walks)."""


class PromptSentEncoder:
    """Encodes each prompt of one agent's session against the previous one (see the module doc)."""

    def __init__(self, chain_max: int = CHAIN_MAX) -> None:
        self.chain_max = max(1, chain_max)
        self._prev_id: str | None = None
        self._prev_keys: list[str] = []
        self._prev_at: dict[str, int] = {}
        self._chain = 0
        self._hist_keys: dict[str, int] = {}
        self._hist_seen: list[str] = []
        self._pending: tuple[list[str], bool] = ([], True)

    def _history_index(self, history: Sequence[Message]) -> dict[str, int]:
        """content key -> history index (the last message with that key), kept up to date incrementally;
        rebuilt when the history was changed other than by appending."""
        seen = self._hist_seen
        if len(history) < len(seen) or (seen and history[len(seen) - 1].content_key() != seen[-1]):
            self._hist_keys, self._hist_seen = {}, []
            seen = self._hist_seen
        for i in range(len(seen), len(history)):
            key = history[i].content_key()
            seen.append(key)
            self._hist_keys[key] = i
        return self._hist_keys

    def encode(self, *, step: int, digest: str | None, messages: Sequence[Message], history: Sequence[Message],
               tokens: Sequence[int | None] | None = None) -> dict[str, Any]:
        """The metadata of the ``prompt_sent`` event for ``messages`` (call :meth:`written` with its id)."""
        keys = [m.content_key() for m in messages]
        keyframe = self._prev_id is None or self._chain >= self.chain_max
        keep = 0
        if not keyframe:
            prev = self._prev_keys
            while keep < len(keys) and keep < len(prev) and keys[keep] == prev[keep]:
                keep += 1
        hist = self._history_index(history)
        out: list[dict[str, Any]] = []
        for m, key in zip(messages[keep:], keys[keep:], strict=True):
            h = hist.get(key)
            p = None if keyframe else self._prev_at.get(key)
            if h is not None:
                out.append({"h": h})
            elif p is not None:
                out.append({"p": p})
            else:
                out.append(m.wire())
        meta: dict[str, Any] = {"step": step, "digest": digest, "prev": None if keyframe else self._prev_id,
                                "keep": keep, "messages": out}
        if tokens is not None:
            meta["tokens"] = list(tokens[keep:])
        self._pending = (keys, keyframe)
        return meta

    def written(self, event_id: str) -> None:
        """The event just encoded was written with ``event_id``: it is the base of the next."""
        keys, keyframe = self._pending
        self._prev_id = event_id
        self._prev_keys = keys
        self._prev_at = {k: i for i, k in enumerate(keys)}
        self._chain = 0 if keyframe else self._chain + 1


def resolve_prompt_sent(meta: Mapping[str, Any], previous: Mapping[str, Any] | None,
                        history: Callable[[int], Mapping[str, Any] | None]) -> dict[str, Any]:
    """The full prompt of one ``prompt_sent`` record: ``{"messages": [wire...], "tokens": [...]}``.

    ``previous`` is the resolved previous prompt (required when ``meta["prev"]`` is set), ``history(i)``
    the recorded history message ``i`` (a ``Message.record()`` dict) or None. Raises ``ValueError`` on
    a record that cannot be resolved."""
    keep = meta.get("keep") or 0
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
        raise ValueError(f"keep must be a non-negative integer, not {keep!r}")
    prev_msgs: list[dict[str, Any]] = list(previous["messages"]) if previous is not None else []
    prev_tokens: list[Any] = list(previous.get("tokens") or []) if previous is not None else []
    if meta.get("prev") is not None and previous is None:
        raise ValueError(f"the previous prompt {meta.get('prev')} is not in the trace")
    if keep > len(prev_msgs):
        raise ValueError(f"keep {keep} but the previous prompt has {len(prev_msgs)} message(s)")
    rest = meta.get("messages")
    if not isinstance(rest, list):
        raise ValueError("messages is not a list")
    msgs = prev_msgs[:keep]
    for i, item in enumerate(rest):
        if not isinstance(item, dict):
            raise ValueError(f"message {keep + i} is not an object")
        if "role" in item:
            msgs.append(dict(item))
        elif "h" in item:
            h = item["h"]
            record = history(h) if isinstance(h, int) and not isinstance(h, bool) else None
            if record is None:
                raise ValueError(f"message {keep + i} refers to history message {h!r}, which is not recorded")
            msgs.append(wire_of_record(record))
        elif "p" in item:
            p = item["p"]
            if not isinstance(p, int) or isinstance(p, bool) or not 0 <= p < len(prev_msgs):
                raise ValueError(f"message {keep + i} refers to message {p!r} of the previous prompt, which has "
                                 f"{len(prev_msgs)}")
            msgs.append(dict(prev_msgs[p]))
        else:
            raise ValueError(f"message {keep + i} is neither a message nor a reference")
    toks = meta.get("tokens")
    tokens: list[Any] = prev_tokens[:keep] + [None] * (keep - len(prev_tokens[:keep]))
    if isinstance(toks, list) and len(toks) == len(rest):
        tokens += [t if isinstance(t, int) and not isinstance(t, bool) else None for t in toks]
    else:
        tokens += [None] * len(rest)
    return {"messages": msgs, "tokens": tokens}


def wire_of_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded history message (``Message.record()``) as it was sent (``Message.wire()``)."""
    data = dict(record)
    if data.get("content") is None:
        data["content"] = ""
    return as_message(data).wire()


def prompt_digest(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], model: str) -> str:
    """:func:`~arcana_jupyter.messages.request_digest` of wire messages and recorded ToolSpec dumps."""
    text = canonical_json({"messages": list(messages), "model": model,
                           "tools": [ToolSpec.model_validate(t).wire() for t in tools]})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


MASK = "[REDACTED]"


def masked_count(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many messages hold a masked secret (why such a prompt cannot verify)."""
    return sum(1 for m in messages if MASK in canonical_json(m))
