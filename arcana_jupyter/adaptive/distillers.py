"""Distillers: keep the signal of a large tool output in a few lines.

Each distiller recognises one shape — a Python traceback, JSON, a table (CSV / TSV, a pandas
frame's repr, a markdown table) or a log — and describes it: exception and last frames; keys,
structure and sizes; shape, columns and head rows; error / warning lines and level counts.
:func:`distill` picks the first that recognises the text (``text`` otherwise).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from .state import one_line

_TRACEBACK = re.compile(r"^Traceback \(most recent call last\):\s*$", re.M)
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (.+))?\s*$')
_EXC = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Iteration)\w*)(?::\s*(.*))?$")
_PANDAS_SHAPE = re.compile(r"^\[(\d+) rows x (\d+) columns\]\s*$", re.M)
_LEVEL = re.compile(r"\b(CRITICAL|FATAL|ERROR|ERR|WARNING|WARN|INFO|DEBUG|TRACE)\b")
_LEVEL_NAMES = {"ERR": "ERROR", "WARN": "WARNING", "FATAL": "CRITICAL"}
_MD_ROW = re.compile(r"^\s*\|.*\|\s*$")
_MD_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


class Distilled(BaseModel):
    """What a distiller found: the shape's name and a few descriptive lines."""

    model_config = ConfigDict(frozen=True)

    kind: str
    lines: list[str]

    def text(self) -> str:
        return "\n".join(self.lines)


# ----------------------------------------------------------------------------- traceback


def distill_traceback(text: str) -> Distilled | None:
    """Exception type and message, and the last three frames (file, line, function, code)."""
    matches = list(_TRACEBACK.finditer(text))
    if not matches:
        return None
    tail = text[matches[-1].end() :].splitlines()
    frames: list[tuple[str, str, str, str]] = []
    exc_type, exc_msg = "", ""
    for i, line in enumerate(tail):
        fm = _FRAME.match(line)
        if fm:
            code = tail[i + 1].strip() if i + 1 < len(tail) and not _FRAME.match(tail[i + 1]) else ""
            frames.append((fm.group(1), fm.group(2), fm.group(3) or "?", code))
            continue
        if line and not line.startswith((" ", "\t")):
            em = _EXC.match(line.strip())
            if em:
                exc_type, exc_msg = em.group(1), (em.group(2) or "").strip()
    if not exc_type:
        last = next((ln.strip() for ln in reversed(tail) if ln.strip()), "")
        exc_type, _, exc_msg = last.partition(":")
        exc_msg = exc_msg.strip()
    lines = [f"Python traceback: {exc_type}" + (f": {one_line(exc_msg, 300)}" if exc_msg else "")]
    if len(matches) > 1:
        lines.append(f"({len(matches)} tracebacks; the last one is described)")
    lines.append(f"{len(frames)} frame(s); last {min(3, len(frames))}:")
    for path, lineno, func, code in frames[-3:]:
        lines.append(f"  {path}:{lineno} in {func}" + (f" — {one_line(code, 120)}" if code else ""))
    return Distilled(kind="traceback", lines=lines)


# ----------------------------------------------------------------------------- JSON


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return f"object({len(value)} keys)"
    if isinstance(value, list):
        return f"array({len(value)})"
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    return f"string({len(value)})" if isinstance(value, str) and len(value) > 40 else "string"


def _describe(value: Any, depth: int, prefix: str, out: list[str], budget: list[int]) -> None:
    if budget[0] <= 0:
        return
    if isinstance(value, dict):
        for k, v in list(value.items())[:20]:
            if budget[0] <= 0:
                out.append(f"{prefix}…")
                return
            budget[0] -= 1
            out.append(f"{prefix}{k}: {_type_name(v)}")
            if depth > 1 and isinstance(v, (dict, list)):
                _describe(v, depth - 1, prefix + "  ", out, budget)
        if len(value) > 20:
            out.append(f"{prefix}… {len(value) - 20} more keys")
    elif isinstance(value, list) and value:
        first = value[0]
        kinds = sorted({_type_name(v).split("(")[0] for v in value})
        budget[0] -= 1
        out.append(f"{prefix}[items: {', '.join(kinds)}]")
        if isinstance(first, dict) and depth >= 1:
            keys = sorted({k for v in value if isinstance(v, dict) for k in v})
            out.append(f"{prefix}item keys: {', '.join(keys[:25])}" + (" …" if len(keys) > 25 else ""))


