"""Line edits: a text as edits of an earlier one — what a ``prompt_sent`` message's ``e`` and a chained
decision's adaptive section hold (docs/TRACE_FORMAT.md).

``[start, n]`` copies lines start .. start+n-1 of the base (the base's content plus a newline, cut after
each newline: :func:`lines_of`), a string is new text; a ``prompt_sent`` edit (:func:`sent_edit_ops`)
may also change a line's middle in place (``[k, a, text, b]``) and quote a history message's content
(``{"h": i}``). :func:`edit_ops` / :func:`sent_edit_ops` write, :func:`apply_line_edit` is the one
reader; the viewer's ``applyLineEdit`` (labextension/src/trace.ts) reads the same way."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from typing import Any

from ..messages import canonical_json
from .limits import Budget, max_chars


def lines_of(text: str) -> list[str]:
    """The lines an edit copies: ``text + "\\n"`` cut after each newline (so every line ends with one;
    the last, added newline is dropped again when the edit is applied). The viewer cuts the same way."""
    return [line + "\n" for line in text.split("\n")]


def edit_ops(base: Mapping[str, Any], new: Mapping[str, Any]) -> list[Any] | None:
    """``new`` as line edits of ``base`` (same message but for its content): ``[start, n]`` copies lines
    start .. start+n-1 of the base's content, a string is new text. None when the rest differs."""
    if {k: v for k, v in base.items() if k != "content"} != {k: v for k, v in new.items() if k != "content"}:
        return None
    a, b = lines_of(str(base.get("content") or "")), lines_of(str(new.get("content") or ""))
    ops: list[Any] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.append([i1, i2 - i1])
        elif j2 > j1:
            text = "".join(b[j1:j2])
            if ops and isinstance(ops[-1], str):
                ops[-1] += text
            else:
                ops.append(text)
    return ops


def apply_line_edit(base: str | None, ops: Any, where: str,
                    history: Callable[[int], str | None] | None = None, *, budget: Budget | None = None) -> str | None:
    """The text ``ops`` (see :func:`edit_ops`) make of ``base``: the one reader of a line edit (a
    ``prompt_sent`` message's ``e``, a chained decision's section). None when the base or a new text
    is None (``trace_content="none"`` nulls texts). Raises ``ValueError`` on ops that do not apply.

    With ``history`` (a ``prompt_sent`` message's ``e``: :func:`sent_edit_ops`) two more ops read:
    ``[k, a, text, b]`` (line k of the base with its middle changed: its first ``a`` characters,
    ``text``, its last ``b`` characters and its newline) and ``{"h": i}`` (``history(i)``: the content
    of history message ``i`` as sent, None when there is no such message).

    ``budget`` (trace/limits.py): the characters the text may still have, counted op by op before they
    are copied — copies of copies (each record's text twice the last's) are refused as they grow, with
    :class:`~.limits.TooLarge`. Without one, the text may have :func:`~.limits.max_chars` ``(None)``."""
    if not isinstance(ops, list):
        raise ValueError(f"{where}: the edit's ops are not a list")
    if base is None or any(op is None for op in ops):
        return None
    budget = budget if budget is not None else Budget(max_chars(None), "characters")
    lines = lines_of(str(base))
    ends: list[int] | None = None  # the lines' end offsets (for what a copy of a run costs), when one is copied
    parts: list[str] = []
    for op in ops:
        if isinstance(op, str):
            budget.take(len(op), where)
            parts.append(op)
            continue
        if history is not None and isinstance(op, list) and len(op) == 4:
            parts.append(_line_middle(op, lines, where))
            budget.take(len(parts[-1]), where)
            continue
        if history is not None and isinstance(op, dict):
            parts.append(_history_text(op, history, where))
            budget.take(len(parts[-1]), where)
            continue
        run = (op[0], op[1]) if (isinstance(op, list) and len(op) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) for x in op) and op[1] >= 1) else None
        if run is None or run[0] < 0 or run[0] + run[1] > len(lines):
            raise ValueError(f"{where}: the edit copies lines {op!r} of a text of {len(lines)}")
        if ends is None:
            ends = [0, *accumulate(map(len, lines))]
        budget.take(ends[run[0] + run[1]] - ends[run[0]], where)
        parts.extend(lines[run[0]:run[0] + run[1]])
    text = "".join(parts)
    if not text.endswith("\n"):
        raise ValueError(f"{where}: the edit's text does not end with its line end")
    return text[:-1]


