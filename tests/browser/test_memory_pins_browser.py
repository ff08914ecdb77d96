"""Memory and pins from the notebook, by the user, in a real JupyterLab (Debian chromium) on the
bundled model: ``%arcana_memory add fact …`` in one session; Kernel > Restart; a new session's
inspector lists the memory in its prompt's digest (and the prompt holds it); ``%arcana_pin`` pins,
the inspector shows the pin, the inspector's unpin button removes it; ``arcana report --verify``
reproduces every turn (the inspector's unpin is replayed where it happened).

Screenshot: test-artifacts/browser/memory-pins-inspector.png.
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

CHAT = "%arcana_chat --model local --window 1024 --memory"
FACT = "The bakery's fiscal year starts in April."


def run_last(page, source: str) -> int:
    """Run ``source`` in the notebook's last (empty) cell: clicking an inspector makes its cell the
    active one, and ``run_cell`` types into the active cell."""
    page.evaluate("() => { const c = window.jupyterapp.shell.currentWidget.content;"
                  " c.activeCellIndex = c.widgets.length - 1; }")
    return run_cell(page, source)


def restart(page) -> None:
    page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:restart'); }")
    page.locator(".jp-Dialog button.jp-mod-accept").click()
    page.wait_for_function("() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;"
                           " return k.connectionStatus === 'connected' && k.status === 'idle'; }", timeout=60_000)


def test_memory_and_pins_from_the_notebook_survive_a_restart_and_verify(page, lab_root: Path) -> None:
    open_new_notebook(page, lab_root / "memo.ipynb")
    notebook = page.locator(".jp-NotebookPanel:visible")
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, CHAT)
    index = run_cell(page, f"%arcana_memory add fact {FACT}")
    expect(notebook.locator(".jp-Cell").nth(index)).to_contain_text(FACT)
    run_cell(page, "%%arcana\nHello! Please keep your answers short.")

    restart(page)
    run_last(page, "%load_ext arcana_jupyter")
    run_last(page, f"{CHAT} --new")
    index = run_last(page, "%%arcana\nWhen does our fiscal year start?")
    turn = notebook.locator(".jp-Cell").nth(index).locator(".jp-RenderedArcanaTurn")
    turn.locator(".arcana-summary").click()
    memories = turn.locator(".arcana-disclosure", has_text="Memories (1 in the prompt's digest")
    expect(memories).to_have_count(1, timeout=20_000)
    memories.click()
    expect(turn).to_contain_text(FACT)

    index = run_last(page, "%arcana_pin The deadline for the new menu is 30 June. --label deadline")
    expect(notebook.locator(".jp-Cell").nth(index)).to_contain_text("deadline")
    index = run_last(page, "%%arcana\nWhat is the deadline for the new menu?")
    turn = notebook.locator(".jp-Cell").nth(index).locator(".jp-RenderedArcanaTurn")
    turn.locator(".arcana-summary").click()
    pins = turn.locator(".arcana-disclosure", has_text="Pins (1)")
    expect(pins).to_have_count(1, timeout=20_000)
    pins.click()
    expect(turn.locator(".arcana-pin")).to_contain_text("30 June")
    live = turn.locator(".arcana-live")
    expect(live).to_be_visible(timeout=20_000)
    turn.scroll_into_view_if_needed()
    shot(page, "memory-pins-inspector")
    live.locator("button[data-action=unpin]").click()
    expect(live.locator(".arcana-live-status")).to_contain_text("done", timeout=20_000)
    index = run_last(page, "%%arcana\nThanks, that is all.")
    last = notebook.locator(".jp-Cell").nth(index).locator(".jp-RenderedArcanaTurn")
    last.locator(".arcana-summary").click()
    expect(last.locator(".arcana-disclosure", has_text="Pins (0)")).to_have_count(1, timeout=20_000)
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")

    # The trace: the model was given the memory and the pin; the user's actions are recorded as theirs.
    runs = sorted((lab_root / "memo.arcana").glob("r_*.jsonl"), key=lambda p: p.stat().st_mtime)
    events = [json.loads(x) for x in runs[-1].read_text().splitlines()]
    from arcana_jupyter.trace.reader import TraceReader

    # decisions through the reader: a chained decision leaves out the inputs that did not change
    decisions = [e.metadata for e in TraceReader(runs[-1].parent).events(runs[-1].stem,
                                                                         event_types=("context_decision",))]
    assert any(FACT in (s.get("content") or "") for s in decisions[0]["inputs"]["sections"])
    assert [len(d["inputs"]["pins"]) for d in decisions] == [0, 1, 0]
    actions = [(e["metadata"]["action"], e["metadata"]["via"]) for e in events if e["event_type"] == "user_action"]
    assert actions == [("pin", "magic"), ("unpin", "inspector")]

    arcana = Path(sys.executable).parent / "arcana"
    proc = subprocess.run([str(arcana), "report", "memo.ipynb", "--verify"], capture_output=True, text=True,
                          timeout=600, cwd=lab_root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reproduced: 4 of 4 turn(s) in 2 run(s)" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
