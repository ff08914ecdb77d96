"""Per-shell state of the extension: the magics (``loaded``) and the ``arcana`` comm handlers (``links``).

Their own module, so that the modules the extension loads (the widgets) read them without
importing the package that loads those modules.
"""

from __future__ import annotations

from typing import Any

loaded: dict[int, Any] = {}
"""The :class:`~arcana_jupyter.jupyter.magics.ArcanaMagics` of each shell (by ``id``)."""
links: dict[int, Any] = {}
"""The ``arcana`` comm handler (:class:`~arcana_jupyter.jupyter.comm.ArcanaComm`) of each shell."""
