"""How a session's working set is set up: its builder in the mode's drop policy (the default mode gives
way a block at a time and brings relevant excerpts back; classic mode drops by bands), and the room a
capability's cover for the turns that did not fit may take (engine mode)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..context.builder import AsyncSummarizer, WorkingSetBuilder
from ..context.decisions import ContextDecision, TokenBudget
from ..context.embeddings import Embedder
from ..tokens import TokenCounter
from .config import RuntimeConfig

OVERFLOW_SHARE = 0.2
"""Most of the budget the sections standing in for turns that did not fit may take (engine mode)."""
MIN_OVERFLOW_TOKENS = 64
BLOCK_FRACTION = 0.35
"""The default mode's drop: this part of the available tokens at a time (the builder's default is a
quarter). A drop re-sends nearly the whole prompt, so larger drops, rarer, keep more of it cached:
with the small block of excerpts the window holds between 65% and all of its room (measured on the dev
split of benchmarks/retention/sessions.py at 4k, block of excerpts up to 8%: prefix reuse once full 80%
at a quarter, 82% at 0.35, same facts found)."""
EXCERPT_BLOCK_SHARE = 0.16
"""The most of the conversation budget the default mode's block of relevant excerpts may take
(``WorkingSetBuilder(block_excerpts=True)``); weak matches and look-alikes of an excerpt taken stay
out (``EXCERPT_MATCHES["distinct"]`` in context/builder.py), so it is usually far smaller. Measured at
4k on the dev split of benchmarks/retention/sessions.py and two more splits written the same way with
other seeds: 16% finds at least classic mode's facts on all three with 82% prefix reuse once the
window is full; 8% reuses a little more but finds fewer facts on one of them (the trade-off table in
benchmarks/results/retention_sessions.md)."""
EXCERPT_BLOCK_MIN = 64
"""... and is used when that is at least this many tokens (two excerpts); below it, relevant turns,
their neighbours and recent turns fill the room left (``block_recall_min``)."""


def session_builder(config: RuntimeConfig, budget: TokenBudget, counter: TokenCounter, summarizer: AsyncSummarizer,
                    embedder: Embedder | None, embedding_cache: Path | None) -> WorkingSetBuilder:
    """The builder of a session with ``config`` (its mode, strategy and recall share)."""
    return WorkingSetBuilder(budget=budget, strategy=config.strategy, counter=counter, summarizer=summarizer,
                             embedder=embedder, embedding_cache=embedding_cache,
                             recall_share=config.recall_share,
                             # the default mode: the window gives way a block at a time, so the prompt's
                             # prefix survives the turns between drops, and the earlier turns relevant to
                             # the input come back as excerpts after it (a small block, even on small windows)
                             **(dict(drop_policy="blocks", block_excerpts=True,
                                     block_recall_min=EXCERPT_BLOCK_MIN,
                                     block_recall_share=EXCERPT_BLOCK_SHARE,
                                     block_fraction=BLOCK_FRACTION)
                                if config.context_engine else {"drop_policy": "bands"}))


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
