"""A scripted model for runtime tests, built on the package's FunctionProvider (imported by tests/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig


def say(text: str, usage: tuple[int, int] = (10, 5)) -> LLMResponse:
    return LLMResponse(message=Message(role="assistant", content=text), finish_reason="stop",
                       usage=Usage(input_tokens=usage[0], output_tokens=usage[1]))


def call(name: str, args: dict[str, Any] | str, call_id: str = "c1") -> LLMResponse:
    raw = args if isinstance(args, str) else json.dumps(args)
    return LLMResponse(message=Message(role="assistant", content="",
                                       tool_calls=(ToolCall(id=call_id, name=name, arguments=raw),)),
                       finish_reason="tool_calls", usage=Usage(input_tokens=10, output_tokens=5))


class Script:
    """Plays a list of responses (or callables of the request) in order and keeps every request."""

    def __init__(self, *steps: LLMResponse | Callable[[LLMRequest], LLMResponse]) -> None:
        self.steps = list(steps)
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        if not self.steps:
            return say("(script finished)")
        step = self.steps.pop(0)
        return step(request) if callable(step) else step


@pytest.fixture
def make_runtime(tmp_path: Path) -> Callable[..., tuple[Runtime, Script]]:
    def make(*steps: Any, tools: tuple = (), **config: Any) -> tuple[Runtime, Script]:
        script = Script(*steps)
        config.setdefault("context_engine", False)  # classic unless a test asks: keeps prompts minimal
        cfg = RuntimeConfig(trace_dir=tmp_path / "traces", **config)
        return Runtime(config=cfg, tools=tools, provider=FunctionProvider(script)), script

    return make


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
