"""What a trace viewer shows, resolved here: the one place the trace grammar is read for a front end.

:class:`TraceViews` answers the questions the trace viewer, the runs sidebar and the turn inspector
ask of one run file -- its overview (:meth:`~TraceViews.run`), one turn with its decisions, the texts
they are about, the prompt as sent and the pins (:meth:`~TraceViews.turn`), two turns compared
(:meth:`~TraceViews.diff`) -- as the typed models of :mod:`arcana_jupyter.schema.trace_view`. Chained
decisions, deltas, ``prompt_sent`` records, quotes and line edits are resolved by the trace reader
(:class:`~.reader.TraceReader`, trace/chain/, trace/prompt_sent.py); no front end decodes them.

:func:`answer` is the one handler of a ``trace`` request, shared by the Jupyter server extension
(``arcana_jupyter/server/``: no kernel needed), the ``arcana`` comm and the replay widget: a
:class:`~arcana_jupyter.exceptions.TraceError` (the CLI's errors: no such turn, a chain that cannot be
resolved, a damaged trace) becomes ``ok: false`` with its message, never an exception.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..exceptions import ArcanaError, TraceError
from ..schema.decisions import ContextDecision, MessageDecision
from ..schema.events import (
    CognitivePrimitive,
    ContextDecisionMetadata,
    ErrorEvent,
    ErrorMetadata,
    LlmCall,
    MessageRecord,
    RunStart,
    ToolCallEvent,
    TurnEnd,
    UserMessage,
)
from ..schema.frontend import TraceReply, TraceRequest
from ..schema.pins import Pin
from ..schema.trace_view import (
    DiffChange,
    DiffRowView,
    ErrorView,
    PinView,
    PrimitiveView,
    RunView,
    SentView,
    StepView,
    ToolCallView,
    TraceProblem,
    TurnDiffView,
    TurnView,
)
from .events import TraceEvent
from .index import FileIndex
from .reader import TraceReader
from .recorded_prompt import SentPrompt

MAX_ERRORS = 500
"""The run's errors an overview lists (``error_count`` says how many there are)."""

_STEP_EVENTS = frozenset({"context_decision", "prompt_snapshot", "prompt_sent", "llm_call"})
"""The events that make a step of a turn (one LLM call's build, prompt and call)."""

DECISIONS_KEPT = 8
"""How many resolved decisions a :class:`TraceViews` keeps (a turn and the diffs beside it read the same ones)."""
DECISION_ROWS_KEPT = 30_000
"""... and how many decision rows they may hold together (the newest decision is kept whatever its size)."""


class _RecordedSection(BaseModel):
    """A section as ``context_decision.inputs.sections`` records it (a ContextSection dump): the two
    fields a viewer shows."""

    model_config = ConfigDict(extra="ignore")

    name: str | None = None
    content: str | None = None


