"""The event -> span mapper: :class:`SpanMapper` turns a run's trace events into OpenTelemetry
GenAI spans (see the :mod:`~arcana_jupyter.trace.otel` docstring), and :func:`export_events` sends
a recorded run through a pipeline. Each event is parsed once into its typed event
(:meth:`~arcana_jupyter.trace.events.TraceEvent.typed`) and handled by a ``match`` on its class."""

from __future__ import annotations

import hashlib
import json
import queue
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...schema.events import (
    CognitivePrimitive,
    ContextAction,
    ContextDecisionEvent,
    ContextDecisionMetadata,
    Envelope,
    ErrorEvent,
    Event,
    LlmCall,
    MemoryEntryBrief,
    MemoryRead,
    MemoryWrite,
    MessageRecord,
    PromptSnapshotEvent,
    Record,
    RunEnd,
    RunStart,
    StateChange,
    ToolCallEvent,
    TurnEnd,
    TurnEndMetadata,
    TurnStart,
    UserMessage,
)
from ..decision_json import rows_of, with_rows
from ..events import TraceEvent
from ..redact import mask_secrets
from .settings import CONTENT_LIMIT, FLUSH_TIMEOUT_S, RUN_ATTR, log

if TYPE_CHECKING:
    from .pipeline import OtelPipeline


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


# ---- the mapper -----------------------------------------------------------------------------------
@dataclass
class _Decision:
    """A step's ``context_decision``, read once: its time and its ``arcana.*`` attributes."""

    ts: str
    facts: dict[str, Any]  # OTel edge: span attributes


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


def _parts(record: MessageRecord | Mapping[str, Any]) -> dict[str, Any]:  # JSON edge: a semconv message
    """A recorded message (an event's :class:`MessageRecord`, or a message of a prompt snapshot's
    request) as a GenAI semconv message: ``{"role", "parts": [...]}``."""
    if isinstance(record, MessageRecord):
        role, content = record.role or "user", record.content
        call_id, calls = record.tool_call_id, record.tool_calls
    else:  # a prompt snapshot's request message: the provider's wire form, not event metadata
        role, content = str(record.get("role") or "user"), record.get("content")
        call_id, calls = record.get("tool_call_id"), record.get("tool_calls")
    parts: list[dict[str, Any]] = []  # JSON edge: semconv message parts
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


def _decision_facts(md: ContextDecisionMetadata, rows: Any) -> dict[str, Any]:  # OTel edge: span attributes
    """The ``arcana.*`` attributes of one context decision; ``rows`` are its recorded per-message rows."""
    out: dict[str, Any] = {}  # OTel edge: span attributes
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


def _clean(attrs: Mapping[str, Any]) -> dict[str, Any]:  # OTel edge: span attributes
    """Only values OpenTelemetry accepts: str, bool, int, float and homogeneous lists of them."""
    out: dict[str, Any] = {}  # OTel edge: span attributes
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

_MAPPED = frozenset({
    "run_start", "turn_start", "user_message", "context_decision", "prompt_snapshot", "llm_call", "tool_call",
    "memory_read", "memory_write", "cognitive_primitive", "state_change", "context_action", "error", "turn_end",
    "run_end",
})
"""The event types that make a span, a span event or state the mapper keeps (the rest are not parsed)."""


