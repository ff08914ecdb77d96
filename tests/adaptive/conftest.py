from __future__ import annotations

from typing import Any

import pytest

from arcana_jupyter.adaptive import AdaptiveEngine


class Recorder:
    """Collects emitted events in the trace envelope's shape (event_type, turn, metadata)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, event_type: str, metadata: dict[str, Any]) -> None:
        self.events.append({"event_type": event_type, "turn": metadata.get("turn"), "metadata": metadata})

    def of(self, event_type: str, **match: Any) -> list[dict[str, Any]]:
        return [
            e["metadata"] for e in self.events
            if e["event_type"] == event_type and all(e["metadata"].get(k) == v for k, v in match.items())
        ]


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture
def engine(rec: Recorder) -> AdaptiveEngine:
    return AdaptiveEngine(emit=rec)


def quiet_turn(engine: AdaptiveEngine, turn: int, text: str = "ok then") -> None:
    """A turn whose input mentions nothing in working memory."""
    engine.begin_turn(turn, text)
    engine.end_turn(turn, [{"role": "user", "content": text}, {"role": "assistant", "content": "Sure."}])
