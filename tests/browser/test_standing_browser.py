"""Standing instructions in a real JupyterLab (Debian chromium): the user says once "answer in French from
now on"; a later turn's inspector lists it under "Standing instructions" with the turn it was given (and the
prompt as sent holds it, though the 1k window has long dropped that turn); the inspector's retract button
takes it out, the next turn's inspector and prompt no longer have it; a rule the rules do not know ("Plain
ASCII in commit messages.") is kept by the learned reader and listed too, and so is a request the model's
reply takes up as lasting ("Understood, I'll keep to that from now on."); ``arcana report --verify``
reproduces every turn (the retract is replayed where it was pressed).

Screenshot: test-artifacts/browser/standing-inspector.png.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import shot
from .helpers import open_new_notebook, run_cell

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MODEL = """def model(request):
    said = request.messages[-1].content or ""
    if "two paragraphs at most" in said:
        return "Understood, I'll keep to that from now on."
    return "D'accord. " + said[-60:]"""
SHORT = "Keep the explanations short, two paragraphs at most."
NOTES = ("Here are my notes on the shop: the back room holds the frames, the wheels and the tubes, and the stock "
         "counts change every week. ") * 6


def run_last(page, source: str) -> int:
    """Run ``source`` in the notebook's last (empty) cell: clicking an inspector makes its cell the active one."""
    page.evaluate("() => { const c = window.jupyterapp.shell.currentWidget.content;"
                  " c.activeCellIndex = c.widgets.length - 1; }")
    return run_cell(page, source)


def test_the_standing_instruction_is_listed_with_its_turn_retracted_by_the_button_and_verifies(
        page, lab_root: Path) -> None:
    open_new_notebook(page, lab_root / "standing.ipynb")
    notebook = page.locator(".jp-NotebookPanel:visible")
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, MODEL)
    run_cell(page, "%arcana_chat --model fn:model --window 1024")
    run_cell(page, "%%arcana\nHi! I'm writing the inventory API for my brother's bike shop. Can't wait.")
    run_cell(page, "%%arcana\nAnswer in French from now on, I'm practising before the move to Lyon.")
    # turn 3 says a rule the rules do not know; the learned reader (the default relevance's model) keeps it
    run_cell(page, f"%%arcana\nPart 1. {NOTES} Plain ASCII in commit messages.")
    # turn 4 asks for something the rules read as a request for one turn; the reply takes it up as lasting
    run_cell(page, f"%%arcana\nPart 2. {NOTES} {SHORT}")
    run_cell(page, f"%%arcana\nPart 3. {NOTES}")
    index = run_cell(page, "%%arcana\nWhat should the first table look like?")
    turn = notebook.locator(".jp-Cell").nth(index).locator(".jp-RenderedArcanaTurn")
    turn.locator(".arcana-summary").click()
    section = turn.locator(".arcana-standing-section")
    expect(section.locator(".arcana-disclosure")).to_contain_text("Standing instructions (3)", timeout=20_000)
    learned = section.locator(".arcana-standing-item[data-id=s_2]")
    expect(learned).to_contain_text("Plain ASCII in commit messages.")
    expect(learned).to_contain_text("read as standing by the learned reader")  # less sure than a rule: said
    expect(section.locator(".arcana-standing-item[data-id=s_1]")).not_to_contain_text("learned reader")
    taken = section.locator(".arcana-standing-item[data-id=s_3]")
    expect(taken).to_contain_text("from turn 4")
    expect(taken).to_contain_text("kept because the reply took it up as lasting")
    expect(section.locator(".arcana-standing-item[data-id=s_1]")).not_to_contain_text("took it up")
    item = section.locator(".arcana-standing-item[data-id=s_1]")
    expect(item).to_contain_text("from turn 2")
    expect(item).to_contain_text("you said it")
    expect(item).to_contain_text("Answer in French from now on, I'm practising before the move to Lyon.")
    live = turn.locator(".arcana-live")
    expect(live).to_be_visible(timeout=20_000)
    expect(live.locator(".arcana-live-standing")).to_contain_text("from turn 2")
    section.scroll_into_view_if_needed()
    shot(page, "standing-inspector")
    live.locator("button[data-action=retract][data-target=s_1]").click()
    expect(live.locator(".arcana-live-status")).to_contain_text("retract s_1: done", timeout=20_000)

    index = run_last(page, "%%arcana\nAnd the table for repairs?")
    last = notebook.locator(".jp-Cell").nth(index).locator(".jp-RenderedArcanaTurn")
    last.locator(".arcana-summary").click()
    expect(last.locator(".arcana-disclosure", has_text="Standing instructions (2)")).to_have_count(1, timeout=20_000)
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")

    [trace] = (lab_root / "standing.arcana").glob("r_*.jsonl")
    events = [json.loads(x) for x in trace.read_text().splitlines()]
    actions = [(e["metadata"]["action"], e["metadata"]["via"], e["metadata"]["target"])
               for e in events if e["event_type"] == "user_action"]
    assert actions == [("retract", "inspector", "s_1")]
    made = [e for e in events if e["event_type"] == "context_action" and e["metadata"]["action"] == "standing"]
    assert [(e["turn"], e["metadata"]["object_id"], e["metadata"]["args"].get("rule")) for e in made] == [
        (2, "s_1", "directive"), (3, "s_2", "learned"), (4, "s_3", "acknowledged")]
    from arcana_jupyter.trace.reader import TraceReader

    reader = TraceReader(trace.parent)
    heads = {t: reader.prompt_sent(trace.stem, t).messages[0]["content"] for t in (6, 7)}  # type: ignore[union-attr]
    assert "- (s_1, turn 2) Answer in French from now on" in heads[6] and "Answer in French" not in heads[7]
    assert "- (s_2, turn 3) Plain ASCII in commit messages." in heads[7]
    assert f"- (s_3, turn 4) {SHORT}" in heads[6] and f"- (s_3, turn 4) {SHORT}" in heads[7]
    assert "Can't wait" not in heads[6]  # chit-chat is kept nowhere

    arcana = Path(sys.executable).parent / "arcana"
    proc = subprocess.run([str(arcana), "report", "standing.ipynb", "--verify"], capture_output=True, text=True,
                          timeout=600, cwd=lab_root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reproduced: 7 of 7 turn(s)" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
