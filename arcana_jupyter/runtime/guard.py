"""When a turn's tool loop must stop: the same call again, steps that get nowhere, or a budget spent.

A small model offered tools can call them forever (measured on the bundled 135M model: 8 calls
and 202 s in one turn, ending in junk). :class:`ToolLoopGuard` watches the calls of one turn and
says when to stop offering tools; the session then asks once more without tools, so the turn still
ends with an answer, and records the reason in that call's ``context_decision`` (``tool_loop``).

Reasons (machine-readable, in the trace):

- ``repeated_call``: a call with the same name and arguments as an earlier one in this turn (it is
  answered with a structured "already called" result instead of running again). Tools that answer a
  repeat themselves (``rerun``: the cognitive primitives ``pin``, ``unpin`` and ``recall``, whose
  repeats are idempotent and whose answers say so in their own shape — ``already_pinned: true``,
  ``pin_not_active``, the recalled turn again) run again instead and never stop the loop this way;
  a model looping on them is stopped by ``no_progress`` (their repeated answers are nothing new);
- ``no_progress``: ``no_progress_steps`` steps in a row (``RuntimeConfig.tool_no_progress_steps``:
  2 for the bundled small local model, which loops; 4 otherwise, so a capable model can recover
  from a couple of failed calls) whose every call failed, or whose results all repeat results the
  model already has;
- ``max_tool_steps``: ``RuntimeConfig.max_tool_steps`` LLM calls with tools;
- ``max_tool_seconds``: the turn has run longer than ``RuntimeConfig.max_tool_seconds``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..messages import ToolCall, canonical_json
from ..schema.events import ToolLoopStop

REASONS = ("repeated_call", "no_progress", "max_tool_steps", "max_tool_seconds")


def call_key(call: ToolCall) -> str:
    """Name and arguments, normalised (key order and spacing do not make a call new)."""
    try:
        args = canonical_json(json.loads(call.arguments or "{}"))
    except ValueError:
        args = (call.arguments or "").strip()
    return f"{call.name}:{args}"


@dataclass
class ToolLoopGuard:
    """The tool-loop state of one turn."""

    max_steps: int
    max_seconds: float
    no_progress_steps: int = 2
    """Steps in a row without a new successful result that stop the loop (``no_progress``)."""
    rerun: frozenset[str] = frozenset()
    """Tools whose repeated identical calls run again and answer for themselves (see the module docstring)."""
    started: float = field(default_factory=time.monotonic)
    seen: dict[str, int] = field(default_factory=dict)
    """Call key -> the step that first made it."""
    results: set[str] = field(default_factory=set)
    idle_steps: int = 0
    reason: str | None = None
    detail: str = ""

    def repeated(self, call: ToolCall) -> int | None:
        """The step that already made this exact call, if the guard answers it (``None`` for a new
        call, and for a tool in ``rerun``, which answers its repeats itself)."""
        if call.name in self.rerun:
            return None
        return self.seen.get(call_key(call))

    def after_step(self, step: int, calls: Sequence[ToolCall], outcomes: Sequence[tuple[bool, str]]) -> str | None:
        """Record a step's calls and their ``(ok, result)``; returns the reason to stop, if any."""
        repeats = [c for c in calls if c.name not in self.rerun and call_key(c) in self.seen]
        new_results = [content for ok, content in outcomes if ok and content not in self.results]
        for c in calls:
            self.seen.setdefault(call_key(c), step)
        self.results.update(content for _, content in outcomes)
        self.idle_steps = self.idle_steps + 1 if not new_results else 0
        if repeats:
            first = self.seen[call_key(repeats[0])]
            return self._stop("repeated_call", f"{repeats[0].name} called again with the same arguments "
                                               f"(first at step {first})")
        if self.idle_steps >= self.no_progress_steps:
            return self._stop("no_progress", f"{self.idle_steps} steps in a row whose calls failed or returned "
                                             "nothing new (RuntimeConfig.tool_no_progress_steps)")
        if step + 1 >= self.max_steps:
            return self._stop("max_tool_steps", f"{self.max_steps} tool steps without a final answer "
                                                "(RuntimeConfig.max_tool_steps)")
        elapsed = time.monotonic() - self.started
        if elapsed > self.max_seconds:
            return self._stop("max_tool_seconds", f"the turn ran {elapsed:.0f} s, past its tool-loop budget of "
                                                  f"{self.max_seconds:.0f} s (RuntimeConfig.max_tool_seconds)")
        return None

    def _stop(self, reason: str, detail: str) -> str:
        self.reason, self.detail = reason, detail
        return reason

    def record(self) -> ToolLoopStop:
        """Why the loop stopped, as ``context_decision.tool_loop`` records it."""
        return ToolLoopStop.build(stopped=True, reason=self.reason, detail=self.detail)


