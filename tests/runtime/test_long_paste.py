"""A turn whose input had to be compressed never poisons the turns after it (engine mode, the default)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripted_chat import events_of

from arcana_jupyter.exceptions import ContextLengthError
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime.tool_budget import tool_cap
from arcana_jupyter.tokens import TokenCounter

WINDOW = 2048
PASTE = ("The quarterly report shows revenue grew in every region while costs stayed flat. " * 700)[:50_000]


def strict_model() -> FunctionProvider:
    """A model that refuses, like llama.cpp, any request (the summariser's too) over its window."""
    counter = TokenCounter()

    def answer(request: LLMRequest) -> LLMResponse:
        n = counter.count_messages(request.messages)
        if n >= WINDOW:
            raise ContextLengthError(f"the prompt ({n} tokens) does not fit the context window ({WINDOW})",
                                     provider="function", prompt_tokens=n, limit=WINDOW)
        if request.messages[0].content.startswith("Summarise the conversation"):
            return LLMResponse(message=Message(role="assistant", content="Summary: a long report was pasted."),
                               usage=Usage(input_tokens=n, output_tokens=8))
        return LLMResponse(message=Message(role="assistant", content="Revenue grew in every region."),
                           usage=Usage(input_tokens=n, output_tokens=6))

    return FunctionProvider(answer)


@pytest.mark.parametrize("engine", [True, False], ids=["default", "classic"])
async def test_a_50k_paste_then_every_later_turn_is_answered_and_recorded(tmp_path: Path, engine: bool) -> None:
    # classic mode summarises what does not fit (llm_summarize): the summariser's own prompt is bounded too
    provider = strict_model()
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, total_window=WINDOW, embeddings="off",
                                           context_engine=engine), provider=provider)
    async with runtime.chat() as chat:
        first = await chat.send("Hi! Please keep your answers short.")
        pasted = await chat.send(PASTE + "\nSummarise it in two sentences.")
        later = [await chat.send(f"Question {i}: which regions grew?", raise_errors=False) for i in range(3, 9)]
        path = chat.trace_path
        stored = next(m for m in chat.history if m.role == "user" and m.turn == 2)
    assert first.status == pasted.status == "ok"
    assert [r.status for r in later] == ["ok"] * len(later), [str(r.error) for r in later]
    assert stored.content.startswith(PASTE)  # the history keeps the original; the prompt carries what fits
    events = events_of(path)
    decided = {e["turn"] for e in events if e["event_type"] == "context_decision"}
    assert decided == set(range(1, 9))  # every turn built and recorded
    assert not [e for e in events if e["event_type"] == "error"]


async def test_the_runtimes_tools_take_at_most_their_share_of_a_small_windows_budget(tmp_path: Path) -> None:
    provider = strict_model()
    # the default mode's adaptive tools are ~930 tokens of specs in full: a 1,024 window gets the most
    # useful few, compact, within a tenth of its prompt budget past the first 1,000 tokens (none at all), and
    # the first decision names what was held back
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, total_window=1024, embeddings="off"),
                      provider=provider)
    async with runtime.chat() as chat:
        reply = await chat.send("Hello there.")
        path = chat.trace_path
        held = chat.held_back_tools
    counter = TokenCounter()
    sent = provider.requests[-1].tools
    assert reply.status == "ok" and counter.count_tools(sent or []) <= tool_cap(1024 - 256) == 0
    assert held and not {t.name for t in sent} & set(held)
    decision = next(e for e in events_of(path) if e["event_type"] == "context_decision")["metadata"]
    assert not decision["budget"]["overflow"]
    assert any("held back: " + ", ".join(held) in n for n in decision["decision"]["notes"])
    big = Runtime(config=RuntimeConfig(trace_dir=tmp_path, total_window=32768, embeddings="off"), provider=provider)
    async with big.chat() as chat:
        await chat.send("Hello again.")
        assert chat.held_back_tools == []
    assert len(provider.requests[-1].tools) == 10  # a window with room gets every one, in full
