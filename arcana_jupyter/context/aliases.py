"""Who a question means by "Harper's sister": the names a conversation gave its people and pets.

People name the people around them once ("my sister Nicole borrowed my suitcase", "we adopted a golden
retriever, we named him Biscuit") and from then on say the name alone ("Nicole is moving to San Diego").
A question asks by the relation ("What's new with Harper's sister?", "what has my dog been up to?"), which
shares no word with the turns that hold its answer. :class:`AliasBook` reads the history messages for
such introductions — by whom (the message's speaker label, else its role), which relation, which name;
the relevance index feeds it the first time a question asks by a relation, then the new messages only
(:meth:`~.relevance.RelevanceIndex.alias_names`) — and :meth:`AliasBook.names_for` gives the names a
question's relations point at, so relevance can look for them too (``Fusion.aliases``; context/build.py adds
them to the BM25 query and to the question's core).

Only a relation word next to a capitalised name counts (``my sister Nicole``, ``Nicole, my sister``,
``our dog, Biscuit``, ``... a kitten, we named her Mango``); a name is the owner's by that relation once
it was introduced so, and a question's relation is looked up for the person it names (``Harper's``) or,
for ``my``, for whoever asks. No model, no guessing past what was said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

RELATIONS: dict[str, tuple[str, ...]] = {
    "sister": ("sister",), "sis": ("sister",), "brother": ("brother",),
    "mom": ("mother",), "mum": ("mother",), "mother": ("mother",), "mam": ("mother",),
    "dad": ("father",), "father": ("father",),
    "wife": ("wife",), "husband": ("husband",), "partner": ("partner",),
    "boyfriend": ("partner",), "girlfriend": ("partner",), "fiance": ("partner",), "fiancé": ("partner",),
    "fiancée": ("partner",), "fiancee": ("partner",),
    "son": ("son",), "daughter": ("daughter",),
    "kid": ("son", "daughter"), "kids": ("son", "daughter"), "child": ("son", "daughter"),
    "children": ("son", "daughter"), "boy": ("son",), "girl": ("daughter",),
    "grandma": ("grandmother",), "grandmother": ("grandmother",), "nan": ("grandmother",), "gran": ("grandmother",),
    "grandpa": ("grandfather",), "grandfather": ("grandfather",), "grandad": ("grandfather",),
    "aunt": ("aunt",), "uncle": ("uncle",), "cousin": ("cousin",), "niece": ("niece",), "nephew": ("nephew",),
    "boss": ("boss",), "manager": ("boss",), "colleague": ("colleague",), "coworker": ("colleague",),
    "roommate": ("roommate",), "flatmate": ("roommate",), "housemate": ("roommate",),
    "neighbour": ("neighbour",), "neighbor": ("neighbour",), "friend": ("friend",), "bestie": ("friend",),
    "dog": ("dog",), "puppy": ("dog",), "pup": ("dog",), "cat": ("cat",), "kitten": ("cat",),
    "pet": ("dog", "cat", "pet"), "pets": ("dog", "cat", "pet"), "rabbit": ("pet",), "hamster": ("pet",),
    "parrot": ("pet",),
    "retriever": ("dog",), "labrador": ("dog",), "spaniel": ("dog",), "terrier": ("dog",), "poodle": ("dog",),
    "beagle": ("dog",), "collie": ("dog",), "dachshund": ("dog",), "pug": ("dog",), "husky": ("dog",),
    "greyhound": ("dog",), "whippet": ("dog",), "corgi": ("dog",), "lab": ("dog",), "tabby": ("cat",),
}
"""A relation word -> the relations it stands for (``kids``: a son or a daughter; a breed: a dog)."""

_REL = "|".join(sorted(map(re.escape, RELATIONS), key=len, reverse=True))
_ADJ = r"(?:(?:little|big|older|younger|baby|new|old|eldest|oldest|youngest|twin|best|step|half)[- ]?)?"
_NAME = r"([A-Z][a-z\u00c0-\u017f]{1,20}(?:-[A-Z][a-z]{1,20})?)"
_INTRO = (
    # my sister Nicole / our dog, Biscuit / my little brother Josh
    re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+{_ADJ}({_REL})\s*,?\s+{_NAME}\b"),
    # Nicole (my sister) / Nicole is my sister / Nicole, my sister, ...
    re.compile(rf"\b{_NAME}\s*(?:\(|\bis\b|\bwas\b)\s*(?:[Mm]y|[Oo]ur)\s+{_ADJ}({_REL})\b"),
    re.compile(rf"\b{_NAME},\s*(?:[Mm]y|[Oo]ur)\s+{_ADJ}({_REL})\s*[,.!?)]"),
    # a golden retriever ..., we named him Biscuit / a kitten called Mango
    re.compile(rf"\b({_REL})\b[^.!?\n]{{0,80}}?\b(?:named|called)\s+(?:(?:him|her|it|them)\s+)?{_NAME}\b"),
)
"""The introductions read (the name first in the second and third)."""
_ASKED = re.compile(rf"\b(?:([A-Z][\w-]{{0,30}})['\u2019]s|([Mm]y|[Tt]he user['\u2019]s))\s+{_ADJ}({_REL})\b")
"""A relation a question asks by: ``Harper's sister``, ``my dog``, ``the user's kids``."""
NOT_NAMES = frozenset({
    "I", "The", "A", "An", "And", "But", "So", "On", "In", "At", "Today", "Yesterday", "Tomorrow", "Last", "This",
    "That", "Then", "He", "She", "They", "We", "It", "His", "Her", "Our", "My", "Your", "Their", "Who", "What",
    "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Mr", "Mrs", "Ms", "Dr",
    "Honestly", "Anyway", "Also", "Oh", "Well", "Just", "Still", "Now", "Because", "Since", "When", "If",
    "Thanks", "Thank", "Yes", "No", "Sorry", "Congrats", "Haha", "Wow", "Hey", "Hi", "Hello", "Okay", "Ok", "Sure",
})
"""Capitalised words that start a sentence after a relation, never a name."""
MAX_NAMES = 4
"""Most names one question's relations expand to (the most introduced first)."""


