"""SessionCheckpoint: reconciliation rules and byte-for-byte determinism."""

from __future__ import annotations

from typing import Any

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.checkpoint import SECTION_CLAIMS, SessionCheckpoint
from arcana_jupyter.adaptive.turn_summary import summarise_turn
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
    [cp] = [s for s in engine.checkpoint_sections() if s.name == CHECKPOINT_SECTION]
    return cp.content


def test_same_turns_same_checkpoint_byte_for_byte() -> None:
    a, b = run(conversation()), run(conversation())
    assert checkpoint_text(a).encode() == checkpoint_text(b).encode()
    restored = AdaptiveEngine.restore(a.snapshot())
    assert checkpoint_text(restored).encode() == checkpoint_text(a).encode()
    assert [s.model_dump() for s in a.overflow_sections(range(1, 6)).sections] == [
        s.model_dump() for s in b.overflow_sections(range(1, 6)).sections]


def claims_text(engine: AdaptiveEngine) -> str:
    [claims] = [s for s in engine.checkpoint_sections() if s.name == SECTION_CLAIMS]
    return claims.content


def test_checkpoint_is_pinned_in_the_head_and_named_checkpoint_and_the_models_claims_are_not() -> None:
    sections = run(conversation()).checkpoint_sections()
    [cp] = [s for s in sections if s.name == CHECKPOINT_SECTION]
    assert cp.protected and cp.placement == "head" and cp.role == "system"
    [claims] = [s for s in sections if s.name == SECTION_CLAIMS]
    assert not claims.protected and claims.placement == "head"
    assert [s.name for s in sections].index(SECTION_CLAIMS) == [s.name for s in sections].index(CHECKPOINT_SECTION) + 1


def test_reconciled_fields() -> None:
    cp = run(conversation()).checkpoint
    assert cp.last_turn == 5 and cp.turns == 5
    assert cp.active_request == "Re-check sales.csv for duplicates" and cp.active_request_turn == 5
    assert cp.plan is not None and (cp.plan.turn, cp.plan.steps, cp.plan.source) == (3, ["aggregate", "plot"], "model")
    assert [(p.turn, p.steps, p.source) for p in cp.plan_history] == [(1, ["load", "clean"], "model")]
    assert (cp.decisions[0].turn, cp.decisions[0].text, cp.decisions[0].source) == (2, "Use a left join please", "user")
    assert cp.decisions[0].rationale == "because some regions lack 2023 data."
    assert [(d.text, d.source) for d in cp.decisions[1:]] == [("I decided to use a left join", "model")]
    assert cp.constraints == []  # no "Constraint:" line: the user's standing instructions have their own section
    assert [(o.payload, o.created_turn) for o in run(conversation()).standing()] == [
        ("Never modify the raw data.", 1), ("Only use matplotlib.", 4)]
    assert cp.files == ["plots/growth.png", "sales.csv"]  # re-mentioned at turn 5: moved last
    assert cp.findings == []  # every reply is the model's: claims, not findings
    assert [c.text for c in cp.claims] == ["Done loading; 1,204 rows found.", "The plot shows North growing fastest.",
                                          "Found 12 duplicate rows."]
    assert cp.open_questions == []  # the turn-3 question was answered by the next turn
    assert len(cp.narrative) == 5 and cp.narrative[0].startswith("T1: Load sales.csv.")


def test_open_questions_are_the_latest_turns() -> None:
    cp = run(conversation()[:3]).checkpoint
    assert cp.open_questions == ["Should I use a log scale?"]


def test_rendered_text_names_every_part() -> None:
    engine = run(conversation())
    text = checkpoint_text(engine)
    for part in ("Session checkpoint (reconciled after turn 5", "Active request (turn 5): Re-check sales.csv",
                 "Decisions (the user's):", "— why: because some regions lack 2023 data.",
                 "Files: plots/growth.png, sales.csv",
                 "Narrative:", "T5: Re-check sales.csv for duplicates"):
        assert part in text, part
    for said in ("1,204 rows", "North growing fastest", "12 duplicate", "aggregate", "I decided", "log scale?"):
        assert said not in text, said  # the model's replies never reach the pinned part
    # the user's standing instructions are in the standing section, not said twice
    assert "Constraints:" not in text
    assert [line for line in text.splitlines() if "Never modify" in line] == [
        "  T1: Load sales.csv. Never modify the raw data."]  # the narrative only
    standing = engine.standing_section().content
    assert "- (s_1, turn 1) Never modify the raw data.\n- (s_2, turn 4) Only use matplotlib." in standing
    claims = claims_text(engine)
    for part in ("Model's earlier claims (unverified", "Said in its replies:", "(turn 5) Found 12 duplicate rows.",
                 "Its plan (turn 3):", "  1. aggregate", "Its earlier plans:", "turn 1: load | clean",
                 "Decisions it stated:", "I decided to use a left join"):
        assert part in claims, part


def test_the_users_plan_and_tool_findings_are_in_the_pinned_part() -> None:
    engine = AdaptiveEngine()
    engine.end_turn(1, [
        {"role": "user", "content": "Do this:\n1) clean nulls\n2) dedupe rows"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "run_python", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c", "name": "run_python", "content": "dropped 12 duplicate rows"},
        {"role": "assistant", "content": "All 40 nulls are gone."}])
    text = checkpoint_text(engine)
    assert "Current plan (turn 1, the user's):\n  1. clean nulls\n  2. dedupe rows" in text
    assert "Findings (from tool results and the user):\n  - (turn 1, tool run_python) dropped 12 duplicate rows" in text
    assert "40 nulls" not in text and "(turn 1) All 40 nulls are gone." in claims_text(engine)


def test_narrative_is_bounded_and_says_what_it_hides() -> None:
    engine = run(conversation() * 4, narrative_lines=3)
    text = checkpoint_text(engine)
    assert "(17 earlier turn(s) not shown; search_turn_events(query) finds them)" in text
    assert text.count("\n  T") == 3


def test_caps_keep_the_most_recent() -> None:
    cp = SessionCheckpoint()
    for t in range(1, 30):
        text = f"Constraint: never touch table{t}\nRead file{t}.csv"
        cp.reconcile(summarise_turn(t, [{"role": "user", "content": text}]))
    assert len(cp.constraints) == 15 and cp.constraints[-1].text == "never touch table29"
    assert len(cp.files) == 20 and cp.files[-1] == "file29.csv"


def test_no_turns_no_checkpoint_section() -> None:
    assert [s.name for s in AdaptiveEngine().sections(1)] == []
