"""The standing-instruction recogniser (adaptive/standing.py): what it keeps, what it leaves, how a change
finds what it changes. Sentences from the dev split's kinds (benchmarks/retention/standing_items.py, dev
wordings only) and others written here; the test split is never read."""

from __future__ import annotations

import pytest

from arcana_jupyter.adaptive.standing import (
    analyse,
    is_chit_chat,
    judge,
    kept_apart,
    match,
    recognise,
    same,
    sentences,
    shorten,
    topics,
    without_small_talk,
)

STANDING = [
    # (sentence, kind) — the dev split's forms
    ("Always format code with syntax highlighting, with the language named on the fence.", "instruction"),
    ("Use 4 spaces for indentation in every snippet you write.", "instruction"),
    ("Start every answer with a one-line TL;DR, I skim a lot.", "instruction"),
    ("Answer in French from now on, I'm practising before the move to Lyon.", "instruction"),
    ("End each answer with a short list of next steps.", "instruction"),
    ("Please don't apologise or thank me in your replies, just get to the point.", "instruction"),
    ("Keep answers under 300 words unless I ask for more detail; code doesn't count.", "instruction"),
    ("Make sure every function you write has type hints.", "instruction"),
    ("When you show shell commands, don't put the $ prompt in front, I paste them straight in.", "instruction"),
    ("Never put emojis in your answers, they look odd in my notes.", "instruction"),
    ("I'd rather you explain tricky lines in code comments than in paragraphs after the code.", "instruction"),
    ("I prefer minimal dependencies, so standard library first unless there's a really good reason.", "preference"),
    ("I'd rather write plain SQL than pull in an ORM.", "preference"),
    ("I prefer pytest over unittest, plain asserts are easier to read.", "preference"),
    ("Going forward, use the logging module instead of print statements in anything for this project.",
     "preference"),
    ("I'd rather use pathlib than os.path everywhere.", "preference"),
    ("I prefer httpx over requests for HTTP calls.", "preference"),
    ("We use PostgreSQL, not MySQL, so write queries for Postgres.", "constraint"),
    ("It's SQLite, not Postgres, because it's a single-user tool on one laptop.", "constraint"),
    ("It has to run on Python 3.9, the production box is stuck on it.", "constraint"),
    ("The box it runs on only has 512 MB of RAM, so memory is tight.", "constraint"),
    ("Our CI runners have no internet access, so nothing in the tests can call out.", "constraint"),
    ("Half the team is on Windows, so scripts need to work there too.", "constraint"),
    ("Everything we ship has to be MIT-compatible, so no GPL libraries.", "constraint"),
    ("We deploy on a Raspberry Pi 4 in the back office, no cloud.", "constraint"),
    # other forms, written here
    ("From now on, please answer in German.", "instruction"),
    ("Can you answer in Spanish from now on?", "instruction"),
    ("Don't use pandas in any of the snippets.", "instruction"),
    ("I'd like you to always include docstrings.", "instruction"),
    ("Whenever you write SQL, use uppercase keywords.", "instruction"),
    ("Stick to the standard library unless there is no other way.", "instruction"),
    ("Never modify the raw data.", "instruction"),
    ("Only use matplotlib.", "instruction"),
    ("Make sure all SQL is parameterised.", "instruction"),
    ("Prefer f-strings over format().", "preference"),
    ("I'd rather use dataclasses than dicts.", "preference"),
    ("Our API must stay backwards compatible.", "constraint"),
    ("We're on Python 3.10.", "constraint"),
    ("Constraint: the service must answer in under 200 ms.", "constraint"),
]