class TraceViews:
    """The viewer's questions about one run file (see the module docstring).

    ``path`` is the ``.jsonl`` file; ``shown`` is how the answers name it (the path relative to the
    server's root or the notebook). A reader may be passed (its file index is shared)."""

    def __init__(self, path: Path | str, *, shown: str | None = None, reader: TraceReader | None = None) -> None:
        self.path = Path(path)
        self.shown = shown if shown is not None else str(path)
        self.reader = reader if reader is not None else TraceReader(self.path)
        self.run_key = self.path.stem
        """The run as the reader names it (a single file: its stem)."""
        # The last decisions resolved, by position in the index they were read from: the turn shown and
        # the diffs beside it (and a viewer's next questions) read the same decisions.
        self._decided: OrderedDict[int, ContextDecisionMetadata] = OrderedDict()
        self._decided_in: FileIndex | None = None
        self._agent_of: tuple[FileIndex, int, str] | None = None

    def _index(self) -> FileIndex:
        return self.reader._index(self.run_key)

    @staticmethod
    def version_of(idx: FileIndex) -> str:
        """The file version an answer read from ``idx`` is of (:attr:`RunView.version`)."""
        return f"{idx.stat_key[0]}:{idx.stat_key[1]}"

    def default_agent(self, idx: FileIndex | None = None) -> str:
        """``main`` when it has turns (or no agent has), else the first agent that has some: the agent a
        request that names none is about (what :meth:`run`'s overview would say, without building it)."""
        idx = idx if idx is not None else self._index()
        kept = self._agent_of
        if kept is not None and kept[0] is idx and kept[1] == len(idx.entries):
            return kept[2]
        with_turns = {agent for agent, turn in idx.by_turn if turn >= 1}
        agent = "main" if "main" in with_turns or not with_turns else next(a for a in idx.agents if a in with_turns)
        self._agent_of = (idx, len(idx.entries), agent)
        return agent

    def last_turn(self, agent: str, idx: FileIndex | None = None) -> int | None:
        """The agent's last turn (None: it has none)."""
        idx = idx if idx is not None else self._index()
        return max((turn for a, turn in idx.by_turn if a == agent and turn >= 1), default=None)

    # ---- the overview --------------------------------------------------------------------------

    def run(self) -> RunView:
        """The file's overview (indexed once, and on from where it stopped when it grew)."""
        idx = self._index()
        turns: dict[str, set[int]] = {}
        for agent, turn in idx.by_turn:
            if turn >= 1:  # turn 0: what the user did before the first turn, shown with turn 1
                turns.setdefault(agent, set()).add(turn)
        starts = idx.by_type.get("run_start", [])
        first_start = self._events(idx, starts[:1])
        start = first_start[0].typed() if first_start else None
        error_positions = idx.by_type.get("error", [])
        problems = [TraceProblem(line=d.line, problem=d.problem, excerpt=d.excerpt) for d in idx.damage]
        if idx.torn_damage is not None:
            d = idx.torn_damage
            problems.append(TraceProblem(line=d.line, problem=d.problem, excerpt=d.excerpt, torn=True))
        problems.sort(key=lambda p: p.line or 0)
        return RunView(
            path=self.shown, version=self.version_of(idx), run_id=idx.run_id,
            model=idx.run_start.model if idx.run_start else None,
            arcana_version=start.metadata.arcana_version if isinstance(start, RunStart) else None,
            events=len(idx.entries), bytes=max(idx.size, idx.stat_key[0]),
            ended=idx.run_end, last_event_is_end=bool(idx.entries) and idx.entries[-1].event_type == "run_end",
            started=(idx.run_start.ts if idx.run_start else None) or idx.first_ts or None,
            resumed=max(0, len(starts) - 1), agents=list(idx.agents),
            turns={agent: sorted(ts) for agent, ts in turns.items()},
            turn_count=len({t for ts in turns.values() for t in ts}), problems=problems,
            errors=[_error_view(e) for e in self._events(idx, error_positions[:MAX_ERRORS])],
            error_count=len(error_positions),
        )

    def _events(self, idx: FileIndex, positions: list[int]) -> list[TraceEvent]:
        """The events at ``positions`` (no context_decision among them: those are read by :meth:`_step`)."""
        return self.reader._load(idx, positions) if positions else []

    # ---- one turn --------------------------------------------------------------------------------

    def _turn_positions(self, idx: FileIndex, agent: str, turn: int) -> tuple[dict[int, int], set[int], list[int]]:
        """The turn's decisions (by step: the last one recorded for it), every step with an event, and its
        other events' positions; a turn the run does not have is a :class:`TraceError`."""
        positions = idx.by_turn.get((agent, turn), [])
        if turn < 1 or not positions:
            raise TraceError(f"run {idx.run_id or self.run_key} has no turn {turn} for agent {agent} "
                             f"(see `arcana trace show {self.run_key}`)")
        entries = idx.entries
        decisions: dict[int, int] = {}
        steps: set[int] = set()
        others: list[int] = []
        for p in positions:
            e = entries[p]
            if e.event_type in _STEP_EVENTS:
                steps.add(e.step or 0)
            if e.event_type == "context_decision":
                decisions[e.step or 0] = p
            else:
                others.append(p)
        return decisions, steps, others

    def turn(self, agent: str, turn: int) -> TurnView:
        """Turn ``turn`` of ``agent``: its input, reply, usage, every step (decisions, the texts they are
        about, the prompt as sent, the pins of the build), errors, primitive and tool calls."""
        idx = self._index()
        decisions, steps, others = self._turn_positions(idx, agent, turn)
        view = TurnView(agent=agent, turn=turn)
        user_message: MessageRecord | None = None
        for event in self._events(idx, others):
            typed = event.typed()
            if isinstance(typed, UserMessage):
                if not view.has_input:
                    view.has_input = True
                    user_message = typed.metadata.message
                    view.input_index = typed.metadata.history_index
                    view.input = user_message.content if user_message is not None else None
            elif isinstance(typed, TurnEnd):
                md = typed.metadata
                view.ended, view.status, view.reply = True, md.status, md.reply
                view.input_tokens = md.usage.input_tokens if md.usage is not None else None
                view.output_tokens = md.usage.output_tokens if md.usage is not None else None
                view.cost_usd, view.latency_ms = md.cost_usd, md.latency_ms
            elif isinstance(typed, LlmCall):
                if typed.metadata.latency_ms is not None:  # the model's share of the turn's latency
                    view.model_latency_ms = round((view.model_latency_ms or 0.0) + typed.metadata.latency_ms, 3)
            elif isinstance(typed, ErrorEvent):
                view.errors.append(_error_view(event, typed.metadata))
            elif isinstance(typed, CognitivePrimitive):
                view.primitives.append(PrimitiveView(primitive=typed.metadata.primitive, args=typed.metadata.args,
                                                     result=typed.metadata.result))
            elif isinstance(typed, ToolCallEvent):
                view.tool_calls.append(ToolCallView(name=typed.metadata.name, ok=bool(typed.metadata.ok),
                                                    arguments=typed.metadata.arguments, result=typed.metadata.result))
        view.steps = [self._step(idx, agent, turn, step, decisions.get(step), user_message) for step in sorted(steps)]
        view.first_step = next((s.step for s in view.steps if s.decision is not None or s.problem is not None),
                               view.steps[0].step if view.steps else 0)
        return view

    def _step(self, idx: FileIndex, agent: str, turn: int, step: int, position: int | None,
              user_message: MessageRecord | None) -> StepView:
        view = StepView(step=step)
        md: ContextDecisionMetadata | None = None
        if position is not None:
            try:
                md = self._decision_metadata(idx, position)
            except TraceError as exc:
                view.problem = str(exc)
        if md is not None and md.decision is not None:
            decision = md.decision
            view.decision = ContextDecision.model_construct(
                **{k: getattr(decision, k) for k in ContextDecision.model_fields})
            view.budget, view.report, view.request_digest = md.budget, md.report, md.request_digest
            view.originals = self._originals(idx, agent, decision.decisions or [], md, user_message)
        elif md is not None and view.problem is None:
            view.problem = f"context_decision of turn {turn} step {step} records no decision"
        try:
            sent = self.reader.prompt_sent(self.run_key, turn, step, agent) if position is not None else None
        except TraceError as exc:
            view.sent_problem = str(exc)
        else:
            view.sent = _sent_view(sent) if sent is not None else None
        view.pins = self._pins(agent, turn, step, md)
        return view

    def _decision_metadata(self, idx: FileIndex, position: int) -> ContextDecisionMetadata:
        """The decision at ``position``, rows resolved and checked against the decision model (the last
        :data:`DECISIONS_KEPT` are kept: a position's decision does not change while the file only grows)."""
        if self._decided_in is not idx:
            self._decided.clear()
            self._decided_in = idx
        md = self._decided.get(position)
        if md is not None:
            self._decided.move_to_end(position)
            return md
        md = self._read_decision(idx, position)
        self._decided[position] = md
        rows = {p: len(m.decision.decisions or []) if m.decision is not None else 0 for p, m in self._decided.items()}
        while len(self._decided) > 1 and (len(self._decided) > DECISIONS_KEPT
                                          or sum(rows.values()) > DECISION_ROWS_KEPT):
            oldest, _ = self._decided.popitem(last=False)
            rows.pop(oldest)
        return md

    def _read_decision(self, idx: FileIndex, position: int) -> ContextDecisionMetadata:
        [event] = self.reader._load(idx, [position])  # chained decisions and deltas resolved (TraceError)
        try:
            md = ContextDecisionMetadata.model_validate(event.metadata)
            if md.decision is not None and md.decision.decisions is None:
                raise TraceError(f"{idx.path}:{idx.entries[position].line}: context_decision {event.event_id} "
                                 "holds no decision rows")
            return md
        except ValidationError as exc:
            raise TraceError(f"{idx.path}:{idx.entries[position].line}: context_decision {event.event_id} does "
                             f"not match the decision model ({exc.error_count()} problem(s), first: "
                             f"{exc.errors()[0]['msg']} at {'.'.join(map(str, exc.errors()[0]['loc']))})") from None

    def _originals(self, idx: FileIndex, agent: str, rows: list[MessageDecision], md: ContextDecisionMetadata,
                   user_message: MessageRecord | None) -> list[MessageRecord | None]:
        """The message each row is about, as recorded (see :attr:`StepView.originals`)."""
        records = idx.records.get(agent, {})
        system = idx.system_prompts.get(agent)
        pins = {p.pin_id: p for p in _recorded_pins(md.inputs.pins if md.inputs else [])}
        sections = {s.name: s for s in _recorded_sections(md.inputs.sections if md.inputs else [])}
        out: list[MessageRecord | None] = []
        for row in rows:
            source = row.source or "history"
            found: MessageRecord | None = None
            if source == "history":
                record = records.get(row.index)
                if record is not None:
                    found = MessageRecord.read(record)
                elif row.index == 0 and system is not None:
                    found = MessageRecord(role="system", content=system)
            elif source == "input":
                found = user_message
            elif source == "pin" and row.section in pins:
                found = MessageRecord(role=row.role, content=pins[row.section].content)
            elif source == "section" and row.section in sections:
                found = MessageRecord(role=row.role, content=sections[row.section].content)
            out.append(found)
        return out

    def _pins(self, agent: str, turn: int, step: int, md: ContextDecisionMetadata | None) -> list[PinView]:
        """The pins the build had: its decision's recorded inputs, else the pin changes up to it."""
        if md is not None and md.inputs is not None and "pins" in md.inputs.model_fields_set:
            pins = _recorded_pins(md.inputs.pins)
        else:
            pins = self.reader.active_pins(self.run_key, turn, agent, step=step)
        return [PinView(pin_id=p.pin_id, label=p.label, content=p.content, until_turn=p.until_turn,
                        created_turn=p.created_turn) for p in pins]

    # ---- two turns -----------------------------------------------------------------------------

    def diff(self, agent: str, turn_a: int, turn_b: int) -> TurnDiffView:
        """Which messages changed between the first builds of two turns (outcome, fidelity, tokens sent),
        and those in only one of them."""
        out = TurnDiffView(agent=agent, turn_a=turn_a, turn_b=turn_b)
        idx = self._index()
        sides: list[tuple[list[MessageDecision], int | None]] = []
        unreadable: list[int] = []
        for t in dict.fromkeys((turn_a, turn_b)):
            decisions, _steps, others = self._turn_positions(idx, agent, t)
            rows: list[MessageDecision] = []
            if decisions:  # the first build: the lowest step with a decision
                try:
                    md = self._decision_metadata(idx, decisions[min(decisions)])
                except TraceError:
                    unreadable.append(t)
                else:
                    rows = list(md.decision.decisions or []) if md.decision is not None else []
            users = [p for p in others if idx.entries[p].event_type == "user_message"][:1]
            typed = [e.typed() for e in self._events(idx, users)]
            sides.append((rows, typed[0].metadata.history_index if typed and isinstance(typed[0], UserMessage)
                          else None))
        if unreadable:
            out.problem = (f"Cannot compare turn {turn_a} with turn {turn_b}: the decisions of turn "
                           f"{' and '.join(map(str, unreadable))} could not be read (see that turn).")
            return out
        (rows_a, input_a), (rows_b, input_b) = sides[0], sides[-1]
        before = {_row_key(d, turn_a, input_a): d for d in rows_a}
        seen: set[str] = set()
        for d in rows_b:
            key = _row_key(d, turn_b, input_b)
            seen.add(key)
            a = before.get(key)
            changes: list[DiffChange] = []
            if a is None:
                changes.append("added")
            else:
                if a.outcome != d.outcome:
                    changes.append("outcome")
                if (a.fidelity or None) != (d.fidelity or None):
                    changes.append("fidelity")
                if a.token_count_after != d.token_count_after:
                    changes.append("tokens")
            if not changes:
                out.unchanged += 1
                continue
            out.rows.append(DiffRowView(key=key, role=d.role, source=d.source or "history", label=_row_label(d),
                                        a=a, b=d, changes=changes))
        for key, a in before.items():
            if key not in seen:
                out.rows.append(DiffRowView(key=key, role=a.role, source=a.source or "history", label=_row_label(a),
                                            a=a, b=None, changes=["removed"]))
        out.tokens_a = sum(d.token_count_after or 0 for d in rows_a)
        out.tokens_b = sum(d.token_count_after or 0 for d in rows_b)
        out.counts_a, out.counts_b = _counts(rows_a), _counts(rows_b)
        return out



