"""decision_record() is exactly model_dump(mode="json"), for every kind of decision the builder makes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arcana_jupyter.context import WorkingSetBuilder
from arcana_jupyter.context.decisions import TokenBudget, decision_record


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.text(min_size=1, max_size=300)),
                min_size=1, max_size=30),
       st.integers(min_value=200, max_value=4000), st.sampled_from(["auto", "tail_preserve", "aggressive_truncate"]))
def test_decision_record_equals_the_pydantic_dump(pairs, window, strategy) -> None:
    history = [{"role": "system", "content": "sys"}] + [{"role": r, "content": c} for r, c in pairs]
    builder = WorkingSetBuilder(budget=TokenBudget(total_window=window, response_reserve=100), strategy=strategy)
    decision = builder.build(history).decision
    assert decision_record(decision) == decision.model_dump(mode="json")
