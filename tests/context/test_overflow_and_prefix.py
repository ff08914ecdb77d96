"""The pieces of the one context path: which turns did not fit, where they went, and prefix reuse."""

from __future__ import annotations

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context.bands import annotate_overflow, lost_turns
from arcana_jupyter.context.result import prefix_reuse
from arcana_jupyter.messages import Message
from arcana_jupyter.tokens import TokenCounter


def conversation(turns: int, words: int = 60) -> list[Message]:
    history = [Message(role="system", content="You help.")]
    for t in range(1, turns + 1):
        history += [Message(role="user", content=f"question {t}: " + "tell me about the numbers " * (words // 5),
                            turn=t),
                    Message(role="assistant", content=f"answer {t}: " + "the numbers moved a little " * (words // 5),
                            turn=t)]
    return history


def test_a_conversation_that_fits_loses_no_turn() -> None:
    history = conversation(6)
    build = WorkingSetBuilder(TokenBudget(total_window=16000, response_reserve=1000), embedder=None).build(
        history, "and now?", turn=7)
    assert lost_turns(build.decision) == []
    assert annotate_overflow(build.decision, {"checkpoint": [1, 2]}) == 0  # nothing lost, nothing marked


def test_the_turns_that_did_not_fit_are_the_lost_ones_and_get_their_carrier() -> None:
    history = conversation(40)
    build = WorkingSetBuilder(TokenBudget(total_window=2000, response_reserve=200), embedder=None).build(
        history, "and now?", turn=41)
    lost = lost_turns(build.decision)
    assert lost and 41 not in lost and max(lost) < 41
    kept_verbatim = {d.turn for d in build.decision.decisions
                     if d.source == "history" and d.outcome == "kept" and d.fidelity == "L0" and not d.recalled}
    assert not set(lost) <= kept_verbatim
    marked = annotate_overflow(build.decision, {"checkpoint": lost[:-2], "turn_digests": lost[-2:]})
    assert marked > 0
    for d in build.decision.decisions:
        if d.section is not None and d.source == "history":
            assert d.turn in lost and d.section == ("turn_digests" if d.turn in lost[-2:] else "checkpoint")


def test_prefix_reuse_counts_whole_messages_then_the_common_start() -> None:
    counter = TokenCounter()
    a = [Message(role="system", content="You help."), Message(role="user", content="first question")]
    b = [Message(role="system", content="You help."),
         Message(role="user", content="first question\n\n<system-context>notes</system-context>")]
    same, tokens, before = prefix_reuse(b, [*a, Message(role="assistant", content="ok")], counter.count_text,
                                        counter.count_message)
    assert same == 1 and tokens == counter.count_message(a[0]) + counter.count_text("first question")
    assert before == sum(counter.count_message(m) for m in b)
    same, tokens, _ = prefix_reuse(a, a, counter.count_text, counter.count_message)
    assert same == 2 and tokens == sum(counter.count_message(m) for m in a)
    other = [Message(role="system", content="Something else.")]
    assert prefix_reuse(a, other, counter.count_text, counter.count_message)[:2] == (0, 0)
