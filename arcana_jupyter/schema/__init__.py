"""The contracts as code (ground layer): trace events, decisions, the turn bundle.

- :mod:`.events` — one model per event type's ``metadata``, the envelope, the discriminated union
  :data:`~.events.Event` and its ``TypeAdapter`` :data:`~.events.EVENT_ADAPTER`.
- :mod:`.decisions` — what a working-set build decides (``ContextDecision`` ...), shared by the
  builder, the trace, the CLI and the widgets.
- :mod:`.pins` — the one :class:`~.pins.Pin` model (live, rendered, recorded), the recorded
  :class:`~.pins.PinChange` and :func:`~.pins.fold_pins`, the one fold of recorded changes into pins.
- :mod:`.bundle` — the turn bundle (``application/vnd.arcana.turn+json``) the inspector renders.

This package imports nothing of arcana_jupyter but :mod:`arcana_jupyter.messages`.
"""

from .decisions import BudgetSnapshot, ContextDecision, ContextReport, MessageDecision, TokenBudget
from .events import EVENT_ADAPTER, Envelope, Event, Record
from .pins import Pin, PinChange, fold_pins

__all__ = [
    "EVENT_ADAPTER",
    "BudgetSnapshot",
    "ContextDecision",
    "ContextReport",
    "Envelope",
    "Event",
    "MessageDecision",
    "Pin",
    "PinChange",
    "Record",
    "TokenBudget",
    "fold_pins",
]
