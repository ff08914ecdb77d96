"""Engine mode's history bands: which turns the builder sees verbatim, and decisions for the rest.

In engine mode (adaptive context on) only the recent turns reach the builder verbatim; earlier
turns reach the prompt through the ``turn_digests`` and ``checkpoint`` sections. So that the
decision still holds one entry per message of the whole history, :func:`expand_decision` adds a
``dropped`` decision for each message left out — reason ``engine_turn_digest`` when its turn is in
the digest band, ``engine_checkpoint`` when only the checkpoint covers it — and renumbers the
builder's decisions to the full history.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message
from .decisions import ContextDecision, MessageDecision

ENGINE_DIGEST_REASON = "engine_turn_digest"
ENGINE_CHECKPOINT_REASON = "engine_checkpoint"


def select_from_turn(history: Sequence[Message], from_turn: int) -> tuple[list[Message], list[int]]:
    """Messages without a turn (the system prompt) and those of turn >= ``from_turn``, with their indices."""
    kept = [(i, m) for i, m in enumerate(history) if m.turn is None or m.turn >= from_turn]
    return [m for _, m in kept], [i for i, _ in kept]


def expand_decision(
    decision: ContextDecision,
    history: Sequence[Message],
    kept_indices: Sequence[int],
    digest_turns: Sequence[int],
    counts: Sequence[int],
) -> ContextDecision:
    """Renumber ``decision`` (made over the selected messages) to the full ``history``.

    ``counts[i]`` is the token count of ``history[i]``; ``digest_turns`` the turns of the digest band.
    """
    n_selected = len(kept_indices)
    extra = len(history) - n_selected
    kept = set(kept_indices)
    digest = set(digest_turns)
    rows: list[MessageDecision] = []
    for i, m in enumerate(history):
        if i in kept:
            continue
        rows.append(MessageDecision(
            index=i, role=m.role, outcome="dropped", fidelity=None, relevance_score=None,
            token_count_before=counts[i], token_count_after=0,
            reason=ENGINE_DIGEST_REASON if m.turn in digest else ENGINE_CHECKPOINT_REASON,
            layer="working", source="history", turn=m.turn,
        ))
    for d in decision.decisions:
        index = kept_indices[d.index] if d.index < n_selected else d.index + extra
        rows.append(MessageDecision(**{**dict(d), "index": index}))
    rows.sort(key=lambda d: d.index)
    note = (f"engine mode: {extra} earlier message(s) reach the prompt through the turn_digests and "
            f"checkpoint sections") if extra else None
    notes = [*decision.notes, *([note] if note else [])]
    return ContextDecision(**{**dict(decision), "decisions": rows, "notes": notes})
