"""``--verify``: re-execute a notebook against its own recorded runs and compare, turn by turn.

The notebook and its trace folder are copied to a scratch folder; the copy is executed with
nbclient, with ``ARCANA_NOTEBOOK`` pointing at the copy (so new traces land beside it) and
``ARCANA_REPLAY_RUNS`` mapping each session name to its recorded run, which makes ``%arcana_chat``
use the replay provider (``replay:<run_id>``). Every prompt's request digest and every reply of
the new run is then compared with the recorded one. The original files are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from ..trace.reader import TraceReader
from .embed import trace_dir_for


@dataclass
class TurnCheck:
    """How one recorded turn fared when the notebook ran again."""

    session: str
    run_id: str
    turn: int
    prompt_reproduced: bool
    reply_reproduced: bool
    recorded_digests: list[str] = field(default_factory=list)
    new_digests: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.prompt_reproduced and self.reply_reproduced


@dataclass
class VerifyResult:
    checks: list[TurnCheck]
    errors: list[str]
    """Cells that failed to execute, runs that could not be matched."""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks) and not self.errors

    def summary(self) -> str:
        good = sum(c.ok for c in self.checks)
        if not self.checks:
            return "nothing to verify: the notebook has no recorded arcana turns" + (f"; {self.errors[0]}" if self.errors else "")
        verdict = "reproduced" if self.ok else "NOT reproduced"
        return f"{verdict}: {good} of {len(self.checks)} turn(s) had the same prompt digest and reply"


def _turns(reader: TraceReader, run_id: str, agent: str) -> dict[int, dict[str, Any]]:
    out: dict[int, dict[str, Any]] = {}
    for event in reader.events(run_id, event_types=("context_decision", "turn_end", "error"), agent=agent):
        if event.turn is None:
            continue
        entry = out.setdefault(event.turn, {"digests": [], "reply": None, "status": None, "errors": []})
        if event.event_type == "context_decision":
            entry["digests"].append(str(event.metadata.get("request_digest")))
        elif event.event_type == "turn_end":
            entry["reply"] = event.metadata.get("reply")
            entry["status"] = event.metadata.get("status")
        else:
            entry["errors"].append(str(event.metadata.get("message") or ""))
    return out


def verify_notebook(notebook: Path, sessions: Mapping[str, str], *, timeout: int = 600,
                    kernel_name: str | None = None) -> VerifyResult:
    """Re-run ``notebook`` with ``sessions`` (name -> recorded run id) answered by replay."""
    import time

    started = time.monotonic()
    notebook = Path(notebook).resolve()
    holders: list[Any] = []
    trace_dir = trace_dir_for(notebook, nbformat.read(notebook, as_version=4), holders)
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="arcana-verify-") as scratch:
        work = Path(scratch)
        copy_nb = work / notebook.name
        shutil.copy2(notebook, copy_nb)
        for item in notebook.parent.iterdir():  # data files the notebook reads (CSV ...), not other notebooks
            if item.is_file() and item.suffix not in (".ipynb", ".html") and item.stat().st_size < 50_000_000:
                shutil.copy2(item, work / item.name)
        copy_traces = work / trace_dir.name
        if trace_dir.is_dir():
            shutil.copytree(trace_dir, copy_traces)
        before = {p.stem for p in copy_traces.glob("*.jsonl")} if copy_traces.is_dir() else set()
        nb = nbformat.read(copy_nb, as_version=4)
        env = dict(os.environ)
        env["ARCANA_NOTEBOOK"] = str(copy_nb)
        env["ARCANA_REPLAY_RUNS"] = json.dumps(dict(sessions))
        env.pop("JPY_SESSION_NAME", None)
        client = NotebookClient(
            nb, timeout=timeout, allow_errors=True, kernel_name=kernel_name or "python3",
            resources={"metadata": {"path": str(work)}},
        )
        client.execute(env=env, cwd=str(work))
        for index, cell in enumerate(nb.cells):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    errors.append(f"cell {index + 1}: {output.get('ename')}: {output.get('evalue')}")
        recorded_reader = TraceReader(trace_dir) if trace_dir.is_dir() else None
        new_reader = TraceReader(copy_traces) if copy_traces.is_dir() else None
        new_runs: dict[str, str] = {}
        if new_reader is not None:
            for info in new_reader.list_runs():
                if info.run_id not in before:
                    for agent in info.agents:
                        new_runs[agent] = info.run_id
        checks: list[TurnCheck] = []
        for name, run_id in sessions.items():
            if recorded_reader is None:
                errors.append(f"session {name}: no trace folder {trace_dir.name} beside the notebook")
                continue
            recorded = _turns(recorded_reader, run_id, name)
            replayed = _turns(new_reader, new_runs[name], name) if new_reader is not None and name in new_runs else {}
            if name not in new_runs:
                errors.append(f"session {name}: the re-executed notebook recorded no run for it")
            for turn, rec in sorted(recorded.items()):
                new = replayed.get(turn, {"digests": [], "reply": None, "status": None, "errors": ["turn not re-executed"]})
                prompt_ok = bool(rec["digests"]) and rec["digests"] == new["digests"]
                reply_ok = rec["reply"] == new["reply"] and new["status"] == rec["status"]
                note = "; ".join(new["errors"])[:400]
                if not prompt_ok and not note:
                    note = "the rebuilt prompt differs from the recorded one"
                elif prompt_ok and not reply_ok and not note:
                    note = "same prompt, different reply"
                checks.append(TurnCheck(name, run_id, turn, prompt_ok, reply_ok, rec["digests"], new["digests"], note))
    for holder in holders:
        holder.cleanup()
    return VerifyResult(checks, errors, time.monotonic() - started)
