"""Who a question means by "Harper's sister": the names a conversation introduced by a relation are looked for
with the question (context/aliases.py, ``Fusion.aliases``)."""

from __future__ import annotations

import asyncio

import pytest

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context.aliases import AliasBook, mentions
from arcana_jupyter.context.build import Build
from arcana_jupyter.context.relevance import DEFAULT_FUSION, LEGACY_FUSION, RelevanceIndex, parse_fusion
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig


@pytest.mark.parametrize(("text", "found"), [
    ("My sister Nicole borrowed my good suitcase again.", [("sister", "Nicole")]),
    ("our little brother Josh is moving", [("brother", "Josh")]),
    ("We adopted a golden retriever from the shelter, we named him Biscuit.", [("retriever", "Biscuit")]),
    ("Nicole is my sister, by the way.", [("sister", "Nicole")]),
    ("Nicole (my sister) rang.", [("sister", "Nicole")]),
    ("I met Dana, my boss, at lunch.", [("boss", "Dana")]),
    # a capitalised word that starts the next clause is no name; a greeting is no introduction
    ("I found a present for my dad On Sunday too", []),
    ("Thanks, my friend.", []),
    ("Honestly, my sister is mad at me.", []),
    ("The dog next door barked all night.", []),
])
def test_introductions_are_read_by_relation_and_name(text: str, found: list[tuple[str, str]]) -> None:
    assert mentions(text) == found


def test_a_relation_is_looked_up_for_the_person_the_question_names_or_for_whoever_asks() -> None:
    book = AliasBook()
    book.add(2, "My sister Nicole borrowed my suitcase.", "harper")
    book.add(5, "My sister Ines is visiting.", "rosalind")
    book.add(7, "We got a puppy, we called her Mango.", "harper")
    book.add(9, "My sister Nicole rang again.", "harper")
    assert book.names_for("What's new with Harper's sister?", 100) == [("harper", "sister", "Nicole", 2)]
    assert book.names_for("What's new with Rosalind's sister?", 100) == [("rosalind", "sister", "Ines", 5)]
    assert book.names_for("How is my sister?", 100, asker="rosalind") == [("rosalind", "sister", "Ines", 5)]
    assert book.names_for("Has Harper's pet settled in?", 100) == [("harper", "pet", "Mango", 7)]
    # only what was said before the build's history ends; a name the question says already adds nothing
    assert book.names_for("What's new with Harper's sister?", 2) == []
    assert book.names_for("Is Nicole, Harper's sister, moving?", 100) == []
    assert book.names_for("What's new with Harper?", 100) == []


def test_each_line_of_a_message_is_read_as_its_speakers_once_a_question_asks_by_a_relation() -> None:
    index = RelevanceIndex()
    msgs = [Message(role="user", content="[1 May] Harper: hi\n[1 May] Rosalind: My brother Josh says hi."),
            Message(role="assistant", content="My cat Pixel sat on the keyboard.")]
    for m in msgs:
        index.add(m)
    assert index.alias_names("What did Rosalind say?", msgs, 2) == [] and not index.aliases.intros  # not read yet
    assert index.alias_names("How is Rosalind's brother?", msgs, 2) == [("rosalind", "brother", "Josh", 0)]
    assert index.aliases.intros == {("rosalind", "brother"): [(0, "Josh")], ("assistant", "cat"): [(1, "Pixel")]}
    assert index.alias_names("How is the assistant's cat?", msgs, 1) == []  # only what was said before the limit


def conversation() -> list[Message]:
    """Harper introduces her sister once; later turns say only the name, among many about other things.
    Rosalind's turns talk about sisters and moves in general, the words the question shares."""
    history = [Message(role="system", content="Harper and Rosalind catch up.")]
    turns = [("Harper: My sister Nicole borrowed my good suitcase again.", "Rosalind: Ha, classic."),
             *((f"Harper: Busy week {k}, the garden and the office took all of it.",
                f"Rosalind: My sister says a move is always new stress, week {k} for sure.") for k in range(12)),
             ("Harper: Today Nicole announced she is going to San Diego for work.", "Rosalind: Wow!"),
             *((f"Harper: Another week {k}, the bus was late.", f"Rosalind: Sisters, what's new, week {k}?")
               for k in range(12))]
    for t, (user, reply) in enumerate(turns, 1):
        history += [Message(role="user", content=user, turn=t), Message(role="assistant", content=reply, turn=t)]
    return history


def ranked(fusion: str, question: str) -> tuple[list[int], list[str]]:
    history = conversation()
    builder = WorkingSetBuilder(TokenBudget(total_window=10**6, response_reserve=0), embedder=None, fusion=fusion)
    q = Message(role="user", content=question, turn=99)
    build = Build(builder, builder._cache, [*history, q], q.content, None, (), (), (), None, 0, None, None)
    match, _, _ = build.relevance(True)
    return sorted(match, key=lambda d: (-match[d], d)), build.notes


