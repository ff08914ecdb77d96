"""What if, in the replay (issue 23): in a real JupyterLab (Debian chromium) on the bundled model, a
three-turn session's ``%arcana_replay`` is scrubbed back to turn 2, and the replay's own what-if form
asks the kernel (the ``arcana`` comm) to rebuild that turn with a smaller window: the summary and the
rows that changed are shown beside the recorded turn. With the kernel shut down, the form stays but
its controls are disabled and say that a kernel is needed.

Screenshots: test-artifacts/browser/replay-what-if.png, replay-what-if-no-kernel.png.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import shot
from .helpers import KERNEL_CONNECTED, run_cell, wait_for_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_replay_rebuilds_an_earlier_turn_with_a_smaller_window(page, lab_root: Path) -> None:
    page.goto(f"{page.base_url}/lab?reset")
    wait_for_lab(page)
    page.evaluate("async () => (await window.jupyterapp.commands.execute('notebook:create-new',"
                  " {kernelName: 'python3'})).context.path")
    page.wait_for_function(KERNEL_CONNECTED, timeout=60_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    notebook = page.locator(".jp-NotebookPanel:visible")
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, "%arcana_chat --model local --window 1024")
    run_cell(page, "%%arcana\nMy name is Ada and the code word is pelican. Say hello.")
    run_cell(page, "%%arcana\nPlease keep your answers short.")
    run_cell(page, "%%arcana\nWhat is the code word?")
    index = run_cell(page, "%arcana_replay")
    replay = notebook.locator(".jp-Cell").nth(index).locator(".jp-RenderedArcanaReplay")
    label = replay.locator(".arcana-turn-label")
    expect(label).to_contain_text("Turn 3 (3 of 3)", timeout=30_000)

    # Back to turn 2, and its what-if: a smaller window, rebuilt by the kernel.
    replay.locator(".arcana-prev").click()
    expect(label).to_contain_text("Turn 2 (2 of 3)")
    section = replay.locator(".arcana-replay-whatif")
    expect(section).to_have_count(1)
    section.locator(".arcana-disclosure", has_text="What if").click()
    expect(section).to_contain_text("What would turn 2 have sent with other settings?")
    expect(section.locator(".arcana-whatif-window")).to_have_attribute("placeholder", "1024")
    section.locator(".arcana-whatif-window").fill("256")
    section.locator(".arcana-whatif-reserve").fill("200")
    section.locator(".arcana-whatif-run").click()
    summary = section.locator(".arcana-whatif-summary")
    expect(summary).to_contain_text("Window 256, reserve 200", timeout=30_000)
    expect(summary).to_contain_text("digest verified")
    rows = section.locator(".arcana-whatif-table tbody tr")
    expect(rows.first).to_be_visible()
    assert rows.count() >= 1
    expect(section.locator(".arcana-whatif-table")).to_contain_text("dropped")
    section.scroll_into_view_if_needed()
    shot(page, "replay-what-if")

    # The form of a turn keeps what was asked when the scrubber comes back to it.
    replay.locator(".arcana-next").click()
    expect(label).to_contain_text("Turn 3 (3 of 3)")
    replay.locator(".arcana-prev").click()
    expect(label).to_contain_text("Turn 2 (2 of 3)")
    expect(replay.locator(".arcana-replay-whatif .arcana-whatif-summary")).to_contain_text("Window 256")

    # No kernel: the form says it needs one, its controls disabled.
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }")
    section = replay.locator(".arcana-replay-whatif")
    expect(section.locator(".arcana-disclosure")).to_contain_text("needs a kernel", timeout=30_000)
    section.locator(".arcana-disclosure").click()
    expect(section.locator(".arcana-whatif-needs-kernel")).to_contain_text("A kernel is needed")
    expect(section.locator(".arcana-whatif-run")).to_be_disabled()
    assert "A kernel is needed" in (section.locator(".arcana-whatif-window").get_attribute("title") or "")
    section.scroll_into_view_if_needed()
    shot(page, "replay-what-if-no-kernel")
    assert not errors, errors
