"""`arcana trace ...` without --dir finds a notebook folder's traces; a notebook is accepted wherever a RUN is."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from trace_fixtures_loader import load_trace_fixtures

from arcana_jupyter.cli import main

fixtures = load_trace_fixtures()

MIME = "application/vnd.arcana.turn+json"
TOUR = "r_20261130_010000_aaaaaa"  # recorded before the rename, in Untitled.arcana/
TOUR2 = "r_20261130_020000_bbbbbb"  # after the rename, in tour.arcana/
OTHER = "r_20261130_030000_cccccc"  # another notebook's run
OLD = "r_20261129_090000_dddddd"  # the old default folder ./traces


def notebook(path: Path, runs: list[tuple[str, str, int]]) -> None:
    cells = []
    for run_id, trace_path, turn in runs:
        cell = nbformat.v4.new_code_cell("%%arcana\nhi")
        meta = {"run_id": run_id, "agent": "main", "turn": turn, "trace_path": trace_path}
        cell.outputs = [nbformat.v4.new_output("display_data", data={MIME: dict(meta), "text/plain": "t"},
                                               metadata={"arcana": meta})]
        cells.append(cell)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fixtures.write_run(tmp_path / "Untitled.arcana" / f"{TOUR}.jsonl", TOUR, turns=3).close()
    fixtures.write_run(tmp_path / "tour.arcana" / f"{TOUR2}.jsonl", TOUR2, turns=1).close()
    fixtures.write_run(tmp_path / "other.arcana" / f"{OTHER}.jsonl", OTHER, turns=2).close()
    fixtures.write_run(tmp_path / "traces" / f"{OLD}.jsonl", OLD, turns=1).close()
    notebook(tmp_path / "tour.ipynb", [(TOUR, f"Untitled.arcana/{TOUR}.jsonl", t) for t in (1, 2, 3)]
             + [(TOUR2, f"tour.arcana/{TOUR2}.jsonl", 1)])
    notebook(tmp_path / "other.ipynb", [(OTHER, f"other.arcana/{OTHER}.jsonl", 1)])
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARCANA_TRACE_DIR", raising=False)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_without_dir_looks_beside_the_notebooks(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", "list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split()[-1] == "folder"
    rows = {line.split()[0]: line.split()[-1] for line in lines[1:]}
    assert rows == {OTHER: "other.arcana", TOUR: "Untitled.arcana", TOUR2: "tour.arcana", OLD: "traces"}
    code, out, _ = run(capsys, "trace", "list", "--json")
    assert {r["run_id"]: r["folder"] for r in json.loads(out)}[TOUR] == "Untitled.arcana"


def test_a_notebook_names_its_runs(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "trace", "list", "tour.ipynb")
    assert code == 0 and err == ""
    assert [line.split()[0] for line in out.splitlines()[1:]] == [TOUR2, TOUR]  # not other.ipynb's run
    code, out, err = run(capsys, "trace", "replay", "tour.ipynb", "--turn", "2")
    assert code == 1 and "has no turn 2" in err  # the latest run of tour.ipynb has one turn
    code, out, err = run(capsys, "trace", "show", "tour.ipynb")
    assert code == 0 and out.startswith(f"Run {TOUR2}") and f"shows 2 runs; using the latest, {TOUR2}" in err
    # after moving the later run away, the notebook's recorded run in Untitled.arcana/ is found
    (folder / "tour.arcana" / f"{TOUR2}.jsonl").unlink()
    code, out, err = run(capsys, "trace", "replay", "tour.ipynb", "--turn", "2")
    assert code == 0 and out.startswith("Turn 2") and f"no trace file for run {TOUR2}" in err


def test_a_run_id_is_found_in_any_default_folder(folder: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(capsys, "trace", "replay", TOUR, "--turn", "3")
    assert code == 0 and out.startswith("Turn 3")
    code, out, _ = run(capsys, "trace", "show", "r_20261130_03")  # a unique prefix
    assert code == 0 and out.startswith(f"Run {OTHER}")
    code, out, _ = run(capsys, "trace", "show", "latest")  # the run started last (written last by the fixture)
    assert code == 0 and out.startswith(f"Run {OLD}")
    code, out, _ = run(capsys, "trace", "rebuild", OLD, "--turn", "1")  # the old ./traces default still works
    assert code == 0 and "verified" in out
    code, _, err = run(capsys, "trace", "show", "r_2026113")
    assert code == 1 and "is ambiguous" in err and len(err.splitlines()) == 1
    code, _, err = run(capsys, "trace", "show", "r_nope")
    assert code == 1 and "unknown run 'r_nope' in" in err and "Untitled.arcana" in err
    code, _, err = run(capsys, "trace", "show", "x" * 5000)
    assert code == 1 and len(err.splitlines()) == 1
    elsewhere = folder / "empty"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run(capsys, "trace", "list")
    assert code == 1 and err.startswith("arcana: error: no traces found from") and len(err.splitlines()) == 1
    monkeypatch.setenv("ARCANA_TRACE_DIR", str(folder / "traces"))
    code, out, _ = run(capsys, "trace", "list")
    assert code == 0 and OLD in out and "folder" not in out.splitlines()[0]
