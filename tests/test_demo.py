"""The main-job demo: the quickstart runs headless on the local model and its report verifies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arcana_jupyter.demo import main

pytestmark = pytest.mark.slow


def test_demo_runs_the_quickstart_and_writes_a_verified_offline_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--out", str(tmp_path / "demo")]) == 0
    printed = capsys.readouterr().out
    report = tmp_path / "demo" / "quickstart.report.html"
    assert f"report:            {report}" in printed
    assert "reproduced: 2 of 2 turn(s)" in printed
    html = report.read_text()
    assert re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html, re.IGNORECASE) == []
    assert "<script" not in html.lower() and "require.js" not in html and "cdn" not in html.lower()
    top = html[: html.index("<h2>Summary</h2>")]
    assert "reproduced: 2 of 2 turn(s) had the same prompt digest and reply" in top
    assert "<svg" in html and "Tokens per turn" in html
    assert html.count('<details class="arcana-inspector">') == 2  # every turn's inspector
    assert "The Lisbon" in html or "Lisbon" in html
    assert (tmp_path / "demo" / "quickstart.arcana").is_dir()
    screenshot_report(report)


def screenshot_report(report: Path) -> None:
    """The report opened from disk in headless Chromium with the network off: it must stand alone."""
    from playwright.sync_api import sync_playwright

    artifacts = Path(__file__).resolve().parents[1] / "test-artifacts" / "jupyter"
    artifacts.mkdir(parents=True, exist_ok=True)
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=args, headless=True)
        context = browser.new_context(offline=True, viewport={"width": 1200, "height": 1400})
        requests: list[str] = []
        page = context.new_page()
        page.on("request", lambda request: requests.append(request.url))
        page.goto(report.as_uri())
        assert [u for u in requests if not u.startswith("file://")] == []
        assert page.get_by_text("reproduced: 2 of 2 turn(s)").is_visible()
        page.screenshot(path=str(artifacts / "report.png"))
        browser.close()
