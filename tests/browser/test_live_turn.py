"""End to end: a notebook in a real JupyterLab runs ``%%arcana`` cells against the bundled local
model (SmolLM2-135M through llama-cpp-python) in a real kernel; the turn bundles render as the
inspector, and the run's trace, written beside the notebook, opens in the viewer from the sidebar.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import shot
from .helpers import cell_texts, wait_for_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "%load_ext arcana_jupyter",
    "%arcana_chat --model local --window 900 --reserve 200 --strategy tail_preserve --snapshots --classic --no-tools",
    "%%arcana\nSay hello in five words.",
    "%%arcana\nNow say goodbye in five words.",
]


def write_notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "id": f"c{i}", "execution_count": None, "metadata": {}, "outputs": [], "source": src}
             for i, src in enumerate(CELLS)]
    nb = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}}}
    path.write_text(json.dumps(nb), encoding="utf-8")


def test_live_arcana_cells_render_the_inspector_and_the_trace_viewer(page, lab_root: Path) -> None:
    write_notebook(lab_root / "live_e2e.ipynb")
    page.goto(f"{page.base_url}/lab/tree/live_e2e.ipynb?reset")
    wait_for_lab(page)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.connectionStatus === 'connected'); }",
        timeout=60_000)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")

    turns = page.locator(".jp-RenderedArcanaTurn")
    expect(turns).to_have_count(2, timeout=150_000)
    second = turns.nth(1)
    summary = second.locator(".arcana-summary")
    expect(summary).to_contain_text("arcana · turn 2")
    expect(summary).to_contain_text(" · ok · ")
    expect(summary).to_have_attribute("aria-expanded", "false")
    assert second.locator(".arcana-reply").inner_text().strip() != ""
    summary.click()
    body = second.locator(".arcana-inspector")
    expect(body).to_contain_text("Budget:")
    rows = body.locator(".arcana-vt-body-row")
    expect(rows.first).to_be_visible()
    roles = cell_texts(rows, 2)
    assert roles[0] == "system" and "user" in roles and "assistant" in roles
    rows.nth(roles.index("user")).click()
    expect(body.locator(".arcana-vt-detail").first).to_contain_text("Say hello in five words.")
    second.scroll_into_view_if_needed()
    shot(page, "live-inspector")

    # The trace beside the notebook, from the sidebar.
    run_ids = [p.stem for p in (lab_root / "live_e2e.arcana").glob("r_*.jsonl")]
    assert len(run_ids) == 1, run_ids
    page.locator(".lm-TabBar-tab[title='Arcana runs']").click()
    page.locator(".arcana-runs button", has_text="Refresh").click()
    page.locator(".arcana-run-item", has_text=run_ids[0]).click()
    viewer = page.locator(".arcana-viewer")
    label = viewer.locator(".arcana-turn-label")
    expect(label).to_contain_text("Turn 2 (2 of 2)", timeout=30_000)
    expect(viewer.locator(".arcana-viewer-status")).not_to_contain_text("corrupt")
    viewer.locator(".arcana-prev").click()
    expect(label).to_contain_text("Turn 1 (1 of 2)")
    prompt = viewer.get_by_role("button", name=re.compile(r"^Prompt as sent \(\d+ messages.*\) · verified"))
    prompt.click()
    expect(viewer.locator(".arcana-sent-status")).to_contain_text("verified (digest ")
    expect(viewer.locator(".arcana-prompt")).to_contain_text("Say hello in five words.")
    expect(viewer.locator(".arcana-diff-summary")).to_contain_text("Turn 1 → turn 1")
    shot(page, "live-trace-viewer")
    assert page.page_errors == []
