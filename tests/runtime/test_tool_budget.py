"""The runtime's own tools within their share of the prompt budget (runtime/tool_budget.py)."""

from __future__ import annotations

from arcana_jupyter.adaptive.tools import adaptive_tools
from arcana_jupyter.runtime.builtin_tools import PIN_TOOL, RECALL_TOOL, UNPIN_TOOL
from arcana_jupyter.runtime.tool_budget import PRIORITY, compact_spec, offer, tool_cap
from arcana_jupyter.tokens import TokenCounter

SPECS = [RECALL_TOOL.spec, PIN_TOOL.spec, UNPIN_TOOL.spec, *(t.spec for t in adaptive_tools())]
COUNTER = TokenCounter()


def test_all_in_full_when_they_fit():
    full = COUNTER.count_tools(SPECS)
    got = offer(SPECS, full * 10 + 1000, COUNTER)
    assert got.specs == SPECS and got.held_back == [] and not got.compact and got.note() is None


def test_compact_then_the_most_useful_first_within_the_share():
    for available in (1536, 3072, 7168):
        got = offer(SPECS, available, COUNTER)
        assert got.tokens == COUNTER.count_tools(got.specs) <= tool_cap(available) == (available - 1000) // 10
        names = [s.name for s in got.specs]
        assert names == [s.name for s in SPECS if s.name in names]  # in the order given: a stable list
        kept = set(names)
        ranked = sorted(SPECS, key=lambda s: PRIORITY.index(s.name))
        # a strict prefix of the priorities: nothing offered after one that was held back
        assert kept == {s.name for s in ranked[:len(kept)]}
        assert got.held_back == [s.name for s in ranked[len(kept):]]
        if got.held_back:
            assert "held back: " + ", ".join(got.held_back) in (got.note() or "")
    assert offer(SPECS, 800, COUNTER).held_back  # a small window cannot take them all
    assert len(offer(SPECS, 7168, COUNTER).specs) > len(offer(SPECS, 3072, COUNTER).specs)
    assert offer(SPECS, 800, COUNTER).specs == [] and tool_cap(800) == 0  # a 1k window: all for the conversation


def test_a_compact_spec_keeps_the_schema_and_the_first_sentence():
    pin = compact_spec(PIN_TOOL.spec)
    assert pin.description.rstrip(".") == PIN_TOOL.spec.description.split(". ")[0].rstrip(".")
    assert pin.parameters["required"] == PIN_TOOL.spec.parameters["required"]
    assert set(pin.parameters["properties"]) == set(PIN_TOOL.spec.parameters["properties"])
    assert all("description" not in p for p in pin.parameters["properties"].values())
    assert COUNTER.count_tools([pin]) < COUNTER.count_tools([PIN_TOOL.spec])
