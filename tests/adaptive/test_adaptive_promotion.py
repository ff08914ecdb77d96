"""Promotion before the prompt: keyword substring first, then normalised BM25 at threshold 0.15."""

from __future__ import annotations

import pytest

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.text import BM25Index

from .conftest import Recorder, quiet_turn

BASE = [
    ("Archive exports", "Nightly job copies the parquet exports to the archive storage"),
    ("Revenue plot", "Plot monthly revenue per store"),
    ("Customer cleanup", "Clean the customer table"),
    ("Latency check", "Check latency of the API"),
]


def _make(rec: Recorder, notes: list[tuple[str, str]]) -> AdaptiveEngine:
    engine = AdaptiveEngine(emit=rec, idle_soft_after_turns=1, idle_hard_after_turns=3)
    engine.begin_turn(1, "x")
    for title, text in notes:
        engine.note(text, title=title, turn=1)
    engine.end_turn(1, [])
    quiet_turn(engine, 2)  # everything soft
    assert all(o.tier == "soft" for o in engine.objects())
    return engine


def test_keyword_is_a_substring_match_on_the_summary(rec: Recorder) -> None:
    engine = _make(rec, [("Upload retries", "Retry failed S3 uploads three times"), *BASE])
    promos = engine.begin_turn(3, "the UPLOAD broke again")  # case-insensitive; 'upload' inside 'Upload retries'
    assert [(p.object_id, p.cause) for p in promos] == [("s_1", "keyword:upload")]
    assert engine.get("s_1").tier == "active"  # type: ignore[union-attr]


def test_first_keyword_in_input_order_names_the_cause(rec: Recorder) -> None:
    engine = _make(rec, [("Revenue store plot", "monthly")])
    [p] = engine.begin_turn(3, "store revenue please")
    assert p.cause == "keyword:store"


def test_stop_words_and_short_words_are_not_keywords(rec: Recorder) -> None:
    engine = _make(rec, [("The plan for an ML model", "x")])
    assert engine.begin_turn(3, "what about the plan for it?")[0].cause == "keyword:plan"
    engine2 = _make(Recorder(), [("The plan for an ML model", "x")])
    # 'the', 'for', 'an' are stop words, 'ml' is shorter than 3: no keyword; BM25 on 'ml' alone is
    # a full match of the (one-word) query, so that path promotes instead
    [p] = engine2.begin_turn(3, "the ml for an")
    assert p.cause.startswith("bm25:")


def test_bm25_path_for_objects_without_a_keyword_hit(rec: Recorder) -> None:
    notes = [("Deploy pipeline", "upload the build artifacts to the AWS bucket every night"), *BASE]
    engine = _make(rec, notes)
    promos = engine.begin_turn(3, "bucket upload")
    assert len(promos) == 1
    p = promos[0]
    assert p.object_id == "s_1" and p.cause.startswith("bm25:") and p.score is not None and p.score >= 0.15
    assert p.cause == f"bm25:{p.score:.4f}"
    [event] = rec.of("state_change", cause=p.cause)
    assert event["from_tier"] == "soft" and event["to_tier"] == "active"


def test_keyword_hit_objects_are_not_bm25_scored_twice(rec: Recorder) -> None:
    engine = _make(rec, [("bucket cleanup", "remove old files"), ("Deploy", "bucket upload nightly"), *BASE])
    promos = engine.begin_turn(3, "bucket upload")
    assert {p.object_id: p.cause.split(":")[0] for p in promos} == {"s_1": "keyword", "s_2": "bm25"}
    assert len(rec.of("state_change", object_id="s_1", to_tier="active", from_tier="soft")) == 1


def _target(fill: int) -> tuple[str, str]:
    return ("Report layout", "Report layout: " + " ".join(f"w{i}" for i in range(fill)) + " bucket")


def _score(fill: int, query: str) -> float:
    """The real scorer over the same corpus the engine indexes (every live object's search text)."""
    rec = Recorder()
    engine = _make(rec, [*BASE, _target(fill)])
    index = BM25Index()
    for o in engine.objects():
        index.add(o.search_text())
    return index.normalised_scores(query).get(len(BASE), 0.0)


QUERY = "bucket upload retry"


@pytest.fixture(scope="module")
def straddle() -> tuple[int, float, int, float]:
    """Two payload lengths whose scores sit just above and just below 0.15."""
    scores = {fill: _score(fill, QUERY) for fill in range(0, 40)}
    above = max((f for f, s in scores.items() if s >= 0.15), key=lambda f: f)
    below = above + 1
    return above, scores[above], below, scores[below]


def test_bm25_threshold_just_above(straddle: tuple[int, float, int, float]) -> None:
    above, s_above, _, _ = straddle
    assert 0.15 <= s_above < 0.16  # really close to the threshold
    rec = Recorder()
    engine = _make(rec, [*BASE, _target(above)])
    promos = engine.begin_turn(3, QUERY)
    assert [(p.object_id, p.cause) for p in promos] == [("s_5", f"bm25:{s_above:.4f}")]


def test_bm25_threshold_just_below(straddle: tuple[int, float, int, float]) -> None:
    _, _, below, s_below = straddle
    assert 0.14 < s_below < 0.15
    rec = Recorder()
    engine = _make(rec, [*BASE, _target(below)])
    assert engine.begin_turn(3, QUERY) == []
    assert engine.get("s_5").tier == "soft"  # type: ignore[union-attr]
    assert rec.of("state_change", object_id="s_5", to_tier="active")[1:] == []  # only its creation


def test_threshold_is_configurable(straddle: tuple[int, float, int, float]) -> None:
    _, _, below, _ = straddle
    engine = AdaptiveEngine(bm25_threshold=0.10, idle_soft_after_turns=1, idle_hard_after_turns=3)
    engine.begin_turn(1, "x")
    for title, text in [*BASE, _target(below)]:
        engine.note(text, title=title, turn=1)
    engine.end_turn(1, [])
    quiet_turn(engine, 2)
    assert [p.object_id for p in engine.begin_turn(3, QUERY)] == ["s_5"]


def test_active_and_retracted_objects_are_not_promoted(rec: Recorder) -> None:
    engine = _make(rec, [("Upload retries", "x"), ("Upload quotas", "y")])
    engine.hydrate("s_1", turn=3)
    engine.retract("s_2", turn=3)
    assert engine.begin_turn(3, "upload") == []


def test_empty_or_stopword_input_promotes_nothing(rec: Recorder) -> None:
    engine = _make(rec, BASE)
    assert engine.begin_turn(3, "") == []
    assert engine.begin_turn(3, "and the of") == []


def test_keyword_scan_matches_the_naive_rule() -> None:
    from arcana_jupyter.adaptive.promotion import _keyword_hits

    texts = ["upload retries", "", "bucket upload", "cache", "uploadbucket", "xyz"]
    kws = ["bucket", "upload", "cac"]
    naive = {i: next(k for k in kws if k in t) for i, t in enumerate(texts) if any(k in t for k in kws)}
    assert _keyword_hits(kws, texts) == naive == {0: "upload", 2: "bucket", 3: "cac", 4: "bucket"}
    assert _keyword_hits([], texts) == {} and _keyword_hits(kws, []) == {}
