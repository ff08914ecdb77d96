"""The standing instructions, preferences and constraints :mod:`.make_standing` plants, and the traps.

An item is something the user says once and expects to hold for the rest of the chat. ``kind``:

- ``instruction``: how the assistant should answer (format, language, length, tone), whatever the form
  ("Always ...", "From now on ...", "Please don't ...", "I'd rather you ...", "Keep answers under ...");
- ``preference``: the user's taste about the project's own choices (libraries, code style, tools):
  "I prefer minimal dependencies", "I'd rather write plain SQL than pull in an ORM";
- ``constraint``: a fact of the project the answers must respect: "We use PostgreSQL, not MySQL", "It has to run
  on Python 3.9", "the box has 512 MB of RAM".

``scope`` says which later answers an item matters to: ``answer`` (every answer), ``code`` (every answer with
code) or a list of the task kinds it matters to. ``style`` is what the recorded assistant replies do once it is
in force (:class:`.standing_code.Style`). Wordings, reasons and probes are per split (dev and test share none).

A ``revision`` replaces the item later (its own wordings and style; the words it shares with the item it
replaces are kept under half of either, :func:`.make_standing.check`); a ``revoke`` takes it back.

Traps are sentences that must never become standing: chit-chat with the words instructions use ("Can't wait.",
"I always forget my keys"), one-off requests for the current message only ("For this one, just give me the
code": it holds for that reply and no later one), questions ("Should we always use UUIDs?"), quoted text (a
README's "never run migrations on Fridays") and the assistant's own suggestions ("I'd recommend always pinning
your dependencies").
"""

from __future__ import annotations

from typing import Any

CODE_KINDS = ("schema", "model", "query", "endpoint", "tests", "export", "validation", "retry", "config",
              "logging", "cache", "cli", "job", "auth", "debug", "review")
"""The task kinds whose replies hold Python (or SQL) code."""
PY_KINDS = tuple(k for k in CODE_KINDS if k != "schema")

