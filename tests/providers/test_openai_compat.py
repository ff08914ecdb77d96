"""OpenAICompatProvider against a real HTTP server on 127.0.0.1 speaking the chat-completions protocol."""

from __future__ import annotations

import json

import httpx
import pytest
from servers import fake_openai as oa
from servers.fixtures import FakeServer, RecordedSleep
from servers.scripted import Reply

from arcana_jupyter.exceptions import (
    AuthenticationError,
    BadRequestError,
    ConnectionFailed,
    NotFoundError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
)
from arcana_jupyter.messages import Message, ToolCall, ToolSpec
from arcana_jupyter.providers.base import LLMRequest, StreamChunk
from arcana_jupyter.providers.connection import RetryPolicy
from arcana_jupyter.providers.openai_compat import OpenAICompatProvider

KEY = "sk-test-SECRET0123456789abcdef"
WEATHER = ToolSpec(
    name="get_weather",
    description="Weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def request(**kw) -> LLMRequest:
    base = {"model": "fake-gpt",
            "messages": [Message(role="system", content="Be brief."), Message(role="user", content="Hi")]}
    return LLMRequest(**(base | kw))


def provider(
    server: FakeServer, sleep: RecordedSleep, *, retries: int = 3, timeout: float = 5.0, **kw
) -> OpenAICompatProvider:
    return OpenAICompatProvider(
        base_url=server.base_url, api_key=KEY, name="openai", timeout=timeout, key_hint="set OPENAI_API_KEY",
        retry=sleep.policy(retries), **kw,
    )


async def collect(p: OpenAICompatProvider, req: LLMRequest) -> list[StreamChunk]:
    return [chunk async for chunk in p.stream(req)]


async def test_complete_sends_the_wire_format_and_parses_text_usage_and_cache(fake_openai, recorded_sleep):
    fake_openai.script(oa.completion("Hello there", prompt_tokens=30, completion_tokens=4, cached=12))
    p = provider(fake_openai, recorded_sleep)
    response = await p.complete(request(temperature=0.1, max_tokens=50, seed=3))
    await p.aclose()

    assert response.message == Message(role="assistant", content="Hello there")
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.cached_input_tokens) == (
        30, 4, 12)
    assert response.finish_reason == "stop"
    assert response.model == "fake-gpt" and response.raw_id == "chatcmpl-123" and response.attempts == 1
    sent = fake_openai.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.json == {
        "model": "fake-gpt",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        "temperature": 0.1,
        "max_tokens": 50,
        "seed": 3,
    }


async def test_complete_with_tools_sends_specs_and_history_and_parses_tool_calls(fake_openai, recorded_sleep):
    fake_openai.script(oa.completion(None, tool_calls=[oa.tool_call("call_1", "get_weather", '{"city": "Oslo"}')],
                                     finish_reason="tool_calls"))
    history = [
        Message(role="user", content="Weather in Paris and Oslo?"),
        Message(role="assistant",
                tool_calls=(ToolCall(id="call_0", name="get_weather", arguments='{"city": "Paris"}'),)),
        Message(role="tool", content="sunny", tool_call_id="call_0", name="get_weather"),
    ]
    p = provider(fake_openai, recorded_sleep)
    response = await p.complete(request(messages=history, tools=[WEATHER]))
    await p.aclose()

    assert response.finish_reason == "tool_calls"
    assert response.message.content == ""
    assert response.message.tool_calls == (ToolCall(id="call_1", name="get_weather", arguments='{"city": "Oslo"}'),)
    body = fake_openai.requests[0].json
    assert body["tools"] == [WEATHER.wire()]
    assert body["tool_choice"] == "auto"
    assert body["messages"][1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert body["messages"][2] == {"role": "tool", "content": "sunny", "tool_call_id": "call_0", "name": "get_weather"}


async def test_stream_text_usage_and_include_usage_option(fake_openai, recorded_sleep):
    fake_openai.script(Reply(events=oa.text_stream(["Hel", "lo", " world"], cached=5)))
    p = provider(fake_openai, recorded_sleep)
    chunks = await collect(p, request())
    await p.aclose()

    assert [c.text for c in chunks[:-1]] == ["Hel", "lo", " world"]
    final = chunks[-1].response
    assert final is not None and final.message.content == "Hello world"
    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.cached_input_tokens) == (11, 7, 5)
    assert final.finish_reason == "stop"
    body = fake_openai.requests[0].json
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_stream_assembles_tool_call_deltas_by_index(fake_openai, recorded_sleep):
    fake_openai.script(Reply(events=oa.tool_call_stream([
        ("call_a", "get_weather", ['{"ci', 'ty": ', '"Paris"}']),
        ("call_b", "get_weather", ['{"city"', ': "Oslo"}']),
    ])))
    p = provider(fake_openai, recorded_sleep)
    chunks = await collect(p, request(tools=[WEATHER]))
    await p.aclose()

    deltas = [c.tool_call_delta for c in chunks if c.tool_call_delta is not None]
    assert [d.id for d in deltas] == ["call_a"] * 4 + ["call_b"] * 3
    assert "".join(d.arguments for d in deltas if d.id == "call_a") == '{"city": "Paris"}'
    final = chunks[-1].response
    assert final is not None and final.finish_reason == "tool_calls"
    assert final.message.tool_calls == (
        ToolCall(id="call_a", name="get_weather", arguments='{"city": "Paris"}'),
        ToolCall(id="call_b", name="get_weather", arguments='{"city": "Oslo"}'),
    )


