"""PinState: every row of seed 000's pin tables, without a model."""

from __future__ import annotations

from arcana_jupyter.primitives.pin import PinState
from arcana_jupyter.tokens import TokenCounter


def state(window: int = 1000, fraction: float = 0.5) -> PinState:
    return PinState(TokenCounter(), window, fraction)


def test_pin_returns_seed_shape() -> None:
    s = state()
    r = s.pin({"content": "three load-bearing facts", "label": "key facts"}, turn=1)
    assert r["pinned"] is True
    assert r["pin_id"].startswith("p_") and len(r["pin_id"]) == 10
    assert r == {"pinned": True, "pin_id": r["pin_id"], "label": "key facts", "until_turn": None,
                 "already_pinned": False}


def test_same_content_twice_is_idempotent_and_first_label_wins() -> None:
    s = state()
    first = s.pin({"content": "fact A", "label": "original"}, turn=1)
    second = s.pin({"content": "fact A", "label": "other"}, turn=2)
    assert second["already_pinned"] is True
    assert second["pin_id"] == first["pin_id"]
    assert second["label"] == "original"
    assert len(s.active(2)) == 1


def test_budget_cap_rejects_with_diagnosis_and_never_evicts() -> None:
    s = state(window=100, fraction=0.5)  # cap 50 tokens
    ok = s.pin({"content": "alpha " * 30}, turn=1)
    assert ok["pinned"]
    before = [p.model_copy() for p in s.active(1)]
    r = s.pin({"content": "beta " * 30}, turn=1)
    assert r["pinned"] is False
    assert r["reason"] == "pin_budget_exceeded"
    assert r["cap"] == 50
    assert r["current_pin_tokens"] == before[0].tokens
    assert r["requested_tokens"] == TokenCounter().count_text("beta " * 30)
    assert "unpin older content" in r["suggestion"] and ok["pin_id"] in r["suggestion"]
    assert s.active(1) == before  # never auto-unpinned, never truncated


def test_until_turn_expiry_keeps_the_pin_recorded() -> None:
    s = state()
    r = s.pin({"content": "plan until turn 3", "until_turn": 3}, turn=1)
    assert [p.pin_id for p in s.active(3)] == [r["pin_id"]]
    assert s.active(4) == []
    assert r["pin_id"] in s.pins  # still there for replay


def test_unpin_and_unknown_pin() -> None:
    s = state()
    r = s.pin({"content": "x"}, turn=1)
    assert s.unpin({"pin_id": r["pin_id"]}, turn=2) == {"unpinned": True, "pin_id": r["pin_id"], "label": None}
    assert s.active(2) == []
    assert s.active(1) != []  # history of what was active is preserved
    unknown = s.unpin({"pin_id": "p_nope"}, turn=2)
    assert unknown["unpinned"] is False and unknown["reason"] == "unknown_pin_id"
    again = s.unpin({"pin_id": r["pin_id"]}, turn=3)
    assert again["reason"] == "pin_not_active"


def test_pinning_again_after_unpin_creates_a_new_pin() -> None:
    s = state()
    a = s.pin({"content": "x"}, turn=1)
    s.unpin({"pin_id": a["pin_id"]}, turn=2)
    b = s.pin({"content": "x"}, turn=2)
    assert b["already_pinned"] is False and b["pin_id"] != a["pin_id"]


def test_wrong_arguments_are_structured() -> None:
    s = state()
    for args in ({}, {"content": ""}, {"content": 5}, {"content": "x", "until_turn": "soon"},
                 {"content": "x", "label": 3}, {"content": "x", "colour": "red"}, {"content": "x", "until_turn": 0}):
        r = s.pin(args, turn=2)
        assert r["pinned"] is False and r["reason"] == "invalid_arguments", args
        assert r["problems"]
    assert s.unpin({}, turn=1)["reason"] == "invalid_arguments"


def test_restore_folds_recorded_calls_into_the_same_state() -> None:
    from arcana_jupyter.schema.events import CognitivePrimitiveMetadata

    live = state()
    recorded = []
    for turn, primitive, args in [(1, "pin", {"content": "fact A", "label": "a"}), (2, "pin", {"content": "fact B"}),
                                  (2, "pin", {"content": "fact A"}), (3, "unpin", {"pin_id": None}),
                                  (3, "pin", {"content": ""})]:
        if primitive == "unpin":
            args = {"pin_id": next(iter(live.pins))}
        result = live.pin(args, turn) if primitive == "pin" else live.unpin(args, turn)
        recorded.append((turn, CognitivePrimitiveMetadata(primitive=primitive, args=args, result=result)))
    changes = [(turn, md.pin_change()) for turn, md in recorded]
    assert [c.op if c else None for _, c in changes] == ["pin", "pin", None, "unpin", None]

    again = state()
    again.restore([(turn, c) for turn, c in changes if c is not None])
    assert again.pins == live.pins  # unpinned pins kept too, with their unpinned_turn
    assert again.pin({"content": "fact C"}, 4) == live.pin({"content": "fact C"}, 4)  # same next pin id
