"""What the assistant's reply takes up as lasting becomes standing (adaptive/standing.py ``acknowledged``, the
engine's end of turn): "Keep the explanations short, two paragraphs at most." is a request for this turn to the
rules, and "Understood, I'll keep to that from now on." says it is not. Sentences written for these tests."""

from __future__ import annotations

import pytest

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.standing import (
    ACK_BAR,
    PLAIN_ACK_BAR,
    acknowledged,
    acknowledgement,
    judge,
    nearest,
)
from arcana_jupyter.adaptive.standing_model import StandingModel, standing_model
from arcana_jupyter.context.embeddings import default_embedder

from .conftest import Recorder

TIGHT = "Keep the explanations short, two paragraphs at most."
IMPORTS = "Put the imports at the top of the snippet, not inline."
FETCH = "Write the fetch helper for the orders endpoint."
CODE_FIRST = "Code before prose, please."
HOSTING = "The hosting bill has to stay under fifteen euros a month."
LASTING = "Understood, I'll keep to that from now on.\n\nHere is the loader:\n\n```python\nload()\n```"


@pytest.fixture(scope="module")
def reader() -> StandingModel:
    embedder = default_embedder()
    assert embedder is not None
    model = standing_model(embedder.embed, embedder.ident)
    assert model is not None
    return model


def turns(engine: AdaptiveEngine, *exchanges: tuple[str, str]) -> AdaptiveEngine:
    for turn, (user, reply) in enumerate(exchanges, 1):
        engine.begin_turn(turn, user)
        engine.end_turn(turn, [{"role": "user", "content": user}, {"role": "assistant", "content": reply}])
    return engine


def with_reader(reader: StandingModel, rec: Recorder | None = None) -> AdaptiveEngine:
    engine = AdaptiveEngine(emit=rec)
    engine.standing_reader = reader
    return engine


@pytest.mark.parametrize(("reply", "how"), [
    ("Sure, from now on I'll put the code first.", "lasting"),
    ("Understood, I'll stick to that.", "lasting"),
    ("Noted.", "lasting"),
    ("Okay, updated.", "lasting"),
    ("Entendido, a partir de ahora respondo en español.", "lasting"),
    ("Will do.", "plain"),
    ("Got it!\nHere it is.", "plain"),
    ("Here is the function you asked for:", None),
    ("I've updated the loader so it retries on connection errors and gives up after ten seconds.", None),
    ("Good question! It depends on the driver.", None),
    ("Thanks for the traceback. From now on the function returns None instead of raising.", None),  # 2nd sentence
    ("I'll keep " + "the connection pool small and the timeouts short because the database is far away " * 2
     + "from now on.", None),  # a long first sentence is the answer, not an acknowledgement
    ("", None),
    # an interjection first: the next sentence says it, when it is what the assistant will do
    ("Got it! I'll keep that in mind going forward.", "lasting"),
    ("Of course. I'll apply that to every reply.", "lasting"),
    ("You got it! I'll always put the imports at the top.", "lasting"),
    ("Thanks for letting me know \u2014 I'll adjust my answers accordingly from now on.", "lasting"),
    ("Got it, no more inline imports.", "lasting"),
    ("Fine. Pytest it is.", "lasting"),
    ("Got it! Here it is.", "plain"),  # "here it is" is the answer coming, not "pytest it is"
    ("Sure thing, I'll stick with the standard library.", "plain"),  # says what, not for how long
    ("Thanks for the heads-up! I'll keep the next one short.", "plain"),
    ("Got it. Here's the updated loader with retries.", "plain"),  # "updated" about the code, not a rule
    ("Understood. Let me know if anything else changes going forward.", "plain"),  # not the assistant's own
    ("Good question! From now on, the cache is per user.", None),
    # a commitment without a time word, said as the assistant's own
    ("Alright, I'll follow that consistently.", "lasting"),
    ("Happy to. All my replies will follow that.", "lasting"),
    ("Good to know! That'll be my default from here.", "lasting"),
    ("Okay, updated \u2014 the new version takes over from the old one.", "lasting"),
    ("From here, run the migration again and watch the log.", None),  # the answer, not a commitment
    ("My guess is the cache: the default is too small.", None),
    ("\u00a1Claro! A partir de ahora te respondo en espa\u00f1ol.", "lasting"),  # the language asked for
    ("Vale, lo aplico desde ya.", "lasting"),
    # "from now on" said of the code, in the first sentence: what it now does, not the assistant's commitment
    ("From now on the function returns None instead of raising.", None),
    ("Going forward, the cache will be invalidated on every write.", None),
    ("Noted for everything that follows.", "lasting"),  # an acknowledging word, or a short sentence, says it
    ("Going forward, I'll answer in French.", "lasting"),
])
def test_only_the_replys_opening_acknowledges(reply: str, how: str | None) -> None:
    assert acknowledgement(reply) == how


def test_what_the_reply_takes_up_is_kept_with_its_turn_and_rule(reader: StandingModel, rec: Recorder) -> None:
    assert judge(TIGHT, reader).finding is None  # alone, a request for this turn
    engine = turns(with_reader(reader, rec), ("Morning, coffee is on.", "Morning!"),
                   (f"The loader is slow. {TIGHT}", LASTING))
    [obj] = engine.standing()
    assert (obj.payload, obj.standing, obj.origin, obj.created_turn) == (TIGHT, "instruction", "said", 2)
    [made] = [e for e in rec.of("context_action") if e["action"] == "standing"]
    assert (made["args"]["rule"], made["turn"], made["source"]) == ("acknowledged", 2, "user")
    # the same turn answered without an acknowledgement keeps nothing
    plain = turns(with_reader(reader), (f"The loader is slow. {TIGHT}", "Here is the loader:\n\nload()"))
    assert plain.standing() == []


