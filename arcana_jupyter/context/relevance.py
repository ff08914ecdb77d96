"""Relevance of older messages to the current input: BM25 (+ embeddings) plus recency, role and error content.

The score recorded in ``MessageDecision.relevance_score`` is

    relevance = 0.6 * match + 0.2 * recency + 0.1 * role + 0.1 * error

- ``match``: how well the message matches the current input plus the task, in ``[0, 1]``. Two
  rankings, fused as :data:`DEFAULT_FUSION` says (:class:`Fusion`, recorded as
  ``settings()["fusion"]``):

  - lexical: the :class:`~arcana_jupyter.text.BM25Index` normalised score over Snowball-stemmed
    words without stop words (``1.0`` = "mentions every query term"), after one round of
    pseudo-relevance feedback (the query is expanded with the most specific words of its best
    first-round hits, at a lower weight: questions about two or three turns find the second turn
    through the first);
  - semantic (:mod:`.embeddings`, the bundled sentence-embedding model; off with
    ``ARCANA_EMBEDDINGS=off`` or ``RuntimeConfig(embeddings="off")``): the cosine of the question
    with the message's best sentence (:func:`passages`: a turn of small talk with one fact in it
    matches a question about that fact by that sentence, not by the average of all of them).

  First the BM25 hits that hold most of the query's rare terms (the *head*,
  :meth:`RelevanceIndex.coverage`: a literal question's evidence, which turns merely about the same
  topic must not outrank), then the two rankings by reciprocal rank fusion. Then the speaker prior
  (:meth:`RelevanceIndex.speaker_prior`): when the question names a speaker of the conversation
  (``Maria:`` labels of a pasted chat or transcript), every other message's match is divided by
  ``1 + speaker_weight``. Tuned on the dev splits of two-person conversations asked in other words
  (``python -m benchmarks.retention.ranking``, benchmarks/results/ranking.md). :func:`fuse` also
  says, per message, which list it came from (``bm25`` or ``semantic``).
- ``recency``: ``1 / (1 + age / 8)`` with ``age`` in user turns between the message and the input.
- ``role``: user 1.0, assistant 0.6, tool 0.4, system 0.5 — what the user said matters most.
- ``error``: 1.0 when the content looks like an error (a traceback, ``SomethingError``, ``error:``).

Only ``match`` depends on the question. The builder uses it to bring older turns the question is
about back into the prompt (the "relevant earlier turns" block), and uses the question-independent
part (role, error) to keep user messages and errors one fidelity level higher in compressed bands,
so that the stable part of the prompt does not change with every question.

The index is incremental: documents are appended as the history grows, and a posting list (term ->
documents) restricts scoring to documents that share a term with the query, so a warm build on a
long history scores a handful of documents, not all of them. The query is reduced to its most
specific terms (at most 10, none found in more than a quarter of the documents; see
:meth:`RelevanceIndex.query_terms`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import Message
from ..text import BM25Index, words
from ._snowball import EnglishStemmer
from .aliases import AliasBook, asks_by_relation

W_BM25 = 0.6
W_RECENCY = 0.2
W_ROLE = 0.1
W_ERROR = 0.1
RECENCY_HALF_TURNS = 8.0
MAX_QUERY_TERMS = 10
MAX_DF_SHARE = 0.25
BM25_K1 = 1.2
BM25_B = 0.75
PRF_DOCS = 3
"""Pseudo-relevance feedback: the best first-round documents whose words expand the query ..."""
PRF_TERMS = 6
"""... this many of their most specific words (highest tf * idf, not in the query) ..."""
PRF_WEIGHT = 0.35
"""... each counted at this weight (a query word counts 1)."""
COVERAGE_TOP = 40
"""The best BM25 hits whose coverage of the query is computed (:meth:`RelevanceIndex.coverage`)."""
SEMANTIC_TOP = 160
"""The cosine ranking takes part in the fusion with its best ``SEMANTIC_TOP`` messages."""
SEMANTIC_MIN = 0.1
"""... that have at least this cosine with the query."""
ROLE_WEIGHT: dict[str, float] = {"user": 1.0, "assistant": 0.6, "tool": 0.4, "system": 0.5}

_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\w(?:Error|Exception)\b|\b(?:[Ee]rror:|ERROR\b)|\bfailed\b",
)


INDEX_HEAD_CHARS = 1500
INDEX_TAIL_CHARS = 500
TOOL_HEAD_CHARS = 600
TOOL_TAIL_CHARS = 300
"""Long texts are indexed and checked for errors by their head and tail only: that is where a
file's header, a frame's columns or a traceback's first and last lines are, and it keeps the
indexing cost per message bounded. Tool results (CSV rows, tables, logs) get a shorter window:
their bulk is numbers that no question is about."""


def _bounded(text: str, head: int = INDEX_HEAD_CHARS, tail: int = INDEX_TAIL_CHARS) -> str:
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n" + text[-tail:]


_STEMMER = EnglishStemmer()
_STEMS: dict[str, str] = {}


def stem(word: str) -> str:
    """The Snowball (English) stem of a lower-cased word, cached; digits and identifiers pass through."""
    hit = _STEMS.get(word)
    if hit is None:
        hit = word if (not word.isalpha() or len(word) <= 3) else _STEMMER.stemWord(word)
        if len(_STEMS) < 500_000:
            _STEMS[word] = hit
    return hit


def stems(text: str) -> list[str]:
    """:func:`arcana_jupyter.text.words` (lower-cased, stop words removed), stemmed."""
    return [stem(w) for w in words(text)]


def looks_like_error(text: str) -> bool:
    """True when ``text`` carries an error: a traceback, an exception name, ``error:`` or ``failed``."""
    text = _bounded(text)
    # cheap substring screens first: the regex is only run on texts that might match
    if "rror" not in text and "xception" not in text and "Traceback" not in text and "failed" not in text:
        return False
    return _ERROR.search(text) is not None


def message_text(message: Message) -> str:
    """The text a message is indexed by: its content (head and tail when long) plus tool calls."""
    if message.role == "tool":
        return _bounded(message.content, TOOL_HEAD_CHARS, TOOL_TAIL_CHARS)
    if not message.tool_calls:
        return _bounded(message.content)
    return " ".join([_bounded(message.content), *(f"{c.name} {c.arguments}" for c in message.tool_calls)])


SPEAKER_LABEL = re.compile(
    r"^[ \t]*(?:[\[(][^\])\n]{1,60}[\])][ \t]*)?([A-Z][\w'\u2019.-]{0,30}(?: [A-Z][\w'\u2019.-]{0,30})?):[ \t]",
    re.M,
)
"""A speaker's label at the start of a line — ``Maria: ...``, ``[3 May, 2024] Maria: ...`` — as pasted chat
logs and transcripts write them."""
NOT_SPEAKERS = frozenset(
    """note notes error warning warnings example output input result results summary step question answer q a
    user assistant system human ai todo traceback update edit ps tip hint important nb re fw subject from to cc
    date time source sources reference references usage returns args parameters raises see also""".split())
"""Line labels that name no speaker."""
SPEAKER_WEIGHT = 4.0
"""The builder's default ``speaker_weight`` (tuned on the dev splits, see benchmarks/results/ranking.md)."""
SPEAKER_MIN_DOCS = 2
"""A label names a speaker when it starts lines in at least this many messages."""
DATE_LABEL = re.compile(
    r"^[ \t]*(?:[A-Z][\w'\u2019.-]{0,30}(?: [A-Z][\w'\u2019.-]{0,30})?:[ \t]*)?[\[(]([^\])\n]{4,60})[\])]"
    r"(?:[ \t]*[A-Z][\w'\u2019.-]{0,30}(?: [A-Z][\w'\u2019.-]{0,30})?:)?")
