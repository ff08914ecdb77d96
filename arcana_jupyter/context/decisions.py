"""The decision models, re-exported: they live in :mod:`arcana_jupyter.schema.decisions`.

They are plain data shared by the builder (here), the trace (ground layer), the CLI and the widgets,
so they belong to the ground layer; this module keeps the old import path working.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

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
    "recorded_scores",
]

SCORE_RUNNERS_UP = 8
"""How many of the best-scored rows that relevance did not bring back keep their score in the trace:
the candidates nearest the cut-off (see :func:`recorded_scores`)."""

SCORE_DECIDED_REASONS = frozenset({
    "relevant_recalled", "relevant_bm25", "relevant_semantic", "tail_preserve_middle_kept",
})
"""Reasons whose outcome the relevance score decided (context/strategies.py)."""


def recorded_scores(rows: Sequence[dict[str, Any]], runners_up: int = SCORE_RUNNERS_UP) -> list[dict[str, Any]]:
    """The decision rows as the trace records them: the relevance score only where it decided something.

    The builder scores every history row against each new input (BM25 over a growing corpus plus a
    recency term that moves for every row), so writing every score made each record grow with the
    history. A row keeps its ``relevance_score`` when it was recalled or its reason is a relevance
    reason (:data:`SCORE_DECIDED_REASONS`), and so do the ``runners_up`` best-scored other rows (the
    candidates nearest the cut-off); every other row records ``None`` (not recorded). The outcomes,
    fidelities and tokens are untouched, and ``report --verify`` compares those, never scores.
    ``rows`` are decision dumps; changed rows are copies, the others are returned as they are."""
    decided = SCORE_DECIDED_REASONS
    others: list[tuple[float, int]] = []
    for i, row in enumerate(rows):
        score = row.get("relevance_score")
        if score is not None and not row.get("recalled") and row.get("reason") not in decided:
            others.append((score, -i))
    if len(others) <= runners_up:
        return list(rows)
    keep = {-i for _, i in heapq.nlargest(runners_up, others)}
    out = list(rows)
    for _, j in others:  # (most rows of a long history: one copy each, no pass over the others)
        if -j not in keep:
            out[-j] = {**rows[-j], "relevance_score": None}
    return out
