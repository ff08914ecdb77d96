"""The viewer resolves decision deltas exactly as the Python does.

Traces written with the runtime's own encoder (``DeltaEncoder``, and a real ``Runtime`` session) are
parsed by the compiled ``labextension/src/trace.ts`` under node; every context decision it returns
must equal ``resolve_decision``'s, and a delta the Python cannot resolve must be a problem of that
event in the viewer (and only those).
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import Script, say

from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace import decision_delta
from arcana_jupyter.trace.decision_delta import DeltaEncoder, resolve_decision
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
  out[ev.event_id] = { decisions: d ? d.decisions : null, problem: t.decisionProblems.get(ev) ?? null };
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


def python_read(text: str) -> dict[str, list[dict[str, Any]] | None]:
    """Every context decision resolved by resolve_decision (None where it raises, as TraceReader does)."""
    events = []
    for line in text.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    decisions = [e for e in events if e.get("event_type") == "context_decision"]
    by_id: dict[str, dict[str, Any]] = {}
    for e in decisions:
        by_id.setdefault(e["event_id"], e["metadata"]["decision"])
    out: dict[str, list[dict[str, Any]] | None] = {}
    for e in decisions:
        try:
            out[e["event_id"]] = resolve_decision(e["metadata"]["decision"], by_id.get)["decisions"]
        except (ValueError, KeyError, TypeError, StopIteration):
            out[e["event_id"]] = None
    return out


def check_same(compiled: Path, tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "trace.jsonl"
    path.write_text(text, encoding="utf-8")
    got = viewer_read(compiled, path)
    want = python_read(text)
    assert set(got["decisions"]) == set(want)
    for eid, rows in want.items():
        ts = got["decisions"][eid]
        assert ts["decisions"] == rows, eid
        assert (ts["problem"] is not None) == (rows is None), (eid, ts["problem"])
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
            live[r.turn] = r.decision.model_dump(mode="json")["decisions"]
        path = chat.trace_path
    text = Path(path).read_text(encoding="utf-8")
    assert text.count('"decisions_delta":{"base"') > turns / 2
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
            base_cols = decision_delta.columns(base)
            delta = {"count": len(new), "columns": {
                k: dict(zip(("same", "values"), decision_delta._spans(col, base_cols.get(k, [])), strict=True))
                for k, col in decision_delta.columns(new).items()}}
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
