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


def test_decision_from_makes_what_validation_makes() -> None:
    from arcana_jupyter.context.decisions import MessageDecision
    from arcana_jupyter.context.result import decision_from

    values = {"index": 3, "role": "user", "outcome": "dropped", "fidelity": None, "relevance_score": 0.25,
              "token_count_before": 12, "token_count_after": 0, "reason": "r", "layer": "working",
              "source": "history", "section": None, "pinned": False, "turn": 2, "position": None,
              "recalled": False, "anchor_position": None}
    made, checked = decision_from(dict(values)), MessageDecision(**values)
    assert made == checked and made.model_dump() == checked.model_dump()
    assert made.model_fields_set == set(MessageDecision.model_fields)


def test_recorded_scores_are_combined() -> None:
    from arcana_jupyter.context.history import MessageInfo
    from arcana_jupyter.context.relevance import RecordedScores, combined

    msgs = [Message(role=r, content=c) for r, c in
            (("user", "a"), ("assistant", "ValueError: b"), ("tool", "c"), ("user", "d"))]
    infos = [MessageInfo(m, 5) for m in msgs]
    turns: list[int | None] = [1, 4, None, 30]
    match = {1: 0.5, 3: 1.0}
    for current in (None, 1, 9, 30, 31):
        score = RecordedScores(match, turns, infos, current)
        for i, t in enumerate(turns):
            age = current - t if current is not None and t is not None else 0
            assert score(i) == combined(match.get(i, 0.0), age, infos[i].static), (current, i)


def test_the_builds_of_one_call_score_the_question_once() -> None:
    """The runtime builds again with other sections (the cover) or a smaller window: the question's
    scores are computed once, and the builds are what a fresh builder makes."""
    from arcana_jupyter.context.sections import ContextSection

    history = [Message(role="user" if k % 2 == 0 else "assistant",
                       content=f"turn {k}: the {['corgi', 'marathon', 'budget'][k % 3]} figure is {k * 7}. " * 6)
               for k in range(80)]
    kwargs = {"sections": [ContextSection(name="notes", content="the corgi is called Biscuit")]}
    b = WorkingSetBuilder(TokenBudget(total_window=1500), drop_policy="blocks", embedder=None)
    b.build(history, "what was the corgi figure?")
    index = b._cache.state.rel
    calls: list[str] = []
    original = index.scores

    def counted(query: str, limit: int | None = None, *, feedback: bool = True) -> dict[int, float]:
        calls.append(query)
        return original(query, limit, feedback=feedback)

    index.scores = counted  # type: ignore[method-assign]
    again = b.build(history, "what was the corgi figure?", **kwargs)
    smaller = WorkingSetBuilder(TokenBudget(total_window=1400), drop_policy="blocks", embedder=None)
    b.budget = smaller.budget
    third = b.build(history, "what was the corgi figure?", **kwargs)
    assert calls == []  # the same question over the same history: scored once
    b.build(history, "and the marathon?")
    assert calls  # another question: scored again
    for made, fresh in ((again, WorkingSetBuilder(TokenBudget(total_window=1500), drop_policy="blocks",
                                                   embedder=None).build(history, "what was the corgi figure?",
                                                                        **kwargs)),
                         (third, smaller.build(history, "what was the corgi figure?", **kwargs))):
        assert made.decision.model_dump() == fresh.decision.model_dump()
        assert made.digest() == fresh.digest()
    assert all(row is None or row["relevance_score"] is None for row in b._cache.state.rows)
