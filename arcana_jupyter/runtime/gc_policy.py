"""Garbage collection in long sessions: the heap that outlives a turn is frozen (a collection skips the history).

CPython's collector walks every tracked object of the oldest generation on a full collection, and runs
one whenever the objects promoted since the last one exceed a quarter of that generation. A turn
promotes objects in proportion to the history (each build's decision rows are alive while the next
collections run), and the heap grows with it (the transcript, its caches, the events of recent turns),
so full collections came every ~10 turns and each walked the whole heap: measured with
``benchmarks/bench_frames.py``'s session (8k window, instant model), they took 18.6 ms per turn on
average at turn 1,000 (a fifth of the turn's CPU time; one collection ~190 ms), more at 2,000.

From turn :data:`FREEZE_FROM_TURN` of a session on, :func:`after_turn` collects the young generations
(this turn's cyclic garbage is freed, not frozen: what survived the turn, a few milliseconds) and then
``gc.freeze()``s everything that survives: the next turns' collections walk only what those turns made.
Frozen objects are still freed by reference counting as usual (an old build's rows, a replaced cache
entry); only garbage *cycles* among them wait. So that they do not wait long (the collector is the
process's: a notebook's own objects are frozen too), the frozen set is thawed and collected in full after
64 frozen turns, 128, 256, then every 256 (:data:`FIRST_THAW`, :data:`MAX_THAW_INTERVAL`), and thawed when
a session closes (:func:`release`: a closed session is itself a garbage cycle). Shorter sessions (tests,
most notebooks) leave the collector alone.

Off unless asked for: ``ARCANA_GC_FREEZE=1`` in the environment (read at import) or :data:`ENABLED`
``= True``. The collector is the process's, so in a notebook the user's own objects are frozen too and a
garbage cycle among them (a large frame in a cycle, deleted) would be held until the next thaw — up to
256 turns. A library must not hold its user's memory for a ~19 ms-per-turn saving at 1,000 turns (a
turn with a real model takes seconds); a long batch run (a benchmark, a scripted agent in a process of
its own) may opt in. Nothing here changes what a turn decides or records.
"""

from __future__ import annotations

import gc
import os

ENABLED = os.environ.get("ARCANA_GC_FREEZE", "0").strip().lower() in ("1", "true", "yes", "on")
"""Freeze the heap after each turn of a long session (see the module docstring): off unless asked for."""

FREEZE_FROM_TURN = 200
"""A session's turns from this one on freeze the heap after them: below it a full collection is cheap."""
FIRST_THAW = 64
"""The frozen set is thawed and collected in full after this many frozen turns (of any session of the
process), then after twice as many each time up to :data:`MAX_THAW_INTERVAL`: counting turns costs
nothing, where counting the frozen objects (``gc.get_freeze_count``) walks them all."""
MAX_THAW_INTERVAL = 256
"""... and then every this many: cyclic garbage among frozen objects (a notebook's own too) waits at most
this long, for one full collection per 256 turns (a few hundred milliseconds at 2,000 turns)."""

_turns = 0
"""Frozen turns so far (0: nothing frozen yet)."""
_next_thaw = FIRST_THAW


def after_turn(turn: int) -> None:
    """After turn ``turn`` of a session: collect the young generations, then freeze what survives (or
    thaw and collect in full, see above). Nothing before :data:`FREEZE_FROM_TURN`."""
    global _turns, _next_thaw
    if not ENABLED or turn < FREEZE_FROM_TURN or not gc.isenabled():  # a program that runs the collector keeps it
        return
    _turns += 1
    if _turns >= _next_thaw:
        _next_thaw = _turns + min(_turns, MAX_THAW_INTERVAL)
        gc.unfreeze()
        gc.collect()
    else:
        gc.collect(1)
    gc.freeze()


def release() -> None:
    """A session closed: thaw the frozen set (the collector may free what the session held in cycles), and
    have the next frozen turn of another session collect in full before it freezes again."""
    global _next_thaw
    if _turns and ENABLED:
        gc.unfreeze()
        _next_thaw = _turns + 1
