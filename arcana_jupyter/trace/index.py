"""The file index of a trace: where each event of a ``.jsonl`` file is, kept up to date as the file grows.

A :class:`FileIndexer` indexes a run's file once: every line is parsed and checked, and the
:class:`FileIndex` keeps, per event, its byte offset and length plus the few envelope fields
needed to find it (type, agent, turn, step, history index), the pin/unpin calls and the message
records of the transcript, and per decision how many of those its agent had before it (what bounds
its rows: trace/limits.py). A file that grew since it was indexed (cached by ``(size, mtime)``; its
first and last indexed bytes -- the head and tail signatures -- checked) is read from where the
index stopped. Damage is bookkept here: a torn last line (``torn``), lines that are not events
(``corrupt``; :class:`~arcana_jupyter.exceptions.CorruptTraceError` in strict mode) and events
whose metadata does not fit its model (``malformed``, kept with that field unset). The indexer
also reads entries back by their offsets (:meth:`FileIndexer.read_raw`, :meth:`FileIndexer.raw_lines`),
counting what it reads in :class:`ReaderStats`. The questions asked of the index (runs, events,
decisions, prompts, pins) are :class:`~arcana_jupyter.trace.reader.TraceReader`'s.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError
from pydantic_core import from_json

from ..exceptions import CorruptTraceError, TraceError
from ..messages import Message
from ..schema.events import (
    EVENT_ADAPTER,
    EVENT_MODELS,
    CognitivePrimitiveMetadata,
    MessageRecord,
    Record,
    RunStartMetadata,
    TurnEndMetadata,
    read_event,
)
from ..schema.pins import PinChange
from .decision_delta import ChainResolver
from .limits import MAX_DEPTH, Seen, too_deep
from .prompt_sent import ResolvedPrompt

HISTORY_EVENTS = ("user_message", "llm_call", "tool_call", "turn_end")
_CHUNK = 1 << 20
SHARED_INDEXES = 64
"""How many file indexes the process-wide cache keeps (least recently used dropped first)."""


@dataclass
class ReaderStats:
    """What the reader did, for tests and benchmarks."""

    bytes_read: int = 0
    lines_parsed: int = 0
    events_loaded: int = 0
    index_builds: int = 0
    """Times a file was indexed from its first byte."""


class Entry(NamedTuple):
    """One indexed event: where its line is (byte offset and length, line number) and the envelope and
    metadata fields that find it."""

    offset: int
    length: int
    line: int
    event_type: str
    turn: int | None
    agent: str
    event_id: str
    step: int | None
    hindex: int | None
    parent_id: str | None
    ts: str


class Damage(NamedTuple):
    """A line the index could not use as it is, for a viewer: where, why, and how it starts."""

    line: int
    problem: str
    excerpt: str
    """The start of the line as written (at most :data:`EXCERPT_CHARS` characters)."""
    kept: bool = False
    """The event was kept (its metadata does not fit its model: that field reads as unset)."""


EXCERPT_CHARS = 160


def _excerpt(raw: bytes) -> str:
    text = raw[: EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "…"


class RunStartSeen(NamedTuple):
    """What the index keeps of a run's first ``run_start``."""

    model: str | None
    provider: str | None
    ts: str


