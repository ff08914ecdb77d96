"""Replay frames: each turn of a recorded run, read from its trace, ready for the renderer.

A frame holds what the replay view shows for one turn (see :mod:`arcana_jupyter.render.replay_view`):
the turn bundle's data (rebuilt from the trace's events), the prompt — the recorded snapshot, else
rebuilt from the transcript — with its digest checked against the recorded ``request_digest``,
the pins active at that turn, and the per-message changes against the previous turn
(:class:`~arcana_jupyter.trace.frames.FramePass`, one pass patched in place); the digest checks and
the counterfactual rebuild of a frame. Nothing here needs IPython: showing the frames is
:mod:`.replay_view`'s.
"""

from __future__ import annotations

import contextlib
import gc
import operator
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from .. import render
from ..context.decisions import ContextDecision
from ..context.rebuild import TurnVerifier, rebuild_turn
from ..exceptions import ArcanaError, TraceError, is_extension_panic
from ..runtime.bundle import bundle_from_events
from ..schema.events import (
    METADATA_MODELS,
    CognitivePrimitiveMetadata,
    ContextDecisionMetadata,
    ErrorMetadata,
    LlmCallMetadata,
    PromptSnapshot,
    PromptSnapshotMetadata,
    TurnEndMetadata,
    UserMessageMetadata,
)
from ..trace.decision_json import parts_of
from ..trace.events import TraceEvent
from ..trace.frames import Changes, FramePass, outcome_counts
from ..trace.limits import PassBudget
from ..trace.reader import DecisionRecord, PinTimeline, TraceReader
from ..trace.recorded_prompt import PromptReplay
from .whatif import changed_rows, row_state, sent_tokens, tokens_line


def _agent(reader: TraceReader, run_id: str, agent: str | None) -> str:
    if agent is not None:
        return agent
    agents = reader.agents(run_id)
    return "main" if "main" in agents or not agents else agents[0]


Rows = ContextDecision | Sequence[Mapping[str, Any]]


def turn_diff(previous: Rows, current: Rows) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Messages whose outcome or fidelity changed since the previous turn (and pins / sections that
    left the prompt), and the messages that are new this turn.

    Entries are matched by :func:`~arcana_jupyter.trace.recorded_prompt.decision_key`, the rule
    :func:`~arcana_jupyter.trace.recorded_prompt.diff_decisions` uses too. What counts as a change
    differs on purpose: this compares a message's state from one turn to the next (outcome and
    fidelity; its token count alone is no change for the view), ``diff_decisions`` compares two
    builds of the same turn (recorded and counterfactual), where a token difference is a finding.
    The shapes differ too: the view lists new messages apart, with the current turn's index and source.

    Either side may be a :class:`ContextDecision` or its rows (dumps, as the trace holds them); rows
    that are the same object at the same position on both sides (the frame builder shares unchanged
    rows from turn to turn) are skipped without a look."""
    before_rows = _rows_of(previous)
    rows = _rows_of(current)
    shared = min(len(before_rows), len(rows))
    same = bytes(map(operator.is_, before_rows[:shared], rows[:shared])) + b"\x00" * (len(rows) - shared)
    # the positions whose rows differ, found in C: a run of shared rows costs nothing here
    differ = [i for m in _DIFFER.finditer(same) for i in range(m.start(), m.end())]
    return _diff_at(differ, before_rows, rows, len(before_rows), len(rows))


def frame_diff(changes: Changes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`turn_diff` of two decisions read by the frames' pass (:class:`~..trace.frames.FramePass`),
    from their rows where they may differ: the same answer, in what the two decisions changed."""
    return _diff_at([i for i in changes.positions if i < changes.n_after], changes.before, changes.after,
                    changes.n_before, changes.n_after, _KEY_OF_FULL_ROW)


_KEY_OF_FULL_ROW = operator.itemgetter("index", "source", "section")
"""A row's source, index and section (what a row matched in place must keep), of a row that has all three
keys (the pass's rows: read in C)."""


