"""The JSON edge of a recorded decision: the few reads of a ``context_decision``'s metadata by its keys.

A decision's metadata is read as JSON where it is decoded (the codec: :mod:`.chain`, :mod:`.keyframes`,
:mod:`.frames`, the index) and where its rows pass through untouched (a decision holds a row per message:
thousands in a long run, shared between consecutive records, never validated one by one). Everywhere
else the package reads it through :class:`~.reader.DecisionRecord`'s typed fields and these functions,
or parses it once with :class:`~arcana_jupyter.schema.events.ContextDecisionMetadata`. Each read here is
a commented JSON edge; tests/test_metadata_reads.py counts the others.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Metadata = dict[str, Any]  # JSON edge: a context_decision's metadata as written (rows resolved)
Decision = dict[str, Any]  # JSON edge: its ``decision``, a ContextDecision dump
Row = dict[str, Any]  # JSON edge: one row, a MessageDecision dump


def decision_of(metadata: Metadata) -> Decision | None:
    """The metadata's ``decision`` (None when it records none)."""
    decision = metadata.get("decision")  # JSON edge
    return decision if isinstance(decision, dict) else None


def rows_of(metadata: Metadata) -> list[Row] | None:
    """The decision's rows (None: none recorded, or not resolved on this read)."""
    decision = decision_of(metadata)
    return rows_in(decision) if decision is not None else None


def rows_in(decision: Decision) -> list[Row] | None:
    """A decision's rows (None when it holds none)."""
    rows = decision.get("decisions")  # JSON edge
    return rows if isinstance(rows, list) else None


def with_rows(metadata: Metadata, rows: list[Row] | None) -> Metadata:
    """``metadata`` with its decision's rows replaced (a copy; the decision a copy too)."""
    decision = decision_of(metadata)
    if decision is None:
        return dict(metadata)
    return {**metadata, "decision": {**decision, "decisions": rows}}  # JSON edge


def parts_of(metadata: Metadata, keys: Iterable[str]) -> Metadata:
    """The ``keys`` of ``metadata`` it holds (what a frame keeps of a decision)."""
    return {k: metadata[k] for k in keys if k in metadata}  # JSON edge


__all__ = ["Decision", "Metadata", "Row", "decision_of", "parts_of", "rows_in", "rows_of", "with_rows"]
