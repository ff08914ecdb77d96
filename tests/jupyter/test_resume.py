"""A notebook session survives the kernel: after a restart the first ``%%arcana`` continues the
notebook's latest run of that session name; ``--new`` and ``--resume latest|RUN`` choose; every start
prints its banner; a rename is recorded and redrawn in the banner. Driven through a real IPython shell
(``close_all`` is what a restart leaves behind: only the trace files)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from arcana_jupyter.jupyter.comm import ArcanaComm
from arcana_jupyter.jupyter.notebook_path import report_notebook_path
from arcana_jupyter.trace.reader import TraceReader
from tests.jupyter.conftest import MIME, magics, run_cell_magic, turn_outputs


@pytest.fixture(autouse=True)
def forget_reported_path() -> Iterator[None]:
    report_notebook_path(None)
    yield
    report_notebook_path(None)


@pytest.fixture
def seen(shell: Any) -> list[Any]:
    """The model: records each request and repeats the user's last message."""
    requests: list[Any] = []

    def answer(request: Any) -> str:
        requests.append(request)
        return f"You said: {request.messages[-1].content}"

    shell.user_ns["echo"] = answer
    magics(shell).default_model = "fn:echo"
    yield requests
    magics(shell).default_model = "auto"


def banner(outputs: list[Any]) -> str:
    texts = [o.data["text/plain"] for o in outputs if "arcana session" in o.data.get("text/plain", "")]
    assert texts, [o.data.get("text/plain") for o in outputs]
    return texts[-1]


def turn(shell: Any, text: str, line: str = "") -> tuple[dict[str, Any], list[Any]]:
    outputs = run_cell_magic(shell, line, text)
    return turn_outputs(outputs)[-1].data[MIME], outputs


def restart(shell: Any) -> None:
    magics(shell).close_all()  # every session writes its run_end, as at a kernel shutdown


def test_first_turn_after_a_restart_resumes_the_latest_run(shell: Any, seen: list[Any], tmp_path: Path) -> None:
    first, outputs = turn(shell, "The code word is pelican.")
    assert "started run" in banner(outputs)  # an implicit session says what it is
    turn(shell, "And the colour is teal.")
    run_id = first["run_id"]
    restart(shell)
    third, outputs = turn(shell, "What were the code word and the colour?")
    text = banner(outputs)
    assert f"resumed run {run_id} at turn 3" in text and "2 earlier turns" in text and "--new" in text
    assert (third["run_id"], third["turn"]) == (run_id, 3)
    sent = "\n".join(str(m.content) for m in seen[-1].messages)
    assert "pelican" in sent and "teal" in sent  # the earlier turns are in context
    reader = TraceReader(tmp_path / "analysis.arcana")
    assert [r.run_id for r in reader.list_runs()] == [run_id]
    history = reader.history(run_id)
    assert [m.role for m in history] == ["system"] + ["user", "assistant"] * 3
    assert reader.warnings == [] and reader.list_runs()[0].warnings == 0  # nothing recorded twice
    starts = reader.events(run_id, event_types=("run_start",))
    assert [s.metadata.get("resumed_from") for s in starts] == [None, run_id]
    assert starts[1].metadata["notebook"] == str(tmp_path / "analysis.ipynb")


def test_resume_latest_of_the_run_this_kernel_already_continues_goes_on(shell: Any, seen: list[Any]) -> None:
    """After a restart the first ``%%arcana`` continued the run; ``%arcana_chat --resume latest`` then
    asked the trace's lock for the run its own session holds ("being written by another writer").
    It keeps that session; with other settings it reopens the run with them."""
    first, _ = turn(shell, "The code word is pelican.")
    restart(shell)
    turn(shell, "What was the code word?")
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", "--resume latest")
    text = banner(captured.outputs)
    assert f"resumed run {first['run_id']} at turn 3" in text and "is this session's own: it goes on" in text
    third, _ = turn(shell, "And now?")
    assert (third["run_id"], third["turn"]) == (first["run_id"], 3)
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", f"--resume {first['run_id']} --window 3000")
    assert "window 3000" in banner(captured.outputs)
    fourth, _ = turn(shell, "Still there?")
    assert (fourth["run_id"], fourth["turn"]) == (first["run_id"], 4)