_CALL_FORM = re.compile(r"^\[?\s*(?:called\s+)?[A-Za-z_][\w.]*\s*\(\s*[\[{]", re.IGNORECASE)
_TAG_FORM = re.compile(r"^<\s*(?:tool_call|tool_result|function_call|tool)\b", re.IGNORECASE)


def looks_like_tool_output(text: str, results: Sequence[str] = ()) -> bool:
    """Whether a turn's final text (in a turn that called tools) is tool-call or tool-result
    material rather than an answer: one of the turn's results again (when that result is JSON, long
    or several lines — a short plain result such as ``5`` repeated is an answer), a JSON object shaped like a
    tool outcome (``ok`` / ``error`` ...) or equal to a result, a call written out
    (``[called remember({...})]``, ``name({...})``) or a tool tag."""
    stripped = text.strip()
    if not stripped:
        return True
    if any(stripped == r.strip() for r in results if r and _raw_material(r)):
        return True
    if _CALL_FORM.match(stripped) or _TAG_FORM.match(stripped):
        return True
    if stripped[0] == "{":
        try:
            value = json.loads(stripped)
        except ValueError:
            return False
        # the shape every tool outcome has (schema/tools.py), or a result of this turn reformatted;
        # other JSON may be the answer the user asked for
        return isinstance(value, dict) and (bool(_RESULT_KEYS & set(value)) or any(
            _same_json(value, r) for r in results))
    return False


_RESULT_KEYS = frozenset({"ok", "error", "pinned", "unpinned", "already_pinned", "hint"})


def _raw_material(result: str) -> bool:
    """A tool result that, repeated as the reply, is a dump rather than an answer: JSON, or long or
    several lines. A short plain result ("5", "Paris") repeated is the model answering with it."""
    text = result.strip()
    return bool(text) and (text[0] in "{[" or len(text) > 200 or text.count("\n") >= 2)


def _same_json(value: object, text: str) -> bool:
    try:
        return canonical_json(json.loads(text)) == canonical_json(value)
    except (ValueError, TypeError):
        return False


def readable_reply(text: str, tool_calls: Sequence[dict[str, object]], stop_detail: str | None) -> str:
    """The reply a person is shown: the model's text, unless the turn called tools and the text is
    empty or tool material (:func:`looks_like_tool_output`) — then one plain note saying that no
    answer came, why the loop stopped (``stop_detail``), and what the calls did. The model's own
    message stays in the transcript as it was."""
    if not tool_calls:
        return text
    results = [str(c.get("result") or "") for c in tool_calls]
    if not looks_like_tool_output(text or "", results):
        return text
    counts: dict[str, list[int]] = {}
    for c in tool_calls:
        ok_failed = counts.setdefault(str(c.get("name") or "?"), [0, 0])
        ok_failed[0 if c.get("ok") else 1] += 1
    did = ", ".join(f"{name} ×{ok + failed} ({ok} ok{f', {failed} refused' if failed else ''})"
                    for name, (ok, failed) in counts.items())
    why = f"the tool loop was stopped: {stop_detail}" if stop_detail else "it ended on tool output"
    return (f"(No answer in words from the model: {why}. Tool calls this turn: {did}; "
            "the turn's inspector lists each call and its result.)")
