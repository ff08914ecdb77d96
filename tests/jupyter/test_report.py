"""Reports: one offline HTML file; --verify re-executes against the recorded run, turn by turn."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from arcana_jupyter.cli import main as cli_main
from arcana_jupyter.demo import execute_notebook
from arcana_jupyter.report import build_report

EXTERNAL = re.compile(r"""\b(?:src|href|srcset)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)

HOSTILE_MODEL = '''def model(request):
    last = request.messages[-1].content
    return ("Reply to: " + last + " <script>alert(1)</script><img src=x onerror=alert(2)> "
            "see https://example.org/docs and [the docs](https://example.org/x)")'''


def recorded_notebook(folder: Path, second_message: str = "Second question about {topic}.") -> Path:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Report test <b>bold</b>"),
        nbformat.v4.new_code_cell("%load_ext arcana_jupyter"),
        nbformat.v4.new_code_cell(HOSTILE_MODEL),
        nbformat.v4.new_code_cell("%arcana_chat --model fn:model --window 3000 --reserve 300 --primitives pin"),
        nbformat.v4.new_code_cell("topic = 'tides'"),
        nbformat.v4.new_code_cell("%%arcana\nFirst question about {topic}."),
        nbformat.v4.new_code_cell(f"%%arcana\n{second_message}"),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    path = folder / "analysis.ipynb"
    nbformat.write(nb, path)
    execute_notebook(path)
    return path


def test_report_is_offline_escaped_and_verifies_turn_by_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded_notebook(tmp_path)
    out = tmp_path / "out.html"
    assert cli_main(["report", str(path), "-o", str(out), "--verify"]) == 0
    printed = capsys.readouterr().out
    assert "ok   main turn 1: prompt same, reply same" in printed and "ok   main turn 2" in printed
    html = out.read_text()
    assert EXTERNAL.findall(html) == []
    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;" in html
    assert "see https://example.org/docs" in html  # plain text links in content stay as text
    verification = html[: html.index("<h2>Summary</h2>")]
    assert "reproduced: 2 of 2 turn(s)" in verification and verification.count("✓ same") == 4
    assert html.count('<details class="arcana-inspector">') == 2 and "<svg" in html
    assert re.search(r"<b>2</b><span>turns</span>", html)


def test_verify_reports_a_turn_that_is_no_longer_reproduced(tmp_path: Path) -> None:
    path = recorded_notebook(tmp_path)
    nb = nbformat.read(path, as_version=4)
    nb.cells[6].source = "%%arcana\nA different second question."  # edited after recording
    nbformat.write(nb, path)
    from arcana_jupyter.report.build import collect_bundles, sessions_of
    from arcana_jupyter.report.verify import verify_notebook

    result = verify_notebook(path, sessions_of(collect_bundles(nb)))
    assert [(c.turn, c.prompt_reproduced) for c in result.checks] == [(1, True), (2, False)]
    assert not result.ok and "NOT reproduced: 1 of 2" in result.summary()
    assert result.checks[1].note  # says why (the replay provider's divergence, or the digest)
    report = build_report(path)
    assert report == tmp_path / "analysis.report.html" and "Not verified." in report.read_text()


def test_embedded_traces_let_the_notebook_travel_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    path = recorded_notebook(tmp_path)
    assert cli_main(["report", str(path), "--embed", "-o", str(tmp_path / "first.html")]) == 0
    assert "embedded 1 trace file(s)" in capsys.readouterr().out
    alone = tmp_path / "moved"
    alone.mkdir()
    shutil.copy2(path, alone / path.name)  # only the .ipynb: no trace folder beside it
    assert not (alone / "analysis.arcana").exists()
    out = build_report(alone / path.name, verify=True)
    html = out.read_text()
    assert "(embedded in the notebook)" in html and "reproduced: 2 of 2 turn(s)" in html
    assert re.search(r"<b>2</b><span>turns</span>", html)
    assert not (alone / "analysis.arcana").exists()  # nothing unpacked beside the notebook
