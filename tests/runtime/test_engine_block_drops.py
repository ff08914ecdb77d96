"""The default mode's window gives way a block at a time (context/builder.py DROP_POLICIES): in a real
session the prompt's prefix survives the turns between drops, the policy is recorded with every
decision, and every turn rebuilds exactly from the trace."""

from __future__ import annotations

from pathlib import Path

from scripted_chat import Script, say

from arcana_jupyter.context.rebuild import rebuild_turn
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.reader import TraceReader

TURNS = 40


def user(i: int) -> str:
    return (f"Turn {i}: I grouped the weekly extract by region {i % 5} and plotted it; note that the seed for "
            f"team {i} is {1000 + i}. " + "The rolling mean looks smoother now. " * 3)


async def run(tmp_path: Path, engine: bool) -> tuple[str, list[dict]]:
    script = Script(*[say(f"Noted for team {i}. " + "Converting the date column first keeps it simple. " * 3)
                      for i in range(TURNS)])
    config = RuntimeConfig(trace_dir=tmp_path, context_engine=engine, total_window=4096, response_reserve=1024,
                           embeddings="off")
    decisions: list[dict] = []
    async with Runtime(config=config, provider=FunctionProvider(script)).chat() as chat:
        chat.subscribe(lambda e: decisions.append(e.metadata) if e.event_type == "context_decision" else None)
        for i in range(1, TURNS + 1):
            await chat.send(user(i))
        run_id = chat.run_id
    return run_id, decisions


def full(md: dict) -> bool:
    return md["decision"]["strategy"] != "passthrough"


async def test_the_default_mode_drops_in_blocks_and_classic_keeps_its_bands(tmp_path: Path) -> None:
    _, engine = await run(tmp_path / "engine", True)
    _, classic = await run(tmp_path / "classic", False)
    assert {md["builder"]["drop_policy"] for md in engine} == {"blocks"}
    assert {md["builder"]["drop_policy"] for md in classic} == {"bands"}
    # the relevant block ranks as classic mode's builder does (recorded, so a rebuild ranks the same way)
    assert {md["builder"]["block_ranking"] for md in engine} == {"fused"}
    filled = [md for md in engine if full(md)]
    assert len(filled) > 10
    dropped = {d["reason"] for md in filled for d in md["decision"]["decisions"] if d["outcome"] == "dropped"}
    assert dropped <= {"block_dropped"}
    # the prefix breaks only where the window gave way: far fewer calls than the turns since it filled
    broken = [md for md in filled if md["report"]["prefix_share"] is not None and md["report"]["prefix_share"] < 0.2]
    assert len(broken) <= len(filled) // 4


async def test_every_turn_of_a_filling_default_mode_session_rebuilds_exactly(tmp_path: Path) -> None:
    run_id, decisions = await run(tmp_path, True)
    reader = TraceReader(tmp_path)
    first_full = next(md for md in decisions if full(md))
    turns = sorted({1, TURNS, *range(first_full["decision"]["turn"], TURNS, 3)})
    for turn in turns:
        result = rebuild_turn(reader, run_id, turn)
        assert result.verified, (turn, result.notes)
        assert result.diff == []
