"""recall(): every failure row of seed 000's table, the include filters, and the trace fallback."""

from __future__ import annotations

from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.primitives.recall import recall

HISTORY = [
    Message(role="system", content="sys"),
    Message(role="user", content="plan the refactor", turn=1),
    Message(role="assistant", content="", tool_calls=(ToolCall(id="c1", name="grep", arguments="{}"),), turn=1),
    Message(role="tool", content="3 matches", tool_call_id="c1", name="grep", turn=1),
    Message(role="assistant", content="Step 1: split the module", turn=1),
    Message(role="user", content="next", turn=2),
    Message(role="assistant", content="ok", turn=2),
]


def call(args: dict, completed: int = 2, trace=None) -> dict:
    return recall(args, live_history=HISTORY, completed_turns=completed, trace_history=trace)


def test_all_messages_of_a_turn() -> None:
    r = call({"turn": 1})
    assert r["found"] is True and r["note"] is None and r["turn"] == 1
    assert [m["role"] for m in r["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert r["messages"][0] == {"role": "user", "content": "plan the refactor"}


def test_include_filters() -> None:
    assert [m["content"] for m in call({"turn": 1, "include": "assistant_only"})["messages"]] == [
        "", "Step 1: split the module"]
    tc = call({"turn": 1, "include": "tool_calls"})["messages"]
    assert [m["role"] for m in tc] == ["assistant", "tool"]
    assert tc[0]["tool_calls"][0]["name"] == "grep" and tc[1]["tool_call_id"] == "c1"


def test_failure_rows() -> None:
    assert call({"turn": 999}) == {"turn": 999, "found": False, "messages": [],
                                   "note": "turn out of range: 999, max=2"}
    r = call({"turn": 0})
    assert r["found"] is False and r["note"].startswith("turn must be 1 or greater")
    r = call({"turn": 1}, completed=0)
    assert r["found"] is False and r["note"].startswith("trace not available")


def test_wrong_argument_types_are_structured() -> None:
    for args in ({"turn": "three"}, {"turn": None}, {}, {"turn": 1.5}, {"turn": True}):
        r = call(args)
        assert r["found"] is False and "integer" in r["note"], args
    assert call({"turn": "1"})["found"] is True  # a numeric string is understood
    r = call({"turn": 1, "include": "everything"})
    assert r["found"] is False and "include must be one of" in r["note"]
    r = call({"turn": 1, "verbose": True})
    assert r["found"] is False and "unknown argument" in r["note"]


def test_trace_fallback_when_live_history_lacks_the_turn() -> None:
    recorded = [Message(role="user", content="from the trace", turn=1)]
    r = recall({"turn": 1}, live_history=[], completed_turns=1, trace_history=lambda: recorded)
    assert r["found"] is True and r["source"] == "trace" and r["messages"][0]["content"] == "from the trace"
    r = recall({"turn": 1}, live_history=[], completed_turns=1, trace_history=lambda: None)
    assert r["found"] is False and r["note"].startswith("trace not available")