def test_a_chat_models_own_words_are_read_after_an_interjection(reader: StandingModel) -> None:
    # "Got it!" alone is bare (IMPORTS is below its bar); the sentence after it says the assistant will keep to it
    assert PLAIN_ACK_BAR > reader.score(IMPORTS) >= ACK_BAR
    said = f"The loader is slow. {IMPORTS}"
    for reply, kept in (("Got it! I'll keep that in mind going forward.\n\nHere is the loader:", [IMPORTS]),
                        ("Of course. I'll apply that to every reply from here.", [IMPORTS]),
                        ("Got it! Here is the loader with the cache:\n\nload()", []),
                        ("Thanks for the traceback. From now on the loader caches the rows.", [])):
        assert [o.payload for o in turns(with_reader(reader), (said, reply)).standing()] == kept, reply


def test_a_bare_acknowledgement_needs_the_readers_higher_bar(reader: StandingModel) -> None:
    assert reader.score(TIGHT) >= PLAIN_ACK_BAR > reader.score(IMPORTS) >= ACK_BAR
    assert [o.payload for o in turns(with_reader(reader), (TIGHT, "Will do."), (IMPORTS, "Will do.")).standing()] \
        == [TIGHT]
    assert [o.payload for o in turns(with_reader(reader), (IMPORTS, "Noted, from here on.")).standing()] == [IMPORTS]


def test_a_request_chit_chat_or_the_past_is_never_taken_up(reader: StandingModel) -> None:
    assert reader.score(FETCH) < ACK_BAR
    for said in (FETCH, "My cat never sits still.", "Ran the migrations last night, all green.",
                 "Could you keep the explanations tight?"):
        assert acknowledged(said, "Noted for everything that follows.", reader) is None, said


def test_nothing_is_added_when_the_turn_already_changed_what_stands(reader: StandingModel) -> None:
    engine = turns(with_reader(reader), (f"Always add type hints to every function. {TIGHT}", LASTING))
    assert [o.payload for o in engine.standing()] == ["Always add type hints to every function."]
    # the model's own tool call in that turn counts too
    engine = with_reader(reader)
    engine.begin_turn(1, TIGHT)
    engine.add_standing("Keep explanations short", "instruction", turn=1, origin="model", source="model")
    engine.end_turn(1, [{"role": "user", "content": TIGHT}, {"role": "assistant", "content": LASTING}])
    assert [o.payload for o in engine.standing()] == ["Keep explanations short"]


def test_an_acknowledged_change_replaces_the_nearest_live_item(reader: StandingModel, rec: Recorder) -> None:
    later = "On second thought, a short sentence on what the snippet does should come first."
    engine = turns(with_reader(reader, rec), (CODE_FIRST, "Understood; code first from now on."),
                   (HOSTING, "Noted for everything that follows."),
                   (later, "OK, updated."))
    code, hosting = (next(o for o in engine.audit_objects() if o.payload == t) for t in (CODE_FIRST, HOSTING))
    # no topic word is shared: the embedding says which one it changes
    assert nearest(later, [(code.id, code.payload), (hosting.id, hosting.payload)], reader) == code.id
    assert code.retracted and code.retracted_turn == 3 and not hosting.retracted
    [new] = [o for o in engine.standing() if o.payload == later]
    assert new.revises == code.id and new.standing == code.standing
    replayed = AdaptiveEngine.from_events(rec.events, engine.config)
    assert replayed.snapshot() == engine.snapshot()


def test_without_the_reader_the_rules_stand_alone() -> None:
    engine = turns(AdaptiveEngine(), (TIGHT, LASTING))
    assert engine.standing() == []
    assert nearest(TIGHT, [("s_1", CODE_FIRST)], None) is None


def test_a_change_the_rules_could_not_place_is_applied_only_after_a_lasting_acknowledgement(
        reader: StandingModel) -> None:
    typer = "For command-line tools I like Typer, argparse boilerplate drives me up the wall."
    back = "Let's drop the extra CLI package and go back to what ships with Python."  # a revocation sharing no topic
    assert judge(back).finding is not None and judge(back).finding.change == "revoke"  # type: ignore[union-attr]
    engine = turns(with_reader(reader), (typer, "Sure."), (back, "OK, updated."))
    [old, new] = engine.audit_objects()
    # "updated": what ships with Python replaces Typer (not only Typer taken back)
    assert old.retracted and (new.payload, new.revises, new.retracted) == (back, old.id, False)
    # a bare "Sure." says nothing lasting: the rules' unplaced change stays unapplied
    bare = turns(with_reader(reader), (typer, "Sure."), (back, "Sure."))
    assert [(o.payload, o.retracted) for o in bare.audit_objects()] == [(typer, False)]


def test_a_change_near_no_live_item_replaces_none(reader: StandingModel) -> None:
    # the reply says something changed, but no live item is near enough: replacing the nearest anyway would take
    # back an instruction the user never revised
    later = "They raised our quota to 600 per minute after we signed the paid agreement."
    live = [("s_1", "The log file on the server is 4 GB.")]
    assert nearest(later, live, reader) is None  # a cosine of 0.26: once the bar was 0.2, and it was replaced
    assert nearest(later, [*live, ("s_2", "The partner API allows 60 requests a minute.")], reader) == "s_2"
