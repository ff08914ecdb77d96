"""OpenTelemetry export through the runtime's hooks (``RuntimeConfig.otel``, ``ARCANA_OTEL=1``).

- session start: the process's pipeline for the current ``OTEL_*`` settings (made on first use; a
  :class:`~arcana_jupyter.exceptions.ConfigError` naming ``pip install 'arcana-jupyter[otel]'``
  without the extra), and a span mapper subscribed to the session's events — the same events the
  trace file gets, as they are written (trace/otel.py maps them).
- session end: the run's open spans are ended, the queue is flushed (at most a few seconds), and
  ``run_end`` gets ``otel_export``: spans made, exported, failed, dropped, pending.

The turn's thread only queues each event (a few µs); a mapping thread per session builds the spans
and the batch processor's thread exports them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runtime import Runtime
    from .session import ChatSession


def install(runtime: Runtime) -> None:
    """First at session start (so the subscriber sees what the other start hooks record, such as the
    memory digest's read), last at session end (after the memory learnings)."""
    runtime.session_start_hooks.insert(0, _attach)
    runtime.session_end_hooks.append(_detach)


def _attach(session: ChatSession) -> None:
    if not session.config.otel:
        return
    from ..trace import otel

    pipeline = otel.shared_pipeline()  # OtelUnavailable (a ConfigError) without the extra
    mapper = pipeline.mapper(secrets=session.runtime.secrets(), background=True,
                            content=session.config.trace_content)
    session.otel = mapper
    session.subscribe(mapper.on_event)


def _detach(session: ChatSession) -> None:
    mapper = session.otel
    if mapper is None:
        return
    mapper.finish()
    mapper.pipeline.flush()
    extra = {"mapping_problems": mapper.problems} if mapper.problems else {}
    if mapper.events_dropped:
        extra["events_dropped"] = mapper.events_dropped
    session.run_end_metadata["otel_export"] = mapper.pipeline.stats(session.run_id) | extra
