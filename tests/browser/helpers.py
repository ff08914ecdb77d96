"""Small Playwright helpers shared by the browser test modules."""

from __future__ import annotations

import json
import re
from pathlib import Path


def wait_for_lab(page) -> None:
    page.wait_for_selector("#jp-main-dock-panel", timeout=60_000)
    page.wait_for_function("() => !!(window.jupyterapp"
                           " && window.jupyterapp.commands.hasCommand('arcana:open-trace-viewer'))",
                           timeout=60_000)


def open_new_notebook(page, path: Path) -> None:
    """Write a notebook with one empty code cell at ``path`` (in the lab's root), open it and wait
    until its kernel is connected."""
    nb = {"cells": [{"cell_type": "code", "id": "c0", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": ""}],
          "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}}}
    path.write_text(json.dumps(nb), encoding="utf-8")
    page.goto(f"{page.base_url}/lab/tree/{path.name}?reset")
    wait_for_lab(page)
    page.wait_for_function(KERNEL_CONNECTED, timeout=60_000)


def open_trace(page, path: str) -> None:
    page.evaluate("(path) => window.jupyterapp.commands.execute('arcana:open-trace-viewer', {path})", path)


def cell_texts(rows, col: int) -> list[str]:
    return [rows.nth(i).locator(".arcana-vt-cell").nth(col).inner_text() for i in range(rows.count())]


def as_int(s: str) -> int:
    return int(re.sub(r"[^0-9-]", "", s) or 0)


RUN_CELL = """async ([src, wait]) => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  const cell = panel.content.activeCell;
  cell.model.sharedModel.setSource(src);
  const done = app.commands.execute('notebook:run-cell-and-insert-below');
  if (wait) { await done; }
  return panel.content.widgets.indexOf(cell);
}"""

CELL_DONE = """(i) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cell = panel.content.widgets[i];
  return cell.model.executionCount !== null && panel.sessionContext.session.kernel.status === 'idle';
}"""

KERNEL_CONNECTED = """() => { const w = window.jupyterapp.shell.currentWidget;
  return !!(w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel
    && w.sessionContext.session.kernel.connectionStatus === 'connected'); }"""


def run_cell(page, source: str, *, wait: bool = True, timeout: int = 120_000) -> int:
    """Type ``source`` into the active cell of the current notebook and run it; with ``wait``, until
    the kernel is idle again. Returns the cell's index (for ``CELL_DONE`` when not waiting)."""
    index = page.evaluate(RUN_CELL, [source, wait])
    if wait:
        page.wait_for_function(CELL_DONE, arg=index, timeout=timeout)
    return index
