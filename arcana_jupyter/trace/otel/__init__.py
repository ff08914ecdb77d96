"""OpenTelemetry export: trace events become GenAI spans, live or from a recorded run.

One mapper (:class:`SpanMapper`) reads :class:`~arcana_jupyter.trace.events.TraceEvent` s in the
order they were written — from a live session (``session.subscribe``) or from a JSONL file — and
turns them into spans through the OpenTelemetry SDK, with start and end times taken from the
events (``ts``, ``latency_ms``), following the GenAI semantic conventions:

- ``invoke_agent {agent}`` per turn (``turn_start`` .. ``turn_end``), the root of the turn's trace;
- ``chat {model}`` per LLM call (``llm_call``; a provider ``error`` makes a failed one), a child;
- ``execute_tool {name}`` per ``tool_call``;
- ``search_memory`` / ``create_memory`` / ``update_memory`` / ``delete_memory`` per memory event.

What the conventions have no name for goes under ``arcana.*`` (strategy, budget, tokens kept,
compressed and dropped, prefix reuse, request digest, pins, status). Message content
(``gen_ai.input.messages`` / ``gen_ai.output.messages``, tool arguments and results, memory
queries) is exported only for runs recorded with ``trace_content="full"``, through
:func:`~arcana_jupyter.trace.redact.mask_secrets`. Trace and span ids are derived from the run
id, the agent, the turn and the event id, so exporting the same run twice gives the same ids.

:class:`OtelPipeline` is the exporting side: a ``TracerProvider`` with a bounded
``BatchSpanProcessor`` and the OTLP/HTTP exporter (endpoint, headers and timeout from the standard
``OTEL_EXPORTER_OTLP_*`` variables), which counts per run the spans that were exported, that failed
and that were dropped from the queue (:meth:`OtelPipeline.stats`: the ``otel_export`` record of
``run_end``). Spans are only queued on the caller's thread; the export runs on the processor's
thread, so a dead or slow collector never slows a turn.

The HTTP request itself goes through :func:`bounded_transport` (``http.client``): one export's
request may take at most the export timeout *in wall-clock time* — a watchdog shuts the socket
down when it passes, so a collector that drips its answer two bytes a second cannot hold the
export thread (and every later span of the process) — and at most :data:`MAX_RESPONSE_BYTES` of
the collector's answer are read (the exporter needs the status and a short message; a 200 MB body
is never held). With a proxy (``HTTP(S)_PROXY``) or a credential-provider session configured, the
SDK's own ``requests`` transport is used instead, without these two bounds.

The SDK is the optional ``[otel]`` extra and is imported only when a pipeline is made; without it
:func:`require_otel` raises :class:`OtelUnavailable` naming the install command.

This package is that one idea split in four: ``settings`` (constants and ``OTEL_*`` variables),
``transport`` (the bounded HTTP transport), ``pipeline`` (the exporting side, the shared pipelines
and their shutdown at exit) and ``spans`` (the event -> span mapper). Import from here.
"""

from __future__ import annotations

from .pipeline import ExportCounts, OtelPipeline, quiet_sdk_logging, shared_pipeline, shutdown_all
from .settings import (
    CONTENT_LIMIT,
    DEFAULT_ENDPOINT,
    DEFAULT_SERVICE_NAME,
    EXPORT_TIMEOUT_S,
    FLUSH_TIMEOUT_S,
    INSTALL_HINT,
    MAX_BATCH,
    MAX_QUEUE,
    MAX_RESPONSE_BYTES,
    RUN_ATTR,
    SCHEDULE_DELAY_MS,
    SCOPE,
    TRACES_PATH,
    OtelUnavailable,
    env_enabled,
    require_otel,
    traces_endpoint,
)
from .spans import MAX_PENDING_EVENTS, SpanMapper, export_events, span_id_for, to_ns, trace_id_for
from .transport import bounded_transport

__all__ = [
    "CONTENT_LIMIT",
    "DEFAULT_ENDPOINT",
    "DEFAULT_SERVICE_NAME",
    "EXPORT_TIMEOUT_S",
    "FLUSH_TIMEOUT_S",
    "INSTALL_HINT",
    "MAX_BATCH",
    "MAX_PENDING_EVENTS",
    "MAX_QUEUE",
    "MAX_RESPONSE_BYTES",
    "RUN_ATTR",
    "SCHEDULE_DELAY_MS",
    "SCOPE",
    "TRACES_PATH",
    "ExportCounts",
    "OtelPipeline",
    "OtelUnavailable",
    "SpanMapper",
    "bounded_transport",
    "env_enabled",
    "export_events",
    "quiet_sdk_logging",
    "require_otel",
    "shared_pipeline",
    "shutdown_all",
    "span_id_for",
    "to_ns",
    "trace_id_for",
    "traces_endpoint",
]
