"""The second blind split of the standing-instruction data: its items, traps and the user's side of the talk, for
:mod:`.make_standing` ``--blind`` (``data/standing_blind.json``).

The first held-out split (:mod:`.standing_holdout_items`) has been looked at while the recogniser was tuned, so it
no longer measures it honestly either. Everything here was written without reading the recogniser, its tests, its
training sentences or its results: new projects and people, new instructions, preferences and project constraints
(neither paraphrases of :mod:`.standing_items` nor of :mod:`.standing_holdout_items`), new revisions, revocations
and traps, and a new user side of the conversation (greetings, feedback, small talk, context, the requests, the
pasted code). The assistant's acknowledgements are new too, and the language the user switches to for a while is
Spanish (:data:`SPANISH` has the reply prose). Only the assistant's explanations are shared with the other splits
(:mod:`.standing_prose`): the recogniser never reads them.

The shapes are :mod:`.standing_holdout_items`'s, keyed by the split ``"blind"``: a wording can be ``(sentence,
frame)`` (the text around the sentence in its message: a list it is one entry of, or a pasted snippet it follows);
a ``revoke`` has its own acknowledgements; :data:`SOON` are revoked a few exchanges after they are stated; traps
include ``third_party`` and ``hypothetical``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .standing_code import Entity as E
from .standing_items import PY_KINDS

B = "blind"

# ---- the projects, people and dates -------------------------------------------------------------------------

PROJECTS: list[dict[str, Any]] = [
    {"key": "sailing", "title": "the berth allocation system for our sailing club", "P": "the berth system",
     "fw": "flask", "py": "3.12",
     "entities": [E("berth", "berths", "Berth", (("pontoon", "str"), ("length_cm", "int"), ("assigned_on", "date"))),
                  E("boat", "boats", "Boat", (("boat_name", "str"), ("beam_cm", "int"), ("registered_on", "date"))),
                  E("levy", "levies", "Levy", (("season", "str"), ("amount_cents", "money"), ("due_on", "date")))]},
    {"key": "apiary", "title": "an inspection log for a beekeeping cooperative", "P": "the hive log",
     "fw": "fastapi", "py": "3.12",
     "entities": [E("hive", "hives", "Hive", (("apiary", "str"), ("frames", "int"), ("queen_marked_on", "date"))),
                  E("inspection", "inspections", "Inspection", (("inspector", "str"), ("mites_counted", "int"),
                                                                ("inspected_at", "date"))),
                  E("harvest", "harvests", "Harvest", (("honey_type", "str"), ("jars", "int"),
                                                       ("extracted_on", "date")))]},
    {"key": "choir", "title": "the sheet-music library for a community choir", "P": "the music library",
     "fw": "fastapi", "py": "3.11",
     "entities": [E("score", "scores", "Score", (("composer", "str"), ("copies", "int"), ("catalogued_on", "date"))),
                  E("rehearsal", "rehearsals", "Rehearsal", (("hall", "str"), ("singers_present", "int"),
                                                             ("rehearsed_at", "date"))),
                  E("singer", "singers", "Singer", (("voice_part", "str"), ("years_in_choir", "int"),
                                                    ("auditioned_on", "date")))]},
    {"key": "agency", "title": "a job tracker for a two-person translation agency", "P": "the agency tracker",
     "fw": "flask", "py": "3.12",
     "entities": [E("assignment", "assignments", "Assignment", (("language_pair", "str"), ("word_count", "int"),
                                                                ("due_at", "date"))),
                  E("translator", "translators", "Translator", (("translator_name", "str"), ("rate_cents", "money"),
                                                                ("contracted_on", "date"))),
                  E("term", "terms", "Term", (("source_term", "str"), ("uses", "int"), ("added_on", "date")))]},
    {"key": "permits", "title": "the residents' parking permit system for a town council", "P": "the permit system",
     "fw": "fastapi", "py": "3.12",
     "entities": [E("permit", "permits", "Permit", (("registration", "str"), ("fee_cents", "money"),
                                                    ("issued_on", "date"))),
                  E("zone", "zones", "Zone", (("zone_code", "str"), ("spaces", "int"), ("created_on", "date"))),
                  E("appeal", "appeals", "Appeal", (("reason", "str"), ("days_open", "int"), ("lodged_at", "date")))]},
    {"key": "kayaks", "title": "the booking system for a kayak rental hut on the lake", "P": "the rental system",
     "fw": "flask", "py": "3.11",
     "entities": [E("rental", "rentals", "Rental", (("renter_phone", "str"), ("hours", "int"), ("out_at", "date"))),
                  E("kayak", "kayaks", "Kayak", (("hull_number", "str"), ("seats", "int"), ("repaired_on", "date"))),
                  E("waiver", "waivers", "Waiver", (("signer_name", "str"), ("age", "int"), ("signed_at", "date")))]},
    {"key": "orchard", "title": "a grafting register for a heritage apple orchard", "P": "the orchard register",
     "fw": "fastapi", "py": "3.12",
     "entities": [E("tree", "trees", "Tree", (("cultivar", "str"), ("height_cm", "int"), ("planted_on", "date"))),
                  E("graft", "grafts", "Graft", (("rootstock", "str"), ("success_pct", "int"), ("grafted_on", "date"))),
                  E("picking", "pickings", "Picking", (("row_label", "str"), ("crates", "int"),
                                                       ("picked_on", "date")))]},
    {"key": "escape", "title": "the game-master console for an escape room business", "P": "the GM console",
     "fw": "flask", "py": "3.12",
     "entities": [E("team", "teams", "Team", (("team_name", "str"), ("players", "int"), ("started_at", "date"))),
                  E("puzzle", "puzzles", "Puzzle", (("puzzle_name", "str"), ("hints_given", "int"),
                                                    ("reset_at", "date"))),
                  E("voucher", "vouchers", "Voucher", (("voucher_code", "str"), ("value_cents", "money"),
                                                       ("expires_on", "date")))]},
]
USERS = ["Tariq", "Maëlle", "Oskar", "Wanjiru", "Beatriz", "Lukas", "Ngozi", "Hiroshi"]
MATES = ["Ruth", "Idris", "Kasia", "Thabo"]
START = dt.datetime(2025, 6, 2, 9, 30)
OPENING = ["So I've volunteered to build {title}, and I'm going to lean on you quite a bit over the coming weeks.",
           "Some context first: I'm the only developer on {title}, which is meant to replace a pile of spreadsheets.",
           "new project for me: {title}. expect me here most evenings with questions"]

# ---- items ----------------------------------------------------------------------------------------------------

LIST_HOUSEKEEPING = ("Quick housekeeping before the actual question:\n- {mate} is taking over deploys from next week\n"
                     "- {s}\n- the staging address changed, I'll send it later")
LIST_GROUND = ("Ground rules the committee agreed on last night, for the record:\n1. nothing goes live until {mate} "
               "has clicked through it\n2. {s}\n3. decisions get written up in the wiki, not just in chat")
PASTE_FLOAT = ("Found this in the old fee calculator, which explains a lot:\n\n```\ntotal = 0.1 * price + 0.2 * price\n"
               "print(total)  # 0.30000000000000004 * price\n```\n\n{s}")
PASTE_NEST = ("This is what the form handler looks like today:\n\n```\nif row:\n    if row.ok:\n        if row.paid:\n"
              "            save(row)\n```\n\n{s}")
PASTE_PRINTS = ("Current state of 'observability' in the importer:\n\n```\nprint('saved', obj)\nprint('oops')\n```"
                "\n\n{s}")

ITEMS: list[dict[str, Any]] = [
    # ---- instructions: how to answer, how to write the code -----------------------------------------------------
    {"key": "spanish", "kind": "instruction", "scope": "answer", "style": {"spanish": True},
     "say": {B: ["From today, could you answer me in Spanish? I'm moving to Valencia in the autumn and I need the "
                 "practice.",
                 "Mind answering in Spanish for a while? Variable names and code are fine in English.",
                 "please switch to spanish for your replies until i say otherwise"]},
     "why": {B: ["Reading about things I already understand is the only way the vocabulary sticks."]},
     "expect": "answers in Spanish (until revoked)",
     "probes": {B: []},
     "revoke": {"say": {B: ["Right, back to English please, I need to skim faster this week.",
                            "That's plenty of practice for now; English please.",
                            "Could we return to English? The subjunctive is giving me a headache."]},
                "style": {"spanish": False},
                "ack": ["No problem — switching back to English.", "Of course! English from this reply on."]}},
    {"key": "two_options", "kind": "instruction", "scope": ("concept", "planning", "review"), "style": {},
     "say": {B: ["When there's more than one sensible way to do something, give me two options and then say which "
                 "one you'd pick.",
                 "it'd be great if you could lay out a couple of alternatives with a recommendation at the end, "
                 "rather than just one answer",
                 ("Show me the alternatives side by side before recommending one", LIST_GROUND)]},
     "why": {B: ["I have to justify choices to the committee and 'the AI said so' doesn't fly.",
                 "Seeing the road not taken helps me learn."]},
     "expect": "two alternatives, then a recommendation",
     "probes": {B: [("concept", "If someone edits a {E}, how do we still know what it said last month?"),
                    ("planning", "The committee wants a members' portal; where would we even start?"),
                    ("concept", "Background work: do we run it inside the web process or separately?")]},
     "revision": {"say": {B: ["Actually, just tell me what you'd do; the alternatives are slowing me down more than "
                              "they help.",
                              "Scratch the pros-and-cons format, a single recommendation is plenty now."]},
                  "style": {},
                  "expect": "one recommendation, no list of alternatives",
                  "probes": {B: [("concept", "If someone edits a {E}, how do we still know what it said last month?"),
                                 ("planning", "The committee wants a members' portal; where would we even start?"),
                                 ("concept", "Background work: do we run it inside the web process or "
                                             "separately?")]}}},
    {"key": "metric", "kind": "instruction", "scope": ("concept", "planning", "validation", "model"), "style": {},
     "say": {B: ["Stick to metric units in anything you write, kilometres, kilograms and degrees Celsius, never "
                 "miles or pounds.",
                 "Please make sure examples and explanations use SI units; imperial measurements just confuse "
                 "people here."]},
     "why": {B: ["Everyone who reads this lives in mainland Europe."]},
     "expect": "metric units only",
     "probes": {B: [("validation", "What sanity limits should a {E} have on the sizes people type in?"),
                    ("concept", "Roughly how much disk would a decade of {Es} take up?"),
                    ("model", "Sketch the class for a {E}, including any measurements it carries.")]}},
    {"key": "acronyms", "kind": "instruction", "scope": "answer", "style": {},
     "say": {B: ["Spell out any acronym the first time it shows up in an answer, even the ones you think are "
                 "obvious.",
                 "I'd appreciate it if abbreviations like ORM or WAL got written out in full on first use."]},
     "why": {B: ["Half of what I forward goes to committee members who aren't technical."]},
     "expect": "acronyms expanded on first use",
     "probes": {B: [("concept", "Explain how {db} keeps two simultaneous edits of a {E} from clobbering each other."),
                    ("deploy", "What would it take to serve {P} over HTTPS properly?"),
                    ("planning", "Write me a short status update for the trustees.")]},
     "revoke": {"say": {B: ["You can stop expanding every abbreviation now, I've picked up the lingo.",
                            "Don't bother writing acronyms out in full anymore."]},
                "style": {},
                "ack": ["Fair enough — plain abbreviations from here.", "Okay, I'll skip the expansions."]}},
    {"key": "line_width", "kind": "instruction", "scope": "code", "style": {},
     "say": {B: ["Keep every line of code under 80 characters; I review on a laptop with two panes side by side.",
                 "Could you wrap code at 79 columns? Long lines get cut off in the review tool we use."]},
     "why": {B: ["Horizontal scrolling during review is how bugs slip past me."]},
     "expect": "code lines no longer than 80 characters",
     "probes": {B: [("query", "Fetch {Es} by {f}, most recent at the top."),
                    ("endpoint", "Add a route that returns a single {E} by id."),
                    ("tests", "A few tests for the {E} search would be good.")]},
     "revision": {"say": {B: ["We bumped the formatter to 120 columns, so longer lines are fine now.",
                              "Relax the wrapping limit please, I'm on a big monitor at last and 120 is our new "
                              "setting."]},
                  "style": {},
                  "expect": "code lines up to 120 characters",
                  "probes": {B: [("query", "Fetch {Es} by {f}, most recent at the top."),
                                 ("endpoint", "Add a route that returns a single {E} by id."),
                                 ("tests", "A few tests for the {E} search would be good.")]}}},
    {"key": "doc_links", "kind": "instruction", "scope": "code", "style": {},
     "say": {B: ["Whenever you use a library function I might not know, link to its official documentation.",
                 "please add a link to the docs for any API you lean on, so I can read up on it myself"]},
     "why": {B: ["I want to understand the code, not just paste it."]},
     "expect": "links to official docs for the library calls used",
     "probes": {B: [("retry", "Our upstream feed times out now and then; write the call so it copes."),
                    ("cache", "Counting {Es} on every page load is slow; what would you cache?"),
                    ("config", "Pull the settings out of the code into something sensible.")]},
     "revoke": {"say": {B: ["You can leave out the documentation links from now on, I never click them.",
                            "Forget about the reference URLs, they clutter the answers."]},
                "style": {},
                "ack": ["Sure, no more links.", "Alright — I'll leave those out."]}},
    {"key": "confidence", "kind": "instruction", "scope": ("debug", "concept", "review"), "style": {},
     "say": {B: ["End each debugging answer by telling me how sure you are about the cause: high, medium or low.",
                 "When you diagnose an error, rate your confidence at the bottom so I know whether to double-check."]},
     "why": {B: ["Sometimes a guess reads exactly like a certainty."]},
     "expect": "a confidence rating (high/medium/low) at the end of diagnoses",
     "probes": {B: [("debug", "{mate} got this trying to save a {E}:\n\n{tb}"),
                    ("debug", "Woke up to this in the overnight mail:\n\n{tb}"),
                    ("concept", "Why would the {E} count differ between two pages loaded a second apart?")]},
     "revoke": {"say": {B: ["Drop the confidence ratings, they all end up saying medium anyway.",
                            "No need to grade how certain you are at the end any more."]},
                "style": {},
                "ack": ["Okay, no more ratings at the end.", "Understood — I'll drop that line."]}},
    {"key": "runnable", "kind": "instruction", "scope": "code", "style": {},
     "say": {B: ["Make every example runnable as it stands: include the imports and don't leave '...' "
                 "placeholders in.",
                 "I'd rather have complete snippets I can paste and run, imports and all, than fragments."]},
     "why": {B: ["I've lost evenings filling in the bits that were left out."]},
     "expect": "complete, runnable snippets with imports, no placeholders",
     "probes": {B: [("job", "Write the nightly clean-up for {Es} that nobody has touched in a year."),
                    ("export", "The secretary wants all {Es} as a spreadsheet file."),
                    ("cli", "I'd like to be able to list {Es} from a terminal.")]}},
    {"key": "kwargs", "kind": "instruction", "scope": PY_KINDS, "style": {},
     "say": {B: ["In code you write for me, call functions with keyword arguments whenever there's more than one "
                 "parameter.",
                 "going forward pls pass args by name when a call takes two or more, positional soup is unreadable"]},
     "why": {B: ["We've had two bugs from swapped arguments already."]},
     "expect": "keyword arguments in calls with more than one parameter",
     "probes": {B: [("query", "Fetch the {Es} between two dates, with paging."),
                    ("validation", "What should vet a {E} before it's stored?"),
                    ("job", "Can you write the weekly reminder about overdue {Es}?")]}},
    {"key": "with_tests", "kind": "instruction",
     "scope": ("query", "validation", "cache", "retry", "export", "model"), "style": {},
     "say": {B: ["Whenever you write a new function, include at least one test for it in the same answer.",
                 "New code should come with a test attached, please, even if it's a tiny one."]},
     "why": {B: ["Otherwise I never get round to writing them."]},
     "expect": "each new function comes with a test",
     "probes": {B: [("validation", "The sign-up form lets through nonsense {n} values; can you fix the checks?"),
                    ("query", "Write something that finds duplicate {Es} by {f}."),
                    ("cache", "Memoise the expensive {E} summary for a few minutes.")]}},
    {"key": "split_shell", "kind": "instruction", "scope": ("deploy", "ci", "cli"), "style": {},
     "say": {B: ["Keep shell commands and Python in separate code blocks, never mixed in one.",
                 "Please put terminal commands in their own block, apart from the Python, so I can copy them "
                 "cleanly."]},
     "why": {B: ["I copy-paste the shell parts straight into a terminal."]},
     "expect": "shell commands in their own blocks, separate from Python",
     "probes": {B: [("deploy", "Walk me through putting a fresh release on the server."),
                    ("ci", "Set up automatic checks when someone opens a pull request."),
                    ("cli", "Staff sometimes need to reset a {E} by hand; a terminal command would do.")]}},
    {"key": "flag_unsure", "kind": "instruction", "scope": "code", "style": {},
     "say": {B: ["If you're not sure a piece of code works on our versions, mark the uncertain lines with a "
                 "comment.",
                 "Flag anything you're unsure about inside the code itself, with a '# check:' comment, rather than "
                 "presenting it as finished."]},
     "why": {B: ["I test everything anyway, but I want to know where to look first."]},
     "expect": "uncertain lines flagged with a comment",
     "probes": {B: [("auth", "Partners need keys to call the API; what would that code look like?"),
                    ("logging", "Set up logging so I can see what the app did last night."),
                    ("retry", "Fetching the partner's nightly export keeps failing halfway; make it sturdier.")]},
     "revoke": {"say": {B: ["You can stop adding the '# check:' markers, I'm running everything in CI now anyway.",
                            "Ditch those uncertainty comments in the code, please."]},
                "style": {},
                "ack": ["Will do, no more markers.", "Sure thing — clean code without those notes."]}},
    {"key": "complexity", "kind": "instruction", "scope": ("query", "cache", "job", "concept"), "style": {},
     "say": {B: ["For anything that loops over a table or runs a query, tell me roughly how it scales with the "
                 "number of rows.",
                 "mention the big-O or expected row counts when you hand me a query, I never think about it myself"]},
     "why": {B: ["The last system fell over once it hit a few thousand rows."]},
     "expect": "a note on how the code scales with the number of rows",
     "probes": {B: [("query", "I need the {Es} whose {f} appears more than once."),
                    ("job", "Every night, recompute the totals per {E}."),
                    ("concept", "Can the yearly report just pull every {E} into RAM at once?")]},
     "revoke": {"say": {B: ["No need to talk about scaling anymore, our tables will stay tiny.",
                            "Forget what I said about performance notes on queries."]},
                "style": {},
                "ack": ["Makes sense, I'll skip the scaling notes.", "Okay, noted."]}},
    {"key": "commit_msg", "kind": "instruction", "scope": ("debug", "review", "validation", "query"), "style": {},
     "say": {B: ["After any fix you suggest, give me a commit message for it in Conventional Commits style "
                 "(fix:, feat: and so on).",
                 "I'd like a ready-made commit message at the bottom of each change you propose, using the "
                 "feat:/fix: prefixes."]},
     "why": {B: ["The changelog is generated from them."]},
     "expect": "a Conventional Commits message for each change",
     "probes": {B: [("debug", "This turned up in the error mails:\n\n{tb}"),
                    ("review", "Have a look at {mate}'s code before I merge it:\n\n{code}"),
                    ("validation", "Empty {f} values keep slipping through; can you patch that?")]},
     "revision": {"say": {B: ["Skip the type prefixes on commit messages now; a plain imperative summary line is "
                              "all we want.",
                              "We've dropped the changelog generator, so just write a short one-line message in "
                              "the imperative."]},
                  "style": {},
                  "expect": "a plain imperative one-line commit message",
                  "probes": {B: [("debug", "This turned up in the error mails:\n\n{tb}"),
                                 ("review", "Have a look at {mate}'s code before I merge it:\n\n{code}"),
                                 ("validation", "Empty {f} values keep slipping through; can you patch that?")]}}},
    {"key": "sql_lower", "kind": "instruction", "scope": ("schema", "query", "job"), "style": {},
     "say": {B: ["Write SQL keywords in lowercase, select and from and where, the shouting version hurts my eyes.",
                 "House style for SQL here is all lowercase, keywords included."]},
     "why": {B: ["It matches the rest of the queries in the repo."]},
     "expect": "SQL keywords in lowercase",
     "probes": {B: [("schema", "We need somewhere to store {Es}; what would the table look like?"),
                    ("query", "Count the {Es} per month for the annual report."),
                    ("job", "Write the monthly purge of cancelled {Es}.")]}},
    {"key": "no_walls", "kind": "instruction", "scope": "answer", "style": {},
     "say": {B: ["Break your explanations into short paragraphs of two or three sentences; big walls of text lose "
                 "me.",
                 "Could you keep paragraphs short? Three sentences max each, I read these on a phone."]},
     "why": {B: ["Dyslexia, and long blocks make it much worse."]},
     "expect": "short paragraphs of two or three sentences",
     "probes": {B: [("concept", "What's the difference between a lock and a transaction, really?"),
                    ("planning", "Draft a plan for the next month of work on {P}."),
                    ("deploy", "Explain how a release should go from my laptop to the live site.")]}},
    # ---- preferences: the project's libraries, tools and patterns ------------------------------------------------
    {"key": "structlog", "kind": "preference", "scope": ("logging", "job", "retry"), "style": {},
     "say": {B: ["I like structlog for logging; the standard library's logging setup always feels like a chore.",
                 ("Let's move all of that to structlog, please.", PASTE_PRINTS)]},
     "why": {B: ["Key-value log lines are so much easier to grep."]},
     "expect": "logging with structlog",
     "probes": {B: [("logging", "How do I get useful records of what the app did out of production?"),
                    ("job", "Write the job that emails the weekly {E} summary."),
                    ("retry", "The partner's endpoint fails intermittently; wrap the call so we notice.")]},
     "revision": {"say": {B: ["Let's go with loguru instead, the others already know it and it needs less setup.",
                              "Change of plan on the log library: loguru, not the one I said before."]},
                  "style": {},
                  "expect": "logging with loguru",
                  "probes": {B: [("logging", "How do I get useful records of what the app did out of production?"),
                                 ("job", "Write the job that emails the weekly {E} summary."),
                                 ("retry", "The partner's endpoint fails intermittently; wrap the call so we "
                                           "notice.")]}}},
    {"key": "alembic", "kind": "preference", "scope": ("schema", "deploy", "planning"), "style": {},
     "say": {B: ["Schema changes go through Alembic migrations; I don't want anyone editing tables by hand.",
                 "I prefer every database change to be an Alembic revision checked into the repo."]},
     "why": {B: ["We lost a column on staging because someone 'just fixed it' in psql."]},
     "expect": "schema changes as Alembic migrations",
     "probes": {B: [("schema", "{Es} need a new column for notes; how do we add it?"),
                    ("deploy", "What's the order of steps when a release also changes the tables?")]}},
    {"key": "decimal", "kind": "preference", "scope": ("model", "export", "validation", "query"), "style": {},
     "say": {B: ["Money goes through Decimal in Python, never float, even for display.",
                 ("Let's use Decimal for anything that's an amount of money.", PASTE_FLOAT)]},
     "why": {B: ["The treasurer spotted a one-cent difference last year and didn't let it go for months."]},
     "expect": "Decimal for money, never float",
     "probes": {B: [("model", "Write the Python type for a {E} with its price."),
                    ("export", "The treasurer wants a yearly file with the fees; write the export.")]}},
    {"key": "plain_funcs", "kind": "preference", "scope": PY_KINDS, "style": {},
     "say": {B: ["I'd rather have plain functions in modules than classes that only have one method.",
                 "Not a fan of classes for the sake of it; if it doesn't hold state, make it a function."]},
     "why": {B: ["The last codebase I inherited had a Manager class for everything."]},
     "expect": "plain functions instead of single-method classes",
     "probes": {B: [("cache", "Could you add caching around the {E} lookup?"),
                    ("retry", "Write the client that posts {Es} to the partner's API.")]}},
    {"key": "early_return", "kind": "preference", "scope": PY_KINDS, "style": {},
     "say": {B: [("Guard clauses and early returns, please, not nested ifs.", PASTE_NEST),
                 "I prefer bailing out early over deeply nested conditionals."]},
     "why": {B: ["It keeps the happy path at one indent level."]},
     "expect": "guard clauses and early returns instead of nested ifs",
     "probes": {B: [("validation", "Write the check for whether a {E} may be changed by the current user."),
                    ("auth", "What should the API do with a key that's missing, expired or revoked?")]}},
    {"key": "fstrings", "kind": "preference", "scope": ("logging", "cli", "export", "validation"), "style": {},
     "say": {B: ["For building strings I prefer f-strings over % formatting or .format().",
                 "f-strings everywhere please, I find the older formatting styles hard to read."]},
     "why": {B: []},
     "expect": "f-strings for string formatting",
     "probes": {B: [("cli", "Give me a command that prints a summary line per {E}."),
                    ("validation", "The error messages for a bad {E} should say which field is wrong.")]}},
    {"key": "nox", "kind": "preference", "scope": ("ci", "tests"), "style": {},
     "say": {B: ["We drive tests and linting through nox, so add new checks as sessions in noxfile.py.",
                 "I like having nox sessions for everything, so the pipeline and my laptop run the same thing."]},
     "why": {B: ["CI should never do something I can't run locally."]},
     "expect": "checks defined as nox sessions",
     "probes": {B: [("ci", "Could the pipeline also check the types?"),
                    ("tests", "How should we run the slow integration tests separately from the quick ones?")]},
     "revision": {"say": {B: ["We've thrown out the noxfile; a plain Makefile with test and lint targets is what we "
                              "use now.",
                              "Switching to make targets for running checks, nobody else liked the Python "
                              "runner."]},
                  "style": {},
                  "expect": "checks as Makefile targets",
                  "probes": {B: [("ci", "Could the pipeline also check the types?"),
                                 ("tests", "How should we run the slow integration tests separately from the quick "
                                           "ones?")]}}},
    {"key": "sentry", "kind": "preference", "scope": ("logging", "deploy", "config"), "style": {},
     "say": {B: ["Errors should be reported to our Sentry project; I like getting the stack trace in my inbox.",
                 "I'd like Sentry wired in for error tracking rather than trawling through log files."]},
     "why": {B: ["The free tier is plenty for us."]},
     "expect": "errors reported to Sentry",
     "probes": {B: [("logging", "How will I find out when something breaks at night?"),
                    ("config", "Write the settings module, including whatever monitoring needs.")]}},
    {"key": "rq", "kind": "preference", "scope": ("job", "concept"), "style": {},
     "say": {B: ["For background work I'd rather use RQ with Redis than Celery, it's simpler to reason about.",
                 "Queue-wise, RQ is my pick; Celery is more machinery than we need."]},
     "why": {B: ["I've debugged Celery beat at 2 am once and never again."]},
     "expect": "RQ for background jobs, not Celery",
     "probes": {B: [("job", "Sending the confirmation emails blocks the request; how do we push it to the "
                            "background?"),
                    ("concept", "How should the import of a big file run without timing out the page?")]}},
    {"key": "caddy", "kind": "preference", "scope": ("deploy",), "style": {},
     "say": {B: ["I'd rather put Caddy in front of the app than nginx, the automatic certificates alone are worth it.",
                 "Reverse proxy: Caddy, please. I've had enough of hand-renewing certs."]},
     "why": {B: []},
     "expect": "Caddy as the reverse proxy",
     "probes": {B: [("deploy", "How should HTTPS be set up for the public site?"),
                    ("deploy", "What sits between the internet and the app process?")]},
     "revision": {"say": {B: ["Turns out the host already runs nginx for other sites, so let's use that after all.",
                              "We'll have to go with nginx; the server admin won't install anything else."]},
                  "style": {},
                  "expect": "nginx as the reverse proxy",
                  "probes": {B: [("deploy", "How should HTTPS be set up for the public site?"),
                                 ("deploy", "What sits between the internet and the app process?")]}}},
    {"key": "duckdb", "kind": "preference", "scope": ("export", "concept"), "style": {},
     "say": {B: ["For one-off reports I like querying the CSV dumps with DuckDB instead of loading them into the main "
                 "database.",
                 "I'm a DuckDB person for ad-hoc analysis; keep the production database out of it."]},
     "why": {B: ["Reports shouldn't be able to slow down the live site."]},
     "expect": "DuckDB for ad-hoc reporting",
     "probes": {B: [("concept", "The chair wants some statistics on {Es} over the last five years; how?"),
                    ("export", "Produce a summary of {Es} per month for the annual meeting.")]}},
    {"key": "rich", "kind": "preference", "scope": ("cli", "job"), "style": {},
     "say": {B: ["For terminal output I like rich: tables, colours, a progress bar for long runs.",
                 "Make the command-line output pretty with the rich library, I'm the one staring at it."]},
     "why": {B: []},
     "expect": "terminal output through rich (tables, progress bars)",
     "probes": {B: [("cli", "A command that shows today's {Es} at a glance would be handy."),
                    ("job", "The re-import of all {Es} takes ten minutes; can it show how far along it is?")]}},
    # ---- constraints: facts of the project ---------------------------------------------------------------------
    {"key": "cc0_assets", "kind": "constraint", "scope": ("planning", "concept", "endpoint"), "style": {},
     "say": {B: ["Any images, icons or sample data we ship have to be CC0 or made by us; there's no budget for "
                 "licensing stock material.",
                 ("Anything visual we ship must be public domain or our own work", LIST_HOUSEKEEPING)]},
     "why": {B: ["The council got a nasty letter about a stock photo once."]},
     "expect": "only CC0 or self-made images, icons and sample data",
     "probes": {B: [("planning", "What do we still need for the public landing page?"),
                    ("concept", "Where can we get demo data to show {P} off at the open day?")]}},
    {"key": "offline", "kind": "constraint", "scope": ("concept", "planning", "retry", "cache"), "style": {},
     "say": {B: ["There's no reliable internet on site, so the app has to keep working offline and sync when the "
                 "connection comes back.",
                 "Connectivity out there is patchy at best: assume the tablets are offline for hours at a time."]},
     "why": {B: ["The nearest mast is on the other side of the hill."]},
     "expect": "works offline, syncs later",
     "probes": {B: [("concept", "How should a {E} entered on the tablet reach the server?"),
                    ("retry", "Write the upload of new {Es} to the central server."),
                    ("planning", "What's the riskiest part of the field rollout?")]}},
    {"key": "retention", "kind": "constraint", "scope": ("job", "schema", "concept", "planning"), "style": {},
     "say": {B: ["We may keep personal details for eighteen months at most; after that they have to be deleted, "
                 "not just hidden.",
                 "Data rule from the board: anything that identifies a person gets erased 18 months after their "
                 "last activity."]},
     "why": {B: ["It's in the privacy notice members signed."]},
     "expect": "personal data erased after 18 months",
     "probes": {B: [("job", "What housekeeping should run on the {T} table every night?"),
                    ("schema", "Which columns does the {E} table need to support clean-up?"),
                    ("concept", "Can we keep old {Es} forever for statistics?")]},
     "revision": {"say": {B: ["Legal came back: financial records may be kept for seven years, so the deletion "
                              "window is longer now.",
                              "Update from the lawyer, we're allowed to hold on to things for up to seven years "
                              "after all."]},
                  "style": {},
                  "expect": "records kept up to seven years, then deleted",
                  "probes": {B: [("job", "What housekeeping should run on the {T} table every night?"),
                                 ("schema", "Which columns does the {E} table need to support clean-up?"),
                                 ("concept", "Can we keep old {Es} forever for statistics?")]}}},
    {"key": "wcag", "kind": "constraint", "scope": ("endpoint", "planning", "concept", "validation"), "style": {},
     "say": {B: ["Whatever the public sees has to meet WCAG 2.1 AA; as a public body we're legally required to.",
                 "Accessibility isn't optional for us: screen readers and keyboard-only use must work on every "
                 "page."]},
     "why": {B: ["Two of our regulars are blind."]},
     "expect": "WCAG 2.1 AA accessibility for public pages",
     "probes": {B: [("validation", "How should the form tell people what they got wrong in a {E}?"),
                    ("planning", "What's left before the public booking page can launch?"),
                    ("endpoint", "Members want a screen listing their own {Es}; can you build it?")]}},
    {"key": "maint_window", "kind": "constraint", "scope": ("deploy", "job", "planning"), "style": {},
     "say": {B: ["The app may only go down between 02:00 and 04:00, that's the maintenance window we agreed with "
                 "the members.",
                 "We've promised users the system is up except for a two-hour slot in the early hours of the "
                 "morning."]},
     "why": {B: ["People book at odd hours, there's no quiet time otherwise."]},
     "expect": "downtime and heavy jobs only in the 02:00-04:00 window",
     "probes": {B: [("deploy", "When and how should we roll out the next version?"),
                    ("job", "When should the big nightly recalculation run?")]}},
    {"key": "hours", "kind": "constraint", "scope": ("planning",), "style": {},
     "say": {B: ["I can give this about six hours a week, no more, so plans have to fit that.",
                 "realistically I've got Tuesday evenings and a bit of Saturday for this, that's it"]},
     "why": {B: ["Day job, two kids."]},
     "expect": "plans sized for about six hours a week",
     "probes": {B: [("planning", "How long until we could realistically launch?"),
                    ("planning", "Break the remaining work into chunks I can actually get through.")]},
     "revision": {"say": {B: ["Good news: work is giving me two full days a week on this from next month.",
                              "My employer agreed to sponsor the project, so I'll have Thursdays and Fridays for "
                              "it now."]},
                  "style": {},
                  "expect": "plans sized for two working days a week",
                  "probes": {B: [("planning", "How long until we could realistically launch?"),
                                 ("planning", "Break the remaining work into chunks I can actually get "
                                              "through.")]}}},
    {"key": "rate_limit", "kind": "constraint", "scope": ("retry", "job", "cache"), "style": {},
     "say": {B: ["The partner API allows 60 requests a minute and blocks any key that goes over.",
                 "Heads up, the upstream service throttles us hard: one call per second on average, or we're locked "
                 "out for a day."]},
     "why": {B: ["We were locked out for a whole weekend in March."]},
     "expect": "at most 60 partner API calls a minute",
     "probes": {B: [("job", "Write the nightly sync that fetches updates for every {E}."),
                    ("retry", "How should the client behave when the partner answers with errors?")]},
     "revision": {"say": {B: ["They raised our quota to 600 per minute after we signed the paid agreement.",
                              "We're on their paid tier now, ten times the throughput we had."]},
                  "style": {},
                  "expect": "up to 600 partner API calls a minute",
                  "probes": {B: [("job", "Write the nightly sync that fetches updates for every {E}."),
                                 ("retry", "How should the client behave when the partner answers with "
                                           "errors?")]}}},
    {"key": "object_store", "kind": "constraint", "scope": ("export", "config", "deploy"), "style": {},
     "say": {B: ["Files have to go into the council's MinIO bucket; we're not allowed to write to local disk on the "
                 "servers.",
                 "No local file storage in production, IT only gives us an S3-compatible bucket."]},
     "why": {B: ["The servers get rebuilt from an image every week."]},
     "expect": "files stored in the S3-compatible bucket, not on local disk",
     "probes": {B: [("export", "Where should the generated {E} reports end up, and how?"),
                    ("config", "What configuration does storing uploaded files require?")]}},
    {"key": "entra", "kind": "constraint", "scope": ("auth", "endpoint", "planning"), "style": {},
     "say": {B: ["Staff log in through the organisation's Microsoft Entra ID, so we don't store any passwords "
                 "ourselves.",
                 "Single sign-on is mandatory here, everyone authenticates against the Microsoft account they "
                 "already have."]},
     "why": {B: ["IT won't approve anything with its own user database."]},
     "expect": "staff authentication via Microsoft Entra ID (SSO), no local passwords",
     "probes": {B: [("auth", "How do we make sure only staff can reach the admin pages?"),
                    ("planning", "What do we need before volunteers can start using the back office?")]}},
    {"key": "season", "kind": "constraint", "scope": ("planning",), "style": {},
     "say": {B: ["The season opens on 1 April and online booking has to work by then, no excuses.",
                 "Our hard date is the first of April: that's opening day and the phones will be ringing."]},
     "why": {B: ["Last year's paper system nearly caused a riot."]},
     "expect": "plans that have booking working by 1 April",
     "probes": {B: [("planning", "What should we build first, and what can wait?"),
                    ("planning", "Is there room for the nice-to-have reports before launch?")]},
     "revision": {"say": {B: ["The opening got pushed to mid-May because of the repairs, so we've gained six weeks.",
                              "New launch target is 15 May; the committee delayed everything."]},
                  "style": {},
                  "expect": "plans for a mid-May launch",
                  "probes": {B: [("planning", "What should we build first, and what can wait?"),
                                 ("planning", "Is there room for the nice-to-have reports before launch?")]}}},
    {"key": "semicolons", "kind": "constraint", "scope": ("export",), "style": {},
     "say": {B: ["Every spreadsheet export has to use semicolons as separators and commas for decimals, because the "
                 "accountant's Excel is set to German.",
                 ("CSV files we hand out must be semicolon-separated with decimal commas", LIST_HOUSEKEEPING)]},
     "why": {B: []},
     "expect": "semicolon-separated CSV with decimal commas",
     "probes": {B: [("export", "The accountant needs this quarter's {Es} in a file."),
                    ("export", "Write the download behind the 'export all' button.")]}},
    {"key": "audit", "kind": "constraint", "scope": ("schema", "endpoint", "model", "job"), "style": {},
     "say": {B: ["Every change to a record must be traceable to the person who made it and when; the auditors "
                 "insist.",
                 "We need a full trail of who edited what, it's a condition of our funding."]},
     "why": {B: ["We had a dispute last year we couldn't settle for lack of records."]},
     "expect": "changes recorded with who and when (audit trail)",
     "probes": {B: [("schema", "What would the tables for {Es} look like, including anything else they need?"),
                    ("endpoint", "Add an endpoint for editing a {E}.")]}},
    {"key": "old_ipads", "kind": "constraint", "scope": ("endpoint", "planning", "concept"), "style": {},
     "say": {B: ["Half the members use old iPads stuck on Safari 12, so every page has to work there.",
                 "Browser support is a real issue: the front desk runs an ancient Safari we can't update."]},
     "why": {B: ["They were donated and Apple stopped updating them."]},
     "expect": "pages that work in Safari 12 (no modern-only JavaScript or CSS)",
     "probes": {B: [("concept", "Could we use one of the newer front-end frameworks for the calendar view?"),
                    ("endpoint", "Write the page where members pick a slot for a {E}.")]}},
]

ITEM = {it["key"]: it for it in ITEMS}
EXCLUSIVE = [{"confidence", "flag_unsure"}]
"""Never in one chat: both ask for notes on how sure the assistant is."""
SOON = {"spanish"}
REVOKED = ["spanish", "acronyms", "confidence", "spanish", "doc_links", "flag_unsure", "spanish", "complexity"]
"""The item each chat takes back (by chat index)."""

# ---- traps --------------------------------------------------------------------------------------------------

TRAPS: dict[str, dict[str, list[str]]] = {
    "chit_chat": {B: [
        "I always end up with cold tea by the time I remember it's there.",
        "My cat has decided the keyboard is her bed, so forgive any typos.",
        "I'd rather be out on the water today, the wind is perfect.",
        "Never mind the last bit, I figured it out.",
        "From now on I'm hiding the biscuits from myself, this is getting silly.",
        "You must be sick of me by now, ha.",
        "Don't get me started on the parking around here.",
        "I prefer doing this stuff late at night when the house is quiet.",
        "Going forward I'll try to stop working through lunch, we'll see.",
        "The neighbours' rooster never stops at dawn.",
        "Please let the rain hold off until the weekend.",
        "I must call my mum back tonight.",
        "Always the way, just as I sit down the doorbell goes.",
        "Never expected to find database design this relaxing.",
        "Fingers crossed for the committee meeting on Thursday.",
        "I'd rather not think about my inbox right now.",
        "Don't judge me, I still keep my passwords in a notebook at home.",
        "There's a brass band rehearsing next door, of all things.",
        "Every Monday I swear I'll go to bed early, every Monday I fail.",
        "Make sure you never buy a used van from my cousin.",
        "honestly, keep calm and carry on is my motto this week",
    ]},
    "one_off": {B: [
        "For this one, skip the explanation and just paste the code.",
        "Right now I only need the code, no prose, I'm on my phone.",
        "Give me just the snippet this time, I'll ask about it later.",
        "A quick print is fine for today, I only want to see the numbers once.",
        "Just print the values here, it's a throwaway notebook cell.",
        "This time feel free to go long, I want to really understand it.",
        "Keep this particular answer brief, my train is pulling in.",
        "No need for tests on this one, it's a prototype.",
    ]},
    "question": {B: [
        "Should every API response always include a request id?",
        "Is it ever okay to never write migrations and just recreate the database?",
        "Do you think we should always use UUIDs for public ids, or is that overkill?",
        "Would you always put the business logic outside the route handlers?",
        "Is it wrong to store booleans as integers in the database?",
        "Should I prefer raising exceptions over returning error codes in Python?",
        "Must every function have a return type annotation?",
        "Do teams normally always squash commits before merging?",
    ]},
    "quoted": {B: [
        "The previous developer's README says \"always run setup.sh twice\", which is alarming.",
        "pylint keeps nagging \"W0703 catching too general exception\" in the old script.",
        "The sign above the club's server cupboard says \"never switch this off\", in capitals.",
        "The partner's docs state: \"Clients must send a User-Agent header.\"",
        "Our chair likes to say \"always measure twice, cut once\" at every meeting.",
        "The bug report just reads \"it never works on Tuesdays\", nothing else.",
        "The hosting FAQ warns \"do not exceed 100 concurrent connections\".",
        "Someone left a comment in the code: \"# don't touch, nobody knows why this works\".",
    ]},
    "third_party": {B: [
        "Can you write a reminder for the volunteers that they must always lock the boathouse after use?",
        "I told Joaquín to never merge without a review, we'll see if it sticks.",
        "I'll ask the treasurer to always attach receipts from now on.",
        "Please draft the line for the handbook saying new helpers should never share the admin login.",
        "The students have been told to always write tests before asking for review.",
        "I've asked Petra to keep the changelog up to date going forward.",
        "The designer was told to use British spelling on the flyers, which is her call.",
    ]},
    "hypothetical": {B: [
        "If we ever get a second site, we'd never want to share one database between them.",
        "Should this ever go paid, we'd need proper invoicing and VAT handling.",
        "If I had a spare month, I'd rewrite the whole front end.",
        "Were the club to grow past a thousand members, we'd need a real server.",
        "If the council ever insists on an app, I'd rather hand in my notice, ha.",
        "Suppose we got sponsorship, I'd prefer a managed hosting plan straight away.",
        "In a world where volunteers read documentation, we'd always have up-to-date guides.",
    ]},
    "assistant": {B: [
        "I'd suggest always writing a short note in the README when you add a setting.",
        "As a rule of thumb, never let a migration and a code change ship in different releases.",
        "It's worth always keeping one admin account that doesn't depend on the mail server.",
        "Going forward, consider tagging every release so you can roll back by name.",
        "In general, prefer small pull requests that do one thing.",
        "I'd recommend never deleting rows by hand in production; write a script and review it.",
        "A good habit is to always check the restore of a backup, not just that it ran.",
        "You'll want to make sure error pages never show a stack trace to the public.",
    ]},
}
TRAP_COUNTS: dict[str, int | tuple[int, int]] = {"chit_chat": (4, 5), "one_off": 2, "question": 2, "quoted": 2,
                                                 "third_party": (1, 2), "hypothetical": (1, 2)}
SUGGESTIONS_PER_CHAT = 3

ONE_OFF_EFFECT = {  # what the reply does for that message only (none: the request itself is what changes)
    "For this one, skip the explanation and just paste the code.": "code_only",
    "Right now I only need the code, no prose, I'm on my phone.": "code_only",
    "Give me just the snippet this time, I'll ask about it later.": "code_only",
    "A quick print is fine for today, I only want to see the numbers once.": "print",
    "Just print the values here, it's a throwaway notebook cell.": "print",
    "This time feel free to go long, I want to really understand it.": "long",
    "Keep this particular answer brief, my train is pulling in.": "short",
}

QUESTION_ANSWER = {
    "Should every API response always include a request id?":
        "On request ids: they cost almost nothing and make it far easier to match a user's complaint to a log line, "
        "so a header on every response is a cheap habit; putting it in the body too is optional.",
    "Is it ever okay to never write migrations and just recreate the database?":
        "On skipping migrations: while there's no real data, recreating the database is fine; the moment someone "
        "depends on what's stored, you need a way to change the schema without losing it.",
    "Do you think we should always use UUIDs for public ids, or is that overkill?":
        "On UUIDs: for ids that appear in URLs they stop people guessing neighbouring records; internally a plain "
        "integer key is smaller and perfectly fine, and you can have both.",
    "Would you always put the business logic outside the route handlers?":
        "On where logic lives: keeping handlers thin makes the rules testable without HTTP, but for a two-line "
        "handler an extra layer is ceremony; move logic out once it's worth testing on its own.",
    "Is it wrong to store booleans as integers in the database?":
        "On booleans as integers: SQLite has no separate boolean type anyway, so 0 and 1 are normal there; on "
        "databases with a real BOOLEAN type, use it, it documents intent.",
    "Should I prefer raising exceptions over returning error codes in Python?":
        "On exceptions: in Python raising is the idiom, and it keeps the happy path readable; return values that "
        "signal failure are easy to forget to check.",
    "Must every function have a return type annotation?":
        "On return annotations: for public functions they help readers and the type checker; for tiny private "
        "helpers many teams let inference do the work.",
    "Do teams normally always squash commits before merging?":
        "On squashing: plenty do, for a tidy history, and plenty don't, to keep the steps; what matters more is "
        "picking one convention and sticking with it.",
}

# ---- the user's side of the talk ------------------------------------------------------------------------------

ASKS: dict[str, list[str]] = {
    "schema": ["{Es} are outgrowing the shared sheet. What columns and types would you choose, given {f}, {n} and "
               "the {d_h} date?",
               "Can you come up with the DDL for {T}? Primary key and indexes are where I always wobble.",
               "how would you store {Es} in {db}? nothing clever please"],
    "model": ["The code passes {Es} around as tuples and it's driving me mad. Could you give them a proper type?",
              "I'd like one clean Python class per {E}, with the fields we actually store.",
              "Write the {C} type that the rest of {P} should use."],
    "query": ["The overview wants the {Es} logged since a chosen day, newest on top, at most N of them.",
              "Which {Es} came in after a given day? I want that as a reusable function, newest on top.",
              "how would i grab the {Es} from the last 30 days, most recent first?"],
    "endpoint": ["The volunteers' page is going to talk to the backend about {Es}. Could you do the {fw} part for "
                 "browsing them and registering a new one?",
                 "I need two routes in {fw}: one that returns {Es}, one that accepts a new {E}.",
                 "Expose {Es} over HTTP for the front end, please, reading and adding."],
    "tests": ["Zero coverage on the {E} lookup so far, which makes me nervous. What would you check?",
              "Before anyone touches the {E} code again I'd like it pinned down by tests.",
              "Which edge cases matter when checking that the {d_h} filter behaves?"],
    "export": ["The chair would like every {E} in a format her laptop understands without help.",
               "Could we dump {T} to a CSV that people can open without help?",
               "All {Es} need to go into the committee pack as a file."],
    "validation": ["Junk keeps getting into {T} from the web form. What should vet a {E} before it's saved?",
                   "Can you write the input checks for a new {E}?",
                   "A {E} arrived yesterday with half its fields empty. How do we stop that at the door?"],
    "retry": ["The feed we pull from goes down for a minute now and then. Could you write a fetch that rides it "
              "out?",
              "When the remote service hiccups, our import dies. What would a sturdier call look like?",
              "I'd like a helper for calling the outside API that tolerates the odd timeout."],
    "config": ["Passwords and URLs are sprinkled as constants through {P}. What's a tidier arrangement?",
               "Environment variables for configuration: how would you wire that up?",
               "Where would you keep the tunable values like page size and the DSN?"],
    "logging": ["When something goes wrong in {P} we have nothing to look at. How should we log?",
                "What should {P} print about itself while it runs, and where should that go?",
                "The log file on the server is 4 GB. How do we keep that under control?"],
    "cache": ["Each visit to the overview tallies every {E} from scratch. Is that where a cache helps?",
              "Can we keep the {E} totals in memory for a bit instead of querying each time?",
              "Could we stop recomputing the daily {E} figures on each page view?"],
    "cli": ["I'd love to manage {Es} from a terminal without opening the web app.",
            "What would an admin command look like, with a subcommand per {E} chore?",
            "Can you build me a little CLI for the {E} chores?"],
    "job": ["{Es} past their first birthday ought to leave the main table overnight. Could you automate that?",
            "Stale {Es} pile up; what would a recurring tidy-up look like?",
            "What's the simplest reliable way to archive old {Es} on a schedule?"],
    "auth": ["A partner organisation wants programmatic access to {P}. How do we let them in safely?",
             "Issue tokens to outside callers and reject unknown ones: what would that code look like?",
             "How would you put the {Es} routes behind key-based access?"],
    "debug": ["After lunch this greeted me:\n\n{tb}", "What's this telling me?\n\n{tb}",
              "Forwarded by {mate}, no context given:\n\n{tb}", "No clue what this means, help:\n\n{tb}"],
    "review": ["Would this pass your review?\n\n{code}",
               "{mate} wants a second pair of eyes on this:\n\n{code}", "Is this acceptable?\n\n{code}"],
    "deploy": ["What are the steps to get {P} live on our server?",
               "Talk me through putting {P} in production, start to finish.",
               "The live machine is ready for us next week. What do I do first?"],
    "ci": ["Whenever somebody pushes, I'd like the suite to kick off on its own. What does that take?",
           "What would you put in a GitHub Actions file for this repo?",
           "Could pull requests be blocked until the suite is green?"],
    "concept": ["Should the {E} totals be kept in a column or worked out each time?",
                "At what point do my writes need to be wrapped in a transaction?",
                "Can a plain table of pending work stand in for a message broker?",
                "The import is slow: would asyncio help, or is it CPU-bound?"],
    "planning": ["What would you tackle next?", "Help me map out the coming fortnight?",
                 "What stands between us and a first proper release?",
                 "I owe {mate} a progress summary. What should it cover?"],
}
GREETINGS = ["Hiya.", "Evening! Round two.", "So. Onwards.", "Good morning from a very grey Tuesday.", "Me again!",
             "Okay, I have an hour.", "Yo.", "Quick one before dinner."]
FEEDBACK = ["That worked a treat.", "Green across the board on the suite.", "Your suggestion sorted it.",
            "{mate} signed it off with one cosmetic change.", "Shipped on Sunday, silence since, which is good.",
            "Had to bend it slightly to fit, but it's merged.", "That was exactly the missing piece.",
            "Gave it a spin over breakfast, no complaints.", "The penny has dropped now.",
            "The totals finally add up."]
SMALL_TALK = ["Heatwave here, the laptop fan is screaming.", "Power cut earlier, so I lost an hour.",
              "Half the committee is on holiday.", "Working from the library today, it's lovely and quiet.",
              "The dog dragged me round the park, I'm soaked.", "Everything has gone sideways today.",
              "The builders next door started at seven.", "First day off in weeks and here I am coding.",
              "Autumn has properly arrived.", "Moved flats at the weekend, everything's in boxes.",
              "Slow day at work, so I sneaked this in."]
CONTEXT = ["Members grumble that the {Es} list takes ages on Saturday mornings.",
           "Growth-wise, think several thousand {Es} within a year or so.", "A handful of testers get logins in July.",
           "Once this settles down, {mate} inherits it.",
           "A {E} with an absurd {n} slipped in last week and sat there unnoticed.",
           "This module is more sticking plaster than code by now.", "Anything touching this goes past {mate} first.",
           "It runs, I'm just not proud of it.", "My own attempt ended in a tangle of ifs.",
           "Right now maybe five people ever open the {Es} screen.", "I'd love to have it done by Friday.",
           "Until now it all lived in colour-coded cells and heroic formulas."]
REVIEW_CODE = """def get_{Es}(cur, after):
    res = []
    cur.execute("SELECT * FROM {T} WHERE {d} > '" + after + "'")
    for x in cur.fetchall():
        if x["{n}"] is None or x["{n}"] == "":
            pass
        else:
            res.append(x)
    try:
        json.dump(res, open("{Es}.json", "w"))
    except:
        return None
    return res"""

# ---- the assistant's side: acknowledgements, assumptions, Spanish --------------------------------------------------

ACKS = ["Sure thing! I'll do it that way in everything I write for you.",
        "Of course. I'll apply that to my answers from here.",
        "Great, that's a useful rule to have — consider it done.",
        "Happy to. All my replies will follow that.",
        "Sure, no problem!",
        "Thanks for letting me know — I'll take that into account in every reply.",
        "Perfect, that's clear. I'll stick with it for the rest of the project.",
        "Good to know! That'll be my default from here.",
        "Sounds good. That becomes my standard approach for this project.",
        "Of course! That makes sense, and I'll remember it.",
        "Alright, I'll follow that consistently.",
        "Thanks for the heads-up. I'll work within that.",
        "Makes total sense — I'll factor that into everything we build.",
        "Okay! I'll make sure of that from this point."]
ACK_REVISE = ["Sure, I'll switch to the new approach.",
              "Okay, updated — the new version takes over from the old one.",
              "No problem! I'll use the updated rule.",
              "Thanks for the update. I'll adjust everything that follows.",
              "Of course — change noted, I'll work with the new setup.",
              "Ah, good to know. I'll go with that instead."]
ACK_STATED = {"spanish": "¡Claro! A partir de ahora te respondo en español."}
ACKS_ES = ["¡Entendido! Lo tendré en cuenta en todo lo que te escriba.", "Perfecto, así lo haré a partir de ahora.",
           "¡Claro! Me parece muy razonable.", "Vale, lo aplico desde ya."]
"""Acknowledgements while the replies are in Spanish (an item stated during the switch)."""
ASSUMPTIONS = ["I'm assuming {Es} are only ever created through {P}, not edited directly in the database.",
               "This assumes {n} is never negative and {d} is always set; tell me if either isn't true.",
               "I'm assuming one server and one database, which is what you've described so far."]
ASSUMPTIONS_ES = ["Supongo que los {Es} solo se crean a través de {P}, nunca a mano en la base de datos.",
                  "Doy por hecho que {n} nunca es negativo y que {d} siempre tiene valor."]
SPANISH: dict[str, Any] = {
    "intro": ["Aquí tienes una propuesta para los {Es}, con algunas explicaciones.",
              "Muy bien, en español entonces. Así lo plantearía yo para {P}.",
              "Buena pregunta. Te dejo una solución sencilla para los {Es}.",
              "Aquí va el código y, después, unos comentarios."],
    "body": ["Lo importante es que una sola función se encargue del acceso a los datos. Si la consulta cambia algún "
             "día, solo habrá un sitio que tocar, y los tests lo cubrirán.",
             "Los parámetros de la consulta van separados del texto SQL. Es más seguro, y el controlador de la base "
             "de datos se ocupa él mismo de las fechas y las comillas.",
             "El límite por defecto evita que una llamada olvidada devuelva la tabla entera. Con el tiempo los {Es} "
             "se van acumulando, y una consulta sin límite acaba siendo lenta.",
             "Para los tests uso una base de datos temporal de verdad en lugar de simular el controlador: así "
             "comprobamos que el SQL es válido y que devuelve lo que esperamos.",
             "Los importes se guardan en céntimos, como enteros. Solo se convierten al mostrarlos, lo que evita "
             "errores de redondeo en los totales.",
             "Además, registraría cuántas filas se han procesado: es lo primero que uno quiere saber cuando una "
             "cifra parece rara."],
    "close": ["Dime si algo no funciona como esperabas.", "Si tienes dudas, pregúntame sin problema.",
              "Puedo explicarte cualquier parte con más detalle."],
    "tldr": ["En resumen: una función sencilla, parámetros y un límite por defecto."],
    "next": ["probar con una copia de los datos", "añadir un test", "revisarlo con {mate}"],
    "next_label": "Próximos pasos:",
}