NOT_STANDING = [
    # (sentence, reason) — the dev split's traps
    ("Can't wait.", "chit_chat"),
    ("I always forget my keys when I leave in a hurry.", "self"),
    ("I'd rather be sailing today, ha.", "one_off"),
    ("Never mind, I found the typo myself.", "chit_chat"),
    ("My cat never lets me work in peace.", "chit_chat"),
    ("I must have restarted the kernel ten times today.", "one_off"),
    ("From now on I'm going to bed before midnight, I promise.", "self"),
    ("Don't get me started on the office printer.", "chit_chat"),
    ("I always end up with forty browser tabs open.", "self"),
    ("I prefer tea to coffee in the afternoons, for what it's worth.", "not_work"),
    ("Make sure you enjoy the weekend, oh wait, you don't get one.", "chit_chat"),
    ("Never again am I deploying on a Friday afternoon.", "chit_chat"),
    ("For this one, skip the prose and just paste the function.", "one_off"),
    ("Just this once, skip the explanation, I'm in a hurry.", "one_off"),
    ("Only for this snippet, use print so I can see it in the notebook.", "one_off"),
    ("Should we always use UUIDs for primary keys?", "question"),
    ("Do you think we should never delete rows, only mark them?", "question"),
    ('The old README says "never run migrations on Fridays", which made me laugh.', "quoted"),
    ('My colleague left a comment: "always close your cursors, people!"', "quoted"),
    # requests for this turn and statements, written here
    ("Write the function that parses the CSV file.", "no_scope"),
    ("Use the first column as the index.", "no_scope"),
    ("Please write the tests for the parser.", "no_scope"),
    ("Don't worry about the tests for now.", "one_off"),
    ("We need a function that sums the totals.", "statement"),
    ("We're expecting a few thousand bikes by summer.", "not_work"),
    ("Always happy to help.", "statement"),
    ("I prefer summer to winter.", "not_work"),
    ("Do you always use tabs?", "question"),
    ("Let's add input validation for alerts.", "statement"),
]


@pytest.mark.parametrize(("sentence", "kind"), STANDING)
def test_standing_sentences_are_kept_with_their_kind(sentence: str, kind: str) -> None:
    verdict = judge(sentence)
    assert verdict.finding is not None, verdict
    assert verdict.finding.text == sentence and verdict.finding.kind == kind and verdict.finding.change == "new"


@pytest.mark.parametrize(("sentence", "reason"), NOT_STANDING)
def test_chit_chat_questions_quotes_one_offs_and_requests_are_not_standing(sentence: str, reason: str) -> None:
    verdict = judge(sentence)
    assert verdict.finding is None and verdict.reason == reason, verdict


def test_precision_on_the_traps_and_requests() -> None:
    """Chit-chat precision: no trap or request above is kept; is_chit_chat says so of the chit-chat."""
    kept = [s for s, _ in NOT_STANDING if recognise(s)]
    assert kept == []
    assert [s for s, r in NOT_STANDING if r in ("chit_chat", "self", "not_work") and not is_chit_chat(s)] == []
    assert all(kept_apart(s) for s, _ in STANDING)  # a summary leaves them to their own section


def test_never_inside_code_fences_quotes_block_quotes_or_tracebacks() -> None:
    message = (
        "Here is the README:\n\n```\nAlways run the migrations first.\nNever commit secrets.\n```\n\n"
        "> From now on, use tabs everywhere.\n\n"
        "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"
        "ValueError: never use eval\n\n"
        "    # Always use black.\n"
        "Someone wrote \"always blame DNS\" on the whiteboard. Can you review it?"
    )
    assert recognise(message) == []
    assert sentences(message) == ["Here is the README:", 'Someone wrote "always blame DNS" on the whiteboard.',
                                  "Can you review it?"]


def test_a_message_is_cut_into_sentences_at_a_colon_before_a_capital() -> None:
    text = ("[9:05 am on 12 February, 2024] Back at it. Stuck on this one: I'd rather write plain SQL than pull in an "
            "ORM. Good news: the server got upgraded, so we can target 3.12 now.")
    assert sentences(text) == ["Back at it.", "Stuck on this one:", "I'd rather write plain SQL than pull in an ORM.",
                               "Good news: the server got upgraded, so we can target 3.12 now."]
    assert [f.text for f in recognise(text)] == ["I'd rather write plain SQL than pull in an ORM.",
                                                 "Good news: the server got upgraded, so we can target 3.12 now."]


CHANGES = [
    # (what was said, the change, revise | revoke)
    ("Use 4 spaces for indentation in every snippet you write.",
     "Actually, switch to tabs for indentation; the team's editor config wants them now.", "revise"),
    ("Keep answers under 300 words unless I ask for more detail; code doesn't count.",
     "Let's loosen that limit: 500 words is fine, the tiny ones skipped steps.", "revise"),
    ("I'd rather write plain SQL than pull in an ORM.",
     "Actually, let's go with SQLAlchemy Core after all; the raw query strings are getting out of hand.", "revise"),
    ("It has to run on Python 3.9, the production box is stuck on it.",
     "Good news: the server got upgraded, so we can target 3.12 now.", "revise"),
    ("Answer in French from now on, I'm practising before the move to Lyon.",
     "You can go back to English now, my brain is fried.", "revoke"),
    ("Start every answer with a one-line TL;DR, I skim a lot.",
     "You can drop the TL;DR lines now, I read the whole thing anyway.", "revoke"),
]