def _key_of(row: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return row.get("index"), row.get("source"), row.get("section")


def _diff_at(differ: Sequence[int], before_rows: Sequence[Mapping[str, Any]] | Mapping[int, Mapping[str, Any]],
             rows: Sequence[Mapping[str, Any]] | Mapping[int, Mapping[str, Any]], n_before: int, n_after: int,
             key_of: Callable[[Mapping[str, Any]], Any] = _key_of) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`turn_diff` given the positions (of ``rows``) where a row may differ from the one before at
    the same position: any superset of them gives the same answer (a row equal to the one before at
    its place is matched in place, and unchanged). ``before_rows`` and ``rows`` need hold only those
    positions and, of ``before_rows``, the positions from ``n_after`` on."""
    shared = min(n_before, n_after)
    # a row at the same position with the same key (source, index, section) as before is its own previous
    # state (the history keeps its positions): compared in place, only the others go through the keys
    in_place = {i for i in differ if i < shared and key_of(before_rows[i]) == key_of(rows[i])}
    tail = list(before_rows[shared:]) if isinstance(before_rows, list) else \
        [before_rows[i] for i in range(shared, n_before)]
    old_rows = [before_rows[i] for i in differ if i < shared and i not in in_place] + tail
    before = dict(zip(_keys(old_rows), old_rows, strict=True))
    changed: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    pop = before.pop
    now = [rows[i] for i in differ]
    moved = [rows[i] for i in differ if i not in in_place]
    keys = iter(_keys(moved))
    for i, d in zip(differ, now, strict=True):
        p = before_rows[i] if i in in_place else pop(next(keys), None)
        if p is None:
            new.append({"index": d.get("index"), "role": d.get("role"), "source": _source(d),
                        "outcome": d.get("outcome")})
        elif (p.get("outcome"), p.get("fidelity")) != (d.get("outcome"), d.get("fidelity")):
            changed.append({"index": d.get("index"), "role": d.get("role"), "source": _source(d),
                            "change": "changed",
                            "before": row_state(p.get("outcome"), p.get("fidelity"), p.get("token_count_after")),
                            "after": row_state(d.get("outcome"), d.get("fidelity"), d.get("token_count_after"))})
    for p in before.values():
        changed.append({"index": p.get("index"), "role": p.get("role"), "source": _source(p), "change": "gone",
                        "before": row_state(p.get("outcome"), p.get("fidelity"), p.get("token_count_after")),
                        "after": None})
    return changed, new


_DIFFER = re.compile(b"\x00+")


def _rows_of(decision: Rows) -> Sequence[Mapping[str, Any]]:
    if isinstance(decision, ContextDecision):
        return [d.model_dump(mode="json") for d in decision.decisions]
    return decision


def _source(d: Mapping[str, Any]) -> str:
    return str(d.get("source") or "history")


_MESSAGE_SOURCES = frozenset({"history", "input"})
_GET_SOURCE, _GET_INDEX, _GET_SECTION = (operator.methodcaller("get", k) for k in ("source", "index", "section"))


def _keys(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    """:func:`_key` of each row (columns read in C: every row of a turn can differ — its relevance)."""
    if rows and all(type(r) is dict for r in rows):
        sources = [str(s or "history") for s in map(_GET_SOURCE, rows)]
        return [("message", i) if s in _MESSAGE_SOURCES else (s, c or i)
                for s, i, c in zip(sources, map(_GET_INDEX, rows), map(_GET_SECTION, rows), strict=True)]
    return [_key(d) for d in rows]


def _key(d: Mapping[str, Any]) -> tuple[str, Any]:
    """:func:`decision_key` of a decision row (a dump)."""
    source = _source(d)
    if source in ("history", "input"):
        return ("message", d.get("index"))
    return (source, d.get("section") or d.get("index"))


Progress = Callable[[int, int], None]
"""``progress(done, total)``: called as frames are built (``done`` of ``total`` turns)."""


RowsWanted = bool | Callable[[dict[str, Any]], bool]
"""Which frames keep their decision rows: all (True), none (False), or those a predicate on the frame
(built so far: turn, status, primitives, errors, pins, diff...) accepts."""

Verify = bool | Collection[int]
"""Which turns' digests the frames check: all (True), none (False), or the turns listed."""


def build_frames(trace_dir: str | Path, run_id: str, *, agent: str | None = None,
                 reader: TraceReader | None = None, progress: Progress | None = None,
                 verify: Verify = True, rows: RowsWanted = True) -> list[dict[str, Any]]:
    """One frame per recorded turn of ``run_id`` (agent ``agent``, default ``main``), in one pass.

    The decisions are read once, in file order (:class:`~..trace.frames.FramePass`): the seven columns
    a frame reads of each decision's rows are patched by the decision's ops, and its outcome counts
    and the changes against the previous turn are read from the same patches; the pins are folded as
    the walk goes (:meth:`TraceReader.pin_timeline`); each turn's digest is checked by building only
    what it covers (:class:`~arcana_jupyter.context.rebuild.TurnVerifier`). A frame costs what its turn
    changed, not the length of the history before it. ``progress(done, total)`` is called every few
    turns and at the end. ``verify=False`` leaves the digests unchecked (``digest_verified`` None, the
    prompt as recorded or not at all): what the frames cost apart from the builder's own builds; a
    collection of turns checks only those (the others say "not checked").

    ``rows``: which frames keep the turn's decision rows in ``step.decision.decisions`` (default all,
    as before). A frame without them (``rows=False``, or the predicate said no) has
    ``step.decision.decisions`` None and ``rows_omitted`` True; it still holds everything else — the
    outcome counts (``outcome_counts``), the changes against the previous turn (``diff``,
    ``new_messages``), the pins, the budget — and :func:`frame_rows` reads its rows on demand. A
    long run's frames then cost what each turn changed, not turns times history.

    A decision that cannot be read (damaged, or past what its trace accounts for: trace/limits.py) does
    not stop the others: its turn's frame has no decision and ``decision_error`` says why (the message of
    the :class:`TraceError` naming the record; :func:`decision_errors` makes the one line to show).
    Running out of memory all the same (a trace that holds more than the limits foresee) is a
    :class:`TraceError` too, never ``MemoryError``."""
    try:
        with _collector_paused():
            return _build_frames(trace_dir, run_id, agent=agent, reader=reader, progress=progress, verify=verify,
                                 rows=rows)
    except MemoryError:
        raise TraceError(f"the replay frames of {run_id} ran out of memory; the trace holds more than its limits "
                         "allow for (docs/SECURITY.md, limits of a trace)") from None
    except BaseException as exc:
        if not is_extension_panic(exc):
            raise
        raise TraceError(f"the replay frames of {run_id} failed in a compiled extension ({type(exc).__name__}: "
                         f"{str(exc)[:200]}); out of memory is the usual cause (docs/SECURITY.md, limits of a "
                         "trace)") from None


def decision_errors(frames: Sequence[Mapping[str, Any]]) -> str | None:
    """One line on the frames whose decision could not be read (``decision_error``), None when there are
    none: how many, which turns, and why the first was refused."""
    bad = [f for f in frames if f.get("decision_error")]
    if not bad:
        return None
    turns = [str(f.get("turn")) for f in bad]
    listed = ", ".join(turns[:8]) + (f" and {len(turns) - 8:,} more" if len(turns) > 8 else "")
    return (f"{len(bad):,} of {len(frames):,} turns' decisions cannot be read (turn(s) {listed}; their frames "
            f"show no decision); turn {bad[0].get('turn')}: {bad[0]['decision_error']}")


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while frames are built: they parse and make millions of small
    containers, none of them in a cycle, and the collector's full scans of the growing heap cost a third
    of the frames' time at 1,000 turns (0.8 of 2.4 s of CPU, measured). Turned back on (if it was) at
    the end, where it runs as usual."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _build_frames(trace_dir: str | Path, run_id: str, *, agent: str | None, reader: TraceReader | None,
                  progress: Progress | None, verify: Verify, rows: RowsWanted) -> list[dict[str, Any]]:
    reader = reader or TraceReader(trace_dir)
    name = _agent(reader, run_id, agent)
    info = reader.run_info(run_id)
    turns = [t for t in reader.list_turns(run_id, name) if t >= 1]
    if progress is not None:
        progress(0, len(turns))
    # actions before the first message (a pin set up front) have turn 0: they show in turn 1
    checked = None if isinstance(verify, bool) else frozenset(verify)
    # the whole metadata of the decisions whose turns are checked (the rebuild reads it); the others keep
    # what the frame shows
    whole = (lambda turn: True) if verify is True else (lambda turn: False) if verify is False else \
        (lambda turn: turn in checked)  # type: ignore[operator]
    budget = PassBudget(reader._index(run_id).size)  # what the pass may work on in all (trace/limits.py)
    by_turn, summaries = _read_decisions(reader, run_id, name, full_rows=rows is True, whole=whole, budget=budget)
    sizes = {eid: sum(s.counts.values()) for eid, s in summaries.items() if s.counts is not None}
    pins = reader.pin_timeline(run_id, name)
    verifier = TurnVerifier(reader, run_id, name) if verify is not False else None
    frames: list[dict[str, Any]] = []
    previous: str | None = None  # the decision of the previous frame that has one
    every = max(1, len(turns) // 100)
    for done, turn in enumerate(turns, start=1):
        check = verifier if checked is None or turn in checked else None
        records = by_turn.get(turn, [])
        refused = [r for r in records if r.problem is not None]
        if refused:  # the turn's frame without them (as a turn that recorded none), saying why
            records = [r for r in records if r.problem is None]
        frame, record = _frame(reader, run_id, name, turn, info.model or "", records, pins, check,
                               lambda record, replay: budget.fits(max(sizes.get(record.event_id, 0),
                                                                      replay.history_len or 0)))
        if refused:
            frame["decision_error"] = refused[-1].problem
        if record is not None:
            summary = summaries.get(record.event_id)
            if summary is None or summary.previous != previous:  # not what the pass compared: read the rows
                summary = _summary_of_rows(reader, run_id, previous, record)
            if summary.counts is None:
                raise TraceError(f"{reader.path_for(run_id)}:{record.line}: context_decision of turn {turn} step "
                                 f"{record.step} does not match the decision model (no decision recorded)")
            if summary.diff is not None:
                frame["diff"], frame["new_messages"] = summary.diff
            previous = record.event_id
            frame["outcome_counts"] = summary.counts
            step = frame["step"]
            if rows is True:
                held = summary.rows if summary.rows is not None else reader.decision_rows(run_id, record.event_id)
                step["decision"] = {**step["decision"], "decisions": held}
            elif rows is False or not rows(frame):
                frame["rows_omitted"] = True
            else:
                step["decision"] = {**step["decision"], "decisions": reader.decision_rows(run_id, record.event_id)}
        frames.append(frame)
        if progress is not None and (done % every == 0 or done == len(turns)):
            progress(done, len(turns))
    return frames


class _Summary(NamedTuple):
    """What a frame shows of its decision's rows, read by the decisions' pass."""

    previous: str | None
    """The decision the changes are against (the previous frame's): None for the first frame."""
    counts: dict[str, int] | None
    """None: the decision has no rows."""
    diff: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None
    rows: list[dict[str, Any]] | None = None
    """Every row, when the frames keep them (None: read them on demand)."""


def _frame_record(records: Sequence[DecisionRecord]) -> DecisionRecord:
    """The decision a turn's frame shows: its last step's (the last one recorded for that step)."""
    return {r.step: r for r in records}[max(r.step for r in records)]


def _read_decisions(reader: TraceReader, run_id: str, name: str, *, full_rows: bool,
                    whole: Callable[[int | None], bool] | None = None, budget: PassBudget | None = None
                    ) -> tuple[dict[int, list[DecisionRecord]], dict[str, _Summary]]:
    """Every decision of the agent, by turn, and the summary of each decision a frame shows (by event
    id): its outcome counts and changes against the previous frame's, read as each turn ends — from
    the frames' pass (:class:`FramePass`: what each decision changed), or with ``full_rows`` from every
    row (:meth:`TraceReader.decision_records`, the frames keep them). Decisions whose turns do not come
    in order in the file (a merged run) get no summary: their frames read their rows."""
    decisions = None if full_rows else FramePass(reader, run_id, name, parts=_DECISION_PARTS, whole=whole,
                                                 budget=budget)
    # a decision that cannot be read comes as a record saying why: its turn's frame says it, the others replay
    records = decisions.records(refused_as_records=True) if decisions is not None else \
        reader.decision_records(run_id, name, last_step_rows=True, refused_as_records=True, budget=budget)
    by_turn: dict[int, list[DecisionRecord]] = {}
    summaries: dict[str, _Summary] = {}
    state: dict[str, Any] = {"previous": None, "rows": None, "turn": None, "ordered": True}

    def finish(turn: int) -> None:
        record = _frame_record(by_turn[turn])
        previous = state["previous"]
        if record.problem is not None:
            summaries[record.event_id] = _Summary(previous, None, None)
            return
        if decisions is None:
            summary = _summary_of_rows(reader, run_id, previous, record, record.rows, state["rows"])
        elif decisions.has_rows(record.event_id) is False:
            summary = _Summary(previous, None, None)
        else:
            counts = decisions.counts(record.event_id)
            changes = decisions.changes(previous, record.event_id) if previous is not None else None
            if counts is None or (previous is not None and changes is None):
                summary = _summary_of_rows(reader, run_id, previous, record)  # no longer held: read the rows
            else:
                summary = _Summary(previous, counts, frame_diff(changes) if changes is not None else None)
        summaries[record.event_id] = summary
        if summary.counts is not None:
            state["previous"], state["rows"] = record.event_id, summary.rows

    for record in records:
        turn = record.turn
        if turn is None:
            continue
        if turn != state["turn"]:
            if state["turn"] is not None and state["turn"] >= 1 and state["ordered"]:
                finish(state["turn"])
            if turn in by_turn or (state["turn"] is not None and turn < state["turn"]):
                state["ordered"] = False
                summaries.clear()
            state["turn"] = turn
        by_turn.setdefault(turn, []).append(record)
    if state["turn"] is not None and state["turn"] >= 1 and state["ordered"]:
        finish(state["turn"])
    return by_turn, summaries


def _summary_of_rows(reader: TraceReader, run_id: str, previous: str | None, record: DecisionRecord,
                     rows: list[dict[str, Any]] | None = None,
                     before: list[dict[str, Any]] | None = None) -> _Summary:
    """The summary of a frame's decision from its rows and the previous frame's (read whole when not
    given)."""
    if rows is None:
        rows = reader.decision_rows(run_id, record.event_id)
        if not isinstance(rows, list):
            return _Summary(previous, None, None)
    diff = None
    if previous is not None:
        if before is None:
            got = reader.decision_rows(run_id, previous)
            before = got if isinstance(got, list) else []
        diff = turn_diff(before, rows)
    return _Summary(previous, outcome_counts(rows), diff, rows)


def frame_rows(frame: Mapping[str, Any], reader: TraceReader) -> list[dict[str, Any]]:
    """The decision rows of ``frame``'s step, read from the trace on demand (a frame built with
    ``rows=False`` holds none: the widget or the report asks for the turns it opens)."""
    step = frame.get("step") or {}
    decision = step.get("decision") or {}
    held = decision.get("decisions")
    if isinstance(held, list):
        return held
    event_id = frame.get("decision_event_id")
    if not event_id:
        return []
    rows = reader.decision_rows(str(frame["run_id"]), str(event_id))
    return list(rows) if isinstance(rows, list) else []


def with_rows(frame: dict[str, Any], reader: TraceReader) -> dict[str, Any]:
    """``frame`` with its decision rows (a copy when they had to be read; the frame itself otherwise)."""
    if not frame.get("rows_omitted"):
        return frame
    step = dict(frame.get("step") or {})
    step["decision"] = {**(step.get("decision") or {}), "decisions": frame_rows(frame, reader)}
    return {**frame, "step": step, "rows_omitted": False}


_FRAME_EVENTS = frozenset(event_type for event_type, model in METADATA_MODELS.items() if issubclass(
    model, (UserMessageMetadata, PromptSnapshotMetadata, LlmCallMetadata, CognitivePrimitiveMetadata, ErrorMetadata,
            TurnEndMetadata)))
"""The events of a turn a frame reads besides its decisions: through the bundle (runtime/bundle.py), its
input (user_message), reply, status, usage and cost (turn_end), its last step's prompt and counting
(prompt_snapshot, llm_call), its primitives and errors; the digest check reads the snapshot and the call.
The bundle's other parts (tool calls, memories, state changes) are not in a frame: their events are
not read."""

_DECISION_PARTS = ("step", "decision", "report", "budget", "request_digest", "builder", "calibration")
"""What the bundle reads of a decision for the step a frame shows (its inputs give the bundle's memories,
which a frame does not hold)."""


def _frame(reader: TraceReader, run_id: str, name: str, turn: int, model: str, records: list[DecisionRecord],
           pins: PinTimeline, verifier: TurnVerifier | None,
           affordable: Callable[[DecisionRecord, PromptReplay], bool] = lambda record, replay: True
           ) -> tuple[dict[str, Any], DecisionRecord | None]:
    """The turn's frame (without what its decision's rows say) and the decision it shows (None: none).
    ``affordable(record, replay)``: whether the pass may still check this turn's digest (its rebuild
    reads the decision's rows and history: trace/limits.py ``PassBudget``)."""
    events = reader.positioned_events(run_id, turn=turn, agent=name, types=_FRAME_EVENTS)
    # each decision stands in the turn's events where it was written, its rows left out of the
    # bundle's validation (they are passed through as recorded, see bundle_from_events)
    light = {r.position: _light_event(run_id, name, r) for r in records}
    merged = sorted([*events, *light.items()], key=lambda pe: pe[0])
    bundle = bundle_from_events([e for _, e in merged], run_id=run_id, agent=name, turn=turn, model=model,
                                trace_path=None)
    by_step = {r.step: r for r in records}
    steps = bundle.get("steps") or []
    step = dict(steps[-1]) if steps else {}
    frame: dict[str, Any] = {
        "run_id": run_id, "agent": name, "turn": turn, "input": bundle.get("input"), "reply": bundle.get("reply"),
        "status": bundle.get("status"), "usage": bundle.get("usage"), "cost_usd": bundle.get("cost_usd"),
        "step": step, "pins": [],
        "prompt_source": None, "digest_verified": None, "digest_note": "", "diff": [], "new_messages": [],
        "primitives": bundle.get("primitives") or [], "errors": bundle.get("errors") or [],
    }
    record = by_step.get(int(step.get("step") or 0)) if step else None
    if record is None:
        return frame, None
    step["decision"] = record.decision
    frame["pins"] = [p.model_dump(mode="json") for p in pins.at(turn, record.position)]
    frame["decision_event_id"] = record.event_id
    if verifier is None:
        frame["digest_note"] = "not checked here (arcana report --verify checks every turn)"
        if step.get("messages"):
            frame["prompt_source"] = "snapshot"
        return frame, record
    replay = _replay_of(reader, run_id, name, turn, record, records, [pe for pe in merged if pe[0] not in light])
    if not affordable(record, replay):
        frame["digest_note"] = ("not checked here: the digest checks of this run would rebuild more rows and messages "
                                "than a trace of its size may ask for (docs/SECURITY.md, limits of a trace); arcana "
                                "report --verify checks every turn")
        if step.get("messages"):
            frame["prompt_source"] = "snapshot"
        return frame, record
    try:
        check = verifier.verify(replay)
    except ArcanaError as exc:
        frame["digest_note"] = f"cannot rebuild: {exc}"
    else:
        if isinstance(check, tuple):
            verified, digest, messages = check
            notes = ""
        else:
            verified, digest, messages, notes = check.verified, check.rebuilt_digest, check.messages, \
                "; ".join(check.notes)
        frame["digest_verified"] = verified
        frame["digest_note"] = notes or f"rebuilt {digest}"
        if step.get("messages"):
            frame["prompt_source"] = "snapshot"
        elif messages:
            step["messages"] = messages
            frame["prompt_source"] = "rebuilt"
    return frame, record


def _light_event(run_id: str, name: str, record: DecisionRecord) -> TraceEvent:
    meta = parts_of(record.without_rows(), _DECISION_PARTS)
    return TraceEvent.model_construct(event_id=record.event_id, run_id=run_id, agent=name, turn=record.turn, ts="",
                                      event_type="context_decision", parent_id=None, metadata=meta)


def _replay_of(reader: TraceReader, run_id: str, name: str, turn: int, record: DecisionRecord,
               records: list[DecisionRecord], events: list[tuple[int, TraceEvent]]) -> PromptReplay:
    """What :meth:`TraceReader.replay_prompt` returns for the record's (turn, step), without its rows:
    enough to rebuild the prompt and check its digest."""
    try:
        md = ContextDecisionMetadata.model_validate(record.without_rows())
    except ValidationError as exc:
        raise TraceError(f"{reader.path_for(run_id)}:{record.line}: context_decision of turn {turn} step "
                         f"{record.step} does not match the decision model ({exc.error_count()} problem(s))") from None
    assert md.decision is not None
    recorded = ContextDecision.model_construct(**{k: getattr(md.decision, k) for k in ContextDecision.model_fields})

    def belonging(event_type: str) -> list[TraceEvent]:
        found = [e for _, e in events if e.event_type == event_type]
        children = [e for e in found if e.parent_id == record.event_id]
        return children or [e for e in found if _step_of(e) == record.step]

    snapshots, calls = belonging("prompt_snapshot")[-1:], belonging("llm_call")[:1]
    snapshot = PromptSnapshot.read(snapshots[0].metadata) if snapshots else None
    budget = md.budget if md.budget is not None or snapshot is None else snapshot.budget_snapshot
    return PromptReplay.model_construct(
        run_id=run_id, agent=name, turn=turn, step=record.step, steps=sorted(r.step for r in records),
        context_decision=recorded, context_report=md.report, budget_snapshot=budget, prompt_snapshot=snapshot,
        request_digest=md.request_digest, history_len=md.history_len,
        inputs=md.inputs.model_dump(mode="json", by_alias=True, exclude_unset=True) if md.inputs else {},
        builder=md.builder.model_dump(mode="json", by_alias=True, exclude_unset=True) if md.builder else {},
        tools=md.tools, shape=md.shape, active_pins=[], llm_call=calls[0].metadata if calls else None,
        decision_event_id=record.event_id,
    )


def _step_of(event: TraceEvent) -> int:
    """The step of a prompt_snapshot or llm_call (0 when it records none), parsed as its model."""
    typed = event.typed()
    step = getattr(typed.metadata, "step", None) if typed is not None else None
    return step if isinstance(step, int) else 0


VERIFY_ALL_UPTO = 200
"""``%arcana_replay`` checks every turn's digest (a builder run per turn) up to this many turns; on a
longer run only the turn it opens at and the last (``arcana report --verify`` checks them all)."""


def replay_checks(trace_dir: str | Path, run_id: str, agent: str | None, turn: int | None) -> Verify:
    """The turns whose digests ``%arcana_replay`` checks (see :data:`VERIFY_ALL_UPTO`)."""
    try:
        reader = TraceReader(trace_dir)
        turns = [t for t in reader.list_turns(run_id, _agent(reader, run_id, agent)) if t >= 1]
    except ArcanaError:
        return True  # build_frames says what is wrong
    if len(turns) <= VERIFY_ALL_UPTO:
        return True
    return {turns[-1]} | ({turn} if turn is not None else set())


def counterfactual(trace_dir: str | Path, frame: dict[str, Any], strategy: str | None = None,
                   total_window: int | None = None, response_reserve: int | None = None, *,
                   mode: str | None = None, relevance: str | None = None) -> str:
    """HTML: the recorded prompt of ``frame``'s turn beside the same turn rebuilt with other settings
    (``None``: as recorded) — what ``%arcana_replay --turn N --window W`` shows under the replay."""
    reader = TraceReader(trace_dir)
    frame = with_rows(frame, reader)  # a frame built without its rows: read them for the table
    result = rebuild_turn(reader, frame["run_id"], int(frame["turn"]), agent=frame.get("agent"),
                          step=int((frame.get("step") or {}).get("step") or 0), strategy=strategy,
                          total_window=total_window, response_reserve=response_reserve, mode=mode,
                          relevance=relevance)
    strategy = str(result.settings["strategy"])
    total_window = int(result.settings["total_window"])
    recorded = dict(frame.get("step") or {})
    alternative = {
        "step": result.step, "decision": result.decision.model_dump(mode="json"),
        "budget": result.budget.model_dump(mode="json"), "messages": result.messages, "request_digest": None,
    }
    diff = changed_rows(result)
    label = f"{strategy}, window {total_window:,}, reserve {int(result.settings['response_reserve']):,}"
    if result.mode != result.recorded_mode:
        label += f", {result.mode} mode"
    if result.relevance != result.recorded_relevance:
        label += f", {result.relevance} relevance"
    if not result.counterfactual:
        label += " (the recorded settings)"
    notes = "".join(f'<div class="arcana-muted">{render.esc(n)}</div>' for n in result.notes)
    sent = result.recorded_budget.used if result.recorded_budget is not None else None
    tokens = tokens_line(sent, sent_tokens(reader, result), result)
    return (
        render.style_block()
        + render.counterfactual_html(recorded, alternative, label=label)
        + f'<div class="arcana"><h4 class="arcana-h">Changed by the counterfactual ({render.esc(tokens)})</h4>'
        + f"{render.diff_html(diff, 'the counterfactual')}{notes}</div>"
    )
