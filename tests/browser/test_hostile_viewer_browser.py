"""Hostile traces in the trace viewer, in a real JupyterLab and headless Chromium (issue 35, rows 10 and 11).

The viewer decoded traces itself and looped forever on a ``prompt_sent`` that continues itself, and ran
out of heap on a decision of 200 million rows or 100,000 references to one 100 KB message: the tab died.
It decodes nothing now. The run's trace (tests/trace_bombs.py: a real run with those three bombs) is read
by the server extension's worker, bounded in memory and time; every turn the viewer opens shows what went
wrong, and the tab, the page and the server go on: the sound turn shows its decisions afterwards.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect
from trace_bombs import write_bombs

from .conftest import shot
from .helpers import wait_for_lab

pytestmark = pytest.mark.browser

SLOW = 120_000  # a bomb runs the worker out of memory (or of its 30 s) first
PROBLEM = ".arcana-turn-problem, .arcana-decision-problem"


def test_hostile_traces_show_a_problem_and_the_viewer_lives(page, lab_root: Path) -> None:
    run_id, _path = write_bombs(lab_root / "bombs.arcana")
    page.goto(f"{page.base_url}/lab/tree/bombs.arcana/{run_id}.jsonl?reset")
    wait_for_lab(page)
    viewer = page.locator(".arcana-viewer")
    label = viewer.locator(".arcana-turn-label")
    expect(label).to_contain_text("Turn 5 (5 of 5)", timeout=60_000)
    host = viewer.locator(".arcana-turn-host")
    assert page.request.get(f"{page.base_url}/api/kernels").json() == []  # read by the server: no kernel

    # Turns 5 and 4: the decision of 200 million rows (turn 5's continues it).
    expect(host.locator(PROBLEM).first).to_be_visible(timeout=SLOW)
    expect(host.locator(PROBLEM).first).to_contain_text(re.compile(r"turn 5|could not be read"))
    shot(page, "viewer-hostile-rows")
    viewer.locator(".arcana-prev").click()
    expect(label).to_contain_text("Turn 4 (4 of 5)")
    expect(host.locator(PROBLEM).first).to_be_visible(timeout=SLOW)

    # Turn 3: its decisions read; its prompt as sent continues itself: said, not followed for ever.
    viewer.locator(".arcana-prev").click()
    expect(label).to_contain_text("Turn 3 (3 of 5)")
    unreadable = viewer.get_by_role("button", name="Prompt as sent (cannot be read)")
    expect(unreadable).to_be_visible(timeout=SLOW)
    expect(host.locator(".arcana-vt-body-row").first).to_be_visible()
    unreadable.click()
    expect(viewer.locator(".arcana-sent-missing")).to_contain_text("prompt_sent")
    shot(page, "viewer-hostile-self-prev")

    # Turn 2: 100,000 references to a 100 KB message (the whole turn, or only its prompt, is refused).
    viewer.locator(".arcana-prev").click()
    expect(label).to_contain_text("Turn 2 (2 of 5)")
    expect(host.locator(f"{PROBLEM}, .arcana-sent-section:has-text('cannot be read')").first).to_be_visible(
        timeout=SLOW)

    # Turn 1 is sound: the viewer, the server and its worker are still there.
    viewer.locator(".arcana-prev").click()
    expect(label).to_contain_text("Turn 1 (1 of 5)")
    expect(host.locator(".arcana-turn-summary")).to_contain_text("kept", timeout=SLOW)
    expect(host.locator(".arcana-vt-body-row").first).to_be_visible()
    expect(host.locator(PROBLEM)).to_have_count(0)
    assert page.evaluate("() => 6 * 7") == 42
    assert page.page_errors == []
