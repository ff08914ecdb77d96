"""Model strings to providers: presets, keys from providers= or the environment, clear errors."""

from __future__ import annotations

import pytest
from servers import fake_openai as oa

from arcana_jupyter.exceptions import ConfigError
from arcana_jupyter.providers.anthropic import AnthropicProvider
from arcana_jupyter.providers.base import LLMRequest
from arcana_jupyter.providers.local import LocalProvider
from arcana_jupyter.providers.openai_compat import OpenAICompatProvider
from arcana_jupyter.providers.registry import PRESETS, create_provider, parse_model_string, resolve_auto

KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_BASE_URL", "OLLAMA_BASE_URL")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


def test_parse_model_strings():
    spec = parse_model_string("openai:gpt-4o-mini")
    assert (spec.provider, spec.model) == ("openai", "gpt-4o-mini")
    spec = parse_model_string("local:/models/a:b.gguf")
    assert (spec.provider, spec.model) == ("local", "/models/a:b.gguf")
    assert parse_model_string("Anthropic:claude-haiku-4-5").provider == "anthropic"
    assert parse_model_string("local").model == ""
    with pytest.raises(ConfigError, match="known providers: openai, anthropic, deepseek"):
        parse_model_string("gpt-4o")


@pytest.mark.parametrize(
    ("model", "name", "base", "key_var"),
    [
        ("openai:gpt-4o-mini", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
        ("deepseek:deepseek-chat", "deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
        ("ollama:llama3", "ollama", "http://127.0.0.1:11434/v1", None),
        ("vllm:Qwen/Qwen2.5-7B", "vllm", "http://127.0.0.1:8000/v1", None),
        ("lmstudio:qwen2.5", "lmstudio", "http://127.0.0.1:1234/v1", None),
        ("llamacpp:any", "llamacpp", "http://127.0.0.1:8080/v1", None),
    ],
)
async def test_openai_compatible_presets(monkeypatch, model, name, base, key_var):
    if key_var:
        monkeypatch.setenv(key_var, "sk-from-env-0123456789")
    provider, model_name = create_provider(model, {})
    assert isinstance(provider, OpenAICompatProvider)
    assert provider.name == name and provider.base_url == base
    assert model_name == model.partition(":")[2]
    await provider.aclose()


async def test_missing_key_says_exactly_what_to_set():
    with pytest.raises(ConfigError) as info:
        create_provider("openai:gpt-4o-mini", {})
    assert "OPENAI_API_KEY" in str(info.value) and "providers={'openai': '<key>'}" in str(info.value)
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        create_provider("anthropic:claude-haiku-4-5", {})


async def test_unknown_provider_lists_the_known_ones():
    with pytest.raises(ConfigError) as info:
        create_provider("mistral:large", {})
    message = str(info.value)
    for name in [*PRESETS, "local", "replay"]:
        assert name in message
    assert "base_url" in message


async def test_providers_mapping_key_and_base_url_reach_a_real_server(fake_openai):
    fake_openai.script(oa.completion("from the proxy"))
    provider, model = create_provider(
        "openai:gpt-4o-mini", {"openai": {"api_key": "sk-dict-key-0123456789", "base_url": fake_openai.base_url}},
        timeout=5, max_retries=0,
    )
    response = await provider.complete(LLMRequest(model=model, messages=[{"role": "user", "content": "hi"}]))
    await provider.aclose()
    assert response.message.content == "from the proxy"
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-dict-key-0123456789"
    assert fake_openai.requests[0].json["model"] == "gpt-4o-mini"


async def test_any_name_with_a_base_url_is_an_openai_compatible_endpoint(fake_openai):
    fake_openai.script(oa.completion("custom"))
    provider, model = create_provider("myproxy:some-model", {"myproxy": {"base_url": fake_openai.base_url}})
    response = await provider.complete(LLMRequest(model=model, messages=[{"role": "user", "content": "hi"}]))
    await provider.aclose()
    assert response.message.content == "custom" and provider.name == "myproxy"
    assert "authorization" not in fake_openai.requests[0].headers


async def test_base_url_from_the_environment(monkeypatch):
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://10.0.0.5:11434/v1")
    provider, _ = create_provider("ollama:llama3", {})
    assert isinstance(provider, OpenAICompatProvider) and provider.base_url == "http://10.0.0.5:11434/v1"
    await provider.aclose()


async def test_anthropic_from_a_key_string():
    provider, model = create_provider("anthropic:claude-haiku-4-5", {"anthropic": "sk-ant-xyz-0123456789"})
    assert isinstance(provider, AnthropicProvider) and model == "claude-haiku-4-5"
    assert "sk-ant" not in repr(provider)
    await provider.aclose()


async def test_auto_picks_the_first_configured_key_else_local(monkeypatch):
    assert resolve_auto({}) == "local"
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deep-0123456789")
    assert resolve_auto({}) == "deepseek:deepseek-chat"
    assert resolve_auto({"anthropic": "sk-ant-0123456789"}) == "anthropic:claude-haiku-4-5"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-open-0123456789")
    provider, model = create_provider("auto", {})
    assert provider.name == "openai" and model == "gpt-4o-mini"
    await provider.aclose()


def test_auto_without_keys_is_the_bundled_local_model(smollm2_path):
    provider, model = create_provider("auto", {}, n_ctx=4096)
    assert isinstance(provider, LocalProvider) and provider.model_path == smollm2_path
    assert model == "SmolLM2-135M-Instruct.Q4_1"
    path_provider, _ = create_provider(f"local:{smollm2_path}", {})
    assert isinstance(path_provider, LocalProvider) and path_provider.model_path == smollm2_path


def test_auto_without_keys_or_local_model_says_what_to_set(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ConfigError) as info:
        create_provider("auto", {})
    message = str(info.value)
    for needle in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "pip install 'arcana-jupyter[local]'"):
        assert needle in message


def test_bad_providers_entries_are_config_errors():
    with pytest.raises(ConfigError, match="unknown key"):
        create_provider("openai:gpt-4o", {"openai": {"apikey": "x"}})
    with pytest.raises(ConfigError, match="key string or a dict"):
        create_provider("openai:gpt-4o", {"openai": 42})  # type: ignore[dict-item]
