"""The frames' pass patches seven columns in place (trace/frames.py): its frames must be the frames of the
straightforward resolution — every decision resolved whole, its rows compared whole with the previous
turn's — on recorded runs of several lengths (pins, unpins, tool calls), on old-encoding traces, and on
chains whose ``prev`` is an earlier decision than the previous one (near, and further back than the
decisions the pass holds)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from long_run_helpers import OldEncoder, answer, lookup

from arcana_jupyter.jupyter.replay_frames import build_frames, frame_diff, turn_diff, with_rows
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime import session as session_module
from arcana_jupyter.runtime.bundle import bundle_from_events
from arcana_jupyter.trace.decision_delta import ChainEncoder, is_chained
from arcana_jupyter.trace.frames import FramePass, outcome_counts
from arcana_jupyter.trace.reader import TraceReader


async def record(folder: Path, turns: int) -> str:
    """A session with pins (some unpinned, some expiring) and a tool call every 7th turn."""
    config = RuntimeConfig(trace_dir=folder, total_window=3000, response_reserve=300)
    runtime = Runtime(config=config, tools=[lookup], provider=FunctionProvider(answer))
    async with runtime.chat() as chat:
        for i in range(1, turns + 1):
            if i % 9 == 2:
                chat.pin(f"fact {i}: the target of region {i % 5} is {i * 3}", label=f"f{i}",
                         until_turn=i + 20 if i % 2 else None)
            if i % 9 == 6 and chat.pins.active(i):
                chat.unpin(chat.pins.active(i)[0].pin_id)
            await chat.send(f"turn {i}: please lookup region {i % 5}" if i % 7 == 0
                            else f"turn {i}: what changed in region {i % 5} since last week?")
        return chat.run_id


def reference_frames(folder: Path, run_id: str) -> list[dict[str, Any]]:
    """Every frame the straightforward way: each turn's events read and validated whole (every decision
    resolved with all its rows), its bundle, its last step's rows compared whole with the previous
    frame's (no row shared), the pins asked for that step."""
    reader = TraceReader(folder, shared=False)
    model = reader.run_info(run_id).model or ""
    frames = []
    previous: list[dict[str, Any]] | None = None
    for turn in [t for t in reader.list_turns(run_id, "main") if t >= 1]:
        events = reader.events(run_id, turn=turn, agent="main")
        bundle = bundle_from_events(events, run_id=run_id, agent="main", turn=turn, model=model, trace_path=None)
        steps = bundle["steps"]
        step = dict(steps[-1]) if steps else {}
        frame: dict[str, Any] = {
            "run_id": run_id, "agent": "main", "turn": turn, "input": bundle["input"], "reply": bundle["reply"],
            "status": bundle["status"], "usage": bundle["usage"], "cost_usd": bundle["cost_usd"], "step": step,
            "pins": [], "prompt_source": None, "digest_verified": None, "digest_note": "", "diff": [],
            "new_messages": [], "primitives": bundle["primitives"], "errors": bundle["errors"],
        }
        if step:
            decision = [e for e in events if e.event_type == "context_decision"
                        and int(e.metadata.get("step") or 0) == step["step"]][-1]
            rows = decision.metadata["decision"]["decisions"]
            frame["pins"] = [p.model_dump(mode="json")
                             for p in reader.active_pins(run_id, turn, "main", step=step["step"])]
            frame["decision_event_id"] = decision.event_id
            frame["digest_note"] = "not checked here (arcana report --verify checks every turn)"
            if step.get("messages"):
                frame["prompt_source"] = "snapshot"
            if previous is not None:
                frame["diff"], frame["new_messages"] = turn_diff([dict(r) for r in previous], rows)
            previous = rows
            frame["outcome_counts"] = outcome_counts(rows)
        frames.append(frame)
    return frames


