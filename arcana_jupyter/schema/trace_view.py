"""What a trace viewer shows of a run, resolved in Python: the one answer every front end renders.

The trace viewer, the runs sidebar and the turn inspector (JupyterLab, Notebook 7, the anywidget) do not
read trace files: they ask for these models and draw them. The answers come from
:class:`~arcana_jupyter.trace.views.TraceViews` (the one reader of the trace grammar), sent by the
Jupyter server extension's ``/arcana/trace`` endpoint (``arcana_jupyter/server/``, no kernel needed),
by the kernel over the ``arcana`` comm or the widget's messages (a ``trace`` request), and embedded
nowhere else: the static HTML and the report are rendered in Python from the same reader.

``labextension/src/schema.gen.ts`` is generated from these models (``scripts/gen_ts_types.py``). Every
string here can be user or model text: a front end renders it as text, never as HTML.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from .decisions import BudgetSnapshot, ContextDecision, ContextReport, MessageDecision
from .events import MessageRecord

TraceWhat = Literal["run", "turn", "diff", "turns"]
"""What a ``trace`` request asks: the run's overview, one turn, the difference of two turns, or several turns
and differences at once (what a viewer reads ahead of the scrubber)."""

MAX_BATCH = 32
"""The most turns, and the most pairs of turns, one ``turns`` request asks for."""


class TraceProblem(BaseModel):
    """A line that could not be read (``kind: line``; a torn last line, a trace still being written, is a
    warning), or an event that was read but whose content cannot be used (``kind: event``)."""

    line: int | None = None
    problem: str
    torn: bool = False
    excerpt: str = ""
    """The start of the line as written (at most 160 characters)."""
    kind: Literal["line", "event"] = "line"
    event_id: str | None = None


class ErrorView(BaseModel):
    """One ``error`` event."""

    agent: str = "main"
    turn: int | None = None
    type: str | None = None
    where: str | None = None
    message: str = ""
    recoverable: bool = False


class RunView(BaseModel):
    """A run file's overview: what the viewer's header, scrubber, problems and errors show, and the
    runs sidebar's line."""

    path: str
    """The file as the request named it."""
    version: str
    """Changes when the file does (its size and modification time): answers of one version agree."""
    run_id: str | None = None
    model: str | None = None
    arcana_version: str | None = None
    events: int = 0
    bytes: int = 0
    ended: bool = False
    """A ``run_end`` was recorded."""
    last_event_is_end: bool = False
    """The last event is ``run_end``: the session was closed (the sidebar's "ended")."""
    started: str | None = None
    """The first ``run_start``'s time (else the first event's), UTC ISO-8601."""
    resumed: int = 0
    """How many times the run was resumed (its later ``run_start`` events)."""
    agents: list[str] = Field(default_factory=list)
    """Every agent with an event, in order of appearance."""
    turns: dict[str, list[int]] = Field(default_factory=dict)
    """Per agent, its turns (1 and up) in ascending order; agents without a turn are left out."""
    turn_count: int = 0
    """Distinct turns over all agents."""
    problems: list[TraceProblem] = Field(default_factory=list)
    errors: list[ErrorView] = Field(default_factory=list)
    """The run's first :data:`~arcana_jupyter.trace.views.MAX_ERRORS` errors."""
    error_count: int = 0


class PinView(BaseModel):
    """A pin as the viewer shows it at a build."""

    pin_id: str
    label: str | None = None
    content: str | None = None
    until_turn: int | None = None
    created_turn: int | None = None


class SentView(BaseModel):
    """One call's prompt as the provider was given it, checked against the recorded request digest."""

    source: str
    """``prompt_sent`` or ``snapshot``."""
    messages: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: wire messages as sent
    tokens: list[int | None] = Field(default_factory=list)
    verified: bool = False
    digest: str | None = None
    recorded_digest: str | None = None
    status: str
    """One line: where the prompt comes from and whether it verified (``SentPrompt.status()``)."""


class StepView(BaseModel):
    """One LLM call (step) of a turn: its decisions, the texts they are about, its prompt and pins."""

    step: int
    decision: ContextDecision | None = None
    problem: str | None = None
    """Why the decision recorded for this step cannot be read (a damaged or hostile chain)."""
    budget: BudgetSnapshot | None = None
    report: ContextReport | None = None
    request_digest: str | None = None
    originals: list[MessageRecord | None] = Field(default_factory=list)
    """The message each decision row is about, as recorded (the transcript, the input, a pin's or a
    section's content), row for row; None where the trace holds none."""
    sent: SentView | None = None
    """None: no ``prompt_sent`` and no snapshot for this call (see ``sent_problem``)."""
    sent_problem: str | None = None
    """Why the prompt as sent cannot be read, when it cannot."""
    pins: list[PinView] = Field(default_factory=list)


class PrimitiveView(BaseModel):
    primitive: str | None = None
    args: Any = None
    result: Any = None


class ToolCallView(BaseModel):
    name: str | None = None
    ok: bool = False
    arguments: Any = None
    result: Any = None


class TurnView(BaseModel):
    """One turn of one agent: what the viewer shows under the scrubber and the inspector's detail."""

    agent: str
    turn: int
    ended: bool = False
    """A ``turn_end`` was recorded."""
    status: str | None = None
    has_input: bool = False
    input: str | None = None
    """The user's text (None: not recorded, or no user message: see ``has_input``)."""
    input_index: int | None = None
    """The user message's place in the transcript (how the input row is matched across turns)."""
    reply: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    model_latency_ms: float | None = None
    """The model's share of ``latency_ms``: the turn's LLM calls summed (the rest is the runtime's)."""
    steps: list[StepView] = Field(default_factory=list)
    """Every step with an event of this turn, ascending (a summariser call has a negative step)."""
    first_step: int = 0
    """The step shown first: the first with a decision."""
    errors: list[ErrorView] = Field(default_factory=list)
    primitives: list[PrimitiveView] = Field(default_factory=list)
    tool_calls: list[ToolCallView] = Field(default_factory=list)


DiffChange = Literal["added", "removed", "outcome", "fidelity", "tokens"]


class DiffRowView(BaseModel):
    """A message that changed between two turns' first builds (or is in only one of them)."""

    key: str
    role: str
    source: str
    label: str
    a: MessageDecision | None = None
    """The row at turn A (None: the message is new at turn B)."""
    b: MessageDecision | None = None
    changes: list[DiffChange]


class TurnDiffView(BaseModel):
    """Which messages changed between the first builds of two turns; rows in turn B's order, then the
    removed ones."""

    agent: str
    turn_a: int
    turn_b: int
    rows: list[DiffRowView] = Field(default_factory=list)
    unchanged: int = 0
    tokens_a: int = 0
    tokens_b: int = 0
    counts_a: dict[str, int] = Field(default_factory=dict)
    counts_b: dict[str, int] = Field(default_factory=dict)
    problem: str | None = None
    """Why the two turns cannot be compared (a decision that cannot be read, a turn not in the run)."""


class TurnPair(BaseModel):
    """Two turns to compare (a ``turns`` request's ``pairs``): turn ``a`` before turn ``b``."""

    a: int
    b: int


__all__ = [
    "MAX_BATCH",
    "DiffChange",
    "DiffRowView",
    "ErrorView",
    "PinView",
    "PrimitiveView",
    "RunView",
    "SentView",
    "StepView",
    "ToolCallView",
    "TraceProblem",
    "TraceWhat",
    "TurnDiffView",
    "TurnPair",
    "TurnView",
]
