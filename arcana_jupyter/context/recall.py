"""Earlier turns brought back because the current input is about them (the late, question-dependent block).

:func:`fill_recall` ranks the units not in the prompt yet by their best message's match and brings
them back, best first, into the room the plan left: whole (or at L1), or — the ``blocks`` drop
policy with ``block_excerpts`` — as excerpts, the sentences that match the question
(:func:`excerpt`); then the rest of their exchanges, their neighbours and the most recent turns
(``fill``). Deterministic: ties go to the earlier unit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..messages import RECALLED_NAME, Message
from ..providers.shaping import context_block
from . import strategies as S
from .asking import asks_when
from .decisions import Fidelity
from .relevance import short_date, stems
from .result import Item, make_decision

if TYPE_CHECKING:
    from .build import Build

RECALL_MIN_BM25 = 0.2
"""Normalised BM25 an older message needs to be brought back as relevant to the current input
(with an embedding model, a message in the cosine ranking qualifies too, see relevance.py)."""
RECALL_MAX_UNITS = 160
"""Most relevant units brought back in one build (the budget is the usual limit)."""
NEIGHBOUR_EXCHANGES = 3
"""Exchanges before and after a relevant one brought back as ``neighbour`` (nearest first)."""
QUOTE_NEIGHBOUR_SEEDS = 3
"""With ``quote`` (``block_recall="fill"``), the exchanges just before and after the best this many
relevant units come back too, once every relevant unit and its exchange is in (answers are often
split across two turns). Measured at a 4k budget on three conversations of the chats dev split
(benchmarks/retention/conversations.py): evidence 0.60 without neighbours, 0.61 with these (as
classic mode), 0.61 with the neighbours of every relevant unit, which re-sent 1,608 uncached tokens per
turn against 1,426 (1,176 without)."""
RECENCY_MIN_ROOM = 8
"""The recency fill stops when fewer tokens than this are left (no message is that small)."""
RECENCY_MAX_MISSES = 24
"""... or after this many units in a row that did not fit (a bound on the cost of a build)."""
EXCERPT_NAME = "excerpt"
"""The name of an excerpt's system message (a heading in the shaped prompt's context block)."""
EXCERPT_MATCHES: dict[str, tuple[float, int, bool]] = {
    "distinct": (0.5, 1, True),
    "first3": (0.3, 3, False),
}
"""When an excerpt is worth its room (``excerpt_match``), as (least match, excerpts taken whatever
their match, look-alikes discounted). The match is the part of the question's term weight (the idf
of its terms found earlier in the conversation) that an excerpt's best sentence holds. Past the
excerpts taken whatever their match (the best ones: a question worded unlike the statement it asks
about still gets its closest), an excerpt comes back when its match is at least the least match, or
when it holds the question's most specific term that any candidate holds.

- ``distinct`` (the default): an excerpt matching the same question terms as n excerpts already
  taken counts 1/(n+1) of its match, so look-alike statements (the same kind of fact with other
  values) come back once, not all; the block is far smaller than its room on most turns, and the
  next prompt repeats more of this one. Tuned at 4k on the dev split of
  benchmarks/retention/sessions.py and two more splits written the same way with other seeds:
  against ``first3``, prefix reuse once the window is full went from 77% to 82% and facts found
  from 69, 66, 63 to 69, 67, 65; a least match of 0.4 gives 81%, 0.6 82%, same facts; keeping at
  most a few excerpts that hold the most specific term loses facts.
- ``first3``: the rule before (what traces that recorded no ``excerpt_match`` rebuild with)."""
EXCERPT_MATCH_DEFAULT = "distinct"
EXCERPT_SENTENCES = 2
"""Most sentences an excerpt keeps (those that match the question best, equally well)."""
EXCERPT_POOL = 48
"""Relevant units (best first) the excerpts are chosen from."""

Rendered = tuple[Message, int, Fidelity]


class Excerpt(NamedTuple):
    """A message brought back as its sentences that match the question (``block_excerpts``)."""

    msg: Message
    tokens: int
    matched: frozenset[str]
    """The question's terms its sentences hold."""
    value: float
    """The part of the question's term weight (idf) its best sentence holds."""


