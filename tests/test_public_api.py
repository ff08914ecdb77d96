"""The names arcana_jupyter exports are the ones we mean to export, and each resolves."""

from __future__ import annotations

import arcana_jupyter

EXPECTED = [
    "AgentPool", "ArcanaError", "ChatReply", "ChatSession", "ConfigError", "ContextDecision", "ContextSection",
    "Message", "MessageDecision", "PinBlock", "ProviderError", "Runtime", "RuntimeConfig", "TokenBudget",
    "TokenCounter", "Tool", "ToolSpec", "TraceReader", "TraceWriter", "WorkingSetBuilder", "__version__",
    "load_ipython_extension", "unload_ipython_extension",
]


def test_all_is_sorted_and_complete() -> None:
    assert arcana_jupyter.__all__ == sorted(EXPECTED)


def test_every_export_resolves() -> None:
    for name in arcana_jupyter.__all__:
        assert getattr(arcana_jupyter, name) is not None, name
