"""``block_recall="fill"`` (the default mode's): the window gives way a block at a time, and what it
leaves free goes to the earlier messages relevant to the input — whole, quoted with their turn and
role, best first — placed after the input's text; what stays free is explained."""

from __future__ import annotations

import pytest
from ctx_helpers import fact_session

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context import strategies as S
from arcana_jupyter.context.asking import asks_when
from arcana_jupyter.context.rebuild import _builder_kwargs
from arcana_jupyter.context.relevance import short_date
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


def dated_sessions(turns: int, per_session: int = 5, header: bool = False) -> list[Message]:
    """A pasted chat dated as LoCoMo-style chats are: the first message of each session carries the date (after
    the speaker's label, or with ``header`` on a line of its own before it)."""
    history = fact_session(turns, "Ana: ")
    for t in range(1, turns + 1, per_session):
        m = history[1 + 2 * (t - 1)]
        dated = (f"Session {t} — 9:{t:02d} am on {t} May, 2023\n{m.content}" if header
                 else m.content.replace("Ana: ", f"Ana: (9:{t:02d} am on {t} May, 2023) ", 1))
        history[1 + 2 * (t - 1)] = m.model_copy(update={"content": dated})
    return history


def quotes(b: WorkingSetBuilder, history: list[Message], question: str) -> set[str]:
    return {q.content for q in ask(b, history, question, 81).messages if q.name == RECALLED_NAME}


def test_a_question_about_time_gets_the_date_of_each_relevant_message_s_session():
    history = dated_sessions(80)
    evidence = history[1 + 2 * 8]  # team 9's message, in the session dated at turn 6
    assert "team 9" in evidence.content and "May" not in evidence.content
    dated = builder(quote_dates=True)
    assert f"(turn 9, user, 6 May, 2023) {evidence.content}" in quotes(dated, history, "When did team 9 set the seed?")
    # a question that does not ask about time: turn and role only (the dates would cost the block its room)
    assert f"(turn 9, user) {evidence.content}" in quotes(dated, history, "Which seed did team 9 use?")
    # a message dated itself is quoted as it is; without quote_dates (older traces) turn and role only
    assert any(q.startswith("(turn 11, user) Ana: (9:11 am on 11 May, 2023)")
               for q in quotes(dated, history, "When did team 11 set the seed?"))
    assert f"(turn 9, user) {evidence.content}" in quotes(builder(), history, "When did team 9 set the seed?")
    # sessions dated by a header line of their own, as a harness may send them
    history = dated_sessions(80, header=True)
    assert f"(turn 9, user, 6 May, 2023) {history[1 + 2 * 8].content}" in quotes(dated, history,
                                                                                "When did team 9 set the seed?")


@pytest.mark.parametrize(("label", "date"), [
    ("9:28 am on 26 March, 2023", "26 March, 2023"),
    ("Session 3 — 1:50 pm on 9 June, 2023", "9 June, 2023"),
    ("Date: Monday 3 June 2023", "3 June 2023"),
    ("May 3, 2024", "May 3, 2024"),
    ("2024-05-03", "2024-05-03"),
])
def test_a_quote_carries_the_date_of_its_label_without_the_time_or_header(label: str, date: str) -> None:
    assert short_date(label) == date


@pytest.mark.parametrize(("text", "when"), [
    ("When did Melanie set a new personal best?", True),
    ("What came next for Deborah after Denver?", True),
    ("How long ago did we switch to polars?", True),
    ("what did I say last week about the seed", True),
    ("Which seed did team 9 use?", False),
    ("Would Harper enjoy a cruise?", False),
])
def test_asks_when(text: str, when: bool) -> None:
    assert asks_when(text) is when


def test_quote_dates_is_recorded_and_older_traces_rebuild_without():
    assert builder(quote_dates=True).settings()["quote_dates"] is True
    assert _builder_kwargs(builder(quote_dates=True).settings())["quote_dates"] is True
    assert _builder_kwargs({"strategy": "auto"})["quote_dates"] is False
