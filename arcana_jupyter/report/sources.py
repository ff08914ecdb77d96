"""Where a notebook's recorded runs are: follow what its outputs recorded, then guess, never escape.

Every ``%%arcana`` output carries ``metadata.arcana = {run_id, agent, turn, trace_path}`` with
``trace_path`` relative to the notebook's folder (``analysis.arcana/r_….jsonl``). Readers (the
report, ``--verify``, the CLI, ``%arcana_replay`` without a session) look for a run's trace file in
this order:

1. the recorded ``trace_path`` — so a notebook renamed after it ran (``Untitled.ipynb`` ->
   ``tour.ipynb``) or executed headless (``jupyter nbconvert --execute`` writes to
   ``notebook.arcana/``) still finds its traces;
2. ``<stem>.arcana/<run_id>.jsonl`` beside the notebook (the name-based guess);
3. the traces embedded in the notebook's metadata (``arcana report --embed``).

A recorded path or run id that is absolute, contains ``..``, is not a ``.jsonl`` file, or resolves
(symlinks followed) outside the notebook's folder is refused and reported as a problem: a crafted
notebook cannot make a report read, copy or embed an arbitrary file.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ..schema.bundle import MIME_TYPE
from ..trace.reader import notebook_trace_dir

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
"""A run id as a file name: letters, digits, ``_ . -``; no separators, not ``..``."""


def valid_run_id(run_id: object) -> bool:
    return isinstance(run_id, str) and bool(RUN_ID.match(run_id)) and ".." not in run_id


def safe_trace_file(folder: Path, recorded: object) -> tuple[Path | None, str]:
    """``(path, "")`` for a recorded ``trace_path`` that stays inside ``folder``; ``(None, why)`` else."""
    if not isinstance(recorded, str) or not recorded.strip():
        return None, "no trace_path recorded"
    text = recorded.strip()
    if len(text) > 1000:
        return None, "trace_path is too long"
    if "\x00" in text:
        return None, "trace_path contains a NUL byte"
    posix, windows = PurePosixPath(text), PureWindowsPath(text)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or text.startswith(("/", "\\", "~")):
        return None, f"trace_path {text!r} is absolute; only paths relative to the notebook's folder are followed"
    parts = [p for p in re.split(r"[\\/]+", text) if p]
    if any(p == ".." for p in parts):
        return None, f"trace_path {text!r} leaves the notebook's folder"
    if not parts or not parts[-1].endswith(".jsonl"):
        return None, f"trace_path {text!r} is not a .jsonl trace file"
    base = folder.resolve()
    candidate = base.joinpath(*parts)
    try:
        real = candidate.resolve()
    except (OSError, RuntimeError):
        return None, f"trace_path {text!r} cannot be resolved"
    if not real.is_relative_to(base):
        return None, f"trace_path {text!r} points outside the notebook's folder (through a link)"
    return candidate, ""


@dataclass(frozen=True)
class RecordedTurn:
    """One turn shown in the notebook (an output of a ``%%arcana`` cell)."""

    run_id: str
    agent: str
    turn: int | None
    trace_path: str | None
    cell: int
    """0-based index of the cell that shows it."""
    bundle: dict[str, Any]


@dataclass
class NotebookRun:
    """One run the notebook's outputs refer to, and where its trace file is."""

    run_id: str
    agent: str
    turns: list[int] = field(default_factory=list)
    recorded_path: str | None = None
    path: Path | None = None
    """The trace file (absolute), or ``None`` when none was found."""
    source: str = "missing"
    """``recorded`` (the output's trace_path), ``beside`` (``<stem>.arcana/``), ``embedded`` or ``missing``."""
    problems: list[str] = field(default_factory=list)