def _row_key(d: MessageDecision, turn: int, input_index: int | None) -> str:
    """A message's identity across turns: a history message by its index (the input is one, once
    recorded), a pin or section by its name."""
    source = d.source or "history"
    if source == "history":
        return f"h:{d.index}"
    if source == "input":
        return f"h:{input_index}" if input_index is not None else f"input:{turn}"
    return f"{source}:{d.section if d.section is not None else d.index}"


def _row_label(d: MessageDecision) -> str:
    source = d.source or "history"
    if source == "history":
        return f"#{d.index}"
    if source == "input":
        return "input"
    return f"{source}:{d.section if d.section is not None else d.index}"


def _counts(rows: Iterable[MessageDecision]) -> dict[str, int]:
    out: dict[str, int] = {}
    for d in rows:
        out[d.outcome] = out.get(d.outcome, 0) + 1
    return out


def _recorded_pins(items: Iterable[Any]) -> list[Pin]:
    """The pins a decision recorded (Pin dumps); an item that is not one is left out."""
    out = []
    for item in items:
        try:
            out.append(Pin.model_validate(item))
        except ValidationError:
            continue
    return out


def _recorded_sections(items: Iterable[Any]) -> list[_RecordedSection]:
    out = []
    for item in items:
        try:
            section = _RecordedSection.model_validate(item)
        except ValidationError:
            continue
        if section.name is not None:
            out.append(section)
    return out


