"""arcana_jupyter.providers exports what we mean to export, and each name resolves."""

from __future__ import annotations

import subprocess
import sys

import arcana_jupyter.providers as providers

EXPECTED = [
    "AnthropicProvider", "Divergence", "FunctionProvider", "LLMRequest", "LLMResponse", "LocalProvider",
    "OpenAICompatProvider", "PRESETS", "Price", "Provider", "ReplayDivergence", "ReplayProvider", "RetryPolicy",
    "ScriptedProvider", "StreamChunk", "Usage", "cost", "create_provider", "default_model_path",
    "parse_model_string", "price_for", "resolve_auto", "tool_call",
]


def test_all_is_sorted_and_complete():
    assert providers.__all__ == sorted(EXPECTED)
    for name in providers.__all__:
        assert getattr(providers, name) is not None, name


def test_importing_providers_does_not_import_llama_cpp():
    code = ("import sys, arcana_jupyter.providers as p; p.create_provider; p.LocalProvider;"
            "sys.exit(1 if 'llama_cpp' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
