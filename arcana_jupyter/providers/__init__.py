"""LLM providers: one module per wire format behind one small async interface.

    from arcana_jupyter.providers import create_provider, LLMRequest
    provider, model = create_provider("openai:gpt-4o-mini", {"openai": key})
    response = await provider.complete(LLMRequest(model=model, messages=[...]))

- :class:`Provider` (``complete``, ``stream``, ``aclose``), :class:`LLMRequest`,
  :class:`LLMResponse`, :class:`StreamChunk`, :class:`Usage` — the interface (``base``).
- :class:`OpenAICompatProvider` — OpenAI chat completions, and every server speaking it
  (DeepSeek, vLLM, Ollama, llama.cpp server, LM Studio are presets in ``registry``).
- :class:`AnthropicProvider` — Anthropic's Messages API.
- :class:`LocalProvider` — an in-process llama.cpp model (the ``local`` extra).
- :class:`ReplayProvider` — answers from a recorded trace; :class:`ReplayDivergence` when the
  request differs.
- :class:`FunctionProvider`, :class:`ScriptedProvider` — answers from Python code (tests, scripts).
- :func:`create_provider` — model strings to providers; :func:`cost` / :func:`price_for` — prices.

Names are imported on first use, so importing this package does not import llama.cpp or the
trace reader.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..compat import moved as _moved_names

_EXPORTS = {
    "AnthropicProvider": "arcana_jupyter.providers.anthropic",
    "FunctionProvider": "arcana_jupyter.providers.function",
    "LLMRequest": "arcana_jupyter.providers.base",
    "LLMResponse": "arcana_jupyter.providers.base",
    "LocalProvider": "arcana_jupyter.providers.local",
    "OpenAICompatProvider": "arcana_jupyter.providers.openai_compat",
    "Provider": "arcana_jupyter.providers.base",
    "ReplayDivergence": "arcana_jupyter.exceptions",
    "ReplayProvider": "arcana_jupyter.providers.recorded",
    "ScriptedProvider": "arcana_jupyter.providers.function",
    "StreamChunk": "arcana_jupyter.providers.base",
    "Usage": "arcana_jupyter.providers.base",
    "cost": "arcana_jupyter.providers.pricing",
    "create_provider": "arcana_jupyter.providers.registry",
    "price_for": "arcana_jupyter.providers.pricing",
}

__all__ = sorted(_EXPORTS)


# Names exported before 0.1's public surface (issue 25), answered for one more release with a warning.
_MOVED = {
    "Divergence": "arcana_jupyter.providers.recorded",
    "PRESETS": "arcana_jupyter.providers.registry",
    "Price": "arcana_jupyter.providers.pricing",
    "RetryPolicy": "arcana_jupyter.providers.connection",
    "default_model_path": "arcana_jupyter.providers.local",
    "parse_model_string": "arcana_jupyter.providers.registry",
    "resolve_auto": "arcana_jupyter.providers.registry",
    "tool_call": "arcana_jupyter.providers.function",
}
_deprecated = _moved_names("arcana_jupyter.providers", _MOVED, stacklevel=3)  # called from __getattr__ below


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        return _deprecated(name)  # a deprecated alias, or AttributeError
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
