"""Strategies, their reason strings, ``auto`` selection and the band planning they share.

Strategies (``ContextDecision.strategy``):

- ``passthrough`` — everything verbatim. Chosen by ``auto`` when everything fits. A requested
  ``passthrough`` that does not fit falls back to ``tail_preserve`` (noted): we never exceed the
  budget.
- ``tail_preserve`` — the first user exchange (head) and a verbatim window of recent turns are
  kept; the middle is compressed in bands to one fidelity level (user messages and errors one level
  higher) or, when even that does not fit, its oldest part is dropped.
- ``aggressive_truncate`` — only the verbatim window of recent turns (plus relevant earlier turns);
  everything older is dropped.
- ``llm_summarize`` — everything older than the window is folded into one summary message written
  by the injected summariser. Without a summariser (or a recorded ``summary_override``), or without
  room for a summary, it falls back to ``tail_preserve`` (noted).
- Phase 0 (every strategy but ``passthrough``): a tool result superseded by a later identical call
  (same tool, same arguments) is stale and becomes an L3 placeholder (or is dropped with its unit).

``auto`` picks by ``utilization_before`` (uncompressed prompt tokens / available tokens):
``<= 1.0`` passthrough; ``<= 2.0`` tail_preserve; above that ``llm_summarize`` when a summariser
exists, else ``aggressive_truncate``. Between 1 and 2 the middle can usually be kept in compressed
form; above 2 compressing it would still not fit, so it goes (or is summarised).

Reasons (``MessageDecision.reason``): the seed's strings ``passthrough``, ``tail_preserve_head``,
``tail_preserve_tail``, ``tail_preserve_middle_compressed``, ``tail_preserve_middle_dropped``,
``tail_preserve_no_budget_for_middle``, ``aggressive_truncate_kept``, ``aggressive_truncate_drop``,
``llm_summarized_into_single``, ``stale_tool_result``; and ours, where none of those fits:

- ``current_input`` — the message being answered (always kept verbatim).
- ``tail_preserve_middle_kept`` — a middle message left verbatim because no compressed form of it
  is smaller (short messages).
- ``relevant_bm25`` / ``relevant_semantic`` — an older message brought back verbatim (or at L1)
  in the block of earlier turns relevant to the current input, found by the lexical ranking
  (stemmed BM25) or by the embedding model's (whichever ranked it higher); ``neighbour`` — brought
  back with it: the rest of its exchange (a user turn and the replies to it) or an exchange just
  before or after; ``recency`` — then what budget is still left goes to the most recent earlier
  turns not in the prompt yet (whole exchanges where they fit). ``recalled`` is set. (Traces recorded before
  this split say ``relevant_recalled``.)
- ``block_window_kept`` / ``block_dropped`` — the ``blocks`` drop policy (the default mode's,
  ``context/builder.py`` ``DROP_POLICIES``): in the verbatim window, or older than it (the window
  gives way a large block at a time, at multiples of ``block_fraction`` of the available tokens
  counted from the start of the conversation, so several turns only append between drops).
- ``pinned`` — a live pin; ``pin_expired`` — a pin past its ``until_turn`` (dropped).
- ``section:<name>`` — a section (``section:memory_digest``); ``task`` — the ``task=`` text.
- ``overflow`` — dropped because the messages that must be kept already exceed the budget.

Cache-friendliness: the verbatim window starts at a *quantized* position. Its start is the first
unit whose cumulative token offset from the start of the conversation reaches a multiple of the
quantum ``Q`` (``band_fraction`` of the available tokens, a quarter by default), so as the
conversation grows the window start stays put — the prompt only grows at the end — until the window
no longer fits, and then jumps forward by at least ``Q`` tokens at once. Offsets are absolute (they
never change for old messages), so the same history gives the same bands whatever happened before:
decisions are a pure function of the inputs and a turn can be rebuilt from its trace without the
previous build.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from typing import Literal

from .decisions import Fidelity

Strategy = Literal["passthrough", "tail_preserve", "aggressive_truncate", "llm_summarize"]
StrategyName = Literal["auto", "passthrough", "tail_preserve", "aggressive_truncate", "llm_summarize"]
STRATEGIES: tuple[str, ...] = ("auto", "passthrough", "tail_preserve", "aggressive_truncate", "llm_summarize")

AUTO_PASSTHROUGH_MAX = 1.0
AUTO_TAIL_PRESERVE_MAX = 2.0

# reasons
PASSTHROUGH = "passthrough"
TP_HEAD = "tail_preserve_head"
TP_TAIL = "tail_preserve_tail"
TP_MIDDLE_COMPRESSED = "tail_preserve_middle_compressed"
TP_MIDDLE_DROPPED = "tail_preserve_middle_dropped"
TP_NO_BUDGET_FOR_MIDDLE = "tail_preserve_no_budget_for_middle"
TP_MIDDLE_KEPT = "tail_preserve_middle_kept"
AT_KEPT = "aggressive_truncate_kept"
AT_DROP = "aggressive_truncate_drop"
SUMMARIZED = "llm_summarized_into_single"
STALE_TOOL_RESULT = "stale_tool_result"
CURRENT_INPUT = "current_input"
CURRENT_INPUT_COMPRESSED = "current_input_compressed"
"""The current input alone did not fit what was left of the budget: head and tail were kept."""
RELEVANT_RECALLED = "relevant_recalled"
"""(Traces recorded before relevance named its source.)"""
RELEVANT_BM25 = "relevant_bm25"
RELEVANT_SEMANTIC = "relevant_semantic"
RELEVANT_EXCERPT = "relevant_excerpt"
"""A relevant message brought back as its sentences that match the question (``block_excerpts``)."""
NEIGHBOUR = "neighbour"
RECENCY = "recency"
BLOCK_KEPT = "block_window_kept"
"""The ``blocks`` drop policy: in the verbatim window, which gives way a large block at a time."""
BLOCK_DROPPED = "block_dropped"
"""The ``blocks`` drop policy: older than the window (brought back only if relevant, late)."""
PINNED = "pinned"
PIN_EXPIRED = "pin_expired"
TASK = "task"
OVERFLOW = "overflow"


def section_reason(name: str) -> str:
    return f"section:{name}"


def choose_auto(utilization: float, has_summarizer: bool) -> Strategy:
    """The strategy ``auto`` picks for ``utilization`` (see the module docstring)."""
    if utilization <= AUTO_PASSTHROUGH_MAX:
        return "passthrough"
    if utilization <= AUTO_TAIL_PRESERVE_MAX:
        return "tail_preserve"
    return "llm_summarize" if has_summarizer else "aggressive_truncate"


def window_start(offsets: Sequence[int], budget: int, quantum: int, lo: int, hi: int) -> int:
    """Quantized start of the verbatim window over units ``[lo, len-1)``.

    ``offsets`` are cumulative unit costs (``offsets[u]`` = tokens before unit ``u``; the last entry
    is the total). Returns the smallest unit ``W`` in ``[lo, hi]`` whose offset is a multiple-of-
    ``quantum`` boundary and for which the units ``[W, end)`` cost at most ``budget`` — or ``hi``
    when even that is too much (the caller keeps unit ``hi`` onwards regardless).
    """
    total = offsets[-1]
    need = total - budget
    if need <= offsets[lo]:
        return lo
    q = -(-need // quantum) * quantum
    return min(bisect_left(offsets, q, lo, hi + 1), hi)


def next_grid(offsets: Sequence[int], w: int, quantum: int, hi: int) -> int:
    """The next quantized boundary after unit ``w`` (at most ``hi``)."""
    k = offsets[w] // quantum + 1
    nxt = bisect_left(offsets, k * quantum, w + 1, hi + 1)
    return min(max(nxt, w + 1), hi)


MIDDLE_LEVELS: tuple[Fidelity, ...] = ("L1", "L2", "L3")


def plan_middle(
    offsets: Sequence[int],
    level_cost: Callable[[int, Fidelity], int],
    mid_lo: int,
    hi: int,
    budget: int,
    quantum: int,
    window_share: float,
    fallback_level: Fidelity = "L2",
) -> tuple[int, int, Fidelity | None]:
    """Choose ``(drop_until, window_start, level)`` for ``tail_preserve``.

    Units ``[mid_lo, drop_until)`` are dropped, ``[drop_until, window_start)`` rendered at
    ``level`` (the middle), ``[window_start, end)`` verbatim. First choice: the largest quantized
    window, down to ``window_share`` of ``budget``, for which the whole middle fits at L1, L2 or L3
    (in that order of preference). Else the window gets ``window_share`` of ``budget``, the middle
    is rendered at ``fallback_level`` and its oldest part is dropped at a quantized boundary (in
    that level's cost space) until it fits.
    ``level`` is ``None`` when nothing of the middle fits.
    """
    total = offsets[-1]
    # the window never shrinks below its share of the budget to make room for the middle
    w_limit = window_start(offsets, int(budget * window_share), quantum, mid_lo, hi)
    w = window_start(offsets, budget, quantum, mid_lo, hi)
    sums = {lvl: 0 for lvl in MIDDLE_LEVELS}
    done = mid_lo
    while w <= w_limit:
        window = total - offsets[w]
        if window <= budget:
            for u in range(done, w):
                for lvl in MIDDLE_LEVELS:
                    sums[lvl] += level_cost(u, lvl)
            done = w
            room = budget - window
            for lvl in MIDDLE_LEVELS:
                if sums[lvl] <= room:
                    return mid_lo, w, lvl
        if w >= hi:
            break
        w = next_grid(offsets, w, quantum, hi)
    # fallback: the window keeps its share, the oldest middle is dropped at quantized points
    w = w_limit
    room = budget - (total - offsets[w])
    if room <= 0 or w <= mid_lo:
        return w, w, None
    level_offsets = [0]
    for u in range(mid_lo, w):
        level_offsets.append(level_offsets[-1] + level_cost(u, fallback_level))
    need = level_offsets[-1] - room
    if need <= 0:
        return mid_lo, w, fallback_level
    # quantize on absolute positions of the level's cost space so the drop point is stable
    q = -(-need // quantum) * quantum
    cut = bisect_left(level_offsets, q)
    if cut >= len(level_offsets) - 1:
        return w, w, None
    return mid_lo + cut, w, fallback_level
