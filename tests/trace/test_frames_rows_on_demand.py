"""Long runs (issue 26): frames without their rows (read on demand), scores recorded only where they
decided an outcome, and the long-run report (a page that grows with the turns, not turns x history)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from long_run_helpers import OldEncoder, answer, lookup

from arcana_jupyter.context.decisions import SCORE_RUNNERS_UP, recorded_scores
from arcana_jupyter.jupyter.replay_frames import build_frames, frame_rows, outcome_counts, with_rows
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime import session as session_module
from arcana_jupyter.trace.reader import TraceReader


async def record(folder: Path, turns: int, *, text: str = "what changed in region {r} since last week?") -> str:
    config = RuntimeConfig(trace_dir=folder, total_window=3000, response_reserve=300)
    runtime = Runtime(config=config, tools=[lookup], provider=FunctionProvider(answer))
    async with runtime.chat() as chat:
        for i in range(1, turns + 1):
            if i % 9 == 2:
                chat.pin(f"fact {i}: the target of region {i % 5} is {i * 3}", label=f"f{i}", until_turn=i + 5)
            await chat.send(f"turn {i}: please lookup region {i % 5}" if i % 7 == 0
                            else f"turn {i}: " + text.format(r=i % 5))
        return chat.run_id


def _same_frames(full: list[dict[str, Any]], light: list[dict[str, Any]], reader: TraceReader) -> None:
    """Frames without rows say everything the full frames say, and give the same rows on demand."""
    assert [f["turn"] for f in light] == [f["turn"] for f in full]
    for a, b in zip(full, light, strict=True):
        rows = a["step"]["decision"]["decisions"]
        assert b["rows_omitted"] is True and b["step"]["decision"]["decisions"] is None
        assert frame_rows(b, reader) == rows and with_rows(b, reader)["step"] == a["step"]
        assert b["outcome_counts"] == a["outcome_counts"] == outcome_counts(rows)
        for key in ("diff", "new_messages", "pins", "status", "input", "reply", "usage", "errors", "primitives",
                    "digest_verified", "digest_note", "prompt_source", "decision_event_id"):
            assert a[key] == b[key], (a["turn"], key)
        assert {k: v for k, v in a["step"].items() if k != "decision"} == \
            {k: v for k, v in b["step"].items() if k != "decision"}


@pytest.mark.parametrize("encoding", ["chained", "old"])
async def test_frames_without_rows_equal_the_full_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         encoding: str) -> None:
    if encoding == "old":  # an old-format trace, every score recorded (as before this change)
        monkeypatch.setattr(session_module, "ChainEncoder", OldEncoder)
        monkeypatch.setattr(session_module, "recorded_scores", list)
    run_id = await record(tmp_path, 40)
    if encoding == "old":
        metas = [json.loads(line)["metadata"] for line in (tmp_path / f"{run_id}.jsonl").read_text().splitlines()
                 if '"context_decision"' in line]
        assert not any("chain" in m for m in metas)
    full = build_frames(tmp_path, run_id, reader=TraceReader(tmp_path, shared=False))
    reader = TraceReader(tmp_path, shared=False)
    light = build_frames(tmp_path, run_id, reader=reader, rows=False)
    assert all(f["digest_verified"] is True for f in full + light)
    assert any(f["diff"] or f["new_messages"] for f in full)
    _same_frames(full, light, reader)
    # a predicate keeps the rows of the frames it accepts, the others read them on demand
    some = build_frames(tmp_path, run_id, reader=TraceReader(tmp_path, shared=False), verify=[3, 40],
                        rows=lambda f: bool(f["pins"]))
    assert [f["turn"] for f in some if not f.get("rows_omitted")] == [f["turn"] for f in full if f["pins"]]
    assert [f["turn"] for f in some if f["digest_verified"] is not None] == [3, 40]
    assert all(f["digest_verified"] is True for f in some if f["turn"] in (3, 40))


def test_scores_are_recorded_where_they_decided_an_outcome() -> None:
    rows: list[dict[str, Any]] = [
        {"index": i, "outcome": "dropped", "reason": "block_dropped", "relevance_score": round(0.001 * i, 4),
         "recalled": False} for i in range(100)]
    rows[10] = {**rows[10], "outcome": "kept", "reason": "relevant_bm25", "recalled": True}
    rows[20] = {**rows[20], "outcome": "kept", "reason": "tail_preserve_middle_kept"}
    rows.append({"index": 100, "outcome": "kept", "reason": "current_input", "relevance_score": None})
    out = recorded_scores(rows)
    assert [r["outcome"] for r in out] == [r["outcome"] for r in rows]
    assert all({k: v for k, v in a.items() if k != "relevance_score"} == {k: v for k, v in b.items()
               if k != "relevance_score"} for a, b in zip(rows, out, strict=True))
    scored = [r["index"] for r in out if r["relevance_score"] is not None]
    # the two rows relevance decided, and the best-scored others: the candidates nearest the cut-off
    assert scored == sorted([10, 20, *range(100 - SCORE_RUNNERS_UP, 100)])
    assert out[10]["relevance_score"] == 0.01 and out[99]["relevance_score"] == 0.099
    assert out[0] is rows[0] or out[0]["relevance_score"] is None
    assert recorded_scores(rows[:5]) == rows[:5]  # few enough: every score kept


async def test_a_recorded_decision_holds_scores_only_where_they_mattered(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = await record(tmp_path / "now", 60)
    reader = TraceReader(tmp_path / "now", shared=False)
    for record_ in reader.decision_records(run_id):
        rows = record_.metadata["decision"]["decisions"]
        scored = [r for r in rows if r.get("relevance_score") is not None]
        decided = [r for r in scored if r.get("recalled") or str(r.get("reason")).startswith("relevant")
                   or r.get("reason") == "tail_preserve_middle_kept"]
        assert len(scored) - len(decided) <= SCORE_RUNNERS_UP
    monkeypatch.setattr(session_module, "recorded_scores", list)  # as before: every score recorded
    before = await record(tmp_path / "before", 60)
    old = TraceReader(tmp_path / "before", shared=False)
    pairs = list(zip(old.decision_records(before), reader.decision_records(run_id), strict=True))
    for a, b in pairs:  # the same decisions, less recorded
        strip = [{k: v for k, v in r.items() if k != "relevance_score"} for r in a.metadata["decision"]["decisions"]]
        assert strip == [{k: v for k, v in r.items() if k != "relevance_score"}
                         for r in b.metadata["decision"]["decisions"]]
        assert a.metadata["request_digest"] == b.metadata["request_digest"]
    size_now = (tmp_path / "now" / f"{run_id}.jsonl").stat().st_size
    size_before = (tmp_path / "before" / f"{before}.jsonl").stat().st_size
    assert size_now < size_before, (size_now, size_before)


def test_a_row_without_a_score_renders() -> None:
    from arcana_jupyter.render.templating import render_macro
    from arcana_jupyter.render.turn import decision_table_view

    row = {"index": 3, "role": "user", "outcome": "dropped", "fidelity": None, "relevance_score": None,
           "token_count_before": 10, "token_count_after": 0, "reason": "block_dropped", "source": "history"}
    step = {"decision": {"strategy": "auto", "requested_strategy": "auto", "utilization_before": 1.5,
                         "decisions": [row, {**row, "index": 4, "relevance_score": 0.4321}]},
            "messages": []}
    html = render_macro("turn.html.j2", "decision_table", decision_table_view(step))
    assert "0.43" in html and "None" not in html and "nan" not in html


async def test_the_report_of_a_long_run_is_compact_escaped_and_says_what_it_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nbformat

    from arcana_jupyter.cli.report_cmd import StderrProgress
    from arcana_jupyter.report import build as build_module
    from arcana_jupyter.report.build import write_report
    from arcana_jupyter.report.execute import read_notebook

    traces = tmp_path / "long.arcana"
    run_id = await record(traces, 30, text="<script>alert('r{r}')</script> what changed?")
    nb_path = tmp_path / "long.ipynb"
    meta = {"arcana": {"run_id": run_id, "agent": "main", "turn": 1, "trace_path": f"long.arcana/{run_id}.jsonl"}}
    cell = nbformat.v4.new_code_cell("%%arcana\nturn 1")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "turn 1"}, metadata=meta)]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), nb_path)
    short = write_report(nb_path, read_notebook(nb_path), output=tmp_path / "short.html").read_text()
    monkeypatch.setattr(build_module, "LONG_RUN_TURNS", 10)
    monkeypatch.setattr(build_module, "DETAIL_MAX", 9)
    monkeypatch.setattr(StderrProgress, "MIN_TURNS", 10)
    monkeypatch.setattr(build_module, "READING_NOTE_BYTES", 1000)
    err = io.StringIO()
    progress = StderrProgress(err)
    page = write_report(nb_path, read_notebook(nb_path), output=tmp_path / "long.html", progress=progress)
    progress.close()
    html = page.read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert "30 turns: 9 in full below" in html and "Every turn" in html
    assert html.count('type="radio"') == 9  # the scrubber: the turns shown in full
    assert html.count('<td class="num">30</td>') >= 1  # the table: every turn, down to the last
    assert "tool call" in html and "pins changed" in html
    assert "digest not checked" in html
    assert len(html) < len(short)
    # "Prompts as sent": the full prompt of the turns shown in full only, one line per other stretch
    scrubber = [int(t) for t in re.findall(r'<label for="arcana-rp-[^"]*" title="turn (\d+)">', html)]
    prompts = html[html.index("Prompts as sent"):]
    sent = [int(t) for t in re.findall(r'<details class="arcana-sent-turn"><summary>turn (\d+)', prompts)]
    assert sorted(set(sent)) == sorted(scrubber) and len(scrubber) == 9
    assert prompts.count("✓ verified (digest") == len(sent)
    gaps = re.findall(r'arcana-sent-omitted">turns? (\d+)(?:–(\d+))?', prompts)
    omitted = {t for a, b in gaps for t in range(int(a), int(b or a) + 1)}
    assert omitted == set(range(1, 31)) - set(scrubber)
    assert "prompts not shown here" in prompts
    everything = short[short.index("Prompts as sent"):]
    assert everything.count('<details class="arcana-sent-turn">') > 30 and len(prompts) < len(everything)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith(f"report: reading the trace of {run_id} (main, ") and lines[0].endswith(" MB)")
    assert lines[1] == f"report: replay {run_id} (main): turn 0 of 30" and lines[-1] == "report: writing the page"
    assert f"report: replay {run_id} (main): turn 30 of 30" in lines


def _reference_diff(prev: list[dict[str, Any]], cur: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    """turn_diff by its definition: every row matched by its key, no shortcut."""
    from arcana_jupyter.jupyter.replay_frames import _key
    from arcana_jupyter.jupyter.whatif import row_state as _state

    before = {_key(p): p for p in prev}
    changed, new = [], []
    for d in cur:
        p = before.pop(_key(d), None)
        if p is None:
            new.append({"index": d.get("index"), "role": d.get("role"), "source": d.get("source") or "history",
                        "outcome": d.get("outcome")})
        elif (p.get("outcome"), p.get("fidelity")) != (d.get("outcome"), d.get("fidelity")):
            changed.append({"index": d.get("index"), "role": d.get("role"), "source": d.get("source") or "history",
                            "change": "changed",
                            "before": _state(p.get("outcome"), p.get("fidelity"), p.get("token_count_after")),
                            "after": _state(d.get("outcome"), d.get("fidelity"), d.get("token_count_after"))})
    for p in before.values():
        changed.append({"index": p.get("index"), "role": p.get("role"), "source": p.get("source") or "history",
                        "change": "gone", "before": _state(p.get("outcome"), p.get("fidelity"),
                                                           p.get("token_count_after")), "after": None})
    return changed, new


_row_st = st.fixed_dictionaries({
    "role": st.just("user"), "outcome": st.sampled_from(["kept", "dropped"]),
    "fidelity": st.sampled_from([None, "L0", "L3"]), "token_count_after": st.integers(0, 3),
    "source": st.sampled_from([None, "history", "pin", "section"]), "section": st.sampled_from([None, "a", "b"]),
})


@settings(max_examples=300)
@given(st.lists(_row_st, max_size=10), st.lists(_row_st, max_size=10), st.lists(st.booleans(), max_size=10),
       st.permutations(list(range(10))))
def test_the_turn_diff_shortcuts_give_the_diff_by_keys(prev: list[dict[str, Any]], cur: list[dict[str, Any]],
                                                       share: list[bool], order: list[int]) -> None:
    from arcana_jupyter.jupyter.replay_frames import _key, turn_diff

    prev = [{**r, "index": i} for i, r in enumerate(prev)]
    cur = [{**r, "index": order[i]} for i, r in enumerate(cur)]
    cur = [prev[i] if i < len(prev) and i < len(share) and share[i] else r for i, r in enumerate(cur)]
    if len({_key(r) for r in prev}) < len(prev) or len({_key(r) for r in cur}) < len(cur):
        return  # keys are unique within a decision
    got = turn_diff(prev, cur)
    want = _reference_diff(prev, cur)
    assert sorted(map(repr, got[0])) == sorted(map(repr, want[0])) and got[1] == want[1]


@pytest.mark.parametrize("encoding", ["chained", "chained, a keyframe every 4", "old"])
async def test_the_frames_fast_path_decodes_the_frame_columns_as_the_full_decode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str) -> None:
    """The frames' fast path (``decision_records(only=FRAME_KEYS)``, what ``build_frames`` uses without
    every row) gives every decision's rows in the frame columns as the full decode has them — tool steps,
    pins and keyframes included — and the frames equal those built from the full rows."""
    from arcana_jupyter.trace.decision_delta import FRAME_KEYS, ChainEncoder

    if encoding == "old":
        monkeypatch.setattr(session_module, "ChainEncoder", OldEncoder)
    elif "keyframe" in encoding:
        monkeypatch.setattr(session_module, "ChainEncoder", lambda: ChainEncoder(max_chain=4))
    run_id = await record(tmp_path, 36)
    reader = TraceReader(tmp_path, shared=False)
    full = list(reader.decision_records(run_id))
    fast = list(TraceReader(tmp_path, shared=False).decision_records(run_id, last_step_rows=True, only=FRAME_KEYS))
    assert [r.event_id for r in fast] == [r.event_id for r in full]
    assert any(r.step > 0 for r in full)  # tool steps
    metas = [json.loads(line)["metadata"] for line in (tmp_path / f"{run_id}.jsonl").read_text().splitlines()
             if '"context_decision"' in line]
    keyframes = sum(1 for m in metas if isinstance(m.get("chain"), dict) and m["chain"]["prev"] is None)
    assert keyframes == 0 if encoding == "old" else keyframes >= (len(metas) // 5 if "every" in encoding else 1)
    shared = 0
    previous: list[dict[str, Any]] | None = None
    for a, b in zip(full, fast, strict=True):
        rows = a.metadata["decision"]["decisions"]
        assert b.partial is (encoding != "old")
        got = b.metadata["decision"]["decisions"]
        want = [{k: r[k] for k in FRAME_KEYS if k in r} for r in rows] if b.partial else rows
        assert got == want, (a.turn, a.step)
        assert {k: v for k, v in a.metadata.items() if k != "decision"} == \
            {k: v for k, v in b.metadata.items() if k != "decision"}
        shared += b.partial and previous is not None and sum(x is y for x, y in zip(previous, got, strict=False))
        previous = got
    if encoding != "old":
        assert shared > 0  # rows whose frame columns were copied are the previous decision's objects
    light = build_frames(tmp_path, run_id, reader=reader, rows=False, verify=False)
    whole = build_frames(tmp_path, run_id, reader=TraceReader(tmp_path, shared=False), verify=False)
    _same_frames(whole, light, reader)
    kept = build_frames(tmp_path, run_id, reader=TraceReader(tmp_path, shared=False), verify=False,
                        rows=lambda f: f["turn"] % 5 == 0 or int(f["step"].get("step") or 0) > 0)
    for a, b in zip(whole, kept, strict=True):
        if b.get("rows_omitted"):
            assert b["step"]["decision"]["decisions"] is None
        else:
            assert b["step"] == a["step"] and (b["turn"] % 5 == 0 or int(b["step"].get("step") or 0) > 0)


async def test_the_prompts_of_some_turns_equal_those_of_every_turn(tmp_path: Path) -> None:
    """``prompts_sent(turns=...)`` (a long run's report): the decisions read without any column of their
    rows, only up to the last wanted call, and only the wanted prompts resolved: the same prompts,
    digests and verdicts as the full pass gives for those turns."""
    run_id = await record(tmp_path, 30)
    everything = [p.model_dump() for p in TraceReader(tmp_path, shared=False).prompts_sent(run_id)]
    assert len(everything) > 30 and all(p["verified"] for p in everything)
    for wanted in ({1}, {3, 7, 14, 28}, {30}, set(range(1, 31))):
        some = [p.model_dump() for p in TraceReader(tmp_path, shared=False).prompts_sent(run_id, turns=wanted)]
        assert some == [p for p in everything if p["turn"] in wanted]
    assert list(TraceReader(tmp_path, shared=False).prompts_sent(run_id, turns={999})) == []


async def test_trace_bytes_accounts_for_every_line_of_its_windows(tmp_path: Path) -> None:
    """``benchmarks.trace_bytes``: the bytes per event type of a window are the bytes of its lines."""
    from benchmarks.trace_bytes import measure, table

    run_id = await record(tmp_path, 12)
    path = tmp_path / f"{run_id}.jsonl"
    windows = [(1, 6), (7, 12), (5, 12)]  # overlapping windows: a line counts in each one holding its turn
    events, fields, cols = measure(path, windows)
    lines = path.read_bytes().splitlines(keepends=True)
    for a, b in windows:
        want = sum(len(line) for line in lines if a <= (json.loads(line).get("turn") or 0) <= b)
        by_type = {k: v for k, v in events[(a, b)].items() if k != "(all events)"}
        assert sum(by_type.values()) == events[(a, b)]["(all events)"] == want
    assert cols[(7, 12)]["outcome"] > 0 and fields[(7, 12)]["prompt_sent.messages"] > 0
    assert "| context_decision |" in table("event type", events, [(1, 6), (7, 12)])
