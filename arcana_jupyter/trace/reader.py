"""Reading traces: the questions asked of a trace folder -- runs, turns, events, decision records,
prompt replays and prompts as sent, the transcript and active pins.

``TraceReader(trace_dir)`` reads every ``<run_id>.jsonl`` in ``trace_dir`` (or one ``.jsonl``
file passed directly). Each file is indexed once (trace/index.py: every line parsed and checked,
and per event its byte offset and length plus the few envelope fields needed to find it -- type,
agent, turn, step, history index --, the pin/unpin calls, and the message records of the
transcript, so :meth:`TraceReader.history` reads nothing; the prompt questions -- replay_prompt,
prompt_sent, prompts_sent -- are answered in trace/prompt_queries.py). Later questions read only the byte
ranges they need, and a file that grew since it was indexed (cached by ``(size, mtime)``; its
first and last indexed bytes checked) is read from where the index stopped — reading turn N of a
long run never rescans the file. :attr:`TraceReader.stats`
counts the bytes read and lines parsed, so this is observable.

Damage is reported, never silently swallowed: a torn last line (a writer that crashed mid-line,
or is mid-line right now) becomes a warning and every event before it is kept; any other line
that is not a valid event raises :class:`~arcana_jupyter.exceptions.CorruptTraceError` in strict
mode, and by default is skipped and listed in :attr:`TraceReader.warnings` as ``file:line:
problem``.
"""

from __future__ import annotations

import bisect
import operator
import os
import stat
from collections.abc import Container, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from ..exceptions import TraceError
from ..messages import Message, as_message
from ..schema.pins import Pin, fold_pins
from . import prompt_queries
from .decision_delta import ChainResolver, DecisionResolver, is_chained, resolve_decision
from .decision_json import Decision, Metadata, Row, decision_of, rows_in, rows_of, with_rows
from .events import TraceEvent
from .index import HISTORY_EVENTS, SHARED_INDEXES, Entry, FileIndex, FileIndexer, ReaderStats, problems_of
from .limits import FileLimits, PassBudget, TooLarge
from .recorded_prompt import PromptReplay, SentPrompt


class DecisionRecord(NamedTuple):
    """One ``context_decision`` as :meth:`TraceReader.decision_records` yields it."""

    turn: int | None
    step: int
    event_id: str
    position: int
    """The entry number in its file (pin changes recorded before it have a lower ``position``)."""
    line: int
    metadata: dict[str, Any]  # JSON edge: the decision's metadata as written (rows resolved)
    partial: bool = False
    """``decision.decisions`` holds only the columns asked for (``decision_records(only=...)``): a chained
    decision read on the frames' fast path. :meth:`TraceReader.decision_of` reads its full rows."""
    problem: str | None = None
    """Why the decision cannot be read (its metadata is then empty): a record of a pass asked to go on past
    a decision it refuses (``decision_records(refused_as_records=True)``, the replay frames'), the message
    of the :class:`TraceError` it would raise."""

    @property
    def decision(self) -> Decision | None:
        """The recorded ``decision`` (a ContextDecision dump, its rows resolved or None)."""
        return decision_of(self.metadata)

    @property
    def rows(self) -> list[Row] | None:
        """The decision's rows (shared with the records before it where unchanged: read-only), or None."""
        return rows_of(self.metadata)

    def without_rows(self) -> Metadata:
        """The metadata with the decision's rows left out (an empty list): what is validated for a replay."""
        return with_rows(self.metadata, []) if self.decision is not None else dict(self.metadata)


class RunInfo(BaseModel):
    """One run found in a trace folder."""

    run_id: str
    path: str
    started: str | None = None
    ended: str | None = None
    model: str | None = None
    turns: int = 0
    """Number of distinct user turns recorded (over all agents)."""
    agents: list[str] = Field(default_factory=list)
    status: str = "open"
    """``complete`` (a ``run_end`` was recorded), ``open`` (still running or stopped without
    ``run_end``), ``empty`` (no valid event)."""
    events: int = 0
    errors: int = 0
    """``error`` events plus turns that ended with ``status="error"``."""
    warnings: int = 0


__all__ = [
    "HISTORY_EVENTS",
    "SHARED_INDEXES",
    "TRACE_DIR_SUFFIX",
    "DecisionRecord",
    "PinTimeline",
    "ReaderStats",
    "RunInfo",
    "TraceReader",
    "env_trace_dir",
    "notebook_trace_dir",
    "trace_dir_for_notebook",
]


