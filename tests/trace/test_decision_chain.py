"""Chained decisions (encoding 2): each decision written against the previous one of its agent.

Round trips (property-tested), the keyframe policy (bytes per decision do not grow with the
history), every reader path on new traces, on old ones (keyframes and deltas, written by the old
encoder through the real runtime) and on a file holding both, and clear errors for a broken chain.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from long_run_helpers import OldEncoder

from arcana_jupyter.context.rebuild import rebuild_turn
from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.jupyter.replay_frames import build_frames
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime import session as session_module
from arcana_jupyter.trace.decision_delta import (
    ChainEncoder,
    ChainResolver,
    align_rows,
    columns,
    encode_column,
    is_chained,
)
from arcana_jupyter.trace.reader import TraceReader
from benchmarks.bench_runtime import answer, lookup

value_st = st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.sampled_from(["kept", "dropped", "a", ""]),
                     st.integers(0, 10000).map(lambda k: k / 10000), st.floats(0, 2, allow_nan=False))
KEYS = ("index", "source", "section", "outcome", "relevance_score", "token_count_after", "turn")


def _row(i: int, draw_value: Any, source: str = "history", section: str | None = None) -> dict[str, Any]:
    return {"index": i, "source": source, "section": section,
            "outcome": draw_value, "relevance_score": round((i * 37 % 100) / 97, 4), "token_count_after": i % 7,
            "turn": i // 2}


@st.composite
def decision_sequences(draw: Any) -> list[list[dict[str, Any]]]:
    """Decisions as a session makes them: history rows grow, some values change, tail rows move."""
    out: list[list[dict[str, Any]]] = []
    hist: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 7))):
        hist = [dict(r) for r in hist]
        for _ in range(draw(st.integers(0, 4))):
            hist.append(_row(len(hist), draw(value_st)))
        for r in hist:
            if draw(st.booleans()):
                r[draw(st.sampled_from(KEYS[3:]))] = draw(value_st)
        tail = [_row(len(hist) + k, "kept", "section", f"s{k}") for k in range(draw(st.integers(0, 3)))]
        out.append(hist + tail)
    return out


def _meta(step: int, extra: dict[str, Any]) -> dict[str, Any]:
    return {"step": step, "decision": {"strategy": "x", "notes": [], "decisions": None}, **extra}


meta_st = st.fixed_dictionaries({
    "tools": st.sampled_from([[], [{"name": "lookup"}]]),
    "builder": st.sampled_from([{"total_window": 8192}, {"total_window": 4096}]),
    "inputs": st.fixed_dictionaries({
        "pins": st.sampled_from([[], [{"pin_id": "p1", "content": "x"}]]),
        "sections": st.just([]),
        "overflow": st.sampled_from([{}, {"checkpoint": [1, 2, 3, 5]}, {"checkpoint": [4, 1]}]),
    }),
    "shape": st.sampled_from([{"name": "portable", "moved": {"1": ["system", 0], "2": ["kept", 1], "3": ["kept", 2]}},
                              {"name": "portable", "moved": {"2": ["kept", 1], "10": ["kept", 0]}},
                              {"name": "portable", "moved": {"1": ["system", 0], "2": ["system", 0], "3": ["merged", 1],
                                                             "4": ["merged", 1], "5": ["kept", 2], "6": ["kept", 2]}}]),
})


@settings(max_examples=150, deadline=None)
@given(decision_sequences(), st.lists(meta_st, min_size=7, max_size=7), st.sampled_from([1, 2, 512]))
def test_chain_round_trip_is_the_identity(seq: list[list[dict[str, Any]]], metas: list[dict[str, Any]],
                                          max_chain: int) -> None:
    enc = ChainEncoder(max_chain=max_chain)
    written: dict[str, dict[str, Any]] = {}
    for i, rows in enumerate(seq):
        packed = enc.pack(_meta(0, metas[i]), rows)
        enc.written(f"e_{i}")
        written[f"e_{i}"] = json.loads(json.dumps(packed))  # as a trace line holds it
    resolver = ChainResolver(written.get)
    for i, rows in enumerate(seq):
        full = resolver.resolve(f"e_{i}", written[f"e_{i}"])
        assert full["decision"]["decisions"] == json.loads(json.dumps(rows))
        assert {k: v for k, v in full.items() if k != "decision"} == {**metas[i], "step": 0}
    # random access: a fresh resolver walks back from the last decision alone
    last = f"e_{len(seq) - 1}"
    assert ChainResolver(written.get, keep=1).resolve(last, written[last])["decision"]["decisions"] == \
        json.loads(json.dumps(seq[-1]))


@settings(max_examples=150, deadline=None)
@given(decision_sequences(), st.sampled_from([1, 2, 512]))
def test_the_frames_fast_path_gives_the_rows_of_its_keys_shared_across_keyframes(
        seq: list[list[dict[str, Any]]], max_chain: int) -> None:
    """``only=`` (the frames' fast path): every decision's rows are its full rows cut to those keys (values
    and types), and at a keyframe (``max_chain`` 1 and 2 make many), where the rows are matched column by
    column, a row equal to the previous decision's at the same position is that object."""
    only = ("index", "source", "section", "outcome", "token_count_after")
    enc = ChainEncoder(max_chain=max_chain)
    written: dict[str, dict[str, Any]] = {}
    for i, rows in enumerate(seq):
        packed = enc.pack(_meta(0, {}), rows)
        enc.written(f"e_{i}")
        written[f"e_{i}"] = json.loads(json.dumps(packed))
    resolver = ChainResolver(written.get, keep=2, only=only)
    previous: list[dict[str, Any]] | None = None
    for i, rows in enumerate(seq):
        got = resolver.resolve(f"e_{i}", written[f"e_{i}"])["decision"]["decisions"]
        want = [{k: r[k] for k in only} for r in json.loads(json.dumps(rows))]
        assert got == want
        assert [[type(v) for v in r.values()] for r in got] == [[type(v) for v in r.values()] for r in want]
        if previous is not None and written[f"e_{i}"]["chain"]["prev"] is None:  # a keyframe
            for a, b in zip(previous, got, strict=False):
                if a == b and all(type(a[k]) is type(b[k]) for k in only):
                    assert a is b, (i, a)
        previous = got


@given(st.lists(value_st, max_size=30), st.lists(value_st, max_size=30))
def test_a_column_decodes_to_itself(new: list[Any], base: list[Any]) -> None:
    from arcana_jupyter.trace.decision_delta import NO_ROW, decode_column

    aligned = (base + [NO_ROW] * len(new))[:len(new)]
    for against in (aligned, None):
        ops = json.loads(json.dumps(encode_column(new, against)))
        col, _ = decode_column(ops, against, len(new), "test")
        assert col == new and [type(v) for v in col] == [type(v) for v in new]


def test_alignment_follows_history_rows_and_moves_the_tail() -> None:
    prev = [_row(i, "kept") for i in range(5)] + [_row(5, "kept", "section", "a"), _row(6, "kept", "section", "b")]
    new = [_row(i, "kept") for i in range(7)] + [_row(7, "kept", "section", "a"), _row(8, "kept", "section", "b")]
    assert align_rows(columns(new), columns(prev)) == [[0, 5, 0], [7, 2, 5]]


def test_bytes_per_decision_do_not_grow_with_the_history() -> None:
    """A history of 60 -> 6,000 rows where each decision changes a few rows (and all scores a little):
    the chain's bytes per decision stay flat, keyframes included."""
    enc = ChainEncoder()
    rows = [_row(i, "dropped") for i in range(60)]
    sizes: list[int] = []
    keyframes: list[int] = []
    for n in range(3000):
        rows = [*rows, _row(len(rows), "kept"), _row(len(rows) + 1, "kept")]
        for r in rows[-12:-2]:
            r["outcome"] = "dropped" if r["outcome"] == "kept" else "kept"
        packed = enc.pack(_meta(0, {}), rows)
        enc.written(f"e_{n}")
        sizes.append(len(json.dumps(packed["chain"], separators=(",", ":"))))
        if packed["chain"]["prev"] is None:
            keyframes.append(n)
    # keyframes grow with the history and come back less often (a sawtooth): compare whole runs
    short, long = sum(sizes[:600]) / 600, sum(sizes) / len(sizes)
    assert long < 1.2 * short, (short, long)
    gaps = [b - a for a, b in itertools.pairwise(keyframes)]
    assert len(keyframes) < 60 and gaps[-1] > 10 * gaps[0], ("keyframes thin out as they grow", keyframes)


def test_a_broken_chain_is_a_clear_error(tmp_path: Path) -> None:
    enc = ChainEncoder()
    lines = []
    for i in range(4):
        packed = enc.pack(_meta(0, {}), [_row(k, "kept") for k in range(3 + i)])
        enc.written(f"e_{i + 1:06d}")
        lines.append({"v": 1, "event_id": f"e_{i + 1:06d}", "run_id": "r_x", "agent": "main", "turn": i + 1, "ts": "",
                      "event_type": "context_decision", "parent_id": None, "metadata": packed})
    lines[1]["metadata"]["chain"]["prev"] = "e_999999"
    path = tmp_path / "r_x.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    reader = TraceReader(path, shared=False)
    assert len(reader.events("r_x", turn=1)[0].metadata["decision"]["decisions"]) == 3
    with pytest.raises(TraceError, match=r"e_000003.*e_999999 is not a chained decision"):
        reader.events("r_x", turn=3)
    with pytest.raises(TraceError, match="chained decision cannot be resolved"):
        list(reader.decision_records("r_x"))


async def _record(folder: Path, turns: int) -> tuple[str, Path, dict[tuple[int, int], Any]]:
    runtime = Runtime(config=RuntimeConfig(trace_dir=folder, total_window=3600), tools=[lookup],
                      provider=FunctionProvider(answer))
    live: dict[tuple[int, int], Any] = {}
    async with runtime.chat() as chat:
        chat.subscribe(lambda ev: live.__setitem__((ev.turn, ev.metadata["step"]), ev.metadata)
                       if ev.event_type == "context_decision" else None)
        for i in range(1, turns + 1):
            if i == 4:
                chat.pin("fact: region 3 targets 12", label="f")
            await chat.send(f"turn {i}: please lookup the figures for region {i % 5}" if i % 6 == 0
                            else f"turn {i}: what changed in region {i % 5} since last week?")
        assert chat.trace_path is not None
        return chat.run_id, chat.trace_path, live


def _check_reads(run_id: str, path: Path, live: dict[tuple[int, int], Any]) -> None:
    """Every reader path answers the live decisions; every turn replays and rebuilds digest-exact."""
    reader = TraceReader(path.parent, shared=False)
    plain = {k: json.loads(json.dumps(v)) for k, v in live.items()}
    by_events = {(e.turn, e.metadata["step"]): e.metadata
                 for e in reader.events(run_id, event_types=["context_decision"])}
    by_records = {(r.turn, r.step): r.metadata for r in reader.decision_records(run_id)}
    assert set(by_events) == set(by_records) == set(live)
    for key, meta in plain.items():
        for got in (by_events[key], by_records[key]):
            got = json.loads(json.dumps(got))
            assert got["decision"]["decisions"] == meta["decision"]["decisions"], key
            for name in ("inputs", "tools", "builder", "shape", "calibration", "request_digest", "history_len"):
                assert got.get(name) == meta.get(name), (key, name)
            assert "chain" not in got
    turns = reader.replay_turns(run_id)
    for turn in turns:
        assert rebuild_turn(TraceReader(path.parent, shared=False), run_id, turn).verified, turn
    frames = build_frames(path.parent, run_id, reader=TraceReader(path.parent, shared=False))
    assert [f["digest_verified"] for f in frames] == [True] * len(turns)


async def test_new_traces_are_chained_and_read_back_on_every_path(tmp_path: Path) -> None:
    run_id, path, live = await _record(tmp_path, 24)
    stored = [json.loads(line) for line in path.read_text().splitlines()]
    metas = [e["metadata"] for e in stored if e["event_type"] == "context_decision"]
    # a decision's fields are written, or patched from the previous decision's (chain.patch): never its rows
    assert all(is_chained(m) and (m["decision"]["decisions"] is None if "decision" in m
                                  else "decision" in m["chain"]["patch"]) for m in metas)
    assert sum(m["chain"]["prev"] is not None for m in metas) > len(metas) / 2
    assert sum("tools" not in m for m in metas) > len(metas) / 2, "unchanged tools are referenced, not repeated"
    _check_reads(run_id, path, live)


async def test_old_traces_still_read_replay_and_verify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "ChainEncoder", OldEncoder)
    run_id, path, live = await _record(tmp_path, 24)
    stored = [json.loads(line) for line in path.read_text().splitlines()]
    decisions = [e["metadata"] for e in stored if e["event_type"] == "context_decision"]
    assert not any(is_chained(m) for m in decisions)
    assert sum(bool(m["decision"].get("decisions_delta")) for m in decisions) > len(decisions) / 2
    _check_reads(run_id, path, live)


