"""What keeps a long session's overhead per turn down must not change what it decides: engine mode's
probe build (context/builder.py ``abuild(probe=True)``) says which turns are lost exactly as the full
build would, through history edits, pins and tool turns; and runtime/gc_policy.py freezes the heap of
long sessions only, frees frozen garbage cycles when it thaws, and stays out of short sessions."""

from __future__ import annotations

import gc
import importlib
import weakref
from pathlib import Path
from typing import Any

import pytest

from arcana_jupyter.context.bands import lost_turns
from arcana_jupyter.context.builder import WorkingSetBuilder
from arcana_jupyter.context.decisions import TokenBudget
from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig, gc_policy
from arcana_jupyter.runtime.working_set import cover_room, session_builder
from arcana_jupyter.tokens import TokenCounter

LOST_KEYS = ("index", "turn", "source", "outcome", "fidelity", "recalled", "token_count_before",
             "token_count_after")
"""What lost_turns and cover_room read of a row: a probe's rows must hold the full build's."""


def history(turns: int) -> list[Message]:
    out = [Message(role="system", content="You are a careful analyst.")]
    for t in range(1, turns + 1):
        out.append(Message(role="user", content=f"Turn {t}: region {t % 7} sold {100 + t} units; "
                           + "the weekly extract was grouped by store. " * 3, turn=t))
        out.append(Message(role="assistant", content=f"Noted turn {t}. " + "Converting dates first. " * 4, turn=t))
    return out


def builder(window: int = 2048) -> WorkingSetBuilder:
    config = RuntimeConfig(total_window=window, response_reserve=512, embeddings="off")
    async def no_summary(messages: list[Message]) -> str:
        raise AssertionError("engine mode does not summarise")

    b = session_builder(config, TokenBudget(total_window=window, response_reserve=512), TokenCounter("gpt-4o"),
                        no_summary, None, None)
    b.summarizer = None  # as the session sets it in engine mode
    return b


def lost_view(result: Any) -> list[tuple[Any, ...]]:
    return [tuple(getattr(d, k) for k in LOST_KEYS) for d in result.decision.decisions]


async def both(b: WorkingSetBuilder, hist: list[Message], turn: int) -> tuple[Any, Any]:
    probe = await b.abuild(hist, None, turn=turn, probe=True)
    full = await b.abuild(hist, None, turn=turn)
    return probe, full


async def test_a_probe_says_what_the_full_build_says_of_lost_turns_even_after_the_history_is_edited() -> None:
    b = builder()
    hist = history(60)
    probe, full = await both(b, hist, 60)
    assert probe.probe and not full.probe
    assert lost_turns(probe.decision) == lost_turns(full.decision) != []
    assert lost_view(probe) == lost_view(full)
    wanted = lost_turns(full.decision)
    assert cover_room("blocks", wanted, probe.decision, 1536) == cover_room("blocks", wanted, full.decision, 1536)
    # the probe's dropped rows carry no score; the full build's do
    dropped = [i for i, d in enumerate(probe.decision.decisions) if d.outcome == "dropped"]
    assert dropped and all(probe.decision.decisions[i].relevance_score is None for i in dropped)
    assert all(full.decision.decisions[i].relevance_score is not None for i in dropped)

    # an early message edited (a new list, as a resumed or rewritten transcript gives the builder): the
    # probe's rows are the edited history's, not templates of the old one
    edited = list(hist)
    edited[3] = Message(role="user", content="Turn 2, restated: " + "a much longer statement of it. " * 40, turn=2)
    probe, full = await both(b, edited, 60)
    assert lost_view(probe) == lost_view(full)
    assert probe.decision.decisions[3].token_count_before == full.decision.decisions[3].token_count_before
    assert probe.decision.decisions[3].token_count_before > 200

    # a shorter history (a turn taken back): again the same
    probe, full = await both(b, hist[:81], 40)
    assert lost_view(probe) == lost_view(full)


async def test_a_probe_of_a_history_that_fits_is_the_full_build() -> None:
    probe = await builder(16384).abuild(history(5), None, turn=5, probe=True)
    assert not probe.probe
    assert lost_turns(probe.decision) == []


def answer(request: LLMRequest) -> LLMResponse:
    last = request.messages[-1]
    usage = Usage(input_tokens=100, output_tokens=40)
    if last.role == "user" and "lookup" in last.content.rstrip().rsplit("\n", 1)[-1]:
        call = ToolCall(id=f"c{len(request.messages)}", name="lookup", arguments='{"key": "k"}')
        return LLMResponse(message=Message(role="assistant", tool_calls=(call,)), finish_reason="tool_calls",
                           usage=usage)
    return LLMResponse(message=Message(role="assistant", content="Converted the dates first; "
                                       "the rolling mean is smoother now. " * 3), usage=usage)


def lookup(key: str) -> str:
    """Look a key up."""
    return f"{key}: " + "12, 14, 15, 19; " * 20


TURNS = 70
"""Enough for the window to fill and turns to be covered (from about turn 45)."""


async def session_decisions(tmp_path: Path, turns: int) -> list[dict[str, Any]]:
    config = RuntimeConfig(trace_dir=tmp_path, total_window=8192, embeddings="off")
    runtime = Runtime(config=config, tools=[lookup], provider=FunctionProvider(answer))
    out: list[dict[str, Any]] = []
    async with runtime.chat() as chat:
        chat.subscribe(lambda e: out.append(e.metadata) if e.event_type == "context_decision" else None)
        pinned: dict[int, str] = {}
        for i in range(1, turns + 1):
            if i % 9 == 3:
                pinned[i + 5] = str(chat.pin(f"fact {i}: region {i % 5} targets {i * 3}", label=f"f{i}")["pin_id"])
            if i in pinned:
                chat.unpin(pinned.pop(i))
            await chat.send(f"turn {i}: please lookup region {i % 5}" if i % 6 == 0
                            else f"Turn {i}: I grouped the weekly extract by region {i % 5}; the seed for team {i} "
                                 f"is {1000 + i}. " + "The rolling mean looks smoother now. " * 3)
    return [{k: v for k, v in md.items() if k not in ("chain",)} | {"rows": md["decision"]["decisions"]}
            for md in out]


