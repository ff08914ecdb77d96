"""OpenAICompatProvider end to end against llama.cpp's real server (python -m llama_cpp.server)."""

from __future__ import annotations

import pytest

from arcana_jupyter.exceptions import NotFoundError
from arcana_jupyter.messages import Message, ToolSpec
from arcana_jupyter.providers.base import LLMRequest
from arcana_jupyter.providers.openai_compat import OpenAICompatProvider
from arcana_jupyter.providers.registry import create_provider

pytestmark = pytest.mark.slow

WEATHER = ToolSpec(
    name="get_weather",
    description="Get the current weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def ask(text: str, **kw) -> LLMRequest:
    return LLMRequest(model="smollm2", messages=[Message(role="system", content="You are helpful."),
                                                 Message(role="user", content=text)], seed=7, **kw)


async def test_non_streaming_and_streaming(llama_server):
    p = OpenAICompatProvider(base_url=llama_server, name="llamacpp", timeout=60)
    response = await p.complete(ask("Name a colour.", max_tokens=8, temperature=0.0))
    chunks = [c async for c in p.stream(ask("Name a colour.", max_tokens=8, temperature=0.0))]
    await p.aclose()

    assert response.message.content and response.finish_reason == "length"
    assert response.usage.output_tokens == 8 and response.usage.input_tokens > 10
    final = chunks[-1].response
    assert final is not None and len([c for c in chunks if c.text]) > 1
    assert final.message.content == response.message.content
    assert final.finish_reason == "length"


async def test_a_real_tool_call_then_the_tool_result_round_trip(llama_server):
    # the runtime always streams; llama.cpp's server cannot stream tool choice, the preset knows
    p, _ = create_provider("llamacpp:smollm2", {"llamacpp": {"base_url": llama_server}}, timeout=60)
    assert isinstance(p, OpenAICompatProvider)
    chunks = [c async for c in p.stream(ask("What is the weather in Paris? Use the tool.", tools=[WEATHER],
                                            max_tokens=40))]
    first = chunks[-1].response
    assert first is not None and first.finish_reason == "tool_calls"
    assert [c.tool_call_delta.name for c in chunks if c.tool_call_delta] == ["get_weather"]
    (call,) = first.message.tool_calls
    assert call.name == "get_weather" and call.parsed_arguments() == {"city": "Paris"}

    history = [*ask("What is the weather in Paris? Use the tool.").messages, first.message,
               Message(role="tool", content="18 C and sunny", tool_call_id=call.id, name="get_weather")]
    second = await p.complete(LLMRequest(model="smollm2", messages=history, max_tokens=16, seed=7))
    await p.aclose()
    assert second.message.content and not second.message.tool_calls


async def test_unknown_path_is_not_found(llama_server):
    p = OpenAICompatProvider(base_url=llama_server + "/nope", name="llamacpp", timeout=30)
    with pytest.raises(NotFoundError, match="HTTP 404"):
        await p.complete(ask("hi", max_tokens=2))
    await p.aclose()
