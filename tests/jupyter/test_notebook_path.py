"""Finding the notebook the kernel serves, and the trace folder beside it."""

from __future__ import annotations

from pathlib import Path

from arcana_jupyter.jupyter.notebook_path import locate_notebook


def test_arcana_notebook_wins_then_jupyter_server_then_vscode(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.ipynb", tmp_path / "sub" / "b.ipynb", tmp_path / "c.ipynb"
    env = {"ARCANA_NOTEBOOK": str(a), "JPY_SESSION_NAME": str(b)}
    loc = locate_notebook({"__vsc_ipynb_file__": str(c)}, env, tmp_path)
    assert (loc.notebook, loc.source, loc.trace_dir) == (a, "ARCANA_NOTEBOOK", tmp_path / "a.arcana")
    loc = locate_notebook({"__vsc_ipynb_file__": str(c)}, {"JPY_SESSION_NAME": str(b)}, tmp_path)
    assert (loc.notebook, loc.folder, loc.trace_dir) == (b, b.parent, tmp_path / "sub" / "b.arcana")
    loc = locate_notebook({"__vsc_ipynb_file__": str(c)}, {}, tmp_path)
    assert (loc.notebook, loc.source) == (c, "__vsc_ipynb_file__")


def test_relative_session_name_resolves_in_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "analysis.ipynb").write_text("{}")
    loc = locate_notebook({}, {"JPY_SESSION_NAME": "work/analysis.ipynb"}, tmp_path)
    assert loc.notebook == tmp_path / "analysis.ipynb"
    assert loc.relative(tmp_path / "analysis.arcana" / "r_1.jsonl") == "analysis.arcana/r_1.jsonl"
    assert loc.resolve("analysis.arcana/r_1.jsonl") == tmp_path / "analysis.arcana" / "r_1.jsonl"


def test_a_console_session_name_is_not_a_notebook_and_the_fallback_says_so(tmp_path: Path) -> None:
    loc = locate_notebook({}, {"JPY_SESSION_NAME": "console-1f2e"}, tmp_path)
    assert loc.is_fallback and loc.notebook is None
    assert loc.trace_dir == tmp_path.resolve() / "notebook.arcana"
    assert "ARCANA_NOTEBOOK" in loc.describe() and "notebook.arcana" in loc.describe()


def test_a_moved_folder_keeps_working(tmp_path: Path) -> None:
    first = locate_notebook({}, {"ARCANA_NOTEBOOK": str(tmp_path / "x" / "nb.ipynb")}, tmp_path)
    recorded = first.relative(first.trace_dir / "r_9.jsonl")
    moved = locate_notebook({}, {"ARCANA_NOTEBOOK": str(tmp_path / "y" / "nb.ipynb")}, tmp_path)
    assert recorded == "nb.arcana/r_9.jsonl"
    assert moved.resolve(recorded) == tmp_path / "y" / "nb.arcana" / "r_9.jsonl"