ITEMS: list[dict[str, Any]] = [
    # ---- instructions: how to answer ------------------------------------------------------------------
    {"key": "fences", "kind": "instruction", "scope": "code", "style": {"lang_tag": True},
     "say": {"dev": ["Always format code with syntax highlighting, with the language named on the fence.",
                     "Please always put the language name on your code fences so the snippets get highlighted."],
             "test": ["From now on, format every code block with syntax highlighting by tagging the fence with "
                      "its language.",
                      "Make sure your code blocks carry the language tag, my notes app only colours tagged ones."]},
     "why": {"dev": ["The plain grey blocks are hard to read in my notes.", "I paste these into Obsidian."],
             "test": ["Reading uncoloured code on a laptop screen at night is painful.",
                      "It really helps when I review on the tablet."]},
     "expect": "every code block fenced with its language tag (```python, ```sql, ...)",
     "probes": {"dev": [("export", "Could you write the function that dumps all {Es} into a CSV file for the "
                                   "accountant?"),
                        ("validation", "I need a validator for incoming {E} data before it hits the database, "
                                       "can you write one?")],
                "test": [("cache", "Can you write a small cache for the {E} counts, the dashboard hammers that "
                                   "query?"),
                         ("model", "Write me the {C} class that maps a row of the {T} table.")]}},
    {"key": "indent", "kind": "instruction", "scope": "code", "style": {"indent": "    "},
     "say": {"dev": ["Use 4 spaces for indentation in every snippet you write."],
             "test": ["Going forward, indent all code with four spaces, please."]},
     "why": {"dev": ["Your two-space snippets keep tripping our linter."],
             "test": ["Mixing two-space snippets into our modules made a mess of the diff."]},
     "expect": "code indented with four spaces (until revised)",
     "probes": {"dev": [("job", "Can you write the nightly job that archives {Es} older than a year?"),
                        ("config", "We need one place for all the settings; can you write the loader?")],
                "test": [("cli", "I'd like a small command-line entry point to list and export {Es}, can you "
                                 "sketch it?"),
                         ("validation", "Incoming {E} records are messy; write a checker for them.")]},
     "revision": {"say": {"dev": ["Actually, switch to tabs for indentation; the team's editor config wants "
                                  "them now."],
                          "test": ["Change of plan: use tabs, our new formatter enforces them."]},
                  "style": {"indent": "\t"},
                  "expect": "code indented with tabs",
                  "probes": {"dev": [("job", "Can you write the nightly job that archives {Es} older than a "
                                             "year?"),
                                     ("retry", "Write me a helper that fetches the supplier's price list and "
                                               "copes with their flaky server.")],
                             "test": [("cli", "I'd like a small command-line entry point to list and export "
                                              "{Es}, can you sketch it?"),
                                      ("config", "Can you write the settings loader that reads everything from "
                                                 "environment variables?")]}}},
    {"key": "tldr", "kind": "instruction", "scope": "answer", "style": {"tldr": True},
     "say": {"dev": ["Start every answer with a one-line TL;DR, I skim a lot.",
                     "Going forward, put a one-sentence summary at the very top of each reply."],
             "test": ["Please open each answer with a short TL;DR line before the details.",
                      "From now on, give me the bottom line first, in one sentence, then the explanation."]},
     "why": {"dev": ["Most days I read these between meetings."],
             "test": ["Most days I have a minute between calls."]},
     "expect": "the answer opens with a one-line summary",
     "probes": {"dev": [("concept", "What's the practical difference between a unique index and a unique "
                                    "constraint?"),
                        ("planning", "What should we tackle before the demo next week?")],
                "test": [("concept", "Is it worth moving the {Es} lookups behind a repository class, or is "
                                     "that overkill?"),
                         ("planning", "What would you prioritise for the next two weeks?")]},
     "revoke": {"say": {"dev": ["You can drop the TL;DR lines now, I read the whole thing anyway."],
                        "test": ["No need for that summary sentence up top anymore, I've stopped skimming."]},
                "style": {"tldr": False}}},
    {"key": "french", "kind": "instruction", "scope": "answer", "style": {"french": True},
     "say": {"dev": ["Answer in French from now on, I'm practising before the move to Lyon.",
                     "Please reply in French from now on; I need the practice."],
             "test": ["From now on, answer me in French, my evening class says immersion helps.",
                      "Could you switch to French for your answers from now on?"]},
     "why": {"dev": ["Keep the code as it is, of course."], "test": ["The code can stay in English."]},
     "expect": "answers in French (until revoked)",
     "probes": {"dev": [], "test": []},
     "revoke": {"say": {"dev": ["You can go back to English now, my brain is fried."],
                        "test": ["Let's return to English, the French was slowing me down too much."]},
                "style": {"french": False}}},
    {"key": "next_steps", "kind": "instruction", "scope": "answer", "style": {"next_steps": True},
     "say": {"dev": ["End each answer with a short list of next steps."],
             "test": ["Make sure you finish every reply with the concrete next steps as a list."]},
     "why": {"dev": ["I copy them straight into my task list."], "test": ["They go straight onto our board."]},
     "expect": "the answer ends with a list of next steps",
     "probes": {"dev": [("concept", "How should we think about backups for the {T} table?"),
                        ("planning", "We've got a quiet week coming, what's the best use of it?")],
                "test": [("concept", "Do we need a message queue for the notifications, or is a table enough?"),
                         ("planning", "The client wants a status update; where do we actually stand?")]}},
    {"key": "no_apology", "kind": "instruction", "scope": "answer", "style": {"no_apology": True},
     "say": {"dev": ["Please don't apologise or thank me in your replies, just get to the point."],
             "test": ["Never open with pleasantries or apologies; go straight to the answer."]},
     "why": {"dev": ["It's a lot of scrolling on my phone."], "test": ["It wastes half my screen."]},
     "expect": "no apology or thanks at the start of the answer",
     "probes": {"dev": [("debug", "Your last snippet threw this:\n\n{tb}"),
                        ("concept", "I think your earlier advice on caching was off; when is a cache the wrong "
                                    "answer?")],
                "test": [("debug", "That change broke something:\n\n{tb}"),
                         ("concept", "The numbers from your query last week looked wrong to me. How can we sanity "
                                     "check totals like that?")]}},
    {"key": "short", "kind": "instruction", "scope": "answer", "style": {"short": True},
     "say": {"dev": ["Keep answers under 300 words unless I ask for more detail; code doesn't count."],
             "test": ["Keep the prose under 200 words per answer, code blocks excluded."]},
     "why": {"dev": ["The long essays are too much on busy days."], "test": ["I lose the thread in long ones."]},
     "expect": "short prose (within the word limit), code aside",
     "probes": {"dev": [("concept", "Why would we pick a background worker over a cron job for the reminders?"),
                        ("planning", "What's left before we can call the first version done?")],
                "test": [("concept", "When does it make sense to denormalise the {Es} totals?"),
                         ("planning", "Where should the next month of effort go?")]},
     "revision": {"say": {"dev": ["Let's loosen that limit: 500 words is fine, the tiny ones skipped steps."],
                          "test": ["Make that limit 400 words; the very short replies left out things I needed."]},
                  "style": {"short": False},
                  "expect": "prose within the loosened word limit",
                  "probes": {"dev": [("concept", "Why would we pick a background worker over a cron job for the "
                                                 "reminders?"),
                                     ("planning", "What's left before we can call the first version done?")],
                             "test": [("concept", "When does it make sense to denormalise the {Es} totals?"),
                                      ("planning", "Where should the next month of effort go?")]}}},
    {"key": "hints", "kind": "instruction", "scope": PY_KINDS, "style": {"hints": True},
     "say": {"dev": ["Make sure every function you write has type hints."],
             "test": ["I'd rather you always annotate function signatures with types."]},
     "why": {"dev": ["mypy runs in CI now."], "test": ["Our reviewer insists on it."]},
     "expect": "functions with type annotations",
     "probes": {"dev": [("query", "Can you write the query function that returns the {Es} added since a "
                                  "given date?"),
                        ("cache", "The front page recomputes the {E} numbers constantly; can we cache them?")],
                "test": [("auth", "We need API keys for the partner integration; can you write the helpers?"),
                         ("validation", "Write the checks a new {E} has to pass before we store it.")]}},
    {"key": "no_dollar", "kind": "instruction", "scope": ("deploy",),
     "style": {"dollar": False},
     "say": {"dev": ["When you show shell commands, don't put the $ prompt in front, I paste them straight in."],
             "test": ["Never include the dollar-sign prompt in command examples; I copy them as they are."]},
     "why": {"dev": ["I've run '$ pip install' more times than I'd like to admit."],
             "test": ["It bit me twice last week."]},
     "expect": "shell commands without a leading $ prompt",
     "probes": {"dev": [("deploy", "How do I build and run the container on the new machine?"),
                        ("deploy", "What are the exact steps to redeploy after a change?")],
                "test": [("deploy", "Walk me through rolling out the new version on the server."),
                         ("deploy", "Give me the commands to get a fresh copy running.")]}},
    {"key": "no_emoji", "kind": "instruction", "scope": "answer", "style": {"no_emoji": True},
     "say": {"dev": ["Never put emojis in your answers, they look odd in my notes."],
             "test": ["Please don't use emojis anymore, my team reads these logs."]},
     "why": {"dev": [], "test": []},
     "expect": "no emojis",
     "probes": {"dev": [("planning", "Can you summarise what we've built so far for my manager?"),
                        ("planning", "We're presenting the project on Friday; what should the slides cover?")],
                "test": [("planning", "Draft a short status note I can forward to the client."),
                         ("planning", "What would you say went well and what didn't, looking back?")]}},
    {"key": "comments", "kind": "instruction", "scope": PY_KINDS, "style": {"comments": True},
     "say": {"dev": ["I'd rather you explain tricky lines in code comments than in paragraphs after the code."],
             "test": ["Going forward, put the explanation inside the code as comments instead of after it."]},
     "why": {"dev": ["The comments survive into the repo, the chat doesn't."],
             "test": ["That way it ends up in the repository."]},
     "expect": "explanations as comments inside the code",
     "probes": {"dev": [("retry", "Write me a helper that fetches the supplier's price list and copes with "
                                  "their flaky server."),
                        ("auth", "Partners will call us with keys; write the key handling.")],
                "test": [("logging", "Can you set up logging properly for the whole app?"),
                         ("job", "We need stale {Es} cleared out automatically each night; can you write it?")]}},
    # ---- preferences: the project's own choices ------------------------------------------------------------
    {"key": "min_deps", "kind": "preference", "scope": ("export", "retry", "concept", "config"),
     "style": {"stdlib": True},
     "say": {"dev": ["I prefer minimal dependencies, so standard library first unless there's a really good "
                     "reason."],
             "test": ["I'd like to keep third-party packages to a minimum; reach for what ships with Python "
                      "first."]},
     "why": {"dev": ["Every package is one more thing to patch."], "test": ["Audits are a pain otherwise."]},
     "expect": "standard-library solutions (csv, datetime, tomllib ...), no new third-party packages",
     "probes": {"dev": [("export", "The accountant wants the {Es} as a spreadsheet every month; what's the "
                                   "simplest way to produce it?"),
                        ("concept", "What would you use to read the settings from a TOML file?")],
                "test": [("export", "Finance asked for a monthly file of all {Es}; how would you generate it?"),
                         ("concept", "How should we parse the dates coming in from the partner feed?")]}},
    {"key": "orm", "kind": "preference", "scope": ("query", "schema"), "style": {"orm": False},
     "say": {"dev": ["I'd rather write plain SQL than pull in an ORM."],
             "test": ["I prefer hand-written SQL queries over an ORM for this project."]},
     "why": {"dev": ["I want to see exactly what hits the database."], "test": ["Fewer surprises in production."]},
     "expect": "plain SQL with parameters, no ORM (until revised)",
     "probes": {"dev": [("query", "We need a function that returns the {Es} changed since a date, newest "
                                  "first."),
                        ("query", "How do I page through the {Es}, fifty at a time?")],
                "test": [("query", "Can you write the lookup for {Es} modified after a given timestamp?"),
                         ("query", "The {Es} screen needs the latest entries with a limit; write the fetch.")]},
     "revision": {"say": {"dev": ["Actually, let's go with SQLAlchemy Core after all; the raw query strings are "
                                  "getting out of hand."],
                          "test": ["Change of heart: use SQLAlchemy Core from here on, the string-building got "
                                   "messy."]},
                  "style": {"orm": True},
                  "expect": "queries written with SQLAlchemy Core",
                  "probes": {"dev": [("query", "We need a function that returns the {Es} changed since a date, "
                                               "newest first."),
                                     ("query", "How do I page through the {Es}, fifty at a time?")],
                             "test": [("query", "Can you write the lookup for {Es} modified after a given "
                                                "timestamp?"),
                                      ("query", "The {Es} screen needs the latest entries with a limit; write "
                                                "the fetch.")]}}},
    {"key": "pytest", "kind": "preference", "scope": ("tests",), "style": {"unittest": False},
     "say": {"dev": ["I prefer pytest over unittest, plain asserts are easier to read."],
             "test": ["Use pytest style for every test, not unittest classes."]},
     "why": {"dev": [], "test": ["The fixtures make the setup much shorter."]},
     "expect": "pytest functions and fixtures, not unittest classes",
     "probes": {"dev": [("tests", "Can you write tests for {Es}_since?"),
                        ("tests", "Before I refactor the {E} queries, what tests should guard them?")],
                "test": [("tests", "Please add tests for the {E} lookup function."),
                         ("tests", "How would you cover the date filtering for {Es} with tests?")]}},
    {"key": "logging", "kind": "preference", "scope": ("query", "endpoint", "job", "retry", "export", "cli"),
     "style": {"logging": True},
     "say": {"dev": ["Going forward, use the logging module instead of print statements in anything for this "
                     "project."],
             "test": ["Never use print for diagnostics in this codebase; logging only."]},
     "why": {"dev": ["The prints end up in the service's output and nobody reads them."],
             "test": ["Our log shipper reads the logging output, not stdout."]},
     "expect": "the logging module, no print calls for diagnostics",
     "probes": {"dev": [("job", "Write the scheduled task that cleans up stale {Es} every night."),
                        ("export", "Write the monthly dump of {Es} to a file.")],
                "test": [("export", "Can you write the export of every {E} to a CSV file?"),
                         ("job", "Write the nightly archiving of old {Es}.")]}},
    {"key": "pathlib", "kind": "preference", "scope": ("export", "config", "logging", "cli"),
     "style": {"pathlib": True},
     "say": {"dev": ["I'd rather use pathlib than os.path everywhere."],
             "test": ["Prefer pathlib over os.path in the code you give me."]},
     "why": {"dev": ["It reads better."], "test": ["The os.path string juggling is error-prone."]},
     "expect": "pathlib.Path for file paths, not os.path",
     "probes": {"dev": [("logging", "Can you set up logging to a file in a logs folder next to the app?"),
                        ("export", "Write the export that saves the {Es} file into the exports folder.")],
                "test": [("config", "Write the settings loader, including where exports should go."),
                         ("cli", "Can you write a command that writes the {Es} to a file I name?")]}},
    {"key": "httpx", "kind": "preference", "scope": ("retry",), "style": {"httpx": True},
     "say": {"dev": ["I prefer httpx over requests for HTTP calls."],
             "test": ["For HTTP calls I like httpx better than requests."]},
     "why": {"dev": ["We'll want async eventually."], "test": ["It has proper timeouts by default."]},
     "expect": "httpx for HTTP, not requests",
     "probes": {"dev": [("retry", "The supplier's API times out now and then; write me a fetch helper that "
                                  "copes."),
                        ("retry", "We have to pull exchange rates from an external service daily; write the call.")],
                "test": [("retry", "Their webhook endpoint is flaky; can you write a client call with retries?"),
                         ("retry", "Write the function that downloads the partner's daily feed.")]}},
    {"key": "utc", "kind": "preference", "scope": ("model", "job", "concept"), "style": {"utc": True},
     "say": {"dev": ["Always store timestamps in UTC and convert only when displaying them."],
             "test": ["Timestamps should live in UTC everywhere; local time only in the interface."]},
     "why": {"dev": ["We got burned by daylight saving last spring."], "test": ["Two of our sites are in "
                                                                               "different time zones."]},
     "expect": "timezone-aware UTC timestamps",
     "probes": {"dev": [("model", "Can you write the {C} class for the {T} table?"),
                        ("job", "Write a job that flags {Es} untouched for a year.")],
                "test": [("job", "Write the job that archives {Es} older than a year, running every night."),
                         ("model", "I need the {C} dataclass with a helper that says if it's recent.")]}},
    # ---- constraints: facts of the project --------------------------------------------------------------
    {"key": "db_postgres", "kind": "constraint", "scope": ("schema", "query", "debug"),
     "style": {"dialect": "postgres"}, "default": {"dialect": "mysql"},
     "say": {"dev": ["We use PostgreSQL, not MySQL, so write queries for Postgres."],
             "test": ["Our database is PostgreSQL 15, so no MySQL-isms in the SQL please."]},
     "why": {"dev": ["Hosting came with a managed Postgres."], "test": ["It's what the client's ops team runs."]},
     "expect": "PostgreSQL SQL and types (timestamptz, identity columns, %s parameters)",
     "probes": {"dev": [("schema", "Can you write the table definition for {Es}, with whatever indexes make "
                                   "sense?"),
                        ("query", "Write the query for the ten most recent {Es}.")],
                "test": [("schema", "Let's add a table for {Es}; what should the DDL look like?"),
                         ("query", "Write me the fetch for {Es} created since a given day.")]}},
    {"key": "db_sqlite", "kind": "constraint", "scope": ("schema", "query", "debug"),
     "style": {"dialect": "sqlite"}, "default": {"dialect": "postgres"},
     "say": {"dev": ["It's SQLite, not Postgres, because it's a single-user tool on one laptop."],
             "test": ["We're staying on SQLite; there's no database server and there won't be one."]},
     "why": {"dev": ["No server to babysit."], "test": ["One file, easy backups."]},
     "expect": "SQLite SQL and types (INTEGER PRIMARY KEY, ? parameters)",
     "probes": {"dev": [("schema", "Can you write the table definition for {Es}?"),
                        ("query", "Write the query for the ten most recent {Es}.")],
                "test": [("schema", "What should the DDL for the {T} table look like?"),
                         ("query", "Write me the fetch for {Es} created since a given day.")]}},
    {"key": "py39", "kind": "constraint", "scope": PY_KINDS, "style": {"py39": True},
     "say": {"dev": ["It has to run on Python 3.9, the production box is stuck on it."],
             "test": ["Everything must stay compatible with Python 3.8 because of the hosting plan."]},
     "why": {"dev": ["Upgrading it is a whole saga."], "test": ["Long story."]},
     "expect": "syntax that runs on the old Python (Optional[...], List[...], no match statements)",
     "probes": {"dev": [("model", "Write the {C} dataclass with a from_row constructor."),
                        ("cli", "Can you write a command-line tool for the {Es} admin tasks?")],
                "test": [("cli", "Can you write the CLI that lists recent {Es}?"),
                         ("model", "Write the class that holds one {E}, built from a database row.")]},
     "revision": {"say": {"dev": ["Good news: the server got upgraded, so we can target 3.12 now."],
                          "test": ["The provider finally moved us to 3.11, so newer syntax is fine from now on."]},
                  "style": {"py39": False},
                  "expect": "modern syntax allowed (X | None, list[str])",
                  "probes": {"dev": [("model", "Write the {C} dataclass with a from_row constructor."),
                                     ("cli", "Can you write a command-line tool for the {Es} admin tasks?")],
                             "test": [("cli", "Can you write the CLI that lists recent {Es}?"),
                                      ("model", "Write the class that holds one {E}, built from a database "
                                                "row.")]}}},
    {"key": "ram", "kind": "constraint", "scope": ("deploy", "concept"), "style": {"small_memory": True},
     "say": {"dev": ["The box it runs on only has 512 MB of RAM, so memory is tight."],
             "test": ["We're limited to a VPS with 1 GB of memory."]},
     "why": {"dev": [], "test": ["The budget is what it is."]},
     "expect": "a small memory footprint (one worker, streaming, no big in-memory frames)",
     "probes": {"dev": [("deploy", "How many gunicorn workers should we run in production?"),
                        ("concept", "Could we load all the {Es} into a DataFrame for the reports?")],
                "test": [("deploy", "What's the best way to run the app server in production?"),
                         ("concept", "Is it fine to keep every {E} in a Python dict for quick lookups?")]}},
    {"key": "ci_offline", "kind": "constraint", "scope": ("ci", "tests"), "style": {"offline_tests": True},
     "say": {"dev": ["Our CI runners have no internet access, so nothing in the tests can call out."],
             "test": ["Tests must never hit the network; the CI sandbox blocks it."]},
     "why": {"dev": ["Security insisted."], "test": ["Company policy."]},
     "expect": "tests and CI that never use the network (fakes, blocked sockets)",
     "probes": {"dev": [("ci", "Can you set up a CI workflow that runs the tests on every push?"),
                        ("tests", "How do we test the code that calls the supplier's API?")],
                "test": [("ci", "Let's get the tests running automatically on pull requests; what's the "
                                "workflow?"),
                         ("tests", "Write tests for the function that fetches the partner feed.")]}},
    {"key": "windows", "kind": "constraint", "scope": ("ci", "export", "cli", "deploy"),
     "style": {"windows": True},
     "say": {"dev": ["Half the team is on Windows, so scripts need to work there too."],
             "test": ["Make sure anything you script works on Windows as well, two of us use it."]},
     "why": {"dev": [], "test": []},
     "expect": "code and scripts that work on Windows too",
     "probes": {"dev": [("ci", "Let's have the tests run automatically on every push; can you write the "
                               "workflow?"),
                        ("cli", "Write a script the team can run to export {Es} from their own machines.")],
                "test": [("ci", "Can you write the CI config for the test suite?"),
                         ("export", "Everyone needs to pull a CSV of {Es} locally; can you write it?")]}},
    {"key": "license", "kind": "constraint", "scope": ("concept", "export", "retry"), "style": {"no_gpl": True},
     "say": {"dev": ["Everything we ship has to be MIT-compatible, so no GPL libraries."],
             "test": ["No GPL dependencies, the client's lawyers were very clear about that."]},
     "why": {"dev": ["We sell it to other shops."], "test": []},
     "expect": "no GPL-licensed libraries suggested",
     "probes": {"dev": [("concept", "Which library would you use to generate PDF invoices from the {Es}?"),
                        ("concept", "Is there a good package for charts we could embed in the reports?")],
                "test": [("concept", "We need to produce PDF reports of the {Es}; which library would you "
                                     "pick?"),
                         ("concept", "What would you use for fuzzy search over {E} names?")]}},
    {"key": "onprem", "kind": "constraint", "scope": ("deploy",), "style": {"on_prem": True},
     "say": {"dev": ["We deploy on a Raspberry Pi 4 in the back office, no cloud."],
             "test": ["It all runs on one on-premises Ubuntu server, we can't use cloud services."]},
     "why": {"dev": ["The owner doesn't trust the cloud."], "test": ["Data can't leave the building."]},
     "expect": "deployment on the local machine, no cloud services",
     "probes": {"dev": [("deploy", "How should we set up automatic restarts and backups for the app?"),
                        ("deploy", "Where should the database backups go, and how?")],
                "test": [("deploy", "How do we keep the service running after a reboot?"),
                         ("deploy", "What's the plan for hosting the staging copy?")]}},
]

