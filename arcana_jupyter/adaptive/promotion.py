"""Promotion and demotion rules: which peripheral objects the input brings back, which idle ones fade.

Promotion (before each prompt): every keyword of the input (alphanumeric, >= 3 characters, stop
words removed — :func:`arcana_jupyter.text.keywords`) is looked for as a substring of each soft or
hard object's summary (the line its stub shows — what the user can name); the first keyword that
hits promotes the object (cause ``keyword:<kw>``). Objects no keyword hit are scored with
normalised BM25 (:meth:`arcana_jupyter.text.BM25Index.normalised_scores`) of the input against
their full text (summary, payload, rationale), over a corpus of every live object; a score at or
above the threshold (0.15) promotes (cause ``bm25:<score>``).

Demotion (after each turn): ``idle = turn - last_touched_turn``; idle >= ``idle_hard_after_turns``
sends an object to ``hard``, idle >= ``idle_soft_after_turns`` to ``soft``. Focused objects stay, and so
do standing ones (a standing instruction holds however long nobody mentions it).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from ..text import BM25Index, keywords, words
from .state import StateObject, Tier

TIER_RANK: dict[str, int] = {"active": 0, "soft": 1, "hard": 2}


class Promotion(BaseModel):
    """One tier change and its cause (also the metadata of its ``state_change`` event)."""

    model_config = ConfigDict(frozen=True)

    object_id: str
    kind: str
    from_tier: Tier | None
    to_tier: Tier
    cause: str
    score: float | None = None


class ObjectIndex:
    """A BM25 index over live objects' texts plus a term -> objects map to score only candidates.

    New objects are appended incrementally; a changed or retracted text marks the index stale and
    the next use rebuilds it (rare: updates and retractions, not promotions or demotions).
    """

    def __init__(self) -> None:
        self._index = BM25Index()
        self._doc: dict[str, int] = {}
        self._lower: dict[str, str] = {}
        self._postings: dict[str, set[str]] = {}
        self._stale = True

    def invalidate(self) -> None:
        self._stale = True

    def _add(self, obj: StateObject) -> None:
        text = obj.search_text()
        self._doc[obj.id] = self._index.add(text)
        self._lower[obj.id] = obj.summary.lower()
        for term in set(words(text)):
            self._postings.setdefault(term, set()).add(obj.id)

    def added(self, obj: StateObject) -> None:
        """A new object: append it (when the index is current; otherwise the rebuild will see it)."""
        if not self._stale and not obj.retracted and obj.id not in self._doc:
            self._add(obj)

    def ensure(self, objects: Iterable[StateObject]) -> None:
        if not self._stale:
            return
        self._index = BM25Index()
        self._doc = {}
        self._lower = {}
        self._postings = {}
        for obj in objects:
            if not obj.retracted:
                self._add(obj)
        self._stale = False

    def lower(self, object_id: str) -> str:
        """The lower-cased summary keywords are matched against."""
        return self._lower.get(object_id, "")

    def scores(self, query: str, object_ids: Sequence[str]) -> dict[str, float]:
        """Normalised BM25 score of each of ``object_ids`` that shares a term with ``query``."""
        terms = words(query)
        candidates: set[str] = set()
        for t in set(terms):
            candidates |= self._postings.get(t, set())
        docs = {self._doc[i]: i for i in object_ids if i in candidates and i in self._doc}
        if not docs:
            return {}
        raw = self._index.normalised_scores(terms, docs=sorted(docs))
        return {docs[d]: s for d, s in raw.items()}


def _keyword_hits(kws: Sequence[str], texts: Sequence[str]) -> dict[int, str]:
    """For each text (by position) the first of ``kws`` (in their order) it contains as a substring.

    One ``str.find`` scan per keyword over all texts joined (C speed) instead of a Python loop over
    every (text, keyword) pair; a separator no keyword can contain keeps matches inside one text.
    """
    if not kws or not texts:
        return {}
    joined = "\x00".join(texts)
    starts: list[int] = []
    pos = 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + 1
    out: dict[int, str] = {}
    for kw in kws:
        at = joined.find(kw)
        while at >= 0:
            i = bisect_right(starts, at) - 1
            out.setdefault(i, kw)
            at = joined.find(kw, starts[i + 1] if i + 1 < len(starts) else len(joined))
    return out


def find_promotions(
    user_input: str, peripheral: Sequence[StateObject], index: ObjectIndex, threshold: float
) -> list[Promotion]:
    """Promotions for ``peripheral`` objects (ordered as given) by keyword, then by BM25."""
    kws = keywords(user_input)
    found: dict[str, Promotion] = {}
    hits = _keyword_hits(kws, [index.lower(o.id) for o in peripheral])
    rest: list[StateObject] = []
    for i, obj in enumerate(peripheral):
        hit = hits.get(i)
        if hit is not None:
            found[obj.id] = Promotion(
                object_id=obj.id, kind=obj.kind, from_tier=obj.tier, to_tier="active", cause=f"keyword:{hit}"
            )
        else:
            rest.append(obj)
    if rest:
        scores = index.scores(user_input, [o.id for o in rest])
        for obj in rest:
            s = scores.get(obj.id, 0.0)
            if s >= threshold and s > 0:
                found[obj.id] = Promotion(
                    object_id=obj.id,
                    kind=obj.kind,
                    from_tier=obj.tier,
                    to_tier="active",
                    cause=f"bm25:{s:.4f}",
                    score=s,
                )
    return [found[o.id] for o in peripheral if o.id in found]


def demotion_target(obj: StateObject, turn: int, soft_after: int, hard_after: int) -> Tier | None:
    """The tier ``obj`` should fall to at the end of ``turn``, or ``None`` to stay."""
    if obj.retracted or obj.focused or obj.standing is not None:
        return None
    idle = turn - obj.last_touched_turn
    target: Tier | None = "hard" if idle >= hard_after else "soft" if idle >= soft_after else None
    if target is None or TIER_RANK[target] <= TIER_RANK[obj.tier]:
        return None
    return target
