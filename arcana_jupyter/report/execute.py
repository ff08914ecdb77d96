"""``arcana run NB.ipynb [-p key=value ...] [-o OUT.ipynb]``: execute a notebook headless, knowing its name.

A kernel started by nbclient, papermill or ``jupyter nbconvert --execute`` is not told which
notebook it runs, so arcana would file its traces under ``notebook.arcana/``. ``run_notebook``
executes with nbclient and tells it: ``ARCANA_NOTEBOOK`` is the notebook the outputs are written
to (``OUT.ipynb``, or the input itself when executed in place), so traces land in
``OUT.arcana/`` beside it and every output records a ``trace_path`` relative to it. The working
directory is the input notebook's folder (data files it reads by relative path are found).

Parameters work as in papermill: ``-p key=value`` values are Python literals when they parse as
one (``3``, ``0.5``, ``True``, ``None``, ``"text"``, ``[1, 2]``), else strings; they are written as
a cell tagged ``injected-parameters`` right after the first cell tagged ``parameters`` (its
defaults are overridden), or at the top when no cell has that tag. A previous injected cell is
replaced. The parameters are also kept in ``metadata.arcana.run``.
"""

from __future__ import annotations

import ast
import datetime as _dt
import keyword
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from ..exceptions import ArcanaError

INJECTED_TAG = "injected-parameters"
PARAMETERS_TAG = "parameters"
IDENTIFIER_HELP = "a parameter name must be a Python identifier (letters, digits, _; not starting with a digit)"


