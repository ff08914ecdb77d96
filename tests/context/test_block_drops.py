"""The ``blocks`` drop policy (the default mode's): the verbatim window gives way a large block at a
time at absolute positions, so the prompt only grows at its end between drops; the block of relevant
earlier turns is small; what is left free between drops stays free; old traces rebuild with bands."""

from __future__ import annotations

from itertools import pairwise

import pytest
from ctx_helpers import fact_session

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context import strategies as S
from arcana_jupyter.context.rebuild import _builder_kwargs
from arcana_jupyter.context.result import prefix_reuse
from arcana_jupyter.messages import Message


def session(turns: int) -> list[Message]:
    """``turns`` exchanges of about 90 tokens, each stating one fact among look-alikes."""
    return fact_session(turns, 'Turn {t}: I grouped the weekly extract by region and plotted it. ')


def window_start(build) -> int:
    """The first turn kept verbatim in its place (after the head exchange)."""
    return min(d.turn for d in build.decision.decisions
               if d.source == "history" and d.turn is not None and d.turn > 1 and d.outcome == "kept"
               and d.fidelity == "L0" and not d.recalled)


def drive(policy: str, turns: int = 90, window: int = 4096, **kw):
    builder = WorkingSetBuilder(TokenBudget(total_window=window, response_reserve=1024), embedder=None,
                                drop_policy=policy, **kw)
    history = session(turns)
    builds = []
    for t in range(2, turns + 1):
        upto = 1 + 2 * (t - 1)
        builds.append(builder.build([*history[:upto], history[upto]], turn=t,
                                    previous=builds[-1] if builds else None))
    return builder, history, builds


def full(builds):
    return [b for b in builds if b.decision.strategy != "passthrough"]


def broken(builder, builds) -> int:
    """Calls whose prompt repeats less than a fifth of the previous one (the prefix broke early)."""
    c = builder.counter
    n = 0
    for prev, new in pairwise(builds):
        if new.decision.strategy != "passthrough":
            _, tokens, before = prefix_reuse(prev.messages, new.messages, c.count_text, c.count_message)
            n += tokens < before / 5
    return n


def test_the_window_gives_way_a_block_at_a_time_not_every_few_turns() -> None:
    builder, _, blocks = drive("blocks", block_recall_min=0)
    starts = [window_start(b) for b in full(blocks)]
    moves = sum(a != b for a, b in pairwise(starts))
    assert len(starts) > 40
    # a block is a quarter of the available tokens (~8 turns here): the window moves every 8 turns or so
    assert 0 < moves <= len(starts) // 6
    assert broken(builder, blocks) <= moves + 1
    for b in full(blocks):
        assert {d.reason for d in b.decision.decisions if d.source == "history" and d.outcome == "dropped"} <= {
            S.BLOCK_DROPPED}
    bands_builder, _, bands = drive("bands")
    assert broken(bands_builder, bands) > broken(builder, blocks)
    # over every call once the window is full (measured: 0.80 against 0.33 with bands)
    assert mean_reuse(builder, blocks) > 0.75 > 0.5 > mean_reuse(bands_builder, bands)


def mean_reuse(builder, builds) -> float:
    c = builder.counter
    shares = []
    for prev, new in pairwise(builds):
        if new.decision.strategy != "passthrough":
            _, tokens, before = prefix_reuse(prev.messages, new.messages, c.count_text, c.count_message)
            shares.append(tokens / before)
    return sum(shares) / len(shares)


def test_between_drops_the_previous_prompt_is_a_prefix_up_to_its_relevant_block_and_input() -> None:
    builder, _, builds = drive("blocks", block_recall_min=0)
    counter = builder.counter
    shares = []
    for prev, new in pairwise(builds):
        if prev.decision.strategy == "passthrough" or window_start(prev) != window_start(new):
            continue
        # everything before the relevant block and the input of the previous prompt is repeated
        recalled = [d.position for d in prev.decision.decisions if d.recalled and d.position is not None]
        stable_end = min(recalled) if recalled else len(prev.messages) - 1
        assert new.messages[:stable_end] == prev.messages[:stable_end]
        shares.append(prefix_reuse(prev.messages, new.messages, counter.count_text, counter.count_message)[1]
                      / sum(counter.count_message(m) for m in prev.messages))
    assert len(shares) > 30
    assert sum(shares) / len(shares) > 0.8


def test_the_relevant_block_is_small_and_nothing_fills_the_room_left_free() -> None:
    builder, _, builds = drive("blocks", block_recall_min=0)
    for b in full(builds):
        recall = [d for d in b.decision.decisions if d.recalled]
        assert {d.reason for d in recall} <= {S.RELEVANT_BM25, S.RELEVANT_SEMANTIC, S.NEIGHBOUR}
        assert sum(d.token_count_after for d in recall) <= int(b.budget.available * builder.block_recall_share)
    # right after a drop the prompt is well under the budget: the free room is not filled late
    assert min(b.budget.utilization for b in full(builds)) < 0.8