def test_resume_keeps_the_recorded_settings_unless_the_line_changes_them(shell: Any, seen: list[Any]) -> None:
    with capture_output():
        shell.run_line_magic("arcana_chat", "--window 3000 --reserve 300 --classic --no-tools")
    turn(shell, "one")
    restart(shell)
    turn(shell, "two")
    chat = magics(shell).entry(None).chat
    assert (chat.config.total_window, chat.config.response_reserve, chat.engine) == (3000, 300, None)
    assert chat.config.user_tools == "off" and chat.turn == 2
    restart(shell)
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", "--resume latest --window 4000")
    assert "resumed run" in banner(captured.outputs) and "window 4000" in banner(captured.outputs)
    chat = magics(shell).entry(None).chat
    assert (chat.config.total_window, chat.config.response_reserve, chat.engine) == (4000, 300, None)


def test_new_starts_fresh_and_a_plain_chat_says_how_to_continue(shell: Any, seen: list[Any], tmp_path: Path) -> None:
    first, _ = turn(shell, "The code word is pelican.")
    restart(shell)
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", "")
    text = banner(captured.outputs)
    assert "started run" in text
    assert f"{first['run_id']}, 1 turn) can be continued: %arcana_chat --resume latest" in text
    fresh, _ = turn(shell, "hello again")
    assert fresh["run_id"] != first["run_id"] and fresh["turn"] == 1
    assert not any("pelican" in str(m.content) for m in seen[-1].messages)
    restart(shell)
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", "--new")
    assert "started run" in banner(captured.outputs) and "can be continued" not in banner(captured.outputs)
    newest, _ = turn(shell, "third run")
    assert newest["turn"] == 1 and newest["run_id"] not in (first["run_id"], fresh["run_id"])
    restart(shell)
    with capture_output():
        shell.run_line_magic("arcana_chat", f"--resume {first['run_id']}")
    again, _ = turn(shell, "what was the code word?")
    assert (again["run_id"], again["turn"]) == (first["run_id"], 2)
    assert any("pelican" in str(m.content) for m in seen[-1].messages)
    restart(shell)
    continued, _ = turn(shell, "and now?")  # the implicit session continues the run touched last
    assert (continued["run_id"], continued["turn"]) == (first["run_id"], 3)


def test_resume_errors_say_what_exists(shell: Any, seen: list[Any]) -> None:
    with pytest.raises(UsageError, match="no earlier run of session 'main'"):
        shell.run_line_magic("arcana_chat", "--resume latest")
    first, _ = turn(shell, "hello")
    restart(shell)
    with pytest.raises(UsageError, match=rf"--resume r_nope: no such run .*runs there: {first['run_id']}"):
        shell.run_line_magic("arcana_chat", "--resume r_nope")
    with pytest.raises(UsageError, match="give one of them"):
        shell.run_line_magic("arcana_chat", "--new --resume latest")
    with pytest.raises(UsageError, match="--resume"):
        shell.run_line_magic("arcana_chat", "--resume ../../etc")
    assert magics(shell).sessions == {}


def test_a_run_open_in_another_kernel_is_not_taken_over(shell: Any, seen: list[Any], tmp_path: Path) -> None:
    from arcana_jupyter.trace.writer import TraceWriter

    first, _ = turn(shell, "hello")
    restart(shell)
    holder = TraceWriter(tmp_path / first["trace_path"], first["run_id"])  # another kernel writes it
    try:
        again, outputs = turn(shell, "still there?")
        assert again["run_id"] != first["run_id"] and again["turn"] == 1
        assert "is open in another kernel, so a new run was started" in banner(outputs)
    finally:
        holder.close()


