"""Reading a chain (encoding 2): :class:`ChainResolver` resolves an agent's decisions in file order.

:func:`decode_rows` decodes ``chain.rows`` against the previous decision's resolved rows (sharing the
row objects every column copied), :func:`rows_spec` checks it; the resolver walks back to a keyframe
or a decision already resolved and forward again, with :func:`~.metadata.resolve_chain_metadata` for
the metadata. ``only`` (:data:`FRAME_KEYS`) is the replay frames' fast path."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from operator import eq, itemgetter
from typing import Any, NamedTuple

from ..limits import ROW_FIELDS, FileLimits, check_rows
from ._json import JSONObject, Metadata, Row, _short
from .align import aligned_base
from .columns import _copied_checked, _decode_masked, _same_flags, decode_column
from .metadata import CHAIN_VERSION, is_chained, resolve_chain_metadata


class ChainedRows(NamedTuple):
    """A chained decision's rows resolved: columns, the rows (shared with the previous decision's where
    every column was copied), and its keys."""

    cols: dict[str, list[Any]]
    rows: list[Row] | None
    """None when not asked for (a decision only decoded on the way to another)."""
    length: int
    """The number of rows."""
    keys: tuple[str, ...] | None = None
    """Every column's name, in order (also those not decoded): what a delta without ``keys`` has."""


FRAME_KEYS = ("index", "role", "source", "section", "outcome", "fidelity", "token_count_after")
"""The columns a replay frame reads from its decision's rows (the turn-to-turn diff and the outcome
counts): what :class:`ChainResolver` decodes with ``only=FRAME_KEYS``."""


def rows_spec(spec: Any, prev_length: int | None, where: str, prev_keys: Sequence[str] | None = None,
              limits: FileLimits | None = None) -> tuple[int, list[str], JSONObject, list[list[int]]]:
    """``chain.rows`` checked: its count, keys, columns (ops per key) and align (``prev_length``: the
    previous decision's number of rows, None for a keyframe; ``prev_keys``: its keys, what a delta
    without ``keys`` has). Raises ``ValueError`` saying what is wrong, :class:`~..limits.TooLarge` for
    more rows (or values) than ``limits`` allow (trace/limits.py: a decision of 2e8 rows is refused here,
    before a column is decoded)."""
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: chain.rows is not an object")
    count, keys, columns_ = spec.get("count"), spec.get("keys"), spec.get("columns")
    if "keys" not in spec:
        if prev_length is None or prev_keys is None:
            raise ValueError(f"{where}: chain.rows.keys is missing, and there is no previous decision to take "
                             "them from")
        keys = list(prev_keys)
    if type(count) is not int or count < 0:
        raise ValueError(f"{where}: chain.rows.count is not a non-negative int")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys) or len(set(keys)) != len(keys):
        raise ValueError(f"{where}: chain.rows.keys is not a list of distinct names")
    check_rows(count, limits, f"{where}: chain.rows.count")
    check_rows(count * len(keys), limits, f"{where}: chain.rows", "values", per_row=ROW_FIELDS)
    if not isinstance(columns_, dict) or set(columns_) != set(keys):
        raise ValueError(f"{where}: chain.rows.columns does not hold exactly the columns of chain.rows.keys")
    align = spec.get("align", [])
    if not isinstance(align, list):
        raise ValueError(f"{where}: chain.rows.align is not a list")
    pos = 0
    for seg in align:
        if not (isinstance(seg, list) and len(seg) == 3 and all(type(x) is int for x in seg)
                and seg[0] >= pos and seg[1] >= 0 and seg[2] >= 0 and seg[0] + seg[1] <= count):
            raise ValueError(f"{where}: chain.rows.align has {_short(seg)}, not [start, length, previous start] "
                             "in order")
        if prev_length is None or seg[2] + seg[1] > prev_length:
            raise ValueError(f"{where}: chain.rows.align refers to previous rows that do not exist")
        pos = seg[0] + seg[1]
    return count, keys, columns_, align


