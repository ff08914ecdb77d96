"""Interrupting a turn in JupyterLab, as a user does (Kernel > Interrupt, the same command as the
toolbar's stop button): the cell shows one red line and no traceback, the inspector says
"cancelled" (never "running"), the partial reply is in the trace, the session answers the next turn,
and after saving, closing and reopening the notebook the inspector still says "cancelled".
Screenshot: test-artifacts/browser/interrupt-cell.png.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import shot
from .helpers import CELL_DONE, open_new_notebook, run_cell, wait_for_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SETUP = '''
import asyncio
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

slow = SlowModel(lambda request: "The North region grew fastest, by eighteen percent, " * 6, model_name="slow")
'''

PARTIAL_SHOWN = """() => {
  const out = document.querySelector('.jp-RenderedArcanaTurn .arcana-reply');
  return !!(out && out.textContent.includes('North region'));
}"""


def test_interrupting_a_turn_shows_one_line_and_survives_reopening(page, lab_root: Path) -> None:
    open_new_notebook(page, lab_root / "interrupt.ipynb")
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, SETUP)
    run_cell(page, "%arcana_chat --model fn:slow --classic")
    index = run_cell(page, "%%arcana\nWhich region grew fastest?", wait=False)
    page.wait_for_function(PARTIAL_SHOWN, timeout=60_000, polling=100)
    page.evaluate("async () => { await window.jupyterapp.commands.execute('kernelmenu:interrupt'); }")
    page.wait_for_function(CELL_DONE, arg=index, timeout=60_000)

    notebook = page.locator(".jp-NotebookPanel:visible")
    cell = notebook.locator(".jp-Cell").nth(index)
    error = cell.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    expect(error).to_have_count(1)
    text = error.inner_text().strip()
    assert text.startswith("arcana: interrupted; partial reply"), text
    assert "\n" not in text and "Traceback" not in text and "KeyboardInterrupt" not in text, text
    turn = cell.locator(".jp-RenderedArcanaTurn")
    expect(turn).to_contain_text("cancelled")
    expect(turn).not_to_contain_text("running")
    cell.scroll_into_view_if_needed()
    shot(page, "interrupt-cell")

    trace = next((lab_root / "interrupt.arcana").glob("r_*.jsonl"))
    ends = [json.loads(line)["metadata"] for line in trace.read_text().splitlines()
            if json.loads(line)["event_type"] == "turn_end"]
    assert ends[-1]["status"] == "cancelled" and "North region" in ends[-1]["reply"]

    # The session lives on: the next turn answers (the model is quick when asked to be).
    run_cell(page, "slow.fn = lambda request: 'still here'")
    run_cell(page, "%%arcana\nAre you there?", timeout=60_000)
    expect(notebook.locator(".jp-RenderedArcanaTurn").last).to_contain_text("still here")

    # Save, close, shut the kernel down, reopen: the interrupted turn still says so.
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.evaluate("async () => { const w = window.jupyterapp.shell.currentWidget;"
                  " await w.sessionContext.shutdown(); await w.close(); }")
    page.goto(f"{page.base_url}/lab/tree/interrupt.ipynb")
    wait_for_lab(page)
    reopened = page.locator(".jp-NotebookPanel:visible .jp-RenderedArcanaTurn")
    expect(reopened).to_have_count(2, timeout=30_000)
    expect(reopened.first).to_contain_text("cancelled")
    expect(reopened.first).not_to_contain_text("running")
