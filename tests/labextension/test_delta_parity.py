"""The viewer resolves compact decisions exactly as the Python does.

Traces written with the encoders (``DeltaEncoder``: keyframes and deltas, the old encoding;
``ChainEncoder``: chained decisions, encoding 2, what a real ``Runtime`` session writes now) are
parsed by the compiled ``labextension/src/trace.ts`` under node; every context decision it returns
must equal the Python's (``resolve_decision``, ``ChainResolver``), its metadata too for chained ones
(what ``chain.same`` stands for put back), and a decision the Python cannot resolve must be a problem
of that event in the viewer (and only those).
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import Script, say

from arcana_jupyter.context.decisions import recorded_scores
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace import keyframes
from arcana_jupyter.trace.decision_delta import ChainEncoder, ChainResolver, DeltaEncoder, is_chained, resolve_decision
from tests.browser.fixtures.generate import ANALYSIS_DELTA_AFTER, make_trace

from .conftest import EXT, jlpm

NODE_SCRIPT = r"""
const fs = require('fs');
const trace = require(process.argv[1]);
const t = trace.parseTrace(fs.readFileSync(process.argv[2], 'utf8'));
const out = {};
for (const ev of t.events) {
  if (ev.event_type !== 'context_decision') continue;
  const d = trace.decisionOfEvent(t, ev);
  const meta = Object.assign({}, ev.metadata);
  if (meta.decision && typeof meta.decision === 'object') {
    meta.decision = Object.assign({}, meta.decision);
    delete meta.decision.decisions;
  }
  out[ev.event_id] = { decisions: d ? d.decisions : null, problem: t.decisionProblems.get(ev) ?? null, meta };
}
process.stdout.write(JSON.stringify({ decisions: out, problems: t.problems }));
"""


@pytest.fixture(scope="module")
def compiled_trace(node_packages: Path) -> Path:
    proc = jlpm("build:test", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = EXT / "lib" / "unit" / "src" / "trace.js"
    assert path.is_file()
    return path


def viewer_read(compiled: Path, trace_path: Path) -> dict[str, Any]:
    proc = subprocess.run(["node", "-e", NODE_SCRIPT, str(compiled), str(trace_path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def python_read(text: str, metadata: dict[str, Any] | None = None) -> dict[str, list[dict[str, Any]] | None]:
    """Every context decision resolved by resolve_decision or, chained, by a ChainResolver (None where
    it raises, as TraceReader does); ``metadata`` gets the chained decisions' resolved metadata."""
    events = []
    for line in text.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    decisions = [e for e in events if e.get("event_type") == "context_decision"]
    by_id: dict[str, dict[str, Any]] = {}
    metas: dict[str, dict[str, Any]] = {}
    for e in decisions:
        by_id.setdefault(e["event_id"], e["metadata"].get("decision"))
        metas.setdefault(e["event_id"], e["metadata"])
    chain = ChainResolver(metas.get)
    out: dict[str, list[dict[str, Any]] | None] = {}
    for e in decisions:
        try:
            if is_chained(e["metadata"]):
                full = chain.resolve(e["event_id"], e["metadata"])
                out[e["event_id"]] = full["decision"]["decisions"]
                if metadata is not None:
                    metadata[e["event_id"]] = {**full, "decision": {k: v for k, v in full["decision"].items()
                                                                    if k != "decisions"}}
            else:
                out[e["event_id"]] = resolve_decision(e["metadata"]["decision"], by_id.get)["decisions"]
        except (ValueError, KeyError, TypeError, StopIteration):
            out[e["event_id"]] = None
    return out


