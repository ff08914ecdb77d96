"""Compact per-turn decisions in traces: each decision stored against an earlier one.

A ``context_decision`` holds one MessageDecision per input message, so a long session would write
O(history) rows every turn — O(n²) bytes over a run. Two encodings, both read everywhere
(TraceReader, rebuild, the JupyterLab viewer):

- **Encoding 2, chained decisions** (what the runtime writes; :class:`ChainEncoder`,
  :class:`ChainResolver`, docs/TRACE_FORMAT.md "Chained decisions"): each decision against the
  previous one of its agent, metadata that did not change referenced and metadata that changed a
  little patched or line-edited, keyframes that thin out as the history grows — see the section below.
- **Encoding 1, keyframes and deltas** (older traces; :class:`DeltaEncoder`, :func:`resolve_decision`,
  :class:`DecisionResolver`): every few turns a full list (a *keyframe*), otherwise a delta::

    "decision": {..., "decisions": null,
                 "decisions_delta": {"base": "e_000123", "count": 1840,
                                     "columns": {"outcome": {"same": [[0, 1800]], "values": [...]}, ...}}}

  Per column, ``same`` holds half-open ranges of positions whose value equals the base's at the
  same position, ``values`` the others in order. The base is always a keyframe, so resolving a delta
  needs exactly one more event.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from operator import add, eq, is_, itemgetter, mul, sub, truediv
from typing import Any, NamedTuple

from .prompt_sent import apply_line_edit, edit_ops
from .redact import ARG_CONTAINERS, NULLED_KEYS, redact_text

KEYFRAME_EVERY = 32
"""A keyframe at least this often (per agent), so any delta's base is close and cheap to load."""


def columns(rows: Sequence[dict[str, Any]]) -> dict[str, list[Any]]:
    """Rows to columns (every row has the same keys: they are MessageDecision dumps)."""
    if not rows:
        return {}
    return {key: list(map(itemgetter(key), rows)) for key in rows[0]}


_RUN = re.compile(b"\x01+")


def _spans(new: Sequence[Any], base: Sequence[Any]) -> tuple[list[list[int]], list[Any]]:
    """Half-open ranges where ``new`` equals ``base`` position by position, and the other values.

    Values of one column share a type (MessageDecision fields), so ``==`` is exact here. The
    comparison (``map``) and the search for runs of equal positions (a regex over one byte per
    position) run in C: this is on every turn's path, over every message of the history."""
    flags = bytes(map(eq, new, base)) + b"\x00" * max(0, len(new) - len(base))
    same = [[m.start(), m.end()] for m in _RUN.finditer(flags)]
    values: list[Any] = []
    pos = 0
    for a, b in same:
        values.extend(new[pos:a])
        pos = b
    values.extend(new[pos:])
    return same, values


def encode(rows: Sequence[dict[str, Any]], base_rows: Sequence[dict[str, Any]] | None,
           base_columns: dict[str, list[Any]] | None = None) -> dict[str, Any] | None:
    """A column-wise delta of ``rows`` against ``base_rows``; ``None`` when it would not be smaller.

    Each column (``outcome``, ``relevance_score`` ...) is stored as the ranges equal to the base's
    column at the same positions plus the other values in order — so a column that changes
    everywhere (relevance scores follow the new input) costs its values, and the ones that rarely
    change (role, outcome, fidelity, reason, token counts) cost almost nothing.
    """
    if base_rows is None or not rows:
        return None
    base_cols = base_columns if base_columns is not None else columns(base_rows)
    new_cols = columns(rows)
    if set(new_cols) != set(base_cols):
        return None
    out: dict[str, Any] = {}
    stored = 0
    for key, col in new_cols.items():
        same, values = _spans(col, base_cols[key])
        out[key] = {"same": same, "values": values}
        stored += len(values) + 2 * len(same)
    if stored * 2 > len(rows) * len(new_cols):
        return None
    return {"count": len(rows), "columns": out}


def resolve_decision(decision: dict[str, Any], load_base: Callable[[str], dict[str, Any] | None]) -> dict[str, Any]:
    """The decision with its full ``decisions`` list. ``load_base(event_id)`` returns that event's
    ``decision`` dict (a keyframe). A delta whose base cannot be loaded raises ``ValueError``."""
    delta = decision.get("decisions_delta")
    if not delta:
        return decision
    base = load_base(delta["base"])
    if base is None or base.get("decisions") is None:
        raise ValueError(f"decision delta refers to {delta['base']}, which is not a full decision in this trace")
    base_cols = columns(base["decisions"])
    count = int(delta["count"])
    cols: dict[str, list[Any]] = {}
    for key, spec in delta["columns"].items():
        base_col = base_cols.get(key, [])
        values = iter(spec["values"])
        col: list[Any] = []
        pos = 0
        for a, b in sorted(spec["same"]):
            while pos < a:
                col.append(next(values))
                pos += 1
            col.extend(base_col[a:b])
            pos = b
        col.extend(values)
        if len(col) != count:
            raise ValueError(f"decision delta against {delta['base']}: column {key!r} resolves to {len(col)} "
                             f"values, expected {count}")
        cols[key] = col
    keys = list(cols)
    full = {k: v for k, v in decision.items() if k != "decisions_delta"}
    full["decisions"] = [{k: cols[k][i] for k in keys} for i in range(count)]
    return full


class DeltaEncoder:
    """Per-agent state for writing decisions as keyframes and deltas (used by the runtime)."""

    def __init__(self, every: int = KEYFRAME_EVERY) -> None:
        self.every = every
        self._base: tuple[str, list[dict[str, Any]], dict[str, list[Any]]] | None = None
        self._since = 0

    def pack(self, decision: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The ``decision`` dict to write and whether it is a keyframe (then call :meth:`keyframe_written`)."""
        rows = decision["decisions"]
        if self._base is not None and self._since < self.every:
            base_id, base_rows, base_cols = self._base
            delta = encode(rows, base_rows, base_cols)
            if delta is not None:
                self._since += 1
                packed = {k: v for k, v in decision.items() if k != "decisions"}
                packed["decisions"] = None
                packed["decisions_delta"] = {"base": base_id, **delta}
                return packed, False
        return decision, True

    def keyframe_written(self, event_id: str, decision: dict[str, Any]) -> None:
        rows = decision["decisions"]
        self._base = (event_id, rows, columns(rows))
        self._since = 0


def _resolve_columns(delta: dict[str, Any], base_rows: Sequence[dict[str, Any]],
                     base_cols: dict[str, list[Any]]) -> tuple[dict[str, list[Any]], list[list[int]]]:
    """The delta's columns resolved against the base (as :func:`resolve_decision` resolves them, with
    slices), and the ranges of positions where *every* column equals the base's (clamped to it)."""
    count = int(delta["count"])
    base_id = delta.get("base")
    cols: dict[str, list[Any]] = {}
    common: list[list[int]] | None = None
    for key, spec in delta["columns"].items():
        base_col = base_cols.get(key, [])
        values = spec["values"]
        col: list[Any] = []
        pos = vi = 0
        ranges = []
        for a, b in sorted(spec["same"]):
            if pos < a:
                if vi + (a - pos) > len(values):
                    raise ValueError(f"decision delta against {base_id}: column {key!r} has fewer values than "
                                     "its ranges need")
                col.extend(values[vi:vi + a - pos])
                vi += a - pos
            piece = base_col[a:b]
            if piece:
                start = len(col)
                ranges.append([start, start + len(piece), a])
            col.extend(piece)
            pos = b
        col.extend(values[vi:])
        if len(col) != count:
            raise ValueError(f"decision delta against {base_id}: column {key!r} resolves to {len(col)} "
                             f"values, expected {count}")
        cols[key] = col
        # positions (in the result) copied from the base at the same position: only those can share its row
        aligned = [[s, e] for s, e, a in ranges if s == a]
        common = aligned if common is None else _intersect(common, aligned)
    return cols, common or []