@dataclass
class FileIndex:
    path: Path  # as first named (for messages)
    real: Path  # absolute (for reading: the working directory may change)
    stat_key: tuple[int, int] = (-1, -1)
    size: int = 0  # bytes consumed (end of the last complete line)
    lines: int = 0  # lines consumed
    entries: list[Entry] = field(default_factory=list)
    by_turn: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    turn_agents: dict[int, set[str]] = field(default_factory=dict)
    by_type: dict[str, list[int]] = field(default_factory=dict)
    decision_at: dict[str, int] = field(default_factory=dict)  # context_decision event id -> entry (the first)
    seen: dict[str, Seen] = field(default_factory=dict)  # ... -> what the file records of its agent before it
    prompt_at: dict[str, int] = field(default_factory=dict)  # prompt_sent event id -> entry (the first)
    sent: OrderedDict[str, ResolvedPrompt] = field(default_factory=OrderedDict)  # resolved prompt_sent (bounded)
    agents: dict[str, int] = field(default_factory=dict)
    history: dict[str, dict[int, int]] = field(default_factory=dict)
    history_dupes: list[str] = field(default_factory=list)
    pin_ops: dict[str, list[PinChange]] = field(default_factory=dict)
    pin_ops_unsorted: set[str] = field(default_factory=set)  # agents whose pin changes' turns ever go down
    run_id: str | None = None
    run_start: RunStartSeen | None = None  # the first run_start's
    system_prompts: dict[str, str | None] = field(default_factory=dict)  # per agent, from its first run_start
    run_end: bool = False
    first_ts: str | None = None
    last_ts: str | None = None
    errors: int = 0
    corrupt: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)  # valid lines whose metadata does not fit its model
    torn: str | None = None
    damage: list[Damage] = field(default_factory=list)  # the corrupt and malformed lines, for a viewer
    torn_damage: Damage | None = None  # the torn last line, for a viewer
    tail_sig: bytes = b""  # the last bytes indexed: if they changed, the file was rewritten
    head_sig: bytes = b""  # the first bytes of the file: likewise
    chain: ChainResolver | None = None  # chained decisions (encoding 2) resolved for random reads
    records: dict[str, dict[int, dict[str, Any]]] = field(  # JSON edge: history message records as written
        default_factory=dict)
    messages: dict[str, dict[int, Message]] = field(default_factory=dict)  # ... validated on first use


_SHARED_CACHE: OrderedDict[tuple[Path, bool], FileIndex] = OrderedDict()
_SHARED_LOCK = threading.RLock()


def shared_indexes() -> list[FileIndex]:
    """The file indexes the process-wide cache holds now (the trace worker watches them go)."""
    with _SHARED_LOCK:
        return list(_SHARED_CACHE.values())


class _TooDeep(ValueError):
    """A line nested deeper than :data:`~.limits.MAX_DEPTH`: not an event."""


def loads(raw: bytes) -> Any:
    """``json.loads(raw)``, read by pydantic-core's JSON parser when it can (1.7x faster on trace lines: the
    46 MB fixture's 25,000 lines in 0.25 s instead of 0.43 s). Where the two differ, pydantic-core refuses
    what json accepts (lone surrogates, a byte order mark) and json reads it: the value, or the error, is
    json's (tests/trace/test_index_loads.py)."""
    try:
        return from_json(raw)
    except ValueError:
        return json.loads(raw)


def _parse(raw: bytes) -> Any:
    """One line's JSON, refused (:class:`_TooDeep`, a ``ValueError``) when it nests deeper than
    :data:`~.limits.MAX_DEPTH`: json's own limit would raise ``RecursionError`` (100,000 nested lists),
    and every later walk of the value recurses (docs/SECURITY.md, limits of a trace)."""
    if too_deep(raw):
        raise _TooDeep(f"nested deeper than {MAX_DEPTH} levels")
    try:
        return loads(raw)
    except RecursionError:
        raise _TooDeep(f"nested deeper than {MAX_DEPTH} levels") from None


_MISSING = object()


def _field(typed: Record, name: str) -> Any:
    """``getattr(typed, name, None)`` for a metadata model: its field, or an extra key an unknown event
    type keeps; without pydantic's ``__getattr__``, slow to say a name is missing (15,000 lines of 25,000
    lack a ``step``)."""
    value = typed.__dict__.get(name, _MISSING)
    if value is not _MISSING:
        return value
    extra = typed.__pydantic_extra__
    return extra.get(name) if extra else None


