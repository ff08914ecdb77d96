"""AnthropicProvider against a real HTTP server on 127.0.0.1 speaking the Messages API."""

from __future__ import annotations

import pytest
from servers import fake_anthropic as an
from servers.fixtures import FakeServer, RecordedSleep
from servers.scripted import Reply

from arcana_jupyter.exceptions import AuthenticationError, NotFoundError, RateLimitError, StreamError
from arcana_jupyter.messages import Message, ToolCall, ToolSpec
from arcana_jupyter.providers.anthropic import AnthropicProvider, to_anthropic
from arcana_jupyter.providers.base import LLMRequest, StreamChunk

KEY = "sk-ant-api03-SECRETsecretSECRET0123456789"
WEATHER = ToolSpec(
    name="get_weather",
    description="Weather for a city",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def provider(server: FakeServer, sleep: RecordedSleep, **kw) -> AnthropicProvider:
    return AnthropicProvider(api_key=KEY, base_url=server.base_url, timeout=5, key_hint="set ANTHROPIC_API_KEY",
                             retry=sleep.policy(2), **kw)


def request(**kw) -> LLMRequest:
    base = {"model": "claude-fake-1", "messages": [Message(role="system", content="Be brief."),
                                                     Message(role="user", content="Hi")]}
    return LLMRequest(**(base | kw))


async def collect(p: AnthropicProvider, req: LLMRequest) -> list[StreamChunk]:
    return [chunk async for chunk in p.stream(req)]


def test_system_extraction_mid_conversation_system_and_role_merging():
    system, messages = to_anthropic([
        Message(role="system", content="You are terse."),
        Message(role="system", content="Answer in English."),
        Message(role="user", content="Weather in Paris and Oslo?"),
        Message(role="assistant", content="Checking.", tool_calls=(
            ToolCall(id="t1", name="get_weather", arguments='{"city": "Paris"}'),
            ToolCall(id="t2", name="get_weather", arguments="not json"),
        )),
        Message(role="tool", content="sunny", tool_call_id="t1"),
        Message(role="tool", content="rain", tool_call_id="t2"),
        Message(role="system", content="Memory: the user likes Celsius.", name="memory"),
        Message(role="user", content="And tomorrow?"),
        Message(role="assistant", content=""),
    ])
    assert system == "You are terse.\n\nAnswer in English."
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "t2", "name": "get_weather", "input": {"_raw_arguments": "not json"}},
    ]
    assert messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": "sunny"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "rain"},
        {"type": "text", "text": '<system-context name="memory">\nMemory: the user likes Celsius.\n</system-context>'},
        {"type": "text", "text": "And tomorrow?"},
    ]


async def test_complete_sends_headers_system_tools_and_parses_tool_use_and_usage(fake_anthropic, recorded_sleep):
    fake_anthropic.script(an.message(
        [an.text_block("Let me check."), an.tool_use_block("toolu_1", "get_weather", {"city": "Paris"})],
        stop_reason="tool_use", input_tokens=50, output_tokens=12, cache_read=100, cache_write=20,
    ))
    p = provider(fake_anthropic, recorded_sleep)
    response = await p.complete(request(tools=[WEATHER], temperature=0.0))
    await p.aclose()

    assert response.message.content == "Let me check."
    assert response.message.tool_calls == (ToolCall(id="toolu_1", name="get_weather", arguments='{"city": "Paris"}'),)
    assert response.finish_reason == "tool_calls"
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.cached_input_tokens) == (
        170, 12, 100)
    sent = fake_anthropic.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    cache = {"type": "ephemeral"}  # the stable prefix marked for Anthropic's prompt cache
    assert sent.json == {
        "model": "claude-fake-1",
        "max_tokens": 4096,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": cache}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": cache}]}],
        "tools": [{"name": "get_weather", "description": "Weather for a city", "input_schema": WEATHER.parameters,
                   "cache_control": cache}],
        "temperature": 0.0,
    }


async def test_forced_tool_choice_is_translated(fake_anthropic, recorded_sleep):
    fake_anthropic.script(an.message([an.tool_use_block("toolu_1", "get_weather", {"city": "Oslo"})],
                                     stop_reason="tool_use"))
    p = provider(fake_anthropic, recorded_sleep)
    await p.complete(request(tools=[WEATHER], tool_choice={"type": "function", "function": {"name": "get_weather"}}))
    await p.aclose()
    assert fake_anthropic.requests[0].json["tool_choice"] == {"type": "tool", "name": "get_weather"}