def _intersect(left: list[list[int]], right: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    i = j = 0
    while i < len(left) and j < len(right):
        a, b = max(left[i][0], right[j][0]), min(left[i][1], right[j][1])
        if a < b:
            out.append([a, b])
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


class DecisionResolver:
    """Resolves the decisions of one trace in file order, cheaply: what the frame builder uses.

    :func:`resolve_decision` builds every row of a delta afresh; here the rows a delta copies from its
    base unchanged (every column equal at the same position) are the base's own row objects, so a
    decision costs the rows that changed plus a list copy, and consecutive decisions share their
    unchanged rows (``a is b``: a turn-to-turn diff skips them). Bases are kept as they are resolved
    (a keyframe's rows and columns); callers must not mutate the rows they get.
    """

    def __init__(self, load_base: Callable[[str], dict[str, Any] | None], keep: int = 4) -> None:
        self._load = load_base
        self._keep = keep
        # event id -> (rows, columns, the rows' keys when every row has exactly those, in that order)
        self._bases: dict[str, tuple[list[dict[str, Any]], dict[str, list[Any]], list[str] | None]] = {}

    def remember(self, event_id: str, decision: dict[str, Any]) -> None:
        """A full decision just read (a keyframe): later deltas against it use its rows."""
        rows = decision.get("decisions")
        if isinstance(rows, list) and event_id not in self._bases:
            try:
                cols = columns(rows)
            except (KeyError, TypeError):
                return  # not rows of one shape: resolve_decision's own path says what is wrong
            keys = list(rows[0]) if rows else []
            uniform = keys if all(list(r) == keys for r in rows) else None
            self._bases[event_id] = (rows, cols, uniform)
            while len(self._bases) > self._keep:
                self._bases.pop(next(iter(self._bases)))

    def resolve(self, decision: dict[str, Any]) -> dict[str, Any]:
        """``resolve_decision(decision)``, equal in value; raises ``ValueError`` as it does."""
        delta = decision.get("decisions_delta")
        if not delta:
            return decision
        base_id = delta["base"]
        base = self._bases.get(base_id)
        if base is None:
            loaded = self._load(base_id)
            if loaded is None or loaded.get("decisions") is None:
                raise ValueError(f"decision delta refers to {base_id}, which is not a full decision in this trace")
            self.remember(base_id, loaded)
            base = self._bases.get(base_id)
            if base is None:
                return resolve_decision(decision, lambda _id: loaded)
        base_rows, base_cols, uniform = base
        cols, common = _resolve_columns(delta, base_rows, base_cols)
        keys = list(cols)
        count = int(delta["count"])
        same_keys = uniform is not None and uniform == keys
        rows: list[dict[str, Any]] = []
        pos = 0
        for a, b in (common if same_keys else []):
            rows.extend({k: cols[k][i] for k in keys} for i in range(pos, a))
            rows.extend(base_rows[a:b])
            pos = b
        rows.extend({k: cols[k][i] for k in keys} for i in range(pos, count))
        full = {k: v for k, v in decision.items() if k != "decisions_delta"}
        full["decisions"] = rows
        return full


# -- chained decisions (trace encoding 2) -------------------------------------------------------------
#
# A keyframe every few decisions holds every history row, and a delta against a distant keyframe
# grows with the distance to it: bytes per turn grew with the run. Encoding 2 chains each decision to
# the previous one of its agent (``metadata.chain``, docs/TRACE_FORMAT.md "Chained decisions"):
#
#     "decision": {..., "decisions": null},
#     "chain": {"v": 2, "prev": "e_000123" | null,
#               "same": ["tools", "builder", "inputs.pins", ...],   # copied from the previous decision
#               "overflow": {"checkpoint": [[1, 187]]},            # inputs.overflow as runs, when not "same"
#               "patch": {"budget": {"used": [6868]}, ...},        # decision/report/budget patched (make_patch)
#               "sections": [{"e": 0, "content": [[0, 3], "…\n"]}, {"p": [1, 2]}],  # encode_sections
#               "moved": [[1, 3, "system", 0], ...],               # shape.moved as runs
#               "rows": {"count": 573, "keys": ["index", "role", ...],
#                        "align": [[0, 567, 0], [569, 4, 567]],     # [start, length, start in the previous]
#                        "columns": {"outcome": [530, ["v", "kept", "dropped"], 41], ...}}}
#
# A column is a list of ops, in order: an int ``n`` copies n values from the previous decision's
# aligned rows; ``["v", x, ...]`` literal values; ``["r", n, x]`` x repeated; ``["a", n, first, step]``
# an arithmetic run of ints; ``["d", n, k]`` the aligned previous values plus k (ints); ``["k", table,
# [i, ...]]`` the values table[i] (strings that repeat); ``["q", [k, ...]]``
# the numbers k/10000 (relevance scores, rounded to four decimals); ``["qd", [d, ...]]`` the numbers
# (k + d)/10000 where k/10000 is the aligned previous value. A column may instead be ``[["m", ref, ops]]``:
# the previous values, except where the earlier column ``ref`` did not copy (there: ``ops``' values).
# ``prev`` null is a keyframe (no copies, no aligned rows): written when the chain since the last one
# holds three times a keyframe's bytes, so keyframes cost at most a third of what the deltas between
# them cost. ``prev`` is always the previous decision of the agent (the one-pass readers keep only the
# last decisions decoded; a ``prev`` further back would make them walk back to a keyframe).
#
# What a record costs since issue 26 (docs/TRACE_FORMAT.md "Bytes per turn"): what changed, as far as
# the encoder can see it — metadata that moved a little as patches (``make_patch``), the adaptive
# sections as line edits of the previous decision's (``encode_sections``, the line edits of
# trace/prompt_sent.py), a shape whose ``moved`` alone changed in ``same``, rows other than history
# messages whose tokens changed left unaligned (``_unalign_changed``: the recall churn's columns then
# mask on the outcome's changes), a keyframe's string columns as value tables (``_table_op``).

CHAIN_VERSION = 2
SAME_PATHS = ("tools", "builder", "calibration", "shape", "tool_loop", "inputs.pins", "inputs.sections",
              "inputs.task", "inputs.overflow")
"""The metadata a chained decision may take from the previous one (``chain.same``)."""
MAX_CHAIN = 512
"""A keyframe at least every this many decisions of an agent (bounds a random read's walk back)."""
KEYFRAME_RATIO = 3
"""A keyframe once the deltas since the last one hold this many times its bytes: keyframes then cost at
most a third of what the deltas between them cost, at any length of the history (a keyframe of
string columns is a value table and indexes: about two thirds of what ops made it, so a random read
walks back about as many bytes as it did with a ratio of 2)."""
_MIN_RUN = 3
_MIN_COPY = 3
_Q = 10000


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<no aligned row>"


NO_ROW: Any = _Missing()
"""The aligned base value of a position that has no row in the previous decision."""


def _int_runs(values: Sequence[Any]) -> list[list[int]] | None:
    """``[1, 2, 3, 7]`` -> ``[[1, 3], [7, 7]]`` (inclusive runs, order kept); None when not all ints."""
    out: list[list[int]] = []
    for v in values:
        if type(v) is not int:
            return None
        if out and out[-1][1] + 1 == v:
            out[-1][1] = v
        else:
            out.append([v, v])
    return out


def _expand_runs(runs: Any, where: str) -> list[int]:
    if not isinstance(runs, list):
        raise ValueError(f"{where} is not a list of runs")
    out: list[int] = []
    for r in runs:
        if not (isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r) and r[0] <= r[1]):
            raise ValueError(f"{where}: {_short(r)} is not a run [first, last]")
        if r[1] - r[0] > 10_000_000:
            raise ValueError(f"{where}: the run {r} is implausibly long")
        out.extend(range(r[0], r[1] + 1))
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _ks(values: Sequence[Any]) -> list[int] | None:
    """The ints k with ``value == k / 10000`` (0 <= k < 2**31), or None when a value is not one."""
    # in C (maps): this runs over the relevance score of every history row on every call
    if not values or set(map(type, values)) != {float}:
        return None
    ks = list(map(round, map(mul, values, repeat(float(_Q)))))
    if min(ks) < 0 or max(ks) >= 1 << 31 or list(map(truediv, ks, repeat(_Q))) != list(values):
        return None
    return ks


