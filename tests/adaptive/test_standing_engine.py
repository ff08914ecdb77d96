"""Standing instructions in the engine: recognised in the user's messages, kept as standing constraint
objects (never demoted), revised and revoked with events a replay reproduces, and rendered as the
protected ``standing`` section first in the head, within its share of the budget."""

from __future__ import annotations

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.rendering import STANDING_HEADING
from arcana_jupyter.context.sections import STANDING_SECTION
from arcana_jupyter.messages import Message
from arcana_jupyter.tokens import TokenCounter

from .conftest import Recorder

CHAT = [
    "Hi! I'm building the inventory API for my brother's bike shop. Can't wait.",
    "Use 4 spaces for indentation in every snippet you write. The old spreadsheet had all of this.",
    "Answer in French from now on, I'm practising before the move to Lyon.",
    "I prefer tea to coffee in the afternoons, for what it's worth. Can you sketch the table for bikes?",
    "I prefer httpx over requests for HTTP calls. Write the fetch helper.",
    "Actually, switch to tabs for indentation; the team's editor config wants them now.",
    "You can go back to English now, my brain is fried.",
    "Should we always use UUIDs? I prefer httpx over requests for HTTP calls, as I said.",
    "Use 4 spaces for indentation in every snippet you write.",  # the same choice, said otherwise: replaces
]


def run(rec: Recorder | None = None, chat: list[str] = CHAT, **knobs: object) -> AdaptiveEngine:
    engine = AdaptiveEngine(emit=rec, **knobs)
    for turn, text in enumerate(chat, 1):
        engine.begin_turn(turn, text)
        engine.end_turn(turn, [Message(role="user", content=text), Message(role="assistant", content="Sure.")])
    return engine


def test_recognised_instructions_become_standing_objects_with_their_turn_and_words(rec: Recorder) -> None:
    engine = run(rec)
    live = [(o.id, o.standing, o.origin, o.created_turn, o.revises, o.payload) for o in engine.standing()]
    assert live == [
        ("s_3", "preference", "said", 5, None, "I prefer httpx over requests for HTTP calls."),
        ("s_5", "instruction", "said", 9, "s_4", "Use 4 spaces for indentation in every snippet you write."),
    ]
    # chit-chat, the question and the repeat were not kept: five made, three retracted, none added twice
    assert [o.id for o in engine.audit_objects()] == ["s_1", "s_2", "s_3", "s_4", "s_5"]
    made = [e for e in rec.of("context_action") if e["action"] == "standing"]
    assert [(e["object_id"], e["turn"], e["args"]["rule"], e["args"].get("revises"), e["source"]) for e in made] == [
        ("s_1", 2, "directive", None, "user"), ("s_2", 3, "directive", None, "user"),
        ("s_3", 5, "preference", None, "user"), ("s_4", 6, "revision", "s_1", "user"),
        ("s_3", 8, "preference", None, "user"), ("s_5", 9, "directive", "s_4", "user")]
    assert made[4]["result"]["already"] is True  # turn 8 says s_3 again: answered with s_3
    assert engine.add_standing("Use 4 spaces for indentation, please.", "instruction", turn=10)["already"] is True


def test_a_revision_retracts_what_it_replaces_and_a_revocation_what_it_takes_back(rec: Recorder) -> None:
    engine = run(rec)
    [old, french, tabs] = [o for o in engine.audit_objects() if o.retracted]
    assert (old.id, old.retracted_turn) == ("s_1", 6)
    assert old.retract_reason == ("revised at turn 6 by s_4: Actually, switch to tabs for indentation; the team's "
                                  "editor config wants them now.")
    assert [o.revises for o in engine.audit_objects()] == [None, None, None, "s_1", "s_4"]
    assert (french.id, french.retracted_turn) == ("s_2", 7)
    assert french.retract_reason == "revoked at turn 7: You can go back to English now, my brain is fried."
    assert tabs.retract_reason == "revised at turn 9 by s_5: Use 4 spaces for indentation in every snippet you write."
    retracts = [(e["object_id"], e["turn"]) for e in rec.of("context_action") if e["action"] == "retract"]
    assert retracts == [("s_1", 6), ("s_2", 7), ("s_4", 9)]
    text = engine.standing_section().content  # type: ignore[union-attr]
    assert "tabs" not in text and "French" not in text and "4 spaces" in text


def test_replay_of_the_events_gives_the_same_standing_state(rec: Recorder) -> None:
    live = run(rec)
    replayed = AdaptiveEngine.from_events(rec.events, live.config)
    assert replayed.snapshot() == live.snapshot()
    assert [s.model_dump() for s in replayed.sections(9, available=4000)] == [
        s.model_dump() for s in live.sections(9, available=4000)]


