"""User actions made outside the notebook's code (the inspector's comm) are recorded and replayed by
``report --verify``; a turn that does not reproduce says which one and the first message that differs."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from arcana_jupyter.context.rebuild import TurnVerifier
from arcana_jupyter.report.verify import verify_notebook
from arcana_jupyter.trace.reader import TraceReader

KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}

MODEL = '''def model(request):
    last = request.messages[-1]
    if last.role == "tool":
        return "Noted the task."
    text = (last.content or "").split("\\n\\n")[-1]
    if "track" in text:
        return {"tool": "create_task", "args": {"title": "Write the budget memo", "description": "due Friday"}}
    return "Reply to: " + text'''

CELLS = [
    "%load_ext arcana_jupyter",
    MODEL,
    "%arcana_chat --model fn:model --window 6000 --reserve 500 --primitives pin",
    "import arcana_jupyter.jupyter as aj\naj.session().pin('The deadline is 30 June.', label='deadline')",
    "%%arcana\nPlease track a task: the budget memo.",
    # <- here the person presses unpin and retract in the inspector (comm messages, no cell)
    "%%arcana\nWhat is left to do?",
    "%%arcana\nAnd the deadline?",
]
ACTIONS_AFTER = 4
"""The index of the cell after which the inspector's buttons are pressed."""


def _events(trace: Path) -> list[dict[str, Any]]:
    """The run's events as a reader gives them (a chained decision resolved: unchanged inputs filled in)."""
    from arcana_jupyter.trace.reader import TraceReader

    return [e.model_dump() for e in TraceReader(trace.parent).events(trace.stem)]


def _comm(client: NotebookClient, data: dict[str, Any]) -> None:
    """What the JupyterLab extension sends: a comm_open to target ``arcana`` carrying one message."""
    msg = client.kc.session.msg("comm_open", {"comm_id": uuid.uuid4().hex, "target_name": "arcana", "data": data})
    client.kc.shell_channel.send(msg)


def run_with_inspector_actions(path: Path, actions: tuple[str, ...] = ("unpin", "retract"),
                               after: int = ACTIONS_AFTER, forget_cell: int | None = None) -> None:
    """Execute the notebook cell by cell with nbclient; after cell ``after`` press the inspector's
    ``actions`` (comm messages from the client, as the extension sends them). ``forget_cell``: that
    cell's ``{}`` is filled with the id of the memory the session added last (known only then)."""
    nb = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "ARCANA_REPLAY_RUNS"}
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel(env={**env, "ARCANA_NOTEBOOK": str(path)}, cwd=str(path.parent)):
        for index, cell in enumerate(nb.cells):
            if index == forget_cell:
                [trace] = (path.parent / f"{path.stem}.arcana").glob("r_*.jsonl")
                added = [e["metadata"]["target"] for e in _events(trace) if e["event_type"] == "user_action"
                         and e["metadata"]["action"] == "memory_add"]
                cell.source = cell.source.format(added[-1])
            client.execute_cell(cell, index)
            if index == after:
                [trace] = (path.parent / f"{path.stem}.arcana").glob("r_*.jsonl")
                events = _events(trace)
                run_id = events[0]["run_id"]
                targets = {
                    "unpin": next(e["metadata"]["result"]["pin_id"] for e in events
                                  if e["event_type"] == "cognitive_primitive"),
                    "retract": next((e["metadata"]["object_id"] for e in events if e["event_type"] == "context_action"
                                     and e["metadata"]["action"] == "create_task"), None),
                }
                for action in actions:
                    _comm(client, {"type": "action", "action": action, "target": targets[action], "run_id": run_id,
                                   "agent": "main"})
    nbformat.write(nb, path)