def check_same(compiled: Path, tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "trace.jsonl"
    path.write_text(text, encoding="utf-8")
    got = viewer_read(compiled, path)
    metas: dict[str, Any] = {}
    want = python_read(text, metas)
    assert set(got["decisions"]) == set(want)
    for eid, rows in want.items():
        ts = got["decisions"][eid]
        assert ts["decisions"] == rows, eid
        assert (ts["problem"] is not None) == (rows is None), (eid, ts["problem"])
        if eid in metas:
            assert ts["meta"] == metas[eid], eid
    return got


def test_the_browser_fixture_trace_resolves_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    text = make_trace(delta_after=ANALYSIS_DELTA_AFTER)
    assert '"decisions_delta": {"base"' in text, "the example run has deltas"
    got = check_same(compiled_trace, tmp_path, text)
    # ... and they are the full decisions the run made.
    full = python_read(make_trace())
    assert {k: v["decisions"] for k, v in got["decisions"].items()} == full
    assert [p["kind"] for p in got["problems"]] == ["line"]  # the corrupt line only


def test_a_long_run_resolves_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    text = make_trace(turns=150, window=4000, delta_after=0, corrupt_at_turn=None, snapshots_every=0)
    assert text.count('"decisions_delta": {"base"') > 100
    got = check_same(compiled_trace, tmp_path, text)
    assert got["problems"] == []
    assert {k: v["decisions"] for k, v in got["decisions"].items()} == python_read(
        make_trace(turns=150, window=4000, corrupt_at_turn=None, snapshots_every=0))


async def test_a_runtime_trace_resolves_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    turns = 40
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", context_engine=False, total_window=2000,
                                           response_reserve=200),
                      provider=FunctionProvider(Script(*[say(f"answer {i} " * 20) for i in range(turns)])))
    live = {}
    async with runtime.chat() as chat:
        for i in range(turns):
            r = await chat.send(f"question {i} " * 10)
            live[r.turn] = recorded_scores(r.decision.model_dump(mode="json")["decisions"])  # as recorded
        path = chat.trace_path
    text = Path(path).read_text(encoding="utf-8")
    assert text.count('"chain":{"v":2,"prev":"e_') > turns / 2, "most decisions are chained to the previous one"
    got = check_same(compiled_trace, tmp_path, text)
    assert got["problems"] == []
    by_turn = {}
    for line in text.splitlines():
        e = json.loads(line)
        if e["event_type"] == "context_decision" and e["metadata"].get("step", 0) == 0:
            by_turn[e["turn"]] = got["decisions"][e["event_id"]]["decisions"]
    assert by_turn == live


def _rows(rng: random.Random, n: int) -> list[dict[str, Any]]:
    return [{"index": i, "outcome": rng.choice(["kept", "dropped", "compressed"]),
             "relevance_score": rng.choice([None, round(rng.random(), 3)]), "fidelity": rng.choice([None, "L0", "L3"]),
             "token_count_after": rng.randrange(0, 50), "reason": rng.choice(["a", "b"])} for i in range(n)]


def _mutate(rng: random.Random, delta: dict[str, Any], other_ids: list[str]) -> None:
    """A plausible corruption or oddity of a delta: some resolve (unsorted, overlapping, negative ranges), most not."""
    cols = delta["columns"]
    if not cols:
        cols["new_column"] = {"same": [], "values": [0] * delta["count"]}
    key = rng.choice(sorted(cols))
    spec = cols[key]
    kind = rng.randrange(9)
    if kind == 0:
        delta["count"] += rng.choice([-1, 1])
    elif kind == 1 and spec["values"]:
        spec["values"].pop()
    elif kind == 2:
        spec["values"].append("extra")
    elif kind == 3:
        spec["same"].reverse()
    elif kind == 4:
        spec["same"].append([rng.randrange(-3, 4), rng.randrange(-3, 6)])
    elif kind == 5:
        delta["base"] = rng.choice(other_ids)
    elif kind == 6:
        del cols[key]
    elif kind == 7:
        cols["new_column"] = {"same": [], "values": [0] * delta["count"]}
    else:
        delta["count"] = str(delta["count"])


