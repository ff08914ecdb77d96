"""The shared HTTP layer's pure parts: Retry-After, SSE parsing, error bodies, secret scrubbing."""

from __future__ import annotations

import email.utils
import random

from arcana_jupyter.exceptions import AuthenticationError
from arcana_jupyter.providers.connection import (
    HTTPConnection,
    RetryPolicy,
    error_message_from_body,
    iter_sse,
    retry_after_seconds,
)


def test_retry_after_in_seconds_milliseconds_and_http_dates():
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "0.5"}) == 0.5
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 42, usegmt=True)
    assert retry_after_seconds({"retry-after": date}, now=now) == 42.0
    assert retry_after_seconds({"retry-after": email.utils.formatdate(now - 5, usegmt=True)}, now=now) == 0.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_is_exponential_capped_and_jittered():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, rng=random.Random(1))
    delays = [policy.backoff(n) for n in range(6)]
    for n, delay in enumerate(delays):
        raw = min(5.0, 2.0**n)
        assert raw * 0.5 <= delay < raw
    assert len(set(delays)) == len(delays)


async def _lines(text: str):
    for line in text.split("\n"):
        yield line


async def test_sse_parser_handles_events_comments_multiline_data_and_crlf():
    stream = (": keep-alive\n\nevent: message_start\ndata: {\"a\": 1}\n\n"
              "data: line one\ndata: line two\r\n\r\ndata: [DONE]")
    events = [e async for e in iter_sse(_lines(stream))]
    assert [(e.event, e.data) for e in events] == [
        ("message_start", '{"a": 1}'), ("", "line one\nline two"), ("", "[DONE]")]


def test_error_messages_are_found_in_every_common_shape():
    assert error_message_from_body('{"error": {"message": "bad key", "type": "invalid_api_key"}}') == \
        "bad key (invalid_api_key)"
    assert error_message_from_body(
        '{"type": "error", "error": {"type": "not_found_error", "message": "model: x"}}') == \
        "model: x (not_found_error)"
    assert error_message_from_body('{"detail": [{"msg": "field required"}, {"msg": "too long"}]}') == \
        "field required; too long"
    assert error_message_from_body('{"error": "model \\"llama9\\" not found"}') == 'model "llama9" not found'
    assert error_message_from_body("Bad Gateway") == "Bad Gateway"
    assert error_message_from_body("") == ""


async def test_scrub_masks_the_configured_key_and_key_shaped_strings():
    secret = "my-very-private-token-123"
    conn = HTTPConnection(provider="x", base_url="http://127.0.0.1:1/v1", secrets=[secret],
                          headers={"Authorization": f"Bearer {secret}"})
    text = conn.scrub(f"got {secret} and sk-proj-abcdefgh12345678 and Bearer abcdefghijklmnop")
    assert secret not in text and "sk-proj" not in text and "abcdefghijklmnop" not in text
    assert secret not in repr(conn)
    error = AuthenticationError(conn.scrub(f"rejected {secret}"), provider="x", status=401)
    assert secret not in repr(error) and secret not in str(error)
    await conn.aclose()