def test_inspector_unpin_and_retract_are_replayed_by_verify(tmp_path: Path) -> None:
    path = tmp_path / "tour.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS], metadata=KERNEL),
                   path)
    run_with_inspector_actions(path)
    [trace] = (tmp_path / "tour.arcana").glob("r_*.jsonl")
    events = _events(trace)
    actions = [e for e in events if e["event_type"] == "user_action"]
    assert [(a["metadata"]["action"], a["metadata"]["via"]) for a in actions] == [
        ("pin", "python"), ("unpin", "inspector"), ("retract", "inspector")]
    assert all(a["metadata"]["ok"] for a in actions)
    decisions = [e for e in events if e["event_type"] == "context_decision"]
    later = [d for d in decisions if d["turn"] == 2]
    assert later and later[0]["metadata"]["inputs"]["pins"] == []  # the unpin took effect
    assert "Write the budget memo" not in json.dumps(later[0]["metadata"]["inputs"]["sections"])

    # the trace alone rebuilds every prompt (the recorded inputs hold the actions' effects)
    reader = TraceReader(tmp_path / "tour.arcana")
    run_id = events[0]["run_id"]
    verifier = TurnVerifier(reader, run_id, "main")
    for turn in reader.replay_turns(run_id, "main"):
        for step in reader.replay_prompt(run_id, turn, "main").steps:  # type: ignore[union-attr]
            outcome = verifier.verify(reader.replay_prompt(run_id, turn, "main", step=step))  # type: ignore[arg-type]
            assert outcome[0] is True if isinstance(outcome, tuple) else outcome.verified

    result = verify_notebook(path)
    assert result.ok, result.summary() + "\n" + "\n".join(c.note for c in result.checks)
    assert result.summary().startswith("reproduced: 3 of 3 turn(s)")

    # a trace without the record of the inspector's actions (as before they were recorded): verify
    # fails, and says which turn and which message differs, not only how many turns
    trace.write_text("".join(line + "\n" for line in trace.read_text().splitlines()
                             if '"event_type": "user_action"' not in line and '"event_type":"user_action"' not in line))
    failed = verify_notebook(path)
    assert not failed.ok
    summary = failed.summary()
    assert summary.startswith("NOT reproduced: 1 of 3 turn(s)")
    assert f"first not reproduced: main turn 2 (run {run_id}): call 1 of the turn, message" in summary
    check = next(c for c in failed.checks if not c.ok)
    assert check.turn == 2 and check.difference.startswith("call 1 of the turn, message 0 (system): content changed")
    assert "+The deadline is 30 June." in check.difference  # the pin the inspector had taken out
    assert check.why() in summary


MEMORY_CELLS = [
    "%load_ext arcana_jupyter",
    MODEL,
    # a memory stored before any session (the notebook's store), then a session that gets it
    "%arcana_memory add fact The quarterly report is due on Friday.",
    "%arcana_chat --model fn:model --window 6000 --reserve 500 --memory",
    "%arcana_pin The budget is 120k EUR. --label budget",
    "%%arcana\nPlease track a task: the budget memo.",
    # <- the inspector's unpin here
    "%arcana_memory add decision The memo uses the new template.",
    "%%arcana\nWhich template?",
    "%arcana_memory forget {}",
    "%%arcana\nAnything else?",
]


def test_magics_and_inspector_actions_with_memory_verify(tmp_path: Path, monkeypatch: Any) -> None:
    store = tmp_path / "home" / "memory.sqlite3"
    store.parent.mkdir()
    monkeypatch.setenv("ARCANA_MEMORY_PATH", str(store))
    path = tmp_path / "memo.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in MEMORY_CELLS],
                                            metadata=KERNEL), path)
    # the forget cell gets the id the add printed (as a person would copy it)
    run_with_inspector_actions(path, actions=("unpin",), after=5, forget_cell=8)
    [trace] = (tmp_path / "memo.arcana").glob("r_*.jsonl")
    events = _events(trace)
    actions = [(e["metadata"]["action"], e["metadata"]["via"]) for e in events if e["event_type"] == "user_action"]
    assert actions == [("pin", "magic"), ("unpin", "inspector"), ("memory_add", "magic"), ("memory_forget", "magic")]
    decisions = [e for e in events if e["event_type"] == "context_decision"]
    digests = {d["turn"]: next(s for s in d["metadata"]["inputs"]["sections"] if s["name"] == "memory_digest")
               for d in decisions}
    assert "due on Friday" in digests[1]["content"] and "new template" not in digests[1]["content"]
    assert "new template" in digests[2]["content"] and "new template" not in digests[3]["content"]
    assert sorted(e["kind"] for e in digests[2]["entries"]) == ["decision", "fact"]  # what the inspector lists
    result = verify_notebook(path)
    assert result.ok, result.summary() + "\n" + "\n".join(c.note for c in result.checks)
    assert result.summary().startswith("reproduced: 3 of 3 turn(s)")
