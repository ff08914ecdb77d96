"""MemorySession: one chat session's view of the memory store — the runtime's single entry point.

::

    mem = MemorySession(store, Scope.for_project(notebook_dir), session_id=run_id)
    digest = mem.start()                      # digest.markdown -> ContextSection("memory_digest", ...)
    specs = mem.specs                         # offer remember / recall_memory / forget_memory
    result = mem.handle_tool(name, args)      # an intercepted tool call -> JSON-able dict
    mem.note_reply(reply_text)                # ids the model cited ([m_…]) count as acted on
    mem.note_cited(turn_texts)                # ... only those the digest showed (what the runtime does)
    end = await mem.end(success=True, transcript=messages, summarise=summarise)
    mem.learnings                             # end's LearningsResult, or None
    mem.close()                               # close the store (the runtime opens one per session)

Everything the session reads or writes is reported through the store's ``on_event`` hook. The
runtime's memory capability (runtime/memory_capability.py) drives one per chat session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import ToolSpec
from .digest import DIGEST_TOOLS, Digest
from .learnings import LearningsResult
from .models import Scope
from .store import MemoryStore, OnEvent, SessionOutcome, find_entry_ids, route_events
from .tools import MEMORY_TOOL_NAMES, MemoryTools


@dataclass(frozen=True)
class SessionEnd:
    outcome: SessionOutcome
    learnings: LearningsResult | None
    """``None`` when no summariser (or no transcript) was given."""


class MemorySession:
    def __init__(
        self,
        store: MemoryStore,
        scope: Scope,
        session_id: str,
        *,
        budget_tokens: int = 600,
        max_entries: int = 30,
        on_event: OnEvent | None = None,
    ) -> None:
        if not session_id:
            raise ValueError("session_id is empty")
        self.store = store
        self.scope = scope
        self.session_id = session_id
        self.budget_tokens = budget_tokens
        self.max_entries = max_entries
        self.digest: Digest | None = None
        self.on_event = on_event
        """This session's trace hook (else the store's ``on_event``)."""
        self.tools = MemoryTools(store, scope, session_id=session_id, on_event=on_event)
        self.ended: SessionEnd | None = None
        self.digest_tools: tuple[str, ...] = DIGEST_TOOLS
        """The memory tools the digest names (:meth:`start`'s ``tools``)."""

    @property
    def specs(self) -> list[ToolSpec]:
        return self.tools.specs

    @property
    def tool_names(self) -> tuple[str, ...]:
        return MEMORY_TOOL_NAMES

    def start(self, tools: Iterable[str] | None = None) -> Digest:
        """Build (and remember) the session-start digest; calling it again rebuilds it (after a memory
        the user added or forgot). ``tools``: the memory tools the model is offered (default: all);
        the digest names only those."""
        if tools is not None:
            self.digest_tools = tuple(t for t in DIGEST_TOOLS if t in set(tools))
        with route_events(self.on_event):
            self.digest = self.store.start_session(
                self.session_id, self.scope, budget_tokens=self.budget_tokens, max_entries=self.max_entries,
                tools=self.digest_tools,
            )
        return self.digest

    def handle_tool(self, name: str, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        return self.tools.handle(name, arguments)

    def note_reply(self, text: str) -> list[str]:
        """Mark the memories an assistant reply cites by id as acted on; returns the ids marked."""
        ids = find_entry_ids(text)
        return self.mark_acted_on(ids) if ids else []

    def note_cited(self, texts: Iterable[str]) -> list[str]:
        """Mark the memories ``texts`` cite by id *and* the digest showed as acted on; returns the ids
        marked (sorted). The runtime passes a turn's assistant replies and tool-call arguments."""
        shown = set(self.digest.entry_ids) if self.digest is not None else set()
        ids = sorted({i for text in texts for i in find_entry_ids(text)} & shown)
        return self.mark_acted_on(ids) if ids else []

    def mark_acted_on(self, ids: Sequence[str]) -> list[str]:
        with route_events(self.on_event):
            return self.store.mark_acted_on(ids, session_id=self.session_id)

    async def end(
        self,
        *,
        success: bool | None = None,
        transcript: Sequence[Mapping[str, Any]] | None = None,
        summarise: Callable[[str], Awaitable[str]] | None = None,
    ) -> SessionEnd:
        """Reinforce (``end_session``), then extract learnings when a summariser and a transcript (even an
        empty one) are given.

        A second call returns the first result unchanged.
        """
        if self.ended is not None:
            return self.ended
        with route_events(self.on_event):
            outcome = self.store.end_session(self.session_id, success=success)
            learnings = None
            if summarise is not None and transcript is not None:
                learnings = await self.store.extract_learnings(transcript, summarise, self.scope)
        self.ended = SessionEnd(outcome, learnings)
        return self.ended

    @property
    def learnings(self) -> LearningsResult | None:
        """The learnings :meth:`end` extracted; ``None`` before it ran or when it asked for none."""
        return self.ended.learnings if self.ended is not None else None

    def close(self) -> None:
        """Close the store (for a store opened for this session alone)."""
        self.store.close()
