"""Carry a notebook's traces inside the notebook: ``metadata.arcana.traces``.

``embed_traces`` copies every trace file the notebook's outputs refer to into the notebook's
metadata (``{"<run_id>.jsonl": "<the file's text>"}``), so one ``.ipynb`` holds everything a report
or a verification needs. ``trace_dir_for`` gives the folder to read: the one beside the notebook
when it exists, else the embedded traces written out to a scratch folder.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import nbformat

from ..exceptions import ArcanaError
from ..trace.reader import notebook_trace_dir
from .sources import METADATA_KEY, extract_traces, locate_runs, notebook_turns

__all__ = ["METADATA_KEY", "embed_traces", "extract_traces", "referenced_runs", "trace_dir_for"]


def referenced_runs(nb: Any) -> list[str]:
    return list(dict.fromkeys(t.run_id for t in notebook_turns(nb)))


def embed_traces(notebook: str | Path) -> list[str]:
    """Write the notebook back with its runs' traces in its metadata; returns the files embedded.

    Each run's file is found as every reader finds it (:func:`.sources.locate_runs`: the recorded
    ``trace_path``, then ``<stem>.arcana/``); a run id or path that would leave the notebook's
    folder is refused.
    """
    path = Path(notebook)
    nb = nbformat.read(path, as_version=4)
    traces: dict[str, str] = {}
    for run in locate_runs(path, nb):
        if run.path is None or run.source not in ("recorded", "beside"):
            raise ArcanaError(f"cannot embed run {run.run_id[:80]}: {'; '.join(run.problems) or 'no trace file'}")
        traces[f"{run.run_id}.jsonl"] = run.path.read_text(encoding="utf-8")
    nb.metadata.setdefault(METADATA_KEY, {})["traces"] = traces
    nbformat.write(nb, path)
    return sorted(traces)


def trace_dir_for(notebook: Path, nb: Any, scratch: list[tempfile.TemporaryDirectory[str]]) -> Path:
    """The trace folder beside ``notebook``, or its embedded traces unpacked (kept alive by ``scratch``)."""
    beside = notebook_trace_dir(notebook)
    if beside.is_dir():
        return beside
    holder = tempfile.TemporaryDirectory(prefix="arcana-embedded-")
    unpacked = Path(holder.name) / beside.name
    if extract_traces(nb, unpacked):
        scratch.append(holder)
        return unpacked
    holder.cleanup()
    return beside
