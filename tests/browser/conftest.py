"""A real JupyterLab on 127.0.0.1 with a temporary root, driven by Debian's chromium through
Playwright (``executable_path``: no browser download). One server and one browser per module.

Needs: the extension built and linked (scripts/build-labextension.sh, run here if needed) and
/usr/bin/chromium (``scripts/setup.sh --browser`` installs it with apt).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from .fixtures.generate import write_examples

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def built_extension() -> Path:
    """The extension built, linked into this Python's prefix, and listed by JupyterLab."""
    # ARCANA_LABEXTENSION_NO_LINK=1: build only, leave the shared Python's link alone (a git worktree sharing
    # one virtualenv with others): JUPYTER_PATH=<dir> with <dir>/labextensions/arcana-jupyter -> this build
    # puts it first for JupyterLab instead
    flags = ["--no-link"] if os.environ.get("ARCANA_LABEXTENSION_NO_LINK") else []
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "build-labextension.sh"), *flags], cwd=ROOT,
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "ARCANA_PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    listing = subprocess.run([sys.executable, "-m", "jupyterlab.labextensions", "list"], capture_output=True, text=True,
                             timeout=120)
    out = listing.stdout + listing.stderr
    line = next((ln for ln in out.splitlines() if "arcana-jupyter" in ln), "")
    assert "enabled" in line and "OK" in line, out
    return ROOT / "arcana_jupyter" / "labextension"


@pytest.fixture(scope="module")
def lab_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("labroot")
    write_examples(root)
    return root


@pytest.fixture(scope="module")
def lab_server(built_extension: Path, lab_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``jupyter lab`` on a free loopback port, no token, nothing sent to the network."""
    home = tmp_path_factory.mktemp("labhome")
    port = _free_port()
    env = {
        **os.environ,
        # A private home: a kernel started by this server writes nothing (memory, caches) to the user's.
        "HOME": str(home),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        "--ServerApp.token=", "--ServerApp.password=",
        "--ip=127.0.0.1", f"--port={port}", f"--ServerApp.root_dir={lab_root}", "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.expose_app_in_browser=True",
        "--ServerApp.port_retries=0",
    ]
    # No "get notified about Jupyter news?" toast, no update check: nothing asks for the network.
    notif = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notif.parent.mkdir(parents=True)
    notif.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    log = (home / "lab.log").open("w")
    proc = subprocess.Popen(cmd, cwd=lab_root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                raise RuntimeError("jupyter lab exited:\n" + (home / "lab.log").read_text())
            try:
                with urllib.request.urlopen(f"{base}/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("jupyter lab did not start in 90 s:\n" + (home / "lab.log").read_text())
            time.sleep(0.25)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), (
        "Debian's chromium is needed: scripts/setup.sh --browser (apt-get install -y chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser: object, lab_server: str) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    # Console errors that name our extension (a plugin that failed to activate logs one).
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and "arcana" in m.text.lower() else None)
    pg.base_url = lab_server  # type: ignore[attr-defined]
    pg.page_errors = errors  # type: ignore[attr-defined]
    try:
        yield pg
    finally:
        context.close()


def shot(page: object, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))  # type: ignore[attr-defined]
    return path


def clean_up_dirs(*paths: Path) -> None:
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)
