"""SessionCheckpoint: reconciliation rules and byte-for-byte determinism."""

from __future__ import annotations

from typing import Any

from arcana_jupyter.adaptive import AdaptiveEngine, SessionCheckpoint, extract_digest
from arcana_jupyter.context.sections import CHECKPOINT_SECTION


def conversation() -> list[tuple[str, str]]:
    return [
        ("Load sales.csv. Never modify the raw data.", "Plan:\n1. load\n2. clean\nDone loading; 1,204 rows found."),
        ("Use a left join please, because some regions lack 2023 data.",
         "I decided to use a left join because regions are missing."),
        ("Now plot it into plots/growth.png", "Here's the plan:\n1. aggregate\n2. plot\nShould I use a log scale?"),
        ("No log scale. Only use matplotlib.", "The plot shows North growing fastest."),
        ("Re-check sales.csv for duplicates", "Found 12 duplicate rows."),
    ]


def run(turns: list[tuple[str, str]], **knobs: Any) -> AdaptiveEngine:
    engine = AdaptiveEngine(**knobs)
    for i, (user, reply) in enumerate(turns, 1):
        engine.begin_turn(i, user)
        engine.end_turn(i, [{"role": "user", "content": user}, {"role": "assistant", "content": reply}])
    return engine


def checkpoint_text(engine: AdaptiveEngine) -> str:
    [cp] = [s for s in engine.sections() if s.name == CHECKPOINT_SECTION]
    return cp.content


def test_same_turns_same_checkpoint_byte_for_byte() -> None:
    a, b = run(conversation()), run(conversation())
    assert checkpoint_text(a).encode() == checkpoint_text(b).encode()
    restored = AdaptiveEngine.restore(a.snapshot())
    assert checkpoint_text(restored).encode() == checkpoint_text(a).encode()
    assert [s.model_dump() for s in a.sections(6)] == [s.model_dump() for s in b.sections(6)]


def test_checkpoint_is_pinned_late_and_named_checkpoint() -> None:
    [cp] = [s for s in run(conversation()).sections() if s.name == CHECKPOINT_SECTION]
    assert cp.protected and cp.placement == "late" and cp.role == "system"


def test_reconciled_fields() -> None:
    cp = run(conversation()).checkpoint
    assert cp.last_turn == 5 and cp.turns == 5
    assert cp.active_request == "Re-check sales.csv for duplicates" and cp.active_request_turn == 5
    assert cp.plan is not None and cp.plan.turn == 3 and cp.plan.steps == ["aggregate", "plot"]
    assert [(p.turn, p.steps) for p in cp.plan_history] == [(1, ["load", "clean"])]
    assert (cp.decisions[0].turn, cp.decisions[0].text) == (2, "Use a left join please")
    assert cp.decisions[0].rationale == "because some regions lack 2023 data."
    assert [c.text for c in cp.constraints] == ["Never modify the raw data.", "Only use matplotlib."]
    assert cp.files == ["plots/growth.png", "sales.csv"]  # re-mentioned at turn 5: moved last
    assert [f.text for f in cp.findings] == ["Done loading; 1,204 rows found.", "The plot shows North growing fastest.",
                                            "Found 12 duplicate rows."]
    assert cp.open_questions == []  # the turn-3 question was answered by the next turn
    assert len(cp.narrative) == 5 and cp.narrative[0].startswith("T1: Load sales.csv.")


def test_open_questions_are_the_latest_turns() -> None:
    cp = run(conversation()[:3]).checkpoint
    assert cp.open_questions == ["Should I use a log scale?"]


def test_rendered_text_names_every_part() -> None:
    text = checkpoint_text(run(conversation()))
    for part in ("Session checkpoint (reconciled after turn 5", "Active request (turn 5): Re-check sales.csv",
                 "Current plan (turn 3):", "  1. aggregate", "Earlier plans:", "turn 1: load | clean",
                 "Decisions:", "— why: because some regions lack 2023 data.", "Constraints:",
                 "Never modify the raw data. [implicit]", "Files: plots/growth.png, sales.csv",
                 "Findings:", "Narrative:", "T5: Re-check sales.csv for duplicates"):
        assert part in text, part


def test_narrative_is_bounded_and_says_what_it_hides() -> None:
    engine = run(conversation() * 4, narrative_lines=3)
    text = checkpoint_text(engine)
    assert "(17 earlier turn(s) not shown; search_turn_events(query) finds them)" in text
    assert text.count("\n  T") == 3


def test_caps_keep_the_most_recent() -> None:
    cp = SessionCheckpoint()
    for t in range(1, 30):
        cp.reconcile(extract_digest(t, [{"role": "user", "content": f"Never touch table{t}. Read file{t}.csv"}]))
    assert len(cp.constraints) == 15 and cp.constraints[-1].text == "Never touch table29."
    assert len(cp.files) == 20 and cp.files[-1] == "file29.csv"


def test_no_turns_no_checkpoint_section() -> None:
    assert [s.name for s in AdaptiveEngine().sections(1)] == []
