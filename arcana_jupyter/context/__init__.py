"""The working-set builder (seed 003): what the model sees on each call, and why.

``WorkingSetBuilder(budget=...).build(history, ...)`` returns the messages to send and the evidence
(one ``MessageDecision`` per input, a per-layer ``ContextReport``, a ``BudgetSnapshot``).
"""

from ..compat import moved as _moved
from ..schema.pins import Pin
from .builder import WorkingSetBuilder
from .decisions import BudgetSnapshot, ContextDecision, ContextReport, MessageDecision, TokenBudget
from .sections import ContextSection, PinBlock

__all__ = [
    "BudgetSnapshot",
    "ContextDecision",
    "ContextReport",
    "ContextSection",
    "MessageDecision",
    "Pin",
    "PinBlock",
    "TokenBudget",
    "WorkingSetBuilder",
]


# Names exported before 0.1's public surface (issue 25), answered for one more release with a warning.
_MOVED = {
    "AsyncSummarizer": "arcana_jupyter.context.builder",
    "BuildResult": "arcana_jupyter.context.builder",
    "CHECKPOINT_SECTION": "arcana_jupyter.context.sections",
    "FidelityPolicy": "arcana_jupyter.context.fidelity",
    "LayerReport": "arcana_jupyter.context.decisions",
    "STRATEGIES": "arcana_jupyter.context.strategies",
    "Summarizer": "arcana_jupyter.context.builder",
    "choose_auto": "arcana_jupyter.context.strategies",
}
__getattr__ = _moved("arcana_jupyter.context", _MOVED)
