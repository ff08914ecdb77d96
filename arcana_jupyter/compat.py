"""Names a subpackage stopped exporting, kept for one release as deprecated aliases.

The public surface was cut to what docs/ARCHITECTURE.md's "The public surface" names (0.1, issue 25):
``from arcana_jupyter.providers import tool_call`` and 89 other imports stopped working with no warning.
Each subpackage's ``__init__`` answers those names again through :func:`moved` -- the object from the
module that defines it, with a :class:`DeprecationWarning` saying where to import it from -- until 0.2,
which removes them (CHANGELOG.md, "Deprecated"). ``dir()`` and ``__all__`` do not list them.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

REMOVED_IN = "0.2"


def moved(package: str, names: Mapping[str, str], *, stacklevel: int = 2) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each of ``names`` (name -> its defining module) resolves
    with a :class:`DeprecationWarning`; any other name is an :class:`AttributeError`, as usual.

    The warning names the line that imported the alias (``stacklevel``: 3 when the package's own
    ``__getattr__`` calls this one), so Python's and IPython's default filters, which show a
    DeprecationWarning only when it is attributed to ``__main__``, show it to the user."""

    def __getattr__(name: str) -> Any:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(f"{package}.{name} is no longer exported there: import it from {where} "
                      f"(the alias goes in arcana-jupyter {REMOVED_IN})", DeprecationWarning, stacklevel=stacklevel)
        return getattr(importlib.import_module(where), name)

    return __getattr__


__all__ = ["REMOVED_IN", "moved"]