def _line_middle(op: list[Any], lines: Sequence[str], where: str) -> str:  # JSON edge: an edit op
    """``[k, a, text, b]``: line k of the base, its middle replaced by ``text`` (characters counted as
    Python and the viewer's UTF-16 agree: the line holds none outside the BMP)."""
    k, a, text, b = op
    if not (all(isinstance(x, int) and not isinstance(x, bool) for x in (k, a, b)) and isinstance(text, str)
            and 0 <= k < len(lines) and a >= 0 and b >= 0 and a + b <= len(lines[k]) - 1
            and all(ord(c) <= 0xFFFF for c in lines[k])):
        raise ValueError(f"{where}: the edit's line change {str(op)[:80]} does not apply to a text of "
                         f"{len(lines)} line(s)")
    line = lines[k][:-1]
    return line[:a] + text + line[len(line) - b:] + "\n"


def _history_text(op: Mapping[str, Any], history: Callable[[int], str | None],
                  where: str) -> str:  # JSON edge: an edit op
    """``{"h": i}``: the content of history message i as the trace records it (``history(i)``)."""
    h = op.get("h")
    text = history(h) if isinstance(h, int) and not isinstance(h, bool) and h >= 0 and len(op) == 1 else None
    if text is None:
        raise ValueError(f"{where}: the edit's {str(op)[:40]} is not a recorded history message")
    return text


def sent_edit_ops(base: str, new: str, redact: Callable[[str], str],
                  recent: Callable[[], list[tuple[str, int]]]) -> list[Any]:  # JSON edge: the ops
    """``new`` as the line edits of a ``prompt_sent`` message's ``e`` (:func:`apply_line_edit` with
    ``history``): lines copied, a line whose middle changed (a turn number in a header) as
    ``[k, a, text, b]``, and the contents of recent history messages quoted in the new text (the
    checkpoint's request lines) as ``{"h": i}``. ``base`` and ``new`` are the texts as the trace holds
    them; a changed middle or a text between quotes is written only where ``redact`` leaves it as it is
    (so the writer's redaction of the record leaves it too); ``recent()``: (redacted content, index) of
    the history messages worth quoting, longest first."""
    a, b = lines_of(base), lines_of(new)
    ops: list[Any] = []

    def text(t: str) -> None:
        if ops and isinstance(ops[-1], str):
            ops[-1] += t
        else:
            ops.append(t)

    quotes: list[tuple[str, int]] | None = None
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            ops.append([i1, i2 - i1])
            continue
        for k in range(j1, j2):
            pair = i1 + k - j1 if tag == "replace" and i1 + k - j1 < i2 else None
            middle = _middle_op(a[pair], b[k], pair, redact) if pair is not None else None
            if middle is not None and len(b[k]) >= MIN_QUOTE:  # the line quoting a request may be smaller
                quotes = recent() if quotes is None else quotes
                if len(canonical_json(_quoted(b[k], quotes, redact))) <= len(canonical_json(middle)):
                    middle = None
            if middle is not None:
                ops.append(middle)
            else:
                text(b[k])
    out: list[Any] = []
    for op in ops:
        if isinstance(op, str) and len(op) >= MIN_QUOTE:
            quotes = recent() if quotes is None else quotes
            out.extend(_quoted(op, quotes, redact))
        else:
            out.append(op)
    return out


MIN_QUOTE = 24
"""A history message's content is quoted by reference (``{"h": i}``) in an edit's new text from this
many characters: shorter, the reference would not be smaller."""


def _middle_op(old: str, new: str, k: int, redact: Callable[[str], str]) -> list[Any] | None:  # JSON edge
    """``[k, a, text, b]`` for line ``new`` against line ``old`` when they share 20+ characters of
    prefix and suffix; None otherwise."""
    x, y = old[:-1], new[:-1]
    n = min(len(x), len(y))
    a = 0
    while a < n and x[a] == y[a]:
        a += 1
    b = 0
    while b < n - a and x[len(x) - 1 - b] == y[len(y) - 1 - b]:
        b += 1
    if a + b < 20 or any(ord(c) > 0xFFFF for c in x):
        return None
    mid = y[a:len(y) - b]
    return [k, a, mid, b] if redact(mid) == mid else None


def _quoted(text: str, quotes: list[tuple[str, int]], redact: Callable[[str], str]) -> list[Any]:  # JSON edge
    """``text`` with the history contents it holds as ``{"h": i}`` (the longest first); ``[text]`` when
    it holds none, or when a piece between them is not as the writer's redaction would leave it."""
    pieces: list[Any] = [text]
    for content, i in quotes:
        if content not in text:
            continue
        nxt: list[Any] = []
        for piece in pieces:
            if isinstance(piece, str) and content in piece:
                for m, part in enumerate(piece.split(content)):
                    if m:
                        nxt.append({"h": i})
                    if part:
                        nxt.append(part)
            else:
                nxt.append(piece)
        pieces = nxt
    if len(pieces) == 1 or any(isinstance(p, str) and redact(p) != p for p in pieces):
        return [text]
    return pieces
