"""The exporting side: :class:`OtelPipeline` (a ``TracerProvider`` with a bounded, counting
``BatchSpanProcessor`` and the OTLP/HTTP exporter), the process's shared pipelines, and their
shutdown at interpreter exit."""

from __future__ import annotations

import atexit
import collections
import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...exceptions import ConfigError
from ..redact import mask_secrets, register_secret
from .settings import (
    DEFAULT_SERVICE_NAME,
    FLUSH_TIMEOUT_S,
    MAX_BATCH,
    MAX_QUEUE,
    RUN_ATTR,
    SCHEDULE_DELAY_MS,
    SCOPE,
    _export_timeout,
    _header_values,
    log,
    require_otel,
    traces_endpoint,
)
from .spans import SpanMapper
from .transport import bounded_transport


# ---- per-run counts -----------------------------------------------------------------------------
@dataclass
class _Counts:
    ended: int = 0
    exported: int = 0
    failed: int = 0
    dropped: int = 0


class ExportCounts:
    """Spans per run (``gen_ai.conversation.id``): ended, exported, failed, dropped. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, _Counts] = {}

    def add(self, run: str | None, what: str, n: int = 1) -> None:
        with self._lock:
            counts = self._runs.setdefault(run or "", _Counts())
            setattr(counts, what, getattr(counts, what) + n)

    def get(self, run: str) -> _Counts:
        with self._lock:
            c = self._runs.get(run) or _Counts()
            return _Counts(c.ended, c.exported, c.failed, c.dropped)


def _run_of(span: Any) -> str | None:
    attrs = getattr(span, "attributes", None) or {}
    value = attrs.get(RUN_ATTR)
    return str(value) if value is not None else None


# ---- the SDK side (built on first use) ------------------------------------------------------------
_sdk_classes: dict[str, type] = {}


def _classes() -> dict[str, type]:
    """The SDK subclasses, defined once the SDK is importable."""
    if _sdk_classes:
        return _sdk_classes
    require_otel()
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

    class DerivedIds(IdGenerator):
        """Hands out the ids the mapper derived (per thread); random ones otherwise."""

        def __init__(self) -> None:
            self._local = threading.local()
            self._random = RandomIdGenerator()

        def next(self, trace_id: int | None, span_id: int) -> None:
            self._local.trace_id, self._local.span_id = trace_id, span_id

        def generate_trace_id(self) -> int:
            value = getattr(self._local, "trace_id", None)
            self._local.trace_id = None
            return value if value else self._random.generate_trace_id()

        def generate_span_id(self) -> int:
            value = getattr(self._local, "span_id", None)
            self._local.span_id = None
            return value if value else self._random.generate_span_id()

    class CountingExporter(SpanExporter):
        """Wraps the OTLP exporter: counts exported and failed spans per run; never raises."""

        def __init__(self, inner: Any, counts: ExportCounts) -> None:
            self.inner, self.counts = inner, counts

        def export(self, spans: Any) -> Any:
            try:
                result = self.inner.export(spans)
            except Exception:
                result = SpanExportResult.FAILURE
            what = "exported" if result == SpanExportResult.SUCCESS else "failed"
            for span in spans:
                self.counts.add(_run_of(span), what)
            return result

        def shutdown(self) -> None:
            self.inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(self.inner.force_flush(timeout_millis))

    class CountingQueue(collections.deque):  # type: ignore[type-arg]
        """The processor's queue: when full, the span it pushes out (the oldest) is counted as dropped.
        Check and push happen under one lock (and so does the worker's pop), so the count is exact."""

        def __init__(self, items: Any, maxlen: int | None, counts: ExportCounts) -> None:
            super().__init__(items, maxlen)
            self.counts = counts
            self.lock = threading.Lock()

        def appendleft(self, item: Any) -> None:
            with self.lock:
                if self.maxlen is not None and len(self) >= self.maxlen:
                    self.counts.add(_run_of(self[-1]), "dropped")
                super().appendleft(item)

        def pop(self) -> Any:  # type: ignore[override]
            with self.lock:
                return super().pop()

    class CountingBatchProcessor(BatchSpanProcessor):
        """A ``BatchSpanProcessor`` whose bounded queue counts the spans it drops, per run."""

        def __init__(self, exporter: Any, counts: ExportCounts, **kw: Any) -> None:
            super().__init__(exporter, **kw)
            self.counts = counts
            inner = getattr(self, "_batch_processor", None)
            queue_ = getattr(inner, "_queue", None)
            if isinstance(queue_, collections.deque):  # the SDK's internals as of 1.45; else drops go uncounted
                inner._queue = CountingQueue(queue_, queue_.maxlen, counts)  # type: ignore[union-attr]

        def on_end(self, span: Any) -> None:
            self.counts.add(_run_of(span), "ended")
            if getattr(getattr(self, "_batch_processor", None), "_shutdown", False):
                self.counts.add(_run_of(span), "dropped")  # the processor ignores spans after shutdown
            super().on_end(span)

    _sdk_classes.update(DerivedIds=DerivedIds, CountingExporter=CountingExporter,
                        CountingBatchProcessor=CountingBatchProcessor)
    return _sdk_classes


def _otlp_exporter(cls: Any, endpoint: str, timeout: float) -> Any:
    """The OTLP/HTTP exporter, with :func:`bounded_transport` when this SDK takes one."""
    transport = bounded_transport()
    if transport is not None:
        try:
            return cls(endpoint=endpoint, timeout=timeout, _transport=transport)
        except TypeError:  # an SDK without the transport parameter
            pass
    return cls(endpoint=endpoint, timeout=timeout)


class OtelPipeline:
    """A tracer provider exporting over OTLP/HTTP, with per-run counts.

    ``endpoint`` is a base URL (``http://host:4318``) or the full traces URL; ``None`` follows the
    ``OTEL_EXPORTER_OTLP_*`` variables. ``exporter`` replaces the OTLP exporter (tests). Header
    values from ``OTEL_EXPORTER_OTLP_HEADERS`` are registered as secrets: masked in every trace.
    """

    def __init__(self, endpoint: str | None = None, *, timeout: float | None = None, max_queue: int = MAX_QUEUE,
                 max_batch: int = MAX_BATCH, schedule_delay_ms: int = SCHEDULE_DELAY_MS,
                 service_name: str | None = None, exporter: Any = None) -> None:
        classes = _classes()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider

        for value in _header_values():
            register_secret(value)
        self.endpoint = traces_endpoint(endpoint)
        self.timeout = timeout if timeout is not None else _export_timeout()
        self.counts = ExportCounts()
        self.ids = classes["DerivedIds"]()
        name = service_name or os.environ.get("OTEL_SERVICE_NAME", "").strip() or DEFAULT_SERVICE_NAME
        from ...version import __version__

        resource = Resource.create({"service.name": name, "service.version": __version__})
        self.provider = TracerProvider(resource=resource, id_generator=self.ids, shutdown_on_exit=False)
        try:
            inner = exporter if exporter is not None else _otlp_exporter(OTLPSpanExporter, self.endpoint, self.timeout)
        except Exception as exc:  # an OTEL_* variable the exporter refuses (compression, certificate...)
            raise ConfigError(f"OpenTelemetry export could not start: {type(exc).__name__}: {exc}; check the "
                              "OTEL_EXPORTER_OTLP_* settings") from None
        self.exporter = classes["CountingExporter"](inner, self.counts)
        self.processor = classes["CountingBatchProcessor"](
            self.exporter, self.counts, max_queue_size=max_queue, max_export_batch_size=min(max_batch, max_queue),
            schedule_delay_millis=schedule_delay_ms, export_timeout_millis=int(self.timeout * 1000))
        self.provider.add_span_processor(self.processor)
        self.tracer = self.provider.get_tracer(SCOPE, __version__)
        self._lock = threading.Lock()
        self.closed = False
        quiet_sdk_logging()

    def mapper(self, *, secrets: Iterable[str] = (), background: bool = False, content: str = "full") -> SpanMapper:
        return SpanMapper(self, secrets=secrets, background=background, content=content)

    def flush(self, timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """Export what is queued, waiting at most ``timeout`` seconds (the SDK's own flush has no bound)."""
        if self.closed:
            return True
        done = threading.Event()

        def run() -> None:
            try:
                self.processor.force_flush()
            finally:
                done.set()

        threading.Thread(target=run, name="arcana-otel-flush", daemon=True).start()
        return done.wait(timeout)

    def stats(self, run_id: str) -> dict[str, Any]:  # JSON edge: run_end.otel_export
        """The ``otel_export`` record of a run: where its spans went and how many arrived."""
        c = self.counts.get(run_id)
        return {"endpoint": mask_secrets(self.endpoint), "spans": c.ended, "exported": c.exported,
                "failed": c.failed, "dropped": c.dropped,
                "pending": max(0, c.ended - c.exported - c.failed - c.dropped)}

    def shutdown(self, timeout: float = FLUSH_TIMEOUT_S) -> None:
        """Flush (bounded) and stop the export thread. Idempotent."""
        with self._lock:
            if self.closed:
                return
            self.flush(timeout)
            self.closed = True
        done = threading.Event()

        def run() -> None:
            try:
                self.provider.shutdown()
            finally:
                done.set()

        threading.Thread(target=run, name="arcana-otel-shutdown", daemon=True).start()
        done.wait(timeout)


_pipelines: dict[tuple[str, str], OtelPipeline] = {}
_pipelines_lock = threading.Lock()


def shared_pipeline() -> OtelPipeline:
    """The process's pipeline for the current ``OTEL_*`` settings (one per endpoint and service name),
    made on first use and shut down (flushed, bounded) at interpreter exit."""
    require_otel()
    key = (traces_endpoint(), os.environ.get("OTEL_SERVICE_NAME", ""))
    with _pipelines_lock:
        pipeline = _pipelines.get(key)
        if pipeline is None or pipeline.closed:
            pipeline = _pipelines[key] = OtelPipeline()
        return pipeline


def shutdown_all(timeout: float = FLUSH_TIMEOUT_S) -> None:
    """Flush and stop every shared pipeline (at exit; tests)."""
    with _pipelines_lock:
        pipelines = list(_pipelines.values())
        _pipelines.clear()
    for pipeline in pipelines:
        try:
            pipeline.shutdown(timeout)
        except Exception:  # exit must go on
            log.debug("arcana: OpenTelemetry shutdown failed", exc_info=True)


# Registered when this module is first imported (RuntimeConfig imports it), so before the notebook
# extension's own atexit close: exit handlers run last-registered first, so sessions close (and
# write run_end.otel_export after their bounded flush) before the pipelines are shut down.
atexit.register(shutdown_all)

_quieted = False


def quiet_sdk_logging() -> None:
    """The exporter logs each failed batch; without a handler of the user's, Python would print them
    under the cell (logging's last resort). A NullHandler on ``opentelemetry`` stops that and leaves
    any configured handler (records still propagate) alone."""
    global _quieted
    if not _quieted:
        logging.getLogger("opentelemetry").addHandler(logging.NullHandler())
        _quieted = True