def decode_rows(spec: Any, prev: ChainedRows | None, where: str, build_rows: bool = True,
                only: frozenset[str] | None = None, limits: FileLimits | None = None) -> ChainedRows:
    """``chain.rows`` against the previous decision's resolved rows (None for a keyframe); the row
    dicts only with ``build_rows`` (the columns are what the next decision needs).

    ``only``: decode only these columns (``prev`` decoded with the same ``only``): the rows then hold
    just them. A column left out costs nothing but a look at its ops when a masked column refers to
    it (the positions it did not copy); it is not checked — the full decode checks it."""
    count, keys, columns_, align = rows_spec(spec, prev.length if prev is not None else None, where,
                                             prev.keys if prev is not None else None, limits)
    all_keys = tuple(keys)
    holes: bytes | None = None  # 1 where a position has no aligned previous row
    if prev is not None and align:
        mask = bytearray(b"\x01") * count
        for start, length, _ in align:
            mask[start:start + length] = bytes(length)
        holes = bytes(mask)
    cols: dict[str, list[Any]] = {}
    plain: dict[str, list[list[int]]] = {}  # columns decoded from plain ops: the ranges they copied
    common_mask: bytearray | None = None
    skipped: JSONObject = {}  # columns left out (``only``): their ops, for a masked column's ref
    for key in keys:
        ops = columns_[key]
        masked = isinstance(ops, list) and len(ops) == 1 and isinstance(ops[0], list) and ops[0][:1] == ["m"]
        if only is not None and key not in only:
            if not masked:
                skipped[key] = ops
            continue
        base = None
        if prev is not None and align:
            pcol = prev.cols.get(key)
            base = aligned_base(pcol, align, count) if pcol is not None else None
        if masked:
            ref = ops[0][1] if len(ops[0]) in (3, 4) else None
            if isinstance(ref, str) and ref in skipped and ref not in plain:
                plain[ref] = _copied_checked(skipped[ref], count, f"{where}: column {ref!r}")
            col, copied = _decode_masked(ops[0], base, count, plain, f"{where}: column {key!r}", holes)
        else:
            col, copied = decode_column(ops, base, count, f"{where}: column {key!r}",
                                        holes if base is not None else None)
            plain[key] = copied
        cols[key] = col
        if build_rows:
            # the positions every column copied: gaps between a column's copied ranges cleared in a
            # byte mask (slice assignments in C), not a Python merge of range lists per column
            if common_mask is None:
                common_mask = bytearray(b"\x01") * count
            pos = 0
            for a, b in copied:
                if a > pos:
                    common_mask[pos:a] = bytes(a - pos)
                pos = b
            if pos < count:
                common_mask[pos:count] = bytes(count - pos)
    if not build_rows:
        return ChainedRows(cols, None, count, all_keys)
    if only is not None:
        keys = [k for k in keys if k in only]
    if prev is not None and prev.rows is not None and common_mask is not None and align \
            and list(prev.cols) == keys and 1 in common_mask:
        # the previous rows at their new places (a copy never reaches a position without one), then a
        # new row at each position some column did not copy: the work is the changed rows, in C
        rows: list[Row] = aligned_base(prev.rows, align, count)
        positions = list(compress(range(count), common_mask.translate(_FLIP)))
        for i, row in zip(positions, _rows_at(cols, keys, positions), strict=True):
            rows[i] = row
        return ChainedRows(cols, rows, count, all_keys)
    return ChainedRows(cols, _row_dicts(cols, keys, count), count, all_keys)


_FLIP = bytes.maketrans(b"\x00\x01", b"\x01\x00")


def _rows_at(cols: dict[str, list[Any]], keys: list[str], positions: list[int]) -> list[Row]:
    """The rows at ``positions`` as dicts of ``keys`` (picked and built in C)."""
    if not positions:
        return []
    if not keys:
        return [{} for _ in positions]
    if len(positions) == 1:
        return [{k: cols[k][positions[0]] for k in keys}]
    pick = itemgetter(*positions)
    return list(map(dict, map(zip, repeat(keys), zip(*[pick(cols[k]) for k in keys]))))  # noqa: B905


_ONES = re.compile(b"\x01+")


def _row_dicts(cols: dict[str, list[Any]], keys: list[str], end: int, start: int = 0) -> list[Row]:
    """The rows ``start .. end-1`` as dicts of ``keys`` (built in C: this is every changed row of every decision)."""
    if end <= start:
        return []
    if not keys:
        return [{} for _ in range(end - start)]
    ordered = [cols[k][start:end] for k in keys]
    return list(map(dict, map(zip, repeat(keys), zip(*ordered))))  # noqa: B905


