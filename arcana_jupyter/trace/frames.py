"""The replay frames' pass over a run's decisions: seven columns patched in place, decision by decision.

What a replay frame reads from its turn's decision rows (``build_frames``, jupyter/replay_frames.py) is
their outcome counts and the rows whose outcome or fidelity changed since the previous turn: seven
columns (:data:`~.decision_delta.FRAME_KEYS`). A chained decision (encoding 2) records its rows as ops
against an earlier decision; here one copy of those seven columns is kept and each decision's ops
*patch* it: only the positions an op writes, and those not aligned to the same position in the earlier
decision (the new history rows, and the few rows after the history that move down as it grows: the
input, sections, pins), are read and written. A decision costs what it changed, not the length of
the history; so do its outcome counts (the earlier decision's, less the values overwritten, plus the
new ones) and the changes between two decisions (read at the union of the patches on the way from one
to the other). That is what keeps a long run's frames linear in its turns.

Each decision's patch (its positions, the values there before and after) is held for the last
:data:`KEEP` decisions, so the columns can be moved to any of them — back up the patches to the
decision both descend from, then down — when a decision names an earlier one than the previous as its
``prev`` (any earlier chained decision may be one), and when the changes between two turns' decisions
are asked for. A ``prev`` older than that is resolved from its keyframe by
:class:`~.decision_delta.ChainResolver` and stands as a keyframe. Keyframes, and the decisions of the
older encodings (their rows come whole), are compared with the columns held (in C) and patch them like
any other decision.
"""

from __future__ import annotations

import bisect
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import accumulate, compress, repeat
from operator import itemgetter, methodcaller
from typing import TYPE_CHECKING, Any, NamedTuple

from ..exceptions import TraceError
from .chain._json import JSONObject, Metadata, Row, _short
from .chain.columns import (
    NO_ROW,
    _complement,
    _copied_checked,
    _same_flags,
    decode_column,
    sparse_positions,
)
from .chain.metadata import CHAIN_VERSION, _moved_of, is_chained, resolve_chain_metadata
from .chain.resolver import _FLIP, FRAME_KEYS, ChainedRows, ChainResolver, decode_rows, rows_spec
from .keyframes import DecisionResolver
from .limits import FileLimits, PassBudget, check_rows

if TYPE_CHECKING:
    from .reader import DecisionRecord, TraceReader

KEEP = 64
"""How many decisions' patches the pass holds (a ``prev`` or a previous turn's decision further back is
resolved from its keyframe instead)."""

_FRAME_SET = frozenset(FRAME_KEYS)
_GETTERS = {k: methodcaller("get", k) for k in FRAME_KEYS}
_GET_OUTCOME = itemgetter("outcome")


def outcome_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """How many rows of a decision had each outcome (in order of first appearance)."""
    try:
        return dict(Counter(map(_GET_OUTCOME, rows)))
    except KeyError:
        return dict(Counter(str(r.get("outcome")) for r in rows))


class Changes(NamedTuple):
    """Two decisions' frame rows where they may differ: every position where a row of one is not the
    row of the other at the same position (and every position only one of them has), maybe more."""

    positions: list[int]
    before: dict[int, Row]
    """The earlier decision's rows (the frame keys) at those of the positions it has."""
    after: dict[int, Row]
    """The later decision's rows at those of the positions it has."""
    n_before: int
    n_after: int


class _Patch(NamedTuple):
    """How a decision's frame columns differ from its parent's (the decision they were patched from)."""

    parent: str | None
    depth: int
    """How many patches from the first decision (its parent: none) down to this one."""
    n_parent: int
    n: int
    positions: list[int]
    """Sorted: every position where the two may differ, and every position only one of them has."""
    before: dict[str, list[Any]]
    """Per frame key, the parent's values at the positions below ``n_parent``."""
    after: dict[str, list[Any]]
    """Per frame key, this decision's values at the positions below ``n``."""
    keys: frozenset[str]
    """The frame keys its rows hold (the others read as None)."""
    counts: dict[str, int]
    first: dict[Any, int] | None
    """Where each outcome first appears (None: the counts are not of plain outcome values)."""
    names: tuple[str, ...] | None = None
    """Every column of its rows (``chain.rows.keys``, the ones not patched here too): a delta without
    ``keys`` has its prev's (None: an older encoding's decision)."""


class _Held(NamedTuple):
    meta: Metadata | None
    """A chained decision's metadata, resolved (what ``chain.same`` of a later one refers to) but for
    ``shape.moved``; None for an older encoding's."""
    patch: _Patch | None
    """None: the decision has no rows (an older encoding's, damaged)."""
    moved: Any = None
    """The runs its ``shape.moved`` expands from (``chain.moved``, its own or its prev's), not expanded."""


