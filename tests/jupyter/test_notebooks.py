"""Real notebooks executed headless with nbclient on the bundled local model (SmolLM2-135M)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest

from arcana_jupyter.demo import EXAMPLES, execute_notebook

MIME = "application/vnd.arcana.turn+json"
pytestmark = pytest.mark.slow


def bundles(nb: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [
        (o["data"][MIME], o.get("metadata", {}))
        for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if MIME in o.get("data", {})
    ]


def errors(nb: Any) -> list[str]:
    return [f"{o['ename']}: {o['evalue']}" for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if o.get("output_type") == "error"]


def copy_example(name: str, folder: Path) -> Path:
    for item in EXAMPLES.iterdir():
        if item.suffix in (".csv",) or item.name == f"{name}.ipynb":
            shutil.copy2(item, folder / item.name)
    return folder / f"{name}.ipynb"


@pytest.mark.parametrize("name", ["explainability_and_replay", "primitives", "data_analysis"])
def test_example_notebook_runs_headless(name: str, tmp_path: Path) -> None:
    nb = execute_notebook(copy_example(name, tmp_path))
    assert errors(nb) == []
    found = bundles(nb)
    assert found and all(b["status"] == "ok" and b["reply"] for b, _ in found)
    for bundle, meta in found:
        assert meta["arcana"]["trace_path"] == f"{name}.arcana/{bundle['run_id']}.jsonl"
        assert (tmp_path / meta["arcana"]["trace_path"]).is_file()
    if name == "explainability_and_replay":
        last = found[-1][0]["steps"][-1]["decision"]["decisions"]
        assert {d["outcome"] for d in last} & {"compressed", "dropped"}  # the small window forced choices
        printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stdout")
        assert "digest verified: True" in printed
    if name == "primitives":
        assert found[0][0]["pins"][0]["label"] == "project facts" and found[1][0]["pins"] == []


def test_resume_across_a_kernel_restart(tmp_path: Path) -> None:
    first = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%load_ext arcana_jupyter"),
        nbformat.v4.new_code_cell("%arcana_chat --model local --window 2048 --reserve 512 --classic --no-tools"),
        nbformat.v4.new_code_cell("%%arcana\nMy name is Ada. Say hello to me."),
    ])
    path = tmp_path / "analysis.ipynb"
    nbformat.write(first, path)
    nb = execute_notebook(path)  # kernel 1
    (bundle, meta), = bundles(nb)
    run_id = bundle["run_id"]
    second = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%load_ext arcana_jupyter"),
        nbformat.v4.new_code_cell(f"%arcana_chat --model local --window 2048 --reserve 512 --classic --no-tools --resume {run_id}"),
        nbformat.v4.new_code_cell("%%arcana\nWhat is my name?"),
        nbformat.v4.new_code_cell("%arcana_replay"),
    ])
    nbformat.write(second, path)
    nb = execute_notebook(path)  # kernel 2: nothing in memory, only the trace beside the notebook
    assert errors(nb) == []
    (bundle2, meta2), = bundles(nb)
    assert (bundle2["run_id"], bundle2["turn"]) == (run_id, 2)
    assert meta2["arcana"]["trace_path"] == meta["arcana"]["trace_path"]
    history = [d["role"] for d in bundle2["steps"][0]["decision"]["decisions"]]
    assert history[:4] == ["system", "user", "assistant", "user"]  # turn 1 came back from the trace
    replay_html = nb.cells[3].outputs[0]["data"]["text/html"]
    assert replay_html.count('type="radio"') == 2 and replay_html.count("✓ digest verified") == 2
    events = [json.loads(line) for line in (tmp_path / meta["arcana"]["trace_path"]).read_text().splitlines()]
    assert [e["metadata"].get("resumed_from") for e in events if e["event_type"] == "run_start"] == [None, run_id]
