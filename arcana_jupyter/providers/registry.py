"""Model strings -> providers: ``openai:gpt-4o-mini``, ``anthropic:claude-haiku-4-5``, ``local``, ``auto``...

    provider, model = create_provider("deepseek:deepseek-chat", {"deepseek": key}, timeout=60, max_retries=4)

OpenAI-compatible endpoints are presets (a base URL and the environment variables to read), not
code. Keys come from ``providers={name: key}`` or ``providers={name: {"api_key", "base_url"}}``
first, then the environment. Any other name with a ``base_url`` in ``providers=`` is treated as an
OpenAI-compatible endpoint too (``providers={"myproxy": {"base_url": ..., "api_key": ...}}`` and
``model="myproxy:some-model"``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ..exceptions import ConfigError
from .anthropic import AnthropicProvider
from .base import Provider
from .connection import StreamLimits
from .openai_compat import OpenAICompatProvider


@dataclass(frozen=True)
class Preset:
    """An endpoint: its default base URL and the environment variables for key and URL."""

    name: str
    base_url: str
    key_env: str | None
    """Environment variable holding the key; ``None`` when the server needs none."""
    base_url_env: str
    default_model: str | None = None
    wire: str = "openai"
    key_required: bool = True
    max_tokens_field: str = "max_tokens"
    stream_tools: bool = True
    """False for servers that cannot stream a request offering tools (llama.cpp's Python server)."""


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "OPENAI_BASE_URL", "gpt-4o-mini",
               max_tokens_field="max_completion_tokens"),
        Preset("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
               "claude-haiku-4-5", wire="anthropic"),
        Preset("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "deepseek-chat"),
        Preset("vllm", "http://127.0.0.1:8000/v1", "VLLM_API_KEY", "VLLM_BASE_URL", key_required=False),
        Preset("ollama", "http://127.0.0.1:11434/v1", None, "OLLAMA_BASE_URL", key_required=False),
        Preset("lmstudio", "http://127.0.0.1:1234/v1", None, "LMSTUDIO_BASE_URL", key_required=False),
        Preset("llamacpp", "http://127.0.0.1:8080/v1", "LLAMACPP_API_KEY", "LLAMACPP_BASE_URL", key_required=False,
               stream_tools=False),
    )
}

AUTO_ORDER = ("openai", "anthropic", "deepseek")
"""``auto`` takes the first of these with a key (``providers=`` first, then the environment), else ``local``."""

SPECIAL = ("local", "replay", "auto")


def known_providers() -> list[str]:
    return [*PRESETS, "local", "replay"]


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model string: ``provider`` and the provider's own ``model`` name (may be empty)."""

    provider: str
    model: str


def parse_model_string(model_string: str) -> ModelSpec:
    """Split ``provider:model``; ``local:/path.gguf`` keeps the path (with its colons) as the model."""
    text = model_string.strip()
    if not text:
        raise ConfigError(f"empty model string; use one of {_examples()}")
    provider, sep, model = text.partition(":")
    provider = provider.strip().lower()
    if not sep:
        if provider in PRESETS or provider in SPECIAL:
            return ModelSpec(provider, "")
        raise ConfigError(
            f"model string {model_string!r} has no provider: write 'provider:model', e.g. {_examples()}; "
            f"known providers: {', '.join(known_providers())}"
        )
    return ModelSpec(provider, model.strip())


def _examples() -> str:
    return (
        "'openai:gpt-4o-mini', 'anthropic:claude-haiku-4-5', 'deepseek:deepseek-chat', "
        "'local', 'replay:<run_id>', 'auto'"
    )


def _entry(providers: Mapping[str, str | Mapping[str, Any]], name: str) -> dict[str, Any]:
    value = providers.get(name)
    if value is None:
        return {}
    if isinstance(value, str):
        return {"api_key": value}
    if isinstance(value, Mapping):
        unknown = set(value) - {"api_key", "base_url", "headers", "model_path", "n_ctx", "seed", "strict", "agent",
                                 "trace_dir", "default_model"}
        if unknown:
            raise ConfigError(
                f"providers[{name!r}] has unknown key(s) {sorted(unknown)}; accepted: api_key, base_url, headers "
                "(and model_path, n_ctx, seed for 'local'; strict, agent, trace_dir for 'replay')"
            )
        return dict(value)
    raise ConfigError(f"providers[{name!r}] must be a key string or a dict like {{'api_key': ..., 'base_url': ...}}")


def _key_for(preset: Preset, entry: Mapping[str, Any]) -> str | None:
    key = entry.get("api_key")
    if key:
        return str(key)
    if preset.key_env:
        return os.environ.get(preset.key_env) or None
    return None


def has_key(name: str, providers: Mapping[str, str | Mapping[str, Any]] | None = None) -> bool:
    """Whether a key for provider ``name`` is configured (``providers=`` or the environment)."""
    preset = PRESETS.get(name)
    if preset is None:
        return False
    return _key_for(preset, _entry(providers or {}, name)) is not None


def resolve_auto(providers: Mapping[str, str | Mapping[str, Any]] | None = None) -> str:
    """The model string ``auto`` stands for: first configured key in :data:`AUTO_ORDER`, else ``local``."""
    for name in AUTO_ORDER:
        if has_key(name, providers):
            return f"{name}:{PRESETS[name].default_model}"
    return "local"


