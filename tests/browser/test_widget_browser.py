"""The turn widget (anywidget) where our JupyterLab extension does not run, as a user sees it.

A real JupyterLab on 127.0.0.1 with the arcana-jupyter labextension disabled in a private
``JUPYTER_CONFIG_DIR`` (``jupyter labextension disable --level=user``), so the page has only
JupyterLab's own renderers and the ipywidgets manager — what VS Code and Colab give a notebook. With
``frontend = "auto"`` the kernel sees that the page never answered the ``arcana`` comm and shows each
turn as the widget too: the same inspector (summary line, decision table, live actions), an unpin
from the widget goes through the comm's handler and is traced as the user's; the saved notebook keeps
our MIME bundle and the static HTML beside the widget view. Reopened without the kernel every turn
is still shown: as the widget, from the widget state JupyterLab saved (Save Widget State
Automatically, on here); without widget state, by our renderer in a JupyterLab with the extension
(it ranks ahead of the widget view), and as the static HTML where the widget view is not rendered (an
untrusted notebook). Not covered, because JupyterLab cannot: a *trusted* notebook without widget
state in a JupyterLab without our extension shows "Error displaying widget: model not found"
(jupyterlab_widgets picks the widget view and has no fallback); the static HTML is in the file.

The replay (``%arcana_replay``) is a widget there too: the trace viewer, on the trace the kernel reads,
scrubbed to another turn, and that turn rebuilt by the kernel with a smaller window (its what-if form).

Screenshots: test-artifacts/browser/widget-inspector.png, widget-replay.png, widget-replay-what-if.png,
widget-reopened-state.png, widget-reopened-static.png, widget-reopened-extension.png.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import ROOT, _free_port, shot
from .helpers import KERNEL_CONNECTED, run_cell

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
MIME = "application/vnd.arcana.turn+json"

SETUP = '''
from arcana_jupyter.providers.function import FunctionProvider

def deadline_model(request):
    """Says whether the pinned note (never repeated in a reply) is in the prompt."""
    seen = " ".join(str(m.content) for m in request.messages)
    return "The pinned note is in my prompt." if "ZX-41" in seen else "No pinned note in my prompt."

deadline = FunctionProvider(deadline_model, model_name="deadline")
'''


@contextlib.contextmanager
def lab(root: Path, home: Path, *, extension: bool, save_widget_state: bool = False, app: str = "lab") -> Iterator[str]:
    """``jupyter lab`` on a free loopback port with a private home; ``extension=False``: ours disabled
    (the page config of the private ``JUPYTER_CONFIG_DIR``); ``True``: this checkout's build, linked in a
    private ``JUPYTER_DATA_DIR`` (ahead of the one in the environment), so the shared one is not touched.
    ``save_widget_state``: Settings > Save Widget State Automatically (off by default in JupyterLab).
    ``app="notebook"``: Notebook 7 (the ``notebook`` package) instead of JupyterLab."""
    port = _free_port()
    env = {
        **os.environ,
        "HOME": str(home), "IPYTHONDIR": str(home / "ipython"), "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),  # the kernel imports this checkout
    }
    env.pop("VSCODE_PID", None)
    notif = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notif.parent.mkdir(parents=True, exist_ok=True)
    notif.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    if save_widget_state:
        widgets = home / "settings" / "@jupyter-widgets" / "jupyterlab-manager" / "plugin.jupyterlab-settings"
        widgets.parent.mkdir(parents=True, exist_ok=True)
        widgets.write_text('{"saveState": true}')
    if extension:
        build = ROOT / "arcana_jupyter" / "labextension"
        assert (build / "package.json").is_file(), "build the extension first: scripts/build-labextension.sh"
        link = home / "data" / "labextensions" / "arcana-jupyter"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(build)
    else:
        proc = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "disable", "--level=user",
                               "arcana-jupyter"], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        config = json.loads((home / "config" / "labconfig" / "page_config.json").read_text())
        assert config["disabledExtensions"]["arcana-jupyter"] is True
    cmd = [sys.executable, "-m", "jupyterlab" if app == "lab" else "notebook", "--no-browser", "--allow-root",
           "--ServerApp.token=", "--ServerApp.password=", "--ip=127.0.0.1", f"--port={port}",
           f"--ServerApp.root_dir={root}", "--ServerApp.port_retries=0"]
    if app == "lab":
        cmd += ["--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.expose_app_in_browser=True"]
    else:
        cmd += ["--JupyterNotebookApp.expose_app_in_browser=True"]
    log_path = home / f"lab-{port}.log"
    with log_path.open("w") as log:
        proc_lab = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                if proc_lab.poll() is not None:
                    raise RuntimeError("jupyter lab exited:\n" + log_path.read_text())
                with contextlib.suppress(OSError), urllib.request.urlopen(f"{base}/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError("jupyter lab did not start in 90 s:\n" + log_path.read_text())
                time.sleep(0.25)
            yield base
        finally:
            proc_lab.terminate()
            try:
                proc_lab.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc_lab.kill()
                proc_lab.wait(timeout=5)


def new_page(browser: object, base: str) -> object:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    pg.base_url = base
    return pg


def open_notebook(pg: object, name: str, app: str = "lab") -> None:
    if app == "lab":
        pg.goto(f"{pg.base_url}/lab/tree/{name}?reset")  # type: ignore[attr-defined]
        pg.wait_for_selector("#jp-main-dock-panel", timeout=60_000)  # type: ignore[attr-defined]
    else:
        pg.goto(f"{pg.base_url}/notebooks/{name}")  # type: ignore[attr-defined]
    pg.wait_for_function("() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"  # type: ignore[attr-defined]
                         " return !!(w && w.context && w.context.path === " + json.dumps(name) + "); }",
                         timeout=60_000)


def test_the_widget_shows_the_inspector_where_the_extension_is_not_loaded(
        browser: object, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("widgetroot")
    name = "widget.ipynb"
    nb = {"cells": [{"cell_type": "code", "id": "c0", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": ""}], "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                      "language": "python"}}}
    (root / name).write_text(json.dumps(nb), encoding="utf-8")

    with lab(root, tmp_path_factory.mktemp("widgethome"), extension=False, save_widget_state=True) as base:
        pg = new_page(browser, base)
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))  # type: ignore[attr-defined]
        open_notebook(pg, name)
        assert not pg.evaluate("() => !!window.jupyterapp.commands.hasCommand('arcana:open-trace-viewer')")
        pg.wait_for_function(KERNEL_CONNECTED, timeout=60_000)  # type: ignore[attr-defined]
        run_cell(pg, "%load_ext arcana_jupyter")
        run_cell(pg, SETUP)
        run_cell(pg, "%arcana_chat --model fn:deadline --classic --primitives pin\n"
                     "import arcana_jupyter.jupyter as aj\n"
                     "_ = aj.session().pin('The deadline is 30 June (budget code ZX-41).', label='deadline')")
        run_cell(pg, "%%arcana\nWhen is the deadline?")
        notebook = pg.locator(".jp-NotebookPanel:visible")  # type: ignore[attr-defined]
        widget = notebook.locator(".arcana-widget")
        expect(widget).to_have_count(1, timeout=30_000)
        summary = widget.locator(".arcana-summary")
        expect(summary).to_contain_text("arcana · turn 1")
        expect(summary).to_contain_text("1 pin")
        expect(widget).to_contain_text("The pinned note is in my prompt.")  # the reply, as text
        summary.click()
        expect(widget.locator(".arcana-inspector")).to_be_visible()
        expect(widget.locator(".arcana-vt-row").first).to_be_visible()  # the decision table
        # the prompt texts the notebook keeps only in the trace, read through the kernel
        expect(widget.locator(".arcana-detail-note")).to_contain_text("Detail from widget.arcana/r_")
        live = widget.locator(".arcana-live")
        expect(live).to_be_visible(timeout=30_000)  # the state request answered over the widget's messages
        unpin = live.locator("button[data-action='unpin']")
        expect(unpin).to_have_count(1)
        unpin.click()
        expect(live.locator(".arcana-live-status")).to_contain_text("done", timeout=30_000)
        expect(live.locator("button[data-action='unpin']")).to_have_count(0)
        widget.scroll_into_view_if_needed()
        shot(pg, "widget-inspector")

        # Traced like the comm's actions: the user's unpin, in the run's trace.
        trace = next((root / "widget.arcana").glob("r_*.jsonl"))
        events = [json.loads(line) for line in trace.read_text().splitlines()]
        unpins = [e for e in events if e["event_type"] == "cognitive_primitive"
                  and e["metadata"].get("primitive") == "unpin"]
        assert unpins and unpins[-1]["metadata"].get("source") == "user", unpins

        # A second turn (in the empty cell at the end: the clicks made the turn's cell the active one):
        # the pin is gone from the prompt.
        pg.evaluate("() => { const nb = window.jupyterapp.shell.currentWidget.content;"
                    " nb.activeCellIndex = nb.widgets.length - 1; }")
        run_cell(pg, "%%arcana\nAnd now?")
        expect(notebook.locator(".arcana-widget")).to_have_count(2, timeout=30_000)
        expect(notebook.locator(".arcana-widget").last).to_contain_text("No pinned note in my prompt.")

        # The replay, as the widget: the trace viewer on the run's trace (read by the kernel), scrubbed.
        run_cell(pg, "%arcana_replay")
        replay = notebook.locator(".arcana-replay-widget")
        expect(replay).to_have_count(1, timeout=30_000)
        expect(replay.locator(".arcana-replay-status")).to_contain_text("From widget.arcana/r_")
        label = replay.locator(".arcana-turn-label")
        expect(label).to_contain_text("Turn 2 (2 of 2)")  # the run's turns, counted as the header counts them
        # moved as a drag does ...
        replay.locator(".arcana-slider").evaluate(
            "el => { el.value = String(Number(el.value) - 1); el.dispatchEvent(new Event('input')); }")
        expect(label).to_contain_text("Turn 1 (")
        # ... and by ← → on the focused slider, in the widget too (the notebook's shortcuts do not take them)
        replay.locator(".arcana-slider").focus()
        pg.keyboard.press("ArrowRight")  # type: ignore[attr-defined]
        expect(label).to_contain_text("Turn 2 (2 of 2)")
        pg.keyboard.press("ArrowLeft")  # type: ignore[attr-defined]
        expect(label).to_contain_text("Turn 1 (1 of 2)")
        # the pin made before turn 1 and unpinned after it was in turn 1's prompt (its [PIN] row), and is listed
        expect(replay.locator(".arcana-pins-section")).to_contain_text("Pins active at turn 1 (1)")
        replay.scroll_into_view_if_needed()
        shot(pg, "widget-replay")
        # What if, in the replay widget: its kernel rebuilds turn 1 of its own run with a smaller window.
        section = replay.locator(".arcana-replay-whatif")
        section.locator(".arcana-disclosure", has_text="What if").click()
        section.locator(".arcana-whatif-window").fill("512")
        section.locator(".arcana-whatif-reserve").fill("128")
        section.locator(".arcana-whatif-run").click()
        expect(section.locator(".arcana-whatif-summary")).to_contain_text("Window 512, reserve 128", timeout=30_000)
        expect(section.locator(".arcana-whatif-summary")).to_contain_text("digest verified")
        section.scroll_into_view_if_needed()
        shot(pg, "widget-replay-what-if")
        assert not errors, errors

        pg.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
        pg.evaluate("async () => { const w = window.jupyterapp.shell.currentWidget;"
                    " await w.sessionContext.shutdown(); await w.close(); }")
        saved = json.loads((root / name).read_text())
        outputs = [o for c in saved["cells"] for o in c.get("outputs", []) if MIME in o.get("data", {})]
        assert len(outputs) == 2
        for o in outputs:  # the widget view, and everything a page without the widget shows
            assert {WIDGET_VIEW, MIME, "text/html", "text/plain"} <= set(o["data"]), sorted(o["data"])
            assert o["data"][MIME]["status"] == "ok" and o["data"][MIME]["compact"] is True
        assert "The pinned note is in my prompt." in "".join(outputs[0]["data"]["text/html"])

        # The widget state was saved (the ES module and the bundle of each turn): reopened without the
        # kernel that made it, each turn is the widget again, drawn from the saved state.
        state = saved["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
        models = [m["state"] for m in state.values() if m["model_name"] == "AnyModel"]
        assert sorted(m["bundle"]["turn"] for m in models if m["kind"] == "turn") == [1, 2]
        assert [m["replay"]["run_id"] for m in models if m["kind"] == "replay"] == [outputs[0]["data"][MIME]["run_id"]]
        assert all("renderWidget" in m["_esm"] for m in models)
        pg1 = new_page(browser, base)
        open_notebook(pg1, name)
        restored = pg1.locator(".jp-NotebookPanel:visible .arcana-widget:not(.arcana-replay-widget)")  # type: ignore[attr-defined]
        expect(restored).to_have_count(2, timeout=30_000)
        expect(restored.first.locator(".arcana-summary")).to_contain_text("arcana · turn 1")
        expect(restored.last).to_contain_text("No pinned note in my prompt.")
        shot(pg1, "widget-reopened-state")

        # Without widget state, in a page that cannot render the widget (a copy is not trusted — its
        # signature is not this server's — so the unsafe widget view is skipped, as on another machine):
        # the static HTML.
        copy = json.loads((root / name).read_text())
        copy["metadata"].pop("widgets")
        (root / "copy.ipynb").write_text(json.dumps(copy))
        pg2 = new_page(browser, base)
        open_notebook(pg2, "copy.ipynb")
        html = pg2.locator(".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type='text/html']"  # type: ignore[attr-defined]
                           ).filter(has_text="session: ")  # the turns (not the session's banner)
        expect(html).to_have_count(2, timeout=30_000)
        expect(html.first).to_contain_text("The pinned note is in my prompt.")
        expect(html.last).to_contain_text("No pinned note in my prompt.")
        shot(pg2, "widget-reopened-static")

    # Where our extension runs, its renderer wins over the widget view: every turn, without a kernel
    # and without widget state (the copy), and in the trusted original, whose widget state is there.
    with lab(root, tmp_path_factory.mktemp("exthome"), extension=True) as base:
        pg3 = new_page(browser, base)
        open_notebook(pg3, "copy.ipynb")
        turns = pg3.locator(".jp-NotebookPanel:visible .jp-RenderedArcanaTurn")  # type: ignore[attr-defined]
        expect(turns).to_have_count(2, timeout=30_000)
        pg3 = new_page(browser, base)
        open_notebook(pg3, name)
        turns = pg3.locator(".jp-NotebookPanel:visible .jp-RenderedArcanaTurn")  # type: ignore[attr-defined]
        expect(turns).to_have_count(2, timeout=30_000)
        expect(turns.first).to_contain_text("arcana · turn 1")
        expect(turns.last).to_contain_text("arcana · turn 2")
        expect(pg3.locator(".jp-NotebookPanel:visible .arcana-widget")).to_have_count(0)  # type: ignore[attr-defined]
        expect(pg3.locator(".jp-NotebookPanel:visible")).not_to_contain_text("model not found")  # type: ignore[attr-defined]
        shot(pg3, "widget-reopened-extension")


def test_the_widget_in_notebook_7_without_the_extension(browser: object,
                                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    """Notebook 7 (the ``notebook`` package) with our extension disabled: the same widget, the same unpin."""
    notebook = pytest.importorskip("notebook")
    assert int(notebook.__version__.split(".")[0]) >= 7, notebook.__version__
    root = tmp_path_factory.mktemp("nb7root")
    name = "nb7.ipynb"
    nb = {"cells": [{"cell_type": "code", "id": "c0", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": ""}], "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                      "language": "python"}}}
    (root / name).write_text(json.dumps(nb), encoding="utf-8")
    with lab(root, tmp_path_factory.mktemp("nb7home"), extension=False, app="notebook") as base:
        pg = new_page(browser, base)
        errors: list[str] = []
        # Errors of our code or the widget's (Notebook 7's own settings loader may throw one on load).
        pg.on("pageerror", lambda exc: errors.append(f"{exc.message}\n{exc.stack}"))  # type: ignore[attr-defined]
        open_notebook(pg, name, app="notebook")
        pg.wait_for_function(KERNEL_CONNECTED, timeout=60_000)  # type: ignore[attr-defined]
        run_cell(pg, "%load_ext arcana_jupyter")
        run_cell(pg, SETUP)
        run_cell(pg, "%arcana_chat --model fn:deadline --classic --primitives pin\n"
                     "import arcana_jupyter.jupyter as aj\n"
                     "_ = aj.session().pin('The deadline is 30 June (budget code ZX-41).', label='deadline')")
        run_cell(pg, "%%arcana\nWhen is the deadline?")
        widget = pg.locator(".arcana-widget")  # type: ignore[attr-defined]
        expect(widget).to_have_count(1, timeout=30_000)
        expect(widget).to_contain_text("The pinned note is in my prompt.")
        widget.locator(".arcana-summary").click()
        expect(widget.locator(".arcana-vt-row").first).to_be_visible()
        live = widget.locator(".arcana-live")
        expect(live).to_be_visible(timeout=30_000)
        live.locator("button[data-action='unpin']").click()
        expect(live.locator(".arcana-live-status")).to_contain_text("done", timeout=30_000)
        widget.scroll_into_view_if_needed()
        shot(pg, "widget-notebook7")
        trace = next((root / "nb7.arcana").glob("r_*.jsonl"))
        unpins = [e for e in map(json.loads, trace.read_text().splitlines())
                  if e["event_type"] == "cognitive_primitive" and e["metadata"].get("primitive") == "unpin"]
        assert unpins and unpins[-1]["metadata"].get("source") == "user", unpins
        ours = [e for e in errors if "arcana" in e.lower() or "anywidget" in e.lower() or "widget.js" in e]
        assert not ours, ours
