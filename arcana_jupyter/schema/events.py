"""Trace events as types: one model per event type's ``metadata``, and the envelope around it.

docs/TRACE_FORMAT.md describes each type in prose; these models are the same contract as code
(tests/schema/test_trace_format_doc.py keeps the two in step). A writer makes an event's metadata
with :meth:`Record.build` (validated, strict) and passes the model to ``emit`` (``TraceWriter``,
``ChatSession``, ``SessionContext``), which dumps it once, as it writes the line (:meth:`Record.wire`);
tests/schema/test_written_events.py validates what a real session writes against these models.
:class:`~arcana_jupyter.trace.TraceReader` parses the metadata of every line it indexes with
:data:`EVENT_ADAPTER` (strict), reporting a misshapen event as ``file:line: problem``, and hands
out lines with that metadata as written (:class:`TraceEvent`, the one envelope type beside the typed
events). Code that reads what an event says (the span mapper, the replay provider, ``arcana trace``,
resume, the turn bundle, ``report --verify``) turns such a line into its typed event once, with
:meth:`TraceEvent.typed` (:func:`read_event`: :data:`EVENT_ADAPTER`, with the reader's tolerance for
a field of the wrong type), and dispatches on the event's class.

Conventions:

- Every metadata field has a default: older traces (and hand-written ones in tests) leave keys
  out, and a reader must still read them. Text fields are ``str | None`` because a
  ``trace_content="none"`` trace sets message text to ``null``.
- Unknown keys are kept (``extra="allow"``): a newer writer may add fields, an older reader keeps
  working. Known keys are validated.
- OpenTelemetry-style dotted keys (``gen_ai.usage.input_tokens``) are aliases of snake_case
  attributes (``input_tokens``); dump with ``by_alias=True`` to get the wire form back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .decisions import BudgetSnapshot, ContextDecision, ContextReport, MessageDecision
from .pins import PinChange

TRACE_FORMAT_VERSION = 1

EventType = Literal[
    "run_start",
    "turn_start",
    "user_message",
    "context_decision",
    "prompt_snapshot",
    "prompt_sent",
    "llm_call",
    "tool_call",
    "cognitive_primitive",
    "state_change",
    "context_action",
    "memory_read",
    "memory_write",
    "user_action",
    "error",
    "turn_end",
    "run_end",
    "notebook_renamed",
]
EVENT_TYPES: tuple[str, ...] = EventType.__args__  # type: ignore[attr-defined]


class Record(BaseModel):
    """A JSON object of the trace: known keys validated, unknown keys kept."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    @classmethod
    def read(cls, data: Any) -> Self:
        """``data`` as this model, never raising: a known key of the wrong type falls back to its
        default (the reader reported it when it indexed the line), anything but a dict gives the
        defaults. For reader paths that must answer whatever a trace holds."""
        if not isinstance(data, dict):
            return cls.model_validate({})
        try:
            return cls.model_validate(data, strict=True)
        except ValidationError as exc:
            bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
        try:
            return cls.model_validate({k: v for k, v in data.items() if k not in bad}, strict=True)
        except ValidationError:  # a field without a default (MessageRecord.role ...): give up on the record
            return cls.model_construct()  # type: ignore[return-value]

    @classmethod
    def build(cls, **fields: Any) -> Self:
        """This record as a writer makes it: ``fields`` are the model's attribute names; an unknown
        name or a value of the wrong type raises (a writer's bug, caught where it is made). The
        writer dumps it once, when it writes the line (:meth:`wire`)."""
        unknown = fields.keys() - cls.model_fields.keys()
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
        return cls.model_validate(fields, strict=True)

    def wire(self) -> dict[str, Any]:  # JSON edge: the trace's form of this record
        """The JSON object the trace holds: the keys given, in the model's order, spelled as the
        trace spells them (aliases such as ``gen_ai.usage.input_tokens``)."""
        return self.model_dump(by_alias=True, exclude_unset=True)


# -- parts shared by several events -------------------------------------------------------------


class MessageRecord(Record):
    """``Message.record()``: a history message as the trace holds it."""

    role: str
    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None  # JSON edge: wire tool calls, as recorded
    tool_call_id: str | None = None
    name: str | None = None
    turn: int | None = None


