"""The turn-event store behind ``search_turn_events``: turn digests and the turn's messages, BM25.

Documents are appended after every turn (its summary, then each user / assistant / tool message,
clipped) and never change, so the index grows incrementally. Messages of the adaptive tools
themselves are not indexed: their content is the state objects, which the engine searches live
(so a retracted object can never surface through an old tool result).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from ..messages import Message, MessageLike, as_message
from ..text import BM25Index, words
from .state import one_line

DOC_CHARS = 2000
_CARD = re.compile(r"^\[artifact (a_\d+) ")
SNIPPET_CHARS = 300


class EventDoc(BaseModel):
    """One searchable record of a turn."""

    model_config = ConfigDict(frozen=True)

    turn: int
    type: str
    """``turn_digest``, ``user``, ``assistant`` or ``tool``."""
    name: str | None = None
    """Tool name for tool results (and tool calls an assistant message made)."""
    text: str
    artifact: str | None = None
    """The artifact id when the tool result is an artifact card."""


def docs_for_turn(
    turn: int, messages: Iterable[MessageLike], summary_text: str, skip_tools: frozenset[str]
) -> list[EventDoc]:
    """The documents one turn adds: its summary and its messages (adaptive-tool traffic excluded)."""
    docs = [EventDoc(turn=turn, type="turn_digest", text=summary_text[:DOC_CHARS])] if summary_text else []
    msgs: list[Message] = [as_message(m) for m in messages]
    tool_names: dict[str, str] = {}
    for m in msgs:
        for c in m.tool_calls:
            tool_names[c.id] = c.name
    for m in msgs:
        if m.role == "system":
            continue
        if m.role == "tool":
            name = m.name or tool_names.get(m.tool_call_id or "")
            if name in skip_tools or not m.content:
                continue
            card = _CARD.match(m.content)
            docs.append(EventDoc(turn=turn, type="tool", name=name, text=m.content[:DOC_CHARS],
                                 artifact=card.group(1) if card else None))
            continue
        calls = [c.name for c in m.tool_calls if c.name not in skip_tools]
        text = m.content
        if calls:
            text = (text + "\n" if text else "") + "called: " + ", ".join(calls)
        if text:
            docs.append(
                EventDoc(turn=turn, type=m.role, name=", ".join(calls) or None, text=text[:DOC_CHARS])
            )
    return docs


def snippet(text: str, query: str, limit: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first query word it contains."""
    flat = " ".join(text.split())
    lowered = flat.lower()
    pos = -1
    for w in words(query):
        pos = lowered.find(w)
        if pos >= 0:
            break
    if pos < 0 or len(flat) <= limit:
        return one_line(flat, limit)
    start = max(0, pos - limit // 3)
    piece = flat[start : start + limit]
    return ("…" if start else "") + piece + ("…" if start + limit < len(flat) else "")


class TurnEventIndex:
    """Append-only documents plus their BM25 index."""

    def __init__(self) -> None:
        self.docs: list[EventDoc] = []
        self._index = BM25Index()

    def add(self, docs: Iterable[EventDoc]) -> None:
        for d in docs:
            self.docs.append(d)
            label = f"{d.type} {d.name or ''} turn {d.turn}"
            self._index.add(f"{d.text}\n{label}")

    def search(self, query: str) -> list[tuple[EventDoc, float]]:
        """Matching documents with their normalised score, best first (ties: later turn first)."""
        scores = self._index.normalised_scores(query)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], -self.docs[kv[0]].turn, kv[0]))
        return [(self.docs[i], s) for i, s in ranked]