class _Align:
    """``chain.rows.align`` without its empty segments, with their starts for bisection."""

    __slots__ = ("prefix", "segs", "starts")

    def __init__(self, align: list[list[int]]) -> None:
        self.segs = [seg for seg in align if seg[1]]
        self.starts = [seg[0] for seg in self.segs]
        first = self.segs[0] if self.segs else None
        self.prefix = first[1] if first is not None and first[0] == 0 == first[2] else 0
        """The rows before this position are aligned to their own position (the history, mostly)."""

    def first(self, pos: int) -> int:
        """The index of the first segment that may hold ``pos`` or come after it."""
        return max(0, bisect.bisect_right(self.starts, pos) - 1)


def _pick(col: Sequence[Any] | Mapping[int, Any], positions: list[int]) -> list[Any]:
    if not positions:
        return []
    if len(positions) == 1:
        return [col[positions[0]]]
    return list(itemgetter(*positions)(col))


def _set_at(col: list[Any], positions: list[int], values: list[Any]) -> None:
    deque(map(col.__setitem__, positions, values), maxlen=0)  # in C


class FramePass:
    """The decisions of one agent of a run, in file order, with their frame columns (see the module
    docstring): :meth:`records` yields each decision's metadata without its rows; :meth:`counts` and
    :meth:`changes` answer for any of the last :data:`KEEP` decisions read."""

    def __init__(self, reader: TraceReader, run_id: str, agent: str, *, parts: Sequence[str] | None = None,
                 whole: Callable[[int | None], bool] | None = None, keep: int = KEEP,
                 budget: PassBudget | None = None) -> None:
        self._parts = tuple(parts) if parts is not None else None
        self._whole = whole
        self._reader = reader
        self._idx = reader._index(run_id)
        self._limits = FileLimits.of(self._idx.size, self._idx.seen)
        """What one decision may resolve to (trace/limits.py)."""
        self._budget = budget if budget is not None else PassBudget(self._idx.size)
        """What the pass may change in all (trace/limits.py): each decision is charged its patch's positions."""
        self._agent = agent
        self._keep = max(2, keep)
        self._cols: dict[str, list[Any]] = {k: [] for k in FRAME_KEYS}
        self._n = 0
        self._keys: frozenset[str] = frozenset()
        self._names: tuple[str, ...] | None = None
        """Every column name of the decision held (see :attr:`_Patch.names`)."""
        self._at: str | None = None
        """The decision whose columns ``_cols`` holds (None: none yet)."""
        self._depth = 0
        """Its depth (see :attr:`_Patch.depth`)."""
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._resolver: ChainResolver | None = None
        self._refused: set[str] = set()
        """Decisions refused (``records(refused_as_records=True)``): one continuing them is refused at once."""

    # -- reading -----------------------------------------------------------------------------------

    def _load(self, event_id: str) -> Metadata | None:
        return self._reader._metadata_of(self._idx, event_id)

    def records(self, refused_as_records: bool = False) -> Iterator[DecisionRecord]:
        """Every ``context_decision`` of the agent in file order, as
        :meth:`~.reader.TraceReader.decision_records` yields them, but with ``decision.decisions`` None:
        a chained decision's metadata resolved (``partial`` True), an older encoding's as recorded with
        its delta resolved (``partial`` False). A decision that cannot be resolved (damaged, or past its
        limits: trace/limits.py) raises :class:`TraceError`; with ``refused_as_records`` it comes as a
        record whose ``problem`` says why (metadata empty, nothing held) and the pass goes on — a decision
        continuing it is refused at once.

        With ``parts``, a record holds only those keys of its metadata, unless ``whole(turn)`` says its
        turn wants all of it: what is not read is not kept (a chained decision's ``shape.moved`` is
        then not even expanded)."""
        from .reader import DecisionRecord

        reader, idx = self._reader, self._idx
        positions = [p for p in idx.by_type.get("context_decision", []) if idx.entries[p].agent == self._agent]
        resolver = DecisionResolver(lambda event_id: reader._decision_of(idx, event_id), limits=self._limits)
        for p, line in reader._raw_lines(idx, positions):  # parsed one by one: one decision held at a time
            entry = idx.entries[p]
            if self._budget.refusal is not None:  # the pass changed all a file of this size may: not read on
                problem = f"{idx.path}:{entry.line}: event {entry.event_id}: refused ({self._budget.refusal})"
                if not refused_as_records:
                    raise TraceError(problem)
                yield DecisionRecord(turn=entry.turn, step=entry.step or 0, event_id=entry.event_id, position=p,
                                     line=entry.line, metadata={}, problem=problem)
                continue
            obj = reader._parse_line(idx, p, line)
            raw = obj.get("metadata")
            meta: Metadata = dict(raw) if isinstance(raw, dict) else {}
            chained = is_chained(meta)
            whole = self._parts is None or (self._whole is not None and self._whole(entry.turn))
            try:
                meta = self._chained(entry.event_id, meta, whole) if chained else self._whole_decision(
                    entry.event_id, meta, resolver)
            except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
                what = "the chained decision" if chained else "the decision delta"
                problem = (f"{idx.path}:{entry.line}: event {entry.event_id}: {what} cannot be resolved "
                           f"({type(exc).__name__}: {exc})")
                if not refused_as_records:
                    raise TraceError(problem) from None
                self._refused.add(entry.event_id)
                self._held.pop(entry.event_id, None)  # (refused after its rows: its shape's moved positions)
                yield DecisionRecord(turn=entry.turn, step=entry.step or 0, event_id=entry.event_id, position=p,
                                     line=entry.line, metadata={}, partial=chained, problem=problem)
                continue
            if not whole:
                meta = {k: meta[k] for k in self._parts if k in meta}  # type: ignore[union-attr]
            yield DecisionRecord(turn=entry.turn, step=entry.step or 0, event_id=entry.event_id, position=p,
                                 line=entry.line, metadata=meta, partial=chained)

    def _whole_decision(self, event_id: str, meta: Metadata, resolver: DecisionResolver) -> Metadata:
        """An older encoding's decision (rows in full, or a delta against a keyframe)."""
        decision = meta.get("decision")
        rows = None
        if isinstance(decision, dict):
            limits = self._limits.for_decision(event_id, meta)
            if decision.get("decisions_delta"):
                decision = resolver.resolve(decision, limits)
            else:
                if isinstance(decision.get("decisions"), list):
                    check_rows(len(decision["decisions"]), limits, f"decision {event_id}: decisions")
                resolver.remember(event_id, decision)
            rows = decision.get("decisions")
            if isinstance(rows, list):
                meta["decision"] = {**decision, "decisions": None}
        if not isinstance(rows, list) or not all(type(r) is dict for r in rows):
            self._hold(event_id, _Held(None, None))  # no rows to show: the frame says so
            return meta
        cols = {k: list(map(_GETTERS[k], rows)) for k in FRAME_KEYS}
        try:
            counts = dict(Counter(map(_GET_OUTCOME, rows)))
            first: dict[Any, int] | None = {v: cols["outcome"].index(v) for v in counts}
        except KeyError:
            counts, first = dict(Counter(str(r.get("outcome")) for r in rows)), None
        self._replace(event_id, None, cols, len(rows), _FRAME_SET, counts, first)
        return meta

    def _chained(self, event_id: str, meta: Metadata, whole: bool) -> Metadata:
        """A chained decision's metadata resolved, its frame columns patched in; ``shape.moved`` (every
        sent row's place) only when ``whole``."""
        chain = meta["chain"]
        where = f"decision {event_id}"
        prev_id = chain.get("prev")
        moved = chain.get("moved")
        if "moved" in chain:  # left to the end: a frame does not read it
            meta = {**meta, "chain": {k: v for k, v in chain.items() if k != "moved"}}
        if prev_id is None:
            full = resolve_chain_metadata(meta, None, where, self._limits, event_id)
            limits = self._limits.for_decision(event_id, full)
            _check_version(chain, where)
            decoded = decode_rows(chain.get("rows"), None, where, build_rows=False, only=_FRAME_SET,
                                  limits=limits)
            self._replace(event_id, full, decoded.cols, decoded.length, frozenset(decoded.cols), moved=moved,
                          names=decoded.keys)
        else:
            if not isinstance(prev_id, str):
                raise ValueError(f"{where}: chain.prev is not an event id")
            if prev_id in self._refused:
                raise ValueError(f"{where}: its chain goes through decision {prev_id}, which cannot be resolved")
            held = self._held.get(prev_id)
            if held is not None and held.meta is not None and held.patch is not None and self._move(prev_id):
                prev_meta, prev_moved = held.meta, held.moved
            else:
                prev_meta, prev_moved = self._materialize(prev_id, where), None
            full = resolve_chain_metadata(meta, prev_meta, where, self._limits, event_id)
            limits = self._limits.for_decision(event_id, full)
            _check_version(chain, where)
            if moved is None and "shape" in (chain.get("same") or ()):
                moved = prev_moved  # its shape is its prev's: so is where the rows went
            self._delta(event_id, full, chain.get("rows"), where, moved, limits)
        if whole and moved is not None:
            shape = full.get("shape")
            if not isinstance(shape, dict):
                raise ValueError(f"{where}: chain.moved without a shape")
            full = {**full, "shape": {**shape, "moved": _moved_of(moved, where, limits)}}
        decision = full.get("decision")
        return {**full, "decision": {**(decision if isinstance(decision, dict) else {}), "decisions": None}}

    def _materialize(self, prev_id: str, where: str) -> Metadata:
        """A ``prev`` not held: resolved from its keyframe, and held as a keyframe."""
        loaded = self._load(prev_id)
        if loaded is None or not is_chained(loaded):
            raise ValueError(f"{where}: chain.prev {prev_id} is not a chained decision of this agent in this trace")
        if self._resolver is None:
            self._resolver = ChainResolver(self._load, keep=2, only=FRAME_KEYS, limits=self._limits)
        full, decoded = self._resolver._resolve(prev_id, loaded, rows=False)
        self._replace(prev_id, full, {k: list(v) for k, v in decoded.cols.items()}, decoded.length,
                      frozenset(decoded.cols), names=decoded.keys)
        return full

    # -- the columns -------------------------------------------------------------------------------

    def _hold(self, event_id: str, held: _Held) -> None:
        self._held[event_id] = held
        self._held.move_to_end(event_id)
        while len(self._held) > self._keep:
            self._held.popitem(last=False)

    def _replace(self, event_id: str, meta: Metadata | None, cols: dict[str, list[Any]], n: int,
                 keys: frozenset[str], counts: dict[str, int] | None = None,
                 first: dict[Any, int] | None = None, moved: Any = None, names: tuple[str, ...] | None = None) -> None:
        """A decision whose columns come whole (a keyframe, an older encoding's rows): its patch against
        the columns held, found by comparing them (in C); then they are its columns."""
        new: dict[str, list[Any]] = {k: (cols[k] if k in cols else [None] * n) for k in FRAME_KEYS}
        old, n_old = self._cols, self._n
        shared = min(n, n_old)
        mask = int.from_bytes(b"\x01" * shared, "little")  # a byte of 1 per position (all ones: none differs)
        for k in FRAME_KEYS:
            flags = _same_flags(new[k][:shared], old[k][:shared])
            if b"\x00" in flags:
                mask &= int.from_bytes(flags, "little")
        positions = list(compress(range(shared), mask.to_bytes(shared, "little").translate(_FLIP)))
        positions.extend(range(shared, max(n, n_old)))
        self._budget.take(len(positions), f"decision {event_id}")
        below_old = positions[:bisect.bisect_left(positions, n_old)]
        below_new = positions[:bisect.bisect_left(positions, n)]
        if counts is None:
            if "outcome" in keys:
                counts = dict(Counter(new["outcome"]))
                first = {v: new["outcome"].index(v) for v in counts}
            else:
                counts, first = ({"None": n} if n else {}), None
        patch = _Patch(self._at, self._depth + 1, n_old, n, positions,
                       {k: _pick(old[k], below_old) for k in FRAME_KEYS},
                       {k: _pick(new[k], below_new) for k in FRAME_KEYS}, keys, counts, first, names)
        self._cols, self._n, self._keys, self._at, self._depth = new, n, keys, event_id, patch.depth
        self._names = names
        self._hold(event_id, _Held(meta, patch, moved))

    def _delta(self, event_id: str, meta: Metadata, spec: Any, where: str, moved: Any, limits: FileLimits) -> None:
        """A chained decision against the columns held (its ``prev``'s): patched where its ops write
        and where its rows are not aligned to the same position. ``limits``: the decision's."""
        n_prev = self._n
        count, keys, columns, align = rows_spec(spec, n_prev, where, self._names, limits)
        if frozenset(k for k in keys if k in _FRAME_SET) != self._keys:
            # not the frame keys of its prev (an encoder makes a keyframe then): decoded whole against them
            prev = ChainedRows({k: self._cols[k] for k in self._keys}, None, n_prev, self._names)
            decoded = decode_rows(spec, prev, where, build_rows=False, only=_FRAME_SET, limits=limits)
            self._replace(event_id, meta, {k: list(v) for k, v in decoded.cols.items()}, decoded.length,
                          frozenset(decoded.cols), moved=moved, names=decoded.keys)
            return
        segs = _Align(align)
        ident = [[s, s + n] for s, n, p in segs.segs if s == p]
        elsewhere = set(_complement(ident, count))  # new rows, and rows that moved: every column's value is read
        vals: dict[str, dict[int, Any]] = {}
        plain: dict[str, list[list[int]]] = {}
        skipped: JSONObject = {}
        for key in keys:
            ops = columns[key]
            masked = isinstance(ops, list) and len(ops) == 1 and isinstance(ops[0], list) and ops[0][:1] == ["m"]
            if key not in _FRAME_SET:
                if not masked:
                    skipped[key] = ops
                continue
            col = self._cols[key] if align else None
            at = f"{where}: column {key!r}"
            if masked:
                ref = ops[0][1] if len(ops[0]) in (3, 4) else None
                if isinstance(ref, str) and ref in skipped and ref not in plain:
                    plain[ref] = _copied_checked(skipped[ref], count, f"{where}: column {ref!r}")
                vals[key] = _masked_values(ops[0], col, count, plain, segs, at)
            else:
                vals[key], plain[key] = _plain_values(ops, col, count, segs, at)
        written = elsewhere.union(*(v.keys() for v in vals.values()))
        self._budget.take(len(written) + max(0, n_prev - count), where)
        positions = sorted(written)
        positions.extend(range(count, n_prev))
        below_old = positions[:bisect.bisect_left(positions, n_prev)]
        below_new = positions[:bisect.bisect_left(positions, count)]
        before = {k: _pick(self._cols[k], below_old) for k in FRAME_KEYS}
        after: dict[str, list[Any]] = {}
        for k in FRAME_KEYS:
            got = vals.get(k)
            if got is None:  # not a column of these rows: None throughout, as in its prev
                after[k] = [None] * len(below_new)
                continue
            col = self._cols[k]
            after[k] = [got[p] if p in got else col[p] for p in below_new]
        parent = self._held[self._at].patch if self._at is not None and self._at in self._held else None
        _apply(self._cols, n_prev, count, positions, after)
        counts, first = _counts_after(parent, self._keys, below_old, before["outcome"], below_new, after["outcome"],
                                      self._cols["outcome"], count)
        patch = _Patch(self._at, self._depth + 1, n_prev, count, positions, before, after, self._keys, counts, first,
                       tuple(keys))
        self._n, self._at, self._depth, self._names = count, event_id, patch.depth, patch.names
        self._hold(event_id, _Held(meta, patch, moved))

    def _patch(self, event_id: str | None) -> _Patch | None:
        held = self._held.get(event_id) if event_id is not None else None
        return held.patch if held is not None else None

    def _path(self, start: str, start_depth: int, target: str) -> tuple[list[_Patch], list[_Patch]] | None:
        """The patches to undo (from ``start`` up) and to apply (down to ``target``), through the
        decision both descend from; None when the patches held do not reach it."""
        goal = self._patch(target)
        if goal is None:
            return None
        up: list[_Patch] = []
        down: list[_Patch] = []
        a: str | None = start
        b: str | None = target
        da, db = start_depth, goal.depth
        while a != b:
            if da >= db:
                p = self._patch(a)
                if p is None:
                    return None
                up.append(p)
                a, da = p.parent, da - 1
            else:
                p = self._patch(b)
                if p is None:
                    return None
                down.append(p)
                b, db = p.parent, db - 1
        return up, down[::-1]

    def _move(self, target: str) -> bool:
        """The columns moved to ``target``'s (False: it cannot be reached through the patches held)."""
        if self._at == target:
            return True
        path = self._path(self._at, self._depth, target) if self._at is not None else None
        if path is None:
            return False
        up, down = path
        for p in up:
            _apply(self._cols, p.n, p.n_parent, p.positions, p.before)
            self._n = p.n_parent
        for p in down:
            _apply(self._cols, p.n_parent, p.n, p.positions, p.after)
            self._n = p.n
        goal = self._patch(target)
        assert goal is not None
        self._keys, self._at, self._depth, self._names = goal.keys, target, goal.depth, goal.names
        return True

    # -- answers -----------------------------------------------------------------------------------

    def counts(self, event_id: str) -> dict[str, int] | None:
        """The outcome counts of a decision read (None: not held, or it has no rows)."""
        held = self._held.get(event_id)
        return dict(held.patch.counts) if held is not None and held.patch is not None else None

    def has_rows(self, event_id: str) -> bool | None:
        """Whether a decision read has rows (None: not held any more)."""
        held = self._held.get(event_id)
        return None if held is None else held.patch is not None

    def changes(self, before: str, after: str) -> Changes | None:
        """The frame rows of two decisions read wherever they may differ (None: one of them is not held,
        or has no rows). Read from the columns held and the patches on the way to the two decisions,
        in a dict of those positions only: the columns stay where the next decision will want them."""
        first, last = self._patch(before), self._patch(after)
        if first is None or last is None or self._at is None:
            return None
        to_after = self._path(self._at, self._depth, after)
        between = self._path(after, last.depth, before)
        if to_after is None or between is None:
            return None
        positions = sorted(set().union(*(p.positions for p in between[0] + between[1])))
        reach = sorted(set(positions).union(*(p.positions for p in to_after[0] + to_after[1])))
        below = reach[:bisect.bisect_left(reach, self._n)]
        held = dict(zip(below, zip(*[_pick(self._cols[k], below) for k in FRAME_KEYS], strict=True), strict=True))
        _walk(held, *to_after)
        rows_after = _rows_at(held, positions[:bisect.bisect_left(positions, last.n)])
        _walk(held, *between)
        return Changes(positions, _rows_at(held, positions[:bisect.bisect_left(positions, first.n)]), rows_after,
                       first.n, last.n)


