"""Whether an input asks for something: a question, or a request to the assistant.

The default mode's block of earlier messages relevant to the input (:mod:`.recall`) is re-sent with
every prompt — it follows the input, so a provider's prefix cache never holds it — and it is what
answers a question about the past. An input that asks nothing (a statement: "this morning I went to
the pharmacy", "thanks, that's enough") gets a small block, the best few relevant messages; a
question or a request gets all the room the verbatim window leaves. :func:`asks` tells them apart,
deterministically, from the text alone:

- a question mark anywhere, or
- a sentence that opens (after a greeting or filler such as "so", "ok", "please", and a speaker's or
  date label of a pasted chat) with a question word ("what", "when", "did", "can", ...) or a request
  verb addressed to the assistant ("tell", "show", "list", "summarise", "remind", "explain", ...).

"Can't wait." and "Had a great weekend." ask nothing; "Remind me what we decided." and "Tell me
about the museum" do.
"""

from __future__ import annotations

import re

from .relevance import SPEAKER_LABEL

_LEAD = (r"(?:(?:so|and|but|ok|okay|well|also|now|then|hey|hi|hello|please|pls|quick question|one more thing|"
         r"anyway)[,:!.]?\s+)*")
_QUESTION_WORDS = (
    r"what|when|where|who|whom|whose|which|why|how|is|are|was|were|do|does|did|can|could|would|will|should|"
    r"shall|may|might|have you|has|am i|isn|aren|wasn|weren|don|doesn|didn"
)
_REQUEST_VERBS = (
    r"tell|show|list|give|remind|recall|summari[sz]e|explain|describe|compare|find|write|draft|rewrite|"
    r"translate|make|create|build|generate|help|check|look|suggest|recommend|name|count|calculate|compute|"
    r"plot|draw|fix|debug|review|refactor|implement|add|remove|change|update|convert|run|test|estimate|"
    r"let me know|i wonder|i'm wondering|i was wondering|do you remember|any idea|go over|walk me through"
)
_ASK = re.compile(rf"^{_LEAD}(?:{_QUESTION_WORDS}|{_REQUEST_VERBS})\b(?!['\u2019]t\b|\s+not\b|\s+twist\b)", re.I)
_SENTENCE = re.compile(r"(?<=[.!;:])\s+|\n+")
_DATE_LABEL = re.compile(r"^\s*\([^)\n]{1,60}\)\s*")
ASK_SCAN_CHARS = 4000
"""An input is read for a question or a request in its first characters only (a pasted page asks in
its first lines or not at all: the bound keeps the check cheap)."""


def asks(text: str) -> bool:
    """Whether ``text`` asks for something (see the module docstring)."""
    head = text[:ASK_SCAN_CHARS]
    if "?" in head:
        return True
    for line in head.split("\n"):
        line = _DATE_LABEL.sub("", SPEAKER_LABEL.sub("", line, count=1), count=1)
        for sentence in _SENTENCE.split(line):
            if _ASK.match(sentence.strip().lstrip("-*>•").strip()):
                return True
    return False


_WHEN = re.compile(
    r"\b(?:when|what\s+(?:date|day|time|year|month|week)|which\s+(?:date|day|year|month|week)|how\s+long|ago|since|"
    r"before|after|until|till|first|last|latest|earliest|recently|next|previous|then|yesterday|today|tonight|"
    r"week|weeks|month|months|year|years|weekend|date|dates|dated|timeline|order|sequence)\b", re.I)


def asks_when(text: str) -> bool:
    """Whether ``text`` asks about time — when something happened, what came before or after, how long ago
    (:data:`_WHEN`, in its first :data:`ASK_SCAN_CHARS` characters): the question the dates of the earlier
    messages answer (``WorkingSetBuilder.quote_dates``)."""
    return _WHEN.search(text[:ASK_SCAN_CHARS]) is not None


__all__ = ["ASK_SCAN_CHARS", "asks", "asks_when"]