def _code_outputs(nb: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    cells = nb.get("cells") if isinstance(nb, dict) else getattr(nb, "cells", None)
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        outputs = cell.get("outputs")
        for output in outputs if isinstance(outputs, list) else []:
            if isinstance(output, dict):
                yield index, output


def notebook_turns(nb: Any) -> list[RecordedTurn]:
    """Every arcana turn displayed in the notebook, in cell order (output metadata first, then the bundle)."""
    found: list[RecordedTurn] = []
    for index, output in _code_outputs(nb):
        data = output.get("data") or {}
        meta = (output.get("metadata") or {}).get("arcana")
        bundle = data.get(MIME_TYPE) if isinstance(data, dict) else None
        bundle = dict(bundle) if isinstance(bundle, dict) else {}
        meta = dict(meta) if isinstance(meta, dict) else {}
        if not bundle and (not meta or meta.get("replay") or "turn" not in meta):
            continue  # not a turn: a %arcana_replay output (its metadata says "replay") or something else
        run_id = meta.get("run_id") or bundle.get("run_id")
        if not run_id:
            continue
        agent = meta.get("agent") or bundle.get("agent") or "main"
        turn = meta.get("turn", bundle.get("turn"))
        trace_path = meta.get("trace_path") or bundle.get("trace_path")
        found.append(RecordedTurn(
            run_id=str(run_id), agent=str(agent),
            turn=turn if isinstance(turn, int) and not isinstance(turn, bool) else None,
            trace_path=trace_path if isinstance(trace_path, str) else None, cell=index, bundle=bundle,
        ))
    return found


class EmbeddedTraces:
    """The traces embedded in a notebook's metadata, unpacked once into a scratch folder."""

    def __init__(self, nb: Any) -> None:
        self.nb = nb
        self._holder: tempfile.TemporaryDirectory[str] | None = None
        self.folder: Path | None = None

    def file(self, run_id: str) -> Path | None:
        if self.folder is None and self._holder is None:
            holder = tempfile.TemporaryDirectory(prefix="arcana-embedded-")
            folder = Path(holder.name) / "embedded.arcana"
            if extract_traces(self.nb, folder):
                self._holder, self.folder = holder, folder
            else:
                holder.cleanup()
                self._holder = holder  # remember that there is nothing embedded
        if self.folder is None:
            return None
        path = self.folder / f"{run_id}.jsonl"
        return path if path.is_file() else None

    def cleanup(self) -> None:
        if self._holder is not None and self.folder is not None:
            self._holder.cleanup()
        self.folder = None


def locate_runs(notebook: Path, nb: Any, embedded: EmbeddedTraces | None = None) -> list[NotebookRun]:
    """The runs the notebook shows, in order of first appearance, each with its trace file found.

    ``embedded`` (when given) is consulted last and must be cleaned up by the caller.
    """
    notebook = Path(notebook).resolve()
    folder = notebook.parent
    runs: dict[tuple[str, str], NotebookRun] = {}
    for turn in notebook_turns(nb):
        key = (turn.agent, turn.run_id)
        run = runs.get(key)
        if run is None:
            run = runs[key] = NotebookRun(run_id=turn.run_id, agent=turn.agent)
        if turn.turn is not None and turn.turn not in run.turns:
            run.turns.append(turn.turn)
        if run.recorded_path is None and turn.trace_path:
            run.recorded_path = turn.trace_path
    for run in runs.values():
        if not valid_run_id(run.run_id):
            run.problems.append(f"run id {run.run_id[:80]!r} is not a valid run id (letters, digits, '_', '.', '-'); "
                                "its trace is not read")
            continue
        looked: list[str] = []
        if run.recorded_path:
            path, why = safe_trace_file(folder, run.recorded_path)
            if path is not None and path.name != f"{run.run_id}.jsonl":
                path, why = None, f"trace_path {run.recorded_path!r} does not name run {run.run_id}"
            if path is not None and path.is_file():
                run.path, run.source = path, "recorded"
                continue
            if path is None:
                run.problems.append(why)  # refused: never read
            else:
                looked.append(path.relative_to(folder).as_posix())
        guess = notebook_trace_dir(notebook) / f"{run.run_id}.jsonl"
        if guess.is_file() and guess.resolve().is_relative_to(folder):
            run.path, run.source = guess, "beside"
            continue
        found = embedded.file(run.run_id) if embedded is not None else None
        if found is not None:
            run.path, run.source = found, "embedded"
            continue
        looked.append(guess.relative_to(folder).as_posix())
        where = ", ".join(dict.fromkeys(looked)) + (", the notebook's embedded traces" if embedded is not None else "")
        run.problems.append(f"no trace file for run {run.run_id} (looked for {where})")
    return list(runs.values())


def trace_folders(notebook: Path, nb: Any) -> list[Path]:
    """The folders (inside the notebook's folder) holding the notebook's runs, most used first;
    the name-based guess when the outputs recorded none."""
    counts: dict[Path, int] = {}
    for run in locate_runs(notebook, nb):
        if run.path is not None and run.source in ("recorded", "beside"):
            counts[run.path.parent] = counts.get(run.path.parent, 0) + 1
    ordered = sorted(counts, key=lambda p: -counts[p])
    return ordered or [notebook_trace_dir(Path(notebook).resolve())]


def read_notebook(path: Path) -> dict[str, Any]:
    """The notebook's JSON (no validation: a reader only needs its outputs); a clear error otherwise."""
    import json

    from ..exceptions import TraceError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TraceError(f"no notebook at {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TraceError(f"{path} is not a readable notebook ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(data, dict):
        raise TraceError(f"{path} is not a notebook (its JSON is not an object)")
    return data


def notebook_trace_files(notebook: Path) -> tuple[list[NotebookRun], Path]:
    """The notebook's runs (found as every reader finds them) and its name-based trace folder."""
    nb = read_notebook(notebook) if Path(notebook).is_file() else {"cells": []}
    return locate_runs(Path(notebook), nb), notebook_trace_dir(Path(notebook).resolve())


def replay_source(notebook: Path | None, trace_dir: Path, run_id: str | None = None) -> tuple[Path, str | None]:
    """Where ``%arcana_replay`` without an open session reads a run: ``(folder, run id)``.

    The runs the saved notebook's outputs recorded (their ``trace_path``) count besides the runs in
    ``trace_dir`` (the name-based folder): a given ``run_id`` is looked up among both; without one,
    the latest started of both is used. ``(trace_dir, None)`` when neither has a run.
    """
    from ..exceptions import ArcanaError
    from ..trace.reader import TraceReader

    recorded: list[NotebookRun] = []
    if notebook is not None and Path(notebook).is_file():
        try:
            recorded = [r for r in locate_runs(Path(notebook), read_notebook(Path(notebook)))
                        if r.path is not None and r.source != "embedded"]
        except ArcanaError:
            recorded = []
    if run_id is not None:
        for r in recorded:
            if r.run_id == run_id and r.path is not None:
                return r.path.parent, run_id
        return trace_dir, run_id
    candidates: list[tuple[str, str, Path]] = []
    for r in recorded:
        assert r.path is not None
        try:
            candidates.append((TraceReader(r.path).run_info(r.run_id).started or "", r.run_id, r.path.parent))
        except ArcanaError:
            continue
    if trace_dir.is_dir():
        try:
            candidates += [(info.started or "", info.run_id, trace_dir) for info in TraceReader(trace_dir).list_runs()]
        except ArcanaError:
            pass  # an unreadable folder offers no latest run; the recorded runs above still count
    if not candidates:
        return trace_dir, None
    _, latest, folder = max(candidates, key=lambda c: (c[0], c[1]))
    return folder, latest


METADATA_KEY = "arcana"
"""Where a notebook's metadata holds arcana's data (``traces``: the embedded trace files)."""


def extract_traces(nb: Any, folder: Path) -> bool:
    """Write the traces embedded in ``nb`` into ``folder``; False when it embeds none."""
    traces = (nb.metadata.get(METADATA_KEY) or {}).get("traces") or {}
    if not traces:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in traces.items():
        safe = Path(str(name)).name  # a file name, never a path out of the folder
        if safe.endswith(".jsonl") and valid_run_id(safe[: -len(".jsonl")]):
            (folder / safe).write_text(str(text), encoding="utf-8")
    return True