class UsageRecord(Record):
    """Token totals (``providers.base.Usage`` dumped)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0


class ErrorRecord(Record):
    """``{type, message}`` of a failed tool call."""

    type: str | None = None
    message: str | None = None


# -- context_decision ---------------------------------------------------------------------------


class RecordedDecision(ContextDecision):
    """A :class:`ContextDecision` as a trace line holds it: its ``decisions`` may be ``null`` plus a
    ``decisions_delta`` against an earlier full decision (trace/decision_delta.py)."""

    model_config = ConfigDict(extra="allow")

    decisions: list[MessageDecision] | None = None  # type: ignore[assignment]
    decisions_delta: dict[str, Any] | None = None  # JSON edge: the older delta encoding (decision_delta.py)


class DecisionInputs(Record):
    """Everything besides history the builder got."""

    pins: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: Pin dumps, as recorded
    """Pin dumps (:class:`~.pins.Pin`: ``pin_id, content, label, until_turn, created_turn``)."""
    sections: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: ContextSection dumps
    """ContextSection dumps."""
    task: str | None = None
    current_input: MessageRecord | None = None
    history_from_turn: int | None = None
    """Traces before the overflow cover: the first turn the builder got (earlier ones were left out)."""
    digest_turns: list[int] = Field(default_factory=list)
    """Traces before the overflow cover: the turns of the digest band."""
    overflow: dict[str, list[int]] = Field(default_factory=dict)
    """Engine mode: section name -> the earlier turns that did not fit verbatim and whose content
    that section carries (context/bands.py). Empty when everything fitted, and in classic mode."""


class FidelityRecord(Record):
    l1_head: int | None = None
    l1_tail: int | None = None
    l2_head: int | None = None


class BuilderSettings(Record):
    """``WorkingSetBuilder.settings()`` plus the model string the digest is computed with."""

    strategy: str | None = None
    total_window: int | None = None
    response_reserve: int | None = None
    placeholder_hint: str | None = None
    fidelity: FidelityRecord | None = None
    recall_share: float | None = None
    section_share: float | None = None
    head_share: float | None = None
    window_share: float | None = None
    summary_max_tokens: int | None = None
    band_fraction: float | None = None
    recall: bool | None = None
    recall_max_tokens: int | None = None
    embedder: str | None = None
    fusion: str | None = None
    summarizer: bool | None = None
    encoding: str | None = None
    layout: str | None = None
    drop_policy: str | None = None
    block_fraction: float | None = None
    block_recall_share: float | None = None
    block_recall_min: int | None = None
    block_excerpts: bool | None = None
    excerpt_match: str | None = None
    block_recall: str | None = None
    summary_grid: float | None = None
    model: str | None = None


class CalibrationRecord(Record):
    ratio: float | None = None
    samples: int | None = None
    window: int | None = None
    response_reserve: int | None = None


class ToolLoopStop(Record):
    stopped: bool = True
    reason: str | None = None
    detail: str | None = None


# -- memory ------------------------------------------------------------------------------------------


class MemoryHit(Record):
    id: str | None = None
    kind: str | None = None
    score: float | None = None
    content: str | None = None


class MemoryEntryBrief(Record):
    """``MemoryEntry.brief()``."""

    id: str | None = None
    kind: str | None = None
    scope: str | None = None
    scopes: list[str] | None = None
    content: str | None = None
    confidence: float | None = None


# -- metadata, one model per event type -----------------------------------------------------------


class RunStartMetadata(Record):
    arcana_version: str | None = None
    model: str | None = None
    provider: str | None = None
    config: dict[str, Any] | None = None  # JSON edge: a RuntimeConfig dump
    system_prompt: str | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: tool specs, as recorded
    notebook: str | None = None
    resumed_from: str | None = None
    withheld_tools: list[str] = Field(default_factory=list)


class TurnStartMetadata(Record):
    input_tokens: int | None = None


class UserMessageMetadata(Record):
    message: MessageRecord | None = None
    history_index: int | None = None


class ContextDecisionMetadata(Record):
    step: int = 0
    decision: RecordedDecision | None = None
    report: ContextReport | None = None
    budget: BudgetSnapshot | None = None
    request_digest: str | None = None
    history_len: int | None = None
    inputs: DecisionInputs | None = None
    builder: BuilderSettings | None = None
    tools: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: tool specs, as recorded
    calibration: CalibrationRecord | None = None
    tool_loop: ToolLoopStop | None = None
    chain: dict[str, Any] | None = None  # JSON edge: the chain encoding (decision_delta.py)
    """Encoding 2 (trace/decision_delta.py, docs/TRACE_FORMAT.md "Chained decisions"): the decision's
    rows and what it shares with the previous decision of its agent; readers resolve it and drop it."""
    shape: dict[str, Any] | None = None  # JSON edge: ShapedPrompt.record()
    """How the builder's messages were shaped for the model (providers/shaping.py): the rules,
    how they were chosen (``source``) and where the moved messages went (``moved``: the builder's
    prompt position — ``MessageDecision.position`` — -> [how, index in the prompt sent]).
    Absent in traces from before shaping: those rebuild unshaped."""


class PromptSnapshotMetadata(Record):
    """The exact request sent to the provider for one LLM call (opt-in, seed 003)."""

    turn: int | None = None
    step: int = 0
    model: str = ""
    messages: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: messages, as sent or encoded
    tools: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: tool specs, as recorded
    response_format: dict[str, Any] | None = None  # JSON edge: as sent
    budget_snapshot: BudgetSnapshot | None = None


class PromptSentMetadata(Record):
    """The prompt of one LLM call as the provider was given it, encoded against the previous
    ``prompt_sent`` of the agent (trace/prompt_sent.py; docs/TRACE_FORMAT.md "The prompt as sent")."""

    step: int = 0
    digest: str | None = None
    """The call's request digest (as ``context_decision.request_digest``)."""
    prev: str | None = None
    """The event id of the previous ``prompt_sent`` of the agent; ``None``: a keyframe."""
    keep: int = 0
    """How many leading messages are the previous prompt's."""
    messages: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: messages, as sent or encoded
    """The messages after the kept ones: a wire dict, a history reference ``{"h": ...}``, a previous-prompt
    reference ``{"p": ...}``, a line edit ``{"e": ...}`` or a joined message ``{"J": ...}`` (``{"j": ...}``
    in older traces): the grammar is trace/prompt_sent.py's docstring (docs/TRACE_FORMAT.md)."""
    tokens: list[int | None] | None = None
    """The counted tokens of each message in ``messages``."""
    model: str | None = None
    """Only on a call without a ``context_decision`` (the summariser's, ``step`` -1): the model its
    ``digest`` is computed with (a decision's ``builder.model`` otherwise)."""
    purpose: str | None = None
    """``summarize`` for the summariser's prompt (as its ``llm_call``); absent for a turn's calls."""