async def test_a_file_with_both_encodings_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An old run resumed by a new runtime: the file holds old deltas, then a chain from a keyframe."""
    monkeypatch.setattr(session_module, "ChainEncoder", OldEncoder)
    run_id, path, live = await _record(tmp_path, 10)
    monkeypatch.undo()
    text = path.read_text()
    _, path2, live2 = await _record(tmp_path / "new", 10)
    shift = {}
    lines = []
    offset = len(text.splitlines())
    for line in path2.read_text().splitlines():
        e = json.loads(line)
        if e["event_type"] in ("run_start", "run_end"):
            continue
        new_id = f"e_{int(e['event_id'][2:]) + offset:06d}"
        shift[e["event_id"]] = new_id
        e["event_id"], e["run_id"], e["turn"] = new_id, run_id, e["turn"] + 100 if e["turn"] is not None else None
        if e.get("parent_id"):
            e["parent_id"] = shift.get(e["parent_id"], e["parent_id"])
        chain = e["metadata"].get("chain") if e["event_type"] == "context_decision" else None
        if chain and chain["prev"]:
            chain["prev"] = shift[chain["prev"]]
        lines.append(json.dumps(e))
    path.write_text(text + "\n".join(lines) + "\n")
    reader = TraceReader(path.parent, shared=False)
    got = {(r.turn, r.step): r.metadata["decision"]["decisions"] for r in reader.decision_records(run_id)}
    want = {**{k: v["decision"]["decisions"] for k, v in live.items()},
            **{(t + 100, s): v["decision"]["decisions"] for (t, s), v in live2.items()}}
    assert json.loads(json.dumps(list(got.items()))) == json.loads(json.dumps(list(want.items())))
    events = {(e.turn, e.metadata["step"]): e.metadata["decision"]["decisions"]
              for e in reader.events(run_id, event_types=["context_decision"])}
    assert json.loads(json.dumps(list(events.items()))) == json.loads(json.dumps(list(want.items())))
