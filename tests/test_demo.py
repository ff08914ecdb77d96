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
