"""The ``arcana`` comm against hostile messages (hostile pass, defects 4, 5, 9, 10, 11, and the
guards that held: wrong-typed fields and lone surrogates answered ``ok: false``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from arcana_jupyter.jupyter.comm import MAX_TARGET_CHARS, ArcanaComm
from arcana_jupyter.jupyter.notebook_path import report_notebook_path
from arcana_jupyter.trace.writer import TraceWriter
from tests.jupyter.conftest import echo, magics, run_cell_magic, turn_outputs


@pytest.fixture(autouse=True)
def forget_reported_path() -> Iterator[None]:
    report_notebook_path(None)
    yield
    report_notebook_path(None)


def open_chat(shell: Any, flags: str = "") -> Any:
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", f"--model fn:echo {flags}".strip())
    run_cell_magic(shell, "", "hello")
    return magics(shell).entry(None).chat


@pytest.mark.parametrize("path", ["proj/../../outside/x.ipynb", "proj/./a.ipynb", "proj//a.ipynb", "../x.ipynb"])
def test_hostile_4_a_path_with_dot_dot_is_refused_and_moves_nothing(shell: Any, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      path: str) -> None:
    root = tmp_path / "root"
    (root / "proj").mkdir(parents=True)
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(root / "proj" / "a.ipynb"))
    chat = open_chat(shell)
    before = chat.trace_path
    assert before.parent == root / "proj" / "a.arcana"
    (root / "proj" / "a.ipynb").unlink(missing_ok=True)  # the old notebook is gone: the kernel would move
    reply = ArcanaComm(magics(shell)).handle({"type": "path", "path": path, "old_path": "proj/a.ipynb",
                                              "request_id": 7})
    assert reply is not None and reply["ok"] is False and "'..'" in reply["message"] and reply["request_id"] == 7
    assert chat.trace_path == before and before.exists()
    assert not (tmp_path / "outside").exists()
    second = turn_outputs(run_cell_magic(shell, "", "after"))[-1]
    assert second.metadata["arcana"]["trace_path"] == f"a.arcana/{chat.run_id}.jsonl"


def test_hostile_4_a_path_through_a_symlinked_folder_is_refused(shell: Any, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "proj").mkdir(parents=True)
    outside.mkdir()
    (root / "proj" / "link").symlink_to(outside, target_is_directory=True)
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(root / "proj" / "a.ipynb"))
    chat = open_chat(shell)
    before = chat.trace_path
    reply = ArcanaComm(magics(shell)).handle({"type": "path", "path": "proj/link/x.ipynb",
                                              "old_path": "proj/a.ipynb"})
    assert reply is not None and reply["ok"] is False and "outside the server's root" in reply["message"]
    assert chat.trace_path == before and before.exists() and list(outside.iterdir()) == []
    # a rename inside the root still works
    os.rename(root / "proj" / "a.arcana", root / "proj" / "b.arcana")
    good = ArcanaComm(magics(shell)).handle({"type": "path", "path": "proj/b.ipynb", "old_path": "proj/a.ipynb"})
    assert good is not None and good["ok"] is True and chat.trace_path == root / "proj" / "b.arcana" / before.name


def test_hostile_5_the_shared_fallback_folder_is_not_moved_with_other_kernels_runs(
        shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARCANA_NOTEBOOK", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    chat = open_chat(shell)
    shared = tmp_path / "notebook.arcana"
    assert chat.trace_path.parent == shared
    # another kernel started in the same directory writes its live run into the same fallback folder
    other = TraceWriter(shared / "r_otherkernel.jsonl", "r_otherkernel")
    other.emit_json("run_start", {"agent": "main"})
    try:
        reply = ArcanaComm(magics(shell)).handle({"type": "path", "path": "mine.ipynb", "root": str(tmp_path)})
        assert reply is not None and reply["ok"] is True
        mine = tmp_path / "mine.arcana" / chat.trace_path.name
        assert reply["moved"] == [{"run_id": chat.run_id, "from": str(shared / mine.name), "to": str(mine)}]
        assert chat.trace_path == mine and mine.exists()
        assert (shared / "r_otherkernel.jsonl").exists() and other.path == shared / "r_otherkernel.jsonl"
        other.emit_json("run_end", {})
        lines = [json.loads(x) for x in (shared / "r_otherkernel.jsonl").read_text().splitlines()]
        assert [e["event_type"] for e in lines] == ["run_start", "run_end"]  # the other kernel goes on
    finally:
        other.close()
    turn_outputs(run_cell_magic(shell, "", "after the move"))
    events = [json.loads(x) for x in mine.read_text().splitlines()]
    assert [e["turn"] for e in events if e["event_type"] == "turn_end"] == [1, 2]


def test_hostile_9_unpinning_an_unknown_pin_is_not_done(shell: Any) -> None:
    chat = open_chat(shell, "--primitives pin")
    answer = ArcanaComm(magics(shell)).handle({"type": "action", "action": "unpin", "target": "p_nosuch",
                                               "run_id": chat.run_id, "agent": "main"})
    assert answer is not None and answer["ok"] is False and answer["result"]["unpinned"] is False
    assert "failed" in answer["message"] and "done" not in answer["message"]
    assert "unknown pin id" in answer["message"]


def test_hostile_10_oversized_action_targets_are_refused_unrecorded(shell: Any) -> None:
    chat = open_chat(shell, "--primitives pin")
    link = ArcanaComm(magics(shell))
    size = chat.trace_path.stat().st_size
    for _ in range(50):
        answer = link.handle({"type": "action", "action": "unpin", "target": "x" * 20_000, "run_id": chat.run_id})
        assert answer is not None and answer["ok"] is False and len(answer["message"]) < 400
    assert chat.trace_path.stat().st_size == size, "nothing recorded"
    ok_size = link.handle({"type": "action", "action": "unpin", "target": "p" * MAX_TARGET_CHARS,
                           "run_id": chat.run_id})
    assert ok_size is not None and ok_size["ok"] is False and "unknown pin" in ok_size["message"]
    assert chat.trace_path.stat().st_size - size < 3 * MAX_TARGET_CHARS + 2_000
    huge_name = link.handle({"type": "action", "action": "y" * 20_000, "target": "p1", "run_id": chat.run_id})
    assert huge_name is not None and huge_name["ok"] is False and len(huge_name["message"]) < 400


@pytest.mark.parametrize("msg", [
    {"content": {"data": ["not", "an", "object"]}},
    {"content": {"data": "path"}},
    {"content": {"data": 3}},
    {"content": ["x"]},
    {"content": {"data": {"type": ["path"], "path": "a.ipynb"}}},
    "not a message",
])
def test_hostile_11_a_message_that_is_not_an_object_gets_an_answer_not_a_traceback(
        shell: Any, msg: Any, capsys: pytest.CaptureFixture[str]) -> None:
    class Comm:
        sent: list[Any] = []

        def send(self, data: Any) -> None:
            self.sent.append(data)

    comm = Comm()
    ArcanaComm(magics(shell))._answer(comm, msg)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    for answer in comm.sent:
        assert answer["ok"] is False
    assert ArcanaComm(magics(shell)).handle(["x"]) == {
        "type": None, "ok": False, "message": "a message to the arcana comm is a JSON object, not list"}


# ---- guards that held ---------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    {"type": "action", "action": "unpin", "target": 3},
    {"type": "action", "action": "unpin", "target": ["p1"]},
    {"type": "action", "action": "unpin", "target": "p\ud800"},
    {"type": "action", "action": ["unpin"], "target": "p1"},
    {"type": "path", "path": 3},
    {"type": "path", "path": "\ud800.ipynb"},
    {"type": "path", "path": {"a": 1}},
])
def test_held_wrong_typed_fields_and_lone_surrogates_are_answered_not_ok(shell: Any, data: dict[str, Any]) -> None:
    chat = open_chat(shell, "--primitives pin")
    data = {**data, "run_id": chat.run_id}
    answer = ArcanaComm(magics(shell)).handle(data)
    assert answer is not None and answer["ok"] is False
    json.dumps(answer)  # the answer itself can be sent


def test_held_a_rename_during_a_turn_keeps_every_event(shell: Any, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(tmp_path / "Untitled.ipynb"))
    (tmp_path / "Untitled.ipynb").write_text("{}")
    answers: list[Any] = []

    def renaming(request: Any) -> str:  # the provider is answering when JupyterLab renames the notebook
        os.rename(tmp_path / "Untitled.ipynb", tmp_path / "tour.ipynb")
        os.rename(tmp_path / "Untitled.arcana", tmp_path / "tour.arcana")
        answers.append(ArcanaComm(magics(shell)).handle({"type": "path", "path": "tour.ipynb",
                                                          "old_path": "Untitled.ipynb"}))
        return "answered while renamed"

    shell.user_ns["renaming"] = renaming
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:renaming")
    out = turn_outputs(run_cell_magic(shell, "", "hello"))[-1]
    chat = magics(shell).entry(None).chat
    moved = tmp_path / "tour.arcana" / f"{chat.run_id}.jsonl"
    assert answers and answers[0]["ok"] is True and chat.trace_path == moved
    events = [json.loads(x) for x in moved.read_text().splitlines()]
    kinds = [e["event_type"] for e in events]
    assert kinds[0] == "run_start" and "turn_start" in kinds and kinds[-1] == "turn_end"
    assert "llm_call" in kinds and events[-1]["metadata"]["reply"] == "answered while renamed"
    assert out.metadata["arcana"]["trace_path"] == f"tour.arcana/{chat.run_id}.jsonl"
    del shell.user_ns["renaming"]


# ---- issue 35: a run id that is a path, a window without room, a wrong-typed old_path ---------------

def test_issue35_12_a_whatif_run_id_that_is_a_path_is_refused_as_not_a_run_id(shell: Any, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An absolute ``.jsonl`` path outside the notebook's folder was opened, indexed and named in the
    answer (SECURITY.md: run ids are looked up among the notebook's runs, never as a path)."""
    outside = tmp_path / "elsewhere" / "private.jsonl"
    with TraceWriter(outside, "r_private") as writer:
        writer.emit_json("run_start", {"model": "m", "system_prompt": "secret plans"})
        writer.emit_json("user_message", {"message": {"role": "user", "content": "secret"}, "history_index": 1},
                         turn=1)
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(tmp_path / "nb" / "a.ipynb"))
    chat = open_chat(shell)
    link = ArcanaComm(magics(shell))
    for run_id in (str(outside), "../elsewhere/private.jsonl", "latest", chat.run_id[:8]):
        answer = link.handle({"type": "whatif", "run_id": run_id, "turn": 1})
        assert answer is not None and answer["ok"] is False, (run_id, answer)
        assert "is not a run of this notebook" in answer["message"]
        assert "private" not in json.dumps({k: v for k, v in answer.items() if k != "message"})
        assert "secret" not in json.dumps(answer)
    good = link.handle({"type": "whatif", "run_id": chat.run_id, "turn": 1})
    assert good is not None and good["ok"] is True, good


