"""The session-start digest: in-scope memories, ranked, as markdown within a token budget.

Pinned entries come first (in rank order), then the rest by digest score (see ``ranking``). Lines
are added while the whole digest — counted exactly with :class:`~arcana_jupyter.tokens.TokenCounter`
— stays within ``budget_tokens``. Pinned entries are always included before any other; if pinned
entries alone exceed the budget, the ones left out are listed in ``Digest.omitted_pinned`` and a
closing line tells the model how many (pinned entries are never silently lost).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ..tokens import TokenCounter
from .models import MemoryEntry

SECTION_NAME = "memory_digest"
MAX_LINE_CHARS = 400
DIGEST_TOOLS: tuple[str, ...] = ("recall_memory", "forget_memory")
"""The memory tools a digest may tell the model to use; it names only those the model is offered."""


@dataclass(frozen=True)
class DigestItem:
    entry: MemoryEntry
    score: float


@dataclass(frozen=True)
class Digest:
    """What ``MemoryStore.start_session`` returns. ``markdown`` is empty when nothing is in scope."""

    session_id: str
    markdown: str
    items: list[DigestItem]
    tokens: int
    budget_tokens: int
    mode: str = "keyword"
    candidates: int = 0
    """How many in-scope entries were considered."""
    omitted: int = 0
    """In-scope entries left out (budget or ``max_entries``)."""
    omitted_pinned: list[str] = field(default_factory=list)
    section_name: str = SECTION_NAME
    project: bool = True
    tools: tuple[str, ...] = DIGEST_TOOLS
    """The memory tools :attr:`markdown` names (those offered when it was built)."""

    def render(self, tools: tuple[str, ...] | frozenset[str] | list[str]) -> str:
        """:attr:`markdown` naming only the memory tools in ``tools`` (the ones the call offers):
        never shorter in tokens than the budget allows, since naming fewer tools only drops words."""
        if not self.markdown:
            return ""
        named = tuple(t for t in DIGEST_TOOLS if t in tools)
        if named == self.tools:
            return self.markdown
        lines = self.markdown.split("\n")
        body = lines[3:]  # after the header's two lines ("## Memory ...", the instruction) and a blank
        if body and body[-1].startswith("(") and "did not fit the digest budget" in body[-1]:
            body[-1] = pinned_note(len(self.omitted_pinned), named)
        return "\n".join([header(self.project, self.mode, named), "", *body])

    def entries(self) -> list[dict[str, Any]]:
        """What the inspector lists: each entry the digest carries (id, kind, scope, score, content)."""
        return [{"id": i.entry.id, "kind": i.entry.kind, "scope": i.entry.level, "score": round(i.score, 4),
                 "content": i.entry.content} for i in self.items]

    @property
    def entry_ids(self) -> list[str]:
        return [item.entry.id for item in self.items]

    @property
    def empty(self) -> bool:
        return not self.items

    def summary(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "entries": self.entry_ids,
            "tokens": self.tokens,
            "budget_tokens": self.budget_tokens,
            "omitted": self.omitted,
            "omitted_pinned": list(self.omitted_pinned),
        }


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_LINE_CHARS else flat[: MAX_LINE_CHARS - 1] + "…"


def entry_line(entry: MemoryEntry) -> str:
    tags: list[str] = [entry.kind, entry.level]
    if entry.pinned:
        tags.append("pinned")
    if entry.layer == 2:
        tags.append("deep")
    return f"- [{entry.id}] ({', '.join(tags)}) {_one_line(entry.content)}"


def header(project: bool, mode: str, tools: tuple[str, ...] = DIGEST_TOOLS) -> str:
    """The digest's first two lines; it names only the memory tools in ``tools`` (those offered)."""
    where = "this project and your global memories" if project else "your global memories"
    how = "keyword and semantic" if mode == "hybrid" else "keyword"
    uses = []
    if "recall_memory" in tools:
        uses.append(f"recall_memory ({how} search) for more")
    if "forget_memory" in tools:
        uses.append("forget_memory to retract a wrong one")
    return (
        "## Memory from earlier sessions\n"
        f"Ranked memories for {where} (most useful first). They may be outdated: "
        "prefer what the user says now. Cite an id like [m_…] when you rely on one"
        + (f"; use {', '.join(uses)}." if uses else ".")
    )


def pinned_note(count: int, tools: tuple[str, ...] = DIGEST_TOOLS) -> str:
    find = "recall_memory finds them" if "recall_memory" in tools else "they are in the memory store"
    return f"({count} more pinned memories did not fit the digest budget; {find})"


def build_digest(
    session_id: str,
    ranked: list[DigestItem],
    *,
    budget_tokens: int,
    counter: TokenCounter,
    project: bool,
    mode: str = "keyword",
    candidates: int | None = None,
    tools: tuple[str, ...] = DIGEST_TOOLS,
) -> Digest:
    """Fit ``ranked`` (pinned first, then by score) into ``budget_tokens`` of markdown.

    The budget is fitted with every memory tool named (the longest header); ``markdown`` names
    only ``tools`` (and :meth:`Digest.render` re-renders it for the tools of one call)."""
    ordered = [i for i in ranked if i.entry.pinned] + [i for i in ranked if not i.entry.pinned]
    head = header(project, mode)
    total_candidates = len(ranked) if candidates is None else candidates
    if not ordered or budget_tokens <= 0 or counter.count_text(head) > budget_tokens:
        return Digest(
            session_id,
            "",
            [],
            0,
            budget_tokens,
            mode,
            total_candidates,
            total_candidates,
            [i.entry.id for i in ordered if i.entry.pinned],
        )
    lines = [head, ""]
    kept: list[DigestItem] = []
    skipped_pinned: list[str] = []
    used = counter.count_text(head + "\n")
    for item in ordered:
        line = entry_line(item.entry)
        cost = counter.count_text("\n" + line)  # a line's tokens, with the newline before it
        if used + cost <= budget_tokens:
            lines.append(line)
            kept.append(item)
            used += cost
        elif item.entry.pinned:
            skipped_pinned.append(item.entry.id)
    # the per-line sum is an estimate (BPE merges across line breaks): check exactly, trim if over
    while len(lines) > 2 and counter.count_text("\n".join(lines)) > budget_tokens:
        victim = kept.pop()
        lines.pop()
        if victim.entry.pinned:
            skipped_pinned.insert(0, victim.entry.id)
    if skipped_pinned:

        def note() -> str:
            return pinned_note(len(skipped_pinned))

        # make room for the note: drop the lowest-ranked unpinned lines first, then pinned ones
        while kept and counter.count_text("\n".join([*lines, note()])) > budget_tokens:
            idx = max((k for k, it in enumerate(kept) if not it.entry.pinned), default=len(kept) - 1)
            victim = kept.pop(idx)
            del lines[2 + idx]
            if victim.entry.pinned:
                skipped_pinned.insert(0, victim.entry.id)
        if kept:
            lines.append(note())
    if not kept:
        return Digest(session_id, "", [], 0, budget_tokens, mode, total_candidates, total_candidates, skipped_pinned)
    full = Digest(
        session_id=session_id,
        markdown="\n".join(lines),
        items=kept,
        tokens=0,
        budget_tokens=budget_tokens,
        mode=mode,
        candidates=total_candidates,
        omitted=total_candidates - len(kept),
        omitted_pinned=skipped_pinned,
        project=project,
    )
    markdown = full.render(tools)
    return replace(full, markdown=markdown, tokens=counter.count_text(markdown), tools=tuple(
        t for t in DIGEST_TOOLS if t in tools))
