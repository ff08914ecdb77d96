"""``%arcana_pin``, ``%arcana_unpin`` and ``%arcana_memory list|add|forget|search`` in a real IPython
shell: with and without a session, bad input as one line, recorded as user actions, in the next
prompt and in the inspector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from arcana_jupyter import render
from tests.jupyter.conftest import MIME, magics, run_cell_magic, turn_outputs


class Recorder:
    """A FunctionProvider answer that keeps every prompt it was sent."""

    def __init__(self) -> None:
        self.prompts: list[list[str]] = []

    def __call__(self, request: Any) -> str:
        self.prompts.append([m.content or "" for m in request.messages])
        return "ok: " + (request.messages[-1].content or "")[-40:]


def line(ip: Any, magic: str, text: str = "") -> list[Any]:
    with capture_output() as captured:
        ip.run_line_magic(magic, text)
    return captured.outputs


def plain(outputs: list[Any]) -> str:
    return "\n".join(o.data.get("text/plain", "") for o in outputs)


def events(ip: Any) -> list[dict[str, Any]]:
    chat = magics(ip).entry(None).chat
    return [json.loads(x) for x in Path(chat.trace_path).read_text().splitlines()]


def usage(ip: Any, magic: str, text: str) -> str:
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic(magic, text)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


@pytest.fixture
def store_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home" / "memory.sqlite3"
    path.parent.mkdir()
    monkeypatch.setenv("ARCANA_MEMORY_PATH", str(path))
    return path


def test_memory_without_a_session_uses_the_notebooks_store(shell: Any, store_path: Path, tmp_path: Path) -> None:
    shown = plain(line(shell, "arcana_memory", "list"))
    assert "no memories yet" in shown and "%arcana_memory add KIND TEXT" in shown
    added = plain(line(shell, "arcana_memory", "add fact The quarterly report is due on Friday."))
    assert added.startswith("remembered m_") and "(fact, project)" in added and str(store_path) in added
    entry_id = added.split()[1]
    again = plain(line(shell, "arcana_memory", 'add fact "The quarterly report is due on Friday."'))
    assert again.startswith(f"already known, reinforced {entry_id}")
    line(shell, "arcana_memory", "add preference Answers in British English --scope global")
    listed = line(shell, "arcana_memory", "list")
    assert entry_id in plain(listed) and "British English" in plain(listed)
    assert "<script" not in listed[0].data["text/html"]
    found = plain(line(shell, "arcana_memory", "search quarterly report"))
    assert found.startswith(entry_id) and "British" not in found
    assert plain(line(shell, "arcana_memory", "search nothing-like-this")) == "no match"

    # the CLI sees what the magic stored: one store, one code path
    from arcana_jupyter.memory import MemoryStore, Scope

    with MemoryStore(store_path) as store:
        entries = {e.id: e for e in store.list_entries(Scope.for_project(tmp_path))}
    assert entries[entry_id].content == "The quarterly report is due on Friday."

    forgot = plain(line(shell, "arcana_memory", f"forget {entry_id}"))
    assert forgot.startswith(f"forgot {entry_id} (fact)")
    assert entry_id not in plain(line(shell, "arcana_memory", "list"))
    assert plain(line(shell, "arcana_memory", f"forget {entry_id}")) == f"{entry_id} was already forgotten"


CONTROLS = "\x1b\x07\u202e\x9b"


def test_issue35_16_memory_text_reaches_terminal_front_ends_escaped(shell: Any, store_path: Path,
                                                                    tmp_path: Path) -> None:
    """A memory holding ESC, BEL and U+202E: ``%arcana_memory list`` (and search) printed them raw into
    ``text/plain``, what terminal front ends (jupyter console) show; the CLI escapes them."""
    from arcana_jupyter.memory import MemoryStore, Scope

    with MemoryStore(store_path) as store:
        store.remember("fact", "Report \x1b]0;owned\x07due \u202eyadirf\x1b[2J", Scope.for_project(tmp_path))
    for words in ("list", "search report"):
        shown = plain(line(shell, "arcana_memory", words))
        assert "Report" in shown and not any(c in shown for c in CONTROLS), repr(shown)
        assert "\\x1b]0;owned\\x07due \\u202eyadirf" in shown
    added = plain(line(shell, "arcana_memory", "add fact Rings \x07 the bell"))
    assert "\x07" not in added
    # a turn's own text/plain too: the model's reply (here it repeats the input)
    from tests.jupyter.conftest import echo

    shell.user_ns["echo"] = echo
    line(shell, "arcana_chat", "--model fn:echo")
    turn = turn_outputs(run_cell_magic(shell, "", "paint it \x1b[31mred\x1b[0m \u202e"))[-1]
    assert "red" in turn.data["text/plain"] and not any(c in turn.data["text/plain"] for c in CONTROLS)


@pytest.mark.parametrize(("text", "expected"), [
    ("add facts The report is due.", "%arcana_memory add: unknown kind 'facts': one of fact, preference, decision, "
                                     "pattern, mistake, constraint"),
    ("add fact", "%arcana_memory add fact: the text is missing"),
    ("add", "%arcana_memory add: give a kind and the text"),
    ("add fact Due Friday --scope team", "%arcana_memory add: --scope must be project or global, got 'team'"),
    ("forget m_00000000000000aa", "%arcana_memory forget: no memory m_00000000000000aa in "),
    ("forget notanid", "%arcana_memory forget: 'notanid' is not a memory id (ids look like m_0123456789abcdef)"),
    ("forget", "%arcana_memory forget: give one memory id"),
    ("search", "%arcana_memory search: give what to look for"),
    ("list --kind fact", "%arcana_memory: unknown option --kind (options: --scope, --session)"),
    ("list extra words", "%arcana_memory list takes no words"),
])
def test_bad_memory_lines_are_one_clear_line(shell: Any, store_path: Path, text: str, expected: str) -> None:
    assert usage(shell, "arcana_memory", text).startswith(expected)


def test_memory_added_in_a_session_is_recorded_and_in_the_next_digest(shell: Any, store_path: Path) -> None:
    model = Recorder()
    shell.user_ns["rec"] = model
    line(shell, "arcana_chat", "--model fn:rec --memory --window 4000 --reserve 400")
    empty = plain(line(shell, "arcana_memory", ""))
    assert "nothing recalled or written yet" in empty and "%arcana_memory add KIND TEXT" in empty
    run_cell_magic(shell, "", "hello")
    assert not any("quarterly" in text for text in model.prompts[-1])
    added = plain(line(shell, "arcana_memory", "add decision The quarterly report uses the new template."))
    assert "in the prompt's memory digest from the next call" in added
    entry_id = added.split()[1]
    outputs = run_cell_magic(shell, "", "which template?")
    digest = [text for text in model.prompts[-1] if "## Memory from earlier sessions" in text]
    assert digest and "The quarterly report uses the new template." in digest[0] and entry_id in digest[0]
    # the bundled-model rule: the digest names no tool the model is not offered (fn: models are offered them)
    bundle = turn_outputs(outputs)[-1].data[MIME]
    listed = [m for m in bundle["memories"] if m.get("via") == "digest"]
    assert [m["id"] for m in listed] == [entry_id] and listed[0]["kind"] == "decision"
    html = render.turn_html(bundle)
    assert "in the digest" in html and "The quarterly report uses the new template." in html

    line(shell, "arcana_memory", f"forget {entry_id}")
    run_cell_magic(shell, "", "and now?")
    assert not any("new template" in text for text in model.prompts[-1])
    actions = [e["metadata"] for e in events(shell) if e["event_type"] == "user_action"]
    assert [(a["action"], a["via"], a["target"], a["ok"]) for a in actions] == [
        ("memory_add", "magic", entry_id, True), ("memory_forget", "magic", entry_id, True)]
    writes = [e["metadata"]["op"] for e in events(shell) if e["event_type"] == "memory_write"]
    assert "remember" in writes and "forget" in writes


def test_pin_and_unpin_from_the_notebook(shell: Any) -> None:
    model = Recorder()
    shell.user_ns["rec"] = model
    line(shell, "arcana_chat", "--model fn:rec --window 4000 --reserve 400")
    assert usage(shell, "arcana_pin", "").startswith("%arcana_pin: give the text to pin")
    assert usage(shell, "arcana_pin", "x --until-turn soon") == (
        "%arcana_pin: --until-turn must be a turn number, got 'soon'")
    assert usage(shell, "arcana_pin", "x --colour red").startswith("%arcana_pin: unknown option --colour")
    assert usage(shell, "arcana_pin", "x --label").startswith("%arcana_pin: --label needs a value")
    shown = plain(line(shell, "arcana_pin", 'The budget is <b>120k</b> EUR. --label "budget cap" --until-turn 3'))
    assert shown.startswith("pinned p_") and "“budget cap”" in shown and "until turn 3" in shown
    pin_id = shown.split()[1]
    outputs = run_cell_magic(shell, "", "what is the budget?")
    assert any("The budget is <b>120k</b> EUR." in text for text in model.prompts[-1])
    bundle = turn_outputs(outputs)[-1].data[MIME]
    assert [p["pin_id"] for p in bundle["pins"]] == [pin_id] and bundle["pins"][0]["label"] == "budget cap"
    html = turn_outputs(outputs)[-1].data["text/html"]
    assert "budget cap" in html and "&lt;b&gt;120k&lt;/b&gt;" in html and "<b>120k</b>" not in html
    assert pin_id in plain(line(shell, "arcana_pins", ""))
    assert usage(shell, "arcana_unpin", "p_nothere") == (
        f"%arcana_unpin: no active pin 'p_nothere' (active pins: {pin_id})")
    assert usage(shell, "arcana_unpin", "").startswith("%arcana_unpin: give one pin id")
    assert plain(line(shell, "arcana_unpin", pin_id)).startswith(f"unpinned {pin_id}")
    run_cell_magic(shell, "", "and now?")
    assert not any("120k" in text for text in model.prompts[-1][:-1])
    actions = [e["metadata"] for e in events(shell) if e["event_type"] == "user_action"]
    assert [(a["action"], a["via"], a["target"], a["ok"]) for a in actions] == [
        ("pin", "magic", pin_id, True), ("unpin", "magic", pin_id, True)]
    assert actions[0]["args"] == {"content": "The budget is <b>120k</b> EUR.", "label": "budget cap", "until_turn": 3}


def test_pin_needs_a_session(shell: Any) -> None:
    assert usage(shell, "arcana_pin", "something").startswith("no arcana session yet")