def test_random_deltas_and_corruptions_resolve_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    rng = random.Random(20261130)
    lines = []
    ids: list[str] = []
    seq = 0

    def add(turn: int, decision: dict[str, Any]) -> str:
        nonlocal seq
        seq += 1
        eid = f"e_{seq:06d}"
        lines.append(json.dumps({"v": 1, "event_id": eid, "run_id": "r_x", "agent": "main", "turn": turn, "ts": "",
                                 "event_type": "context_decision", "parent_id": None,
                                 "metadata": {"step": 0, "decision": decision}}))
        ids.append(eid)
        return eid

    made = 0
    for turn in range(1, 400):
        base = _rows(rng, rng.randrange(0, 30))
        new = [dict(r) for r in base[: rng.randrange(0, len(base) + 1)]] + _rows(rng, rng.randrange(0, 6))
        for r in new:
            if rng.random() < 0.3:
                r["relevance_score"] = round(rng.random(), 3)
        enc = DeltaEncoder()
        packed, _ = enc.pack({"strategy": "x", "decisions": base})
        base_id = add(turn, packed)
        enc.keyframe_written(base_id, packed)
        packed, keyframe = enc.pack({"strategy": "x", "decisions": new})
        if keyframe:
            # Not smaller than the keyframe: the encoder would write it in full; force a delta anyway.
            base_cols = keyframes.columns(base)
            delta = {"count": len(new), "columns": {
                k: dict(zip(("same", "values"), keyframes._spans(col, base_cols.get(k, [])), strict=True))
                for k, col in keyframes.columns(new).items()}}
            packed = {"strategy": "x", "decisions": None, "decisions_delta": {"base": base_id, **delta}}
        if rng.random() < 0.5:
            _mutate(rng, packed["decisions_delta"], [*ids[-6:], "e_missing"])
        made += 1
        add(turn, packed)
    got = check_same(compiled_trace, tmp_path, "\n".join(lines) + "\n")
    resolved = sum(1 for v in got["decisions"].values() if v["problem"] is None)
    problems = [p for p in got["problems"] if p["kind"] == "event"]
    # Both outcomes are well represented.
    assert resolved > made and len(problems) > made / 5, (resolved, len(problems))


# -- chained decisions (encoding 2) --------------------------------------------------------------


async def test_an_engine_mode_runtime_trace_resolves_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    """The default path (engine mode, tools, pins): chained rows, ``same`` references, overflow runs and
    shape runs are all read alike, and equal what the session decided."""
    from benchmarks.bench_runtime import answer, lookup

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", total_window=3000), tools=[lookup],
                      provider=FunctionProvider(answer))
    live: dict[tuple[int, int], list[dict[str, Any]]] = {}
    seen: list[Any] = []
    async with runtime.chat() as chat:
        chat.subscribe(seen.append)
        for i in range(1, 61):
            if i % 20 == 5:
                chat.pin(f"fact {i}: region {i % 7} targets {i * 3}", label=f"f{i}")
            await chat.send(f"turn {i}: please lookup the figures for region {i % 7}" if i % 10 == 0
                            else f"turn {i}: what changed in region {i % 7} since last week?")
        path = chat.trace_path
    for ev in seen:
        if ev.event_type == "context_decision":
            live[(ev.turn, ev.metadata["step"])] = ev.metadata["decision"]["decisions"]
    text = Path(path).read_text(encoding="utf-8")
    chained = [json.loads(line)["metadata"]["chain"] for line in text.splitlines()
               if '"event_type":"context_decision"' in line]
    assert any(c.get("same") for c in chained) and any("overflow" in c for c in chained)
    assert any("moved" in c for c in chained) and sum(c["prev"] is None for c in chained) < len(chained) / 2
    ops = {op[0] for c in chained for col in c["rows"]["columns"].values() for kind in ("q", "qd", "qn", "s", "m", "v",
                                                                                        "r", "k")
           for op in _ops_of(col, kind)}
    # scores as q, qd or qn (unaligned changed rows write theirs as q; the random chains below cover qd),
    # scattered changes as sparse ops
    assert {"v", "r", "k", "m", "s"} <= ops and ops & {"q", "qd", "qn"}, ops
    got = check_same(compiled_trace, tmp_path, text)
    assert got["problems"] == []
    by_step = {}
    for line in text.splitlines():
        e = json.loads(line)
        if e["event_type"] == "context_decision":
            by_step[(e["turn"], e["metadata"]["step"])] = got["decisions"][e["event_id"]]["decisions"]
    assert by_step == {k: json.loads(json.dumps(v)) for k, v in live.items()}