def _rows_at(held: dict[int, tuple[Any, ...]], positions: list[int]) -> dict[int, Row]:
    """The rows at ``positions`` as dicts of the frame keys (made in C)."""
    values = _pick(held, positions)
    return dict(zip(positions, map(dict, map(zip, repeat(FRAME_KEYS), values)), strict=True))


def _walk(held: dict[int, tuple[Any, ...]], up: list[_Patch], down: list[_Patch]) -> None:
    """``held`` (position -> the frame keys' values) moved through the patches: ``up`` undone, then
    ``down`` applied (positions it does not hold stay as they are: the patches do not change them)."""
    for p, values, n_from, n_to in [*((p, p.before, p.n, p.n_parent) for p in up),
                                    *((p, p.after, p.n_parent, p.n) for p in down)]:
        ps = p.positions
        k = bisect.bisect_left(ps, n_to)
        held.update(zip(ps[:k], zip(*[values[key] for key in FRAME_KEYS], strict=True), strict=True))
        for gone in ps[k:] if n_to < n_from else ():
            held.pop(gone, None)


def _check_version(chain: JSONObject, where: str) -> None:
    if chain.get("v") != CHAIN_VERSION:
        raise ValueError(f"{where}: chain version {_short(chain.get('v'))} is not {CHAIN_VERSION}")


