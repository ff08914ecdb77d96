"""FunctionProvider(keep_requests=n): a long scripted run holds the latest n requests, not every prompt."""

from __future__ import annotations

import pytest

from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMRequest
from arcana_jupyter.providers.function import FunctionProvider


def request(text: str) -> LLMRequest:
    return LLMRequest(model="function", messages=[Message(role="user", content=text)])


async def test_keep_requests_holds_the_latest_ones() -> None:
    every, latest = FunctionProvider(lambda r: "ok"), FunctionProvider(lambda r: "ok", keep_requests=2)
    for i in range(5):
        await every.complete(request(f"q{i}"))
        chunks = [chunk async for chunk in latest.stream(request(f"q{i}"))]
        assert chunks[-1].response is not None  # the stream ran to its end
    assert [r.messages[-1].content for r in every.requests] == [f"q{i}" for i in range(5)]
    assert [r.messages[-1].content for r in latest.requests] == ["q3", "q4"]


def test_keep_requests_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="keep_requests"):
        FunctionProvider(lambda r: "ok", keep_requests=-1)
