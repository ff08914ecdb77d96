"""``%arcana_memory``: what a session recalled from and wrote to long-term memory, or a search."""

from __future__ import annotations

from typing import Any

from .. import render
from ..cli import printable
from ..render.fragments import esc, fmt_score, pill, table
from ..schema.events import MemoryEntryBrief, MemoryRead, MemoryWrite

KIND_HINT = "fact, preference, decision, pattern, mistake, constraint"
STORE_HINT = (f"store one with %arcana_memory add KIND TEXT (KIND: {KIND_HINT}), e.g. "
              "%arcana_memory add fact The report is due on Friday; %arcana_memory list shows the store")


def _events(chat: Any) -> list[Any]:
    events: list[Any] = []
    for turn in range(1, int(chat.turn) + 1):
        events.extend(e for e in chat.turn_events(turn) if e.event_type in ("memory_read", "memory_write"))
    return events


def memory_html(chat: Any, query: str | None = None) -> tuple[str, str]:
    """``(html, plain)``: search hits for ``query``, else the session's memory reads and writes."""
    memory = getattr(chat, "memory", None)
    if query:
        store, scope = getattr(memory, "store", None), getattr(memory, "scope", None)
        if store is None or scope is None:
            message = "long-term memory is off in this session: start it with %arcana_chat --memory"
            return render.notice_html(message), message
        hits = [h.to_dict() for h in store.search(query, scope, limit=10).hits]
        rows = [[f"<code>{esc(h['id'])}</code>", pill(str(h["kind"]), "unknown"), esc(h.get("scope")),
                 (fmt_score(h.get("score")), "num"), esc(h.get("content"))] for h in hits]
        body = (
            table(["id", "kind", "scope", "score", "content"], rows)
            if rows
            else '<div class="arcana-empty">No match.</div>'
        )
        plain = printable("\n".join(f"{h['id']} [{h['kind']}] {h['content']}" for h in hits) or "no match")
        return (
            render.style_block()
            + f'<div class="arcana"><h4 class="arcana-h">Memory search: {esc(query)}</h4>{body}</div>',
            plain,
        )
    if memory is None:
        message = ("long-term memory is off in this session: start it with %arcana_chat --memory; "
                   "%arcana_memory list and add work on the store without it")
        return render.notice_html(message), message
    rows = []
    lines = []
    for event in _events(chat):
        typed = event.typed()
        if isinstance(typed, MemoryRead):
            read = typed.metadata
            for r in read.results:
                rows.append([esc(event.turn), pill("recalled", "kept"), f"<code>{esc(r.id)}</code>",
                             esc(r.kind), esc(read.purpose), esc(r.content)])
                lines.append(f"turn {event.turn} recalled {r.id}: {r.content}")
        elif isinstance(typed, MemoryWrite):
            write = typed.metadata
            entry = write.entry or MemoryEntryBrief()
            rows.append([esc(event.turn), pill(str(write.op or "write"), "compressed"), f"<code>{esc(entry.id)}</code>",
                         esc(entry.kind), esc(entry.scope), esc(entry.content)])
            lines.append(f"turn {event.turn} {write.op} {entry.id}: {entry.content}")
    body = (
        table(["turn", "", "id", "kind", "purpose / scope", "content"], rows)
        if rows
        else f'<div class="arcana-empty">Nothing recalled or written yet: {esc(STORE_HINT)}.</div>'
    )
    return (
        render.style_block() + f'<div class="arcana"><h4 class="arcana-h">Memory in this session</h4>{body}</div>',
        "\n".join(lines) or f"nothing recalled or written yet: {STORE_HINT}",
    )
