"""``report --verify`` on the notebooks people really write, executed by nbclient as a kernel runs them:
an exploratory notebook (a cell before the extension, a turn that starts its own session, magic
cells with bad flags, markdown, ``--new``, a Python error between turns) on the bundled model; a
turn interrupted while it streams (Kernel > Interrupt: SIGINT to the kernel); a kernel restart in
the middle, continued by the first ``%%arcana`` and by ``--resume latest``. Every turn reproduces.
tests/browser/test_verify_browser.py writes the same notebooks in a real JupyterLab.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_core.utils import run_sync
from nbclient import NotebookClient

from arcana_jupyter.report.verify import verify_notebook
from arcana_jupyter.trace.reader import TraceReader

KERNEL = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
MIME = "application/vnd.arcana.turn+json"

EXPLORATORY: list[tuple[str, str]] = [
    ("code", "import math\nradius = 2\nmath.pi * radius ** 2"),
    ("code", "%load_ext arcana_jupyter"),
    ("code", "%%arcana\nHello! What is 2 + 2?"),
    ("code", "%arcana_chat --window abc"),
    ("code", "%arcana_chat --window 100"),
    ("markdown", "## A smaller window"),
    ("code", "%arcana_chat --new --model local --window 1024"),
    ("code", "%%arcana\nName three colours."),
    ("code", "1 / 0"),
    ("code", "%%arcana\nAnd three animals."),
]
"""The exploratory notebook of issue 36, cell by cell."""

SLOW_MODEL = '''import asyncio, pathlib
from arcana_jupyter.providers.base import StreamChunk
from arcana_jupyter.providers.function import FunctionProvider

class SlowModel(FunctionProvider):
    """Streams a word every 0.3 s; a long answer says so in streaming.flag after its fourth word."""
    async def stream(self, request):
        response = await self.complete(request)
        words = response.message.content.split(" ")
        for i, word in enumerate(words):
            yield StreamChunk(text=word + " ")
            if i == 3 and len(words) > 20:
                pathlib.Path("streaming.flag").touch()
            await asyncio.sleep(0.3)
        yield StreamChunk(response=response)

def answer(request):
    question = request.messages[-1].content
    if "long" in question:
        return "The North region grew fastest, by eighteen percent over the year. " * 6
    return "A short answer to: " + question

slow = SlowModel(answer, model_name="slow")'''

INTERRUPTED: list[tuple[str, str]] = [
    ("code", "%load_ext arcana_jupyter"),
    ("code", SLOW_MODEL),
    ("code", "%arcana_chat --model fn:slow --classic"),
    ("code", "%%arcana\nWhich region grew fastest?"),
    ("code", "%%arcana\nGive me the long version, please."),  # interrupted while it streams
    ("code", "%%arcana\nThanks, that's enough."),
    ("code", "%%arcana\nWhich region grew slowest?"),
]
INTERRUPT_CELL = 4

RESTARTED: list[tuple[str, str]] = [
    ("code", "%load_ext arcana_jupyter"),
    ("code", "%arcana_chat --model local --window 1024"),
    ("code", "%%arcana\nMy name is Ada. Remember it."),
    ("code", "%%arcana\nName a colour."),
    # Kernel > Restart here
    ("code", "%load_ext arcana_jupyter"),
    ("code", "%%arcana\nWhat is my name?"),
    ("code", "%arcana_chat --resume latest"),
    ("code", "%%arcana\nName an animal."),
    ("code", "%arcana_chat --new --model local --window 1024"),
    ("code", "%%arcana\nA fresh start: name a fruit."),
]
RESTART_BEFORE = 4


def write(folder: Path, name: str, cells: list[tuple[str, str]]) -> Path:
    made = [nbformat.v4.new_markdown_cell(src) if kind == "markdown" else nbformat.v4.new_code_cell(src)
            for kind, src in cells]
    path = folder / name
    nbformat.write(nbformat.v4.new_notebook(cells=made, metadata=KERNEL), path)
    return path


def execute(path: Path, *, restart_before: int | None = None,
            interrupt: tuple[int, Callable[[], bool]] | None = None) -> Any:
    """Run the notebook cell by cell as a kernel would, with a restart before one cell or an
    interrupt (SIGINT, what Kernel > Interrupt sends) during one; save it; return it."""
    nb = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCANA_REPLAY")}
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel(env={**env, "ARCANA_NOTEBOOK": str(path)}, cwd=str(path.parent)):
        for index, cell in enumerate(nb.cells):
            if index == restart_before:
                assert client.km is not None and client.kc is not None
                run_sync(client.km.restart_kernel)()  # a new process: nothing in memory
                run_sync(client.kc.wait_for_ready)(timeout=60)
            sender = None
            if interrupt is not None and index == interrupt[0]:
                process = client.km.provisioner.process  # type: ignore[union-attr]
                sender = threading.Thread(target=send_sigint, args=(process, interrupt[1]), daemon=True)
                sender.start()
            client.execute_cell(cell, index)
            if sender is not None:
                sender.join(timeout=60)
    nbformat.write(nb, path)
    return nb


def send_sigint(process: Any, ready: Callable[[], bool]) -> None:
    """Kernel > Interrupt, once ``ready()``: SIGINT to the kernel's process."""
    deadline = time.monotonic() + 60
    while not ready() and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)