def _as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def first_problem(exc: ValidationError, *, within: int = 0) -> str:
    """A validation error in one line: how many problems, and the first with where it is. ``within``
    leaves out the first parts of each location: 2 for an error of :data:`EVENT_ADAPTER` in the metadata
    (``(event type, "metadata", ...)``), so it reads as the metadata model's own."""
    errors = exc.errors()
    if not errors:
        return str(exc).splitlines()[0]
    first = errors[0]
    where = ".".join(map(str, first["loc"][within:])) or "top level"
    return f"{exc.error_count()} problem(s), first: {first['msg']} at {where}"


def parse_metadata(event_type: str, event_id: str, metadata: dict[str, Any]  # JSON edge: the metadata as written
                   ) -> tuple[Record, ValidationError | None]:
    """The metadata of an indexed line, parsed by the one parser (:data:`EVENT_ADAPTER`, strict) as the
    line's typed event, and the error when it does not fit its model: the metadata is then read as
    :func:`read_event` reads it (a field of the wrong type reads as unset).

    Only the event type, id and metadata are handed to the parser: the envelope was checked already
    (``_check``, whose problems are its own messages) and is not what this reports, so its errors'
    locations are ``(event type, "metadata", ...)`` -- read with ``first_problem(exc, within=2)``. An
    event type this version does not know has no typed event: its keys are kept on a plain
    :class:`Record` (extra attributes)."""
    if event_type not in EVENT_MODELS:
        return Record.model_validate(metadata, strict=True), None
    line = {"event_type": event_type, "event_id": event_id, "metadata": metadata}
    try:
        return EVENT_ADAPTER.validate_python(line, strict=True).metadata, None
    except ValidationError as exc:
        event = read_event(line)
        assert event is not None  # a known event type: read_event always answers it
        return event.metadata, exc


def problems_of(idx: FileIndex) -> list[str]:
    """What is wrong with the file of ``idx``, as ``file:line: problem``: corrupt lines, malformed
    events, history gaps and duplicates, a torn last line."""
    return [*idx.corrupt, *idx.malformed, *idx.history_dupes, *([idx.torn] if idx.torn else [])]