"""A date label at the start of a message, before or after its speaker's label: ``[3 May, 2024] Maria: ...``,
``Maria: (9:28 am on 26 March, 2023) ...`` (its bracketed text, when :data:`DATE_WORD` finds a date in it)."""
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
DATE_WORD = re.compile(rf"\b{_MONTH}\.?\s+\d{{1,2}}\b|\b{_DAY}\s+{_MONTH}\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|"
                       rf"\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b", re.I)
"""A date somewhere in a label (what makes a bracketed label or a header line a date label)."""
_DATE = re.compile(rf"\b(?:{_DAY}\s+{_MONTH}\.?(?:,?\s+\d{{4}})?|{_MONTH}\.?\s+{_DAY}(?:,?\s+\d{{4}})?|"
                   rf"\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}})\b", re.I)
"""A whole date within a label, its year too: ``26 March, 2023``, ``May 3, 2024``, ``2024-05-03``, ``3/5/24``."""


_HEADER_WORDS = frozenset("""session sessions date day time on at am pm a.m. p.m. of the chat log conversation part
    monday tuesday wednesday thursday friday saturday sunday mon tue wed thu fri sat sun""".split())
"""Besides a date, the words a header line that dates a session may hold ("Session 3 — 1:50 pm on 9 June, 2023",
"Date: Monday 3 June 2023")."""


def date_label(text: str) -> str | None:
    """The date a message's first line is labelled with, as written: a bracketed label before or after its
    speaker's (:data:`DATE_LABEL`), or a first line that is only a header dating the session ("Session 3 — 1:50 pm on
    9 June, 2023": a date, times, numbers and :data:`_HEADER_WORDS`, with a year or the word "session" or "date");
    ``None`` when it has none."""
    head = text[:200]
    m = DATE_LABEL.match(head)
    if m is not None and DATE_WORD.search(m.group(1)):
        return " ".join(m.group(1).split())
    first = head.split("\n", 1)[0].strip()
    if len(first) > 80 or not DATE_WORD.search(first) or not re.search(r"\b\d{4}\b|\b(?:session|date)\b", first, re.I):
        return None  # a header says the year or that it is one: "On 3 June." alone is an answer, not a header
    rest = DATE_WORD.sub(" ", first)
    rest = re.sub(r"\d+(?:[:.]\d+)?(?:st|nd|rd|th)?|[^\w\s.]", " ", rest)
    if all(w in _HEADER_WORDS or re.fullmatch(_MONTH, w) for w in rest.lower().split()):
        return " ".join(first.split()).strip(" -\u2014\u2013:")
    return None


def short_date(label: str) -> str:
    """The date in a date label, without the time of day or a header's words (``9:28 am on 26 March, 2023`` ->
    ``26 March, 2023``; ``Session 3 - 9 June 2023`` -> ``9 June 2023``): what a "when" question needs, in half the
    tokens. The label itself when no date expression is found in it."""
    m = _DATE.search(label)
    return m.group(0) if m else label


def _line_speaker(line: str) -> str | None:
    """The speaker (lower-cased) whose label starts ``line`` (:data:`SPEAKER_LABEL`), ``None`` without one."""
    m = SPEAKER_LABEL.match(line)
    return m.group(1).lower() if m and m.group(1).lower() not in NOT_SPEAKERS else None


ROLE_NAMES = {"user": "the user", "assistant": "the assistant"}
"""What a question calls the speaker of a message that carries no speaker label, by its role (read as a speaker
with ``Fusion.aliases``: labels are capitalised names, so no label is ever one of these)."""
ROLE_MENTION = re.compile(r"\b(the user|the assistant)(?=['\u2019]s\b|\b)", re.I)
SPEAKER_LABEL_CHARS = 4000
"""Speaker labels are looked for in the first characters of a message only (a bound on the cost)."""


