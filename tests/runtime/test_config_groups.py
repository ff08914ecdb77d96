"""RuntimeConfig refuses settings that cannot work together, naming the fields, instead of a chat
silently running in another mode later."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from arcana_jupyter.runtime import RuntimeConfig


def test_idle_thresholds_out_of_order_are_a_config_error_naming_both_fields() -> None:
    with pytest.raises(ValidationError) as info:
        RuntimeConfig(idle_soft_after_turns=5, idle_hard_after_turns=3)
    text = str(info.value)
    assert "idle_hard_after_turns (3) must be greater than idle_soft_after_turns (5)" in text


def test_equal_idle_thresholds_are_refused_too() -> None:
    with pytest.raises(ValidationError, match="idle_soft_after_turns"):
        RuntimeConfig(idle_soft_after_turns=5, idle_hard_after_turns=5)


def test_a_soft_threshold_past_the_default_hard_one_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"idle_hard_after_turns \(8\)"):
        RuntimeConfig(idle_soft_after_turns=10)


def test_assignment_is_checked_the_same_way() -> None:
    cfg = RuntimeConfig(idle_soft_after_turns=2, idle_hard_after_turns=4)
    with pytest.raises(ValidationError, match="idle_hard_after_turns"):
        cfg.idle_hard_after_turns = 2


def test_ordered_idle_thresholds_pass() -> None:
    cfg = RuntimeConfig(idle_soft_after_turns=2, idle_hard_after_turns=5)
    assert (cfg.idle_soft_after_turns, cfg.idle_hard_after_turns) == (2, 5)