def test_a_rename_is_recorded_and_redrawn_in_the_banner(shell: Any, seen: list[Any], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(tmp_path / "Untitled.ipynb"))
    (tmp_path / "Untitled.ipynb").write_text("{}")
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", "")
    assert "trace Untitled.arcana/" in banner(captured.outputs)
    turn(shell, "before the rename")
    chat = magics(shell).entry(None).chat
    os.rename(tmp_path / "Untitled.ipynb", tmp_path / "tour.ipynb")
    os.rename(tmp_path / "Untitled.arcana", tmp_path / "tour.arcana")
    with capture_output() as captured:
        reply = ArcanaComm(magics(shell)).handle({"type": "path", "path": "tour.ipynb", "old_path": "Untitled.ipynb"})
    assert reply is not None and reply["ok"] is True
    redrawn = banner(captured.outputs)  # the banner's display, updated in place
    assert f"trace tour.arcana/{chat.run_id}.jsonl (notebook tour.ipynb)" in redrawn and "Untitled" not in redrawn
    turn(shell, "after the rename")
    lines = [json.loads(x) for x in (tmp_path / "tour.arcana" / f"{chat.run_id}.jsonl").read_text().splitlines()]
    (renamed,) = [e for e in lines if e["event_type"] == "notebook_renamed"]
    assert renamed["metadata"]["notebook"] == str(tmp_path / "tour.ipynb")
    assert renamed["metadata"]["from_notebook"] == str(tmp_path / "Untitled.ipynb")
    assert renamed["metadata"]["trace_path"] == str(tmp_path / "tour.arcana" / f"{chat.run_id}.jsonl")
    restart(shell)
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(tmp_path / "tour.ipynb"))
    _, outputs = turn(shell, "after a restart")
    assert f"resumed run {chat.run_id}" in banner(outputs) and "notebook tour.ipynb" in banner(outputs)
    starts = TraceReader(tmp_path / "tour.arcana").events(chat.run_id, event_types=("run_start",))
    assert starts[-1].metadata["notebook"] == str(tmp_path / "tour.ipynb")


def test_a_named_session_resumes_on_its_first_cell_after_a_restart(shell: Any, seen: list[Any]) -> None:
    with capture_output():
        shell.run_line_magic("arcana_chat", "--name side --window 3000")
    first, _ = turn(shell, "The side code word is heron.", "--session side")
    restart(shell)
    again, outputs = turn(shell, "What is the side code word?", "--session side")
    assert (again["run_id"], again["turn"], again["agent"]) == (first["run_id"], 2, "side")
    assert f"session 'side' resumed run {first['run_id']} at turn 2" in banner(outputs)
    assert magics(shell).entry("side").chat.config.total_window == 3000
    with pytest.raises(UsageError, match="no arcana session named 'other'; sessions: side"):
        run_cell_magic(shell, "--session other", "hello")


def test_what_the_user_did_before_the_first_turn_is_not_a_turn(shell: Any, seen: list[Any], tmp_path: Path) -> None:
    with capture_output():
        shell.run_line_magic("arcana_chat", "")
        shell.run_line_magic("arcana_pin", "The deadline is 30 June.")  # turn 0: before any turn
    first, _ = turn(shell, "When is the deadline?")
    (info,) = TraceReader(tmp_path / "analysis.arcana").list_runs()
    assert info.turns == 1 and first["turn"] == 1
    assert any("30 June" in str(m.content) for m in seen[-1].messages)


def test_a_run_whose_recorded_settings_are_no_longer_valid_starts_fresh(shell: Any, seen: list[Any],
                                                                         tmp_path: Path) -> None:
    first, _ = turn(shell, "hello")
    restart(shell)
    trace = tmp_path / first["trace_path"]
    lines = trace.read_text().splitlines()
    start = json.loads(lines[0])
    start["metadata"]["config"]["strategy"] = "a_strategy_from_the_future"
    trace.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
    again, outputs = turn(shell, "still there?")
    assert again["run_id"] != first["run_id"] and again["turn"] == 1
    assert f"run {first['run_id']} could not be continued (its recorded settings are not valid now" in banner(outputs)


