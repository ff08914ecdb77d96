"""Classic mode's summariser: its prompt is bounded in linear time, and ``auto`` calls it at most
once per several turns (a summary grid), with the same prompts for the same folded turns."""

from __future__ import annotations

from pathlib import Path

from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime.summarizer import _within
from arcana_jupyter.tokens import TokenCounter


def _old_within(counter: TokenCounter, parts: list[str], room: int) -> list[str]:
    """The quadratic rule before: cut each part to its share, then pop the oldest until the join fits."""
    from arcana_jupyter.runtime.summarizer import _fit

    if parts and counter.count_text("\n\n".join(parts)) > room:
        share = max(16, room // len(parts) - 8)
        parts = [_fit(counter, p, share) for p in parts]
        while len(parts) > 1 and counter.count_text("\n\n".join(parts)) > room:
            parts.pop(0)
    return parts


def test_the_bounded_prompt_is_the_one_the_quadratic_rule_made():
    counter = TokenCounter()
    parts = [f"[user] message {i}: " + "the weekly numbers moved again. " * (1 + i % 7) for i in range(300)]
    for room in (64, 200, 1000, 3000, 100_000):
        assert _within(counter, list(parts), room) == _old_within(counter, list(parts), room)


async def test_classic_mode_calls_the_summariser_at_most_once_per_several_turns(tmp_path: Path):
    summaries = []

    def answer(request):
        if request.messages[0].content.startswith("Summarise the conversation"):
            summaries.append(request)
            return LLMResponse(message=Message(role="assistant", content=f"summary {len(summaries)}"),
                               usage=Usage(input_tokens=1, output_tokens=1))
        return "Noted: the figures moved as expected this week, nothing unusual in the regions."

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, total_window=1000 + 1000,
                                           response_reserve=1000, embeddings="off"),
                      provider=FunctionProvider(answer))
    turns = 60
    async with runtime.chat() as chat:
        for i in range(turns):
            await chat.send(f"Turn {i}: the weekly extract for region {i % 5} is in; " + "numbers look fine. " * 8)
        strategies = [chat.turn_bundle(t)["steps"][0]["decision"]["strategy"] for t in range(1, turns + 1)]
    summarising = strategies.count("llm_summarize")
    assert summarising >= turns // 2  # most turns of a small window summarise what does not fit ...
    assert len(summaries) <= summarising // 3  # ... from a summary made once for several of them
