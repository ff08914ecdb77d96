"""Properties over random histories and budgets: never over budget, complete decisions, pairing, determinism."""

from __future__ import annotations

import json

from ctx_helpers import check_invariants
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arcana_jupyter.context import ContextSection, Pin, TokenBudget, WorkingSetBuilder
from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.tokens import REPLY_PRIMING, TokenCounter

COUNTER = TokenCounter()
WORDS = ["data", "frame", "orders", "error", "Traceback", "plot", "region", "sales", "the", "x1", "ok", "é", "数据"]

text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=120).map(" ".join)


@st.composite
def histories(draw) -> list[Message]:
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(Message(role="system", content=draw(text)))
    n = draw(st.integers(0, 40))
    for k in range(n):
        kind = draw(st.sampled_from(["user", "assistant", "tool_unit", "user"]))
        turn = k // 2 + 1 if draw(st.booleans()) else None
        if kind == "tool_unit":
            calls = tuple(ToolCall(id=f"c{k}_{j}", name=draw(st.sampled_from(["read", "run"])),
                                   arguments=draw(st.sampled_from(['{"p": 1}', '{"p": 2}'])))
                          for j in range(draw(st.integers(1, 2))))
            out.append(Message(role="assistant", content=draw(text), tool_calls=calls, turn=turn))
            for c in calls:
                out.append(Message(role="tool", content=draw(text) * draw(st.integers(1, 4)), tool_call_id=c.id,
                                   turn=turn))
        else:
            out.append(Message(role=kind, content=draw(text), turn=turn))
    return out


@settings(max_examples=int(__import__("os").environ.get("CTX_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    history=histories(),
    window=st.integers(1, 3000),
    reserve=st.integers(0, 500),
    strategy=st.sampled_from(["auto", "passthrough", "tail_preserve", "aggressive_truncate", "llm_summarize"]),
    n_pins=st.integers(0, 2),
    sections=st.lists(st.tuples(st.sampled_from(["memory_digest", "checkpoint", "state"]), text,
                                st.sampled_from(["head", "late"])), max_size=3),
    current=st.one_of(st.none(), text),
    summarize=st.booleans(),
    task=st.one_of(st.none(), text),
    policy=st.sampled_from([{}, {"drop_policy": "blocks"}, {"drop_policy": "blocks", "block_recall_min": 0}]),
)
def test_budget_never_exceeded_and_decisions_complete(history, window, reserve, strategy, n_pins, sections, current,
                                                      summarize, task, policy):
    budget = TokenBudget(total_window=window, response_reserve=reserve)
    pins = [Pin(pin_id=f"p{k}", content=f"pinned fact {k}", until_turn=3 if k else None) for k in range(n_pins)]
    secs = [ContextSection(name=name, content=body, placement=place) for name, body, place in sections]
    summarizer = (lambda ms: "summary: " + " ".join(m.role for m in ms)) if summarize else None
    kwargs = dict(task=task or None, pins=pins, sections=secs, turn=5)
    r = WorkingSetBuilder(budget=budget, strategy=strategy, summarizer=summarizer, **policy).build(
        history, current, **kwargs)
    n_inputs = len(history) + (current is not None) + (1 if task else 0) + len(pins) + len(secs)
    check_invariants(r, n_inputs)
    assert r.budget.used == COUNTER.count_messages(r.messages) + r.report.tools_tokens
    if r.budget.overflow:
        # only when what must be kept does not fit: system, task, live pins, checkpoint, current unit
        must = [m for m, d in zip(r.messages, sorted((d for d in r.decision.decisions if d.position is not None),
                                                     key=lambda d: d.position), strict=True)]
        assert sum(COUNTER.count_message(m) for m in must) + REPLY_PRIMING > budget.available
        assert r.decision.notes
    # deterministic, and independent of what the builder saw before
    warm = WorkingSetBuilder(budget=budget, strategy=strategy, summarizer=summarizer, **policy)
    warm.build(history[: len(history) // 2], turn=2)
    again = warm.build(history, current, **kwargs)
    assert json.dumps(again.decision.model_dump(mode="json")) == json.dumps(r.decision.model_dump(mode="json"))
    assert again.digest("m") == r.digest("m")
    # pins are never compressed
    for d in r.decision.decisions:
        if d.source == "pin" and d.reason == "pinned":
            assert d.fidelity == "L0" and d.token_count_after == d.token_count_before
        if d.source == "section" and d.section == "checkpoint":
            assert d.outcome == "kept" and d.fidelity == "L0"
