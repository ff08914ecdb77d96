"""The trace event envelope and the event types (see docs/TRACE_FORMAT.md for each type's metadata).

One JSON object per line. The envelope is fixed; what an event says lives in ``metadata``, whose
keys per type are documented in docs/TRACE_FORMAT.md and typed in :mod:`arcana_jupyter.schema.events`.
Field names follow the OpenTelemetry GenAI conventions where one exists (``gen_ai.usage.input_tokens`` ...).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..schema.events import EVENT_TYPES, TRACE_FORMAT_VERSION, Event, EventType, read_event

__all__ = ["EVENT_TYPES", "TRACE_FORMAT_VERSION", "EventType", "TraceContent", "TraceEvent"]

TraceContent = Literal["full", "redacted", "none"]
"""How much message content a trace keeps: all of it, with secrets masked, or none at all.

``full`` still masks secrets (API keys, bearer tokens); ``redacted`` additionally masks e-mail
addresses and long digit runs; ``none`` records decisions, counts and digests but no text."""


class TraceEvent(BaseModel):
    """One line of a trace file."""

    model_config = ConfigDict(extra="allow")

    v: int = TRACE_FORMAT_VERSION
    event_id: str
    run_id: str
    agent: str = "main"
    turn: int | None = None
    ts: str
    """UTC ISO-8601 time with microseconds, e.g. ``2026-11-30T01:02:03.456789Z``."""
    event_type: str
    parent_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)  # JSON edge: parsed by typed()

    def typed(self, metadata: dict[str, Any] | None = None) -> Event | None:
        """This line as its typed event, parsed once (:func:`~arcana_jupyter.schema.events.read_event`:
        :data:`~arcana_jupyter.schema.events.EVENT_ADAPTER`, tolerant of a field of the wrong type);
        ``None`` for an event type this version does not know. ``metadata`` stands in for the recorded
        metadata (the span mapper leaves a decision's per-message rows out and tallies them itself)."""
        return read_event({
            **(self.model_extra or {}), "v": self.v, "event_id": self.event_id, "run_id": self.run_id,
            "agent": self.agent, "turn": self.turn, "ts": self.ts, "event_type": self.event_type,
            "parent_id": self.parent_id, "metadata": self.metadata if metadata is None else metadata,
        })
