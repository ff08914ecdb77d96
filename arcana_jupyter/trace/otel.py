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
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import hashlib
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..exceptions import ConfigError
from ..schema.events import (
    CognitivePrimitiveMetadata,
    ContextActionMetadata,
    ContextDecisionMetadata,
    ErrorMetadata,
    LlmCallMetadata,
    MemoryEntryBrief,
    MemoryReadMetadata,
    MemoryWriteMetadata,
    MessageRecord,
    PromptSnapshotMetadata,
    Record,
    RunStartMetadata,
    StateChangeMetadata,
    ToolCallMetadata,
    TurnEndMetadata,
    TurnStartMetadata,
    UserMessageMetadata,
)
from .events import TraceEvent
from .redact import mask_secrets, register_secret

INSTALL_HINT = "pip install 'arcana-jupyter[otel]'"
DEFAULT_SERVICE_NAME = "arcana-jupyter"
DEFAULT_ENDPOINT = "http://localhost:4318"
TRACES_PATH = "/v1/traces"
EXPORT_TIMEOUT_S = 2.0
"""Seconds one export (one batch, retries included) may take unless
``OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`` says otherwise."""
MAX_QUEUE = 2048
"""Spans waiting for export; past it the oldest are dropped (and counted)."""
MAX_BATCH = 256
SCHEDULE_DELAY_MS = 500
FLUSH_TIMEOUT_S = 3.0
"""How long closing a session waits for its spans to leave; what has not left by then is ``pending``."""
MAX_RESPONSE_BYTES = 64 * 1024
"""Bytes of a collector's answer that are read; the rest is never received (the connection is closed)."""
CONTENT_LIMIT = 32_000
"""Characters of one content attribute (messages, tool arguments and results); longer is cut."""

SCOPE = "arcana_jupyter"
RUN_ATTR = "gen_ai.conversation.id"

log = logging.getLogger("arcana_jupyter")


class OtelUnavailable(ConfigError):
    """The OpenTelemetry SDK or the OTLP exporter is not installed."""


