"""What a trace file can make a reader hold or do: the limits of reading one (docs/SECURITY.md, "Limits on
what a trace can make us hold").

A trace is data from anywhere: notebooks travel with their ``.arcana/`` folders. Its compact encodings
make a few bytes stand for much more — a ``prompt_sent`` keeps or references the previous prompt and the
history, a line edit copies lines, a chained decision copies rows, runs expand — and a crafted file abuses
that (40 small records each copying the previous text twice, 100,000 references to one 100 KB message, a
decision of 2e8 rows). So what one record resolves to is bounded by the bytes of the file it is read from,
and a record past its bound is refused with a ``ValueError`` (:class:`TooLarge`) that the readers turn
into a :class:`~arcana_jupyter.exceptions.TraceError` naming the record:

- a decision (its rows, its ``inputs.overflow`` turns, its shape's ``moved`` positions, its sections):
  at most :func:`max_rows` ``(bytes)`` = :data:`ROWS_FLOOR` + one per :data:`BYTES_PER_ROW` bytes of the
  file. Every row stands for a history message the file records (an event of 200+ bytes), an input, a
  pin or a section of the same file: a real decision holds a few per KB at most;
- a prompt, and a section's text: at most :func:`max_chars` ``(bytes)`` = :data:`CHARS_FLOOR` +
  :data:`CHARS_PER_BYTE` characters per byte of the file, a message counting :data:`MESSAGE_CHARS` more.
  A real prompt repeats the file's text a few times at most (a request quoted by the checkpoint);
- a line nests at most :data:`MAX_DEPTH` arrays and objects: a deeper one is not an event (skipped and
  listed, like any line that is not one). JSON's own limit (~1,000) would raise ``RecursionError``, and
  every walk of a parsed value is a recursion. The writer writes nothing deeper
  (:data:`WRITE_DEPTH`: a value nested deeper is written as its JSON text).

So the memory and the time a reader spends on one record grow with the bytes of the file, never past
these multiples of it; the work is linear in what a record resolves to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a trace line may have (the envelope is the first level)."""
WRITE_DEPTH = 48
"""The deepest nesting of a metadata value the writer writes as JSON; deeper, as its JSON text (a tool's
arguments nested hundreds deep are kept, as a string; past what ``json`` itself can write, a placeholder
says so). Below :data:`MAX_DEPTH` with room for the envelope."""

ROWS_FLOOR = 4096
"""Rows a decision may hold whatever the size of its file."""
BYTES_PER_ROW = 64
"""One more row allowed per this many bytes of the trace file."""
CHARS_FLOOR = 1 << 20
"""Characters a prompt (or a section's text) may resolve to whatever the size of its file."""
CHARS_PER_BYTE = 8
"""Characters more a prompt may resolve to per byte of the trace file."""
MESSAGE_CHARS = 64
"""What one message of a prompt counts besides its text (so empty messages referenced a million times count)."""
NO_FILE_BYTES = 1 << 24
"""The file size assumed by a reader that has none (a decision or prompt decoded in memory): 16 MiB."""


def max_rows(file_bytes: int | None) -> int:
    """The most rows (overflow turns, moved positions, sections) one decision of a file of
    ``file_bytes`` bytes may resolve to."""
    size = NO_FILE_BYTES if file_bytes is None else max(0, file_bytes)
    return ROWS_FLOOR + size // BYTES_PER_ROW


def max_chars(file_bytes: int | None) -> int:
    """The most characters one prompt (or one section's text) of a file of ``file_bytes`` bytes may resolve to."""
    size = NO_FILE_BYTES if file_bytes is None else max(0, file_bytes)
    return CHARS_FLOOR + CHARS_PER_BYTE * size


ROW_FIELDS = 16
"""The fields of a decision row (``MessageDecision``): a decision holds at most this many values per row."""


@dataclass(frozen=True)
class FileLimits:
    """The limits of reading one trace file (:func:`max_rows`, :func:`max_chars` of its size)."""

    rows: int
    chars: int

    @classmethod
    def of(cls, file_bytes: int | None) -> FileLimits:
        """The limits of a file of ``file_bytes`` bytes (None: one of :data:`NO_FILE_BYTES`)."""
        return cls(max_rows(file_bytes), max_chars(file_bytes))


class TooLarge(ValueError):
    """A record resolves to more than its file may make a reader hold (a trace bomb)."""


class Budget:
    """What one record may still resolve to: ``take(n)`` counts ``n`` more units, past the limit it raises
    :class:`TooLarge`."""

    __slots__ = ("limit", "unit", "used")

    def __init__(self, limit: int, unit: str) -> None:
        self.limit = limit
        self.unit = unit
        self.used = 0

    def take(self, n: int, where: str) -> None:
        self.used += n
        if self.used > self.limit:
            raise TooLarge(f"{where}: it resolves to more than {self.limit:,} {self.unit}, more than a trace file "
                           "of this size can hold (docs/SECURITY.md, limits of a trace); refused")


def check_rows(count: int, limits: FileLimits | None, where: str, what: str = "rows", per_row: int = 1) -> None:
    """``count`` rows (turns, positions ...; ``per_row`` times the limit: values) are no more than
    ``limits.rows`` (None: the limits of a file of :data:`NO_FILE_BYTES`); :class:`TooLarge` otherwise."""
    bound = (max_rows(None) if limits is None else limits.rows) * per_row
    if count > bound:
        raise TooLarge(f"{where}: {count:,} {what}, more than the {bound:,} a trace file of this size can hold "
                       "(docs/SECURITY.md, limits of a trace); refused")


_KEEP = bytes(b for b in range(256) if b not in b'[]{}"')
_STRINGS = re.compile(rb'"[^"]*"')
_PAIRS = re.compile(rb"\[\]|\{\}")


def too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """True when the JSON text ``raw`` nests arrays and objects deeper than ``limit``.

    Cheap where it can be: a line with no more than ``limit`` brackets cannot; otherwise (in C) the escaped
    backslashes and quotes are dropped (so every quote left opens or closes a string), everything but
    brackets and quotes, then the strings, and the innermost bracket pairs are removed a level per pass,
    at most ``limit`` passes. Meant for text that is valid JSON (or about to be parsed as such)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    marks = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _KEEP)
    brackets = _STRINGS.sub(b"", marks)
    for _ in range(limit):
        if not brackets:
            return False
        brackets, removed = _PAIRS.subn(b"", brackets)
        if not removed:
            return False  # unbalanced: not valid JSON, which the parser says itself
    return bool(brackets)