def create_provider(
    model_string: str,
    providers: Mapping[str, str | Mapping[str, Any]] | None = None,
    *,
    timeout: float = 120.0,
    max_retries: int = 4,
    trace_dir: str | Path | None = None,
    n_ctx: int = 8192,
    seed: int | None = None,
    limits: StreamLimits | None = None,
) -> tuple[Provider, str]:
    """The provider for ``model_string`` and the model name to put in its requests.

    Args:
        model_string: ``provider:model``, ``local``, ``local:/path/model.gguf``, ``replay:<run_id>``
            (``replay:<run_id>@<agent>`` for one member of a pool) or ``auto``.
        providers: provider name -> API key, or -> ``{"api_key", "base_url"}``; the environment fills gaps.
        timeout: HTTP timeout in seconds (connect and read).
        max_retries: retries on 429 / 5xx / connection errors.
        trace_dir: where ``replay:<run_id>`` finds the recorded trace.
        n_ctx / seed: context window and sampler seed of a ``local`` model.
        limits: bytes and seconds one answer of an HTTP provider may take (:class:`StreamLimits`).

    Raises:
        ConfigError: unknown provider, missing key (saying which variable or ``providers=`` entry
            to set), ``local`` without llama-cpp-python, ``replay`` without a trace directory.
    """
    providers = providers or {}
    spec = parse_model_string(model_string)
    if spec.provider == "auto":
        if spec.model:
            raise ConfigError(f"'auto' takes no model name (got {model_string!r})")
        resolved = resolve_auto(providers)
        if resolved == "local":
            try:
                return create_provider("local", providers, timeout=timeout, max_retries=max_retries,
                                       trace_dir=trace_dir, n_ctx=n_ctx, seed=seed, limits=limits)
            except ConfigError as exc:
                envs = ", ".join(str(PRESETS[n].key_env) for n in AUTO_ORDER)
                raise ConfigError(
                    f"model='auto' found no API key (looked in providers= and the environment variables {envs}) "
                    f"and no local model: {exc}"
                ) from exc
        spec = parse_model_string(resolved)
    entry = _entry(providers, spec.provider)

    if spec.provider == "local":
        from .local import LocalProvider

        path = spec.model or entry.get("model_path")
        local = LocalProvider(
            path or None,
            n_ctx=int(entry.get("n_ctx", n_ctx)),
            seed=int(entry.get("seed", seed if seed is not None else 0)),
        )
        return local, local.model_name

    if spec.provider == "replay":
        from .recorded import ReplayProvider

        if not spec.model:
            raise ConfigError("replay needs a run id: model='replay:<run_id>' (see the trace folder for run ids)")
        folder = entry.get("trace_dir") or trace_dir
        if folder is None:
            raise ConfigError(
                f"model {model_string!r} replays a recorded trace but no trace directory is set: "
                "set RuntimeConfig(trace_dir=...) or providers={'replay': {'trace_dir': ...}}"
            )
        run_id, _, agent = spec.model.partition("@")
        replay = ReplayProvider(Path(folder), run_id, agent=agent or entry.get("agent", "main"),
                                strict=bool(entry.get("strict", True)))
        return replay, replay.model_name

    preset = PRESETS.get(spec.provider)
    if preset is None:
        if entry.get("base_url"):
            preset = Preset(spec.provider, str(entry["base_url"]), None, "", key_required=False)
        else:
            raise ConfigError(
                f"unknown provider {spec.provider!r} in model string {model_string!r}; known providers: "
                f"{', '.join(known_providers())}. For another OpenAI-compatible endpoint pass "
                f"providers={{{spec.provider!r}: {{'base_url': 'http://host:port/v1', 'api_key': ...}}}}"
            )
    model = spec.model or entry.get("default_model") or preset.default_model
    if not model:
        raise ConfigError(f"model string {model_string!r} names no model: write '{spec.provider}:<model name>'")
    key = _key_for(preset, entry)
    key_hint = _key_hint(preset)
    if key is None and preset.key_required:
        raise ConfigError(
            f"no API key for {preset.name} (model {model_string!r}): {key_hint}, "
            f"or use model='local' for the bundled local model"
        )
    base_url = (
        entry.get("base_url")
        or (os.environ.get(preset.base_url_env) if preset.base_url_env else None)
        or preset.base_url
    )
    headers = entry.get("headers") or None
    if preset.wire == "anthropic":
        return (
            AnthropicProvider(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries,
                              key_hint=key_hint, extra_headers=headers, limits=limits),
            model,
        )
    provider = OpenAICompatProvider(
        base_url=base_url, api_key=key, name=preset.name, timeout=timeout, max_retries=max_retries,
        key_hint=key_hint, max_tokens_field=preset.max_tokens_field, extra_headers=headers,
        stream_tools=preset.stream_tools, limits=limits, cache_key_field=cache_key_field(base_url),
    )
    return provider, model


OPENAI_CACHE_KEY_HOSTS = ("api.openai.com",)
"""Servers documented to accept ``prompt_cache_key`` (OpenAI's own API): others may refuse a field
they do not know, so it is sent only there."""


def cache_key_field(base_url: str) -> str | None:
    """``prompt_cache_key`` for OpenAI's own API, else ``None`` (not sent)."""
    host = httpx.URL(base_url).host
    return "prompt_cache_key" if host in OPENAI_CACHE_KEY_HOSTS else None


def _key_hint(preset: Preset) -> str:
    where = f"providers={{'{preset.name}': '<key>'}}"
    if preset.key_env:
        return f"set the environment variable {preset.key_env} or pass {where}"
    return f"pass {where}"
