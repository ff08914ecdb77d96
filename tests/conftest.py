"""Fixtures shared by every test folder."""

from __future__ import annotations

from scripted_chat import make_runtime

# Loopback servers (scripted OpenAI / Anthropic, a real llama.cpp server) and the local model.
pytest_plugins = ["servers.fixtures"]

__all__ = ["make_runtime"]
