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

METADATA_KEY = "arcana"


def referenced_runs(nb: Any) -> list[str]:
    from .build import collect_bundles

    return list(dict.fromkeys(str(b["run_id"]) for b in collect_bundles(nb) if b.get("run_id")))


def embed_traces(notebook: str | Path) -> list[str]:
    """Write the notebook back with its runs' traces in its metadata; returns the files embedded."""
    path = Path(notebook)
    nb = nbformat.read(path, as_version=4)
    folder = path.with_name(path.stem + ".arcana")
    traces: dict[str, str] = {}
    for run_id in referenced_runs(nb):
        file = folder / f"{run_id}.jsonl"
        if not file.is_file():
            raise ArcanaError(f"cannot embed run {run_id}: {file} does not exist")
        traces[file.name] = file.read_text(encoding="utf-8")
    nb.metadata.setdefault(METADATA_KEY, {})["traces"] = traces
    nbformat.write(nb, path)
    return sorted(traces)


def extract_traces(nb: Any, folder: Path) -> bool:
    """Write the traces embedded in ``nb`` into ``folder``; False when it embeds none."""
    traces = (nb.metadata.get(METADATA_KEY) or {}).get("traces") or {}
    if not traces:
        return False
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in traces.items():
        safe = Path(str(name)).name  # a file name, never a path out of the folder
        if safe.endswith(".jsonl"):
            (folder / safe).write_text(str(text), encoding="utf-8")
    return True


def trace_dir_for(notebook: Path, nb: Any, scratch: list[tempfile.TemporaryDirectory[str]]) -> Path:
    """The trace folder beside ``notebook``, or its embedded traces unpacked (kept alive by ``scratch``)."""
    beside = notebook.with_name(notebook.stem + ".arcana")
    if beside.is_dir():
        return beside
    holder = tempfile.TemporaryDirectory(prefix="arcana-embedded-")
    unpacked = Path(holder.name) / beside.name
    if extract_traces(nb, unpacked):
        scratch.append(holder)
        return unpacked
    holder.cleanup()
    return beside
