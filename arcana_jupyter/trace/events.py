"""The trace event envelope and the event types (see docs/TRACE_FORMAT.md for each type's metadata).

One JSON object per line. The envelope is fixed; what an event says lives in ``metadata``, whose
keys per type are documented in docs/TRACE_FORMAT.md and typed in :mod:`arcana_jupyter.schema.events`.
Field names follow the OpenTelemetry GenAI conventions where one exists (``gen_ai.usage.input_tokens`` ...).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..schema.events import EVENT_TYPES, TRACE_FORMAT_VERSION, EventType

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
    metadata: dict[str, Any] = Field(default_factory=dict)
