from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from trace_fixtures import PIN_CONTENT, SYSTEM, expected_history, write_run

from arcana_jupyter.context.decisions import ContextDecision
from arcana_jupyter.exceptions import CorruptTraceError, TraceError
from arcana_jupyter.messages import request_digest
from arcana_jupyter.trace import PromptReplay, TraceReader, TraceWriter
from arcana_jupyter.trace.recorded_prompt import format_replay


def _reader(path: Path, **kw: object) -> TraceReader:
    return TraceReader(path, shared=False, **kw)  # type: ignore[arg-type]


def test_list_runs_and_turns(tmp_path: Path) -> None:
    write_run(tmp_path / "r_20261130_010000_aaaaaa.jsonl", "r_20261130_010000_aaaaaa", turns=3).close()
    write_run(tmp_path / "r_20261130_020000_bbbbbb.jsonl", "r_20261130_020000_bbbbbb", turns=5, end=False).close()
    (tmp_path / "notes.txt").write_text("not a trace")
    reader = _reader(tmp_path)
    runs = reader.list_runs()
    assert [r.run_id for r in runs] == ["r_20261130_010000_aaaaaa", "r_20261130_020000_bbbbbb"]
    a, b = runs
    assert (a.turns, a.status, a.model, a.agents) == (3, "complete", "openai:gpt-4o-mini", ["main"])
    assert (b.turns, b.status) == (5, "open")
    assert a.started and a.started.endswith("Z") and a.ended and b.ended is None
    assert reader.list_turns("r_20261130_020000_bbbbbb") == [1, 2, 3, 4, 5]
    # unique prefix and "latest" resolve; a .jsonl path resolves
    assert reader.list_turns("r_20261130_01") == [1, 2, 3]
    assert reader.run_info("latest").run_id == "r_20261130_020000_bbbbbb"
    assert _reader(tmp_path / "r_20261130_010000_aaaaaa.jsonl").list_turns("r_20261130_010000_aaaaaa") == [1, 2, 3]


def test_unknown_run_lists_the_runs_found(tmp_path: Path) -> None:
    write_run(tmp_path / "r_a.jsonl", "r_a", turns=1).close()
    write_run(tmp_path / "r_b.jsonl", "r_b", turns=1).close()
    reader = _reader(tmp_path)
    with pytest.raises(TraceError, match=r"unknown run 'r_zzz' in .*; runs found: r_a, r_b"):
        reader.events("r_zzz")
    with pytest.raises(TraceError, match="ambiguous"):
        reader.events("r_")
    with pytest.raises(TraceError, match="no trace files"):
        _reader(tmp_path / "empty").list_turns("r_a")


def test_replay_round_trip(tmp_path: Path) -> None:
    write_run(tmp_path / "r.jsonl", "r", turns=5).close()
    reader = _reader(tmp_path)
    replay = reader.replay_prompt("r", 3)
    assert isinstance(replay, PromptReplay)
    assert replay.turn == 3 and replay.step == 0 and replay.steps == [0] and replay.agent == "main"
    d = replay.context_decision
    assert isinstance(d, ContextDecision) and d.turn == 3
    assert [x.index for x in d.decisions] == list(range(len(d.decisions)))
    assert replay.history_len == 8  # system, 2 turns * (user, answer) + the pin tool loop (2), user 3
    assert replay.prompt_snapshot is not None and replay.budget_snapshot is not None
    # the snapshot's messages are the prompt whose digest was recorded
    from arcana_jupyter.messages import as_messages

    sent = as_messages(replay.prompt_snapshot.messages)
    assert request_digest(sent, [], "gpt-4o-mini") == replay.request_digest
    assert replay.llm_call is not None and replay.llm_call["request_digest"] == replay.request_digest
    assert replay.inputs["pins"][0]["pin_id"] == "p_a1b2c3d4"
    assert [p.pin_id for p in replay.active_pins] == ["p_a1b2c3d4"]
    # the pin turn has two steps: the tool call, then the answer with the pin in the prompt
    two = reader.replay_prompt("r", 2, step=1)
    assert two is not None and two.steps == [0, 1]
    assert any(x.source == "pin" for x in two.context_decision.decisions)
    before = reader.replay_prompt("r", 2, step=0)
    assert before is not None and before.active_pins == []  # the pin came after step 0's build
    assert [p.pin_id for p in two.active_pins] == ["p_a1b2c3d4"]
    assert reader.replay_prompt("r", 2, step=5) is None
    assert reader.replay_prompt("r", 99) is None
    # the rendered table follows seed 003
    text = "\n".join(format_replay(replay))
    assert text.startswith("Turn 3  strategy=tail_preserve  utilization=")
    assert "  idx  role        outcome       tokens       reason                            fidelity  score" in text
    assert "Prompt preview (" in text and "Active pins at turn 3 (agent main): 1" in text


