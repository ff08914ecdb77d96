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

OVERFLOW_SHARE = 0.1
"""Most of the budget the sections standing in for turns that did not fit may take (engine mode): the
checkpoint of what they said and the latest of their digests (at least :data:`MIN_OVERFLOW_TOKENS`). A
tenth (it was a fifth): what answers a question about those turns is the turns themselves, which the
relevant block brings back whole; at a fifth the cover held 788 tokens of a 4k prompt's 3,800 (dev split
of benchmarks/retention/conversations.py, evidence 0.75 / 0.83 against 0.76 / 0.84 at a tenth). Not a
twentieth: on the dev splits it found 0.01 more at 2k (0.67 / 0.76 against 0.66 / 0.75) and 0.01 less on
the test split's talks, while a 2k window's checkpoint no longer fitted (no section carried the turns that
left: tests/trace/test_whatif_modes.py)."""
MIN_OVERFLOW_TOKENS = 64
BLOCK_OF_WINDOW = 0.6
"""The default mode's drop, as a part of the verbatim window's room (its share of the available tokens is
``1 - RELEVANT_SHARE``): the window gives way this much at a time, so it holds between 40% of its room and
all of it — never nearly nothing — and the prompt only grows at its end between drops. A drop re-sends the
whole prompt, so larger drops, rarer, keep more of it cached; at 0.6 of a 40% window (0.24 of the budget):
evidence 0.78 / 0.86 and 980 / 712 uncached tokens per turn at 4k, prefix reuse 60% / 66% (dev splits of
benchmarks/retention/conversations.py). It was 0.35 of the whole budget when the window had 65% of it; with
40% that emptied the window at a drop and broke the prefix on the calls after it."""
RELEVANT_SHARE = 0.6
"""The least of the conversation budget the default mode keeps for the earlier messages relevant to a
question or a request (``block_recall_share``; the block also takes whatever the window leaves free): the
verbatim window takes at most the other 40%. Classic mode keeps half for them and fills the rest of its
window's room too, so at 0.35 the default found less of a question's evidence than classic at every
budget (0.72 / 0.80 against 0.77 / 0.85 at 4k on the dev splits of benchmarks/retention/conversations.py);
at 0.5, 0.76 / 0.84; at 0.6, 0.78 / 0.86. Not 0.7 (with the window's drop at 0.18 of the budget; learned fusion
version 2, dev splits, 2k / 4k): 0.85 / 0.93 -> 0.86 / 0.93 on talks and 0.86 / 0.92 -> 0.88 / 0.92 on chats, within
what three conversations tell apart, for 15-69 more uncached tokens per turn and 5-6 points less prefix reuse.
An input that asks nothing leaves most of it free (:data:`TELL_SHARE`), so the room costs nothing on the turns
that do not need it."""
RELEVANT_MAX_TOKENS: int | None = None
"""No cap on the block (it was 1,536 tokens, as classic mode's): on large windows a question gets the room
its evidence needs, and what the block costs is bounded by :data:`TELL_SHARE` on the turns that ask nothing."""
TELL_SHARE = 0.08
"""The most of the available tokens the block of relevant earlier messages takes when the turn's user
message asks nothing — no question, no request (``block_tell_share``; context/asking.py): the best few
messages, a reminder, where a question gets all the room the window leaves. The block follows the input, so
it is billed again on every call: in two-person conversations most turns are statements, and giving them
the whole room re-sent 1,786 uncached tokens per turn at a 4k budget (classic mode 2,124; dev split of
benchmarks/retention/conversations.py)."""
BLOCK_RANKING = "fused"
"""The order the relevant block takes earlier messages in (``block_ranking``): the fused ranking alone, as
classic mode's builder ranks them. The block used to alternate it with the question's literal (BM25) best
matches, which put weaker look-alikes ahead of a two-fact question's second fact: on the dev splits of
benchmarks/retention/conversations.py at 1k / 2k, talks 0.63 / 0.73 -> 0.67 / 0.76 and chats 0.63 / 0.75
-> 0.66 / 0.78 (classic mode 0.67 / 0.77 and 0.65 / 0.77), two-fact questions most (talks 1k 0.54 -> 0.65)."""
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
                                 recall_max_tokens=RELEVANT_MAX_TOKENS,
                                 block_fraction=round(BLOCK_OF_WINDOW * (1 - RELEVANT_SHARE), 4),
                                 block_tell_share=TELL_SHARE, block_ranking=BLOCK_RANKING, quote_dates=True)
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
