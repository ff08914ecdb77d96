"""Messages: dict round trips, the cached canonical key, and the request digest's definition."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arcana_jupyter.messages import Message, ToolCall, ToolSpec, as_message, digest, request_digest


def test_openai_dicts_and_records_round_trip() -> None:
    wire = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}
    m = as_message(wire)
    assert m.content == "" and m.tool_calls == (ToolCall(id="c1", name="f", arguments='{"a":1}'),)
    assert as_message(m.record()) == m
    with pytest.raises(ValueError, match="no 'role'"):
        as_message({"content": "x"})
    with pytest.raises(TypeError):
        as_message("hello")  # type: ignore[arg-type]


def test_cached_key_never_leaks_into_copies() -> None:
    m = Message(role="user", content="one")
    assert m.content_key() == '{"content":"one","role":"user"}'
    changed = m.replace(content="two")
    assert changed.content_key() == '{"content":"two","role":"user"}'
    assert changed.model_copy(update={"role": "assistant"}).content_key() == '{"content":"two","role":"assistant"}'
    assert m == Message(role="user", content="one")  # the cache does not affect equality


texts = st.text(max_size=40)


@given(st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]), texts), max_size=6), texts)
def test_request_digest_is_the_digest_of_the_request_dict(pairs, model) -> None:
    messages = [Message(role=r, content=c) for r, c in pairs]  # type: ignore[arg-type]
    tools = [ToolSpec(name="f", description="d",
                      parameters={"type": "object", "properties": {"x": {"type": "string"}}})]
    expected = digest({"model": model, "messages": [m.wire() for m in messages], "tools": [t.wire() for t in tools]})
    assert request_digest(messages, tools, model) == expected
