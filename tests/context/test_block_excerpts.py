"""The default mode's block of relevant excerpts (``block_excerpts``): with the ``blocks`` drop policy,
an earlier message relevant to the input comes back as its sentences that match the input, as a
system message the shaping step puts after the input's text, so between drops the next prompt
repeats the previous one through that text; weak matches stay out; nothing the prompt already says is
repeated; the setting is recorded and old traces rebuild without it."""

from __future__ import annotations

from itertools import pairwise

from ctx_helpers import FACTS

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context import strategies as S
from arcana_jupyter.context.builder import EXCERPT_NAME
from arcana_jupyter.context.rebuild import _builder_kwargs
from arcana_jupyter.context.result import prefix_reuse
from arcana_jupyter.providers.shaping import named_shape, shape
from arcana_jupyter.runtime import RuntimeConfig
from tests.context.test_block_drops import session, window_start

EXCERPTS = {"drop_policy": "blocks", "block_excerpts": True, "block_recall_min": 0, "block_recall_share": 0.16,
            "block_fraction": 0.35}


def builder(**kw) -> WorkingSetBuilder:
    return WorkingSetBuilder(TokenBudget(total_window=4096, response_reserve=1024), embedder=None, **kw)


def drive(turns: int = 90, **kw):
    b = builder(**kw)
    history = session(turns)
    builds = []
    for t in range(2, turns + 1):
        upto = 1 + 2 * (t - 1)
        builds.append(b.build([*history[:upto], history[upto]], turn=t, previous=builds[-1] if builds else None))
    return b, history, builds


def test_a_relevant_message_comes_back_as_the_sentence_that_matches_the_question() -> None:
    history = session(90)
    build = builder(**EXCERPTS).build(history, "What was the contact for team 2 again?", turn=91)
    assert window_start(build) > 10
    rows = [d for d in build.decision.decisions if d.recalled and d.turn == 2 and d.role == "user"]
    assert len(rows) == 1
    row = rows[0]
    assert (row.outcome, row.fidelity, row.reason) == ("compressed", "L1", S.RELEVANT_EXCERPT)
    sent = build.messages[row.position]
    assert sent.role == "system" and sent.name == EXCERPT_NAME
    assert "Ines Varga for team 2" in sent.content and "(turn 2)" in sent.content and "[…]" in sent.content
    assert "grouped the weekly extract" not in sent.content  # the sentence that matches, not the message
    assert row.token_count_after < row.token_count_before
    # without the setting: the whole message, placed as a user turn
    whole = builder(drop_policy="blocks", block_recall_min=0, block_recall_share=0.16).build(
        history, "What was the contact for team 2 again?", turn=91)
    again = next(d for d in whole.decision.decisions if d.recalled and d.turn == 2 and d.role == "user")
    assert (again.outcome, again.reason) == ("kept", S.RELEVANT_BM25)
    assert whole.messages[again.position].role == "user"


def test_excerpts_go_after_the_input_and_the_next_prompt_repeats_the_previous_through_it() -> None:
    b, _, builds = drive(**EXCERPTS)
    counter = b.counter
    rules = named_shape("portable")
    with_block = only_block = 0
    for prev, new in pairwise(builds):
        if prev.decision.strategy == "passthrough" or window_start(prev) != window_start(new):
            continue
        excerpts = [m for m in prev.messages if m.name == EXCERPT_NAME]
        if not excerpts:
            continue
        with_block += 1
        a, z = shape(prev.messages, rules).messages, shape(new.messages, rules).messages
        assert a[-1].role == "user" and "<system-context" in a[-1].content
        assert all(m.content in a[-1].content for m in excerpts)  # in the input's message, after its text
        _, reused, before = prefix_reuse(a, z, counter.count_text, counter.count_message)
        block = counter.count_text(a[-1].content[a[-1].content.index("<system-context"):])
        # all but the previous prompt's context block (and a whole message recalled before the input,
        # merged with it, when some relevant message was not one an excerpt is made of)
        only_block += reused >= before - block - 4
    assert with_block > 10
    assert only_block >= 0.8 * with_block


def test_weak_matches_stay_out_so_the_block_is_usually_far_smaller_than_its_room() -> None:
    b, _, builds = drive(**EXCERPTS)
    sizes = []
    for build in builds:
        if build.decision.strategy == "passthrough":
            continue
        recalled = [d for d in build.decision.decisions if d.recalled]
        assert {d.reason for d in recalled} <= {S.RELEVANT_EXCERPT, S.RELEVANT_BM25, S.RELEVANT_SEMANTIC}
        sizes.append(sum(d.token_count_after for d in recalled))
        assert build.budget.used <= build.budget.available
    room = int(builds[-1].budget.available * b.block_recall_share)
    assert max(sizes) <= room
    assert sum(sizes) / len(sizes) < room / 2


