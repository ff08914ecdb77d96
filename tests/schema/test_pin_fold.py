"""The one fold of recorded pin changes: its fast path for "which pins are live at turn T" (the
trace reader's question, asked on every replay) agrees with the full fold, on random histories."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arcana_jupyter.schema.pins import Pin, PinChange, fold_pins

CHANGES = st.lists(
    st.builds(
        PinChange,
        op=st.sampled_from(["pin", "unpin"]),
        pin_id=st.sampled_from(["a", "b", "c"]),
        content=st.sampled_from(["x", "y", None]),
        until_turn=st.none() | st.integers(0, 12),
        turn=st.none() | st.integers(0, 12),
    ),
    max_size=30,
)


def _live_by_full_fold(changes: list[PinChange], turn: int) -> dict[str, Pin]:
    upto = [c for c in changes if c.turn is None or c.turn <= turn]
    return {k: p for k, p in fold_pins(upto).items() if p.unpinned_turn is None and not p.expired(turn)}


@settings(max_examples=300, deadline=None)
@given(changes=CHANGES, turn=st.integers(0, 12))
def test_the_live_pins_fast_path_agrees_with_the_full_fold(changes: list[PinChange], turn: int) -> None:
    fast = fold_pins(changes, live_at=turn)
    assert list(fast) == list(_live_by_full_fold(changes, turn))  # same pins, same order
    assert fast == _live_by_full_fold(changes, turn)


@settings(max_examples=100, deadline=None)
@given(changes=CHANGES, turn=st.integers(0, 12))
def test_live_at_with_given_pins_takes_the_full_path(changes: list[PinChange], turn: int) -> None:
    given_pin = Pin(pin_id="z", content="kept", created_turn=0)
    live = fold_pins(changes, pins={"z": given_pin}, live_at=turn)
    assert live["z"] == given_pin
    assert {k: v for k, v in live.items() if k != "z"} == _live_by_full_fold(changes, turn)