class FileIndexer:
    """The file indexes of one reader: built, extended on append and cached (process-wide when
    ``shared``), and the entries read back by their offsets. ``strict`` raises
    :class:`CorruptTraceError` for a line that is not a valid event instead of listing it."""

    def __init__(self, *, strict: bool, shared: bool, stats: ReaderStats) -> None:
        self.strict = strict
        self.stats = stats
        self.indexes: OrderedDict[tuple[Path, bool], FileIndex]
        if shared:
            self.indexes = _SHARED_CACHE
            self.lock = _SHARED_LOCK
        else:
            self.indexes = OrderedDict()
            self.lock = threading.RLock()
        self.seen: set[tuple[Path, bool]] = set()
        self._resolved: dict[Path, Path] = {}

    def problems(self) -> list[str]:
        """Problems found so far in every file this indexer indexed (corrupt and malformed lines,
        history gaps, a torn last line)."""
        out: list[str] = []
        with self.lock:
            for key in sorted(self.seen, key=str):
                idx = self.indexes.get(key)
                if idx is None:
                    continue
                out.extend(problems_of(idx))
        return out

    def forget(self) -> None:
        """Drop the indexes of this indexer's files (the next question re-reads them from their start)."""
        with self.lock:
            for key in self.seen:
                self.indexes.pop(key, None)
            self.seen.clear()

    def index(self, path: Path) -> FileIndex:
        """The index of the file at ``path``: cached, extended when the file only grew, rebuilt when
        it was rewritten."""
        with self.lock:
            real = self._resolved.get(path)
            if real is None:
                real = self._resolved[path] = path.resolve()
            cache_key = (real, self.strict)
            self.seen.add(cache_key)
            idx = self.indexes.get(cache_key)
            if idx is not None:
                self.indexes.move_to_end(cache_key)
            try:
                st = path.stat()
            except FileNotFoundError as exc:
                raise TraceError(f"trace file {path} disappeared; list the runs again (`arcana trace list`)") from exc
            key = (st.st_size, st.st_mtime_ns)
            if idx is not None and idx.stat_key == key:
                return idx
            if idx is None or not self._is_append(idx, path, st.st_size):
                idx = FileIndex(path=path, real=real)
                self.indexes[cache_key] = idx
                while len(self.indexes) > SHARED_INDEXES:
                    self.indexes.popitem(last=False)
                self.stats.index_builds += 1
            self._extend(idx, st.st_size)
            idx.stat_key = key
            return idx

    def _is_append(self, idx: FileIndex, path: Path, size: int) -> bool:
        """True when the file only grew since ``idx`` was built (so reading on from there is right)."""
        if size < idx.size:
            return False
        if idx.size == 0:
            return True
        if size == idx.stat_key[0] and idx.torn is None:
            return False  # same size, new mtime: rewritten in place
        with idx.real.open("rb") as fh:
            head = fh.read(len(idx.head_sig))
            fh.seek(idx.size - len(idx.tail_sig))
            tail = fh.read(len(idx.tail_sig))
            self.stats.bytes_read += len(head) + len(tail)
            return head == idx.head_sig and tail == idx.tail_sig

    def _extend(self, idx: FileIndex, size: int) -> None:
        idx.torn = None
        idx.torn_damage = None
        if size <= idx.size:
            return
        with idx.real.open("rb") as fh:
            fh.seek(idx.size)
            pending = b""
            offset = idx.size
            remaining = size - idx.size
            while remaining > 0:
                chunk = fh.read(min(_CHUNK, remaining))
                if not chunk:
                    break
                remaining -= len(chunk)
                self.stats.bytes_read += len(chunk)
                data = pending + chunk if pending else chunk
                start = 0
                while True:
                    nl = data.find(b"\n", start)
                    if nl < 0:
                        break
                    self._add_line(idx, data[start:nl], offset + start)
                    start = nl + 1
                    idx.size = offset + start
                pending = data[start:]
                offset += start
        if pending:
            self._tail(idx, pending, offset)
        if idx.size > 0:
            with idx.real.open("rb") as fh:
                if not idx.head_sig:
                    idx.head_sig = fh.read(min(32, idx.size))
                    self.stats.bytes_read += len(idx.head_sig)
                fh.seek(max(0, idx.size - 32))
                idx.tail_sig = fh.read(idx.size - max(0, idx.size - 32))
                self.stats.bytes_read += len(idx.tail_sig)

    def _tail(self, idx: FileIndex, raw: bytes, offset: int) -> None:
        """The last line has no newline yet: index it if it is a whole event, else report it torn."""
        line_no = idx.lines + 1
        try:
            obj = _parse(raw)
            self.stats.lines_parsed += 1
            problem = self._check(obj)
        except _TooDeep as exc:
            problem = str(exc)
        except ValueError:
            problem = "incomplete JSON"
        if problem is None:
            self._add_line(idx, raw, offset)
            idx.size = offset + len(raw)
            return
        idx.torn = (
            f"{idx.path}:{line_no}: torn last line ({len(raw)} bytes, {problem}) ignored; "
            f"the {len(idx.entries)} events before it are intact"
        )
        idx.torn_damage = Damage(line_no, f"torn last line (the trace is probably still being written): {problem}",
                                 _excerpt(raw))

    @staticmethod
    def _check(obj: Any) -> str | None:
        if not isinstance(obj, dict):
            return f"not a JSON object but {type(obj).__name__}"
        if not isinstance(obj.get("event_type"), str):
            return "no 'event_type'"
        if not isinstance(obj.get("event_id"), str):
            return "no 'event_id'"
        if "metadata" in obj and not isinstance(obj["metadata"], dict):
            return "'metadata' is not an object"
        turn = obj.get("turn")
        if turn is not None and _as_int(turn) is None:
            return f"'turn' is {turn!r}, not an integer"
        agent = obj.get("agent", "main")
        if not isinstance(agent, str):
            return f"'agent' is {agent!r}, not a string"
        for name in ("run_id", "ts", "parent_id"):
            value = obj.get(name)
            # parent_id may be null; run_id and ts, when the line holds them, are strings (a null one
            # would pass here and fail when the event is read: the line is reported now instead)
            if (value is not None or (name != "parent_id" and name in obj)) and not isinstance(value, str):
                return f"'{name}' is {_short(value)}, not a string"
        version = obj.get("v", 1)
        if _as_int(version) is None:
            return f"'v' is {_short(version)}, not an integer"
        return None

    def _add_line(self, idx: FileIndex, raw: bytes, offset: int) -> None:
        idx.lines += 1
        line_no = idx.lines
        if not raw.strip():
            return
        try:
            obj = _parse(raw)
            self.stats.lines_parsed += 1
            problem = self._check(obj)
        except _TooDeep as exc:
            problem = str(exc)
        except ValueError as exc:
            problem = f"invalid JSON ({exc})"
        if problem is None and idx.run_id is not None and isinstance(obj.get("run_id"), str) \
                and obj["run_id"] != idx.run_id:
            problem = f"an event of another run ({_short(obj['run_id'])}) in the file of run {idx.run_id}"
        if problem is not None:
            if self.strict:
                idx.lines -= 1
                raise CorruptTraceError(str(idx.path), line_no, problem)
            idx.corrupt.append(f"{idx.path}:{line_no}: {problem} (line skipped)")
            idx.damage.append(Damage(line_no, problem, _excerpt(raw)))
            return
        meta: dict[str, Any] = obj.get("metadata") or {}  # JSON edge: the metadata as written
        etype: str = obj["event_type"]
        typed, misfit = parse_metadata(etype, obj["event_id"], meta)
        if misfit is not None:
            problem = f"{etype} event {_short(obj['event_id'])}: {first_problem(misfit, within=2)}"
            if self.strict:
                idx.lines -= 1
                raise CorruptTraceError(str(idx.path), line_no, problem) from None
            idx.malformed.append(f"{idx.path}:{line_no}: {problem} (event kept; the field reads as unset)")
            idx.damage.append(Damage(line_no, f"{problem} (event kept; the field reads as unset)", _excerpt(raw), True))
        agent: str = obj.get("agent") or "main"
        turn = _as_int(obj.get("turn"))
        # an unknown event type keeps its keys as extra attributes: _as_int guards their type
        step = _as_int(_field(typed, "step"))
        message = _field(typed, "message") if etype in HISTORY_EVENTS else None
        hindex = _as_int(_field(typed, "history_index")) if etype in HISTORY_EVENTS else None
        ts = str(obj.get("ts") or "")
        position = len(idx.entries)
        entry = Entry(offset, len(raw), line_no, etype, turn, agent, obj["event_id"], step, hindex,
                       obj.get("parent_id"), ts)
        idx.entries.append(entry)
        idx.by_type.setdefault(etype, []).append(position)
        if etype == "context_decision":
            if obj["event_id"] not in idx.decision_at:
                idx.decision_at[obj["event_id"]] = position
                # what bounds its rows (trace/limits.py, FileLimits.for_decision): counted as the lines go
                idx.seen[obj["event_id"]] = Seen(len(idx.history.get(agent, ())), len(idx.pin_ops.get(agent, ())))
        elif etype == "prompt_sent":
            idx.prompt_at.setdefault(obj["event_id"], position)
        idx.agents[agent] = idx.agents.get(agent, 0) + 1
        if turn is not None:
            idx.by_turn.setdefault((agent, turn), []).append(position)
            idx.turn_agents.setdefault(turn, set()).add(agent)
        if idx.run_id is None and isinstance(obj.get("run_id"), str):
            idx.run_id = obj["run_id"]
        if idx.first_ts is None:
            idx.first_ts = ts
        idx.last_ts = ts
        if hindex is not None and isinstance(message, MessageRecord):
            slots = idx.history.setdefault(agent, {})
            if hindex in slots:
                prev = idx.entries[slots[hindex]]
                idx.history_dupes.append(
                    f"{idx.path}:{line_no}: history_index {hindex} of agent {agent} recorded again "
                    f"(first at line {prev.line}); the later message is used"
                )
            slots[hindex] = position
            record = dict(meta["message"])  # the record as written: as_message() reads it back losslessly
            if record.get("turn") is None and turn is not None:
                record["turn"] = turn
            idx.records.setdefault(agent, {})[hindex] = record
            idx.messages.get(agent, {}).pop(hindex, None)
        if isinstance(typed, RunStartMetadata):
            if idx.run_start is None:
                idx.run_start = RunStartSeen(model=typed.model, provider=typed.provider, ts=ts)
            if agent not in idx.system_prompts:
                idx.system_prompts[agent] = typed.system_prompt
                if "system_prompt" in meta:
                    idx.messages.get(agent, {}).pop(0, None)
        elif etype == "run_end":
            idx.run_end = True
        elif etype == "error" or (isinstance(typed, TurnEndMetadata) and typed.status == "error"):
            idx.errors += 1
        elif isinstance(typed, CognitivePrimitiveMetadata):
            change = typed.pin_change(turn=turn, position=position, event_id=obj["event_id"])
            if change is not None:
                ops = idx.pin_ops.setdefault(agent, [])
                if change.turn is None or (ops and (ops[-1].turn is None or ops[-1].turn > change.turn)):
                    idx.pin_ops_unsorted.add(agent)
                ops.append(change)

    # -- reading entries back -----------------------------------------------------------------------

    def raw_lines(self, idx: FileIndex, positions: Sequence[int], *, span: int = 1 << 20
                   ) -> Iterator[tuple[int, bytes]]:
        """``(position, line)`` of the given entries, in file order, unparsed: read in spans of about
        ``span`` bytes (entries close together read at once), so a caller parses one line at a time and
        holds no more than that of the file."""
        entries = idx.entries
        ordered = sorted(positions, key=lambda p: entries[p].offset)
        with idx.real.open("rb") as fh:
            i = 0
            while i < len(ordered):
                first = entries[ordered[i]]
                start, end = first.offset, first.offset + first.length
                j = i + 1
                while j < len(ordered):
                    e = entries[ordered[j]]
                    if e.offset - end > 4096 or e.offset + e.length - start > span:
                        break
                    end = max(end, e.offset + e.length)
                    j += 1
                fh.seek(start)
                blob = fh.read(end - start)
                self.stats.bytes_read += len(blob)
                for k in range(i, j):
                    e = entries[ordered[k]]
                    yield ordered[k], blob[e.offset - start:e.offset - start + e.length]
                self.stats.events_loaded += j - i
                i = j

    def parse_line(self, idx: FileIndex, position: int, raw: bytes) -> dict[str, Any]:  # JSON edge: a line
        """One line read by :meth:`raw_lines`, parsed (it was a valid object when indexed)."""
        try:  # checked when indexed (its nesting too): a line read again is parsed, not checked again
            obj = loads(raw)
        except (ValueError, RecursionError) as exc:
            raise TraceError(f"{idx.path}:{idx.entries[position].line}: the file changed under the reader ({exc}); "
                             "read it again") from None
        self.stats.lines_parsed += 1
        if not isinstance(obj, dict):
            raise TraceError(f"{idx.path}:{idx.entries[position].line}: the file changed under the reader "
                             "(not an object); read it again")
        return obj

    def read_raw(self, idx: FileIndex, positions: Sequence[int]) -> list[dict[str, Any]]:  # JSON edge: lines
        """The parsed JSON objects of the given entries, in the order given (read by :meth:`raw_lines`,
        nearby entries at once, in one span however long)."""
        parsed = {position: self.parse_line(idx, position, raw)
                  for position, raw in self.raw_lines(idx, sorted(set(positions)), span=1 << 62)}
        return [parsed[p] for p in positions]

