"""The Jupyter face of arcana: magics, live widgets, replay and the notebook-aware tools.

``%load_ext arcana_jupyter`` calls :func:`load_ipython_extension`. This package is the only one
(with the report) that imports IPython, ipywidgets or nbformat.
"""

from __future__ import annotations

from typing import Any

_loaded: dict[int, Any] = {}


def load_ipython_extension(ipython: Any) -> None:
    """Register :class:`~arcana_jupyter.jupyter.magics.ArcanaMagics` on ``ipython``."""
    from .magics import load

    if id(ipython) in _loaded:
        return
    _loaded[id(ipython)] = load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Close the notebook's sessions (each writes its ``run_end``)."""
    magics = _loaded.pop(id(ipython), None)
    if magics is not None:
        magics.close_all()


__all__ = ["load_ipython_extension", "unload_ipython_extension"]