async def test_an_empty_stream_for_a_request_with_tools_falls_back_to_unstreamed(fake_openai, recorded_sleep):
    # what llama.cpp's Python server does: 200, text/event-stream, no events
    fake_openai.script(Reply(events=[]),
                       oa.completion(None, tool_calls=[oa.tool_call("c1", "get_weather", '{"city": "Rome"}')],
                                     finish_reason="tool_calls"))
    p = provider(fake_openai, recorded_sleep)
    chunks = await collect(p, request(tools=[WEATHER]))
    await p.aclose()
    assert [c.tool_call_delta for c in chunks if c.tool_call_delta] == [
        ToolCall(id="c1", name="get_weather", arguments='{"city": "Rome"}')]
    assert chunks[-1].response is not None and chunks[-1].response.finish_reason == "tool_calls"
    assert [r.json.get("stream") for r in fake_openai.requests] == [True, None]


async def test_429_with_retry_after_seconds_then_success_waits_as_told(fake_openai, recorded_sleep):
    fake_openai.script(
        oa.error(429, "Rate limit reached for requests", "requests", **{"Retry-After": "2"}),
        oa.error(429, "Rate limit reached for requests", "requests", **{"retry-after-ms": "1500"}),
        oa.completion("ok"),
    )
    p = provider(fake_openai, recorded_sleep)
    response = await p.complete(request())
    await p.aclose()
    assert response.message.content == "ok"
    assert response.attempts == 3
    assert recorded_sleep.delays == [2.0, 1.5]
    assert len(fake_openai.requests) == 3


async def test_retry_after_as_http_date_is_capped(fake_openai, recorded_sleep):
    fake_openai.script(oa.error(429, "slow down", **{"Retry-After": "Fri, 31 Dec 2100 23:59:59 GMT"}),
                       oa.completion("ok"))
    p = OpenAICompatProvider(base_url=fake_openai.base_url, api_key=KEY,
                             retry=RetryPolicy(max_retries=2, retry_after_cap=30.0, sleep=recorded_sleep))
    assert (await p.complete(request())).message.content == "ok"
    await p.aclose()
    assert recorded_sleep.delays == [30.0]


async def test_500_then_success_backs_off_exponentially_with_jitter(fake_openai, recorded_sleep):
    fake_openai.script(oa.error(500, "internal", "server_error"), oa.error(503, "overloaded"), oa.completion("fine"))
    p = provider(fake_openai, recorded_sleep)
    assert (await p.complete(request())).message.content == "fine"
    await p.aclose()
    first, second = recorded_sleep.delays
    assert 0.25 <= first < 0.5 and 0.5 <= second < 1.0


async def test_429_after_all_retries_is_rate_limit_error_quoting_the_server(fake_openai, recorded_sleep):
    fake_openai.script(*[oa.error(429, "You exceeded your current quota", "insufficient_quota")] * 3)
    p = provider(fake_openai, recorded_sleep, retries=2)
    with pytest.raises(RateLimitError) as info:
        await p.complete(request())
    await p.aclose()
    assert info.value.status == 429
    assert "You exceeded your current quota" in str(info.value) and "3 attempt" in str(info.value)
    assert len(recorded_sleep.delays) == 2


