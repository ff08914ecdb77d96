"""FunctionProvider and ScriptedProvider are real providers: usage, streaming, tool calls."""

from __future__ import annotations

import pytest

from arcana_jupyter.exceptions import ProviderError
from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider, ScriptedProvider, tool_call

REQUEST = LLMRequest(model="gpt-4o-mini", messages=[Message(role="user", content="Say something nice.")])


async def test_sync_and_async_functions_with_exact_usage():
    async def answer(request: LLMRequest) -> str:
        return f"You said: {request.messages[-1].content}"

    for fn in (lambda r: f"You said: {r.messages[-1].content}", answer):
        provider = FunctionProvider(fn)
        response = await provider.complete(REQUEST)
        assert response.message == Message(role="assistant", content="You said: Say something nice.")
        assert response.usage.input_tokens > 5 and response.usage.output_tokens > 5
        assert provider.requests == [REQUEST]


async def test_stream_gives_words_tool_call_deltas_and_the_response_last():
    provider = ScriptedProvider(["Hello there, friend.", tool_call("search", {"q": "x"}, id="c1")])
    chunks = [c async for c in provider.stream(REQUEST)]
    assert [c.text for c in chunks[:-1]] == ["Hello ", "there, ", "friend."]
    assert chunks[-1].response is not None and chunks[-1].response.message.content == "Hello there, friend."
    chunks = [c async for c in provider.stream(REQUEST)]
    assert chunks[0].tool_call_delta == ToolCall(id="c1", name="search", arguments='{"q": "x"}')
    assert chunks[-1].response is not None and chunks[-1].response.finish_reason == "tool_calls"


async def test_script_accepts_responses_dicts_and_callables_and_stops_clearly():
    fixed = LLMResponse(message=Message(role="assistant", content="fixed"),
                        usage=Usage(input_tokens=1, output_tokens=2))
    provider = ScriptedProvider([
        fixed,
        {"tool": "lookup", "args": {"id": 3}},
        {"content": "with calls", "tool_calls": [{"id": "a", "name": "f", "arguments": "{}"}]},
        lambda request: f"{len(request.messages)} message(s)",
    ])
    assert await provider.complete(REQUEST) is fixed
    assert (await provider.complete(REQUEST)).message.tool_calls[0].name == "lookup"
    assert (await provider.complete(REQUEST)).message.tool_calls == (ToolCall(id="a", name="f", arguments="{}"),)
    assert (await provider.complete(REQUEST)).message.content == "1 message(s)"
    assert provider.remaining == 0
    with pytest.raises(ProviderError, match="call 5 but the script has only 4 answer"):
        await provider.complete(REQUEST)


async def test_a_bad_answer_type_is_a_type_error():
    with pytest.raises(TypeError, match="got int"):
        await FunctionProvider(lambda r: 42).complete(REQUEST)  # type: ignore[arg-type,return-value]
