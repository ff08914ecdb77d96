"""The evidence a working-set build leaves behind (seed 003): one decision per input message.

These models are the contract between the builder, the trace, the CLI, the widgets and the
JupyterLab extension (whose types, ``labextension/src/schema.gen.ts``, are generated from them by
``scripts/gen_ts_types.py``: rerun it after a change).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..messages import Role

Outcome = Literal["kept", "compressed", "dropped", "summarized"]
Fidelity = Literal["L0", "L1", "L2", "L3"]
Layer = Literal["identity", "task", "working", "external"]
Source = Literal["history", "input", "pin", "section"]
Placement = Literal["head", "late"]


class TokenBudget(BaseModel):
    """The model's context window and how much of it is kept free for the reply."""

    total_window: int = Field(gt=0)
    response_reserve: int = Field(default=0, ge=0)

    @property
    def available(self) -> int:
        """Tokens the prompt (messages and tool specs) may use."""
        return max(0, self.total_window - self.response_reserve)


class MessageDecision(BaseModel):
    """What happened to one input message, and why (seed 003, plus where it came from)."""

    index: int
    role: Role
    outcome: Outcome
    fidelity: Fidelity | None
    relevance_score: float | None = None
    token_count_before: int
    token_count_after: int
    reason: str
    layer: Layer = "working"
    source: Source = "history"
    section: str | None = None
    """Section name for ``source="section"`` (e.g. ``memory_digest``), pin id for pins."""
    pinned: bool = False
    turn: int | None = None
    position: int | None = None
    """Index of the message in the prompt that was sent; ``None`` when dropped or summarised."""
    recalled: bool = False
    """True when the message was brought back late in the prompt, in the block of earlier turns
    relevant to the current input (its in-order slot keeps its stable, compressed form)."""
    anchor_position: int | None = None
    """For a recalled message whose compressed form also stays in its in-order slot: that slot's
    index in the prompt (``token_count_after`` then counts both)."""


class LayerReport(BaseModel):
    layer: Layer
    messages: int
    tokens_before: int
    tokens_after: int


class ContextReport(BaseModel):
    """Token accounting of one build, per layer and in total."""

    layers: list[LayerReport]
    total_before: int
    total_after: int
    tools_tokens: int = 0
    summary_tokens: int = 0
    prefix_tokens_reused: int | None = None
    """Prompt tokens that are an exact prefix of the previous build's prompt (cache-friendliness)."""
    prefix_messages_reused: int | None = None
    prefix_share: float | None = None
    """``prefix_tokens_reused`` as a share of the previous prompt's message tokens (what a
    provider's prefix cache can serve of this prompt, seen from the last one)."""
    uncached_tokens: int | None = None
    """Prompt tokens past the prefix this prompt shares with the previous call's (tool specs,
    then messages): what a provider's prefix cache bills again. The whole prompt on a session's
    first call; ``None`` in traces from before it was recorded."""
    recalled_tokens: int = 0
    """Tokens of the earlier messages brought back because they are relevant to the input."""
    window_dropped: int = 0
    """History messages the previous call sent in place, verbatim, that this one does not: what the
    verbatim window gave way by since the previous call (0 on a session's first call)."""
    window_dropped_tokens: int = 0
    free_reason: str | None = None
    """Why more than a quarter of the budget stayed free while earlier messages were out of the
    prompt: ``no_more_relevant`` (no other earlier message matches the input),
    ``relevant_too_large`` (the others do not fit the room left), ``small_block`` (the block of
    relevant turns is kept small by the builder's settings), ``statement`` (the input asks nothing —
    no question, no request — so the block holds the best few relevant messages only) or
    ``recall_off``; ``None`` when it did not happen."""


class BudgetSnapshot(BaseModel):
    total_window: int
    response_reserve: int
    available: int
    used: int
    """Prompt tokens sent: messages, reply priming and tool specs."""
    remaining: int
    utilization: float
    """``used / available`` after the build."""
    overflow: bool = False
    """True when even the messages that must be kept did not fit in ``available``."""


class ContextDecision(BaseModel):
    """The composition decision of one build: strategy, and one decision per input message."""

    turn: int | None = None
    step: int = 0
    strategy: str
    requested_strategy: str
    utilization_before: float
    """Uncompressed input tokens / available tokens: what ``auto`` chose the strategy by."""
    decisions: list[MessageDecision]
    overflow: bool = False
    notes: list[str] = Field(default_factory=list)
    summary: str | None = None
    """The summariser's text, when ``llm_summarize`` folded messages (recorded for exact rebuild)."""


def decision_record(decision: ContextDecision) -> dict[str, Any]:  # JSON edge: the trace form
    """``decision.model_dump(mode="json")``, about ten times faster.

    Every field of these two models already holds a JSON value (str, int, float, bool, None, a
    list of str), so the dump is a copy of their ``__dict__``s; the runtime writes one per LLM call
    with a row per history message, where pydantic's serializer was a visible share of the turn.
    tests/context/test_decision_record.py checks it equals ``model_dump(mode="json")``.
    """
    out = {k: v for k, v in decision.__dict__.items() if k in DECISION_FIELDS}
    out["notes"] = list(decision.notes)
    out["decisions"] = [row.__dict__.copy() for row in decision.decisions]
    return out


DECISION_FIELDS = frozenset(ContextDecision.model_fields)
