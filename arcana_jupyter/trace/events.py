"""The trace's line and its content modes (see docs/TRACE_FORMAT.md for each type's metadata).

One JSON object per line. The envelope is fixed; what an event says lives in ``metadata``, whose
keys per type are documented in docs/TRACE_FORMAT.md and typed in :mod:`arcana_jupyter.schema.events`.
Field names follow the OpenTelemetry GenAI conventions where one exists (``gen_ai.usage.input_tokens`` ...).

:class:`TraceEvent` is defined once, in :mod:`arcana_jupyter.schema.events`, as the
:class:`~arcana_jupyter.schema.events.Envelope` with the line's metadata as written; it is
re-exported here because the trace package is where writers and readers look for it.
"""

from __future__ import annotations

from typing import Literal

from ..schema.events import EVENT_TYPES, TRACE_FORMAT_VERSION, EventType, TraceEvent

__all__ = ["EVENT_TYPES", "TRACE_FORMAT_VERSION", "EventType", "TraceContent", "TraceEvent"]

TraceContent = Literal["full", "redacted", "none"]
"""How much message content a trace keeps: all of it, with secrets masked, or none at all.

``full`` still masks secrets (API keys, bearer tokens); ``redacted`` additionally masks e-mail
addresses and long digit runs; ``none`` records decisions, counts and digests but no text."""
