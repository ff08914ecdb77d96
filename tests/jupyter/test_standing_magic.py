"""``%arcana_standing``: the standing instructions from a cell — list (with the turn each was given), add,
retract, remember (into long-term memory, so the next notebook starts with it) — in a real IPython shell
and in notebooks executed by nbclient, recorded as ``user_action`` events; ``report --verify`` re-runs
the cells (and applies the inspector's actions again) and reproduces every turn."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from nbclient import NotebookClient

from arcana_jupyter.memory import MemoryStore, Scope
from arcana_jupyter.report.verify import verify_notebook
from tests.jupyter.conftest import magics, run_cell_magic

KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}


class Recorder:
    """A FunctionProvider answer that keeps every prompt it was sent."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        self.systems: list[str] = []

    def __call__(self, request: Any) -> str:
        self.prompts.append("\n".join(m.content or "" for m in request.messages))
        self.systems.append(request.messages[0].content or "")
        return "noted"


def standing_block(prompt: str) -> str:
    """The standing section as the shaped prompt holds it (under its heading in the system message)."""
    return prompt.split("## standing\n", 1)[1].split("\n\n## ", 1)[0]


def line(ip: Any, text: str) -> str:
    with capture_output() as captured:
        ip.run_line_magic("arcana_standing", text)
    return "\n".join(o.data.get("text/plain", "") for o in captured.outputs)


def usage(ip: Any, text: str) -> str:
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("arcana_standing", text)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def start(shell: Any, flags: str = "") -> Recorder:
    model = Recorder()
    shell.user_ns["rec"] = model
    shell.run_line_magic("arcana_chat", f"--model fn:rec --window 4000 --reserve 400 {flags}".strip())
    return model


def test_said_added_listed_retracted(shell: Any) -> None:
    model = start(shell)
    assert line(shell, "list") == "no standing instructions yet"
    run_cell_magic(shell, "", "Hi! Can't wait to start.")
    run_cell_magic(shell, "", "Answer in French from now on, I'm practising. What's a good first table?")
    added = line(shell, "add Keep every total in EUR --kind constraint")
    assert added.startswith("added s_2 (constraint): in every prompt from the next call on")
    run_cell_magic(shell, "", "Thanks.")
    assert "- (s_1, turn 2) Answer in French from now on, I'm practising." in model.prompts[-1]
    assert "- (s_2, turn 3) Keep every total in EUR" in model.prompts[-1]
    listed = line(shell, "")  # list is the default
    assert listed.splitlines() == [
        "s_1 [instruction, from turn 2, by you (said), in full] Answer in French from now on, I'm practising.",
        "s_2 [constraint, from turn 3, by you (added), in full] Keep every total in EUR",
    ]
    assert line(shell, "add keep every total in EUR!").startswith("s_2 already says this: nothing added")
    assert line(shell, "retract s_1").startswith("retracted s_1: out of the prompt from the next call on")
    run_cell_magic(shell, "", "Which table next?")
    assert standing_block(model.systems[-1]).splitlines()[1:] == ["- (s_2, turn 3) Keep every total in EUR"]
    chat = magics(shell).entry(None).chat
    rows = [json.loads(x) for x in Path(chat.trace_path).read_text().splitlines()]
    assert [(r["metadata"]["action"], r["metadata"]["via"], r["metadata"].get("target"))
            for r in rows if r["event_type"] == "user_action"] == [
        ("standing_add", "magic", "s_2"), ("standing_add", "magic", "s_2"), ("retract", "magic", "s_1")]
    with capture_output() as captured:
        shell.run_line_magic("arcana_standing", "list")
    html = captured.outputs[0].data["text/html"]
    assert "Keep every total in EUR" in html and "<script" not in html and ">3<" in html


