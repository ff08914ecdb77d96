"""Real notebooks executed headless with nbclient on the bundled local model (SmolLM2-135M)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest

from arcana_jupyter.demo import EXAMPLES, execute_notebook
from arcana_jupyter.report.build import collect_bundles, sessions_of
from arcana_jupyter.report.verify import verify_notebook

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


def stdout(nb: Any) -> str:
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                   if o.get("name") == "stdout")


def trace_events(folder: Path, trace_path: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / trace_path).read_text().splitlines()]


def sections(bundle: dict[str, Any]) -> list[str]:
    return [d["section"] for d in bundle["steps"][-1]["decision"]["decisions"] if d["source"] == "section"]


def prompt_text(bundle: dict[str, Any], folder: Path) -> str:
    """The prompt of the bundle's last LLM call. The notebook keeps a summary (the prompt texts are
    in the trace): rebuilt from the trace beside the notebook, digest-checked."""
    from arcana_jupyter.context.rebuild import rebuild_turn
    from arcana_jupyter.trace.reader import TraceReader

    reader = TraceReader((folder / bundle["trace_path"]).parent)
    step = bundle["steps"][-1]["step"]
    check = rebuild_turn(reader, bundle["run_id"], bundle["turn"], agent=bundle["agent"], step=step)
    assert check.verified, check.notes
    return "\n".join(str(m.get("content") or "") for m in check.messages)


def copy_example(name: str, folder: Path) -> Path:
    for item in EXAMPLES.iterdir():
        if item.suffix in (".csv",) or item.name == f"{name}.ipynb":
            shutil.copy2(item, folder / item.name)
    return folder / f"{name}.ipynb"


@pytest.mark.parametrize(
    "name", ["explainability_and_replay", "primitives", "data_analysis", "adaptive_context", "memory"]
)
def test_example_notebook_runs_headless(name: str, tmp_path: Path) -> None:
    home = tmp_path / "home"  # a memory store under ~/.arcana would show up here
    home.mkdir()
    path = copy_example(name, tmp_path)
    nb = execute_notebook(path, env={**os.environ, "HOME": str(home)})
    assert errors(nb) == []
    found = bundles(nb)
    assert found and all(b["status"] == "ok" and b["reply"] for b, _ in found)
    for bundle, meta in found:
        assert meta["arcana"]["trace_path"] == f"{name}.arcana/{bundle['run_id']}.jsonl"
        assert (tmp_path / meta["arcana"]["trace_path"]).is_file()
    if name == "explainability_and_replay":
        last = found[-1][0]["steps"][-1]["decision"]["decisions"]
        assert {d["outcome"] for d in last} & {"compressed", "dropped"}  # the small window forced choices
        assert "digest verified: True" in stdout(nb)
    if name == "primitives":
        assert found[0][0]["pins"][0]["label"] == "project facts" and found[1][0]["pins"] == []
    if name == "adaptive_context":
        check_adaptive_context(nb, [b for b, _ in found], tmp_path)
        # the user's engine actions (add, retract, hydrate) are replayed too: every prompt is rebuilt exactly
        verification = verify_notebook(path, sessions_of(collect_bundles(nb)))
        assert verification.ok, (verification.summary(), verification.errors)
    if name == "memory":
        check_memory(nb, found, tmp_path)
        assert not (home / ".arcana").exists()  # the notebook's store lives in a temporary folder


def check_adaptive_context(nb: Any, found: list[dict[str, Any]], folder: Path) -> None:
    """Tiers move (idle demotion, keyword promotion, hydrate), a retraction leaves the prompt,
    old turns become digests."""
    assert [b["turn"] for b in found] == [1, 2, 3, 4, 5]
    first, fourth, last = found[0], found[3], found[-1]
    # the constraint is standing (its own section, first; never idle), the other four move between tiers
    assert sections(first) == ["standing", "adaptive_active"]
    assert [o["id"] for o in first["tiers"]["active"]] == ["s_1", "s_2", "s_3", "s_4", "s_5"]
    assert [(s["id"], s["turn"], s["by"]) for s in first["standing"]] == [("s_1", 1, "added")]
    assert all(b["tool_calls"] == [] for b in found)  # engine tools withheld from the local model
    idle = [(c["object_id"], c["to_tier"]) for c in fourth["state_changes"] if c.get("cause") == "idle"]
    assert idle == [("s_2", "soft"), ("s_3", "soft"), ("s_4", "soft"), ("s_5", "soft")]
    assert [o["id"] for o in fourth["tiers"]["soft"]] == ["s_2", "s_3", "s_4", "s_5"]
    assert [o["id"] for o in fourth["tiers"]["active"]] == ["s_1"]
    promoted = [(c["object_id"], c["from_tier"], c["to_tier"], c["cause"])
                for c in last["state_changes"] if c["event_type"] == "state_change"]
    assert promoted == [("s_2", "soft", "active", "keyword:museum")]
    # the standing section, then the tiers first and last; in between, only what stands in for turns that
    # did not fit (the overflow cover)
    names = sections(last)
    assert names[:2] == ["standing", "adaptive_soft"] and names[-1] == "adaptive_active"
    assert set(names[2:-1]) <= {"checkpoint", "model_claims", "turn_digests"}
    # standing budget, hydrated trains, promoted museum
    assert {o["id"] for o in last["tiers"]["active"]} == {"s_1", "s_2", "s_5"}
    assert [o["id"] for o in last["tiers"]["soft"]] == ["s_4"] and last["tiers"]["hard"] == []
    prompt = prompt_text(last, folder)
    assert "Total budget under 600 EUR" in prompt and "Pick one museum for day one" in prompt
    assert "Trains to Braga leave every hour" in prompt
    assert "s_4 note: Ana is vegetarian" in prompt  # the soft note as a stub
    # the retracted decision is hidden from the tiers (the user's own turns, which fit, still mention the place)
    tiers = [part.split("</system-context>")[0].split("\n\n")[0]
             for part in re.split(r"\n(?=## )|<system-context ", prompt) if "adaptive_" in part[:40]]
    assert tiers and not any("Ribeira" in part for part in tiers)
    rows = [d for d in last["steps"][-1]["decision"]["decisions"] if d["source"] == "history"]
    carried = {d["turn"] for d in rows if d.get("section")}
    not_verbatim = {d["turn"] for d in rows if d["outcome"] != "kept" or d.get("recalled")}
    assert carried <= not_verbatim  # a section stands in only for turns that did not fit verbatim
    assert bool(carried) == bool(set(names[2:-1]))
    printed = stdout(nb)
    assert "retracted hotel in working memory: False" in printed and "--- adaptive_soft (head)" in printed
    assert "--- standing (head)" in printed


def check_memory(nb: Any, found: list[tuple[dict[str, Any], dict[str, Any]]], folder: Path) -> None:
    """Session 1 stores a preference; session 2 starts with it in its digest and its prompt; forgetting removes it."""
    assert [(b["agent"], b["turn"]) for b, _ in found] == [("first", 1), ("second", 1)]
    (first, first_meta), (second, second_meta) = found
    assert first["run_id"] != second["run_id"]
    writes = [e["metadata"] for e in trace_events(folder, first_meta["arcana"]["trace_path"])
              if e["event_type"] == "memory_write"]
    assert [(w["op"], w["entry"]["kind"], w["entry"]["content"]) for w in writes] == [
        ("remember", "preference", "The user prefers answers as short bullet lists.")]
    entry_id = writes[0]["entry"]["id"]
    events = trace_events(folder, second_meta["arcana"]["trace_path"])
    digest = [e["metadata"] for e in events
              if e["event_type"] == "memory_read" and e["metadata"]["purpose"] == "digest"]
    assert [[r["id"] for r in d["results"]] for d in digest] == [[entry_id]]
    rows = [d for d in second["steps"][0]["decision"]["decisions"] if d["source"] == "section"]
    assert [(d["section"], d["layer"], d["outcome"]) for d in rows] == [("memory_digest", "external", "kept")]
    assert (f"[{entry_id}] (preference, project) The user prefers answers as short bullet lists."
            in prompt_text(second, folder))
    assert "memory_digest" not in sections(first)  # session 1 started with an empty store
    offered = [e["metadata"]["tools"] for e in events if e["event_type"] == "context_decision"]
    assert offered == [[]]  # the memory tools were taken away from the 135M model
    printed = stdout(nb)
    assert "the stored preference is in session 2's prompt: True" in printed
    assert "session 3's digest: ''" in printed


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
        nbformat.v4.new_code_cell(
            f"%arcana_chat --model local --window 2048 --reserve 512 --classic --no-tools --resume {run_id}"),
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
