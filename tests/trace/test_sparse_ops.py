"""The ops for scattered changes (trace/chain/columns.py): a sparse op ``["s", gaps, ops]``, ``["qn", ...]``
(scores that come, go and drift), a masked column with the ops of its other positions
(``["m", ref, ops, rest]``), nulls as a mask (``["n", "0110", ops]``), a value table's indexes as
digits and a delta without ``keys``: they
round-trip through every reader (the resolver, the frames' pass), a malformed one is an error naming
it, and traces written without them still read."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.trace.chain import columns as chain_columns
from arcana_jupyter.trace.chain.columns import NO_ROW, decode_column, encode_column, map_ranges
from arcana_jupyter.trace.decision_delta import FRAME_KEYS, ChainEncoder, ChainResolver
from arcana_jupyter.trace.frames import FramePass
from arcana_jupyter.trace.reader import TraceReader


def without_sparse_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoder as it was before these ops: no sparse op, no ``qn``, no masked column with a rest, value
    tables' indexes as lists, and every delta with its keys (what traces written before them hold)."""
    monkeypatch.setattr(chain_columns, "_sparse_ops", lambda new, base, flags: None)
    monkeypatch.setattr(chain_columns, "_qn_op", lambda new, base: None)
    monkeypatch.setattr(chain_columns, "_nulls_op", lambda new, base: None)
    monkeypatch.setattr(chain_columns, "_rest_ops", lambda new, base, mask, count, same: None)
    monkeypatch.setattr(chain_columns, "_indexes", lambda indexes, size: indexes)
    pack = ChainEncoder.pack

    def with_keys(self: ChainEncoder, metadata: dict[str, Any], rows: Any) -> dict[str, Any]:
        out = pack(self, metadata, rows)
        spec = out["chain"]["rows"]
        if "keys" not in spec:
            out["chain"]["rows"] = {"count": spec["count"], "keys": list(rows[0]) if rows else [],
                                    **{k: v for k, v in spec.items() if k != "count"}}
        return out

    monkeypatch.setattr(ChainEncoder, "pack", with_keys)


def _ops(value: Any, kind: str) -> list[list[Any]]:
    found: list[list[Any]] = []
    if isinstance(value, list):
        if value and value[0] == kind:
            found.append(value)
        for v in value:
            found.extend(_ops(v, kind))
    return found


score_st = st.one_of(st.none(), st.integers(0, 10000).map(lambda k: k / 10000))
value_st = st.one_of(st.none(), st.booleans(), st.integers(-3, 40), st.sampled_from(["kept", "dropped", "a"]), score_st)