def test_on_a_small_budget_the_relevant_turns_fill_the_room_as_with_bands() -> None:
    *_, builds = drive("blocks")  # 8% of ~3k tokens is under block_recall_min: the usual fill
    reasons = {d.reason for b in full(builds) for d in b.decision.decisions if d.recalled}
    assert S.RECENCY in reasons or S.NEIGHBOUR in reasons
    assert max(b.budget.utilization for b in full(builds)) > 0.9


def test_the_dropped_turns_stay_reachable_by_relevance() -> None:
    builder = WorkingSetBuilder(TokenBudget(total_window=4096, response_reserve=1024), embedder=None,
                                drop_policy="blocks", block_recall_min=0)
    history = session(90)
    build = builder.build(history, "What was the contact for team 2 again, Ines Varga?", turn=91)
    assert window_start(build) > 10
    assert any(d.recalled and d.turn == 2 for d in build.decision.decisions)
    assert any("Ines Varga for team 2" in m.content for m in build.messages)


def test_a_build_is_a_function_of_its_inputs_whatever_the_builder_saw_before() -> None:
    _, history, builds = drive("blocks", block_recall_min=0)
    fresh = WorkingSetBuilder(TokenBudget(total_window=4096, response_reserve=1024), embedder=None,
                              drop_policy="blocks", block_recall_min=0)
    for t in (40, 63, 90):
        upto = 1 + 2 * (t - 1)
        again = fresh.build([*history[:upto], history[upto]], turn=t)
        assert again.digest("m") == builds[t - 2].digest("m")


def test_the_policy_is_a_recorded_setting_and_old_traces_rebuild_with_bands() -> None:
    b = WorkingSetBuilder(TokenBudget(total_window=4096, response_reserve=1024), embedder=None, drop_policy="blocks")
    settings = b.settings()
    assert settings["drop_policy"] == "blocks"
    assert {"block_fraction", "block_recall_share", "block_recall_min"} <= set(settings)
    assert _builder_kwargs(settings)["drop_policy"] == "blocks"
    assert _builder_kwargs(settings)["block_recall_min"] == settings["block_recall_min"]
    legacy = {k: v for k, v in settings.items() if not k.startswith(("drop_policy", "block_"))}
    assert _builder_kwargs(legacy)["drop_policy"] == "bands"
    assert WorkingSetBuilder(TokenBudget(total_window=4096, response_reserve=1024)).drop_policy == "bands"
    with pytest.raises(ValueError, match="drop_policy"):
        WorkingSetBuilder(TokenBudget(total_window=4096, response_reserve=1024), drop_policy="sliding")


def test_the_small_block_takes_the_question_as_asked_before_its_expansion() -> None:
    """On look-alike turns (other teams, same kind of fact) the feedback expansion ranks look-alikes
    with the answer; the small block takes the literal best match too (dev split, a question whose
    answer the expanded ranking puts fifth and the question as asked first)."""
    import json
    from pathlib import Path

    from benchmarks.retention.sessions import exchanges

    conv = next(c for c in json.loads((Path(__file__).parents[2] / "benchmarks" / "retention" / "data"
                                       / "sessions_dev.json").read_text()) if c["id"] == "dev3")
    q = next(q for q in conv["questions"] if q["question"] == "Which seed did we fix for search's experiment?")
    history = [Message(role="system", content=conv["system"])]
    for t, (user, reply) in enumerate(exchanges(conv), 1):
        history += [Message(role="user", content=user, turn=t), Message(role="assistant", content=reply, turn=t)]
    builder = WorkingSetBuilder(TokenBudget(total_window=4096, response_reserve=1024), embedder=None,
                                drop_policy="blocks", block_recall_min=0, block_recall_share=0.05)
    build = builder.build(history, q["question"], turn=len(history) // 2 + 1)
    recalled = [d for d in build.decision.decisions if d.recalled]
    assert sum(d.token_count_after for d in recalled) < 200  # room for two or so messages
    assert any(q["answer"] in m.content for m in build.messages)


def test_a_few_tokens_less_in_the_budget_leave_the_drop_points_where_they_are() -> None:
    """The shaped prompt's recount may shrink the window by a few tokens and rebuild: same drops."""
    history = session(60)
    starts = set()
    for window in (4096, 4092, 4085, 4100):
        b = WorkingSetBuilder(TokenBudget(total_window=window, response_reserve=1024), embedder=None,
                              drop_policy="blocks", block_recall_min=0)
        starts.add(window_start(b.build(history[:-1], history[-1], turn=60)))
    assert len(starts) == 1


def test_a_large_input_leaves_no_room_for_the_head_exchange_and_the_prompt_still_fits() -> None:
    """The head exchange is kept only when it fits beside the input (a long paste, compressed to what
    the budget holds, is then all there is besides the system prompt)."""
    paste = "The quarterly report shows revenue grew in every region while costs stayed flat. " * 700
    for turns in (1, 2, 6):
        history = session(turns)
        for policy in ({"block_recall_min": 0}, {}):
            b = WorkingSetBuilder(TokenBudget(total_window=2048, response_reserve=512), embedder=None,
                                  drop_policy="blocks", **policy)
            build = b.build(history, paste, turn=turns + 1)  # raised "exceeded its budget" before
            assert not build.budget.overflow and build.budget.used <= build.budget.available