def parse_parameters(items: Sequence[str]) -> dict[str, Any]:
    """``["n=3", "name=Ada"]`` -> ``{"n": 3, "name": "Ada"}`` (literals parsed, else strings)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ArcanaError(f"-p {item!r}: write parameters as key=value")
        if not key.isidentifier():
            raise ArcanaError(f"-p {item!r}: {IDENTIFIER_HELP}")
        if keyword.iskeyword(key):
            raise ArcanaError(f"-p {item!r}: {key!r} is a Python keyword, not a variable name the notebook can use; "
                              "rename the parameter")
        try:
            value: Any = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = raw
        if not _round_trips(value):
            raise ArcanaError(
                f"-p {item[:200]!r}: {raw.strip()[:80]!r} is not a value a notebook cell can be given back "
                f"(it parses as {str(value)[:80]}: a number too large for a float is infinite); pass a finite number, "
                f"or quote it to pass the text: -p '{key}=\"{raw.strip()[:80]}\"'"
            )
        out[key] = value
    return out


def _round_trips(value: Any) -> bool:
    """``repr(value)`` is a Python literal of the same value (``inf`` and ``nan`` are not)."""
    if isinstance(value, str):
        return True
    try:
        back = ast.literal_eval(repr(value))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False
    return bool(back == value) and type(back) is type(value)


def parameters_source(parameters: Mapping[str, Any]) -> str:
    lines = ["# Parameters (injected by arcana run)"]
    lines += [f"{key} = {value!r}" for key, value in parameters.items()]
    return "\n".join(lines) + "\n"


def _tags(cell: Any) -> list[str]:
    tags = (cell.get("metadata") or {}).get("tags") or []
    return [str(t) for t in tags] if isinstance(tags, list) else []


def inject_parameters(nb: Any, parameters: Mapping[str, Any]) -> int | None:
    """Put the parameters cell into ``nb`` (see the module docstring); returns its index, or ``None``
    when there are no parameters (a previous injected cell is removed either way)."""
    nb.cells = [c for c in nb.cells if INJECTED_TAG not in _tags(c)]
    if not parameters:
        return None
    cell = nbformat.v4.new_code_cell(parameters_source(parameters), metadata={"tags": [INJECTED_TAG]})
    index = next((i + 1 for i, c in enumerate(nb.cells) if PARAMETERS_TAG in _tags(c)), 0)
    nb.cells.insert(index, cell)
    return index


@dataclass
class RunResult:
    """What ``arcana run`` did."""

    notebook: Path
    """The executed notebook as written."""
    cells: int
    seconds: float
    error: str | None = None
    """``cell N: Type: message`` when a cell failed (execution stopped there unless errors were allowed)."""
    errors: list[str] = field(default_factory=list)
    turns: int = 0
    runs: list[str] = field(default_factory=list)
    trace_folders: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.errors


def read_notebook(path: Path) -> Any:
    """``path`` as an nbformat v4 notebook, or an :class:`ArcanaError` saying why it cannot be read."""
    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises several unrelated types for a bad file
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ArcanaError(f"{path} is not a readable notebook: {why}") from None


def execute_notebook(path: Path, *, timeout: int = 600, env: dict[str, str] | None = None) -> Any:
    """Execute ``path`` in place (kernel ``python3``, working directory its folder) and save it; a
    failing cell raises nbclient's error (the demo and the tests want that; ``arcana run`` is
    :func:`run_notebook`)."""
    nb = nbformat.read(path, as_version=4)
    environment = dict(os.environ if env is None else env)
    environment["ARCANA_NOTEBOOK"] = str(path)
    environment.pop("ARCANA_REPLAY_RUNS", None)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", store_widget_state=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env=environment, cwd=str(path.parent))
    nbformat.write(nb, path)
    return nb


def run_notebook(notebook: str | Path, *, parameters: Mapping[str, Any] | None = None,
                 output: str | Path | None = None, timeout: int = 600, kernel_name: str | None = None,
                 allow_errors: bool = False, env: Mapping[str, str] | None = None) -> RunResult:
    """Execute ``notebook`` headless with its identity known; write it to ``output`` (default: in place)."""
    source = Path(notebook).resolve()
    if not source.is_file():
        raise ArcanaError(f"no notebook at {source}")
    target = Path(output).resolve() if output is not None else source
    if target.suffix != ".ipynb":
        raise ArcanaError(f"-o {output}: the executed notebook must be a .ipynb file")
    if not target.parent.is_dir():
        raise ArcanaError(f"-o {output}: the folder {target.parent} does not exist")
    nb = read_notebook(source)
    params = dict(parameters or {})
    inject_parameters(nb, params)
    meta = nb.metadata.setdefault("arcana", {})
    meta["run"] = {"parameters": {k: v if isinstance(v, str | int | float | bool | type(None)) else repr(v)
                                  for k, v in params.items()},
                   "input": source.name if source.parent == target.parent else str(source),
                   "executed": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    environment = dict(os.environ if env is None else env)
    environment["ARCANA_NOTEBOOK"] = str(target)
    for name in ("ARCANA_REPLAY_RUNS", "JPY_SESSION_NAME"):
        environment.pop(name, None)
    kernel = kernel_name or str((nb.metadata.get("kernelspec") or {}).get("name") or "python3")
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel, allow_errors=allow_errors,
                            resources={"metadata": {"path": str(source.parent)}})
    started = time.monotonic()
    error: str | None = None
    try:
        client.execute(env=environment, cwd=str(source.parent))
    except CellExecutionError as exc:
        error = _first_error(nb) or f"a cell failed: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}"
    except CellTimeoutError:
        error = f"a cell ran longer than --timeout {timeout} s"
    except DeadKernelError as exc:
        error = f"the kernel died: {exc}"
    except Exception as exc:  # no such kernel, kernel failed to start
        if type(exc).__name__ == "NoSuchKernel":
            raise ArcanaError(
                f"no Jupyter kernel named {kernel!r}; pass --kernel NAME (see `jupyter kernelspec list`)"
            ) from None
        raise
    seconds = time.monotonic() - started
    nbformat.write(nb, target)
    result = RunResult(notebook=target, cells=len(nb.cells), seconds=seconds, error=error)
    if allow_errors:
        result.errors = _all_errors(nb)
    from .sources import locate_runs, notebook_turns

    result.turns = len(notebook_turns(nb))
    located = locate_runs(target, nb)
    result.runs = [r.run_id for r in located]
    result.trace_folders = sorted({r.path.parent.relative_to(target.parent).as_posix() + "/"
                                   for r in located if r.path is not None and r.source != "embedded"})
    return result


def _all_errors(nb: Any) -> list[str]:
    out = []
    for number, cell in enumerate(nb.cells, start=1):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if o.get("output_type") == "error":
                out.append(f"cell {number}: {o.get('ename')}: {str(o.get('evalue'))[:300]}")
    return out


def _first_error(nb: Any) -> str | None:
    errors = _all_errors(nb)
    return errors[0] if errors else None
