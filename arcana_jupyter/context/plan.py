"""Where each unit of the conversation goes: dropped, compressed in a middle band, or in the window.

:func:`plan_conversation` decides, from the units' costs and the room left to the conversation, the
regions of the prompt (the head exchange, the units folded into a summary, dropped, in the middle
band at a fidelity level, in the verbatim window) and the room of the summary and of the block of
relevant earlier turns, as a :class:`Plan`. It writes no decision: :mod:`.assemble` does, from the plan.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

from . import strategies as S
from .decisions import Fidelity

if TYPE_CHECKING:
    from .build import Build

MIN_SUMMARY_TOKENS = 64
SUMMARY_GRID = 0.25
"""The ``summary_grid`` of classic-mode sessions (runtime/working_set.py) and of a classic what-if of
an adaptive turn: ``llm_summarize`` summarises up to the next multiple of a quarter of the available tokens,
so one summariser call serves the turns until the window passes that point (it called the summariser
on most turns of a small window: 73% of them at a 1k budget)."""


@dataclass
class Plan:
    """The regions of the conversation, as unit numbers (units before ``drop_until`` are dropped,
    from ``mid_from`` up to ``window`` in the middle band at ``level``, from ``window`` on verbatim)."""

    strategy: str
    head: int | None = None
    """The unit kept verbatim at the start (the first exchange), if any."""
    drop_until: int = 0
    mid_from: int = 0
    window: int = 0
    level: Fidelity | None = None
    """The middle band's fidelity level (``tail_preserve``); ``None``: no middle band."""
    fold_until: int = 0
    """Units before this one are folded into the summary (``llm_summarize``)."""
    summary_until: int = 0
    """The units before this one are what the summariser reads (at least ``fold_until``: with a
    ``summary_grid`` it reads on to the next grid point, so the same summary serves until the window
    passes it)."""
    summary_room: int = 0
    no_budget_middle: bool = False
    overflow: bool = False
    """What must be kept does not fit: everything else is dropped."""
    blocks: bool = False
    """The ``blocks`` drop policy planned this (see :data:`~.builder.DROP_POLICIES`)."""
    recall_room: int = 0
    """With ``blocks``: the room of the small block of relevant earlier turns."""
    tell_room: int | None = None
    """With ``block_recall="fill"`` and ``block_tell_share``: the block's room for an input that asks
    nothing (:func:`~.asking.asks`); ``None``: the input asks, or no such limit."""
    recall_fill: bool = False
    """With ``blocks``: the budget is too small for a small block; relevant, neighbour and recent
    turns fill the room left, as with ``bands``."""


