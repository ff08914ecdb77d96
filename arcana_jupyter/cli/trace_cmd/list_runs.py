"""``arcana trace list [NOTEBOOK|FOLDER]``: the runs in the trace folder(s)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...exceptions import CorruptTraceError, TraceError
from ...trace.reader import RunInfo, TraceReader
from .opening import clip, corrupt, dump, nameable, no_folders, searched_folders, shown, warn


def _list_sources(args: argparse.Namespace) -> list[tuple[TraceReader, list[str] | None]]:
    """(reader, the run ids to list or ``None`` for all) for ``arcana trace list [TARGET]``."""
    target = Path(args.target) if args.target else None
    if target is not None and not nameable(target):
        raise TraceError(f"no notebook or trace folder named {clip(str(args.target))} (the name is too long)")
    if target is not None and target.suffix == ".ipynb":
        from ...report.sources import notebook_trace_files

        if not target.is_file():
            raise TraceError(f"no notebook at {target}")
        runs, guess = notebook_trace_files(target)
        for r in runs:
            for problem in r.problems if r.path is None else []:
                print(f"warning: {target.name}: {problem}", file=sys.stderr)
        sources: list[tuple[TraceReader, list[str] | None]] = []
        if guess.is_dir():
            sources.append((TraceReader(guess, strict=args.strict), None))
        outside = [r for r in runs if r.path is not None and r.source != "embedded"
                   and r.path.parent.resolve() != guess.resolve()]
        for r in outside:
            assert r.path is not None
            sources.append((TraceReader(r.path.parent, strict=args.strict), [r.run_id]))
        if not sources:
            raise TraceError(f"notebook {target} has no recorded runs (no arcana output with a trace, no "
                             f"{guess.name}/ beside it)")
        return sources
    if target is not None:
        if not target.is_dir():
            raise TraceError(f"{target} is neither a notebook (.ipynb) nor a trace folder")
        return [(TraceReader(target, strict=args.strict), None)]
    folders = searched_folders(args)
    if not folders:
        raise no_folders()
    return [(TraceReader(f, strict=args.strict), None) for f in folders]


def list_runs(args: argparse.Namespace) -> int:
    sources = _list_sources(args)
    rows: list[tuple[RunInfo, TraceReader]] = []
    try:
        for reader, only in sources:
            for info in reader.list_runs():
                if only is None or info.run_id in only:
                    rows.append((info, reader))
    except CorruptTraceError as exc:
        return corrupt(exc)
    folders = list(dict.fromkeys(shown(r.trace_dir) for r, _ in sources))
    if args.json:
        dump([{**info.model_dump(mode="json"), "folder": shown(reader.trace_dir)} for info, reader in rows])
    elif not rows:
        print(f"no runs in {', '.join(folders)} (pass --dir DIR or set ARCANA_TRACE_DIR)")
    else:
        many = len(folders) > 1
        print(f"{'run':<26}  {'started':<16}  {'model':<24}  {'turns':>5}  {'agents':<16}  {'status':<8}  errors"
              + ("  folder" if many else ""))
        for r, reader in rows:
            started = (r.started or "")[:16]
            agents = ",".join(r.agents) or "-"
            line = (f"{r.run_id:<26}  {started:<16}  {(r.model or '-'):<24}  {r.turns:>5}  {agents:<16}  "
                    f"{r.status:<8}  {r.errors:<6}" + (f"  {shown(reader.trace_dir)}" if many else ""))
            print(line.rstrip())
    for reader, _ in sources:
        warn(reader)
    return 0
