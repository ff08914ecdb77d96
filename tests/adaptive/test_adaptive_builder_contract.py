"""Contract with the working-set builder: every adaptive section becomes a message with a decision."""

from __future__ import annotations

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.messages import Message

from .conftest import quiet_turn


def _engine() -> AdaptiveEngine:
    engine = AdaptiveEngine(idle_soft_after_turns=1, idle_hard_after_turns=3)
    engine.begin_turn(1, "x")
    engine.create_task("Old task", description="details " * 50, turn=1)
    engine.end_turn(1, [{"role": "user", "content": "Start. Never delete data.csv"},
                        {"role": "assistant", "content": "Started."}])
    for t in range(2, 6):
        quiet_turn(engine, t)
    engine.begin_turn(6, "x")
    engine.note("A soft note", turn=6)
    engine.end_turn(6, [])
    quiet_turn(engine, 7)
    engine.begin_turn(8, "now")
    engine.decide("Use parquet", rationale="faster", turn=8)
    return engine


def test_each_section_gets_a_decision_naming_it() -> None:
    engine = _engine()
    sections = [*engine.sections(8), *engine.overflow_sections(range(1, 8)).sections]
    assert {s.name for s in sections} == {"adaptive_hard", "adaptive_soft", "checkpoint", "turn_digests",
                                          "adaptive_active"}
    history = [Message(role="system", content="You help.")]
    result = WorkingSetBuilder(TokenBudget(total_window=8000, response_reserve=500)).build(
        history, "now", sections=sections, turn=8)
    by_section = {d.section: d for d in result.decision.decisions if d.source == "section"}
    assert set(by_section) == {s.name for s in sections}
    sent = "\n".join(m.content for m in result.messages)
    for s in sections:
        assert by_section[s.name].outcome == "kept"
        assert s.content in sent


def test_checkpoint_survives_pressure() -> None:
    engine = _engine()
    sections = [*engine.sections(8), *engine.overflow_sections(range(1, 8)).sections]
    history = [Message(role="system", content="You help.")]
    result = WorkingSetBuilder(TokenBudget(total_window=700, response_reserve=100)).build(
        history, "now", sections=sections, turn=8)
    [cp] = [d for d in result.decision.decisions if d.section == "checkpoint"]
    assert cp.outcome == "kept" and cp.fidelity == "L0"
