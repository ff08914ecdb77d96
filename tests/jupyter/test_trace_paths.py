"""Readers follow the trace_path a notebook's outputs recorded, and never one that leaves its folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from trace_fixtures_loader import load_trace_fixtures

from arcana_jupyter.cli import main as cli_main
from arcana_jupyter.exceptions import ArcanaError
from arcana_jupyter.report import build_report
from arcana_jupyter.report.embed import embed_traces
from arcana_jupyter.report.sources import locate_runs, safe_trace_file, valid_run_id

fixtures = load_trace_fixtures()

MIME = "application/vnd.arcana.turn+json"
SECRET = "Question {turn}: TOPSECRET-5f3a payroll numbers"


def turn_output(run_id: str, trace_path: str | None, turn: int = 1, agent: str = "main") -> Any:
    bundle = {"version": 1, "run_id": run_id, "agent": agent, "turn": turn, "trace_path": trace_path,
              "status": "ok", "input": "hi", "reply": "hello", "usage": {"input_tokens": 10, "output_tokens": 2}}
    return nbformat.v4.new_output("display_data", data={MIME: bundle, "text/plain": "turn"},
                                  metadata={"arcana": {"run_id": run_id, "agent": agent, "turn": turn,
                                                       "trace_path": trace_path}})


def notebook_with(folder: Path, name: str, outputs: list[Any]) -> Path:
    cell = nbformat.v4.new_code_cell("%%arcana\nhi")
    cell.outputs = outputs
    path = folder / name
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    return path


def test_safe_trace_file_refuses_every_way_out(tmp_path: Path) -> None:
    inside, why = safe_trace_file(tmp_path, "a.arcana/r_1.jsonl")
    assert inside == tmp_path.resolve() / "a.arcana" / "r_1.jsonl" and why == ""
    for bad, reason in [
        ("/etc/passwd.jsonl", "absolute"), ("C:\\x\\r.jsonl", "absolute"), ("\\\\server\\share\\r.jsonl", "absolute"),
        ("~/r.jsonl", "absolute"), ("../r.jsonl", "leaves"), ("a/../../r.jsonl", "leaves"),
        ("a\\..\\..\\r.jsonl", "leaves"),
        ("a.arcana/r_1.txt", "not a .jsonl"), ("", "no trace_path"), ("x" * 2000 + ".jsonl", "too long"),
    ]:
        path, why = safe_trace_file(tmp_path, bad)
        assert path is None and reason in why, (bad, why)
    (tmp_path / "outside.jsonl").write_text("{}")
    nb_dir = tmp_path / "nb"
    (nb_dir / "a.arcana").mkdir(parents=True)
    os.symlink(tmp_path / "outside.jsonl", nb_dir / "a.arcana" / "r_1.jsonl")
    path, why = safe_trace_file(nb_dir, "a.arcana/r_1.jsonl")
    assert path is None and "through a link" in why
    assert valid_run_id("r_20261130_010203_ab12cd") and not valid_run_id("../x") and not valid_run_id("/abs")
    assert not valid_run_id("..") and not valid_run_id("a/b") and not valid_run_id(5)


def test_a_crafted_notebook_cannot_make_the_report_read_outside_its_folder(tmp_path: Path) -> None:
    outside = tmp_path / "private"
    fixtures.write_run(outside / "r_20261130_000000_5ec7e7.jsonl", "r_20261130_000000_5ec7e7", turns=1,
                       user_text=SECRET).close()
    secret = outside / "r_20261130_000000_5ec7e7.jsonl"
    assert "TOPSECRET-5f3a" in secret.read_text()
    nb_dir = tmp_path / "nb"
    nb_dir.mkdir()
    (nb_dir / "crafted.arcana").mkdir()
    os.symlink(secret, nb_dir / "crafted.arcana" / "r_20261130_000000_aaaaaa.jsonl")  # a link out of the folder
    path = notebook_with(nb_dir, "crafted.ipynb", [
        turn_output("r_20261130_000000_5ec7e7", "../private/r_20261130_000000_5ec7e7.jsonl"),
        turn_output("r_20261130_000000_5ec7e7", str(secret), turn=2),
        turn_output(str(outside / "r_20261130_000000_5ec7e7"), None, agent="abs"),
        turn_output("../private/r_20261130_000000_5ec7e7", None, agent="rel"),
        turn_output("r_20261130_000000_aaaaaa", None, agent="link"),
    ])
    nb = nbformat.read(path, as_version=4)
    runs = locate_runs(path, nb)
    assert [r.path for r in runs] == [None, None, None, None]
    assert any("leaves the notebook's folder" in p for p in runs[0].problems)
    assert "not a valid run id" in runs[1].problems[0] and "not a valid run id" in runs[2].problems[0]
    html = build_report(path).read_text()
    assert "TOPSECRET" not in html and "payroll" not in html
    with pytest.raises(ArcanaError, match="cannot embed run"):
        embed_traces(path)
    assert "TOPSECRET" not in path.read_text()  # nothing was copied into the notebook


def test_renamed_notebook_follows_its_recorded_traces(tmp_path: Path) -> None:
    run_id = "r_20261130_010203_abcdef"
    fixtures.write_run(tmp_path / "Untitled.arcana" / f"{run_id}.jsonl", run_id, turns=2).close()
    path = notebook_with(tmp_path, "tour.ipynb", [turn_output(run_id, f"Untitled.arcana/{run_id}.jsonl", turn=t)
                                                 for t in (1, 2)])
    (run,) = locate_runs(path, nbformat.read(path, as_version=4))
    assert (run.source, run.turns, run.path) == (
        "recorded", [1, 2], tmp_path.resolve() / "Untitled.arcana" / f"{run_id}.jsonl")
    html = build_report(path).read_text()
    assert "<code>Untitled.arcana/</code>" in html and "<b>2</b><span>turns</span>" in html
    assert html.count('<h3 class="arcana-h">') == 1  # its replay, found through the recorded path
    assert embed_traces(path) == [f"{run_id}.jsonl"]


def test_report_output_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = notebook_with(tmp_path, "a.ipynb", [])
    for argv, expected in [
        (["-o", str(tmp_path / "a.ipynb")], "refusing to write the HTML report over a notebook"),
        (["-o", str(tmp_path)], "is a folder"),
        (["-o", str(tmp_path / "missing" / "r.html")], "does not exist"),
    ]:
        assert cli_main(["report", str(path), *argv]) == 1
        err = capsys.readouterr().err
        assert expected in err and len(err.strip().splitlines()) == 1
    (tmp_path / "broken.ipynb").write_text("{not json")
    assert cli_main(["report", str(tmp_path / "broken.ipynb")]) == 1
    assert "is not a readable notebook" in capsys.readouterr().err
    assert nbformat.read(path, as_version=4).cells  # the notebook is untouched


def test_replay_magic_without_a_session_follows_the_saved_notebook(shell: Any, tmp_path: Path) -> None:
    from IPython.utils.capture import capture_output

    run_id = "r_20261130_010203_abcdef"
    fixtures.write_run(tmp_path / "Untitled.arcana" / f"{run_id}.jsonl", run_id, turns=2).close()
    notebook_with(tmp_path, "analysis.ipynb", [turn_output(run_id, f"Untitled.arcana/{run_id}.jsonl", turn=t)
                                               for t in (1, 2)])
    assert not (tmp_path / "analysis.arcana").exists()  # the kernel's name-based guess holds nothing
    with capture_output() as captured:
        shell.run_line_magic("arcana_replay", "")
    shown = "".join(str(o.data.get("text/plain", "")) for o in captured.outputs)
    assert run_id in shown
    with capture_output() as captured:
        shell.run_line_magic("arcana_replay", f"{run_id} --turn 2")
    assert run_id in "".join(str(o.data.get("text/plain", "")) for o in captured.outputs)


def test_a_replay_output_is_not_a_turn(tmp_path: Path) -> None:
    run_id, old = "r_20261130_010203_abcdef", "r_20261129_010203_000000"
    fixtures.write_run(tmp_path / "a.arcana" / f"{run_id}.jsonl", run_id, turns=1).close()
    fixtures.write_run(tmp_path / "a.arcana" / f"{old}.jsonl", old, turns=1).close()
    replay = nbformat.v4.new_output(
        "display_data", data={"application/vnd.arcana.replay+json": {"version": 1, "run_id": old, "turns": []},
                              "text/plain": "replay"},
        metadata={"arcana": {"run_id": old, "agent": "main", "trace_path": f"a.arcana/{old}.jsonl", "replay": True}})
    path = notebook_with(tmp_path, "a.ipynb", [turn_output(run_id, f"a.arcana/{run_id}.jsonl"), replay])
    assert [r.run_id for r in locate_runs(path, nbformat.read(path, as_version=4))] == [run_id]
    html = build_report(path).read_text()
    replay_section = html.split("<h2>Replay</h2>")[1]
    assert run_id in replay_section and old not in replay_section
