"""A chained decision's metadata against the previous decision's: what it copies, patches or edits.

``chain.same`` (metadata equal to the previous decision's), ``chain.patch`` (:mod:`.patch`),
``chain.sections`` (the adaptive sections as references and line edits of the previous ones),
``chain.moved`` (the shape's ``moved`` as runs) and ``chain.overflow`` (``inputs.overflow`` as runs);
:func:`resolve_chain_metadata` puts them all back. The rows are :mod:`.columns`' and :mod:`.resolver`'s."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Any

from ..limits import Budget, FileLimits
from ..line_edits import apply_line_edit, edit_ops
from ._json import JSONObject, Metadata, _short, _size
from .patch import _plain_text, apply_patch

CHAIN_VERSION = 2
SAME_PATHS = ("tools", "builder", "calibration", "shape", "tool_loop", "inputs.pins", "inputs.sections",
              "inputs.task", "inputs.overflow")
"""The metadata a chained decision may take from the previous one (``chain.same``)."""


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


def _expand_runs(runs: Any, where: str, budget: Budget) -> list[int]:
    """Inclusive runs ``[first, last]`` expanded, each counted against ``budget`` before it is (the turns of
    a decision's overflow: 400 runs of 10M each would pass a check of one run)."""
    if not isinstance(runs, list):
        raise ValueError(f"{where} is not a list of runs")
    out: list[int] = []
    for r in runs:
        if not (isinstance(r, list) and len(r) == 2 and all(type(x) is int for x in r) and r[0] <= r[1]):
            raise ValueError(f"{where}: {_short(r)} is not a run [first, last]")
        budget.take(r[1] - r[0] + 1, where)
        out.extend(range(r[0], r[1] + 1))
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


def resolve_sections(items: Any, prev: Any, where: str, limits: FileLimits | None = None) -> list[Any]:
    """``chain.sections`` (:func:`encode_sections`) against the previous decision's resolved sections:
    at most ``limits.rows`` sections of at most ``limits.chars`` characters each (a section's text edited
    from the previous one's, decision after decision, may not double its way to a bomb)."""
    if not isinstance(items, list):
        raise ValueError(f"{where}: chain.sections is not a list")
    limits = limits or FileLimits.of(None)
    count = Budget(limits.rows, "sections")
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
            count.take(n, f"{where}: chain.sections")
            out.extend(prev[start:start + n])
        elif "e" in item and set(item) == {"e", "content"}:
            j = item["e"]
            if type(j) is not int or not isinstance(prev, list) or not 0 <= j < len(prev) \
                    or not isinstance(prev[j], dict):
                raise ValueError(f"{where}: chain.sections edits previous section {_short(j)}, which does not exist")
            base = prev[j]
            content = base.get("content")
            text = apply_line_edit(content if isinstance(content, str) else None, item["content"],
                                   f"{where}: chain.sections[{len(out)}]", budget=Budget(limits.chars, "characters"))
            count.take(1, f"{where}: chain.sections")
            out.append({**base, "content": text})
        else:
            count.take(1, f"{where}: chain.sections")
            out.append(item)
    return out


PATCH_KEYS = ("decision", "report", "budget")
"""The metadata a chained decision may record as a patch of the previous decision's (``chain.patch``):
what changes a little on every call (counts, utilisation, a note's numbers)."""


_META_ORDER = ("step", "decision", "report", "budget", "request_digest", "history_len", "inputs")
"""How a decision's metadata starts (``ContextDecisionMetadata``'s order): a patched key is put back
at its place, so a resolved decision reads (and prints, ``--json``) in the order it did unpatched."""


def _in_written_order(out: Metadata, patched: list[str]) -> Metadata:
    rank = {k: i for i, k in enumerate(_META_ORDER)}
    pending = sorted(patched, key=lambda k: rank.get(k, len(rank)))
    result: Metadata = {}
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


def resolve_chain_metadata(meta: Metadata, prev_meta: Metadata | None, where: str,
                           limits: FileLimits | None = None, event_id: str | None = None) -> Metadata:
    """The metadata with what ``chain.same`` and ``chain.overflow`` stand for put back, ``chain`` removed
    (the decision's rows are left to :func:`decode_rows`). ``prev_meta``: the previous decision's, resolved.
    ``limits`` (trace/limits.py; None: those of a 16 MiB file): the sections are counted as they expand,
    then the overflow's turns and the moved positions, within the limits of the decision ``event_id``
    (:meth:`~..limits.FileLimits.for_decision`: no more than the trace before it accounts for); past
    them, :class:`~..limits.TooLarge`."""
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
                                    else None, where, limits)
        if not isinstance(inputs, dict):
            inputs = {}
        inputs = out["inputs"] = {**inputs, "sections": sections}
    if limits is not None and event_id is not None:
        limits = limits.for_decision(event_id, out)
    if "moved" in chain:
        shape = out.get("shape")
        if not isinstance(shape, dict):
            raise ValueError(f"{where}: chain.moved without a shape")
        out["shape"] = {**shape, "moved": _moved_of(chain["moved"], where, limits)}
    if overflow is not None:
        if not isinstance(overflow, dict):
            raise ValueError(f"{where}: chain.overflow is not an object")
        if not isinstance(inputs, dict):
            inputs = out["inputs"] = {}
        limits = limits or FileLimits.of(None)
        turns = Budget(limits.rows, "overflow turns", limits.why)
        inputs["overflow"] = {k: _expand_runs(v, f"{where}: chain.overflow[{k!r}]", turns) for k, v in overflow.items()}
    return out


def _moved_runs(moved: JSONObject) -> list[list[Any]] | None:
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


def _moved_of(runs: Any, where: str, limits: FileLimits | None = None) -> dict[str, list[Any]]:
    """``chain.moved``'s runs expanded (at most ``limits.rows`` positions in all: 300 runs of 1M each would
    pass a check of one run)."""
    if not isinstance(runs, list):
        raise ValueError(f"{where}: chain.moved is not a list of runs")
    limits = limits or FileLimits.of(None)
    positions = Budget(limits.rows, "moved positions", limits.why)
    out: dict[str, list[Any]] = {}
    for r in runs:
        if not (isinstance(r, list) and len(r) in (4, 5) and type(r[0]) is int and type(r[1]) is int and r[0] >= 0
                and 0 < r[1] <= 1_000_000 and isinstance(r[2], str) and type(r[3]) is int
                and (len(r) == 4 or (r[4] in (0, 1) and type(r[4]) is int))):
            raise ValueError(f"{where}: chain.moved has {_short(r)}, not [position, count, how, index(, step)]")
        n, first = r[1], r[3]
        positions.take(n, f"{where}: chain.moved")
        indexes = range(first, first + n) if len(r) == 4 or r[4] == 1 else repeat(first, n)
        # in C: a decision's moved blocks are every sent row's
        out.update(zip(map(str, range(r[0], r[0] + n)), map(list, zip(repeat(r[2], n), indexes))))  # noqa: B905
    return out


def is_chained(meta: Any) -> bool:
    return isinstance(meta, dict) and isinstance(meta.get("chain"), dict)