ITEM = {it["key"]: it for it in ITEMS}
EXCLUSIVE = [{"db_postgres", "db_sqlite"}]

# ---- traps: sentences that must not become standing --------------------------------------------------------

TRAPS: dict[str, dict[str, list[str]]] = {
    "chit_chat": {
        "dev": ["Can't wait.", "I always forget my keys when I leave in a hurry.", "I'd rather be sailing today, ha.",
                "Never mind, I found the typo myself.", "My cat never lets me work in peace.",
                "I must have restarted the kernel ten times today.",
                "From now on I'm going to bed before midnight, I promise.",
                "Don't get me started on the office printer.", "I always end up with forty browser tabs open.",
                "I prefer tea to coffee in the afternoons, for what it's worth.",
                "Make sure you enjoy the weekend, oh wait, you don't get one.",
                "Never again am I deploying on a Friday afternoon."],
        "test": ["Can't complain.", "I never remember where I put my glasses.",
                 "I'd rather be hiking than staring at logs today.", "Never mind, it was a stale cache.",
                 "My neighbour always mows the lawn during my calls.",
                 "Going forward I'm blocking Friday mornings for deep work, wish me luck.",
                 "Don't even ask about the traffic this morning.", "I must stop snacking while debugging.",
                 "Keep your fingers crossed for the demo.",
                 "I prefer the old office, the new one has no windows.",
                 "I always think of the fix in the shower.", "Can't believe it's already Thursday."],
    },
    "one_off": {
        "dev": ["For this one, skip the prose and just paste the function.",
                "Just this once, skip the explanation, I'm in a hurry.",
                "Only for this snippet, use print so I can see it in the notebook."],
        "test": ["Just the code this time, please.", "Skip the long explanation for this one, I'm short on time.",
                 "For this quick test only, a print is fine so I can see it in the notebook."],
    },
    "question": {
        "dev": ["Should we always use UUIDs for primary keys?", "Do you think we should never delete rows, only "
                "mark them?"],
        "test": ["Is it better to always pin exact versions?", "Would you never use triggers in the database?"],
    },
    "quoted": {
        "dev": ["The old README says \"never run migrations on Fridays\", which made me laugh.",
                "My colleague left a comment: \"always close your cursors, people!\""],
        "test": ["Someone wrote \"always blame DNS\" on the whiteboard.",
                 "The previous contractor's notes say \"do not touch the cron file\"."],
    },
    "assistant": {
        "dev": ["I'd recommend always pinning your dependencies in requirements.txt.",
                "As a rule, never store secrets in the repository.",
                "You should always run migrations inside a transaction."],
        "test": ["I'd suggest always reviewing the migration SQL before running it.",
                 "Never commit the .env file, keep an example file instead.",
                 "It's worth always writing a failing test before fixing a bug like this."],
    },
}

