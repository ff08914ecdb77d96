"""Decision encoding 1, keyframes and deltas (what older traces hold; still read everywhere).

Every few turns a full list of rows (a *keyframe*), otherwise a delta against the last keyframe::

    "decision": {..., "decisions": null,
                 "decisions_delta": {"base": "e_000123", "count": 1840,
                                     "columns": {"outcome": {"same": [[0, 1800]], "values": [...]}, ...}}}

Per column, ``same`` holds half-open ranges of positions whose value equals the base's at the
same position, ``values`` the others in order. The base is always a keyframe, so resolving a delta
needs exactly one more event. :class:`DeltaEncoder` writes it, :func:`resolve_decision` reads one
decision, :class:`DecisionResolver` a trace's in file order (sharing the base's unchanged rows).
The runtime writes encoding 2 (:mod:`.chain`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import eq
from typing import Any

from .chain._json import Decision, JSONObject, Row, _short
from .chain.columns import _RUN, columns
from .limits import FileLimits, check_rows

KEYFRAME_EVERY = 32
"""A keyframe at least this often (per agent), so any delta's base is close and cheap to load."""


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


def encode(rows: Sequence[Row], base_rows: Sequence[Row] | None,
           base_columns: dict[str, list[Any]] | None = None) -> JSONObject | None:
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
    out: JSONObject = {}
    stored = 0
    for key, col in new_cols.items():
        same, values = _spans(col, base_cols[key])
        out[key] = {"same": same, "values": values}
        stored += len(values) + 2 * len(same)
    if stored * 2 > len(rows) * len(new_cols):
        return None
    return {"count": len(rows), "columns": out}


def resolve_decision(decision: Decision, load_base: Callable[[str], Decision | None],
                     limits: FileLimits | None = None) -> Decision:
    """The decision with its full ``decisions`` list. ``load_base(event_id)`` returns that event's
    ``decision`` dict (a keyframe). A delta whose base cannot be loaded raises ``ValueError``; one of
    more rows than ``limits`` allow (trace/limits.py), :class:`~.limits.TooLarge`."""
    delta = decision.get("decisions_delta")
    if not delta:
        return decision
    base = load_base(delta["base"])
    if base is None or base.get("decisions") is None:
        raise ValueError(f"decision delta refers to {delta['base']}, which is not a full decision in this trace")
    base_cols = columns(base["decisions"])
    count = _count(delta, limits)
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
            if len(col) > count:  # overlapping ranges: stop before they copy the base again and again
                break
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
        self._base: tuple[str, list[Row], dict[str, list[Any]]] | None = None
        self._since = 0

    def pack(self, decision: Decision) -> tuple[Decision, bool]:
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

    def keyframe_written(self, event_id: str, decision: Decision) -> None:
        rows = decision["decisions"]
        self._base = (event_id, rows, columns(rows))
        self._since = 0


def _count(delta: JSONObject, limits: FileLimits | None) -> int:
    """A delta's ``count``: an int within ``limits`` (trace/limits.py), else ``ValueError``."""
    count = delta["count"]
    if type(count) is not int or count < 0:
        raise ValueError(f"decision delta against {_short(delta.get('base'))}: count is not a non-negative int")
    check_rows(count, limits, f"decision delta against {_short(delta.get('base'))}")
    return count


def _resolve_columns(delta: JSONObject, base_rows: Sequence[Row], base_cols: dict[str, list[Any]],
                     limits: FileLimits | None = None) -> tuple[dict[str, list[Any]], list[list[int]]]:
    """The delta's columns resolved against the base (as :func:`resolve_decision` resolves them, with
    slices), and the ranges of positions where *every* column equals the base's (clamped to it)."""
    count = _count(delta, limits)
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
            if len(col) > count:  # overlapping ranges copy the base again and again: stop as soon as it shows
                break
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

    def __init__(self, load_base: Callable[[str], Decision | None], keep: int = 4,
                 limits: FileLimits | None = None) -> None:
        self._load = load_base
        self._keep = keep
        self.limits = limits
        # event id -> (rows, columns, the rows' keys when every row has exactly those, in that order)
        self._bases: dict[str, tuple[list[Row], dict[str, list[Any]], list[str] | None]] = {}

    def remember(self, event_id: str, decision: Decision) -> None:
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

    def next(self, event_id: str, decision: Decision, previous: list[Row] | None,
             limits: FileLimits | None = None) -> Decision:
        """The next decision of the trace in file order, resolved: a delta against its keyframe, or a
        keyframe whose rows equal to ``previous``'s (the decision before it) at the same place are those
        row objects, so sharing (and the turn-to-turn diff's shortcut) goes on. Raises as :meth:`resolve`;
        ``limits``: this decision's (trace/limits.py, ``FileLimits.for_decision``; default the resolver's)."""
        if decision.get("decisions_delta"):
            return self.resolve(decision, limits)
        rows = decision.get("decisions")
        if isinstance(rows, list):
            check_rows(len(rows), limits or self.limits, f"decision {_short(event_id)}: decisions")
        if isinstance(rows, list) and previous:
            merged = [old if old == row else row for old, row in zip(previous, rows, strict=False)]
            decision = {**decision, "decisions": merged + rows[len(merged):]}
        self.remember(event_id, decision)
        return decision

    def resolve(self, decision: Decision, limits: FileLimits | None = None) -> Decision:
        """``resolve_decision(decision)``, equal in value; raises ``ValueError`` as it does. ``limits``:
        this decision's (default the resolver's)."""
        delta = decision.get("decisions_delta")
        if not delta:
            return decision
        limits = limits or self.limits
        base_id = delta["base"]
        base = self._bases.get(base_id)
        if base is None:
            loaded = self._load(base_id)
            if loaded is None or loaded.get("decisions") is None:
                raise ValueError(f"decision delta refers to {base_id}, which is not a full decision in this trace")
            self.remember(base_id, loaded)
            base = self._bases.get(base_id)
            if base is None:
                return resolve_decision(decision, lambda _id: loaded, limits)
        base_rows, base_cols, uniform = base
        cols, common = _resolve_columns(delta, base_rows, base_cols, limits)
        keys = list(cols)
        count = _count(delta, limits)
        same_keys = uniform is not None and uniform == keys
        rows: list[Row] = []
        pos = 0
        for a, b in (common if same_keys else []):
            rows.extend({k: cols[k][i] for k in keys} for i in range(pos, a))
            rows.extend(base_rows[a:b])
            pos = b
        rows.extend({k: cols[k][i] for k in keys} for i in range(pos, count))
        full = {k: v for k, v in decision.items() if k != "decisions_delta"}
        full["decisions"] = rows
        return full