def _k_of(x: Any, where: str) -> int:
    if type(x) is not float or not 0 <= x < 1 << 27:
        raise ValueError(f"{where}: a \"qd\" op adds to a previous value that is not a four-decimal number")
    k = round(x * _Q)
    if abs(x * _Q - k) > 1e-6:
        raise ValueError(f"{where}: a \"qd\" op adds to a previous value that is not a four-decimal number")
    return k


def _unpack_q(op: list[Any], base: list[Any] | None, pos: int, where: str) -> list[float]:
    if len(op) != 2 or not isinstance(op[1], list) or not all(type(k) is int for k in op[1]):
        raise ValueError(f"{where}: {_short(op)} is not [{op[0]!r}, [int, ...]]")
    if op[0] == "q":
        if any(k < 0 for k in op[1]):
            raise ValueError(f"{where}: a \"q\" op holds a negative number")
        return [k / _Q for k in op[1]]
    n = len(op[1])
    if base is None or pos + n > len(base):
        raise ValueError(f"{where}: a \"qd\" op at {pos} has no previous values to add to")
    piece = base[pos:pos + n]
    # _k_of for every value, in C: this runs over every history row of every decision
    if n and (set(map(type, piece)) != {float} or min(piece) < 0 or max(piece) >= 1 << 27):
        _k_of(next(x for x in piece if type(x) is not float or not 0 <= x < 1 << 27), where)
    scaled = list(map(mul, piece, repeat(float(_Q))))
    ks = list(map(round, scaled))
    if n and max(map(abs, map(sub, scaled, ks))) > 1e-6:
        _k_of(next(x for x, k in zip(piece, ks, strict=True) if abs(x * _Q - k) > 1e-6), where)
    out = list(map(truediv, map(add, ks, op[1]), repeat(_Q)))
    if n and min(out) < 0:
        raise ValueError(f"{where}: a \"qd\" op makes a negative number")
    return out


def _gap_ops(new: Sequence[Any], base: Sequence[Any], a: int, b: int, out: list[Any]) -> None:
    """Ops for new[a:b] (no copy from the base here): runs where they pay, else literals."""
    if b - a >= 8:
        # runs of 8+ floats (relevance scores: dense and distinct) are packed, the rest goes below
        floats = bytes(map(isinstance, new[a:b], repeat(float)))
        based = bytes(map(isinstance, base[a:b], repeat(float)))
        pos = a
        for m in _FLOATS.finditer(floats):
            seg = new[a + m.start():a + m.end()]
            ks = _ks(seg) if len(set(seg)) > len(seg) // 2 else None
            if ks is None:
                continue
            if a + m.start() > pos:
                _plain_ops(new, base, pos, a + m.start(), out)
            # within the run: against the previous values where they are numbers too, else as they are
            cut = m.start()
            for bm in _RUN.finditer(based, m.start(), m.end()):
                if bm.start() > cut:
                    out.append(["q", ks[cut - m.start():bm.start() - m.start()]])
                mine = ks[bm.start() - m.start():bm.end() - m.start()]
                bks = _ks(base[a + bm.start():a + bm.end()])
                out.append(["qd", list(map(sub, mine, bks))] if bks is not None else ["q", mine])
                cut = bm.end()
            if m.end() > cut:
                out.append(["q", ks[cut - m.start():]])
            pos = a + m.end()
        if pos < b:
            _plain_ops(new, base, pos, b, out)
        return
    _plain_ops(new, base, a, b, out)


_FLOATS = re.compile(b"\x01{8,}")


def _plain_ops(new: Sequence[Any], base: Sequence[Any], a: int, b: int, out: list[Any]) -> None:
    seg = new[a:b]
    lit: list[Any] = []
    i, n = 0, len(seg)
    while i < n:
        v = seg[i]
        tv = type(v)
        j = i + 1
        while j < n and type(seg[j]) is tv and seg[j] == v:
            j += 1
        if j - i >= _MIN_RUN:
            if lit:
                out.append(_literal(lit))
                lit = []
            out.append(["r", j - i, v])
            i = j
            continue
        if tv is int and i + 1 < n and type(seg[i + 1]) is int:
            step = seg[i + 1] - v
            j = i + 2
            while j < n and type(seg[j]) is int and seg[j] - seg[j - 1] == step:
                j += 1
            if j - i >= _MIN_RUN:
                if lit:
                    out.append(_literal(lit))
                    lit = []
                out.append(["a", j - i, v, step])
                i = j
                continue
            bv = base[a + i]
            if type(bv) is int:
                k = v - bv
                j = i + 1
                while j < n and type(seg[j]) is int and type(base[a + j]) is int and seg[j] - base[a + j] == k:
                    j += 1
                if j - i >= _MIN_RUN:
                    if lit:
                        out.append(_literal(lit))
                        lit = []
                    out.append(["d", j - i, k])
                    i = j
                    continue
        lit.append(v)
        i += 1
    if lit:
        out.append(_literal(lit))


def _table_op(values: Sequence[Any]) -> list[Any] | None:
    """``["k", table, [i, ...]]`` for a whole column of strings, booleans and nulls with few distinct
    values (a keyframe's reasons, outcomes, flags: runs interleaved with single values cost more as
    ops); None for any other column."""
    kinds = set(map(type, values))
    if not values or not kinds <= {str, bool, type(None)}:
        return None
    table = list(dict.fromkeys(values))
    if len(table) > 64:
        return None
    where = {v: k for k, v in enumerate(table)}  # str, bool and None never hash equal to one another
    return ["k", table, list(map(where.__getitem__, values))]


def _literal(values: list[Any]) -> list[Any]:
    """``["v", ...values]``, or ``["k", table, [index, ...]]`` for strings (and nulls) that repeat:
    a keyframe's reasons and roles cost an index each, not their text."""
    if len(values) >= 6 and all(type(v) is str or v is None for v in values):
        table = list(dict.fromkeys(values))
        if len(table) * 2 <= len(values):
            where = {v: k for k, v in enumerate(table)}
            return ["k", table, [where[v] for v in values]]
    return ["v", *values]


def _copied(ops: list[Any]) -> list[list[int]] | None:
    """The ranges ``[start, end)`` a column's plain ops copy from the base (None for a masked column)."""
    out: list[list[int]] = []
    pos = 0
    for op in ops:
        if type(op) is int:
            if op:
                out.append([pos, pos + op])
            pos += op
            continue
        kind = op[0]
        if kind == "m":
            return None
        pos += (len(op) - 1 if kind == "v" else len(op[2]) if kind == "k" else len(op[1]) if kind in ("q", "qd")
                else op[1])
    return out


def _complement(ranges: list[list[int]], count: int) -> list[int]:
    """The positions of ``range(count)`` in none of ``ranges`` (sorted, disjoint)."""
    out: list[int] = []
    pos = 0
    for a, b in ranges:
        out.extend(range(pos, a))
        pos = b
    out.extend(range(pos, count))
    return out


