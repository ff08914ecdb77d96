"""arcana-jupyter: chat with LLM agents from Jupyter, and see — and replay — exactly what the model saw.

The public surface is listed in ``__all__``; names are imported on first use so that
``import arcana_jupyter`` stays cheap and never imports Jupyter (``session``, the notebook's
``ChatSession`` behind ``%%arcana``, imports it when asked for).
"""

from __future__ import annotations

import importlib
from typing import Any

from .version import __version__ as __version__  # re-exported

_EXPORTS = {
    "AgentPool": "arcana_jupyter.runtime",
    "ArcanaError": "arcana_jupyter.exceptions",
    "ChatReply": "arcana_jupyter.runtime",
    "ChatSession": "arcana_jupyter.runtime",
    "ConfigError": "arcana_jupyter.exceptions",
    "ContextDecision": "arcana_jupyter.context.decisions",
    "ContextSection": "arcana_jupyter.context",
    "Message": "arcana_jupyter.messages",
    "MessageDecision": "arcana_jupyter.context.decisions",
    "PinBlock": "arcana_jupyter.context",
    "ProviderError": "arcana_jupyter.exceptions",
    "Runtime": "arcana_jupyter.runtime",
    "RuntimeConfig": "arcana_jupyter.runtime",
    "TokenBudget": "arcana_jupyter.context.decisions",
    "TokenCounter": "arcana_jupyter.tokens",
    "Tool": "arcana_jupyter.runtime",
    "ToolSpec": "arcana_jupyter.messages",
    "TraceReader": "arcana_jupyter.trace.reader",
    "TraceWriter": "arcana_jupyter.trace.writer",
    "WorkingSetBuilder": "arcana_jupyter.context",
    "session": "arcana_jupyter.jupyter",
}

__all__ = sorted([*_EXPORTS, "__version__", "load_ipython_extension", "unload_ipython_extension"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'arcana_jupyter' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext arcana_jupyter``: register the magics."""
    from .jupyter import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .jupyter import unload_ipython_extension as unload

    unload(ipython)
