"""Finding the run a command names (RUN: a run id, a prefix, ``latest``, a file, a folder or a notebook)
and what every ``arcana trace`` command shares: warnings, the corrupt-line message, JSON output."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ...exceptions import CorruptTraceError, TraceError
from ...trace.events import TraceEvent
from ...trace.reader import TRACE_DIR_SUFFIX, TraceReader, notebook_trace_dir


def shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return str(path)


def default_folders(cwd: Path | None = None) -> list[Path]:
    """Where runs are looked for without ``--dir``: ``$ARCANA_TRACE_DIR``, the trace folders of the
    notebooks in ``cwd`` (recorded in their outputs, and ``X.arcana/`` beside ``X.ipynb``), any other
    ``*.arcana/`` folder there, and ``./traces``. Only folders that exist."""
    from ...report.sources import notebook_trace_files

    here = Path.cwd() if cwd is None else cwd
    found: list[Path] = []
    env = os.environ.get("ARCANA_TRACE_DIR")
    if env:
        found.append(Path(env))
    for notebook in sorted(here.glob("*.ipynb")):
        try:
            runs, guess = notebook_trace_files(notebook)
        except TraceError:
            runs, guess = [], notebook_trace_dir(notebook)
        found += [r.path.parent for r in runs if r.path is not None and r.source != "embedded"] + [guess]
    found += sorted(here.glob(f"*{TRACE_DIR_SUFFIX}"))
    found.append(here / "traces")
    out: list[Path] = []
    seen: set[Path] = set()
    for folder in found:
        if folder.is_dir() and folder.resolve() not in seen:
            seen.add(folder.resolve())
            out.append(folder if not folder.is_absolute() else Path(shown(folder)))
    return out


def no_folders() -> TraceError:
    return TraceError(
        f"no traces found from {Path.cwd()}: no *.arcana/ folder beside a notebook here, no ./traces, and "
        "ARCANA_TRACE_DIR is not set; pass --dir DIR, a notebook (X.ipynb) or a trace file"
    )


def searched_folders(args: argparse.Namespace) -> list[Path]:
    if args.dir is not None:
        if not args.dir.exists():
            raise TraceError(f"trace folder {args.dir} does not exist; pass --dir DIR or set ARCANA_TRACE_DIR")
        return [args.dir]
    return default_folders()


def find_run(args: argparse.Namespace, run: str) -> tuple[TraceReader, str]:
    """The folder holding run id ``run`` (exact, unique prefix or ``latest``) among the folders searched."""
    folders = searched_folders(args)
    if not folders:
        raise no_folders()
    if len(folders) == 1:
        reader = TraceReader(folders[0], strict=args.strict)
        return reader, reader.run_info(run).run_id
    readers = [TraceReader(f, strict=args.strict) for f in folders]
    if run == "latest":
        runs = [(info.started or info.run_id, info.run_id, r) for r in readers for info in r.list_runs()]
        if not runs:
            raise TraceError(f"no runs in {', '.join(shown(f) for f in folders)}")
        _, run_id, reader = max(runs, key=lambda x: (x[0], x[1]))
        return reader, run_id
    for reader in readers:
        if run in reader.run_ids():
            return reader, run
    matches = [(r, run_id) for r in readers for run_id in r.run_ids() if run_id.startswith(run)]
    if len(matches) == 1:
        return matches[0]
    where = ", ".join(shown(f) for f in folders)
    if matches:
        raise TraceError(f"run {run!r} is ambiguous in {where}: matches "
                         f"{', '.join(sorted(m[1] for m in matches)[:20])}; give more of the id")
    raise TraceError(f"unknown run {run!r} in {where} (see `arcana trace list`, or pass --dir DIR)")


def open_notebook(args: argparse.Namespace, notebook: Path) -> tuple[TraceReader, str]:
    """A notebook as RUN: its latest recorded run (of ``--agent`` when given), else its folder's latest."""
    from ...report.sources import notebook_trace_files

    runs, guess = notebook_trace_files(notebook)
    if not notebook.is_file() and not guess.is_dir():
        raise TraceError(f"no notebook at {notebook} (and no trace folder {guess.name}/ beside it)")
    agent = getattr(args, "agent", None)
    usable = [r for r in runs if r.path is not None and r.source != "embedded" and (agent is None or r.agent == agent)]
    for r in runs:
        for problem in r.problems if r.path is None else []:
            print(f"warning: {notebook.name}: {problem}", file=sys.stderr)
    if usable:
        dated = sorted(usable, key=lambda r: (TraceReader(r.path).run_info(r.run_id).started or "", r.run_id))  # type: ignore[arg-type]
        chosen = dated[-1]
        if len({r.run_id for r in usable}) > 1:
            print(f"note: {notebook.name} shows {len(usable)} runs; using the latest, {chosen.run_id} "
                  f"(others: {', '.join(r.run_id for r in dated[:-1])})", file=sys.stderr)
        assert chosen.path is not None
        return TraceReader(chosen.path.parent, strict=args.strict), chosen.run_id
    if guess.is_dir():
        reader = TraceReader(guess, strict=args.strict)
        ids = reader.run_ids()
        if ids:
            return reader, reader.run_info("latest").run_id
    raise TraceError(f"notebook {notebook} has no recorded runs (no arcana output with a trace, no "
                     f"{guess.name}/ beside it); run a %%arcana cell there first")


