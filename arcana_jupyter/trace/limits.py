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

Those are limits per record. A reader of every decision of a run (the replay frames: ``%arcana_replay``,
``arcana report``) would spend the number of decisions times them: 60 decisions of 54,499 rows each, each
within its own bound, in a 3.2 MB file. So a decision's rows are bounded by the trace before it too
(:meth:`FileLimits.for_decision`): a build has one row per history message it saw, plus its input, the
task, the pins and the sections — so a decision may hold at most the transcript messages its agent's
trace records before it (``user_message``, ``llm_call``, ``tool_call`` and ``turn_end`` records with a
``history_index``, each counted once), plus the pin changes recorded before it, plus the sections
recorded with it, plus :data:`TRANSCRIPT_SLACK` (:class:`Seen`, counted by the index as it reads each
line). Its overflow turns and moved positions are within the same bound (a turn has a message; a moved
position is a sent row's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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
PASS_FLOOR = 1 << 16
"""Row changes a pass over a run's decisions may make whatever the size of its file (:class:`PassBudget`)."""
BYTES_PER_CHANGE = 16
"""One more row change allowed per this many bytes of the trace file. Real runs use a fifth of the limit at
most: a 1,000-turn default-mode run (17.9 MB) changes a row per 189 bytes (12x under it); its first 200
turns with every digest checked, as ``%arcana_replay`` does, use 46,353 of 234,207 (5x); its first 100 as
the report reads them 15,106 of 126,094 (benchmarks/results/hostile.md)."""
NO_FILE_BYTES = 1 << 24
"""The file size assumed by a reader that has none (a decision or prompt decoded in memory): 16 MiB."""


def max_rows(file_bytes: int | None) -> int:
    """The most rows (overflow turns, moved positions, sections) one decision of a file of
    ``file_bytes`` bytes may resolve to."""
    size = NO_FILE_BYTES if file_bytes is None else max(0, file_bytes)
    return ROWS_FLOOR + size // BYTES_PER_ROW


def max_changes(file_bytes: int | None) -> int:
    """The most row changes one pass over a run's decisions (the replay frames) may make in a file of
    ``file_bytes`` bytes: :data:`PASS_FLOOR` + one per :data:`BYTES_PER_CHANGE` bytes."""
    size = NO_FILE_BYTES if file_bytes is None else max(0, file_bytes)
    return PASS_FLOOR + size // BYTES_PER_CHANGE


def max_chars(file_bytes: int | None) -> int:
    """The most characters one prompt (or one section's text) of a file of ``file_bytes`` bytes may resolve to."""
    size = NO_FILE_BYTES if file_bytes is None else max(0, file_bytes)
    return CHARS_FLOOR + CHARS_PER_BYTE * size


ROW_FIELDS = 16
"""The fields of a decision row (``MessageDecision``): a decision holds at most this many values per row."""


TRANSCRIPT_SLACK = 64
"""Rows a decision may hold besides one per transcript message, pin change and section recorded before
it: the system prompt (read from ``run_start``, not a transcript record), the task, and the messages
a session held but an older trace did not record (a cancelled turn's partial reply before issue 36).
A real build uses at most 2 of them (tests/trace/test_trace_bombs.py measures recorded sessions)."""

TRACE_LIMITS = "a trace file of this size can hold (docs/SECURITY.md, limits of a trace)"


class Seen(NamedTuple):
    """What a trace records of an agent before one of its decisions (counted by the index as it reads
    the lines, :class:`~.index.FileIndex` ``seen``)."""

    messages: int
    """Transcript messages: distinct ``history_index`` records of the agent before the decision."""
    pin_changes: int
    """Pin and unpin calls of the agent (``cognitive_primitive``) before the decision."""


@dataclass(frozen=True)
class FileLimits:
    """The limits of reading one trace file (:func:`max_rows`, :func:`max_chars` of its size), and of
    each of its decisions (:meth:`for_decision`)."""

    rows: int
    chars: int
    seen: Mapping[str, Seen] | None = field(default=None, compare=False)
    """What the file records before each decision, by its event id (the index's, kept up to date as the
    file grows); None: nothing known (a decision decoded in memory is bounded by the file's limits only)."""
    why: str = TRACE_LIMITS
    """What the bound is, for a refusal's message."""

    @classmethod
    def of(cls, file_bytes: int | None, seen: Mapping[str, Seen] | None = None) -> FileLimits:
        """The limits of a file of ``file_bytes`` bytes (None: one of :data:`NO_FILE_BYTES`); ``seen``:
        what it records before each decision (see :meth:`for_decision`)."""
        return cls(max_rows(file_bytes), max_chars(file_bytes), seen)

    def for_decision(self, event_id: str | None, meta: Any) -> FileLimits:
        """The limits of the decision ``event_id`` whose metadata (resolved but for its rows) is ``meta``:
        its rows (and overflow turns, moved positions) at most the transcript messages and pin changes
        the file records before it, plus the sections recorded with it (``inputs.sections``), plus
        :data:`TRANSCRIPT_SLACK`; never more than the file's. Unknown to ``seen``: the file's limits."""
        seen = self.seen.get(event_id) if self.seen is not None and event_id is not None else None
        if seen is None:
            return self
        inputs = meta.get("inputs") if isinstance(meta, dict) else None
        sections = inputs.get("sections") if isinstance(inputs, dict) else None
        n_sections = len(sections) if isinstance(sections, list) else 0
        bound = seen.messages + seen.pin_changes + n_sections + TRANSCRIPT_SLACK
        if bound >= self.rows:
            return self
        why = (f"its trace accounts for: {seen.messages:,} transcript message(s) and {seen.pin_changes:,} pin "
               f"change(s) recorded before it, {n_sections:,} section(s) recorded with it, and "
               f"{TRANSCRIPT_SLACK} more (docs/SECURITY.md, limits of a trace)")
        return FileLimits(bound, self.chars, None, why)


class TooLarge(ValueError):
    """A record resolves to more than its file may make a reader hold (a trace bomb)."""


class Budget:
    """What one record may still resolve to: ``take(n)`` counts ``n`` more units, past the limit it raises
    :class:`TooLarge` (``why``: what the limit is)."""

    __slots__ = ("limit", "unit", "used", "why")

    def __init__(self, limit: int, unit: str, why: str = TRACE_LIMITS) -> None:
        self.limit = limit
        self.unit = unit
        self.used = 0
        self.why = why

    def take(self, n: int, where: str) -> None:
        self.used += n
        if self.used > self.limit:
            raise TooLarge(f"{where}: it resolves to more than {self.limit:,} {self.unit}, more than {self.why}; "
                           "refused")


def check_rows(count: int, limits: FileLimits | None, where: str, what: str = "rows", per_row: int = 1) -> None:
    """``count`` rows (turns, positions ...; ``per_row`` times the limit: values) are no more than
    ``limits.rows`` (None: the limits of a file of :data:`NO_FILE_BYTES`); :class:`TooLarge` otherwise."""
    bound = (max_rows(None) if limits is None else limits.rows) * per_row
    if count > bound:
        why = TRACE_LIMITS if limits is None else limits.why
        raise TooLarge(f"{where}: {count:,} {what}, more than the {bound:,} {why}; refused")


class PassBudget:
    """What one pass over a run's decisions (the replay frames) may still work on, :func:`max_changes` of
    the file in all: each decision is charged the rows it changes against the decision before it
    (positions patched, rows not shared) — past the limit it and the decisions left are refused
    (:meth:`take`, :class:`TooLarge`) — and each turn whose digest is checked the rows and history
    messages its rebuild reads — past the limit the turns left are not checked (:meth:`fits`). A real
    decision changes its new rows and the few whose outcome moved, and digests are checked up to 200
    turns; a crafted trace changes every row every turn, and has every check rebuild the whole
    transcript — each decision within its own bound (:meth:`FileLimits.for_decision`), turns times
    rows in all."""

    __slots__ = ("limit", "refusal", "used")

    def __init__(self, file_bytes: int | None) -> None:
        self.limit = max_changes(file_bytes)
        self.used = 0
        self.refusal: str | None = None
        """Set when the budget ran out: why every decision after that one is refused."""

    def take(self, n: int, where: str) -> None:
        """Count ``n`` changed rows of the decision ``where`` names; past the limit, :class:`TooLarge`."""
        if self.refusal is not None:
            raise TooLarge(self.refusal)
        self.used += n
        if self.used > self.limit:
            self.refusal = (f"the decisions of this run up to {where} change more than {self.limit:,} rows from one "
                            f"to the next, more than a trace file of this size can make a pass over them change "
                            "(docs/SECURITY.md, limits of a trace); this decision and those after it are refused")
            raise TooLarge(self.refusal)

    def fits(self, n: int) -> bool:
        """Count ``n`` more units if they fit (a digest check's rows and messages); False (nothing counted)
        when they do not."""
        if self.used + n > self.limit:
            return False
        self.used += n
        return True


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
