"""The model's own replies are its claims: never a pinned finding (a scripted session, engine mode).

Tried in JupyterLab before this: a wrong answer at one turn became a checkpoint "Finding" that every
later prompt carried as a pinned fact, and the model repeated it for the rest of the tour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scripted_chat import Script, call, events_of, say

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.checkpoint import SECTION_CLAIMS
from arcana_jupyter.context.sections import CHECKPOINT_SECTION
from arcana_jupyter.providers.base import LLMRequest
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig, working_set

WRONG = "The average order value is 93.10 EUR."


def prices() -> str:
    return "average order value: 41.20 EUR over 1,204 orders"


def section(request: LLMRequest, name: str) -> str | None:
    """The text of section ``name`` in a shaped prompt: under its ``## name`` heading in the leading
    system message (providers/shaping.py), or a message of that name in an unshaped one."""
    found = [m.content for m in request.messages if m.name == name]
    if found:
        return found[0]
    head = request.messages[0].content if request.messages and request.messages[0].role == "system" else ""
    marker = f"## {name}\n"
    if marker not in head:
        return None
    return head.split(marker, 1)[1].split("\n\n## ", 1)[0]


async def test_a_wrong_answer_at_turn_2_is_never_a_pinned_finding_later(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # the cover may take a fifth of this small window, so that the claims section reaches the prompts too
    # (at the default tenth only the checkpoint does: the claims go first when the cover is too large)
    monkeypatch.setattr(working_set, "OVERFLOW_SHARE", 0.2)
    script = Script(
        say("Hello! Ask me about the orders."),
        say(WRONG),  # turn 2: wrong, and without looking
        say("I can check that."),
        call("prices", {}, call_id="p"), say("Checked: it is 41.20 EUR."),  # turn 4: with the tool
        *[say(f"Here is more about topic {i}. " + "The weekly figures moved as expected. " * 90) for i in range(5, 9)],
    )
    # a window the later turns fill, so that earlier turns stop fitting and the checkpoint stands in
    cfg = RuntimeConfig(trace_dir=tmp_path, digest_turns=1, total_window=2600, embeddings="off")
    runtime = Runtime(config=cfg, tools=(prices,), provider=FunctionProvider(script))
    async with runtime.chat() as chat:
        live_decisions: list = []
        chat.subscribe(lambda e: live_decisions.append(e.metadata["decision"]["decisions"])
                       if e.event_type == "context_decision" else None)
        await chat.send("hi")
        await chat.send("What is the average order value?")
        for i in range(3, 9):
            await chat.send("Please look it up with the tool." if i == 4 else f"Tell me about topic {i}.")
        path = chat.trace_path
        cover = chat.engine.overflow_sections(range(1, 8))
        live = cover.sections
    # what would stand in for turns 1-7: the wrong answer only among the claims, the tool's result a finding
    checkpoint = next(s.content for s in live if s.name == CHECKPOINT_SECTION)
    assert "93.10" not in checkpoint, "the model's wrong answer must not be pinned as a finding"
    assert "41.20 EUR over 1,204 orders" in checkpoint  # the tool's result is a finding
    assert "(turn 4, tool prices)" in checkpoint
    claims = next(s.content for s in live if s.name == SECTION_CLAIMS)
    assert claims.startswith("Model's earlier claims (unverified") and f"(turn 2) {WRONG}" in claims
    assert "Findings" not in claims
    # and what the later prompts carried as their checkpoint never held it either
    carried = [c for c in (section(r, CHECKPOINT_SECTION) for r in script.requests) if c is not None]
    assert carried and all("93.10" not in c for c in carried)
    # the claims section is an ordinary section: its decision is not pinned, the checkpoint's is
    with_cp = [rows for rows in live_decisions
               if any(d.get("source") == "section" and d.get("section") == CHECKPOINT_SECTION for d in rows)]
    assert with_cp
    last = {d.get("section"): d for d in with_cp[-1] if d.get("source") == "section"}
    assert last[CHECKPOINT_SECTION]["pinned"] is True
    assert last[SECTION_CLAIMS]["pinned"] is False
    # event-sourced: a rebuild from the trace gives the same sections, byte for byte
    rebuilt = AdaptiveEngine.from_events(events_of(path), cfg)
    assert [s.model_dump() for s in rebuilt.overflow_sections(range(1, 8)).sections] == [s.model_dump() for s in live]


def old_checkpoint_event(turn: int, digest: dict[str, Any]) -> dict[str, Any]:
    return {"event_type": "context_action", "turn": turn, "metadata": {
        "action": "checkpoint", "object_id": None, "kind": "checkpoint", "args": {"turn": turn},
        "result": {"ok": True, "turn": turn}, "source": "engine", "turn": turn, "objects": [], "digest": digest,
        "events": []}}


def test_an_old_trace_loads_and_its_reply_findings_become_claims() -> None:
    # digests as builds before this one recorded them: no version, findings from the model's reply,
    # the reply's first sentence at the end of the narrative, decisions without a source
    events = [
        old_checkpoint_event(1, {
            "turn": 1, "request": "What is the average order value? Use the median because of outliers.",
            "plans": ["Load the CSV"], "decisions": [
                {"text": "Use the median", "rationale": "because of outliers."},
                {"text": "I'll use pandas", "rationale": "since it is small."}],
            "constraints": [{"text": "Constraint x", "implicit": False}], "files": [],
            "findings": [WRONG], "errors": [], "open_questions": ["Shall I plot it?"], "tools": [],
            "narrative": f"T1: What is the average order value? Use the median because of outliers. → {WRONG}"}),
        old_checkpoint_event(2, {
            "turn": 2, "request": "thanks", "plans": [], "decisions": [], "constraints": [], "files": [],
            "findings": [], "errors": [], "open_questions": [], "tools": ["run_python"],
            "narrative": "T2: thanks → tools: run_python → You are welcome, anything else?"}),
    ]
    engine = AdaptiveEngine.from_events(events)
    assert engine.load_warnings == []
    cp = engine.checkpoint
    assert cp.findings == [] and [(c.turn, c.text) for c in cp.claims] == [
        (1, WRONG), (2, "You are welcome, anything else?")]
    assert cp.narrative == ["T1: What is the average order value? Use the median because of outliers.",
                            "T2: thanks → tools: run_python"]
    assert [(d.text, d.source) for d in cp.decisions] == [("Use the median", "user"), ("I'll use pandas", "model")]
    assert cp.plan is not None and cp.plan.source == "model"
    [pinned] = [s for s in engine.checkpoint_sections() if s.name == CHECKPOINT_SECTION]
    assert "93.10" not in pinned.content and "pandas" not in pinned.content and "Load the CSV" not in pinned.content
    assert "Use the median" in pinned.content
    [claims] = [s for s in engine.checkpoint_sections() if s.name == SECTION_CLAIMS]
    assert WRONG in claims.content and not claims.protected  # (turn 1's question was followed by turn 2)
    again = AdaptiveEngine.from_events(events)
    assert again.snapshot() == engine.snapshot()


def test_a_version_1_snapshot_restores_with_claims_apart() -> None:
    engine = AdaptiveEngine()
    engine.end_turn(1, [{"role": "user", "content": "What is the mean?"},
                        {"role": "assistant", "content": WRONG}])
    data = engine.snapshot()
    old = {**data, "version": 1, "digests": [{"turn": 1, "request": "What is the mean?", "findings": [WRONG],
                                              "narrative": f"T1: What is the mean? → {WRONG}"}],
           "checkpoint": {"last_turn": 1, "turns": 1, "findings": [{"turn": 1, "text": WRONG}]}}
    restored = AdaptiveEngine.restore(old)
    assert restored.checkpoint.findings == [] and [c.text for c in restored.checkpoint.claims] == [WRONG]
    assert restored.checkpoint_sections() == engine.checkpoint_sections()