def open_run(args: argparse.Namespace) -> tuple[TraceReader, str]:
    """The reader and the run id RUN names (see the module docstring)."""
    run: str = args.run
    if len(run) > 1000 or "\x00" in run:
        raise TraceError("RUN is too long or not a name; give a run id, a .jsonl file, a folder or a notebook")
    candidate = Path(run)
    if not nameable(candidate):
        raise TraceError(f"no run, trace file, folder or notebook named {clip(run)} (the name is too long for "
                         "this file system); give a run id, a .jsonl file, a folder or a notebook")
    if candidate.suffix == ".ipynb":
        return open_notebook(args, candidate)
    if candidate.suffix == ".jsonl" and candidate.is_file():
        return TraceReader(candidate, strict=args.strict), candidate.stem
    if candidate.is_dir() and (args.dir is None or candidate.resolve() != Path(args.dir).resolve()):
        reader = TraceReader(candidate, strict=args.strict)
        runs = reader.run_ids()
        if not runs:
            raise TraceError(f"no trace files (*.jsonl) in {candidate}")
        if len(runs) > 1:
            print(f"note: {candidate} holds {len(runs)} runs; showing the latest, {runs[-1]}", file=sys.stderr)
        return reader, runs[-1]
    if candidate.suffix == ".jsonl":
        raise TraceError(f"trace file {candidate} does not exist")
    return find_run(args, run)


def nameable(path: Path) -> bool:
    """Whether the OS can look ``path`` up at all (no component over the file system's name limit)."""
    try:
        path.exists()
    except (OSError, ValueError):
        return False
    return True


def clip(text: str, limit: int = 80) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"


def warn(reader: TraceReader, run_id: str | None = None) -> None:
    for warning in reader.warnings_for(run_id) if run_id is not None else reader.warnings:
        print(f"warning: {warning}", file=sys.stderr)


def corrupt(exc: CorruptTraceError) -> int:
    print(
        f"arcana: error: {exc.path}:{exc.line}: {exc.problem} — that line is not a valid trace event; "
        f"repair or delete it, or run without --strict to skip it",
        file=sys.stderr,
    )
    return 1


def trace_command(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` with a corrupt trace line (``--strict``) reported as one line naming the file and
    the line. The other user errors are :class:`~arcana_jupyter.exceptions.TraceError` (no such run,
    file, folder, turn or step; a trace that cannot be read) and ``OSError`` (a path the system
    refuses), which ``arcana``'s main prints as one line; anything else is a bug and is not caught
    here (main reports it as one, ``ARCANA_DEBUG=1`` shows the traceback)."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except CorruptTraceError as exc:
            return corrupt(exc)

    return run


def dump(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


def ranges(values: Iterable[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``1-3, 5``."""
    out: list[str] = []
    items = sorted(set(values))
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1] == items[j] + 1:
            j += 1
        out.append(str(items[i]) if i == j else f"{items[i]}-{items[j]}")
        i = j + 1
    return ", ".join(out) or "none"


def sequence_number(event: TraceEvent, fallback: int) -> int:
    try:
        return int(event.event_id.rsplit("_", 1)[-1])
    except ValueError:
        return fallback


def of_agent(agent: str | None) -> str:
    return f" for agent {agent}" if agent else ""
