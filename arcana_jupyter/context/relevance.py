"""Relevance of older messages to the current input: BM25 plus recency, role and error content.

The score recorded in ``MessageDecision.relevance_score`` is

    relevance = 0.6 * bm25 + 0.2 * recency + 0.1 * role + 0.1 * error

- ``bm25``: :class:`~arcana_jupyter.text.BM25Index` normalised score of the message against the
  current input plus the task (``[0, 1]``; 1.0 means "mentions every query term").
- ``recency``: ``1 / (1 + age / 8)`` with ``age`` in user turns between the message and the input.
- ``role``: user 1.0, assistant 0.6, tool 0.4, system 0.5 — what the user said matters most.
- ``error``: 1.0 when the content looks like an error (a traceback, ``SomethingError``, ``error:``).

Only ``bm25`` depends on the question. The builder uses it to bring older turns the question is
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

from ..messages import Message
from ..text import BM25Index, words

W_BM25 = 0.6
W_RECENCY = 0.2
W_ROLE = 0.1
W_ERROR = 0.1
RECENCY_HALF_TURNS = 8.0
MAX_QUERY_TERMS = 10
MAX_DF_SHARE = 0.25
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


def static_score(role: str, error: bool) -> float:
    """The question-independent part of the relevance (role and error content), in ``[0, 0.2]``."""
    return W_ROLE * ROLE_WEIGHT.get(role, 0.5) + (W_ERROR if error else 0.0)


def combined(bm25: float, age_turns: int, static: float) -> float:
    """The recorded relevance score (rounded to 4 decimals so JSON is stable)."""
    recency = 1.0 / (1.0 + max(0, age_turns) / RECENCY_HALF_TURNS)
    return round(W_BM25 * bm25 + W_RECENCY * recency + static, 4)


class RelevanceIndex:
    """An append-only BM25 index over history messages, scoring only candidate documents.

    Candidates come from posting lists (term -> documents). Words get theirs as documents are
    added; numbers — most of the distinct terms of CSV and table outputs, and rarely what a
    question is about — get theirs lazily, only when a query names one, extended to new documents
    when it is queried again. That keeps a cold build on tool-heavy histories cheap and a warm
    build proportional to the new messages.
    """

    def __init__(self) -> None:
        self.bm25 = BM25Index()
        self._postings: dict[str, list[int]] = {}
        self._scanned: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.bm25)

    def add(self, message: Message) -> int:
        doc = self.bm25.add(message_text(message))
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

    def query_terms(self, query: str) -> list[str]:
        """The query's terms that carry weight: present in the index, not in many documents, rarest first.

        A term found in more than a quarter of the documents has an idf below log 4 (a rare term's
        is near log N): it hardly changes the ranking but would make most documents candidates. At
        most ``MAX_QUERY_TERMS`` terms are kept, the most specific ones.
        """
        n = len(self.bm25)
        cap = max(3, int(n * MAX_DF_SHARE))
        df = self.bm25._df
        found = sorted((k, t) for t in set(words(query)) if 0 < (k := df.get(t, 0)) <= cap)
        return [t for _, t in found[:MAX_QUERY_TERMS]]

    def scores(self, query: str, limit: int | None = None) -> dict[int, float]:
        """Normalised BM25 score of every document (below ``limit``) sharing a weighty term with ``query``."""
        terms = self.query_terms(query)
        if not terms:
            return {}
        candidates: set[int] = set()
        for term in terms:
            candidates.update(self._docs_with(term))
        if limit is not None:
            candidates = {d for d in candidates if d < limit}
        if not candidates:
            return {}
        return self.bm25.normalised_scores(terms, sorted(candidates))
