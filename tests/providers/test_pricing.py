"""Prices: the built-in table, prefix matching, overrides, free and unknown models."""

from __future__ import annotations

import pytest

from arcana_jupyter.providers.base import Usage
from arcana_jupyter.providers.pricing import Price, cost, price_for


def test_cost_splits_cached_and_uncached_input():
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cached_input_tokens=400_000)
    # gpt-4o-mini: 0.15 in, 0.60 out, 0.075 cached
    assert cost("gpt-4o-mini", usage) == pytest.approx(0.6 * 0.15 + 0.4 * 0.075 + 0.60)


def test_names_match_with_provider_prefix_and_dated_suffix():
    assert price_for("openai:gpt-4o-mini") == price_for("gpt-4o-mini-2024-07-18") == Price(0.15, 0.60, 0.075)
    assert price_for("gpt-4o-2024-08-06") == Price(2.50, 10.00, 1.25)  # longest prefix wins over nothing shorter
    assert price_for("claude-sonnet-4-5-20250929") == Price(3.00, 15.00, 0.30)


def test_local_replay_and_unknown_models_cost_nothing_and_say_so():
    usage = Usage(input_tokens=5000, output_tokens=5000)
    for model in ("local", "local:SmolLM2-135M-Instruct.Q4_1", "replay:r_1", "ollama:llama3", "mystery-model"):
        assert price_for(model) is None
        assert cost(model, usage) == 0.0


def test_overrides_replace_and_extend_the_table():
    usage = Usage(input_tokens=2_000_000, output_tokens=1_000_000, cached_input_tokens=1_000_000)
    assert cost("gpt-4o-mini", usage, {"gpt-4o-mini": (1.0, 2.0)}) == pytest.approx(2.0 + 2.0)
    assert cost("my-model", usage, {"my-model": (1.0, 2.0, 0.5)}) == pytest.approx(1.0 + 0.5 + 2.0)
    with pytest.raises(ValueError, match="input, output"):
        price_for("x", {"x": (1.0,)})
