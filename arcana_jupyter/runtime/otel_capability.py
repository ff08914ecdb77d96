"""OpenTelemetry export as a capability (``RuntimeConfig.otel``, ``ARCANA_OTEL=1``).

- start: the process's pipeline for the current ``OTEL_*`` settings (made on first use; a
  :class:`~arcana_jupyter.exceptions.ConfigError` naming ``pip install 'arcana-jupyter[otel]'``
  without the extra), and a span mapper that gets every event the session emits — the same events
  the trace file gets, as they are written (trace/otel/spans.py maps them). It is the first capability,
  so it also sees what the others record while they start (the memory digest's read).
- close (the last capability closed, after the memory learnings): the run's open spans are ended,
  the queue is flushed (at most a few seconds), and ``run_end`` gets ``otel_export``: spans made,
  exported, failed, dropped, pending.

The turn's thread only queues each event (a few µs); a mapping thread per session builds the spans
and the batch processor's thread exports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..trace.events import TraceEvent
from .capabilities import Capability
from .context import SessionContext

if TYPE_CHECKING:
    from ..trace.otel import SpanMapper


class OtelCapability(Capability):
    name = "otel"

    def __init__(self, mapper: SpanMapper) -> None:
        self.mapper = mapper
        self.export: dict[str, Any] | None = None  # JSON edge: run_end.otel_export
        """``run_end``'s ``otel_export``, once closed."""

    def on_event(self, ctx: SessionContext, event: TraceEvent) -> None:
        self.mapper.on_event(event)

    async def close(self, ctx: SessionContext) -> None:
        mapper = self.mapper
        mapper.finish()
        mapper.pipeline.flush()
        extra: dict[str, Any] = {  # JSON edge: run_end.otel_export
            "mapping_problems": mapper.problems} if mapper.problems else {}
        if mapper.events_dropped:
            extra["events_dropped"] = mapper.events_dropped
        self.export = mapper.pipeline.stats(ctx.run_id) | extra

    def run_end_fields(self) -> dict[str, Any]:  # JSON edge: run_end.otel_export
        return {"otel_export": self.export} if self.export is not None else {}


def otel_capability(ctx: SessionContext) -> OtelCapability | None:
    if not ctx.config.otel:
        return None
    from ..trace import otel

    pipeline = otel.shared_pipeline()  # OtelUnavailable (a ConfigError) without the extra
    mapper = pipeline.mapper(secrets=ctx.secrets(), background=True, content=ctx.config.trace_content)
    return OtelCapability(mapper)
