"""Trace bombs: records whose compact encodings stand for far more than the file holds (line edits of
line edits, references repeated, rows, runs and positions by the hundred million), loops, and lines
nested beyond any parser's depth. Each is refused with a ``TraceError`` naming the record (or, for a
line that is not an event, skipped and listed), through the reader, the CLI, the replay frames and a
notebook's magics — never ``MemoryError``, ``RecursionError`` or a reader that never ends
(docs/SECURITY.md, "Limits on what a trace can make us hold"). Over a whole run too: many decisions, each
within its own file's bound, are held to the transcript recorded before each, and the replay frames'
pass to a budget of the file's size; the turns whose decision is refused say so, the others replay.

The bombs are written into the file of a real recorded run; the test process runs with its address
space capped (``RLIMIT_AS``), so a bomb that got through fails here with ``MemoryError`` instead of
taking the machine's memory."""

from __future__ import annotations

import json
import re
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scripted_chat import say

from arcana_jupyter.cli import main
from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.jupyter.replay_frames import build_frames
from arcana_jupyter.trace import TraceReader
from arcana_jupyter.trace.limits import too_deep

HEADROOM = 2 << 30
"""The address space this module's tests may take beyond what the process already maps: a fixed cap is
wrong in a long run (threads' stacks, malloc arenas and a loaded model had taken 4 GB of it, and a new
thread could not even start under 3 GB: the run hung)."""


def _mapped() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


@pytest.fixture(autouse=True)
def _capped_memory() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _mapped() + HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.fixture
def recorded(make_runtime: Any, tmp_path: Path) -> tuple[str, list[dict[str, Any]]]:
    """A real three-turn run (classic mode, prompts as sent recorded): its run id and events."""
    runtime, _ = make_runtime(say("one " * 30), say("two " * 30), say("three " * 30), cognitive_primitives=["pin"])
    with runtime.chat() as chat:
        for text in ("first question", "second question", "third question"):
            chat.send_sync(text)
        path = chat.trace_path
        run_id = chat.run_id
    assert path is not None
    return run_id, [json.loads(line) for line in path.read_text().splitlines()]


def _write(folder: Path, run_id: str, events: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{run_id}.jsonl"
    path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events))
    return path


def _event(run_id: str, event_id: str, event_type: str, turn: int | None, metadata: dict[str, Any],
           parent_id: str | None = None, step: int | None = None) -> dict[str, Any]:
    if step is not None:
        metadata = {"step": step, **metadata}
    return {"v": 1, "event_id": event_id, "run_id": run_id, "agent": "main", "turn": turn,
            "ts": "2026-12-01T00:00:00.000000Z", "event_type": event_type, "parent_id": parent_id,
            "metadata": metadata}


def _decision_of(events: list[dict[str, Any]], turn: int) -> dict[str, Any]:
    return next(e for e in events if e["event_type"] == "context_decision" and e["turn"] == turn)


def _sent_of(events: list[dict[str, Any]], turn: int) -> int:
    return next(i for i, e in enumerate(events) if e["event_type"] == "prompt_sent" and e["turn"] == turn)