def _check(folder: Path, run_id: str) -> list[dict[str, Any]]:
    """build_frames with rows on demand and with every row: exactly the reference frames."""
    want = reference_frames(folder, run_id)
    reader = TraceReader(folder, shared=False)
    light = build_frames(folder, run_id, reader=reader, verify=False, rows=False)
    full = build_frames(folder, run_id, reader=TraceReader(folder, shared=False), verify=False)
    assert [f["turn"] for f in light] == [f["turn"] for f in want] == [f["turn"] for f in full]
    for a, b, w in zip(light, full, want, strict=True):
        assert a["rows_omitted"] is True and a["step"]["decision"]["decisions"] is None
        got = {k: v for k, v in with_rows(a, reader).items() if k != "rows_omitted"}
        assert got == w, a["turn"]
        assert b == w, b["turn"]
        # the same order too (what a page or a JSON dump shows): outcome counts, changes, keys
        assert json.dumps(got, default=str) == json.dumps(w, default=str) == json.dumps(b, default=str), a["turn"]
    assert any(f["diff"] for f in want) and any(f["new_messages"] for f in want)
    assert any(f["pins"] for f in want) and any(f["step"].get("step") for f in want)  # pins, tool calls
    return want


@pytest.mark.parametrize("turns", [14, 75])
async def test_frames_of_recorded_runs_are_the_straightforward_frames(tmp_path: Path, turns: int) -> None:
    run_id = await record(tmp_path, turns)
    _check(tmp_path, run_id)
    if turns == 75:  # the recall churn of a long run: scattered changes, written with the sparse ops
        text = (tmp_path / f"{run_id}.jsonl").read_text()
        assert '["s",[' in text and '["n","' in text and '["qn",[' in text, "the frames read the sparse ops"


async def test_frames_of_an_old_encoding_trace_are_the_straightforward_frames(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "ChainEncoder", OldEncoder)
    run_id = await record(tmp_path, 45)
    metas = [json.loads(line)["metadata"] for line in (tmp_path / f"{run_id}.jsonl").read_text().splitlines()
             if '"context_decision"' in line]
    assert not any(is_chained(m) for m in metas) and any(m["decision"].get("decisions_delta") for m in metas)
    _check(tmp_path, run_id)


