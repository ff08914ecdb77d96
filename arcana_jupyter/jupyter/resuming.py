"""Which recorded run a notebook session continues after a kernel restart, and with what settings.

A notebook's trace folder (``X.arcana/``) holds its runs. After a restart the kernel remembers
nothing, so the first ``%%arcana`` of a session name continues the latest run of that name there
(:func:`latest_run`); ``%arcana_chat --resume latest|RUN`` picks one explicitly and
``%arcana_chat --new`` starts fresh. A resumed session keeps the settings its run was recorded
with (:func:`recorded_settings`: model, window, reserve, strategy, mode, memory, tools …) unless
the line gives others, so the continued conversation is built the way it was before the restart.

Only single-session runs are candidates (an agent pool's run has several agents and is resumed
through :class:`~arcana_jupyter.runtime.pool.AgentPool`), and only runs with at least one turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..runtime.config import RuntimeConfig
from ..schema.events import RunStart
from ..trace.reader import RunInfo, TraceReader

NOT_CARRIED = frozenset({"trace_dir", "project_dir", "memory_url", "prices"})
"""Recorded settings a resume does not take over: where the notebook is now (it may have been
renamed or moved), and the memory server's address (recorded with its password masked)."""


def runs_of(trace_dir: Path, name: str) -> list[RunInfo]:
    """The runs of session ``name`` in ``trace_dir`` with at least one turn, least recent first
    (by their last event: a run resumed yesterday is more recent than one started today and left)."""
    if not trace_dir.is_dir():
        return []
    reader = TraceReader(trace_dir)
    runs = [r for r in reader.list_runs() if r.agents == [name] and r.turns > 0]
    return sorted(runs, key=lambda r: (r.ended or r.started or "", r.run_id))


def latest_run(trace_dir: Path, name: str) -> RunInfo | None:
    """The run the first ``%%arcana`` of ``name`` continues after a restart, if there is one."""
    runs = runs_of(trace_dir, name)
    return runs[-1] if runs else None


def pick_run(trace_dir: Path, name: str, wanted: str) -> RunInfo:
    """``--resume latest`` or ``--resume RUN``: the run, or a ``ValueError`` that says what exists."""
    runs = runs_of(trace_dir, name)
    if wanted == "latest":
        if not runs:
            raise ValueError(f"--resume latest: no earlier run of session {name!r} in {trace_dir.name}/ to continue "
                             "(start one with %arcana_chat)")
        return runs[-1]
    for run in runs:
        if run.run_id == wanted:
            return run
    known = ", ".join(r.run_id for r in runs[-5:]) or "none"
    other = "" if not (trace_dir / f"{wanted}.jsonl").is_file() else (
        f" ({wanted} is there but is not a run of session {name!r} with turns: give --name)")
    raise ValueError(f"--resume {wanted}: no such run of session {name!r} in {trace_dir.name}/{other}; "
                     f"runs there: {known} (or --resume latest)")


def recorded_settings(trace_dir: Path, run_id: str) -> tuple[dict[str, Any], str | None]:
    """The settings ``run_id`` was started with (its ``run_start``), as :class:`RuntimeConfig`
    fields, and the model string it ran on (``function:NAME`` for a ``fn:`` model)."""
    reader = TraceReader(trace_dir)
    start = next(iter(reader.events(run_id, event_types=("run_start",))), None)
    typed = start.typed() if start is not None else None
    if not isinstance(typed, RunStart):
        return {}, None
    meta = typed.metadata
    fields = set(RuntimeConfig.model_fields)
    recorded = {k: v for k, v in (meta.config or {}).items() if k in fields and k not in NOT_CARRIED}
    return recorded, meta.model


def turns_word(n: int) -> str:
    return f"{n} turn{'s' if n != 1 else ''}"
