"""A user tool named like one of the runtime's tools is refused: the request never carries a name twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scripted_chat import say

from arcana_jupyter.exceptions import ConfigError


def pin(content: str) -> str:
    """The user's own pin."""
    return f"pinned {content}"


def remember(text: str) -> str:
    """The user's own remember."""
    return text


def test_a_user_tool_named_like_an_enabled_primitive_is_refused(make_runtime: Any, tmp_path: Path) -> None:
    runtime, script = make_runtime(say("x"), tools=(pin,), cognitive_primitives=["pin"])
    with pytest.raises(ConfigError) as info:
        runtime.chat(run_id="r_20260101_000000_bbbbbb")
    message = str(info.value)
    assert "your tool 'pin'" in message and "cognitive primitive 'pin'" in message and "Rename" in message
    assert script.requests == []
    # nothing holds the run: the same id opens once the clash is gone
    runtime.config = runtime.config.model_copy(update={"cognitive_primitives": []})
    runtime.chat(run_id="r_20260101_000000_bbbbbb").close()


def test_a_user_tool_named_like_a_memory_tool_is_refused(make_runtime: Any, tmp_path: Path) -> None:
    runtime, _ = make_runtime(say("x"), tools=(remember,), memory=True, memory_path=tmp_path / "m.sqlite3",
                              memory_tools="on")
    with pytest.raises(ConfigError, match="your tool 'remember' and the runtime's memory tool 'remember'"):
        runtime.chat()


async def test_add_tool_refuses_a_taken_name_and_the_request_has_unique_names(make_runtime: Any) -> None:
    runtime, script = make_runtime(say("x"), cognitive_primitives=["pin"])
    async with runtime.chat() as chat:
        with pytest.raises(ConfigError, match="your tool 'pin'"):
            chat.add_tool(pin)
        await chat.send("hi")
    names = [t.name for t in script.requests[0].tools]
    assert names.count("pin") == 1 and len(names) == len(set(names))


async def test_without_the_primitive_the_user_tool_is_offered_once(make_runtime: Any) -> None:
    runtime, script = make_runtime(say("x"), tools=(pin,))
    async with runtime.chat() as chat:
        await chat.send("hi")
    names = [t.name for t in script.requests[0].tools]
    assert names == ["pin"]
