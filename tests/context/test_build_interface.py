"""A build reaches its builder's memory only through the :class:`MessageCache`; of the builder
itself it reads public settings only. The builder's modules each hold one idea, none over 600 lines."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from arcana_jupyter.context import assemble, build, plan, recall
from arcana_jupyter.context.builder import WorkingSetBuilder
from arcana_jupyter.context.decisions import TokenBudget
from arcana_jupyter.context.message_cache import SUMMARIES_KEPT
from arcana_jupyter.messages import Message


@pytest.mark.parametrize("module", [assemble, build, plan, recall])
def test_a_build_uses_no_private_member_of_the_builder(module: object) -> None:
    source = inspect.getsource(module)  # type: ignore[arg-type]
    assert re.findall(r"\b(?:b|builder)\._\w+", source) == []


def test_the_builder_modules_stay_small() -> None:
    folder = Path(build.__file__).parent
    for name in ("builder", "build", "plan", "assemble", "recall", "message_cache"):
        assert len((folder / f"{name}.py").read_text().splitlines()) <= 600, name


def test_the_summary_cache_keeps_the_latest() -> None:
    b = WorkingSetBuilder(TokenBudget(total_window=1000))
    cache = b._cache
    for k in range(SUMMARIES_KEPT + 6):
        cache.remember_summary(("fold", k), f"summary {k}")
    assert list(cache.summaries) == [("fold", k) for k in range(6, SUMMARIES_KEPT + 6)]
    assert cache.summary(("fold", 5)) is None and cache.summary(("fold", 6)) == "summary 6"


def test_the_caches_are_the_builders() -> None:
    b = WorkingSetBuilder(TokenBudget(total_window=1000))
    cache = b._cache
    msgs = cache.messages([{"role": "user", "content": "hi"}])
    assert msgs == [Message(role="user", content="hi")]
    state = cache.history_state(msgs)
    assert state is cache.state and cache.info(msgs[0]) is state.infos[0]
    b.build(msgs)
    assert cache.state is state  # the same history: the shared state is the one extended


def test_build_and_abuild_share_one_body() -> None:
    """A sync summariser serves both; an async one only abuild, with the same result."""
    import asyncio

    history = [Message(role="user" if k % 2 == 0 else "assistant", content=f"message {k} " + "word " * 40)
               for k in range(60)]
    calls: list[int] = []

    def summarize(folded: list[Message]) -> str:
        calls.append(len(folded))
        return "what was said"

    async def asummarize(folded: list[Message]) -> str:
        return summarize(folded)

    budget = TokenBudget(total_window=900, response_reserve=100)
    sync = WorkingSetBuilder(budget, strategy="llm_summarize", summarizer=summarize).build(history)
    asy = asyncio.run(WorkingSetBuilder(budget, strategy="llm_summarize", summarizer=asummarize).abuild(history))
    assert sync.decision.summary == asy.decision.summary == "what was said"
    assert sync.digest() == asy.digest() and len(calls) == 2
    with pytest.raises(TypeError, match="abuild"):
        WorkingSetBuilder(budget, strategy="llm_summarize", summarizer=asummarize).build(history)
