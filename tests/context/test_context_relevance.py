"""Relevance: the incremental BM25 index, error detection, the combined score."""

from __future__ import annotations

from arcana_jupyter.context.history import HistoryState, MessageInfo
from arcana_jupyter.context.relevance import RelevanceIndex, combined, looks_like_error, message_text, static_score
from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.text import BM25Index


def test_index_matches_a_one_shot_bm25_and_scores_only_candidates():
    texts = ["the orders table has a shipped_at column", "my cat likes tuna", "orders grew in the north region",
             "coffee brewing tips"]
    idx = RelevanceIndex()
    for t in texts:
        idx.add(Message(role="user", content=t))
    ref = BM25Index()
    ref.extend(texts)
    assert idx.scores("orders shipped_at") == ref.normalised_scores("orders shipped_at")
    assert set(idx.scores("orders")) == {0, 2}
    assert idx.scores("orders", limit=1) == {0: ref.normalised_scores("orders", [0])[0]}
    assert idx.scores("the of") == {}


def test_error_detection():
    assert looks_like_error('Traceback (most recent call last):\n  File "x"\nKeyError: 3')
    assert looks_like_error("ValueError: bad") and looks_like_error("error: not found")
    assert looks_like_error("the build failed")
    assert not looks_like_error("everything is fine, no errors here")
    assert not looks_like_error("Error-free run of the mirror script")
    assert not looks_like_error("all good")
    assert looks_like_error("x" * 100_000 + "\nZeroDivisionError: division by zero")


def test_tool_calls_are_indexed_with_their_arguments():
    m = Message(role="assistant", content="",
                tool_calls=(ToolCall(id="1", name="read_csv", arguments='{"path": "sales.csv"}'),))
    assert "read_csv" in message_text(m) and "sales.csv" in message_text(m)


def test_combined_score_weights():
    user_err = static_score("user", True)
    tool = static_score("tool", False)
    assert user_err > tool
    assert combined(1.0, 0, user_err) == 1.0
    assert combined(0.0, 0, tool) < combined(0.0, 0, user_err)
    assert combined(0.5, 16, tool) < combined(0.5, 0, tool)


def test_history_state_units_and_superseded_results():
    state = HistoryState()
    c1 = ToolCall(id="a", name="read", arguments='{"p": 1}')
    c2 = ToolCall(id="b", name="read", arguments='{"p": 1}')
    msgs = [Message(role="system", content="sys"), Message(role="user", content="go"),
            Message(role="assistant", content="", tool_calls=(c1,)),
            Message(role="tool", content="r1", tool_call_id="a"),
            Message(role="user", content="again"),
            Message(role="assistant", content="", tool_calls=(c2,)),
            Message(role="tool", content="r2", tool_call_id="b")]
    for m in msgs:
        state.append(MessageInfo(m, 5))
    assert state.identity == 0
    assert state.units == [[1], [2, 3], [4], [5, 6]]
    assert state.unit_cost == [5, 10, 5, 10]
    assert state.stale() == {3}
    assert state.turns == [None, 1, 1, 1, 2, 2, 2]
    fork = state.fork()
    fork.append(MessageInfo(Message(role="user", content="next"), 5), index_text=False)
    assert len(state.msgs) == 7 and len(fork.msgs) == 8 and len(state.rel) == 7


def test_numbers_are_found_lazily_and_kept_up_to_date():
    idx = RelevanceIndex()
    idx.add(Message(role="user", content="invoice 48213 was paid twice"))
    for k in range(20):
        idx.add(Message(role="assistant", content=f"row {k} value {k * 7}"))
    assert set(idx.scores("what happened to invoice 48213")) == {0}
    assert set(idx.scores("48213")) == {0}
    idx.add(Message(role="tool", content="48213,paid,2024-01-02"))
    assert set(idx.scores("48213")) == {0, 21}