PromptSnapshot = PromptSnapshotMetadata
"""The name replays use (``PromptReplay.prompt_snapshot``)."""


class LlmCallMetadata(Record):
    step: int | None = None
    purpose: str | None = None
    """``summarize`` / ``learnings`` for calls outside the turn's tool loop (their ``step`` is -1)."""
    system: str | None = Field(default=None, alias="gen_ai.system")
    request_model: str | None = Field(default=None, alias="gen_ai.request.model")
    response_model: str | None = Field(default=None, alias="gen_ai.response.model")
    input_tokens: int | None = Field(default=None, alias="gen_ai.usage.input_tokens")
    output_tokens: int | None = Field(default=None, alias="gen_ai.usage.output_tokens")
    cached_input_tokens: int | None = Field(default=None, alias="gen_ai.usage.cached_input_tokens")
    finish_reasons: list[str | None] | None = Field(default=None, alias="gen_ai.response.finish_reasons")
    latency_ms: float | None = None
    attempts: int | None = None
    request_digest: str | None = None
    streamed: bool | None = None
    message: MessageRecord | None = None
    history_index: int | None = None
    cost_usd: float | None = None
    counted_input_tokens: int | None = None
    reported_input_tokens: int | None = None
    count_ratio: float | None = None
    calibration: float | None = None


def llm_call_metadata(**fields: Any) -> LlmCallMetadata:
    """The ``metadata`` of an ``llm_call`` event (:meth:`Record.build` of :class:`LlmCallMetadata`).

    ``fields`` are the model's attribute names (``system``, ``request_model``, ``input_tokens`` ...);
    the line written spells them as the trace does (the OpenTelemetry aliases)."""
    return LlmCallMetadata.build(**fields)


