"""What the viewer is sent (trace/views.py) is what the trace reader reads: every encoding (full decisions,
keyframes and deltas, chained decisions with sparse ops, prompt_sent records with references, edits and
joins), the texts each row is about, the pins of a build, two turns compared; and a trace the reader
cannot read is a problem in the answer, never an exception (the viewer no longer decodes: these replace
the TypeScript decoder's parity tests)."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from scripted_chat import Script, call, say

from arcana_jupyter.context.decisions import recorded_scores
from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.schema.frontend import TraceRequest
from arcana_jupyter.trace.decision_delta import resolve_decision
from arcana_jupyter.trace.reader import TraceReader
from arcana_jupyter.trace.views import TraceViews, answer
from benchmarks import bench_frames
from tests.browser.fixtures.generate import ANALYSIS_DELTA_AFTER, RUN_ID, make_trace


def _write(tmp_path: Path, text: str, name: str = RUN_ID) -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def _full_decisions(text: str) -> dict[int, list[dict[str, Any]]]:
    """The first build's rows of every turn, as the trace holds them (no deltas in it)."""
    out = {}
    for line in text.splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e["event_type"] == "context_decision" and e["metadata"]["step"] == 0:
            out[e["turn"]] = resolve_decision(e["metadata"]["decision"], lambda _: None)["decisions"]
    return out


def test_keyframes_and_deltas_are_sent_as_the_decisions_made(tmp_path: Path) -> None:
    text = make_trace(delta_after=ANALYSIS_DELTA_AFTER)
    assert '"decisions_delta": {"base"' in text, "the example run has deltas"
    views = TraceViews(_write(tmp_path, text))
    want = _full_decisions(make_trace())
    run = views.run()
    assert run.turns == {"main": list(range(1, 13))} and [p.kind for p in run.problems] == ["line"]
    for turn, rows in want.items():
        step = views.turn("main", turn).steps[0]
        assert step.problem is None and step.decision is not None
        assert [d.model_dump(mode="json") for d in step.decision.decisions] == rows, turn
        # the texts the rows are about, row for row: the transcript's messages, the pins' contents
        for d, original in zip(step.decision.decisions, step.originals, strict=True):
            assert original is not None, (turn, d.index)
            if d.source == "pin":
                assert original.content is not None and original.content.startswith("Load-bearing fact")
    # pins at a build: recorded with its inputs (turn 7: p2 unpinned at 6, p3 live until 9)
    assert [p.pin_id for p in views.turn("main", 7).steps[0].pins] == ["p_00000003"]
    assert views.turn("main", 10).steps[0].pins == []


def test_a_runtime_run_is_sent_as_it_was_decided_and_sent(tmp_path: Path) -> None:
    """A classic run (chained decisions) and an engine-mode run with a tool loop (shaped prompts, sections,
    prompt_sent references and edits): each turn's rows are the live decision's, each call's prompt is the
    reader's and verifies."""
    turns = 30
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "classic", context_engine=False, total_window=2000,
                                           response_reserve=200),
                      provider=FunctionProvider(Script(*[say(f"answer {i} " * 20) for i in range(turns)])))
    live: dict[int, Any] = {}
    with runtime.chat() as chat:
        for i in range(turns):
            r = chat.send_sync(f"question {i} " * 10)
            live[r.turn] = recorded_scores(r.decision.model_dump(mode="json")["decisions"])
        path = Path(str(chat.trace_path))
    assert path.read_text().count('"chain":{"v":2,"prev":"e_') > turns / 2
    views = TraceViews(path)
    for turn, rows in live.items():
        step = views.turn("main", turn).steps[0]
        assert step.decision is not None and [d.model_dump(mode="json") for d in step.decision.decisions] == rows
        assert step.sent is not None and step.sent.verified and step.sent.source == "prompt_sent"

    def lookup(city: str) -> str:
        """Weather of a city."""
        return f"sunny in {city}"

    script = Script(*[r for i in range(12) for r in ((call("lookup", {"city": f"c{i}"}), say(f"it is sunny {i}"))
                                                     if i % 3 == 0 else (say(f"reply {i} " * 15),))])
    engine = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "engine", total_window=1500, response_reserve=200),
                     provider=FunctionProvider(script), tools=[lookup])
    with engine.chat() as chat:
        for i in range(12):
            chat.send_sync(f"turn {i}: what changed in region {i % 5}?")
        path = Path(str(chat.trace_path))
    reader = TraceReader(path)
    views = TraceViews(path, reader=reader)
    calls = 0
    for turn in reader.list_turns(path.stem, "main"):
        view = views.turn("main", turn)
        for step in view.steps:
            want = reader.prompt_sent(path.stem, turn, step.step, "main")
            if want is None:
                continue
            calls += 1
            assert step.sent is not None and step.sent.messages == want.messages and step.sent.tokens == want.tokens
            assert step.sent.verified and step.sent.status == want.status()
    assert calls >= 16  # every turn's calls, the tool loop's second call included
    # the turn's latency and the model's share of it (its calls' latency summed), as the inspector says
    first = views.turn("main", 1)
    calls_ms = [e.metadata["latency_ms"] for e in reader.events(path.stem, event_types=["llm_call"], turn=1)]
    assert len(calls_ms) == 2 and first.model_latency_ms == round(sum(calls_ms), 3)
    assert first.latency_ms is not None and first.latency_ms >= first.model_latency_ms
    diff = views.diff("main", 1, 12)
    assert diff.problem is None and diff.rows and {c for r in diff.rows for c in r.changes} >= {"added"}


