"""The learned reader of the standing-instruction recogniser (adaptive/standing_model.py): it reads what the
rules leave as a plain statement, with the shipped weights over the bundled embedding model, and never
overturns a reason the rules reject a sentence for."""

from __future__ import annotations

import json

import pytest

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.standing import LEARNED_READS, judge, recognise
from arcana_jupyter.adaptive.standing_model import MODEL_FILE, StandingModel, standing_model
from arcana_jupyter.context.embeddings import default_embedder


@pytest.fixture(scope="module")
def reader() -> StandingModel:
    embedder = default_embedder()
    assert embedder is not None  # a core dependency
    model = standing_model(embedder.embed, embedder.ident)
    assert model is not None
    return model


def test_the_shipped_weights_belong_to_the_bundled_embedding_model() -> None:
    data = json.loads(MODEL_FILE.read_text())
    embedder = default_embedder()
    assert embedder is not None and data["embedder"] == embedder.ident
    assert len(data["weights"]) == len(embedder.embed("a sentence")) and 0.5 < data["threshold"] < 1
    assert data["made_by"] == "python -m benchmarks.retention.train_standing"
    # another embedding model (or none) gets no reader: its vectors mean something else
    assert standing_model(embedder.embed, "another-model@1") is None
    assert standing_model(None, None) is None


# written for this test, apart from the data the weights were trained on; the rules miss each of them
@pytest.mark.parametrize(("sentence", "kind"), [
    ("Short answers suit me best.", "instruction"),
    ("Plain ASCII in commit messages.", "constraint"),
    ("Two spaces for indentation in YAML files.", "constraint"),
])
def test_the_reader_keeps_what_the_rules_left_as_a_statement(reader: StandingModel, sentence: str,
                                                             kind: str) -> None:
    assert judge(sentence).finding is None and judge(sentence).reason in LEARNED_READS
    verdict = judge(sentence, reader)
    assert verdict.finding is not None and verdict.finding.rule == "learned"
    assert verdict.finding.kind == kind and verdict.finding.text == sentence


@pytest.mark.parametrize("sentence", [
    "I had a great weekend at the lake.",
    "The coffee here is terrible.",
    "Your last answer was really helpful.",  # the reader would: it tells of the past
    "Sorry, I was away for a bit.",
])
def test_the_reader_leaves_small_talk_out(reader: StandingModel, sentence: str) -> None:
    assert judge(sentence, reader).finding is None


@pytest.mark.parametrize(("sentence", "reason"), [
    ("Should we always answer in French?", "question"),
    ("The README says \"never commit to main\".", "quoted"),
    ("Just this once, skip the tests.", "one_off"),
    ("Can't wait to ship it.", "chit_chat"),
    ("Tell the intern to always run the linter.", "third_party"),
    ("If we ever move to Go, we'd rewrite the parser.", "hypothetical"),
])
def test_a_reader_that_says_yes_to_everything_never_overturns_a_rejection(sentence: str, reason: str) -> None:
    assert judge(sentence, lambda s: True).reason == reason


def test_what_tells_of_the_past_or_asks_for_one_thing_now_stays_out_whatever_the_reader_says() -> None:
    for sentence in ("The deploy broke yesterday on the staging box.", "Give me the commands to get it running."):
        assert judge(sentence).finding is None
        assert judge(sentence, lambda s: True).finding is None


def test_one_thing_now_is_read_in_the_main_clause_only_and_here_says_where_it_holds() -> None:
    yes = lambda s: True  # noqa: E731 - a reader that says yes: only the gate decides
    assert judge("Set up ESLint in this project.", yes).finding is None  # one thing, now
    assert judge("Rename that column to total.", yes).finding is None
    for sentence in ("Three sentences max each, I read these on a phone.",  # "these" is in the reason
                     "House style for SQL here is all lowercase, keywords included."):
        assert judge(sentence).finding is None and judge(sentence, yes).finding is not None, sentence


def test_a_polite_question_is_read_as_the_request_it_makes(reader: StandingModel) -> None:
    # the reader rates the request ("Write docstrings in plain English.") above its question form
    assert reader.score("Write docstrings in plain English.") >= reader.threshold \
        > reader.score("Could you write docstrings in plain English?")
    found = judge("Could you write docstrings in plain English?", reader).finding
    assert found is not None and (found.kind, found.rule) == ("instruction", "learned")
    for sentence in ("Can you write the fetch helper for the orders endpoint?",  # one thing, now
                     "Could you explain how the isolation levels differ?",
                     "Could you check whether the migration ran? Or is it still going?",
                     "Should we always answer in French?"):  # not a request
        assert judge(sentence, reader).finding is None, sentence


def test_a_binding_limit_is_read_at_the_lenient_bar(reader: StandingModel) -> None:
    # a project's limit said as a plain statement: the reader alone rates it below its strict bar
    limit = "The mailing provider allows at most 300 emails a day on our plan."
    assert reader.lenient_threshold <= reader.score(limit) < reader.threshold
    found = judge(limit, reader).finding
    assert found is not None and (found.kind, found.rule) == ("constraint", "learned")
    assert judge("The build must have been broken yesterday.", reader).finding is None  # the past
    assert judge("My sister has to be at the airport by six.", reader).finding is None  # chit-chat


