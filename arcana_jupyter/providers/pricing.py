"""What a call cost: a small built-in USD price table, overridable.

Prices are USD per million tokens: (input, output, cached input). They are list prices as
published by the providers in 2025 and change over time: pass ``prices=`` (or
``RuntimeConfig.prices``) to correct or extend them. Local models, replayed calls and models not
in the table cost ``0.0`` — :func:`price_for` returns ``None`` for them so a caller can say
"unknown" rather than "free".

A model name matches the table exactly, without its ``provider:`` prefix, or by the longest
table entry it starts with (``gpt-4o-mini-2024-07-18`` -> ``gpt-4o-mini``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from .base import Usage


class Price(NamedTuple):
    """USD per million tokens."""

    input: float
    output: float
    cached_input: float


BUILTIN_PRICES: dict[str, Price] = {
    # OpenAI
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "o3": Price(2.00, 8.00, 0.50),
    "o4-mini": Price(1.10, 4.40, 0.275),
    # Anthropic (cached input = cache reads at 0.1x; cache writes are billed as input here)
    "claude-opus-4": Price(15.00, 75.00, 1.50),
    "claude-opus-4-1": Price(15.00, 75.00, 1.50),
    "claude-opus-4-5": Price(5.00, 25.00, 0.50),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30),
    "claude-sonnet-4-5": Price(3.00, 15.00, 0.30),
    "claude-3-7-sonnet": Price(3.00, 15.00, 0.30),
    "claude-3-5-sonnet": Price(3.00, 15.00, 0.30),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08),
    "claude-3-haiku": Price(0.25, 1.25, 0.03),
    # DeepSeek
    "deepseek-chat": Price(0.28, 0.42, 0.028),
    "deepseek-reasoner": Price(0.28, 0.42, 0.028),
}

FREE_PROVIDERS = ("local", "replay", "function", "scripted", "ollama", "llamacpp", "lmstudio", "vllm")
"""Providers whose calls cost nothing (they run on your own machine or replay a recording)."""

PriceLike = Price | Sequence[float]


def _as_price(value: PriceLike) -> Price:
    values = [float(v) for v in value]
    if len(values) == 2:
        return Price(values[0], values[1], values[0])
    if len(values) == 3:
        return Price(values[0], values[1], values[2])
    raise ValueError(
        f"a price is (input, output) or (input, output, cached_input) USD per million tokens, got {value!r}"
    )


def price_for(model: str, prices: Mapping[str, PriceLike] | None = None) -> Price | None:
    """The price of ``model`` (``gpt-4o-mini`` or ``openai:gpt-4o-mini``), ``None`` when unknown or free.

    ``prices`` overrides and extends the built-in table; a 2-tuple (input, output) bills cached
    input at the input price.
    """
    provider, _, name = model.rpartition(":")
    if provider in FREE_PROVIDERS or model in FREE_PROVIDERS:
        return None
    table: dict[str, Price] = dict(BUILTIN_PRICES)
    for key, value in (prices or {}).items():
        table[key] = _as_price(value)
    for candidate in (model, name):
        if candidate in table:
            return table[candidate]
    matches = [key for key in table if name.startswith(key)]
    return table[max(matches, key=len)] if matches else None


def cost(model: str, usage: Usage, prices: Mapping[str, PriceLike] | None = None) -> float:
    """USD for ``usage`` on ``model``; ``0.0`` for local, replayed and unknown models (see :func:`price_for`)."""
    price = price_for(model, prices)
    if price is None:
        return 0.0
    cached = min(usage.cached_input_tokens, usage.input_tokens)
    uncached = usage.input_tokens - cached
    total = uncached * price.input + cached * price.cached_input + usage.output_tokens * price.output
    return round(total / 1_000_000, 10)