def speaker_labels(text: str) -> frozenset[str]:
    """The speakers (lower-cased) whose labels start lines of ``text`` (see :data:`SPEAKER_LABEL`)."""
    if ":" not in text:
        return frozenset()
    found = {m.group(1).lower() for m in SPEAKER_LABEL.finditer(text[:SPEAKER_LABEL_CHARS])}
    return frozenset(n for n in found if n not in NOT_SPEAKERS)


PASSAGE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
PASSAGE_MIN_WORDS = 3
"""A sentence shorter than this joins the next one (\"Ha!\" alone means nothing to an embedding)."""
MAX_PASSAGES = 12
"""Most passages a message is embedded as: a longer message's sentences are grouped, neighbours
together, into this many (a bound on the embedding cost of a long reply: ~17 ms of CPU a passage)."""


def passages(message: Message) -> list[str]:
    """What a message is embedded as with sentence-level semantic relevance: the sentences of its
    indexed text (:func:`message_text`), each line's speaker and date label taken off — a long turn
    of small talk with one fact in it matches a question about that fact by that sentence, not by
    the average of all of them. Tool results and messages with tool calls are one passage."""
    text = message_text(message)
    if message.role not in ("user", "assistant") or message.tool_calls:
        return [text]
    out: list[str] = []
    carry = ""
    for line in text.split("\n"):
        line = SPEAKER_LABEL.sub("", line, count=1).strip()
        for part in PASSAGE_SPLIT.split(line):
            part = (carry + " " + part).strip() if carry else part.strip()
            if not part:
                continue
            if len(part.split()) < PASSAGE_MIN_WORDS:
                carry = part
                continue
            carry = ""
            out.append(part)
    if carry:
        if out:
            out[-1] = out[-1] + " " + carry
        else:
            out.append(carry)
    if len(out) > MAX_PASSAGES:  # neighbouring sentences together, in MAX_PASSAGES groups of near-equal size
        n = len(out)
        out = [" ".join(out[k * n // MAX_PASSAGES:(k + 1) * n // MAX_PASSAGES]) for k in range(MAX_PASSAGES)]
    return out or [text]


def static_score(role: str, error: bool) -> float:
    """The question-independent part of the relevance (role and error content), in ``[0, 0.2]``."""
    return W_ROLE * ROLE_WEIGHT.get(role, 0.5) + (W_ERROR if error else 0.0)


def recency(age_turns: int) -> float:
    """The recency part of the score, weighted: ``W_RECENCY / (1 + age / RECENCY_HALF_TURNS)``."""
    return W_RECENCY / (1.0 + max(0, age_turns) / RECENCY_HALF_TURNS)


def combined(bm25: float, age_turns: int, static: float) -> float:
    """The recorded relevance score (rounded to 4 decimals so JSON is stable)."""
    return round(W_BM25 * bm25 + recency(age_turns) + static, 4)


class RecordedScores:
    """The relevance score recorded for each history message of one build: :func:`combined` of its
    match to the question (``match``, missing: 0), its age in turns before ``current_turn`` and its
    ``static`` score. Called once per history message on every build: the recency of each turn is
    computed once per build."""

    __slots__ = ("_recency", "current", "infos", "match", "turns")

    def __init__(self, match: dict[int, float], turns: list[int | None], infos: list[Any],
                 current_turn: int | None) -> None:
        self.match = match
        self.turns = turns
        self.infos = infos
        self.current = current_turn
        self._recency: dict[int | None, float] = {}

    def recency_of(self, turn: int | None) -> float:
        """:func:`recency` of a message of this turn (age 0 for no turn, or no current turn)."""
        cur = self.current
        age = cur - turn if (cur is not None and turn is not None and turn < cur) else 0
        hit = self._recency[turn] = recency(age)
        return hit

    def __call__(self, i: int) -> float:
        t = self.turns[i]
        rec = self._recency.get(t)
        if rec is None:
            rec = self.recency_of(t)
        # W_BM25 * 0.0 + rec is rec: a message the question does not match scores combined(0.0, ...)
        return round(W_BM25 * self.match.get(i, 0.0) + rec + self.infos[i].static, 4)


class RelevanceIndex:
    """An append-only BM25 index over history messages, scoring only candidate documents.

    Candidates come from posting lists (term -> documents). Words get theirs as documents are
    added; numbers — most of the distinct terms of CSV and table outputs, and rarely what a
    question is about — get theirs lazily, only when a query names one, extended to new documents
    when it is queried again. That keeps a cold build on tool-heavy histories cheap and a warm
    build proportional to the new messages. Terms are Snowball stems (:func:`stems`).

    With an embedding model the builder appends each document's vector to :attr:`vectors`
    (same numbering); :meth:`semantic` ranks them by cosine with a query vector.
    """

    def __init__(self) -> None:
        self.bm25 = BM25Index(k1=BM25_K1, b=BM25_B, analyzer=stems)
        self._postings: dict[str, list[int]] = {}
        self._scanned: dict[str, int] = {}
        self.vectors: list[Any] = []
        self._matrix: Any = None
        self._filled = 0
        """Rows of :attr:`_matrix` copied from :attr:`vectors`."""
        self.passage_vectors: list[Any] = []
        """With sentence-level semantic relevance (``Fusion.sentences``): every document's passages'
        vectors (:func:`passages`), document after document ..."""
        self.passage_starts: list[int] = []
        """... and the row of each document's first passage."""
        self._pmatrix: Any = None
        self._pfilled = 0
        self.speakers: list[frozenset[str]] = []
        """The speakers whose labels start lines of each document (:func:`speaker_labels`)."""
        self._speaker_docs: dict[str, int] = {}
        self.nwords: list[int] = []
        """The words of each document's indexed text (:func:`message_text`; the learned fusion's length)."""
        self.user: list[bool] = []
        """Whether each document is a user message."""
        self.dates: list[str | None] = []
        """The date each document's session is labelled with: its own date label (:func:`date_label`), else the
        latest earlier one (a pasted chat dates the first message of each session only). Read lazily, the first
        time a quote needs one (:meth:`session_date`), then for the new documents only."""
        self.dated: list[bool] = []
        """Whether each document carries its date label itself."""
        self.aliases = AliasBook()
        """The names the conversation gave its people and pets, by whom and by which relation (:mod:`.aliases`);
        read lazily, the first time a question asks by a relation (:meth:`alias_names`), then for the new documents."""
        self._aliases_read = 0
        self._user_labels: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.bm25)

    def add(self, message: Message) -> int:
        text = message_text(message)
        doc = self.bm25.add(text)
        self.nwords.append(len(text.split()))
        self.user.append(message.role == "user")
        spk = speaker_labels(message.content) if message.role in ("user", "assistant") else frozenset()
        if message.role == "user":  # who "my" is in a question (alias_names): a label, never a role's name
            for name in spk:
                self._user_labels[name] = self._user_labels.get(name, 0) + 1
        if not spk and message.role in ROLE_NAMES:  # a chat between a user and an assistant: its roles
            spk = frozenset({ROLE_NAMES[message.role]})
        self.speakers.append(spk)
        for name in spk:
            self._speaker_docs[name] = self._speaker_docs.get(name, 0) + 1
        # BM25Index keeps each document's term frequencies: read them rather than re-tokenising
        postings = self._postings
        for term in self.bm25._tfs[doc]:
            if not term.isdigit():
                plist = postings.get(term)
                if plist is None:
                    postings[term] = [doc]
                else:
                    plist.append(doc)
        return doc

    def _docs_with(self, term: str) -> list[int]:
        if not term.isdigit():
            return self._postings.get(term, [])
        tfs = self.bm25._tfs
        start = self._scanned.get(term, 0)
        plist = self._postings.setdefault(term, [])
        if start < len(tfs):
            plist.extend(d for d in range(start, len(tfs)) if term in tfs[d])
            self._scanned[term] = len(tfs)
        return plist

    def _cap(self) -> int:
        return max(3, int(len(self.bm25) * MAX_DF_SHARE))

    def query_terms(self, query: str) -> list[str]:
        """The query's terms that carry weight: present in the index, not in many documents, rarest first.

        A term found in more than a quarter of the documents has an idf below log 4 (a rare term's
        is near log N): it hardly changes the ranking but would make most documents candidates. At
        most ``MAX_QUERY_TERMS`` terms are kept, the most specific ones.
        """
        cap = self._cap()
        df = self.bm25._df
        found = sorted((k, t) for t in set(stems(query)) if 0 < (k := df.get(t, 0)) <= cap)
        return [t for _, t in found[:MAX_QUERY_TERMS]]

    def _score(self, weights: dict[str, float], limit: int | None) -> dict[int, float]:
        """:meth:`BM25Index.normalised_scores` of the documents below ``limit`` that hold a term of
        ``weights``, term at a time over the posting lists (the same sums, in the same order)."""
        bm = self.bm25
        tfs, lens = bm._tfs, bm._lens
        if not tfs:
            return {}
        k1, b = bm.k1, bm.b
        avg = bm._total_len / len(tfs) or 1.0
        end = len(tfs) if limit is None else min(limit, len(tfs))
        acc: dict[int, float] = {}
        ideal = 0.0
        for term, w in weights.items():
            qn = float(w)
            if qn <= 0:
                continue
            idf = bm._idf(term)
            ideal += qn * idf
            plist = self._docs_with(term)
            for d in plist[:bisect_left(plist, end)]:
                f = tfs[d][term]
                norm = k1 * (1 - b + b * lens[d] / avg)
                acc[d] = acc.get(d, 0.0) + qn * idf * f * (k1 + 1) / (f + norm)
        if not acc or ideal <= 0:
            return {}
        return {d: min(1.0, acc[d] / ideal) for d in sorted(acc) if acc[d] > 0}

    def _score_reference(self, weights: dict[str, float], limit: int | None) -> dict[int, float]:
        """:meth:`_score` computed document at a time by :class:`BM25Index` (tests compare the two)."""
        candidates: set[int] = set()
        for term in weights:
            candidates.update(self._docs_with(term))
        if limit is not None:
            candidates = {d for d in candidates if d < limit}
        if not candidates:
            return {}
        return self.bm25.normalised_scores(weights, sorted(candidates))

    def scores(self, query: str, limit: int | None = None, *, feedback: bool = True) -> dict[int, float]:
        """Normalised BM25 score of every document (below ``limit``) sharing a weighty term with ``query``.

        ``feedback``: one round of pseudo-relevance feedback (see the module docstring).
        """
        terms = self.query_terms(query)
        if not terms:
            return {}
        weights = dict.fromkeys(terms, 1.0)
        first = self._score(weights, limit)
        if not feedback or not first:
            return first
        top = sorted(first, key=lambda d: (-first[d], d))[:PRF_DOCS]
        cap = self._cap()
        df = self.bm25._df
        gain: dict[str, float] = {}
        for d in top:
            for t, f in self.bm25._tfs[d].items():
                if t in weights or t.isdigit() or not 1 < df[t] <= cap:
                    continue
                gain[t] = gain.get(t, 0.0) + f * self.bm25.idf(t)
        extra = sorted(gain, key=lambda t: (-round(gain[t], 9), t))[:PRF_TERMS]
        if not extra:
            return first
        expanded = {**weights, **dict.fromkeys(extra, PRF_WEIGHT)}
        second = self._score(expanded, limit)
        # normalised against the original query's ideal: expansion words add evidence, not a new scale
        ideal = sum(self.bm25.idf(t) for t in terms)
        full = sum(w * self.bm25.idf(t) for t, w in expanded.items())
        scale = full / ideal if ideal > 0 else 1.0
        return {d: min(1.0, v * scale) for d, v in second.items()}

    def coverage(self, query: str, lexical: dict[int, float], top: int = COVERAGE_TOP) -> dict[int, float]:
        """How fully each of the ``top`` best BM25 hits holds the query's specific terms: the
        idf-weighted share, in ``[0, 1]``, of the query's terms found in at most a quarter of the
        messages that the message contains. Terms that no message has count too (at the highest
        idf), so a question in other words covers little even where the one word it shares with
        the history matches; a literal question's evidence holds all of its rare words, whatever
        feedback did to its BM25 rank."""
        if not lexical:
            return {}
        cap = self._cap()
        df = self.bm25._df
        idf = self.bm25._idf
        weights = {t: idf(t) for t in set(stems(query)) if df.get(t, 0) <= cap}
        total = sum(weights.values())
        if total <= 0:
            return {}
        tfs = self.bm25._tfs
        out: dict[int, float] = {}
        for d in sorted(lexical, key=lambda d: (-lexical[d], d))[:top]:
            held = tfs[d]
            out[d] = round(sum(w for t, w in weights.items() if t in held) / total, 6)
        return out

    # ---- speakers ---------------------------------------------------------------------------
    def _read_aliases(self, doc: int, message: Message) -> None:
        """The introductions in ``message`` (its first :data:`SPEAKER_LABEL_CHARS`), each line's by the speaker
        whose label starts it, else by the message's role."""
        if message.role not in ("user", "assistant"):
            return
        for line in message.content[:SPEAKER_LABEL_CHARS].split("\n"):
            self.aliases.add(doc, line, _line_speaker(line) or message.role)

    def alias_names(self, query: str, msgs: Sequence[Message], limit: int) -> list[tuple[str, str, str, int]]:
        """:meth:`~.aliases.AliasBook.names_for` ``query`` over the documents before ``limit`` (``msgs``: the
        messages they index, read for introductions the first time a question asks by a relation): ``my`` is the
        query's own speaker's (its label), else the user's (the label most of the user's messages carry, else
        ``user``)."""
        if not asks_by_relation(query):
            return []
        end = min(limit, len(msgs), len(self.speakers))
        for d in range(self._aliases_read, end):
            self._read_aliases(d, msgs[d])
        self._aliases_read = max(self._aliases_read, end)
        asker = _line_speaker(query) or (max(sorted(self._user_labels), key=self._user_labels.__getitem__)
                                         if self._user_labels else "user")
        return self.aliases.names_for(query, limit, asker)

    def session_date(self, msgs: Sequence[Message], i: int) -> str | None:
        """The date of document ``i``'s session when it carries none itself (:attr:`dates`; ``msgs``: the messages
        the documents index, read for date labels up to ``i`` the first time); ``None`` when it is dated itself or
        nothing before it was."""
        if i >= len(self.speakers) or i >= len(msgs):
            return None
        for d in range(len(self.dates), i + 1):
            m = msgs[d]
            own = date_label(m.content) if m.role in ("user", "assistant") else None
            self.dated.append(own is not None)
            self.dates.append(own if own is not None else (self.dates[-1] if self.dates else None))
        return None if self.dated[i] else self.dates[i]

    def query_speakers(self, query: str, roles: bool = False) -> frozenset[str]:
        """The speakers of this conversation a question names (a capitalised word, possessive or not,
        that labels lines of at least :data:`SPEAKER_MIN_DOCS` messages); with ``roles`` also ``the user`` and
        ``the assistant`` (:data:`ROLE_NAMES`: in a chat whose messages carry no labels, "What has the user been
        reading?" asks about the user's messages)."""
        if not self._speaker_docs:
            return frozenset()
        named = {w.lower() for w in re.findall(r"\b([A-Z][\w-]{0,30})(?:['\u2019]s)?\b", query)}
        if roles:
            named |= {m.lower() for m in ROLE_MENTION.findall(query)}
        return frozenset(n for n in named if self._speaker_docs.get(n, 0) >= SPEAKER_MIN_DOCS)

    def speaker_prior(self, scores: dict[int, float], named: frozenset[str], weight: float) -> dict[int, float]:
        """``scores`` with the messages of the speakers a question names ahead: every other message's
        score divided by ``1 + weight`` (in a conversation between two people, "what did Maria bake?" is
        answered by what Maria said). Unchanged when the question names no speaker or ``weight`` is 0."""
        if not named or weight <= 0 or not scores:
            return scores
        speakers = self.speakers
        down = 1.0 / (1.0 + weight)
        return {d: (v if d < len(speakers) and speakers[d] & named else round(v * down, 6))
                for d, v in scores.items()}

    # ---- semantic ---------------------------------------------------------------------------
    def semantic(self, query_vector: Any, limit: int) -> dict[int, float]:
        """Cosine (rounded to 5 decimals) of the best ``SEMANTIC_TOP`` documents below ``limit``.

        Ties go to the earlier document. The vectors live in one matrix that grows by doubling (new
        rows copied in once), and only the documents at or above the ``SEMANTIC_TOP``-th cosine are
        sorted: a warm build on a long history costs one matrix-vector product."""
        sims = self.message_sims(query_vector, limit)
        return _top(sims, len(sims)) if sims is not None else {}

    def message_sims(self, query_vector: Any, limit: int) -> Any:
        """The cosine (rounded to 5 decimals) of every document below ``limit`` by its whole-text vector
        (:attr:`vectors`), as an array; ``None`` when there is none."""
        import numpy as np

        n = min(limit, len(self.vectors))
        if n <= 0:
            return None
        m = self._matrix
        if m is None or m.shape[0] < n:
            dim = len(self.vectors[0])
            grown = np.empty((max(n, 2 * (m.shape[0] if m is not None else 0), 256), dim), dtype=np.float32)
            if m is not None and self._filled:
                grown[:self._filled] = m[:self._filled]
            m = self._matrix = grown
        if self._filled < n:
            m[self._filled:n] = np.asarray(self.vectors[self._filled:n], dtype=np.float32)
            self._filled = n
        return np.round(m[:n] @ query_vector, 5)

    def semantic_passages(self, query_vector: Any, limit: int) -> dict[int, float]:
        """:meth:`semantic` by each document's best passage (:attr:`passage_vectors`): the cosine of the
        sentence that matches the question best stands for its message."""
        sims = self.passage_sims(query_vector, limit)
        return _top(sims, len(sims)) if sims is not None else {}

    def passage_sims(self, query_vector: Any, limit: int) -> Any:
        """The cosine (rounded to 5 decimals) of every document below ``limit`` by its best passage, as an
        array; ``None`` when there is none."""
        import numpy as np

        n = min(limit, len(self.passage_starts))
        if n <= 0:
            return None
        rows = self.passage_starts[n] if n < len(self.passage_starts) else len(self.passage_vectors)
        m = self._pmatrix
        if m is None or m.shape[0] < rows:
            dim = len(self.passage_vectors[0])
            grown = np.empty((max(rows, 2 * (m.shape[0] if m is not None else 0), 1024), dim), dtype=np.float32)
            if m is not None and self._pfilled:
                grown[:self._pfilled] = m[:self._pfilled]
            m = self._pmatrix = grown
        if self._pfilled < rows:
            m[self._pfilled:rows] = np.asarray(self.passage_vectors[self._pfilled:rows], dtype=np.float32)
            self._pfilled = rows
        sims = np.maximum.reduceat(m[:rows] @ query_vector, np.asarray(self.passage_starts[:n], dtype=np.intp))
        return np.round(sims, 5)


def without_names(text: str, named: frozenset[str]) -> str:
    """``text`` without the (lower-cased) names in ``named``, possessive or not (``Fusion.names``); the text
    itself when nothing else would be left."""
    if not named:
        return text
    pattern = r"\b(?:" + "|".join(re.escape(n) for n in sorted(named)) + r")(?:['\u2019]s)?\b"
    out = re.sub(r"\s{2,}", " ", re.sub(pattern, "", text, flags=re.I)).strip()
    return out if re.search(r"\w", out) else text


CORE_DROP = frozenset("enjoy enjoys think thinks might may many much often".split())
"""Words of a question's frame that :func:`question_core` drops beside the stop words ("Would she enjoy ...",
"How many ...", "What might he think of ...")."""


def question_core(text: str, named: frozenset[str] = frozenset()) -> str:
    """What a question asks about, for one more embedding: its content words (stop words out, lower-cased), without
    the names in ``named`` and the frame words of :data:`CORE_DROP` — "Would Rosalind enjoy a visit to a botanical
    garden?" -> ``visit botanical garden``. A second view of the question: ranked against the history it orders
    the messages otherwise than the whole question does, and the learned model weighs both (the gain on the dev
    splits is largest for open questions). ``text`` itself when nothing would be left."""
    kept = [w for w in words(without_names(text, named)) if w not in CORE_DROP]
    return " ".join(kept) or text


def _top(sims: Any, n: int) -> dict[int, float]:
    """The best :data:`SEMANTIC_TOP` of ``n`` cosines that reach :data:`SEMANTIC_MIN` (ties: the earlier)."""
    import numpy as np

    if n > SEMANTIC_TOP:
        cut = np.partition(sims, n - SEMANTIC_TOP)[n - SEMANTIC_TOP]  # the SEMANTIC_TOP-th largest
        idx = np.flatnonzero(sims >= max(cut, SEMANTIC_MIN))
    else:
        idx = np.flatnonzero(sims >= SEMANTIC_MIN)
    top = idx[np.lexsort((idx, -sims[idx]))][:SEMANTIC_TOP]
    return {int(d): float(sims[d]) for d in top}


@dataclass(frozen=True)
class Fusion:
    """How the BM25 ranking and the cosine ranking are combined into one match (see :func:`fuse`).

    ``method`` ranks the documents:

    - ``rrf``: reciprocal rank fusion, ``bm25 / (k + rank) + semantic / (k + rank)``, fixed weights.
    - ``gated``: the same, with BM25's weight raised from ``bm25`` to ``bm25_hi`` as the query's
      lexical confidence (the best coverage, :meth:`RelevanceIndex.coverage`) goes from ``gate_lo``
      to ``gate_hi``.
    - ``interleave``: the two lists alternately (``lead`` of semantic's first), each in its order.
    - ``score``: ``w * bm25 + (1 - w) * cosine'`` of the normalised scores (cosine' rescaled so that
      the best is 1 and the last of the list 0), ``w`` gated like ``gated``'s BM25 weight.
    - ``learned``: a logistic model over both rankings and what else the builder knows of each message
      (:mod:`.learned_fusion`, its weights version ``model``); ``head`` is one of its features there,
      not a rule, and ``bm25``, ``semantic``, ``k`` and the gates are not read.

    ``head`` (0: none): the BM25 hits that cover at least this share of the query's rare terms
    come before everything else, in BM25 order — a literal question's evidence is not outranked by
    turns that are merely about the same thing. ``parts``: 1 embeds the query's parts (the input,
    this turn's user message, the task) one by one, each cached by content like a history message,
    and sums them; 0 embeds the joined text (the input changes at every step of a tool loop, so
    that is a new embedding each step). ``sentences``: 1 scores a message by its best passage
    (:func:`passages`: its sentences, speaker labels off) rather than by its whole text embedded
    once; 0 (what builds recorded before the field rebuild with): the whole text. ``names``: 1 embeds a
    question that names a speaker of the conversation (:meth:`RelevanceIndex.query_speakers`) twice, as
    asked and with the names taken out (:func:`without_names`), and sums the two: the speaker prior
    already puts that speaker's messages first, and the passages are embedded with their labels off, so
    the name left in pulls the question towards every message that mentions the person rather than the
    one that holds the fact ("What gear did Bianca splash out on?" against "I finally bought a secondhand
    Nikon"); 0 (builds recorded before the field): as asked.

    Recorded in the builder settings as :meth:`spec` (``settings()["fusion"]``); a trace without it was
    built with :data:`LEGACY_FUSION`.
    """

    method: str = "rrf"
    bm25: float = 0.25
    semantic: float = 1.0
    k: int = 60
    bm25_hi: float = 0.25
    gate_lo: float = 1.0
    gate_hi: float = 1.0
    lead: int = 0
    head: float = 0.0
    parts: int = 0
    sentences: int = 0
    names: int = 0
    model: int = 0
    aliases: int = 0

    def spec(self) -> str:
        """``method:key=value,...`` (every field, so the string alone says how a build was fused; fields
        added later, :data:`_LATER_FIELDS`, only when set, so an older build's string reads as it was written)."""
        return self.method + ":" + ",".join(f"{name}={getattr(self, name):g}" for name in _FUSION_FIELDS
                                            if name not in _LATER_FIELDS or getattr(self, name))

    def gated_weight(self, confidence: float, lo: float, hi: float) -> float:
        """``lo`` below ``gate_lo`` confidence, ``hi`` from ``gate_hi`` on, linear in between."""
        if confidence >= self.gate_hi:
            return hi
        if confidence <= self.gate_lo or self.gate_hi <= self.gate_lo:
            return lo
        return lo + (hi - lo) * (confidence - self.gate_lo) / (self.gate_hi - self.gate_lo)


_FUSION_FIELDS: dict[str, type] = {"bm25": float, "semantic": float, "k": int, "bm25_hi": float, "gate_lo": float,
                                   "gate_hi": float, "lead": int, "head": float, "parts": int, "sentences": int,
                                   "names": int, "model": int, "aliases": int}
_LATER_FIELDS = frozenset({"sentences", "names", "model", "aliases"})
FUSION_METHODS = ("rrf", "gated", "interleave", "score", "learned")
LEGACY_FUSION = "rrf:bm25=0.25,semantic=1,k=60,bm25_hi=0.25,gate_lo=1,gate_hi=1,lead=0,head=0,parts=0"
"""The fusion of builds recorded before ``settings()["fusion"]`` existed (fixed RRF, BM25 at 0.25)."""


def parse_fusion(spec: str | Fusion | None) -> Fusion:
    """A :class:`Fusion` from its :meth:`Fusion.spec` string (``None``: :data:`DEFAULT_FUSION`);
    keys left out take the field defaults. Raises ``ValueError`` naming the problem for an unknown
    method or key or a bad number."""
    if isinstance(spec, Fusion):
        return spec
    if spec is None:
        return DEFAULT_FUSION
    method, _, rest = spec.partition(":")
    if method not in FUSION_METHODS:
        raise ValueError(f"fusion method must be one of {list(FUSION_METHODS)}, got {method!r} (in {spec!r})")
    kwargs: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or key not in _FUSION_FIELDS:
            raise ValueError(
                f"fusion {spec!r}: expected key=value with a key of {sorted(_FUSION_FIELDS)}, got {part!r}")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"fusion {spec!r}: {key} must be a number, got {value!r}") from None
        kwargs[key] = int(number) if _FUSION_FIELDS[key] is int else number
    if method == "learned":
        from .learned_fusion import MODELS

        if "model" not in kwargs:
            raise ValueError(f"fusion {spec!r}: the learned fusion needs model=N with N one of {sorted(MODELS)}")
        if kwargs["model"] not in MODELS:
            raise ValueError(f"fusion {spec!r}: no learned fusion model {kwargs['model']} here (known: "
                             f"{sorted(MODELS)}); a newer arcana-jupyter recorded it: upgrade to rebuild it")
    return Fusion(method=method, **kwargs)


def fuse(
    lexical: dict[int, float],
    semantic: dict[int, float] | None,
    fusion: Fusion | None = None,
    coverage: dict[int, float] | None = None,
) -> tuple[dict[int, float], dict[int, str]]:
    """The fused match (in ``[0, 1]``) and the list it came from (``via``) per document.

    ``via`` names the list that ranked the document higher (``bm25`` on a tie; for the weighted
    methods, the list whose weighted share is larger; ``bm25`` for the head). Without a semantic
    ranking, ``match`` is the BM25 score itself (the lexical-only relevance), whatever the fusion.
    ``coverage``: :meth:`RelevanceIndex.coverage` of the best BM25 hits (the gates and the head).
    """
    if semantic is None:
        return lexical, dict.fromkeys(lexical, "bm25")
    f = fusion or LEGACY
    if f.method == "learned":
        raise ValueError("the learned fusion needs the features of every message, not two ranked lists: "
                         "Build.relevance computes it (learned_fusion.learned_match)")
    cover = coverage or {}
    confidence = max(cover.values(), default=0.0)
    lex_order = sorted(lexical, key=lambda d: (-lexical[d], d))
    sem_order = sorted(semantic, key=lambda d: (-semantic[d], d))
    lex_rank = {d: r for r, d in enumerate(lex_order, 1)}
    sem_rank = {d: r for r, d in enumerate(sem_order, 1)}
    match: dict[int, float] = {}
    via: dict[int, str] = {}
    if f.method in ("rrf", "gated"):
        wb = f.bm25 if f.method == "rrf" else f.gated_weight(confidence, f.bm25, f.bm25_hi)
        ws, k = f.semantic, f.k
        best = (wb + ws) / (k + 1)
        for d in lex_rank.keys() | sem_rank.keys():
            lr, sr = lex_rank.get(d), sem_rank.get(d)
            total = (wb / (k + lr) if lr else 0.0) + (ws / (k + sr) if sr else 0.0)
            match[d] = round(total / best, 6)
            via[d] = "bm25" if lr is not None and (sr is None or wb * (k + sr) >= ws * (k + lr)) else "semantic"
    elif f.method == "score":
        w = f.gated_weight(confidence, f.bm25, f.bm25_hi)
        top = semantic[sem_order[0]] if sem_order else 0.0
        floor = semantic[sem_order[-1]] if len(sem_order) > 1 else 0.0
        span = top - floor
        for d in lex_rank.keys() | sem_rank.keys():
            lx = lexical.get(d, 0.0)
            sx = (semantic[d] - floor) / span if d in semantic and span > 0 else (1.0 if d in semantic else 0.0)
            match[d] = round(w * lx + (1 - w) * sx, 6)
            via[d] = "bm25" if d in lexical and w * lx >= (1 - w) * sx else "semantic"
    else:  # interleave: both lists alternately, ``lead`` of semantic's first
        order: list[int] = []
        seen: set[int] = set()
        li = si = 0
        while li < len(lex_order) or si < len(sem_order):
            turn_sem = si < len(sem_order) and (li >= len(lex_order) or si < f.lead
                                                or (li + si - f.lead) % 2 == 0)
            if turn_sem:
                d, si = sem_order[si], si + 1
            else:
                d, li = lex_order[li], li + 1
            if d not in seen:
                seen.add(d)
                order.append(d)
                via[d] = "semantic" if turn_sem else "bm25"
        n = len(order)
        for pos, d in enumerate(order):
            match[d] = round(1.0 - pos / max(1, n), 6)
    if f.head > 0:
        head = [d for d in lex_order if cover.get(d, 0.0) >= f.head]
        if head:
            # the head first, in BM25 order, above everything else: the rest squeezed below 0.5
            for d in match:
                match[d] = round(match[d] * 0.5, 6)
            for pos, d in enumerate(head):
                match[d] = round(1.0 - 0.5 * pos / len(head), 6)
                via[d] = "bm25"
    return match, via


LEGACY = parse_fusion(LEGACY_FUSION)
RRF_FUSION = parse_fusion(
    "rrf:bm25=0.3,semantic=1,k=60,bm25_hi=0.3,gate_lo=1,gate_hi=1,head=0.6,parts=1,sentences=1,names=1")
"""The default before the learned fusion: first the BM25 hits that hold at least 60% of the question's rare terms
(``head``: a literal question's evidence is never outranked by turns merely about the same thing), then
reciprocal rank fusion of the BM25 ranking (weight 0.3) and the cosine ranking (weight 1) in which a
message counts by its best sentence (``sentences=1``: a turn of small talk with one fact in it matches a
question about the fact), the query's parts embedded one by one, a question naming a speaker embedded with
and without the name (``names=1``: on the dev splits recall within 2,000 tokens 0.78 -> 0.89 on talks_dev,
0.86 on chats_dev either way; without the name alone, 0.92 and 0.84). Chosen
on the dev splits of two-person conversations (``talks_dev``, ``chats_dev``, two conversations each;
``python -m benchmarks.retention.ranking``; benchmarks/results/ranking.md): with the speaker prior,
recall of the evidence within the best 2,000 tokens 0.81 / 0.86 against 0.63 / 0.75 for the previous
default (``score`` fusion of whole-message vectors, BM25 hits holding 30% of the query's rare terms
first) and 0.47 / 0.65 for BM25 alone; the head changes nothing there (0.4-1.0 alike) and keeps the
literal hit first where near misses crowd the cosine ranking (tests/context/test_context_fusion.py). The
``score`` fusions lost 0.05-0.08 on the paraphrased conversations: BM25 gives almost every turn of a chat
between two named people some score, so its scores say little past its first hits, and its ranks at a
low weight say enough."""
DEFAULT_FUSION = parse_fusion("learned:parts=1,sentences=1,names=1,model=2,aliases=1")
"""The fusion a new builder uses: the learned fusion (:mod:`.learned_fusion`, version 2) of the same two
rankings as :data:`RRF_FUSION` (the query's parts embedded one by one, a message by its best sentence, a
question naming a speaker embedded with and without the name), with the head, the speaker, the message's
length, its neighbours and its cosine with the question's core (version 2) as features. Leave one
conversation out on the dev splits' first three conversations, recall of the evidence within the best 1,000 /
2,000 tokens went 0.76 / 0.89 (RRF) -> 0.78 / 0.89 (version 1) -> 0.82 / 0.91 (version 2) on talks_dev and
0.75 / 0.86 -> 0.81 / 0.89 -> 0.84 / 0.90 on chats_dev (``python -m benchmarks.retention.train_fusion``)."""
