"""Rebuild recorded turns with the real WorkingSetBuilder and verify their digests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_fixtures import write_built_run, write_run

from arcana_jupyter.context.rebuild import RebuildResult, rebuild_turn
from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.trace import TraceReader


def _reader(path: Path) -> TraceReader:
    return TraceReader(path, shared=False)


@pytest.mark.parametrize(
    ("strategy", "window"),
    [("auto", 700), ("tail_preserve", 900), ("aggressive_truncate", 900), ("llm_summarize", 900),
     ("passthrough", 20000)],
)
def test_every_recorded_step_rebuilds_exactly(tmp_path: Path, strategy: str, window: int) -> None:
    write_built_run(tmp_path / "r.jsonl", "r", strategy=strategy, total_window=window).close()
    reader = _reader(tmp_path)
    checked = 0
    for turn in reader.replay_turns("r"):
        replay = reader.replay_prompt("r", turn)
        assert replay is not None
        for step in replay.steps:
            result = rebuild_turn(reader, "r", turn, step=step)
            assert isinstance(result, RebuildResult)
            assert result.verified, (turn, step, result.notes)
            assert result.rebuilt_digest == result.recorded_digest
            assert not result.counterfactual and result.diff == [] and result.notes == []
            recorded = reader.replay_prompt("r", turn, step=step)
            assert recorded is not None and recorded.prompt_snapshot is not None
            assert result.messages == recorded.prompt_snapshot.messages
            checked += 1
    assert checked == 9  # 8 turns, turn 2 has a tool step


def test_auto_with_summary_rebuilds_without_a_model(tmp_path: Path) -> None:
    write_built_run(tmp_path / "a.jsonl", "a", strategy="auto", total_window=700).close()
    reader = _reader(tmp_path)
    last = reader.replay_prompt("a", 8)
    assert last is not None and last.context_decision.strategy == "llm_summarize"
    assert last.context_decision.summary  # the recorded summary stands in for the model
    assert rebuild_turn(reader, "a", 8).verified


def test_counterfactual_strategy_and_window(tmp_path: Path) -> None:
    write_built_run(tmp_path / "r.jsonl", "r", strategy="tail_preserve", total_window=900).close()
    reader = _reader(tmp_path)
    result = rebuild_turn(reader, "r", 8, strategy="aggressive_truncate")
    assert result.verified and result.counterfactual
    assert result.settings == {"strategy": "aggressive_truncate", "total_window": 900, "response_reserve": 100}
    assert result.recorded_settings["strategy"] == "tail_preserve"
    assert result.decision.strategy == "aggressive_truncate" and result.recorded_decision.strategy == "tail_preserve"
    assert result.diff, "a different strategy under pressure changes some decisions"
    for change in result.diff:
        before = result.recorded_decision.decisions[change.index]
        assert (change.recorded_outcome, change.recorded_tokens) == (before.outcome, before.token_count_after)
        after = result.decision.decisions[change.index]
        assert (change.other_outcome, change.other_tokens) == (after.outcome, after.token_count_after)
    roomy = rebuild_turn(reader, "r", 8, total_window=50_000, response_reserve=0)
    assert roomy.counterfactual and roomy.budget.total_window == 50_000
    assert roomy.tokens > roomy.recorded_tokens
    assert all(d.outcome == "kept" for d in roomy.decision.decisions)
    assert {c.other_outcome for c in roomy.diff} == {"kept"}
    # same settings given explicitly: not a counterfactual
    same = rebuild_turn(reader, "r", 8, strategy="tail_preserve", total_window=900, response_reserve=100)
    assert not same.counterfactual and same.diff == []


def test_counterfactual_llm_summarize_offline_uses_a_placeholder(tmp_path: Path) -> None:
    write_built_run(tmp_path / "r.jsonl", "r", strategy="tail_preserve", total_window=900).close()
    reader = _reader(tmp_path)
    result = rebuild_turn(reader, "r", 8, strategy="llm_summarize")
    assert any("placeholder summary" in n for n in result.notes)
    assert any(d.outcome == "summarized" for d in result.decision.decisions)
    real = rebuild_turn(reader, "r", 8, strategy="llm_summarize", summarizer=lambda msgs: f"{len(msgs)} folded")
    assert real.decision.summary and real.decision.summary.endswith("folded")
    assert not any("placeholder" in n for n in real.notes)


def test_tampered_transcript_is_not_verified(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_built_run(path, "r", strategy="tail_preserve", total_window=900).close()
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        obj = json.loads(line)
        if obj["event_type"] == "user_message" and obj["turn"] == 7:
            obj["metadata"]["message"]["content"] = "Question 7, edited after the fact."
            lines[i] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n")
    reader = _reader(tmp_path)
    assert rebuild_turn(reader, "r", 6).verified  # before the edit: still exact
    result = rebuild_turn(reader, "r", 8)
    assert not result.verified and result.rebuilt_digest != result.recorded_digest
    assert any("first difference at prompt message" in n for n in result.notes)


def test_none_mode_cannot_verify_but_explains(tmp_path: Path) -> None:
    write_built_run(tmp_path / "r.jsonl", "r", content="none").close()
    result = rebuild_turn(_reader(tmp_path), "r", 3)
    assert not result.verified
    assert any("carry no text" in n for n in result.notes)


def test_rebuild_errors(tmp_path: Path) -> None:
    write_built_run(tmp_path / "r.jsonl", "r", turns=3).close()
    write_run(tmp_path / "old.jsonl", "old", turns=2).close()
    reader = _reader(tmp_path)
    with pytest.raises(TraceError, match="no recorded context decision for turn 9; turns with one: 1, 2, 3"):
        rebuild_turn(reader, "r", 9)
    with pytest.raises(TraceError, match="has no step 4; steps with a recorded decision: 0, 1"):
        rebuild_turn(reader, "r", 2, step=4)
    with pytest.raises(TraceError, match="unknown run"):
        rebuild_turn(reader, "nope", 1)


def test_a_fusion_from_a_newer_version_says_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_built_run(path, "r", turns=3).close()
    lines = path.read_text().splitlines()
    changed = 0
    for i, line in enumerate(lines):
        obj = json.loads(line)
        if obj["event_type"] == "context_decision" and obj["turn"] == 2:
            obj["metadata"]["builder"]["fusion"] = "learned:parts=1,sentences=1,names=1,model=99"
            lines[i] = json.dumps(obj)
            changed += 1
    assert changed
    path.write_text("\n".join(lines) + "\n")
    reader = _reader(tmp_path)
    assert rebuild_turn(reader, "r", 1).verified
    with pytest.raises(TraceError, match=r"cannot rebuild turn 2: .*no learned fusion model 99 here .*upgrade"):
        rebuild_turn(reader, "r", 2)