def _refused_everywhere(folder: Path, run_id: str, turn: int, capsys: pytest.CaptureFixture[str], *,
                        match: str, frames: bool = False) -> None:
    """The reader's prompt (or decision) of ``turn`` is a TraceError naming the record; ``arcana trace
    replay`` says it in one error line (exit 1); the frames, when asked, are built all the same, the
    refused decisions' turns saying why (``decision_error``: the TraceError's message)."""
    reader = TraceReader(folder, shared=False)
    with pytest.raises(TraceError, match=match):
        reader.prompt_sent(run_id, turn) if not frames else reader.replay_prompt(run_id, turn)
    code = main(["trace", "replay", run_id, "--turn", str(turn), "--dir", str(folder)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "this is a bug" not in err and "Traceback" not in err and "MemoryError" not in err, err
    assert [line for line in err.splitlines() if line.startswith("arcana: error:")], err
    if frames:
        _frames_refuse(folder, run_id, match)


def _frames_refuse(folder: Path, run_id: str, match: str) -> list[dict[str, Any]]:
    """The replay frames of the run: one per turn, those whose decision is refused without it and saying why
    (the first names the record); the others as usual. Returns the refused ones."""
    built = build_frames(folder, run_id, reader=TraceReader(folder, shared=False))
    assert [f["turn"] for f in built] == [t for t in TraceReader(folder, shared=False).list_turns(run_id) if t >= 1]
    refused = [f for f in built if f.get("decision_error")]
    assert refused and re.search(match, refused[0]["decision_error"]), refused
    assert all("decision_event_id" not in f for f in refused)
    return refused


# -- row 4: line edits of line edits ----------------------------------------------------------------


def test_line_edits_each_copying_the_last_text_twice_are_refused(recorded: tuple[str, list[dict[str, Any]]],
                                                                 tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run_id, events = recorded
    at = _sent_of(events, 3)
    decision_id = _decision_of(events, 3)["event_id"]
    lines = 8
    chain = [_event(run_id, "e_900000", "prompt_sent", 3, {
        "digest": None, "prev": None, "keep": 0,
        "messages": [{"role": "user", "content": "\n".join(["abcdefghijklmnopqrstuvwxyz"] * lines)}]}, step=7)]
    for k in range(1, 41):  # 40 records of a few dozen bytes: 2**40 times the text
        chain.append(_event(run_id, f"e_9{k:05d}", "prompt_sent", 3, {
            "digest": None, "prev": chain[-1]["event_id"], "keep": 0,
            "messages": [{"e": [0, [[0, lines], [0, lines]]]}]},
            parent_id=decision_id if k == 40 else None, step=0 if k == 40 else 7))
        lines *= 2
    bomb = [*events[:at], *chain, *events[at + 1:]]
    folder = tmp_path / "bomb"
    path = _write(folder, run_id, bomb)
    assert path.stat().st_size < len(json.dumps(events)) + 16_000  # the bomb is small
    _refused_everywhere(folder, run_id, 3, capsys, match=r"prompt_sent e_9000\d\d cannot be resolved.*more than")


# -- row 5: one message referenced 100,000 times -----------------------------------------------------


def test_a_hundred_thousand_references_to_one_large_message_are_refused(recorded: tuple[str, list[dict[str, Any]]],
                                                                        tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run_id, events = recorded
    at = _sent_of(events, 3)
    big = _event(run_id, "e_900000", "user_message", 3,
                 {"message": {"role": "user", "content": "x" * 100_000}, "history_index": 999})
    sent = dict(events[at])
    sent["metadata"] = {**sent["metadata"], "prev": None, "keep": 0, "messages": [{"h": 999}] * 100_000}
    sent.pop("tokens", None)
    folder = tmp_path / "bomb"
    _write(folder, run_id, [*events[:at], big, sent, *events[at + 1:]])
    _refused_everywhere(folder, run_id, 3, capsys,
                        match=rf"prompt_sent {sent['event_id']} cannot be resolved.*more than")
    # the report's prompts as sent: the same error, not MemoryError
    with pytest.raises(TraceError, match="more than"):
        list(TraceReader(folder, shared=False).prompts_sent(run_id))


# -- rows 6 and 7: chained decisions that expand past the file ---------------------------------------


@pytest.mark.parametrize("bomb", ["rows", "overflow", "moved"])
def test_chained_decisions_that_expand_past_their_file_are_refused(recorded: tuple[str, list[dict[str, Any]]],
                                                                   tmp_path: Path, bomb: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``rows.count`` 2e8; 400 overflow runs of 10M turns; 300 moved runs of 1M positions — each run
    within what a single check allowed. The reader, ``arcana trace replay`` and the replay frames
    (``%arcana_replay``, the report) refuse them with a TraceError naming the decision."""
    run_id, events = recorded
    decision = _decision_of(events, 1)  # the keyframe: every later decision continues it
    chain = decision["metadata"]["chain"]
    assert chain["prev"] is None
    if bomb == "rows":  # every column a run of 2e8 values: each op within the count it claims
        chain["rows"]["count"] = 200_000_000
        chain["rows"]["columns"] = {k: [["r", 200_000_000, 0]] for k in chain["rows"]["columns"]}
    elif bomb == "overflow":
        chain["overflow"] = {"checkpoint": [[1, 10_000_000]] * 400}
    else:
        decision["metadata"].setdefault("shape", {"name": "portable"})
        chain["moved"] = [[0, 1_000_000, "kept", 0]] * 300
    folder = tmp_path / bomb
    _write(folder, run_id, events)
    _refused_everywhere(folder, run_id, 2, capsys, match=rf"{decision['event_id']}.*(more than|refused)",
                        frames=True)


def test_a_delta_of_the_older_encoding_that_copies_its_base_again_and_again_is_refused(
        recorded: tuple[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    run_id, events = recorded
    first = _decision_of(events, 1)
    rows = TraceReader(_write(tmp_path / "plain", run_id, events).parent, shared=False).replay_prompt(
        run_id, 1).context_decision.decisions
    keyframe = dict(first)
    keyframe["metadata"] = {k: v for k, v in first["metadata"].items() if k != "chain"}
    keyframe["metadata"]["decision"] = {**keyframe["metadata"].get("decision", {}),
                                       "decisions": [r.model_dump(mode="json") for r in rows]}
    second = _decision_of(events, 2)
    delta = dict(second)
    n = len(rows)
    delta["metadata"] = {k: v for k, v in keyframe["metadata"].items()}
    delta["metadata"]["decision"] = {**keyframe["metadata"]["decision"], "decisions": None, "decisions_delta": {
        "base": first["event_id"], "count": 10 ** 12,
        "columns": {k: {"same": [[0, n]] * 100_000, "values": []} for k in rows[0].model_dump()}}}
    out = [keyframe if e is first else delta if e is second else e for e in events]
    folder = tmp_path / "old"
    _write(folder, run_id, out)
    with pytest.raises(TraceError, match="decision delta"):
        TraceReader(folder, shared=False).replay_prompt(run_id, 2)
    delta["metadata"]["decision"]["decisions_delta"]["count"] = n  # a plausible count: the copies overrun it
    _write(folder, run_id, out)
    with pytest.raises(TraceError, match="resolves to"):
        TraceReader(folder, shared=False).replay_prompt(run_id, 2)
    # turn 3's decision continues turn 2's: refused with it, turn 1 replays
    assert [f["turn"] for f in _frames_refuse(folder, run_id, "resolves to")] == [2, 3]


# -- rows 6 and 7 over a whole run: many decisions, each within its own bound --------------------------


def _many_decisions(run_id: str, events: list[dict[str, Any]], turns: int, rows: Any, pad: int = 0
                    ) -> list[dict[str, Any]]:
    """The run's first turn again ``turns`` times (turn_start, user message, decision, turn_end), each
    decision a keyframe of ``rows(turn)`` rows, every column one run (a few changing every turn), after a
    note of ``pad`` bytes."""
    first = {e["event_type"]: e for e in events if e["turn"] == 1}
    keys = first["context_decision"]["metadata"]["chain"]["rows"]["keys"]
    out = [events[0], _event(run_id, "e_900000", "note", None, {"pad": "p" * pad})]
    for turn in range(1, turns + 1):
        for kind in ("turn_start", "user_message", "context_decision", "turn_end"):
            event = json.loads(json.dumps(first[kind]))
            event["event_id"], event["turn"] = f"e_{len(out):06d}", turn
            if kind == "user_message":
                event["metadata"]["history_index"] = turn
            if kind == "context_decision":
                n = rows(turn)
                event["metadata"]["decision"]["turn"] = turn
                event["metadata"]["chain"]["rows"] = {"count": n, "keys": keys, "columns": {
                    k: [["r", n, turn if k in ("index", "position", "turn") else 0]] for k in keys}}
            out.append(event)
    return out


def _notebook_of(folder: Path, run_id: str, path: Path) -> Path:
    """A notebook whose one output points at the run's trace (what ``arcana report`` reads)."""
    import nbformat

    nb_path = folder / "bomb.ipynb"
    meta = {"arcana": {"run_id": run_id, "agent": "main", "turn": 1,
                       "trace_path": path.relative_to(folder).as_posix()}}
    cell = nbformat.v4.new_code_cell("%%arcana\nturn 1")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "turn 1"}, metadata=meta)]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), nb_path)
    return nb_path