def _encode_masked(cols: dict[str, list[Any]], bases: dict[str, list[Any]], count: int) -> dict[str, list[Any]]:
    """Every column's ops; a column that changes only where an earlier one does (a recalled row changes
    its outcome, reason, fidelity, position...) is written as ``[["m", that column, ops]]``: its values at
    those positions only, the rest copied — when that is smaller."""
    enc: dict[str, list[Any]] = {}
    masks: list[tuple[str, list[int], bytes]] = []  # plain columns: name, changed positions, as flags
    for key, new in cols.items():
        base = bases[key]
        ops = encode_column(new, base)
        same = _same_flags(new, base)
        for ref, positions, flags in sorted(masks, key=lambda m: len(m[1])):
            # outside the mask every value must be its base's (then a copy): same | mask covers all
            if (int.from_bytes(same, "little") | int.from_bytes(flags, "little")) != (1 << (8 * count)) // 255:
                continue
            pick = itemgetter(*positions) if len(positions) > 1 else None
            sub_new = list(pick(new)) if pick else [new[i] for i in positions]
            sub_base = list(pick(base)) if pick else [base[i] for i in positions]
            masked = [["m", ref, encode_column(sub_new, sub_base)]]
            if len(json.dumps(masked, separators=(",", ":"), default=str)) < \
                    len(json.dumps(ops, separators=(",", ":"), default=str)):
                ops = masked
            break
        enc[key] = ops
        copied = _copied(ops)
        if copied is not None and len(masks) < 6:
            positions = _complement(copied, count)
            if positions and len(positions) < count:
                flags = bytearray(count)
                for i in positions:
                    flags[i] = 1
                masks.append((key, positions, bytes(flags)))
    return enc


def _same_flags(new: Sequence[Any], base: Sequence[Any]) -> bytes:
    """One byte per position: 1 where ``new`` equals ``base`` in value *and* type (``False == 0`` and
    ``1 == 1.0`` are not copies: JSON tells them apart). Computed in C."""
    values = bytes(map(eq, new, base))
    kinds = set(map(type, new)) | set(map(type, base))
    kinds.discard(type(None))
    kinds.discard(_Missing)
    if len(kinds) <= 1:  # one type (and None, which equals only None): equal values have equal types
        return values
    types = bytes(map(is_, map(type, new), map(type, base)))
    return (int.from_bytes(values, "little") & int.from_bytes(types, "little")).to_bytes(len(values), "little")


def encode_column(new: Sequence[Any], base: Sequence[Any] | None) -> list[Any]:
    """The ops of one column (``base``: the previous decision's aligned values, :data:`NO_ROW` where
    none; None for a keyframe). Copies are found in C (one byte per position and a regex)."""
    out: list[Any] = []
    if base is None:
        _gap_ops(new, [NO_ROW] * len(new), 0, len(new), out)
        table = _table_op(new)
        return [table] if table is not None and _size(table) < _size(out) else out
    flags = _same_flags(new, base)
    pos = 0
    for m in _RUN.finditer(flags):
        s, e = m.start(), m.end()
        if e - s < _MIN_COPY and e < len(new) and type(new[s]) is not str:
            continue  # a short copy inside changed values costs more than the values (scores, flags)
        if s - pos >= _MIN_RUN:
            _gap_ops(new, base, pos, s, out)
        elif s > pos:  # one or two changed values: no run to find
            out.append(["v", *new[pos:s]])
        out.append(e - s)
        pos = e
    if pos < len(new):
        _gap_ops(new, base, pos, len(new), out)
    return out


def align_rows(new: dict[str, list[Any]], prev: dict[str, list[Any]]) -> list[list[int]]:
    """``[[start, length, prev_start], ...]``: which rows of the previous decision the new rows continue.

    History rows keep their index from one decision to the next (the history only grows); rows after
    them (the current input, sections, pins) move down as it grows. So: the longest prefix whose
    ``index`` and ``source`` match position by position, then the remaining rows matched by what they
    are (source, section, index for history rows)."""
    n = len(new.get("index", []))
    m = len(prev.get("index", []))
    if not n or not m or "index" not in prev or "source" not in new or "source" not in prev:
        return []
    same = bytes(map(eq, new["index"], prev["index"])) + b"\x00"
    src = bytes(map(eq, new["source"], prev["source"])) + b"\x00"
    p = min(same.find(0), src.find(0))
    out: list[list[int]] = [[0, p, 0]] if p else []

    def key(cols: dict[str, list[Any]], i: int) -> tuple[Any, ...]:
        s = cols["source"][i]
        return (s, cols.get("section", [None] * (i + 1))[i], cols["index"][i] if s == "history" else None)

    seen: dict[tuple[Any, ...], list[int]] = {}
    for j in range(p, m):
        seen.setdefault(key(prev, j), []).append(j)
    for i in range(p, n):
        found = seen.get(key(new, i))
        if not found:
            continue
        j = found.pop(0)
        last = out[-1] if out else None
        if last is not None and last[0] + last[1] == i and last[2] + last[1] == j:
            last[1] += 1
        else:
            out.append([i, 1, j])
    return out


def _unalign_changed(align: list[list[int]], new: dict[str, list[Any]], prev: dict[str, list[Any]]
                     ) -> list[list[int]] | None:
    """``align`` without the rows that are not history messages and whose ``token_count_after``
    changed; None when there is none (or the columns to tell are missing)."""
    tn, tp, src = new.get("token_count_after"), prev.get("token_count_after"), new.get("source")
    if tn is None or tp is None or src is None:
        return None
    out: list[list[int]] = []
    dropped = False
    for start, length, prev_start in align:
        # history rows (almost all of them) keep their segment in one piece: checked in C
        if "history" in src[start:start + length] and all(map(eq, src[start:start + length], repeat("history"))):
            out.append([start, length, prev_start])
            continue
        for k in range(length):
            i, j = start + k, prev_start + k
            if src[i] != "history" and tn[i] != tp[j]:
                dropped = True
                continue
            last = out[-1] if out else None
            if last is not None and last[0] + last[1] == i and last[2] + last[1] == j:
                last[1] += 1
            else:
                out.append([i, 1, j])
    return out if dropped else None


def aligned_base(col: list[Any], align: list[list[int]], count: int) -> list[Any]:
    """The previous decision's values of one column at the new decision's positions (:data:`NO_ROW` where none)."""
    out: list[Any] = []
    pos = 0
    for start, length, prev_start in align:
        if start > pos:
            out.extend([NO_ROW] * (start - pos))
        out.extend(col[prev_start:prev_start + length])
        pos = start + length
    if pos < count:
        out.extend([NO_ROW] * (count - pos))
    return out


def _shape_moved_only(new: Any, prev: Any) -> list[list[Any]] | None:
    """``new``'s ``moved`` as runs when ``new`` is the ``prev`` shape but for ``moved`` (same keys, in the
    same order): the shape then goes in ``chain.same`` and its ``moved`` in ``chain.moved``."""
    if not (isinstance(new, dict) and isinstance(prev, dict) and isinstance(new.get("moved"), dict)
            and "moved" in prev and list(new) == list(prev)):
        return None
    if any(new[k] != prev[k] for k in new if k != "moved"):
        return None
    return _moved_runs(new["moved"])


def _plain_text(text: Any) -> bool:
    """Nothing in ``text`` is masked by the trace's redaction (its strictest mode, the secrets known):
    a line edit of it then resolves to what the writer's redaction of the whole text would."""
    return isinstance(text, str) and redact_text(text, content="redacted") == text


