"""The blind held-out split of the standing-instruction data (issue 39): its items, traps and the user's side of
the talk, for :mod:`.make_standing` ``--holdout`` (``data/standing_holdout.json``).

dev and test were seen while the recogniser was tuned, so neither measures it honestly any more. Everything here
was written without reading the recogniser, its tests or its results: new instructions, preferences and project
constraints (not paraphrases of :mod:`.standing_items`), new traps, and a new user side of the conversation too
(greetings, feedback, small talk, context and the requests themselves), so that none of the sentences the
recogniser sees was seen while it was written. Only the assistant's explanations are shared with dev and test
(:mod:`.standing_prose`): the recogniser never reads them.

The shapes are :mod:`.standing_items`'s, keyed by the split ``"holdout"``, with three additions:

- a wording can be ``(sentence, frame)``: the frame is the text around the sentence in its message, a list the
  sentence is one entry of, or a pasted snippet it follows (``{s}`` is the sentence; ``{mate}`` and the other
  slots of :func:`.make_standing.slots` are filled);
- a ``revoke`` has its own acknowledgements (``ack``); :data:`SOON` are revoked a few exchanges after they are
  stated (the language switch), the others in the middle third;
- two more kinds of trap: ``third_party`` (an instruction to someone else, or text for someone else to follow)
  and ``hypothetical`` ("if we ever ..., we'd never ...").

Kinds of item as in :mod:`.standing_items`: ``instruction`` (how the assistant answers or writes code),
``preference`` (the user's taste in the project's libraries, tools and patterns) and ``constraint`` (facts of the
project: platforms, versions, licences, infrastructure, budgets, deadlines, data rules).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .standing_code import Entity as E
from .standing_items import PY_KINDS

H = "holdout"

# ---- the projects, people and dates -------------------------------------------------------------------------

PROJECTS: list[dict[str, Any]] = [
    {"key": "foodbank", "title": "the volunteer rota app for our food bank", "P": "the rota app", "fw": "flask",
     "py": "3.12",
     "entities": [E("shift", "shifts", "Shift", (("volunteer_name", "str"), ("hours", "int"), ("starts_at", "date"))),
                  E("donation", "donations", "Donation", (("donor", "str"), ("weight_grams", "int"),
                                                          ("received_at", "date"))),
                  E("volunteer", "volunteers", "Volunteer", (("email", "str"), ("shifts_done", "int"),
                                                             ("joined_on", "date")))]},
    {"key": "toollib", "title": "an inventory system for a community tool library", "P": "the tool library",
     "fw": "fastapi", "py": "3.12",
     "entities": [E("tool", "tools", "Tool", (("tool_name", "str"), ("deposit_cents", "money"),
                                              ("acquired_on", "date"))),
                  E("checkout", "checkouts", "Checkout", (("member_code", "str"), ("days_kept", "int"),
                                                          ("borrowed_at", "date"))),
                  E("workshop", "workshops", "Workshop", (("topic", "str"), ("places", "int"), ("runs_on", "date")))]},
    {"key": "boxoffice", "title": "the box-office backend for a small theatre", "P": "the box office",
     "fw": "fastapi", "py": "3.11",
     "entities": [E("performance", "performances", "Performance", (("show_title", "str"), ("seats_sold", "int"),
                                                                   ("starts_at", "date"))),
                  E("reservation", "reservations", "Reservation", (("patron_email", "str"), ("price_cents", "money"),
                                                                   ("reserved_at", "date"))),
                  E("patron", "patrons", "Patron", (("full_name", "str"), ("visits", "int"),
                                                    ("first_seen_on", "date")))]},
    {"key": "fleet", "title": "a mileage and fuel log for a courier company's vans", "P": "the fleet log",
     "fw": "flask", "py": "3.12",
     "entities": [E("trip", "trips", "Trip", (("driver", "str"), ("distance_km", "int"), ("departed_at", "date"))),
                  E("refuel", "refuels", "Refuel", (("station", "str"), ("cost_cents", "money"),
                                                    ("filled_at", "date"))),
                  E("van", "vans", "Van", (("plate", "str"), ("odometer_km", "int"), ("serviced_on", "date")))]},
    {"key": "samples", "title": "a sample tracker for a university research lab", "P": "the sample tracker",
     "fw": "fastapi", "py": "3.12",
     "entities": [E("specimen", "specimens", "Specimen", (("label_code", "str"), ("volume_ul", "int"),
                                                          ("collected_at", "date"))),
                  E("freezer", "freezers", "Freezer", (("freezer_name", "str"), ("free_slots", "int"),
                                                       ("defrosted_on", "date"))),
                  E("experiment", "experiments", "Experiment", (("protocol", "str"), ("runs", "int"),
                                                                ("started_on", "date")))]},
    {"key": "climbing", "title": "the membership system for a climbing gym", "P": "the gym system",
     "fw": "flask", "py": "3.11",
     "entities": [E("visit", "visits", "Visit", (("member_ref", "str"), ("minutes", "int"),
                                                 ("checked_in_at", "date"))),
                  E("membership", "memberships", "Membership", (("plan", "str"), ("price_cents", "money"),
                                                                ("valid_from", "date"))),
                  E("route", "routes", "Route", (("grade", "str"), ("holds", "int"), ("set_on", "date")))]},
    {"key": "vetvisits", "title": "a scheduling tool for a mobile vet practice", "P": "the vet scheduler",
     "fw": "fastapi", "py": "3.12",
     "entities": [E("housecall", "housecalls", "Housecall", (("household", "str"), ("travel_minutes", "int"),
                                                             ("booked_for", "date"))),
                  E("pet", "pets", "Pet", (("species", "str"), ("weight_grams", "int"), ("born_on", "date"))),
                  E("prescription", "prescriptions", "Prescription", (("drug", "str"), ("dose_mg", "int"),
                                                                      ("prescribed_at", "date")))]},
    {"key": "teeshop", "title": "an order tracker for a print-on-demand T-shirt shop", "P": "the order tracker",
     "fw": "flask", "py": "3.12",
     "entities": [E("order", "orders", "Order", (("customer_email", "str"), ("total_cents", "money"),
                                                 ("placed_at", "date"))),
                  E("design", "designs", "Design", (("artist", "str"), ("downloads", "int"), ("uploaded_at", "date"))),
                  E("shipment", "shipments", "Shipment", (("carrier", "str"), ("parcels", "int"),
                                                          ("shipped_at", "date")))]},
]
USERS = ["Noor", "Henrik", "Chiara", "Emeka", "Saoirse", "Mateo", "Ji-woo", "Astrid"]
MATES = ["Bilal", "Fenna", "Ola", "Dario"]
START = dt.datetime(2025, 1, 13, 9, 30)
OPENING = ["Over the next few weeks I'm building {title}, and I'd appreciate help with both design and code.",
           "I've taken on {title}; it's small, but people will rely on it every day.",
           "We're kicking off {title} and I'm mostly on my own with it."]

# ---- items ----------------------------------------------------------------------------------------------------

LIST_NOTES = ("A couple of notes before we dive in:\n- the repo moved to the shared GitLab, {mate} has access\n- {s}\n"
              "- I'm away the week after next")
LIST_FACTS = ("Some facts about the setup so you don't have to ask:\n- the office is in Ghent, the servers are "
              "elsewhere\n- {s}\n- {mate} has root on the boxes, I don't")
PASTE_CALC = ("This is the kind of thing I keep finding in the repo:\n\n```\ndef calc(x, y):\n    return x * y / 100\n"
              "```\n\n{s}")
PASTE_ABBREV = ("Look at this gem from the old code:\n\n```\ndef upd(u, cnt):\n    tmp = cnt + 1\n    return u, tmp\n"
                "```\n\n{s}")
PASTE_LOG = ("This line from the importer worries me:\n\n```\nlogger.info(\"imported %s\", row)\n```\n\n{s}")

ITEMS: list[dict[str, Any]] = [
    # ---- instructions: how to answer, how to write the code -----------------------------------------------------
    {"key": "numbered", "kind": "instruction", "scope": "answer", "style": {"numbered": True},
     "say": {H: ["Whenever you give me a list of anything, number the entries instead of using bullets, so I can "
                 "refer back to them.",
                 ("Numbered lists only from here on, no bullet points", LIST_NOTES),
                 "Please number your points rather than bulleting them; it makes replying point by point easier."]},
     "why": {H: ["I answer from my phone and quoting bullets back is fiddly."]},
     "expect": "lists in answers numbered (1., 2., 3.), not bulleted",
     "probes": {H: [("planning", "Which loose ends do we still have before the pilot?"),
                    ("concept", "What are the trade-offs of soft-deleting {Es} versus moving them to an archive?"),
                    ("review", "Give me your concerns about this one:\n\n{code}")]},
     "revoke": {"say": {H: ["You can stop numbering everything, plain bullets are fine again.",
                            "No need to number the lists anymore, it was more useful in theory than in practice."]},
                "style": {"numbered": False},
                "ack": ["Sure, ordinary bullet points again.", "OK, no more numbering."]}},
    {"key": "german", "kind": "instruction", "scope": "answer", "style": {"german": True},
     "say": {H: ["For the next few weeks, please answer me in German; I have a language exam coming up and technical "
                 "reading is the best practice I get.",
                 "Let's do your explanations in German from today, code and identifiers can stay in English.",
                 "Could you reply auf Deutsch until I tell you otherwise?"]},
     "why": {H: ["A couple of the people reading along are in Graz anyway."]},
     "expect": "answers in German (until revoked)",
     "probes": {H: []},
     "revoke": {"say": {H: ["Okay, English again please, my brain is full of compound nouns.",
                            "Let's switch back to English; the exam is over and I want to read faster again.",
                            "Enough Deutsch, English from here."]},
                "style": {"german": False},
                "ack": ["Sure, English from here on.", "Of course, back to English."]}},
    {"key": "brief", "kind": "instruction", "scope": "answer", "style": {"short": True},
     "say": {H: ["Keep the explanations tight, three short paragraphs at most, however much code there is.",
                 "Going forward I'd like shorter answers: a screenful of prose, tops, and skip background I already "
                 "know."]},
     "why": {H: ["I read these on the train with patchy signal.", "My attention span this month is shot."]},
     "expect": "short prose (about three paragraphs or one screen), code aside",
     "probes": {H: [("concept", "Would splitting {P} into two services ever make sense for us?"),
                    ("planning", "Where do things stand, and what would you tackle first tomorrow?"),
                    ("concept", "How do the isolation levels in the database actually differ?")]},
     "revision": {"say": {H: ["You can go a bit longer now, up to a page is fine when a topic really needs it.",
                              "Loosen that a little: a full page is okay for design questions."]},
                  "style": {"short": False},
                  "expect": "answers up to about a page when the topic needs it",
                  "probes": {H: [("concept", "Would splitting {P} into two services ever make sense for us?"),
                                 ("planning", "Where do things stand, and what would you tackle first tomorrow?"),
                                 ("concept", "How do the isolation levels in the database actually differ?")]}},
     "revoke": {"say": {H: ["Back to normal length, please; the short answers kept leaving out the reasoning.",
                            "Forget the length limit I gave you, I want the full reasoning again."]},
                "style": {"short": False},
                "ack": ["Understood, normal length again.", "OK, full explanations from here."]}},
    {"key": "assume", "kind": "instruction", "scope": "answer", "style": {"assumptions": True},
     "say": {H: ["If you have to guess at something I haven't told you, spell out the assumption at the top instead "
                 "of quietly picking one.",
                 "Whenever an answer hinges on something you're assuming about our setup, say what you assumed in so "
                 "many words."]},
     "why": {H: ["Twice now the code was right for a setup we don't have.",
                 "It saves a round trip when the guess is wrong."]},
     "expect": "assumptions stated explicitly, up front",
     "probes": {H: [("concept", "What happens if the same {E} comes in twice from the import?"),
                    ("planning", "What would it take for a second branch to start using {P}?"),
                    ("deploy", "How should we roll out the next version without downtime?")]},
     "revoke": {"say": {H: ["You can drop the assumption lines now, I know the setup well enough that they're just "
                            "noise.",
                            "No need to list what you're assuming anymore."]},
                "style": {"assumptions": False},
                "ack": ["Fine, no more assumption lines.", "OK, dropping those."]}},
    {"key": "code_first", "kind": "instruction", "scope": "code", "style": {"code_first": True},
     "say": {H: ["Code first, explanation afterwards, please.",
                 "I'd like the snippet at the top of each answer and the reasoning underneath it."]},
     "why": {H: ["Half the time the code explains itself.", "I read the code before anything else anyway."]},
     "expect": "the code block comes before the explanation",
     "probes": {H: [("query", "I need the {Es} from one calendar week, oldest first; can you write that?"),
                    ("endpoint", "The phone app wants to read and add {Es} over HTTP; what would the routes be?"),
                    ("export", "Could you produce a file of every {E} for the annual report?")]},
     "revision": {"say": {H: ["Actually, put a two-line summary above the code after all; I kept scrolling back up to "
                              "see what it was for.",
                              "On second thought, a quick sentence on what the snippet does should come before it."]},
                  "style": {"code_first": False},
                  "expect": "a short summary before the code",
                  "probes": {H: [("query", "I need the {Es} from one calendar week, oldest first; can you write "
                                           "that?"),
                                 ("endpoint", "The phone app wants to read and add {Es} over HTTP; what would the "
                                              "routes be?"),
                                 ("export", "Could you produce a file of every {E} for the annual report?")]}}},
    {"key": "docstrings", "kind": "instruction", "scope": PY_KINDS, "style": {"docstrings": True},
     "say": {H: ["Every function you write for me gets a docstring, even the two-line helpers.",
                 "Our style guide says each public function carries a one-line docstring describing what it returns, "
                 "so please stick to that.",
                 ("From now on, no function leaves your hands without a docstring.", PASTE_CALC)]},
     "why": {H: ["We build the reference docs from them.", "pydocstyle runs in the pre-commit hook."]},
     "expect": "a docstring on every function",
     "probes": {H: [("job", "Every night the {Es} older than a year should be moved out of the main table; can you "
                            "write the job?"),
                    ("cache", "The {E} totals page takes four seconds to load; can you speed it up?"),
                    ("retry", "Write the call that pulls the partner's daily file, it fails a couple of times a "
                              "week.")]}},
    {"key": "path_header", "kind": "instruction", "scope": "code", "style": {"path_header": True},
     "say": {H: ["Start each snippet with a comment naming the file it belongs in, like # app/models.py.",
                 "Please always tell me where a piece of code lives by putting its path as the first line of the "
                 "block."]},
     "why": {H: ["I keep pasting things into the wrong module."]},
     "expect": "each code block starts with a comment giving its file path",
     "probes": {H: [("validation", "Sign-ups arrive with half the fields blank; what should check them?"),
                    ("model", "Give me the Python type for a single {E}."),
                    ("tests", "Cover the {Es} date filter with a few tests.")]},
     "revoke": {"say": {H: ["No need for the file-path comments anymore, the project layout has settled.",
                            "You can leave out that location line at the top of snippets from now on."]},
                "style": {"path_header": False},
                "ack": ["OK, no more path comments.", "Understood, dropping the file line."]}},
    {"key": "diff", "kind": "instruction", "scope": ("debug", "review"), "style": {"diff": True},
     "say": {H: ["When you fix code I already have, show me a unified diff rather than the whole function again.",
                 "For changes to existing files I'd rather see a patch than a full rewrite."]},
     "why": {H: ["It's much easier to apply and to review.", "Then git apply does the work for me."]},
     "expect": "changes to existing code shown as a diff",
     "probes": {H: [("debug", "Fresh one from the logs this morning:\n\n{tb}"),
                    ("review", "Can you look over this before it goes in?\n\n{code}"),
                    ("debug", "The nightly run fell over with this:\n\n{tb}")]}},
    {"key": "blunt", "kind": "instruction", "scope": ("review", "concept", "planning"), "style": {},
     "say": {H: ["Be blunt with me: if an idea of mine is bad, say so in the first sentence rather than burying it.",
                 "Don't soften criticism of my code; if something's wrong, tell me straight."]},
     "why": {H: ["I'd rather hear it from you than from a user.", "Politeness costs me time."]},
     "expect": "direct criticism up front, no cushioning",
     "probes": {H: [("review", "{mate} is proud of this one; what's your honest take?\n\n{code}"),
                    ("concept", "I'm thinking of keeping each {E} as a JSON blob in a single column; good plan?"),
                    ("planning", "I want to rewrite {P} in Rust over the summer. Thoughts?")]}},
    {"key": "iso_dates", "kind": "instruction", "scope": ("tests", "export", "planning", "concept"), "style": {},
     "say": {H: ["For dates, stick to ISO 8601 everywhere, in examples and prose alike: 2025-03-07, never 07/03 or "
                 "3/7.",
                 "Dates as YYYY-MM-DD only, please, both in code samples and in what you write to me."]},
     "why": {H: ["Half the team reads 03/07 as March, the other half as July."]},
     "expect": "dates written YYYY-MM-DD",
     "probes": {H: [("planning", "Can you lay out a rough schedule for the next six weeks?"),
                    ("tests", "Add tests for the cut-off in the {Es} query, around midnight especially."),
                    ("export", "Accounts want a monthly file of {Es} including the {d} column; can you write it?")]},
     "revoke": {"say": {H: ["Forget the rule about date formats, the new locale settings handle it for us.",
                            "You can write dates however you like again."]},
                "style": {},
                "ack": ["Understood, no fixed date format from now on.", "OK, noted."]}},
    {"key": "en_gb", "kind": "instruction", "scope": ("validation", "endpoint", "planning", "concept"), "style": {},
     "say": {H: ["Use British spelling in anything user-facing: colour, organise, cancelled and so on.",
                 "I'd like UK English spelling throughout, including error messages and UI strings."]},
     "why": {H: ["The client is in Manchester and notices these things."]},
     "expect": "British spelling (colour, organise, cancelled)",
     "probes": {H: [("validation", "Write the checks for a new {E}, with messages a member of staff can understand."),
                    ("planning", "Draft the announcement telling people about the new {Es} page."),
                    ("endpoint", "We need routes for {Es}, and the error responses should make sense to a person.")]}},
    {"key": "no_tables", "kind": "instruction", "scope": ("concept", "planning"), "style": {},
     "say": {H: ["No markdown tables in your answers, my mail client turns them into soup.",
                 "Please never answer with a table; plain lists survive copy-paste into our wiki, tables don't."]},
     "why": {H: ["I forward a lot of these by email."]},
     "expect": "no markdown tables; comparisons as prose or lists",
     "probes": {H: [("concept", "Compare two ways of keeping the history of {Es}: which suits us better?"),
                    ("concept", "Which database would you pick for the long run, given what you know about us?"),
                    ("planning", "Lay out the options for the reporting feature, with what each would cost us.")]}},
    {"key": "errors", "kind": "instruction", "scope": PY_KINDS, "style": {},
     "say": {H: ["Never swallow exceptions in code for this project: no bare except, no except-pass.",
                 "Error handling rule for everything you write: catch the narrowest exception possible and re-raise "
                 "with context, nothing silently ignored."]},
     "why": {H: ["We lost a week of data to an except: pass last year.", "Silent failures are the worst kind."]},
     "expect": "narrow except clauses, errors re-raised or logged, never swallowed",
     "probes": {H: [("retry", "Their webhook sometimes sends half a JSON document; write the code that reads it."),
                    ("job", "Write the task that sends reminders for tomorrow's {Es}."),
                    ("cli", "Could we get a script to re-import {Es} from last month's CSV?")]}},
    {"key": "naming", "kind": "instruction", "scope": PY_KINDS, "style": {},
     "say": {H: [("No abbreviated names in code: count not cnt, user not usr, and temporary values get real names "
                  "too.", PASTE_ABBREV),
                 "For the rest of the project, spell identifiers out in full words; I can't stand tmp, res and "
                 "friends."]},
     "why": {H: ["Our newest contributor is learning Python and the short names lose them."]},
     "expect": "identifiers in full words, no cryptic abbreviations",
     "probes": {H: [("query", "Write the function that finds {Es} whose {f} matches what someone typed."),
                    ("export", "Dump all {Es} into a file for the auditors."),
                    ("cache", "Cache the busiest {E} lookup for half a minute.")]}},
    {"key": "sql_params", "kind": "instruction", "scope": ("query", "review", "debug", "job", "export"), "style": {},
     "say": {H: ["Any SQL you write must use bound parameters, never string formatting, even in throwaway scripts.",
                 "Security rule: queries get placeholders for every value, no f-strings or concatenation anywhere "
                 "near SQL."]},
     "why": {H: ["We had a pen test in the autumn and this was the first finding."]},
     "expect": "parameterised SQL only",
     "probes": {H: [("query", "Search {Es} by a fragment of their {f} that the user types in."),
                    ("review", "Quick sanity check on this before I deploy it:\n\n{code}"),
                    ("job", "Purge {Es} older than two years every Sunday night.")]}},
    # ---- preferences: the project's libraries, tools and patterns ------------------------------------------------
    {"key": "ruff", "kind": "preference", "scope": ("ci", "review", "concept"), "style": {"ruff": True},
     "say": {H: ["We're standardising on ruff for both linting and formatting, so leave black and flake8 out of it.",
                 "I prefer ruff to the usual pile of linters; one tool, one config."]},
     "why": {H: ["It's fast enough to run on every save."]},
     "expect": "ruff for linting and formatting (no black, no flake8)",
     "probes": {H: [("ci", "Could the pipeline also catch style problems before anyone reviews?"),
                    ("concept", "Which pre-commit hooks are worth having?")]}},
    {"key": "uv", "kind": "preference", "scope": ("ci", "deploy"), "style": {"uv": True},
     "say": {H: ["I'd rather manage the environment and dependencies with uv than with pip and venv.",
                 "For packaging and installs we use uv; please write commands for that, not pip."]},
     "why": {H: ["The lock file alone is worth it."]},
     "expect": "uv for environments, installs and running (uv sync, uv run)",
     "probes": {H: [("deploy", "How do I get the app installed on a clean server?"),
                    ("ci", "The tests should run on every merge request; can you write the workflow?")]},
     "revision": {"say": {H: ["We're switching to Poetry after all, because every other repo at work has it.",
                              "Change of tooling: Poetry it is, to match the rest of the company."]},
                  "style": {"uv": False, "poetry": True},
                  "expect": "Poetry for dependencies and running (poetry install, poetry run)",
                  "probes": {H: [("deploy", "How do I get the app installed on a clean server?"),
                                 ("ci", "The tests should run on every merge request; can you write the "
                                        "workflow?")]}}},
    {"key": "typer", "kind": "preference", "scope": ("cli", "export"), "style": {"typer": True},
     "say": {H: ["For command-line tools I like Typer; argparse boilerplate drives me up the wall.",
                 "CLIs in this project should be built with Typer."]},
     "why": {H: ["The help texts come for free."]},
     "expect": "command-line tools written with Typer",
     "probes": {H: [("cli", "The support staff want to look up and export {Es} from a shell; can you make that?"),
                    ("cli", "Give me a terminal command for this week's {Es}.")]},
     "revision": {"say": {H: ["On reflection, plain argparse is fine for our scripts; one dependency fewer to keep "
                              "updated.",
                              "Let's drop the third-party CLI library and go back to the standard library's "
                              "parser."]},
                  "style": {"typer": False},
                  "expect": "command-line tools with argparse",
                  "probes": {H: [("cli", "The support staff want to look up and export {Es} from a shell; can you "
                                         "make that?"),
                                 ("cli", "Give me a terminal command for this week's {Es}.")]}}},
    {"key": "pydantic", "kind": "preference", "scope": ("validation", "endpoint"), "style": {"pydantic": True},
     "say": {H: ["Validation goes through pydantic models, not hand-rolled chains of ifs.",
                 "I prefer pydantic for anything that checks input, it gives us decent error messages for free."]},
     "why": {H: []},
     "expect": "pydantic models for validation",
     "probes": {H: [("validation", "People paste all sorts into the {E} form; what should stand between that and "
                                   "the table?"),
                    ("validation", "Write the check that a new {E} has to pass before it's saved.")]}},
    {"key": "polars", "kind": "preference", "scope": ("export", "concept"), "style": {"polars": True},
     "say": {H: ["If dataframes ever come up, we use polars rather than pandas.",
                 "No pandas in this codebase, please, polars does everything we need and starts faster."]},
     "why": {H: ["pandas takes ages to import on the small box."]},
     "expect": "polars, not pandas, for tabular work",
     "probes": {H: [("export", "The board wants the {Es} as a spreadsheet every quarter; write that for me."),
                    ("concept", "How would you crunch a year of {Es} into a trend chart?")]}},
    {"key": "htmx", "kind": "preference", "scope": ("concept", "planning", "endpoint"), "style": {},
     "say": {H: ["On the front end, I'd rather stick to server-rendered templates with a bit of htmx than bring in a "
                 "JavaScript framework.",
                 "We're keeping the UI as plain HTML templates plus htmx; no React, no build step."]},
     "why": {H: ["Nobody here wants to maintain a node toolchain."]},
     "expect": "server-rendered templates with htmx, no single-page framework",
     "probes": {H: [("concept", "The {Es} list should update without reloading the page; how would you do it?"),
                    ("planning", "How should we approach the admin screens?")]}},
    {"key": "enums", "kind": "preference", "scope": ("model", "schema", "validation"), "style": {},
     "say": {H: ["Status-like fields should be Enums, not bare strings scattered through the code.",
                 "I like enums for anything with a fixed set of values: states, categories, that kind of thing."]},
     "why": {H: []},
     "expect": "Enum types for fixed sets of values",
     "probes": {H: [("model", "Now that {Es} can be draft, confirmed or cancelled, how should the class reflect that?"),
                    ("schema", "Add a column recording whether a {E} is pending, active or closed.")]}},
    {"key": "hypothesis", "kind": "preference", "scope": ("tests", "validation"), "style": {},
     "say": {H: ["I'm a big fan of property-based tests with Hypothesis for anything that parses input, so lean on "
                 "that.",
                 "By default, reach for Hypothesis properties over a handful of hand-picked examples where it "
                 "fits."]},
     "why": {H: ["They found two bugs in the importer that nobody would have guessed."]},
     "expect": "property-based tests with Hypothesis where input is parsed",
     "probes": {H: [("tests", "How would you test the {E} validator thoroughly?"),
                    ("tests", "The date parsing for imported {Es} needs tests; what would you write?")]}},
    {"key": "real_db", "kind": "preference", "scope": ("tests",), "style": {},
     "say": {H: ["Don't mock the database in tests; each test should get a real, throwaway one instead.",
                 "I'd rather tests ran against an actual temporary database than a mocked connection."]},
     "why": {H: ["Mocks let a broken query through twice last month."]},
     "expect": "tests against a real temporary database, no mocked connection",
     "probes": {H: [("tests", "Please cover {Es}_since before we touch it."),
                    ("tests", "What would protect the {E} import from regressions?")]}},
    {"key": "small_funcs", "kind": "preference", "scope": PY_KINDS, "style": {"short_funcs": True},
     "say": {H: ["I like functions short; if one grows past thirty lines, split it.",
                 "Keep functions small and single-purpose, long ones are where our bugs have lived."]},
     "why": {H: []},
     "expect": "short, single-purpose functions",
     "probes": {H: [("endpoint", "Write the {fw} routes for creating and listing {Es}."),
                    ("job", "We need old {Es} archived every night automatically.")]}},
    # ---- constraints: facts of the project ---------------------------------------------------------------------
    {"key": "secrets", "kind": "constraint", "scope": ("config", "auth", "retry", "deploy"), "style": {},
     "say": {H: ["Secrets stay out of the repository: credentials come from the environment or the vault, never from "
                 "code or config files.",
                 "Nothing secret in the code or in example configs, ever; API keys and passwords are read from "
                 "environment variables."]},
     "why": {H: ["An old token leaked through a public fork once."]},
     "expect": "credentials from the environment or a vault, never hard-coded or in config files",
     "probes": {H: [("config", "Where should the partner's access token and the database password go?"),
                    ("auth", "How do we hand out and verify keys for the two partner companies?"),
                    ("deploy", "Walk me through getting the app onto the new box.")]}},
    {"key": "db_mariadb", "kind": "constraint", "scope": ("schema", "query", "debug"),
     "style": {"dialect": "mysql", "mariadb": True}, "default": {"dialect": "postgres"},
     "say": {H: ["The hosting package only comes with MariaDB 10.6, so that's our database, full stop.",
                 "Production data lives in MariaDB, which is what the university's IT department runs for us."]},
     "why": {H: ["Nobody is going to give us a Postgres."]},
     "expect": "MariaDB/MySQL SQL and types (AUTO_INCREMENT, DATETIME, %s parameters)",
     "probes": {H: [("schema", "What should the DDL for {Es} look like, indexes included?"),
                    ("query", "Write the fetch for the twenty newest {Es}.")]}},
    {"key": "no_docker", "kind": "constraint", "scope": ("deploy",), "style": {"no_docker": True},
     "say": {H: ["Docker isn't allowed on the client's servers, so everything has to run as a plain systemd service.",
                 ("No containers on the production host, IT only accepts systemd units", LIST_FACTS)]},
     "why": {H: []},
     "expect": "deployment as a systemd service, no Docker",
     "probes": {H: [("deploy", "How do we keep the service alive across reboots?"),
                    ("deploy", "Give me the steps to roll out a new version.")]}},
    {"key": "arm", "kind": "constraint", "scope": ("deploy", "ci"), "style": {"arm": True},
     "say": {H: ["The production machine is an ARM64 box, so whatever we build or install has to work on arm64.",
                 "Heads-up on hardware: the server is an Ampere ARM instance, not x86."]},
     "why": {H: ["It was the cheapest option by far."]},
     "expect": "builds and packages that work on arm64",
     "probes": {H: [("deploy", "What's the quickest way to get a build onto the server?"),
                    ("ci", "Can the pipeline also produce the image we ship?")]}},
    {"key": "spdx", "kind": "constraint", "scope": "code", "style": {"spdx": "Apache-2.0"},
     "say": {H: ["Every source file we publish has to carry the SPDX header for Apache-2.0 on its first line.",
                 "Licensing constraint: all code is released under Apache-2.0, and each file must say so in an SPDX "
                 "comment."]},
     "why": {H: ["The foundation's lawyers check every release."]},
     "expect": "an SPDX-License-Identifier header in every code file",
     "probes": {H: [("model", "Write the {C} class for one row of {T}."),
                    ("export", "Can you add the export of {Es} to CSV?"),
                    ("cli", "A small admin command for {Es} would help; can you write it?")]},
     "revision": {"say": {H: ["The board moved us to MPL-2.0, so the headers need that identifier now.",
                              "The project is switching to the Mozilla Public License, so update those file headers "
                              "accordingly."]},
                  "style": {"spdx": "MPL-2.0"},
                  "expect": "an SPDX header with MPL-2.0",
                  "probes": {H: [("model", "Write the {C} class for one row of {T}."),
                                 ("export", "Can you add the export of {Es} to CSV?"),
                                 ("cli", "A small admin command for {Es} would help; can you write it?")]}}},
    {"key": "budget", "kind": "constraint", "scope": ("deploy", "concept", "planning"),
     "style": {"small_memory": True},
     "say": {H: ["The whole hosting bill has to stay under €15 a month.",
                 "Money is tight: we have about fifteen euros a month for servers, all in."]},
     "why": {H: ["It's a charity, every euro is accounted for."]},
     "expect": "one cheap small server, nothing that needs more hosting money",
     "probes": {H: [("deploy", "How many app workers should we run in production?"),
                    ("concept", "Would a managed database service be worth it for us?"),
                    ("planning", "Should we set up a separate staging environment?")]},
     "revision": {"say": {H: ["Good news on funding: we can spend around sixty a month on hosting now.",
                              "The grant came through, so a second small server is affordable from here."]},
                  "style": {"small_memory": False},
                  "expect": "room for a second small server (about sixty a month)",
                  "probes": {H: [("deploy", "How many app workers should we run in production?"),
                                 ("concept", "Would a managed database service be worth it for us?"),
                                 ("planning", "Should we set up a separate staging environment?")]}}},
    {"key": "deadline", "kind": "constraint", "scope": ("planning",), "style": {},
     "say": {H: ["Hard deadline: the pilot goes live on 2 May, and that date can't move.",
                 "We have to be in production by the end of June, the grant money depends on it."]},
     "why": {H: []},
     "expect": "plans that fit the go-live date",
     "probes": {H: [("planning", "What can we leave out of the first version?"),
                    ("planning", "With only a few evenings a week, in what order should the remaining work go?")]},
     "revision": {"say": {H: ["The go-live has slipped to September, so we have breathing room now.",
                              "They pushed the launch back by three months, which takes the pressure off."]},
                  "style": {},
                  "expect": "plans for the later launch",
                  "probes": {H: [("planning", "What can we leave out of the first version?"),
                                 ("planning", "With only a few evenings a week, in what order should the remaining "
                                              "work go?")]}}},
    {"key": "eu_data", "kind": "constraint", "scope": ("deploy", "concept", "planning"), "style": {},
     "say": {H: ["Anything with people's data in it must stay inside the EU, no US-hosted services, not even for "
                 "sending email.",
                 ("Data residency: everything personal stays on servers in the European Union", LIST_FACTS)]},
     "why": {H: ["Our funders audit this."]},
     "expect": "EU-hosted services only for personal data",
     "probes": {H: [("concept", "Which service should send the reminder emails?"),
                    ("deploy", "Where should the nightly backups be stored?")]}},
    {"key": "pii_logs", "kind": "constraint", "scope": ("logging", "job", "endpoint", "retry", "auth"), "style": {},
     "say": {H: ["Personal data stays out of the logs: no names, emails or phone numbers in any log line.",
                 ("Logs must never contain anything that identifies a person; ids are fine, emails are not.",
                  PASTE_LOG)]},
     "why": {H: ["The data protection officer reads our logging config."]},
     "expect": "log lines with ids only, no personal data",
     "probes": {H: [("logging", "Support wants to trace what happened to a given {E}; what should we record?"),
                    ("endpoint", "When someone signs up through the API, what should the code keep track of?")]}},
    {"key": "py310", "kind": "constraint", "scope": (*PY_KINDS, "deploy", "ci"), "style": {"py": "3.10"},
     "say": {H: ["The servers run Python 3.10 and we can't upgrade them this year.",
                 "We're pinned to Python 3.10 by the managed platform, so nothing newer."]},
     "why": {H: []},
     "expect": "code, images and CI for Python 3.10",
     "probes": {H: [("ci", "Set up CI so the test suite runs on each push."),
                    ("deploy", "What does the production set-up for {P} need?"),
                    ("model", "Write the dataclass for a {E}, with a constructor from a row.")]},
     "revision": {"say": {H: ["IT finally rolled the servers forward to 3.13, so recent syntax is fair game.",
                              "Upgrade done: production is on 3.13 now."]},
                  "style": {"py": "3.13"},
                  "expect": "Python 3.13 allowed",
                  "probes": {H: [("ci", "Set up CI so the test suite runs on each push."),
                                 ("deploy", "What does the production set-up for {P} need?"),
                                 ("model", "Write the dataclass for a {E}, with a constructor from a row.")]}}},
    {"key": "json_logs", "kind": "constraint", "scope": ("logging", "job", "config"), "style": {"json_logs": True},
     "say": {H: ["Logs must go to stderr as one JSON object per line; the collector on the server parses nothing "
                 "else.",
                 "Whatever logging we set up, the output has to be JSON lines on standard error."]},
     "why": {H: []},
     "expect": "JSON-lines logs on stderr",
     "probes": {H: [("logging", "What's the right way to configure logging in production?"),
                    ("config", "Can you write the settings loader, including the log level?")]}},
]

ITEM = {it["key"]: it for it in ITEMS}
EXCLUSIVE = [{"code_first", "assume"}]
"""Never in one chat: both want the top of the answer."""
SOON = {"german"}
REVOKED = ["german", "brief", "numbered", "german", "path_header", "assume", "german", "iso_dates"]
"""The item each chat takes back (by chat index)."""

# ---- traps --------------------------------------------------------------------------------------------------

TRAPS: dict[str, dict[str, list[str]]] = {
    "chit_chat": {H: [
        "I always burn the first pancake, every single weekend.",
        "My partner never lets me choose the music in the car.",
        "I'd rather be at the climbing wall right now, to be honest.",
        "Forget I asked, the typo was mine.",
        "From now on I'm leaving my phone in the other room when I work, we'll see how long that lasts.",
        "You must think I never sleep, with these late sessions.",
        "Don't remind me about the tax return I still haven't filed.",
        "I prefer mornings for this kind of work, my brain is useless after four.",
        "Going forward I'm going to try the Pomodoro thing again.",
        "My dog always barks at the postman at exactly this time.",
        "Please tell me it's nearly Friday.",
        "I must remember to renew my passport.",
        "Always something, isn't it.",
        "I never thought I'd enjoy writing SQL this much.",
        "Wish me luck, I'm presenting this to the committee at three.",
        "I'd rather not talk about last night's football.",
        "Don't laugh, but I still print out code to read it on paper.",
        "My neighbour must be renovating again, there's drilling all day.",
        "Every evening I promise myself to stop at six, and I never do.",
        "Make sure you never get a cat, they sit on keyboards.",
    ]},
    "one_off": {H: [
        "Just for this one, leave out the talking and hand me the snippet.",
        "This time only, no commentary, I'm between meetings.",
        "For now a print statement is fine, I just want to eyeball the output.",
        "Only this once: paste the bare code, I'll read it on the train.",
        "Dump the intermediate values with print this once, it's only a scratch cell.",
        "For this answer only, go into as much depth as you like.",
        "Skip the tests this time, I only need the function itself.",
        "Just for today, keep it short, I have ten minutes.",
    ]},
    "question": {H: [
        "Should every table have created_at and updated_at columns, always?",
        "Is it bad practice to never use an ORM?",
        "Do people still always write docstrings for private helpers?",
        "Would you ever deploy straight to production on a Friday?",
        "Must we really pin every single dependency?",
        "Should I prefer composition over inheritance here, or is that dogma?",
        "Is it true you should never return None from a function that returns a list?",
        "Should we always run the linter in CI, or is the pre-commit hook enough?",
    ]},
    "quoted": {H: [
        "The old wiki page literally says \"always restart the server after lunch\", no explanation given.",
        "flake8 keeps flagging \"E722 do not use bare except\" in the old importer.",
        "Jana's sticky note on the shared monitor says \"never push straight to main\".",
        "The vendor's README insists: \"You must call init() before anything else.\"",
        "My old team lead used to say \"always leave the campsite cleaner than you found it\".",
        "The ticket literally reads \"please make the button bigger, always\", which is not a spec.",
        "The provider's docs say \"do not run more than two workers on the starter plan\".",
        "A comment in the legacy code says \"# never change this, it works\" above a 200-line function.",
    ]},
    "third_party": {H: [
        "Could you draft a short note for the new volunteer telling them to always log out of the shared laptop?",
        "I told the intern she must never run migrations by hand, hopefully it sticks.",
        "I'll ask Marek to always tag his releases from now on.",
        "Please write the onboarding checklist line that says new staff should never share passwords.",
        "The students helping us have been asked to always write their commit messages in English.",
        "I've asked Ines to keep her pull requests under 300 lines going forward.",
        "Our contractor has been told to use tabs in his own repo, which is his business.",
    ]},
    "hypothetical": {H: [
        "If we ever move to Kubernetes, we'd never run the database inside the cluster.",
        "Should the project ever go commercial, we'd have to use a proper payment provider.",
        "If I had more time, I'd do proper TDD on everything.",
        "Were we to open-source this, we'd need a code of conduct and all that.",
        "If the client ever asks for a mobile app, I'd rather quit than build it in React Native, ha.",
        "Suppose we had a real budget, I'd prefer a managed Postgres without a second thought.",
        "If the volunteers ever outnumber the shifts, we'll have to rethink everything.",
    ]},
    "assistant": {H: [
        "My advice would be to always version the API from the very first release.",
        "As a habit, never run a migration without a backup taken the same day.",
        "I'd suggest you always add an index when you add a foreign key.",
        "Going forward, it's worth keeping a changelog entry for every user-visible change.",
        "In general you should prefer explicit column lists over SELECT * in application code.",
        "I'd recommend never storing uploaded files inside the database.",
        "It's good practice to always set a timeout on outbound HTTP calls.",
        "You'll want to make sure a backup is actually restored as a test at least once a month.",
    ]},
}
TRAP_COUNTS: dict[str, int | tuple[int, int]] = {"chit_chat": (4, 5), "one_off": 2, "question": 2, "quoted": 2,
                                                 "third_party": (1, 2), "hypothetical": (1, 2)}
SUGGESTIONS_PER_CHAT = 3

ONE_OFF_EFFECT = {  # what the reply does for that message only (none: the request itself is what changes)
    "Just for this one, leave out the talking and hand me the snippet.": "code_only",
    "This time only, no commentary, I'm between meetings.": "code_only",
    "Only this once: paste the bare code, I'll read it on the train.": "code_only",
    "For now a print statement is fine, I just want to eyeball the output.": "print",
    "Dump the intermediate values with print this once, it's only a scratch cell.": "print",
    "For this answer only, go into as much depth as you like.": "long",
    "Just for today, keep it short, I have ten minutes.": "short",
}

QUESTION_ANSWER = {
    "Should every table have created_at and updated_at columns, always?":
        "On timestamp columns: created_at is nearly free and almost always worth it; updated_at only earns its keep "
        "if something keeps it current (a trigger or a single write path), otherwise it quietly lies.",
    "Is it bad practice to never use an ORM?":
        "On ORMs: no. Plenty of solid projects use plain SQL; you write the mapping yourself and in exchange you see "
        "every query. What matters is keeping the SQL in one place.",
    "Do people still always write docstrings for private helpers?":
        "On docstrings for private helpers: many teams skip them when the name says it all; one pays off when the "
        "helper has a contract that isn't obvious, such as what it does with None.",
    "Would you ever deploy straight to production on a Friday?":
        "On Friday deploys: when the deploy is automated and rolling back is one command, the weekday matters less "
        "than whether someone is around for the next few hours.",
    "Must we really pin every single dependency?":
        "On pinning: for the deployed app a lock file gives reproducible installs; the direct dependencies can keep "
        "loose ranges in pyproject.toml.",
    "Should I prefer composition over inheritance here, or is that dogma?":
        "On composition: here the subclass only reuses two methods, so passing the helper in is simpler; inheritance "
        "earns its place when the subclass really is a kind of its parent.",
    "Is it true you should never return None from a function that returns a list?":
        "On returning None: an empty list is usually kinder, callers can loop without a check; None makes sense "
        "only when 'no answer' means something different from 'an empty answer'.",
    "Should we always run the linter in CI, or is the pre-commit hook enough?":
        "On linting in CI: hooks can be skipped or never installed, so CI is the backstop; running it in both "
        "places costs little.",
}

# ---- the user's side of the talk ------------------------------------------------------------------------------

ASKS: dict[str, list[str]] = {
    "schema": ["What columns would you give a {T} table? At minimum we track {f}, {n} and the {d_h} date.",
               "Time to give {Es} their own table in {P}. How would you lay it out?",
               "Could you draft the CREATE TABLE for {Es}? I'm unsure about keys and indexes."],
    "model": ["I'm tired of passing raw rows around; can we get a {C} type for {Es}?",
              "Sketch me the Python class behind one {E}.",
              "How would you represent a {E} in code so the rest of {P} can use it?"],
    "query": ["I need the {Es} newer than some cut-off date, latest first, capped at a number I pass in.",
              "Can you write the function behind the 'recent {Es}' list?",
              "What's the query for pulling {Es} since a given {d_h} date?"],
    "endpoint": ["The web front end needs to list and add {Es}; can you sketch the {fw} routes?",
                 "Could you wire {Es} into the API, reading and creating?",
                 "What would a minimal {fw} API for {Es} look like?"],
    "tests": ["The {Es}_since function has no tests at all yet; could you add some?",
              "Before {mate} starts refactoring, I'd like the {E} lookup covered by tests.",
              "How would you test the date cut-off in the {Es} query?"],
    "export": ["The treasurer asked for every {E} in a CSV; can you write that?",
               "We need to hand {Es} over as a spreadsheet file. What's the simplest export?",
               "Can you write something that dumps the {T} table to a file people can open in Excel?"],
    "validation": ["Half the {Es} that come in through the form are missing fields. What should check them before "
                   "saving?",
                   "Can you write the checks a {E} must pass on the way in?",
                   "How would you validate a {E} coming in from the form?"],
    "retry": ["The upstream service we pull from drops connections every so often. Can you write a fetch that "
              "survives that?",
              "How do we call the partner's API without one timeout wrecking the whole sync?",
              "Write me a robust GET helper for the external feed; it flakes a few times a day."],
    "config": ["Settings are scattered through {P} as constants. What's a cleaner setup?",
               "Can you write something that reads our settings from the environment?",
               "Where should things like the database URL and page size live?"],
    "logging": ["Right now we debug {P} by squinting at the console. How should logging be set up?",
                "Can you write the logging configuration for the app?",
                "How do we get log files that don't fill the disk?"],
    "cache": ["The dashboard recounts {Es} on every request and it's getting slow. Can we cache that?",
              "Is a small in-process cache enough for the {E} totals?",
              "Could you write a cache for the per-day {E} counts?"],
    "cli": ["Could we get a command-line tool for listing and exporting {Es}?",
            "What would a CLI for the {E} admin bits look like?",
            "Can you sketch a CLI with subcommands for {Es}?"],
    "job": ["Old {Es} should move to an archive table every night. How would you write that?",
            "Can you write a background task that tidies up stale {Es}?",
            "What's the simplest way to archive {Es} older than a year automatically?"],
    "auth": ["A partner wants to call our API. How should we issue and check keys?",
             "Could you write helpers for creating and verifying API keys?",
             "What's a sensible way to protect the {Es} endpoints with keys?"],
    "debug": ["Got this when I ran it this morning:\n\n{tb}", "Can you make sense of this?\n\n{tb}",
              "{mate} hit this on the staging box:\n\n{tb}", "This one has me stumped:\n\n{tb}"],
    "review": ["Would you look this over before I merge it?\n\n{code}",
               "{mate} sent me this for review and I have doubts:\n\n{code}", "Anything wrong with this?\n\n{code}"],
    "deploy": ["How do we get {P} running on the server?",
               "What does a deployment of the app look like, start to finish?",
               "I need to put this on the production machine next week; where do I begin?"],
    "ci": ["Could you set up a pipeline that runs the tests automatically?",
           "What should our GitHub Actions workflow contain?", "How do I get the tests running on every pull request?"],
    "concept": ["Conceptual one: should the {Es} totals be stored or computed each time?",
                "When do I actually need an explicit transaction?",
                "Do we need a queue for the background work, or is a table enough?",
                "Threads or processes for the import job, and why?"],
    "planning": ["What do you think we should do next?", "Can you help me plan the next fortnight?",
                 "What's missing before we can call this a first release?",
                 "I have to brief {mate}'s manager on progress. How would you structure it?"],
}
GREETINGS = ["Hi there.", "Hi, me again.", "Okay, next session.", "Hello again!", "Short one today.",
             "Right, picking up where we left off.", "Hey.", "Back at the keyboard."]
FEEDBACK = ["That did the trick.", "Ran it last night, all green.", "Your fix worked first time.",
            "{mate} merged it after one small tweak.", "It's live, nobody has complained yet.",
            "I had to adapt it a bit, but it's in.", "Good call on that last point.",
            "Finally got round to trying it; works.", "That cleared it up.", "The numbers match now."]
SMALL_TALK = ["Snow again here.", "The coffee machine is broken, so bear with me.",
              "Half the team is at a conference.", "My kid is home sick today.",
              "The radiator in here is clanking like mad.", "Just got back from a walk.",
              "It's been a week of meetings.", "The wifi in this café is heroic.",
              "Spring seems to have arrived at last.", "We moved desks yesterday and I can't find anything.",
              "Quiet day, for once."]
CONTEXT = ["{mate} says the {Es} screen crawls when it's busy.", "We think there'll be a couple of thousand {Es} by "
           "autumn.", "The pilot users get access in a few weeks.", "{mate} will look after this part once it's "
           "running.", "Last week a bogus {n} got saved and nobody noticed for days.",
           "This bit has been patched a lot and it shows.", "{mate} is reviewing anything we change here.",
           "It works, but I wouldn't call it pretty.", "I had a go myself but got tangled up.",
           "Only the three of us use the {Es} part for now.", "Hoping to ship this before the end of the week.",
           "The spreadsheet we're replacing did all of this, badly."]
REVIEW_CODE = """def fetch_{Es}(db, start):
    out = []
    for row in db.execute("SELECT * FROM {T} WHERE {d} >= '" + str(start) + "'"):
        r = dict(row)
        if r["{n}"] == None:
            continue
        out.append(r)
    try:
        open("/tmp/{Es}.json", "w").write(str(out))
    except:
        print("could not save")
    return out"""

# ---- the assistant's side: acknowledgements, assumptions, German ---------------------------------------------------

ACKS = ["Understood; I'll keep to that from now on.", "Noted for everything that follows.", "Will do.",
        "Got it, that's how I'll answer from here.", "Fine by me, noted."]
ACK_REVISE = ["Understood, the new version replaces the old one.", "Noted, switching over.", "OK, updated."]
ACK_STATED = {"german": "Alles klar, ab jetzt antworte ich auf Deutsch."}
ASSUMPTIONS = ["Assumption: {Es} only ever enter through {P} itself, never by hand in the database.",
               "Assuming {n} can't be negative and {d} is always filled in; tell me if either is wrong.",
               "I'm assuming a single server and a single database here, as far as I know your setup.",
               "Assumption: {mate} and you are the only ones changing this code, so nothing else needs to be "
               "coordinated."]
ASSUMPTIONS_DE = ["Annahme: {Es} kommen nur über {P} in die Datenbank, nie von Hand.",
                  "Ich gehe davon aus, dass {n} nie negativ ist und {d} immer gesetzt ist."]
GERMAN: dict[str, Any] = {
    "intro": ["Hier ist ein Vorschlag für die {Es}, mit ein paar Erläuterungen.",
              "Gut, dann auf Deutsch. So würde ich das für {P} angehen.",
              "Gute Frage. Hier eine einfache Lösung für die {Es}.",
              "Hier ist der Code, danach ein paar Anmerkungen."],
    "body": ["Wichtig ist, dass genau eine Funktion für den Datenzugriff zuständig ist. Ändert sich die Abfrage "
             "irgendwann, gibt es nur eine Stelle, die man anpassen muss, und die Tests decken sie ab.",
             "Die Parameter der Abfrage bleiben vom SQL-Text getrennt. Das ist sicherer, und der Datenbanktreiber "
             "kümmert sich selbst um Datumswerte und Anführungszeichen.",
             "Das Standardlimit verhindert, dass ein vergessener Aufruf die ganze Tabelle zurückgibt. Mit der Zeit "
             "sammeln sich die {Es} an, und eine Abfrage ohne Limit wird früher oder später langsam.",
             "Für die Tests nehme ich eine echte temporäre Datenbank statt einer Attrappe des Treibers: So prüfen "
             "wir, dass das SQL gültig ist und wirklich liefert, was wir erwarten.",
             "Beträge bleiben in der Datenbank ganzzahlig in Cent. Umgerechnet wird erst bei der Anzeige; das "
             "vermeidet Rundungsfehler in den Summen.",
             "Außerdem würde ich die Zahl der verarbeiteten Zeilen protokollieren: Das ist das Erste, was man wissen "
             "will, wenn eine Zahl merkwürdig aussieht."],
    "close": ["Sag Bescheid, wenn etwas nicht wie erwartet funktioniert.", "Bei Fragen einfach melden.",
              "Ich kann jeden Teil gern genauer erklären."],
    "tldr": ["Kurz gesagt: eine einfache Funktion, Parameter und ein Standardlimit."],
    "next": ["auf einer Kopie der Daten testen", "einen Test ergänzen", "mit {mate} durchsehen"],
    "next_label": "Nächste Schritte:",
}
