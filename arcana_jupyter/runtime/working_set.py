"""How a session's working set is set up: its builder in the mode's drop policy (the default mode gives
way a block at a time and fills what the window leaves with the earlier messages relevant to the
input; classic mode drops by bands and summarises), and the room a capability's cover for the turns
that did not fit may take (engine mode)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..context.builder import AsyncSummarizer, WorkingSetBuilder
from ..context.decisions import ContextDecision, TokenBudget
from ..context.embeddings import Embedder
from ..context.plan import SUMMARY_GRID
from ..tokens import TokenCounter
from .config import RuntimeConfig

OVERFLOW_SHARE = 0.2
"""Most of the budget the sections standing in for turns that did not fit may take (engine mode)."""
MIN_OVERFLOW_TOKENS = 64
BLOCK_FRACTION = 0.35
"""The default mode's drop: this part of the available tokens at a time (the builder's default is a
quarter). A drop re-sends nearly the whole prompt, so larger drops, rarer, keep more of it cached
(measured on the dev split of benchmarks/retention/sessions.py at 4k: prefix reuse once full 80% at a
quarter, 82% at 0.35, same facts found). What a drop frees does not stay empty: the block of relevant
earlier messages takes it (``block_recall="fill"``)."""
RELEVANT_SHARE = 0.35
"""The least of the conversation budget the default mode keeps for the earlier messages relevant to the
input (``block_recall_share``; the block also takes whatever the window leaves free), at most
:data:`RELEVANT_MAX_TOKENS` of it. Measured at a 4k budget on three conversations of the chats dev split
(benchmarks/retention/conversations.py): evidence in the prompt 0.61 (classic mode 0.61) for 1,426
uncached prompt tokens per turn once the window is full (classic 2,394)."""
RELEVANT_MAX_TOKENS: int | None = 1536
"""... as classic mode's relevant block (``recall_max_tokens``): the part of the prompt that changes with
every question is what a provider bills again."""
RELEVANT_MIN_TOKENS = 64
"""Below this reserved room (tiny windows) the block still takes what the window leaves."""


def session_builder(config: RuntimeConfig, budget: TokenBudget, counter: TokenCounter, summarizer: AsyncSummarizer,
                    embedder: Embedder | None, embedding_cache: Path | None) -> WorkingSetBuilder:
    """The builder of a session with ``config`` (its mode, strategy and recall share)."""
    if config.context_engine:
        # the default mode: the window gives way a block at a time, so the prompt's prefix survives the
        # turns between drops, and the earlier messages relevant to the input come back whole after it
        return WorkingSetBuilder(budget=budget, strategy=config.strategy, counter=counter, summarizer=summarizer,
                                 embedder=embedder, embedding_cache=embedding_cache,
                                 recall_share=config.recall_share, drop_policy="blocks", block_recall="fill",
                                 block_recall_min=RELEVANT_MIN_TOKENS, block_recall_share=RELEVANT_SHARE,
                                 recall_max_tokens=RELEVANT_MAX_TOKENS, block_fraction=BLOCK_FRACTION)
    return WorkingSetBuilder(budget=budget, strategy=config.strategy, counter=counter, summarizer=summarizer,
                             embedder=embedder, embedding_cache=embedding_cache, recall_share=config.recall_share,
                             drop_policy="bands", summary_grid=SUMMARY_GRID)


def cover_room(drop_policy: str, turns: Sequence[int], decision: ContextDecision, available: int) -> int:
    """The most tokens a cover for ``turns`` may take: at most ``OVERFLOW_SHARE`` of the budget, and at
    most half of what leaving those turns freed (never less than ``MIN_OVERFLOW_TOKENS``)."""
    wanted = set(turns)
    if drop_policy == "blocks":
        # what those turns cost verbatim, whether or not some came back as relevant to this input:
        # the cover (in the head) must not change with the question between the window's drops
        freed = sum(d.token_count_before for d in decision.decisions
                    if d.source == "history" and d.turn in wanted)
    else:
        freed = sum(d.token_count_before - d.token_count_after for d in decision.decisions
                    if d.source == "history" and d.turn in wanted)
    return max(MIN_OVERFLOW_TOKENS, min(int(available * OVERFLOW_SHARE), freed // 2))