def test_from_today_is_a_time_scope_not_a_one_off() -> None:
    found = judge("From today, could you answer me in Spanish?").finding
    assert found is not None and found.rule == "directive"
    assert judge("Could you send me the report today?").finding is None
    assert judge("I need the report from today.").finding is None


def test_an_engine_keeps_a_learned_finding_as_a_standing_object_with_its_rule(reader: StandingModel) -> None:
    engine = AdaptiveEngine()
    engine.standing_reader = reader
    engine.begin_turn(1, "Hi again. Plain ASCII in commit messages. What's the next step?")
    [obj] = engine.standing()
    assert obj.payload == "Plain ASCII in commit messages." and obj.created_turn == 1
    bare = AdaptiveEngine()  # no reader (a session with lexical relevance): the rules alone
    bare.begin_turn(1, "Hi again. Plain ASCII in commit messages. What's the next step?")
    assert bare.standing() == []
    assert recognise("Plain ASCII in commit messages.") == []


def test_a_change_is_about_what_the_rules_found_and_a_learned_finding_never_replaces_one() -> None:
    learned = "The code can stay in English."
    engine = AdaptiveEngine()
    engine.standing_reader = lambda s: s == learned  # a reader that keeps this one sentence
    engine.begin_turn(1, f"Could you switch to French for your answers from now on? {learned}")
    french, code = engine.standing()
    assert code.payload == learned and engine.learned == {code.id} and french.id not in engine.learned
    engine.begin_turn(2, "Use 4 spaces for indentation in every snippet you write.")
    engine.standing_reader = lambda s: s.startswith("Two-space")
    engine.begin_turn(3, "Two-space snippets would look odd in our modules.")  # same choice: adds, replaces nothing
    assert [o.payload for o in engine.standing()][2:] == [
        "Use 4 spaces for indentation in every snippet you write.", "Two-space snippets would look odd in our modules."]
    # "English" is in the learned one, "French" in the rules' one: the revocation takes back the rules' one
    engine.begin_turn(4, "Let's return to English, the French was slowing me down too much.")
    live = [o.id for o in engine.standing()]
    assert french.id not in live and code.id in live
    # a resumed engine knows which ones the reader kept (recorded as the action's rule)
    events: list[tuple[str, dict]] = []
    again = AdaptiveEngine(emit=lambda et, md: events.append((et, md)))
    again.standing_reader = lambda s: s == learned
    again.begin_turn(1, f"Could you switch to French for your answers from now on? {learned}")
    resumed = AdaptiveEngine().load_events([{"event_type": et, "metadata": md, "turn": 1} for et, md in events])
    assert resumed.learned == again.learned != set()


class TwoBars:
    """A reader whose strict bar says no and whose lenient bar says yes, recording which was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def __call__(self, sentence: str) -> bool:
        self.asked.append(("strict", sentence))
        return False

    def lenient(self, sentence: str) -> bool:
        self.asked.append(("lenient", sentence))
        return True


def test_a_liking_said_in_the_first_person_is_read_at_the_lenient_bar() -> None:
    # the form says "for good"; the reader only has to say it is about the work (trained: 0.5 against 0.8)
    reader = TwoBars()
    liking = "I'd rather see medians than means for skewed data."
    verdict = judge(liking, reader)
    assert verdict.finding is not None and verdict.finding.kind == "preference" and verdict.finding.rule == "learned"
    assert reader.asked == [("lenient", liking)]
    # any other statement is read at the strict bar
    reader.asked.clear()
    assert judge("Weekly rollups use Monday-start weeks.", reader).finding is None
    assert reader.asked == [("strict", "Weekly rollups use Monday-start weeks.")]
    # and a wish about the speaker's life never reaches the reader
    reader.asked.clear()
    assert judge("I'd rather be at the beach right now.", reader).finding is None and reader.asked == []


def test_the_shipped_lenient_bar_is_below_the_strict_one() -> None:
    data = json.loads(MODEL_FILE.read_text())
    assert 0 < data["lenient_threshold"] < data["threshold"] < 1


@pytest.mark.parametrize(("sentence", "kind"), [
    ("going forward pls pass args by name when a call takes two or more, positional soup is unreadable",
     "instruction"),  # "pls" is "please"
    ("Not a fan of classes for the sake of it; if it doesn't hold state, make it a function.", "preference"),
])
def test_shorthand_and_a_dislike_are_read_by_the_rules(sentence: str, kind: str) -> None:
    found = judge(sentence).finding
    assert found is not None and found.kind == kind


def test_a_dislike_of_nothing_in_the_work_is_not_a_preference() -> None:
    assert judge("Not a fan of Mondays, honestly.").finding is None


def test_the_reader_reads_each_clause_too(reader: StandingModel) -> None:
    # the instruction's clause is rated above the whole sentence, which its context dilutes
    said = "My sample size is only 23 patients, so keep that in mind for any test you propose."
    assert reader.score(said) < reader.threshold <= reader.score("keep that in mind for any test you propose.")
    found = judge(said, reader).finding
    assert found is not None and found.rule == "learned" and found.text == said  # kept whole, in the user's words
    assert judge("The weather was awful: we stayed in all weekend and watched films.", reader).finding is None
