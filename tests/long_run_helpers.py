"""What the long-run trace tests share: an instant scripted model that calls ``lookup`` when asked,
and the decision encoder the runtime used before chained decisions (to record an old-format trace)."""

from __future__ import annotations

from typing import Any

from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.trace.decision_delta import DeltaEncoder

REPLY = "The figures moved as expected across the regions this quarter. " * 3


def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def answer(request: LLMRequest) -> LLMResponse:
    last = request.messages[-1]
    usage = Usage(input_tokens=100, output_tokens=60)
    if last.role == "user" and "lookup" in (last.content or ""):
        call = ToolCall(id=f"c{len(request.messages)}", name="lookup", arguments='{"key": "k"}')
        return LLMResponse(message=Message(role="assistant", tool_calls=(call,)), finish_reason="tool_calls",
                           usage=usage)
    return LLMResponse(message=Message(role="assistant", content=REPLY), usage=usage)


class OldEncoder:
    """The encoder the runtime used before chained decisions: keyframes and deltas against them
    (``DeltaEncoder``), everything else written in full — so a test records an old-format trace."""

    def __init__(self) -> None:
        self.delta = DeltaEncoder()
        self._pending: tuple[dict[str, Any], bool] | None = None

    def pack(self, metadata: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
        decision = {**metadata["decision"], "decisions": rows}
        packed, keyframe = self.delta.pack(decision)
        self._pending = (decision, keyframe)
        return {**metadata, "decision": packed}

    def written(self, event_id: str) -> None:
        assert self._pending is not None
        decision, keyframe = self._pending
        if keyframe:
            self.delta.keyframe_written(event_id, decision)
