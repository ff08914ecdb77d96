"""ArtifactStore: large outputs stored whole behind a bounded card, read back by slices."""

from __future__ import annotations

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.tools import handle
from arcana_jupyter.tokens import TokenCounter

from .conftest import Recorder

CSV = "\n".join(["city,temp,rain"] + [f"c{i},{i % 40},{i % 7}" for i in range(3000)])


def test_small_output_passes_through(engine: AdaptiveEngine, rec: Recorder) -> None:
    assert engine.ingest_tool_output(1, "run_python", "42") == "42"
    assert len(engine.artifacts) == 0 and rec.of("context_action") == []


def test_large_output_becomes_a_bounded_card(engine: AdaptiveEngine, rec: Recorder) -> None:
    card = engine.ingest_tool_output(2, "run_python", CSV, tool_call_id="call_9")
    counter = TokenCounter()
    assert counter.count_text(card) <= engine.config.artifact_card_tokens
    assert card.startswith("[artifact a_1 · tool:run_python · table · ")
    assert "CSV table: 3,000 rows x 3 columns" in card and "columns: city, temp, rain" in card
    assert "city,temp,rain\nc0,0,0" in card  # the head
    assert 'retrieve_artifact("a_1")' in card
    art = engine.artifacts.get("a_1")
    assert art is not None and art.content == CSV and art.turn == 2 and art.tool_call_id == "call_9"
    assert art.tokens == counter.count_text(CSV) and art.chars == len(CSV)
    [event] = rec.of("context_action", action="store_artifact")
    assert event["object_id"] == "a_1" and event["artifact"]["content"] == CSV


def test_card_bound_holds_for_a_huge_distillation() -> None:
    engine = AdaptiveEngine(artifact_min_tokens=50, artifact_card_tokens=64)
    lines = "\n".join(f"2026-01-01 ERROR {'x' * 300} {i}" for i in range(200))
    card = engine.ingest_tool_output(1, "shell", lines)
    assert TokenCounter().count_text(card) <= 64
    assert card.startswith("[artifact a_1 · log · ") and 'retrieve_artifact("a_1", offset, limit)' in card
    assert "Log: 200 lines; ERROR 200" in card


def test_retrieve_with_offset_and_limit(engine: AdaptiveEngine) -> None:
    engine.ingest_tool_output(1, "run_python", CSV)
    first = handle(engine, "retrieve_artifact", 1, {"id": "a_1"})
    assert first["ok"] and first["offset"] == 0 and first["end"] == 4000 and first["content"] == CSV[:4000]
    assert first["next_offset"] == 4000 and first["total_chars"] == len(CSV) and first["kind"] == "table"
    page = handle(engine, "retrieve_artifact", 1, {"id": "a_1", "offset": 4000, "limit": 100})
    assert page["content"] == CSV[4000:4100] and page["next_offset"] == 4100
    tail = handle(engine, "retrieve_artifact", 1, {"id": "a_1", "offset": len(CSV) - 10, "limit": 1000})
    assert tail["content"] == CSV[-10:] and tail["next_offset"] is None
    capped = handle(engine, "retrieve_artifact", 1, {"id": "a_1", "limit": 10**9})
    assert len(capped["content"]) == engine.config.retrieve_max_chars


def test_retrieve_errors(engine: AdaptiveEngine, rec: Recorder) -> None:
    engine.ingest_tool_output(1, "run_python", CSV)
    missing = handle(engine, "retrieve_artifact", 1, {"id": "a_7"})
    assert missing["ok"] is False and missing["error"] == "no artifact 'a_7'" and "a_1" in missing["hint"]
    past = handle(engine, "retrieve_artifact", 1, {"id": "a_1", "offset": len(CSV) + 1})
    assert past["ok"] is False and "outside" in past["error"]
    bad = handle(engine, "retrieve_artifact", 1, {"id": "s_1"})
    assert bad["ok"] is False and bad["error"] == "invalid_arguments"
    negative = handle(engine, "retrieve_artifact", 1, {"id": "a_1", "offset": -1})
    assert negative["error"] == "invalid_arguments"
    logged = rec.of("context_action", action="retrieve_artifact")
    assert len(logged) == 4 and all("content" not in e["result"] for e in logged)


def test_content_less_trace_leaves_a_clear_error(engine: AdaptiveEngine, rec: Recorder) -> None:
    engine.ingest_tool_output(1, "run_python", CSV)
    for e in rec.events:  # what a trace_content="none" trace keeps
        if e["metadata"].get("action") == "store_artifact":
            e["metadata"]["artifact"]["content"] = None
    replayed = AdaptiveEngine.from_events(rec.events)
    r = replayed.retrieve_artifact("a_1")
    assert r["ok"] is False and "without content" in r["error"]


def test_adaptive_tool_results_are_never_carded(engine: AdaptiveEngine) -> None:
    assert engine.ingest_tool_output(1, "search_turn_events", CSV) == CSV


def test_search_finds_old_tool_output_and_digests(engine: AdaptiveEngine) -> None:
    engine.begin_turn(1, "load the weather file")
    card = engine.ingest_tool_output(1, "run_python", CSV, tool_call_id="c1")
    engine.end_turn(1, [
        {"role": "user", "content": "Load weather.csv and summarise rainfall"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "run_python", "arguments": "{}"}]},
        {"role": "tool", "tool_call_id": "c1", "content": card},
        {"role": "assistant", "content": "Rainfall peaks in city c6."},
    ])
    for t in range(2, 12):
        engine.begin_turn(t, "other things")
        engine.end_turn(t, [{"role": "user", "content": f"unrelated topic {t}"},
                            {"role": "assistant", "content": "ok"}])
    r = engine.search_turn_events("rainfall weather")
    assert r["ok"] and r["results"] and all(x["turn"] == 1 for x in r["results"])
    types = {x["type"] for x in r["results"]}
    assert {"turn_digest", "user"} <= types
    tool = engine.search_turn_events("city temp rain table")["results"][0]
    assert tool["type"] == "tool" and tool["name"] == "run_python" and tool["artifact"] == "a_1"
    assert len(engine.search_turn_events("topic", limit=3)["results"]) == 3
    none = engine.search_turn_events("xylophone")
    assert none["results"] == [] and "hint" in none


def test_threshold_counts_tokens_not_characters() -> None:
    engine = AdaptiveEngine(artifact_min_tokens=100)
    emoji = "🦜" * 60  # 60 characters, far more than 100 tokens
    assert TokenCounter().count_text(emoji) > 100
    assert engine.ingest_tool_output(1, "t", emoji).startswith("[artifact a_1")
    ascii_text = "word " * 90  # 450 characters, under 100 tokens
    assert TokenCounter().count_text(ascii_text) <= 100
    assert engine.ingest_tool_output(1, "t", ascii_text) == ascii_text