@dataclass
class AliasBook:
    """The names each speaker introduced by a relation, with the document that introduced them."""

    intros: dict[tuple[str, str], list[tuple[int, str]]] = field(default_factory=dict)
    """(owner, relation) -> (document, name) in the order they were read."""

    def add(self, doc: int, text: str, owner: str) -> None:
        """Read document ``doc``'s ``text``, whose introductions are ``owner``'s (lower-cased)."""
        if not text or not _may_hold(text):
            return
        for rel_word, name in mentions(text):
            for relation in RELATIONS[rel_word.lower()]:
                self.intros.setdefault((owner, relation), []).append((doc, name))

    def names_for(self, query: str, limit: int, asker: str = "user") -> list[tuple[str, str, str, int]]:
        """``(owner, relation word, name, first document)`` for each name the relations ``query`` asks by
        point at, introduced in documents before ``limit``; ``my`` is ``asker``'s. Names the query already
        says are left out; at most :data:`MAX_NAMES`, the most often introduced first."""
        if not self.intros:
            return []
        out: dict[str, tuple[int, str, str, int]] = {}
        said = set(re.findall(r"[A-Z][\w-]+", query))
        for m in _ASKED.finditer(query):
            owner = (m.group(1) or "").lower() or ("user" if m.group(2) and m.group(2).lower().startswith("the")
                                                   else asker)
            word = m.group(3).lower()
            for relation in RELATIONS[word]:
                seen: dict[str, list[int]] = {}
                for doc, name in self.intros.get((owner, relation), ()):
                    if doc < limit and name not in said:
                        seen.setdefault(name, []).append(doc)
                for name, docs in seen.items():
                    prev = out.get(name)
                    if prev is None or len(docs) > prev[0]:
                        out[name] = (len(docs), owner, word, docs[0])
        best = sorted(out.items(), key=lambda kv: (-kv[1][0], kv[1][3], kv[0]))[:MAX_NAMES]
        return [(owner, word, name, first) for name, (_, owner, word, first) in best]


def asks_by_relation(query: str) -> bool:
    """Whether ``query`` asks by a relation (``Harper's sister``, ``my dog``): only then are introductions read."""
    return _ASKED.search(query) is not None


def mentions(text: str) -> list[tuple[str, str]]:
    """``(relation word, name)`` for each introduction in ``text``."""
    out: list[tuple[str, str]] = []
    for k, pattern in enumerate(_INTRO):
        for m in pattern.finditer(text):
            rel, name = (m.group(2), m.group(1)) if k in (1, 2) else (m.group(1), m.group(2))
            if name not in NOT_NAMES and rel.lower() in RELATIONS:
                out.append((rel, name))
    return out


def _may_hold(text: str) -> bool:
    """A cheap test before the patterns: an introduction has ``my``/``our`` or ``named``/``called``."""
    low = text.lower()
    return "my " in low or "our " in low or "named " in low or "called " in low
