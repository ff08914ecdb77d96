"""Fixtures shared by every test folder."""

from __future__ import annotations

import pytest
from scripted_chat import make_runtime

# Loopback servers (scripted OpenAI / Anthropic, a real llama.cpp server) and the local model.
pytest_plugins = ["servers.fixtures"]

__all__ = ["make_runtime"]


@pytest.fixture(autouse=True)
def _no_shared_memory_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's ``ARCANA_MEMORY_URL`` never sends the tests' memories to a real server."""
    monkeypatch.delenv("ARCANA_MEMORY_URL", raising=False)
