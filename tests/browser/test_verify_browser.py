"""The notebooks people really write, written in a real JupyterLab (Debian chromium), saved, then
``arcana report NB --verify``: every turn reproduces.

- exploratory: a cell of the user's own before ``%load_ext``, a ``%%arcana`` turn before any
  ``%arcana_chat`` (the session starts itself), two ``%arcana_chat`` cells with bad flags, a markdown
  cell, ``%arcana_chat --new --model local --window 1024``, a turn, a ``ZeroDivisionError``, another
  turn, ``%arcana_context`` (a constraint added, listed, undone) — on the bundled model;
- interrupted: Kernel > Interrupt while a turn streams, then more turns (the next one answers its
  own input); the interrupted turn is replayed as cancelled with its partial reply;
- restarted: Kernel > Restart in the middle; the first ``%%arcana`` after it continues the run,
  ``--resume latest`` keeps it, ``--new`` starts another.

tests/jupyter/test_verify_real_notebooks.py runs the same notebooks under nbclient.
Screenshots: test-artifacts/browser/verify-exploratory.png, verify-inspector.png, verify-interrupted.png,
verify-restarted.png.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import shot
from .helpers import CELL_DONE, open_new_notebook, run_cell

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MIME = "application/vnd.arcana.turn+json"

SLOW_MODEL = '''import asyncio
from arcana_jupyter.providers.base import StreamChunk
from arcana_jupyter.providers.function import FunctionProvider

class SlowModel(FunctionProvider):
    """Streams a word every half second: long enough to be interrupted halfway."""
    async def stream(self, request):
        response = await self.complete(request)
        for word in response.message.content.split(" "):
            yield StreamChunk(text=word + " ")
            await asyncio.sleep(0.5)
        yield StreamChunk(response=response)

def answer(request):
    question = request.messages[-1].content
    if "long" in question:
        return "The North region grew fastest, by eighteen percent over the year. " * 6
    return "A short answer to: " + question

slow = SlowModel(answer, model_name="slow")'''

PARTIAL_SHOWN = """(i) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
  const out = cell && cell.node.querySelector('.jp-RenderedArcanaTurn .arcana-reply');
  return !!(out && out.textContent.includes('North region grew'));
}"""


def run_last(page, source: str, **kw) -> int:
    """Run ``source`` in the notebook's last (empty) cell (clicking an inspector moves the active cell)."""
    page.evaluate("() => { const c = window.jupyterapp.shell.currentWidget.content;"
                  " c.activeCellIndex = c.widgets.length - 1; }")
    return run_cell(page, source, **kw)


def markdown(page, text: str) -> None:
    """A markdown cell, as a user makes one: type, Esc M, run it."""
    page.evaluate("""async (src) => {
      const app = window.jupyterapp; const panel = app.shell.currentWidget;
      panel.content.activeCellIndex = panel.content.widgets.length - 1;
      await app.commands.execute('notebook:change-cell-to-markdown');
      panel.content.activeCell.model.sharedModel.setSource(src);
      await app.commands.execute('notebook:run-cell-and-insert-below');
    }""", text)


def save(page) -> None:
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")


def restart(page) -> None:
    page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:restart'); }")
    page.locator(".jp-Dialog button.jp-mod-accept").click()
    page.wait_for_function("() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;"
                           " return k.connectionStatus === 'connected' && k.status === 'idle'; }", timeout=60_000)


def verify(lab_root: Path, name: str) -> str:
    arcana = Path(sys.executable).parent / "arcana"
    proc = subprocess.run([str(arcana), "report", name, "--verify"], capture_output=True, text=True, timeout=900,
                          cwd=lab_root)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return out


def saved(lab_root: Path, name: str) -> dict:
    return json.loads((lab_root / name).read_text())


def turns(nb: dict) -> list[dict]:
    return [o["metadata"]["arcana"] for c in nb["cells"] for o in c.get("outputs", []) if MIME in o.get("data", {})]


def test_an_exploratory_notebook_verifies(page, lab_root: Path) -> None:
    open_new_notebook(page, lab_root / "explore.ipynb")
    notebook = page.locator(".jp-NotebookPanel:visible")
    run_cell(page, "import math\nradius = 2\nmath.pi * radius ** 2")
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, "%%arcana\nHello! What is 2 + 2?", timeout=180_000)
    bad = run_cell(page, "%arcana_chat --window abc")
    expect(notebook.locator(".jp-Cell").nth(bad)).to_contain_text("--window must be a whole number")
    small = run_cell(page, "%arcana_chat --window 100")
    expect(notebook.locator(".jp-Cell").nth(small)).to_contain_text("--window must be at least 256 (got 100)")
    markdown(page, "## A smaller window")
    run_last(page, "%arcana_chat --new --model local --window 1024")
    run_last(page, "%arcana_context add constraint Answer in one sentence --why the notebook is a summary")
    first = run_last(page, "%%arcana\nName three colours.", timeout=180_000)
    error = run_last(page, "1 / 0")
    expect(notebook.locator(".jp-Cell").nth(error)).to_contain_text("ZeroDivisionError")
    last = run_last(page, "%%arcana\nAnd three animals.", timeout=180_000)
    listed = run_last(page, "%arcana_context list")
    row = notebook.locator(".jp-Cell").nth(listed).locator("tbody tr")
    expect(row).to_have_count(1)
    assert [row.locator("td").nth(i).inner_text() for i in range(6)] == [
        "s_1", "constraint", "active", "1", "you", "Answer in one sentence"]
    run_last(page, "%arcana_context undo")
    run_last(page, "%%arcana\nThanks, that's all.", timeout=180_000)

    # The inspector of a turn: the latency split, no "changes" where nothing changed.
    turn = notebook.locator(".jp-Cell").nth(last).locator(".jp-RenderedArcanaTurn")
    turn.locator(".arcana-summary").click()
    usage = turn.locator(".arcana-usage")
    expect(usage).to_contain_text("(model ")
    expect(usage).to_contain_text(", runtime ")
    expect(turn.locator(".arcana-disclosure", has_text="Adaptive-context changes")).to_have_count(0)
    turn.scroll_into_view_if_needed()
    shot(page, "verify-inspector")
    # the constraint added before the run's first turn is in that turn's adaptive context, in full
    tiers = notebook.locator(".jp-Cell").nth(first).locator(".jp-RenderedArcanaTurn")
    tiers.locator(".arcana-summary").click()
    context = tiers.locator(".arcana-disclosure", has_text="Adaptive context (1)")
    expect(context).to_have_count(1)
    context.click()
    expect(tiers.locator(".arcana-tier-active")).to_contain_text("Answer in one sentence")
    save(page)
    notebook.locator(".jp-Cell").first.scroll_into_view_if_needed()
    shot(page, "verify-exploratory")

    nb = saved(lab_root, "explore.ipynb")
    assert [t["turn"] for t in turns(nb)] == [1, 1, 2, 3] and len({t["run_id"] for t in turns(nb)}) == 2
    out = verify(lab_root, "explore.ipynb")
    assert "reproduced: 4 of 4 turn(s) in 2 run(s)" in out, out


