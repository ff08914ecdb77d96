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


# ---- groups ------------------------------------------------------------------------------------
from pathlib import Path  # noqa: E402

from arcana_jupyter.runtime import AdaptiveConfig, MemoryConfig  # noqa: E402


def test_groups_set_the_flat_fields() -> None:
    cfg = RuntimeConfig(adaptive=AdaptiveConfig(idle_soft_after_turns=2, idle_hard_after_turns=6),
                        memory=MemoryConfig(path=Path("m.sqlite3"), digest_tokens=100))
    assert (cfg.idle_soft_after_turns, cfg.idle_hard_after_turns) == (2, 6)
    assert cfg.memory is True and cfg.memory_path == Path("m.sqlite3") and cfg.memory_digest_tokens == 100
    assert cfg.adaptive.idle_hard_after_turns == 6 and cfg.memory_group.digest_tokens == 100
    assert cfg == RuntimeConfig(idle_soft_after_turns=2, idle_hard_after_turns=6, memory=True,
                                memory_path=Path("m.sqlite3"), memory_digest_tokens=100)


def test_groups_as_dicts_and_a_disabled_memory_group() -> None:
    cfg = RuntimeConfig(adaptive={"verbatim_turns": 5}, memory={"enabled": False, "tools": "off"})
    assert cfg.verbatim_turns == 5 and cfg.memory is False and cfg.memory_tools == "off"


def test_the_recorded_shape_stays_flat() -> None:
    grouped = RuntimeConfig(adaptive=AdaptiveConfig(digest_turns=2), memory=MemoryConfig())
    flat = RuntimeConfig(digest_turns=2, memory=True)
    assert grouped.model_dump(mode="json") == flat.model_dump(mode="json")
    assert "adaptive" not in grouped.model_dump() and grouped.model_dump()["memory"] is True


def test_a_group_disagreeing_with_a_flat_keyword_names_both() -> None:
    with pytest.raises(ValidationError, match=r"idle_soft_after_turns=4 and adaptive.idle_soft_after_turns=2"):
        RuntimeConfig(idle_soft_after_turns=4, adaptive=AdaptiveConfig(idle_soft_after_turns=2))
    assert RuntimeConfig(idle_soft_after_turns=2, adaptive=AdaptiveConfig(idle_soft_after_turns=2))


def test_an_idle_pair_out_of_order_in_a_dict_group_is_refused() -> None:
    with pytest.raises(ValidationError, match="idle_hard_after_turns"):
        RuntimeConfig(adaptive={"idle_soft_after_turns": 5, "idle_hard_after_turns": 3})


def test_engine_knobs_a_runtime_config_does_not_carry_are_refused_not_dropped() -> None:
    with pytest.raises(ValidationError, match="bm25_threshold"):
        RuntimeConfig(adaptive=AdaptiveConfig(bm25_threshold=0.3))


def test_chat_overrides_take_groups_over_the_base_config(tmp_path: Path) -> None:
    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.runtime import Runtime

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, idle_soft_after_turns=4, idle_hard_after_turns=9),
                      provider=FunctionProvider(lambda messages: "ok"))
    try:
        with runtime.chat(adaptive=AdaptiveConfig(idle_soft_after_turns=1, idle_hard_after_turns=2)) as chat:
            assert (chat.config.idle_soft_after_turns, chat.config.idle_hard_after_turns) == (1, 2)
            assert chat.engine is not None and chat.engine.config.idle_hard_after_turns == 2
    finally:
        runtime.close()


def test_pool_members_take_groups_too(tmp_path: Path) -> None:
    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.runtime import Runtime

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path), provider=FunctionProvider(lambda messages: "ok"))
    try:
        pool = runtime.collaborate()
        member = pool.add("a", adaptive={"verbatim_turns": 6}, memory=MemoryConfig(enabled=False, tools="off"))
        assert member.config.verbatim_turns == 6 and member.config.memory_tools == "off"
        runtime.loop.run(pool.aclose())
    finally:
        runtime.close()


def test_memory_as_a_flat_switch_keeps_its_coercion() -> None:
    assert RuntimeConfig(memory=1).memory is True and RuntimeConfig(memory="false").memory is False
