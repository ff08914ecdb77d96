"""A learned fusion of the BM25 and cosine rankings (``Fusion(method="learned")``, :data:`~.relevance.DEFAULT_FUSION`).

Reciprocal rank fusion weighs two ranked lists and nothing else. What else the builder knows about a
message says a good deal about whether it holds a question's evidence: how far its cosine stands above
the rest of the history, whether BM25 found it too, whether its neighbour matches (an answer split over
two turns), whether it is said by the person the question names, and how much it says (a turn of three
words rarely holds a fact). :func:`features` computes those per message, the same way for training and
for a build; :func:`learned_match` scores them with a logistic model whose weights are fixed per version
in :data:`MODELS` (a recorded build names its version, so it rebuilds with the same weights), and turns
the learned order into a match on the reciprocal-rank scale: the best message 1.0, the r-th
``(k + 1) / (k + r)``, as a message ranked r-th in both lists would get under RRF, so the recorded
relevance scores and the drop decisions that read them keep their scale.

The weights come from ``python -m benchmarks.retention.train_fusion`` (the dev splits only; its docstring
gives the figures that chose the features).
"""

from __future__ import annotations

from typing import Any

FEATURES = ("zs", "gap", "rs10", "rb", "bm", "head", "other_speaker", "lwords", "nbz", "nbbm", "user", "zc")
"""Per message: ``zs`` its best-passage cosine as a z-score over the history; ``gap`` that cosine less the
best one; ``rs10`` ``10 / (10 + rank)`` in the cosine ranking; ``rb`` ``60 / (60 + rank)`` in the BM25
ranking (0 when BM25 did not find it); ``bm`` its BM25 score over the best one; ``head`` 1 when it holds at
least ``HEAD`` of the question's rare terms (:meth:`~.relevance.RelevanceIndex.coverage`); ``other_speaker``
1 when the question names a speaker of the conversation and the message is another's; ``lwords``
``log(1 + words)`` of its indexed text, words counted up to :data:`WORDS_CAP`; ``nbz`` the larger ``zs`` of
the messages just before and after it; ``nbbm`` the same for ``bm``; ``user`` 1 for a user message; ``zc`` the
best-passage cosine with the question's core (:func:`~.relevance.question_core`: its content words without the names it
asks about and its frame) as a z-score over the history (version 2 on; version 1 reads the first eleven)."""

HEAD = 0.6
WORDS_CAP = 80
"""The longest message the weights were fitted on (the dev splits' longest turn has 81 words): a longer one —
a tool's output, a pasted file — counts as this long, not as the more likely to hold a fact the longer it is."""
RANK_K = 60
"""The reciprocal-rank scale of the match (see the module docstring)."""
CANDIDATES = 240
"""The best this many messages by the learned score get a match (those with a cosine of at least
:data:`~.relevance.SEMANTIC_MIN` or a BM25 score); the rest none, as under RRF a message in neither list."""

MODELS: dict[int, tuple[tuple[float, ...], float]] = {
    1: ((1.060, 5.936, -1.045, 1.415, -0.919, 1.438, -12.438, 2.449, 0.218, 0.542, 0.220), -7.647),
    2: ((0.447, 5.691, -1.363, 1.208, -1.008, 1.370, -13.222, 2.414, 0.185, 0.591, 0.272, 0.789), -7.741),
}
"""Version -> (weights in :data:`FEATURES` order, bias): a version reads the first ``len(weights)`` features.
Never change a published version: add one."""


def needs_core(model: int) -> bool:
    """Whether version ``model`` reads ``zc`` (the build then embeds the question's core once more)."""
    return model in MODELS and len(MODELS[model][0]) > FEATURES.index("zc")


