"""ArtifactStore: large tool outputs stored whole; a bounded card enters the history instead.

A card names the artifact, its size and shape, carries what the matching distiller found and the
head of the output, and says how to read the rest: ``retrieve_artifact("a_3")`` with optional
``offset`` / ``limit`` in characters. Cards are bounded in tokens (exact counts).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from ..tokens import TokenCounter
from .distillers import distill

_ID = re.compile(r"^a_(\d+)$")


class Artifact(BaseModel):
    """One stored output. ``content`` is ``None`` when the trace it was rebuilt from kept no text."""

    model_config = ConfigDict(frozen=True)

    id: str
    turn: int
    source: str
    """What produced it (``tool:<name>``)."""
    tool_call_id: str | None = None
    kind: str
    chars: int
    lines: int
    tokens: int
    content: str | None
    card: str


class ArtifactStore:
    """Holds artifacts by id (``a_<n>``) and builds their cards."""

    def __init__(self, counter: TokenCounter, *, min_tokens: int = 1000, card_tokens: int = 400) -> None:
        self.counter = counter
        self.min_tokens = min_tokens
        self.card_tokens = card_tokens
        self.tool_hints = True
        """Cards say how to read the rest with ``retrieve_artifact``; off when the model has no such tool."""
        self._items: dict[str, Artifact] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, artifact_id: object) -> bool:
        return artifact_id in self._items

    def get(self, artifact_id: str) -> Artifact | None:
        return self._items.get(artifact_id)

    def all(self) -> list[Artifact]:
        return list(self._items.values())

    def should_store(self, text: str) -> tuple[bool, int]:
        """Whether ``text`` is large enough to become an artifact, and its token count."""
        if len(text.encode("utf-8", "replace")) <= self.min_tokens:  # a token is at least one byte
            return False, -1
        n = self.counter.count_text(text)
        return n > self.min_tokens, n

    def next_id(self) -> str:
        return f"a_{self._next}"

    def build(self, text: str, *, turn: int, source: str, tool_call_id: str | None, tokens: int) -> Artifact:
        """The artifact (with its card) that :meth:`add` would store for ``text``; stores nothing."""
        artifact_id = self.next_id()
        distilled = distill(text)
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        count = self.counter.count_text
        header = (
            f"[artifact {artifact_id} · {source} · {distilled.kind} · {len(text):,} characters · "
            f"{lines:,} lines · {tokens:,} tokens — stored whole, not shown in full]"
        )
        footer = (
            f'Read it with retrieve_artifact("{artifact_id}") — optional offset and limit in characters '
            f"(0 .. {len(text):,}); search_turn_events(query) also finds it."
        ) if self.tool_hints else "The rest is kept outside the conversation."
        if count(header) + count(footer) > self.card_tokens // 2:  # a tiny card: the short forms
            header = f"[artifact {artifact_id} · {distilled.kind} · {len(text):,} characters]"
            footer = f'Full text: retrieve_artifact("{artifact_id}", offset, limit).' if self.tool_hints else ""
        room = self.card_tokens - count(header) - count(footer) - 8  # joins and the "Head:" label
        summary = distilled.text()
        if count(summary) > room * 3 // 5:
            summary = self.counter.truncate_text(summary, max(0, room * 3 // 5 - 2)).rstrip() + " …"
        head_room = max(0, room - count(summary) - 2)

        def compose(head_tokens: int) -> str:
            head = self.counter.truncate_text(text, head_tokens)
            if len(head) < len(text):
                head = head.rstrip() + " …"
            return "\n".join(part for part in (header, summary, "Head:", head, footer) if part)

        card = compose(head_room)
        while count(card) > self.card_tokens and head_room > 0:  # BPE merges across joins: shave the head
            head_room = max(0, head_room - 8)
            card = compose(head_room)
        return Artifact(
            id=artifact_id,
            turn=turn,
            source=source,
            tool_call_id=tool_call_id,
            kind=distilled.kind,
            chars=len(text),
            lines=lines,
            tokens=tokens,
            content=text,
            card=card,
        )

    def put(self, artifact: Artifact) -> None:
        """Store ``artifact`` (also used when rebuilding from a snapshot or a trace)."""
        self._items[artifact.id] = artifact
        m = _ID.match(artifact.id)
        if m:
            self._next = max(self._next, int(m.group(1)) + 1)

    def read(self, artifact_id: str, offset: int = 0, limit: int = 4000) -> dict[str, object]:
        """A slice of an artifact's content as a structured result (errors as ``ok: false``)."""
        art = self._items.get(artifact_id)
        if art is None:
            known = ", ".join(sorted(self._items, key=lambda k: int(k[2:]))[-10:]) or "none yet"
            return {
                "ok": False,
                "error": f"no artifact {artifact_id!r}",
                "hint": f"artifact ids look like a_3 and appear on cards; known: {known}",
            }
        if art.content is None:
            return {
                "ok": False,
                "error": f"artifact {artifact_id} was rebuilt from a trace recorded without content",
                "hint": "the card in the history is all that is left; re-run the tool to get the output again",
            }
        if offset < 0 or offset > art.chars:
            return {
                "ok": False,
                "error": f"offset {offset} is outside 0..{art.chars}",
                "hint": f"use an offset between 0 and {art.chars}",
            }
        end = min(art.chars, offset + limit)
        return {
            "ok": True,
            "id": art.id,
            "kind": art.kind,
            "offset": offset,
            "end": end,
            "total_chars": art.chars,
            "content": art.content[offset:end],
            "next_offset": end if end < art.chars else None,
        }
