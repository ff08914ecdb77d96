"""``%arcana_context``: what the inspector's "Adaptive context" acts on, from a cell — add a constraint,
task, decision or note, list them (id, kind, tier, the turn each came from, who made it), retract by id,
undo, hydrate — in a real IPython shell, recorded as ``user_action`` events, in the next prompt; and
``report --verify`` re-runs the cells and reproduces every turn. ``aj.session()`` from the package root."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from arcana_jupyter.report.verify import verify_notebook
from tests.jupyter.conftest import magics, run_cell_magic


class Recorder:
    """A FunctionProvider answer that keeps every prompt it was sent."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, request: Any) -> str:
        self.prompts.append("\n".join(m.content or "" for m in request.messages))
        return "noted"


def line(ip: Any, text: str) -> str:
    with capture_output() as captured:
        ip.run_line_magic("arcana_context", text)
    return "\n".join(o.data.get("text/plain", "") for o in captured.outputs)


def usage(ip: Any, text: str) -> str:
    with pytest.raises(UsageError) as caught:
        ip.run_line_magic("arcana_context", text)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def user_actions(ip: Any) -> list[tuple[str, str, str | None, bool]]:
    chat = magics(ip).entry(None).chat
    rows = [json.loads(x) for x in Path(chat.trace_path).read_text().splitlines()]
    return [(r["metadata"]["action"], r["metadata"]["via"], r["metadata"].get("target"), r["metadata"]["ok"])
            for r in rows if r["event_type"] == "user_action"]


def start(shell: Any) -> Recorder:
    model = Recorder()
    shell.user_ns["rec"] = model
    shell.run_line_magic("arcana_chat", "--model fn:rec --window 4000 --reserve 400")
    return model


def test_add_list_retract_undo_and_hydrate(shell: Any) -> None:
    model = start(shell)
    assert line(shell, "list") == "no working-memory objects yet"
    added = line(shell, 'add constraint "Keep the total under 600 EUR" --why the client said so')
    assert added.startswith("added s_1 (constraint, active)")
    run_cell_magic(shell, "", "Plan a weekend in Porto.")
    assert "Keep the total under 600 EUR" in model.prompts[-1] and "the client said so" in model.prompts[-1]
    assert line(shell, "add task Book the hotel").startswith("added s_2 (task, active)")
    line(shell, "add decision Stay in Ribeira")
    line(shell, "add note Ana is vegetarian")
    shown = line(shell, "list")
    assert shown.splitlines() == [
        "s_1 [constraint, active, from turn 1, by you] Keep the total under 600 EUR",
        "s_2 [task, active, from turn 2, by you] Book the hotel",
        "s_3 [decision, active, from turn 2, by you] Stay in Ribeira",
        "s_4 [note, active, from turn 2, by you] Ana is vegetarian",
    ]
    assert line(shell, "") == shown  # list is the default
    assert line(shell, "retract s_3").startswith("retracted s_3 (decision): out of the prompt")
    assert line(shell, "undo").startswith("retracted s_4 (note)")  # the last one still live
    run_cell_magic(shell, "", "And the restaurants?")
    assert "Stay in Ribeira" not in model.prompts[-1] and "vegetarian" not in model.prompts[-1]
    assert "Book the hotel" in model.prompts[-1]
    assert [r.split(" [")[0] for r in line(shell, "list").splitlines()] == ["s_1", "s_2"]

    chat = magics(shell).entry(None).chat
    for turn in range(3):  # idle turns: the task goes soft, then hard; the constraint is standing: it stays
        run_cell_magic(shell, "", f"Something else {turn}.")
    assert chat.engine.get("s_1").tier == "active" and chat.engine.get("s_1").standing == "constraint"
    assert "Keep the total under 600 EUR (why: the client said so)" in model.prompts[-1]
    tier = chat.engine.get("s_2").tier
    assert tier in ("soft", "hard")
    assert line(shell, "hydrate s_2") == (f"hydrated s_2 (task): back in the active tier, in full, from the "
                                          f"next call (it was {tier})")
    assert chat.engine.get("s_2").tier == "active"
    assert user_actions(shell) == [
        ("context_add", "magic", "s_1", True), ("context_add", "magic", "s_2", True),
        ("context_add", "magic", "s_3", True), ("context_add", "magic", "s_4", True),
        ("retract", "magic", "s_3", True), ("retract", "magic", "s_4", True), ("hydrate", "magic", "s_2", True)]


def test_objects_the_model_made_say_so_and_can_be_retracted(shell: Any) -> None:
    start(shell)
    chat = magics(shell).entry(None).chat
    chat.engine.create_task("Compare three hotels", turn=0)  # as the model's create_task tool does
    assert line(shell, "list") == "s_1 [task, active, from turn 1, by model] Compare three hotels"
    assert "nothing of yours to undo" in usage(shell, "undo")
    assert line(shell, "retract s_1").startswith("retracted s_1 (task)")


@pytest.mark.parametrize(("text", "expected"), [
    ("add", "%arcana_context add: give a kind (constraint|task|decision|note) and the text"),
    ("add rule Be brief", "%arcana_context add: give a kind (constraint|task|decision|note) and the text (got 'rule')"),
    ("add constraint", "%arcana_context add constraint: the text is missing"),
    ("retract", "%arcana_context retract: give one object id"),
    ("retract s_9", "%arcana_context retract: no object 's_9' (objects: none)"),
    ("hydrate s_1 s_2", "%arcana_context hydrate: give one object id"),
    ("forget s_1", "%arcana_context: unknown action 'forget'; %arcana_context add constraint|task|decision|note"),
    ("list --why x", "%arcana_context: --why goes with add"),
    ("add note x --kind y", "%arcana_context: unknown option --kind (options: --session)"),
    ("undo", "%arcana_context undo: nothing of yours to undo"),
])
def test_bad_lines_are_one_clear_line(shell: Any, text: str, expected: str) -> None:
    start(shell)
    assert usage(shell, text).startswith(expected)