ONE_OFF_EFFECT = {  # what the reply does for that message only
    "For this one, skip the prose and just paste the function.": "code_only",
    "Just the code this time, please.": "code_only",
    "Just this once, skip the explanation, I'm in a hurry.": "code_only",
    "Skip the long explanation for this one, I'm short on time.": "code_only",
    "Only for this snippet, use print so I can see it in the notebook.": "print",
    "For this quick test only, a print is fine so I can see it in the notebook.": "print",
}

QUESTION_ANSWER = {
    "Should we always use UUIDs for primary keys?":
        "On UUIDs: not always. An integer identity column is smaller and faster to index; UUIDs pay off when ids "
        "are created on several machines or must not be guessable in URLs.",
    "Do you think we should never delete rows, only mark them?":
        "On soft deletes: they are handy for auditing, but every query then needs the extra filter. A separate "
        "archive table is often the cleaner compromise.",
    "Is it better to always pin exact versions?":
        "On pinning: pin exact versions in the deployed application (a lock file), and keep ranges in a library "
        "you publish; that gives reproducible installs without fighting every user's environment.",
    "Would you never use triggers in the database?":
        "On triggers: I'd keep them for things that must hold whatever client writes to the table (an updated_at "
        "column, an audit row), not for business logic, which is easier to test in the application.",
}