def test_the_question_finds_the_turn_that_says_only_the_name() -> None:
    fact = next(i for i, m in enumerate(conversation()) if "San Diego" in m.content)
    order, notes = ranked(DEFAULT_FUSION.spec(), "What's new with Harper's sister?")
    assert order[:2] == [1, fact]  # the introduction says both, then the news
    assert any("harper's sister is Nicole (message 1)" in n for n in notes)
    off, notes = ranked(DEFAULT_FUSION.spec().replace(",aliases=1", ""), "What's new with Harper's sister?")
    assert fact not in off[:3] and not any("is Nicole" in n for n in notes)


def test_the_default_looks_for_aliases_and_older_traces_rebuild_without() -> None:
    assert DEFAULT_FUSION.aliases == 1 and DEFAULT_FUSION.spec().endswith(",aliases=1")
    assert parse_fusion(LEGACY_FUSION).aliases == 0
    older = "learned:bm25=0.25,semantic=1,k=60,bm25_hi=0.25,gate_lo=1,gate_hi=1,lead=0,head=0,parts=1,sentences=1," \
            "names=1,model=2"
    assert parse_fusion(older).aliases == 0 and parse_fusion(older).spec() == older


@pytest.mark.parametrize("embeddings", ["default", "off"])
def test_a_default_session_brings_back_the_turn_about_my_sister(embeddings: str, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    """As ``Runtime()`` starts a session (the default mode: the bundled embedding model) in a small window,
    and with lexical relevance only: "my sister" is the user's."""
    if embeddings == "default":
        monkeypatch.delenv("ARCANA_EMBEDDINGS", raising=False)
    history = conversation()
    pairs = [(history[i].content, history[i + 1].content) for i in range(1, len(history), 2)]
    replies = iter([r for _, r in pairs] + ["Noted."])
    provider = FunctionProvider(lambda request: LLMResponse(message=Message(role="assistant", content=next(replies)),
                                                            usage=Usage(input_tokens=1, output_tokens=1)),
                                keep_requests=1)
    fact = next(u for u, _ in pairs if "San Diego" in u)

    async def run(tmp: str) -> str:
        config = RuntimeConfig(trace_dir=tmp, total_window=1400, response_reserve=400)
        async with Runtime(config=config, provider=provider).chat() as chat:
            for user, _ in pairs:
                await chat.send(user)
            reply = await chat.send("Harper: so, what's new with my sister again?")
            assert any("sister is Nicole" in n for n in reply.decision.notes)
        return "\n".join(m.content for m in provider.requests[-1].messages)

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        sent = asyncio.run(run(tmp))
    assert fact in sent
    assert sent.index(fact) > sent.index(pairs[-1][0])  # brought back as relevant, not still in the window


def test_the_user_names_the_user_messages_of_a_chat_without_labels() -> None:
    """In a chat between a user and an assistant, "the user" is who wrote the user messages: their turns first."""
    history = [Message(role="system", content="A helpful assistant.")]
    for t in range(1, 16):
        advice = (f"Reading helps: try one of the books on reading habits, day {t}." if t % 3 == 0
                  else f"Sounds tiring, rest well on day {t}.")
        history += [Message(role="user", content=f"Busy day {t}, the office again.", turn=t),
                    Message(role="assistant", content=advice, turn=t)]
    history += [Message(role="user", content="I finished reading The Kite Runner last night, what a book.", turn=16),
                Message(role="assistant", content="Lovely.", turn=16)]
    fact = len(history) - 2
    q = Message(role="user", content="Which books has the user been reading?", turn=17)

    def top(fusion: str) -> tuple[int, list[str]]:
        builder = WorkingSetBuilder(TokenBudget(total_window=10**6, response_reserve=0), embedder=None, fusion=fusion)
        build = Build(builder, builder._cache, [*history, q], q.content, None, (), (), (), None, 0, None, None)
        match, _, _ = build.relevance(True)
        return min((d for d in match if d < len(history)), key=lambda d: (-match[d], d)), build.notes

    best, notes = top(DEFAULT_FUSION.spec())
    assert best == fact and any("names the user" in n for n in notes)
    best, notes = top(DEFAULT_FUSION.spec().replace(",aliases=1", ""))
    assert best != fact and not any("names the user" in n for n in notes)
    index = RelevanceIndex()
    for m in history:
        index.add(m)
    assert index.query_speakers("What has the user's sister been up to?", roles=True) == {"the user"}
    assert index.query_speakers("What did the assistant suggest?", roles=True) == {"the assistant"}
    assert index.query_speakers("What has the user been reading?") == frozenset()  # older builds: as they were


def test_my_is_the_user_in_a_notebook_chat_without_labels() -> None:
    msgs = [Message(role="user", content="My sister Nicole is visiting next week."),
            Message(role="assistant", content="Nice, enjoy it."),
            Message(role="user", content="Nicole wants to see the lake."),
            Message(role="assistant", content="Sounds lovely.")]
    index = RelevanceIndex()
    for m in msgs:
        index.add(m)
    assert index.alias_names("What does my sister want to see?", msgs, 4) == [("user", "sister", "Nicole", 0)]
    assert index.alias_names("What does the user's sister want?", msgs, 4) == [("user", "sister", "Nicole", 0)]