def test_the_listing_says_which_items_no_rule_kept(shell: Any) -> None:
    # the recorder's every reply is "noted": a lasting acknowledgement of what the rules leave as a request
    start(shell)
    run_cell_magic(shell, "", "The loader is slow. Keep the explanations short, two paragraphs at most.")
    run_cell_magic(shell, "", "Morning! Plain ASCII in commit messages. What should the release script do first?")
    assert line(shell, "list").splitlines() == [
        "s_1 [instruction, from turn 1, by you (said; the reply took it up), in full] Keep the explanations short, "
        "two paragraphs at most.",
        "s_2 [constraint, from turn 2, by you (said; read by the learned reader), in full] Plain ASCII in commit "
        "messages.",
    ]


def test_text_in_the_listing_is_escaped(shell: Any) -> None:
    start(shell)
    line(shell, 'add "Always wrap <b>names</b> & <script>x</script> in quotes"')
    with capture_output() as captured:
        shell.run_line_magic("arcana_standing", "list")
    html = captured.outputs[0].data["text/html"]
    assert "<script>x" not in html and "&lt;script&gt;x&lt;/script&gt;" in html and "&lt;b&gt;" in html


@pytest.mark.parametrize(("text", "expected"), [
    ("add", "%arcana_standing add: the text is missing"),
    ("add Be brief --kind rule", "%arcana_standing add: unknown kind 'rule': one of instruction, preference, "
                                 "constraint"),
    ("retract", "%arcana_standing retract: give one id"),
    ("retract s_9", "%arcana_standing retract: no standing instruction 's_9' (standing: none)"),
    ("remember s_1 s_2", "%arcana_standing remember: give one id"),
    ("forget s_1", "%arcana_standing: unknown action 'forget'; %arcana_standing list"),
    ("list --kind x", "%arcana_standing: --kind goes with add"),
    ("retract s_1 --scope global", "%arcana_standing: --scope goes with remember"),
    ("list extra", "%arcana_standing list takes no words"),
])
def test_bad_lines_are_one_clear_line(shell: Any, text: str, expected: str) -> None:
    start(shell)
    assert usage(shell, text).startswith(expected)


def test_remember_needs_memory_and_a_live_item(shell: Any) -> None:
    start(shell)
    line(shell, "add Answer in British English")
    assert "long-term memory is off in this session" in usage(shell, "remember s_1")
    line(shell, "retract s_1")
    assert usage(shell, "remember s_1") == "%arcana_standing remember: s_1 was retracted at turn 1"
    shell.user_ns["rec2"] = Recorder()
    shell.run_line_magic("arcana_chat", "--model fn:rec2 --classic --name plain")
    assert "classic mode" in usage(shell, "list --session plain")


# ---- notebooks: verify, and the memory across two notebooks ---------------------------------------------

MODEL = "def model(request):\n    return 'ok: ' + (request.messages[-1].content or '')[-40:]"


def execute(path: Path, inspector: list[dict[str, Any]] | None = None, after: int = -1) -> None:
    """Execute with nbclient; after cell ``after`` send the inspector's ``inspector`` actions over the
    ``arcana`` comm (what the JupyterLab extension sends), targets as given (run_id filled in)."""
    nb = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "ARCANA_REPLAY_RUNS"}
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel(env={**env, "ARCANA_NOTEBOOK": str(path)}, cwd=str(path.parent)):
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
            if index == after and inspector:
                [trace] = (path.parent / f"{path.stem}.arcana").glob("r_*.jsonl")
                run_id = json.loads(trace.read_text().splitlines()[0])["run_id"]
                for data in inspector:
                    msg = client.kc.session.msg("comm_open", {"comm_id": uuid.uuid4().hex, "target_name": "arcana",
                                                              "data": {**data, "run_id": run_id, "agent": "main"}})
                    client.kc.shell_channel.send(msg)
    nbformat.write(nb, path)


def notebook(path: Path, cells: list[str]) -> Path:
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells], metadata=KERNEL),
                   path)
    return path


def user_actions(path: Path) -> list[tuple[str, str, str | None]]:
    [trace] = (path.parent / f"{path.stem}.arcana").glob("r_*.jsonl")
    rows = [json.loads(x) for x in trace.read_text().splitlines()]
    return [(r["metadata"]["action"], r["metadata"]["via"], r["metadata"].get("target"))
            for r in rows if r["event_type"] == "user_action"]