async def test_a_session_decides_and_records_the_same_with_and_without_the_probe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_probe = await session_decisions(tmp_path / "probe", TURNS)
    full_build = WorkingSetBuilder.abuild

    async def never_probe(self: WorkingSetBuilder, *args: Any, probe: bool = False, **kwargs: Any) -> Any:
        return await full_build(self, *args, **kwargs)

    monkeypatch.setattr(WorkingSetBuilder, "abuild", never_probe)
    without = await session_decisions(tmp_path / "full", TURNS)
    assert len(with_probe) == len(without) > TURNS
    assert any(md["inputs"]["overflow"] for md in without)  # turns were lost and covered
    for a, b in zip(with_probe, without, strict=True):
        assert a["rows"] == b["rows"]
        assert a["decision"] == b["decision"] and a["inputs"] == b["inputs"]
        assert a["request_digest"] == b["request_digest"]


@pytest.fixture
def fresh_policy(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(gc_policy, "ENABLED", True)
    monkeypatch.setattr(gc_policy, "_turns", 0)
    monkeypatch.setattr(gc_policy, "_next_thaw", gc_policy.FIRST_THAW)
    gc.unfreeze()
    yield gc_policy
    gc.unfreeze()


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_short_sessions_leave_the_collector_alone(fresh_policy: Any) -> None:
    fresh_policy.after_turn(fresh_policy.FREEZE_FROM_TURN - 1)
    assert gc.get_freeze_count() == 0
    fresh_policy.ENABLED = False
    fresh_policy.after_turn(fresh_policy.FREEZE_FROM_TURN + 5)
    assert gc.get_freeze_count() == 0


def test_frozen_garbage_cycles_are_freed_when_the_policy_thaws(fresh_policy: Any) -> None:
    obj = Cycle()
    ref = weakref.ref(obj)
    turn = fresh_policy.FREEZE_FROM_TURN
    fresh_policy.after_turn(turn)
    assert gc.get_freeze_count() > 0
    del obj
    gc.collect()
    assert ref() is not None  # frozen: a collection does not walk it
    for k in range(1, fresh_policy.FIRST_THAW - 1):
        fresh_policy.after_turn(turn + k)
    assert ref() is not None
    fresh_policy.after_turn(turn + fresh_policy.FIRST_THAW)  # the 64th frozen turn thaws and collects in full
    assert ref() is None
    assert fresh_policy._next_thaw == 2 * fresh_policy.FIRST_THAW


def test_a_closing_session_thaws_and_the_next_frozen_turn_collects_in_full(fresh_policy: Any) -> None:
    obj = Cycle()
    ref = weakref.ref(obj)
    turn = fresh_policy.FREEZE_FROM_TURN
    fresh_policy.after_turn(turn)
    del obj
    fresh_policy.release()
    assert gc.get_freeze_count() == 0
    fresh_policy.after_turn(turn + 1)  # another long session's turn: a full collection before freezing again
    assert ref() is None
    assert gc.get_freeze_count() > 0


async def test_turn_messages_are_the_turns_own_after_tool_steps_and_a_resume(tmp_path: Path) -> None:
    """``SessionContext.turn_messages`` scans back from the transcript's end: every turn's messages, as a
    filter over the whole transcript finds them, in a live session and in one resumed from its trace."""
    config = RuntimeConfig(trace_dir=tmp_path, total_window=8192, embeddings="off")
    runtime = Runtime(config=config, tools=[lookup], provider=FunctionProvider(answer))

    def check(chat: Any) -> None:
        for t in range(0, chat.turn + 2):
            assert chat.context.turn_messages(t) == [m for m in chat.history if m.turn == t]
        assert chat.context.turn_messages() == [m for m in chat.history if m.turn == chat.turn]

    async with runtime.chat() as chat:
        for i in range(1, 8):
            await chat.send(f"turn {i}: please lookup region {i}" if i % 3 == 0 else f"turn {i}: what changed?")
            check(chat)
        assert [m.role for m in chat.context.turn_messages(6)] == ["user", "assistant", "tool", "assistant"]
        run_id = chat.run_id
    async with runtime.chat(resume=run_id) as again:
        assert again.turn == 7
        check(again)
        await again.send("turn 8: please lookup region 8")
        check(again)
        assert len(again.context.turn_messages()) == 4


def test_the_sync_build_probes_as_abuild_does() -> None:
    b = builder()
    hist = history(60)
    probe = b.build(hist, None, turn=60, probe=True)
    full = b.build(hist, None, turn=60)
    assert probe.probe and not full.probe and lost_view(probe) == lost_view(full)


@pytest.mark.parametrize(("value", "enabled"), [(None, False), ("0", False), ("1", True), ("on", True)])
def test_freezing_is_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch, value: str | None, enabled: bool) -> None:
    """The collector is the process's: by default a notebook's own garbage cycles are never held."""
    if value is None:
        monkeypatch.delenv("ARCANA_GC_FREEZE", raising=False)
    else:
        monkeypatch.setenv("ARCANA_GC_FREEZE", value)
    try:
        assert importlib.reload(gc_policy).ENABLED is enabled
    finally:
        monkeypatch.delenv("ARCANA_GC_FREEZE", raising=False)
        importlib.reload(gc_policy)
