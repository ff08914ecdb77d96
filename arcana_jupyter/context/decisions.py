"""The decision models, re-exported: they live in :mod:`arcana_jupyter.schema.decisions`.

They are plain data shared by the builder (here), the trace (ground layer), the CLI and the widgets,
so they belong to the ground layer; this module keeps the old import path working.
"""

from __future__ import annotations

from ..schema.decisions import (
    BudgetSnapshot,
    ContextDecision,
    ContextReport,
    Fidelity,
    Layer,
    LayerReport,
    MessageDecision,
    Outcome,
    Placement,
    Source,
    TokenBudget,
    decision_record,
)

__all__ = [
    "BudgetSnapshot",
    "ContextDecision",
    "ContextReport",
    "Fidelity",
    "Layer",
    "LayerReport",
    "MessageDecision",
    "Outcome",
    "Placement",
    "Source",
    "TokenBudget",
    "decision_record",
]