def _apply(cols: dict[str, list[Any]], n_from: int, n_to: int, positions: list[int],
           values: dict[str, list[Any]]) -> None:
    """Columns of ``n_from`` rows made the ``n_to`` rows whose values at ``positions`` (those below
    ``n_to``) are ``values``: ``positions`` hold every position from the smaller count to the larger."""
    low = bisect.bisect_left(positions, min(n_from, n_to))
    inner = positions[:low]
    for k, col in cols.items():
        vs = values[k]
        if n_to < n_from:
            del col[n_to:]
        _set_at(col, inner, vs[:low])
        if n_to > n_from:
            col.extend(vs[low:])


def _counts_after(parent: _Patch | None, keys: frozenset[str], below_old: list[int], before: list[Any],
                  below_new: list[int], after: list[Any], col: list[Any], n: int
                  ) -> tuple[dict[str, int], dict[Any, int] | None]:
    """A decision's outcome counts (in order of first appearance) from its parent's and the values its
    patch overwrote (``before`` at ``below_old``) and wrote (``after`` at ``below_new``); ``col`` is
    its outcome column, already patched."""
    if "outcome" not in keys:
        return ({"None": n} if n else {}), None
    if parent is None or parent.first is None:
        counts = dict(Counter(col))
        return counts, {v: col.index(v) for v in counts}
    tally = dict(parent.counts)
    for v in before:
        tally[v] -= 1
    for v in after:
        tally[v] = tally.get(v, 0) + 1
    earliest: dict[Any, int] = {}
    for p, v in zip(below_new, after, strict=True):
        earliest.setdefault(v, p)
    touched = set(below_old)
    first: dict[Any, int] = {}
    for v, c in tally.items():
        if not c:
            continue
        f = parent.first.get(v)
        if f is not None and f < n and f not in touched:
            first[v] = min(f, earliest.get(v, f))
            continue
        found = earliest.get(v)
        if f is not None:  # its first place was overwritten: the next place still holding it, or a new one
            try:
                later = col.index(v, f)
            except ValueError:
                later = None
            found = later if found is None else (found if later is None else min(found, later))
        assert found is not None
        first[v] = found
    return {v: tally[v] for v in sorted(first, key=first.__getitem__)}, first