def encode_sections(new: Any, prev: Any) -> list[Any] | None:
    """``inputs.sections`` against the previous decision's (``chain.sections``): each section as
    ``{"p": i}`` / ``{"p": [i, n]}`` (equal to the previous decision's section(s) i ..), as ``{"e": i,
    "content": ops}`` (section i with its content rebuilt by line edits, :func:`~.prompt_sent.edit_ops`:
    the checkpoint or the turn digests moved on by a turn) or as it is. None when that is not smaller
    than the list itself, or either is not a list of sections."""
    if not (isinstance(new, list) and isinstance(prev, list) and prev and all(isinstance(x, dict) for x in new)
            and all(isinstance(x, dict) for x in prev)):
        return None
    by_name = {x.get("name"): j for j, x in enumerate(prev)}
    items: list[Any] = []
    for section in new:
        j = by_name.get(section.get("name"))
        base = prev[j] if j is not None else None
        if base is not None and j is not None and base == section:
            last = items[-1] if items else None
            ref = last.get("p") if isinstance(last, dict) and set(last) == {"p"} else None
            if type(ref) is int and ref + 1 == j:
                last["p"] = [ref, 2]  # type: ignore[index]
            elif isinstance(ref, list) and ref[0] + ref[1] == j:
                ref[1] += 1
            else:
                items.append({"p": j})
            continue
        if base is not None and list(base) == list(section) and _plain_text(base.get("content")) \
                and _plain_text(section.get("content")):
            ops = edit_ops(base, section)
            if ops is not None:
                edit = {"e": j, "content": ops}
                if _size(edit) < _size(section):
                    items.append(edit)
                    continue
        items.append(section)
    return items if _size(items) < _size(new) else None


def resolve_sections(items: Any, prev: Any, where: str) -> list[Any]:
    """``chain.sections`` (:func:`encode_sections`) against the previous decision's resolved sections."""
    if not isinstance(items, list):
        raise ValueError(f"{where}: chain.sections is not a list")
    out: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError(f"{where}: chain.sections has {_short(item)}, not a section or a reference")
        if "p" in item and len(item) == 1:
            ref = item["p"]
            start, n = (ref, 1) if type(ref) is int else (ref[0], ref[1]) if (
                isinstance(ref, list) and len(ref) == 2 and all(type(x) is int for x in ref)) else (-1, 0)
            if not isinstance(prev, list) or start < 0 or n < 1 or start + n > len(prev):
                raise ValueError(f"{where}: chain.sections refers to previous sections {_short(ref)}, which do "
                                 "not exist")
            out.extend(prev[start:start + n])
        elif "e" in item and set(item) == {"e", "content"}:
            j = item["e"]
            if type(j) is not int or not isinstance(prev, list) or not 0 <= j < len(prev) \
                    or not isinstance(prev[j], dict):
                raise ValueError(f"{where}: chain.sections edits previous section {_short(j)}, which does not exist")
            base = prev[j]
            content = base.get("content")
            text = apply_line_edit(content if isinstance(content, str) else None, item["content"],
                                   f"{where}: chain.sections[{len(out)}]")
            out.append({**base, "content": text})
        else:
            out.append(item)
    return out


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))


PATCH_KEYS = ("decision", "report", "budget")
"""The metadata a chained decision may record as a patch of the previous decision's (``chain.patch``):
what changes a little on every call (counts, utilisation, a note's numbers)."""
_WHOLE_KEYS = NULLED_KEYS | ARG_CONTAINERS
"""Keys whose values a patch never goes into (set whole): the writer's redaction treats what is under
them by their name, which a patch's own keys (list positions) would not carry."""


def make_patch(base: Any, new: Any) -> dict[str, Any] | None:
    """``new`` as a patch of ``base`` (both dicts, or lists of one length): ``{key: p}`` for each key
    whose value changed, ``p`` one of ``[value]`` (set), ``[]`` (removed), ``[a, text, b]`` (a string:
    the base's first ``a`` characters, ``text``, its last ``b``) or a patch (of a dict or a list of the
    same length: keys ``"0"``, ``"1"`` ...). None when it is not smaller than ``new``, or does not
    give ``new`` back exactly (key order and number types included)."""
    patch = _patch(base, new)
    if patch is None or _size(patch) >= _size(new):
        return None
    try:
        if json.dumps(apply_patch(base, patch, "patch"), default=str) != json.dumps(new, default=str):
            return None
    except ValueError:
        return None
    return patch


def _patch(base: Any, new: Any) -> dict[str, Any] | None:
    if isinstance(base, dict) and isinstance(new, dict):
        if [k for k in new if k in base] != [k for k in base if k in new]:
            return None  # the keys moved: a patch keeps the base's order
        out: dict[str, Any] = {k: [] for k in base if k not in new}
        for k, v in new.items():
            if k not in base:
                out[k] = [v]
            elif not _same_json(base[k], v):
                out[k] = _value_patch(base[k], v, k)
        return out
    if isinstance(base, list) and isinstance(new, list) and len(base) == len(new):
        return {str(i): _value_patch(b, v, None) for i, (b, v) in enumerate(zip(base, new, strict=True))
                if not _same_json(b, v)}
    return None