def _within(turn: int | None, upto: int | None) -> bool:
    return upto is None or turn is None or turn <= upto



def _is_file(path: Path) -> bool:
    """``path.is_file()`` that says False for names the OS refuses (too long, NUL bytes...)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


class TraceReader:
    """Reads the runs of a trace folder (see the module docstring).

    ``trace_dir`` is a folder of ``<run_id>.jsonl`` files (a notebook's ``X.arcana`` folder, the
    runtime's ``traces/``) or a single ``.jsonl`` file. ``strict=True`` turns a corrupt line into
    an exception instead of a warning. A reader may be shared between threads.

    File indexes live in a process-wide cache (``shared=True``, the default), so short-lived
    readers — one per ``recall`` call, say — reuse the work of earlier ones; ``shared=False``
    gives the reader a private cache.
    """

    def __init__(self, trace_dir: Path | str, *, strict: bool = False, shared: bool = True,
                 follow_symlinks: bool = False) -> None:
        self.trace_dir = Path(trace_dir)
        self._files_index = FileIndexer(strict=strict, shared=shared, stats=ReaderStats())
        self.follow_symlinks = follow_symlinks
        """Read a ``*.jsonl`` in the folder that is a symbolic link to a file outside it (default: refused,
        listed in :attr:`warnings`; a crafted folder cannot make the reader open other files)."""
        self._refused: dict[str, str] = {}
        self._lock = self._files_index.lock
        self._counter: Any = None
        self._listing: tuple[tuple[int, int], dict[str, Path]] | None = None

    @property
    def strict(self) -> bool:
        """A corrupt line raises instead of being listed in :attr:`warnings` (and a history hole raises)."""
        return self._files_index.strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self._files_index.strict = value

    @property
    def stats(self) -> ReaderStats:
        """What the reader did (bytes read, lines parsed, events loaded, index builds)."""
        return self._files_index.stats

    @stats.setter
    def stats(self, value: ReaderStats) -> None:
        self._files_index.stats = value

    # -- runs -------------------------------------------------------------------------------------

    def _files(self) -> dict[str, Path]:
        """``run_id -> path`` of the folder's traces (listed again only when the folder changed)."""
        try:
            st = self.trace_dir.stat()
        except OSError:
            return {}
        key = (st.st_mtime_ns, st.st_ino)
        if self._listing is not None and self._listing[0] == key:
            return self._listing[1]
        if stat.S_ISREG(st.st_mode):
            files = {self.trace_dir.stem: self.trace_dir}
        elif stat.S_ISDIR(st.st_mode):
            files = {}
            folder = self.trace_dir.resolve()
            for p in sorted(self.trace_dir.glob("*.jsonl")):
                if not p.is_file():
                    continue
                if p.is_symlink() and not self.follow_symlinks and not p.resolve().is_relative_to(folder):
                    self._refused[p.stem] = (f"{p}: a symbolic link to {p.resolve()}, outside the trace folder "
                                             "(not read; pass follow_symlinks=True to read it)")
                    continue
                files[p.stem] = p
        else:
            files = {}
        self._listing = (key, files)
        return files

    def run_ids(self) -> list[str]:
        """The run ids in this folder, oldest first (run ids sort by start time)."""
        return sorted(self._files())

    def path_for(self, run_id: str) -> Path:
        """The file of ``run_id`` (an id, a unique prefix of one, ``latest``, or a ``.jsonl`` path)."""
        files = self._files()
        if run_id in files:
            return files[run_id]
        if run_id in self._refused:
            raise TraceError(f"run {run_id!r} refused: {self._refused[run_id]}")
        candidate = Path(run_id)
        if candidate.suffix == ".jsonl" and _is_file(candidate):
            return candidate
        if run_id == "latest" and files:
            return files[max(files)]
        matches = [r for r in files if r.startswith(run_id)] if run_id else []
        if len(matches) == 1:
            return files[matches[0]]
        where = str(self.trace_dir)
        if not files:
            raise TraceError(
                f"unknown run {run_id!r}: no trace files (*.jsonl) in {where}; "
                f"pass --dir DIR (or set ARCANA_TRACE_DIR) to the folder holding the traces"
            )
        if len(matches) > 1:
            raise TraceError(
                f"run {run_id!r} is ambiguous in {where}: matches {', '.join(sorted(matches))}; give more of the id"
            )
        shown = sorted(files)
        more = f" (and {len(shown) - 20} more)" if len(shown) > 20 else ""
        raise TraceError(
            f"unknown run {run_id!r} in {where}; runs found: {', '.join(shown[-20:])}{more} (see `arcana trace list`)"
        )

    def list_runs(self) -> list[RunInfo]:
        """Every run in the folder, oldest first."""
        out = []
        for run_id, path in sorted(self._files().items()):
            idx = self._index_path(path)
            out.append(self._run_info(run_id, idx))
        return out

    def run_info(self, run_id: str) -> RunInfo:
        path = self.path_for(run_id)
        return self._run_info(self._run_id_of(path), self._index_path(path))

    def _run_info(self, run_id: str, idx: FileIndex) -> RunInfo:
        turns = {t for (_, t) in idx.by_turn if t >= 1}  # turn 0: what the user did before the first turn
        status = "complete" if idx.run_end else ("open" if idx.entries else "empty")
        return RunInfo(
            run_id=run_id,
            path=str(idx.path),
            started=(idx.run_start.ts if idx.run_start else None) or idx.first_ts,
            ended=idx.last_ts if idx.run_end else None,
            model=idx.run_start.model if idx.run_start else None,
            turns=len(turns),
            agents=sorted(idx.agents),
            status=status,
            events=len(idx.entries),
            errors=idx.errors,
            warnings=len(idx.corrupt) + len(idx.malformed) + (1 if idx.torn else 0),
        )

    def _run_id_of(self, path: Path) -> str:
        return path.stem

    # -- warnings ---------------------------------------------------------------------------------

    @property
    def warnings(self) -> list[str]:
        """Problems found so far in every indexed file: corrupt lines, a torn last line, history gaps."""
        return [*self._refused.values(), *self._files_index.problems()]

    def warnings_for(self, run_id: str) -> list[str]:
        idx = self._index(run_id)
        return problems_of(idx)

    # -- indexing ---------------------------------------------------------------------------------

    def _index(self, run_id: str) -> FileIndex:
        return self._files_index.index(self.path_for(run_id))

    def _index_path(self, path: Path) -> FileIndex:
        return self._files_index.index(path)

    def _raw_lines(self, idx: FileIndex, positions: Sequence[int], *, span: int = 1 << 20
                   ) -> Iterator[tuple[int, bytes]]:
        """:meth:`FileIndexer.raw_lines <.index.FileIndexer.raw_lines>` (the frame builder's reads)."""
        return self._files_index.raw_lines(idx, positions, span=span)

    def _parse_line(self, idx: FileIndex, position: int, raw: bytes) -> dict[str, Any]:  # JSON edge: a line as written
        return self._files_index.parse_line(idx, position, raw)

    def _read_raw(self, idx: FileIndex, positions: Sequence[int]
                  ) -> list[dict[str, Any]]:  # JSON edge: the lines as written
        return self._files_index.read_raw(idx, positions)

    def _load(self, idx: FileIndex, positions: Sequence[int]) -> list[TraceEvent]:
        events = []
        for obj in self._read_raw(idx, positions):
            obj.setdefault("agent", "main")
            obj.setdefault("metadata", {})
            obj.setdefault("run_id", idx.run_id or idx.path.stem)
            obj.setdefault("ts", "")
            if obj.get("event_type") == "context_decision":
                if is_chained(obj["metadata"]):
                    obj["metadata"] = self._resolve_chained(idx, obj)
                else:
                    self._resolve_delta(idx, obj)
            events.append(TraceEvent.model_validate(obj))
        return events

    def _resolve_chained(self, idx: FileIndex, obj: dict[str, Any]) -> dict[str, Any]:  # JSON edge: line, metadata
        """The full metadata of a chained decision (encoding 2, trace/decision_delta.py): rows of its
        own (the resolver's cache is shared by later reads)."""
        with self._lock:
            if idx.chain is None:
                idx.chain = ChainResolver(lambda event_id: self._metadata_of(idx, event_id))
            idx.chain.limits = FileLimits.of(idx.size, idx.seen)  # the file may have grown since
            try:
                meta = idx.chain.resolve(str(obj.get("event_id")), obj["metadata"])
            except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
                raise TraceError(f"{idx.path}: event {obj.get('event_id')}: the chained decision cannot be "
                                 f"resolved ({type(exc).__name__}: {exc})") from None
        return with_rows(meta, [dict(r) for r in rows_of(meta) or []])

    def _metadata_of(self, idx: FileIndex, event_id: str) -> dict[str, Any] | None:  # JSON edge: as written
        """The recorded metadata of the context_decision ``event_id`` (as written)."""
        p = idx.decision_at.get(event_id)
        if p is None:
            return None
        raw = self._read_raw(idx, [p])
        found = raw[0].get("metadata") if raw else None
        return found if isinstance(found, dict) else None

    def _resolve_delta(self, idx: FileIndex, obj: dict[str, Any]) -> None:  # JSON edge: a line as written
        """Replace a decision delta (trace/decision_delta.py) by the full decision list, in place."""
        # works on the raw JSON lines (this one and its base), resolving the delta in place before anyone reads it
        decision = decision_of(obj["metadata"])
        if decision is None or not decision.get("decisions_delta"):  # JSON edge: encoding 1's mark
            return

        try:
            limits = FileLimits.of(idx.size, idx.seen).for_decision(obj.get("event_id"), obj["metadata"])
            full = resolve_decision(decision, lambda event_id: self._decision_of(idx, event_id), limits)
            obj["metadata"] = {**obj["metadata"], "decision": full}  # JSON edge: the resolved decision in its place
        except (ValueError, KeyError, TypeError, AttributeError, IndexError, StopIteration) as exc:
            raise TraceError(f"{idx.path}: event {obj.get('event_id')}: the decision delta cannot be resolved "
                             f"({type(exc).__name__}: {exc})") from None

    def _decision_of(self, idx: FileIndex, event_id: str) -> dict[str, Any] | None:  # JSON edge: as written
        """The recorded ``decision`` of the context_decision ``event_id`` (as written: maybe a delta)."""
        p = idx.decision_at.get(event_id)
        if p is None:
            return None
        meta = self._metadata_of(idx, event_id)
        return decision_of(meta) if meta is not None else None

    def decision_records(self, run_id: str, agent: str | None = None, *,
                         last_step_rows: bool = False, only: Sequence[str] | None = None,
                         refused_as_records: bool = False, budget: PassBudget | None = None
                         ) -> Iterator[DecisionRecord]:
        """Every ``context_decision`` of ``agent`` in file order, each read once, its decision resolved
        from the previous ones (:class:`~.decision_delta.DecisionResolver`): the frame builder's one pass.

        The metadata is the raw JSON as written (not validated: the decision can be thousands of rows),
        with ``decision.decisions`` the full list; unchanged rows are shared between consecutive
        records, so treat them as read-only. A delta that cannot be resolved raises :class:`TraceError`.

        ``last_step_rows``: a chained decision (encoding 2) that is not the last of its turn comes with
        ``decision.decisions`` None (its rows are decoded as columns, for the next decision, but not
        made into dicts): what the frames show is each turn's last step.

        ``only`` (the frames' fast path, :data:`~.decision_delta.FRAME_KEYS`): a chained decision is
        decoded in just these columns, and every record's ``decision.decisions`` holds rows of just
        these keys (``partial`` True) — a decision then costs the rows whose values in these columns
        changed, not every column of the history. Older encodings come with their full rows as before
        (``partial`` False).

        ``refused_as_records``: a decision that cannot be resolved (damaged, past its limits: trace/limits.py)
        comes as a record whose ``problem`` says why, with empty metadata, and the pass goes on (a decision
        continuing a refused one is refused too, at once); otherwise it raises :class:`TraceError`.
        ``budget`` (:class:`~.limits.PassBudget`: what a pass over a file of this size may change): each
        record's rows not shared with the rows before them are counted against it; past it, every decision
        left is refused so.
        """
        idx = self._index(run_id)
        name = self._resolve_agent(idx, run_id, agent)
        positions = [p for p in idx.by_type.get("context_decision", []) if idx.entries[p].agent == name]
        last_of_turn = {idx.entries[p].turn: p for p in positions}
        wanted = set(last_of_turn.values()) if last_step_rows else None
        limits = FileLimits.of(idx.size, idx.seen)
        resolver = DecisionResolver(lambda event_id: self._decision_of(idx, event_id), limits=limits)
        chained = ChainResolver(lambda event_id: self._metadata_of(idx, event_id), keep=2, only=only, limits=limits)
        previous: list[Any] | None = None
        charged: list[Any] = []  # the rows last counted against the budget

        def refused(entry: Entry, p: int, problem: str) -> DecisionRecord:
            if not refused_as_records:
                raise TraceError(problem)
            return DecisionRecord(turn=entry.turn, step=entry.step or 0, event_id=entry.event_id, position=p,
                                  line=entry.line, metadata={}, problem=problem)

        for start in range(0, len(positions), 64):  # read in batches: contiguous ranges are merged
            chunk = positions[start:start + 64]
            if budget is not None and budget.refusal is not None:  # not read on: each refused as it comes
                for p in chunk:
                    entry = idx.entries[p]
                    yield refused(entry, p, f"{idx.path}:{entry.line}: event {entry.event_id}: refused "
                                            f"({budget.refusal})")
                continue
            for p, obj in zip(chunk, self._read_raw(idx, chunk), strict=True):
                entry = idx.entries[p]
                meta = obj.get("metadata")
                meta = dict(meta) if isinstance(meta, dict) else {}
                chain = is_chained(meta)
                what = "the chained decision" if chain else "the decision delta"
                try:
                    if budget is not None and budget.refusal is not None:
                        raise TooLarge(budget.refusal)
                    if chain:
                        meta = chained.resolve(entry.event_id, meta,
                                               rows=only is not None or wanted is None or p in wanted)
                        rows = rows_of(meta)
                        if rows is not None and only is None:
                            previous = rows
                    elif (decision := decision_of(meta)) is not None:
                        decision = resolver.next(entry.event_id, decision, previous,
                                                 limits.for_decision(entry.event_id, meta))
                        meta = {**meta, "decision": decision}  # JSON edge: the resolved decision in its place
                        rows = rows_of(meta)
                        if rows is not None:
                            previous = rows
                    else:
                        rows = None
                    if budget is not None and rows is not None:
                        shared = min(len(rows), len(charged))
                        budget.take(len(rows) - bytes(map(operator.is_, rows[:shared], charged[:shared])).count(1),
                                    f"decision {entry.event_id}")
                        charged = rows
                except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
                    yield refused(entry, p, f"{idx.path}:{entry.line}: event {entry.event_id}: {what} cannot be "
                                            f"resolved ({type(exc).__name__}: {exc})")
                    continue
                yield DecisionRecord(turn=entry.turn, step=entry.step or 0, event_id=entry.event_id, position=p,
                                     line=entry.line, metadata=meta, partial=chain and only is not None)

    def decision_rows(self, run_id: str, event_id: str) -> list[Row] | None:
        """The rows of the context_decision ``event_id`` of ``run_id`` (None when it records none)."""
        return rows_in(self.decision_of(run_id, event_id))

    def decision_of(self, run_id: str, event_id: str) -> dict[str, Any]:  # JSON edge: the decision's JSON
        """The full ``decision`` (rows resolved) of the context_decision ``event_id`` of ``run_id``."""
        idx = self._index(run_id)
        p = idx.decision_at.get(event_id)
        if p is None:
            raise TraceError(f"run {run_id} has no context_decision {event_id}")
        decision = decision_of(self._load(idx, [p])[0].metadata)
        if decision is None:
            raise TraceError(f"{idx.path}:{idx.entries[p].line}: context_decision {event_id} records no decision")
        return decision

    def events(
        self,
        run_id: str,
        *,
        event_types: Iterable[str] | None = None,
        turn: int | None = None,
        agent: str | None = None,
    ) -> list[TraceEvent]:
        """The run's events in file order, optionally only some types, one turn, one agent."""
        idx = self._index(run_id)
        return self._load(idx, self._select(idx, event_types=event_types, turn=turn, agent=agent))

    def positioned_events(self, run_id: str, *, turn: int, agent: str, skip: Iterable[str] = (),
                          types: Container[str] | None = None) -> list[tuple[int, TraceEvent]]:
        """The events of (``agent``, ``turn``) in file order with their entry numbers, leaving out the
        types in ``skip`` (the frame builder reads the decisions through its own pass), or only those of
        ``types``."""
        idx = self._index(run_id)
        left_out = set(skip)
        positions = [p for p in idx.by_turn.get((agent, turn), []) if idx.entries[p].event_type not in left_out
                     and (types is None or idx.entries[p].event_type in types)]
        return list(zip(positions, self._load(idx, positions), strict=True))

    def _select(
        self,
        idx: FileIndex,
        *,
        event_types: Iterable[str] | None = None,
        turn: int | None = None,
        agent: str | None = None,
    ) -> list[int]:
        types = set(event_types) if event_types is not None else None
        if turn is not None:
            if agent is not None:
                positions = list(idx.by_turn.get((agent, turn), []))
            else:
                positions = sorted(p for (a, t), ps in idx.by_turn.items() if t == turn for p in ps)
        elif types is not None:
            positions = sorted(p for t in types for p in idx.by_type.get(t, []))
        else:
            positions = list(range(len(idx.entries)))
        return [
            p
            for p in positions
            if (types is None or idx.entries[p].event_type in types)
            and (agent is None or idx.entries[p].agent == agent)
        ]

    # -- turns and agents -------------------------------------------------------------------------

    def agents(self, run_id: str) -> list[str]:
        return sorted(self._index(run_id).agents)

    def list_turns(self, run_id: str, agent: str | None = None) -> list[int]:
        """The user turns with at least one event (for ``agent``, or any agent)."""
        idx = self._index(run_id)
        if agent is not None:
            self._check_agent(idx, run_id, agent)
        return sorted({t for (a, t) in idx.by_turn if agent is None or a == agent})

    def replay_turns(self, run_id: str, agent: str | None = None) -> list[int]:
        """The turns that have replay evidence (a ``context_decision``)."""
        idx = self._index(run_id)
        if agent is not None:
            self._check_agent(idx, run_id, agent)
        return sorted(
            {
                idx.entries[p].turn  # type: ignore[misc]
                for p in idx.by_type.get("context_decision", [])
                if idx.entries[p].turn is not None and (agent is None or idx.entries[p].agent == agent)
            }
        )

    def _check_agent(self, idx: FileIndex, run_id: str, agent: str) -> None:
        if agent not in idx.agents:
            known = ", ".join(sorted(idx.agents)) or "none"
            raise TraceError(f"run {run_id} has no agent {agent!r}; agents: {known}")

    def _resolve_agent(self, idx: FileIndex, run_id: str, agent: str | None, turn: int | None = None) -> str:
        if agent is not None:
            self._check_agent(idx, run_id, agent)
            return agent
        present = sorted(idx.turn_agents.get(turn, ())) if turn is not None else []
        if not present:
            present = sorted(idx.agents)
        if "main" in present or not present:
            return "main"
        if len(present) == 1:
            return present[0]
        at = f" at turn {turn}" if turn is not None else ""
        raise TraceError(
            f"run {run_id} has several agents{at}: {', '.join(present)}; choose one with agent= (--agent NAME)"
        )

    # -- replay -----------------------------------------------------------------------------------

    def replay_prompt(self, run_id: str, turn: int, agent: str | None = None, step: int = 0) -> PromptReplay | None:
        """Join the ``context_decision``, ``prompt_snapshot`` and ``llm_call`` of (turn, step).

        ``None`` when that turn (or step) has no recorded decision (trace/prompt_queries.py).
        """
        return prompt_queries.replay_prompt(self, run_id, turn, agent, step)

    def prompt_sent(self, run_id: str, turn: int, step: int = 0, agent: str | None = None) -> SentPrompt | None:
        """The prompt of (turn, step) as the provider was given it: from its ``prompt_sent`` event
        (trace/prompt_sent.py), else its ``prompt_snapshot``; ``None`` when the trace holds neither
        (an older trace: ``context.rebuild.prompt_as_sent`` rebuilds it) or the call has no decision.
        ``verified`` says whether its request digest, recomputed, equals the one the call recorded."""
        return prompt_queries.prompt_sent(self, run_id, turn, step, agent)

    def prompts_sent(self, run_id: str, agent: str | None = None, *,
                     turns: Container[int] | None = None) -> Iterator[SentPrompt]:
        """Every ``prompt_sent`` of ``agent`` in file order, resolved and verified, in one pass (each
        record against the previous one; the decisions read for their tools and model, without rows):
        what the report's "Prompts as sent" section shows. Older traces yield nothing.

        ``turns``: only the calls of these turns (a long run's report shows the prompts of the turns it
        shows in full): the decisions are then read only up to the last of them, and only the wanted
        prompts are resolved and their digests recomputed."""
        return prompt_queries.prompts_sent(self, run_id, agent, turns=turns)


    # -- transcript -------------------------------------------------------------------------------

    def history(
        self, run_id: str, agent: str | None = None, upto_turn: int | None = None, *, strict: bool | None = None
    ) -> list[Message]:
        """The session history as the runtime held it: ``history[i]`` is the message recorded with
        ``history_index == i`` (from ``user_message``, ``llm_call``, ``tool_call`` events, and a cancelled
        turn's closing message in ``turn_end``).

        Index 0 may be left unrecorded when it is the system prompt: it is then taken from the
        agent's ``run_start`` (``system_prompt``). ``upto_turn`` keeps the messages of turns up to
        and including it. Any other missing index is a hole: ``strict`` (default: the reader's
        ``strict``) raises :class:`TraceError`, otherwise it is listed in :attr:`warnings` and the
        recorded messages are returned in order. With ``trace_content="none"`` the messages come
        back with empty content.
        """
        idx = self._index(run_id)
        name = self._resolve_agent(idx, run_id, agent)
        strict = self.strict if strict is None else strict
        with self._lock:
            slots = idx.history.get(name, {})
            cache = idx.messages.setdefault(name, {})
            wanted = sorted(h for h, p in slots.items() if _within(idx.entries[p].turn, upto_turn))
            records = idx.records.get(name, {})
            for h in wanted:
                if h not in cache:
                    try:
                        cache[h] = as_message(records[h])
                    except (ValueError, TypeError) as exc:
                        line = idx.entries[slots[h]].line
                        raise TraceError(
                            f"{idx.path}:{line}: history message {h} is not a valid message: {exc}"
                        ) from exc
            if 0 not in slots and name in idx.system_prompts and (wanted or idx.system_prompts[name] is not None):
                if 0 not in cache:
                    cache[0] = Message(role="system", content=idx.system_prompts[name] or "")
                wanted.insert(0, 0)
            out = [cache[h] for h in wanted]
            holes = sorted(set(range(wanted[-1] + 1)) - set(wanted)) if wanted else []
        if holes:
            problem = (
                f"{idx.path}: the transcript of agent {name} has no message with history_index "
                f"{', '.join(map(str, holes[:10]))}{' ...' if len(holes) > 10 else ''}"
            )
            if strict:
                raise TraceError(problem + "; the trace is incomplete, so the turns after it cannot be rebuilt exactly")
            warning = problem + " (history returned without it)"
            if warning not in idx.history_dupes:
                idx.history_dupes.append(warning)
        return out

    def turn_messages(self, run_id: str, turn: int, agent: str | None = None) -> list[Message]:
        """The history messages that belong to ``turn`` (what ``recall(turn)`` returns)."""
        idx = self._index(run_id)
        name = self._resolve_agent(idx, run_id, agent, turn)
        return [m for m in self.history(run_id, name, upto_turn=turn) if m.turn == turn]

    # -- pins -------------------------------------------------------------------------------------

    def active_pins(
        self, run_id: str, turn: int, agent: str | None = None, *, step: int | None = None
    ) -> list[Pin]:
        """The pins of ``agent`` in effect at ``turn``, oldest first.

        With ``step=None``: pins created at or before ``turn`` and not unpinned at or before it
        (the runtime's own rule); with ``step=k``: only pin/unpin calls recorded before that
        step's ``context_decision`` count — exactly the pins that build could see. Either way a
        pin whose ``until_turn`` is below ``turn`` has expired.
        """
        idx = self._index(run_id)
        return self._active_pins(idx, self._resolve_agent(idx, run_id, agent, turn), turn, step)

    def _active_pins(self, idx: FileIndex, name: str, turn: int, step: int | None) -> list[Pin]:
        cutoff: int | None = None
        if step is not None:
            for p in idx.by_turn.get((name, turn), []):
                e = idx.entries[p]
                if e.event_type == "context_decision" and (e.step or 0) == step:
                    cutoff = p
                    break
        ops = idx.pin_ops.get(name, [])
        if cutoff is not None:  # the changes recorded before that step's decision (ops are in file order)
            ops = ops[:bisect.bisect_left(ops, cutoff, key=lambda c: c.position or 0)]
        elif name not in idx.pin_ops_unsorted:  # turns in file order: the changes up to ``turn`` are a prefix
            ops = ops[:bisect.bisect_right(ops, turn, key=lambda c: c.turn or 0)]
        live = list(fold_pins(ops, live_at=turn).values())  # changes of later turns do not count
        return [p if p.tokens is not None or p.content is None
                else p.model_copy(update={"tokens": self._count(idx, p.content)}) for p in live]

    def pin_timeline(self, run_id: str, agent: str | None = None) -> PinTimeline:
        """The pins of ``agent`` in effect at one decision after another, folded incrementally (see
        :class:`PinTimeline`): what :meth:`active_pins` answers, for a walk over the run in file order."""
        idx = self._index(run_id)
        name = self._resolve_agent(idx, run_id, agent)
        return PinTimeline(self, idx, name)

    def _count(self, idx: FileIndex, text: str) -> int:
        if self._counter is None:
            from ..tokens import TokenCounter

            self._counter = TokenCounter(idx.run_start.model if idx.run_start else None)
        return int(self._counter.count_text(text))

    # -- misc -------------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Index every file now (new runs and growth); normally done lazily on each question."""
        for path in self._files().values():
            self._index_path(path)

    def forget(self) -> None:
        """Drop the indexes of this reader's files (the next question re-reads them from their start)."""
        self._files_index.forget()


class PinTimeline:
    """``active_pins(turn, step=...)`` for decisions visited in file order, in time linear in the run.

    Each :meth:`at` folds only the pin changes recorded since the previous call (``fold_pins`` with the
    pins so far) instead of every change from the start; a trace whose pin changes' turns ever go
    down (a resumed or merged run) is answered by :meth:`TraceReader.active_pins`' own fold instead.
    """

    def __init__(self, reader: TraceReader, idx: FileIndex, agent: str) -> None:
        self._reader, self._idx, self._agent = reader, idx, agent
        self._ops = list(idx.pin_ops.get(agent, []))
        self._ordered = agent not in idx.pin_ops_unsorted
        self._next = 0
        self._pins: dict[str, Pin] = {}
        self._tokens: dict[str, int] = {}

    def at(self, turn: int, position: int) -> list[Pin]:
        """The pins live at ``turn`` for the decision at entry ``position`` (changes recorded before it)."""
        if not self._ordered:
            return self._reader._active_pins(self._idx, self._agent, turn, self._step_of(position))
        end = bisect.bisect_left(self._ops, position, lo=self._next, key=lambda c: c.position or 0)
        if end > self._next:
            folded = fold_pins(self._ops[self._next:end], pins=self._pins)
            # an unpinned pin can come back only as a new pin, made by a later change: dropping it is the same
            self._pins = {k: p for k, p in folded.items() if p.unpinned_turn is None}
            self._next = end
        out = []
        for p in self._pins.values():
            if p.unpinned_turn is not None or p.expired(turn) or (p.created_turn is not None and p.created_turn > turn):
                continue
            if p.tokens is None and p.content is not None:
                key = p.event_id or p.pin_id
                if key not in self._tokens:
                    self._tokens[key] = self._reader._count(self._idx, p.content)
                p = p.model_copy(update={"tokens": self._tokens[key]})
            out.append(p)
        return out

    def _step_of(self, position: int) -> int | None:
        step = self._idx.entries[position].step if 0 <= position < len(self._idx.entries) else None
        return step or 0


TRACE_DIR_SUFFIX = ".arcana"
"""A notebook's traces live in the folder named after it with this suffix (:func:`notebook_trace_dir`)."""


def notebook_trace_dir(notebook: Path | str) -> Path:
    """Where a notebook's traces live: ``analysis.ipynb`` -> ``analysis.arcana/`` beside it.

    The one statement of the rule: the session writing traces, the report, ``%arcana_replay``, the
    CLI and the demo all find a notebook's folder with this function."""
    nb = Path(notebook)
    return nb.with_name(nb.stem + TRACE_DIR_SUFFIX)


def trace_dir_for_notebook(notebook: Path | str) -> Path:
    """The trace folder of ``notebook`` when it is an ``.ipynb`` (:func:`notebook_trace_dir`), else
    ``notebook`` itself (already a folder)."""
    nb = Path(notebook)
    return notebook_trace_dir(nb) if nb.suffix == ".ipynb" else nb


def env_trace_dir(default: str = "traces") -> Path:
    """``$ARCANA_TRACE_DIR`` or ``default``."""
    return Path(os.environ.get("ARCANA_TRACE_DIR") or default)
