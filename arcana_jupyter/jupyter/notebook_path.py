"""Where the notebook is, as far as the kernel can tell, and where its traces go.

Jupyter does not tell a kernel which notebook it serves in one standard way, so we ask, in order:

0. the path the JupyterLab extension reported over the ``arcana`` comm (at kernel start and on
   every rename: :func:`report_notebook_path`, see :mod:`.comm`);
1. ``ARCANA_NOTEBOOK`` (set it yourself, or ``arcana report --verify`` sets it);
2. ``JPY_SESSION_NAME``: jupyter_server 2 sets it to the notebook's path when it starts the kernel;
3. ``__vsc_ipynb_file__`` in the user namespace: VS Code's Jupyter extension defines it;
4. otherwise the working directory and a notebook called ``notebook`` (said once, in the cell).

``analysis.ipynb`` keeps its traces in ``analysis.arcana/``; paths recorded in outputs are relative
to the notebook's folder, so a notebook moved together with its folder keeps working.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..trace.reader import notebook_trace_dir

FALLBACK_STEM = "notebook"
FRONTEND = "frontend"

_reported: Path | None = None
"""The notebook path the front end reported last (absolute), or None."""


def report_notebook_path(path: str | os.PathLike[str] | None) -> None:
    """Remember the notebook path the front end reported (``None`` forgets it)."""
    global _reported
    _reported = Path(path).expanduser().resolve() if path is not None else None


def reported_notebook_path() -> Path | None:
    return _reported


@dataclass(frozen=True)
class NotebookLocation:
    """The notebook file (when known), its folder, its trace folder and how we found them."""

    notebook: Path | None
    folder: Path
    source: str
    """``frontend``, ``ARCANA_NOTEBOOK``, ``JPY_SESSION_NAME``, ``__vsc_ipynb_file__`` or ``fallback``."""

    @property
    def stem(self) -> str:
        return self.notebook.stem if self.notebook is not None else FALLBACK_STEM

    @property
    def trace_dir(self) -> Path:
        return notebook_trace_dir(self.folder / f"{self.stem}.ipynb")

    @property
    def is_fallback(self) -> bool:
        return self.source == "fallback"

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the notebook's folder (POSIX separators), else as given."""
        target = Path(path)
        try:
            return target.resolve().relative_to(self.folder.resolve()).as_posix()
        except ValueError:
            return target.as_posix()

    def resolve(self, relative: str) -> Path:
        """A path recorded relative to the notebook's folder, made absolute again."""
        candidate = Path(relative)
        return candidate if candidate.is_absolute() else self.folder / candidate

    def describe(self) -> str:
        if self.is_fallback:
            return (
                f"arcana: could not tell which notebook this kernel serves (no JPY_SESSION_NAME, no VS Code "
                f"variable); traces go to {self.trace_dir}. Set ARCANA_NOTEBOOK=/path/to/notebook.ipynb to choose."
            )
        return f"arcana: notebook {self.notebook} (from {self.source}); traces in {self.trace_dir}"


def _as_notebook(value: str | None, cwd: Path) -> Path | None:
    if not value or not value.strip():
        return None
    raw = value.strip()
    if raw.startswith("file://"):
        raw = raw[len("file://") :]
    path = Path(raw).expanduser()
    if path.suffix != ".ipynb":
        return None  # a console or a session named otherwise
    candidates = [path] if path.is_absolute() else [cwd / path, cwd / path.name]
    for candidate in candidates:
        if candidate.exists():
            return candidate.resolve()
    # Not on disk yet (an unsaved notebook): trust an absolute path, else place it in the cwd.
    return path if path.is_absolute() else (cwd / path.name).resolve()


def locate_notebook(
    user_ns: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> NotebookLocation:
    """Find the notebook this kernel runs (see the module docstring for the order)."""
    env = os.environ if environ is None else environ
    here = Path(cwd) if cwd is not None else Path.cwd()
    if _reported is not None and _reported.suffix == ".ipynb":
        return NotebookLocation(notebook=_reported, folder=_reported.parent, source=FRONTEND)
    for source, value in (
        ("ARCANA_NOTEBOOK", env.get("ARCANA_NOTEBOOK")),
        ("JPY_SESSION_NAME", env.get("JPY_SESSION_NAME")),
        ("__vsc_ipynb_file__", (user_ns or {}).get("__vsc_ipynb_file__")),
    ):
        notebook = _as_notebook(value if isinstance(value, str) else None, here)
        if notebook is not None:
            return NotebookLocation(notebook=notebook, folder=notebook.parent, source=source)
    return NotebookLocation(notebook=None, folder=here.resolve(), source="fallback")