def _op_length(op: Any) -> int:
    kind = op[0]
    try:
        if kind == "v":
            return len(op) - 1
        if kind == "k":
            return len(op[2]) if len(op) == 3 and isinstance(op[2], (list, str)) else 0
        if kind in ("q", "qd", "qn"):
            return len(op[1]) if len(op) == 2 and isinstance(op[1], list) else 0
        if kind == "n":
            return len(op[1]) if len(op) == 3 and isinstance(op[1], str) else 0
    except (TypeError, IndexError):
        return 0
    return 0


def _copy(col: list[Any], segs: _Align, a: int, b: int, out: dict[int, Any], hole: str) -> None:
    """Positions ``a .. b-1`` copied from the aligned previous rows: those aligned elsewhere than at their
    own position read into ``out``; a position without an aligned row raises ``hole``."""
    cur = a
    for s, n, p in segs.segs[segs.first(a):]:
        if s >= b:
            break
        e = s + n
        if e <= cur:
            continue
        if s > cur:
            raise ValueError(hole)
        hi = min(b, e)
        if s != p:
            out.update(zip(range(cur, hi), col[p + cur - s:p + hi - s], strict=True))
        cur = hi
        if cur >= b:
            break
    if cur < b:
        raise ValueError(hole)


def _aligned(col: list[Any], segs: _Align, a: int, b: int) -> list[Any]:
    """The aligned previous values at ``a .. b-1`` (:data:`NO_ROW` where a position has no aligned row)."""
    out: list[Any] = []
    cur = a
    for s, n, p in segs.segs[segs.first(a):]:
        if s >= b:
            break
        e = s + n
        if e <= cur:
            continue
        if s > cur:
            out.extend([NO_ROW] * (s - cur))
            cur = s
        hi = min(b, e)
        out.extend(col[p + cur - s:p + hi - s])
        cur = hi
    if cur < b:
        out.extend([NO_ROW] * (b - cur))
    return out


