"""Garbage collection between turns: the long-lived heap is frozen, so a collection does not walk the history.

CPython's collector walks every tracked object of the oldest generation on a full collection, and runs
one whenever the objects promoted since the last one exceed a quarter of that generation. A turn
promotes objects in proportion to the history (each build's decision rows are alive while the next
collections run), and the heap grows with it (the transcript, its caches, the events of recent turns),
so full collections came every ~10 turns and each walked the whole heap: measured with
``benchmarks/bench_frames.py``'s session (8k window, instant model), full collections took 18.6 ms per
turn on average at turn 1,000 (about a fifth of the turn's CPU time; one collection ~190 ms), and
twice that at 2,000.

After each turn :func:`after_turn` collects the young generations (this turn's cyclic garbage is freed,
not frozen: milliseconds, what survived the turn) and then ``gc.freeze()``s everything that survives:
the next turns' collections walk only what those turns made. Frozen objects are still freed by
reference counting as usual (an old build's rows, a replaced cache entry); only garbage *cycles* among
them wait. So that they do not wait forever (the collector is the process's: a notebook's own objects
are frozen too), the frozen set is thawed and collected in full after 64 turns, 128, 256, then every
256 turns (:data:`FIRST_THAW`, :data:`MAX_THAW_INTERVAL`): one pause of a full collection per 256 turns.

``ARCANA_GC_FREEZE=0`` in the environment (read at import) or :data:`ENABLED` ``= False`` leaves the
collector alone. Nothing here changes what a turn decides or records.
"""

from __future__ import annotations

import gc
import os

ENABLED = os.environ.get("ARCANA_GC_FREEZE", "1").strip().lower() not in ("0", "false", "no", "off")
"""Freeze the heap after each turn (see the module docstring)."""

FIRST_THAW = 64
"""The frozen set is thawed and collected in full after this many turns (of any session of the process),
then after twice as many each time (128, 256, ...): counting turns costs nothing, where counting the
frozen objects (``gc.get_freeze_count``) walks them all. The heap grows with the turns, so a full
collection per doubling of the turns costs about the same per turn at any length."""
MAX_THAW_INTERVAL = 256
"""... but at least every this many turns: cyclic garbage of frozen objects (a notebook's own among them)
waits at most this long, for a full collection every 256 turns (about 1 ms per turn at 2,000 turns)."""

_turns = 0
_next_thaw = FIRST_THAW


def after_turn() -> None:
    """Collect the young generations, then freeze what survives (or thaw and collect in full, see above)."""
    global _turns, _next_thaw
    if not ENABLED or not gc.isenabled():  # a program that runs the collector itself keeps doing so
        return
    _turns += 1
    if _turns >= _next_thaw:
        _next_thaw = _turns + min(_turns, MAX_THAW_INTERVAL)
        gc.unfreeze()
        gc.collect()
    else:
        gc.collect(1)
    gc.freeze()
