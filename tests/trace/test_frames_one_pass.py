"""Replay frames in one pass: the same frames as turn-by-turn replay, rebuild and pin questions."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from long_run_helpers import answer, lookup

from arcana_jupyter.context.bands import select_from_turn
from arcana_jupyter.context.rebuild import _Band, rebuild_turn
from arcana_jupyter.jupyter.replay_frames import build_frames, turn_diff
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.decision_delta import DecisionResolver, encode, resolve_decision
from arcana_jupyter.trace.reader import TraceReader


async def record(folder: Path, turns: int, *, engine: bool = True) -> str:
    config = RuntimeConfig(trace_dir=folder, total_window=3000, response_reserve=300, context_engine=engine)
    runtime = Runtime(config=config, tools=[lookup], provider=FunctionProvider(answer))
    async with runtime.chat() as chat:
        for i in range(1, turns + 1):
            if i % 9 == 2:
                chat.pin(f"fact {i}: the target of region {i % 5} is {i * 3}", label=f"f{i}",
                         until_turn=i + 20 if i % 2 else None)
            if i % 9 == 6 and chat.pins.active(i):
                chat.unpin(chat.pins.active(i)[0].pin_id)
            text = (f"turn {i}: please lookup region {i % 5}" if i % 7 == 0
                    else f"turn {i}: what changed in region {i % 5}?")
            await chat.send(text)
        return chat.run_id


def reference_frames(folder: Path, run_id: str) -> list[dict[str, Any]]:
    """What each frame must say, from the turn-by-turn questions (replay_prompt, active_pins, rebuild_turn)."""
    reader = TraceReader(folder, shared=False)
    out = []
    previous = None
    for turn in [t for t in reader.list_turns(run_id, "main") if t >= 1]:
        replay = reader.replay_prompt(run_id, turn, "main", step=0)
        assert replay is not None
        last = reader.replay_prompt(run_id, turn, "main", step=replay.steps[-1])
        assert last is not None
        check = rebuild_turn(reader, run_id, turn, agent="main", step=last.step)
        entry = {"turn": turn, "pins": [p.model_dump(mode="json") for p in reader.active_pins(run_id, turn, "main",
                                                                                                step=last.step)],
                 "digest_verified": check.verified,
                 "digest_note": "; ".join(check.notes) or f"rebuilt {check.rebuilt_digest}",
                 "decisions": [d.model_dump(mode="json") for d in last.context_decision.decisions],
                 "messages": check.messages}
        entry["diff"], entry["new_messages"] = turn_diff(previous, last.context_decision) if previous else ([], [])
        previous = last.context_decision
        out.append(entry)
    return out


@pytest.mark.parametrize("engine", [True, False])
async def test_frames_in_one_pass_match_the_turn_by_turn_answers(tmp_path: Path, engine: bool) -> None:
    run_id = await record(tmp_path, 75, engine=engine)  # keyframes every 32 decisions: deltas across two bases
    progress: list[tuple[int, int]] = []
    frames = build_frames(tmp_path, run_id, reader=TraceReader(tmp_path, shared=False),
                          progress=lambda done, total: progress.append((done, total)))
    expected = reference_frames(tmp_path, run_id)
    assert [f["turn"] for f in frames] == [e["turn"] for e in expected]
    assert any(e["pins"] for e in expected) and any(e["diff"] or e["new_messages"] for e in expected)
    for frame, want in zip(frames, expected, strict=True):
        assert frame["pins"] == want["pins"], frame["turn"]
        assert frame["digest_verified"] is True and want["digest_verified"] is True
        assert frame["digest_note"] == want["digest_note"]
        assert frame["step"]["decision"]["decisions"] == want["decisions"]
        assert frame["step"]["messages"] == want["messages"] and frame["prompt_source"] == "rebuilt"
        assert (frame["diff"], frame["new_messages"]) == (want["diff"], want["new_messages"]), frame["turn"]
    assert progress[0] == (0, 75) and progress[-1] == (75, 75)


async def test_a_tampered_turn_is_reported_by_the_frames_as_by_rebuild(tmp_path: Path) -> None:
    run_id = await record(tmp_path, 12)
    path = tmp_path / f"{run_id}.jsonl"
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):  # another recorded digest for turn 5: the rebuild no longer matches it
        obj = json.loads(line)
        if obj["event_type"] == "context_decision" and obj["turn"] == 5:
            obj["metadata"]["request_digest"] = "0" * 16
            lines[i] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n")
    frames = build_frames(tmp_path, run_id, reader=TraceReader(tmp_path, shared=False))
    bad = [f for f in frames if f["digest_verified"] is False]
    assert [f["turn"] for f in bad] == [5]
    check = rebuild_turn(TraceReader(tmp_path, shared=False), run_id, 5, step=int(bad[0]["step"]["step"]))
    assert bad[0]["digest_note"] == ("; ".join(check.notes) or f"rebuilt {check.rebuilt_digest}")
    assert not check.verified


rows_st = st.lists(st.fixed_dictionaries({
    "index": st.integers(0, 5), "outcome": st.sampled_from(["kept", "dropped"]),
    "relevance_score": st.none() | st.floats(0, 1), "fidelity": st.sampled_from([None, "L0", "L3"]),
}), max_size=12)


@given(rows_st, st.lists(rows_st, min_size=1, max_size=4))
def test_the_resolver_gives_what_resolve_decision_gives_and_shares_unchanged_rows(base, news) -> None:
    resolver = DecisionResolver(lambda _id: {"decisions": base})
    for new in news:
        delta = encode(new, base)
        if delta is None:
            continue
        packed = {"strategy": "x", "decisions": None, "decisions_delta": {"base": "e_1", **delta}}
        want = resolve_decision(packed, lambda _id: {"decisions": base})
        got = resolver.resolve(packed)
        assert got == want
        assert [list(r) for r in got["decisions"]] == [list(r) for r in want["decisions"]]  # key order too
        if not all(list(r) == list(base[0]) for r in base):
            continue  # rows of several key orders: nothing is shared
        unchanged = not any(spec["values"] for spec in delta["columns"].values())
        if unchanged:  # every row equal to the base's at its position: all of them shared
            assert all(row is base[i] for i, row in enumerate(got["decisions"]))


@settings(max_examples=200)
@given(st.lists(st.none() | st.integers(1, 6), max_size=14).map(
    lambda ts: sorted(ts, key=lambda t: -1 if t is None else t)), st.integers(0, 8), st.integers(0, 14))
def test_the_band_by_bisection_is_select_from_turn(turns, from_turn, prefix) -> None:
    history = [Message(role="user", content=str(i), turn=t) for i, t in enumerate(turns)]
    band = _Band(history)
    part = history[:prefix]
    assert band.select(part, from_turn) == select_from_turn(part, from_turn)


def test_a_turn_diff_of_rows_equals_the_diff_of_models() -> None:
    from arcana_jupyter.context.decisions import ContextDecision, MessageDecision

    def decision(outcomes: list[str]) -> ContextDecision:
        return ContextDecision(turn=1, strategy="s", requested_strategy="auto", utilization_before=0.5, decisions=[
            MessageDecision(index=i, role="user", outcome=o, fidelity="L0", relevance_score=None, token_count_before=3,
                            token_count_after=3, reason="r") for i, o in enumerate(outcomes)])

    a, b = decision(["kept", "kept", "dropped"]), decision(["kept", "dropped", "dropped", "kept"])
    rows_a = [d.model_dump(mode="json") for d in a.decisions]
    rows_b = [d.model_dump(mode="json") for d in b.decisions]
    rows_b[0] = rows_a[0]  # shared, as the frame builder shares an unchanged row
    assert turn_diff(rows_a, rows_b) == turn_diff(a, b)
    assert turn_diff(rows_a, rows_b)[1] == [{"index": 3, "role": "user", "source": "history", "outcome": "kept"}]


def test_report_progress_on_stderr_says_what_it_does() -> None:
    from arcana_jupyter.cli.report_cmd import StderrProgress

    out = io.StringIO()
    progress = StderrProgress(out)
    for done in range(0, 101):
        progress("replay r_1 (main)", done, 100)
    progress("page", 0, 1)
    progress.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == "report: replay r_1 (main): turn 0 of 100"
    assert lines[-2] == "report: replay r_1 (main): turn 100 of 100" and lines[-1] == "report: writing the page"
    assert len(lines) == 12  # every tenth, not every turn


def test_grouped_tables_keep_a_long_history_to_one_line_per_run() -> None:
    from arcana_jupyter.render.turn import decision_table_html

    rows = [{"index": i, "role": "user" if i % 2 else "assistant", "outcome": "dropped", "fidelity": None,
             "token_count_before": 10, "token_count_after": 0, "reason": "engine_checkpoint", "source": "history",
             "layer": "working", "relevance_score": None} for i in range(1, 2001)]
    rows.append({**rows[0], "index": 2001, "outcome": "kept", "fidelity": "L0", "token_count_after": 10,
                 "reason": "<b>recent</b>"})
    step = {"decision": {"strategy": "s", "requested_strategy": "auto", "decisions": rows}, "messages": []}
    from arcana_jupyter.render.templating import render_macro
    from arcana_jupyter.render.turn import decision_table_view

    html = render_macro("turn.html.j2", "decision_table", decision_table_view(step, grouped=True))
    assert html.count("<tr") == 3  # the header, one run of 2,000, the kept row
    assert "1–2000" in html and "2,000 messages decided alike" in html and "20,000 → 0" in html
    assert "&lt;b&gt;recent&lt;/b&gt;" in html and "<b>recent" not in html
    assert len(decision_table_html(step)) > 20 * len(html)
