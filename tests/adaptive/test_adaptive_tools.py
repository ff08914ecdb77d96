"""Tool specs and handlers: validation, structured errors (never exceptions), one event per call."""

from __future__ import annotations

import logging
import warnings
from typing import Any

import pytest

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.actions import ADAPTIVE_TOOL_NAMES
from arcana_jupyter.adaptive.engine import engine_or_none
from arcana_jupyter.adaptive.tools import adaptive_tools, handle
from arcana_jupyter.messages import ToolSpec
from arcana_jupyter.runtime.config import RuntimeConfig

from .conftest import Recorder

EXPECTED = ["create_task", "update_task", "decide", "add_constraint", "note", "hydrate", "retract_task", "focus",
            "search_turn_events", "retrieve_artifact"]


def test_specs_cover_every_tool_with_a_json_schema() -> None:
    tools = adaptive_tools()
    assert [t.name for t in tools] == EXPECTED and set(EXPECTED) == ADAPTIVE_TOOL_NAMES
    for t in tools:
        assert isinstance(t.spec, ToolSpec) and t.spec.description
        schema = t.spec.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert set(schema["properties"]) == set(t.args_model.model_fields), t.name


def test_happy_paths_return_structured_results(engine: AdaptiveEngine) -> None:
    engine.begin_turn(1, "x")
    assert handle(engine, "create_task", 1, {"title": "T", "description": "D"})["id"] == "s_1"
    assert handle(engine, "decide", 1, {"decision": "Use X", "rationale": "fast"})["id"] == "s_2"
    assert handle(engine, "add_constraint", 1, {"constraint": "No network"})["id"] == "s_3"
    assert handle(engine, "note", 1, {"text": "a fact", "title": "Fact"})["id"] == "s_4"
    u = handle(engine, "update_task", 1, {"id": "s_1", "title": "T2", "status": "done"})
    assert u == {"ok": True, "id": "s_1", "status": "done", "summary": "T2", "tier": "active"}
    obj = engine.get("s_1")
    assert obj is not None and obj.payload == "D" and obj.summary == "T2"
    assert handle(engine, "focus", 1, {"id": "s_1"})["focused"] is True
    assert handle(engine, "hydrate", 1, {"id": "s_2"})["text"].startswith("[s_2 decision] Use X")
    assert handle(engine, "search_turn_events", 1, {"query": "fact"})["results"][0]["id"] == "s_4"
    assert handle(engine, "retract_task", 1, {"id": "s_4"})["retracted"] is True


BAD: list[tuple[str, Any, str]] = [
    ("create_task", {}, "invalid_arguments"),
    ("create_task", {"title": ""}, "invalid_arguments"),
    ("create_task", {"title": "x" * 201}, "invalid_arguments"),
    ("create_task", {"title": "t", "status": "maybe"}, "invalid_arguments"),
    ("create_task", {"title": "t", "priority": 1}, "invalid_arguments"),
    ("create_task", {"title": "t", "description": "x" * 5000}, "too_long"),
    ("create_task", "not an object", "invalid_arguments"),
    ("create_task", None, "invalid_arguments"),
    ("update_task", {"id": "s_1"}, "invalid_arguments"),
    ("update_task", {"id": "s_2", "status": "done"}, "wrong_kind"),
    ("update_task", {"id": "s_404", "status": "done"}, "not_found"),
    ("decide", {"rationale": "why"}, "invalid_arguments"),
    ("decide", {"decision": 3}, "invalid_arguments"),
    ("add_constraint", {"constraint": ["a"]}, "invalid_arguments"),
    ("note", {"title": "no text"}, "invalid_arguments"),
    ("hydrate", {"id": 7}, "invalid_arguments"),
    ("hydrate", {"id": "banana"}, "not_found"),
    ("retract_task", {}, "invalid_arguments"),
    ("focus", {"id": "s_2"}, "wrong_kind"),
    ("search_turn_events", {"query": ""}, "invalid_arguments"),
    ("search_turn_events", {"query": "x", "limit": 0}, "invalid_arguments"),
    ("retrieve_artifact", {"id": "a_1", "limit": "lots"}, "invalid_arguments"),
    ("no_such_tool", {}, "unknown_tool"),
]


@pytest.mark.parametrize(("name", "args", "error"), BAD)
def test_wrong_arguments_are_structured_errors(name: str, args: Any, error: str) -> None:
    rec = Recorder()
    engine = AdaptiveEngine(emit=rec)
    engine.begin_turn(1, "x")
    engine.create_task("A task", turn=1)  # s_1
    engine.decide("A decision", turn=1)  # s_2
    before = engine.snapshot()
    n = len(rec.events)
    result = handle(engine, name, 1, args)
    assert result["ok"] is False and result["error"] == error
    assert isinstance(result["message"], str) and result["message"]
    assert isinstance(result["hint"], str) and result["hint"]
    assert engine.snapshot()["objects"] == before["objects"]  # nothing changed
    [event] = rec.events[n:]
    assert event["event_type"] == "context_action" and event["metadata"]["result"] == result
    assert event["metadata"]["action"] == ("retract" if name == "retract_task" else name)


def test_validation_messages_say_what_to_do() -> None:
    engine = AdaptiveEngine()
    r = handle(engine, "create_task", 1, {"titel": "typo"})
    assert "titel" in r["message"] and "accepted arguments: title, description, status" in r["hint"]
    assert "required: title" in r["hint"]


def test_a_handler_bug_is_a_structured_error(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = AdaptiveEngine()

    def boom(*a: Any, **k: Any) -> dict[str, Any]:
        raise RuntimeError("kaput")

    monkeypatch.setattr(engine, "note", boom)
    r = handle(engine, "note", 1, {"text": "x"})
    assert r["ok"] is False and r["error"] == "internal_error" and "kaput" in r["message"]


def test_engine_or_none_engine_mode() -> None:
    engine, reason = engine_or_none(RuntimeConfig(idle_soft_after_turns=2, idle_hard_after_turns=5))
    assert isinstance(engine, AdaptiveEngine) and reason is None
    assert engine.config.idle_soft_after_turns == 2 and engine.config.idle_hard_after_turns == 5


def test_engine_or_none_classic_mode() -> None:
    engine, reason = engine_or_none(RuntimeConfig(context_engine=False))
    assert engine is None and reason is not None and "context_engine is off" in reason
    assert engine_or_none({"context_engine": False})[0] is None


def test_engine_or_none_falls_back_with_a_logged_warning(caplog: pytest.LogCaptureFixture) -> None:
    # RuntimeConfig refuses these knobs itself (tests/runtime/test_config_groups.py); a mapping still
    # reaches the engine unchecked, and its failure must fall back with a reason
    bad = {"idle_soft_after_turns": 5, "idle_hard_after_turns": 5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level(logging.WARNING, logger="arcana_jupyter.adaptive.engine"):
            engine, reason = engine_or_none(bad)
    assert engine is None and reason is not None
    assert reason.startswith("classic mode: the adaptive context engine failed to initialise (ValidationError")
    assert "idle_hard_after_turns (5) must be greater than idle_soft_after_turns (5)" in reason
    assert [r.levelname for r in caplog.records] == ["WARNING"] and reason in caplog.records[0].getMessage()
