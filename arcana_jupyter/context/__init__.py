"""The working-set builder (seed 003): what the model sees on each call, and why.

``WorkingSetBuilder(budget=...).build(history, ...)`` returns the messages to send and the evidence
(one ``MessageDecision`` per input, a per-layer ``ContextReport``, a ``BudgetSnapshot``).
"""

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