def _same_json(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b and (type(a) not in (dict, list) or _size(a) == _size(b))


def _value_patch(base: Any, new: Any, key: str | None) -> Any:
    whole: Any = [new]
    if key in _WHOLE_KEYS:
        return whole
    best, size = whole, _size(whole)
    if isinstance(base, str) and isinstance(new, str) and _plain_text(base) and _plain_text(new) \
            and not _ASTRAL.search(base) and not _ASTRAL.search(new):  # the viewer counts UTF-16 units
        a = 0
        limit = min(len(base), len(new))
        while a < limit and base[a] == new[a]:
            a += 1
        b = 0
        while b < limit - a and base[-1 - b] == new[-1 - b]:
            b += 1
        edit = [a, new[a:len(new) - b], b]
        if _size(edit) < size:
            best, size = edit, _size(edit)
    elif (isinstance(base, dict) and isinstance(new, dict)) or (
            isinstance(base, list) and isinstance(new, list) and key is not None and not _identifier(key)):
        sub = _patch(base, new)
        if sub is not None and _size(sub) < size:
            best = sub
    return best


_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def _identifier(key: str) -> bool:
    return key in ("id", "digest", "sha256") or key.endswith(("_id", "digest"))


def apply_patch(base: Any, patch: Any, where: str) -> Any:
    """``base`` with a :func:`make_patch` patch applied (a new value; ``base`` is not changed)."""
    if not isinstance(patch, dict):
        raise ValueError(f"{where}: {_short(patch)} is not a patch")
    if isinstance(base, dict):
        out = dict(base)
        for k, p in patch.items():
            value = _apply_value(base.get(k), k in base, p, f"{where}.{k}")
            if value is _DELETE:
                out.pop(k, None)
            else:
                out[k] = value
        return out
    if isinstance(base, list):
        items = list(base)
        for k, p in patch.items():
            if not (k.isdigit() and int(k) < len(items)):
                raise ValueError(f"{where}: a patch of a list of {len(items)} has the position {_short(k)}")
            value = _apply_value(items[int(k)], True, p, f"{where}[{k}]")
            if value is _DELETE:
                raise ValueError(f"{where}[{k}]: a patch removes an item of a list")
            items[int(k)] = value
        return items
    raise ValueError(f"{where}: a patch of {_short(base)}, which is neither an object nor a list")


_DELETE: Any = object()


_META_ORDER = ("step", "decision", "report", "budget", "request_digest", "history_len", "inputs")
"""How a decision's metadata starts (``ContextDecisionMetadata``'s order): a patched key is put back
at its place, so a resolved decision reads (and prints, ``--json``) in the order it did unpatched."""


def _in_written_order(out: dict[str, Any], patched: list[str]) -> dict[str, Any]:
    rank = {k: i for i, k in enumerate(_META_ORDER)}
    pending = sorted(patched, key=lambda k: rank.get(k, len(rank)))
    result: dict[str, Any] = {}
    for k, v in out.items():
        if k in patched:
            continue
        while pending and rank.get(pending[0], len(rank)) < rank.get(k, len(rank)):
            first = pending.pop(0)
            result[first] = out[first]
        result[k] = v
    for k in pending:
        result[k] = out[k]
    return result


def _apply_value(base: Any, present: bool, p: Any, where: str) -> Any:
    if isinstance(p, dict):
        if not present:
            raise ValueError(f"{where}: a patch of a value the previous decision does not have")
        return apply_patch(base, p, where)
    if not isinstance(p, list) or len(p) not in (0, 1, 3):
        raise ValueError(f"{where}: {_short(p)} is not [], [value], [a, text, b] or a patch")
    if not p:
        return _DELETE
    if len(p) == 1:
        return p[0]
    a, text, b = p
    if not (type(a) is int and type(b) is int and a >= 0 and b >= 0 and (text is None or isinstance(text, str))):
        raise ValueError(f"{where}: {_short(p)} is not [a, text, b]")
    if text is None or base is None:  # trace_content="none" nulls the text
        return None
    if not isinstance(base, str) or a + b > len(base):
        raise ValueError(f"{where}: [a, text, b] edits {_short(base)}, not a text of at least {a + b} characters")
    return base[:a] + text + base[len(base) - b:]


class ChainEncoder:
    """Per-agent state for writing decisions as a chain (encoding 2, used by the runtime)."""

    def __init__(self, max_chain: int = MAX_CHAIN) -> None:
        self.max_chain = max_chain
        self._prev_id: str | None = None
        self._prev_cols: dict[str, list[Any]] | None = None
        self._prev_meta: dict[str, Any] | None = None
        self._since = 0
        self._chain_bytes = 0
        self._keyframe_bytes = 0

    def pack(self, metadata: dict[str, Any], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """The metadata to write for a decision whose ``metadata["decision"]`` has no rows (``rows`` are
        its MessageDecision dumps); call :meth:`written` with the event id once it is written."""
        cols = columns(rows)
        keys = list(cols)
        count = len(rows)
        prev = self._prev_cols
        keyframe = (prev is None or self._since >= self.max_chain
                    or (self._keyframe_bytes and self._chain_bytes >= KEYFRAME_RATIO * self._keyframe_bytes)
                    or list(prev) != keys)
        spec: dict[str, Any] = {"count": count, "keys": keys}
        if keyframe or prev is None:
            enc = {k: encode_column(v, None) for k, v in cols.items()}
            spec["align"] = []
        else:
            align = align_rows(cols, prev)
            # rows other than history messages whose tokens changed (the input, a section that grew) are
            # left unaligned: they then change in every column, so the columns that change where a
            # recalled message comes or goes (and there) can be written for those positions only
            # (measured over turns 930-970 of a 1,000-turn run: 4.6 -> 4.2 KB per decision; choosing the
            # smaller of both alignments per decision saved 1% more for twice the encoding)
            align = _unalign_changed(align, cols, prev) or align
            enc = _encode_masked(cols, {k: aligned_base(prev[k], align, count) for k in cols}, count)
            spec["align"] = align
        spec["columns"] = enc
        size = len(json.dumps(spec, separators=(",", ":"), default=str))  # what the row part weighs
        chain: dict[str, Any] = {"v": CHAIN_VERSION, "prev": None if keyframe else self._prev_id}
        out = dict(metadata)
        inputs = out.get("inputs")
        if isinstance(inputs, dict):
            inputs = out["inputs"] = dict(inputs)
        same: list[str] = []
        if not keyframe and self._prev_meta is not None:
            for path in SAME_PATHS:
                head, _, tail = path.partition(".")
                holder, pholder = (out, self._prev_meta) if not tail else (inputs, self._prev_meta.get("inputs"))
                name = tail or head
                if isinstance(holder, dict) and isinstance(pholder, dict) and name in holder and name in pholder \
                        and holder[name] == pholder[name]:
                    same.append(path)
                    del holder[name]
                elif path == "shape" and isinstance(holder, dict) and isinstance(pholder, dict):
                    moved = _shape_moved_only(holder.get("shape"), pholder.get("shape"))
                    if moved is not None:  # the previous shape, but where the blocks went: chain.moved
                        same.append(path)
                        del holder[name]
                        chain["moved"] = moved
            if "inputs.sections" not in same and isinstance(inputs, dict) \
                    and isinstance(self._prev_meta.get("inputs"), dict):
                edited = encode_sections(inputs.get("sections"), self._prev_meta["inputs"].get("sections"))
                if edited is not None:
                    chain["sections"] = edited
                    del inputs["sections"]
        if not keyframe and self._prev_meta is not None:
            patches = {}
            for key in PATCH_KEYS:
                if key in out and key in self._prev_meta:
                    patch = make_patch(self._prev_meta[key], out[key])
                    if patch is not None:
                        patches[key] = patch
                        del out[key]
            if patches:
                chain["patch"] = patches
        if same:
            chain["same"] = same
        if isinstance(inputs, dict) and isinstance(inputs.get("overflow"), dict) and inputs["overflow"]:
            runs = {k: _int_runs(v) if isinstance(v, list) else None for k, v in inputs["overflow"].items()}
            if all(r is not None for r in runs.values()):
                chain["overflow"] = runs
                del inputs["overflow"]
        shape = out.get("shape")
        if "shape" not in same and isinstance(shape, dict) and isinstance(shape.get("moved"), dict):
            moved = _moved_runs(shape["moved"])
            if moved is not None:
                chain["moved"] = moved
                out["shape"] = {k: v for k, v in shape.items() if k != "moved"}
        chain["rows"] = spec
        out["chain"] = chain
        self._pending = (cols, metadata, keyframe, size)
        return out

    def written(self, event_id: str) -> None:
        cols, metadata, keyframe, size = self._pending
        self._prev_id, self._prev_cols, self._prev_meta = event_id, cols, metadata
        if keyframe:
            self._since, self._chain_bytes, self._keyframe_bytes = 0, 0, max(size, 1)
        else:
            self._since += 1
            self._chain_bytes += size


def decode_column(ops: Any, base: list[Any] | None, count: int, where: str, holes: bytes | None = None
                  ) -> tuple[list[Any], list[list[int]]]:
    """One column's values from its ops, and the ranges ``[start, end)`` it copied from the base.

    ``holes``: a byte per base position, 1 where the base has no aligned row (:data:`NO_ROW`) — what a
    copy must not reach, checked with one ``memchr`` instead of comparing every value with NO_ROW."""
    if not isinstance(ops, list):
        raise ValueError(f"{where} is not a list of ops")
    col: list[Any] = []
    copied: list[list[int]] = []
    for op in ops:
        pos = len(col)
        if type(op) is int:
            if op < 0 or base is None or pos + op > len(base):
                raise ValueError(f"{where}: a copy of {op} value(s) at {pos} has no previous rows to copy")
            piece = base[pos:pos + op]
            if (1 in holes[pos:pos + op]) if holes is not None else (NO_ROW in piece):
                raise ValueError(f"{where}: a copy at {pos} reaches a row that has no aligned previous row")
            col.extend(piece)
            if copied and copied[-1][1] == pos:
                copied[-1][1] = pos + op
            elif op:
                copied.append([pos, pos + op])
            continue
        if not isinstance(op, list) or not op or not isinstance(op[0], str):
            raise ValueError(f"{where}: {_short(op)} is not an op")
        kind = op[0]
        if kind == "v":
            col.extend(op[1:])
        elif kind == "k":
            if len(op) != 3 or not isinstance(op[1], list) or not isinstance(op[2], list) \
                    or not all(type(k) is int and 0 <= k < len(op[1]) for k in op[2]):
                raise ValueError(f"{where}: {_short(op)} is not [\"k\", [value, ...], [index, ...]]")
            col.extend(map(op[1].__getitem__, op[2]))
        elif kind in ("q", "qd"):
            col.extend(_unpack_q(op, base, pos, where))
        elif kind in ("r", "a", "d"):
            want = {"r": 3, "a": 4, "d": 3}[kind]
            if len(op) != want or type(op[1]) is not int or op[1] < 0 or pos + op[1] > count:
                raise ValueError(f"{where}: {_short(op)} is not a valid {kind!r} op")
            n = op[1]
            if kind == "r":
                col.extend([op[2]] * n)
            elif kind == "a":
                if type(op[2]) is not int or type(op[3]) is not int:
                    raise ValueError(f"{where}: {_short(op)}: an arithmetic run needs int first and step")
                col.extend(range(op[2], op[2] + op[3] * n, op[3]) if op[3] else [op[2]] * n)
            else:
                if type(op[2]) is not int or base is None or pos + n > len(base):
                    raise ValueError(f"{where}: {_short(op)} has no previous ints to add to")
                piece = base[pos:pos + n]
                if piece and set(map(type, piece)) != {int}:  # in C: this runs over the rows after a change
                    raise ValueError(f"{where}: {_short(op)} adds to previous values that are not ints")
                col.extend(map(add, piece, repeat(op[2])))
        else:
            raise ValueError(f"{where}: unknown op {kind!r}")
        if len(col) > count:
            break
    if len(col) != count:
        raise ValueError(f"{where} resolves to {len(col)} values, expected {count}")
    return col, copied


def _decode_masked(op: list[Any], base: list[Any] | None, count: int, plain: dict[str, list[list[int]]],
                   where: str, holes: bytes | None = None) -> tuple[list[Any], list[list[int]]]:
    """``["m", ref, ops]``: the aligned previous values, except where the earlier column ``ref`` did not
    copy — there the values ``ops`` decode to (against the previous values at those positions)."""
    if len(op) != 3 or not isinstance(op[1], str) or op[1] not in plain:
        raise ValueError(f"{where}: {_short(op)} is not [\"m\", an earlier column with plain ops, ops]")
    copied = plain[op[1]]
    positions = _complement(copied, count)
    if base is None or len(base) != count:
        raise ValueError(f"{where}: a masked column has no previous rows to copy")
    sub, _ = decode_column(op[2], [base[i] for i in positions], len(positions), where)
    col = list(base)
    for i, v in zip(positions, sub, strict=True):
        col[i] = v
    # the base shows through where ``ref`` copied: no hole may be there
    if any(1 in holes[a:b] for a, b in copied) if holes is not None else (NO_ROW in col):
        raise ValueError(f"{where}: a masked column copies a row that has no aligned previous row")
    return col, copied


class ChainedRows(NamedTuple):
    """A chained decision's rows resolved: columns, the rows (shared with the previous decision's where
    every column was copied), and its keys."""

    cols: dict[str, list[Any]]
    rows: list[dict[str, Any]] | None
    """None when not asked for (a decision only decoded on the way to another)."""
    length: int
    """The number of rows."""


FRAME_KEYS = ("index", "role", "source", "section", "outcome", "fidelity", "token_count_after")
"""The columns a replay frame reads from its decision's rows (the turn-to-turn diff and the outcome
counts): what :class:`ChainResolver` decodes with ``only=FRAME_KEYS``."""


def rows_spec(spec: Any, prev_length: int | None, where: str
              ) -> tuple[int, list[str], dict[str, Any], list[list[int]]]:
    """``chain.rows`` checked: its count, keys, columns (ops per key) and align (``prev_length``: the
    previous decision's number of rows, None for a keyframe). Raises ``ValueError`` saying what is wrong."""
    if not isinstance(spec, dict):
        raise ValueError(f"{where}: chain.rows is not an object")
    count, keys, columns_ = spec.get("count"), spec.get("keys"), spec.get("columns")
    if type(count) is not int or count < 0:
        raise ValueError(f"{where}: chain.rows.count is not a non-negative int")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys) or len(set(keys)) != len(keys):
        raise ValueError(f"{where}: chain.rows.keys is not a list of distinct names")
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
                only: frozenset[str] | None = None) -> ChainedRows:
    """``chain.rows`` against the previous decision's resolved rows (None for a keyframe); the row
    dicts only with ``build_rows`` (the columns are what the next decision needs).

    ``only``: decode only these columns (``prev`` decoded with the same ``only``): the rows then hold
    just them. A column left out costs nothing but a look at its ops when a masked column refers to
    it (the positions it did not copy); it is not checked — the full decode checks it."""
    count, keys, columns_, align = rows_spec(spec, prev.length if prev is not None else None, where)
    holes: bytes | None = None  # 1 where a position has no aligned previous row
    if prev is not None and align:
        mask = bytearray(b"\x01") * count
        for start, length, _ in align:
            mask[start:start + length] = bytes(length)
        holes = bytes(mask)
    cols: dict[str, list[Any]] = {}
    plain: dict[str, list[list[int]]] = {}  # columns decoded from plain ops: the ranges they copied
    common_mask: bytearray | None = None
    skipped: dict[str, Any] = {}  # columns left out (``only``): their ops, for a masked column's ref
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
            ref = ops[0][1] if len(ops[0]) == 3 else None
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
        return ChainedRows(cols, None, count)
    if only is not None:
        keys = [k for k in keys if k in only]
    if prev is not None and prev.rows is not None and common_mask is not None and align \
            and list(prev.cols) == keys and 1 in common_mask:
        # the previous rows at their new places (a copy never reaches a position without one), then a
        # new row at each position some column did not copy: the work is the changed rows, in C
        rows: list[dict[str, Any]] = aligned_base(prev.rows, align, count)
        positions = list(compress(range(count), common_mask.translate(_FLIP)))
        for i, row in zip(positions, _rows_at(cols, keys, positions), strict=True):
            rows[i] = row
        return ChainedRows(cols, rows, count)
    return ChainedRows(cols, _row_dicts(cols, keys, count), count)