class Recalled(NamedTuple):
    """What :func:`fill_recall` did: the mode it ran in and what relevant messages it left out."""

    fill: bool
    quote: bool
    taken: int
    """Units brought back."""
    left_over: int
    """Relevant units (of the ranking) not in the prompt: they did not fit."""
    smallest_left: int
    """The tokens the smallest of them needed (0: none left)."""


def fill_recall(
    build: Build,
    score: Callable[[int], float],
    room: int,
    middle_rendered: dict[int, Rendered],
    out: list[Item],
    fill: bool = True,
    quote: bool = False,
) -> Recalled:
    """Fill ``room`` with older turns relevant to the current input, whole exchanges where they fit.

    Units are ranked by their best message's match (``build.match``: the fused match, see
    relevance.py); relevant units come back verbatim (or at L1 when verbatim does not fit), best
    first, until the room is used up or the ranking ends; then the rest of their exchanges (the user
    turn and the replies to it), then the exchanges just before and after them, nearest first
    (``neighbour``: the context a fact was stated in); then the most recent earlier turns not in
    the prompt yet (``recency``), whole exchanges where they fit. Deterministic: ties go to the
    earlier unit. Placed in conversation order, late in the prompt. (Measured on the dev split:
    taking each hit's exchange at once left room for fewer distinct hits: 0.61 -> 0.71 at 2k.)
    ``fill=False`` (the ``blocks`` drop policy): the relevant units and their exchanges only —
    no neighbours, no recency fill. ``quote`` (``block_recall="fill"``): each message of a unit
    without tool calls comes back quoted, as a ``recalled`` system message (:func:`quoted`) that the
    shaping step puts in the context block after the input's text.
    """
    decisions = build.decisions
    units = build.units
    last = len(units) - 1
    lexical = build.lexical
    via = build.via
    candidates, best_msg = best_per_unit(
        build, build.match, lambda i, s: not (via.get(i) == "bm25" and lexical.get(i, 0.0) < RECALL_MIN_BM25))
    if room <= 0:
        return Recalled(fill, quote, 0, 0, 0)
    ranked = sorted(candidates, key=lambda u: (-candidates[u], u))[:RECALL_MAX_UNITS]
    literal_best: dict[int, float] = {}
    if not fill and build.literal and build.builder.block_ranking == "alternate":
        # the block (``block_ranking="alternate"``): the literal best matches and the fused ranking's, alternately
        # (excerpts: any literal match; its sentences' own match decides, see excerpt())
        floor = 0.0 if build.builder.block_excerpts else RECALL_MIN_BM25
        literal, literal_msg = best_per_unit(build, build.literal, lambda i, s: s > 0 and s >= floor)
        literal_best = literal
        first = sorted(literal, key=lambda u: (-literal[u], u))
        merged: list[int] = []
        seen: set[int] = set()
        for k in range(max(len(first), len(ranked))):
            for u in (first[k] if k < len(first) else None, ranked[k] if k < len(ranked) else None):
                if u is not None and u not in seen:
                    seen.add(u)
                    merged.append(u)
                    best_msg.setdefault(u, literal_msg.get(u, -1))
        ranked = merged[:RECALL_MAX_UNITS]
    chosen: dict[int, tuple[list[Rendered], str]] = {}
    excerpts = not fill and build.builder.block_excerpts
    terms = excerpt_terms(build) if excerpts else {}
    stale = build.stale
    shown = build.shown

    heading = [quote_heading_tokens(build) if quote else 0]
    """The quotes' heading, charged to the first one taken (then 0)."""
    when = quote and build.builder.quote_dates and asks_when(build.query())
    """Relevant quotes carry their session's date (``quote_dates``, and the input asks about time)."""

    def take(u: int, reason: str, levels: tuple[Fidelity, ...] = ("L0", "L1")) -> bool:
        nonlocal room
        if room < RECENCY_MIN_ROOM or u in chosen or u >= last or u < 0 or any(shown(i) for i in units[u]):
            return False
        for level in levels:
            extra = 0
            if quote and quotable(build, units[u]):
                dated = when and reason in (S.RELEVANT_BM25, S.RELEVANT_SEMANTIC)
                rendered = [quoted(build, i, level, dated) for i in units[u]]
                extra = heading[0]
                if extra:
                    m, n, lv = rendered[0]
                    rendered[0] = (m, n + extra, lv)
            else:
                rendered = [build.msg_cost(i, level) if i not in stale else build.msg_cost(i, "L3") for i in units[u]]
            cost = sum(r[1] for r in rendered)
            if cost <= room:
                room -= cost
                chosen[u] = (rendered, reason)
                heading[0] -= extra
                return True
        return False

    def relevant_reason(u: int) -> str:
        return S.RELEVANT_SEMANTIC if via.get(best_msg[u]) == "semantic" else S.RELEVANT_BM25

    if excerpts:
        # the small block as excerpts: the best match first, then whichever adds most, a match
        # of the same question terms as n excerpts already taken counting 1/(n+1) of its own
        # (several look-alike statements do not crowd out the one that matches the rest)
        pool: list[tuple[float, Any, int, int, Excerpt | None]] = []
        for k, u in enumerate(ranked[:EXCERPT_POOL]):
            if u >= last or any(shown(i) for i in units[u]):
                continue
            made = excerpt(build, units[u], terms)
            if made is False:  # no sentence the prompt does not hold already matches
                continue
            if made is True:  # not a message an excerpt is made of: whole, by its own match
                pool.append((max(candidates.get(u, 0.0), literal_best.get(u, 0.0)), ("unit", u), k, u, None))
            else:
                pool.append((made.value, made.matched, k, u, made))
        # the most specific question term that any candidate holds: a sentence holding it comes
        # back even when it matches little else (a question worded unlike the statement)
        found = {t for _, key, _, _, ex in pool if ex is not None for t in key}
        anchor = max(sorted(found), key=lambda t: terms[t]) if found else None
        repeats: dict[Any, int] = {}
        least, any_match, discount = EXCERPT_MATCHES[build.builder.excerpt_match]
        while pool and room >= RECENCY_MIN_ROOM:
            j = max(range(len(pool)), key=lambda j: (round(pool[j][0] / (1 + repeats.get(pool[j][1], 0)), 6),
                                                     -pool[j][2]))
            _, key, _, u, ex = pool.pop(j)
            if (ex is not None and ex.value / (1 + (repeats.get(key, 0) if discount else 0)) < least
                    and len(chosen) >= any_match and anchor not in ex.matched):
                continue  # a weak match (or a look-alike of one taken), and the block has its first
            if ex is None:
                ok = take(u, relevant_reason(u))
            elif ex.tokens <= room:
                room -= ex.tokens
                chosen[u] = ([(ex.msg, ex.tokens, "L1")], S.RELEVANT_EXCERPT)
                ok = True
            else:
                ok = False
            if ok:
                repeats[key] = repeats.get(key, 0) + 1
    for u in ranked if not excerpts else ():
        if room < RECENCY_MIN_ROOM:
            break
        take(u, relevant_reason(u))
    seeds = [u for u in ranked if u in chosen]
    # then the rest of the exchanges of the ones brought back, best first (not with excerpts:
    # the room goes to more distinct matches) ...
    for u in seeds if not excerpts else ():
        if room < RECENCY_MIN_ROOM:
            break
        lo, hi = build.exchange(u)
        for v in range(lo, hi + 1):
            take(v, S.NEIGHBOUR, ("L0",))
    # ... then the exchanges around them, nearest first, while they fit
    for dist in range(1, NEIGHBOUR_EXCHANGES + 1 if fill else 2 if quote else 1):
        if room < RECENCY_MIN_ROOM:
            break
        for u in seeds if not quote else seeds[:QUOTE_NEIGHBOUR_SEEDS]:
            if room < RECENCY_MIN_ROOM:
                break
            lo, hi = build.exchange(u)
            before, after = lo, hi
            for _ in range(dist):
                if before > 0:
                    before = build.exchange(before - 1)[0]
                if after < last - 1:
                    after = build.exchange(after + 1)[1]
            for a, b in ((before, lo - 1), (hi + 1, after)):
                if a <= b and not any(v in chosen for v in range(a, b + 1)):
                    for v in range(a, b + 1):
                        take(v, S.NEIGHBOUR, ("L0",))
    # then the most recent earlier turns not in the prompt yet (recency), newest first, whole
    # exchanges where they fit, else the units of the exchange that fit
    u = min(last, build.window_start) - 1  # everything from the window on is in the prompt
    misses = 0
    while fill and u >= 0 and room >= RECENCY_MIN_ROOM and misses < RECENCY_MAX_MISSES:
        lo, hi = build.exchange(u)
        free = [v for v in range(lo, hi + 1) if v not in chosen and not any(shown(i) for i in units[v])]
        if free:
            whole = sum(build.unit_cost(v, "L0") for v in free)
            if whole <= room:
                for v in free:
                    take(v, S.RECENCY, ("L0",))
                misses = 0
            else:
                for v in free:
                    if room < RECENCY_MIN_ROOM:
                        break
                    misses = 0 if take(v, S.RECENCY, ("L0",)) else misses + 1
        u = lo - 1
    left = [u for u in ranked if u not in chosen and u < last and not any(shown(i) for i in units[u])]
    smallest = min((build.unit_cost(u, "L1") for u in left), default=0)
    for u in sorted(chosen):
        rendered, reason = chosen[u]
        for i, (m, n, lv) in zip(units[u], rendered, strict=True):
            out.append(Item(m, n, i))
            old = decisions[i]
            anchor_rendered = middle_rendered.get(i)
            decisions[i] = make_decision(
                index=i, role=build.msgs[i].role, outcome="kept" if lv == "L0" else "compressed", fidelity=lv,
                relevance_score=old.relevance_score if old is not None else score(i),
                token_count_before=build.infos[i].tokens,
                token_count_after=n + (anchor_rendered[1] if anchor_rendered else 0),
                reason=reason, layer="working", source=build.source(i), section=None, pinned=False,
                turn=build.turns[i], position=None, recalled=True, anchor_position=None,
            )
    return Recalled(fill, quote, len(chosen), len(left), smallest)