def _chain_rows(rng: random.Random, prev: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The next decision's rows: the history grows, a few rows change, scores move, tail rows follow."""
    hist = [dict(r) for r in prev if r["source"] == "history"]
    for _ in range(rng.randrange(0, 4)):
        hist.append({"index": len(hist), "source": "history", "section": None, "outcome": "kept",
                     "relevance_score": round(rng.random(), 4), "token_count_after": rng.randrange(1, 60),
                     "reason": rng.choice(["a", "bb"]), "turn": len(hist) // 2})
    for r in hist:
        if rng.random() < 0.3:
            moved = (r["relevance_score"] or 0.5) + rng.choice([-1, 1]) * 1e-4
            r["relevance_score"] = round(min(1.0, max(0.0, moved)), 4)
        if rng.random() < 0.1:
            r["outcome"] = rng.choice(["kept", "dropped", "compressed"])
            r["token_count_after"] = 0 if r["outcome"] == "dropped" else r["token_count_after"] + 1
        if rng.random() < 0.02:
            r["relevance_score"] = None
    tail = [{"index": len(hist) + k, "source": "section", "section": name, "outcome": "kept", "relevance_score": None,
             "token_count_after": rng.randrange(5, 9), "reason": f"section:{name}", "turn": None}
            for k, name in enumerate(rng.sample(["checkpoint", "claims", "digests"], rng.randrange(0, 4)))]
    return hist + tail


def _mutate_chain(rng: random.Random, meta: dict[str, Any], ids: list[str]) -> None:
    """A corruption or oddity of a chained decision: some still resolve, most do not."""
    chain = meta["chain"]
    rows = chain["rows"]
    cols = rows["columns"]
    key = rng.choice(sorted(cols)) if cols else None
    kind = rng.randrange(21)
    if kind >= 16 and _mutate_new_op(rng, rows, kind):
        return
    if kind == 0:
        rows["count"] += rng.choice([-1, 1])
    elif kind == 1 and key and cols[key]:
        cols[key].pop(rng.randrange(len(cols[key])))
    elif kind == 2 and key:
        cols[key].append(rng.choice([1, ["v", "x"], ["r", 2, None], ["q", [5]], ["qd", [1]], ["d", 1, 2], ["zz"]]))
    elif kind == 3:
        chain["prev"] = rng.choice([*ids[-4:], "e_missing", 7, None])
    elif kind == 4 and key:
        del cols[key]
    elif kind == 5:
        rows["align"] = [[0, rng.randrange(0, 40), rng.randrange(0, 5)]]
    elif kind == 6:
        chain["same"] = rng.choice([["tools"], ["nonsense"], "tools", ["inputs.pins", "builder"], []])
    elif kind == 7:
        chain["overflow"] = rng.choice([{"checkpoint": [[3, 1]]}, {"checkpoint": [[1, 4], [6, 6]]}, [1, 2], None])
    elif kind == 8:
        chain["v"] = rng.choice([1, 3, "2"])
    elif kind == 9 and key:
        for op in cols[key]:
            if isinstance(op, list) and op[0] in ("q", "qd"):
                op[1].append(-3 if rng.random() < 0.5 else 7)
                break
    elif kind == 10:
        rows["keys"] = list(reversed(rows.get("keys", sorted(cols))))
    elif kind == 11 and key:
        cols[key] = [rows["count"]]  # a copy of everything: resolves only where every row is aligned
    elif kind == 12:
        chain["moved"] = rng.choice([[[1, 2, "kept", 0]], [[1, 0, "kept", 0]], "x"])
    elif kind == 13 and key:
        cols[key] = [["r", rows["count"], "same"]]
    elif kind == 14 and key:
        cols[key] = [["a", rows["count"], 0, 1]]
    else:
        rows["count"] = str(rows["count"])


def _ops_of(value: Any, kind: str) -> list[list[Any]]:
    """Every op of ``kind`` in a column's ops, nested ones too (a sparse op's values, a masked column's)."""
    found: list[list[Any]] = []
    if isinstance(value, list):
        if value and value[0] == kind:
            found.append(value)
        for v in value:
            found.extend(_ops_of(v, kind))
    return found


def _mutate_new_op(rng: random.Random, rows: dict[str, Any], kind: int) -> bool:
    """A corruption of the sparse, ``qn`` and masked-with-rest ops, or a keyframe without keys (False: none
    to corrupt here)."""
    if kind == 19:
        if "keys" not in rows:
            return False
        del rows["keys"]
        return True
    ops = _ops_of(rows["columns"], {16: "s", 17: "qn", 18: "m", 20: "s"}[kind])
    if not ops:
        return False
    op = rng.choice(ops)
    if kind == 16:
        op[1].append(rng.choice([-1, 0, 3, 10_000, "x", None]))
    elif kind == 17:
        op[1].append(rng.choice([-100_000, "x", 1.5, None, 3]))
    elif kind == 18:
        if len(op) == 4:
            op[3] = rng.choice([[], [1], op[3][:-1], [*op[3], 1], "x"])
        else:
            op.append(rng.choice([[], [1], [10_000]]))
    else:
        op[2] = rng.choice([[], "x", [["v", 1]], [*op[2], ["v", None]], [1_000]])
    return True


def test_random_chains_and_corruptions_resolve_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    rng = random.Random(20261201)
    lines: list[str] = []
    ids: list[str] = []
    seq = 0
    for chain_no in range(30):
        enc = ChainEncoder(max_chain=rng.choice([3, 8, 512]))
        rows: list[dict[str, Any]] = []
        shape = {"name": "portable", "moved": {str(k): [rng.choice(["kept", "merged"]), (k - 1) // rng.choice([1, 2])]
                                               for k in range(1, rng.randrange(2, 9))}}
        for step in range(rng.randrange(2, 14)):
            rows = _chain_rows(rng, rows)
            meta = {"step": 0, "decision": {"strategy": "x", "decisions": None},
                    "tools": [{"name": "lookup"}] if step % 5 else [], "builder": {"total_window": 8192},
                    "shape": shape if rng.random() < 0.7 else dict(shape, name="other"),
                    "inputs": {"pins": [{"pin_id": "p1", "content": "fact"}] if step > 2 else [],
                               "sections": [], "task": None,
                               "overflow": {"checkpoint": list(range(1, step + 1))} if step else {}}}
            packed = json.loads(json.dumps(enc.pack(meta, rows)))
            seq += 1
            eid = f"e_{seq:06d}"
            enc.written(eid)
            if rng.random() < 0.15:
                _mutate_chain(rng, packed, ids)
            lines.append(json.dumps({"v": 1, "event_id": eid, "run_id": "r_x", "agent": "main",
                                     "turn": chain_no * 20 + step, "ts": "", "event_type": "context_decision",
                                     "parent_id": None, "metadata": packed}))
            ids.append(eid)
    text = "\n".join(lines) + "\n"
    assert '["s", [' in text and '["qn", [' in text, "the sparse ops are there to corrupt"
    got = check_same(compiled_trace, tmp_path, text)
    resolved = sum(1 for v in got["decisions"].values() if v["problem"] is None)
    assert len(ids) / 3 < resolved < len(ids), (resolved, len(ids))


def _sparse_chain() -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """A keyframe and a delta whose scattered changes the encoder writes with the new ops: a sparse op
    (outcome), a masked column with a rest and ``qn`` values (scores that flip and drift)."""
    first = [{"index": i, "source": "history", "outcome": "kept" if i % 7 else "dropped",
              "relevance_score": None if i % 7 == 0 else round(0.3 + i / 1e4, 4), "reason": "r",
              "token_count_after": 5 if i % 7 else 0} for i in range(300)]
    second = [dict(r) for r in first]
    for i in range(3, 280, 23):  # scattered flips: the score comes or goes with the outcome
        flip = second[i]["outcome"] == "kept"
        second[i].update(outcome="dropped" if flip else "kept", relevance_score=None if flip else 0.5,
                         token_count_after=0 if flip else 5)
    for i in (285, 290, 295):  # scores drifting elsewhere
        if second[i]["relevance_score"] is not None:
            second[i]["relevance_score"] = round(second[i]["relevance_score"] + 1e-4, 4)
    enc = ChainEncoder()
    out = []
    for n, rows in enumerate((first, second)):
        meta = {"step": 0, "decision": {"strategy": "x", "decisions": None}, "builder": {"total_window": 8192}}
        packed = json.loads(json.dumps(enc.pack(meta, rows)))
        enc.written(f"e_{n + 1:06d}")
        out.append(packed)
    return out, [first, second]


@pytest.mark.parametrize("column, ops", [
    ("outcome", [["s", [-1], [["v", "kept"]]], 299]),
    ("outcome", [["s", [700], [["v", "kept"]]]]),
    ("outcome", [["s", [2, 3], "x"]]),
    ("outcome", [["s", [2, 3], [["v", "kept"]]], 294]),
    ("outcome", [["s", [2.5], [["v", "kept"]]], 297]),
    ("relevance_score", [["qn", [1, "x"]], 298]),
    ("relevance_score", [["qn", [-100000]], 299]),
    ("reason", [["qn", [1]], 299]),  # where the previous value is no number, a whole number
    ("reason", [["n", "0" * 299 + "2", []]]),
    ("reason", [["n", "0" * 298 + "11", [["v", "x"]]]]),
    ("reason", [["n", "0" * 301, []]]),
    ("reason", [["k", ["a", "b"], "0" * 299 + "2"]]),
    ("reason", [["k", ["a", "b"], "0" * 299 + "\u0663"]]),
    ("reason", [["k", ["a", "b"], "0" * 298 + "1"]]),
    ("reason", [["n", "0" * 299 + "1", [2]]]),
    ("reason", [["m", "outcome", [["r", 13, "q"]], [1]]]),
    ("reason", [["m", "outcome", [["r", 13, "q"]], "x"]]),
    ("reason", [["m", "nope", [["r", 13, "q"]], [287]]]),
    ("reason", [["m", "outcome", [["r", 13, "q"]], [287], 1]]),
])
def test_malformed_new_ops_fail_as_in_the_python(compiled_trace: Path, tmp_path: Path, column: str,
                                                 ops: list[Any]) -> None:
    """A malformed sparse, ``qn`` or masked-with-rest op is a problem of its decision, with the message
    the Python raises (both name the op); the keyframe before it still reads."""
    metas, rows = _sparse_chain()
    assert {"s", "qn"} <= {op[0] for ops_ in metas[1]["chain"]["rows"]["columns"].values()
                           for op in _ops_of(ops_, "s") + _ops_of(ops_, "qn")}
    assert any(len(op) == 4 for ops_ in metas[1]["chain"]["rows"]["columns"].values() for op in _ops_of(ops_, "m"))
    assert "keys" not in metas[1]["chain"]["rows"]
    metas[1]["chain"]["rows"]["columns"][column] = ops
    lines = [json.dumps({"v": 1, "event_id": f"e_{n + 1:06d}", "run_id": "r_x", "agent": "main", "turn": n + 1,
                         "ts": "", "event_type": "context_decision", "parent_id": None, "metadata": m})
             for n, m in enumerate(metas)]
    got = check_same(compiled_trace, tmp_path, "\n".join(lines) + "\n")
    want = python_read("\n".join(lines))
    assert want["e_000001"] == rows[0]
    try:
        ChainResolver({f"e_{n + 1:06d}": m for n, m in enumerate(metas)}.get).resolve("e_000002", metas[1])
        message = None
    except ValueError as exc:
        message = str(exc)
    problem = got["decisions"]["e_000002"]["problem"]
    if column == "reason" and ops[0][0] == "qn":
        assert message is None and problem is None  # "r" is no number: 1 is a whole 0.0001
        assert want["e_000002"] is not None and want["e_000002"][0]["reason"] == 0.0001
        return
    assert message is not None and problem is not None
    # the same message (an op quoted as Python's repr there, as JSON here)
    assert _plain(problem) == _plain(message)
    assert any(word in message for word in (f'"{ops[0][0]}"', "sparse", "masked", "other positions", "'m'",
                                            "resolves to"))


def _plain(message: str) -> str:
    """A message without its quoted op when it says what the op is not (each side shortens it its way)."""
    if " is not " in message:
        head, _, tail = message.rpartition(" is not ")
        message = head.split(": [")[0] + " is not " + tail
    return message.replace(" ", "").replace("'", '"').replace("None", "null").replace("True", "true")


def test_unchanged_sparse_chain_resolves_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    metas, rows = _sparse_chain()
    lines = [json.dumps({"v": 1, "event_id": f"e_{n + 1:06d}", "run_id": "r_x", "agent": "main", "turn": n + 1,
                         "ts": "", "event_type": "context_decision", "parent_id": None, "metadata": m})
             for n, m in enumerate(metas)]
    check_same(compiled_trace, tmp_path, "\n".join(lines) + "\n")
    assert python_read("\n".join(lines)) == {"e_000001": rows[0], "e_000002": rows[1]}
