"""Small Playwright helpers shared by the browser test modules."""

from __future__ import annotations

import re


def wait_for_lab(page) -> None:
    page.wait_for_selector("#jp-main-dock-panel", timeout=60_000)
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.commands.hasCommand('arcana:open-trace-viewer'))",
                           timeout=60_000)


def open_trace(page, path: str) -> None:
    page.evaluate("(path) => window.jupyterapp.commands.execute('arcana:open-trace-viewer', {path})", path)


def cell_texts(rows, col: int) -> list[str]:
    return [rows.nth(i).locator(".arcana-vt-cell").nth(col).inner_text() for i in range(rows.count())]


def as_int(s: str) -> int:
    return int(re.sub(r"[^0-9-]", "", s) or 0)