def turns_shown(nb: Any) -> list[dict[str, Any]]:
    return [o["metadata"]["arcana"] for c in nb.cells for o in c.get("outputs", []) if MIME in o.get("data", {})]


def errors_shown(nb: Any) -> dict[int, str]:
    return {i: f"{o['ename']}: {o['evalue']}" for i, c in enumerate(nb.cells) for o in c.get("outputs", [])
            if o.get("output_type") == "error"}


def assert_verified(path: Path, turns: int, runs: int) -> Any:
    result = verify_notebook(path)
    assert result.ok, (result.summary(), result.errors, [(c.turn, c.note, c.difference) for c in result.checks])
    assert len(result.checks) == turns and result.runs == runs
    assert result.summary() == (f"reproduced: {turns} of {turns} turn(s) in {runs} run(s) had the same prompt "
                                "digest and reply")
    return result


@pytest.mark.slow
def test_an_exploratory_notebook_verifies(tmp_path: Path) -> None:
    """The issue's notebook: the first ``%%arcana`` starts its own session (replayed as its own run,
    not as the ``--new`` one), two ``%arcana_chat`` lines with bad flags start nothing, the Python
    error between turns is the same error again."""
    path = write(tmp_path, "explore.ipynb", EXPLORATORY)
    nb = execute(path)
    meta = turns_shown(nb)
    assert [m["turn"] for m in meta] == [1, 1, 2] and len({m["run_id"] for m in meta}) == 2
    assert errors_shown(nb) == {8: "ZeroDivisionError: division by zero"}
    said = {i: "".join(o.get("text", "") for o in c.get("outputs", []) if o.get("name") == "stderr")
            for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    assert "UsageError: %arcana_chat: --window must be a whole number, got 'abc'" in said[3]
    assert "--window must be at least 256 (got 100)" in said[4]
    assert_verified(path, turns=3, runs=2)


@pytest.mark.slow
def test_an_interrupted_turn_is_replayed_as_cancelled_and_the_turns_after_it_verify(tmp_path: Path) -> None:
    path = write(tmp_path, "interrupted.ipynb", INTERRUPTED)
    flag = tmp_path / "streaming.flag"
    nb = execute(path, interrupt=(INTERRUPT_CELL, flag.exists))
    error = errors_shown(nb)[INTERRUPT_CELL]
    assert error.startswith("TurnInterrupted: interrupted; partial reply (") and "kept in the trace" in error
    meta = turns_shown(nb)
    trace = path.parent / meta[0]["trace_path"]
    ends = [e.metadata for e in TraceReader(trace.parent).events(trace.stem, event_types=["turn_end"])]
    assert [e["status"] for e in ends] == ["ok", "cancelled", "ok", "ok"]
    partial = ends[1]["reply"]
    assert partial.startswith("The North region") and len(partial) < len("The North region grew fastest, " * 6)
    # the next turn answered its own input, not the interrupted one
    assert ends[2]["reply"].strip() == "A short answer to: Thanks, that's enough."
    checks = assert_verified(path, turns=4, runs=1).checks
    assert checks[1].note == (f"interrupted by the user in the recording; replayed as interrupted, with its partial "
                              f"reply ({len(partial)} characters)")


@pytest.mark.slow
def test_a_restart_in_the_middle_verifies(tmp_path: Path) -> None:
    """Before the restart: a run of two turns. After it: the first ``%%arcana`` continues that run,
    ``--resume latest`` keeps it, ``--new`` starts another. Verify runs all of it in one kernel."""
    path = write(tmp_path, "restarted.ipynb", RESTARTED)
    nb = execute(path, restart_before=RESTART_BEFORE)
    meta = turns_shown(nb)
    assert [m["turn"] for m in meta] == [1, 2, 3, 4, 1]
    assert len({m["run_id"] for m in meta[:4]}) == 1 and meta[4]["run_id"] != meta[0]["run_id"]
    assert not errors_shown(nb)
    said = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in nb.cells[6].outputs)
    assert "is this session's own: it goes on" in said and "UsageError" not in said, said
    assert_verified(path, turns=5, runs=2)


