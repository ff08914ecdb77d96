"""Every decision written reads back equal to the one made, over many sessions and every encoding.

The issue's case first: a classic session, ``total_window=600``, ``response_reserve=0``, six turns of
a ~60-token answer and a short question; turn 6's decision (a keyframe) read back with two history
rows' ``relevance_score`` None where the session's own decision had 0.1831 and 0.1933. The trace
records a score only where it decided an outcome (docs/TRACE_FORMAT.md, "Relevance scores: recorded
where they decided"); the session now reports the decision as recorded, so the two are one.

Then the property (hypothesis): sessions of random windows, reserves, strategies, modes, pins, tool
calls and content modes, each recorded with every decision encoding — the chain (keyframes as the
runtime spaces them, a keyframe every 2 decisions, every decision a keyframe) and the older keyframes
and deltas — and read back through every reader path: the replayed prompt, the decision records, the
events, and the replay frames' rows."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from long_run_helpers import OldEncoder

from arcana_jupyter.jupyter.replay_frames import build_frames
from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime import session as session_module
from arcana_jupyter.trace.decision_delta import FRAME_KEYS, ChainEncoder
from arcana_jupyter.trace.reader import TraceReader

ANSWER = ("The answer covers revenue growth in the northern region, seasonal effects, currency conversion "
          "to EUR and the forecast for next quarter based on the weekly sales data we discussed.")


def test_the_issues_session_reads_back_its_own_scores(tmp_path: Path) -> None:
    answers = iter(f"{ANSWER} ({i})" for i in range(6))
    provider = FunctionProvider(lambda request: next(answers))
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, total_window=600,
                                           response_reserve=0, embeddings="off"), provider=provider)
    made = {}
    with runtime.chat() as chat:
        for turn in range(1, 7):
            made[turn] = chat.send_sync(f"Question {turn}: how did sales go?").decision
        run_id = chat.run_id
    reader = TraceReader(tmp_path, shared=False)
    for turn, decision in made.items():
        replay = reader.replay_prompt(run_id, turn)
        assert replay is not None and replay.context_decision == decision, turn
    scores = [d.relevance_score for d in made[6].decisions if d.source == "history"]
    assert None in scores and any(s is not None for s in scores)  # recorded where they decided: as documented


@pytest.mark.parametrize("content", ["redacted", "none"])
def test_keyframes_of_a_redacted_trace_read_back(tmp_path: Path, content: str) -> None:
    """Found by the property below: under ``trace_content="redacted"`` the writer masked a keyframe's value
    table indexes (``["k", ["system", "user", "assistant"], "0121212121"]``: nine digits and more, the
    personal rule for phone numbers) and every decision of the run was unreadable."""
    answers = iter(f"{ANSWER} ({i})" for i in range(12))
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, total_window=900,
                                           trace_content=content, embeddings="off"),
                      provider=FunctionProvider(lambda request: next(answers)))
    made = {}
    with runtime.chat() as chat:
        for turn in range(1, 13):
            made[turn] = chat.send_sync(f"Question {turn}: call me on 0612345678 about sales").decision
        run_id = chat.run_id
    text = (tmp_path / f"{run_id}.jsonl").read_text()
    assert "0612345678" not in text and '"0121' in text  # the phone number masked, the format's digits kept
    reader = TraceReader(tmp_path, shared=False)
    for turn, decision in made.items():
        replay = reader.replay_prompt(run_id, turn)
        assert replay is not None and _rows(replay.context_decision) == _rows(decision), turn


class Model:
    """A scripted model: answers of a drawn length, a tool call now and then (the pin primitive, a user
    tool), a summary when the summariser asks."""

    def __init__(self, lengths: list[int], calls: set[int]) -> None:
        self.lengths = lengths
        self.calls = calls
        self.n = 0

    def __call__(self, request: LLMRequest) -> LLMResponse:
        self.n += 1
        last = request.messages[-1]
        usage = Usage(input_tokens=10, output_tokens=5)
        if "summar" in (request.messages[0].content or "").lower() and not request.tools:
            return LLMResponse(message=Message(role="assistant", content="Summary: sales in regions, EUR."),
                               finish_reason="stop", usage=usage)
        names = {t.name for t in request.tools}
        if last.role == "user" and self.n in self.calls and names & {"pin", "lookup"}:
            if "pin" in names and self.n % 2:
                call = ToolCall(id=f"c{self.n}", name="pin",
                                arguments=json.dumps({"content": f"fact {self.n}: north grew 12%", "label": "f"}))
            else:
                name = "lookup" if "lookup" in names else "pin"
                call = ToolCall(id=f"c{self.n}", name=name, arguments=json.dumps({"region": f"r{self.n % 4}"}
                                                                                 if name == "lookup" else
                                                                                 {"content": "fact"}))
            return LLMResponse(message=Message(role="assistant", content="", tool_calls=(call,)),
                               finish_reason="tool_calls", usage=usage)
        words = self.lengths[self.n % len(self.lengths)]
        text = " ".join(ANSWER.split()[i % 28] for i in range(words)) + f" ({self.n})"
        return LLMResponse(message=Message(role="assistant", content=text), finish_reason="stop", usage=usage)


def lookup(region: str) -> str:
    """Weekly sales of a region."""
    return f"{region}: 1,204 units, up 3% on the week"


class Keyframes2(ChainEncoder):
    def __init__(self) -> None:
        super().__init__(max_chain=2)


class AllKeyframes(ChainEncoder):
    def __init__(self) -> None:
        super().__init__(max_chain=0)


ENCODERS: dict[str, Any] = {"chain": ChainEncoder, "chain, a keyframe every 2": Keyframes2,
                            "chain, all keyframes": AllKeyframes, "keyframes and deltas (encoding 1)": OldEncoder}

session_st = st.fixed_dictionaries({
    "engine": st.booleans(),
    "window": st.integers(350, 3000),
    "reserve": st.integers(0, 200),
    "strategy": st.sampled_from(["auto", "tail_preserve", "aggressive_truncate", "passthrough", "llm_summarize"]),
    "content": st.sampled_from(["full", "redacted", "none"]),
    "turns": st.integers(3, 9),
    "lengths": st.lists(st.integers(5, 90), min_size=1, max_size=4),
    "calls": st.sets(st.integers(1, 14), max_size=4),
    "pin_at": st.none() | st.integers(1, 5),
    "words": st.lists(st.sampled_from(["sales", "north", "EUR", "forecast", "region", "week", "growth",
                                        "quarter", "units", "returns"]), min_size=2, max_size=6),
})


async def _record(folder: Path, spec: dict[str, Any]) -> tuple[str, dict[tuple[int, int], Any],
                                                              dict[int, Any]]:
    config = RuntimeConfig(trace_dir=folder, context_engine=spec["engine"], total_window=spec["window"],
                           response_reserve=spec["reserve"], strategy=spec["strategy"], trace_content=spec["content"],
                           cognitive_primitives=["pin", "recall"], embeddings="off", memory=False)
    runtime = Runtime(config=config, tools=[lookup], provider=FunctionProvider(Model(spec["lengths"], spec["calls"])))
    seen: dict[tuple[int, int], Any] = {}
    made: dict[int, Any] = {}
    async with runtime.chat() as chat:
        chat.subscribe(lambda ev: seen.__setitem__((ev.turn, ev.metadata["step"]), ev.metadata["decision"])
                       if ev.event_type == "context_decision" else None)
        words = spec["words"]
        for turn in range(1, spec["turns"] + 1):
            if spec["pin_at"] == turn:
                chat.pin(f"pinned: the {words[0]} target is 12", label="target")
            text = f"Question {turn} about {' and '.join(words[turn % len(words):] + words[:turn % len(words)])}?"
            reply = await chat.send(text, raise_errors=False)
            assert reply.status == "ok", reply.error
            made[turn] = reply.decision
        run_id = chat.run_id
    return run_id, seen, made


def _rows(decision: Any) -> list[dict[str, Any]]:
    return [row.model_dump(mode="json") if hasattr(row, "model_dump") else dict(row) for row in decision.decisions]


def _check(folder: Path, run_id: str, seen: dict[tuple[int, int], Any], made: dict[int, Any], content: str,
           label: str) -> None:
    reader = TraceReader(folder, shared=False)
    assert reader.warnings == [], label
    last_step = {turn: max(s for t, s in seen if t == turn) for turn in made}
    for (turn, step), live in seen.items():
        replay = reader.replay_prompt(run_id, turn, step=step)
        assert replay is not None, (label, turn, step)
        got = replay.context_decision
        assert [r.model_dump(mode="json") for r in got.decisions] == json.loads(json.dumps(live["decisions"])), (
            label, turn, step)
        if step == last_step[turn]:  # the decision the session reported for the turn: the same, field by field
            decision = made[turn]
            if content == "full":
                assert got == decision, (label, turn)
            else:  # the writer's redaction applies to the decision's text (notes, a summary); its rows are as made
                assert _rows(got) == _rows(decision) and got.strategy == decision.strategy, (label, turn)
    records = {(r.turn, r.step): r.metadata["decision"]["decisions"] for r in reader.decision_records(run_id)}
    events = {(e.turn, e.metadata["step"]): e.metadata["decision"]["decisions"]
              for e in reader.events(run_id, event_types=["context_decision"])}
    for key, live in seen.items():
        want = json.loads(json.dumps(live["decisions"]))
        assert json.loads(json.dumps(records[key])) == want == json.loads(json.dumps(events[key])), (label, key)
    frames = build_frames(folder, run_id, reader=TraceReader(folder, shared=False), verify=False)
    for frame in frames:
        turn = frame["turn"]
        rows = frame["step"]["decision"]["decisions"]
        want = [{k: r.get(k) for k in FRAME_KEYS} for r in _rows(made[turn])]
        assert [{k: r.get(k) for k in FRAME_KEYS} for r in rows] == want, (label, turn)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(spec=session_st)
def test_every_decision_reads_back_as_made_in_every_encoding(tmp_path_factory: pytest.TempPathFactory,
                                                             spec: dict[str, Any]) -> None:
    for label, encoder in ENCODERS.items():
        folder = tmp_path_factory.mktemp("rt")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(session_module, "ChainEncoder", encoder)
            run_id, seen, made = asyncio.run(_record(folder, spec))
        _check(folder, run_id, seen, made, spec["content"], f"{label} {spec}")
