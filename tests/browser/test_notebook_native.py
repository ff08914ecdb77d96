"""Notebook-native, end to end in a real JupyterLab (Debian chromium): a new notebook is renamed
(Untitled.ipynb -> tour.ipynb), runs the tour's turns, is saved, closed and its kernel shut down;
reopened without a kernel it still shows every turn's inspector and the replay scrubber, with no
widget errors and no 404s; the sidebar lists the run; the traces are in tour.arcana/; and
``arcana report tour.ipynb --verify`` reproduces every turn. The saved notebook stays small.

Screenshots: test-artifacts/browser/notebook-native-*.png.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.jupyter.test_notebook_size import LIMIT, TOUR, TURNS

from .conftest import shot
from .helpers import KERNEL_CONNECTED, run_cell, wait_for_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_renamed_notebook_reopens_without_a_kernel_and_verifies(page, lab_root: Path) -> None:
    for stale in ("tour.ipynb", "Untitled.ipynb"):
        (lab_root / stale).unlink(missing_ok=True)
    stacks: list[str] = []
    page.on("pageerror", lambda exc: stacks.append(f"{exc}\n{exc.stack}"))
    missing: list[str] = []  # no 404 for a notebook that has no trace folder (yet, or any more)
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 and "arcana" in r.url else None)
    page.goto(f"{page.base_url}/lab?reset")
    wait_for_lab(page)
    created = page.evaluate("async () => (await window.jupyterapp.commands.execute('notebook:create-new',"
                            " {kernelName: 'python3'})).context.path")
    assert created.startswith("Untitled") and created.endswith(".ipynb"), created
    page.wait_for_function(KERNEL_CONNECTED, timeout=60_000)
    # The usual JupyterLab flow: rename the new notebook before (or after) working in it.
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.context.rename('tour.ipynb'); }")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.path === 'tour.ipynb'")

    # The runs sidebar follows the notebook and refreshes itself (no Refresh click below).
    page.evaluate("() => window.jupyterapp.shell.activateById('arcana-runs')")
    expect(page.locator(".arcana-runs-heading")).to_have_text("Runs in tour.arcana/")
    expect(page.locator(".arcana-runs")).to_contain_text("No runs recorded for this notebook yet.")

    for source in TOUR:
        run_cell(page, source)
    outputs_text = page.locator(".jp-OutputArea").all_inner_texts()
    assert not any("Error" in t and "Traceback" in t for t in outputs_text), outputs_text
    run_ids = sorted(p.stem for p in (lab_root / "tour.arcana").glob("r_*.jsonl"))
    assert len(run_ids) == 1, run_ids
    assert not (lab_root / "Untitled.arcana").exists()
    expect(page.locator(".arcana-run-item", has_text=run_ids[0])).to_have_count(1, timeout=15_000)

    # Live: the latest turn's inspector offers the session's actions over the comm.
    turns = page.locator(".jp-RenderedArcanaTurn")
    expect(turns).to_have_count(len(TURNS))
    last = turns.nth(len(TURNS) - 1)
    summary = last.locator(".arcana-summary")
    expect(summary).to_contain_text("this turn: ")
    expect(summary).to_contain_text(f"session: {len(TURNS)} turns")
    summary.click()
    live = last.locator(".arcana-live")
    expect(live).to_be_visible(timeout=20_000)
    unpin = live.locator("button[data-action=unpin]")
    expect(unpin).to_have_count(1)
    unpin.click()
    expect(live.locator(".arcana-live-status")).to_contain_text("done", timeout=20_000)
    expect(live.locator("button[data-action=unpin]")).to_have_count(0)
    assert not turns.nth(0).locator(".arcana-live").is_visible()  # actions live under the latest turn only
    shot(page, "notebook-native-live")

    page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    page.evaluate("""async () => {
      const app = window.jupyterapp;
      await app.commands.execute('application:close-all');
      await app.serviceManager.sessions.refreshRunning();
      for (const s of [...app.serviceManager.sessions.running()]) { await app.serviceManager.sessions.shutdown(s.id); }
    }""")
    page.wait_for_function("() => [...window.jupyterapp.serviceManager.sessions.running()].length === 0")

    # Reopen with no kernel at all (as a reader would, or a server without one).
    page.evaluate("""async () => {
      const app = window.jupyterapp;
      const f = app.docRegistry.getWidgetFactory('Notebook');
      f._preferKernel = false; f._canStartKernel = false;
      await app.commands.execute('docmanager:open', {path: 'tour.ipynb'});
    }""")
    page.wait_for_function("() => { const w = window.jupyterapp.shell.currentWidget;"
                           " return !!(w && w.context && w.context.path === 'tour.ipynb'); }")
    reopened = page.locator(".jp-NotebookPanel:visible")
    turns = reopened.locator(".jp-RenderedArcanaTurn")
    expect(turns).to_have_count(len(TURNS), timeout=30_000)
    assert page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.session") is None
    expect(reopened).not_to_contain_text("Error displaying widget")
    expect(reopened).not_to_contain_text("Model not found")

    replay = reopened.locator(".jp-RenderedArcanaReplay")
    expect(replay).to_have_count(1)
    expect(replay.locator(".arcana-replay-status")).to_contain_text(
        f"From tour.arcana/{run_ids[0]}.jsonl", timeout=30_000)
    label = replay.locator(".arcana-turn-label")
    expect(label).to_contain_text(f"Turn {len(TURNS)} ({len(TURNS)} of {len(TURNS)})")
    replay.locator(".arcana-prev").click()
    expect(label).to_contain_text(f"Turn {len(TURNS) - 1}")
    # reopened without a kernel: the replay's what-if is there but says it needs one, its controls disabled
    whatif = replay.locator(".arcana-replay-whatif")
    expect(whatif.locator(".arcana-disclosure")).to_contain_text("What if… (needs a kernel)")
    whatif.locator(".arcana-disclosure").click()
    expect(whatif.locator(".arcana-whatif-needs-kernel")).to_contain_text("A kernel is needed")
    expect(whatif.locator(".arcana-whatif-run")).to_be_disabled()

    first = turns.nth(0)
    first.locator(".arcana-summary").click()
    body = first.locator(".arcana-inspector")
    expect(body.locator(".arcana-detail-note")).to_contain_text(
        f"Detail from tour.arcana/{run_ids[0]}.jsonl", timeout=20_000)
    rows = body.locator(".arcana-vt-body-row")
    expect(rows.first).to_be_visible()
    user_row = rows.filter(has_text="user").first
    user_row.click()
    expect(body.locator(".arcana-vt-detail").first).to_contain_text("Load sales.csv with pandas")  # read from the trace
    expect(first.locator(".arcana-live")).to_have_count(0)  # no kernel: read-only
    # The prompt as sent, from the trace's prompt_sent events (no snapshots, no kernel), verified.
    sent_btn = body.get_by_role("button", name=re.compile(r"^Prompt as sent \(\d+ messages.*\) · verified$")).first
    sent_btn.click()
    sent = body.locator(".arcana-sent-prompt").first
    expect(sent.locator(".arcana-sent-status")).to_contain_text("recorded as sent; verified (digest ")
    expect(sent.locator(".arcana-prompt-msg").first).to_contain_text("system")
    expect(sent).to_contain_text("Load sales.csv with pandas")
    sent.scroll_into_view_if_needed()
    shot(page, "notebook-native-reopened-prompt-sent")
    first.scroll_into_view_if_needed()
    shot(page, "notebook-native-reopened-inspector")
    replay_sent = replay.get_by_role("button", name=re.compile(r"^Prompt as sent \(\d+ messages.*\) · verified$"))
    replay_sent.click()
    expect(replay.locator(".arcana-sent-status")).to_contain_text("verified (digest ")
    expect(replay.locator(".arcana-sent-prompt")).to_contain_text("Load sales.csv with pandas")
    replay.locator(".arcana-sent-prompt").scroll_into_view_if_needed()
    shot(page, "notebook-native-reopened-replay-prompt-sent")
    replay.scroll_into_view_if_needed()
    shot(page, "notebook-native-reopened-replay")

    page.evaluate("() => window.jupyterapp.shell.activateById('arcana-runs')")
    expect(page.locator(".arcana-runs-heading")).to_have_text("Runs in tour.arcana/")
    expect(page.locator(".arcana-run-item", has_text=run_ids[0])).to_have_count(1)
    shot(page, "notebook-native-reopened-sidebar")
    # ipywidgets' own extension throws on a notebook with no session at all ("reading 'kernel'"): not ours.
    assert [s for s in stacks if "@jupyter-widgets/jupyterlab-manager" not in s] == []
    assert [e for e in page.page_errors if "reading 'kernel'" not in e] == []
    assert missing == []

    # The saved notebook holds summaries: small, and the metadata points at the moved traces.
    path = lab_root / "tour.ipynb"
    nb = json.loads(path.read_text())
    metas = [o.get("metadata", {}).get("arcana") for c in nb["cells"] for o in c.get("outputs", [])
             if "application/vnd.arcana.turn+json" in o.get("data", {})]
    assert len(metas) == len(TURNS) and all(m["trace_path"] == f"tour.arcana/{run_ids[0]}.jsonl" for m in metas)
    per_turn = path.stat().st_size / len(TURNS)
    (Path(__file__).resolve().parents[2] / "test-artifacts" / "browser" / "notebook-native-size.txt").write_text(
        f"tour.ipynb: {path.stat().st_size} bytes, {len(TURNS)} turns + replay: {per_turn:.0f} bytes per turn\n")
    assert per_turn <= LIMIT, f"{per_turn:.0f} bytes per turn"

    # Every turn reproduces from its recording.
    arcana = Path(sys.executable).parent / "arcana"
    proc = subprocess.run([str(arcana), "report", str(path), "--verify", "-o", str(lab_root / "tour.report.html")],
                          capture_output=True, text=True, timeout=600, cwd=lab_root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (lab_root / "tour.report.html").is_file()


def test_renaming_a_notebook_with_traces_moves_its_folder_and_the_kernel_follows(page, lab_root: Path) -> None:
    for stale in ("before.ipynb", "after.ipynb"):
        (lab_root / stale).unlink(missing_ok=True)
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 and "arcana" in r.url else None)
    page.goto(f"{page.base_url}/lab?reset")
    wait_for_lab(page)
    page.evaluate("async () => { const p = await window.jupyterapp.commands.execute('notebook:create-new',"
                  " {kernelName: 'python3'});"
                  " await p.context.ready; await p.context.rename('before.ipynb'); }")
    page.wait_for_function(KERNEL_CONNECTED, timeout=60_000)
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.path === 'before.ipynb'")
    for source in TOUR[:4]:
        run_cell(page, source)
    (run,) = [p.stem for p in (lab_root / "before.arcana").glob("r_*.jsonl")]

    # Rename while the kernel runs the session: the folder moves, the outputs and the kernel follow.
    page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.context.rename('after.ipynb'); }")
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.context.path === 'after.ipynb'")
    page.wait_for_function(
        """() => { const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
          for (let c = 0; c < cells.length; c++) { const o = cells.get(c).outputs;
            for (let i = 0; o && i < o.length; i++) { const m = o.get(i).metadata.arcana;
              if (m && m.trace_path && m.trace_path.startsWith('after.arcana/')) { return true; } } }
          return false; }""", timeout=20_000)
    assert (lab_root / "after.arcana" / f"{run}.jsonl").is_file() and not (lab_root / "before.arcana").exists()
    run_cell(page, f"%%arcana\n{TURNS[2]}")
    turns = page.locator(".jp-NotebookPanel:visible .jp-RenderedArcanaTurn")
    expect(turns).to_have_count(2)
    ends = [json.loads(line)["turn"] for line in (lab_root / "after.arcana" / f"{run}.jsonl").read_text().splitlines()
            if json.loads(line)["event_type"] == "turn_end"]
    assert ends == [1, 2]  # the open session kept writing to the moved file
    metas = page.evaluate(
        """() => { const out = []; const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
          for (let c = 0; c < cells.length; c++) { const o = cells.get(c).outputs;
            for (let i = 0; o && i < o.length; i++) {
              const m = o.get(i).metadata.arcana; if (m && m.turn) { out.push(m.trace_path); } } }
          return out; }""")
    assert metas == [f"after.arcana/{run}.jsonl"] * 2
    turns.nth(0).locator(".arcana-summary").click()
    expect(turns.nth(0).locator(".arcana-detail-note")).to_contain_text(
        f"Detail from after.arcana/{run}.jsonl", timeout=20_000)
    page.evaluate("() => window.jupyterapp.shell.activateById('arcana-runs')")
    expect(page.locator(".arcana-runs-heading")).to_have_text("Runs in after.arcana/")
    expect(page.locator(".arcana-run-item", has_text=run)).to_have_count(1)
    shot(page, "notebook-native-renamed-live")
    assert missing == []