def test_replay_without_snapshots(tmp_path: Path) -> None:
    write_run(tmp_path / "r.jsonl", "r", turns=3, snapshots=False).close()
    replay = _reader(tmp_path).replay_prompt("r", 2)
    assert replay is not None and replay.prompt_snapshot is None and replay.budget_snapshot is not None
    assert "no prompt snapshot recorded" in "\n".join(format_replay(replay))


def test_history_is_exact(tmp_path: Path) -> None:
    write_run(tmp_path / "r.jsonl", "r", turns=4).close()
    reader = _reader(tmp_path)
    history = reader.history("r")
    assert [(m.role, m.content[: len(c)])
            for m, c in zip(history, [c for _, c in expected_history(4)], strict=True)] == expected_history(4)
    assert history[0].content == SYSTEM  # index 0 comes from run_start
    assert history[4].tool_calls[0].name == "pin" and history[5].tool_call_id == "call_pin_2"
    assert [m.turn for m in history] == [None, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4]
    assert reader.history("r", upto_turn=2) == history[:7]
    assert [m.role for m in reader.turn_messages("r", 2)] == ["user", "assistant", "tool", "assistant"]
    # each context_decision's history_len is a prefix of this history
    for ev in reader.events("r", event_types=["context_decision"]):
        assert ev.metadata["history_len"] <= len(reader.history("r", upto_turn=ev.turn))


def test_history_gap_warns_or_raises(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, "r", turns=3).close()
    lines = path.read_text().splitlines()
    kept = [ln for ln in lines if not ('"user_message"' in ln and '"turn":2' in ln)]
    path.write_text("\n".join(kept) + "\n")
    reader = _reader(tmp_path)
    history = reader.history("r")
    assert len(history) == len(expected_history(3)) - 1
    assert any("no message with history_index 3" in w for w in reader.warnings)
    with pytest.raises(TraceError, match="history_index 3"):
        reader.history("r", strict=True)


def test_torn_last_line_keeps_everything_before(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, "r", turns=3, end=False).close()
    n_events = len(path.read_text().splitlines())
    with path.open("ab") as fh:
        fh.write(b'{"v":1,"event_id":"e_999999","run_id":"r","agent":"main","turn":4,"ts":"2026')
    for strict in (False, True):
        reader = _reader(tmp_path, strict=strict)
        events = reader.events("r")
        assert len(events) == n_events
        assert reader.list_turns("r") == [1, 2, 3]
        assert len(reader.warnings) == 1
        assert f"r.jsonl:{n_events + 1}: torn last line" in reader.warnings[0]
        assert f"the {n_events} events before it are intact" in reader.warnings[0]
    # the writer finishes the line: the warning goes away and the event appears
    with path.open("ab") as fh:
        fh.write(b'-11-30T01:02:03.000000Z","event_type":"turn_start","parent_id":null,"metadata":{}}\n')
    assert len(reader.events("r")) == n_events + 1 and reader.warnings == []
    assert reader.list_turns("r") == [1, 2, 3, 4]


def test_last_line_without_newline_but_complete_is_an_event(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"event_id":"e_1","event_type":"run_start","run_id":"r","ts":"t","metadata":{}}')
    reader = _reader(tmp_path)
    assert [e.event_type for e in reader.events("r")] == ["run_start"] and reader.warnings == []
    with path.open("a") as fh:
        fh.write('\n{"event_id":"e_2","event_type":"run_end","run_id":"r","ts":"t","metadata":{}}\n')
    assert [e.event_type for e in reader.events("r")] == ["run_start", "run_end"]
    assert reader.stats.index_builds == 1


def test_corrupt_middle_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, "r", turns=3).close()
    lines = path.read_text().splitlines()
    lines[6] = lines[6][:40]  # line 7: cut JSON
    lines[9] = '["not", "an", "event"]'  # line 10
    path.write_text("\n".join(lines) + "\n")
    lenient = _reader(tmp_path)
    events = lenient.events("r")
    assert len(events) == len(lines) - 2
    assert len(lenient.warnings) == 2
    assert lenient.warnings[0].startswith(f"{path}:7: invalid JSON")
    assert lenient.warnings[1] == f"{path}:10: not a JSON object but list (line skipped)"
    assert lenient.list_runs()[0].warnings == 2
    strict = _reader(tmp_path, strict=True)
    with pytest.raises(CorruptTraceError) as info:
        strict.events("r")
    assert info.value.line == 7 and info.value.path == str(path) and "invalid JSON" in info.value.problem
    assert str(info.value).startswith(f"{path}:7: invalid JSON")