def test_a_turn_that_no_longer_reproduces_says_why_and_the_later_turns_are_still_checked(tmp_path: Path) -> None:
    """A cell edited after it ran: its turn is not reproduced, in one line that says what changed; the
    replay answers it as recorded, so the turns whose prompts no longer hold it reproduce (a strict
    replay failed that turn, and every later turn's history differed: 1 of 6)."""
    filler = " ".join(["lorem"] * 60)
    cells = [("code", "%load_ext arcana_jupyter"),
             ("code", "def model(request):\n    return 'noted ' + ' '.join(['ipsum'] * 40)"),
             ("code", "%arcana_chat --model fn:model --classic --window 400 --reserve 80 "
                      "--strategy aggressive_truncate")]
    cells += [("code", f"%%arcana\nTopic {word}: {filler}") for word in ("apple", "banana", "cherry", "damson",
                                                                          "elder", "fig")]
    path = write(tmp_path, "edited.ipynb", cells)
    execute(path)
    nb = nbformat.read(path, as_version=4)
    nb.cells[4].source = nb.cells[4].source.replace("banana", "bonobo")
    nbformat.write(nb, path)
    result = verify_notebook(path)
    assert [c.turn for c in result.checks] == [1, 2, 3, 4, 5, 6]
    edited = result.checks[1]
    assert not edited.ok and "\n" not in edited.why()
    assert edited.difference.startswith("call 1 of the turn, message 3 (user): content changed (- recorded, + "
                                        "re-executed): -Topic banana: lorem")
    assert result.checks[0].ok and result.checks[4].ok and result.checks[5].ok
    assert not result.errors  # no cell failed: the edited turn was answered as recorded


def test_a_chat_line_that_failed_for_want_of_a_key_starts_no_replayed_run(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``%arcana_chat --model openai:…`` with no key failed when recorded: in the replay it must fail
    again, not take the run the next line started (the replay would not even need the key)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = write(tmp_path, "keys.ipynb", [
        ("code", "%load_ext arcana_jupyter"),
        ("code", "def model(request):\n    return 'ok'"),
        ("code", "%arcana_chat --model openai:gpt-4o-mini"),
        ("code", "%arcana_chat --model fn:model --window 2000 --reserve 200"),
        ("code", "%%arcana\nHello."),
    ])
    nb = execute(path)
    failed = "".join(o.get("text", "") for o in nb.cells[2].outputs)
    assert "could not start the session" in failed and "OPENAI_API_KEY" in failed
    assert_verified(path, turns=1, runs=1)
