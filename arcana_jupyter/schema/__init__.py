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

from ..compat import moved as _moved
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


# Names exported before 0.1's public surface (issue 25), answered for one more release with a warning.
_MOVED = {
    "EVENT_MODELS": "arcana_jupyter.schema.events",
    "EVENT_TYPES": "arcana_jupyter.schema.events",
    "EventType": "arcana_jupyter.schema.events",
    "LayerReport": "arcana_jupyter.schema.decisions",
    "METADATA_MODELS": "arcana_jupyter.schema.events",
    "TRACE_FORMAT_VERSION": "arcana_jupyter.schema.events",
    "decision_record": "arcana_jupyter.schema.decisions",
    "read_event": "arcana_jupyter.schema.events",
}
__getattr__ = _moved("arcana_jupyter.schema", _MOVED)
