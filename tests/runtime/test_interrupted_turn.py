"""After an interrupt, the next turn answers the next input — on the bundled model, in process.

The bug: a turn interrupted before its first token (llama.cpp still evaluating the prompt) left its
question unanswered in the history, so the next prompt held two user messages in a row; the chat
template joined them and SmolLM2 answered the interrupted question ("Thanks, that's enough." got
an essay on photosynthesis). A turn interrupted while it streams must not disturb the model either.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arcana_jupyter.providers.base import LLMRequest, StreamChunk
from arcana_jupyter.providers.local import LocalProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.reader import TraceReader

pytestmark = pytest.mark.slow

INTERRUPTED = "Explain in detail how photosynthesis works in plants, step by step."
NEXT = "What is the capital of France?"


class HeldBack(LocalProvider):
    """The bundled model, except that the call whose last message is ``INTERRUPTED`` waits before
    its first token until it is cancelled (a long prompt still evaluating when the user stops it)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, n_ctx=2048)
        self.waiting = asyncio.Event()

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        if request.messages[-1].content == INTERRUPTED:
            self.waiting.set()
            await asyncio.sleep(60)
        async for chunk in super().stream(request):
            yield chunk


def runtime(provider: LocalProvider, tmp_path: Path) -> Runtime:
    return Runtime(config=RuntimeConfig(trace_dir=tmp_path, total_window=1024, context_engine=False),
                   provider=provider)


async def test_interrupted_before_the_first_token_the_next_question_is_answered(smollm2_path: Path,
                                                                                 tmp_path: Path) -> None:
    provider = HeldBack(smollm2_path)
    async with runtime(provider, tmp_path).chat() as chat:
        await chat.send("Write one sentence about a dragon who lives in a castle by the sea.")
        task = asyncio.create_task(chat.send(INTERRUPTED))
        await provider.waiting.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        reply = await chat.send(NEXT)
        assert "Paris" in reply.text and "photosynth" not in reply.text.lower(), reply.text
        run_id = chat.run_id
        live = [(m.role, m.content) for m in chat.history]
    assert [(m.role, m.content) for m in TraceReader(tmp_path, strict=True).history(run_id)] == live


async def test_interrupted_while_streaming_the_model_answers_the_next_question(smollm2_path: Path,
                                                                               tmp_path: Path) -> None:
    provider = LocalProvider(smollm2_path, n_ctx=2048)
    async with runtime(provider, tmp_path).chat() as chat:
        received: list[str] = []
        streaming = asyncio.Event()

        def on_token(text: str) -> None:
            received.append(text)
            if len(received) >= 8:
                streaming.set()

        task = asyncio.create_task(chat.send(INTERRUPTED, on_token=on_token))
        await streaming.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        cut = chat.history[-1]
        assert cut.role == "assistant" and cut.content.startswith("".join(received).rstrip())
        assert cut.content.endswith("[interrupted by the user]")
        reply = await chat.send(NEXT)
        assert "Paris" in reply.text, reply.text
