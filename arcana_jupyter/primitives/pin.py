"""``pin`` / ``unpin``: content the LLM protects from compression (seed 000).

A pin is an independent block in the Working layer — it never matches existing messages. The same
content pinned twice (by SHA-256) returns the first pin. Pinned tokens are capped at
``total_window * pin_budget_fraction``; a pin over the cap is rejected with a diagnosis, and the
framework never unpins, truncates or evicts a pin on its own. ``until_turn=N`` stops rendering a pin
after turn N; it stays in the trace. The pin itself is :class:`~arcana_jupyter.schema.pins.Pin`, the
one model of a live, rendered or recorded pin.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from ..schema.pins import Pin, PinChange, fold_pins
from ..schema.tools import BAD_ARGUMENTS, NOT_FOUND, ModelRetry, ToolArguments, ToolDeclaration, with_common_keys
from ..tokens import TokenCounter


class PinArgs(ToolArguments):
    content: str
    label: str | None = None
    until_turn: int | None = None


class UnpinArgs(ToolArguments):
    pin_id: str


# The schemas as recorded since the first release (explicit: pydantic's differ in key order,
# ``anyOf`` for the nullable ones and ``additionalProperties``); checked against the models.
PIN = ToolDeclaration(
    name="pin",
    description=(
        "Protect content from compression: it stays in your context at full fidelity in every "
        "later turn until you unpin it (or until_turn passes)."
    ),
    args=PinArgs,
    parameters={
        "type": "object",
        "properties": {
            "content": {"type": "string", "description": "The exact text to keep."},
            "label": {"type": ["string", "null"], "description": "A short name for the pin."},
            "until_turn": {
                "type": ["integer", "null"],
                "description": "Last turn the pin is kept; omit to keep it for the session.",
            },
        },
        "required": ["content"],
    },
)

UNPIN = ToolDeclaration(
    name="unpin",
    description="Remove a pin created earlier with pin(); its content may then be compressed.",
    args=UnpinArgs,
    parameters={
        "type": "object",
        "properties": {"pin_id": {"type": "string", "description": "The pin_id that pin() returned."}},
        "required": ["pin_id"],
    },
)
PIN_SPEC = PIN.spec
UNPIN_SPEC = UNPIN.spec


class PinState:
    """One agent's pins. Cognitive state never crosses agents: each session owns one of these."""

    def __init__(self, counter: TokenCounter, total_window: int, pin_budget_fraction: float = 0.5) -> None:
        self.counter = counter
        self.total_window = total_window
        self.fraction = pin_budget_fraction
        self.pins: dict[str, Pin] = {}

    @property
    def cap(self) -> int:
        return int(self.total_window * self.fraction)

    def active(self, turn: int) -> list[Pin]:
        """Pins rendered into the working set at ``turn``, oldest first."""
        return [p for p in self.pins.values() if p.active_at(turn)]

    def pinned_tokens(self, turn: int) -> int:
        return sum(p.tokens or 0 for p in self.active(turn))

    def pin(self, args: dict[str, Any], turn: int) -> dict[str, Any]:
        """Service a ``pin`` call. Always returns the seed's structured result, never raises."""
        content = args.get("content")
        label = args.get("label")
        until_turn = args.get("until_turn")
        problems = []
        unknown = sorted(set(args) - {"content", "label", "until_turn"})
        if unknown:
            problems.append(f"unknown argument(s) {unknown}; pin takes content, label, until_turn")
        if not isinstance(content, str) or not content.strip():
            problems.append("content must be a non-empty string")
        if label is not None and not isinstance(label, str):
            problems.append("label must be a string or null")
        if until_turn is not None and (isinstance(until_turn, bool) or not isinstance(until_turn, int)):
            problems.append("until_turn must be an integer or null")
        elif isinstance(until_turn, int) and until_turn < turn:
            problems.append(f"until_turn={until_turn} is already in the past (current turn is {turn})")
        if problems:
            return {"pinned": False, "reason": "invalid_arguments", "problems": problems}
        assert isinstance(content, str)
        sha = hashlib.sha256(content.encode()).hexdigest()
        for p in self.active(turn):
            if p.sha256 == sha:
                return {
                    "pinned": True,
                    "pin_id": p.pin_id,
                    "label": p.label,
                    "until_turn": p.until_turn,
                    "already_pinned": True,
                }
        tokens = self.counter.count_text(content)
        current = self.pinned_tokens(turn)
        if current + tokens > self.cap:
            return {
                "pinned": False,
                "reason": "pin_budget_exceeded",
                "current_pin_tokens": current,
                "requested_tokens": tokens,
                "cap": self.cap,
                "suggestion": (
                    "unpin older content (see active pins: "
                    + ", ".join(f"{p.pin_id} ({p.tokens} tokens)" for p in self.active(turn))
                    + ") or pin a shorter excerpt."
                ),
            }
        pin_id = "p_" + hashlib.sha256(f"{sha}:{len(self.pins)}".encode()).hexdigest()[:8]
        self.pins[pin_id] = Pin(
            pin_id=pin_id, content=content, label=label, until_turn=until_turn, created_turn=turn, tokens=tokens,
            sha256=sha,
        )
        return {"pinned": True, "pin_id": pin_id, "label": label, "until_turn": until_turn, "already_pinned": False}

    def unpin(self, args: dict[str, Any], turn: int) -> dict[str, Any]:
        pin_id = args.get("pin_id")
        if not isinstance(pin_id, str) or not pin_id:
            return {"unpinned": False, "reason": "invalid_arguments", "problems": ["pin_id must be a string"]}
        pin = self.pins.get(pin_id)
        if pin is None or not pin.active_at(turn):
            return {
                "unpinned": False,
                "pin_id": pin_id,
                "reason": "unknown_pin_id" if pin is None else "pin_not_active",
                "active_pins": [p.pin_id for p in self.active(turn)],
            }
        self.pins[pin_id] = pin.model_copy(update={"unpinned_turn": turn})
        return {"unpinned": True, "pin_id": pin_id, "label": pin.label}

    def restore(self, changes: Iterable[tuple[int, PinChange]]) -> None:
        """Fold recorded pin changes (``(turn, change)``, in trace order) back into this state (resume).

        Unpinned pins are kept with their ``unpinned_turn``, as the live state keeps them, so the
        pin ids made after a resume are the ones an uninterrupted session would have made. Token
        counts are this state's own counter's.
        """
        recorded = (change.model_copy(update={"turn": turn, "content": change.content or "", "tokens": None})
                    for turn, change in changes)
        self.pins = fold_pins(recorded, count=self.counter.count_text, pins=self.pins)


