"""The Jupyter face of arcana: magics, the live turn display, replay, the comm and the notebook-aware tools.

``%load_ext arcana_jupyter`` calls :func:`load_ipython_extension`. This package is the only one
(with the report) that imports IPython or nbformat.
"""

from __future__ import annotations

import atexit
from typing import Any

from .registry import links as _links
from .registry import loaded as _loaded


def load_ipython_extension(ipython: Any) -> None:
    """Register :class:`~arcana_jupyter.jupyter.magics.ArcanaMagics` on ``ipython``."""
    from .magics import load

    if id(ipython) in _loaded:
        return
    magics = _loaded[id(ipython)] = load(ipython)
    # When the kernel shuts down (or the script ends), every open session writes its run_end, so a
    # finished notebook's runs read "ended", not "open".
    atexit.register(magics.close_all)
    from .comm import register

    _links[id(ipython)] = register(magics)  # the JupyterLab extension's link: notebook path, live actions


def unload_ipython_extension(ipython: Any) -> None:
    """Close the notebook's sessions (each writes its ``run_end``)."""
    magics = _loaded.pop(id(ipython), None)
    if magics is not None:
        atexit.unregister(magics.close_all)
        magics.close_all()


def session(name: str | None = None, ipython: Any = None) -> Any:
    """The :class:`~arcana_jupyter.runtime.ChatSession` behind ``%%arcana`` (default: the latest started).

    Use it to act on a session from Python: ``session().pin("...")``, ``session().turn_bundle()``.
    """
    if ipython is None:
        from IPython import get_ipython

        ipython = get_ipython()
    magics = _loaded.get(id(ipython))
    if magics is None:
        raise RuntimeError("the arcana extension is not loaded: run %load_ext arcana_jupyter first")
    return magics.entry(name).chat


__all__ = ["load_ipython_extension", "session", "unload_ipython_extension"]