def _error_view(event: TraceEvent, md: ErrorMetadata | None = None) -> ErrorView:
    if md is None:
        typed = event.typed()
        md = typed.metadata if isinstance(typed, ErrorEvent) else ErrorMetadata()
    return ErrorView(agent=event.agent, turn=event.turn, type=md.type, where=md.where, message=md.message or "",
                     recoverable=bool(md.recoverable))


def _sent_view(sent: SentPrompt) -> SentView:
    return SentView(source=sent.source, messages=sent.messages, tokens=sent.tokens, verified=sent.verified,
                    digest=sent.digest, recorded_digest=sent.recorded_digest, status=sent.status())


# ---- the one handler of a `trace` request ---------------------------------------------------------

def answer(views: TraceViews, request: TraceRequest) -> TraceReply:
    """The answer to ``request`` about ``views``' file: ``ok: false`` with the reader's message for a
    trace error (the CLI's errors), never an exception for what a trace holds."""
    try:
        reply = _answer(views, request)
    except (TraceError, ArcanaError, OSError) as exc:
        reply = TraceReply(ok=False, message=str(exc), path=views.shown)
    reply.request_id = request.request_id
    return reply


def _answer(views: TraceViews, request: TraceRequest) -> TraceReply:
    if request.what == "run":
        run = views.run()
        out = TraceReply(ok=True, path=views.shown, what=request.what, version=run.version, run=run)
        if request.turn is not None:  # the turn to draw first, with the overview (-1: the agent's last)
            agent = request.agent or views.default_agent()
            turn = views.last_turn(agent) if request.turn == -1 else request.turn
            try:
                out.turn_view = views.turn(agent, turn) if turn is not None else None
            except TraceError:
                out.turn_view = None  # the overview still answers; asked again on its own, the turn says what is wrong
        return out
    # the other questions need the file's version and agents, not its overview
    idx = views._index()
    out = TraceReply(ok=True, path=views.shown, what=request.what, version=views.version_of(idx))
    agent = request.agent or views.default_agent(idx)
    if request.what == "turn":
        if request.turn is None:
            raise TraceError("a turn request names the turn (turn: N)")
        out.turn_view = views.turn(agent, request.turn)
        return out
    if request.what == "turns":  # read ahead: what cannot be read is left out (asked on its own, it says why)
        out.turn_views, out.diffs = [], []
        for turn in dict.fromkeys(request.turns or []):
            try:
                out.turn_views.append(views.turn(agent, turn))
            except TraceError:
                continue
        for pair in request.pairs or []:
            try:
                out.diffs.append(views.diff(agent, pair.a, pair.b))
            except TraceError:
                continue
        return out
    if request.a is None or request.b is None:
        raise TraceError("a diff request names two turns (a: N, b: M)")
    out.diff = views.diff(agent, request.a, request.b)
    return out


__all__ = ["MAX_ERRORS", "TraceViews", "answer"]
