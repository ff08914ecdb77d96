"""What a real session writes fits the schema: every event of a scripted run with tools, primitives
(recall, pin), the adaptive engine and memory validates strictly against its model, with no key the
model does not know."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import Script, call, say

from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.schema import EVENT_ADAPTER
from arcana_jupyter.schema.events import EVENT_MODELS
from arcana_jupyter.trace import TraceReader


def area(width: float, height: float) -> float:
    """Area of a rectangle."""
    return width * height


def _record_run(tmp_path: Path, bundles: list[dict[str, Any]] | None = None, **cfg: Any) -> Path:
    script = Script(
        call("area", {"width": 2, "height": 3}), say("6"),
        call("pin", {"content": "the north region grew 12%", "label": "growth"}), say("pinned"),
        call("recall", {"turn": 1}), say("recalled"),
        call("create_task", {"title": "Clean the sales data", "description": "drop null regions"}), say("created"),
        call("remember", {"kind": "fact", "content": "The warehouse table is sales_v2"}), say("noted"),
        call("recall_memory", {"query": "warehouse table"}), say("sales_v2"),
        call("unpin", {"pin_id": "p_1"}), say("unpinned"),
    )
    config = RuntimeConfig(
        trace_dir=tmp_path / "traces", memory=True, memory_path=tmp_path / "mem.sqlite3", memory_tools="on",
        project_dir=tmp_path / "project", context_engine=True, cognitive_primitives=["pin", "recall"],
        trace_include_prompt_snapshots=True, **cfg,
    )
    runtime = Runtime(config=config, tools=[area], provider=FunctionProvider(script))
    with runtime.chat() as chat:
        for text in ("How big?", "Pin the growth figure", "What did I ask first?", "Start a task",
                     "Remember the table", "Which table?", "Unpin it", "Thanks"):
            chat.send_sync(text)
            if bundles is not None:
                bundles.append(chat.turn_bundle())
        chat.pin("a pin from the widget", label="user")
        path = chat.trace_path
    assert path is not None
    return path


def _check(path: Path) -> set[str]:
    seen: set[str] = set()
    problems: list[str] = []
    for line_no, line in enumerate(path.read_text().splitlines(), 1):
        obj = json.loads(line)
        event = EVENT_ADAPTER.validate_python(obj, strict=True)  # raises with the field that does not fit
        assert type(event) is EVENT_MODELS[obj["event_type"]]
        unknown = set(event.metadata.model_extra or {})
        if unknown:
            problems.append(f"line {line_no} ({obj['event_type']}): keys the model does not declare: {unknown}")
        seen.add(obj["event_type"])
    assert not problems, "\n".join(problems)
    return seen


def test_every_event_of_a_real_session_fits_its_model(tmp_path: Path) -> None:
    path = _record_run(tmp_path)
    seen = _check(path)
    assert {"run_start", "turn_start", "user_message", "context_decision", "prompt_snapshot", "prompt_sent", "llm_call",
            "tool_call",
            "cognitive_primitive", "state_change", "context_action", "memory_read", "memory_write", "turn_end",
            "run_end"} <= seen
    reader = TraceReader(path.parent, shared=False, strict=True)
    run_id = path.stem
    assert reader.warnings_for(run_id) == []
    assert reader.replay_prompt(run_id, 2) is not None


def test_a_content_none_session_fits_too(tmp_path: Path) -> None:
    _check(_record_run(tmp_path, trace_content="none"))


def test_the_turn_bundles_of_a_real_session_fit_the_bundle_model(tmp_path: Path) -> None:
    from arcana_jupyter.runtime.bundle import bundle_from_events, compact_bundle
    from arcana_jupyter.schema.bundle import TurnBundle

    live: list[dict[str, Any]] = []
    path = _record_run(tmp_path, live)
    reader = TraceReader(path.parent, shared=False)
    from_trace = [bundle_from_events(reader.events(path.stem, turn=b["turn"]), run_id=path.stem, agent="main",
                                     turn=b["turn"], model=b["model"], trace_path=None) for b in live]
    for bundle in [*live, *from_trace, *map(compact_bundle, live)]:
        model = TurnBundle.model_validate(bundle, strict=True)
        assert not model.model_extra, model.model_extra
        assert model.steps and all(s.budget is not None and s.counting is not None for s in model.steps)
    assert any(b["tool_calls"] for b in live) and any(b["primitives"] for b in live)
    assert any(b["memories"] for b in live) and any(b["state_changes"] for b in live)


def test_an_exported_session_fits_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With OpenTelemetry export on (to a closed port: the turns do not wait), ``run_end.otel_export``
    is a declared key with the right types."""
    from servers.otlp_receiver import closed_port

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    path = _record_run(tmp_path, otel=True)
    _check(path)
    end = [json.loads(line) for line in path.read_text().splitlines()][-1]
    assert end["event_type"] == "run_end" and end["metadata"]["otel_export"]["spans"] > 0
