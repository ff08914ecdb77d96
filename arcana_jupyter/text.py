"""Words and BM25: the one text-relevance scorer the builder, adaptive context and memory share.

Tokenisation is deliberately simple and deterministic: lower-cased alphanumeric runs (Unicode
letters and digits), with English stop words removed. :class:`BM25Index` is Okapi BM25 over such
tokens with incremental ``add`` (documents are appended as a conversation grows) and scores
normalised to ``[0, 1]`` by :meth:`BM25Index.normalised_scores` so thresholds (adaptive context's
0.15) mean the same thing whatever the query length.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves also let lets please tell show give
    get got make made use used using one two like want need know see say said""".split()
)


def words(text: str, *, min_len: int = 2) -> list[str]:
    """Lower-cased alphanumeric words of ``text`` of at least ``min_len`` characters, stop words removed."""
    return [w for w in _WORD.findall(text.lower()) if len(w) >= min_len and w not in STOP_WORDS]


def keywords(text: str) -> list[str]:
    """Distinct keywords (>= 3 characters, no stop words) in order of first appearance."""
    seen: dict[str, None] = {}
    for w in words(text, min_len=3):
        seen.setdefault(w, None)
    return list(seen)


Query = str | Sequence[str] | Mapping[str, float]
"""A query: text (analysed like the documents), a list of terms, or weighted terms."""


class BM25Index:
    """Okapi BM25 over :func:`words` (or another ``analyzer``), with documents appended one at a time."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, analyzer: Callable[[str], list[str]] | None = None) -> None:
        self.k1 = k1
        self.b = b
        self.analyzer: Callable[[str], list[str]] = analyzer or words
        self._tfs: list[Counter[str]] = []
        self._lens: list[int] = []
        self._df: Counter[str] = Counter()
        self._total_len = 0

    def __len__(self) -> int:
        return len(self._tfs)

    def add(self, text: str) -> int:
        """Index ``text``; returns its document number."""
        tokens = self.analyzer(text)
        tf = Counter(tokens)
        self._tfs.append(tf)
        self._lens.append(len(tokens))
        self._total_len += len(tokens)
        self._df.update(tf.keys())
        return len(self._tfs) - 1

    def extend(self, texts: Iterable[str]) -> None:
        for t in texts:
            self.add(t)

    def _terms(self, query: Query) -> dict[str, float]:
        if isinstance(query, str):
            return {t: float(n) for t, n in Counter(self.analyzer(query)).items()}
        if isinstance(query, Mapping):
            return {t: float(w) for t, w in query.items() if w > 0}
        return {t: float(n) for t, n in Counter(query).items()}

    def idf(self, term: str) -> float:
        return self._idf(term)

    def _idf(self, term: str) -> float:
        n = len(self._tfs)
        df = self._df.get(term, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def scores(self, query: Query, docs: Iterable[int] | None = None) -> dict[int, float]:
        """Raw BM25 score of each document (only documents with a positive score are returned).

        Weighted terms (a mapping) count each term that many times (a term repeated in a text query
        counts once per repetition, as in Okapi BM25's query-term frequency).
        """
        q = self._terms(query)
        if not q or not self._tfs:
            return {}
        avg = self._total_len / len(self._tfs) or 1.0
        wanted = range(len(self._tfs)) if docs is None else docs
        out: dict[int, float] = {}
        idfs = {t: self._idf(t) for t in q}
        for i in wanted:
            tf = self._tfs[i]
            norm = self.k1 * (1 - self.b + self.b * self._lens[i] / avg)
            s = 0.0
            for t, qn in q.items():
                f = tf.get(t)
                if f:
                    s += qn * idfs[t] * f * (self.k1 + 1) / (f + norm)
            if s > 0:
                out[i] = s
        return out

    def normalised_scores(self, query: Query, docs: Iterable[int] | None = None) -> dict[int, float]:
        """Scores divided by the query's best possible score, so each lies in ``[0, 1]``.

        The best possible score is what a document would get that holds every query term once, at
        average length — so 1.0 means "mentions everything the query asks about".
        """
        q = self._terms(query)
        raw = self.scores(q, docs)
        if not raw:
            return {}
        ideal = sum(qn * self._idf(t) for t, qn in q.items())
        if ideal <= 0:
            return {}
        return {i: min(1.0, s / ideal) for i, s in raw.items()}


def bm25_relevance(query: str, texts: Sequence[str]) -> list[float]:
    """Normalised BM25 relevance of each of ``texts`` to ``query`` (one-shot convenience)."""
    index = BM25Index()
    index.extend(texts)
    scores = index.normalised_scores(query)
    return [scores.get(i, 0.0) for i in range(len(texts))]