def distill_json(text: str) -> Distilled | None:
    """Top-level type and size, keys with their types and sizes (two levels), item keys of arrays."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return _json_lines(stripped)
    lines = [f"JSON {_type_name(data)}, {len(stripped):,} characters"]
    body: list[str] = []
    _describe(data, 2, "  ", body, [40])
    return Distilled(kind="json", lines=lines + body)


def _json_lines(text: str) -> Distilled | None:
    """JSON Lines: one object per line (every non-empty line must parse)."""
    rows: list[Any] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError:
            return None
    if len(rows) < 2:
        return None
    keys: dict[str, int] = {}
    for r in rows:
        if isinstance(r, dict):
            for k in r:
                keys[k] = keys.get(k, 0) + 1
    out = [f"JSON Lines: {len(rows):,} records, {len(text):,} characters"]
    if keys:
        shown = ", ".join(f"{k} ({n})" if n != len(rows) else k for k, n in list(keys.items())[:25])
        out.append(f"keys: {shown}" + (" …" if len(keys) > 25 else ""))
    out.append("first: " + one_line(json.dumps(rows[0], ensure_ascii=False), 200))
    return Distilled(kind="json", lines=out)


# ----------------------------------------------------------------------------- tables


def _csv_table(text: str) -> Distilled | None:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) < 3:
        return None
    sample = lines[:50]
    best: tuple[str, int] | None = None
    for delim in (",", "\t", ";", "|"):
        counts = [ln.count(delim) for ln in sample]
        if counts[0] >= 1 and all(c == counts[0] for c in counts):
            best = (delim, counts[0])
            break
    if best is None:
        return None
    delim = best[0]
    try:
        rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=delim))
    except csv.Error:
        return None
    width = len(rows[0])
    if width < 2 or any(len(r) != width for r in rows[:50]):
        return None
    header, data = rows[0], rows[1:]
    name = {",": "CSV", "\t": "TSV", ";": "CSV (;)", "|": "pipe-separated"}[delim]
    out = [f"{name} table: {len(data):,} rows x {width} columns"]
    out.append("columns: " + ", ".join(one_line(h, 40) for h in header[:40]) + (" …" if width > 40 else ""))
    numeric = []
    for j, h in enumerate(header[:40]):
        vals = [r[j] for r in data if j < len(r) and r[j].strip()]
        try:
            nums = [float(v) for v in vals]
        except ValueError:
            continue
        if nums:
            numeric.append(f"{one_line(h, 30)} [{min(nums):g} .. {max(nums):g}]")
    if numeric:
        out.append("numeric ranges: " + ", ".join(numeric[:12]))
    out.append("head:")
    out += ["  " + one_line(delim.join(r), 200) for r in rows[:6]]
    return Distilled(kind="table", lines=out)


def _pandas_table(text: str) -> Distilled | None:
    m = _PANDAS_SHAPE.search(text)
    if not m:
        return None
    lines = [ln for ln in text[: m.start()].splitlines() if ln.strip()]
    if not lines:
        return None
    out = [f"DataFrame: {int(m.group(1)):,} rows x {int(m.group(2))} columns"]
    out.append("columns: " + " ".join(lines[0].split()))
    out.append("head:")
    out += ["  " + one_line(ln, 200) for ln in lines[1:6]]
    return Distilled(kind="table", lines=out)


def _markdown_table(text: str) -> Distilled | None:
    rows = [ln for ln in text.splitlines() if _MD_ROW.match(ln)]
    if len(rows) < 3 or not any(_MD_RULE.match(r) for r in rows[:3]):
        return None
    data = [r for r in rows if not _MD_RULE.match(r)]
    header = [c.strip() for c in data[0].strip().strip("|").split("|")]
    out = [f"Markdown table: {len(data) - 1:,} rows x {len(header)} columns", "columns: " + ", ".join(header)]
    out.append("head:")
    out += ["  " + one_line(r, 200) for r in data[:6]]
    return Distilled(kind="table", lines=out)


def distill_table(text: str) -> Distilled | None:
    """CSV/TSV (shape, columns, numeric ranges, head rows), a pandas repr or a markdown table."""
    return _pandas_table(text) or _markdown_table(text) or _csv_table(text)


# ----------------------------------------------------------------------------- logs


def distill_log(text: str) -> Distilled | None:
    """Counts per level, then the error lines (first 8) and warning lines (first 4)."""
    lines = text.splitlines()
    levels: Counter[str] = Counter()
    errors: list[str] = []
    warnings: list[str] = []
    for line in lines:
        m = _LEVEL.search(line)
        if not m:
            continue
        level = _LEVEL_NAMES.get(m.group(1), m.group(1))
        levels[level] += 1
        if level in ("ERROR", "CRITICAL"):
            errors.append(line)
        elif level == "WARNING":
            warnings.append(line)
    leveled = sum(levels.values())
    if leveled < 3 or leveled < len([ln for ln in lines if ln.strip()]) // 3:
        return None
    order = ["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE"]
    out = [f"Log: {len(lines):,} lines; " + ", ".join(f"{lv} {levels[lv]}" for lv in order if levels[lv])]
    if errors:
        out.append(f"error lines ({len(errors)}; first {min(8, len(errors))}):")
        out += ["  " + one_line(e, 200) for e in errors[:8]]
    if warnings:
        out.append(f"warning lines ({len(warnings)}; first {min(4, len(warnings))}):")
        out += ["  " + one_line(w, 200) for w in warnings[:4]]
    return Distilled(kind="log", lines=out)


# ----------------------------------------------------------------------------- dispatch

DISTILLERS: tuple[tuple[str, Callable[[str], Distilled | None]], ...] = (
    ("traceback", distill_traceback),
    ("json", distill_json),
    ("table", distill_table),
    ("log", distill_log),
)


def distill(text: str) -> Distilled:
    """The first distiller that recognises ``text``; a plain line/character count otherwise."""
    for _name, fn in DISTILLERS:
        found = fn(text)
        if found is not None:
            if found.kind == "traceback":  # a traceback inside a log: keep the log's counts too
                log = distill_log(text)
                if log is not None:
                    found = Distilled(kind="traceback", lines=[*found.lines, *log.lines[:1]])
            return found
    lines = text.splitlines()
    return Distilled(kind="text", lines=[f"Text: {len(lines):,} lines, {len(text):,} characters"])