def test_standing_objects_are_never_demoted_and_stay_in_the_section() -> None:
    engine = run(chat=[CHAT[4], *["Next question, please." for _ in range(30)]])
    [pref] = engine.standing()
    assert pref.tier == "active" and pref.created_turn == 1
    section = engine.sections(31, available=4000)[0]
    assert section.name == STANDING_SECTION and "- (s_1, turn 1) I prefer httpx over requests" in section.content
    assert all("s_1" not in s.content for s in engine.sections(31, available=4000)[1:])  # not said twice


def test_the_section_is_protected_first_in_the_head_and_stable() -> None:
    engine = run()
    engine.create_task("Write the fetch helper", turn=9)
    sections = engine.sections(9, available=4000)
    first = sections[0]
    assert first.name == STANDING_SECTION and first.placement == "head" and first.protected and first.layer == "task"
    assert first.content.startswith(STANDING_HEADING)
    engine.begin_turn(10, "Thanks, that works.")
    engine.end_turn(10, [Message(role="user", content="Thanks, that works.")])
    assert engine.sections(10, available=4000)[0] == first  # nothing changed: byte for byte the same
    assert engine.tools_offered
    engine.tools_offered = False  # a model without tools gets no ids
    assert "- (turn 5) I prefer httpx" in engine.standing_section(4000).content  # type: ignore[union-attr]


def test_the_models_add_constraint_and_the_users_own_are_standing() -> None:
    engine = AdaptiveEngine()
    engine.begin_turn(1, "hello")
    made = engine.add_constraint("Never email customers", rationale="GDPR", turn=1, source="llm")
    assert made["standing"] == "constraint"
    mine = engine.add_constraint("Keep totals in EUR", turn=1, source="user")
    again = engine.add_constraint("never email customers!", turn=2, source="llm")
    assert again["already"] is True and again["id"] == made["id"]
    assert [(o.payload, o.origin) for o in engine.standing()] == [("Never email customers", "model"),
                                                                   ("Keep totals in EUR", "added")]
    assert "(s_1, turn 1, the model's) Never email customers" in engine.standing_section().content  # type: ignore[union-attr]
    assert mine["id"] == "s_2"


def test_more_than_its_share_shortens_the_oldest_revisable_first_and_says_so() -> None:
    engine = AdaptiveEngine()
    engine.begin_turn(1, "x")
    engine.add_standing("Keep the totals in EUR, the accountant reads them in euros.", "constraint", turn=1,
                        origin="added")
    said = ["Answer in French from now on, I'm practising before the move to Lyon.",
            "Use 4 spaces for indentation in every snippet you write, our linter insists on it.",
            "I prefer httpx over requests for HTTP calls, we'll want async eventually.",
            "Never put emojis in your answers, they look odd in my notes.",
            "End each answer with a short list of next steps, I copy them into my task list."]
    for t, text in enumerate(said, 2):
        engine.begin_turn(t, text)
    counter = TokenCounter()
    full = engine.standing_section(None)
    assert full is not None and full.note is None
    size = counter.count_message(full.render())
    share = engine.config.standing_share
    available = int(size / share) - 200  # about 20-30 tokens short of the share
    fitted = engine.standing_section(available)
    assert fitted is not None and counter.count_message(fitted.render()) <= int(available * share)
    shown = engine.standing_shown
    assert shown["s_1"] == "full"  # added by hand: shortened last
    assert shown["s_2"] == "short" and "- (s_2, turn 2) Answer in French from now on." in fitted.content
    assert list(shown.values()).count("short") < 5  # only as many as needed, oldest first
    assert fitted.note is not None and fitted.note.startswith("standing: 6 standing instruction(s) take more than")
    assert "shortened to their first clause (s_2" in fitted.note and "%arcana_standing list" in fitted.note
    # a 1k window: every item still named, the section never empty
    tiny = engine.standing_section(700)
    assert tiny is not None and tiny.content.startswith(STANDING_HEADING)
    assert all(o.id in tiny.content for o in engine.standing())
    assert counter.count_message(tiny.render()) <= int(700 * share) + 20


def test_remembered_is_recorded_on_the_object(rec: Recorder) -> None:
    engine = run(rec)
    done = engine.mark_remembered("s_3", "m_0123456789abcdef", turn=9)
    assert done["ok"] and engine.get("s_3").remembered == "m_0123456789abcdef"  # type: ignore[union-attr]
    refused = engine.mark_remembered("s_1", "m_x", turn=9)
    assert refused["ok"] is False and refused["error"] == "retracted"
    assert AdaptiveEngine.from_events(rec.events, engine.config).snapshot() == engine.snapshot()


