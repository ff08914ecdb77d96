"""`arcana trace list|show|replay|rebuild`: output of each command and each error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trace_fixtures_loader import load_trace_fixtures

from arcana_jupyter.cli import main
from arcana_jupyter.trace import TraceWriter

fixtures = load_trace_fixtures()

BUILT = "r_20261130_010203_abcdef"
HAND = "r_20261130_020000_123456"


@pytest.fixture()
def traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "traces"
    fixtures.write_built_run(folder / f"{BUILT}.jsonl", BUILT).close()
    fixtures.write_run(folder / f"{HAND}.jsonl", HAND, turns=6, unpin_turn=4).close()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARCANA_TRACE_DIR", raising=False)
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _mask_ts(text: str) -> str:
    import re

    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d", "YYYY-MM-DDTHH:MM", text)


def test_list(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", "list")
    assert code == 0 and err == ""
    lines = _mask_ts(out).splitlines()
    assert lines[0].split() == ["run", "started", "model", "turns", "agents", "status", "errors"]
    assert lines[1].split() == [BUILT, "YYYY-MM-DDTHH:MM", "openai:gpt-4o-mini", "8", "main", "complete", "0"]
    assert lines[2].split()[0] == HAND and len(lines) == 3
    code, out, _ = run(capsys, "trace", "list", "--json")
    assert [r["run_id"] for r in json.loads(out)] == [BUILT, HAND]


def test_dir_option_and_env(traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run(capsys, "trace", "show", BUILT)
    assert code == 1 and "no traces found from" in err and "pass --dir DIR" in err and len(err.splitlines()) == 1
    code, out, _ = run(capsys, "trace", "show", BUILT, "--dir", str(traces))
    assert code == 0 and out.startswith(f"Run {BUILT}")
    monkeypatch.setenv("ARCANA_TRACE_DIR", str(traces))
    code, out, _ = run(capsys, "trace", "list")
    assert code == 0 and BUILT in out
    code, _, err = run(capsys, "trace", "list", "--dir", str(tmp_path / "missing"))
    assert code == 1 and err.strip().endswith("does not exist; pass --dir DIR or set ARCANA_TRACE_DIR")
    (tmp_path / "empty").mkdir()
    code, out, _ = run(capsys, "trace", "list", "--dir", str(tmp_path / "empty"))
    assert code == 0 and out.startswith("no runs in")


def test_run_given_as_file_folder_or_notebook(traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "trace", "replay", str(traces / f"{BUILT}.jsonl"))
    assert code == 0 and out.startswith(f"Run {BUILT}: 8 turns with replay evidence")
    nb_dir = tmp_path / "nb"
    nb_dir.mkdir()
    (nb_dir / "analysis.ipynb").write_text("{}")
    fixtures.write_run(nb_dir / "analysis.arcana" / "r_nb.jsonl", "r_nb", turns=2).close()
    code, out, err = run(capsys, "trace", "show", str(nb_dir / "analysis.ipynb"), "--cognitive")
    assert code == 0 and out.startswith("Run r_nb") and err == ""
    code, out, err = run(capsys, "trace", "show", str(traces), "--errors")
    assert code == 0 and out.startswith(f"Run {HAND}") and "holds 2 runs; showing the latest" in err
    code, _, err = run(capsys, "trace", "show", str(tmp_path / "missing.jsonl"))
    assert code == 1 and "does not exist" in err
    code, _, err = run(capsys, "trace", "show", str(tmp_path / "other.ipynb"))
    assert code == 1 and "no notebook at" in err and "no trace folder other.arcana/" in err


def test_show_all_events(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", "show", BUILT, "--turn", "2")
    assert code == 0 and err == ""
    lines = _mask_ts(out).splitlines()
    assert lines[0] == f"Run {BUILT}  model=openai:gpt-4o-mini  status=complete  turns=8  agents=main  events=55"
    assert lines[1] == "  8. turn_start            YYYY-MM-DDTHH:MM  t2   input_tokens=10"
    assert lines[5] == "12. llm_call              YYYY-MM-DDTHH:MM  t2   step=0 #4 → pin()".rjust(len(lines[5]))
    assert "cognitive_primitive   YYYY-MM-DDTHH:MM  t2   pin       pin_id=p_0000beef" in _mask_ts(out)
    assert lines[-1].startswith(" 18. turn_end") and "status=ok steps=2" in lines[-1]
    code, out, _ = run(capsys, "trace", "show", BUILT, "--json", "--turn", "1")
    events = json.loads(out)
    assert [e["event_type"] for e in events] == ["turn_start", "user_message", "context_decision", "prompt_snapshot",
                                                 "llm_call", "turn_end"]


def test_show_cognitive_matches_seed_format(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", "show", HAND, "--cognitive")
    assert code == 0 and err == ""
    lines = _mask_ts(out).splitlines()
    assert lines[1:] == [
        " 14. cognitive_primitive   YYYY-MM-DDTHH:MM  pin       pin_id=p_a1b2c3d4 label='key facts'",
        " 31. cognitive_primitive   YYYY-MM-DDTHH:MM  unpin     pin_id=p_a1b2c3d4 ok",
    ]


def test_show_cognitive_recall_and_rejections(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with TraceWriter(tmp_path / "r_c.jsonl", "r_c") as w:
        w.emit_json("cognitive_primitive", {"primitive": "recall", "args": {"turn": 3},
                                            "result": {"turn": 3, "found": True, "messages": [{}, {}], "note": None}},
                    turn=5)
        w.emit_json("cognitive_primitive", {"primitive": "recall", "args": {"turn": 999},
                                            "result": {"found": False, "note": "turn out of range: 999, max=5"}},
                    turn=5)
        w.emit_json("cognitive_primitive", {"primitive": "pin", "args": {"content": "x"},
                                            "result": {"pinned": False, "reason": "pin_budget_exceeded"}}, turn=5)
        w.emit_json("cognitive_primitive", {"primitive": "unpin", "args": {"pin_id": "p_x"},
                                            "result": {"unpinned": False, "reason": "unknown_pin_id"}}, turn=5)
    code, out, _ = run(capsys, "trace", "show", "r_c", "--cognitive", "--dir", str(tmp_path))
    assert code == 0
    got = [line[45:] for line in out.splitlines()[1:]]
    assert got == [
        "recall    turn=3 → 2 messages",
        "recall    turn=999 → not found (turn out of range: 999, max=5)",
        "pin       rejected: pin_budget_exceeded",
        "unpin     pin_id=p_x failed: unknown_pin_id",
    ]


def test_show_context_flags_pins(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "trace", "show", HAND, "--context", "--turn", "3")
    assert code == 0
    lines = out.splitlines()
    assert lines[2].startswith("Turn 3 step 0  strategy=tail_preserve  utilization=")
    assert "      [0] system 13 tokens (kept at L0)  passthrough" in lines
    assert "[PIN] [8] system 20 tokens (kept at L0)  pinned  pin_id=p_a1b2c3d4" in lines
    assert "      [1] user 12→8 tokens (compressed to L2)  tail_preserve_middle_compressed" in lines


def test_show_errors_and_agent_filter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    w = TraceWriter(tmp_path / "pool.jsonl", "pool")
    fixtures.write_run(None, "pool", turns=2, agent="a", writer=w, end=False)
    fixtures.write_run(None, "pool", turns=2, agent="b", writer=w, end=False, pin_turn=None)
    w.emit_json("tool_call", {"name": "load_csv", "ok": False,
                              "error": {"type": "FileNotFoundError", "message": "no file"},
                              "history_index": 9}, turn=2, agent="b")
    w.emit_json("error", {"type": "RateLimitError", "message": "429 after 4 retries", "where": "provider"},
                turn=2, agent="b")
    w.emit_json("turn_end", {"status": "error", "reply": "", "steps": 1}, turn=2, agent="b")
    w.close()
    code, out, _ = run(capsys, "trace", "show", "pool", "--errors", "--dir", str(tmp_path))
    lines = _mask_ts(out).splitlines()
    assert code == 0 and len(lines) == 4
    assert lines[1].endswith("t2   b       load_csv error FileNotFoundError #9")
    assert lines[2].endswith("t2   b       provider RateLimitError: 429 after 4 retries")
    assert lines[3].endswith("t2   b       status=error steps=1")
    code, out, _ = run(capsys, "trace", "show", "pool", "--errors", "--agent", "a", "--dir", str(tmp_path))
    assert out.splitlines()[1] == "no errors recorded"
    code, out, _ = run(capsys, "trace", "show", "pool", "--cognitive", "--dir", str(tmp_path))
    assert out.splitlines()[1].endswith("pin_id=p_a1b2c3d4 label='key facts'  (agent a)")
    code, _, err = run(capsys, "trace", "show", "pool", "--agent", "zed", "--dir", str(tmp_path))
    assert code == 1 and err == "arcana: error: run pool has no agent 'zed'; agents: a, b\n"
    code, out, _ = run(capsys, "trace", "replay", "pool", "--dir", str(tmp_path))
    lines = out.splitlines()
    assert lines[0] == "Run pool: 4 turns with replay evidence across agents a, b"
    assert [line.split()[:2] for line in lines[2:6]] == [["a", "1"], ["a", "2"], ["b", "1"], ["b", "2"]]
    assert lines[-1] == "Replay one: arcana trace replay pool --turn N --agent NAME"
    code, _, err = run(capsys, "trace", "replay", "pool", "--turn", "1", "--dir", str(tmp_path))
    assert code == 1 and "several agents at turn 1: a, b; choose one" in err
    code, out, _ = run(capsys, "trace", "replay", "pool", "--turn", "2", "--agent", "a", "--step", "1",
                       "--dir", str(tmp_path))
    assert code == 0 and "Active pins at turn 2 (agent a): 1" in out
    code, out, _ = run(capsys, "trace", "replay", "pool", "--turn", "2", "--agent", "b", "--dir", str(tmp_path))
    assert code == 0 and "Active pins at turn 2 (agent b): none" in out


def test_show_combined_flags(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "trace", "show", HAND, "--cognitive", "--errors")
    assert code == 0 and "\n[cognitive]\n" in out and "\n[errors]\nno errors recorded" in out


def test_replay_list_turns(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", "replay", BUILT)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"Run {BUILT}: 8 turns with replay evidence"
    assert lines[1].split() == ["turn", "steps", "strategy", "util", "msgs", "kept", "compr", "drop", "summ",
                                "snapshot", "digest"]
    row2 = lines[3].split()
    assert row2[:3] == ["2", "2", "passthrough"] and row2[-2] == "yes" and len(row2[-1]) == 16
    assert lines[-1] == f"Replay one: arcana trace replay {BUILT} --turn N"
    code, out, _ = run(capsys, "trace", "replay", BUILT, "--json")
    assert [r["turn"] for r in json.loads(out)] == list(range(1, 9))


def test_replay_turn_table_prompt_pins(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", "replay", HAND, "--turn", "3")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("Turn 3  strategy=tail_preserve  utilization=0.")
    assert lines[1].startswith("agent=main  step=0  requested=auto  used=")
    assert lines[3] == "  idx  role        outcome       tokens       reason                            fidelity  score"
    assert lines[4] == "    0  system      kept          13→13        passthrough"
    assert lines[5] == "    1  user        compressed    12→8         tail_preserve_middle_compressed   L2        0.12"
    assert lines[12] == "    8  system      kept          20→20        pinned" + " " * 45 + "[PIN] p_a1b2c3d4"
    assert lines[14] == "Prompt preview (9 messages, 99 tokens):"
    assert lines[15] == "  [system]    You are a helpful assistant working inside a Jupyter notebook."
    assert "Active pins at turn 3 (agent main): 1" in lines
    assert "  p_a1b2c3d4  label='key facts'  20 tokens  since turn 2  until unpinned" in lines


def test_replay_decision_only_and_prompt_only(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "trace", "replay", HAND, "--turn", "3", "--decision-only")
    assert "idx  role" in out and "Prompt preview" not in out and "Load-bearing" not in out
    assert "Question" not in out
    _, out, _ = run(capsys, "trace", "replay", HAND, "--turn", "3", "--prompt-only")
    assert "idx  role" not in out and "Prompt preview" in out and "Active pins at turn 3" in out
    _, out, _ = run(capsys, "trace", "replay", HAND, "--turn", "3", "--json", "--decision-only")
    data = json.loads(out)
    assert "prompt_snapshot" not in data and data["context_decision"]["turn"] == 3
    _, out, _ = run(capsys, "trace", "replay", HAND, "--turn", "3", "--json")
    data = json.loads(out)
    assert (data["prompt_snapshot"]["messages"][0]["role"] == "system"
            and data["active_pins"][0]["pin_id"] == "p_a1b2c3d4")
    with pytest.raises(SystemExit) as info:
        main(["trace", "replay", HAND, "--turn", "3", "--decision-only", "--prompt-only"])
    assert info.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_replay_step_and_unpinned_turn(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "trace", "replay", HAND, "--turn", "4", "--step", "1")
    assert "Active pins at turn 4 (agent main): none" in out and "steps=0,1" in out
    _, out, _ = run(capsys, "trace", "replay", HAND, "--turn", "4")
    assert "Active pins at turn 4 (agent main): 1" in out


def test_replay_errors(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", "replay", "r_nope", "--turn", "1")
    assert code == 1 and out == ""
    assert err == (f"arcana: error: unknown run 'r_nope' in traces; runs found: {BUILT}, {HAND} "
                   "(see `arcana trace list`)\n")
    code, _, err = run(capsys, "trace", "replay", BUILT, "--turn", "12")
    assert code == 1 and err == f"arcana: error: run {BUILT} has no turn 12; turns: 1-8 (with replay evidence: 1-8)\n"
    code, _, err = run(capsys, "trace", "replay", BUILT, "--turn", "2", "--step", "5")
    assert code == 1 and err == f"arcana: error: turn 2 of run {BUILT} has no step 5; steps: 0-1\n"
    code, _, err = run(capsys, "trace", "show", BUILT, "--turn", "99")
    assert code == 1 and err == f"arcana: error: run {BUILT} has no turn 99; turns: 1-8\n"


def test_replay_turn_without_decision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with TraceWriter(tmp_path / "r_x.jsonl", "r_x") as w:
        w.emit_json("turn_start", {}, turn=1)
        w.emit_json("error", {"type": "X", "message": "builder crashed", "where": "builder"}, turn=1)
    code, _, err = run(capsys, "trace", "replay", "r_x", "--turn", "1", "--dir", str(tmp_path))
    assert code == 1 and err == "arcana: error: turn 1 of run r_x has no recorded context decision; " \
                                "turns with replay evidence: none\n"


def test_corrupt_file_warns_or_fails(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = traces / f"{HAND}.jsonl"
    shown = f"traces/{HAND}.jsonl"  # as the reader names it: relative to the default ./traces
    lines = path.read_text().splitlines()
    lines[4] = lines[4][:30]
    path.write_text("\n".join(lines) + "\n" + '{"event_id": "e_9', encoding="utf-8")
    code, out, err = run(capsys, "trace", "show", HAND, "--cognitive")
    assert code == 0 and "pin_id=p_a1b2c3d4" in out
    warnings = err.splitlines()
    assert warnings[0].startswith(f"warning: {shown}:5: invalid JSON")
    assert warnings[1].startswith(f"warning: {shown}:{len(lines) + 1}: torn last line")
    code, out, err = run(capsys, "trace", "show", HAND, "--strict")
    assert code == 1 and out == ""
    assert err.startswith(f"arcana: error: {shown}:5: invalid JSON") and "run without --strict to skip it" in err
    assert len(err.splitlines()) == 1
    code, out, _ = run(capsys, "trace", "show", HAND, "--errors")
    assert "file: " in out and ":5: invalid JSON" in out


def test_rebuild_verified_and_counterfactual(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "trace", "rebuild", BUILT, "--turn", "8", "--json")
    data = json.loads(out)
    assert code == 0 and data["verified"] is True and data["counterfactual"] is False and data["diff"] == []
    code, out, err = run(capsys, "trace", "rebuild", BUILT, "--turn", "8")
    assert code == 0 and err == ""
    assert out.splitlines() == [
        f"Rebuild of run {BUILT} turn 8 step 0 (agent main)  history=18 messages  model=gpt-4o-mini",
        f"  recorded settings: strategy=auto window=900 reserve=100  → {data['recorded_decision']['strategy']}",
        f"  recorded digest:   {data['recorded_digest']}",
        f"  rebuilt digest:    {data['rebuilt_digest']}  verified: the recorded prompt is reproduced exactly",
    ]
    argv = ["trace", "rebuild", BUILT, "--turn", "8", "--strategy", "aggressive_truncate", "--window", "600"]
    code, out, _ = run(capsys, *argv, "--json")
    cf = json.loads(out)
    assert code == 0 and cf["verified"] is True and cf["counterfactual"] is True and cf["diff"]
    assert cf["settings"] == {"strategy": "aggressive_truncate", "total_window": 600, "response_reserve": 100}
    assert (cf["mode"], cf["relevance"]) == (cf["recorded_mode"], cf["recorded_relevance"]) == ("classic", "lexical")
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert "Counterfactual: strategy=aggressive_truncate window=600 reserve=100  → aggressive_truncate" in out
    assert "  idx  role        recorded          counterfactual    tokens" in out

    def side(outcome: str | None, fidelity: str | None) -> str:
        return "(absent)" if outcome is None else (f"{outcome} {fidelity}" if outcome == "compressed" else outcome)

    for c in cf["diff"]:
        row = (f"  {c['index']:>3}  {c['role']:<10}  {side(c['recorded_outcome'], c['recorded_fidelity']):<16}  "
               f"{side(c['other_outcome'], c['other_fidelity']):<16}  "
               f"{c['recorded_tokens'] or 0}→{c['other_tokens'] or 0}")
        assert row in out.splitlines() or any(line.startswith(row + "  [") for line in out.splitlines()), row
    before = sum(d["token_count_after"] for d in cf["recorded_decision"]["decisions"])
    after = sum(d["token_count_after"] for d in cf["decision"]["decisions"])
    n = len(cf["diff"])
    assert (f"  {n} message{'s' if n != 1 else ''} changed;"
            f" prompt tokens {before} → {after} ({after - before:+d})") in out


def test_rebuild_not_verified_and_errors(traces: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the hand-made trace's decisions were not produced by the builder: the digest cannot match
    code, out, _ = run(capsys, "trace", "rebuild", HAND, "--turn", "3")
    assert code == 3 and "NOT VERIFIED" in out and "note: first difference at prompt message" in out
    code, _, err = run(capsys, "trace", "rebuild", BUILT, "--turn", "9")
    assert code == 1 and err == (f"arcana: error: run {BUILT} has no recorded context decision for turn 9; "
                                 "turns with one: 1, 2, 3, 4, 5, 6, 7, 8\n")
    code, _, err = run(capsys, "trace", "rebuild", BUILT, "--turn", "2", "--window", "0")
    assert code == 1 and "--window must be a positive" in err
    with pytest.raises(SystemExit) as info:
        main(["trace", "rebuild", BUILT])
    assert info.value.code == 2 and "required: --turn" in capsys.readouterr().err


def test_no_action_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "trace")
    assert code == 2 and "list" in out and "rebuild" in out


def test_show_survives_every_event_type_with_sparse_metadata(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arcana_jupyter.trace.events import EVENT_TYPES

    with TraceWriter(tmp_path / "r_s.jsonl", "r_s") as w:
        for i, et in enumerate(EVENT_TYPES):
            w.emit_json(et, {}, turn=1 if i % 2 else None)
        w.emit_json("state_change", {"object_id": "t_1", "kind": "task", "from_tier": "active", "to_tier": "soft",
                                     "cause": "idle"}, turn=1)
        w.emit_json("memory_read", {"query": "units", "results": [{"id": "m_1"}], "purpose": "digest"}, turn=1)
        w.emit_json("memory_write", {"op": "remember", "entry": {"id": "m_2", "kind": "fact"}}, turn=1)
        w.emit_json("context_action", {"action": "retract", "object_id": "t_1"}, turn=1)
    code, out, err = run(capsys, "trace", "show", "r_s", "--dir", str(tmp_path))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 1 + len(EVENT_TYPES) + 4
    assert lines[-4].endswith("t_1 task active→soft (idle)")
    assert lines[-3].endswith("digest 1 results for units")
    assert lines[-2].endswith("remember fact m_2") and lines[-1].endswith("retract t_1")
    for flag in ("--cognitive", "--context", "--errors"):
        code, out, err = run(capsys, "trace", "show", "r_s", flag, "--dir", str(tmp_path))
        assert code == 0, (flag, err)
        if flag == "--context":
            assert "event e_000004: decision not readable (" in out
    code, _, err = run(capsys, "trace", "replay", "r_s", "--dir", str(tmp_path))
    assert code == 0, err


def test_decision_only_leaves_out_the_summary_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixtures.write_built_run(tmp_path / "r_sum.jsonl", "r_sum", strategy="llm_summarize").close()
    _, out, _ = run(capsys, "trace", "replay", "r_sum", "--turn", "8", "--dir", str(tmp_path))
    assert "Summary: Summary: Question 1 about region 1" in out
    _, out, _ = run(capsys, "trace", "replay", "r_sum", "--turn", "8", "--decision-only", "--dir", str(tmp_path))
    assert "Question" not in out and "Summary: (" in out and "text left out of a decision-only replay" in out
    _, out, _ = run(capsys, "trace", "replay", "r_sum", "--turn", "8", "--decision-only", "--json",
                    "--dir", str(tmp_path))
    assert "Question" not in out
    assert json.loads(out)["context_decision"]["summary"] == "[left out of a decision-only replay]"


COMMANDS = (["show"], ["replay", "--turn", "3"], ["rebuild", "--turn", "3"], ["export", "--otlp", "--endpoint",
                                                                               "http://127.0.0.1:9", "--timeout", "1"])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_missing_trace_file_is_one_clear_line(traces: Path, capsys: pytest.CaptureFixture[str],
                                                command: list[str]) -> None:
    code, out, err = run(capsys, "trace", command[0], "traces/nothing_here.jsonl", *command[1:])
    assert (code, out) == (1, "")
    assert err == "arcana: error: trace file traces/nothing_here.jsonl does not exist\n"


@pytest.mark.parametrize("command", [["list"], *COMMANDS], ids=lambda c: c[0])
def test_a_corrupt_trace_with_strict_is_one_clear_line(traces: Path, capsys: pytest.CaptureFixture[str],
                                                       command: list[str]) -> None:
    path = traces / f"{HAND}.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = '{"event_id": "e_000003", "event_type": '
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_arg = [] if command[0] == "list" else [HAND]
    code, out, err = run(capsys, "trace", command[0], *run_arg, *command[1:], "--strict")
    assert (code, out) == (1, "")
    assert err.startswith(f"arcana: error: traces/{HAND}.jsonl:3: invalid JSON")
    assert err.endswith("repair or delete it, or run without --strict to skip it\n") and len(err.splitlines()) == 1


def test_a_bug_while_showing_a_run_is_reported_as_a_bug(traces: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A real bug is not dressed up as "metadata of an unexpected shape": main reports it as a bug."""
    from arcana_jupyter.cli.trace_cmd import show

    def broken(ev: object) -> str:
        raise AttributeError("a bug in the formatter")

    monkeypatch.setattr(show, "_detail", broken)
    code, _, err = run(capsys, "trace", "show", HAND)
    assert code == 70 and "unexpected AttributeError: a bug in the formatter (this is a bug" in err
    monkeypatch.setenv("ARCANA_DEBUG", "1")
    with pytest.raises(AttributeError, match="a bug in the formatter"):
        main(["trace", "show", HAND])
