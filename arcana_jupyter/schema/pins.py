"""The one pin model, the recorded pin/unpin, and the one fold of recorded changes into pins.

A :class:`Pin` is content the user or the model pinned (seed 000's ``pin`` primitive). The same
model is the live pin a session keeps (:class:`~arcana_jupyter.primitives.pin.PinState`), the block
the context builder renders in the Working layer (``PinBlock`` is another name for it), and a pin in
effect at a recorded turn (:meth:`TraceReader.active_pins <arcana_jupyter.trace.TraceReader.active_pins>`).
Fields a recorded trace may lack are optional: ``content`` is ``None`` in a trace written with
``trace_content="none"``.

A :class:`PinChange` is one recorded pin or unpin (read from a ``cognitive_primitive`` event by
``CognitivePrimitiveMetadata.pin_change``); :func:`fold_pins` turns changes, in trace order, into
the pins they made — the trace reader and session resume both use it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from ..messages import Message

_DUMPED_WHEN_GIVEN = ("tokens", "sha256", "unpinned_turn", "event_id")
"""Fields a dump holds only when the pin was made with them: a pin handed to the builder (and recorded
in ``context_decision.inputs.pins``) dumps as ``pin_id, content, label, until_turn, created_turn``."""


class Pin(BaseModel):
    """A pinned block of text: rendered in the Working layer, never compressed, live until unpinned
    or until ``until_turn`` has passed."""

    model_config = ConfigDict(frozen=True)

    pin_id: str = Field(min_length=1)
    content: str | None = None
    """``None`` when read from a trace written with ``trace_content="none"``."""
    label: str | None = None
    until_turn: int | None = None
    """Last turn the pin is live; ``None`` keeps it until unpinned."""
    created_turn: int | None = None
    tokens: int | None = None
    sha256: str | None = None
    unpinned_turn: int | None = None
    event_id: str | None = None
    """The ``cognitive_primitive`` event that made the pin, for a pin read from a trace."""

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if isinstance(data, dict):
            for name in _DUMPED_WHEN_GIVEN:
                if name not in self.model_fields_set:
                    data.pop(name, None)
        return data

    def active_at(self, turn: int) -> bool:
        """Live at ``turn``: created at or before it, not unpinned at or before it, not expired."""
        if self.created_turn is not None and self.created_turn > turn:
            return False
        if self.unpinned_turn is not None and self.unpinned_turn <= turn:
            return False
        return not self.expired(turn)

    def expired(self, turn: int | None) -> bool:
        """True when the pin's ``until_turn`` is before ``turn``."""
        return turn is not None and self.until_turn is not None and self.until_turn < turn

    def render(self) -> Message:
        """The system message the pin becomes in the prompt."""
        title = f"Pinned {self.pin_id}" + (f" ({self.label})" if self.label else "")
        return Message(role="system", content=f"[{title}]\n{self.content or ''}", name=self.pin_id)

    def summary(self) -> dict[str, Any]:  # JSON edge: for the bundle and widgets
        """The pin as the turn bundle, the widgets and ``%arcana_pins`` show it (no hash, no event id)."""
        return {
            "pin_id": self.pin_id, "content": self.content, "label": self.label, "until_turn": self.until_turn,
            "created_turn": self.created_turn, "tokens": self.tokens, "unpinned_turn": self.unpinned_turn,
        }


class PinChange(BaseModel):
    """One recorded pin or unpin (``CognitivePrimitiveMetadata.pin_change``), with where it was recorded."""

    model_config = ConfigDict(frozen=True)

    op: Literal["pin", "unpin"]
    pin_id: str
    content: str | None = None
    """``None`` when the trace was written with ``trace_content="none"`` (and for an unpin)."""
    label: str | None = None
    until_turn: int | None = None
    tokens: int | None = None
    turn: int | None = None
    """The turn of the event (``None`` when the event has none)."""
    position: int | None = None
    """Where the event is in its trace file (the reader's entry number), for "recorded before" questions."""
    event_id: str | None = None


def fold_pins(
    changes: Iterable[PinChange], count: Callable[[str], int] | None = None, pins: Mapping[str, Pin] | None = None,
    *, live_at: int | None = None,
) -> dict[str, Pin]:
    """The pins recorded ``changes`` (in trace order) make, added to ``pins``: ``pin_id -> Pin``, oldest first.

    A pin of an id already live changes nothing; an unpin sets the pin's ``unpinned_turn`` (the pin is
    kept, as a live :class:`~arcana_jupyter.primitives.pin.PinState` keeps it, so ids made later match)
    — an unpin of no known turn counts from the pin's own turn. A pin of an id that was unpinned makes
    a new pin, last in order. ``tokens`` is the recorded count, else ``count(content)`` when given.
    With ``live_at``, only the pins live at that turn (not unpinned, not expired) are returned, and
    changes recorded for a later turn do not count.

    The fold runs over the changes themselves; a :class:`Pin` is made only for each pin returned (a
    long trace has many more pin events than live pins, and the reader folds on every question).
    """
    if live_at is not None and not pins:  # the reader's question, on every replay: only live pins matter
        live: dict[str, PinChange] = {}
        keep, drop = live.setdefault, live.pop  # bound once: this loop runs over every change of a long trace
        for change in changes:
            turn = change.turn
            if turn is not None and turn > live_at:
                continue
            if change.op == "pin":
                keep(change.pin_id, change)  # a pin of a live id changes nothing
            else:
                drop(change.pin_id, None)  # a re-pin after this comes last, as below
        return {pin_id: _pin_of(change, None, count) for pin_id, change in live.items()
                if change.until_turn is None or change.until_turn >= live_at}
    # pin_id -> a given Pin, or [the change that made it, its unpinned turn]
    out: dict[str, Pin | list[Any]] = dict(pins or {})
    for change in changes:
        if live_at is not None and change.turn is not None and change.turn > live_at:
            continue
        old = out.get(change.pin_id)
        old_unpinned = old.unpinned_turn if isinstance(old, Pin) else (old[1] if old is not None else None)
        if change.op == "pin":
            if old is not None and old_unpinned is None:
                continue
            out.pop(change.pin_id, None)
            out[change.pin_id] = [change, None]
        elif old is not None and old_unpinned is None:
            if isinstance(old, Pin):
                when = change.turn if change.turn is not None else (old.created_turn or 0)
                out[change.pin_id] = old.model_copy(update={"unpinned_turn": when})
            else:
                made: PinChange = old[0]
                old[1] = change.turn if change.turn is not None else (made.turn or 0)
    result: dict[str, Pin] = {}
    for pin_id, entry in out.items():
        if live_at is not None:
            until = entry.until_turn if isinstance(entry, Pin) else entry[0].until_turn
            unpinned = entry.unpinned_turn if isinstance(entry, Pin) else entry[1]
            if unpinned is not None or (until is not None and until < live_at):
                continue
        result[pin_id] = entry if isinstance(entry, Pin) else _pin_of(entry[0], entry[1], count)
    return result


def _pin_of(change: PinChange, unpinned_turn: int | None, count: Callable[[str], int] | None) -> Pin:
    content, tokens = change.content, change.tokens
    if tokens is None and content is not None and count is not None:
        tokens = count(content)
    pin = Pin(
        pin_id=change.pin_id, content=content, label=change.label, until_turn=change.until_turn,
        created_turn=change.turn, tokens=tokens,
        sha256=hashlib.sha256(content.encode()).hexdigest() if content is not None else None,
        event_id=change.event_id,
    )
    return pin if unpinned_turn is None else pin.model_copy(update={"unpinned_turn": unpinned_turn})
