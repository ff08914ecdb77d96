"""Small Playwright helpers shared by the browser test modules."""

from __future__ import annotations

import re


def wait_for_lab(page) -> None:
    page.wait_for_selector("#jp-main-dock-panel", timeout=60_000)
    page.wait_for_function("() => !!(window.jupyterapp"
                           " && window.jupyterapp.commands.hasCommand('arcana:open-trace-viewer'))",
                           timeout=60_000)


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
