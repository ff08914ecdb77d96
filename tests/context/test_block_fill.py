"""``block_recall="fill"`` (the default mode's): the window gives way a block at a time, and what it
leaves free goes to the earlier messages relevant to the input — whole, quoted with their turn and
role, best first — placed after the input's text; what stays free is explained."""

from __future__ import annotations

from ctx_helpers import fact_session

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context import strategies as S
from arcana_jupyter.context.rebuild import _builder_kwargs
from arcana_jupyter.messages import RECALLED_HEADING, RECALLED_NAME, Message
from arcana_jupyter.providers.shaping import SHAPES, shape


def session(turns: int) -> list[Message]:
    return fact_session(turns, '[{t} May, 2023] Ana: I grouped the weekly extract by region again. ')


def builder(**kw) -> WorkingSetBuilder:
    return WorkingSetBuilder(TokenBudget(total_window=3000, response_reserve=1000), embedder=None,
                             drop_policy="blocks", block_recall="fill", block_recall_share=0.35, **kw)


def ask(b: WorkingSetBuilder, history: list[Message], question: str, turn: int):
    return b.build([*history, Message(role="user", content=question, turn=turn)], turn=turn)


def test_relevant_messages_come_back_whole_quoted_with_their_turn_and_role():
    history = session(80)
    build = ask(builder(), history, "Which seed did team 9 use?", 81)
    recalled = [d for d in build.decision.decisions if d.recalled]
    assert recalled and all(d.outcome == "kept" and d.fidelity == "L0" for d in recalled)
    assert {d.reason for d in recalled} <= {S.RELEVANT_BM25, S.NEIGHBOUR}
    evidence = history[1 + 2 * 8]  # team 9's message: "the seed is 4711"
    assert "team 9" in evidence.content
    quotes = [m for m in build.messages if m.role == "system" and m.name == RECALLED_NAME]
    assert f"(turn 9, user) {evidence.content}" in [q.content for q in quotes]  # whole, date and speaker in it
    # shaped, the quotes are one block after the input's text: the input stays a reusable prefix
    shaped = shape(build.messages, SHAPES["portable"]).messages
    last = shaped[-1].content
    assert last.startswith("Which seed did team 9 use?\n\n<system-context>")
    assert f"## {RECALLED_HEADING}\n(turn " in last and evidence.content in last
    assert build.report.recalled_tokens == sum(
        d.token_count_after for d in build.decision.decisions if d.recalled)


def test_the_block_takes_what_the_window_leaves_free_and_says_why_when_it_cannot():
    history = session(80)
    small = WorkingSetBuilder(TokenBudget(total_window=3000, response_reserve=1000), embedder=None,
                              drop_policy="blocks", block_recall_min=0)  # block_recall="small", 8% at most
    filled = ask(builder(), history, "What did team 12 note about the seed, the code and the deadline?", 81)
    kept_small = ask(small, history, "What did team 12 note about the seed, the code and the deadline?", 81)
    assert filled.report.recalled_tokens > kept_small.report.recalled_tokens
    assert filled.budget.used >= 0.75 * filled.budget.available or filled.report.free_reason is not None
    # a question nothing earlier matches: the free room is explained, not silently left
    lost = ask(builder(), history, "Anything about penguins?", 81)
    assert lost.budget.remaining > 0.25 * lost.budget.available
    assert lost.report.free_reason == "no_more_relevant"
    assert any("left free while" in n and "no other earlier message matches the input" in n
               for n in lost.decision.notes)


def test_a_fill_build_is_a_pure_function_of_its_inputs_and_old_traces_keep_the_small_block():
    history = session(60)
    a = ask(builder(), history, "Which table did team 5 use?", 61)
    b = ask(builder(), history, "Which table did team 5 use?", 61)
    assert a.messages == b.messages and a.digest("m") == b.digest("m")
    assert builder().settings()["block_recall"] == "fill"
    assert _builder_kwargs({"drop_policy": "blocks"})["block_recall"] == "small"  # recorded before the setting
    assert _builder_kwargs({"drop_policy": "blocks", "block_recall": "fill"})["block_recall"] == "fill"


def test_the_report_counts_what_left_the_window_since_the_previous_call():
    history = session(90)
    b = builder()
    builds = []
    for t in range(2, 91):
        upto = 1 + 2 * (t - 1)
        builds.append(b.build([*history[:upto], history[upto]], turn=t, previous=builds[-1] if builds else None))
    drops = [x for x in builds if x.report.window_dropped]
    assert drops and all(x.report.window_dropped_tokens > 0 for x in drops)
    # the window gives way in blocks: most calls drop nothing, a drop lets several messages go at once
    assert len(drops) <= len(builds) // 3 and max(x.report.window_dropped for x in drops) >= 4
