"""Prompt sections (active in full, soft stubs, hard anchors, checkpoint, digest band) and bands."""

from __future__ import annotations

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.engine import SECTION_ACTIVE, SECTION_DIGESTS, SECTION_HARD, SECTION_SOFT
from arcana_jupyter.context.sections import ContextSection

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
    assert "[s_5 constraint] Never email customers\n  Rationale: GDPR" in active
    assert active.index("s_4") < active.index("s_5")  # focused first
    soft = by[SECTION_SOFT].content
    assert "- s_3 note: Middle note" in soft and "many details" not in soft
    hard = by[SECTION_HARD].content
    assert "tasks: s_1; decisions: s_2." in hard and 'hydrate("s_1")' in hard
    assert "Old task" not in hard and "old reason" not in hard
    assert by[SECTION_HARD].placement == "head" and by[SECTION_SOFT].placement == "head"
    assert by[SECTION_ACTIVE].placement == "late"
    assert [s.name for s in engine.sections(6)] == [SECTION_HARD, SECTION_SOFT, "checkpoint", SECTION_DIGESTS,
                                                    SECTION_ACTIVE]


def test_sections_are_deterministic() -> None:
    a, b = _tiered(), _tiered()
    assert [s.model_dump() for s in a.sections(6)] == [s.model_dump() for s in b.sections(6)]


def test_peripheral_payloads_stay_out_of_the_prompt() -> None:
    engine = _tiered()
    tiered = "\n".join(s.content for s in engine.sections(6) if s.name.startswith("adaptive_"))
    flat = engine.render_flat()
    for hidden in ("Long description of the old task", "old reason", "many details"):
        assert hidden in flat and hidden not in tiered


def test_bands_follow_the_seed() -> None:
    engine = AdaptiveEngine()
    b = engine.bands(10)
    assert b.verbatim == (8, 9, 10) and b.digest == (4, 5, 6, 7) and b.older == (1, 2, 3)
    assert b.verbatim_from == 8 and b.band_of(9) == "verbatim" and b.band_of(5) == "digest" and b.band_of(2) == "older"
    small = engine.bands(2)
    assert small.verbatim == (1, 2) and small.digest == () and small.older == ()
    five = AdaptiveEngine(verbatim_turns=2, digest_turns=1).bands(5)
    assert five.verbatim == (4, 5) and five.digest == (3,) and five.older == (1, 2)


def test_digest_band_is_scored_against_the_input() -> None:
    engine = AdaptiveEngine()
    topics = ["penguins", "volcanoes", "tax forms", "glaciers", "compilers", "bakeries", "rivers", "lamps"]
    for t, topic in enumerate(topics, 1):
        engine.begin_turn(t, f"tell me about {topic}")
        engine.end_turn(t, [{"role": "user", "content": f"Tell me about {topic}. Never use slang."},
                            {"role": "assistant", "content": f"{topic.capitalize()} are interesting."}])
    engine.begin_turn(9, "back to glaciers again")
    [digests] = [s for s in engine.sections(9) if s.name == SECTION_DIGESTS]
    text = digests.content
    assert text.startswith("Earlier turns 3–6 as digests")
    lines = text.splitlines()
    assert any(line.startswith("T4:") and "[relevance" in line and "0.00" not in line for line in lines)
    assert "  request: Tell me about glaciers. Never use slang." in text  # relevant turn in detail
    assert any(line.startswith("T3: tell me about tax forms") or line.startswith("T3: Tell me about tax forms")
               for line in lines)
    assert "[relevance 0.00]" in text
    assert "penguins" not in text and "lamps" not in text  # outside the band


def test_verbatim_history_keeps_whole_recent_turns() -> None:
    from arcana_jupyter.messages import Message, ToolCall

    history = [Message(role="system", content="sys")]
    for t in range(1, 8):
        history += [Message(role="user", content=f"u{t}", turn=t),
                    Message(role="assistant", content="", turn=t, tool_calls=(ToolCall(id=f"c{t}", name="f"),)),
                    Message(role="tool", content="r", tool_call_id=f"c{t}", turn=t),
                    Message(role="assistant", content=f"a{t}", turn=t)]
    history.append(Message(role="user", content="u8", turn=8))
    kept = AdaptiveEngine().verbatim_history(history, 8)
    assert kept[0].content == "sys" and {m.turn for m in kept[1:]} == {6, 7, 8}
    assert len(kept) == 1 + 4 + 4 + 1
    assert AdaptiveEngine().verbatim_history([m.record() for m in history], 2) == history[:9]  # turns 1-2