def features(sims: Any, lexical: dict[int, float], coverage: dict[int, float], other_speaker: Any,
             nwords: Any, user: Any, core_sims: Any = None) -> Any:
    """The ``(n, len(FEATURES))`` matrix for the ``n`` messages whose best-passage cosines are ``sims``;
    ``lexical`` the BM25 scores (by message), ``coverage`` the BM25 hits' coverage of the question,
    ``other_speaker``, ``nwords`` and ``user`` arrays of ``n``; ``core_sims`` the cosines with the question's core
    (without them, the first eleven columns: what version 1 reads)."""
    import numpy as np

    s = np.asarray(sims, dtype=np.float64)
    n = len(s)
    width = len(FEATURES) - (core_sims is None)
    if n == 0:
        return np.zeros((0, width))
    zs = _z(s)
    bm = _dense(lexical, n)
    top = bm.max()
    head = (_dense(coverage, n) >= HEAD).astype(np.float64)
    bmn = bm / top if top > 0 else bm
    columns = [
        zs,
        s - s.max(),
        10.0 / (10.0 + _ranks(s)),
        np.where(bm > 0, 60.0 / (60.0 + _ranks(bm)), 0.0),
        bmn,
        head,
        np.asarray(other_speaker, dtype=np.float64),
        np.log1p(np.minimum(np.asarray(nwords, dtype=np.float64), WORDS_CAP)),
        np.maximum(_shift(zs, 1), _shift(zs, -1)),
        np.maximum(_shift(bmn, 1), _shift(bmn, -1)),
        np.asarray(user, dtype=np.float64),
    ]
    if core_sims is not None:
        columns.append(_z(np.asarray(core_sims, dtype=np.float64)))
    return np.stack(columns, axis=1)


def _z(x: Any) -> Any:
    """``x`` as z-scores (zeros when it does not vary)."""
    import numpy as np

    sd = float(x.std())
    return (x - x.mean()) / sd if sd > 1e-9 else np.zeros(len(x))


def _dense(by_doc: dict[int, float], n: int) -> Any:
    """``by_doc`` as an array of ``n`` (0 where a document has no value; documents from ``n`` on left out)."""
    import numpy as np

    out = np.zeros(n)
    for d, v in by_doc.items():
        if d < n:
            out[d] = v
    return out


def _ranks(x: Any) -> Any:
    """Each element's rank in ``x`` from the largest (1), ties to the earlier."""
    import numpy as np

    n = len(x)
    out = np.empty(n)
    out[np.lexsort((np.arange(n), -x))] = np.arange(1, n + 1)
    return out


def _shift(x: Any, by: int) -> Any:
    """``x`` moved ``by`` places later (``by < 0``: earlier), zeros where nothing moved in."""
    import numpy as np

    out = np.zeros_like(x)
    if by > 0:
        out[by:] = x[:-by]
    elif by < 0:
        out[:by] = x[-by:]
    return out


def scores(x: Any, model: int) -> Any:
    """The learned log-odds of each row of ``x`` (:func:`features`) under version ``model``."""
    import numpy as np

    if model not in MODELS:
        raise ValueError(f"no learned fusion model {model} (known: {sorted(MODELS)}): a newer arcana-jupyter "
                         "recorded this build; upgrade to rebuild it")
    weights, bias = MODELS[model]
    x = np.asarray(x, dtype=np.float64)
    if x.shape[1] < len(weights):
        raise ValueError(f"learned fusion model {model} reads {len(weights)} features, got {x.shape[1]} "
                         "(the question core's cosines are missing)")
    return x[:, :len(weights)] @ np.asarray(weights) + bias


def learned_match(x: Any, lexical: dict[int, float], sims: Any, model: int, semantic_min: float,
                  bm25_floor: float) -> tuple[dict[int, float], dict[int, str]]:
    """``(match, via)`` as :func:`~.relevance.fuse` gives them, from the learned order of the messages
    (ties: the earlier). ``via`` is ``bm25`` when BM25 ranked the message at least as high as the
    cosine did and scored it at least ``bm25_floor`` (:data:`~.recall.RECALL_MIN_BM25`: a weaker BM25 hit
    would not be brought back as literal), else ``semantic``: the model chose it."""
    import numpy as np

    n = len(x)
    if n == 0:
        return {}, {}
    z = np.round(scores(x, model), 9)
    s = np.asarray(sims, dtype=np.float64)
    bm = _dense(lexical, n)  # BM25 scores are positive: a document has one when BM25 found it
    idx = np.flatnonzero((s >= semantic_min) | (bm > 0))
    best = idx[np.lexsort((idx, -z[idx]))][:CANDIDATES]
    sem_rank, lex_rank = _ranks(s), _ranks(bm)
    match: dict[int, float] = {}
    via: dict[int, str] = {}
    for r, d in enumerate(best.tolist(), 1):
        match[d] = round((RANK_K + 1) / (RANK_K + r), 6)
        via[d] = "bm25" if bm[d] >= bm25_floor and lex_rank[d] <= sem_rank[d] else "semantic"
    return match, via