async def test_stream_text_and_tool_use_with_input_json_deltas(fake_anthropic, recorded_sleep):
    blocks = [an.text_block("Checking the weather now."),
              an.tool_use_block("toolu_9", "get_weather", {"city": "São Paulo"})]
    fake_anthropic.script(Reply(events=an.stream(blocks, stop_reason="tool_use", input_tokens=40, output_tokens=30,
                                                 cache_read=8)))
    p = provider(fake_anthropic, recorded_sleep)
    chunks = await collect(p, request(tools=[WEATHER]))
    await p.aclose()

    assert "".join(c.text for c in chunks) == "Checking the weather now."
    assert len([c for c in chunks if c.text]) > 1
    deltas = [c.tool_call_delta for c in chunks if c.tool_call_delta is not None]
    assert {d.id for d in deltas} == {"toolu_9"} and len(deltas) > 2
    final = chunks[-1].response
    assert final is not None
    assert final.message.tool_calls == (ToolCall(id="toolu_9", name="get_weather", arguments='{"city": "São Paulo"}'),)
    assert final.finish_reason == "tool_calls"
    assert (final.usage.input_tokens, final.usage.output_tokens, final.usage.cached_input_tokens) == (48, 30, 8)
    assert fake_anthropic.requests[0].json["stream"] is True


async def test_error_event_in_the_stream_is_a_stream_error(fake_anthropic, recorded_sleep):
    events = an.stream([an.text_block("partial answer")])[:4]
    events.append(an.event("error", error={"type": "overloaded_error", "message": "Overloaded"}))
    fake_anthropic.script(Reply(events=events))
    p = provider(fake_anthropic, recorded_sleep)
    with pytest.raises(StreamError, match=r"Overloaded \(overloaded_error\)"):
        await collect(p, request())
    await p.aclose()


async def test_dropped_stream_and_missing_message_stop_are_stream_errors(fake_anthropic, recorded_sleep):
    events = an.stream([an.text_block("a long answer")])
    fake_anthropic.script(Reply(events=events, drop_after=5), Reply(events=events[:-1]))
    p = provider(fake_anthropic, recorded_sleep)
    with pytest.raises(StreamError, match="dropped"):
        await collect(p, request())
    with pytest.raises(StreamError, match="without message_stop"):
        await collect(p, request())
    await p.aclose()


async def test_malformed_tool_input_json_is_a_stream_error(fake_anthropic, recorded_sleep):
    events = an.stream([an.tool_use_block("toolu_1", "get_weather", {"city": "Paris"})], stop_reason="tool_use")
    events[3] = an.event("content_block_delta", index=0, delta={"type": "input_json_delta", "partial_json": "{{{"})
    fake_anthropic.script(Reply(events=events))
    p = provider(fake_anthropic, recorded_sleep)
    with pytest.raises(StreamError, match="not valid JSON"):
        await collect(p, request(tools=[WEATHER]))
    await p.aclose()


async def test_overloaded_529_and_429_are_retried_honouring_retry_after(fake_anthropic, recorded_sleep):
    fake_anthropic.script(
        an.error(529, "Overloaded", "overloaded_error"),
        an.error(429, "Number of requests has exceeded your rate limit", "rate_limit_error", **{"retry-after": "7"}),
        an.message([an.text_block("hello")]),
    )
    p = provider(fake_anthropic, recorded_sleep)
    response = await p.complete(request())
    await p.aclose()
    assert response.message.content == "hello" and response.attempts == 3
    assert recorded_sleep.delays[1] == 7.0


async def test_errors_quote_anthropics_message_and_hide_the_key(fake_anthropic, recorded_sleep):
    fake_anthropic.script(
        an.error(401, f"invalid x-api-key {KEY}", "authentication_error"),
        an.error(404, "model: claude-nope", "not_found_error"),
        *[an.error(429, "rate limited", "rate_limit_error", **{"retry-after": "1"})] * 3,
    )
    p = provider(fake_anthropic, recorded_sleep)
    with pytest.raises(AuthenticationError) as auth:
        await p.complete(request())
    assert "invalid x-api-key" in str(auth.value) and "ANTHROPIC_API_KEY" in str(auth.value)
    assert KEY not in str(auth.value) and KEY not in repr(auth.value) and "SECRETsecret" not in str(auth.value)
    with pytest.raises(NotFoundError, match="model: claude-nope"):
        await p.complete(request())
    with pytest.raises(RateLimitError, match="rate limited"):
        await p.complete(request())
    await p.aclose()
    assert KEY not in repr(p)


def test_a_conversation_opening_with_the_assistant_gets_a_user_turn_first():
    system, messages = to_anthropic([Message(role="system", content="S"), Message(role="assistant", content="Earlier."),
                                     Message(role="user", content="Go on.")])
    assert system == "S"
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
