"""Verification covers the notebook: every run, errored turns, renamed and headless notebooks, memory untouched."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_core.utils import run_sync
from nbclient import NotebookClient

from arcana_jupyter.cli import main as cli_main
from arcana_jupyter.demo import execute_notebook
from arcana_jupyter.exceptions import RateLimitError
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMRequest
from arcana_jupyter.providers.recorded import ReplayProvider
from arcana_jupyter.report import build_report
from arcana_jupyter.report.sources import locate_runs
from arcana_jupyter.report.verify import verify_notebook
from arcana_jupyter.trace.reader import TraceReader

KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
MIME = "application/vnd.arcana.turn+json"

MODEL = '''from arcana_jupyter.exceptions import RateLimitError

def model(request):
    # the question being asked: a failed turn's question (no reply) is merged into the next user
    # message by the prompt shape (providers/shaping.py), so look at the last paragraph only
    last = request.messages[-1].content.split("\\n\\n")[-1]
    if "please fail" in last:
        raise RateLimitError("rate limited: slow down (429 after 3 attempts)", provider="function", status=429)
    return "Reply to: " + last'''


def notebook(folder: Path, name: str, cells: list[str]) -> Path:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells], metadata=KERNEL)
    path = folder / name
    nbformat.write(nb, path)
    return path


def execute(path: Path) -> None:
    """Like execute_notebook, but a failed turn (which may fail its cell) does not stop the notebook."""
    nb = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "ARCANA_REPLAY_RUNS"}
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env={**env, "ARCANA_NOTEBOOK": str(path)}, cwd=str(path.parent))
    nbformat.write(nb, path)


def turn_meta(path: Path) -> list[dict[str, Any]]:
    nb = nbformat.read(path, as_version=4)
    return [o["metadata"]["arcana"] for c in nb.cells for o in c.get("outputs", []) if MIME in o.get("data", {})]


def test_every_run_and_an_errored_turn_are_verified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = notebook(tmp_path, "analysis.ipynb", [
        "%load_ext arcana_jupyter",
        MODEL,
        "%arcana_chat --model fn:model --window 3000 --reserve 300",
        "%%arcana\nFirst question.",
        "%%arcana\nSecond question.",
        "%arcana_chat --model fn:model --window 3000 --reserve 300",  # a second run of the same session name
        "%%arcana\nThird question, please fail.",
        "%%arcana\nFourth question.",
        "%arcana_chat --model fn:model --window 2000 --reserve 200 --name aux",
        "%%arcana --session aux\nA side question.",
    ])
    execute(path)
    meta = turn_meta(path)
    assert [(m["agent"], m["turn"]) for m in meta] == [("main", 1), ("main", 2), ("main", 1), ("main", 2), ("aux", 1)]
    assert len({m["run_id"] for m in meta}) == 3
    result = verify_notebook(path)
    assert result.ok, (result.summary(), result.errors, [c.note for c in result.checks])
    assert result.runs == 3 and len(result.checks) == 5
    assert [(c.session, c.turn) for c in result.checks] == [
        ("main", 1), ("main", 2), ("main", 1), ("main", 2), ("aux", 1)]
    errored = result.checks[2]
    assert errored.recorded_error == "RateLimitError: rate limited: slow down (429 after 3 attempts)"
    assert errored.note.startswith("the recorded error reproduced: RateLimitError")
    assert result.summary() == "reproduced: 5 of 5 turn(s) in 3 run(s) had the same prompt digest and reply"
    assert cli_main(["report", str(path), "--verify"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("ok   main turn 1 (run r_") == 2 and "ok   aux turn 1" in printed
    html = (tmp_path / "analysis.report.html").read_text()
    banner, summary = html.split("<h2>Summary</h2>")[0], html.split("<h2>Summary</h2>")[1].split("<h2>Notebook</h2>")[0]
    assert "reproduced: 5 of 5 turn(s) in 3 run(s)" in banner and "<b>5</b><span>turns</span>" in summary
    replay = html.split("<h2>Replay</h2>")[1]
    assert replay.count('<h3 class="arcana-h">') == 3 and "shown in the notebook" not in replay

    # the replay provider itself: the errored call fails again as the same class, message and status
    provider = ReplayProvider(tmp_path / "analysis.arcana", meta[2]["run_id"], strict=False)
    assert [e.event_type for e in provider.script] == ["error", "llm_call"]
    request = LLMRequest(model="model", messages=[Message(role="user", content="x")])
    with pytest.raises(RateLimitError) as caught:
        asyncio.run(provider.complete(request))
    assert str(caught.value) == "rate limited: slow down (429 after 3 attempts)" and caught.value.status == 429

    async def chunks() -> list[str]:
        return [c.text async for c in provider.stream(request) if c.text]

    assert "".join(asyncio.run(chunks())) == "Reply to: Fourth question.\n"


def test_a_notebook_without_traces_says_so_consistently(tmp_path: Path) -> None:
    path = notebook(tmp_path, "analysis.ipynb", [
        "%load_ext arcana_jupyter", MODEL, "%arcana_chat --model fn:model",
        "%%arcana\nOne.", "%%arcana\nTwo.",
    ])
    execute_notebook(path)
    for item in (tmp_path / "analysis.arcana").iterdir():  # the traces (and the vectors kept beside them)
        shutil.rmtree(item) if item.is_dir() else item.unlink()
    result = verify_notebook(path)
    assert not result.ok and len(result.checks) == 2 and result.runs == 1
    assert "NOT reproduced: 0 of 2 turn(s)" in result.summary() and "no trace file for run" in result.errors[0]
    html = build_report(path).read_text()
    assert "<b>2</b><span>turns</span>" in html  # counted from the notebook, like the verification would
    assert "no replay — no trace file for run" in html and "replay is shown in the notebook" not in html


def memory_rows(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            "entries": conn.execute("SELECT id, content, confidence, updated_at FROM entries ORDER BY id").fetchall(),
            "sessions": conn.execute("SELECT * FROM sessions ORDER BY session_id").fetchall(),
            "surfaced": conn.execute("SELECT * FROM surfaced ORDER BY session_id").fetchall(),
        }
    finally:
        conn.close()


def test_verification_never_writes_to_the_real_memory_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "home-store" / "memory.sqlite3"
    monkeypatch.setenv("ARCANA_MEMORY_PATH", str(real))
    path = notebook(tmp_path, "memo.ipynb", [
        "%load_ext arcana_jupyter",
        MODEL,
        "%arcana_chat --model fn:model --window 3000 --reserve 300 --memory --no-tools",
        "%%arcana\nI like tea.",
        "import arcana_jupyter.jupyter as aj\n"
        "stored = aj.session().memory.tools.remember(kind='preference', content='The user likes green tea.')\n"
        "print(stored['id'])",
        "%%arcana\nWhat do I like?",
        "aj.session().close()",
        "%arcana_chat --model fn:model --window 3000 --reserve 300 --memory --no-tools --name later",
        "%%arcana --session later\nRemind me.",
    ])
    execute_notebook(path)
    before = memory_rows(real)
    files = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in real.parent.iterdir()}
    assert [e[1] for e in before["entries"]] == ["The user likes green tea."] and len(before["sessions"]) == 2
    meta = turn_meta(path)
    later = [json.loads(line) for line in (tmp_path / meta[-1]["trace_path"]).read_text().splitlines()]
    digest = [e for e in later if e["event_type"] == "memory_read" and e["metadata"]["purpose"] == "digest"]
    assert "green tea" in json.dumps(digest)  # the second session started from what the first stored
    result = verify_notebook(path)
    assert result.ok, (result.summary(), result.errors, [c.note for c in result.checks])
    assert len(result.checks) == 3
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in real.parent.iterdir()} == files  # not even read
    assert memory_rows(real) == before


def test_nbconvert_executed_then_renamed_notebook_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = notebook(tmp_path, "Untitled.ipynb", [
        "%load_ext arcana_jupyter", MODEL, "%arcana_chat --model fn:model --window 3000 --reserve 300",
        "%%arcana\nHello from nbconvert.", "%%arcana\nAnd again.",
    ])
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARCANA_NOTEBOOK", "JPY_SESSION_NAME", "ARCANA_REPLAY_RUNS")}
    subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--inplace", path.name],
                   cwd=tmp_path, env=env, check=True, capture_output=True, timeout=300)
    meta = turn_meta(path)
    assert [m["trace_path"].split("/")[0] for m in meta] == ["notebook.arcana", "notebook.arcana"]  # the kernel's guess
    renamed = path.rename(tmp_path / "tour.ipynb")
    assert [r.source for r in locate_runs(renamed, nbformat.read(renamed, as_version=4))] == ["recorded"]
    assert cli_main(["report", str(renamed), "--verify"]) == 0
    out = capsys.readouterr().out
    assert "reproduced: 2 of 2 turn(s) in 1 run(s)" in out
    assert cli_main(["trace", "replay", str(renamed), "--turn", "2"]) == 0  # the CLI follows the outputs too
    assert capsys.readouterr().out.startswith("Turn 2  strategy=")


def test_arcana_run_injects_parameters_and_knows_the_notebook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nb = nbformat.v4.new_notebook(metadata=KERNEL, cells=[
        nbformat.v4.new_code_cell("%load_ext arcana_jupyter"),
        nbformat.v4.new_code_cell('topic = "default"\nrounds = 1', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(MODEL),
        nbformat.v4.new_code_cell("%arcana_chat --model fn:model --window 3000 --reserve 300"),
        nbformat.v4.new_code_cell("%%arcana\nTell me about {topic}, {rounds} times."),
    ])
    source = tmp_path / "study.ipynb"
    nbformat.write(nb, source)
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "study-tides.ipynb"
    code = cli_main(["run", str(source), "-p", "topic=tides", "-p", "rounds=3", "-o", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "1 arcana turn(s) in 1 run(s); traces in study-tides.arcana/" in printed
    executed = nbformat.read(out, as_version=4)
    assert executed.cells[2].metadata["tags"] == ["injected-parameters"]
    assert "topic = 'tides'" in executed.cells[2].source and "rounds = 3" in executed.cells[2].source
    assert executed.metadata["arcana"]["run"]["parameters"] == {"topic": "tides", "rounds": 3}
    (meta,) = turn_meta(out)
    assert meta["trace_path"].startswith("study-tides.arcana/") and (out.parent / meta["trace_path"]).is_file()
    bundle = next(o["data"][MIME] for o in executed.cells[5].outputs if MIME in o.get("data", {}))
    assert bundle["input"].strip() == "Tell me about tides, 3 times."
    assert nbformat.read(source, as_version=4).cells[1].source.startswith('topic = "default"')  # input untouched
    assert cli_main(["report", str(out), "--verify"]) == 0
    assert "reproduced: 1 of 1 turn(s)" in capsys.readouterr().out
    # a failing cell: one line, exit 1, the notebook saved up to there
    bad = tmp_path / "bad.ipynb"
    nbformat.write(nbformat.v4.new_notebook(metadata=KERNEL, cells=[
        nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("1/0"), nbformat.v4.new_code_cell("y = 2")]), bad)
    assert cli_main(["run", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "execution stopped at cell 2: ZeroDivisionError: division by zero" in err
    assert cli_main(["run", str(bad), "-p", "9x=1"]) == 1
    assert "must be a Python identifier" in capsys.readouterr().err


def test_a_run_resumed_after_a_kernel_restart_verifies(tmp_path: Path) -> None:
    """Kernel 1 fills the window; Kernel > Restart; the first ``%%arcana`` continues the run (its budget,
    pins and history as the trace left them), ``--new`` starts another; ``--verify`` reproduces both runs
    in one kernel, where the resumed turns are simply the same session going on."""
    words = " ".join(f"w{i}" for i in range(70))
    before = ["%load_ext arcana_jupyter", MODEL, "%arcana_chat --model fn:model --window 900 --reserve 100"]
    before += [f"%%arcana\nFact {i}: the code for box {i} is {1000 + i}. {words}" for i in range(5)]
    after = ["%load_ext arcana_jupyter", MODEL, "%%arcana\nWhat is the code for box 0?",
             "%%arcana\nAnd for box 4?", "%arcana_chat --new --model fn:model --window 900 --reserve 100",
             "%%arcana\nA fresh start."]
    path = notebook(tmp_path, "analysis.ipynb", before + after)
    nb = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "ARCANA_REPLAY_RUNS"}
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel(env={**env, "ARCANA_NOTEBOOK": str(path)}, cwd=str(tmp_path)):
        for index in range(len(before)):
            client.execute_cell(nb.cells[index], index)
        assert client.km is not None and client.kc is not None
        run_sync(client.km.restart_kernel)()  # Kernel > Restart: a new process, nothing in memory
        run_sync(client.kc.wait_for_ready)(timeout=60)
        for index in range(len(before), len(nb.cells)):
            client.execute_cell(nb.cells[index], index)
    nbformat.write(nb, path)
    banners = [o["data"]["text/plain"] for c in nb.cells for o in c.get("outputs", [])
               if "arcana session" in o.get("data", {}).get("text/plain", "")]
    assert "resumed run" in banners[1] and "at turn 6" in banners[1] and "started run" in banners[2]
    meta = turn_meta(path)
    assert [m["turn"] for m in meta] == [1, 2, 3, 4, 5, 6, 7, 1]
    assert len({m["run_id"] for m in meta[:7]}) == 1 and meta[7]["run_id"] != meta[0]["run_id"]
    trace = tmp_path / meta[0]["trace_path"]  # its decisions as read back (a chained one may patch its report)
    decisions = [r.metadata for r in TraceReader(trace.parent).decision_records(trace.stem)]
    full = [d["report"]["total_before"] > d["report"]["total_after"] for d in decisions]
    assert full[5] and full[6]  # the resumed turns are built in a full window
    result = verify_notebook(path)
    assert result.ok, (result.summary(), result.errors, [c.note for c in result.checks])
    assert result.runs == 2 and [c.turn for c in result.checks] == [1, 2, 3, 4, 5, 6, 7, 1]