def plan_conversation(build: Build, strategy: str, overflow: bool, unit_tokens: list[int], room: int) -> Plan:
    """Decide, per unit, its region: dropped / middle (level) / window; and the summary room.

    ``unit_tokens``: each unit's tokens verbatim; ``room``: the tokens left to the conversation."""
    b = build.builder
    units = build.units
    hi = len(units) - 1
    plan = Plan(strategy=strategy)
    if not units or strategy == "passthrough":
        return plan
    if overflow:
        plan.window = plan.drop_until = plan.mid_from = hi
        plan.overflow = True
        return plan
    # base (phase-0) costs: stale results at L3
    base = list(unit_tokens)
    for u in sorted({build.state.unit_of[i] for i in build.stale}):
        base[u] = sum(build.msg_cost(i, "L0")[1] for i in units[u])
    offsets = [0, *accumulate(base)]
    quantum = build.quantum
    recall_room = int(room * b.recall_share) if b.recall else 0
    if b.recall_max_tokens is not None:
        recall_room = min(recall_room, b.recall_max_tokens)

    if strategy == "llm_summarize":
        summary_room = min(b.summary_max_tokens, int(room * 0.25))
        if summary_room < MIN_SUMMARY_TOKENS:
            build.notes.append(f"no budget for a summary ({summary_room} tokens): fell back to tail_preserve")
            strategy = plan.strategy = "tail_preserve"
        else:
            w = S.window_start(offsets, room - recall_room - summary_room, quantum, 0, hi)
            summary_room = min(summary_room, room - (offsets[-1] - offsets[w]))
            if w == 0:
                build.notes.append("llm_summarize: everything fits in the verbatim window, nothing to summarise")
                return plan
            if summary_room >= MIN_SUMMARY_TOKENS:
                plan.window = plan.fold_until = plan.drop_until = plan.mid_from = w
                plan.summary_until = _summary_until(build, offsets, w, hi)
                plan.summary_room = summary_room
                return plan
            build.notes.append(f"no budget for a summary ({summary_room} tokens): fell back to tail_preserve")
            strategy = plan.strategy = "tail_preserve"
    if b.drop_policy == "blocks" and strategy in ("tail_preserve", "aggressive_truncate"):
        return _plan_blocks(build, plan, base, offsets, room, recall_room)
    if strategy == "aggressive_truncate":
        w = S.window_start(offsets, room - recall_room, quantum, 0, hi)
        plan.window = plan.drop_until = plan.mid_from = w
        return plan
    # tail_preserve
    mid_lo = 0
    if (hi > 0 and build.msgs[units[0][0]].role == "user" and base[0] <= int(room * b.head_share)
            and base[0] + base[hi] <= room - recall_room):
        plan.head = 0
        mid_lo = 1
    budget = room - recall_room - (base[0] if plan.head is not None else 0)
    drop_until, w, level = S.plan_middle(offsets, build.unit_cost, mid_lo, hi, budget, quantum, b.window_share)
    plan.drop_until = plan.mid_from = drop_until
    plan.window, plan.level = w, level
    if level is None:
        plan.drop_until = plan.mid_from = w
        plan.no_budget_middle = w > mid_lo
    return plan


def _summary_until(build: Build, offsets: list[int], w: int, hi: int) -> int:
    """Where the summariser's input ends for a window starting at unit ``w``: ``w`` itself, or with a
    ``summary_grid`` the first unit at or after the next multiple of the grid (a share of the
    available tokens, counted from the conversation's start) — the same folded messages, so the same
    cached summary, for every turn until the window passes that point. The messages between ``w``
    and it are both summarised and verbatim in the window."""
    grid = build.builder.summary_grid
    if grid <= 0:
        return w
    step = max(build.quantum, int(build.available * grid))
    target = -(-offsets[w] // step) * step
    until = bisect_left(offsets, target, w, hi)
    return until if until < hi else w  # a grid point past the turns before the input: up to the window


def _plan_blocks(build: Build, plan: Plan, base: list[int], offsets: list[int], room: int, recall_room: int
                 ) -> Plan:
    """The head exchange and the window, dropped a block at a time at absolute positions; a small
    block of relevant turns, or on budgets too small for one, the usual fill (DROP_POLICIES)."""
    b = build.builder
    hi = len(build.units) - 1
    block_room = int(room * b.block_recall_share) if b.recall else 0
    if b.recall_max_tokens is not None:
        block_room = min(block_room, b.recall_max_tokens)
    # ``fill`` (BLOCK_RECALLS): the block keeps its share and takes what the window leaves too
    fill = b.recall and b.block_recall == "small" and block_room < b.block_recall_min
    if fill:
        block_room = recall_room
    lo = 0
    if (hi > 0 and build.msgs[build.units[0][0]].role == "user" and base[0] <= int(room * b.head_share)
            and base[0] + base[hi] <= room - block_room):
        plan.head = 0
        lo = 1
    budget = room - block_room - (base[0] if lo else 0)
    w = S.window_start(offsets, budget, build.block_quantum, lo, hi)
    if w <= lo:  # nothing between the head and the window: no head of its own
        plan.head = None
        w = S.window_start(offsets, room - block_room, build.block_quantum, 0, hi)
    plan.window = plan.drop_until = plan.mid_from = w
    plan.blocks, plan.recall_room, plan.recall_fill = True, block_room, fill
    return plan
