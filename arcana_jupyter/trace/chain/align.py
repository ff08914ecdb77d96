"""Which rows of the previous decision a chained decision's rows continue (``chain.rows.align``).

History rows keep their index as the history grows; the rows after them move down. The align
segments ``[start, length, previous start]`` say where each new row's previous values are, so a
column's ops copy from :func:`aligned_base` (the previous values at the new positions)."""

from __future__ import annotations

from itertools import repeat
from operator import eq
from typing import Any

from .columns import NO_ROW


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
