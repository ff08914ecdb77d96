"""The learned fusion: its features mean what they say, its order becomes a match on the reciprocal-rank scale,
a published version keeps its weights, and a fact outranks a short reaction that sits as close to the question."""

from __future__ import annotations

import numpy as np
import pytest

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context import learned_fusion as lf
from arcana_jupyter.context.build import Build
from arcana_jupyter.context.relevance import DEFAULT_FUSION, RRF_FUSION, parse_fusion, question_core
from arcana_jupyter.messages import Message


def column(x: np.ndarray, name: str) -> list[float]:
    return [round(float(v), 6) for v in x[:, lf.FEATURES.index(name)]]


def test_each_feature_is_what_its_name_says() -> None:
    sims = np.array([0.0, 0.5, 0.1, 0.3, 0.1])
    lexical = {3: 1.0, 1: 0.5}
    core = np.array([0.2, 0.1, 0.6, 0.1, 0.0])
    x = lf.features(sims, lexical, {3: 0.8, 1: 0.2}, [0, 0, 1, 1, 0], [3, 10, 0, 60, 1], [0, 1, 0, 1, 0], core)
    assert x.shape == (5, len(lf.FEATURES))
    z = (sims - sims.mean()) / sims.std()
    assert column(x, "zs") == [round(float(v), 6) for v in z]
    assert column(x, "gap") == [-0.5, 0.0, -0.4, -0.2, -0.4]
    # cosine ranks 1..5 (ties: the earlier first): doc 1, 3, 2, 4, 0
    assert column(x, "rs10") == [round(10 / 15, 6), round(10 / 11, 6), round(10 / 13, 6), round(10 / 12, 6),
                                 round(10 / 14, 6)]
    assert column(x, "rb") == [0.0, round(60 / 62, 6), 0.0, round(60 / 61, 6), 0.0]
    assert column(x, "bm") == [0.0, 0.5, 0.0, 1.0, 0.0]
    assert column(x, "head") == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert column(x, "other_speaker") == [0.0, 0.0, 1.0, 1.0, 0.0]
    assert column(x, "lwords") == [round(float(np.log1p(w)), 6) for w in (3, 10, 0, 60, 1)]
    assert column(x, "nbz") == [round(float(v), 6) for v in (z[1], max(z[0], z[2]), max(z[1], z[3]),
                                                               max(z[2], z[4]), z[3])]
    assert column(x, "nbbm") == [0.5, 0.0, 1.0, 0.0, 1.0]
    assert column(x, "user") == [0.0, 1.0, 0.0, 1.0, 0.0]
    assert column(x, "zc") == [round(float(v), 6) for v in (core - core.mean()) / core.std()]
    # without the core's cosines: the eleven columns version 1 reads, the same
    assert np.array_equal(lf.features(sims, lexical, {3: 0.8, 1: 0.2}, [0, 0, 1, 1, 0], [3, 10, 0, 60, 1],
                                      [0, 1, 0, 1, 0]), x[:, :11])
    assert lf.features(np.zeros(0), {}, {}, [], [], []).shape == (0, len(lf.FEATURES) - 1)
    assert lf.features(np.zeros(0), {}, {}, [], [], [], np.zeros(0)).shape == (0, len(lf.FEATURES))
    # a tool's output or a pasted file counts as long as the longest turn the weights were fitted on, no longer
    long = lf.features(np.array([0.2, 0.2]), {}, {}, [0, 0], [lf.WORDS_CAP, 5000], [0, 0])
    assert column(long, "lwords")[0] == column(long, "lwords")[1] == round(float(np.log1p(lf.WORDS_CAP)), 6)


def test_the_learned_order_becomes_a_match_on_the_reciprocal_rank_scale() -> None:
    n = lf.CANDIDATES + 60
    sims = np.linspace(0.9, 0.2, n)
    x = lf.features(sims, {}, {}, [0] * n, [20] * n, [1] * n)
    match, via = lf.learned_match(x, {}, sims, 1, 0.1, 0.2)
    order = sorted(match, key=lambda d: (-match[d], d))
    assert len(match) == lf.CANDIDATES and len(order) == len(set(order))
    assert match[order[0]] == 1.0 and match[order[9]] == round(61 / 70, 6)
    assert set(via.values()) == {"semantic"}
    assert lf.learned_match(x, {}, sims, 1, 0.1, 0.2) == (match, via)


def test_only_a_cosine_over_the_floor_or_a_bm25_hit_gets_a_match_and_via_names_a_literal_hit() -> None:
    sims = np.array([0.0, 0.05, 0.05, 0.6, 0.05, 0.3])
    lexical = {1: 1.0, 2: 0.1}
    x = lf.features(sims, lexical, {1: 1.0}, [0] * 6, [30] * 6, [1] * 6)
    match, via = lf.learned_match(x, lexical, sims, 1, 0.1, 0.2)
    assert set(match) == {1, 2, 3, 5}  # 0 and 4: under the cosine floor, no BM25
    assert via[1] == "bm25"  # BM25's best, ranked above its cosine
    assert via[2] == "semantic"  # a BM25 score under the floor is not a literal hit
    assert via[3] == "semantic"