def quotable(build: Build, unit: list[int]) -> bool:
    """Whether a unit comes back quoted: plain user or assistant text, no tool calls or results."""
    msgs = build.msgs
    return all(msgs[i].role in ("user", "assistant") and not msgs[i].tool_calls for i in unit)


def quoted(build: Build, i: int, level: Fidelity, dated: bool = False) -> Rendered:
    """Message ``i`` at ``level`` quoted as an earlier message: a ``recalled`` system message naming
    its turn and role — and with ``dated`` (``quote_dates``, an input that asks about time, and a message
    brought back as relevant, not a neighbour: those sit next to it) its session's date when it carries none
    — its text after (cached per message, level and date)."""
    msg, _, lv = build.msg_cost(i, level)
    info = build.infos[i]
    turn = build.turns[i]
    lines = build.builder.quote_counting == "line"
    date = session_date(build, i) if dated else None
    key = ("recalled", lv, turn, lines, date)
    hit = info.renders.get(key)
    if hit is None:
        tag = ", ".join(str(x) for x in (f"turn {turn}" if turn is not None else None, msg.role, date) if x)
        tag = f"({tag})"
        new = Message(role="system", name=RECALLED_NAME, content=f"{tag} {msg.content}")
        # ``line``: the line it becomes in the context block (and the line break before it)
        tokens = build.counter.count_text("\n" + new.content) if lines else build.counter.count_message(new)
        hit = info.renders[key] = (new, tokens)
    return hit[0], hit[1], lv