@settings(max_examples=200, deadline=None)
@given(st.lists(value_st, min_size=1, max_size=300), st.data())
def test_scattered_changes_round_trip(base: list[Any], data: Any) -> None:
    """A column with a few values changed here and there (some positions without a previous row)
    decodes to itself, and is written with a sparse op when it changed in few scattered places."""
    n = len(base)
    new = list(base)
    changed = data.draw(st.lists(st.integers(0, n - 1), max_size=max(1, n // 10), unique=True))
    for i in changed:
        new[i] = data.draw(value_st)
    holes = data.draw(st.lists(st.integers(0, n - 1), max_size=3, unique=True))
    against = [NO_ROW if i in holes else v for i, v in enumerate(base)]
    for i in holes:
        if new[i] is NO_ROW:
            new[i] = None
    ops = json.loads(json.dumps(encode_column(new, against)))
    col, copied = decode_column(ops, against, n, "test", bytes(i in holes for i in range(n)))
    assert col == new and [type(v) for v in col] == [type(v) for v in new]
    for a, b in copied:  # what it says it copied is the previous values
        assert col[a:b] == against[a:b]


def test_a_sparse_op_is_written_for_scattered_changes_and_qn_for_scores() -> None:
    rng = random.Random(27)
    base = [round(rng.random(), 4) if i % 3 else None for i in range(2000)]
    new = list(base)
    for i in range(5, 2000, 97):  # scores that come and go
        new[i] = None if new[i] is not None else 0.5
    for i in range(1900, 2000, 7):  # and drift
        if new[i] is not None:
            new[i] = round(new[i] + 1e-4, 4)
    ops = encode_column(new, base)
    assert _ops(ops, "s") and _ops(ops, "qn"), ops
    assert len(json.dumps(ops)) < 900  # a few bytes a change, not a copy count and a literal each
    assert decode_column(json.loads(json.dumps(ops)), base, 2000, "t")[0] == new


def test_value_table_indexes_as_digits() -> None:
    ops = encode_column(["a", "b", "a", None, "b", "a"] * 3, None)
    assert ops == [["k", ["a", "b", None], "010210" * 3]]
    assert decode_column(ops, None, 18, "t")[0] == ["a", "b", "a", None, "b", "a"] * 3
    assert decode_column([["k", [], ""]], None, 0, "t")[0] == []
    for bad in ("013", "0x", "٣", "1.0"):
        with pytest.raises(ValueError, match="digits"):
            decode_column([["k", ["a", "b"], bad]], None, len(bad), "t")


def test_map_ranges() -> None:
    assert map_ranges([[0, 2], [3, 6]], [[10, 12], [20, 25]]) == [[10, 12], [21, 24]]
    assert map_ranges([[1, 4]], [[0, 2], [2, 4]]) == [[1, 4]]
    with pytest.raises(ValueError):
        map_ranges([[0, 5]], [[0, 2]])


def _churn(rng: random.Random, prev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The next decision of a long run: rows added, recalled rows flipping kept <-> dropped with their
    score, reason and fidelity, scores drifting elsewhere, positions moving, an input row at the end."""
    hist = [dict(r) for r in prev if r["source"] == "history"]
    for _ in range(rng.randrange(1, 4)):
        hist.append({"index": len(hist), "source": "history", "section": None, "outcome": "kept",
                     "relevance_score": None, "reason": "window", "fidelity": "L0", "position": None,
                     "token_count_after": 18, "turn": len(hist) // 2})
    for r in rng.sample(hist, min(len(hist), rng.randrange(0, 12))):
        kept = r["outcome"] != "kept"
        r.update(outcome="kept" if kept else "dropped", reason="relevant" if kept else "block_dropped",
                 fidelity="L0" if kept else None, token_count_after=18 if kept else 0,
                 relevance_score=round(rng.random(), 4) if kept else None)
    for r in hist[-30:]:
        if r["relevance_score"] is not None and rng.random() < 0.5:
            r["relevance_score"] = round(min(1.0, r["relevance_score"] + 1e-4), 4)
    pos = 0
    for r in hist:
        r["position"] = pos if r["outcome"] == "kept" else None
        pos += r["outcome"] == "kept"
    tail = [{"index": None, "source": "input", "section": None, "outcome": "kept", "relevance_score": None,
             "reason": "current_input", "fidelity": "L0", "position": pos, "token_count_after": rng.randrange(5, 40),
             "turn": len(hist)}]
    return hist + tail


@pytest.mark.parametrize("seed", [1, 2, 5, 7])
def test_random_churn_round_trips_through_the_resolver(seed: int) -> None:
    rng = random.Random(seed)
    enc = ChainEncoder(max_chain=rng.choice([8, 512]))
    rows: list[dict[str, Any]] = [{"index": i, "source": "history", "section": None, "outcome": "dropped",
                                   "relevance_score": None, "reason": "block_dropped", "fidelity": None,
                                   "position": None, "token_count_after": 0, "turn": i // 2} for i in range(150)]
    written: dict[str, dict[str, Any]] = {}
    decisions = []
    for i in range(60):
        rows = _churn(rng, rows)
        meta = {"step": 0, "decision": {"strategy": "x", "decisions": None}}
        written[f"e_{i}"] = json.loads(json.dumps(enc.pack(meta, rows)))
        enc.written(f"e_{i}")
        decisions.append(json.loads(json.dumps(rows)))
    text = json.dumps(written)
    assert '["s", [' in text and '["qn", [' in text and '"m"' in text and '["n", "' in text
    assert any(len(op) == 4 for m in written.values() for col in m["chain"]["rows"]["columns"].values()
               for op in _ops(col, "m")), "a masked column with a rest"
    assert sum("keys" in m["chain"]["rows"] for m in written.values()) == \
        sum(m["chain"]["prev"] is None for m in written.values())  # keys in keyframes only
    resolver = ChainResolver(written.get)
    for i, want in enumerate(decisions):
        assert resolver.resolve(f"e_{i}", written[f"e_{i}"])["decision"]["decisions"] == want
    last = f"e_{len(decisions) - 1}"
    assert ChainResolver(written.get, keep=1).resolve(last, written[last])["decision"]["decisions"] == decisions[-1]


def _trace(folder: Path, metas: list[dict[str, Any]]) -> Path:
    run = "r_20261202_000000_abcdef"
    # the transcript the decisions' rows stand for (a decision holds at most the messages recorded before it)
    rows = max((m["chain"]["rows"].get("count", 0) for m in metas if isinstance(m.get("chain"), dict)), default=0)
    lines = [{"v": 1, "event_id": f"m_{h:06d}", "run_id": run, "agent": "main", "turn": 1, "ts": "2026-12-02T00:00:00Z",
              "event_type": "user_message", "parent_id": None,
              "metadata": {"message": {"role": "user", "content": f"m{h}"}, "history_index": h}}
             for h in range(1, rows + 1)]
    lines += [{"v": 1, "event_id": f"e_{i + 1:06d}", "run_id": run, "agent": "main", "turn": i + 1,
               "ts": "2026-12-02T00:00:00Z", "event_type": "context_decision", "parent_id": None, "metadata": m}
              for i, m in enumerate(metas)]
    path = folder / f"{run}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _chain(n: int = 12) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    rng = random.Random(5)
    enc = ChainEncoder()
    rows: list[dict[str, Any]] = [{"index": i, "source": "history", "section": None, "outcome": "dropped",
                                   "relevance_score": None, "reason": "block_dropped", "fidelity": None,
                                   "position": None, "token_count_after": 0, "turn": i // 2} for i in range(300)]
    metas, decisions = [], []
    for i in range(n):
        rows = _churn(rng, rows)
        metas.append(json.loads(json.dumps(enc.pack({"step": 0, "decision": {"strategy": "x", "decisions": None}},
                                                    rows))))
        enc.written(f"e_{i + 1:06d}")
        decisions.append(json.loads(json.dumps(rows)))
    return metas, decisions


def test_the_frames_pass_reads_the_new_ops(tmp_path: Path) -> None:
    """The frames' pass patches its columns from the new ops: every decision's outcome counts are those of
    its rows."""
    metas, decisions = _chain()
    assert any(_ops(m["chain"]["rows"]["columns"]["outcome"], "s") for m in metas)
    path = _trace(tmp_path, metas)
    frames = FramePass(TraceReader(tmp_path, shared=False), path.stem, "main")
    ids = [r.event_id for r in frames.records()]
    for eid, rows in zip(ids[-8:], decisions[-8:], strict=True):
        counts: dict[str, int] = {}
        for r in rows:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        assert frames.counts(eid) == counts


@pytest.mark.parametrize("column, ops, says", [
    ("outcome", lambda n: [["s", [-1], [["v", "kept"]]], n - 1], '["s", [gap, ...], ops]'),
    ("outcome", lambda n: [["s", [n + 5], [["v", "kept"]]]], "a sparse op at 0 reaches past"),
    ("outcome", lambda n: [["s", [1], "x"], n - 2], '["s", [gap, ...], ops]'),
    ("outcome", lambda n: [["s", [1], [["v", "a", "b"]]], n - 2], "a sparse op's values resolves to 2 values"),
    ("relevance_score", lambda n: [["qn", ["x"]], n - 1], '["qn", [int or null, ...]]'),
    ("relevance_score", lambda n: [["qn", [-100000]], n - 1], 'a "qn" op makes a negative number'),
    ("token_count_after", lambda n: [["s", [n - 1], [["v", 1]]]], "no aligned previous row"),
    ("token_count_after", lambda n: [["qn", [-100000]], n - 1], 'a "qn" op makes a negative number'),
    ("token_count_after", lambda n: [["n", "012", [["v", 1]]], n - 3], '["n", "0 or 1 per value", ops]'),
    ("token_count_after", lambda n: [["n", "0110", [["v", 1]]], n - 4], "an \"n\" op's values resolves to 1"),
    ("token_count_after", lambda n: [["n", "0" * (n + 1), []]], 'an "n" op at 0 reaches past'),
])
def test_malformed_new_ops_are_errors_naming_them(tmp_path: Path, column: str, ops: Any, says: str) -> None:
    metas, _ = _chain(3)
    count = metas[2]["chain"]["rows"]["count"]
    metas[2]["chain"]["rows"]["columns"][column] = ops(count)
    if column == "token_count_after":  # the input row at the end is not aligned: a copy may not reach it
        assert metas[2]["chain"]["rows"]["align"][-1][0] + metas[2]["chain"]["rows"]["align"][-1][1] < count
    with pytest.raises(ValueError) as err:  # the column is decoded before any masked on it
        ChainResolver({f"e_{i + 1:06d}": m for i, m in enumerate(metas)}.get).resolve("e_000003", metas[2])
    assert says in str(err.value) and f"column {column!r}" in str(err.value)
    if column not in FRAME_KEYS:
        return  # the frames' pass does not decode it (the full decode checks it)
    path = _trace(tmp_path, metas)
    with pytest.raises(TraceError) as frames_err:
        list(FramePass(TraceReader(tmp_path, shared=False), path.stem, "main").records())
    assert "e_000003" in str(frames_err.value) and says in str(frames_err.value)


def test_keys_left_out_of_a_keyframe_are_an_error() -> None:
    metas, decisions = _chain(2)
    assert "keys" in metas[0]["chain"]["rows"] and "keys" not in metas[1]["chain"]["rows"]
    resolver = ChainResolver({f"e_{i + 1:06d}": m for i, m in enumerate(metas)}.get)
    assert resolver.resolve("e_000002", metas[1])["decision"]["decisions"] == decisions[1]
    del metas[0]["chain"]["rows"]["keys"]
    with pytest.raises(ValueError, match=r"chain\.rows\.keys is missing"):
        ChainResolver({f"e_{i + 1:06d}": m for i, m in enumerate(metas)}.get).resolve("e_000002", metas[1])


def test_a_masked_column_with_a_rest_on_a_column_the_frames_skip(tmp_path: Path) -> None:
    """``fidelity`` (a frame column) masked, with a rest, on ``reason`` (one the frames do not decode): the
    frames' pass and the resolver's fast path read the ranges ``reason`` copied from its ops alone."""
    first = [{"index": i, "source": "history", "reason": "r", "outcome": "kept", "fidelity": "L0"} for i in range(30)]
    second = [dict(r) for r in first]
    second[5].update(reason="x", fidelity="L1")
    second[10].update(reason="x", fidelity="L2")
    second[20].update(fidelity="L3")
    enc = ChainEncoder()
    metas = []
    for n, rows in enumerate((first, second)):
        metas.append(json.loads(json.dumps(enc.pack({"step": 0, "decision": {"strategy": "x", "decisions": None}},
                                                    rows))))
        enc.written(f"e_{n + 1:06d}")
    cols = metas[1]["chain"]["rows"]["columns"]
    cols["reason"] = [["s", [5, 4], [["r", 2, "x"]]], 19]
    cols["fidelity"] = [["m", "reason", [["v", "L1", "L2"]], [["s", [18], [["v", "L3"]]], 9]]]
    want = [{k: r[k] for k in ("index", "source", "outcome", "fidelity")} for r in second]
    resolver = ChainResolver({f"e_{i + 1:06d}": m for i, m in enumerate(metas)}.get, only=FRAME_KEYS)
    got = resolver.resolve("e_000002", metas[1])["decision"]["decisions"]
    assert [{k: r[k] for k in want[0]} for r in got] == want
    assert ChainResolver({f"e_{i + 1:06d}": m for i, m in enumerate(metas)}.get).resolve(
        "e_000002", metas[1])["decision"]["decisions"] == second
    path = _trace(tmp_path, metas)
    frames = FramePass(TraceReader(tmp_path, shared=False), path.stem, "main")
    ids = [r.event_id for r in frames.records()]
    changes = frames.changes(ids[0], ids[1])
    assert changes is not None
    assert {p: changes.after[p]["fidelity"] for p in changes.positions if changes.after[p] != changes.before[p]} == \
        {5: "L1", 10: "L2", 20: "L3"}