def test_a_published_version_keeps_its_weights_and_an_unknown_one_says_so() -> None:
    assert DEFAULT_FUSION.method == "learned" and DEFAULT_FUSION.model == 2
    assert lf.MODELS[1] == ((1.060, 5.936, -1.045, 1.415, -0.919, 1.438, -12.438, 2.449, 0.218, 0.542, 0.220), -7.647)
    assert lf.MODELS[2] == ((0.447, 5.691, -1.363, 1.208, -1.008, 1.370, -13.222, 2.414, 0.185, 0.591, 0.272, 0.789),
                            -7.741)
    assert len(lf.MODELS[1][0]) == len(lf.FEATURES) - 1 and len(lf.MODELS[2][0]) == len(lf.FEATURES)
    assert not lf.needs_core(1) and lf.needs_core(2) and not lf.needs_core(7)
    with pytest.raises(ValueError, match=r"no learned fusion model 7 .*upgrade"):
        lf.scores(np.zeros((1, len(lf.FEATURES))), 7)
    # version 1 reads its eleven columns of a twelve-column matrix; version 2 refuses eleven
    x = np.arange(24, dtype=np.float64).reshape(2, 12)
    assert np.allclose(lf.scores(x, 1), x[:, :11] @ np.asarray(lf.MODELS[1][0]) + lf.MODELS[1][1])
    with pytest.raises(ValueError, match="reads 12 features, got 11"):
        lf.scores(x[:, :11], 2)
    assert parse_fusion(DEFAULT_FUSION.spec()) == DEFAULT_FUSION


@pytest.mark.parametrize(("question", "named", "core"), [
    ("Would Rosalind enjoy a visit to a botanical garden?", {"rosalind"}, "visit botanical garden"),
    ("How many cats is Harper looking after?", {"harper"}, "cats looking"),
    ("What might Leon think of a week-long cruise?", {"leon"}, "week long cruise"),
    ("Which plot shows the error rate by region?", set(), "plot shows error rate region"),
    ("What is it?", set(), "What is it?"),  # nothing left: the question itself
])
def test_the_question_core_is_what_it_asks_about(question: str, named: set[str], core: str) -> None:
    assert question_core(question, frozenset(named)) == core


class WordsEmbedder:
    """Deterministic: a bag of words hashed into 64 dimensions (the fact and the reaction share the question's
    words equally, so only the fusion's other features tell them apart)."""

    ident = "words@1"

    def embed(self, text: str) -> np.ndarray:
        v = np.zeros(64, dtype=np.float32)
        for w in text.lower().replace(".", " ").replace("?", " ").replace("!", " ").replace(",", " ").split():
            v[sum(map(ord, w)) % 64] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v


def test_a_fact_outranks_a_short_reaction_as_close_to_the_question() -> None:
    history = [Message(role="system", content="Two friends chat.")]
    for t in range(1, 40):
        if t == 9:
            text = ("We finally picked the venue for the reunion: the old boathouse by the lake, booked for the "
                    "second weekend of June, with space for sixty people and a small kitchen we can use.")
        elif t == 21:
            text = "Reunion venue, nice!"
        else:
            text = f"Chat {t} about the weather and the commute, nothing much {t}."
        history.append(Message(role="user", content=text, turn=t))
        history.append(Message(role="assistant", content=f"Sounds good ({t}).", turn=t))
    fact, reaction = 17, 41
    q = "Which venue for the reunion?"

    def rank(fusion: str | None) -> dict[int, int]:
        b = WorkingSetBuilder(budget=TokenBudget(total_window=10**6, response_reserve=0), embedder=WordsEmbedder(),
                              fusion=fusion)
        match, _, _ = Build(b, b._cache, history, q, None, (), (), (), None, 0, None, None).relevance(True)
        return {d: r for r, d in enumerate(sorted(match, key=lambda d: (-match[d], d)), 1)}

    assert history[fact].content.startswith("We finally") and history[reaction].content == "Reunion venue, nice!"
    learned = rank(None)
    assert learned[fact] < learned[reaction]
    rrf = rank(RRF_FUSION.spec())  # two ranked lists alone put the short reaction first
    assert rrf[reaction] < rrf[fact]


class CountingEmbedder(WordsEmbedder):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, text: str) -> np.ndarray:
        self.texts.append(text)
        return super().embed(text)


@pytest.mark.parametrize("model", [1, 2])
def test_only_a_version_that_reads_the_core_embeds_it_and_each_rebuilds_as_recorded(model: int) -> None:
    history = [Message(role="system", content="Two friends chat.")]
    for t in range(1, 40):
        history += [Message(role="user", content=f"Day {t}: the garden, the tomatoes and the rain, and then the long "
                                                 f"walk home past the station and the bakery {t}.", turn=t),
                    Message(role="assistant", content=f"Lovely ({t}).", turn=t)]
    spec = DEFAULT_FUSION.spec().replace("model=2", f"model={model}")
    q = "Would she enjoy a visit to a botanical garden?"
    emb = CountingEmbedder()
    b = WorkingSetBuilder(budget=TokenBudget(total_window=600), embedder=emb, fusion=spec)
    first = b.build(history, q)
    assert ("visit botanical garden" in emb.texts) is (model == 2)
    again = WorkingSetBuilder(budget=TokenBudget(total_window=600), embedder=CountingEmbedder(), fusion=spec)
    rebuilt = again.build(history, q)
    assert rebuilt.digest("m") == first.digest("m")
    assert b.settings()["fusion"] == spec
