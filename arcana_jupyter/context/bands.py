"""Engine mode's overflow: which turns did not fit verbatim, and where their content went.

The builder always gets the whole history, in both modes. In engine mode (adaptive context on)
the turns it could not keep verbatim (:func:`lost_turns`) are then handed to the adaptive engine,
whose ``checkpoint`` and ``turn_digests`` sections stand in for them in a second build;
:func:`annotate_overflow` marks each of their messages with the section that carries it
(``MessageDecision.section``), so the decision still says, per message, where its content went.

Traces recorded before that (``inputs.history_from_turn`` set) gave the builder only a fixed band of
recent turns: :func:`select_from_turn` and :func:`expand_decision` rebuild those exactly — a
``dropped`` decision with reason ``engine_turn_digest`` or ``engine_checkpoint`` for each message
left out, the builder's decisions renumbered to the full history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..messages import Message
from .decisions import ContextDecision, MessageDecision
from .sections import ContextSection

ENGINE_DIGEST_REASON = "engine_turn_digest"
ENGINE_CHECKPOINT_REASON = "engine_checkpoint"


@dataclass(frozen=True)
class OverflowCover:
    """Sections that stand in for earlier turns which did not fit, and which turns each carries."""

    sections: list[ContextSection] = field(default_factory=list)
    carries: dict[str, list[int]] = field(default_factory=dict)
    """Section name -> the turns whose content it carries (in the order of precedence)."""


def lost_turns(decision: ContextDecision) -> list[int]:
    """The earlier turns of which some message did not reach the prompt verbatim in its place:
    dropped, summarised or compressed, or brought back only late as relevant to this input (the
    late block changes with every question; what stands in for a turn must not).

    The current turn is never lost (its input is always kept)."""
    current = decision.turn
    lost: set[int] = set()
    for d in decision.decisions:
        t = d.turn
        if t is None or t in lost or d.source != "history" or (current is not None and t >= current):
            continue  # (a lost turn's other rows first: most rows of a long history)
        if d.outcome != "kept" or d.fidelity != "L0" or d.recalled:
            lost.add(t)
    return sorted(lost)


def annotate_overflow(decision: ContextDecision, carries: Mapping[str, Iterable[int]]) -> int:
    """Mark, in place, each history message of a lost turn with the section that carries its turn
    (``carries``: section name -> turns, the first name wins). Returns how many were marked."""
    by_turn: dict[int, str] = {}
    for name, turns in carries.items():
        for t in turns:
            by_turn.setdefault(t, name)
    if not by_turn:
        return 0
    marked = 0
    for d in decision.decisions:
        if d.source != "history" or d.turn is None or d.turn not in by_turn:
            continue
        if d.outcome == "kept" and d.fidelity == "L0" and not d.recalled:
            continue
        d.__dict__["section"] = by_turn[d.turn]
        marked += 1
    return marked


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
