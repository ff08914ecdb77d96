"""Relevance in conversations between named people: the speaker a question names, a message scored by
its best sentence, and the small block an input that asks nothing gets."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from ctx_helpers import fact_session

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context.asking import asks
from arcana_jupyter.context.build import Build
from arcana_jupyter.context.rebuild import _builder_kwargs
from arcana_jupyter.context.relevance import (
    DEFAULT_FUSION,
    LEGACY_FUSION,
    RelevanceIndex,
    date_label,
    parse_fusion,
    passages,
    speaker_labels,
    stem,
    stems,
    without_names,
)
from arcana_jupyter.messages import Message

# ---- asking -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "When did Maria go to the museum?",
    "[3 May, 2024] Leon: Anyway, how's your brother doing",  # a question without its mark, after a label
    "Leon: (9:28 am on 26 March, 2023) Tell me more about the race.",
    "Remind me what we decided about the database.",
    "Please summarise the report in two sentences.",
    "So what was the bucket again",
    "Thanks. Now plot the sales by region.",
    "I was wondering whether the seed changed.",
])
def test_questions_and_requests_ask(text: str) -> None:
    assert asks(text)


@pytest.mark.parametrize("text", [
    "Can't wait.",
    "Had a great weekend, the weather held.",
    "[11:24 am on 25 May, 2024] Declan: This morning I went to the pharmacy and bumped into half the street.",
    "Plot twist: the move is to Chicago now.",
    "Thanks, that's enough.",
    "Shouldn't be long now.",
    "Maria: I ran the Harbour Half on Sunday, raised money for the hospital.",
])
def test_statements_ask_nothing(text: str) -> None:
    assert not asks(text)


# ---- speakers -----------------------------------------------------------------------------------


def test_speaker_labels_are_read_at_line_starts_and_not_from_note_or_error_labels() -> None:
    assert speaker_labels("[11:24 am on 25 May, 2024] Declan: Hey Esther!") == {"declan"}
    assert speaker_labels("Melanie: (9:28 am on 26 March, 2023) The coffee machine broke.\nMelanie: Again.") == {
        "melanie"}
    assert speaker_labels("Note: the seed is 4711.\nError: nothing found") == frozenset()
    assert speaker_labels("the ratio is 3:1 and at 10:30 we meet") == frozenset()


def two_friends() -> list[Message]:
    out = [Message(role="system", content="Two friends chat.")]
    for t in range(1, 41):
        out.append(Message(role="user", content=f"Maria: Day {t}. I baked bread again, the kitchen is a mess.",
                           turn=t))
        out.append(Message(role="assistant", content=f"Leon: Day {t}. I baked bread too, the oven smoked.", turn=t))
    return out


def test_a_question_naming_a_speaker_puts_their_messages_first() -> None:
    history = two_friends()
    index = RelevanceIndex()
    for m in history:
        index.add(m)
    assert index.query_speakers("What did Leon's oven do?") == {"leon"}
    assert index.query_speakers("What did Ada bake?") == frozenset()  # nobody of that name speaks here
    scores = index.scores("What bread did Leon bake?")
    ahead = index.speaker_prior(scores, frozenset({"leon"}), 4.0)
    best = sorted(ahead, key=lambda d: (-ahead[d], d))[:10]
    assert all(history[d].content.startswith("Leon:") for d in best)
    # no speaker named, or a weight of 0: unchanged
    assert index.speaker_prior(scores, frozenset(), 4.0) is scores
    assert index.speaker_prior(scores, frozenset({"leon"}), 0.0) is scores


def test_the_builder_records_the_speaker_weight_and_old_traces_rebuild_without_it() -> None:
    b = WorkingSetBuilder(TokenBudget(total_window=2000, response_reserve=500), embedder=None)
    assert b.settings()["speaker_weight"] == 4.0
    assert _builder_kwargs({})["speaker_weight"] == 0.0
    assert _builder_kwargs({"speaker_weight": 2})["speaker_weight"] == 2.0
    with pytest.raises(ValueError, match="speaker_weight"):
        WorkingSetBuilder(TokenBudget(total_window=2000, response_reserve=500), speaker_weight=-1)


# ---- passages -----------------------------------------------------------------------------------


def test_a_message_is_embedded_sentence_by_sentence_without_its_labels() -> None:
    m = Message(role="user", content="[3 May, 2024] Maria: Ha! The boiler broke again, the train was late. "
                                      "I joined the Hillside Harriers running club on Tuesday.\n"
                                      "Maria: Ok.")
    assert passages(m) == ["Ha! The boiler broke again, the train was late.",
                           "I joined the Hillside Harriers running club on Tuesday. Ok."]
    tool = Message(role="tool", content="a,b\n1,2\n3,4", tool_call_id="c1")
    assert passages(tool) == ["a,b\n1,2\n3,4"]


CONCEPTS = {stem(w): c for w, c in {"run": "run", "running": "run", "jog": "run", "race": "run",
                                    "club": "group", "group": "group", "team": "group", "join": "join",
                                    "joined": "join", "signed": "join"}.items()}


class SynonymEmbedder:
    """A deterministic bag-of-synonyms embedder (stems mapped to concepts, hashed into 96 dimensions)."""

    ident = "synonyms@1"

    def embed(self, text: str) -> np.ndarray:
        v = np.zeros(96, dtype=np.float32)
        for w in stems(text):
            c = CONCEPTS.get(w, w)
            v[int(hashlib.sha256(c.encode()).hexdigest(), 16) % 96] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v


def test_a_message_counts_by_its_best_sentence() -> None:
    index = RelevanceIndex()
    emb = SynonymEmbedder()
    long_day = Message(role="user", content="Long week. The boiler broke, the train was late twice, my aunt visited "
                                            "and the neighbours painted their fence orange. I signed up with a "
                                            "jogging team.")
    msgs = [long_day, *(Message(role="user", content=f"Small talk {k}: weather, coffee, trains, the boiler.")
                        for k in range(30))]
    for m in msgs:
        index.add(m)
        index.passage_starts.append(len(index.passage_vectors))
        index.passage_vectors.extend(emb.embed(p) for p in passages(m))
        index.vectors.append(emb.embed(m.content))
    q = emb.embed("Which running club did they join?")
    by_sentence = index.semantic_passages(q, len(msgs))
    whole = index.semantic(q, len(msgs))
    assert max(by_sentence, key=lambda d: (by_sentence[d], -d)) == 0
    # the best sentence's cosine, computed by hand
    assert by_sentence[0] == pytest.approx(max(float(emb.embed(p) @ q) for p in passages(long_day)), abs=1e-5)
    assert by_sentence[0] > whole.get(0, 0.0)


def test_the_fusion_spec_says_sentences_and_old_specs_read_as_written() -> None:
    assert DEFAULT_FUSION.sentences == 1 and "sentences=1" in DEFAULT_FUSION.spec()
    assert parse_fusion(LEGACY_FUSION).spec() == LEGACY_FUSION  # no new field appears in an old build's string
    assert parse_fusion(LEGACY_FUSION).sentences == 0


def test_names_come_out_of_the_question_as_asked_and_possessive() -> None:
    named = frozenset({"maria"})
    assert without_names("What gear did Maria splash out on? Maria's camera?", named) == \
        "What gear did splash out on? camera?"
    assert without_names("Maria?", named) == "Maria?"  # nothing else left: the question as asked
    assert without_names("What did Marianne say?", named) == "What did Marianne say?"  # whole words only
    assert DEFAULT_FUSION.names == 1 and parse_fusion(LEGACY_FUSION).names == 0


class RecordingEmbedder(SynonymEmbedder):
    ident = "synonyms-recorded@1"

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, text: str) -> np.ndarray:
        self.texts.append(text)
        return super().embed(text)


def test_a_question_naming_a_speaker_is_embedded_with_and_without_the_name() -> None:
    # Maria's small talk says her name over and over; her fact does not. The name left in the question
    # pulls it to the small talk; taken out (names=1, the default), the fact comes first.
    history = [Message(role="system", content="Two friends.")]
    for t in range(1, 13):
        history += [Message(role="user", content=f"Maria: Maria, Maria, Maria, the club {t}.", turn=t),
                    Message(role="assistant", content=f"Leon: Hi Maria, good to hear from you {t}.", turn=t)]
    history += [Message(role="user", content="Maria: I signed up with a jogging team.", turn=13),
                Message(role="assistant", content="Leon: Nice.", turn=13)]
    for t in range(14, 20):
        history += [Message(role="user", content=f"Maria: Maria, Maria, Maria, the club {t}.", turn=t),
                    Message(role="assistant", content=f"Leon: Hello Maria {t}.", turn=t)]
    question = Message(role="user", content="Which club did Maria join?", turn=20)
    fact = next(i for i, m in enumerate(history) if "jogging" in m.content)

    def best(fusion: str) -> tuple[int, list[str]]:
        emb = RecordingEmbedder()
        builder = WorkingSetBuilder(TokenBudget(total_window=10**6, response_reserve=0), embedder=emb,
                                    fusion=fusion)
        build = Build(builder, builder._cache, [*history, question], question.content, None, (), (), (), None, 0,
                      None, None)
        match, _, _ = build.relevance(True)
        return max(match, key=lambda d: (match[d], -d)), emb.texts

    spec = DEFAULT_FUSION.spec()
    top, texts = best(spec)
    assert top == fact
    assert "Which club did join?" in texts and question.content in texts
    # the question's core leaves the names out too (version 2): the difference shows with version 1's features
    v1 = spec.replace("model=2", "model=1")
    assert best(v1)[0] == fact
    top, texts = best(v1.replace(",names=1", ""))
    assert top != fact and "Which club did join?" not in texts
    assert best(spec.replace(",names=1", ""))[0] == fact and "club join" in best(spec)[1]


# ---- the block of an input that asks nothing ----------------------------------------------------


def session(turns: int) -> list[Message]:
    return fact_session(turns, 'Ana: I grouped the weekly extract by region again. ')


def fill_builder(**kw) -> WorkingSetBuilder:
    return WorkingSetBuilder(TokenBudget(total_window=3000, response_reserve=1000), embedder=None,
                             drop_policy="blocks", block_recall="fill", block_recall_share=0.35, **kw)


def test_a_statement_gets_a_small_block_and_a_question_all_the_room() -> None:
    history = session(90)
    b = fill_builder(block_tell_share=0.05)
    question = b.build([*history, Message(role="user", content="Which seed did team 9 use?",
                                          turn=91)], turn=91)
    statement = b.build([*history, Message(role="user", content="The seed for team 9 is settled now.",
                                           turn=91)], turn=91)
    assert question.report.recalled_tokens > 2 * int(b.budget.available * 0.05)
    assert 0 < statement.report.recalled_tokens <= int(b.budget.available * 0.05)
    assert statement.report.free_reason == "statement"
    assert any("asks nothing" in n for n in statement.decision.notes)
    # without the setting (traces recorded before it), a statement gets all the room too
    old = fill_builder().build([*history, Message(role="user", content="The seed for team 9 is settled now.",
                                                  turn=91)], turn=91)
    assert old.report.recalled_tokens > statement.report.recalled_tokens
    assert _builder_kwargs({})["block_tell_share"] is None
    assert _builder_kwargs({"block_tell_share": 0.08})["block_tell_share"] == 0.08


def test_quotes_counted_as_their_lines_leave_room_for_more_of_them() -> None:
    history = session(90)
    question = Message(role="user", content="Which seed did team 9 use?", turn=91)
    as_messages = fill_builder().build([*history, question], turn=91)
    as_lines = fill_builder(quote_counting="line").build([*history, question], turn=91)
    quoted = [d for d in as_lines.decision.decisions if d.recalled]
    assert len(quoted) > len([d for d in as_messages.decision.decisions if d.recalled])
    # what the builder counted for the quotes is what the shaped prompt's context block holds
    from arcana_jupyter.providers.shaping import SHAPES, shape
    from arcana_jupyter.tokens import TokenCounter
    counter = TokenCounter()
    sent = shape(as_lines.messages, SHAPES["portable"]).messages
    assert counter.count_messages(sent) <= as_lines.budget.available
    assert _builder_kwargs({})["quote_counting"] == "message"
    with pytest.raises(ValueError, match="quote_counting"):
        fill_builder(quote_counting="words")


# ---- the order the default mode's block takes relevant messages in -------------------------------


class MeaningEmbedder:
    """The question and the two facts mean one thing; every other text means another."""

    ident = "meaning@1"

    def embed(self, text: str) -> np.ndarray:
        same = any(w in text for w in ("jogging", "race group", "running club"))
        return np.array([1.0, 0.0] if same else [0.0, 1.0], dtype=np.float32)


def test_the_block_takes_the_fused_ranking_in_order_and_old_traces_alternate() -> None:
    # two facts found by meaning only, and look-alikes that share the question's words and nothing else
    history = [Message(role="system", content="Two friends.")]
    for t in range(1, 41):
        if t == 9:
            text = "Maria: I signed up with a jogging team."
        elif t == 23:
            text = "Maria: My race group meets at dawn on Sundays."
        elif t % 5 == 0:
            text = f"Maria: Which one did she join? Number {t}, who knows."
        else:
            text = f"Maria: Day {t}. I baked bread again, the kitchen is a mess."
        history += [Message(role="user", content=text, turn=t),
                    Message(role="assistant", content=f"Leon: Day {t}. The oven smoked.", turn=t)]
    question = Message(role="user", content="Which running club did she join?", turn=41)
    facts = {i for i, m in enumerate(history) if "jogging" in m.content or "race group" in m.content}

    def recalled(ranking: str) -> set[int]:
        b = WorkingSetBuilder(TokenBudget(total_window=1080, response_reserve=1000), embedder=MeaningEmbedder(),
                              drop_policy="blocks", block_recall="fill", block_recall_share=0.5,
                              block_recall_min=64, block_ranking=ranking)
        assert b.settings()["block_ranking"] == ranking
        out = b.build([*history, question], turn=41)
        return {d.index for d in out.decision.decisions if d.recalled and d.reason.startswith("relevant")}

    fused, alternate = recalled("fused"), recalled("alternate")
    assert facts == fused
    assert not facts <= alternate  # a look-alike took the room of one fact
    assert _builder_kwargs({})["block_ranking"] == "alternate"
    assert _builder_kwargs({"block_ranking": "fused"})["block_ranking"] == "fused"
    with pytest.raises(ValueError, match="block_ranking"):
        WorkingSetBuilder(TokenBudget(total_window=1500, response_reserve=1000), block_ranking="best")


@pytest.mark.parametrize(("text", "date"), [
    ("Melanie: (9:28 am on 26 March, 2023) The office coffee machine is broken again.", "9:28 am on 26 March, 2023"),
    ("[10:57 am on 3 June, 2023] Harper: Unpopular opinion.", "10:57 am on 3 June, 2023"),
    ("[2024-05-03] Bob: hi", "2024-05-03"),
    ("(May 3, 2024) notes from the call", "May 3, 2024"),
    ("(turn 3) hi", None),  # brackets without a date
    ("Maria: (note) the seed changed", None),
    ("Hello (3 May) there", None),  # a date later in the line labels nothing
    # a first line that only dates the session, as a harness may send it
    ("Session 3 — 1:50 pm on 9 June, 2023\nHarper: hi", "Session 3 — 1:50 pm on 9 June, 2023"),
    ("Date: Monday 3 June 2023", "Date: Monday 3 June 2023"),
    ("I moved on 3 May 2023.", None),  # a sentence with a date in it is no header
    ("On 3 June.", None),  # nor is an answer that is only a date
])
def test_a_message_date_label_is_read_before_or_after_its_speaker(text: str, date: str | None) -> None:
    assert date_label(text) == date