def _aligned_at(col: list[Any], segs: _Align, positions: list[int]) -> list[Any]:
    """The aligned previous values at the (sorted) ``positions``."""
    out: list[Any] = []
    i, todo = 0, segs.segs
    for q in positions:
        while i < len(todo) and todo[i][0] + todo[i][1] <= q:
            i += 1
        out.append(col[todo[i][2] + q - todo[i][0]] if i < len(todo) and todo[i][0] <= q else NO_ROW)
    return out


class _At:
    """Where the values of ops numbered from 0 go: the same positions (``within`` None), or the positions
    of ``within``'s ranges in order (a masked column's ``rest``: the positions its ``ref`` copied)."""

    __slots__ = ("starts", "within")

    def __init__(self, within: list[list[int]] | None = None) -> None:
        self.within = within
        self.starts: list[int] = list(accumulate((b - a for a, b in within), initial=0)) if within else []

    def pos(self, j: int) -> int:
        if self.within is None:
            return j
        k = bisect.bisect_right(self.starts, j) - 1
        return self.within[k][0] + j - self.starts[k]

    def ranges(self, a: int, b: int) -> list[list[int]]:
        """Where the values ``a .. b-1`` go, as ranges (found by bisection: a decision's ops look up many)."""
        within = self.within
        if within is None:
            return [[a, b]]
        out: list[list[int]] = []
        k = bisect.bisect_right(self.starts, a) - 1
        while a < b:
            if k >= len(within):
                raise ValueError("a range reaches past the positions it is numbered within")
            x, y = within[k]
            start = x + a - self.starts[k]
            end = min(y, x + b - self.starts[k])
            out.append([start, end])
            a += end - start
            k += 1
        return out

    def many(self, a: int, b: int) -> Sequence[int]:
        return range(a, b) if self.within is None else [p for x, y in self.ranges(a, b) for p in range(x, y)]

    def aligned(self, col: list[Any], segs: _Align, a: int, b: int) -> list[Any]:
        return _aligned(col, segs, a, b) if self.within is None else _aligned_at(col, segs, list(self.many(a, b)))


