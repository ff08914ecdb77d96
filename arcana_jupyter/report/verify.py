"""``--verify``: re-execute a notebook against its own recorded runs and compare, turn by turn.

Every run the notebook's outputs show is verified (not only the last one of each session): the
runs are found as every reader finds them (:mod:`.sources`: the recorded ``trace_path`` first, so
a renamed or nbconvert-executed notebook verifies), copied into ``<stem>.arcana/`` beside a copy
of the notebook in a scratch folder, and the copy is executed with nbclient, with

- ``ARCANA_NOTEBOOK`` pointing at the copy (new traces land beside it),
- ``ARCANA_REPLAY_RUNS`` mapping each session name to its recorded runs in the order they started
  (``{"main": ["r_…", "r_…"]}``: the n-th ``%arcana_chat --name main`` replays the n-th run), which
  makes ``%arcana_chat`` use the replay provider; a recorded provider error fails again, as the same
  error,
- ``ARCANA_MEMORY_SANDBOX`` pointing at a scratch folder: every memory store the notebook opens is a
  copy there (without the entries the recorded runs themselves wrote), never the user's real store.

Every turn's request digests, reply, status and provider errors are then compared with the
recorded ones. A turn the notebook shows but whose trace is missing counts as not reproduced. A
cell that fails is a problem unless the saved notebook shows the same error in the same cell (a
recorded failed turn fails its cell again). The original files are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from ..exceptions import ArcanaError
from ..schema.events import ContextDecisionEvent, ErrorEvent, MemoryWrite, RunStart, TurnEnd
from ..trace.reader import TraceReader, notebook_trace_dir
from .sources import EmbeddedTraces, NotebookRun, locate_runs


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
    recorded_error: str | None = None
    """``Type: message`` of the provider error the recorded turn ended with (``None``: it did not fail)."""
    difference: str = ""
    """For a prompt that did not reproduce: the first call and message that differ (index, role, what)."""

    @property
    def ok(self) -> bool:
        return self.prompt_reproduced and self.reply_reproduced

    def why(self) -> str:
        """One line: which turn, and the first difference (or the note)."""
        what = self.difference or self.note.split("\n", 1)[0] or "differs"
        return f"{self.session} turn {self.turn} (run {self.run_id}): {what}"


@dataclass
class VerifyResult:
    checks: list[TurnCheck]
    errors: list[str]
    """Cells that failed to execute, runs that could not be found or matched."""
    seconds: float = 0.0
    runs: int = 0
    """How many recorded runs the notebook shows."""

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks) and not self.errors

    def summary(self) -> str:
        good = sum(c.ok for c in self.checks)
        if not self.checks:
            return (
                "nothing to verify: the notebook has no recorded arcana turns"
                + (f"; {self.errors[0]}" if self.errors else "")
            )
        runs = f" in {self.runs} run(s)" if self.runs else ""
        verdict = "reproduced" if self.ok else "NOT reproduced"
        tail = (
            f"; {len(self.errors)} problem(s), first: {self.errors[0]}"
            if self.errors and good == len(self.checks)
            else ""
        )
        failed = [c for c in self.checks if not c.ok]
        if failed:
            tail += f"; first not reproduced: {failed[0].why()}"
        return f"{verdict}: {good} of {len(self.checks)} turn(s){runs} had the same prompt digest and reply{tail}"


@dataclass
class _Turn:
    digests: list[str] = field(default_factory=list)
    reply: Any = None
    status: Any = None
    errors: list[str] = field(default_factory=list)
    provider_errors: list[str] = field(default_factory=list)


def _turns(reader: TraceReader, run_id: str, agent: str) -> dict[int, _Turn]:
    out: dict[int, _Turn] = {}
    for event in reader.events(run_id, event_types=("context_decision", "turn_end", "error"), agent=agent):
        if event.turn is None:
            continue
        entry = out.setdefault(event.turn, _Turn())
        match event.typed():
            case ContextDecisionEvent(metadata=decision):
                entry.digests.append(str(decision.request_digest))
            case TurnEnd(metadata=end):
                entry.reply = end.reply
                entry.status = end.status
            case ErrorEvent(metadata=error):
                text = f"{error.type}: {error.message or ''}"
                entry.errors.append(text)
                if error.where == "provider":
                    entry.provider_errors.append(text)
    return out


def _cell_errors(nb: Any) -> dict[int, tuple[str, str]]:
    """Cell index -> (ename, evalue) of the first error output of that cell."""
    out: dict[int, tuple[str, str]] = {}
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if output.get("output_type") == "error" and index not in out:
                out[index] = (str(output.get("ename")), str(output.get("evalue")))
    return out


def _started(reader: TraceReader, run_id: str) -> str:
    try:
        return reader.run_info(run_id).started or run_id
    except ArcanaError:
        return run_id


def _copy_inputs(notebook: Path, work: Path) -> None:
    """The data files the notebook reads (CSV ...) beside the copy; not other notebooks or reports."""
    for item in notebook.parent.iterdir():
        if (item.is_file() and not item.is_symlink() and item.suffix not in (".ipynb", ".html")
                and item.stat().st_size < 50_000_000):
            shutil.copy2(item, work / item.name)


def _prepare_memory(runs: list[NotebookRun], box: Path, folder: Path | None = None, work: Path | None = None) -> None:
    """Scratch copies of the memory stores the recorded runs used, as they were before those runs
    wrote to them (entries the runs remembered or learned are taken out again, entries they forgot
    are live again; a run's writes include the user's ``%arcana_memory add|forget`` in its session).

    The copy runs in another folder (``work``), so the project memories of the notebook's ``folder``
    (and of the project folders the runs recorded) are relabelled to that folder's project: the
    re-executed sessions see what the recorded ones saw, and a ``%arcana_memory add`` the notebook
    made outside a session meets its own entry again."""
    from ..memory.models import context_scope
    from ..memory.store import default_memory_path, sandboxed_path

    stores: set[Path] = set()
    written: set[str] = set()
    forgotten: set[str] = set()
    projects: set[str] = {str(folder)} if folder is not None else set()
    for run in runs:
        if run.path is None:
            continue
        reader = TraceReader(run.path)
        for event in reader.events(run.run_id, event_types=("run_start", "memory_write")):
            typed = event.typed()
            if isinstance(typed, RunStart):
                config = typed.metadata.config  # a RuntimeConfig dump: read as one
                if config is not None and config.get("project_dir"):
                    projects.add(str(config["project_dir"]))
                if config is not None and config.get("memory"):
                    if config.get("memory_url"):
                        continue  # a server: the sandbox gives the kernel an empty scratch file instead
                    raw = config.get("memory_path")
                    stores.add(Path(str(raw)).expanduser() if raw else default_memory_path())
                continue
            if not isinstance(typed, MemoryWrite):
                continue
            write = typed.metadata
            if write.op in ("remember", "learning") and write.entry is not None and write.entry.id:
                written.add(write.entry.id)
            elif write.op == "forget" and write.entry is not None and write.entry.id:
                forgotten.add(write.entry.id)  # forgotten by a run (the model, or %arcana_memory forget)
    box.mkdir(parents=True, exist_ok=True)
    for store in stores:
        try:
            copy = sandboxed_path(store, box)
        except (OSError, sqlite3.Error):
            continue  # the kernel's store will start empty in the sandbox
        if not copy.is_file():
            continue
        conn = sqlite3.connect(copy)
        try:
            if work is not None:
                target = context_scope(work)
                for project in sorted(projects):
                    label = context_scope(project)
                    if label != target:
                        conn.execute("UPDATE entries SET context = ?, scopes = replace(scopes, ?, ?) WHERE context = ?",
                                     (target, f" {label} ", f" {target} ", label))
                conn.commit()
            back = sorted(forgotten - written)
            if back:  # live again, as before the runs forgot them
                conn.execute(f"UPDATE entries SET retracted = 0 WHERE id IN ({','.join('?' * len(back))})", back)
                conn.commit()
            ids = sorted(written)
            marks = ",".join("?" * len(ids))
            pks = ([row[0] for row in conn.execute(f"SELECT pk FROM entries WHERE id IN ({marks})", ids)]
                   if ids else [])
            if pks:
                pk_marks = ",".join("?" * len(pks))
                for table in ("surfaced", "embeddings"):
                    try:
                        conn.execute(f"DELETE FROM {table} WHERE entry_pk IN ({pk_marks})", pks)
                    except sqlite3.OperationalError:
                        pass  # an older schema without that table
                conn.execute(f"DELETE FROM entries WHERE pk IN ({pk_marks})", pks)
                conn.commit()
        except sqlite3.Error:
            pass  # not a memory database we understand: the copy is still a sandbox
        finally:
            conn.close()


def _replay_plan(runs: list[NotebookRun]) -> dict[str, list[str]]:
    plan: dict[str, list[tuple[str, str]]] = {}
    for run in runs:
        if run.path is not None:
            plan.setdefault(run.agent, []).append((_started(TraceReader(run.path), run.run_id), run.run_id))
    return {agent: [run_id for _, run_id in sorted(items)] for agent, items in plan.items()}


def verify_notebook(notebook: Path, sessions: Mapping[str, str] | None = None, *, timeout: int = 600,
                    kernel_name: str | None = None) -> VerifyResult:
    """Re-run ``notebook`` with every recorded run it shows answered by replay; compare each turn.

    ``sessions`` is accepted for compatibility and ignored: the runs come from the notebook's outputs.
    """
    del sessions
    started = time.monotonic()
    notebook = Path(notebook).resolve()
    original = nbformat.read(notebook, as_version=4)
    embedded = EmbeddedTraces(original)
    try:
        runs = locate_runs(notebook, original, embedded)
        return _verify(notebook, runs, timeout=timeout, kernel_name=kernel_name, started=started)
    finally:
        embedded.cleanup()


def _verify(notebook: Path, runs: list[NotebookRun], *, timeout: int, kernel_name: str | None,
            started: float) -> VerifyResult:
    errors: list[str] = []
    checks: list[TurnCheck] = []
    if not runs:
        return VerifyResult(checks, errors, time.monotonic() - started, runs=0)
    with tempfile.TemporaryDirectory(prefix="arcana-verify-") as scratch:
        work = Path(scratch) / "notebook"
        work.mkdir()
        copy_nb = work / notebook.name
        shutil.copy2(notebook, copy_nb)
        _copy_inputs(notebook, work)
        copy_traces = notebook_trace_dir(copy_nb)
        copy_traces.mkdir(exist_ok=True)
        own = notebook_trace_dir(notebook)
        if own.is_dir() and not own.is_symlink():  # other runs of the notebook (a --resume needs them)
            for item in own.glob("*.jsonl"):
                if item.is_file() and not item.is_symlink():
                    shutil.copy2(item, copy_traces / item.name)
        for run in runs:
            if run.path is not None:
                shutil.copy2(run.path, copy_traces / f"{run.run_id}.jsonl")
        before = {p.stem for p in copy_traces.glob("*.jsonl")}
        box = Path(scratch) / "memory"
        _prepare_memory(runs, box, notebook.parent, work)
        plan = _replay_plan(runs)
        nb = nbformat.read(copy_nb, as_version=4)
        env = dict(os.environ)
        env["ARCANA_NOTEBOOK"] = str(copy_nb)
        env["ARCANA_REPLAY_RUNS"] = json.dumps(plan)
        # a turn that differs is answered as recorded, so the turns after it are still checked
        env["ARCANA_REPLAY_LENIENT"] = "1"
        env["ARCANA_MEMORY_SANDBOX"] = str(box)
        env.pop("JPY_SESSION_NAME", None)
        client = NotebookClient(
            nb, timeout=timeout, allow_errors=True, kernel_name=kernel_name or "python3",
            resources={"metadata": {"path": str(work)}},
        )
        client.execute(env=env, cwd=str(work))
        recorded_errors = _cell_errors(nbformat.read(notebook, as_version=4))
        for index, error in _cell_errors(nb).items():
            if recorded_errors.get(index) != error:  # the same error in the same cell was recorded: reproduced
                errors.append(f"cell {index + 1}: {error[0]}: {error[1]}")
        new_reader = TraceReader(copy_traces)
        new_runs: dict[str, list[tuple[str, str]]] = {}
        for info in new_reader.list_runs():
            if info.run_id not in before:
                for agent in info.agents:
                    new_runs.setdefault(agent, []).append((info.started or info.run_id, info.run_id))
        replayed_ids = {agent: [run_id for _, run_id in sorted(items)] for agent, items in new_runs.items()}
        recorded_reader = TraceReader(copy_traces)
        for run in runs:
            checks += _check_run(run, plan, replayed_ids, recorded_reader, new_reader, errors)
    return VerifyResult(checks, errors, time.monotonic() - started, runs=len(runs))


def _check_run(run: NotebookRun, plan: dict[str, list[str]], replayed_ids: dict[str, list[str]],
               recorded_reader: TraceReader, new_reader: TraceReader, errors: list[str]) -> list[TurnCheck]:
    name = run.agent
    if run.path is None:
        problem = "; ".join(run.problems) or f"no trace file for run {run.run_id}"
        errors.append(f"session {name}: {problem}")
        return [TurnCheck(name, run.run_id, turn, False, False, note=problem) for turn in sorted(run.turns)]
    recorded = _turns(recorded_reader, run.run_id, name)
    position = plan.get(name, []).index(run.run_id)
    new_ids = replayed_ids.get(name, [])
    new_id = new_ids[position] if position < len(new_ids) else None
    replayed = _turns(new_reader, new_id, name) if new_id is not None else {}
    if new_id is None:
        errors.append(f"session {name}: the re-executed notebook recorded no run for {run.run_id}")
    out: list[TurnCheck] = []
    for turn in sorted(set(recorded) | set(run.turns)):
        rec = recorded.get(turn)
        if rec is None:
            out.append(TurnCheck(name, run.run_id, turn, False, False,
                                 note=f"the notebook shows turn {turn} but the trace of {run.run_id} does not hold it"))
            continue
        new = replayed.get(turn) or _Turn(errors=["turn not re-executed"])
        prompt_ok = bool(rec.digests) and rec.digests == new.digests
        errors_ok = rec.provider_errors == new.provider_errors
        reply_ok = rec.reply == new.reply and new.status == rec.status and errors_ok
        recorded_error = rec.provider_errors[-1] if rec.provider_errors else None
        unexpected = [e for e in new.errors if e not in rec.errors]
        note = "; ".join(unexpected)[:400]
        difference = ""
        if not prompt_ok:
            difference = first_difference(recorded_reader, run.run_id, new_reader, new_id, name, turn, rec, new)
        if not prompt_ok and not note:
            note = "the rebuilt prompt differs from the recorded one"
        elif prompt_ok and not reply_ok and not note:
            if not errors_ok:
                note = (f"recorded error {recorded_error or 'none'}, re-executed "
                        f"{new.provider_errors[-1] if new.provider_errors else 'none'}")
            else:
                note = "same prompt, different reply"
        elif recorded_error and reply_ok:
            note = f"the recorded error reproduced: {recorded_error}"[:400]
        elif rec.status == "cancelled" and reply_ok and prompt_ok:
            kept = len(rec.reply or "")
            note = (f"interrupted by the user in the recording; replayed as interrupted, with its partial reply "
                    f"({kept} characters)" if kept else "interrupted by the user in the recording before any reply; "
                    "replayed as interrupted")
        out.append(TurnCheck(name, run.run_id, turn, prompt_ok, reply_ok, rec.digests, new.digests, note,
                             recorded_error, difference))
    return out


def first_difference(recorded_reader: TraceReader, run_id: str, new_reader: TraceReader, new_id: str | None,
                     agent: str, turn: int, rec: _Turn, new: _Turn) -> str:
    """The first call of ``turn`` whose prompt differs, and its first differing message: both prompts
    rebuilt from their traces (digest-checked), compared message by message."""
    from ..context.rebuild import rebuild_turn
    from ..providers.recorded import diff_messages, diff_tools

    step = next((i for i, (a, b) in enumerate(zip(rec.digests, new.digests, strict=False)) if a != b),
                min(len(rec.digests), len(new.digests)))
    if step >= len(new.digests):
        return (f"the re-executed turn made {len(new.digests)} call(s), the recorded one {len(rec.digests)}"
                if new_id is not None else "the turn was not re-executed")
    if step >= len(rec.digests):
        return f"the re-executed turn made {len(new.digests)} call(s), the recorded one {len(rec.digests)}"
    try:
        old = rebuild_turn(recorded_reader, run_id, turn, agent=agent, step=step)
        assert new_id is not None
        fresh = rebuild_turn(new_reader, new_id, turn, agent=agent, step=step)
    except (ArcanaError, AssertionError) as exc:
        return f"call {step + 1}: the prompts differ (cannot rebuild them to compare: {exc})"[:400]
    lines = diff_messages(old.messages, fresh.messages)
    if not lines:
        old_tools = [t.wire() for t in _tools(recorded_reader, run_id, agent, turn, step)]
        new_tools = [t.wire() for t in _tools(new_reader, new_id, agent, turn, step)]
        lines = diff_tools(old_tools, new_tools)
    first = lines[0] if lines else "the digests differ but no message does (the model or the tool specs?)"
    if len(lines) > 1 and lines[1].startswith("    "):  # a content diff: its first changed lines
        changed = [x.strip() for x in lines[1:] if x.startswith("    ") and x.strip()[:1] in "+-"
                   and not x.strip().startswith(("---", "+++")) and len(x.strip()) > 1]
        shown = [c if len(c) <= 80 else c[:79] + "…" for c in changed[:3]]
        first += " (- recorded, + re-executed): " + "; ".join(shown)
    return f"call {step + 1} of the turn, {first}"[:400]


def _tools(reader: TraceReader, run_id: str, agent: str, turn: int, step: int) -> list[Any]:
    from ..messages import ToolSpec

    replay = reader.replay_prompt(run_id, turn, agent, step=step)
    return [ToolSpec.model_validate(t) for t in (replay.tools if replay is not None else [])]