async def test_5xx_after_all_retries_is_server_error(fake_openai, recorded_sleep):
    fake_openai.script(*[oa.error(502, "bad gateway")] * 2)
    p = provider(fake_openai, recorded_sleep, retries=1)
    with pytest.raises(ServerError, match="bad gateway"):
        await p.complete(request())
    await p.aclose()


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (401, AuthenticationError, "Incorrect API key provided"),
        (403, AuthenticationError, "Project does not have access"),
        (404, NotFoundError, "The model `gpt-9` does not exist"),
        (400, BadRequestError, "Invalid value for 'messages'"),
        (422, BadRequestError, "messages: field required"),
    ],
)
async def test_client_errors_are_not_retried_and_quote_the_provider(
    fake_openai, recorded_sleep, status, error, message
):
    fake_openai.script(oa.error(status, message))
    p = provider(fake_openai, recorded_sleep)
    with pytest.raises(error) as info:
        await p.complete(request())
    await p.aclose()
    assert message in str(info.value)
    assert info.value.status == status
    assert recorded_sleep.delays == [] and len(fake_openai.requests) == 1
    if status == 401:
        assert "OPENAI_API_KEY" in str(info.value)


async def test_key_never_appears_in_errors_even_when_the_server_echoes_it(fake_openai, recorded_sleep):
    fake_openai.script(oa.error(401, f"Incorrect API key provided: {KEY}. You can find your API key at ..."))
    p = provider(fake_openai, recorded_sleep)
    with pytest.raises(AuthenticationError) as info:
        await p.complete(request())
    await p.aclose()
    exc = info.value
    for text in (str(exc), repr(exc), repr(p), repr(exc.args), str(exc.__cause__), str(exc.__context__)):
        assert KEY not in text
        assert "SECRET0123" not in text
    assert "[REDACTED]" in str(exc)


async def test_connection_refused_is_retried_then_connection_failed(recorded_sleep):
    from servers.llama_server import free_port

    p = OpenAICompatProvider(base_url=f"http://127.0.0.1:{free_port()}/v1", api_key=KEY, retry=recorded_sleep.policy(2))
    with pytest.raises(ConnectionFailed) as info:
        await p.complete(request())
    await p.aclose()
    assert "3 attempt" in str(info.value) and KEY not in repr(info.value)
    assert len(recorded_sleep.delays) == 2


async def test_connection_closed_without_answer_then_success(fake_openai, recorded_sleep):
    fake_openai.script(Reply(close_without_answer=True), oa.completion("second time lucky"))
    p = provider(fake_openai, recorded_sleep)
    assert (await p.complete(request())).message.content == "second time lucky"
    await p.aclose()
    assert len(recorded_sleep.delays) == 1


async def test_malformed_sse_is_a_stream_error(fake_openai, recorded_sleep):
    events = oa.text_stream(["ok"])
    events.insert(2, (None, "{this is not json"))
    fake_openai.script(Reply(events=events))
    p = provider(fake_openai, recorded_sleep)
    with pytest.raises(StreamError, match="malformed event #3"):
        await collect(p, request())
    await p.aclose()


async def test_error_event_mid_stream_is_a_stream_error_quoting_it(fake_openai, recorded_sleep):
    events = [*oa.text_stream(["ok"])[:2], (None, {"error": {"message": "model overloaded", "type": "server_error"}})]
    fake_openai.script(Reply(events=events))
    p = provider(fake_openai, recorded_sleep)
    with pytest.raises(StreamError, match="model overloaded"):
        await collect(p, request())
    await p.aclose()


async def test_connection_dropped_mid_stream_is_a_stream_error_not_a_retry(fake_openai, recorded_sleep):
    fake_openai.script(Reply(events=oa.text_stream(["a", "b", "c", "d"]), drop_after=3), oa.completion("never asked"))
    p = provider(fake_openai, recorded_sleep)
    got: list[str] = []
    with pytest.raises(StreamError, match="dropped"):
        async for chunk in p.stream(request()):
            got.append(chunk.text)
    await p.aclose()
    assert got == ["a", "b"]  # what arrived before the cut was handed out
    assert len(fake_openai.requests) == 1


async def test_stream_that_ends_cleanly_but_early_is_a_stream_error(fake_openai, recorded_sleep):
    fake_openai.script(Reply(events=oa.text_stream(["a", "b"])[:3]))
    p = provider(fake_openai, recorded_sleep)
    with pytest.raises(StreamError, match="incomplete"):
        await collect(p, request())
    await p.aclose()