def test_a_retracted_object_says_so_and_classic_mode_has_none(shell: Any) -> None:
    start(shell)
    line(shell, "add constraint Be brief")
    line(shell, "retract s_1")
    assert usage(shell, "retract s_1") == "%arcana_context retract: s_1 was already retracted at turn 1"
    shell.user_ns["rec2"] = Recorder()
    shell.run_line_magic("arcana_chat", "--model fn:rec2 --classic --name plain")
    assert "classic mode" in usage(shell, "add constraint Be brief --session plain")
    with pytest.raises(UsageError, match="no arcana session named 'nope'"):
        shell.run_line_magic("arcana_context", "list --session nope")


def test_the_package_root_gives_the_session(shell: Any) -> None:
    """``import arcana_jupyter as aj; aj.session()``: the session behind ``%%arcana``, from the root, with
    the three calls the README names (``chat.pin(...)``, ``chat.add_context("constraint", ...)``,
    ``chat.retract(id)``) as written there, each in the next prompt (or out of it) and recorded."""
    import arcana_jupyter as aj

    model = start(shell)
    chat = aj.session()
    assert chat is magics(shell).entry(None).chat
    assert chat.add_context("constraint", "Answer in English")["id"] == "s_1"
    pinned = chat.pin("The budget is 600 EUR")
    assert pinned["pinned"] is True
    run_cell_magic(shell, "", "Plan a weekend in Porto.")
    assert "Answer in English" in model.prompts[-1] and "The budget is 600 EUR" in model.prompts[-1]
    assert chat.retract("s_1")["ok"] is not False
    run_cell_magic(shell, "", "And the restaurants?")
    assert "Answer in English" not in model.prompts[-1] and "The budget is 600 EUR" in model.prompts[-1]
    assert user_actions(shell) == [("context_add", "python", "s_1", True), ("pin", "python", pinned["pin_id"], True),
                                   ("retract", "python", "s_1", True)]


def test_a_notebook_using_the_context_magic_verifies(tmp_path: Path) -> None:
    from tests.jupyter.test_verify_notebook import KERNEL, execute

    cells = [
        "%load_ext arcana_jupyter",
        "def model(request):\n    return 'ok: ' + request.messages[-1].content[:40]",
        "%arcana_chat --model fn:model --window 3000 --reserve 300",
        "%arcana_context add constraint Keep the total under 600 EUR --why the client's budget",
        "%%arcana\nPlan a weekend in Porto.",
        "%arcana_context add task Book the hotel",
        "%arcana_context add note Ana is vegetarian",
        "%%arcana\nWhere do we eat?",
        "%arcana_context undo",
        "%arcana_context retract s_1",
        "%%arcana\nAnything else?",
        "%arcana_context list",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells], metadata=KERNEL)
    path = tmp_path / "porto.ipynb"
    nbformat.write(nb, path)
    execute(path)
    listed = nbformat.read(path, as_version=4).cells[-1].outputs[0]["data"]["text/plain"]
    assert listed == "s_2 [task, active, from turn 2, by you] Book the hotel"
    result = verify_notebook(path)
    assert result.ok, (result.summary(), result.errors, [c.note for c in result.checks])
    assert len(result.checks) == 3


def test_the_banner_says_memory_is_on_and_which_store(shell: Any, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "mem.sqlite3"
    monkeypatch.setenv("ARCANA_MEMORY_PATH", str(store))
    shell.user_ns["rec"] = Recorder()
    with capture_output() as captured:
        shell.run_line_magic("arcana_memory", "add preference Answer in two sentences.")
        shell.run_line_magic("arcana_chat", "--model fn:rec --memory --window 4000 --reserve 400")
        shell.run_line_magic("arcana_chat", "--model fn:rec --window 4000 --reserve 400 --name plain")
    banners = [o.data["text/plain"] for o in captured.outputs if "arcana session" in o.data.get("text/plain", "")]
    assert (f"memory on: SQLite store {store} (1 memory in the prompt's digest; %arcana_memory list shows the "
            "store)") in banners[0].splitlines()
    assert "memory on" not in banners[1]


def test_the_banner_names_a_postgresql_store_with_its_password_masked() -> None:
    """The PostgreSQL branch of the banner's memory line: the store named, the password never shown."""
    from types import SimpleNamespace

    from arcana_jupyter.jupyter.magics import memory_line

    store = SimpleNamespace(backend="postgresql", path="postgresql://ada:very-secret-pw@db.example:5432/arcana")
    digest = SimpleNamespace(items=[1, 2])
    line = memory_line(SimpleNamespace(memory=SimpleNamespace(store=store, digest=digest)))
    assert line == ("memory on: PostgreSQL store postgresql://ada:[REDACTED]@db.example:5432/arcana (2 memories in "
                    "the prompt's digest; %arcana_memory list shows the store)")
    assert "very-secret-pw" not in line
    assert memory_line(SimpleNamespace(memory=None)) == ""