def test_an_interrupted_turn_verifies(page, lab_root: Path) -> None:
    open_new_notebook(page, lab_root / "interrupted.ipynb")
    notebook = page.locator(".jp-NotebookPanel:visible")
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, SLOW_MODEL)
    run_cell(page, "%arcana_chat --model fn:slow --classic")
    run_cell(page, "%%arcana\nWhich region grew fastest?", timeout=60_000)
    index = run_cell(page, "%%arcana\nGive me the long version, please.", wait=False)
    page.wait_for_function(PARTIAL_SHOWN, arg=index, timeout=60_000, polling=100)
    page.evaluate("async () => { await window.jupyterapp.commands.execute('kernelmenu:interrupt'); }")
    page.wait_for_function(CELL_DONE, arg=index, timeout=60_000)
    cell = notebook.locator(".jp-Cell").nth(index)
    expect(cell.locator(".jp-RenderedArcanaTurn")).to_contain_text("cancelled")
    nxt = run_cell(page, "%%arcana\nThanks, that's enough.", timeout=60_000)
    expect(notebook.locator(".jp-Cell").nth(nxt).locator(".jp-RenderedArcanaTurn")).to_contain_text(
        "A short answer to: Thanks, that's enough.")
    run_cell(page, "%%arcana\nWhich region grew slowest?", timeout=60_000)
    cell.scroll_into_view_if_needed()
    shot(page, "verify-interrupted")
    save(page)

    nb = saved(lab_root, "interrupted.ipynb")
    trace = lab_root / turns(nb)[0]["trace_path"]
    ends = [json.loads(x)["metadata"] for x in trace.read_text().splitlines() if '"event_type":"turn_end"' in x]
    assert [e["status"] for e in ends] == ["ok", "cancelled", "ok", "ok"]
    assert ends[1]["message"]["content"].endswith("[interrupted by the user]")
    out = verify(lab_root, "interrupted.ipynb")
    assert "reproduced: 4 of 4 turn(s) in 1 run(s)" in out, out
    # the interrupt is named where the turn is checked, not only counted
    assert (f"ok   main turn 2: prompt same, reply same — interrupted by the user in the recording; replayed as "
            f"interrupted, with its partial reply ({len(ends[1]['reply'])} characters)") in out, out


def test_a_restart_in_the_middle_verifies(page, lab_root: Path) -> None:
    open_new_notebook(page, lab_root / "restarted.ipynb")
    notebook = page.locator(".jp-NotebookPanel:visible")
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, "%arcana_chat --model local --window 1024")
    run_cell(page, "%%arcana\nMy name is Ada. Remember it.", timeout=180_000)
    run_cell(page, "%%arcana\nName a colour.", timeout=180_000)
    restart(page)
    run_last(page, "%load_ext arcana_jupyter")
    resumed = run_last(page, "%%arcana\nWhat is my name?", timeout=180_000)
    expect(notebook.locator(".jp-Cell").nth(resumed)).to_contain_text("resumed run")
    again = run_last(page, "%arcana_chat --resume latest")
    expect(notebook.locator(".jp-Cell").nth(again)).to_contain_text("is this session's own: it goes on")
    expect(notebook.locator(".jp-Cell").nth(again)).not_to_contain_text("UsageError")
    run_last(page, "%%arcana\nName an animal.", timeout=180_000)
    run_last(page, "%arcana_chat --new --model local --window 1024")
    run_last(page, "%%arcana\nA fresh start: name a fruit.", timeout=180_000)
    notebook.locator(".jp-Cell").nth(resumed).scroll_into_view_if_needed()
    shot(page, "verify-restarted")
    save(page)

    nb = saved(lab_root, "restarted.ipynb")
    meta = turns(nb)
    assert [t["turn"] for t in meta] == [1, 2, 3, 4, 1] and len({t["run_id"] for t in meta[:4]}) == 1
    out = verify(lab_root, "restarted.ipynb")
    assert "reproduced: 5 of 5 turn(s) in 2 run(s)" in out, out