def test_issue35_9_a_line_nested_100000_deep_in_the_notebooks_trace_is_skipped(shell: Any, seen: list[Any],
                                                                             tmp_path: Path) -> None:
    """One line of 100,000 nested lists in the notebook's trace folder: ``%arcana_chat`` and ``%%arcana``
    failed with a RecursionError traceback in that notebook; the line is skipped and listed, the run
    resumes."""
    first, _ = turn(shell, "The code word is pelican.")
    run_id = first["run_id"]
    restart(shell)
    path = tmp_path / "analysis.arcana" / f"{run_id}.jsonl"
    lines = path.read_text().splitlines()
    deep = '{"v":1,"event_id":"e_900000","run_id":"' + run_id + '","event_type":"note","metadata":{"x":' + \
        "[" * 100_000 + "]" * 100_000 + "}}"
    path.write_text("\n".join([*lines[:3], deep, *lines[3:]]) + "\n")
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", "--resume latest")
    assert "Traceback" not in captured.stdout + captured.stderr and "RecursionError" not in captured.stdout
    assert f"resumed run {run_id}" in banner(captured.outputs)
    second, outputs = turn(shell, "What was the code word?")
    assert "Traceback" not in "".join(o.data.get("text/plain", "") for o in outputs)
    assert (second["run_id"], second["turn"]) == (run_id, 2)
    assert "pelican" in "\n".join(str(m.content) for m in seen[-1].messages)
    reader = TraceReader(tmp_path / "analysis.arcana", shared=False)
    assert [r.run_id for r in reader.list_runs()] == [run_id]
    assert any(":4: nested deeper than 64 levels (line skipped)" in w for w in reader.warnings), reader.warnings


def test_issue35_7_replay_magic_of_a_rows_bomb_says_what_is_wrong(shell: Any, seen: list[Any], tmp_path: Path) -> None:
    """The rows bomb of row 6 (``chain.rows.count`` 2e8, every column one run) in the notebook's trace
    folder: ``%arcana_replay`` died with ``MemoryError``; it replays the turns (their inputs and replies)
    and says in one line which decision cannot be read — every decision continues that keyframe, so none
    of the three can. The process's address space is capped (what it maps plus 2 GB) so that a bomb that
    got through fails here with ``MemoryError`` instead of taking the machine's memory."""
    import resource

    from arcana_jupyter.jupyter.replay_view import REPLAY_MIME_TYPE

    for text in ("first question", "second question", "third question"):
        first, _ = turn(shell, text)
    run_id = first["run_id"]
    restart(shell)
    path = tmp_path / "analysis.arcana" / f"{run_id}.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    decision = next(e for e in events if e["event_type"] == "context_decision" and e["turn"] == 1)
    rows = decision["metadata"]["chain"]["rows"]  # the keyframe: every later decision continues it
    rows["count"] = 200_000_000
    rows["columns"] = {k: [["r", 200_000_000, 0]] for k in rows["columns"]}
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    with open("/proc/self/statm") as statm:
        mapped = int(statm.read().split()[0]) * resource.getpagesize()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = mapped + (2 << 30)
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))
    try:
        with capture_output() as captured:
            shell.run_line_magic("arcana_replay", run_id)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert any(REPLAY_MIME_TYPE in o.data for o in captured.outputs)  # the turns replay
    errors = [o.data["text/plain"] for o in captured.outputs
              if REPLAY_MIME_TYPE not in o.data and "arcana-error-box" in o.data.get("text/html", "")]
    assert len(errors) == 1, errors
    message = errors[0]
    assert message.startswith(f"{run_id}: 3 of 3 turns' decisions cannot be read") and "\n" not in message, message
    assert decision["event_id"] in message and "more than" in message and "MemoryError" not in message, message
