"""Strategy selection and the quantized band planning."""

from __future__ import annotations

from itertools import accumulate, pairwise

from arcana_jupyter.context.strategies import choose_auto, next_grid, plan_middle, window_start


def offsets(costs: list[int]) -> list[int]:
    return [0, *accumulate(costs)]


def test_auto_thresholds():
    assert choose_auto(0.3, False) == "passthrough"
    assert choose_auto(1.0, True) == "passthrough"
    assert choose_auto(1.01, True) == "tail_preserve"
    assert choose_auto(2.0, False) == "tail_preserve"
    assert choose_auto(2.5, False) == "aggressive_truncate"
    assert choose_auto(2.5, True) == "llm_summarize"


def test_window_start_is_quantized_and_moves_rarely():
    costs = [50] * 100
    starts = []
    for n in range(20, 101):
        off = offsets(costs[:n])
        w = window_start(off, 1000, 250, 0, n - 1)
        assert off[-1] - off[w] <= 1000
        assert off[w] % 250 == 0
        starts.append(w)
    changes = sum(a != b for a, b in pairwise(starts))
    assert changes <= len(starts) // 4  # moves once per quantum (5 messages), not every message


def test_window_start_everything_fits_and_never_past_the_input():
    off = offsets([10, 10, 10])
    assert window_start(off, 100, 16, 0, 2) == 0
    off = offsets([10, 10, 500])
    assert window_start(off, 100, 16, 0, 2) == 2


def test_next_grid_advances():
    off = offsets([10] * 10)
    assert next_grid(off, 0, 25, 9) == 3
    assert next_grid(off, 8, 25, 9) == 9


def test_plan_middle_prefers_the_largest_window_then_the_highest_level():
    costs = [100] * 20
    off = offsets(costs)
    levels = {"L1": 60, "L2": 30, "L3": 10}
    drop, w, level = plan_middle(off, lambda u, lv: levels[lv], 1, 19, 1500, 100, 0.6)
    window = off[-1] - off[w]
    middle = (w - drop) * levels[level]
    assert window + middle <= 1500 and drop == 1
    # the highest level that fits at that window
    if level != "L1":
        assert (w - 1) * levels["L1"] > 1500 - window


def test_plan_middle_drops_the_oldest_when_nothing_fits():
    costs = [100] * 200
    off = offsets(costs)
    drop, w, level = plan_middle(off, lambda u, lv: 40, 1, 199, 2000, 250, 0.6)
    assert level == "L2" and 1 < drop < w
    assert off[-1] - off[w] + (w - drop) * 40 <= 2000


def test_plan_middle_with_no_room():
    off = offsets([100] * 5 + [5000])
    drop, w, level = plan_middle(off, lambda u, lv: 40, 1, 5, 1000, 250, 0.6)
    assert level is None and drop == w == 5