def test_index_reuse_reads_only_what_is_new(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    w = write_run(path, "r", turns=40, end=False)
    reader = _reader(tmp_path)
    assert reader.list_turns("r")[-1] == 40
    size = path.stat().st_size
    assert reader.stats.bytes_read == size + 64 and reader.stats.index_builds == 1
    parsed = reader.stats.lines_parsed
    # asking for one turn reads only that turn's events
    before = reader.stats.bytes_read
    replay = reader.replay_prompt("r", 20)
    assert replay is not None
    turn_bytes = sum(len(ln) for ln in path.read_bytes().split(b"\n") if b'"turn":20,' in ln)
    assert reader.stats.bytes_read - before <= turn_bytes
    assert reader.stats.lines_parsed - parsed <= 3
    # the file grows: only the appended bytes are read to update the index
    write_run(None, "r", turns=2, writer=w, end=False)
    grown = path.stat().st_size
    before = reader.stats.bytes_read
    assert reader.list_turns("r")[-1] == 40  # write_run restarts at turn 1 for the appended part
    # the new bytes, plus the first and last 32 bytes indexed checked (unchanged: an append) and
    # the new last 32 bytes noted
    assert reader.stats.bytes_read - before == grown - size + 32 + 32 + 32
    assert reader.stats.index_builds == 1
    # an unchanged file is not read at all
    before = reader.stats.bytes_read
    reader.list_turns("r")
    assert reader.stats.bytes_read == before
    # a rewritten (shrunk) file is indexed again
    w.close()
    first_line = path.read_text().split("\n", 1)[0] + "\n"
    path.write_text(first_line)
    assert len(reader.events("r")) == 1 and reader.stats.index_builds == 2
    # a file replaced by a longer one with other content is indexed again, not treated as grown
    path.write_text(first_line.replace('"e_000001"', '"e_000009"') + first_line)
    assert [e.event_id for e in reader.events("r")] == ["e_000009", "e_000001"] and reader.stats.index_builds == 3


def test_shared_index_across_readers(tmp_path: Path) -> None:
    write_run(tmp_path / "r_shared.jsonl", "r_shared", turns=3).close()
    first = TraceReader(tmp_path)
    first.list_turns("r_shared")
    second = TraceReader(tmp_path)
    second.list_turns("r_shared")
    assert first.stats.index_builds == 1 and second.stats.index_builds == 0


def test_event_filters_and_agents(tmp_path: Path) -> None:
    w = TraceWriter(tmp_path / "pool.jsonl", "pool")
    write_run(None, "pool", turns=3, agent="a", writer=w, end=False)
    write_run(None, "pool", turns=2, agent="b", writer=w, pin_turn=None, end=False)
    w.emit_json("run_end", {"turns": 5}, agent="pool")
    w.close()
    reader = _reader(tmp_path)
    assert reader.agents("pool") == ["a", "b", "pool"]
    assert reader.list_turns("pool", agent="b") == [1, 2]
    assert reader.list_turns("pool") == [1, 2, 3]
    evs = reader.events("pool", event_types=["user_message"], agent="a")
    assert [e.turn for e in evs] == [1, 2, 3] and {e.agent for e in evs} == {"a"}
    assert {e.agent for e in reader.events("pool", turn=2)} == {"a", "b"}
    assert [e.event_type for e in reader.events("pool", turn=1, agent="b", event_types=["turn_start", "turn_end"])] == \
        ["turn_start", "turn_end"]
    # pins never cross agents
    assert [p.pin_id for p in reader.active_pins("pool", 3, agent="a")] == ["p_a1b2c3d4"]
    assert reader.active_pins("pool", 2, agent="b") == []
    # turn 3 only exists for a; turn 1 is ambiguous without agent
    assert reader.replay_prompt("pool", 3) is not None
    with pytest.raises(TraceError, match="several agents at turn 1: a, b"):
        reader.replay_prompt("pool", 1)
    with pytest.raises(TraceError, match="no agent 'c'; agents: a, b, pool"):
        reader.list_turns("pool", agent="c")
    assert len(reader.history("pool", agent="b")) == 5


def test_active_pins_until_turn_and_unpin(tmp_path: Path) -> None:
    write_run(tmp_path / "u.jsonl", "u", turns=6, pin_turn=1, pin_until=3).close()
    reader = _reader(tmp_path)
    got = {t: [p.pin_id for p in reader.active_pins("u", t)] for t in range(1, 7)}
    assert got == {1: ["p_a1b2c3d4"], 2: ["p_a1b2c3d4"], 3: ["p_a1b2c3d4"], 4: [], 5: [], 6: []}
    pin = reader.active_pins("u", 2)[0]
    assert (pin.label, pin.until_turn, pin.created_turn, pin.content) == ("key facts", 3, 1, PIN_CONTENT)
    assert pin.tokens and pin.tokens > 5 and pin.sha256 and len(pin.sha256) == 64

    write_run(tmp_path / "p.jsonl", "p", turns=6, pin_turn=2, unpin_turn=4).close()
    got = {t: [p.pin_id for p in reader.active_pins("p", t)] for t in range(1, 7)}
    assert got == {1: [], 2: ["p_a1b2c3d4"], 3: ["p_a1b2c3d4"], 4: [], 5: [], 6: []}
    # step-exact: at turn 4 step 0 (before the unpin call) the pin was still in the prompt
    assert [p.pin_id for p in reader.active_pins("p", 4, step=0)] == ["p_a1b2c3d4"]
    assert reader.active_pins("p", 4, step=1) == []
    # the replay agrees with what the builder was given
    for turn in range(1, 7):
        for step in reader.replay_prompt("p", turn).steps:  # type: ignore[union-attr]
            r = reader.replay_prompt("p", turn, step=step)
            assert r is not None
            assert [p.pin_id for p in r.active_pins] == [p["pin_id"] for p in r.inputs["pins"]], (turn, step)


def test_reading_while_writing(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    w = TraceWriter(path, "live")
    reader = _reader(tmp_path)
    seen = []
    for turn in range(1, 6):
        w.emit_json("turn_start", {"input_tokens": turn}, turn=turn)
        seen.append(reader.list_turns("live"))
    assert seen[-1] == [1, 2, 3, 4, 5] and seen[0] == [1]
    assert reader.stats.index_builds == 1
    w.close()


def test_blank_lines_are_skipped_and_foreign_fields_kept(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    lines = [
        {"event_id": "e_1", "event_type": "run_start", "run_id": "r", "ts": "t", "metadata": {"model": "m"},
         "extra": 1},
        {"event_id": "e_2", "event_type": "turn_start", "run_id": "r", "ts": "t", "turn": 1},
    ]
    path.write_text(json.dumps(lines[0]) + "\n\n" + json.dumps(lines[1]) + "\n")
    reader = _reader(tmp_path)
    events = reader.events("r")
    assert [e.event_id for e in events] == ["e_1", "e_2"] and reader.warnings == []
    assert events[0].model_extra == {"extra": 1} and events[1].agent == "main"


def test_file_disappearing_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    write_run(path, "r", turns=1).close()
    reader = _reader(path)
    reader.list_turns("r")
    os.remove(path)
    with pytest.raises(TraceError):
        reader.list_turns("r")


def test_every_prefix_of_a_trace_reads_cleanly(tmp_path: Path) -> None:
    """A file cut at any byte (a crash, or a reader racing the writer) yields exactly its whole lines."""
    src = tmp_path / "src.jsonl"
    write_run(src, "src", turns=3).close()
    data = src.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]  # offsets just after each newline
    cut_dir = tmp_path / "cut"
    cut_dir.mkdir()
    cut = cut_dir / "r.jsonl"
    live = _reader(cut_dir)  # one reader following the file as it grows
    for n in sorted({*range(0, len(data) + 1, max(1, len(data) // 120)), *ends[:5], *(e - 1 for e in ends[:5])}):
        cut.write_bytes(data[:n])
        # a line cut just before its newline is still a whole event
        complete = sum(1 for e in ends if e <= n) + (1 if n + 1 in ends else 0)
        mid_line = n not in ends and n + 1 not in ends and n != 0
        fresh = _reader(cut_dir)
        for reader in (fresh, live):
            events = reader.events("r")
            assert len(events) == complete, n
            assert [e.event_id for e in events] == [f"e_{i:06d}" for i in range(1, complete + 1)]
            warnings = reader.warnings
            assert len(warnings) == (1 if mid_line else 0), (n, warnings)
            assert not mid_line or "torn last line" in warnings[0]
    cut.write_bytes(data)
    assert len(live.events("r")) == len(ends) and live.warnings == []
    assert live.stats.index_builds == 1  # it only ever read on from where it stopped
