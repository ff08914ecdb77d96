"""Decision deltas: traces stay O(changes) per turn, and every reader sees full decisions."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scripted_chat import Script, events_of, say

from arcana_jupyter.context.decisions import ContextDecision, recorded_scores
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.decision_delta import DeltaEncoder, encode, resolve_decision
from arcana_jupyter.trace.reader import TraceReader

rows_st = st.lists(st.fixed_dictionaries({
    "index": st.integers(0, 5), "outcome": st.sampled_from(["kept", "dropped"]),
    "relevance_score": st.none() | st.floats(0, 1), "fidelity": st.sampled_from([None, "L0", "L3"]),
}), max_size=12)


@given(rows_st, rows_st)
def test_encode_then_resolve_is_the_identity(base, new) -> None:
    delta = encode(new, base)
    if delta is None:
        return
    packed = {"strategy": "x", "decisions": None, "decisions_delta": {"base": "e_1", **delta}}
    full = resolve_decision(packed, lambda _id: {"decisions": base})
    assert full["decisions"] == new and "decisions_delta" not in full


def test_a_missing_base_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="e_9"):
        resolve_decision({"decisions": None, "decisions_delta": {"base": "e_9", "same": [], "rows": []}},
                         lambda _id: None)


def test_keyframes_come_back_regularly() -> None:
    enc = DeltaEncoder(every=3)
    rows = [{"index": i, "outcome": "kept"} for i in range(10)]
    kinds = []
    for n in range(8):
        _packed, key = enc.pack({"decisions": rows})
        kinds.append(key)
        if key:
            enc.keyframe_written(f"e_{n}", {"decisions": rows})
    assert kinds == [True, False, False, False, True, False, False, False]


async def test_long_session_traces_deltas_and_reads_back_full_decisions(tmp_path: Path) -> None:
    turns = 40
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, total_window=2000,
                                           response_reserve=200),
                      provider=FunctionProvider(Script(*[say(f"answer {i} " * 20) for i in range(turns)])))
    live = {}
    async with runtime.chat() as chat:
        for i in range(turns):
            r = await chat.send(f"question {i} " * 10)
            live[r.turn] = r.decision
        run_id, path = chat.run_id, chat.trace_path
    raw = [e for e in events_of(path) if e["event_type"] == "context_decision"]
    chained = [e for e in raw if (e["metadata"].get("chain") or {}).get("prev")]
    assert len(chained) > turns / 2, "most turns are written against the previous decision"
    full_size = sum(len(str(live[t].model_dump(mode="json"))) for t in live)
    assert path.stat().st_size < full_size  # the whole trace is smaller than the full decisions alone
    reader = TraceReader(tmp_path)
    for t in (1, 17, turns):
        replay = reader.replay_prompt(run_id, t)
        assert replay is not None
        recorded = live[t].model_dump(mode="json")  # as recorded: scores only where they decided an outcome
        recorded["decisions"] = recorded_scores(recorded["decisions"])
        assert replay.context_decision == ContextDecision.model_validate(recorded)