def test_an_excerpt_never_repeats_a_sentence_the_prompt_already_holds() -> None:
    b, _, builds = drive(**EXCERPTS)
    for build in builds[-20:]:
        said = set()
        for m in build.messages:
            if m.name != EXCERPT_NAME:
                said.update(b._cache.sentences(m.content))
        for m in build.messages:
            if m.name == EXCERPT_NAME:
                body = m.content.split(") ", 1)[1]
                kept = [p for p in body.split("[…]") if p.strip()]
                assert kept and not any(p.strip() in said for p in kept)


def test_more_of_the_previous_prompt_is_reused_than_with_whole_messages() -> None:
    def reuse(b, builds) -> float:
        rules = named_shape("portable")
        c = b.counter
        shares = []
        for prev, new in pairwise(builds):
            if new.decision.strategy != "passthrough":
                _, tokens, before = prefix_reuse(shape(prev.messages, rules).messages,
                                                 shape(new.messages, rules).messages, c.count_text, c.count_message)
                shares.append(tokens / before)
        return sum(shares) / len(shares)

    whole = {**EXCERPTS, "block_excerpts": False}
    assert reuse(*drive(**EXCERPTS)[::2]) > reuse(*drive(**whole)[::2]) + 0.03


def test_a_build_with_excerpts_is_a_function_of_its_inputs() -> None:
    _, history, builds = drive(**EXCERPTS)
    fresh = builder(**EXCERPTS)
    for t in (40, 63, 90):
        upto = 1 + 2 * (t - 1)
        assert fresh.build([*history[:upto], history[upto]], turn=t).digest("m") == builds[t - 2].digest("m")


def test_the_setting_is_recorded_and_old_traces_rebuild_without_it() -> None:
    settings = builder(**EXCERPTS).settings()
    assert settings["block_excerpts"] is True
    assert _builder_kwargs(settings)["block_excerpts"] is True
    legacy = {k: v for k, v in settings.items() if k != "block_excerpts"}
    assert _builder_kwargs(legacy)["block_excerpts"] is False
    assert builder().settings()["block_excerpts"] is False
    # the excerpt rule too: traces written before it was recorded rebuild with the rule they used
    assert settings["excerpt_match"] == "distinct"
    assert _builder_kwargs(settings)["excerpt_match"] == "distinct"
    before = {k: v for k, v in settings.items() if k != "excerpt_match"}
    assert _builder_kwargs(before)["excerpt_match"] == "first3"
    assert _builder_kwargs({**settings, "excerpt_match": "no-such-rule"})["excerpt_match"] == "first3"


def lookalikes(**kw):
    """A statement of two kinds of fact the conversation stated many times for other teams."""
    history = session(90)
    b = builder(**EXCERPTS, **kw)
    return b.build(history, "Note that the seed is 4711 and the contact is Ines Varga for team 99.", turn=91)


def test_look_alike_statements_come_back_once_not_all() -> None:
    def kinds(build) -> list[int]:
        excerpts = [m.content for m in build.messages if m.name == EXCERPT_NAME]
        return sorted(sum(kind in e for e in excerpts) for kind in ("seed is", "contact is"))

    # the question's most specific term brings its look-alikes back whatever their match (a question
    # worded unlike its statement); the other kind's look-alikes come back once, not all
    fewer, _ = kinds(lookalikes())
    before, _ = kinds(lookalikes(excerpt_match="first3"))
    assert fewer == 1 < before


def test_a_question_still_gets_the_statement_it_asks_about_among_look_alikes() -> None:
    history = session(90)
    for team in (3, 10, 17):
        fact = FACTS[team % len(FACTS)]
        build = builder(**EXCERPTS).build(history, f"What did we say {fact.split(' is ')[0]} was for team {team}?",
                                          turn=91)
        sent = "\n".join(m.content for m in build.messages)
        assert f"{fact} for team {team}." in sent


def test_distinct_excerpts_reuse_more_of_the_previous_prompt_than_the_rule_before() -> None:
    def reuse(b, builds) -> float:
        rules = named_shape("portable")
        c = b.counter
        shares = [t / before for prev, new in pairwise(builds) if new.decision.strategy != "passthrough"
                  for _, t, before in [prefix_reuse(shape(prev.messages, rules).messages,
                                                    shape(new.messages, rules).messages, c.count_text,
                                                    c.count_message)]]
        return sum(shares) / len(shares)

    assert reuse(*drive(**EXCERPTS)[::2]) > reuse(*drive(**EXCERPTS, excerpt_match="first3")[::2])


def test_the_default_mode_brings_whole_messages_back_and_classic_mode_keeps_its_bands(tmp_path) -> None:
    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.runtime import Runtime

    for engine in (True, False):
        runtime = Runtime(config=RuntimeConfig(context_engine=engine, trace_dir=tmp_path / str(engine),
                                               embeddings="off"),
                          provider=FunctionProvider(lambda messages: "ok"))
        b = runtime.chat().builder
        if engine:
            got = (b.drop_policy, b.block_recall, b.block_excerpts, b.block_fraction)
            assert got == ("blocks", "fill", False, 0.24)  # 0.6 of a window with 40% of the budget
        else:
            assert (b.drop_policy, b.block_excerpts, b.block_fraction, b.summary_grid) == ("bands", False, 0.25, 0.25)
