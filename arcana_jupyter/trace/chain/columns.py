"""A chained decision's columns (``chain.rows.columns``): one column of row values as ops and back.

A decision's rows (MessageDecision dumps) go column by column (:func:`columns`); each column is
written against the previous decision's aligned values (:func:`~.align.aligned_base`) as a list of
ops — copies, literals, runs, arithmetic runs, deltas of ints, value tables, four-decimal numbers,
scattered changes (``["s", gaps, ops]``), nulls as a mask (``["n", "0110", ops]``) — or masked on an
earlier column's changes (``["m", ref, ops]``, and the other positions' ops: ``["m", ref, ops, rest]``).
:func:`encode_column` / :func:`decode_column` are the two directions; the op grammar is in the package
docstring."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Sequence
from itertools import accumulate, chain, compress, repeat
from operator import add, eq, is_, itemgetter, mul, sub, truediv
from typing import Any

from ._json import Row, _short, _size


def columns(rows: Sequence[Row]) -> dict[str, list[Any]]:
    """Rows to columns (every row has the same keys: they are MessageDecision dumps)."""
    if not rows:
        return {}
    return {key: list(map(itemgetter(key), rows)) for key in rows[0]}


_RUN = re.compile(b"\x01+")


_MIN_RUN = 3
_MIN_COPY = 3
_Q = 10000


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<no aligned row>"


NO_ROW: Any = _Missing()
"""The aligned base value of a position that has no row in the previous decision."""


def _ks(values: Sequence[Any]) -> list[int] | None:
    """The ints k with ``value == k / 10000`` (0 <= k < 2**31), or None when a value is not one."""
    # in C (maps): this runs over the relevance score of every history row on every call
    if not values or set(map(type, values)) != {float}:
        return None
    ks = list(map(round, map(mul, values, repeat(float(_Q)))))
    if min(ks) < 0 or max(ks) >= 1 << 31 or list(map(truediv, ks, repeat(_Q))) != list(values):
        return None
    return ks


def _k_of(x: Any, where: str, kind: str = "qd") -> int:
    if not _is_number(x) if kind == "qn" else type(x) is not float or not 0 <= x < 1 << 27:
        raise ValueError(f"{where}: a \"{kind}\" op adds to a previous value that is not a four-decimal number")
    if not 0 <= x < 1 << 27:
        raise ValueError(f"{where}: a \"{kind}\" op adds to a previous value that is not a four-decimal number")
    k = round(x * _Q)
    if abs(x * _Q - k) > 1e-6:
        raise ValueError(f"{where}: a \"{kind}\" op adds to a previous value that is not a four-decimal number")
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


def sparse_positions(op: Any, pos: int, count: int, where: str) -> list[int]:
    """The positions a ``["s", [gap, ...], ops]`` op at ``pos`` writes (each after ``gap`` copied values),
    checked: it must fit in ``count`` values."""
    if not (type(op) is list and len(op) == 3 and type(op[1]) is list and type(op[2]) is list
            and all(type(g) is int and g >= 0 for g in op[1])):
        raise ValueError(f"{where}: {_short(op)} is not [\"s\", [gap, ...], ops]")
    gaps = op[1]
    if pos + sum(gaps) + len(gaps) > count:
        raise ValueError(f"{where}: a sparse op at {pos} reaches past the {count} values")
    return [pos - 1 + p for p in accumulate(map(add, gaps, repeat(1)))]


def _unpack_sparse(op: Any, base: list[Any] | None, pos: int, count: int, where: str
                   ) -> tuple[list[Any], list[int]]:
    """``["s", gaps, ops]`` at ``pos``: the values ``ops`` decode to (against the previous values at the
    positions written) and the gaps (copies before each)."""
    positions = sparse_positions(op, pos, count, where)
    gaps = op[1]
    if any(gaps) and base is None:
        raise ValueError(f"{where}: a sparse op at {pos} has no previous rows to copy")
    sub_base = (list(itemgetter(*positions)(base)) if len(positions) > 1 else [base[p] for p in positions]) \
        if base is not None else None
    values, _ = decode_column(op[2], sub_base, len(positions), f"{where}: a sparse op's values")
    return values, gaps


def _is_number(x: Any) -> bool:
    return type(x) is float or type(x) is int  # JSON numbers (a bool is not one)


def _qn_op(new: Sequence[Any], base: Sequence[Any]) -> list[Any] | None:
    """``["qn", [e, ...]]`` for values that are nulls and four-decimal numbers (relevance scores that come,
    go and drift): each number as the change of the previous number there, or whole where there was
    none; None when a value is not one of these (or a previous number is not four-decimal)."""
    out: list[Any] = []
    for v, b in zip(new, base, strict=True):
        if v is None:
            out.append(None)
            continue
        if type(v) is not float or not 0 <= v < 1 << 27:
            return None
        k = round(v * _Q)
        if k / _Q != v:
            return None
        if _is_number(b):
            if not 0 <= b < 1 << 27 or abs(b * _Q - round(b * _Q)) > 1e-6:
                return None
            k -= round(b * _Q)
        out.append(k)
    return ["qn", out]


def _unpack_nulls(op: Any, base: list[Any] | None, pos: int, where: str) -> list[Any]:
    """``["n", "0110…", ops]`` at ``pos``: null for each 0, for each 1 the next of the values ``ops``
    decode to (against the previous values at those positions)."""
    if not (type(op) is list and len(op) == 3 and type(op[1]) is str and type(op[2]) is list
            and not op[1].strip("01")):
        raise ValueError(f"{where}: {_short(op)} is not [\"n\", \"0 or 1 per value\", ops]")
    mask = op[1]
    if base is not None and pos + len(mask) > len(base):
        raise ValueError(f"{where}: an \"n\" op at {pos} reaches past the previous values")
    ones = [pos + i for i, c in enumerate(mask) if c == "1"]
    values, _ = decode_column(op[2], [base[p] for p in ones] if base is not None else None, len(ones),
                              f"{where}: an \"n\" op's values")
    out: list[Any] = [None] * len(mask)
    for p, v in zip(ones, values, strict=True):
        out[p - pos] = v
    return out


def _nulls_op(new: Sequence[Any], base: Sequence[Any]) -> list[Any] | None:
    """``["n", mask, ops]`` for values of which some (not all) are null: the nulls a byte each, the others
    as ops of their own (a score or position that comes and goes with a row)."""
    flags = bytes(v is not None for v in new)
    if 1 not in flags or 0 not in flags:
        return None
    return ["n", flags.translate(_DIGIT).decode(), encode_column(list(compress(new, flags)),
                                                                 list(compress(base, flags)))]


_DIGIT = bytes.maketrans(b"\x00\x01", b"01")


def _unpack_qn(op: list[Any], base: list[Any] | None, pos: int, where: str) -> list[float | None]:
    """``["qn", [e, ...]]``: null for a null; for an int, the previous value there plus e/10000 when that
    is a number (it must be a four-decimal one), else e/10000."""
    if len(op) != 2 or type(op[1]) is not list or not all(e is None or type(e) is int for e in op[1]):
        raise ValueError(f"{where}: {_short(op)} is not [\"qn\", [int or null, ...]]")
    if base is not None and pos + len(op[1]) > len(base):
        raise ValueError(f"{where}: a \"qn\" op at {pos} reaches past the previous values")
    out: list[float | None] = []
    for j, e in enumerate(op[1]):
        if e is None:
            out.append(None)
            continue
        b = base[pos + j] if base is not None else None
        k = e + (_k_of(b, where, "qn") if _is_number(b) else 0)
        if k < 0:
            raise ValueError(f"{where}: a \"qn\" op makes a negative number")
        out.append(k / _Q)
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


def _table_op(values: Sequence[Any], ints: bool = False) -> list[Any] | None:
    """``["k", table, [i, ...]]`` for a whole column of strings, booleans and nulls with few distinct
    values (a keyframe's reasons, outcomes, flags: runs interleaved with single values cost more as
    ops) — with ``ints``, of strings, ints and nulls too (a sparse op's token counts); None for any
    other column."""
    kinds = set(map(type, values))
    if not values or not (kinds <= {str, bool, type(None)} or (ints and kinds <= {str, int, type(None)})):
        return None
    table = list(dict.fromkeys(values))
    if len(table) > 64:
        return None
    where = {v: k for k, v in enumerate(table)}  # str, bool and None never hash equal to one another
    return ["k", table, _indexes(list(map(where.__getitem__, values)), len(table))]


def _digits_below(text: str, n: int) -> bool:
    """Whether ``text`` is ASCII digits each below ``n`` (a value table's indexes as a string)."""
    return not text or (text.isascii() and text.isdigit() and int(max(text)) < n)


def _indexes(indexes: list[int], size: int) -> list[int] | str:
    """A value table's indexes: as a string of digits when the table has at most ten values (a byte each,
    not two)."""
    return "".join(map(str, indexes)) if size <= 10 else indexes


def _literal(values: list[Any]) -> list[Any]:
    """``["v", ...values]``, or ``["k", table, [index, ...]]`` for strings (and nulls) that repeat:
    a keyframe's reasons and roles cost an index each, not their text."""
    if len(values) >= 6 and all(type(v) is str or v is None for v in values):
        table = list(dict.fromkeys(values))
        if len(table) * 2 <= len(values):
            where = {v: k for k, v in enumerate(table)}
            return ["k", table, _indexes([where[v] for v in values], len(table))]
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
        if kind == "s":
            for gap in op[1]:
                if gap:
                    if out and out[-1][1] == pos:
                        out[-1][1] = pos + gap
                    else:
                        out.append([pos, pos + gap])
                pos += gap + 1
            continue
        pos += (len(op) - 1 if kind == "v" else len(op[2]) if kind == "k"
                else len(op[1]) if kind in ("q", "qd", "qn", "n") else op[1])
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
    """Every column's ops; a column that changes mostly where an earlier one does (a recalled row changes
    its outcome, reason, fidelity, score, position...) is written as ``[["m", that column, ops]]``: its
    values at those positions only, the rest copied — or ``[["m", that column, ops, rest]]``, ``rest``
    the ops of the other positions (a score that drifts elsewhere too) — when that is smaller."""
    enc: dict[str, list[Any]] = {}
    masks: list[tuple[str, list[int], int]] = []  # plain columns: name, changed positions, as flags (an int)
    full = (1 << (8 * count)) // 255
    for key, new in cols.items():
        base = bases[key]
        same_flags = _same_flags(new, base)
        ops = encode_column(new, base, same_flags)
        size = _size(ops)
        same = int.from_bytes(same_flags, "little")
        changed = full & ~same
        for ref, positions, flags in sorted(masks, key=lambda m: len(m[1])):
            inside, outside = changed & flags, changed & ~flags
            if not inside or (outside and outside.bit_count() * 2 > inside.bit_count()):
                continue  # mostly elsewhere: not worth the look
            pick = itemgetter(*positions) if len(positions) > 1 else None
            sub_new = list(pick(new)) if pick else [new[i] for i in positions]
            sub_base = list(pick(base)) if pick else [base[i] for i in positions]
            masked: list[Any] = ["m", ref, encode_column(sub_new, sub_base)]
            if outside:  # the other positions' ops too
                rest = _rest_ops(new, base, flags, count, same_flags)
                if rest is None:
                    continue
                masked.append(rest)
            if _size([masked]) < size:
                ops, size = [masked], _size([masked])
            if not outside:
                break
        enc[key] = ops
        copied = _copied(ops)
        if copied is not None and len(masks) < 6:
            positions = _complement(copied, count)
            if positions and len(positions) < count:
                mark = bytearray(count)
                for i in positions:
                    mark[i] = 1
                masks.append((key, positions, int.from_bytes(mark, "little")))
    return enc


def _rest_ops(new: Sequence[Any], base: Sequence[Any], mask: int, count: int, same: bytes) -> list[Any] | None:
    """A masked column's ``rest``: the ops of the positions outside ``mask`` (a byte per position, as an
    int: those its ref did not copy), in order; ``same`` is the column's :func:`_same_flags`."""
    rest = (((1 << (8 * count)) // 255) & ~mask).to_bytes(count, "little")
    if 1 not in rest:
        return None
    return encode_column(list(compress(new, rest)), list(compress(base, rest)), bytes(compress(same, rest)))


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


def encode_column(new: Sequence[Any], base: Sequence[Any] | None, flags: bytes | None = None) -> list[Any]:
    """The ops of one column (``base``: the previous decision's aligned values, :data:`NO_ROW` where
    none; None for a keyframe; ``flags``: its :func:`_same_flags`, when known). Copies are found in C
    (one byte per position and a regex)."""
    out: list[Any] = []
    if base is None:
        _gap_ops(new, [NO_ROW] * len(new), 0, len(new), out)
        table = _table_op(new)
        return [table] if table is not None and _size(table) < _size(out) else out
    if flags is None:
        flags = _same_flags(new, base)
    dense = _dense_ops(new, base, flags)
    if 1 not in flags:  # nothing copied (a sparse op's or a masked column's values): maybe a value table
        best = dense
        for op in (_table_op(new, ints=True), _qn_op(new, base), _nulls_op(new, base)):
            if op is not None and _size([op]) < _size(best):
                best = [op]
        return best
    if len(dense) <= 3:  # a copy, a change, a copy (most columns of a delta): nothing to scatter
        return dense
    sparse = _sparse_ops(new, base, flags)
    return sparse if sparse is not None and _size(sparse) < _size(dense) else dense


_FLIP = bytes.maketrans(b"\x00\x01", b"\x01\x00")


def _sparse_ops(new: Sequence[Any], base: Sequence[Any], flags: bytes) -> list[Any] | None:
    """The column as one ``["s", gaps, ops]`` (then a copy of what follows its last change): every changed
    value at the cost of its gap and its value in ``ops`` — for changes scattered among copies. None when
    nothing or everything changed."""
    n = len(new)
    changed = list(compress(range(n), flags.translate(_FLIP)))
    if not changed or len(changed) == n:
        return None
    gaps = list(map(sub, changed, [-1, *changed[:-1]]))
    gaps = [g - 1 for g in gaps]
    pick = itemgetter(*changed) if len(changed) > 1 else None
    sub_new = list(pick(new)) if pick else [new[changed[0]]]
    sub_base = list(pick(base)) if pick else [base[changed[0]]]
    out: list[Any] = [["s", gaps, encode_column(sub_new, sub_base)]]
    if changed[-1] + 1 < n:
        out.append(n - 1 - changed[-1])
    return out


def _dense_ops(new: Sequence[Any], base: Sequence[Any], flags: bytes) -> list[Any]:
    out: list[Any] = []
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
            if len(op) == 3 and isinstance(op[1], list) and type(op[2]) is str:  # indexes as digits
                if not _digits_below(op[2], len(op[1])):
                    raise ValueError(f"{where}: {_short(op)} is not [\"k\", [value, ...], \"digits\"]")
                col.extend(map(op[1].__getitem__, map(int, op[2])))
            elif len(op) != 3 or not isinstance(op[1], list) or not isinstance(op[2], list) \
                    or not all(type(k) is int and 0 <= k < len(op[1]) for k in op[2]):
                raise ValueError(f"{where}: {_short(op)} is not [\"k\", [value, ...], [index, ...]]")
            else:
                col.extend(map(op[1].__getitem__, op[2]))
        elif kind in ("q", "qd"):
            col.extend(_unpack_q(op, base, pos, where))
        elif kind == "qn":
            col.extend(_unpack_qn(op, base, pos, where))
        elif kind == "n":
            col.extend(_unpack_nulls(op, base, pos, where))
        elif kind == "s":
            values, gaps = _unpack_sparse(op, base, pos, count, where)
            for gap, v in zip(gaps, values, strict=True):
                if gap:
                    end = len(col) + gap
                    if (1 in holes[len(col):end]) if holes is not None else (NO_ROW in base[len(col):end]):  # type: ignore[index]
                        raise ValueError(f"{where}: a sparse op copies a row at {len(col)} that has no aligned "
                                         "previous row")
                    col.extend(base[len(col):end])  # type: ignore[index]
                    if copied and copied[-1][1] == end - gap:
                        copied[-1][1] = end
                    else:
                        copied.append([end - gap, end])
                col.append(v)
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
    copy — there the values ``ops`` decode to (against the previous values at those positions);
    ``["m", ref, ops, rest]``: and where ``ref`` copied, the values ``rest`` decodes to (the same way).
    Returns the values and the ranges copied from the previous values (those ``rest`` copied)."""
    if len(op) not in (3, 4) or not isinstance(op[1], str) or op[1] not in plain:
        raise ValueError(f"{where}: {_short(op)} is not [\"m\", an earlier column with plain ops, ops(, rest)]")
    copied = plain[op[1]]
    positions = _complement(copied, count)
    if base is None or len(base) != count:
        raise ValueError(f"{where}: a masked column has no previous rows to copy")
    sub, _ = decode_column(op[2], [base[i] for i in positions], len(positions), where)
    col = list(base)
    for i, v in zip(positions, sub, strict=True):
        col[i] = v
    if len(op) == 4:
        rest = list(chain.from_iterable(range(a, b) for a, b in copied))
        pick = itemgetter(*rest) if len(rest) > 1 else None
        values, local = decode_column(op[3], (list(pick(base)) if pick else [base[i] for i in rest]), len(rest),
                                      f"{where}: its other positions")
        _set_all(col, rest, values)
        return col, map_ranges(local, copied)
    # the base shows through where ``ref`` copied: no hole may be there
    if any(1 in holes[a:b] for a, b in copied) if holes is not None else (NO_ROW in col):
        raise ValueError(f"{where}: a masked column copies a row that has no aligned previous row")
    return col, copied


def _set_all(col: list[Any], positions: list[int], values: list[Any]) -> None:
    deque(map(col.__setitem__, positions, values), maxlen=0)  # in C


def map_ranges(local: list[list[int]], within: list[list[int]]) -> list[list[int]]:
    """Ranges ``[start, end)`` of the positions numbered within ``within`` (sorted disjoint ranges, their
    positions counted from 0 in order) as ranges of the positions themselves."""
    out: list[list[int]] = []
    k, offset = 0, 0  # within[k] starts at ``offset`` in local numbering
    for a, b in local:
        while a < b:
            while k < len(within) and offset + within[k][1] - within[k][0] <= a:
                offset += within[k][1] - within[k][0]
                k += 1
            if k == len(within):
                raise ValueError("a range reaches past the positions it is numbered within")
            start = within[k][0] + a - offset
            end = min(within[k][1], within[k][0] + b - offset)
            if out and out[-1][1] == start:
                out[-1][1] = end
            else:
                out.append([start, end])
            a += end - start
    return out


def _copied_checked(ops: Any, count: int, where: str) -> list[list[int]]:
    """:func:`_copied` of a column not decoded (``decode_rows(only=...)``): the ranges it copies."""
    try:
        copied = _copied(ops) if isinstance(ops, list) else None
        end = sum(op if type(op) is int else (len(op) - 1 if op[0] == "v" else len(op[2]) if op[0] == "k"
                                                else len(op[1]) if op[0] in ("q", "qd", "qn", "n")
                                                else sum(op[1]) + len(op[1]) if op[0] == "s" else int(op[1]))
                  for op in ops)  # type: ignore[union-attr]
    except (TypeError, IndexError, KeyError) as exc:
        raise ValueError(f"{where}: its ops cannot be read ({exc})") from None
    if copied is None or end != count:
        raise ValueError(f"{where} resolves to {end} values, expected {count}")
    return copied