class ToolCallMetadata(Record):
    step: int | None = None
    tool_call_id: str | None = None
    name: str | None = None
    arguments: Any = None
    """Parsed JSON arguments, or the raw string when they were not valid JSON."""
    ok: bool | None = None
    result: str | None = None
    error: ErrorRecord | None = None
    latency_ms: float | None = None
    truncated: bool | None = None
    message: MessageRecord | None = None
    history_index: int | None = None
    intercepted: bool | None = None


class CognitivePrimitiveMetadata(Record):
    primitive: str | None = None
    tool_call_id: str | None = None
    args: Any = None
    result: Any = None
    """The structured tool result (pin, unpin, recall: see docs/TRACE_FORMAT.md)."""
    source: str | None = None
    """``user`` for a pin or unpin made from outside the model (widget, magic)."""

    def pin_change(
        self, *, turn: int | None = None, position: int | None = None, event_id: str | None = None
    ) -> PinChange | None:
        """What this event did to the agent's pins, or ``None`` (not a pin/unpin, or one that
        changed nothing: rejected, or the same content pinned again). The one reading of recorded
        pin events: the trace reader's ``active_pins`` and resume both fold these
        (:func:`~.pins.fold_pins`); ``turn``, ``position`` and ``event_id`` say where the event is."""
        # args and result are free-form (each primitive has its own): read as the dicts they are
        args = self.args if isinstance(self.args, dict) else {}
        result = self.result if isinstance(self.result, dict) else {}
        if self.primitive == "pin":
            if result.get("pinned") is not True or result.get("already_pinned") is True:
                return None
            pin_id = result.get("pin_id")
            if not isinstance(pin_id, str) or not pin_id:
                return None
            content = result.get("content", args.get("content"))
            label = result.get("label", args.get("label"))
            return PinChange(
                op="pin", pin_id=pin_id, content=content if isinstance(content, str) else None,
                label=label if isinstance(label, str) else None,
                until_turn=_int_or_none(result.get("until_turn", args.get("until_turn"))),
                tokens=_int_or_none(result.get("tokens")), turn=turn, position=position, event_id=event_id,
            )
        if self.primitive == "unpin":
            ok = result.get("unpinned", result.get("ok"))
            pin_id = result.get("pin_id", args.get("pin_id"))
            if ok is True and isinstance(pin_id, str) and pin_id:
                return PinChange(op="unpin", pin_id=pin_id, turn=turn, position=position, event_id=event_id)
        return None


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class StateChangeMetadata(Record):
    object_id: str | None = None
    kind: str | None = None
    from_tier: str | None = None
    to_tier: str | None = None
    cause: str | None = None
    turn: int | None = None


class ContextActionMetadata(Record):
    action: str | None = None
    object_id: str | None = None
    kind: str | None = None
    args: Any = None
    result: Any = None
    source: str | None = None
    turn: int | None = None
    objects: list[dict[str, Any]] | None = None  # JSON edge: the engine's object dumps
    digest: Any = None
    events: Any = None
    artifact: dict[str, Any] | None = None  # JSON edge: the engine's artifact dump


class MemoryReadMetadata(Record):
    query: str | None = None
    kinds: list[str] | None = None
    results: list[MemoryHit] = Field(default_factory=list)
    purpose: str | None = None
    mode: str | None = None
    tokens: int | None = None
    budget_tokens: int | None = None
    omitted: int | None = None
    """The digest: in-scope entries left out for the budget."""


class MemoryWriteMetadata(Record):
    op: str | None = None
    entry: MemoryEntryBrief | None = None
    created: bool | None = None
    session_id: str | None = None
    acted_on: bool | None = None
    success: bool | None = None
    validity: float | None = None
    usefulness: float | None = None
    layer: int | None = None
    promoted: bool | None = None


USER_ACTIONS = ("pin", "unpin", "context_add", "standing_add", "hydrate", "retract", "memory_add", "memory_forget")
"""What a person can do to a session from outside the model (``user_action.action``)."""

VIAS = ("magic", "inspector", "python")
"""Where a user action came from (``user_action.via``): a line magic in a cell, the inspector's
buttons (the ``arcana`` comm: no cell holds it), or Python code in a cell."""