class ChainResolver:
    """Resolves chained decisions (encoding 2) of one agent in file order: each from the previous one.

    ``resolve(event_id, meta)`` returns the full metadata (``decision.decisions`` the rows); rows copied
    unchanged from the previous decision are its row objects (read-only). ``load(event_id)`` reads any
    decision's raw metadata, for a ``prev`` that is not the decision resolved just before.

    ``only`` (the frames' fast path, :data:`FRAME_KEYS`): decode only these columns, and give every
    decision its rows of just these keys — a row shared with the previous decision's wherever these
    columns were copied, so a decision costs the rows whose outcome, fidelity or tokens changed (not
    the positions and scores that move with every call), and the turn-to-turn diff skips the rest.
    ``only=()``: no column decoded at all, for a reader of the metadata alone (tools, model, digest);
    the rows are then None unless asked for, and hold no keys."""

    def __init__(self, load: Callable[[str], Metadata | None], keep: int = 8,
                 only: Sequence[str] | None = None, limits: FileLimits | None = None) -> None:
        self._load = load
        self._limits = limits
        self._keep = keep
        self._only = frozenset(only) if only is not None else None
        self._done: dict[str, tuple[Metadata, ChainedRows]] = {}
        self._failed: set[str] = set()
        """Decisions that could not be resolved (and those continuing them)."""
        self._last: tuple[dict[str, list[Any]], list[Row]] | None = None
        """The columns and rows of the decision resolved last with rows: a keyframe's rows equal to them
        at the same place are those objects, so sharing (and the frames' turn-to-turn shortcut) goes on
        across it."""

    @property
    def limits(self) -> FileLimits | None:
        """What one decision may resolve to (trace/limits.py: of the file read, and of the trace before
        each decision; None: of a 16 MiB file)."""
        return self._limits

    @limits.setter
    def limits(self, limits: FileLimits | None) -> None:
        if limits != self._limits:  # the file grew: a decision refused as too large for it may not be now
            self._failed.clear()
        self._limits = limits

    def _remember(self, event_id: str, value: tuple[Metadata, ChainedRows]) -> None:
        self._done[event_id] = value
        while len(self._done) > self._keep:
            self._done.pop(next(iter(self._done)))

    def resolve(self, event_id: str, meta: Metadata, rows: bool = True) -> Metadata:
        """The full metadata; with ``rows=False`` its ``decision.decisions`` is None (the rows are
        decoded as columns all the same: the next decision is resolved from them)."""
        full, chained = self._resolve(event_id, meta, rows)
        decision = full.get("decision")
        full = dict(full)
        full["decision"] = {**(decision if isinstance(decision, dict) else {}),
                            "decisions": chained.rows if rows else None}
        return full

    def _resolve(self, event_id: str, meta: Metadata, rows: bool = True
                 ) -> tuple[Metadata, ChainedRows]:
        done = self._done.get(event_id)
        if done is not None:
            if rows and done[1].rows is None:
                cols, count = done[1].cols, done[1].length
                done = (done[0], done[1]._replace(rows=_row_dicts(cols, list(cols), count)))
                self._remember(event_id, done)
            return done
        # walk back to a keyframe or a decision already resolved, then forward
        todo: list[tuple[str, Metadata]] = [(event_id, meta)]
        resolved: set[str] = set()
        try:
            base = self._back(todo)
            base = self._forward(todo, base, event_id, rows, resolved)
        except (ValueError, KeyError, TypeError, AttributeError, IndexError):
            # this decision and those between it and the one that failed: a later decision whose chain
            # goes through one of them is refused without walking it again (a chain of thousands after a
            # refused keyframe would walk back thousands of times)
            self._failed.update(eid for eid, _ in todo if eid not in resolved)
            raise
        assert base is not None
        return base

    def _back(self, todo: list[tuple[str, Metadata]]) -> tuple[Metadata, ChainedRows] | None:
        """``todo`` (the decision to resolve) extended back to a keyframe (the base is then None) or to
        a decision already resolved (the base)."""
        seen = {todo[0][0]}
        base: tuple[Metadata, ChainedRows] | None = None
        while True:
            chain = todo[-1][1].get("chain")
            prev_id = chain.get("prev") if isinstance(chain, dict) else None
            if prev_id is None:
                break
            if not isinstance(prev_id, str):
                raise ValueError(f"decision {todo[-1][0]}: chain.prev is not an event id")
            if prev_id in self._done:
                base = self._done[prev_id]
                break
            if prev_id in self._failed:  # refused already: the decisions continuing it are, at once
                raise ValueError(f"decision {todo[-1][0]}: its chain goes through decision {prev_id}, which cannot "
                                 "be resolved")
            if prev_id in seen or len(todo) > 100_000:
                raise ValueError(f"decision {todo[-1][0]}: its chain loops back to {prev_id}")
            loaded = self._load(prev_id)
            if loaded is None or not is_chained(loaded):
                raise ValueError(f"decision {todo[-1][0]}: chain.prev {prev_id} is not a chained decision of "
                                 "this agent in this trace")
            seen.add(prev_id)
            todo.append((prev_id, loaded))
        return base

    def _forward(self, todo: list[tuple[str, Metadata]], base: tuple[Metadata, ChainedRows] | None, event_id: str,
                 rows: bool, resolved: set[str]) -> tuple[Metadata, ChainedRows] | None:
        """The decisions of ``todo`` (last first) resolved from ``base`` (None: the last is a keyframe);
        each one's id added to ``resolved`` as it is."""
        for eid, m in reversed(todo):
            where = f"decision {eid}"
            full = resolve_chain_metadata(m, base[0] if base else None, where, self.limits, eid)
            limits = self.limits.for_decision(eid, full) if self.limits is not None else None
            chain = m["chain"]
            if chain.get("v") != CHAIN_VERSION:
                raise ValueError(f"{where}: chain version {_short(chain.get('v'))} is not {CHAIN_VERSION}")
            unshared = chain.get("prev") is None or base is None or base[1].rows is None
            light = bool(self._only)  # only=() decodes no column: the metadata alone (no rows)
            want_rows = light or (rows and eid == event_id)
            last = self._last
            # a keyframe of the frames' fast path after rows of the same keys: its rows are made where a
            # column differs from the last rows' only (the others are those objects), not all then compared
            by_columns = light and unshared and last is not None and last[1] is not None
            decoded = decode_rows(chain.get("rows"), base[1] if base and chain.get("prev") is not None else None,
                                  where, build_rows=want_rows and not by_columns, only=self._only,
                                  limits=limits)
            if by_columns and last is not None and last[1] is not None:
                decoded = decoded._replace(rows=_share_by_columns(last[0], last[1], decoded.cols, decoded.length))
            elif decoded.rows is not None and unshared and last is not None and last[1]:
                # a keyframe, or a decision whose base was decoded without rows (a turn's earlier step):
                # nothing was shared, so rows equal to the last rows made are those objects
                decoded = decoded._replace(rows=_share_equal(last[1], decoded.rows))
            if decoded.rows is not None:
                self._last = (decoded.cols, decoded.rows)
            base = (full, decoded)
            self._remember(eid, base)
            resolved.add(eid)
        return base