async def test_stalled_stream_hits_the_read_timeout(fake_openai, recorded_sleep):
    fake_openai.script(Reply(events=oa.text_stream(["a", "b"]), stall_after=2, stall_seconds=5))
    p = provider(fake_openai, recorded_sleep, timeout=0.5)
    with pytest.raises(StreamError, match="stalled"):
        await collect(p, request())
    await p.aclose()


async def test_a_server_that_goes_silent_is_not_waited_on_forever_nor_retried(fake_openai, recorded_sleep):
    fake_openai.script(Reply(json={}, stall_before=5),
                       Reply(events=oa.text_stream(["x"]), stall_after=0, stall_seconds=5))
    p = provider(fake_openai, recorded_sleep, timeout=0.4)
    with pytest.raises(ConnectionFailed, match=r"sent nothing for 0\.4 s"):
        await p.complete(request())
    with pytest.raises(ConnectionFailed, match="read timeout"):
        await p.complete(request())  # headers arrive, the body never does
    await p.aclose()
    assert recorded_sleep.delays == [] and len(fake_openai.requests) == 2


async def test_a_200_that_is_not_json_is_a_clear_error(fake_openai, recorded_sleep):
    fake_openai.script(Reply(raw=b"<html>proxy login</html>"))
    p = provider(fake_openai, recorded_sleep)
    with pytest.raises(ProviderError, match="not valid JSON"):
        await p.complete(request())
    await p.aclose()


async def test_a_200_without_choices_is_a_clear_error(fake_openai, recorded_sleep):
    fake_openai.script(Reply(json={"object": "list", "data": []}))
    p = provider(fake_openai, recorded_sleep)
    with pytest.raises(ProviderError, match="no choices"):
        await p.complete(request())
    await p.aclose()


async def test_provider_is_usable_again_after_an_error(fake_openai, recorded_sleep):
    fake_openai.script(oa.error(400, "bad"), Reply(events=oa.text_stream(["fine"])))
    p = provider(fake_openai, recorded_sleep)
    with pytest.raises(BadRequestError):
        await p.complete(request())
    chunks = await collect(p, request())
    await p.aclose()
    assert chunks[-1].response is not None and chunks[-1].response.message.content == "fine"


# -- parsing at the transport seam (httpx.MockTransport, no server) -------------------------------


async def test_parsing_deepseek_cache_hits_and_null_content_and_missing_ids():
    def handler(req: httpx.Request) -> httpx.Response:
        assert json.loads(req.content)["max_completion_tokens"] == 9
        return httpx.Response(200, json={
            "id": "x", "model": "deepseek-chat",
            "choices": [{"index": 0, "finish_reason": "length", "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 9, "prompt_cache_hit_tokens": 64},
        })

    p = OpenAICompatProvider(base_url="http://test/v1", name="deepseek", max_tokens_field="max_completion_tokens",
                             transport=httpx.MockTransport(handler))
    response = await p.complete(request(max_tokens=9))
    await p.aclose()
    assert response.usage.cached_input_tokens == 64
    assert response.finish_reason == "length"
    assert response.message.tool_calls == (ToolCall(id="call_0", name="f", arguments='{"a": 1}'),)


def test_one_provider_works_across_event_loops_and_after_aclose(fake_openai, recorded_sleep):
    import asyncio

    fake_openai.script(oa.completion("one"), oa.completion("two"), oa.completion("three"))
    p = provider(fake_openai, recorded_sleep)

    async def ask_and_close(close: bool) -> str:
        text = (await p.complete(request())).message.content
        if close:
            await p.aclose()
        return text

    assert asyncio.run(ask_and_close(False)) == "one"
    assert asyncio.run(ask_and_close(True)) == "two"  # a new loop: a new connection pool
    assert asyncio.run(ask_and_close(True)) == "three"  # closed before: opened again


async def test_leaving_a_stream_early_closes_it_and_the_provider_goes_on(fake_openai, recorded_sleep):
    fake_openai.script(Reply(events=oa.text_stream(["a", "b", "c"]), stall_after=3, stall_seconds=5),
                       oa.completion("next"))
    p = provider(fake_openai, recorded_sleep, timeout=5)
    stream = p.stream(request())
    async for chunk in stream:
        if chunk.text:
            break
    await stream.aclose()  # what `async for` + garbage collection or task cancellation does
    assert (await p.complete(request())).message.content == "next"
    await p.aclose()