REPLAYED_VIAS = ("inspector",)
"""User actions ``report --verify`` applies again from the recording: the ones no cell re-runs."""


class UserActionMetadata(Record):
    """One thing a person did to the session (not the model): who, what, on what, and how it went.

    The effect is also recorded the way the model's own calls are (``cognitive_primitive``,
    ``context_action``, ``memory_write``); this event says that a person did it and where from,
    so a re-execution (``report --verify``) can apply an action no cell holds at the same point."""

    action: str | None = None
    """``pin``, ``unpin``, ``context_add``, ``standing_add``, ``hydrate``, ``retract``, ``memory_add`` (with
    ``args.standing``: a standing instruction kept in memory), ``memory_forget``."""
    via: str | None = None
    """``magic``, ``inspector`` or ``python`` (see :data:`VIAS`)."""
    target: str | None = None
    """The pin, object or memory id acted on (for ``pin`` / ``memory_add``: the id made)."""
    args: dict[str, Any] | None = None  # JSON edge: the arguments as given
    ok: bool | None = None
    message: str | None = None
    """Why it failed (or a note), in one line."""
    replayed: bool | None = None
    """True when a re-execution applied it again from the recording (``report --verify``)."""


class ErrorMetadata(Record):
    type: str | None = None
    where: str | None = None
    recoverable: bool | None = None
    message: str | None = None
    step: int | None = None
    status: int | None = None
    """The HTTP status of a provider error, when there was one."""
    received_chars: int | None = None
    received: str | None = None
    """Older traces: the partial reply (now recorded once, in ``turn_end.reply``)."""
    request_digest: str | None = None
    counted_input_tokens: int | None = None
    reported_input_tokens: int | None = None


class TurnEndMetadata(Record):
    status: str | None = None
    reply: str | None = None
    usage: UsageRecord | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    steps: int | None = None
    message: MessageRecord | None = None
    """A cancelled turn: the assistant message that closes it in the history (the partial reply and
    :data:`~arcana_jupyter.messages.INTERRUPTED_NOTE`), so the next turn's prompt says the turn was
    interrupted instead of running its question into the next one."""
    history_index: int | None = None


class OtelExportRecord(Record):
    """``run_end.otel_export``: the run's spans, and how many the collector accepted."""

    endpoint: str | None = None
    spans: int | None = None
    exported: int | None = None
    failed: int | None = None
    dropped: int | None = None
    pending: int | None = None
    mapping_problems: int | None = None
    events_dropped: int | None = None


class RunEndMetadata(Record):
    turns: int | None = None
    usage: UsageRecord | None = None
    cost_usd: float | None = None
    agents: list[str] | None = None
    """Pool runs: the members' names."""
    otel_export: OtelExportRecord | None = None
    """With OpenTelemetry export on: what became of the run's spans (trace/otel/)."""


class NotebookRenamedMetadata(Record):
    """The notebook was renamed (or moved) while the run was open: its trace file moved with it."""

    notebook: str | None = None
    """The notebook's new path."""
    from_notebook: str | None = None
    trace_path: str | None = None
    """The trace file's new path (the file this event is written to)."""
    from_trace_path: str | None = None


METADATA_MODELS: dict[str, type[Record]] = {
    "run_start": RunStartMetadata,
    "turn_start": TurnStartMetadata,
    "user_message": UserMessageMetadata,
    "context_decision": ContextDecisionMetadata,
    "prompt_snapshot": PromptSnapshotMetadata,
    "prompt_sent": PromptSentMetadata,
    "llm_call": LlmCallMetadata,
    "tool_call": ToolCallMetadata,
    "cognitive_primitive": CognitivePrimitiveMetadata,
    "state_change": StateChangeMetadata,
    "context_action": ContextActionMetadata,
    "memory_read": MemoryReadMetadata,
    "memory_write": MemoryWriteMetadata,
    "user_action": UserActionMetadata,
    "error": ErrorMetadata,
    "turn_end": TurnEndMetadata,
    "run_end": RunEndMetadata,
    "notebook_renamed": NotebookRenamedMetadata,
}
"""The metadata model of each event type."""

EVENT_TYPE_OF: dict[type[Record], str] = {model: et for et, model in METADATA_MODELS.items()}
"""The event type each metadata model is the metadata of (what ``emit(metadata)`` writes)."""