PIN_HINT = ('call pin(content="the exact text to keep", label="a short name" or null, until_turn=null or the '
            'last turn to keep it, no earlier than the current turn)')
UNPIN_HINT = 'call unpin(pin_id="p_…") with a pin_id that pin() returned'


def unpin_hint(active: Iterable[str]) -> str:
    """What to do after a refused unpin: the ids that can be unpinned now."""
    ids = list(active)
    if not ids:
        return "no pin is active now: there is nothing to unpin"
    return f"{UNPIN_HINT}; active pins: {', '.join(ids)}"


def pin_answer(result: dict[str, Any]) -> dict[str, Any]:
    """A ``pin`` result as the model reads it: the result itself, or — a refusal — a :class:`ModelRetry`
    keeping the seed's ``pinned: false, reason`` and carrying ``ok: false, error, message, hint``."""
    return _answer(result, "pinned")


def unpin_answer(result: dict[str, Any]) -> dict[str, Any]:
    """An ``unpin`` result (a refusal: ``unpinned: false, reason`` and the common keys, as a :class:`ModelRetry`)."""
    return _answer(result, "unpinned")


def _answer(result: dict[str, Any], key: str) -> dict[str, Any]:
    if result.get(key):
        return result
    reason = str(result.get("reason") or "failed")
    if reason == "invalid_arguments":
        code, message = BAD_ARGUMENTS, "; ".join(result.get("problems") or [])
        hint = PIN_HINT if key == "pinned" else UNPIN_HINT
    elif reason in ("unknown_pin_id", "pin_not_active"):
        code, message = NOT_FOUND, f"{reason}: {result.get('pin_id')}"
        hint = unpin_hint(result.get("active_pins") or ())
    else:
        code, message = reason, str(result.get("suggestion") or reason)
        hint = str(result.get("suggestion") or "continue without pinning")
    message = message or str(result.get("message") or code)
    raise ModelRetry(message, code=code, data=with_common_keys(result, code, message, hint))