def _rechain(path: Path, pick: Any) -> int:
    """The trace's chained decisions written again, each against the earlier decision ``pick(i, ids)``
    names (an index into those written so far; None: a keyframe): what an encoder that may chain to an
    earlier decision than the previous writes. Returns how many name an earlier one than the previous."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    reader = TraceReader(path, shared=False)
    run_id = lines[0]["run_id"]
    resolved = {r.event_id: r.metadata for r in reader.decision_records(run_id)}
    states: list[ChainEncoder] = []
    ids: list[str] = []
    earlier = 0
    for obj in lines:
        if obj["event_type"] != "context_decision":
            continue
        meta = copy.deepcopy(resolved[obj["event_id"]])
        rows = meta["decision"]["decisions"]
        meta["decision"]["decisions"] = None
        which = pick(len(ids), ids) if ids else None
        enc = copy.deepcopy(states[which]) if which is not None else ChainEncoder()
        if which is None:
            enc._prev_cols = None  # a keyframe
        earlier += which is not None and which < len(ids) - 1
        obj["metadata"] = enc.pack(meta, rows)
        enc.written(obj["event_id"])
        states.append(enc)
        ids.append(obj["event_id"])
    path.write_text("".join(json.dumps(o) + "\n" for o in lines))
    return earlier


async def test_frames_of_chains_to_earlier_decisions_are_the_straightforward_frames(tmp_path: Path) -> None:
    run_id = await record(tmp_path, 90)
    want = reference_frames(tmp_path, run_id)
    rng = random.Random(26)

    def pick(n: int, ids: list[str]) -> int | None:
        roll = rng.random()
        if roll < 0.03:
            return None  # a keyframe now and then
        if roll < 0.1 and n > 70:
            return rng.randrange(0, n - 66)  # further back than the pass holds: resolved from its keyframe
        return max(0, n - rng.choice([1, 1, 2, 3, 5, 8]))

    earlier = _rechain(tmp_path / f"{run_id}.jsonl", pick)
    assert earlier > 20
    metas = [json.loads(line)["metadata"] for line in (tmp_path / f"{run_id}.jsonl").read_text().splitlines()
             if '"context_decision"' in line]
    assert all(is_chained(m) for m in metas)
    assert _check(tmp_path, run_id) == want  # the same frames as the trace chained to the previous decision


rows_st = st.lists(st.fixed_dictionaries({
    "outcome": st.sampled_from(["kept", "dropped", "compressed", "kept", "kept"]),
    "fidelity": st.sampled_from([None, "L0", "L3"]),
    "token_count_after": st.integers(0, 4),
    "reason": st.sampled_from(["a", "b", "relevant"]),
    "relevance_score": st.integers(0, 30).map(lambda k: k / 10000),
}), min_size=0, max_size=9)


def _rows(hist: list[dict[str, Any]], tail: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = [{"index": i, "role": "user" if i % 2 else "assistant", "source": "history", "section": None, **r}
           for i, r in enumerate(hist)]
    out += [{"index": None, "role": "system", "source": "section", "section": f"s{k}", **r} for k, r in enumerate(tail)]
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(rows_st, st.lists(st.tuples(st.integers(0, 30), rows_st.map(lambda r: r[:1])), max_size=4),
                          rows_st.map(lambda r: r[:3]), st.integers(0, 6), st.booleans()),
                min_size=1, max_size=12))
def test_counts_and_changes_of_the_pass_are_those_of_the_rows(tmp_path_factory: Any, steps: Any) -> None:
    """Random decisions (history rows added and changed, sections after them), each chained to the
    previous decision or an earlier one (or a keyframe), the pass holding only 3: every decision's outcome
    counts and its changes against every other decision still held are those of its whole rows."""
    folder = tmp_path_factory.mktemp("chain")
    hist: list[dict[str, Any]] = []
    decisions: list[list[dict[str, Any]]] = []
    states: list[ChainEncoder] = []
    lines = []
    for n, (added, changed, tail, back, keyframe) in enumerate(steps):
        for i in range(len(hist), len(hist) + len(added)):  # the transcript a decision's rows stand for
            lines.append({"v": 1, "event_id": f"m_{i:06d}", "run_id": "r_x", "agent": "main", "turn": n + 1, "ts": "",
                          "event_type": "user_message", "parent_id": None,
                          "metadata": {"message": {"role": "user", "content": f"m{i}"}, "history_index": i + 1}})
        hist = [dict(r) for r in hist] + [dict(r) for r in added]
        for at, new in changed:
            if hist and new:
                hist[at % len(hist)].update(new[0])
        rows = _rows(hist, tail)
        which = max(0, n - 1 - back) if states and not keyframe else None
        enc = copy.deepcopy(states[which]) if which is not None else ChainEncoder()
        packed = enc.pack({"step": 0, "decision": {"strategy": "x", "notes": [], "decisions": None}}, rows)
        event_id = f"e_{n + 1:06d}"
        enc.written(event_id)
        states.append(enc)
        decisions.append(rows)
        lines.append({"v": 1, "event_id": event_id, "run_id": "r_x", "agent": "main", "turn": n + 1, "ts": "",
                      "event_type": "context_decision", "parent_id": None, "metadata": packed})
    path = folder / "r_x.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    frames = FramePass(TraceReader(path, shared=False), "r_x", "main", keep=3)
    ids = []
    for n, record in enumerate(frames.records()):
        ids.append(record.event_id)
        assert json.dumps(frames.counts(record.event_id)) == json.dumps(outcome_counts(decisions[n]))
        for m in range(max(0, n - 3), n + 1):
            changes = frames.changes(ids[m], record.event_id)
            if changes is None:
                continue  # no longer held (the frames read the rows then)
            assert frame_diff(changes) == turn_diff([dict(r) for r in decisions[m]], decisions[n]), (m, n)
            back = frames.changes(record.event_id, ids[m])
            assert back is not None
            assert frame_diff(back) == turn_diff([dict(r) for r in decisions[n]], decisions[m]), (n, m)
