"""A realistic multi-turn trace written event by event through the real TraceWriter.

Decisions are real :class:`ContextDecision` objects; the request digest is the real digest of the
prompt the (hand-made) build sends. Turn 2 has a tool loop: the model calls ``pin``, the runtime
services it (``tool_call`` + ``cognitive_primitive``), then step 1 answers. Optional: an ``unpin``
at a given turn and a pin with ``until_turn``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arcana_jupyter.context.decisions import (
    BudgetSnapshot,
    ContextDecision,
    ContextReport,
    LayerReport,
    MessageDecision,
)
from arcana_jupyter.messages import Message, ToolCall, request_digest
from arcana_jupyter.trace.writer import TraceWriter

MODEL = "openai:gpt-4o-mini"
SYSTEM = "You are a helpful assistant working inside a Jupyter notebook."
PIN_CONTENT = "Load-bearing facts: revenue is in EUR; fiscal year starts in April; region codes are ISO."


def _tokens(m: Message) -> int:
    return 3 + len(m.content.split()) + 4 * len(m.tool_calls)


def build(
    history: list[Message], pins: list[dict[str, Any]], turn: int, step: int
) -> tuple[list[Message], ContextDecision, ContextReport, BudgetSnapshot]:
    """A tail-preserve-like build: the last 4 messages and the system prompt kept, older ones
    compressed (L2) or dropped (the oldest), pins appended as system blocks."""
    sent: list[Message] = []
    decisions: list[MessageDecision] = []
    n = len(history)
    for i, m in enumerate(history):
        before = _tokens(m)
        if i == 0:
            outcome, fid, reason, after, out = "kept", "L0", "passthrough", before, m
        elif i >= n - 4:
            outcome, fid, reason, after, out = "kept", "L0", "tail_preserve_tail", before, m
        elif i == 1 and n > 8:
            outcome, fid, reason, after, out = "dropped", None, "tail_preserve_middle_dropped", 0, None
        else:
            short = m.replace(content="[compressed L2] " + " ".join(m.content.split()[:3]))
            outcome, fid, reason, after, out = ("compressed", "L2", "tail_preserve_middle_compressed",
                                                _tokens(short), short)
        if out is not None:
            sent.append(out)
        decisions.append(
            MessageDecision(
                index=i, role=m.role, outcome=outcome, fidelity=fid,
                relevance_score=None if i == 0 else round(1 / (1 + n - i), 2),
                token_count_before=before, token_count_after=after, reason=reason, turn=m.turn,
                position=len(sent) - 1 if out is not None else None,
            )
        )
    for p in pins:
        block = Message(role="system", content=f"[Pinned {p['pin_id']}]\n{p['content']}", name=p["pin_id"])
        sent.append(block)
        t = _tokens(block)
        decisions.append(
            MessageDecision(index=len(decisions), role="system", outcome="kept", fidelity="L0", token_count_before=t,
                            token_count_after=t, reason="pinned", source="pin", section=p["pin_id"], pinned=True,
                            position=len(sent) - 1)
        )
    before_total = sum(d.token_count_before for d in decisions)
    after_total = sum(d.token_count_after for d in decisions)
    decision = ContextDecision(
        turn=turn, step=step, strategy="tail_preserve" if n > 6 else "passthrough", requested_strategy="auto",
        utilization_before=round(before_total / 7000, 4), decisions=decisions,
    )
    report = ContextReport(
        layers=[LayerReport(layer="working", messages=len(decisions), tokens_before=before_total,
                            tokens_after=after_total)],
        total_before=before_total, total_after=after_total,
    )
    used = after_total + 3
    budget = BudgetSnapshot(total_window=8000, response_reserve=1000, available=7000, used=used, remaining=7000 - used,
                            utilization=round(used / 7000, 4))
    return sent, decision, report, budget


def write_run(
    path: Path | None,
    run_id: str,
    *,
    turns: int = 5,
    agent: str = "main",
    writer: TraceWriter | None = None,
    snapshots: bool = True,
    pin_turn: int | None = 2,
    pin_until: int | None = None,
    unpin_turn: int | None = None,
    content: str = "full",
    secrets: tuple[str, ...] = (),
    user_text: str = "Question {turn}: how did region {turn} grow this quarter?",
    end: bool = True,
) -> TraceWriter:
    """Write a run (or one agent's part of a shared writer's run) and return the writer."""
    w = writer or TraceWriter(path, run_id, content=content, secrets=secrets)  # type: ignore[arg-type]
    w.emit_json("run_start", {"arcana_version": "0.1.0", "model": MODEL, "provider": "openai",
                              "config": {"strategy": "auto"},
                              "system_prompt": SYSTEM, "tools": [], "notebook": None, "resumed_from": None},
                agent=agent)
    history = [Message(role="system", content=SYSTEM)]
    pins: list[dict[str, Any]] = []
    for turn in range(1, turns + 1):
        w.emit_json("turn_start", {"input_tokens": 12}, turn=turn, agent=agent)
        user = Message(role="user", content=user_text.format(turn=turn), turn=turn)
        history.append(user)
        w.emit_json("user_message", {"message": user.record(), "history_index": len(history) - 1}, turn=turn,
                    agent=agent)
        step = 0
        while True:
            sent, decision, report, budget = build(history, pins, turn, step)
            digest = request_digest(sent, [], "gpt-4o-mini")
            dec = w.emit_json("context_decision", {
                "step": step, "decision": decision.model_dump(mode="json"), "report": report.model_dump(mode="json"),
                "budget": budget.model_dump(mode="json"), "request_digest": digest, "history_len": len(history),
                "inputs": {"pins": [dict(p) for p in pins], "sections": [], "task": None},
                "builder": {"strategy": "auto", "total_window": 8000, "response_reserve": 1000, "model": "gpt-4o-mini"},
                "tools": [],
            }, turn=turn, agent=agent)
            if snapshots:
                w.emit_json("prompt_snapshot", {"turn": turn, "step": step, "model": "gpt-4o-mini",
                                                "messages": [m.wire() for m in sent], "tools": [],
                                                "response_format": None,
                                                "budget_snapshot": budget.model_dump(mode="json")},
                            turn=turn, agent=agent, parent_id=dec.event_id)
            calls: tuple[ToolCall, ...] = ()
            if step == 0 and turn == pin_turn:
                pin_args: dict[str, Any] = {"content": PIN_CONTENT, "label": "key facts"}
                if pin_until:
                    pin_args["until_turn"] = pin_until
                args = json.dumps(pin_args)
                calls = (ToolCall(id=f"call_pin_{turn}", name="pin", arguments=args),)
            elif step == 0 and turn == unpin_turn:
                calls = (ToolCall(id=f"call_unpin_{turn}", name="unpin", arguments='{"pin_id": "p_a1b2c3d4"}'),)
            reply = Message(role="assistant",
                            content="" if calls else f"Answer {turn}: region {turn} grew {turn * 3}%.",
                            tool_calls=calls, turn=turn)
            history.append(reply)
            call = w.emit_json("llm_call", {
                "step": step, "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini",
                "gen_ai.response.model": "gpt-4o-mini-2024-07-18", "gen_ai.usage.input_tokens": budget.used,
                "gen_ai.usage.output_tokens": 9, "gen_ai.usage.cached_input_tokens": 0,
                "gen_ai.response.finish_reasons": ["tool_calls" if calls else "stop"], "latency_ms": 12.5,
                "attempts": 1,
                "request_digest": digest, "streamed": True, "message": reply.record(),
                "history_index": len(history) - 1,
                "cost_usd": 0.0001,
            }, turn=turn, agent=agent, parent_id=dec.event_id)
            if not calls:
                break
            tc = calls[0]
            if tc.name == "pin":
                result = {"pinned": True, "pin_id": "p_a1b2c3d4", "label": "key facts", "until_turn": pin_until,
                          "already_pinned": False}
                pins.append({"pin_id": "p_a1b2c3d4", "content": PIN_CONTENT, "label": "key facts",
                             "until_turn": pin_until, "created_turn": turn})
                cargs: dict[str, Any] = {"content": PIN_CONTENT, "label": "key facts", "until_turn": pin_until}
            else:
                result = {"unpinned": True, "pin_id": "p_a1b2c3d4", "label": "key facts"}
                pins.clear()
                cargs = {"pin_id": "p_a1b2c3d4"}
            tool_msg = Message(role="tool", content=str(result), tool_call_id=tc.id, name=tc.name, turn=turn)
            history.append(tool_msg)
            w.emit_json("tool_call", {"tool_call_id": tc.id, "name": tc.name, "arguments": cargs, "ok": True,
                                      "result": tool_msg.content, "error": None, "latency_ms": 0.2, "truncated": False,
                                      "message": tool_msg.record(), "history_index": len(history) - 1,
                                      "intercepted": True},
                        turn=turn, agent=agent, parent_id=call.event_id)
            w.emit_json("cognitive_primitive",
                        {"primitive": tc.name, "tool_call_id": tc.id, "args": cargs, "result": result},
                        turn=turn, agent=agent, parent_id=call.event_id)
            if pin_until is not None:
                pins[:] = [p for p in pins if p["until_turn"] is None or p["until_turn"] >= turn]
            step += 1
        w.emit_json("turn_end", {"status": "ok", "reply": history[-1].content,
                                 "usage": {"input_tokens": 100, "output_tokens": 9},
                                 "cost_usd": 0.0001, "latency_ms": 30.0, "steps": step + 1}, turn=turn, agent=agent)
        # pins expire after until_turn for the next turn's builds
        pins[:] = [p for p in pins if p["until_turn"] is None or p["until_turn"] >= turn + 1]
    if end:
        w.emit_json("run_end", {"turns": turns, "usage": {}, "cost_usd": 0.0005}, agent=agent)
    return w


def expected_history(turns: int, pin_turn: int | None = 2, unpin_turn: int | None = None) -> list[tuple[str, str]]:
    """(role, content prefix) of the history write_run produces."""
    out = [("system", SYSTEM)]
    for t in range(1, turns + 1):
        out.append(("user", f"Question {t}"))
        if t in (pin_turn, unpin_turn):
            out.append(("assistant", ""))
            out.append(("tool", "{"))
        out.append(("assistant", f"Answer {t}"))
    return out


def write_built_run(
    path: Path,
    run_id: str,
    *,
    turns: int = 8,
    strategy: str = "auto",
    total_window: int = 900,
    response_reserve: int = 100,
    words: int = 40,
    pin_turn: int | None = 2,
    pin_until: int | None = None,
    summarize: bool = True,
    agent: str = "main",
    writer: TraceWriter | None = None,
    content: str = "full",
) -> TraceWriter:
    """A run recorded the way the runtime records it, with the real WorkingSetBuilder."""
    from arcana_jupyter.context.builder import WorkingSetBuilder
    from arcana_jupyter.context.decisions import TokenBudget
    from arcana_jupyter.context.sections import ContextSection
    from arcana_jupyter.messages import ToolSpec
    from arcana_jupyter.schema.pins import Pin
    from arcana_jupyter.tokens import TokenCounter

    def summarizer(msgs: list[Message]) -> str:
        return "Summary: " + "; ".join(m.content.split(".")[0][:40] for m in msgs if m.content)

    counter = TokenCounter("gpt-4o-mini")
    builder = WorkingSetBuilder(budget=TokenBudget(total_window=total_window, response_reserve=response_reserve),
                                strategy=strategy, counter=counter, summarizer=summarizer if summarize else None,
                                embedder=None)  # its recorded settings name no embedder: lexical, as recorded
    tools = [ToolSpec(name="pin", description="Pin content.", parameters={"type": "object", "properties": {
        "content": {"type": "string"}}})]
    w = writer or TraceWriter(path, run_id, content=content)  # type: ignore[arg-type]
    w.emit_json("run_start", {"model": MODEL, "provider": "openai", "system_prompt": SYSTEM, "tools": [], "config": {}},
                agent=agent)
    history = [Message(role="system", content=SYSTEM)]
    pins: list[Pin] = []
    sections = [ContextSection(name="memory_digest", content="User prefers metric units and short answers.",
                               layer="external")]
    filler = " ".join(f"detail{i}" for i in range(words))
    for turn in range(1, turns + 1):
        w.emit_json("turn_start", {"input_tokens": 10}, turn=turn, agent=agent)
        history.append(Message(role="user", content=f"Question {turn} about region {turn}. {filler}", turn=turn))
        w.emit_json("user_message", {"message": history[-1].record(), "history_index": len(history) - 1}, turn=turn,
                    agent=agent)
        step = 0
        while True:
            live = [p for p in pins if not p.expired(turn)]
            build = builder.build(history, None, pins=live, sections=sections, tools=tools, turn=turn, step=step)
            dec = w.emit_json("context_decision", {
                "step": step, "decision": build.decision.model_dump(mode="json"),
                "report": build.report.model_dump(mode="json"), "budget": build.budget.model_dump(mode="json"),
                "request_digest": build.digest("gpt-4o-mini"), "history_len": len(history),
                "inputs": {"pins": [p.model_dump(mode="json") for p in live],
                           "sections": [s.model_dump(mode="json") for s in sections], "task": None},
                "builder": {"strategy": strategy, "total_window": total_window, "response_reserve": response_reserve,
                            "model": "gpt-4o-mini", "summarizer": summarize, "layout": builder.layout},
                "tools": [t.model_dump(mode="json") for t in tools],
            }, turn=turn, agent=agent)
            w.emit_json("prompt_snapshot", {"turn": turn, "step": step, "model": "gpt-4o-mini",
                                            "messages": build.wire(),
                                            "tools": [t.wire() for t in tools], "response_format": None,
                                            "budget_snapshot": build.budget.model_dump(mode="json")},
                        turn=turn, agent=agent, parent_id=dec.event_id)
            pin_now = step == 0 and turn == pin_turn
            calls = ((ToolCall(id=f"c{turn}", name="pin", arguments=json.dumps({"content": PIN_CONTENT})),)
                     if pin_now else ())
            reply = Message(role="assistant", content="" if calls else f"Answer {turn}: it grew. {filler}",
                            tool_calls=calls, turn=turn)
            history.append(reply)
            call = w.emit_json("llm_call", {"step": step, "gen_ai.request.model": "gpt-4o-mini",
                                            "request_digest": build.digest("gpt-4o-mini"), "message": reply.record(),
                                            "history_index": len(history) - 1}, turn=turn, agent=agent,
                               parent_id=dec.event_id)
            if not calls:
                break
            result = {"pinned": True, "pin_id": "p_0000beef", "label": None, "until_turn": pin_until,
                      "already_pinned": False}
            pins.append(Pin(pin_id="p_0000beef", content=PIN_CONTENT, until_turn=pin_until, created_turn=turn))
            history.append(Message(role="tool", content=json.dumps(result), tool_call_id=f"c{turn}", name="pin",
                                   turn=turn))
            w.emit_json("tool_call", {"tool_call_id": f"c{turn}", "name": "pin", "arguments": {"content": PIN_CONTENT},
                                      "ok": True, "result": history[-1].content, "message": history[-1].record(),
                                      "history_index": len(history) - 1, "intercepted": True},
                        turn=turn, agent=agent, parent_id=call.event_id)
            w.emit_json("cognitive_primitive", {"primitive": "pin", "tool_call_id": f"c{turn}",
                                                "args": {"content": PIN_CONTENT}, "result": result},
                        turn=turn, agent=agent, parent_id=call.event_id)
            step += 1
        w.emit_json("turn_end", {"status": "ok", "reply": history[-1].content, "steps": step + 1}, turn=turn,
                    agent=agent)
    w.emit_json("run_end", {"turns": turns}, agent=agent)
    return w