_IDENTITY = _At()


def _plain_values(ops: Any, col: list[Any] | None, count: int, segs: _Align, where: str, at: _At | None = None
                  ) -> tuple[dict[int, Any], list[list[int]]]:
    """A column's values where its ops write them or copy them from another position, and the ranges it
    copies (as :func:`~.decision_delta.decode_column` decodes them, with its checks). With ``at``, the
    ops are of ``count`` values that go where ``at`` says (the ranges copied are numbered as the ops)."""
    at = at or _IDENTITY
    if not isinstance(ops, list):
        raise ValueError(f"{where} is not a list of ops")
    out: dict[int, Any] = {}
    copied: list[list[int]] = []
    pos = 0
    prefix = segs.prefix
    for op in ops:
        if type(op) is int:
            if op < 0 or col is None or pos + op > count:
                raise ValueError(f"{where}: a copy of {op} value(s) at {pos} has no previous rows to copy")
            if op:
                end = pos + op
                for a, b in at.ranges(pos, end):
                    if b > prefix:  # within the prefix: nothing moves, nothing to read
                        _copy(col, segs, a, b, out, f"{where}: a copy at {pos} reaches a row that has no aligned "
                                                    "previous row")
                if copied and copied[-1][1] == pos:
                    copied[-1][1] = end
                else:
                    copied.append([pos, end])
                pos = end
            continue
        if type(op) is list and len(op) == 2 and op[0] == "v":  # one value: what a changed row mostly is
            out[at.pos(pos)] = op[1]
            pos += 1
            continue
        if not isinstance(op, list) or not op or not isinstance(op[0], str):
            raise ValueError(f"{where}: {_short(op)} is not an op")
        kind = op[0]
        values: Sequence[Any]
        if kind == "v":
            values = op[1:]
        elif kind in ("r", "a", "d"):
            want = {"r": 3, "a": 4, "d": 3}[kind]
            if len(op) != want or type(op[1]) is not int or op[1] < 0 or pos + op[1] > count:
                raise ValueError(f"{where}: {_short(op)} is not a valid {kind!r} op")
            n = op[1]
            if kind == "r":
                values = [op[2]] * n
            elif kind == "a":
                if type(op[2]) is not int or type(op[3]) is not int:
                    raise ValueError(f"{where}: {_short(op)}: an arithmetic run needs int first and step")
                values = range(op[2], op[2] + op[3] * n, op[3]) if op[3] else [op[2]] * n
            else:
                base = at.aligned(col, segs, pos, pos + n) if col is not None else None
                values, _ = decode_column([op], base, n, where)
        elif kind in ("k", "q", "qd", "qn", "n"):
            n = _op_length(op)
            base = at.aligned(col, segs, pos, min(pos + n, count)) if kind in ("qd", "qn", "n") and col is not None \
                else None
            values, _ = decode_column([op], base, n, where)
        elif kind == "s":
            # scattered changes: the values where it writes, the copies between them as any copy
            positions = sparse_positions(op, pos, count, where)
            if any(op[1]) and col is None:
                raise ValueError(f"{where}: a sparse op at {pos} has no previous rows to copy")
            places = positions if at.within is None else list(map(at.pos, positions))
            sub, _ = decode_column(op[2], _aligned_at(col, segs, places) if col is not None else None,
                                   len(positions), f"{where}: a sparse op's values")
            out.update(zip(places, sub, strict=True))
            for gap, p in zip(op[1], positions, strict=True):
                if gap:
                    for a, b in at.ranges(p - gap, p):
                        if b > prefix:
                            _copy(col, segs, a, b, out, f"{where}: a sparse op copies a row at {p - gap} that "  # type: ignore[arg-type]
                                                        "has no aligned previous row")
                    if copied and copied[-1][1] == p - gap:
                        copied[-1][1] = p
                    else:
                        copied.append([p - gap, p])
            pos += len(positions) + sum(op[1])
            continue
        else:
            raise ValueError(f"{where}: unknown op {kind!r}")
        if pos + len(values) > count:
            pos += len(values)
            break
        out.update(zip(at.many(pos, pos + len(values)), values, strict=True))
        pos += len(values)
    if pos != count:
        raise ValueError(f"{where} resolves to {pos} values, expected {count}")
    return out, copied