_FLIP = bytes.maketrans(b"\x00\x01", b"\x01\x00")


def _rows_at(cols: dict[str, list[Any]], keys: list[str], positions: list[int]) -> list[dict[str, Any]]:
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


def _copied_checked(ops: Any, count: int, where: str) -> list[list[int]]:
    """:func:`_copied` of a column not decoded (``decode_rows(only=...)``): the ranges it copies."""
    try:
        copied = _copied(ops) if isinstance(ops, list) else None
        end = sum(op if type(op) is int else (len(op) - 1 if op[0] == "v" else len(op[2]) if op[0] == "k"
                                                else len(op[1]) if op[0] in ("q", "qd") else int(op[1]))
                  for op in ops)  # type: ignore[union-attr]
    except (TypeError, IndexError, KeyError) as exc:
        raise ValueError(f"{where}: its ops cannot be read ({exc})") from None
    if copied is None or end != count:
        raise ValueError(f"{where} resolves to {end} values, expected {count}")
    return copied


def _row_dicts(cols: dict[str, list[Any]], keys: list[str], end: int, start: int = 0) -> list[dict[str, Any]]:
    """The rows ``start .. end-1`` as dicts of ``keys`` (built in C: this is every changed row of every decision)."""
    if end <= start:
        return []
    if not keys:
        return [{} for _ in range(end - start)]
    ordered = [cols[k][start:end] for k in keys]
    return list(map(dict, map(zip, repeat(keys), zip(*ordered))))  # noqa: B905