def _share_by_columns(last_cols: dict[str, list[Any]], last_rows: list[Row],
                      cols: dict[str, list[Any]], count: int) -> list[Row]:
    """The rows of ``cols`` (``count`` of them): ``last_rows``' object at each position where every
    column equals ``last_cols``' in value and type (what :func:`_share_equal` finds by comparing the
    rows), a new row elsewhere — made only there, the comparisons column by column in C."""
    keys = list(cols)
    if list(last_cols) != keys or not last_rows:
        return _share_equal(last_rows, _row_dicts(cols, keys, count)) if last_rows else _row_dicts(cols, keys, count)
    shared = min(count, len(last_rows))
    mask = int.from_bytes(b"\x01" * shared, "little")
    for k in keys:
        flags = _same_flags(cols[k][:shared], last_cols[k][:shared])
        if b"\x00" in flags:
            mask &= int.from_bytes(flags, "little")
    rows = list(last_rows[:shared])
    positions = list(compress(range(shared), mask.to_bytes(shared, "little").translate(_FLIP)))
    for i, row in zip(positions, _rows_at(cols, keys, positions), strict=True):
        rows[i] = row
    rows.extend(_row_dicts(cols, keys, count, shared))
    return rows


def _share_equal(last: list[Row], rows: list[Row]) -> list[Row]:
    """``rows`` with each row equal to ``last``'s at the same position replaced by that object (the
    comparisons in C; runs of equal rows copied as slices)."""
    same = bytes(map(eq, last, rows))
    out: list[Row] = []
    pos = 0
    for m in _ONES.finditer(same):
        out.extend(rows[pos:m.start()])
        out.extend(last[m.start():m.end()])
        pos = m.end()
    out.extend(rows[pos:])
    return out