def _masked_values(op: list[Any], col: list[Any] | None, count: int, plain: dict[str, list[list[int]]],
                   segs: _Align, where: str) -> dict[int, Any]:
    """``["m", ref, ops(, rest)]``'s values where ``ref`` did not copy, and where it copied from another
    position or ``rest`` writes (as :func:`~.decision_delta._decode_masked` decodes it, with its checks)."""
    if len(op) not in (3, 4) or not isinstance(op[1], str) or op[1] not in plain:
        raise ValueError(f"{where}: {_short(op)} is not [\"m\", an earlier column with plain ops, ops(, rest)]")
    copied = plain[op[1]]
    if col is None:
        raise ValueError(f"{where}: a masked column has no previous rows to copy")
    positions = _complement(copied, count)
    sub, _ = decode_column(op[2], _aligned_at(col, segs, positions), len(positions), where)
    out = dict(zip(positions, sub, strict=True))
    if len(op) == 4:
        n = sum(b - a for a, b in copied)
        rest, _ = _plain_values(op[3], col, n, segs, f"{where}: its other positions", _At(copied))
        out.update(rest)
        return out
    for a, b in copied:
        if b > segs.prefix:
            _copy(col, segs, a, b, out, f"{where}: a masked column copies a row that has no aligned previous row")
    return out