OTHERS = [
    "End each answer with a short list of next steps.",
    "We use PostgreSQL, not MySQL, so write queries for Postgres.",
    "I prefer httpx over requests for HTTP calls.",
    "Never put emojis in your answers, they look odd in my notes.",
]


@pytest.mark.parametrize(("old", "new", "change"), CHANGES)
def test_a_change_finds_the_item_it_changes_among_the_live_ones(old: str, new: str, change: str) -> None:
    [found] = recognise(new)
    assert found.change == change
    live = [(f"o{i}", t) for i, t in enumerate([*OTHERS[:2], old, *OTHERS[2:]])]
    assert match(found.text, live) == "o2"
    assert match(found.text, [(f"o{i}", t) for i, t in enumerate(OTHERS)]) is None  # nothing on its topic


def test_topics_put_a_revision_worded_apart_on_the_same_topic() -> None:
    assert "#language" in topics("You can go back to English now.") & topics("Answer in French from now on.")
    assert "#python_version" in topics("we can target 3.12 now") & topics("It has to run on Python 3.9")
    assert "#sql_style" in topics("let's go with SQLAlchemy Core") & topics("plain SQL than an ORM")
    assert not topics("End each answer with a short list of next steps.") & topics("Keep answers under 300 words.")


def test_duplicates_are_the_same_thing_said_again() -> None:
    assert same("Always use type hints.", "always use type hints!")
    assert same("Never put emojis in your answers.", "Never put emojis in your answers, please.")
    assert not same("Use 4 spaces for indentation.", "Use tabs for indentation.")
    assert [f.text for f in analyse_findings("Always use type hints. Always use type hints!")] == [
        "Always use type hints."]


def analyse_findings(text: str) -> list:  # type: ignore[type-arg]
    from arcana_jupyter.adaptive.standing import live_changes

    return live_changes(recognise(text))


def test_shorten_keeps_the_first_clause_then_the_first_words() -> None:
    assert shorten("Answer in French from now on, I'm practising before the move to Lyon.") == \
        "Answer in French from now on."
    assert shorten("Keep answers under 300 words unless I ask for more detail; code doesn't count.") == \
        "Keep answers under 300 words unless I ask for more detail."
    assert shorten("I prefer httpx over requests for HTTP calls.") == "I prefer httpx over requests for HTTP calls."
    assert shorten("Use 4 spaces for indentation in every snippet you write.", 5) == "Use 4 spaces for indentation…"


def test_small_talk_leaves_the_request() -> None:
    assert " ".join(without_small_talk("Can't wait. Write the query for bikes.").split()) == \
        "Write the query for bikes."
    assert without_small_talk("Can't wait.") == "Can't wait."  # nothing would be left: kept as it was
    assert [v.reason for v in analyse("I prefer tea to coffee. I prefer pytest over unittest.")] == [
        "not_work", "standing"]


def test_a_label_after_a_word_or_two_and_a_time_scope_in_any_form_say_it_holds() -> None:
    for sentence, kind in [
        ("Licensing constraint: all code is released under Apache-2.0.", "constraint"),
        ("Hard deadline: the pilot goes live on 2 May.", "constraint"),
        ("Error handling rule for everything you write: catch the narrowest exception possible.", "constraint"),
        ("Numbered lists only from here on, no bullet points", "instruction"),
    ]:
        [found] = recognise(sentence)
        assert found.kind == kind, sentence
    for sentence in ("Write instructions for the annotators: label every ambiguous case as unsure.",
                     "Instruction for the code review bot: flag any TODO without a ticket number.",
                     "Note: the API returns a list of dicts.",
                     "We shipped the numbered lists from here last week.",
                     "Download the CSV from here and load it.", "Two weeks from now the API goes live."):
        assert recognise(sentence) == [], sentence