def resolve_chain_metadata(meta: dict[str, Any], prev_meta: dict[str, Any] | None, where: str) -> dict[str, Any]:
    """The metadata with what ``chain.same`` and ``chain.overflow`` stand for put back, ``chain`` removed
    (the decision's rows are left to :func:`decode_rows`). ``prev_meta``: the previous decision's, resolved."""
    chain = meta.get("chain")
    if not isinstance(chain, dict):
        raise ValueError(f"{where}: chain is not an object")
    out = {k: v for k, v in meta.items() if k != "chain"}
    inputs = out.get("inputs")
    same = chain.get("same", [])
    overflow = chain.get("overflow")
    if (same or overflow is not None) and isinstance(inputs, dict):
        inputs = out["inputs"] = dict(inputs)
    if not isinstance(same, list) or not all(p in SAME_PATHS for p in same):
        raise ValueError(f"{where}: chain.same is not a list of {', '.join(SAME_PATHS)}")
    if same and prev_meta is None:
        raise ValueError(f"{where}: chain.same without a previous decision")
    for path in same:
        head, _, tail = path.partition(".")
        if not tail:
            if head in prev_meta:  # type: ignore[operator]
                out[head] = prev_meta[head]  # type: ignore[index]
            continue
        pin = prev_meta.get("inputs") if prev_meta else None
        if isinstance(pin, dict) and tail in pin:
            if not isinstance(inputs, dict):
                inputs = out["inputs"] = {}
            inputs[tail] = pin[tail]
    patches = chain.get("patch")
    if patches is not None:
        if not isinstance(patches, dict) or not all(k in PATCH_KEYS for k in patches):
            raise ValueError(f"{where}: chain.patch is not an object of {', '.join(PATCH_KEYS)}")
        for key, patch in patches.items():
            if not isinstance(prev_meta, dict) or key not in prev_meta:
                raise ValueError(f"{where}: chain.patch[{key!r}] without a previous {key}")
            out[key] = apply_patch(prev_meta[key], patch, f"{where}: chain.patch.{key}")
        out = _in_written_order(out, list(patches))
    if "sections" in chain:
        prev_inputs = prev_meta.get("inputs") if isinstance(prev_meta, dict) else None
        sections = resolve_sections(chain["sections"], prev_inputs.get("sections") if isinstance(prev_inputs, dict)
                                    else None, where)
        if not isinstance(inputs, dict):
            inputs = {}
        inputs = out["inputs"] = {**inputs, "sections": sections}
    if "moved" in chain:
        shape = out.get("shape")
        if not isinstance(shape, dict):
            raise ValueError(f"{where}: chain.moved without a shape")
        out["shape"] = {**shape, "moved": _moved_of(chain["moved"], where)}
    if overflow is not None:
        if not isinstance(overflow, dict):
            raise ValueError(f"{where}: chain.overflow is not an object")
        if not isinstance(inputs, dict):
            inputs = out["inputs"] = {}
        inputs["overflow"] = {k: _expand_runs(v, f"{where}: chain.overflow[{k!r}]") for k, v in overflow.items()}
    return out


def _moved_runs(moved: dict[str, Any]) -> list[list[Any]] | None:
    """``shape.moved`` (``{"4": ["kept", 2], "5": ["kept", 3], ...}``) as runs ``[first position, count,
    how, first index]`` (positions and indexes counting up by one) or ``[..., 0]`` (positions counting
    up, one index: merged messages), in its order; None when it is not of that shape."""
    out: list[list[Any]] = []
    for key, value in moved.items():
        if not (isinstance(key, str) and key.isdigit() and str(int(key)) == key and isinstance(value, list)
                and len(value) == 2 and isinstance(value[0], str) and type(value[1]) is int):
            return None
        pos = int(key)
        last = out[-1] if out else None
        if last is not None and last[2] == value[0] and last[0] + last[1] == pos:
            step = value[1] - last[3] if last[1] == 1 else (last[4] if len(last) == 5 else 1)
            if step in (0, 1) and last[3] + step * last[1] == value[1]:
                if step == 0 and len(last) == 4:
                    last.append(0)
                last[1] += 1
                continue
        out.append([pos, 1, value[0], value[1]])
    return out


def _moved_of(runs: Any, where: str) -> dict[str, list[Any]]:
    if not isinstance(runs, list):
        raise ValueError(f"{where}: chain.moved is not a list of runs")
    out: dict[str, list[Any]] = {}
    for r in runs:
        if not (isinstance(r, list) and len(r) in (4, 5) and type(r[0]) is int and type(r[1]) is int and r[0] >= 0
                and 0 < r[1] <= 1_000_000 and isinstance(r[2], str) and type(r[3]) is int
                and (len(r) == 4 or (r[4] in (0, 1) and type(r[4]) is int))):
            raise ValueError(f"{where}: chain.moved has {_short(r)}, not [position, count, how, index(, step)]")
        n, first = r[1], r[3]
        indexes = range(first, first + n) if len(r) == 4 or r[4] == 1 else repeat(first, n)
        # in C: a decision's moved blocks are every sent row's
        out.update(zip(map(str, range(r[0], r[0] + n)), map(list, zip(repeat(r[2], n), indexes))))  # noqa: B905
    return out


def is_chained(meta: Any) -> bool:
    return isinstance(meta, dict) and isinstance(meta.get("chain"), dict)


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

    def __init__(self, load: Callable[[str], dict[str, Any] | None], keep: int = 8,
                 only: Sequence[str] | None = None) -> None:
        self._load = load
        self._keep = keep
        self._only = frozenset(only) if only is not None else None
        self._done: dict[str, tuple[dict[str, Any], ChainedRows]] = {}
        self._last: tuple[dict[str, list[Any]], list[dict[str, Any]]] | None = None
        """The columns and rows of the decision resolved last with rows: a keyframe's rows equal to them
        at the same place are those objects, so sharing (and the frames' turn-to-turn shortcut) goes on
        across it."""

    def _remember(self, event_id: str, value: tuple[dict[str, Any], ChainedRows]) -> None:
        self._done[event_id] = value
        while len(self._done) > self._keep:
            self._done.pop(next(iter(self._done)))

    def resolve(self, event_id: str, meta: dict[str, Any], rows: bool = True) -> dict[str, Any]:
        """The full metadata; with ``rows=False`` its ``decision.decisions`` is None (the rows are
        decoded as columns all the same: the next decision is resolved from them)."""
        full, chained = self._resolve(event_id, meta, rows)
        decision = full.get("decision")
        full = dict(full)
        full["decision"] = {**(decision if isinstance(decision, dict) else {}),
                            "decisions": chained.rows if rows else None}
        return full

    def _resolve(self, event_id: str, meta: dict[str, Any], rows: bool = True
                 ) -> tuple[dict[str, Any], ChainedRows]:
        done = self._done.get(event_id)
        if done is not None:
            if rows and done[1].rows is None:
                cols, count = done[1].cols, done[1].length
                done = (done[0], ChainedRows(cols, _row_dicts(cols, list(cols), count), count))
                self._remember(event_id, done)
            return done
        # walk back to a keyframe or a decision already resolved, then forward
        todo: list[tuple[str, dict[str, Any]]] = [(event_id, meta)]
        seen = {event_id}
        base: tuple[dict[str, Any], ChainedRows] | None = None
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
            if prev_id in seen or len(todo) > 100_000:
                raise ValueError(f"decision {todo[-1][0]}: its chain loops back to {prev_id}")
            loaded = self._load(prev_id)
            if loaded is None or not is_chained(loaded):
                raise ValueError(f"decision {todo[-1][0]}: chain.prev {prev_id} is not a chained decision of "
                                 "this agent in this trace")
            seen.add(prev_id)
            todo.append((prev_id, loaded))
        for eid, m in reversed(todo):
            where = f"decision {eid}"
            full = resolve_chain_metadata(m, base[0] if base else None, where)
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
                                  where, build_rows=want_rows and not by_columns, only=self._only)
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
        assert base is not None
        return base


def _share_by_columns(last_cols: dict[str, list[Any]], last_rows: list[dict[str, Any]],
                      cols: dict[str, list[Any]], count: int) -> list[dict[str, Any]]:
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


def _share_equal(last: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with each row equal to ``last``'s at the same position replaced by that object (the
    comparisons in C; runs of equal rows copied as slices)."""
    same = bytes(map(eq, last, rows))
    out: list[dict[str, Any]] = []
    pos = 0
    for m in _ONES.finditer(same):
        out.extend(rows[pos:m.start()])
        out.extend(last[m.start():m.end()])
        pos = m.end()
    out.extend(rows[pos:])
    return out