def test_what_the_reader_cannot_read_is_a_problem_of_that_turn(tmp_path: Path) -> None:
    """Corrupted chained decisions: each turn is answered; a decision the reader refuses is that step's
    problem (with the reader's message), every other one its rows."""
    run = asyncio.run(bench_frames.record(40, tmp_path / "rec"))
    events = [json.loads(line) for line in Path(run["path"]).read_text().splitlines()]
    rng = random.Random(20261203)
    for e in events:
        if e["event_type"] != "context_decision" or "chain" not in e["metadata"] or rng.random() > 0.2:
            continue
        rows = e["metadata"]["chain"]["rows"]
        kind = rng.randrange(5)
        if kind == 0:
            rows["count"] += 1
        elif kind == 1:
            e["metadata"]["chain"]["prev"] = "e_missing"
        elif kind == 2:
            rows["columns"].pop(next(iter(rows["columns"])))
        elif kind == 3:
            rows["columns"][next(iter(rows["columns"]))].append(["zz"])
        else:
            rows["count"] = str(rows["count"])
    path = _write(tmp_path, "".join(json.dumps(e) + "\n" for e in events), run["run_id"])
    reader = TraceReader(path, shared=False)
    views = TraceViews(path)
    problems = 0
    for e in events:
        if e["event_type"] != "context_decision":
            continue
        try:
            reader.decision_of(path.stem, e["event_id"])
            readable = True
        except TraceError:
            readable = False
        reply = answer(views, TraceRequest(what="turn", turn=e["turn"]))
        assert reply.ok and reply.turn_view is not None
        [step] = [s for s in reply.turn_view.steps if s.step == e["metadata"]["step"]]
        assert (step.problem is None) == readable, (e["turn"], step.problem)
        problems += not readable
    assert problems > 3
    diff = answer(views, TraceRequest(what="diff", a=1, b=40))
    assert diff.ok and diff.diff is not None


def test_the_questions_the_cli_refuses_are_refused_alike(tmp_path: Path) -> None:
    views = TraceViews(_write(tmp_path, make_trace()), shown="analysis.arcana/r.jsonl")
    missing = answer(views, TraceRequest(what="turn", turn=99, request_id="q1"))
    assert not missing.ok and "no turn 99" in (missing.message or "") and missing.request_id == "q1"
    assert not answer(views, TraceRequest(what="turn")).ok  # no turn named
    assert not answer(views, TraceRequest(what="diff", a=1)).ok
    other_agent = answer(views, TraceRequest(what="turn", turn=1, agent="nobody"))
    assert not other_agent.ok and "agent nobody" in (other_agent.message or "")
    gone = TraceViews(tmp_path / "gone.jsonl", shown="gone.jsonl")
    assert not answer(gone, TraceRequest(what="run")).ok


def test_the_read_ahead_and_the_first_turn_are_the_views_asked_one_by_one(tmp_path: Path) -> None:
    """``turns`` (several turns and pairs in one answer) and ``run`` with ``turn`` send what ``turn`` and
    ``diff`` send; the decisions a view keeps (a turn, then the diffs beside it) answer as a fresh read does."""
    path = _write(tmp_path, make_trace(delta_after=ANALYSIS_DELTA_AFTER))
    fresh = {t: TraceViews(path).turn("main", t) for t in range(1, 13)}
    diffs = {(a, b): TraceViews(path).diff("main", a, b) for a, b in ((1, 2), (2, 3), (3, 11), (11, 12))}
    views = TraceViews(path)
    first = answer(views, TraceRequest(what="run", turn=-1))
    assert first.ok and first.run is not None and first.turn_view == fresh[12]
    assert answer(views, TraceRequest(what="run", turn=5, agent="main")).turn_view == fresh[5]
    assert answer(views, TraceRequest(what="run", turn=99)).turn_view is None  # asked on its own, it says why
    for t in range(1, 13):  # each turn, then the diff beside it: the second reads the decisions kept
        assert views.turn("main", t) == fresh[t]
        if (t - 1, t) in diffs:
            assert views.diff("main", t - 1, t) == diffs[t - 1, t]
    assert len(views._decided) <= 8
    batch = answer(TraceViews(path), TraceRequest(what="turns", turns=[3, 99, 11, 3], pairs=[
        {"a": 3, "b": 11}, {"a": 0, "b": 1}, {"a": 11, "b": 12}]))
    assert batch.ok and batch.version == first.version
    assert batch.turn_views == [fresh[3], fresh[11]] and batch.diffs == [diffs[3, 11], diffs[11, 12]]