def event_type_of(metadata: Record) -> str:
    """The event type ``metadata`` belongs to; ``TypeError`` for a record that is no event's metadata
    (a part such as :class:`MessageRecord`, or a plain :class:`Record`)."""
    event_type = EVENT_TYPE_OF.get(type(metadata))
    if event_type is None:
        raise TypeError(f"{type(metadata).__name__} is not the metadata of an event type; "
                        f"emit one of {', '.join(m.__name__ for m in METADATA_MODELS.values())}")
    return event_type


# -- the envelope and the typed events --------------------------------------------------------------


class Envelope(BaseModel):
    """The fixed fields of every trace line (docs/TRACE_FORMAT.md, "Envelope")."""

    model_config = ConfigDict(extra="allow")

    v: int = TRACE_FORMAT_VERSION
    event_id: str
    run_id: str = ""
    agent: str = "main"
    turn: int | None = None
    ts: str = ""
    """UTC ISO-8601 time with microseconds, e.g. ``2026-11-30T01:02:03.456789Z``."""
    event_type: str
    """One of :data:`EVENT_TYPES` (a typed event narrows it to its own)."""
    parent_id: str | None = None


class RunStart(Envelope):
    event_type: Literal["run_start"]
    metadata: RunStartMetadata = Field(default_factory=RunStartMetadata)


class TurnStart(Envelope):
    event_type: Literal["turn_start"]
    metadata: TurnStartMetadata = Field(default_factory=TurnStartMetadata)


class UserMessage(Envelope):
    event_type: Literal["user_message"]
    metadata: UserMessageMetadata = Field(default_factory=UserMessageMetadata)


class ContextDecisionEvent(Envelope):
    event_type: Literal["context_decision"]
    metadata: ContextDecisionMetadata = Field(default_factory=ContextDecisionMetadata)


class PromptSnapshotEvent(Envelope):
    event_type: Literal["prompt_snapshot"]
    metadata: PromptSnapshotMetadata = Field(default_factory=PromptSnapshotMetadata)


class PromptSentEvent(Envelope):
    event_type: Literal["prompt_sent"]
    metadata: PromptSentMetadata = Field(default_factory=PromptSentMetadata)


class LlmCall(Envelope):
    event_type: Literal["llm_call"]
    metadata: LlmCallMetadata = Field(default_factory=LlmCallMetadata)


class ToolCallEvent(Envelope):
    event_type: Literal["tool_call"]
    metadata: ToolCallMetadata = Field(default_factory=ToolCallMetadata)


class CognitivePrimitive(Envelope):
    event_type: Literal["cognitive_primitive"]
    metadata: CognitivePrimitiveMetadata = Field(default_factory=CognitivePrimitiveMetadata)


class StateChange(Envelope):
    event_type: Literal["state_change"]
    metadata: StateChangeMetadata = Field(default_factory=StateChangeMetadata)


class ContextAction(Envelope):
    event_type: Literal["context_action"]
    metadata: ContextActionMetadata = Field(default_factory=ContextActionMetadata)


class MemoryRead(Envelope):
    event_type: Literal["memory_read"]
    metadata: MemoryReadMetadata = Field(default_factory=MemoryReadMetadata)


class MemoryWrite(Envelope):
    event_type: Literal["memory_write"]
    metadata: MemoryWriteMetadata = Field(default_factory=MemoryWriteMetadata)


class UserAction(Envelope):
    event_type: Literal["user_action"]
    metadata: UserActionMetadata = Field(default_factory=UserActionMetadata)


class ErrorEvent(Envelope):
    event_type: Literal["error"]
    metadata: ErrorMetadata = Field(default_factory=ErrorMetadata)


class TurnEnd(Envelope):
    event_type: Literal["turn_end"]
    metadata: TurnEndMetadata = Field(default_factory=TurnEndMetadata)


class RunEnd(Envelope):
    event_type: Literal["run_end"]
    metadata: RunEndMetadata = Field(default_factory=RunEndMetadata)


class NotebookRenamed(Envelope):
    event_type: Literal["notebook_renamed"]
    metadata: NotebookRenamedMetadata = Field(default_factory=NotebookRenamedMetadata)