def test_issue35_13_a_whatif_window_below_the_recorded_reserve_is_refused(shell: Any) -> None:
    """``window`` 256 with no ``reserve`` on a run recorded with a reserve of 512 answered ``ok: true``
    with every message dropped."""
    chat = open_chat(shell, "--window 4000 --reserve 512 --no-tools")
    link = ArcanaComm(magics(shell))
    answer = link.handle({"type": "whatif", "run_id": chat.run_id, "turn": 1, "window": 256})
    assert answer is not None and answer["ok"] is False, answer
    assert "reserve recorded for this turn (512 tokens) leaves no room in a window of 256" in answer["message"]
    fits = link.handle({"type": "whatif", "run_id": chat.run_id, "turn": 1, "window": 256, "reserve": 64})
    assert fits is not None and fits["ok"] is True, fits
    recorded_window = fits["recorded_settings"]["total_window"]
    too_big = link.handle({"type": "whatif", "run_id": chat.run_id, "turn": 1, "reserve": recorded_window + 5})
    assert too_big is not None and too_big["ok"] is False and "window recorded for this turn" in too_big["message"]


@pytest.mark.parametrize("field, value", [("old_path", 3), ("old_path", ["a.ipynb"]), ("root", 7),
                                          ("old_paths", "a.ipynb"), ("old_paths", [1, 2])])
def test_issue35_14_a_wrong_typed_path_field_is_refused(shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        field: str, value: Any) -> None:
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(tmp_path / "a.ipynb"))
    chat = open_chat(shell)
    before = chat.trace_path
    answer = ArcanaComm(magics(shell)).handle({"type": "path", "path": "b.ipynb", field: value, "request_id": 3})
    assert answer is not None and answer["ok"] is False and answer["request_id"] == 3, answer
    assert field in answer["message"] and "nothing moved" in answer["message"]
    assert chat.trace_path == before