def _read(event: TraceEvent) -> tuple[Event | None, list[Any] | None]:
    """``event`` typed, parsed once; for a ``context_decision``, also its per-message rows as recorded.

    The rows are left out of the parse and tallied as recorded (:func:`_decision_facts`): a decision
    holds a row per message (hundreds in a long chat, and live events are never delta-encoded), and
    validating each row as a ``MessageDecision`` made the mapper twice as slow."""
    if event.event_type != "context_decision":
        return event.typed(), None
    rows = rows_of(event.metadata)  # the one part read before the parse
    if rows is not None:
        return event.typed(with_rows(event.metadata, None)), rows
    return event.typed(), None


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

    def _start(self, name: str, event: Envelope, span_key: tuple[object, ...], start_ns: int, *, kind: str,
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

    def _base(self, event: Envelope, operation: str) -> dict[str, Any]:  # OTel edge: span attributes
        return {"gen_ai.operation.name": operation, RUN_ATTR: event.run_id, "gen_ai.agent.name": event.agent}

    def _full(self, event: Envelope) -> bool:
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
            if event.event_type in _MAPPED:  # the rest make no span: not even parsed
                typed, rows = _read(event)
                with self._lock:
                    self._dispatch(typed, rows, to_ns(event.ts) or 0)
        except Exception:  # an export problem must never reach the conversation
            self.problems += 1
            log.debug("arcana: could not map event %s to a span", event.event_id, exc_info=True)
        self.busy_seconds += time.perf_counter() - started

    def _dispatch(self, event: Event | None, rows: list[Any] | None, ns: int) -> None:
        match event:
            case RunStart():
                self._run_start(event)
            case TurnStart():
                self._turn_start(event, ns)
            case UserMessage():
                self._user_message(event, ns)
            case ContextDecisionEvent():
                self._context_decision(event, rows, ns)
            case PromptSnapshotEvent():
                self._prompt_snapshot(event, ns)
            case LlmCall():
                self._llm_call(event, ns)
            case ToolCallEvent():
                self._tool_call(event, ns)
            case MemoryRead():
                self._memory_read(event, ns)
            case MemoryWrite():
                self._memory_write(event, ns)
            case CognitivePrimitive():
                self._cognitive_primitive(event, ns)
            case StateChange():
                self._state_change(event, ns)
            case ContextAction():
                self._context_action(event, ns)
            case ErrorEvent():
                self._on_error(event, ns)
            case TurnEnd():
                if event.turn is not None and (event.agent, event.turn) in self._turns:
                    self._end_turn((event.agent, event.turn), event, ns)
            case RunEnd():
                for key in [k for k in self._turns if event.agent in (k[0], "pool")]:
                    self._end_turn(key, None, ns)
            case _:
                pass

    def _run_start(self, event: RunStart) -> None:
        md = event.metadata
        config = md.config or {}  # a RuntimeConfig dump
        model = md.model
        self._agents[event.agent] = _Agent(
            provider=md.provider, model=model.split(":", 1)[1] if model and ":" in model else model,
            content=str(config.get("trace_content") or "full"))

    def _turn_start(self, event: TurnStart, ns: int) -> None:
        if event.turn is None:
            return
        key = (event.agent, event.turn)
        if key in self._turns:  # a turn started twice (a resumed run): close the first
            self._end_turn(key, None, self._turns[key].last_ns or ns)
        agent = self._agents.get(event.agent, _Agent())
        attrs = self._base(event, "invoke_agent") | {
            "gen_ai.provider.name": agent.provider, "gen_ai.request.model": agent.model,
            "arcana.turn": event.turn, "arcana.input_tokens": event.metadata.input_tokens}
        span = self._start(f"invoke_agent {event.agent}", event, ("turn", event.agent, event.turn), ns,
                           kind="INTERNAL", parent=None, attributes=attrs)
        from opentelemetry import trace as ot_trace

        self._turns[key] = _Turn(span=span, context=ot_trace.set_span_in_context(span),
                                 trace_id=trace_id_for(event.run_id, event.agent, event.turn), last_ns=ns)

    def _turn(self, event: Envelope, ns: int) -> _Turn | None:
        turn = self._turns.get((event.agent, event.turn)) if event.turn is not None else None
        if turn is not None:
            turn.last_ns = max(turn.last_ns, ns)
        return turn

    def _user_message(self, event: UserMessage, ns: int) -> None:
        turn = self._turn(event, ns)
        message = event.metadata.message
        if turn is not None and message is not None:
            turn.pending_inputs.append(message)

    def _context_decision(self, event: ContextDecisionEvent, rows: list[Any] | None, ns: int) -> None:
        turn = self._turn(event, ns)
        if turn is None:
            return
        md = event.metadata
        step = _given(md, "step")
        if step is not None:
            turn.decisions[step] = _Decision(ts=event.ts, facts=_decision_facts(md, rows))

    def _prompt_snapshot(self, event: PromptSnapshotEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        if turn is None:
            return
        md = event.metadata
        step, messages = _given(md, "step"), _given(md, "messages")
        if step is not None and messages is not None:
            turn.snapshots[step] = messages

    def _chat_attrs(self, event: Envelope, turn: _Turn | None, step: int | None, system: str | None = None,
                    model: str | None = None) -> dict[str, Any]:  # OTel edge: span attributes
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

    def _inputs(self, turn: _Turn | None, step: int | None) -> list[dict[str, Any]]:  # JSON edge: semconv messages
        if turn is None:
            return []
        snapshot = turn.snapshots.get(step) if step is not None else None
        records = snapshot if snapshot is not None else turn.pending_inputs
        return [_parts(r) for r in records if isinstance(r, MessageRecord | Mapping)]

    def _llm_call(self, event: LlmCall, ns: int) -> None:
        turn = self._turn(event, ns)
        md = event.metadata
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

    def _tool_call(self, event: ToolCallEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        md = event.metadata
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

    def _memory_read(self, event: MemoryRead, ns: int) -> None:
        md = event.metadata
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

    def _memory_write(self, event: MemoryWrite, ns: int) -> None:
        md = event.metadata
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

    def _instant(self, name: str, event: Envelope, ns: int, attrs: Mapping[str, Any]) -> None:
        turn = self._turn(event, ns)
        span = self._start(name, event, ("event", event.event_id), ns, kind="CLIENT", parent=turn, attributes=attrs)
        span.end(end_time=ns)

    def _span_event(self, event: Envelope, ns: int, name: str, attrs: Mapping[str, Any]) -> None:
        turn = self._turn(event, ns)
        if turn is not None:
            turn.span.add_event(name, _clean(attrs), timestamp=ns)

    def _cognitive_primitive(self, event: CognitivePrimitive, ns: int) -> None:
        md = event.metadata
        result = _obj(md.result)  # the primitive's structured tool result (its own shape per primitive)
        self._span_event(event, ns, f"arcana.{md.primitive or 'primitive'}",
                         {"arcana.pin_id": result.get("pin_id"), "arcana.source": md.source})

    def _state_change(self, event: StateChange, ns: int) -> None:
        md = event.metadata
        self._span_event(event, ns, "arcana.state_change", {
            "arcana.object_id": md.object_id, "arcana.kind": md.kind,
            "arcana.from_tier": md.from_tier, "arcana.to_tier": md.to_tier, "arcana.cause": md.cause})

    def _context_action(self, event: ContextAction, ns: int) -> None:
        md = event.metadata
        self._span_event(event, ns, "arcana.context_action", {
            "arcana.action": md.action, "arcana.object_id": md.object_id, "arcana.source": md.source})

    def _on_error(self, event: ErrorEvent, ns: int) -> None:
        turn = self._turn(event, ns)
        md = event.metadata
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

    def _end_turn(self, key: tuple[str, int], event: TurnEnd | None, ns: int) -> None:
        turn = self._turns.pop(key)
        span = turn.span
        md = event.metadata if event is not None else TurnEndMetadata()
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
                  secrets: Iterable[str] = ()) -> dict[str, Any]:  # JSON edge: run_end.otel_export
    """Send a recorded run's events as spans and wait (at most ``timeout`` s) for them to leave.

    Returns the run's :meth:`OtelPipeline.stats`, plus ``flushed`` (whether the queue emptied in time)."""
    events = list(events)
    starts = [typed.metadata.config or {} for e in events
              if e.event_type == "run_start" and isinstance(typed := e.typed(), RunStart)]
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