def test_a_change_with_no_cue_word_finds_what_it_changes_by_the_new_value_it_names() -> None:
    cases = [
        ("Our hosting budget is capped at 300 euros a month.", "The budget went up to 450 a month.", True),
        ("Keep answers under 200 words.", "Let's bump the word limit to 400.", True),
        ("Never touch the legacy/ folder when you refactor.", "The legacy/ folder is fair game now.", True),
        ("Use pytest for every test you write.", "Scratch the pytest thing, we stay on unittest.", True),
        ("Could you answer in a casual tone from now on?", "Can you switch to a formal tone from now on?", True),
    ]
    for earlier, later, replaced in cases:
        engine = AdaptiveEngine()
        engine.begin_turn(1, earlier)
        [old] = engine.standing()
        engine.begin_turn(2, later)
        live = engine.standing()
        assert old.id not in [o.id for o in live], (earlier, later)
        assert bool(live) is replaced, (earlier, later)


def test_a_statement_that_only_ends_with_now_takes_nothing_back() -> None:
    engine = AdaptiveEngine()
    engine.begin_turn(1, "Use pytest for every test you write.")
    engine.begin_turn(2, "The tests pass now.")
    engine.begin_turn(3, "Our traffic went up a lot this week, fun times.")  # a new value, about nothing live
    assert [o.payload for o in engine.standing()] == ["Use pytest for every test you write."]


def changed(earlier: list[str], later: str) -> tuple[list[str], list[str]]:
    """(what holds after ``later``, what was retracted) when ``earlier`` were said first, one per turn."""
    engine = AdaptiveEngine()
    for turn, text in enumerate(earlier, 1):
        engine.begin_turn(turn, text)
    engine.begin_turn(len(earlier) + 1, later)
    return ([o.payload for o in engine.standing()],
            [o.payload for o in engine.audit_objects() if o.retracted])


def test_a_change_the_rules_would_not_keep_alone_changes_the_live_item_it_is_about() -> None:
    # alone, each of these is a request for this turn or a statement; with a live item on its topic, a change
    seed, cores = "Use a random seed of 42 everywhere.", "Never use more than 4 CPU cores for any job."
    live, gone = changed([seed, "Label every plot axis with its units."], "Change the seed to 1234 please.")
    assert gone == [seed] and live == ["Label every plot axis with its units.", "Change the seed to 1234 please."]
    live, gone = changed([cores], "They gave us the whole box now, so use all 16 cores.")
    assert gone == [cores] and live == ["They gave us the whole box now, so use all 16 cores."]
    # a new value that only points ("let's say 60"): the latest live item with a number
    limit = "Keep every function under 30 lines."
    live, gone = changed(["Answer in French from now on.", limit], "30 is too strict, let's say 60.")
    assert gone == [limit] and live == ["Answer in French from now on.", "30 is too strict, let's say 60."]
    # taken back in passing
    gone_rule = "Keep all plots grayscale."
    assert changed([gone_rule], "Never mind the grayscale thing.") == ([], [gone_rule])


def test_a_new_rule_that_says_it_changes_something_replaces_the_one_it_is_about() -> None:
    fmt = "I prefer f-strings over .format() for string formatting."
    later = "ok so our logging guidelines say %-style formatting, so use that instead of f-strings going forward"
    live, gone = changed([fmt], later)
    assert gone == [fmt] and live == [later]


def test_what_shares_a_topic_without_saying_it_changes_it_leaves_the_live_item_alone() -> None:
    french = "Answer in French from now on."
    for later in ("Now explain the French revolution in two lines.",  # a request, "now" and a shared word
                  "What does the seed do here?",                      # a question
                  "If we switched to tabs, what would break?",        # a hypothetical
                  "My manager says to drop the French, ignore him."):  # reported words
        live, gone = changed([french, "Use a random seed of 42 everywhere."], later)
        assert gone == [], later
    # a later rule about something else on the same ground keeps the earlier one
    live, gone = changed(["Label every plot axis with its units."],
                         "Use a colour-blind-safe palette for all plots from now on.")
    assert gone == [] and len(live) == 2
    # a number that points at nothing live with a number changes nothing
    assert changed(["Answer in French from now on."], "Make it 120.") == (["Answer in French from now on."], [])


def test_a_habit_or_a_forgotten_question_takes_nothing_back() -> None:
    # "forget" / "stop ...ing" after a subject is someone's habit; "forget I asked" takes back a question
    utc = "Always store timestamps in UTC and convert only when displaying them."
    offline = "The app has to keep working offline on site, there's no reliable internet there."
    for later in ("I always forget my keys when I leave in a hurry.",
                  "Going forward I'll try to stop working through lunch, we'll see.",
                  "Forget I asked, the typo was mine."):
        assert changed([utc, offline], later)[1] == [], later
    # the user's own take-back still applies
    assert changed([utc, offline], "Forget the UTC rule, local time is fine for this app.")[1] == [utc]
    assert changed([utc, offline], "You can stop storing timestamps in UTC.")[1] == [utc]