def session_date(build: Build, i: int) -> str | None:
    """The date of message ``i``'s session when the message carries none itself (``quote_dates``): the latest
    date label before it (:attr:`~.relevance.RelevanceIndex.dates`); ``None`` when it is dated itself or no
    message before it was."""
    date = build.index.session_date(build.msgs, i) if i < build.n_history else None
    return short_date(date) if date is not None else None


def quote_heading_tokens(build: Build) -> int:
    """What the context block's heading over the quoted messages costs when they are counted as lines
    (``quote_counting="line"``): the block's frame and the heading, counted once for the first quote."""
    if build.builder.quote_counting != "line":
        return 0
    return build.counter.count_text(context_block([(RECALLED_NAME, "")])) + 1
def excerpt_terms(build: Build) -> dict[str, float]:
    """The question's weighty terms (stems, see relevance.py) and their idf: what an excerpt matches."""
    query = build.query()
    if not query:
        return {}
    # a term only the current input (or what follows it) holds matches nothing earlier
    end = build.input_index if build.input_index is not None else build.n_history
    index = build.index
    return {t: index.bm25.idf(t) for t in index.query_terms(query)
            if (docs := index._docs_with(t)) and docs[0] < end}


def excerpt(build: Build, unit: list[int], terms: dict[str, float]) -> Excerpt | bool:
    """A lone message (no tool calls) as its sentences that best match ``terms`` — the best one,
    and one more that matches as well — with ``[…]`` where text was cut, as a system message.
    ``False``: no sentence the prompt does not hold already matches well enough
    (:data:`EXCERPT_MATCHES`); ``True``: the unit is not one an excerpt is made of (tool calls,
    one sentence): it comes back whole if it fits."""
    if len(unit) != 1 or not terms:
        return True
    i = unit[0]
    msg = build.msgs[i]
    if i in build.stale or msg.tool_calls or msg.role not in ("user", "assistant") or not msg.content:
        return True
    parts = build.cache.sentences(msg.content)
    if len(parts) < 2:
        return True
    said = build.said
    scored = [0.0 if p in said else round(sum(w for t in set(stems(p)) if (w := terms.get(t)) is not None), 6)
              for p in parts]
    best = max(scored)
    if best <= 0:
        return False
    keep = [k for k, v in enumerate(scored) if v >= best][:EXCERPT_SENTENCES]
    matched = frozenset(t for k in keep for t in stems(parts[k]) if t in terms)
    out: list[str] = []
    at = 0
    for k in keep:
        if k > at:
            out.append("[…]")
        out.append(parts[k])
        at = k + 1
    if at < len(parts):
        out.append("[…]")
    # a system message: the shaping step gives it to the model in the context block after the
    # current input's text (providers/shaping.py), so next turn the prompt's prefix runs on
    # through that input
    turn = build.turns[i]
    new = Message(role="system", name=EXCERPT_NAME,
                  content=(f"(turn {turn}) " if turn is not None else "") + " ".join(out))
    n = build.counter.count_message(new)
    return Excerpt(new, n, matched, round(best / sum(terms.values()), 6)) if n < build.infos[i].tokens else True


def best_per_unit(build: Build, scores: dict[int, float], keep: Callable[[int, float], bool]
                  ) -> tuple[dict[int, float], dict[int, int]]:
    """Per unit (an exchange) not yet in the prompt, before the input's: its best score among
    ``scores`` (rounded, so equal scores tie the same way everywhere) and the message holding it.
    Stale messages, the input and messages already shown are skipped, and so is what ``keep`` refuses."""
    last = len(build.units) - 1
    best: dict[int, float] = {}
    best_msg: dict[int, int] = {}
    decisions, stale = build.decisions, build.stale
    for i, s in scores.items():
        if i in stale or not keep(i, s):
            continue
        d = decisions[i]
        if d is None or d.source == "input" or build.shown(i):
            continue
        u = build.unit_index(i)
        if u is None or u == last:
            continue
        key = round(s, 6)
        if key > best.get(u, -1.0):
            best[u] = key
            best_msg[u] = i
    return best, best_msg