def test_a_notebook_using_the_standing_magic_verifies(tmp_path: Path) -> None:
    path = notebook(tmp_path / "shop.ipynb", [
        "%load_ext arcana_jupyter",
        MODEL,
        "%arcana_chat --model fn:model --window 1024",
        "%%arcana\nUse 4 spaces for indentation in every snippet you write.",
        "%arcana_standing add Keep every total in EUR --kind constraint",
        "%%arcana\nWrite the export.",
        "%%arcana\nActually, switch to tabs for indentation; the editor config wants them now.",
        "%arcana_standing retract s_2",
        "%%arcana\nAnd the nightly job?",
        "%arcana_standing list",
    ])
    execute(path)
    listed = nbformat.read(path, as_version=4).cells[-1].outputs[0]["data"]["text/plain"]
    assert listed == ("s_3 [instruction, from turn 3, by you (said), in full] Actually, switch to tabs for "
                      "indentation; the editor config wants them now.")
    assert user_actions(path) == [("standing_add", "magic", "s_2"), ("retract", "magic", "s_2")]
    result = verify_notebook(path)
    assert result.ok, (result.summary(), result.errors, [c.note for c in result.checks])
    assert len(result.checks) == 4


def test_a_standing_preference_kept_in_memory_starts_the_next_notebook(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The offer, confirmed: notebook 1 says a preference, the magic keeps it (and the inspector's button keeps
    another) in the real SQLite store; notebook 2, a new kernel in the same project, starts with both in its
    memory digest. Notebook 1 still verifies (its memory a sandbox copy; the inspector's remember applied
    again at the point it was pressed)."""
    store = tmp_path / "home" / "memory.sqlite3"
    store.parent.mkdir()
    monkeypatch.setenv("ARCANA_MEMORY_PATH", str(store))
    first = notebook(tmp_path / "one.ipynb", [
        "%load_ext arcana_jupyter",
        MODEL,
        "%arcana_chat --model fn:model --window 4000 --memory",
        "%%arcana\nI prefer pytest over unittest, plain asserts are easier to read. Write the tests.",
        "%arcana_standing remember s_1",
        "%%arcana\nNever put emojis in your answers, they look odd in my notes.",
        # <- the inspector's remember button, on s_2
        "%%arcana\nAnything else?",
    ])
    execute(first, inspector=[{"type": "action", "action": "remember", "target": "s_2"}], after=5)
    actions = user_actions(first)
    assert [(a, v) for a, v, _ in actions] == [("memory_add", "magic"), ("memory_add", "inspector")]
    with MemoryStore(store) as memory:
        entries = {e.content: e for e in memory.list_entries(Scope.for_project(tmp_path))}
    assert entries["I prefer pytest over unittest, plain asserts are easier to read."].kind == "preference"
    assert entries["Never put emojis in your answers, they look odd in my notes."].kind == "preference"
    nb = nbformat.read(first, as_version=4)
    bundle = [o for o in nb.cells[6].outputs if "application/vnd.arcana.turn+json" in o.get("data", {})][-1]
    standing = bundle["data"]["application/vnd.arcana.turn+json"]["standing"]
    assert [(s["id"], s.get("memory_id") is not None) for s in standing] == [("s_1", True), ("s_2", True)]

    second = notebook(tmp_path / "two.ipynb", [
        "%load_ext arcana_jupyter",
        "seen = []\ndef model(request):\n    seen.append(request.messages[0].content)\n    return 'ok'",
        "%arcana_chat --model fn:model --window 4000 --memory",
        "%%arcana\nWrite the tests for the export.",
        "print(seen[0])",
    ])
    execute(second)
    printed = nbformat.read(second, as_version=4).cells[-1].outputs[0]["text"]
    assert "I prefer pytest over unittest, plain asserts are easier to read." in printed
    assert "Never put emojis in your answers" in printed

    result = verify_notebook(first)
    assert result.ok, (result.summary(), result.errors, [c.note for c in result.checks])
    assert len(result.checks) == 3