def test_many_decisions_each_within_its_files_bound_are_refused_by_the_transcript_before_them(
        recorded: tuple[str, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The audit's bomb (benchmarks/repro_many_record_bombs.py): 60 decisions of a 3.2 MB trace, each of the
    54,499 rows its file allows (4,096 + one per 64 bytes) — 3.3M rows in all, which ran ``arcana report``
    out of memory ("unexpected MemoryError (this is a bug)", exit 70) and took ``%arcana_replay`` 123 s of
    CPU. Each turn records one user message before its decision, so each decision may hold at most
    1 + 64 rows (and those of the turns before): every one is refused, naming it; the frames of the 60
    turns are built all the same, and the report is written, with one line saying which turns' decisions
    cannot be read."""
    from arcana_jupyter.trace.limits import max_rows

    run_id, events = recorded
    size = len("".join(json.dumps(e, separators=(",", ":")) + "\n"
                       for e in _many_decisions(run_id, events, 60, lambda t: 4096, 3_000_000)).encode())
    rows = max_rows(size) - 64  # each within what its file allows
    bomb = _many_decisions(run_id, events, 60, lambda t: rows, 3_000_000)
    folder = tmp_path / "nb.arcana"
    path = _write(folder, run_id, bomb)
    assert rows <= max_rows(path.stat().st_size) and rows > 50_000
    decisions = [e["event_id"] for e in bomb if e["event_type"] == "context_decision"]
    code = main(["report", str(_notebook_of(tmp_path, run_id, path))])  # "unexpected MemoryError", exit 70 before
    err = capsys.readouterr().err
    assert code == 0, err
    assert "this is a bug" not in err and "MemoryError" not in err and "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("arcana:")]
    assert len(lines) == 1 and "60 of 60 turns' decisions cannot be read" in lines[0] and decisions[0] in lines[0]
    page = (tmp_path / "bomb.report.html").read_text()
    assert "60 of 60 turns&#39; decisions cannot be read" in page and "The decision of this turn cannot be read" in page
    refused = _frames_refuse(folder, run_id, r"event e_\d+: the chained decision cannot be resolved .*more than the "
                                             r"\d+ its trace accounts for: \d+ transcript message")
    assert len(refused) == 60
    assert [f["decision_error"].split("event ")[1].split(":")[0] for f in refused] == decisions


def test_decisions_within_the_transcript_bound_that_change_every_row_every_turn_are_bounded_over_the_pass(
        recorded: tuple[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    """Within the transcript bound still, turns times rows: 3,000 transcript records (a few hundred KB),
    then 200 decisions of 3,001 rows each that change every row every turn (600,000 changes). The pass over
    them counts what each decision changes against what the file may make it change (65,536 + one per 16
    bytes): the first turns replay, the decisions after the limit are refused, saying so."""
    from arcana_jupyter.trace.limits import max_changes

    run_id, events = recorded
    messages = 3000
    transcript = [_event(run_id, f"e_8{h:05d}", "user_message", 1,
                         {"message": {"role": "user", "content": "q"}, "history_index": h})
                  for h in range(1, messages + 1)]
    bomb = _many_decisions(run_id, events, 200, lambda t: messages + 1)
    bomb = [bomb[0], *transcript, *bomb[1:]]
    folder = tmp_path / "within"
    path = _write(folder, run_id, bomb)
    frames = build_frames(folder, run_id, reader=TraceReader(folder, shared=False), verify=False, rows=False)
    assert len(frames) == 200
    shown = [f for f in frames if not f.get("decision_error")]
    refused = [f for f in frames if f.get("decision_error")]
    limit = max_changes(path.stat().st_size)
    assert 0 < len(shown) * (messages + 1) <= limit + messages + 1 and len(shown) + len(refused) == 200
    assert [f["turn"] for f in shown] == list(range(1, len(shown) + 1))  # the turns before the limit replay
    assert all(f["outcome_counts"] for f in shown)
    assert f"more than {limit:,} rows from one to the next" in refused[0]["decision_error"]
    assert all("refused" in f["decision_error"] for f in refused)


def test_digest_checks_that_would_rebuild_a_long_transcript_every_turn_stop_at_the_passs_limit(
        recorded: tuple[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    """Each turn's digest check rebuilds its prompt from the transcript: 2,000 transcript records, then 100
    decisions that change nothing but each claim the whole transcript — 100 rebuilds of 2,000 messages
    (52 s of CPU at 10,000 messages and 200 turns). The checks are counted against the pass's limit: the
    turns past it say they were not checked, and every turn replays."""
    run_id, events = recorded
    messages = 2000
    transcript = [_event(run_id, f"e_8{h:05d}", "user_message", 1,
                         {"message": {"role": "user", "content": "q"}, "history_index": h})
                  for h in range(1, messages + 1)]
    bomb = _many_decisions(run_id, events, 100, lambda t: messages + 1)
    for e in bomb:
        if e["event_type"] == "context_decision":
            e["metadata"]["history_len"] = messages + 1
            e["metadata"]["chain"]["rows"]["columns"] = {  # the same rows every turn: nothing changes
                k: [["r", messages + 1, 0]] for k in e["metadata"]["chain"]["rows"]["keys"]}
    folder = tmp_path / "checks"
    _write(folder, run_id, [bomb[0], *transcript, *bomb[1:]])
    frames = build_frames(folder, run_id, reader=TraceReader(folder, shared=False), rows=False)
    assert len(frames) == 100 and not [f["decision_error"] for f in frames if f.get("decision_error")][:1]
    skipped = [f for f in frames if "not checked here: the digest checks of this run" in f["digest_note"]]
    assert 0 < len(skipped) < 100 and skipped[-1]["turn"] == 100
    assert skipped == frames[-len(skipped):]  # the checks stop at the limit, the turns go on


def test_running_out_of_memory_in_the_frames_is_a_trace_error(recorded: tuple[str, list[dict[str, Any]]],
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace past every limit foreseen: the frames say so as a TraceError (``%arcana_replay``'s one line,
    the report's "cannot replay"), never ``MemoryError``; a panic in a Rust extension too."""
    from arcana_jupyter.jupyter import replay_frames

    run_id, events = recorded
    folder = tmp_path / "plain"
    _write(folder, run_id, events)

    class PanicException(BaseException):  # what pyo3 raises (pyo3_runtime.PanicException)
        """A stand-in with pyo3's name: a ``BaseException``, not an ``Exception``."""

    PanicException.__module__ = "pyo3_runtime"

    for failure in (MemoryError(), PanicException("capacity overflow")):
        def fail(*args: Any, failure: BaseException = failure, **kwargs: Any) -> Any:
            raise failure

        monkeypatch.setattr(replay_frames, "_build_frames", fail)
        says = f"the replay frames of {run_id} (ran out of memory|failed in a compiled extension)"
        with pytest.raises(TraceError, match=says):
            build_frames(folder, run_id)


# -- row 8: a prompt that continues itself -------------------------------------------------------------


def test_a_prompt_that_continues_itself_is_refused_at_once(recorded: tuple[str, list[dict[str, Any]]],
                                                           tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id, events = recorded
    at = _sent_of(events, 2)
    sent = events[at]
    sent["metadata"]["prev"] = sent["event_id"]
    folder = tmp_path / "loop"
    _write(folder, run_id, events)
    reader = TraceReader(folder, shared=False)
    with pytest.raises(TraceError, match=rf"{sent['event_id']} continues {sent['event_id']}.*loops"):
        reader.prompt_sent(run_id, 2)
    assert reader.stats.events_loaded < 10  # refused at once, not after 100,000 re-reads
    later = _sent_of(events, 3)
    sent["metadata"]["prev"] = events[later]["event_id"]  # a later prompt: a loop too
    _write(folder, run_id, events)
    with pytest.raises(TraceError, match="not an earlier prompt"):
        TraceReader(folder, shared=False).prompt_sent(run_id, 2)
    _refused_everywhere(folder, run_id, 2, capsys, match="loops")


# -- row 9: a line nested 100,000 deep --------------------------------------------------------------


def test_a_line_nested_a_hundred_thousand_deep_is_skipped_and_listed(recorded: tuple[str, list[dict[str, Any]]],
                                                                     tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    run_id, events = recorded
    folder = tmp_path / "deep"
    path = _write(folder, run_id, events)
    lines = path.read_text().splitlines()
    head = '{"v":1,"event_id":"e_99999%d","run_id":"' + run_id + '","event_type":"note","metadata":{"x":'
    deep = head % 9 + "[" * 100_000 + "]" * 100_000 + "}}"
    lines.insert(5, deep)
    shallow = head % 8 + "[" * 80 + "1" + "]" * 80 + "}}"  # parses, but deeper than any walk of a value should go
    lines.insert(6, shallow)
    path.write_text("\n".join(lines) + "\n")
    reader = TraceReader(folder, shared=False)
    assert [r.run_id for r in reader.list_runs()] == [run_id]
    problems = reader.warnings
    assert any(":6: nested deeper than 64 levels (line skipped)" in p for p in problems), problems
    assert any(":7: nested deeper than 64 levels (line skipped)" in p for p in problems), problems
    assert reader.prompt_sent(run_id, 3) is not None and reader.prompt_sent(run_id, 3).verified
    for argv in (["trace", "list"], ["trace", "show", run_id], ["trace", "replay", run_id, "--turn", "2"]):
        assert main([*argv, "--dir", str(folder)]) == 0, argv
        err = capsys.readouterr().err
        assert "this is a bug" not in err and "Traceback" not in err, err
    assert all(f["digest_verified"] for f in build_frames(folder, run_id, reader=TraceReader(folder, shared=False)))
    # a deep line at the end: a writer resuming the run continues the numbering after it
    path.write_text(path.read_text() + deep + "\n")
    from arcana_jupyter.trace import TraceWriter

    with TraceWriter(path, run_id) as writer:
        event = writer.emit_json("turn_start", {"input_tokens": 1}, turn=4)
    assert int(event.event_id[2:]) == max(int(e["event_id"][2:]) for e in events) + 1


def test_the_writer_writes_values_nested_past_the_readers_depth_as_text(tmp_path: Path) -> None:
    from arcana_jupyter.trace import TraceWriter

    value: Any = "leaf"
    for _ in range(200):  # 400 levels: what a model's tool arguments could be, parsed
        value = {"a": [value]}
    with TraceWriter(tmp_path / "r_1.jsonl", "r_1") as writer:
        writer.emit_json("tool_call", {"name": "f", "arguments": value, "ok": True}, turn=1)
    reader = TraceReader(tmp_path, shared=False)
    assert reader.warnings == []
    [event] = reader.events("r_1", event_types=["tool_call"])
    assert not too_deep((tmp_path / "r_1.jsonl").read_bytes())
    assert "leaf" in json.dumps(event.metadata)  # kept, as the JSON text of what was too deep


def _depth(value: Any) -> int:
    if isinstance(value, list | dict):
        inner = value.values() if isinstance(value, dict) else value
        return 1 + max((_depth(v) for v in inner), default=0)
    return 0


_text = st.text(alphabet='[]{}"\\a\né', max_size=6)
_json = st.recursive(st.none() | st.integers() | _text,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                     max_leaves=60)


@settings(max_examples=400, deadline=None)
@given(value=_json, limit=st.integers(0, 12), ascii_only=st.booleans())
def test_the_nesting_check_is_the_depth_of_the_json(value: Any, limit: int, ascii_only: bool) -> None:
    """Brackets, quotes and backslashes inside strings never fool it (they are cut out in C first)."""
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert too_deep(raw, limit) == (_depth(value) > limit)
