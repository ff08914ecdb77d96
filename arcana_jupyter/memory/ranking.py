"""How memories are scored: confidence decay, recency, and the fusion of signals.

Decay law — per-kind half-lives, not a flat 5%/day
---------------------------------------------------
The seed mentions a flat 5% per day. That is a half-life of ~13.5 days for *everything*: a global
constraint ("never commit secrets") the user stated once would sink below a fresh low-confidence
guess within three weeks of not being acted on. Knowledge ages at different speeds, so confidence
decays exponentially with a half-life per kind (days)::

    constraint 180   preference 120   decision 90   pattern 90   mistake 60   fact 45

Facts about a codebase (file locations, versions) go stale fastest; preferences and constraints
are the most stable. Layer-2 entries (promoted: surfaced in >= 2 distinct sessions with validity
>= 0.7) decay 4x slower. The clock runs from ``reinforced_at``: creation, reset whenever the entry
is acted on in a session that ends successfully. Effective confidence at time ``t``::

    confidence * 2 ** (-(t - reinforced_at) / (half_life(kind) * (4 if layer == 2 else 1)))

Fusion
------
* **strength** ``S = min(1, effective_confidence * (0.5 + usefulness))`` — usefulness starts at
  0.5 (multiplier 1), rises when acted on in successful sessions, falls when ignored.
* **recency** ``C = 2 ** (-(t - last_access) / 7 days)`` (last access: recall hit or acted on;
  creation before that). Being shown in a digest is *not* an access, so the digest does not feed
  itself.
* **relevance** ``R`` for a query: the keyword score is ``0.5 * bm25 + 0.5 * coverage`` — FTS5
  ``bm25()`` normalised by the best candidate's score (the top match gets 1.0), and the share of the
  query's words the entry contains (light suffix stemming). Coverage matters in small stores, where
  BM25's idf collapses to ~0 for any word in more than half of the entries (FTS5 clamps it), so
  "pandas" would not count in a store where most memories mention pandas. With an embedder,
  ``R = 0.5 * text + 0.5 * cosine`` (cosine clipped to [0, 1]); without one recall is keyword-only
  and says ``mode="keyword"``.
* **pinned**: a strong additive boost; pinned entries are also always placed first in the digest.

Query score: ``0.55 R + 0.25 S + 0.10 C + 0.30 pinned``.
Digest score (no query): ``0.70 S + 0.30 C + 1.0 pinned``.

Validity does not rank: it says "this keeps proving true" and gates promotion.

Every formula exists twice — in Python (recall's final fusion, tests) and as SQL (scoring digest
candidates inside the database, per dialect: ``digest_score_sql``); a test checks they agree on
both backends. The digest does not score every entry: a time-invariant strength key
(``strength_key`` below, kept in the ``skey`` column by triggers on SQLite, a generated column on
PostgreSQL) lets it
walk per-(kind, layer) indexes in strength order and stop once no unseen entry can beat the k-th
best (the threshold algorithm; ``MemoryStore._digest_candidates``) — exact, and a test compares it
with brute force.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..text import words

HALF_LIFE_DAYS: dict[str, float] = {
    "constraint": 180.0,
    "preference": 120.0,
    "decision": 90.0,
    "pattern": 90.0,
    "mistake": 60.0,
    "fact": 45.0,
}
LAYER2_SLOWDOWN = 4.0
RECENCY_HALF_LIFE_DAYS = 7.0
DAY = 86400.0
LN2 = math.log(2.0)

W_RELEVANCE = 0.55
W_STRENGTH = 0.25
W_RECENCY = 0.10
W_PINNED_QUERY = 0.30

W_DIGEST_STRENGTH = 0.70
W_DIGEST_RECENCY = 0.30
W_PINNED_DIGEST = 1.0

# reinforcement at session end
VALIDITY_GAIN = 0.15
"""Surfaced entries: ``validity += VALIDITY_GAIN * (1 - validity)``."""
USEFULNESS_GAIN = 0.2
"""Acted on in a successful session: ``usefulness += USEFULNESS_GAIN * (1 - usefulness)``."""
IGNORED_DECAY = 0.9
"""Surfaced but not acted on: ``usefulness *= IGNORED_DECAY``."""
FAILED_DECAY = 0.9
"""Acted on in a session that ended with ``success=False``: ``usefulness *= FAILED_DECAY``."""
PROMOTION_SESSIONS = 2
PROMOTION_VALIDITY = 0.7


def half_life_seconds(kind: str, layer: int) -> float:
    return HALF_LIFE_DAYS[kind] * (LAYER2_SLOWDOWN if layer == 2 else 1.0) * DAY


def decay_factor(kind: str, layer: int, age_seconds: float) -> float:
    """``2 ** (-age / half_life)``; 1.0 for a non-positive age."""
    return math.exp(-LN2 * max(0.0, age_seconds) / half_life_seconds(kind, layer))


def effective_confidence(confidence: float, kind: str, layer: int, reinforced_at: float, now: float) -> float:
    return confidence * decay_factor(kind, layer, now - reinforced_at)


def recency(last_access: float, now: float) -> float:
    return math.exp(-LN2 * max(0.0, now - last_access) / (RECENCY_HALF_LIFE_DAYS * DAY))


def strength(eff_confidence: float, usefulness: float) -> float:
    return min(1.0, eff_confidence * (0.5 + usefulness))


def query_score(relevance: float, strength_: float, recency_: float, pinned: bool) -> float:
    return W_RELEVANCE * relevance + W_STRENGTH * strength_ + W_RECENCY * recency_ + (W_PINNED_QUERY if pinned else 0.0)


def digest_score(strength_: float, recency_: float, pinned: bool) -> float:
    return W_DIGEST_STRENGTH * strength_ + W_DIGEST_RECENCY * recency_ + (W_PINNED_DIGEST if pinned else 0.0)


_SUFFIXES = ("ing", "ies", "es", "ed", "ly", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper (enough to match ``tests``/``testing``/``tested`` to ``test``)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def coverage(query_terms: list[str], content: str) -> float:
    """Share of the distinct query terms (already tokenised) that occur in ``content``."""
    terms = {stem(t) for t in query_terms}
    if not terms:
        return 0.0
    present = {stem(w) for w in set(words(content))}
    return len(terms & present) / len(terms)


def cosine(a: list[float], b: list[float]) -> float:
    if len(a) != len(b) or not a:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return dot / (na * nb)


# --- the same formulas in SQL (entries table columns; parameter :now in epoch seconds) ---------


def _half_life_sql(prefix: str = "") -> str:
    cases = " ".join(f"WHEN '{k}' THEN {v * DAY!r}" for k, v in HALF_LIFE_DAYS.items())
    return (
        f"((CASE {prefix}kind {cases} ELSE {45.0 * DAY!r} END) * "
        f"(CASE WHEN {prefix}layer = 2 THEN {LAYER2_SLOWDOWN!r} ELSE 1.0 END))"
    )


def digest_score_sql(dialect: str = "sqlite") -> str:
    """The digest score as SQL for ``dialect`` (``sqlite`` or ``postgresql``; parameter ``:now``).

    PostgreSQL spells the two-argument ``max``/``min`` ``greatest``/``least``, and its ``exp`` raises
    on underflow instead of returning 0, so there the exponent is floored at -700 (``exp(-700)`` is
    1e-304: the same score to double precision)."""
    pg = dialect == "postgresql"
    mx, mn = ("greatest", "least") if pg else ("max", "min")

    def exp(arg: str) -> str:
        return f"exp({mx}(-700.0, {arg}))" if pg else f"exp({arg})"

    eff = f"(confidence * {exp(f'-{LN2!r} * {mx}(0.0, :now - reinforced_at) / {_half_life_sql()}')})"
    rec = exp(f"-{LN2!r} * {mx}(0.0, :now - coalesce(last_accessed_at, created_at)) / {RECENCY_HALF_LIFE_DAYS * DAY!r}")
    strength_sql = f"{mn}(1.0, {eff} * (0.5 + usefulness))"
    return (
        f"({W_DIGEST_STRENGTH!r} * {strength_sql} + {W_DIGEST_RECENCY!r} * {rec}"
        f" + (CASE WHEN pinned <> 0 THEN {W_PINNED_DIGEST!r} ELSE 0.0 END))"
    )


DIGEST_SCORE_SQL = digest_score_sql("sqlite")


# --- time-invariant strength key (lets the digest walk an index instead of scoring every entry) --
#
# log2(confidence * (0.5 + usefulness) * 2 ** (-(now - reinforced_at) / h))
#     = [log2(confidence * (0.5 + usefulness)) + reinforced_at / h] - now / h
# The bracket (``skey``) does not depend on ``now``: within one (kind, layer) — one half-life ``h`` —
# ordering by ``skey`` is ordering by strength at any time. (Without the max(0, ·) clamp for
# timestamps in the future, which only over-estimates: safe for the digest's upper bounds.)

STRENGTH_FLOOR = 1e-9


def strength_key(confidence: float, usefulness: float, kind: str, layer: int, reinforced_at: float) -> float:
    return math.log2(max(confidence * (0.5 + usefulness), STRENGTH_FLOOR)) + reinforced_at / half_life_seconds(
        kind, layer
    )


def strength_from_key(skey: float, kind: str, layer: int, now: float) -> float:
    """Upper bound of the strength of an entry with this key at ``now`` (exact unless reinforced in the future)."""
    exponent = skey - now / half_life_seconds(kind, layer)
    return 1.0 if exponent >= 0 else min(1.0, 2.0**exponent)


def strength_key_sql(prefix: str = "", dialect: str = "sqlite") -> str:
    p = prefix
    if dialect == "postgresql":  # no log2 for double precision there
        return (
            f"(ln(greatest({p}confidence * (0.5 + {p}usefulness), {STRENGTH_FLOOR!r})) / {LN2!r} + "
            f"coalesce({p}reinforced_at, {p}created_at) / {_half_life_sql(p)})"
        )
    return (
        f"(log2(max({p}confidence * (0.5 + {p}usefulness), {STRENGTH_FLOOR!r})) + "
        f"coalesce({p}reinforced_at, {p}created_at) / {_half_life_sql(p)})"
    )
