"""A run recorded before standing instructions (issue 39) goes on as it was recorded: resumed, it grows no
``standing`` section and keeps the checkpoint's cue-word constraints; replayed, every prompt is the
recorded one, byte for byte (a strict replay raises on the first difference). New runs record
``standing_instructions`` in their ``run_start`` and have it on.

The fixture ``tests/fixtures/traces/pre_standing.jsonl`` was recorded by the code before issue 39
(``make_pre_standing.py`` beside it says how): its ``run_start`` config has no ``standing_instructions``."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from arcana_jupyter.exceptions import ReplayDivergence
from arcana_jupyter.providers.base import LLMRequest, LLMResponse
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime import resume as resume_module
from arcana_jupyter.runtime.resume import as_recorded, recorded_standing

FIXTURES = Path(__file__).parents[1] / "fixtures" / "traces"


def recording() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_pre_standing", FIXTURES / "make_pre_standing.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REC = recording()


def traces(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(FIXTURES / "pre_standing.jsonl", folder / f"{REC.RUN_ID}.jsonl")
    return folder


def run_starts(folder: Path, run_id: str) -> list[dict]:  # type: ignore[type-arg]
    lines = (folder / f"{run_id}.jsonl").read_text(encoding="utf-8").splitlines()
    return [e["metadata"] for e in map(json.loads, lines) if e["event_type"] == "run_start"]


class Model:
    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def __call__(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        return REC.reply(request)


def test_the_fixture_is_a_run_from_before_standing_instructions(tmp_path: Path) -> None:
    [start] = run_starts(traces(tmp_path), REC.RUN_ID)
    assert "standing_instructions" not in start["config"] and "standing_share" not in start["config"]
    assert recorded_standing(start["config"]) is False
    assert recorded_standing({**start["config"], "standing_instructions": True}) is True
    assert recorded_standing(None) is None
    on = RuntimeConfig()
    assert on.standing_instructions is True and as_recorded(on, start["config"]).standing_instructions is False


async def test_resuming_an_old_run_grows_no_standing_section(tmp_path: Path) -> None:
    folder = traces(tmp_path)
    model = Model()
    cfg = RuntimeConfig(trace_dir=folder, **REC.SETTINGS)  # standing_instructions: on, as for any new run
    async with Runtime(config=cfg, provider=FunctionProvider(model)).chat(resume=REC.RUN_ID) as chat:
        assert chat.config.standing_instructions is False and chat.engine is not None
        for text in REC.RESUMED:
            reply = await chat.send(text)
        assert chat.engine.standing() == []
        assert not [d for d in reply.decision.decisions if d.source == "section" and d.section == "standing"]
        sent = "\n".join(m.content or "" for r in model.requests for m in r.messages)
        assert "Standing instructions" not in sent
        # the turn summaries keep the user's cue-word constraints, as before
        summary = chat.engine.turn_summaries[len(REC.TURNS) + 1]
        assert [c.text for c in summary.constraints] == [REC.RESUMED[0]]
    [_, resumed] = run_starts(folder, REC.RUN_ID)
    assert resumed["resumed_from"] == REC.RUN_ID and resumed["config"]["standing_instructions"] is False


async def test_a_new_run_has_them_and_records_the_setting(tmp_path: Path) -> None:
    model = Model()
    cfg = RuntimeConfig(trace_dir=tmp_path / "traces", **REC.SETTINGS)
    async with Runtime(config=cfg, provider=FunctionProvider(model)).chat(run_id="r_new") as chat:
        await chat.send(REC.RESUMED[0])
        assert [o.payload for o in chat.engine.standing()] == [REC.RESUMED[0]]
    [start] = run_starts(tmp_path / "traces", "r_new")
    assert start["config"]["standing_instructions"] is True


async def test_replaying_an_old_run_reproduces_every_prompt(tmp_path: Path) -> None:
    folder = traces(tmp_path)
    cfg = RuntimeConfig(trace_dir=folder, model=f"replay:{REC.RUN_ID}", **REC.SETTINGS)
    async with Runtime(config=cfg).chat(run_id="r_replayed") as chat:
        assert chat.config.standing_instructions is False
        for text in REC.TURNS:  # strict: the first request that differs from the recorded one raises
            reply = await chat.send(text)
        assert reply.text == REC.REPLY
    assert run_starts(folder, "r_replayed")[0]["config"]["standing_instructions"] is False


async def test_without_the_gate_the_replay_would_differ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the same replay with today's behaviour (the gate bypassed) does not reproduce the run."""
    monkeypatch.setattr(resume_module, "recorded_standing", lambda config: None)
    folder = traces(tmp_path)
    cfg = RuntimeConfig(trace_dir=folder, model=f"replay:{REC.RUN_ID}", **REC.SETTINGS)
    with pytest.raises(ReplayDivergence):
        async with Runtime(config=cfg).chat(run_id="r_today") as chat:
            assert chat.config.standing_instructions is True
            for text in REC.TURNS:
                await chat.send(text, raise_errors=True)


def test_a_run_goes_on_with_the_standing_share_it_was_recorded_with() -> None:
    cfg = RuntimeConfig()
    assert cfg.standing_share == 0.15
    assert as_recorded(cfg, {"standing_instructions": True, "standing_share": 0.1}).standing_share == 0.1
    assert as_recorded(cfg, {"standing_instructions": True}).standing_share == 0.15  # not recorded: as configured
    for junk in ("0.1", True, 0, 0.9, None):  # never a value the config would refuse
        assert as_recorded(cfg, {"standing_instructions": True, "standing_share": junk}).standing_share == 0.15
    assert as_recorded(cfg, {"standing_instructions": True, "standing_share": 0.15}) is cfg
