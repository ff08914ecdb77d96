"""Hostile and broken providers on a real loopback server: secrets echoed back, answers that never
end, lines that never end, keep-alive comments forever, wrong-shaped JSON events.

Every case is bounded: limits here are small (kilobytes, about a second) so a regression fails fast
instead of eating memory or hanging; the server stops sending as soon as the client hangs up.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest
from servers import fake_anthropic as an
from servers import fake_openai as oa
from servers.fixtures import FakeServer, RecordedSleep
from servers.scripted import Reply

from arcana_jupyter.exceptions import ArcanaError, ProviderError, StreamError
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.anthropic import AnthropicProvider
from arcana_jupyter.providers.base import LLMRequest, StreamChunk
from arcana_jupyter.providers.connection import StreamLimits
from arcana_jupyter.providers.openai_compat import OpenAICompatProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig

PATTERN_KEY = "sk-test-SECRET0123456789abcdef"
PLAIN_KEY = "plainkey7Q2w9e8r7t6y5u4"  # no known key shape: only the configured value can mask it
LIMITS = StreamLimits(max_reply_bytes=64 * 1024, max_line_bytes=8 * 1024, max_stream_seconds=2.0,
                      stream_idle_seconds=0.8)


def request() -> LLMRequest:
    return LLMRequest(model="fake-gpt", messages=[Message(role="user", content="Hi")])


def openai(server: FakeServer, sleep: RecordedSleep, key: str = PATTERN_KEY, **kw: Any) -> OpenAICompatProvider:
    return OpenAICompatProvider(base_url=server.base_url, api_key=key, name="openai", timeout=5.0,
                                retry=sleep.policy(0), limits=kw.pop("limits", LIMITS), **kw)


def anthropic(server: FakeServer, sleep: RecordedSleep, key: str = PLAIN_KEY) -> AnthropicProvider:
    return AnthropicProvider(api_key=key, base_url=server.base_url, timeout=5.0, retry=sleep.policy(0), limits=LIMITS)


async def drain(provider: Any) -> tuple[list[StreamChunk], BaseException | None]:
    chunks: list[StreamChunk] = []
    try:
        async for chunk in provider.stream(request()):
            chunks.append(chunk)
    except Exception as exc:
        return chunks, exc
    return chunks, None


def sse(data: Any) -> bytes:
    return f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


# -- defect 1: keys echoed back by the server never reach an exception message --------------------


@pytest.mark.parametrize("key", [PATTERN_KEY, PLAIN_KEY])
async def test_key_echoed_mid_stream_is_masked(
        fake_openai: FakeServer, recorded_sleep: RecordedSleep, key: str) -> None:
    fake_openai.script(Reply(events=[(None, oa.chunk({"content": "Hel"})),
                                     (None, {"error": {"message": f"bad key Bearer {key}", "type": "auth"}})]))
    _, exc = await drain(openai(fake_openai, recorded_sleep, key))
    assert isinstance(exc, StreamError)
    assert key not in str(exc) and key not in repr(exc) and "[REDACTED]" in str(exc)


async def test_key_echoed_in_a_200_json_error_body_is_masked(fake_openai: FakeServer,
                                                            recorded_sleep: RecordedSleep) -> None:
    fake_openai.script(Reply(json={"error": {"message": f"invalid api key {PLAIN_KEY}"}}))
    with pytest.raises(ProviderError) as info:
        await openai(fake_openai, recorded_sleep, PLAIN_KEY).complete(request())
    assert PLAIN_KEY not in str(info.value) and PLAIN_KEY not in repr(info.value)


async def test_anthropic_key_echoed_mid_stream_is_masked(fake_anthropic: FakeServer,
                                                        recorded_sleep: RecordedSleep) -> None:
    fake_anthropic.script(Reply(events=[an.event("error", error={"type": "authentication_error",
                                                                 "message": f"x-api-key {PLAIN_KEY} is wrong"})]))
    _, exc = await drain(anthropic(fake_anthropic, recorded_sleep))
    assert isinstance(exc, StreamError) and PLAIN_KEY not in str(exc)


def test_every_arcana_error_masks_the_new_secret_shapes() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1\nabc\n-----END RSA PRIVATE KEY-----"
    text = f"AKIAIOSFODNN7EXAMPLE {jwt} {pem} postgres://bob:hunter2@db.local/x"
    message = str(ArcanaError(text))
    for secret in ("AKIAIOSFODNN7EXAMPLE", jwt, "MIIEpAIBAAKCAQEA1", "hunter2"):
        assert secret not in message
    assert "postgres://bob:[REDACTED]@db.local/x" in message


async def test_secret_header_never_reaches_the_trace_or_trace_show(fake_openai: FakeServer, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from arcana_jupyter.cli import main

    secret = "f3a9c2e7b1d04a5e8c6f1234"  # Azure-style api-key: no known shape
    fake_openai.script(Reply(status=400, json={"error": {"message": f"header api-key={secret} is not valid"}}))
    runtime = Runtime(providers={"azure": {"base_url": fake_openai.base_url, "headers": {"api-key": secret}}},
                      config=RuntimeConfig(model="azure:gpt-x", trace_dir=tmp_path, max_retries=0))
    async with runtime.chat() as chat:
        reply = await chat.send("hello", raise_errors=False)
        path = chat.trace_path
    assert fake_openai.requests[0].headers["api-key"] == secret  # it was sent...
    assert reply.status == "error" and secret not in str(reply.error)
    assert path is not None and secret not in path.read_text()  # ...and recorded nowhere
    assert "api-key=[REDACTED]" in path.read_text()
    assert main(["trace", "show", str(path)]) == 0 and main(["trace", "show", str(path), "--json"]) == 0
    out = capsys.readouterr()
    assert secret not in out.out + out.err and "[REDACTED]" in out.out


# -- defect 4: limits on bytes, line length, wall time and idle time ---------------------------------


async def test_keep_alive_comments_forever_hit_the_idle_limit(fake_openai: FakeServer,
                                                              recorded_sleep: RecordedSleep) -> None:
    frames = itertools.chain([sse(oa.chunk({"content": "Hel"}))], itertools.repeat(b": keep-alive\n\n"))
    fake_openai.script(Reply(frames=frames, frame_interval=0.1))
    started = time.monotonic()
    chunks, exc = await drain(openai(fake_openai, recorded_sleep))
    assert isinstance(exc, StreamError) and "stream_idle_seconds" in str(exc)
    assert [c.text for c in chunks] == ["Hel"]
    assert time.monotonic() - started < 5


async def test_a_slow_endless_stream_hits_the_wall_time_limit(fake_openai: FakeServer,
                                                              recorded_sleep: RecordedSleep) -> None:
    fake_openai.script(Reply(frames=itertools.repeat(sse(oa.chunk({"content": "."}))), frame_interval=0.1))
    started = time.monotonic()
    chunks, exc = await drain(openai(fake_openai, recorded_sleep))
    assert isinstance(exc, StreamError) and "max_stream_seconds" in str(exc)
    assert 5 < len(chunks) < 40 and time.monotonic() - started < 6


async def test_an_endless_fast_stream_hits_the_reply_size_limit(fake_openai: FakeServer,
                                                                recorded_sleep: RecordedSleep) -> None:
    fake_openai.script(Reply(frames=itertools.repeat(sse(oa.chunk({"content": "x" * 1000})))))
    chunks, exc = await drain(openai(fake_openai, recorded_sleep))
    assert isinstance(exc, StreamError) and "max_reply_bytes" in str(exc)
    assert 0 < sum(len(c.text) for c in chunks) <= LIMITS.max_reply_bytes


async def test_a_line_without_newline_hits_the_line_limit(fake_openai: FakeServer,
                                                          recorded_sleep: RecordedSleep) -> None:
    fake_openai.script(Reply(frames=itertools.chain([b"data: "], itertools.repeat(b"x" * 4096))))
    _, exc = await drain(openai(fake_openai, recorded_sleep))
    assert isinstance(exc, StreamError) and "max_sse_line_bytes" in str(exc)


async def test_an_oversized_json_answer_hits_the_reply_size_limit(fake_openai: FakeServer,
                                                                  recorded_sleep: RecordedSleep) -> None:
    fake_openai.script(Reply(json=oa.completion("x" * (LIMITS.max_reply_bytes + 10)).json))
    with pytest.raises(StreamError, match="max_reply_bytes"):
        await openai(fake_openai, recorded_sleep).complete(request())


async def test_limits_are_runtime_settings_and_the_partial_reply_is_recorded_once(
        fake_openai: FakeServer, tmp_path: Path) -> None:
    fake_openai.script(Reply(frames=itertools.repeat(sse(oa.chunk({"content": "y" * 1000})))))
    config = RuntimeConfig(model="openai:fake-gpt", trace_dir=tmp_path, max_retries=0, max_reply_bytes=48_000,
                           max_sse_line_bytes=4096, max_stream_seconds=5, stream_idle_seconds=2)
    runtime = Runtime(providers={"openai": {"api_key": PATTERN_KEY, "base_url": fake_openai.base_url}}, config=config)
    async with runtime.chat() as chat:
        reply = await chat.send("go on forever", raise_errors=False)
        path = chat.trace_path
    assert reply.status == "error" and isinstance(reply.error, StreamError) and "max_reply_bytes" in str(reply.error)
    assert 0 < len(reply.text) <= 48_000 and set(reply.text) == {"y"}  # the partial reply is kept...
    assert path is not None
    events = [json.loads(line) for line in path.read_text().splitlines()]
    end = [e for e in events if e["event_type"] == "turn_end"][-1]["metadata"]
    error = [e for e in events if e["event_type"] == "error"][-1]["metadata"]
    assert end["reply"] == reply.text and end["status"] == "error"  # ...recorded in turn_end
    assert "received" not in error and error["received_chars"] == len(reply.text)  # ...and only there
    assert path.read_text().count("y" * 1000) == len(reply.text) // 1000


def test_limits_must_be_positive() -> None:
    from arcana_jupyter.exceptions import ConfigError

    with pytest.raises(ConfigError, match="max_reply_bytes"):
        StreamLimits(max_reply_bytes=0)
    assert StreamLimits() == StreamLimits(8 * 1024 * 1024, 1024 * 1024, 600.0, 120.0)
    defaults = RuntimeConfig()
    assert (defaults.max_reply_bytes, defaults.max_sse_line_bytes, defaults.max_stream_seconds,
            defaults.stream_idle_seconds) == (8 * 1024 * 1024, 1024 * 1024, 600.0, 120.0)


# -- defect 5: wrong-shaped (valid JSON) events become StreamError, nothing else ---------------------

_CALL = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": "{}"}}


def _delta(**delta: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta}]}


OPENAI_BAD: list[Any] = [
    _delta(tool_calls=[{"index": 0, "function": "x"}]),
    _delta(tool_calls="abc"),
    _delta(tool_calls=[5]),
    _delta(tool_calls=[{"index": 0, "id": 5, "function": {"name": "f"}}]),
    _delta(tool_calls=[{"index": 0, "function": {"name": 5}}]),
    _delta(tool_calls=[_CALL, {"index": 0, "function": {"name": ["g"]}}]),
    _delta(tool_calls=[{"index": 0, "function": {"name": "f", "arguments": 5}}]),
    _delta(content=5),
    _delta(content={"a": 1}),
    {"usage": {"prompt_tokens": "abc", "completion_tokens": [1]}},
    {"usage": "abc"},
    {"usage": {"prompt_tokens_details": 5, "prompt_cache_hit_tokens": "x"}},
    {"model": 5},
    {"id": [1]},
    {"choices": "abc"},
    {"choices": [{"index": 0, "delta": {}, "finish_reason": 5}]},
    {"choices": [{"index": 0, "delta": "abc"}]},
    {"choices": [None, 5, "x"]},
    {"error": "str"},
    [],
]


@pytest.mark.parametrize("bad", OPENAI_BAD, ids=[json.dumps(b)[:60] for b in OPENAI_BAD])
async def test_openai_wrong_shaped_events(fake_openai: FakeServer, recorded_sleep: RecordedSleep, bad: Any) -> None:
    fake_openai.script(Reply(events=[(None, oa.chunk({"content": "Hi"})), (None, bad),
                                     (None, oa.chunk(finish_reason="stop")), (None, "[DONE]")]))
    chunks, exc = await drain(openai(fake_openai, recorded_sleep))
    assert exc is None or type(exc) is StreamError, repr(exc)
    if exc is None:
        assert chunks[-1].response is not None
    else:
        assert "".join(c.text for c in chunks) == "Hi"


ANTHROPIC_BAD: list[tuple[str, Any]] = [
    an.event("content_block_start", index=0, content_block="x"),
    an.event("content_block_start", index=None, content_block={"type": "text"}),
    an.event("content_block_delta", index="abc", delta={"type": "text_delta", "text": "x"}),
    an.event("content_block_delta", index=0, delta=5),
    an.event("content_block_delta", index=0, delta={"type": "text_delta", "text": 5}),
    an.event("message_delta", delta={"stop_reason": "end_turn"}, usage="x"),
    an.event("message_delta", delta="x"),
    an.event("message_start", message="x"),
    an.event("error", error="str"),
    an.event("content_block_start", index=1, content_block={"type": "tool_use", "id": 5, "name": "f"}),
]


@pytest.mark.parametrize("bad", ANTHROPIC_BAD, ids=[json.dumps(b[1])[:60] for b in ANTHROPIC_BAD])
async def test_anthropic_wrong_shaped_events(fake_anthropic: FakeServer, recorded_sleep: RecordedSleep,
                                             bad: tuple[str, Any]) -> None:
    events = an.stream([{"type": "text", "text": "Hi"}])
    events.insert(-2, bad)
    fake_anthropic.script(Reply(events=events))
    _, exc = await drain(anthropic(fake_anthropic, recorded_sleep))
    assert exc is None or type(exc) is StreamError, repr(exc)


async def test_a_wrong_shaped_event_ends_the_turn_with_a_stream_error(fake_openai: FakeServer,
                                                                      tmp_path: Path) -> None:
    fake_openai.script(Reply(events=[(None, oa.chunk({"content": "partial "})), (None, OPENAI_BAD[0])]))
    runtime = Runtime(providers={"openai": {"api_key": PATTERN_KEY, "base_url": fake_openai.base_url}},
                      config=RuntimeConfig(model="openai:fake-gpt", trace_dir=tmp_path, max_retries=0))
    async with runtime.chat() as chat:
        reply = await chat.send("hi", raise_errors=False)
        path = chat.trace_path
    assert reply.status == "error" and type(reply.error) is StreamError and reply.text == "partial "
    assert path is not None
    errors = [json.loads(x)["metadata"] for x in path.read_text().splitlines() if '"event_type":"error"' in x]
    assert [e["type"] for e in errors] == ["StreamError"] and "malformed" in errors[0]["message"]
