"""The working-set builder (seed 003): what the model sees on each call, and why.

``WorkingSetBuilder(budget=...).build(history, ...)`` returns the messages to send and the evidence
(one ``MessageDecision`` per input, a per-layer ``ContextReport``, a ``BudgetSnapshot``).
"""

from ..schema.pins import Pin
from .builder import AsyncSummarizer, BuildResult, Summarizer, WorkingSetBuilder
from .decisions import (
    BudgetSnapshot,
    ContextDecision,
    ContextReport,
    LayerReport,
    MessageDecision,
    TokenBudget,
)
from .fidelity import FidelityPolicy
from .sections import CHECKPOINT_SECTION, ContextSection, PinBlock
from .strategies import STRATEGIES, choose_auto

__all__ = [
    "CHECKPOINT_SECTION",
    "STRATEGIES",
    "AsyncSummarizer",
    "BudgetSnapshot",
    "BuildResult",
    "ContextDecision",
    "ContextReport",
    "ContextSection",
    "FidelityPolicy",
    "LayerReport",
    "MessageDecision",
    "Pin",
    "PinBlock",
    "Summarizer",
    "TokenBudget",
    "WorkingSetBuilder",
    "choose_auto",
]
