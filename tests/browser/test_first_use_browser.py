"""First use, as a new user meets it in JupyterLab (Debian chromium): a new notebook, the README
tour typed cell by cell and run on the bundled model (1,024-token window, recall and pin asked
for), every turn answered; then a provider that fails shows one red line in its cell — the cell
is marked failed, with no traceback — and the next turn works again.

Screenshots: test-artifacts/browser/first-use-*.png.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

from arcana_jupyter.demo import EXAMPLES

from .conftest import shot
from .helpers import KERNEL_CONNECTED, run_cell, wait_for_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FAILING = '''\
from arcana_jupyter.exceptions import RateLimitError

def quota_model(request):
    raise RateLimitError("you exceeded your current quota (429)", provider="openai", status=429)
'''


@pytest.mark.timeout(900)
def test_the_readme_tour_in_jupyterlab_on_the_bundled_model(page, lab_root: Path) -> None:
    tour = nbformat.read(EXAMPLES / "tour.ipynb", as_version=4)
    cells = [c.source for c in tour.cells if c.cell_type == "code" and c.source.strip() != "%arcana_replay"]
    turns = [c for c in cells if c.startswith("%%arcana")]
    assert len(turns) == 8
    for stale in ("first-use.ipynb",):
        (lab_root / stale).unlink(missing_ok=True)
    page.goto(f"{page.base_url}/lab?reset")
    wait_for_lab(page)
    page.evaluate("async () => (await window.jupyterapp.commands.execute('notebook:create-new',"
                  " {kernelName: 'python3'}))")
    page.wait_for_function(KERNEL_CONNECTED, timeout=60_000)
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.context.rename('first-use.ipynb'); }")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.path === 'first-use.ipynb'")

    notebook = page.locator(".jp-NotebookPanel:visible")
    for source in cells:
        run_cell(page, source, timeout=240_000)
    banner = notebook.locator(".jp-Cell").nth(0).locator(".jp-OutputArea")
    expect(banner).to_contain_text("not offered to this small model")
    rendered = notebook.locator(".jp-RenderedArcanaTurn")
    expect(rendered).to_have_count(len(turns))
    trace = next((lab_root / "first-use.arcana").glob("r_*.jsonl"))
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    ends = [e["metadata"] for e in events if e["event_type"] == "turn_end"]
    assert [e["status"] for e in ends] == ["ok"] * len(turns)
    for i, end in enumerate(ends):
        assert end["reply"].strip(), f"turn {i + 1} has no reply"
        assert end["steps"] <= 4
        # the reply the model gave is what the cell shows (a line of words: Markdown renders list
        # markers and emphasis as such, not as the characters the model wrote)
        words = [re.sub(r"^[\s#>*+\-\d.)]+", "", line).strip() for line in end["reply"].splitlines()]
        plain = [w for w in words if len(re.findall(r"[A-Za-z]{2,}", w)) >= 3 and not re.search(r"[*_`\[\]|<>]", w)]
        line = plain[0] if plain else None
        if line:
            expect(rendered.nth(i)).to_contain_text(line[:40], timeout=10_000)
    assert not notebook.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count()
    rendered.nth(len(turns) - 1).scroll_into_view_if_needed()
    shot(page, "first-use-tour")
    # The inspector of a turn whose window filled: kept, compressed and dropped rows (the README's picture)
    full = rendered.nth(5)
    full.locator(".arcana-summary").click()
    expect(full.locator(".arcana-vt-body-row").first).to_be_visible(timeout=20_000)
    expect(full).to_contain_text("dropped")
    # how the prompt was counted: the bundled model's own tokenizer
    expect(full.locator(".arcana-counting").first).to_contain_text(
        "counted with the model's own tokenizer (SmolLM2-135M-Instruct")
    page.evaluate("(i) => { const c = window.jupyterapp.shell.currentWidget.content; c.activeCellIndex = i; }", 7)
    full.locator(".arcana-summary").scroll_into_view_if_needed()
    page.mouse.wheel(0, -160)
    shot(page, "first-use-inspector")

    # Every drop of the 1,024-token window that leaves more than a quarter of the budget free says why,
    # and the inspector of a turn whose window gave way explains it: what left, what came back, what is free
    decisions = [e for e in events if e["event_type"] == "context_decision" and e["metadata"].get("step", 0) == 0]
    drops = [e for e in decisions if (e["metadata"].get("report") or {}).get("window_dropped")]
    assert drops, "the tour's window never gave way"
    for e in drops:
        report, budget = e["metadata"]["report"], e["metadata"]["budget"]
        if budget["remaining"] > 0.25 * budget["available"]:
            assert report.get("free_reason"), (e["turn"], budget)
    turn = drops[-1]["turn"]
    dropped = rendered.nth(turn - 1)
    if not dropped.locator(".arcana-vt-body-row").first.is_visible():
        dropped.locator(".arcana-summary").click()
    explain = dropped.locator(".arcana-explain")
    expect(explain.filter(has_text="the verbatim window gave way")).to_have_count(1, timeout=20_000)
    expect(explain.first).to_contain_text("past the prefix it shares with the previous call")
    expect(explain.first).to_contain_text("read from its cache")  # llama.cpp's own count, beside the prediction
    explain.first.scroll_into_view_if_needed()
    shot(page, "first-use-drop-explained")

    # A provider error: one red line, the cell marked failed, no traceback; the session lives on.
    run_cell(page, FAILING)
    run_cell(page, "%arcana_chat --model fn:quota_model --name broken --classic")
    run_cell(page, "%%arcana --session broken\nHello?")
    failed = notebook.locator(".jp-Cell").filter(has_text="Hello?").last
    error = failed.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    expect(error).to_have_count(1)
    text = error.inner_text().strip()
    assert text.startswith("arcana turn failed:") and "\n" not in text, text
    assert "rate limiting" in text and "Traceback" not in text and "magics.py" not in text
    color = error.locator("span").first.evaluate("e => getComputedStyle(e).color")
    assert color.startswith("rgb(") and color != "rgb(0, 0, 0)", color  # the ANSI red survives
    expect(failed.locator(".jp-RenderedArcanaTurn")).to_contain_text("error")
    failed.scroll_into_view_if_needed()
    shot(page, "first-use-error")
    run_cell(page, "%%arcana --session main\nThank you!", timeout=240_000)
    ends = [json.loads(line)["metadata"] for line in trace.read_text().splitlines()
            if json.loads(line)["event_type"] == "turn_end"]
    assert ends[-1]["status"] == "ok" and ends[-1]["reply"].strip()
