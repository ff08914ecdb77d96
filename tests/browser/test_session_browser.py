"""A notebook session survives the kernel, in a real JupyterLab (Debian chromium), on the bundled
model: a new notebook runs two turns, is renamed (the session's banner is redrawn with the new
name), Kernel > Restart (the dialog's Restart button), ``%load_ext`` + ``%%arcana`` resumes the run
at turn 3 with the earlier turns in its prompt, ``%arcana_chat --new`` starts a fresh run, and
``arcana report --verify`` reproduces both runs.

The runs sidebar lists each run by its own events (session, turns, start time, resumes) and
leaves out an empty run file.

Screenshots: test-artifacts/browser/session-resumed.png, session-what-if.png, session-runs-sidebar.png.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import shot
from .helpers import KERNEL_CONNECTED, run_cell, wait_for_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHAT = "%arcana_chat --model local --window 1024"


def test_restart_resumes_the_run_and_new_starts_fresh(page, lab_root: Path) -> None:
    (lab_root / "session.ipynb").unlink(missing_ok=True)
    page.goto(f"{page.base_url}/lab?reset")
    wait_for_lab(page)
    created = page.evaluate("async () => (await window.jupyterapp.commands.execute('notebook:create-new',"
                            " {kernelName: 'python3'})).context.path")
    page.wait_for_function(KERNEL_CONNECTED, timeout=60_000)
    notebook = page.locator(".jp-NotebookPanel:visible")
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, CHAT)
    banner = notebook.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output")
    expect(banner).to_contain_text("started run")
    expect(banner).to_contain_text(f"trace {created.removesuffix('.ipynb')}.arcana/")
    run_cell(page, "%%arcana\nMy name is Ada and the code word is pelican. Say hello.")
    run_cell(page, "%%arcana\nPlease keep your answers short.")

    # Rename: the traces move with the notebook and the banner says the new name.
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.context.rename('session.ipynb'); }")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.path === 'session.ipynb'")
    expect(banner).to_contain_text("trace session.arcana/", timeout=20_000)
    expect(banner).to_contain_text("(notebook session.ipynb)")
    (run_id,) = [p.stem for p in (lab_root / "session.arcana").glob("r_*.jsonl")]

    # Kernel > Restart, confirmed in JupyterLab's dialog.
    page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:restart'); }")
    page.locator(".jp-Dialog button.jp-mod-accept").click()
    page.wait_for_function("() => { const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;"
                           " return k.connectionStatus === 'connected' && k.status === 'idle'; }", timeout=60_000)
    run_cell(page, "%load_ext arcana_jupyter")
    index = run_cell(page, "%%arcana\nWhat is my name, and what is the code word?")
    resumed = notebook.locator(".jp-Cell").nth(index)
    expect(resumed).to_contain_text(f"resumed run {run_id} at turn 3")
    expect(resumed).to_contain_text("the 2 earlier turns are in its context")
    expect(resumed.locator(".jp-RenderedArcanaTurn")).to_contain_text("turn 3")
    resumed.scroll_into_view_if_needed()
    shot(page, "session-resumed")

    # What if: the kernel rebuilds turn 3 with a smaller window, beside what was sent.
    inspector = resumed.locator(".jp-RenderedArcanaTurn")
    inspector.locator(".arcana-summary").click()
    expect(inspector.locator(".arcana-detail-note")).to_contain_text("Detail from", timeout=30_000)
    inspector.locator(".arcana-disclosure", has_text="What if").click()
    inspector.locator(".arcana-whatif-window").fill("256")
    inspector.locator(".arcana-whatif-reserve").fill("200")
    inspector.locator(".arcana-whatif-mode").select_option("classic")
    inspector.locator(".arcana-whatif-relevance").select_option("lexical")
    inspector.locator(".arcana-whatif-run").click()
    summary = inspector.locator(".arcana-whatif-summary")
    expect(summary).to_contain_text("Window 256, reserve 200", timeout=30_000)
    expect(summary).to_contain_text("classic mode, lexical relevance")
    expect(summary).to_contain_text("digest verified")
    expect(inspector.locator(".arcana-whatif-table tbody tr").first).to_be_visible()
    inspector.scroll_into_view_if_needed()
    shot(page, "session-what-if")

    # A trace from before prompt_sent (its events removed here): with a kernel, the inspector offers to
    # rebuild the prompt in Python, digest-checked.
    trace_file = lab_root / "session.arcana" / f"{run_id}.jsonl"
    lines = trace_file.read_text().splitlines(keepends=True)
    trace_file.write_text("".join(line for line in lines if '"event_type":"prompt_sent"' not in line))
    first = notebook.locator(".jp-Cell").nth(2).locator(".jp-RenderedArcanaTurn")
    first.locator(".arcana-summary").click()
    expect(first.locator(".arcana-detail-note")).to_contain_text("Detail from", timeout=30_000)
    first.get_by_role("button", name="Prompt as sent (not recorded)").click()
    expect(first.locator(".arcana-sent-missing")).to_contain_text("written before the prompt_sent event existed")
    first.locator(".arcana-sent-rebuild").click()
    rebuilt = first.locator(".arcana-sent-rebuilt")
    expect(rebuilt.locator(".arcana-sent-status")).to_contain_text(
        "rebuilt from the transcript by the kernel; verified", timeout=30_000)
    expect(rebuilt).to_contain_text("My name is Ada and the code word is pelican.")
    rebuilt.scroll_into_view_if_needed()
    shot(page, "session-prompt-rebuilt-by-the-kernel")
    page.evaluate("() => { const c = window.jupyterapp.shell.currentWidget.content;"
                  " c.activeCellIndex = c.widgets.length - 1; }")

    index = run_cell(page, f"{CHAT} --new")
    expect(notebook.locator(".jp-Cell").nth(index)).to_contain_text("started run")
    index = run_cell(page, "%%arcana\nHello again.")
    expect(notebook.locator(".jp-Cell").nth(index).locator(".jp-RenderedArcanaTurn")).to_contain_text("turn 1")
    run_cell(page, "%arcana_replay")
    run_cell(page, "%%arcana\nAnd once more.")  # the run goes on after the replay was made
    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")

    # Reopened, the replay says how the run went on; ← → move the scrubber with the slider focused.
    page.goto(f"{page.base_url}/lab/tree/session.ipynb")
    wait_for_lab(page)
    replay = page.locator(".jp-NotebookPanel:visible .jp-RenderedArcanaReplay")
    expect(replay.locator(".arcana-replay-status")).to_contain_text("2 turns now (1 when this replay was made)",
                                                                     timeout=30_000)
    label = replay.locator(".arcana-turn-label")
    expect(label).to_contain_text("Turn 2 (2 of 2)")
    replay.locator(".arcana-slider").focus()
    page.keyboard.press("ArrowLeft")
    expect(label).to_contain_text("Turn 1 (1 of 2)")
    page.keyboard.press("ArrowRight")
    expect(label).to_contain_text("Turn 2 (2 of 2)")
    page.wait_for_function(KERNEL_CONNECTED, timeout=60_000)

    # The runs sidebar: each run by its own events (session, turns, start, resumes); an empty file is not a run.
    (lab_root / "session.arcana" / "r_20261201_000000_a0a0a0.jsonl").write_text("")  # a session that never started
    page.evaluate("() => window.jupyterapp.shell.activateById('arcana-runs')")
    item = page.locator(".arcana-run-item", has_text=run_id)
    expect(item).to_contain_text("main · 3 turns · started ", timeout=20_000)
    expect(item).to_contain_text("resumed 1×")
    expect(page.locator(".arcana-run-item")).to_have_count(2)
    expect(page.locator(".arcana-run-item", has_text="2 turns")).to_have_count(1)
    expect(page.locator(".arcana-runs-empty")).to_contain_text("1 empty run file (a session that never started)")
    shot(page, "session-runs-sidebar")

    # The trace: one file for the resumed run, nothing recorded twice, the earlier turns in turn 3's prompt.
    from arcana_jupyter.context.rebuild import rebuild_turn
    from arcana_jupyter.trace.reader import TraceReader

    reader = TraceReader(lab_root / "session.arcana")
    runs = {r.run_id: r for r in reader.list_runs()}
    runs = {k: v for k, v in runs.items() if v.status != "empty"}
    assert len(runs) == 2 and sorted(r.turns for r in runs.values()) == [2, 3]
    assert runs[run_id].turns == 3 and runs[run_id].warnings == 0
    check = rebuild_turn(reader, run_id, 3)
    assert check.verified, check.notes
    assert "pelican" in "\n".join(str(m.get("content") or "") for m in check.messages)
    renamed = [json.loads(x) for x in (lab_root / "session.arcana" / f"{run_id}.jsonl").read_text().splitlines()
               if '"notebook_renamed"' in x]
    assert renamed and renamed[0]["metadata"]["notebook"].endswith("session.ipynb")

    arcana = Path(sys.executable).parent / "arcana"
    proc = subprocess.run([str(arcana), "report", "session.ipynb", "--verify"], capture_output=True, text=True,
                          timeout=600, cwd=lab_root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "reproduced: 5 of 5 turn(s) in 2 run(s)" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
