"""What a person does to the memory store by hand: ``arcana memory add|forget`` and the notebook's
``%arcana_memory add|forget`` (with or without a session) go through these two functions.

Bad input raises :class:`~arcana_jupyter.exceptions.MemoryStoreError` with one line that says what
to type instead; the store's own ``on_event`` hook records the write (a session's store writes a
``memory_write`` event into its trace).
"""

from __future__ import annotations

from ..exceptions import MemoryStoreError
from .models import CONFIDENCE_LEVELS, ENTRY_ID, KINDS, MemoryEntry, Scope
from .store import MAX_CONTENT_CHARS, MemoryStore

LEVELS = ("project", "global")


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise MemoryStoreError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    return kind


def add_memory(store: MemoryStore, kind: str, text: str, scope: Scope, *, level: str = "project",
               confidence: str = "high", pinned: bool = False, source: str = "user") -> tuple[MemoryEntry, bool]:
    """Remember ``text`` as a ``kind`` memory in ``scope`` (``level``: project or global); returns
    ``(entry, created)`` — ``created`` is False when an identical live memory was reinforced."""
    check_kind(kind)
    if level not in LEVELS:
        raise MemoryStoreError(f"unknown scope {level!r}: project or global")
    if confidence not in CONFIDENCE_LEVELS:
        raise MemoryStoreError(f"unknown confidence {confidence!r}: one of {', '.join(CONFIDENCE_LEVELS)}")
    text = (text or "").strip()
    if not text:
        raise MemoryStoreError("the memory's text is empty: give one self-contained sentence")
    if len(text) > MAX_CONTENT_CHARS:
        raise MemoryStoreError(f"the memory is {len(text):,} characters; at most {MAX_CONTENT_CHARS:,}")
    if level == "project" and not scope.is_project:
        raise MemoryStoreError("no project folder to scope the memory to: use scope global")
    try:
        return store.remember_many([(kind, text, level, confidence, pinned)], scope,  # type: ignore[list-item]
                                   source=source)[0]
    except ValueError as exc:
        raise MemoryStoreError(str(exc)) from exc


def check_id(entry_id: str) -> str:
    if not isinstance(entry_id, str) or not ENTRY_ID.match(entry_id):
        raise MemoryStoreError(f"{entry_id!r} is not a memory id (ids look like m_0123456789abcdef)")
    return entry_id


def forget_memory(store: MemoryStore, entry_id: str) -> tuple[MemoryEntry, bool]:
    """Tombstone memory ``entry_id``; returns ``(entry, already_forgotten)``."""
    check_id(entry_id)
    before = store.get(entry_id)
    if before is None:
        raise MemoryStoreError(f"no memory {entry_id} in {store.path}")
    entry = store.forget(entry_id)
    if entry is None:  # pragma: no cover - it was there a moment ago
        raise MemoryStoreError(f"no memory {entry_id} in {store.path}")
    return entry, before.retracted
