"""Adaptive context inside a real session (engine mode, the default) and classic mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted_chat import Script, call, events_of, say

from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig, working_set


def runtime_with(script: Script, tmp_path: Path, **cfg) -> Runtime:
    return Runtime(config=RuntimeConfig(trace_dir=tmp_path, **cfg), provider=FunctionProvider(script))


async def test_engine_mode_is_the_default_and_offers_its_tools(tmp_path: Path) -> None:
    script = Script(say("hi"))
    async with runtime_with(script, tmp_path).chat() as chat:
        await chat.send("hello")
        assert chat.engine is not None
    names = [t.name for t in script.requests[0].tools]
    assert {"create_task", "hydrate", "retract_task", "search_turn_events", "retrieve_artifact"} <= set(names)


async def test_a_created_task_reaches_the_prompt_as_a_section_with_its_own_decision(tmp_path: Path) -> None:
    script = Script(call("create_task", {"title": "Clean the sales data", "description": "drop null regions"}),
                    say("created"), say("working on it"))
    async with runtime_with(script, tmp_path).chat() as chat:
        await chat.send("start a task")
        await chat.send("go on")
        events = chat.turn_events(2)
    sent = script.requests[-1].messages
    md = next(e for e in events if e.event_type == "context_decision").metadata
    rows = [d for d in md["decision"]["decisions"] if d["section"] == "adaptive_active"]
    assert rows and rows[0]["source"] == "section" and "adaptive_active" in rows[0]["reason"]
    # shaped for the model: the section joined the one leading system message (or the context block
    # of the current user message) under its own heading; the decision's shape says where
    how, target = md["shape"]["moved"][str(rows[0]["position"])]
    assert (how == "system" and "## adaptive_active" in sent[target].content) or (
        how == "context" and '<system-context name="adaptive_active">' in sent[target].content)
    assert "Clean the sales data" in sent[target].content
    assert [m.role for m in sent].count("system") == 1 and sent[0].role == "system"


async def test_large_tool_output_becomes_an_artifact_the_model_can_retrieve(tmp_path: Path) -> None:
    rows = "\n".join(f"{i},region_{i % 7},{i * 13 % 101}" for i in range(3000))

    def load_csv() -> str:
        return "id,region,sales\n" + rows

    script = Script(call("load_csv", {}), say("loaded"),
                    call("retrieve_artifact", {"id": "a_1", "offset": 0, "limit": 200}), say("ok"))
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path), tools=[load_csv], provider=FunctionProvider(script))
    async with runtime.chat() as chat:
        await chat.send("load it")
        await chat.send("show me the start")
    card = script.requests[1].messages[-1].content
    assert card.startswith("[artifact a_1") and "retrieve_artifact" in card and len(card) < 4000
    got = json.loads(script.requests[-1].messages[-1].content)
    assert got["ok"] is True and got["content"].startswith("id,region,sales")


async def test_a_window_that_holds_the_conversation_sends_all_of_it_in_engine_mode(tmp_path: Path) -> None:
    turns = 12
    script = Script(*[say(f"answer {i} " * 20) for i in range(turns)])
    async with runtime_with(script, tmp_path, total_window=16384).chat() as chat:
        for i in range(turns):
            await chat.send(f"fact {i}: the code of warehouse {i} is W-{1000 + i}")
        history = [m.wire() for m in chat.history[:-1]]
    sent = script.requests[-1].messages
    assert [m.wire() for m in sent] == history  # the whole conversation, verbatim, nothing added
    assert not any(m.name in ("checkpoint", "turn_digests") for m in sent)


async def test_older_turns_that_do_not_fit_are_carried_by_the_checkpoint_and_digests(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the cover takes a tenth of the budget, where this small window's checkpoint leaves no room for a
    # digest: a fifth lets both carry turns (what the row of each covered turn must say)
    monkeypatch.setattr(working_set, "OVERFLOW_SHARE", 0.2)
    turns = 30
    script = Script(*[say(f"answer {i}: " + "the figures moved as expected this week. " * 6) for i in range(turns)])
    async with runtime_with(script, tmp_path, digest_turns=2, total_window=3000, response_reserve=200,
                            embeddings="off").chat() as chat:
        for i in range(turns):
            await chat.send(f"question {i} about topic {i}: " + "please look at the weekly numbers again. " * 5)
        events = chat.turn_events(turns)
        history_len = len(chat.history)
    md = next(e for e in events if e.event_type == "context_decision").metadata
    decisions = md["decision"]["decisions"]
    history_rows = [d for d in decisions if d["source"] in ("history", "input")]
    assert [d["index"] for d in history_rows] == list(range(md["history_len"]))
    assert md["history_len"] == history_len - 1  # the reply came after the build
    carried = {d["section"] for d in history_rows if d["section"]}
    assert carried == {"checkpoint", "turn_digests"}
    carries = md["inputs"]["overflow"]
    assert {"checkpoint", "turn_digests"} <= set(carries) and len(carries["turn_digests"]) == 2
    assert all(d["turn"] in carries[d["section"]] for d in history_rows if d["section"])
    # what fits stays verbatim: the newest turns are there, the covered ones are not
    sent = script.requests[-1].messages
    texts = [m.content for m in sent]
    assert any(t.startswith(f"question {turns - 2} ") for t in texts)
    absent = [t for t in carries["checkpoint"] if not any(x.startswith(f"question {t - 1} ") for x in texts)]
    assert absent  # covered turns are not also sent verbatim
    # the cover is in the head: shaped into the one leading system message, before every history turn
    assert sent[0].role == "system" and all(m.role != "system" for m in sent[1:])
    for name in ("checkpoint", "turn_digests"):
        row = next(d for d in decisions if d["source"] == "section" and d["section"] == name)
        _, target = md["shape"]["moved"][str(row["position"])]
        assert target == 0 and f"## {name}" in sent[0].content


async def test_classic_mode_sends_the_exact_transcript(tmp_path: Path) -> None:
    script = Script(say("one"), say("two"), say("three"))
    async with runtime_with(script, tmp_path, context_engine=False).chat() as chat:
        for t in ("a", "b", "c"):
            await chat.send(t)
        history = [m.wire() for m in chat.history[:-1]]
        assert chat.engine is None
    assert [m.wire() for m in script.requests[-1].messages] == history
    assert script.requests[-1].tools == []


async def test_engine_failure_falls_back_to_classic_and_says_why(tmp_path: Path, monkeypatch) -> None:
    # knobs that cannot make an engine are a config error now (tests/runtime/test_config_groups.py);
    # an engine that still fails to start (no token encoding ...) falls back to classic mode
    from arcana_jupyter.adaptive import engine as engine_module

    def broken(self, *args, **kwargs) -> None:
        raise RuntimeError("no token encoding")

    monkeypatch.setattr(engine_module.AdaptiveEngine, "__init__", broken)
    script = Script(say("still works"))
    async with runtime_with(script, tmp_path).chat() as chat:
        reply = await chat.send("hello")
        assert chat.engine is None and chat.engine_note and "classic mode" in chat.engine_note
    assert reply.text == "still works"


async def test_resume_rebuilds_the_same_working_memory(tmp_path: Path) -> None:
    script = Script(call("create_task", {"title": "Ship the report"}), say("ok"),
                    call("decide", {"decision": "Use parquet", "rationale": "faster"}), say("ok"), say("resumed"))
    runtime = runtime_with(script, tmp_path)
    async with runtime.chat() as chat:
        await chat.send("task please")
        await chat.send("decide")
        before = chat.engine.snapshot()
        run_id = chat.run_id
    async with runtime.chat(resume=run_id) as again:
        assert again.engine.snapshot() == before
        await again.send("where were we?")
    assert any("Ship the report" in m.content for m in script.requests[-1].messages)


async def test_widget_actions_go_through_the_engine_and_are_traced(tmp_path: Path) -> None:
    script = Script(call("note", {"text": "the API key rotates monthly", "title": "rotation"}), say("noted"))
    async with runtime_with(script, tmp_path).chat() as chat:
        await chat.send("note it")
        object_id = chat.engine.objects()[0].id
        assert chat.retract(object_id)["ok"] is True
        assert chat.engine.objects() == []
        path = chat.trace_path
    actions = [e["metadata"] for e in events_of(path) if e["event_type"] == "context_action"]
    assert any(a.get("action") == "retract" and a.get("source") == "widget" for a in actions)


async def test_engine_mode_turns_rebuild_exactly_from_the_trace(tmp_path: Path) -> None:
    from arcana_jupyter.context.rebuild import rebuild_turn
    from arcana_jupyter.trace.reader import TraceReader

    script = Script(*[say(f"answer {i} " * 30) for i in range(9)])
    async with runtime_with(script, tmp_path, digest_turns=2, total_window=3000).chat() as chat:
        for i in range(9):
            await chat.send(f"question {i} about the sales of region {i % 3}")
        run_id = chat.run_id
    reader = TraceReader(tmp_path)
    for turn in (1, 5, 9):
        result = rebuild_turn(reader, run_id, turn)
        assert result.verified, result.notes
        assert result.diff == []
    counterfactual = rebuild_turn(reader, run_id, 9, total_window=2600, response_reserve=400)
    assert counterfactual.counterfactual and not counterfactual.budget.overflow
    assert counterfactual.budget.used <= 2200
    squeezed = rebuild_turn(reader, run_id, 9, total_window=820)  # less than the reply reserve leaves
    assert squeezed.budget.overflow and any("overflow" in n or "do not fit" in n for n in squeezed.decision.notes)


async def test_without_engine_tools_no_prompt_text_mentions_them(tmp_path: Path) -> None:
    rows = "\n".join(f"{i},north,{i}" for i in range(3000))

    def load() -> str:
        return "id,region,sales\n" + rows

    script = Script(call("load", {}), say("loaded"), *[say(f"ok {i}") for i in range(6)])
    # the bundled model: tools withheld
    provider = FunctionProvider(script, name="local", model_name="SmolLM2-135M-Instruct.Q4_1")
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, idle_soft_after_turns=1, idle_hard_after_turns=2,
                                           user_tools="on"),
                      tools=[load], provider=provider)
    async with runtime.chat() as chat:
        chat.engine.create_task("Audit the northern region", turn=0, source="user")
        for i in range(6):
            await chat.send(f"unrelated question {i}" if i else "load the data")
    tools = {t.name for r in script.requests for t in r.tools}
    assert tools == {"load"}
    text = "\n".join(m.content for r in script.requests for m in r.messages)
    assert "[artifact a_1" in text and "Audit the northern region" in text
    assert "retrieve_artifact" not in text and "hydrate(" not in text


async def test_a_classic_what_if_of_an_adaptive_turn_is_what_a_classic_session_sent(tmp_path: Path) -> None:
    """``rebuild_turn(mode="classic")`` (the inspector's and ``%arcana_replay --mode classic``'s
    what-if) of a turn recorded in the default mode gives the prompt a classic session with the same
    conversation really sent: no adaptive sections or tools, the window moving in bands."""
    from arcana_jupyter.context.rebuild import rebuild_turn
    from arcana_jupyter.trace.reader import TraceReader

    turns = 24
    replies = [f"answer {i}: " + "the figures moved as expected this week. " * 6 for i in range(turns)]
    questions = [f"question {i} about topic {i}: " + "please look at the weekly numbers again. " * 5
                 for i in range(turns)]
    runs = {}
    for engine in (True, False):
        folder = tmp_path / ("adaptive" if engine else "classic")
        script = Script(*[say(r) for r in replies])
        async with runtime_with(script, folder, digest_turns=2, total_window=2400, response_reserve=200,
                                embeddings="off", context_engine=engine).chat() as chat:
            for q in questions:
                await chat.send(q)
            runs[engine] = (folder, chat.run_id, script.requests)
    folder, run_id, _ = runs[True]
    reader = TraceReader(folder)
    as_recorded = rebuild_turn(reader, run_id, turns)
    assert as_recorded.verified and as_recorded.mode == "adaptive" and not as_recorded.counterfactual
    assert as_recorded.recorded_mode == "adaptive"  # the default mode ...
    assert as_recorded.messages != [m.wire() for m in runs[False][2][-1].messages]  # ... sent another prompt

    classic = rebuild_turn(reader, run_id, turns, mode="classic")
    assert classic.counterfactual and classic.mode == "classic"
    classic_request = runs[False][2][-1]
    assert classic.messages == [m.wire() for m in classic_request.messages]
    assert not any("## checkpoint" in str(m.get("content")) for m in classic.messages)
