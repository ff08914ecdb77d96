"""Prompt sections (active in full, soft stubs, hard anchors, checkpoint, digest band) and bands."""

from __future__ import annotations

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.rendering import SECTION_ACTIVE, SECTION_DIGESTS, SECTION_HARD, SECTION_SOFT
from arcana_jupyter.context.sections import STANDING_SECTION, ContextSection

from .conftest import quiet_turn


def _tiered() -> AdaptiveEngine:
    engine = AdaptiveEngine(idle_soft_after_turns=2, idle_hard_after_turns=4)
    engine.begin_turn(1, "x")
    engine.create_task("Old task", description="Long description of the old task", turn=1)  # s_1 -> hard
    engine.decide("Old decision", rationale="old reason", turn=1)  # s_2 -> hard
    engine.end_turn(1, [])
    quiet_turn(engine, 2)
    engine.begin_turn(3, "x")
    engine.note("Middle note with many details", title="Middle note", turn=3)  # s_3 -> soft
    engine.end_turn(3, [])
    quiet_turn(engine, 4)
    quiet_turn(engine, 5)
    engine.begin_turn(6, "x")
    engine.create_task("Current task", description="Step one.\nStep two.", turn=6)  # s_4 active
    engine.add_constraint("Never email customers", rationale="GDPR", turn=6)  # s_5 active
    engine.focus("s_4", turn=6)
    return engine


def test_tiers_render_full_stub_and_anchor() -> None:
    engine = _tiered()
    assert {o.id: o.tier for o in engine.objects()} == {
        "s_1": "hard", "s_2": "hard", "s_3": "soft", "s_4": "active", "s_5": "active"}
    by = {s.name: s for s in engine.sections(6)}
    assert all(isinstance(s, ContextSection) for s in by.values())
    active = by[SECTION_ACTIVE].content
    assert "[s_4 task, open, focused] Current task\n  Step one.\n  Step two." in active
    # a constraint is standing: in its own section (first, in the head, protected), not in the tiers
    assert "s_5" not in active
    standing = by[STANDING_SECTION]
    assert standing.content.endswith("\n- (s_5, turn 6, the model's) Never email customers (why: GDPR)")
    assert standing.placement == "head" and standing.protected
    soft = by[SECTION_SOFT].content
    assert "- s_3 note: Middle note" in soft and "many details" not in soft
    hard = by[SECTION_HARD].content
    assert "tasks: s_1; decisions: s_2." in hard and 'hydrate("s_1")' in hard
    assert "Old task" not in hard and "old reason" not in hard
    assert by[SECTION_HARD].placement == "head" and by[SECTION_SOFT].placement == "head"
    assert by[SECTION_ACTIVE].placement == "late"
    assert [s.name for s in engine.sections(6)] == [STANDING_SECTION, SECTION_HARD, SECTION_SOFT, SECTION_ACTIVE]


def test_sections_are_deterministic() -> None:
    a, b = _tiered(), _tiered()
    assert [s.model_dump() for s in a.sections(6)] == [s.model_dump() for s in b.sections(6)]


def test_peripheral_payloads_stay_out_of_the_prompt() -> None:
    engine = _tiered()
    tiered = "\n".join(s.content for s in engine.sections(6) if s.name.startswith("adaptive_"))
    flat = engine.render_flat()
    for hidden in ("Long description of the old task", "old reason", "many details"):
        assert hidden in flat and hidden not in tiered


def test_the_overflow_cover_stands_in_for_the_turns_it_is_given() -> None:
    engine = AdaptiveEngine(digest_turns=2)
    topics = ["penguins", "volcanoes", "tax forms", "glaciers", "compilers", "bakeries", "rivers", "lamps"]
    for t, topic in enumerate(topics, 1):
        engine.begin_turn(t, f"tell me about {topic}")
        engine.end_turn(t, [{"role": "user", "content": f"Tell me about {topic}. Never use slang."},
                            {"role": "assistant", "content": f"{topic.capitalize()} are interesting."}])
    engine.begin_turn(9, "back to glaciers again")
    cover = engine.overflow_sections([1, 2, 3, 4, 99])  # turn 99 has no digest: skipped
    by = {s.name: s for s in cover.sections}
    assert {"checkpoint", SECTION_DIGESTS} <= set(by)
    assert cover.carries["checkpoint"] == [1, 2] and cover.carries[SECTION_DIGESTS] == [3, 4]
    digests = by[SECTION_DIGESTS].content
    assert digests.startswith("Earlier turns 3–4, not in this prompt verbatim, as digests")
    assert "request: Tell me about tax forms. Never use slang." in digests and "glaciers" in digests
    assert "penguins" not in digests and "lamps" not in digests  # not covered by the digests
    assert "penguins" in by["checkpoint"].content and "lamps" not in by["checkpoint"].content
    assert all(s.placement == "head" for s in cover.sections)
    # a function of the turns covered, never of the question: the same cover after another input
    engine.begin_turn(9, "something else entirely")
    assert engine.overflow_sections([1, 2, 3, 4]) == cover
    assert engine.overflow_sections([]) .sections == []


def test_the_overflow_cover_shrinks_to_its_bound_or_is_left_out() -> None:
    engine = AdaptiveEngine(digest_turns=3)
    for t in range(1, 21):
        engine.begin_turn(t, f"question {t}")
        engine.end_turn(t, [{"role": "user", "content": f"Question {t}: never drop column c{t}. " * 3},
                            {"role": "assistant", "content": f"Answer {t} with some detail. " * 4}])
    full = engine.overflow_sections(range(1, 20))
    size = sum(engine.counter.count_message(s.render()) for s in full.sections)
    bounded = engine.overflow_sections(range(1, 20), max_tokens=size - 1)
    assert 0 < sum(engine.counter.count_message(s.render()) for s in bounded.sections) < size
    assert engine.overflow_sections(range(1, 20), max_tokens=10).sections == []  # nothing that small




def test_the_cover_folds_on_from_the_last_one_and_equals_a_fresh_fold() -> None:
    """A cover continues the checkpoint folded for the previous one (the turns that just left the
    window are folded in, not every turn again); any set of turns gives what a fresh engine gives."""
    import random

    def engine_with(turns: int) -> AdaptiveEngine:
        engine = AdaptiveEngine(digest_turns=2)
        for t in range(1, turns + 1):
            engine.begin_turn(t, f"turn {t}")
            engine.end_turn(t, [{"role": "user", "content": f"Turn {t}: decide to use plan {t % 4}. Never use {t}."},
                                {"role": "assistant", "content": f"Plan {t % 4} it is; see file{t % 3}.py."}])
        return engine

    rng = random.Random(7)
    live = engine_with(40)
    covers = [list(range(1, n)) for n in range(3, 38)]  # the window moving on, as in a session
    covers += [sorted(rng.sample(range(1, 41), rng.randrange(1, 30))) for _ in range(20)]  # and any other set
    for turns in covers:
        assert live.overflow_sections(turns) == engine_with(40).overflow_sections(turns), turns