def require_otel() -> None:
    """Raise :class:`OtelUnavailable` (one line, with the install command) when the extra is missing."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise OtelUnavailable(f"OpenTelemetry export needs the [otel] extra: {INSTALL_HINT}") from None


def env_enabled() -> bool:
    """``ARCANA_OTEL`` is set to a true value (``1``, ``true``, ``yes``, ``on``)."""
    return os.environ.get("ARCANA_OTEL", "").strip().lower() in ("1", "true", "yes", "on")


def traces_endpoint(endpoint: str | None = None) -> str:
    """The OTLP/HTTP traces URL: ``endpoint`` (a base URL; ``/v1/traces`` is appended unless it is
    there), else ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as is, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` +
    ``/v1/traces``, else ``http://localhost:4318/v1/traces`` — the SDK's own rules."""
    if endpoint:
        base = endpoint.rstrip("/")
        return base if base.endswith(TRACES_PATH) else base + TRACES_PATH
    signal = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if signal:
        return signal
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or DEFAULT_ENDPOINT
    return base.rstrip("/") + TRACES_PATH


def _header_values() -> list[str]:
    """The values of ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`` (``k=v,k2=v2``): registered as secrets."""
    values: list[str] = []
    for var in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        for item in os.environ.get(var, "").split(","):
            if "=" in item:
                value = item.split("=", 1)[1].strip()
                if value:
                    values.append(value)
                    from urllib.parse import unquote

                    values.append(unquote(value))
    return values


def _export_timeout() -> float:
    for var in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        raw = os.environ.get(var, "").strip()
        if raw:
            try:
                return max(0.1, float(raw) / 1000)  # the spec says milliseconds
            except ValueError:
                pass  # not a number: ignored, as the OpenTelemetry SDK ignores it (next variable, then our default)
    return EXPORT_TIMEOUT_S


# ---- ids and times --------------------------------------------------------------------------------
def _derive(bits: int, *parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    value = int.from_bytes(digest[: bits // 8], "big")
    return value or 1


def trace_id_for(run_id: str, agent: str, turn: int | None) -> int:
    """The 128-bit trace id of a turn (or of a run's turn-less events when ``turn`` is None)."""
    return _derive(128, "trace", run_id, agent, "run" if turn is None else turn)


def span_id_for(run_id: str, *parts: object) -> int:
    return _derive(64, "span", run_id, *parts)


def to_ns(ts: str | None) -> int | None:
    """``2026-11-30T01:02:03.456789Z`` -> nanoseconds since the epoch (None when unreadable)."""
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1_000_000) * 1000
    except ValueError:
        return None


def _ms_ns(ms: Any) -> int:
    try:
        value = float(ms)
    except (TypeError, ValueError):
        return 0
    return int(value * 1_000_000) if value > 0 else 0


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


# ---- the HTTP transport: a wall-clock deadline and a bounded answer --------------------------------
def _sdk_transport_needed() -> bool:
    """A proxy or a credential-provider session is configured: only the SDK's ``requests`` transport knows them."""
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
             "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER")
    return any(os.environ.get(n) or os.environ.get(n.lower()) for n in names)


def _tls_context() -> Any:
    import ssl

    def env(name: str) -> str | None:
        return os.environ.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}") or os.environ.get(f"OTEL_EXPORTER_OTLP_{name}")

    context = ssl.create_default_context(cafile=env("CERTIFICATE"))
    cert = env("CLIENT_CERTIFICATE")
    if cert:
        context.load_cert_chain(cert, env("CLIENT_KEY"))
    return context


def bounded_transport() -> Any:
    """The exporter's HTTP transport (``None``: use the SDK's own, see the module docstring)."""
    if _sdk_transport_needed():
        return None
    try:
        from opentelemetry.exporter.http.transport._base import BaseHTTPResult, BaseHTTPTransport
    except ImportError:  # another SDK layout: its own transport, unbounded
        return None
    import http.client
    import socket
    from dataclasses import dataclass as _dataclass
    from dataclasses import field as _field
    from urllib.parse import urlsplit

    @_dataclass(frozen=True, slots=True)
    class Result(BaseHTTPResult):  # type: ignore[misc]
        body: bytes = b""
        header_map: Any = _field(default=None, hash=False, compare=False)

        def content(self) -> bytes:
            return self.body

        def headers(self) -> Any:
            return self.header_map if self.header_map is not None else {}

        def json(self) -> Any:
            return json.loads(self.body)

    class Bounded(BaseHTTPTransport):  # type: ignore[misc]
        def __init__(self) -> None:
            self._tls: Any = None

        def request(self, method: str, url: str, *, headers: dict[str, str] | None = None,
                    timeout: float | None = None, data: bytes | None = None) -> Any:
            budget = timeout if timeout is not None and timeout > 0 else EXPORT_TIMEOUT_S
            parts = urlsplit(url)
            try:
                if parts.scheme == "https":
                    if self._tls is None:
                        self._tls = _tls_context()
                    conn: Any = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=budget,
                                                            context=self._tls)
                else:
                    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=budget)
            except Exception as exc:  # a bad certificate file: one failed export, counted
                return Result(error=exc)
            fired = threading.Event()

            def cut() -> None:
                fired.set()
                sock = conn.sock
                if sock is not None:
                    with contextlib.suppress(Exception):
                        sock.shutdown(socket.SHUT_RDWR)

            timer = threading.Timer(budget, cut)
            timer.daemon = True
            timer.start()
            try:
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                conn.request(method, path, body=data, headers=headers or {})
                response = conn.getresponse()
                body = response.read(MAX_RESPONSE_BYTES)  # the rest is never read: the connection closes
                return Result(status_code=response.status, reason=response.reason, body=body,
                              header_map=response.headers)
            except Exception as exc:  # the SDK counts a failed export
                error: Exception = exc
                if fired.is_set():
                    error = TimeoutError(f"the collector did not answer within {budget:.1f}s")
                return Result(error=error)
            finally:
                timer.cancel()
                with contextlib.suppress(Exception):
                    conn.close()

        def is_connection_error(self, exception: Exception | None) -> bool:
            return isinstance(exception, ConnectionError)

        def close(self) -> None:
            return None

    return Bounded()


# ---- the SDK side (built on first use) ------------------------------------------------------------
_sdk_classes: dict[str, Any] = {}


def _classes() -> dict[str, Any]:
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
        from ..version import __version__

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

    def stats(self, run_id: str) -> dict[str, Any]:
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


# ---- the mapper -----------------------------------------------------------------------------------
@dataclass
class _Decision:
    """A step's ``context_decision``, read once: its time and its ``arcana.*`` attributes."""

    ts: str
    facts: dict[str, Any]


@dataclass
class _Turn:
    span: Any
    context: Any
    trace_id: int
    decisions: dict[int, _Decision] = field(default_factory=dict)
    snapshots: dict[int, list[Any]] = field(default_factory=dict)
    pending_inputs: list[MessageRecord | Mapping[str, Any]] = field(default_factory=list)
    last_ns: int = 0
    error: str | None = None


@dataclass
class _Agent:
    provider: str | None = None
    model: str | None = None
    content: str = "full"


def _obj(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (metadata of an odd shape maps to nothing)."""
    return value if isinstance(value, Mapping) else {}


def _given(record: Record, name: str) -> Any:
    """``record.<name>`` when the trace wrote the key, else None (a default the model fills in is not
    a fact of the trace: a missing ``results`` is no count of 0)."""
    return getattr(record, name) if name in record.model_fields_set else None


def _parts(record: MessageRecord | Mapping[str, Any]) -> dict[str, Any]:
    """A recorded message (an event's :class:`MessageRecord`, or a message of a prompt snapshot's
    request) as a GenAI semconv message: ``{"role", "parts": [...]}``."""
    if isinstance(record, MessageRecord):
        role, content = record.role or "user", record.content
        call_id, calls = record.tool_call_id, record.tool_calls
    else:  # a prompt snapshot's request message: the provider's wire form, not event metadata
        role, content = str(record.get("role") or "user"), record.get("content")
        call_id, calls = record.get("tool_call_id"), record.get("tool_calls")
    parts: list[dict[str, Any]] = []
    if role == "tool":
        parts.append({"type": "tool_call_response", "id": call_id, "response": content})
    elif isinstance(content, str) and content:
        parts.append({"type": "text", "content": content})
    for call in calls or []:
        if isinstance(call, Mapping):
            parts.append({"type": "tool_call", "id": call.get("id"), "name": call.get("name"),
                          "arguments": call.get("arguments")})
    return {"role": role, "parts": parts}


_BUDGET_FACTS = ("used", "available", "total_window", "response_reserve", "utilization")


def _decision_facts(md: ContextDecisionMetadata, rows: Any) -> dict[str, Any]:
    """The ``arcana.*`` attributes of one context decision; ``rows`` are its recorded per-message rows."""
    out: dict[str, Any] = {}
    decision, budget, report, inputs = md.decision, md.budget, md.report, md.inputs
    if decision is not None:
        out["arcana.strategy"] = decision.strategy
        out["arcana.strategy.requested"] = decision.requested_strategy
    if budget is not None:
        for key in _BUDGET_FACTS:
            out[f"arcana.budget.{key}"] = getattr(budget, key)
        if "overflow" in budget.model_fields_set:
            out["arcana.budget.overflow"] = budget.overflow
    if isinstance(rows, list):  # not a list: a delta against an earlier decision (trace/decision_delta.py)
        tokens = {"kept": 0, "compressed": 0, "dropped": 0, "summarized": 0}
        messages = dict.fromkeys(tokens, 0)
        for row in rows:  # one row (a MessageDecision dump) per message: kept tight
            outcome = row.get("outcome") if type(row) is dict else None
            if outcome in tokens:
                count = row.get("token_count_after" if outcome == "kept" else "token_count_before")
                tokens[outcome] += count if type(count) is int else 0
                messages[outcome] += 1
        for outcome in ("kept", "compressed", "dropped"):
            extra = "summarized" if outcome == "compressed" else None
            out[f"arcana.tokens.{outcome}"] = tokens[outcome] + (tokens[extra] if extra else 0)
            out[f"arcana.messages.{outcome}"] = messages[outcome] + (messages[extra] if extra else 0)
    if report is not None:
        for value, attr in ((report.prefix_tokens_reused, "arcana.prefix.tokens_reused"),
                            (report.prefix_messages_reused, "arcana.prefix.messages_reused"),
                            (report.total_before, "arcana.tokens.before"), (report.total_after, "arcana.tokens.after")):
            if value is not None:
                out[attr] = value
    pins = _given(inputs, "pins") if inputs is not None else None
    if pins is not None:
        out["arcana.pins"] = len(pins)
        ids = [str(p.get("pin_id")) for p in pins if p.get("pin_id")]  # PinBlock dumps
        if ids:
            out["arcana.pins.ids"] = ids
    if md.request_digest is not None:
        out["arcana.request_digest"] = md.request_digest
    return out


def _clean(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Only values OpenTelemetry accepts: str, bool, int, float and homogeneous lists of them."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, str | bool | int | float):
            out[key] = value
        elif isinstance(value, list | tuple):
            items = [v for v in value if v is not None]
            if (items and all(isinstance(v, str) for v in items)) or (
                items and all(isinstance(v, int | float) and not isinstance(v, bool) for v in items)
            ):
                out[key] = list(items)
            elif items:
                out[key] = [str(v) for v in items]
        else:
            out[key] = str(value)
    return out


MAX_PENDING_EVENTS = 10_000
"""Events a background mapper holds before it drops (and counts) new ones."""


class SpanMapper:
    """Trace events in, spans out (see the module docstring). Feed :meth:`on_event` every event of a
    run in order; :meth:`finish` ends what a run left open. Never raises: a mapping problem is
    counted in :attr:`problems` and logged at debug level.

    ``background=True`` (live sessions): :meth:`on_event` only queues the event (a few µs on the
    turn's thread) and a daemon thread maps it, in order; :meth:`finish` waits for it (bounded).
    :attr:`busy_seconds` is the time spent mapping. ``content`` is the trace_content assumed for an
    agent until its ``run_start`` says (events recorded before it, such as the memory digest's read)."""

    def __init__(self, pipeline: OtelPipeline, *, secrets: Iterable[str] = (), background: bool = False,
                 content: str = "full") -> None:
        self.pipeline = pipeline
        self.content = content
        self.tracer = pipeline.tracer
        self.ids = pipeline.ids
        self.secrets = [s for s in secrets if s]
        self._lock = threading.Lock()
        self._agents: dict[str, _Agent] = {}
        self._turns: dict[tuple[str, int], _Turn] = {}
        self.problems = 0
        self.spans = 0
        self.busy_seconds = 0.0
        self.events_dropped = 0
        self.background = background
        self._queue: queue.SimpleQueue[TraceEvent | None] = queue.SimpleQueue()
        self._outstanding = 0
        self._idle = threading.Event()
        self._idle.set()
        self._count_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    # -- helpers ----------------------------------------------------------------------------------
    def _mask(self, value: Any) -> str:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        text = mask_secrets(text, self.secrets)
        return text if len(text) <= CONTENT_LIMIT else text[:CONTENT_LIMIT] + "…"

    def _start(self, name: str, event: TraceEvent, span_key: tuple[object, ...], start_ns: int, *, kind: str,
               parent: _Turn | None, attributes: Mapping[str, Any]) -> Any:
        from opentelemetry import trace as ot_trace

        run = event.run_id
        trace_id = None if parent is not None else trace_id_for(run, event.agent, event.turn)
        context = parent.context if parent is not None else ot_trace.set_span_in_context(ot_trace.INVALID_SPAN)
        self.ids.next(trace_id, span_id_for(run, *span_key))
        span = self.tracer.start_span(name, context=context, kind=getattr(ot_trace.SpanKind, kind),
                                      attributes=_clean(attributes), start_time=max(0, start_ns))
        self.spans += 1
        return span

    def _base(self, event: TraceEvent, operation: str) -> dict[str, Any]:
        return {"gen_ai.operation.name": operation, RUN_ATTR: event.run_id, "gen_ai.agent.name": event.agent}

    def _full(self, event: TraceEvent) -> bool:
        agent = self._agents.get(event.agent)
        return (agent.content if agent is not None else self.content) == "full"

    @staticmethod
    def _error(span: Any, kind: str, message: str | None = None) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.set_attribute("error.type", kind)
        span.set_status(Status(StatusCode.ERROR, mask_secrets(message)[:500] if message else None))

    # -- events -----------------------------------------------------------------------------------
    def on_event(self, event: TraceEvent) -> None:
        """Map one event — or queue it for the mapping thread (``background``). Thread-safe; never raises."""
        if not self.background:
            self._map(event)
            return
        with self._count_lock:
            if self._outstanding >= MAX_PENDING_EVENTS:
                self.events_dropped += 1
                return
            self._outstanding += 1
            self._idle.clear()
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="arcana-otel-mapper", daemon=True)
                self._thread.start()
        self._queue.put(event)

    def _work(self) -> None:
        while True:
            event = self._queue.get()
            if event is None:
                return
            self._map(event)
            with self._count_lock:
                self._outstanding -= 1
                if self._outstanding == 0:
                    self._idle.set()

    def drain(self, timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait (at most ``timeout`` s) until every queued event is mapped."""
        return self._idle.wait(timeout)

    def _map(self, event: TraceEvent) -> None:
        started = time.perf_counter()
        try:
            with self._lock:
                handler = getattr(self, "_on_" + event.event_type, None)
                if handler is not None:
                    handler(event, to_ns(event.ts) or 0)
        except Exception:  # an export problem must never reach the conversation
            self.problems += 1
            log.debug("arcana: could not map event %s to a span", event.event_id, exc_info=True)
        self.busy_seconds += time.perf_counter() - started

    def _on_run_start(self, event: TraceEvent, ns: int) -> None:
        md = RunStartMetadata.read(event.metadata)
        config = md.config or {}  # a RuntimeConfig dump
        model = md.model
        self._agents[event.agent] = _Agent(
            provider=md.provider, model=model.split(":", 1)[1] if model and ":" in model else model,
            content=str(config.get("trace_content") or "full"))

    def _on_turn_start(self, event: TraceEvent, ns: int) -> None:
        if event.turn is None:
            return
        key = (event.agent, event.turn)
        if key in self._turns:  # a turn started twice (a resumed run): close the first
            self._end_turn(key, None, self._turns[key].last_ns or ns)
        agent = self._agents.get(event.agent, _Agent())
        attrs = self._base(event, "invoke_agent") | {
            "gen_ai.provider.name": agent.provider, "gen_ai.request.model": agent.model,
            "arcana.turn": event.turn, "arcana.input_tokens": TurnStartMetadata.read(event.metadata).input_tokens}
        span = self._start(f"invoke_agent {event.agent}", event, ("turn", event.agent, event.turn), ns,
                           kind="INTERNAL", parent=None, attributes=attrs)
        from opentelemetry import trace as ot_trace

        self._turns[key] = _Turn(span=span, context=ot_trace.set_span_in_context(span),
                                 trace_id=trace_id_for(event.run_id, event.agent, event.turn), last_ns=ns)

    def _turn(self, event: TraceEvent, ns: int) -> _Turn | None:
        turn = self._turns.get((event.agent, event.turn)) if event.turn is not None else None
        if turn is not None:
            turn.last_ns = max(turn.last_ns, ns)
        return turn

    def _on_user_message(self, event: TraceEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        message = UserMessageMetadata.read(event.metadata).message
        if turn is not None and message is not None:
            turn.pending_inputs.append(message)

    def _on_context_decision(self, event: TraceEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        if turn is None:
            return
        # Fast path, the one string-keyed read here: a decision holds a row per message (hundreds in a
        # long chat, and live events are never delta-encoded); validating each row as a MessageDecision
        # made the mapper twice as slow, so the rows are tallied as recorded and the rest goes through
        # the model.
        raw = event.metadata
        decision = event.metadata.get("decision")
        rows = decision.get("decisions") if isinstance(decision, dict) else None
        if isinstance(decision, dict) and isinstance(rows, list):
            raw = raw | {"decision": decision | {"decisions": None}}
        md = ContextDecisionMetadata.read(raw)
        step = _given(md, "step")
        if step is not None:
            turn.decisions[step] = _Decision(ts=event.ts, facts=_decision_facts(md, rows))

    def _on_prompt_snapshot(self, event: TraceEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        if turn is None:
            return
        md = PromptSnapshotMetadata.read(event.metadata)
        step, messages = _given(md, "step"), _given(md, "messages")
        if step is not None and messages is not None:
            turn.snapshots[step] = messages

    def _chat_attrs(self, event: TraceEvent, turn: _Turn | None, step: int | None, system: str | None = None,
                    model: str | None = None) -> dict[str, Any]:
        agent = self._agents.get(event.agent, _Agent())
        decision = turn.decisions.get(step) if turn is not None and step is not None else None
        return self._base(event, "chat") | (decision.facts if decision is not None else {}) | {
            "gen_ai.provider.name": system or agent.provider,
            "gen_ai.request.model": model or agent.model,
            "arcana.step": step,
        }

    def _chat_name(self, attrs: Mapping[str, Any]) -> str:
        model = attrs.get("gen_ai.request.model")
        return f"chat {model}" if model else "chat"

    def _inputs(self, turn: _Turn | None, step: int | None) -> list[dict[str, Any]]:
        if turn is None:
            return []
        snapshot = turn.snapshots.get(step) if step is not None else None
        records = snapshot if snapshot is not None else turn.pending_inputs
        return [_parts(r) for r in records if isinstance(r, MessageRecord | Mapping)]

    def _on_llm_call(self, event: TraceEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        md = LlmCallMetadata.read(event.metadata)
        step = md.step
        attrs = self._chat_attrs(event, turn, step, md.system, md.request_model)
        finish = md.finish_reasons
        attrs |= {
            "gen_ai.response.model": md.response_model,
            "gen_ai.usage.input_tokens": md.input_tokens,
            "gen_ai.usage.output_tokens": md.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": md.cached_input_tokens,
            "gen_ai.response.finish_reasons": [str(f) for f in finish if f is not None] if finish is not None else None,
            "arcana.request_digest": md.request_digest or attrs.get("arcana.request_digest"),
            "arcana.latency_ms": md.latency_ms, "arcana.attempts": md.attempts,
            "arcana.cost_usd": md.cost_usd, "arcana.counted_input_tokens": md.counted_input_tokens,
            "arcana.count_ratio": md.count_ratio, "arcana.calibration": md.calibration,
            "arcana.purpose": md.purpose,
        }
        if self._full(event):
            inputs = self._inputs(turn, step)
            if inputs:
                attrs["gen_ai.input.messages"] = self._mask(inputs)
            if md.message is not None:
                out = _parts(md.message)
                if finish:
                    out["finish_reason"] = finish[0]
                attrs["gen_ai.output.messages"] = self._mask([out])
        start = ns - _ms_ns(md.latency_ms)
        span = self._start(self._chat_name(attrs), event, ("event", event.event_id), start, kind="CLIENT",
                           parent=turn, attributes=attrs)
        span.end(end_time=ns)
        if turn is not None:
            turn.pending_inputs = []

    def _on_tool_call(self, event: TraceEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        md = ToolCallMetadata.read(event.metadata)
        name = str(md.name or "tool")
        attrs = self._base(event, "execute_tool") | {
            "gen_ai.tool.name": name, "gen_ai.tool.call.id": md.tool_call_id,
            "gen_ai.tool.type": "extension" if md.intercepted else "function",
            "arcana.step": md.step, "arcana.tool.ok": md.ok, "arcana.tool.truncated": md.truncated,
            "arcana.latency_ms": md.latency_ms,
        }
        if self._full(event):
            if md.arguments is not None:
                attrs["gen_ai.tool.call.arguments"] = self._mask(md.arguments)
            if md.result is not None:
                attrs["gen_ai.tool.call.result"] = self._mask(md.result)
        span = self._start(f"execute_tool {name}", event, ("event", event.event_id), ns - _ms_ns(md.latency_ms),
                           kind="INTERNAL", parent=turn, attributes=attrs)
        if md.ok is False:
            error = md.error
            self._error(span, str((error.type if error else None) or "tool_error"),
                        str((error.message if error else None) or "") or None)
        span.end(end_time=ns)
        if turn is not None and md.message is not None:
            turn.pending_inputs.append(md.message)

    def _on_memory_read(self, event: TraceEvent, ns: int) -> None:
        md = MemoryReadMetadata.read(event.metadata)
        results = _given(md, "results")
        attrs = self._base(event, "search_memory") | {
            "gen_ai.memory.record.count": len(results) if results is not None else None,
            "arcana.memory.purpose": md.purpose,
            "arcana.memory.kinds": md.kinds,
        }
        if self._full(event) and md.query is not None:
            attrs["gen_ai.memory.query.text"] = self._mask(md.query)
        if self._full(event) and results is not None:
            attrs["gen_ai.memory.records"] = self._mask([hit.model_dump(exclude_unset=True) for hit in results])
        self._instant("search_memory", event, ns, attrs)

    _MEMORY_OPS = {"remember": "create_memory", "learning": "create_memory", "forget": "delete_memory"}

    def _on_memory_write(self, event: TraceEvent, ns: int) -> None:
        md = MemoryWriteMetadata.read(event.metadata)
        op = str(md.op or "")
        operation = self._MEMORY_OPS.get(op, "update_memory")
        entry = md.entry or MemoryEntryBrief()
        attrs = self._base(event, operation) | {
            "gen_ai.memory.record.id": entry.id, "gen_ai.memory.record.count": 1,
            "arcana.memory.op": op, "arcana.memory.kind": entry.kind, "arcana.memory.scope": entry.scope,
        }
        if self._full(event) and entry.content is not None:
            attrs["gen_ai.memory.records"] = self._mask([{"id": entry.id, "content": entry.content}])
        self._instant(operation, event, ns, attrs)

    def _instant(self, name: str, event: TraceEvent, ns: int, attrs: Mapping[str, Any]) -> None:
        turn = self._turn(event, ns)
        span = self._start(name, event, ("event", event.event_id), ns, kind="CLIENT", parent=turn, attributes=attrs)
        span.end(end_time=ns)

    def _span_event(self, event: TraceEvent, ns: int, name: str, attrs: Mapping[str, Any]) -> None:
        turn = self._turn(event, ns)
        if turn is not None:
            turn.span.add_event(name, _clean(attrs), timestamp=ns)

    def _on_cognitive_primitive(self, event: TraceEvent, ns: int) -> None:
        md = CognitivePrimitiveMetadata.read(event.metadata)
        result = _obj(md.result)  # the primitive's structured tool result (its own shape per primitive)
        self._span_event(event, ns, f"arcana.{md.primitive or 'primitive'}",
                         {"arcana.pin_id": result.get("pin_id"), "arcana.source": md.source})

    def _on_state_change(self, event: TraceEvent, ns: int) -> None:
        md = StateChangeMetadata.read(event.metadata)
        self._span_event(event, ns, "arcana.state_change", {
            "arcana.object_id": md.object_id, "arcana.kind": md.kind,
            "arcana.from_tier": md.from_tier, "arcana.to_tier": md.to_tier, "arcana.cause": md.cause})

    def _on_context_action(self, event: TraceEvent, ns: int) -> None:
        md = ContextActionMetadata.read(event.metadata)
        self._span_event(event, ns, "arcana.context_action", {
            "arcana.action": md.action, "arcana.object_id": md.object_id, "arcana.source": md.source})

    def _on_error(self, event: TraceEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        md = ErrorMetadata.read(event.metadata)
        kind = str(md.type or "error")
        if md.where == "provider":  # the call that failed: a chat span of its own
            step = md.step
            if step is None and turn is not None and turn.decisions:
                step = max(turn.decisions)
            attrs = self._chat_attrs(event, turn, step) | {"arcana.http_status": md.status}
            decision = turn.decisions.get(step) if turn is not None and step is not None else None
            start = (to_ns(decision.ts) if decision is not None else None) or ns
            span = self._start(self._chat_name(attrs), event, ("event", event.event_id), min(start, ns),
                               kind="CLIENT", parent=turn, attributes=attrs)
            self._error(span, kind, str(md.message or "") or None)
            span.end(end_time=ns)
        if turn is not None:
            turn.error = kind
            turn.span.add_event("exception", _clean({"exception.type": kind,
                                                     "exception.message": mask_secrets(str(md.message or ""))[:500],
                                                     "arcana.where": md.where}), timestamp=ns)

    def _on_turn_end(self, event: TraceEvent, ns: int) -> None:
        if event.turn is not None and (event.agent, event.turn) in self._turns:
            self._end_turn((event.agent, event.turn), event, ns)

    def _end_turn(self, key: tuple[str, int], event: TraceEvent | None, ns: int) -> None:
        turn = self._turns.pop(key)
        span = turn.span
        md = TurnEndMetadata.read(event.metadata) if event is not None else TurnEndMetadata()
        status = str(md.status or "unfinished")
        usage = md.usage
        span.set_attributes(_clean({
            "arcana.status": status, "arcana.steps": md.steps, "arcana.cost_usd": md.cost_usd,
            "arcana.latency_ms": md.latency_ms,
            "gen_ai.usage.input_tokens": _given(usage, "input_tokens") if usage is not None else None,
            "gen_ai.usage.output_tokens": _given(usage, "output_tokens") if usage is not None else None,
        }))
        if status in ("error", "unfinished"):
            self._error(span, turn.error or ("turn_unfinished" if status == "unfinished" else "error"))
        span.end(end_time=max(ns, turn.last_ns))

    def _on_run_end(self, event: TraceEvent, ns: int) -> None:
        for key in [k for k in self._turns if event.agent in (k[0], "pool")]:
            self._end_turn(key, None, ns)

    def finish(self, timeout: float = FLUSH_TIMEOUT_S) -> None:
        """Map what is queued (waiting at most ``timeout`` s), stop the mapping thread, and end the
        turns a run left open (a crash or a kill before ``turn_end``) as unfinished errors."""
        if self.background:
            self.drain(timeout)
            if self._thread is not None:
                self._queue.put(None)
        with self._lock:
            for key in list(self._turns):
                try:
                    self._end_turn(key, None, self._turns[key].last_ns)
                except Exception:
                    self.problems += 1


def export_events(events: Iterable[TraceEvent], pipeline: OtelPipeline, *, timeout: float = 30.0,
                  secrets: Iterable[str] = ()) -> dict[str, Any]:
    """Send a recorded run's events as spans and wait (at most ``timeout`` s) for them to leave.

    Returns the run's :meth:`OtelPipeline.stats`, plus ``flushed`` (whether the queue emptied in time)."""
    events = list(events)
    starts = [RunStartMetadata.read(e.metadata).config or {} for e in events if e.event_type == "run_start"]
    # events before the first run_start (the memory digest's read) follow the run's content mode too
    content = str(starts[0].get("trace_content") or "full") if starts else "full"
    mapper = pipeline.mapper(secrets=secrets, content=content)
    run_id = ""
    for event in events:
        run_id = run_id or event.run_id
        mapper.on_event(event)
    mapper.finish()
    flushed = pipeline.flush(timeout)
    return pipeline.stats(run_id) | {"flushed": flushed, "mapping_problems": mapper.problems}