Event = Annotated[
    Union[  # noqa: UP007 - a discriminated union reads best spelled out
        RunStart, TurnStart, UserMessage, ContextDecisionEvent, PromptSnapshotEvent, PromptSentEvent, LlmCall,
        ToolCallEvent,
        CognitivePrimitive, StateChange, ContextAction, MemoryRead, MemoryWrite, UserAction, ErrorEvent, TurnEnd,
        RunEnd, NotebookRenamed,
    ],
    Field(discriminator="event_type"),
]
"""One trace line, typed by its ``event_type``."""

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)  # type: ignore[arg-type]
"""Parses one trace line (a dict, or JSON with ``validate_json``) into its typed event."""

EVENT_MODELS: dict[str, type[Envelope]] = {
    m.model_fields["event_type"].annotation.__args__[0]: m  # type: ignore[union-attr]
    for m in (RunStart, TurnStart, UserMessage, ContextDecisionEvent, PromptSnapshotEvent, PromptSentEvent, LlmCall,
              ToolCallEvent,
              CognitivePrimitive, StateChange, ContextAction, MemoryRead, MemoryWrite, UserAction, ErrorEvent, TurnEnd,
              RunEnd, NotebookRenamed)
}
"""The typed event model of each event type."""


def read_event(line: Mapping[str, Any]) -> Event | None:
    """One trace line (the envelope's fields and ``metadata``) as its typed event; ``None`` for an
    event type this version does not know (a newer writer's).

    Parsed with :data:`EVENT_ADAPTER` (strict). When a known metadata key has the wrong type, the
    metadata is read as :meth:`Record.read` reads it (that key falls back to its default: the
    reader reported it when it indexed the line), so this never raises for what a trace holds."""
    try:
        return EVENT_ADAPTER.validate_python(line, strict=True)
    except ValidationError:
        pass
    event_type = line.get("event_type")
    if not isinstance(event_type, str) or (model := EVENT_MODELS.get(event_type)) is None:
        return None
    metadata = METADATA_MODELS[event_type].read(line.get("metadata"))
    envelope = {k: line[k] for k in Envelope.model_fields if k in line and k != "event_type"}
    try:
        return model.model_validate(envelope | {"event_type": event_type, "metadata": metadata})  # type: ignore[return-value]
    except ValidationError:  # the envelope itself is off (a hand-made line): its fields as given
        return model.model_construct(**envelope, event_type=event_type, metadata=metadata)  # type: ignore[return-value]


class TraceEvent(Envelope):
    """One trace line as written and indexed, its ``metadata`` still the JSON object the line holds:
    what :meth:`TraceWriter.emit <arcana_jupyter.trace.TraceWriter.emit>` returns and subscribers
    get, what the trace reader hands out. Code that reads what the event says parses it once, with
    :meth:`typed`."""

    run_id: str
    ts: str
    """UTC ISO-8601 time with microseconds, e.g. ``2026-11-30T01:02:03.456789Z``."""
    metadata: dict[str, Any] = Field(default_factory=dict)  # JSON edge: the line as written; typed() parses it

    def typed(self, metadata: dict[str, Any] | None = None) -> Event | None:  # JSON edge: a stand-in metadata
        """This line as its typed event, parsed once (:func:`read_event`: :data:`EVENT_ADAPTER`,
        tolerant of a field of the wrong type); ``None`` for an event type this version does not
        know. ``metadata`` stands in for the recorded metadata (the span mapper leaves a decision's
        per-message rows out and tallies them itself)."""
        return read_event({
            **(self.model_extra or {}), "v": self.v, "event_id": self.event_id, "run_id": self.run_id,
            "agent": self.agent, "turn": self.turn, "ts": self.ts, "event_type": self.event_type,
            "parent_id": self.parent_id, "metadata": self.metadata if metadata is None else metadata,
        })


def metadata_keys(event_type: str) -> list[str]:
    """The metadata keys of an event type as the trace spells them (aliases: ``gen_ai.system`` ...)."""
    return [info.alias or name for name, info in METADATA_MODELS[event_type].model_fields.items()]


def keys_markdown() -> str:
    """The "Metadata keys" list of docs/TRACE_FORMAT.md, generated from the models."""
    return "\n".join(
        f"- `{et}`: " + ", ".join(f"`{k}`" for k in metadata_keys(et)) for et in EVENT_TYPES
    )
