"""Typed rows: the columns the store reads from ``entries``, by name.

Every query that returns entry rows selects :data:`COLUMNS` (optionally prefixed by a table alias,
:func:`columns`) and turns each result tuple into an :class:`EntryRow` right away, so the rest of
the code reads ``row.confidence``, never ``row[5]``. The same for both backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from .models import MemoryEntry, from_epoch


class EntryRow(NamedTuple):
    pk: int
    id: str
    kind: str
    content: str
    scopes: str
    confidence: float
    validity: float
    usefulness: float
    pinned: int
    layer: int
    created_at: float
    updated_at: float
    last_accessed_at: float | None
    reinforced_at: float | None
    surfaced_count: int
    surfaced_sessions: int
    acted_on_count: int
    retracted: int
    source: str

    @classmethod
    def of(cls, row: Sequence[Any]) -> EntryRow:
        """The row of a ``SELECT {COLUMNS} ...`` result tuple (extra trailing columns are ignored)."""
        return cls._make(row[: len(cls._fields)])

    @property
    def level_layer(self) -> int:
        return 2 if self.layer == 2 else 1

    @property
    def decay_start(self) -> float:
        """When the confidence decay clock runs from (``reinforced_at``, or creation for old rows)."""
        return self.reinforced_at if self.reinforced_at is not None else self.created_at

    @property
    def last_access(self) -> float:
        return self.last_accessed_at if self.last_accessed_at is not None else self.created_at

    def entry(self) -> MemoryEntry:
        created = from_epoch(self.created_at)
        assert created is not None
        return MemoryEntry(
            id=self.id,
            kind=self.kind,  # type: ignore[arg-type]
            content=self.content,
            scopes=tuple(self.scopes.split()),
            confidence=max(0.0, min(1.0, self.confidence)),
            validity=max(0.0, min(1.0, self.validity)),
            usefulness=max(0.0, min(1.0, self.usefulness)),
            pinned=bool(self.pinned),
            layer=2 if self.layer == 2 else 1,
            created_at=created,
            updated_at=from_epoch(self.updated_at),  # type: ignore[arg-type]
            last_accessed_at=from_epoch(self.last_accessed_at),
            reinforced_at=from_epoch(self.decay_start),  # type: ignore[arg-type]
            surfaced_count=self.surfaced_count,
            surfaced_sessions=self.surfaced_sessions,
            acted_on_count=self.acted_on_count,
            retracted=bool(self.retracted),
            source=self.source,
        )


COLUMNS = ", ".join(EntryRow._fields)
"""``pk, id, kind, ...``: the select list of an :class:`EntryRow`."""


def columns(alias: str) -> str:
    """:data:`COLUMNS` qualified by a table alias (``e.pk, e.id, ...``)."""
    return ", ".join(f"{alias}.{c}" for c in EntryRow._fields)
