"""The third blind split of the standing-instruction data, the test split: its items, traps and the user's side of the
talk, for :mod:`.make_standing` ``--blind2`` (``data/standing_blind2.json``).

The held-out split (:mod:`.standing_holdout_items`) and the second blind split (:mod:`.standing_blind_items`) have
both been used while the recogniser was tuned, so neither measures it honestly any more. Everything here was written
without reading the recogniser, its tests, its training sentences or its results, and nobody tunes on it: new
projects and people, new instructions, preferences and project constraints (paraphrasing none of
:mod:`.standing_items`, :mod:`.standing_holdout_items` or :mod:`.standing_blind_items`), new revisions, revocations
and traps, and a new user side of the conversation (greetings, feedback, small talk, context, the requests, the
pasted code). The assistant's acknowledgements are new too, and the language the user switches to for a while is
Italian (:data:`ITALIAN` has the reply prose). Only the assistant's explanations are shared with the other splits
(:mod:`.standing_prose`): the recogniser never reads them.

The shapes are :mod:`.standing_blind_items`'s, keyed by the split ``"blind2"``: a wording can be ``(sentence,
frame)`` (the text around the sentence in its message: a list it is one entry of, or a pasted snippet it follows);
a ``revoke`` has its own acknowledgements; :data:`SOON` are revoked a few exchanges after they are stated; traps
include ``third_party`` and ``hypothetical``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .standing_code import Entity as E
from .standing_items import PY_KINDS

B = "blind2"

# ---- the projects, people and dates -------------------------------------------------------------------------

PROJECTS: list[dict[str, Any]] = [
    {"key": "birdcount", "title": "the data portal for a citizen-science garden bird count", "P": "the bird portal",
     "fw": "fastapi", "py": "3.12",
     "entities": [E("sighting", "sightings", "Sighting", (("species", "str"), ("bird_count", "int"),
                                                          ("seen_at", "date"))),
                  E("volunteer", "volunteers", "Volunteer", (("volunteer_name", "str"), ("surveys_done", "int"),
                                                             ("signed_up_on", "date"))),
                  E("survey", "surveys", "Survey", (("square_ref", "str"), ("minutes_spent", "int"),
                                                    ("surveyed_on", "date")))]},
    {"key": "photostudio", "title": "the booking and delivery system for a wedding-photography studio",
     "P": "the studio system", "fw": "flask", "py": "3.12",
     "entities": [E("shoot", "shoots", "Shoot", (("venue_name", "str"), ("hours_booked", "int"),
                                                 ("shoot_date", "date"))),
                  E("gallery", "galleries", "Gallery", (("gallery_slug", "str"), ("photo_count", "int"),
                                                        ("delivered_on", "date"))),
                  E("package", "packages", "Package", (("package_name", "str"), ("price_cents", "money"),
                                                       ("offered_since", "date")))]},
    {"key": "brewery", "title": "stock control for a small brewery's casks and kegs", "P": "the stock app",
     "fw": "fastapi", "py": "3.11",
     "entities": [E("cask", "casks", "Cask", (("cask_code", "str"), ("litres", "int"), ("filled_on", "date"))),
                  E("brew", "brews", "Brew", (("recipe_name", "str"), ("batch_litres", "int"), ("brewed_on", "date"))),
                  E("delivery", "deliveries", "Delivery", (("pub_name", "str"), ("invoice_cents", "money"),
                                                           ("delivered_at", "date")))]},
    {"key": "cycling", "title": "the ride calendar for our cycling club", "P": "the ride calendar",
     "fw": "flask", "py": "3.11",
     "entities": [E("ride", "rides", "Ride", (("start_point", "str"), ("distance_km", "int"), ("departs_at", "date"))),
                  E("rider", "riders", "Rider", (("nickname", "str"), ("rides_done", "int"), ("joined_on", "date"))),
                  E("route", "routes", "Route", (("route_name", "str"), ("climb_m", "int"), ("mapped_on", "date")))]},
    {"key": "piano", "title": "a customer and visit log for a piano-tuning business", "P": "the tuning log",
     "fw": "fastapi", "py": "3.12",
     "entities": [E("piano", "pianos", "Piano", (("maker", "str"), ("year_built", "int"), ("last_tuned_on", "date"))),
                  E("visit", "visits", "Visit", (("street", "str"), ("fee_cents", "money"), ("visited_at", "date"))),
                  E("customer", "customers", "Customer", (("customer_phone", "str"), ("pianos_owned", "int"),
                                                          ("first_booked_on", "date")))]},
    {"key": "hut", "title": "the reservation system for an alpine club's mountain hut", "P": "the hut bookings",
     "fw": "flask", "py": "3.12",
     "entities": [E("reservation", "reservations", "Reservation", (("party_leader", "str"), ("beds", "int"),
                                                                   ("arrives_on", "date"))),
                  E("bunkroom", "bunkrooms", "Bunkroom", (("room_label", "str"), ("bunk_count", "int"),
                                                          ("inspected_on", "date"))),
                  E("payment", "payments", "Payment", (("payer_email", "str"), ("paid_cents", "money"),
                                                       ("paid_at", "date")))]},
    {"key": "lostproperty", "title": "the lost-property register for a city tram network",
     "P": "the lost-property register", "fw": "fastapi", "py": "3.12",
     "entities": [E("find", "finds", "Find", (("description", "str"), ("tram_number", "int"),
                                                       ("found_at", "date"))),
                  E("claim", "claims", "Claim", (("claimant_name", "str"), ("days_waiting", "int"),
                                                 ("claimed_at", "date"))),
                  E("depot", "depots", "Depot", (("depot_name", "str"), ("shelf_count", "int"),
                                                 ("opened_on", "date")))]},
    {"key": "repaircafe", "title": "the fix log for a neighbourhood repair café", "P": "the fix log",
     "fw": "flask", "py": "3.11",
     "entities": [E("gadget", "gadgets", "Gadget", (("gadget_type", "str"), ("age_years", "int"),
                                                             ("brought_in_on", "date"))),
                  E("fixer", "fixers", "Fixer", (("speciality", "str"), ("sessions_helped", "int"),
                                                 ("first_came_on", "date"))),
                  E("spare", "spares", "Spare", (("part_number", "str"), ("cost_cents", "money"),
                                                 ("ordered_on", "date")))]},
]
USERS = ["Siobhán", "Rahul", "Tamsin", "Kofi", "Élodie", "Mikkel", "Zainab", "Teodor"]
MATES = ["Hamid", "Lotte", "Quinn", "Nadia"]
START = dt.datetime(2025, 10, 6, 9, 30)
OPENING = ["I've inherited {title} from someone who moved away, and I'll be picking your brain a lot this autumn.",
           "Background: {title} is mine to build, evenings and weekends, and the current 'system' is a shoebox "
           "of paper forms.",
           "ok so. {title}. I said yes before thinking, as usual, so you'll be seeing a lot of me"]

# ---- items ----------------------------------------------------------------------------------------------------

LIST_ROTA = ("Bits from the volunteers' meeting, so you have them too:\n- {mate} now looks after the spare laptop\n"
             "- {s}\n- the next get-together is the first Thursday of the month")
LIST_DECIDED = ("What we settled on the call this morning:\n1. {mate} renews the domain before it lapses\n2. {s}\n"
                "3. no more spreadsheets going round by email")
LIST_TODO = ("My notes from the chat with the treasurer, pasting them as they are:\n- {s}\n- receipts go in the "
             "shared folder\n- {mate} wants a demo before Christmas")
PASTE_LAMBDA = ("Spotted this in the importer and had to read it four times:\n\n```\nrows = sorted(filter(lambda r: "
                "r[3] and not r[7], data), key=lambda r: (r[1], -r[4]))\n```\n\n{s}")
PASTE_MAGIC = ("From the pricing code, for your amusement:\n\n```\nif age < 16 and n > 12:\n    total = total * 0.85 "
               "- 250\n```\n\n{s}")
PASTE_CRON = ("This is what the old machine's crontab had in it:\n\n```\n*/5 * * * * /usr/bin/php "
              "/home/club/sync.php\n30 2 * * * /home/club/backup.sh\n```\n\n{s}")

ITEMS: list[dict[str, Any]] = [
    # ---- instructions: how to answer, how to write the code -----------------------------------------------------
    {"key": "italian", "kind": "instruction", "scope": "answer", "style": {"italian": True},
     "say": {B: ["Would you mind replying in Italian for the next little while? My partner's family is from Bologna "
                 "and I'm hopeless at it.",
                 "Rispondimi in italiano, per favore: that's roughly the limit of what I can say, so I could do "
                 "with the practice. Leave the code as it is.",
                 "can u answer in italian for a bit? trying to get ready for a trip to Turin"]},
     "why": {B: ["New words stick far better when the topic is one I already know."]},
     "expect": "answers in Italian (until revoked)",
     "probes": {B: []},
     "revoke": {"say": {B: ["I've had my fill of Italian for now, can we have English back?",
                            "Can we do English again? I read these between meetings and speed matters this "
                            "week.",
                            "basta, my head hurts, can we do English again"]},
                "style": {"italian": False},
                "ack": ["Switching languages: this reply and the rest are in English.",
                        "Grazie for practising with me! Replies are in English again."]}},
    {"key": "casual", "kind": "instruction", "scope": "answer", "style": {},
     "say": {B: ["Talk to me like a colleague rather than a manual: contractions, the occasional joke, no corporate "
                 "tone.",
                 "I'd rather you kept it informal with me, the stiff textbook voice makes my eyes glaze over."]},
     "why": {B: ["It's a hobby project, it should feel like one."]},
     "expect": "an informal, conversational tone",
     "probes": {B: [("concept", "What actually happens inside {db} when two people save the same {E} at once?"),
                    ("planning", "I have to explain to {mate} what we've built so far; help me put it into words."),
                    ("deploy", "How scary is moving {P} to a new server, honestly?")]},
     "revoke": {"say": {B: ["Could you go back to a neutral tone? I'm starting to paste your answers into the official "
                            "handbook.",
                            "Let's keep things more formal again, some of this ends up in reports for the trustees."]},
                "style": {},
                "ack": ["Fair — I'll keep the tone neutral.", "Right, I'll write in a more formal register."]}},
    {"key": "bold_key", "kind": "instruction", "scope": "answer", "style": {},
     "say": {B: ["Put the single most important takeaway of each answer in bold so I can spot it when I scroll back.",
                 "please bold the key sentence in every reply, it's the bit I'll search for later"]},
     "why": {B: ["I go back through old answers a lot and only need the gist."]},
     "expect": "the key takeaway of each answer in bold",
     "probes": {B: [("concept", "Is an index on {f} worth adding now, or is that premature?"),
                    ("planning", "What's the one thing in {P} that most needs fixing before summer?"),
                    ("review", "{mate} wrote this for the {Es} page; anything worrying?\n\n{code}")]},
     "revoke": {"say": {B: ["You can stop the bold highlighting, it's turning into a sea of bold.",
                            "No more emphasising the main line, thanks, it breaks in our wiki export."]},
                "style": {},
                "ack": ["Fine — nothing in bold from me.", "Easy, I'll leave the emphasis out."]}},
    {"key": "headings", "kind": "instruction", "scope": ("concept", "planning", "deploy", "review"), "style": {},
     "say": {B: ["If an answer covers more than one topic, split it into sections with short headings.",
                 "For longer replies I'd like markdown headings, the ## kind, so I can jump between parts."]},
     "why": {B: ["I keep these answers in a notes app that builds a table of contents from headings."]},
     "expect": "sections with short headings in multi-part answers",
     "probes": {B: [("deploy", "What does a first production setup for {P} involve, end to end?"),
                    ("planning", "Help me scope the next release of {P}, features and chores both."),
                    ("concept", "How should {P} deal with time zones, from storage through to display?")]},
     "revoke": {"say": {B: ["Drop the section titles, they make short answers look like forms.",
                            "Headings aren't needed anymore, just write it as flowing text."]},
                "style": {},
                "ack": ["Headings gone.", "Right, continuous prose from me."]}},
    {"key": "line_numbers", "kind": "instruction", "scope": ("review", "debug"), "style": {},
     "say": {B: ["When you comment on code I've pasted, refer to the line numbers so I can find the spot quickly.",
                 "could you point at lines by number when you critique my snippets? 'line 4: ...' style"]},
     "why": {B: ["I review on paper sometimes, believe it or not."]},
     "expect": "comments on pasted code refer to line numbers",
     "probes": {B: [("review", "Be honest about this bit before {mate} merges it:\n\n{code}"),
                    ("review", "Found this on an old branch; is it salvageable?\n\n{code}"),
                    ("debug", "The import crashed on the very first {E} with this:\n\n{tb}")]},
     "revoke": {"say": {B: ["You don't need to cite line numbers any more, my editor jumps to the function anyway.",
                            "Skip the 'line N' references, they go out of date as soon as I edit."]},
                "style": {},
                "ack": ["Fine, I'll point at functions instead.", "No line references, then."]}},
    {"key": "io_examples", "kind": "instruction", "scope": ("query", "validation", "export", "cache", "model"),
     "style": {},
     "say": {B: ["For every function you hand me, show one example call and what it returns, as a comment or a "
                 "doctest.",
                 "I'd like a sample input and the output it produces under each helper you write."]},
     "why": {B: ["Seeing a concrete call tells me more than the signature does."]},
     "expect": "an example call with its result for each function",
     "probes": {B: [("validation", "How do we reject a {E} whose {n} makes no sense?"),
                    ("query", "Find the {Es} nobody has updated since the same date last year."),
                    ("export", "Turn the list of {Es} into something the chair can open in a spreadsheet.")]},
     "revoke": {"say": {B: ["The example calls under each function can go now, the tests cover that.",
                            "Stop adding sample inputs and outputs please, it doubles the length of everything."]},
                "style": {},
                "ack": ["Right, functions without the worked examples.", "Easy enough, I'll omit them."]}},
    {"key": "explain_junior", "kind": "instruction", "scope": "answer", "style": {},
     "say": {B: ["I'm fairly new to Python, so explain any idiom beyond the basics the first time you use it.",
                 "Pitch your explanations at a junior developer; I know loops and functions but decorators and "
                 "context managers still confuse me."]},
     "why": {B: ["I taught myself from a library book two years ago."]},
     "expect": "explanations pitched at a beginner, idioms explained",
     "probes": {B: [("cache", "Could we remember the {E} totals between requests instead of recomputing them?"),
                    ("retry", "Give the call to the mapping service a second chance when it times out."),
                    ("concept", "What is a with-block actually buying us around the database connection?")]},
     "revision": {"say": {B: ["I've been at this for months now, you can skip the beginner-level stuff.",
                              "No need to walk me through the basics anymore; treat me as an intermediate "
                              "programmer."]},
                  "style": {},
                  "expect": "explanations for an intermediate programmer, no basics",
                  "probes": {B: [("cache", "Could we remember the {E} totals between requests instead of "
                                           "recomputing them?"),
                                 ("retry", "Give the call to the mapping service a second chance when it times out."),
                                 ("concept", "What is a with-block actually buying us around the database "
                                             "connection?")]}}},
    {"key": "estimates", "kind": "instruction", "scope": ("planning", "deploy", "ci"), "style": {},
     "say": {B: ["Whenever you suggest a plan, put a rough time estimate next to each step.",
                 "With any to-do list you give me, say how many hours you think each item will take."]},
     "why": {B: ["I have to fit this around a full-time job."]},
     "expect": "a time estimate for each step of a plan",
     "probes": {B: [("planning", "What should the next three evenings on {P} go on?"),
                    ("planning", "List what's left before {mate} can run {P} without me.")]},
     "revision": {"say": {B: ["Forget hours, they're always wrong; size the tasks as S, M or L instead.",
                              "Let's use T-shirt sizes for tasks now, the hour counts gave false precision."]},
                  "style": {},
                  "expect": "tasks sized S/M/L instead of hours",
                  "probes": {B: [("planning", "What should the next three evenings on {P} go on?"),
                                 ("planning", "List what's left before {mate} can run {P} without me.")]}}},
    {"key": "one_block", "kind": "instruction", "scope": "code", "style": {},
     "say": {B: ["Keep each answer to one code block; if you need several files, tell me and I'll ask for them in "
                 "turn.",
                 "Please don't give me more than a single snippet per reply, I get lost when there are four of "
                 "them."]},
     "why": {B: ["I paste straight into the editor and lose track of which piece went where."]},
     "expect": "one code block per answer",
     "probes": {B: [("endpoint", "Add the {fw} routes for listing and creating {Es}."),
                    ("tests", "Write tests for the {E} import, awkward cases included."),
                    ("deploy", "Package {P} so it can run on the server.")]},
     "revision": {"say": {B: ["Multiple snippets per reply are okay again; I've got a bigger screen and can follow "
                              "them.",
                              "Go ahead and split code across as many blocks as it needs, that rule was too "
                              "strict."]},
                  "style": {},
                  "expect": "as many code blocks as needed",
                  "probes": {B: [("endpoint", "Add the {fw} routes for listing and creating {Es}."),
                                 ("tests", "Write tests for the {E} import, awkward cases included."),
                                 ("deploy", "Package {P} so it can run on the server.")]}}},
    {"key": "security_note", "kind": "instruction", "scope": ("endpoint", "validation", "auth", "export"),
     "style": {},
     "say": {B: ["Whenever code handles input from outside, add a short note on how someone could abuse it.",
                 ("every snippet that takes user input should come with a line about how it might be misused",
                  LIST_TODO)]},
     "why": {B: ["We got spammed through the contact form last spring."]},
     "expect": "a note on possible abuse for code that handles outside input",
     "probes": {B: [("endpoint", "Members should be able to upload a photo with a {E}; what would that route look "
                                 "like?"),
                    ("auth", "How would a volunteer reset their own password?"),
                    ("validation", "Check the free-text notes on a {E} before they're saved.")]}},
    {"key": "no_lambda", "kind": "instruction", "scope": PY_KINDS, "style": {},
     "say": {B: [("Please avoid lambdas in what you write for me, give the function a proper name instead.",
                  PASTE_LAMBDA),
                 "No anonymous functions in the code, I want every function to have a name I can search for."]},
     "why": {B: ["Stack traces that say <lambda> tell me nothing."]},
     "expect": "named functions, no lambdas",
     "probes": {B: [("query", "Sort the {Es} by {n}, biggest first, ties broken by {f}."),
                    ("cli", "Add a terminal command that lists {Es} grouped by {f}."),
                    ("cache", "Cache the per-{E} totals, keyed on the {f}.")]}},
    {"key": "main_guard", "kind": "instruction", "scope": ("cli", "job", "export"), "style": {},
     "say": {B: ["Any script you write should have an if __name__ == \"__main__\" block, so importing it never runs "
                 "anything.",
                 "Standalone scripts need a main() function and the __main__ guard, we import them in tests."]},
     "why": {B: ["An import once emailed every member at once. Never again."]},
     "expect": "scripts wrapped in main() with the __main__ guard",
     "probes": {B: [("job", "Write the script that closes off last month's {Es}."),
                    ("export", "I'd like a script that writes all {Es} to a file in one go."),
                    ("cli", "Make a small tool {mate} can run to add a {E} by hand.")]}},
    {"key": "test_names", "kind": "instruction", "scope": ("tests", "validation", "query"), "style": {},
     "say": {B: ["Name tests after the behaviour they check, like test_rejects_negative_amount, not test_1 or "
                 "test_validate.",
                 "Test function names should read like a sentence about what's expected, e.g. "
                 "test_empty_list_returns_zero."]},
     "why": {B: ["When one fails in CI, the name alone should tell me what broke."]},
     "expect": "test names that describe the behaviour checked",
     "probes": {B: [("tests", "What tests should cover looking up a {E} by {f}?"),
                    ("validation", "Add checks, with tests, for the rules a new {E} must follow."),
                    ("tests", "Pin down the {d_h} date filter with a few tests.")]}},
    {"key": "ascii_only", "kind": "instruction", "scope": "code", "style": {},
     "say": {B: ["Keep everything inside code blocks plain ASCII, no curly quotes or em dashes, the old terminal at "
                 "the club mangles them.",
                 "Source files have to stay pure ASCII, please, even in comments and strings."]},
     "why": {B: ["An en dash in a comment once took down the nightly import."]},
     "expect": "ASCII-only code (no curly quotes or dashes)",
     "probes": {B: [("logging", "Set up the log messages for the {E} import."),
                    ("export", "The weekly {E} file needs a header row with nice column titles."),
                    ("config", "Write the settings loader with comments explaining each value.")]}},
    {"key": "constants", "kind": "instruction", "scope": PY_KINDS, "style": {},
     "say": {B: [("Pull magic numbers out into named constants at the top of the module, please.", PASTE_MAGIC),
                 "No bare numeric literals sprinkled through the logic; give each one a name in CAPITALS near the "
                 "top of the file."]},
     "why": {B: ["Nobody remembers what 0.85 meant."]},
     "expect": "numbers as named module-level constants",
     "probes": {B: [("validation", "A {E}'s {n} has to stay within sensible limits; write the check."),
                    ("job", "Archive the {Es} older than two years every Sunday night."),
                    ("retry", "Try the upload to the partner three times with a pause in between.")]}},
    {"key": "quote_error", "kind": "instruction", "scope": ("debug",), "style": {},
     "say": {B: ["When you debug something for me, start by quoting the exact line of the traceback you think "
                 "matters.",
                 "In debugging answers, copy the relevant line of the error first, then explain it."]},
     "why": {B: ["Tracebacks are long and I never know where to look."]},
     "expect": "debugging answers open by quoting the relevant traceback line",
     "probes": {B: [("debug", "Got this when I ran the nightly job by hand:\n\n{tb}"),
                    ("debug", "{mate} sent me a screenshot, this is what it said:\n\n{tb}")]}},
    {"key": "flat_comprehensions", "kind": "instruction", "scope": PY_KINDS, "style": {},
     "say": {B: ["Keep list comprehensions to one level; anything nested should be written out as a normal for loop.",
                 "i find nested comprehensions unreadable, so please unroll them into loops"]},
     "why": {B: []},
     "expect": "no nested comprehensions, plain loops instead",
     "probes": {B: [("export", "Flatten the {Es} and their related rows into one list for the export."),
                    ("query", "Group the {Es} by month and give me counts per {f}.")]}},
    {"key": "rollback", "kind": "instruction", "scope": ("deploy", "schema", "job"), "style": {},
     "say": {B: ["Any step that changes the live system should come with instructions for undoing it.",
                 "If you propose a migration or a deploy, tell me how to roll it back before you tell me how to do "
                 "it."]},
     "why": {B: ["Last year's upgrade left us offline for a weekend."]},
     "expect": "an undo path for every change to the live system",
     "probes": {B: [("schema", "We need to split the {f} column in two; how do we do it on the real database?"),
                    ("deploy", "Walk me through releasing the new version tonight."),
                    ("job", "Write the one-off job that merges duplicate {Es}.")]}},
    # ---- preferences: the project's libraries, tools and patterns ------------------------------------------------
    {"key": "attrs", "kind": "preference", "scope": ("model", "validation", "export"), "style": {},
     "say": {B: ["I like attrs for data classes, the validators are handy and it's what I'm used to.",
                 "For record types, I'd rather use attrs with @define than hand-written __init__ methods."]},
     "why": {B: ["It's what we used at my last job."]},
     "expect": "attrs classes for records",
     "probes": {B: [("model", "Give the {E} a proper type instead of a loose dict."),
                    ("validation", "A {E} must never have an empty {f}; where does that check live?")]},
     "revision": {"say": {B: ["Let's switch to the standard library's dataclasses, one dependency fewer.",
                              "Drop attrs; plain stdlib dataclasses will do us fine."]},
                  "style": {},
                  "expect": "standard-library dataclasses for records",
                  "probes": {B: [("model", "Give the {E} a proper type instead of a loose dict."),
                                 ("validation", "A {E} must never have an empty {f}; where does that check "
                                                "live?")]}}},
    {"key": "orjson", "kind": "preference", "scope": ("endpoint", "export", "cache"), "style": {},
     "say": {B: ["For JSON I prefer orjson, it's quicker and handles datetimes without fuss.",
                 "Use orjson when serialising anything, the stdlib json module chokes on our dates."]},
     "why": {B: []},
     "expect": "orjson for JSON serialisation",
     "probes": {B: [("export", "Dump every {E} to a JSON file for the backup."),
                    ("cache", "Store the computed {E} summary somewhere so we don't rebuild it every time.")]}},
    {"key": "tenacity", "kind": "preference", "scope": ("retry", "job"), "style": {},
     "say": {B: ["For retrying flaky calls I'd rather use tenacity than write loops with sleep by hand.",
                 "I'm a fan of tenacity's decorators for retries; they make the policy obvious at a glance."]},
     "why": {B: ["Hand-rolled retry loops are where I've seen the most subtle bugs."]},
     "expect": "retries with tenacity",
     "probes": {B: [("retry", "The weather service we call times out every few hours; make the fetch resilient."),
                    ("job", "The nightly upload to the federation sometimes fails; have it try again.")]},
     "revision": {"say": {B: ["We're ripping that library out again; a small hand-written backoff loop is easier for "
                              "the others to debug.",
                              "Change of mind on retries: no package, just a plain while loop with exponential "
                              "backoff."]},
                  "style": {},
                  "expect": "a hand-written backoff loop, no retry library",
                  "probes": {B: [("retry", "The weather service we call times out every few hours; make the fetch "
                                           "resilient."),
                                 ("job", "The nightly upload to the federation sometimes fails; have it try "
                                         "again.")]}}},
    {"key": "cron_jobs", "kind": "preference", "scope": ("job", "deploy"), "style": {},
     "say": {B: [("I'd rather schedule things with plain cron entries than run a scheduler inside the app.",
                  PASTE_CRON),
                 "Scheduled tasks belong in the crontab, not in some in-process scheduler library."]},
     "why": {B: ["If the app crashes, the schedule shouldn't go down with it."]},
     "expect": "scheduled jobs as cron entries",
     "probes": {B: [("job", "Send the weekly reminder email to everyone with an open {E}."),
                    ("deploy", "What needs setting up on the server for the recurring jobs?")]},
     "revision": {"say": {B: ["We're moving periodic work to systemd timers, so write .timer units now.",
                              "Switch the recurring jobs to systemd timer files, please; journald gives much better "
                              "logs."]},
                  "style": {},
                  "expect": "scheduled jobs as systemd timers",
                  "probes": {B: [("job", "Send the weekly reminder email to everyone with an open {E}."),
                                 ("deploy", "What needs setting up on the server for the recurring jobs?")]}}},
    {"key": "factory_boy", "kind": "preference", "scope": ("tests",), "style": {},
     "say": {B: ["Build test data with factory_boy factories rather than hand-written dicts in every test.",
                 "I prefer factories for fixtures, factory_boy specifically, so each test only states what matters "
                 "to it."]},
     "why": {B: []},
     "expect": "test data built with factory_boy",
     "probes": {B: [("tests", "Write tests for the {E} summary, including one with no {n}."),
                    ("tests", "We need tests for the overdue {E} report.")]}},
    {"key": "pyright", "kind": "preference", "scope": PY_KINDS, "style": {},
     "say": {B: ["We type-check with pyright in strict mode, so code has to pass it without ignore comments.",
                 "pyright --strict runs on every push; please write code that satisfies it."]},
     "why": {B: ["It caught three real bugs in the first week."]},
     "expect": "code that passes pyright strict",
     "probes": {B: [("model", "Sketch the data type for a {E} with a couple of optional fields."),
                    ("retry", "Wrap the call to the mapping service so one failure doesn't kill the whole batch.")]}},
    {"key": "gunicorn", "kind": "preference", "scope": ("deploy", "config"), "style": {},
     "say": {B: ["In production I like gunicorn in front of the app, with the worker count set in a config file.",
                 "My preference for serving is gunicorn behind the proxy, not the development server and not "
                 "uwsgi."]},
     "why": {B: ["It's the one I know how to tune."]},
     "expect": "gunicorn as the application server",
     "probes": {B: [("deploy", "What command actually starts {P} on the server?"),
                    ("config", "Which settings does the production process need, and where do they go?")]}},
    {"key": "psycopg", "kind": "preference", "scope": ("query", "job"), "style": {},
     "say": {B: ["I'd like to talk to Postgres with psycopg 3 directly, not psycopg2.",
                 "Database access goes through psycopg (version 3), using its connection pool."]},
     "why": {B: ["psycopg2 is in maintenance mode."]},
     "expect": "database access with psycopg 3",
     "probes": {B: [("query", "Fetch the ten most recent {Es} with their {n}."),
                    ("job", "Recalculate the {E} totals in one pass overnight.")]},
     "revision": {"say": {B: ["We're going async, so switch the database code to asyncpg.",
                              "asyncpg for database calls now, please, the handlers are all async anyway."]},
                  "style": {},
                  "expect": "database access with asyncpg",
                  "probes": {B: [("query", "Fetch the ten most recent {Es} with their {n}."),
                                 ("job", "Recalculate the {E} totals in one pass overnight.")]}}},
    {"key": "cachetools", "kind": "preference", "scope": ("cache", "concept", "endpoint"), "style": {},
     "say": {B: ["For in-memory caching I like cachetools' TTLCache over rolling our own dict with timestamps.",
                 "Use cachetools for anything we cache in process."]},
     "why": {B: ["Our home-made cache never expired anything."]},
     "expect": "in-process caching with cachetools",
     "probes": {B: [("cache", "The {E} count on the homepage is slow; can it be kept for a minute or two?"),
                    ("cache", "Remember the last lookup of each {E} by {f} for a short while.")]}},
    {"key": "protocols", "kind": "preference", "scope": ("model", "retry", "cache", "config"), "style": {},
     "say": {B: ["I prefer typing.Protocol for interfaces over abstract base classes.",
                 "When we need an interface, define it as a Protocol; I don't want ABC hierarchies."]},
     "why": {B: ["Structural typing keeps the tests free of inheritance gymnastics."]},
     "expect": "interfaces as typing.Protocol, not ABCs",
     "probes": {B: [("retry", "We might swap the SMS provider later; how do we keep the sending code independent "
                              "of it?"),
                    ("model", "Different kinds of {E} need different pricing rules; how would you model that?")]}},
    {"key": "src_layout", "kind": "preference", "scope": ("planning", "ci", "config"), "style": {},
     "say": {B: ["I like the src/ layout for packages, with tests in a top-level tests folder.",
                 "Structure the repo src-style: the code under src/ and nothing importable from the root."]},
     "why": {B: ["It stops tests passing by accident against the working copy."]},
     "expect": "a src/ package layout",
     "probes": {B: [("ci", "Set up the pipeline so the tests run on each push."),
                    ("planning", "How should I reorganise the repository before {mate} joins?")]}},
    {"key": "toml_config", "kind": "preference", "scope": ("config", "cli"), "style": {},
     "say": {B: ["Settings that aren't secret should live in a TOML file read with tomllib.",
                 "I prefer config in config.toml over YAML or INI files; the standard library can read it."]},
     "why": {B: ["One format for pyproject and the app is one less thing to learn."]},
     "expect": "non-secret settings in a TOML file",
     "probes": {B: [("config", "Where do the page size and the sender address get configured?"),
                    ("cli", "The admin tool needs a few options that rarely change; where should they come "
                            "from?")]}},
    {"key": "mkdocs", "kind": "preference", "scope": ("planning", "ci"), "style": {},
     "say": {B: ["Documentation goes in MkDocs with the Material theme, published from the repo.",
                 "I'd rather write the docs as Markdown in MkDocs than keep a wiki nobody updates."]},
     "why": {B: []},
     "expect": "documentation in MkDocs",
     "probes": {B: [("planning", "How should we document {P} for the next volunteer who takes it on?"),
                    ("ci", "Could the docs be published automatically when we merge?")]}},
    {"key": "jinja_mail", "kind": "preference", "scope": ("job", "endpoint"), "style": {},
     "say": {B: ["Emails should be rendered from Jinja templates, never glued together from strings in Python.",
                 "For anything we send by mail I want a template file, Jinja2, not string soup in the code."]},
     "why": {B: ["Then the secretary can fix the wording without touching Python."]},
     "expect": "emails rendered from Jinja templates",
     "probes": {B: [("job", "Write the job that tells people their {E} is due next week."),
                    ("endpoint", "After someone registers a {E}, send them a confirmation.")]}},
    # ---- constraints: facts of the project ---------------------------------------------------------------------
    {"key": "agpl", "kind": "constraint", "scope": ("planning", "concept", "deploy"), "style": {},
     "say": {B: ["The project is licensed AGPL-3.0, so whatever we run for users has to offer them the source.",
                 "Because we're AGPL, the site needs a visible link to its source code and every library has to be "
                 "compatible."]},
     "why": {B: ["The founders insisted it stays free software."]},
     "expect": "AGPL-3.0: source offered to users, compatible dependencies only",
     "probes": {B: [("planning", "We want to add a third-party map widget; anything to check first?"),
                    ("concept", "{mate} found a nice charting package; can we just drop it in?"),
                    ("deploy", "What do we need in place before the public launch of {P}?")]}},
    {"key": "eink", "kind": "constraint", "scope": ("endpoint", "concept", "cache"), "style": {},
     "say": {B: ["The display by the door is an e-ink panel: greyscale only, and it refreshes at most once a minute.",
                 "Our status screen is a cheap e-paper display with no colour, so anything it shows must work in "
                 "black and white."]},
     "why": {B: ["It runs for months on a battery, which is why we chose it."]},
     "expect": "greyscale pages for a slow-refresh e-ink display",
     "probes": {B: [("endpoint", "Make a page that shows today's {Es} for the screen at the entrance."),
                    ("concept", "How should the entrance screen find out a {E} has changed?")]}},
    {"key": "pg12", "kind": "constraint", "scope": ("schema", "query", "job"), "style": {},
     "say": {B: ["The database server is PostgreSQL 12 and the host won't upgrade it, so no MERGE or other newer "
                 "syntax.",
                 "We're on Postgres 12, which rules out anything the later releases added."]},
     "why": {B: ["It's a managed plan and they upgrade when they feel like it."]},
     "expect": "SQL that runs on PostgreSQL 12 (no MERGE)",
     "probes": {B: [("query", "Insert a {E} or update it if the {f} already exists."),
                    ("schema", "The {T} table needs a column computed from {n}; how?"),
                    ("job", "Sync the {Es} from the partner's CSV into our table, updating the ones we already "
                            "have.")]},
     "revision": {"say": {B: ["Database upgrade happened over the weekend: we're on 16 now, so MERGE is on the table.",
                              "We've migrated to a managed version-16 instance, newer SQL features are fine."]},
                  "style": {},
                  "expect": "PostgreSQL 16 features allowed",
                  "probes": {B: [("query", "Insert a {E} or update it if the {f} already exists."),
                                 ("schema", "The {T} table needs a column computed from {n}; how?"),
                                 ("job", "Sync the {Es} from the partner's CSV into our table, updating the ones "
                                         "we already have.")]}}},
    {"key": "minors", "kind": "constraint", "scope": ("schema", "validation", "endpoint"), "style": {},
     "say": {B: [("under-16s can only be registered once a parent or guardian has consented, and we have to keep "
                  "that consent on file", LIST_DECIDED),
                 "Some of our members are children, and the law says we need a guardian's recorded consent before "
                 "keeping anything about them."]},
     "why": {B: ["The safeguarding officer checks this every year."]},
     "expect": "guardian consent recorded before storing data about under-16s",
     "probes": {B: [("validation", "What should be checked before a new sign-up is accepted?"),
                    ("schema", "What fields does the sign-up data need, beyond name and email?")]}},
    {"key": "no_card_data", "kind": "constraint", "scope": ("schema", "endpoint", "model"), "style": {},
     "say": {B: ["Card numbers must never touch our servers; payments go through SumUp and we only keep their "
                 "transaction reference.",
                 "We are not allowed to store payment card details in any form, not even the last four digits, the "
                 "bank was explicit."]},
     "why": {B: ["PCI compliance is far beyond what we can manage."]},
     "expect": "no card data stored, only the payment provider's reference",
     "probes": {B: [("schema", "What columns should a payment for a {E} have?"),
                    ("endpoint", "Add a route that records a paid {E}.")]}},
    {"key": "ipv6_only", "kind": "constraint", "scope": ("deploy", "config", "retry"), "style": {},
     "say": {B: ["The new VPS only has an IPv6 address, no IPv4 at all, so everything has to bind and connect over "
                 "v6.",
                 "Note that the server is IPv6-only; some services we call may not be reachable from it."]},
     "why": {B: ["IPv4 addresses cost extra with this provider."]},
     "expect": "IPv6-only networking (bind and connect over v6)",
     "probes": {B: [("deploy", "How should the web process listen on the server?"),
                    ("retry", "Call the postcode lookup service from the server and handle failures.")]}},
    {"key": "sms_budget", "kind": "constraint", "scope": ("job", "retry", "planning"), "style": {},
     "say": {B: [("we can afford about 200 text messages a month, so SMS is for urgent stuff only", LIST_ROTA),
                 "Every SMS costs us 6p and the budget covers roughly two hundred a month, so texts have to be "
                 "rationed."]},
     "why": {B: []},
     "expect": "SMS rationed to about 200 a month, urgent only",
     "probes": {B: [("job", "Remind people the day before their {E}."),
                    ("planning", "How should we let members know when something changes?")]}},
    {"key": "freeze", "kind": "constraint", "scope": ("deploy", "planning"), "style": {},
     "say": {B: ["Nothing may be deployed between 1 December and 6 January; that's the code freeze for the busy "
                 "season.",
                 "We have a hard change freeze over the holidays, from December 1st to January 6th."]},
     "why": {B: ["Nobody is around to fix things if they break then."]},
     "expect": "no deploys between 1 December and 6 January",
     "probes": {B: [("deploy", "When can we release the new booking page?"),
                    ("planning", "Plan the rollout of the renewal feature across the winter.")]},
     "revision": {"say": {B: ["The committee shortened the freeze: only Christmas week, 23 to 30 December, is "
                              "off-limits now.",
                              "The winter lock got shorter, it's now just the week around Christmas."]},
                  "style": {},
                  "expect": "no deploys in Christmas week only (23-30 December)",
                  "probes": {B: [("deploy", "When can we release the new booking page?"),
                                 ("planning", "Plan the rollout of the renewal feature across the winter.")]}}},
    {"key": "barcode", "kind": "constraint", "scope": ("endpoint", "validation", "cli"), "style": {},
     "say": {B: ["Staff use cheap USB barcode scanners that type the code like a keyboard and press Enter at the end.",
                 "Input at the counter comes from handheld scanners acting as keyboards, so fields get a burst of "
                 "digits followed by a return."]},
     "why": {B: ["They were twelve euros each."]},
     "expect": "forms that cope with keyboard-wedge scanners (code then Enter)",
     "probes": {B: [("endpoint", "Build the counter page where staff look up a {E} quickly."),
                    ("validation", "What checks does the {f} field need on the counter form?")]}},
    {"key": "coarse_location", "kind": "constraint", "scope": ("endpoint", "export", "query"), "style": {},
     "say": {B: ["Public pages may show locations only to the nearest town, never a street address or exact "
                 "coordinates.",
                 "Anything published has to blur where people are: town level at most, the data protection officer "
                 "was firm."]},
     "why": {B: ["Someone was followed home after a listing once."]},
     "expect": "locations shown publicly at town level only",
     "probes": {B: [("endpoint", "Add a public map page showing where the {Es} are."),
                    ("export", "Produce the open-data file of {Es} for the council website.")]}},
    {"key": "smtp_relay", "kind": "constraint", "scope": ("job", "config", "retry"), "style": {},
     "say": {B: ["Outgoing mail can only go through our provider's SMTP relay, which caps us at 100 messages an hour.",
                 "We're limited to the ISP's mail relay for sending, and it throttles at a hundred emails per hour."]},
     "why": {B: ["Anything else lands in spam anyway."]},
     "expect": "mail via the provider's relay, at most 100 an hour",
     "probes": {B: [("job", "Send the newsletter to all 900 members."),
                    ("config", "What settings does sending email need?")]}},
    {"key": "cpanel", "kind": "constraint", "scope": ("deploy", "job", "planning"), "style": {},
     "say": {B: ["We're on shared cPanel hosting: no root, no long-running processes, only a WSGI app and cron.",
                 "Hosting is a shared plan without root access, so no daemons and nothing that runs in the "
                 "background."]},
     "why": {B: ["It came free with the domain."]},
     "expect": "shared hosting: no root, no daemons, WSGI plus cron",
     "probes": {B: [("deploy", "How do I get the latest version of {P} onto the host?"),
                    ("job", "The {E} reminders need to go out every morning; how do we run that?")]},
     "revision": {"say": {B: ["We've outgrown the cheap plan and moved to a small VPS where I'm admin.",
                              "New hosting: our own virtual server with full administrator rights."]},
                  "style": {},
                  "expect": "own VPS with admin rights",
                  "probes": {B: [("deploy", "How do I get the latest version of {P} onto the host?"),
                                 ("job", "The {E} reminders need to go out every morning; how do we run that?")]}}},
    {"key": "bilingual_ui", "kind": "constraint", "scope": ("endpoint", "validation", "export"), "style": {},
     "say": {B: ["By law everything the public sees has to be in both English and Welsh.",
                 "Public-facing text must be bilingual, Welsh and English, with neither language treated as second "
                 "best."]},
     "why": {B: ["We're funded by a Welsh council."]},
     "expect": "public text in English and Welsh",
     "probes": {B: [("validation", "Write the error messages for a {E} form that's filled in wrong."),
                    ("endpoint", "Build the public page listing upcoming {Es}.")]}},
    {"key": "group_cap", "kind": "constraint", "scope": ("validation", "endpoint", "concept"), "style": {},
     "say": {B: ["Our insurance covers groups of at most 12 people, so nothing may book more than that.",
                 "A single booking can't exceed twelve participants, it's a condition of the insurance policy."]},
     "why": {B: []},
     "expect": "at most 12 people per group or booking",
     "probes": {B: [("validation", "What should stop a {E} from being saved with silly numbers?"),
                    ("endpoint", "Add the route that lets people sign up several guests at once.")]},
     "revision": {"say": {B: ["The insurer agreed to cover up to 20 now that we have two leaders on every outing.",
                              "Bigger groups are allowed from this season, the limit went up to twenty."]},
                  "style": {},
                  "expect": "at most 20 people per group or booking",
                  "probes": {B: [("validation", "What should stop a {E} from being saved with silly numbers?"),
                                 ("endpoint", "Add the route that lets people sign up several guests at once.")]}}},
]

ITEM = {it["key"]: it for it in ITEMS}
EXCLUSIVE = [{"one_block", "io_examples"}, {"cpanel", "gunicorn"}, {"cpanel", "ipv6_only"}]
"""Never in one chat: an example call under each function asks for more than one block; shared hosting runs
neither gunicorn nor on a VPS of its own."""
SOON = {"italian"}
REVOKED = ["italian", "casual", "line_numbers", "italian", "bold_key", "io_examples", "italian", "headings"]
"""The item each chat takes back (by chat index)."""

# ---- traps --------------------------------------------------------------------------------------------------

TRAPS: dict[str, dict[str, list[str]]] = {
    "chit_chat": {B: [
        "I always promise myself one episode and end up watching four.",
        "The kettle's broken, so this is running on instant coffee and spite.",
        "I'd rather eat my own hat than go back to that old spreadsheet.",
        "Never mind my earlier question, the answer was in the docs all along.",
        "New rule for myself, starting today: no laptop in bed. We'll see.",
        "I bet you're asked this a thousand times a day, but here goes.",
        "You don't want to know how long I spent hunting a missing comma yesterday.",
        "Personally I prefer the window open while I work, even in October.",
        "Henceforth I am ignoring every email that arrives after six, ha.",
        "The upstairs neighbours never seem to sleep, someone's always hoovering at midnight.",
        "Please, nobody tell my boss I'm doing this on company time.",
        "I must buy a new charger, this one only works at a certain angle.",
        "The wifi here drops out constantly, always right when I hit save.",
        "Never in my life did I expect to get excited about an index.",
        "Wish our quiz team luck tonight, we're defending the title.",
        "My rule of thumb for coffee is one cup per bug, which explains a lot today.",
        "Don't mind the typos, I'm typing one-handed with a sandwich in the other.",
        "Every single time I open the laptop it wants an update.",
        "Remind me never to volunteer for the raffle again, it ate my whole Saturday.",
        "the heating's on the blink again, typing in fingerless gloves",
        "My grandad always said a job worth doing is worth doing twice, which explains his shed.",
        "The clocks go back this weekend, so at least there's an extra hour for this.",
        "Never buy a second-hand printer, that's my life lesson for today.",
    ]},
    "one_off": {B: [
        "Nothing but the function here, please; the why can wait till tomorrow.",
        "Skip the write-up on this question, the snippet alone will do.",
        "Code only on this answer, I'm copying it off my tablet.",
        "In this scratch script, print() is all I need, nobody will ever run it again.",
        "For this throwaway check, just print the rows, no logging setup needed.",
        "On this particular question, please go deep, all the detail you've got.",
        "Keep it to a few lines for now, the kids need picking up soon.",
        "Leave the tests out of this answer, it's an experiment I'll bin tomorrow.",
        "Use made-up data in this example, the real names don't matter here.",
    ]},
    "question": {B: [
        "Should background jobs always be idempotent, or is that only for big systems?",
        "Would you always write an API client as a class, or are functions enough?",
        "Is it ever fine to never write a README for an internal tool?",
        "Do you always need a staging server, or can a small project skip it?",
        "Is it bad to always return 200 and put the error in the body?",
        "Should I prefer SQLite's STRICT tables for new schemas?",
        "Is it normal to always run tests in random order?",
        "Should every commit always pass the test suite on its own?",
        "Is it worth always naming database constraints explicitly?",
    ]},
    "quoted": {B: [
        "The laminated card taped to the router says \"ALWAYS restart on Mondays\", dated 2019.",
        "The CI log is full of \"DeprecationWarning: datetime.utcnow() is deprecated\" from the old helper.",
        "My predecessor's handover note says \"never reboot on a full moon\", which I'm choosing to read as a joke.",
        "Clause 7 of the venue contract reads \"the hirer must always leave by 11 pm\", which rules out late sessions.",
        "Our constitution literally states \"the treasurer shall always be consulted\" for spending over fifty "
        "pounds.",
        "The last commit message in the old repo is just \"never again\", which tells you everything.",
        "A user's complaint form said, word for word, \"your site always logs me out\", with no other detail.",
        "The mapping service's terms include \"you must display our logo on every map\", annoyingly.",
        "The old Excel sheet has a cell that says \"NEVER SORT THIS COLUMN\" in red.",
    ]},
    "third_party": {B: [
        "Could you draft a message telling the weekend helpers they should always count the till before leaving?",
        "My nephew now knows he must never push to the live branch without me, he learnt that the hard way.",
        "The secretary promised to cc me on every membership email from now on.",
        "Write a sentence for the ride leaders' handbook: they should never leave anyone behind on a climb.",
        "Ama, our second photographer, always shoots in RAW, it's just how she works.",
        "Greer's resolution is to keep the issue tracker tidy going forward.",
        "The printers insist we always send them PDFs with crop marks, which is their rule, not ours.",
        "Please write the sign for the kitchen that says people must always wash their own mugs.",
    ]},
    "hypothetical": {B: [
        "If another club ever wanted a copy, I'd never hand over our admin account with it.",
        "If we were a bigger outfit, I'd always want a proper on-call rota.",
        "Had we started this in spring, we'd be testing it with real users by now.",
        "Were we ever audited by the tax office, I'd want every receipt scanned, no exceptions.",
        "If someone ever asks for blockchain in this, I'm retiring on the spot, ha.",
        "Suppose we went international, we'd always need prices in several currencies.",
        "Imagine if people actually filled in every field, we'd never need validation at all.",
        "If the data ever got huge, I'd rather move to a column store than tune indexes forever.",
    ]},
    "assistant": {B: [
        "One thing I'd keep doing: leave the previous release on disk so going back is a single command.",
        "Never run two copies of the same scheduled job at once; a simple lock file prevents it.",
        "Setting a statement timeout on the database connection is always a cheap safety net.",
        "From here on it's worth writing down every manual fix you make on the server.",
        "Idempotent endpoints are generally the better choice for anything a user might double-click.",
        "Please don't ever email passwords, not even temporary ones; send a reset link instead.",
        "Before a big import, always glance at the free disk space; a full disk halfway through is miserable.",
        "Make a point of storing backups somewhere other than the server they protect.",
        "Give every scheduled job a heartbeat so you notice when it stops; that habit pays for itself.",
    ]},
}
TRAP_COUNTS: dict[str, int | tuple[int, int]] = {"chit_chat": (4, 5), "one_off": 2, "question": 2, "quoted": 2,
                                                 "third_party": (1, 2), "hypothetical": (1, 2)}
SUGGESTIONS_PER_CHAT = 3

ONE_OFF_EFFECT = {  # what the reply does for that message only (none: the request itself is what changes)
    "Nothing but the function here, please; the why can wait till tomorrow.": "code_only",
    "Skip the write-up on this question, the snippet alone will do.": "code_only",
    "Code only on this answer, I'm copying it off my tablet.": "code_only",
    "In this scratch script, print() is all I need, nobody will ever run it again.": "print",
    "For this throwaway check, just print the rows, no logging setup needed.": "print",
    "On this particular question, please go deep, all the detail you've got.": "long",
    "Keep it to a few lines for now, the kids need picking up soon.": "short",
}

QUESTION_ANSWER = {
    "Should background jobs always be idempotent, or is that only for big systems?":
        "On idempotent jobs: it matters at every size, because small systems get retried and double-started too; "
        "a job that can run twice without harm saves you from the one night the scheduler hiccups.",
    "Would you always write an API client as a class, or are functions enough?":
        "On API clients: a couple of functions sharing a session object are plenty for one or two endpoints; a "
        "class starts to pay off once there's authentication state, several endpoints and tests that swap it out.",
    "Is it ever fine to never write a README for an internal tool?":
        "On READMEs: even an internal tool needs a few lines on how to run it and who owns it; the person who "
        "needs them is usually you, a year from now.",
    "Do you always need a staging server, or can a small project skip it?":
        "On staging: a small project can get by with a local copy of production data and a careful release "
        "checklist; a separate staging box earns its cost once several people deploy or the data is precious.",
    "Is it bad to always return 200 and put the error in the body?":
        "On status codes: yes, it's unhelpful, because caches, monitoring and client libraries all read the "
        "status; send 4xx or 5xx and keep the detail in the body as well.",
    "Should I prefer SQLite's STRICT tables for new schemas?":
        "On STRICT tables: for a new schema they're a good default, since they reject values of the wrong type "
        "instead of storing them quietly; they need SQLite 3.37 or newer.",
    "Is it normal to always run tests in random order?":
        "On random test order: many teams do it precisely to flush out tests that depend on each other; if it "
        "causes failures, those are real bugs in the tests, worth fixing.",
    "Should every commit always pass the test suite on its own?":
        "On green commits: it makes bisecting much easier, so it's a good aim for the main branch; on a feature "
        "branch that will be squashed, it matters less.",
    "Is it worth always naming database constraints explicitly?":
        "On constraint names: explicit names make migrations and error messages far easier to deal with, and "
        "they cost nothing to add, so most schemas benefit.",
}

# ---- the user's side of the talk ------------------------------------------------------------------------------

ASKS: dict[str, list[str]] = {
    "schema": ["We've been keeping {Es} in a notebook by the till. What would a proper table look like, with {f}, "
               "{n} and the {d_h} date?",
               "Sketch the CREATE TABLE for {T} for me, keys and indexes included.",
               "what's a sensible table layout for {Es}? keep it boring"],
    "model": ["At the moment a {E} is a dict with string keys and a prayer. Can we give it a real type?",
              "Could you write the {C} class the rest of {P} will pass around?",
              "I want a typed Python representation of a {E}, with the fields exactly as {db} has them."],
    "query": ["I need the {Es} since a given date, newest first, capped at some number.",
              "Write me a function returning the latest {Es} after a cut-off day.",
              "how do i pull last month's {Es} with the newest on top?"],
    "endpoint": ["The front end needs to list {Es} and add new ones. Can you do the {fw} side?",
                 "Two {fw} routes please: GET for the {Es}, POST for a new {E}.",
                 "Time to put {Es} behind the API, read and create for now."],
    "tests": ["The {E} lookup has no tests at all and it scares me. What would you cover?",
              "Can you wrap the {E} code in tests before I start refactoring it?",
              "What are the tricky cases for the {d_h} filter, test-wise?"],
    "export": ["Our treasurer wants every {E} in a file she can open at home.",
               "Can the {T} table come out as a CSV for the committee?",
               "I need to hand over all the {Es} as a file at the AGM."],
    "validation": ["Rubbish keeps ending up in {T} from the form. What should a {E} pass before it's stored?",
                   "Write the input checks for creating a {E}, please.",
                   "Somebody saved a {E} with nothing filled in. How do we block that?"],
    "retry": ["The service we pull from drops out for a few seconds now and again. Could you write a fetch that "
              "survives it?",
              "Our sync falls over whenever the remote API blips. What would a tougher version look like?",
              "I'd like a wrapper for the outside API that shrugs off the odd timeout."],
    "config": ["Credentials and hostnames are hard-coded all over {P}. How would you tidy that up?",
               "How should {P} pick up its configuration from the environment?",
               "Where should knobs like the page size and the database URL live?"],
    "logging": ["When {P} misbehaves we're flying blind. What should we log?",
                "What should {P} report about itself while running, and to where?",
                "The log on the server has grown to several gigabytes. How do we tame it?"],
    "cache": ["The dashboard recounts every {E} on each load. Would a cache help there?",
              "Could the {E} totals stay in memory briefly rather than hitting {db} every time?",
              "Is there a way to stop recalculating the daily {E} numbers on every single request?"],
    "cli": ["I'd like to manage {Es} from the terminal without going through the web interface.",
            "What would an admin command look like, with one subcommand per {E} task?",
            "Could you knock up a small command-line tool for the {E} chores?"],
    "job": ["{Es} older than a year should leave the main table every night. Can we automate that?",
            "Old {Es} keep piling up; what would a scheduled clear-out look like?",
            "What's the least fragile way to archive old {Es} on a regular basis?"],
    "auth": ["Another organisation wants to call {P} from their own system. How do we let them in safely?",
             "Give outside callers tokens and turn everyone else away: what's the code for that?",
             "How would you lock the {Es} routes behind API keys?"],
    "debug": ["This popped up right after the last deploy:\n\n{tb}", "Any idea what this is on about?\n\n{tb}",
              "{mate} dropped this into the group chat without a word:\n\n{tb}",
              "Completely stuck on this one:\n\n{tb}"],
    "review": ["Is this good enough to merge?\n\n{code}", "{mate} asked me to get your opinion on this:\n\n{code}",
               "Would you sign this off?\n\n{code}"],
    "deploy": ["What are the steps to get {P} running on our server?",
               "Walk me through taking {P} to production, please.",
               "The server is ours from Monday. Where do I begin?"],
    "ci": ["I'd like the tests to run by themselves on every push. What's needed?",
           "What goes in a GitHub Actions workflow for this repository?",
           "Can we stop merges from happening until the tests pass?"],
    "concept": ["Should the {E} totals be stored, or computed when someone asks?",
                "When exactly do my writes need a transaction around them?",
                "Could a plain jobs table stand in for a proper queue in our case?",
                "The import crawls: is it waiting on I/O or on the CPU, and would asyncio help?"],
    "planning": ["What would you do next, in my shoes?", "Can you help me plan the next two weeks?",
                 "What's missing before we can call it a first real release?",
                 "I need to give {mate} an update. What should go in it?"],
}
GREETINGS = ["Morning from a foggy platform.", "Evening, it's me again.", "Right then.", "Hello from the train.",
             "Back for more.", "Got forty minutes, let's go.", "Hey hey.", "Sunday session."]
FEEDBACK = ["That did exactly what I wanted.", "All the tests pass now.", "Your idea fixed it.",
            "{mate} approved it with a single nitpick.", "It's been live since Tuesday without a peep.",
            "Needed a small tweak to fit our setup, but it's merged.", "That was the bit I was missing.",
            "Tried it this morning, works nicely.", "Now I get why it works.", "The numbers finally line up."]
SMALL_TALK = ["Storm outside, the lights keep flickering.", "Train's delayed, so I've got time.",
              "Half the volunteers have the flu.", "Working from my sister's kitchen today.",
              "Just back from a long ride, legs like jelly.", "One of those days where nothing works first time.",
              "The roadworks outside started at dawn.", "I should be on holiday, technically.",
              "First frost of the year this morning.", "Redecorating at home, everything smells of paint.",
              "Quiet afternoon at the office, so I'm squeezing this in."]
CONTEXT = ["People moan that the {Es} page is sluggish on Monday mornings.",
           "We expect a few thousand {Es} by this time next year.", "About ten testers get accounts next month.",
           "{mate} takes this over once it's stable.",
           "Someone entered a {E} with a ridiculous {n} last week and nobody caught it.",
           "This file is held together with tape at this point.", "{mate} reviews anything that touches this.",
           "It works, but I wince every time I open it.", "I tried it myself and ended up with spaghetti.",
           "For now only a handful of people ever look at the {Es} screen.", "Ideally this is done by the weekend.",
           "Up to now it was all a shared spreadsheet with a lot of colour coding."]
REVIEW_CODE = """def load_{Es}(conn, since):
    out = []
    rows = conn.execute(f"SELECT * FROM {T} WHERE {d} >= '{{since}}'").fetchall()
    for r in rows:
        if r["{n}"]:
            out.append(dict(r))
        else:
            continue
    try:
        with open("/tmp/{Es}.json", "w") as fh:
            fh.write(str(out))
    except Exception:
        pass
    return out"""

# ---- the assistant's side: acknowledgements, assumptions, Italian --------------------------------------------------

ACKS = ["Roger that.",
        "Can do!",
        "Yep, on it.",
        "Consider it handled.",
        "Right you are.",
        "That's a sensible rule to work by.",
        "Good call — I'll build that into every answer I give you.",
        "Thanks, that's helpful context, and I'll plan around it whenever it's relevant.",
        "Great, I'll treat that as the default for this project.",
        "Totally fair. I'll make that part of how I answer you.",
        "Clear enough — everything I send you will respect that.",
        "Nice, that actually simplifies things. I'll write with that in mind.",
        "Glad you spelled that out; it changes a few of my defaults.",
        "Duly recorded. Expect it in all my replies.",
        "I'll honour that every time.",
        "Fair point, and easy to do."]
ACK_REVISE = ["Change taken on board.",
              "Right, I'll work to the new version instead.",
              "Appreciate the heads-up on the change — I'll drop the earlier approach.",
              "Ah, that's different then. Adjusting.",
              "That makes the job easier, actually; the new setup is what I'll use.",
              "Revised on my end. The previous rule is retired.",
              "Cool, the updated version wins."]
ACK_STATED = {"italian": "Perfetto! D'ora in poi ti rispondo in italiano."}
ACKS_IT = ["Ricevuto, lo terrò presente in ogni risposta.", "D'accordo, farò così.",
           "Ottima idea, la seguo senz'altro.", "Va bene, da adesso è la regola."]
"""Acknowledgements while the replies are in Italian (an item stated during the switch)."""
ASSUMPTIONS = ["I'm taking it that {Es} are only ever added through {P}, never typed straight into the database.",
               "This takes for granted that {n} can't be negative and that {d} is always filled in.",
               "I'm working on the basis of a single server and a single database, as you've described."]
ASSUMPTIONS_IT = ["Do per scontato che i {Es} vengano creati solo tramite {P}, mai a mano nel database.",
                  "Presumo che {n} non sia mai negativo e che {d} sia sempre valorizzato."]
ITALIAN: dict[str, Any] = {
    "intro": ["Ecco una proposta per i {Es}, con qualche spiegazione.",
              "Va bene, allora in italiano. Ecco come lo imposterei per {P}.",
              "Bella domanda. Ti lascio una soluzione semplice per i {Es}.",
              "Ecco il codice, e subito dopo qualche commento."],
    "body": ["La cosa importante è che una sola funzione si occupi dell'accesso ai dati. Se un giorno la query "
             "cambia, c'è un solo posto da toccare, e i test lo coprono.",
             "I parametri della query restano separati dal testo SQL. È più sicuro, e il driver del database si "
             "occupa da solo di date e virgolette.",
             "Il limite predefinito evita che una chiamata dimenticata restituisca l'intera tabella. Con il tempo i "
             "{Es} si accumulano, e una query senza limite diventa lenta.",
             "Per i test uso un vero database temporaneo invece di simulare il driver: così verifichiamo che l'SQL "
             "sia valido e che restituisca quello che ci aspettiamo.",
             "Gli importi si salvano in centesimi, come interi. Si convertono solo al momento di mostrarli, così si "
             "evitano errori di arrotondamento nei totali.",
             "Inoltre registrerei quante righe sono state elaborate: è la prima cosa che si vuole sapere quando un "
             "numero sembra strano."],
    "close": ["Fammi sapere se qualcosa non funziona come ti aspetti.", "Se hai dubbi, chiedi pure.",
              "Posso spiegarti meglio qualsiasi parte."],
    "tldr": ["In breve: una funzione semplice, parametri separati e un limite predefinito."],
    "next": ["provarlo su una copia dei dati", "aggiungere un test", "rivederlo con {mate}"],
    "next_label": "Prossimi passi:",
}
