"""What the user asks and the assistant explains in :mod:`.make_standing`'s chats, by kind of task.

Placeholders: ``{E}``/``{Es}`` an entity and its plural (``bike``/``bikes``), ``{C}`` its class, ``{T}`` its
table, ``{f}`` its key field, ``{n}`` a numeric field, ``{d}`` its date field, ``{P}`` the project, ``{db}`` the
database, ``{fw}`` the web framework, ``{mate}`` a colleague of the user.
"""

from __future__ import annotations

KINDS: dict[str, dict[str, list[str]]] = {
    "schema": {
        "ask": ["Can you sketch the table for {Es}? We need {f}, {n} and when it was {d_h}.",
                "I'm adding {Es} to {P}; what should the table look like?",
                "What's a sensible schema for storing {Es}? I keep going back and forth on the columns.",
                "Let's model {Es} in the database. Which columns and indexes would you start with?"],
        "intro": ["Here's a table for {Es} that covers what you described, with a couple of choices worth "
                  "explaining.",
                  "A straightforward shape works well here; the main decisions are the key and the index on {d}.",
                  "Let's keep the {T} table boring on purpose: boring tables are the ones that survive years of "
                  "changes."],
        "body": ["I used a surrogate integer key rather than making {f} the primary key. Natural keys look "
                 "tempting, but the day someone mistypes a {f} and has to correct it, every row that refers to "
                 "the {E} has to change too. With a surrogate key only one column changes, and the uniqueness of "
                 "{f} is still enforced by its own constraint.",
                 "Money goes into an integer column in the smallest unit (cents), never a float. Floats cannot "
                 "represent most decimal amounts exactly, and the rounding errors show up in totals at the worst "
                 "possible moment, usually a month-end report. Formatting to two decimals belongs in the display "
                 "layer.",
                 "The index on {d} is there because almost every screen in {P} will ask for recent {Es}: the "
                 "latest ones first, or everything since a date. Without it, each of those queries reads the "
                 "whole table, which is fine with a thousand rows and painful with a million.",
                 "I added a created_at column with a default even though you didn't ask for one. It costs almost "
                 "nothing, and the first time something odd shows up in the data, knowing when each row arrived "
                 "is the first thing you'll want. The database fills it in, so the application cannot forget.",
                 "NOT NULL is on almost every column. It is much easier to relax a constraint later than to clean "
                 "up a year of half-filled rows, and it pushes missing data errors to the moment of the insert, "
                 "where the code that caused them is still on the stack."],
        "bullets": ["keep column names lower_snake_case so nobody has to quote them",
                    "add foreign keys as soon as a second table refers to {Es}",
                    "write the migration as a file in the repository, not by hand in a console",
                    "put a CHECK constraint on {n} if negative values make no sense",
                    "decide now whether deleted {Es} disappear or get archived",
                    "index only what queries actually filter or sort on",
                    "keep the DDL and the {C} class next to each other so they change together"],
        "tldr": ["an integer key, NOT NULL columns, {n} in cents and an index on {d}.",
                 "a plain table with a surrogate key and one index on {d}."],
        "next": ["run the migration on a copy of the data first", "add the {C} class that maps a row",
                 "write one test that inserts and reads back a {E}"],
    },
    "model": {
        "ask": ["Can you write the {C} class that maps a row of {T}?", "I need a Python model for {Es}, something "
                "lighter than an ORM.", "What should the {C} dataclass look like?",
                "Let's have a proper class for {Es} instead of passing dicts around."],
        "intro": ["Here's a {C} dataclass that maps one row of {T}, plus a constructor from a database row.",
                  "A dataclass is the right weight for this: typed fields, a readable repr and no magic.",
                  "This keeps the mapping between the table and Python in one place."],
        "body": ["The from_row constructor is the only place that knows how the database returns a row. When the "
                 "driver changes, or a column is renamed, there is exactly one function to touch, and every caller "
                 "keeps working with a {C} object with proper attribute names instead of string keys.",
                 "I gave the class a small is_recent helper because several of the screens we discussed filter "
                 "by age. Putting that logic on the model keeps the comparison consistent: everywhere in {P}, "
                 "'recent' then means the same thing, and it is one line to change if the definition moves.",
                 "The id is optional because a {C} that has not been saved yet has no id. Some people use two "
                 "classes for that, a 'new' one and a 'stored' one, which is stricter but doubles the code; for a "
                 "project of this size the optional id is the better trade.",
                 "The tags list uses field(default_factory=list) rather than a plain empty list as the default. A "
                 "mutable default would be shared by every instance, which is one of Python's classic traps: add "
                 "a tag to one {E} and it appears on all of them.",
                 "I kept validation out of the class on purpose. The model describes what a {E} is; checking "
                 "what a user typed is a separate job, and mixing them makes both harder to test. The validator "
                 "can return a clean dict that goes straight into the constructor."],
        "bullets": ["keep the field order the same as the table's columns", "add __slots__ if you create "
                    "millions of them", "make it frozen=True if nothing should change a loaded {E}",
                    "resist adding database calls to the class itself", "give {n} a unit in its name",
                    "convert {d} once, at the boundary, never in templates"],
        "tldr": ["a dataclass with a from_row constructor and one helper.",
                 "one dataclass, one constructor, no ORM."],
        "next": ["use {C} in the list endpoint", "add a to_dict for the JSON responses",
                 "cover from_row with a test using a real row"],
    },
    "query": {
        "ask": ["How do I fetch the {Es} added since a given date, newest first?",
                "I need a function returning recent {Es} with a limit. Can you write it?",
                "The {Es} page needs everything changed after a timestamp; what's the cleanest query?",
                "Can you write the lookup for {Es} by date, with paging?"],
        "intro": ["Here's a function for the recent {Es}, with the query parameterised and the limit enforced.",
                  "This is a small function, but there are two details worth getting right: parameters and the "
                  "order of the results.",
                  "The query itself is simple; most of the value is in keeping it safe and predictable."],
        "body": ["The date and the limit go in as parameters, never formatted into the SQL string. Besides "
                 "closing the door on injection, it lets the database reuse the query plan, and it avoids every "
                 "quoting problem with dates and time zones, since the driver converts the values itself.",
                 "Ordering by {d} descending matches what the screen shows, and together with the index on {d} "
                 "the database can read just the newest rows instead of sorting the whole table. If two {Es} share "
                 "the same timestamp, add id as a tie-breaker so paging never shows a row twice.",
                 "The limit has a default so that a caller who forgets it gets a sensible page rather than the "
                 "entire table. When {P} grows, an unbounded query is the classic way a page that was instant in "
                 "development starts timing out in production.",
                 "For paging beyond the first page I'd use the last {d} seen (keyset paging) rather than OFFSET. "
                 "OFFSET makes the database walk past every skipped row, so page 200 is much slower than page 1; "
                 "keyset paging costs the same on every page.",
                 "The function returns plain rows so it stays easy to test; turning them into {C} objects can "
                 "happen one level up. Keeping database access thin like this makes it obvious where the SQL "
                 "lives when something is slow."],
        "bullets": ["add id to the ORDER BY as a tie-breaker", "keep the SQL in one module per table",
                    "log the query time when it is above a threshold", "never build SQL with f-strings",
                    "return an empty list, not None, when nothing matches", "test the boundary date itself"],
        "tldr": ["a parameterised query ordered by {d} with a default limit.",
                 "one query, parameters, newest first, bounded."],
        "next": ["switch the page to keyset paging", "add the tie-breaker on id", "cover the limit in a test"],
    },
    "endpoint": {
        "ask": ["Can you add an endpoint that lists {Es} and one that creates them?",
                "The front end needs GET and POST for {Es}. What would that look like in {fw}?",
                "Let's expose {Es} over the API. Can you write the routes?",
                "I need the {Es} routes: list with a limit and create with validation."],
        "intro": ["Here are the two routes for {Es}, with the limit capped and errors mapped to proper status "
                  "codes.",
                  "In {fw} this stays short; the interesting part is what happens with bad input.",
                  "These routes are thin on purpose: they parse, call the functions we already have, and answer."],
        "body": ["The list route caps the limit at 500. A client asking for a hundred thousand rows should get an "
                 "error or a page, not a worker stuck serialising JSON for ten seconds while every other request "
                 "waits behind it.",
                 "Creation returns 201 with the new id, and validation errors come back as 4xx with a message that "
                 "says which field is wrong. The front end can show that message as it is, which saves a round of "
                 "'what does error 500 mean' messages from users.",
                 "The routes call the same functions as the rest of {P} instead of running SQL directly. That keeps "
                 "one path to the data, so a fix in the query function fixes the API, the CLI and the reports at "
                 "the same time.",
                 "Database connections come from a helper rather than being opened in each route. In tests you can "
                 "swap that helper for one that returns a connection to a throwaway database, which is much simpler "
                 "than mocking the driver.",
                 "I would not add authentication inside these functions. When we get to API keys, that belongs in "
                 "a dependency or a decorator applied to the whole router, so it cannot be forgotten on the next "
                 "route someone adds."],
        "bullets": ["version the API path before the first external client", "return lists under a key if you "
                    "expect metadata later", "log the id of each created {E}", "keep request models separate from "
                    "the table class", "document the limit in the OpenAPI description", "add a test per status code"],
        "tldr": ["two thin routes, a capped limit and 4xx errors for bad input.",
                 "GET with a bounded limit, POST returning 201 and the id."],
        "next": ["add the routes to the app factory", "write a test for the 400 case", "add paging to the list"],
    },
    "tests": {
        "ask": ["Can you write tests for {Es}_since?", "I'd like some tests around the {E} lookup before I refactor.",
                "What tests would you write for the recent-{Es} function?",
                "Please add tests for fetching {Es} by date."],
        "intro": ["Here are tests for the recent-{Es} function: one for the cut-off, one for the limit.",
                  "Two focused tests catch most of what can go wrong with this function.",
                  "These tests use a real database rather than mocks, which keeps them honest."],
        "body": ["The fixture inserts three {Es} a day apart, so the cut-off in the test has rows on both sides "
                 "of it. A test with a single row passes even when the comparison is the wrong way round, which "
                 "is exactly the bug we want to catch.",
                 "I test against a real database (an in-memory one or a throwaway schema) instead of mocking the "
                 "driver. A mock only checks that the code calls what you expected it to call; a real database "
                 "checks that the SQL is valid and returns what you think.",
                 "The limit test covers 0, 1 and 2. Zero is the edge that most often breaks: some drivers treat "
                 "LIMIT 0 as 'no limit', and it is better to find out in a test than from a user who sees the "
                 "whole table.",
                 "Each test checks one behaviour and has a name that says which. When one fails in CI six months "
                 "from now, the name should tell whoever reads the log what broke without opening the file.",
                 "Time is the usual source of flaky tests here. Building the data relative to 'now' and comparing "
                 "with a generous margin avoids tests that fail at midnight or on the day the clocks change."],
        "bullets": ["run the tests in random order now and then", "keep fixtures small and local to the module",
                    "avoid sleeping in tests; pass times in", "test the empty case too",
                    "name tests after the behaviour, not the function", "use a fresh database per test"],
        "tldr": ["two tests: the cut-off with rows on both sides, and the limit.",
                 "real-database tests for the cut-off and the limit."],
        "next": ["run them in CI", "add a test for the empty table", "check coverage of the module"],
    },
    "export": {
        "ask": ["Finance wants all {Es} as a CSV. Can you write the export?",
                "I need to dump {Es} into a file for a spreadsheet; what's the easiest way?",
                "Can we get a monthly export of {Es} for the accountant?",
                "Write me an export of the {T} table to CSV."],
        "intro": ["Here's an export of every {E} to CSV, streaming the rows so memory stays flat.",
                  "A CSV export is short to write, but a few details decide whether the file opens cleanly.",
                  "This writes the file in one pass and returns its path, so the caller can attach or upload it."],
        "body": ["The rows are written as they come from the database rather than loaded into a list first. For "
                 "a few thousand {Es} it makes no difference, but an export is exactly the kind of job that keeps "
                 "working for years while the table grows, and streaming means it never runs out of memory.",
                 "Opening the file with newline='' matters on Windows: without it the csv module's line endings get "
                 "translated twice and every row is followed by a blank line in Excel. It is one of those details "
                 "that looks fine on the developer's machine and confuses the person who actually opens the file.",
                 "The header row comes from the same column list as the query, so they cannot drift apart. If "
                 "someone adds a column to the export later, the header follows automatically.",
                 "UTF-8 is explicit because the default encoding differs between machines. Names with accents are "
                 "common in {Es}, and an export that turns them into question marks only on the accountant's "
                 "laptop is a frustrating bug to track down.",
                 "For the amounts, the spreadsheet will want decimal currency rather than cents. I'd keep cents in "
                 "the database and convert only in the export, so every other part of {P} keeps exact integers."],
        "bullets": ["put the date in the file name", "write to a temporary name and rename at the end",
                    "keep the column order stable between months", "quote every field if names contain commas",
                    "log how many rows were written", "zip the file if it goes by email"],
        "tldr": ["stream the rows into a CSV with a header and explicit UTF-8.",
                 "a one-pass CSV export that returns the file's path."],
        "next": ["schedule it for the first of the month", "send the file to finance automatically",
                 "add a test that reads the file back"],
    },
    "validation": {
        "ask": ["Can you write a validator for incoming {E} data?", "Users keep submitting broken {Es}; how "
                "should we validate them?", "I want every {E} checked before it's saved. What would you write?",
                "Let's add input validation for {Es}."],
        "intro": ["Here's a validator that returns a clean dict or raises one error listing every problem.",
                  "Collecting all the problems at once makes for a much better form than failing on the first.",
                  "This checks and normalises the input in one pass."],
        "body": ["The validator collects every problem before raising, instead of stopping at the first one. A "
                 "user who gets 'name is empty', fixes it, and then gets '{n} must be a number' will not be happy; "
                 "one message with both saves a round trip.",
                 "It returns a cleaned dict rather than just saying yes or no: strings stripped, numbers converted, "
                 "dates parsed. Everything after the validator can then trust the types, which removes a whole "
                 "category of defensive checks scattered through {P}.",
                 "The error is a subclass of ValueError so callers that already catch ValueError keep working, and "
                 "the API layer can turn it into a 422 with the message attached.",
                 "Dates are parsed with fromisoformat, which accepts the formats browsers and most APIs send. If "
                 "the front end ever sends something else, it fails loudly here instead of storing a string that "
                 "breaks a report three weeks later.",
                 "I kept business rules that need the database (like 'this {f} already exists') out of the "
                 "validator. Those checks belong next to the insert, ideally enforced by a constraint, because "
                 "between the check and the insert another request can sneak in."],
        "bullets": ["reuse the validator in the API and the import script", "return field names the form can map",
                    "test each rule with one bad field at a time", "strip whitespace before checking emptiness",
                    "keep messages short and specific", "reject unknown fields if the API is public"],
        "tldr": ["validate everything at once and return clean, typed data.",
                 "one pass: clean the fields, collect every problem, raise once."],
        "next": ["wire it into the create route", "add tests for each rule", "use it in the CSV import too"],
    },
    "retry": {
        "ask": ["The supplier's API fails now and then. Can you write a fetch with retries?",
                "How should we call the external service so a blip doesn't break the import?",
                "Write me an HTTP helper with backoff for the price feed.",
                "Their server returns 503 a few times a day; what's a robust way to fetch from it?"],
        "intro": ["Here's a small fetch helper with exponential backoff that only retries what is worth retrying.",
                  "Retries are easy to get subtly wrong; this version is conservative.",
                  "This wraps the call so the import survives the supplier's bad minutes."],
        "body": ["Only some failures are retried: connection errors and the status codes that mean 'try again' "
                 "(429 and the 50x gateway errors). A 404 or a 400 will not fix itself, and retrying it just "
                 "delays the error and hammers their server.",
                 "The delay doubles each time, 1, 2, 4 seconds. That is enough to ride out a restart on their side "
                 "without making a user wait for minutes. If this runs in a background job, you can afford a "
                 "larger cap, but keep it bounded.",
                 "Every attempt has a timeout. Without one, a connection that hangs never returns and the retry "
                 "logic never even gets a chance; a hanging import is much harder to notice than a failed one.",
                 "When all attempts fail, the helper raises with the last error chained. The traceback then shows "
                 "both 'giving up' and the real cause, which is what you need when you look at it the next "
                 "morning.",
                 "If the supplier sends a Retry-After header with the 429, honour it instead of your own delay. "
                 "Some APIs ban clients that ignore it, and it is one line to add once you see it in their "
                 "responses."],
        "bullets": ["add jitter if many workers retry at once", "log each failed attempt with its status",
                    "cap the total time, not just the attempts", "never retry non-idempotent POSTs blindly",
                    "make the timeout configurable", "record how often retries happen"],
        "tldr": ["retry only transient failures, with timeouts and doubling delays.",
                 "a bounded, backing-off fetch that gives up with the real cause."],
        "next": ["use it in the import job", "add a metric for retries", "ask the supplier about rate limits"],
    },
    "config": {
        "ask": ["How should we handle settings? Right now they're hard-coded all over the place.",
                "Can you write a settings loader that reads environment variables?",
                "I want the database URL and friends out of the code. What's a clean way?",
                "Let's centralise configuration for {P}."],
        "intro": ["Here's a settings loader that reads the environment once and fails early when something "
                  "essential is missing.",
                  "One frozen object with every setting, loaded at start-up, keeps configuration boring.",
                  "This moves every setting into one place with types and defaults."],
        "body": ["The loader refuses to start without DATABASE_URL. It is much better for the service to stop with "
                 "a clear message at start-up than to start with a default that points at the wrong database, "
                 "which is how test data ends up in production.",
                 "Settings is frozen, so nothing can change a setting halfway through a request. Code that needs a "
                 "different value in a test builds its own Settings object instead of patching globals.",
                 "Values are converted to their types in the loader: the page size becomes an int, debug becomes a "
                 "bool. Environment variables are always strings, and 'DEBUG=false' being truthy is a classic "
                 "surprise if the conversion happens ad hoc.",
                 "I'd keep a .env.example in the repository listing every variable with a harmless value. New "
                 "people on {P} can copy it and start, and it documents what the service needs without anyone "
                 "having to read the code.",
                 "Secrets stay in the environment (or the host's secret store), never in the repository. The "
                 "loader doesn't care where they come from, which keeps that decision out of the code."],
        "bullets": ["load settings once, in main", "pass Settings down rather than importing a global",
                    "print the non-secret settings at start-up", "keep defaults safe for development only",
                    "document each variable in .env.example", "validate ranges as well as presence"],
        "tldr": ["one frozen Settings object from the environment, failing early.",
                 "environment variables, typed, loaded once at start-up."],
        "next": ["add .env.example", "replace the hard-coded values", "load settings in the tests explicitly"],
    },
    "logging": {
        "ask": ["Can you set up logging for the app properly?", "Our output is a mess of prints. How should "
                "logging be configured?", "I want logs in a file that doesn't grow forever; how?",
                "What's a good logging setup for {P}?"],
        "intro": ["Here's a logging setup with a console handler and a rotating file, configured once at start-up.",
                  "A dozen lines of configuration in one place, and every module just asks for its logger.",
                  "This gives you readable logs now and bounded disk use later."],
        "body": ["The file handler rotates at about a megabyte and keeps five files. A log that grows forever "
                 "eventually fills the disk, usually on the night something loops, which is exactly when you "
                 "need the machine to keep working.",
                 "The format includes the time, level and logger name. The name tells you which module wrote the "
                 "line, which is what you need when two parts of {P} log similar messages.",
                 "Noisy libraries like urllib3 are set to WARNING. Their debug output drowns everything else, and "
                 "you can always turn them back up for one session when you're chasing a network problem.",
                 "Every module gets its own logger with logging.getLogger(__name__). Configuration happens once, "
                 "at start-up; modules never add handlers themselves, or you end up with duplicated lines.",
                 "Log messages use %-style arguments rather than f-strings, so the formatting only happens if the "
                 "line is actually emitted, and tools that group log lines can see the template."],
        "bullets": ["log exceptions with logger.exception to keep the traceback", "keep secrets out of messages",
                    "use DEBUG for detail, INFO for events", "add a request id once there are concurrent users",
                    "don't log inside tight loops", "make the level configurable"],
        "tldr": ["one start-up function: console plus a rotating file, named loggers everywhere.",
                 "configure logging once; modules only call getLogger."],
        "next": ["call setup_logging in main", "replace the remaining ad hoc output", "set the level from settings"],
    },
    "cache": {
        "ask": ["The {E} counts are computed on every page load. Can we cache them?",
                "Can you write a small cache for the dashboard numbers?",
                "How would you cache the {Es} totals for a minute or so?",
                "The stats query is slow; is a simple cache enough?"],
        "intro": ["Here's a small time-based cache decorator, applied to the {E} count.",
                  "A sixty-second cache takes almost all the load off that query.",
                  "For numbers that can be a minute old, a tiny in-process cache is plenty."],
        "body": ["Entries expire after a fixed time rather than being invalidated on every write. For a dashboard, "
                 "a count that is up to a minute old is fine, and it avoids the much harder problem of knowing "
                 "every place that changes {Es}.",
                 "It uses time.monotonic, not the wall clock. If the server's clock is corrected by NTP, a cache "
                 "based on wall time can keep an entry forever or throw everything away at once.",
                 "The cache lives in the process. With several workers each has its own copy, which means a few "
                 "more queries than strictly needed but no extra infrastructure. A shared cache only becomes "
                 "worth it when the query is expensive and the workers are many.",
                 "I added cache_clear so tests can start from an empty cache. Caches are a common source of "
                 "tests that pass alone and fail together, because one test's cached value leaks into the next.",
                 "Arguments form the cache key, so counts for different days are cached separately. If you ever "
                 "pass unhashable arguments like lists, convert them to tuples first."],
        "bullets": ["measure before and after", "keep the time-to-live in settings", "clear the cache in tests",
                    "don't cache per-user data in a shared cache", "watch memory if keys are unbounded",
                    "prefer fixing a slow query over hiding it"],
        "tldr": ["a sixty-second in-process cache on the count.",
                 "cache the count for a minute; clear it in tests."],
        "next": ["apply it to the other dashboard numbers", "check the query plan anyway",
                 "add the TTL to the settings"],
    },
    "cli": {
        "ask": ["Can you write a command-line tool to list and export {Es}?",
                "I want to run the export from a terminal; what should the CLI look like?",
                "Let's add a small CLI for the admin tasks on {Es}.",
                "What's a clean way to add subcommands for {Es}?"],
        "intro": ["Here's a small command-line entry point with two subcommands, using argparse.",
                  "argparse's subparsers give you a tidy interface without any extra package.",
                  "This puts the admin tasks behind one command with clear subcommands."],
        "body": ["main takes argv as a parameter and returns an exit code. That makes it trivial to test: call "
                 "main(['list', '--days', '3']) and check the result, no subprocess needed.",
                 "Each subcommand gets its own parser, so --help shows only the options that apply. With one flat "
                 "parser, people end up passing --days to the export and wondering why nothing changes.",
                 "The list command prints tab-separated output, which pipes cleanly into other tools and pastes "
                 "into a spreadsheet. Pretty tables are nice for humans but painful to process.",
                 "Exit codes matter when this runs from cron or CI: 0 for success and non-zero for failure, so "
                 "whatever scheduled it can notice and alert.",
                 "The CLI reuses the same functions as the web app. It should never have its own copy of a query; "
                 "two copies drift, and then the numbers in the terminal and on the page disagree."],
        "bullets": ["add a --dry-run to anything that writes", "keep output machine-readable by default",
                    "register it as a console script in pyproject", "test main with argv lists",
                    "make errors go to stderr", "add a --verbose flag tied to the log level"],
        "tldr": ["argparse with two subcommands; main(argv) returns an exit code.",
                 "a testable CLI: subcommands, tab-separated output, exit codes."],
        "next": ["add it to pyproject's scripts", "write two tests for main", "document it in the README"],
    },
    "job": {
        "ask": ["We need a nightly job that archives old {Es}. How would you write it?",
                "Can you write a scheduled task that cleans up stale {Es}?",
                "What's a simple way to run the archiving every night?",
                "I want old {Es} moved to an archive table automatically."],
        "intro": ["Here's a small scheduler loop and the archiving task it runs.",
                  "The job is two parts: a loop that runs tasks on time, and the task itself.",
                  "This archives old {Es} in one transaction so nothing is lost halfway."],
        "body": ["The loop sleeps for the rest of the interval rather than a full interval after each run. "
                 "Otherwise every run starts a little later than the previous one, and after a few weeks the "
                 "nightly job runs in the middle of the morning.",
                 "A failing run is logged and the loop continues. One bad night (a locked table, a full disk) "
                 "should not stop archiving for good; you'll see the error and the next run tries again.",
                 "Copying to the archive and deleting happen in the same transaction. If the process dies between "
                 "the two statements, the database rolls back and no {E} is lost or duplicated.",
                 "If you already have cron or a systemd timer on the machine, you can drop the loop and run the "
                 "task directly; the loop is there for environments where nothing else schedules work.",
                 "The cut-off is computed in the task, not passed from outside, so it always means 'a year before "
                 "now' at the moment the job runs."],
        "bullets": ["make the task safe to run twice", "log how many rows moved", "add an alert if it fails two "
                    "nights in a row", "run it off-peak", "batch the delete if the table is large",
                    "test it against a copy of production data"],
        "tldr": ["a drift-free loop and an archiving task in one transaction.",
                 "archive and delete together, once a night, failures logged."],
        "next": ["decide between the loop and a systemd timer", "create the archive table", "test a rerun"],
    },
    "auth": {
        "ask": ["The partners need API keys. How should we generate and check them?",
                "Can you write the API key helpers?", "What's a safe way to handle API keys for {P}?",
                "We need simple key-based auth for the integration."],
        "intro": ["Here are helpers to create, store and check API keys without ever storing the key itself.",
                  "Keys are shown once and only their hash is stored, like passwords but simpler.",
                  "This keeps the keys secret even from someone who reads the database."],
        "body": ["Only a SHA-256 hash of each key is stored. API keys are long and random, so a plain hash is "
                 "enough (unlike passwords, which need a slow hash because people choose weak ones). If the "
                 "database leaks, the keys are still safe.",
                 "The comparison uses hmac.compare_digest, which takes the same time whether the first byte or "
                 "the last one differs. A normal == comparison can leak, through timing, how much of a guess was "
                 "right.",
                 "The first eight characters act as a lookup prefix, so you can find the key's owner with an "
                 "index instead of hashing against every row. The prefix alone is useless to an attacker.",
                 "secrets.token_urlsafe gives 32 random bytes from the operating system's generator. random is "
                 "never suitable for anything that protects access.",
                 "Plan for rotation from day one: allow two active keys per partner, so they can switch to a new "
                 "one before the old one is revoked, without downtime."],
        "bullets": ["show the key once, at creation", "log the prefix, never the key", "expire unused keys",
                    "rate-limit failed attempts", "scope keys to what each partner needs", "record last use"],
        "tldr": ["random keys, stored hashed, checked in constant time.",
                 "hash on store, compare_digest on check, prefix for lookup."],
        "next": ["add the keys table", "protect the partner routes", "write the rotation procedure"],
    },
    "debug": {
        "ask": ["I'm getting this error:\n\n{tb}", "This blew up in production last night:\n\n{tb}",
                "Any idea what's going on here?\n\n{tb}", "Stuck on this one:\n\n{tb}"],
        "intro": ["This is {err_low}: {cause}.", "The traceback points at {cause}.",
                  "Good news, this one is simple: {cause}."],
        "body": ["The line in the traceback is where the error surfaced, not necessarily where it started. Here "
                 "the data that reached that line was already wrong, so the fix belongs a step earlier, where "
                 "the value is produced.",
                 "I'd add a test that reproduces it before changing anything. It takes five minutes, proves the "
                 "fix works, and guarantees the bug stays fixed when someone refactors this module next year.",
                 "Errors like this usually show up after a refactor that moved code between modules. Running the "
                 "test suite and a linter after each move catches most of them before they reach production.",
                 "Once it is fixed, it is worth checking the logs for how often it happened. If it has been failing "
                 "quietly for days, some {Es} may be missing or duplicated and need a one-off repair.",
                 "The change below handles it where it starts, so callers do not need to know about the special "
                 "case."],
        "bullets": ["add a regression test", "check the logs for earlier occurrences", "repair affected rows",
                    "run the linter in CI", "add the case to the error handling docs", "review similar code"],
        "tldr": ["{cause}; the fix is below.", "it's {cause}, fixed at the source."],
        "next": ["apply the fix", "add the regression test", "check for affected data"],
    },
    "review": {
        "ask": ["Could you review this before I commit it?\n\n{code}",
                "{mate} wrote this and I'm not sure about it:\n\n{code}",
                "Does this look right to you?\n\n{code}", "Quick review please:\n\n{code}"],
        "intro": ["It works, but a few changes would make it safer and easier to maintain.",
                  "The idea is right; the details need some tightening.",
                  "Mostly fine. Three things I'd change before committing."],
        "body": ["The main problem is that errors are silently swallowed. If a row is malformed, the function "
                 "returns partial results with no sign that anything went wrong, which is the hardest kind of bug "
                 "to notice: the numbers are just a bit off.",
                 "The SQL is built with string formatting. Even if the values come from our own code today, that "
                 "changes the day someone passes user input through, and then it is an injection hole. Parameters "
                 "cost nothing.",
                 "The function does three things: fetches, transforms and writes. Splitting it into three small "
                 "functions makes each testable and lets the export reuse the transformation.",
                 "Names like data and tmp don't say what they hold. Renaming them to what they are ({Es}, rows, "
                 "totals) makes the next reader's life much easier, including yours in three months.",
                 "There is no test for it yet; I'd add one before merging, since this is exactly the kind of code "
                 "that breaks quietly."],
        "bullets": ["don't catch bare Exception", "use parameters in SQL", "split fetch, transform and write",
                    "rename the vague variables", "add a test", "return early on empty input"],
        "tldr": ["fine idea; stop swallowing errors and use SQL parameters.",
                 "split it up, parameterise the SQL, add a test."],
        "next": ["apply the changes", "add a test", "ask {mate} to look again"],
    },
    "deploy": {
        "ask": ["How should we deploy {P}?", "Can you write a Dockerfile for the app?",
                "What's the simplest way to ship this to the server?",
                "I need the app running on the machine in the office; where do I start?"],
        "intro": ["Here's a small Dockerfile and the commands to build and run it.",
                  "A slim image, a non-root user and a restart policy cover most of what matters.",
                  "Containers make the server side of this repeatable."],
        "body": ["The image is based on the slim Python image: no compilers, much smaller, and fewer packages to "
                 "patch. If a dependency ever needs to compile something, use a build stage rather than shipping "
                 "the compiler.",
                 "The app runs as an unprivileged user. If something goes wrong in the app, the damage stays "
                 "inside the container's app directory instead of the whole filesystem.",
                 "Requirements are installed before the code is copied, so rebuilding after a code change reuses "
                 "the cached dependency layer and takes seconds instead of minutes.",
                 "The restart policy brings the service back after a crash or a reboot. Combined with logs going "
                 "to stdout, the container runtime takes care of most of what a process supervisor would do.",
                 "Configuration comes in through environment variables at run time, never baked into the image, "
                 "so the same image runs in testing and production."],
        "bullets": ["tag images with the git commit", "keep a .dockerignore", "back up the database volume",
                    "health-check the container", "pin the base image's minor version", "test a restore"],
        "tldr": ["a slim image, a non-root user, a restart policy.",
                 "build once, configure with environment variables, restart automatically."],
        "next": ["build the image on the server", "set up the backup", "write the restore instructions"],
    },
    "ci": {
        "ask": ["Can you set up CI to run the tests?", "What should the GitHub Actions workflow look like?",
                "I want the tests to run on every push. How?", "Let's get continuous integration going."],
        "intro": ["Here's a workflow that runs the tests on every push and pull request.",
                  "A short workflow file is enough to start; it can grow later.",
                  "This runs the suite automatically so nothing merges untested."],
        "body": ["The workflow runs on pushes and pull requests, so a broken change shows up before it is merged "
                 "rather than after. Make the check required on the main branch once it is stable.",
                 "Dependencies come from a separate requirements-dev file with the test tools, so production "
                 "installs stay lean.",
                 "The Python version is pinned to what production runs. Testing on a newer version than you deploy "
                 "is how code using new syntax passes CI and fails on the server.",
                 "Keep the suite fast: a CI run that takes twenty minutes gets ignored. If some tests are slow, "
                 "mark them and run them nightly instead of on every push.",
                 "Caching pip's downloads between runs cuts the setup time noticeably once the dependency list "
                 "grows."],
        "bullets": ["make the check required", "cache pip downloads", "run the linter in the same workflow",
                    "fail fast on the first error locally", "keep secrets out of the workflow",
                    "add a badge to the README"],
        "tldr": ["one workflow: checkout, install, run the tests, on every push.",
                 "tests on push and pull requests, on the production Python."],
        "next": ["require the check on main", "add the linter step", "cache the dependencies"],
    },
    "concept": {
        "ask": ["Quick conceptual question: when should we use a transaction explicitly?",
                "What's the difference between a process and a thread for our background work?",
                "Should the {Es} totals be computed on the fly or stored?",
                "Is it worth adding an index on every foreign key?"],
        "intro": ["Short answer: it depends on how often the data changes compared with how often it is read.",
                  "Good one to settle early, because it shapes a lot of code later.",
                  "There's a rule of thumb here, with a couple of exceptions."],
        "body": ["The general rule is to make the simple thing correct first and the fast thing second. A value "
                 "computed on the fly is always right; a stored one is fast but has to be kept in sync, and every "
                 "place that forgets becomes a bug.",
                 "For {P}'s size, the database is nowhere near its limits. Most of the performance questions we will "
                 "meet are answered by an index or a better query, not by a different architecture.",
                 "When the trade-off is unclear, measure with realistic data. A copy of production (or a generated "
                 "table of the same size) and EXPLAIN ANALYZE answer most of these questions in minutes.",
                 "The cost of changing your mind later matters too. Adding a stored total later is a migration and "
                 "a backfill; removing one is a deletion. Start with the option that is cheaper to undo.",
                 "Concurrency is the other half: two requests updating the same {E} at once is where stored values "
                 "drift. If you store totals, update them in the same transaction as the rows they summarise."],
        "bullets": ["measure before optimising", "prefer correctness over speed at first",
                    "keep the option that is cheaper to undo", "use EXPLAIN on real data",
                    "write down the decision and why", "revisit when the data grows tenfold"],
        "tldr": ["compute on the fly until measurements say otherwise.",
                 "correct first, fast second, and measure in between."],
        "next": ["measure the current query", "write down the decision", "revisit at ten times the data"],
    },
    "planning": {
        "ask": ["What should we work on next?", "Can you help me plan the next couple of weeks?",
                "We've done a lot; what's left before a first release?",
                "I need to explain where we are to my manager. Can you help me structure it?"],
        "intro": ["Here's how I'd order what is left, roughly by risk.",
                  "Looking at what we've built, a few things stand out as worth doing before anything new.",
                  "Let's split what's left into must-have and nice-to-have."],
        "body": ["The riskiest remaining piece is anything that touches real data for the first time: the "
                 "import, the migration on production and the first backup restore. I'd do those early, while "
                 "there is still time to fix surprises.",
                 "Tests around {Es} are thin compared with the rest. Before adding features, a few tests on the "
                 "paths that handle money or deletions would make every later change safer.",
                 "Documentation can be small: how to run it, how to deploy it, what to do when it breaks. Those "
                 "three pages save hours the first time someone else has to look after {P}.",
                 "The nice-to-have list (the dashboard polish, the extra exports) can wait until people have used "
                 "the first version. Real use will reorder that list anyway.",
                 "For the update, concrete is better than complete: what works today, what is next, and what is "
                 "blocking. Numbers help, like how many {Es} are in the system or how long the export takes."],
        "bullets": ["test a backup restore", "run the migration on a copy of production", "write the runbook",
                    "add tests for money and deletion paths", "collect feedback from first users",
                    "defer polish until after the first release"],
        "tldr": ["do the risky data work first, then tests, then polish.",
                 "restore test, migration rehearsal, runbook; polish later."],
        "next": ["schedule the restore test", "rehearse the migration", "write the runbook"],
    },
}

CODE_FOR = {
    "schema": "ddl", "model": "model_class", "query": "query_func", "endpoint": "endpoint", "tests": "tests",
    "export": "csv_export", "validation": "validation", "retry": "retry_helper", "config": "config_loader",
    "logging": "logging_setup", "cache": "cache_helper", "cli": "cli", "job": "job", "auth": "auth",
    "deploy": "dockerfile", "ci": "ci_yaml", "review": "validation",
}

SECOND = {  # a second snippet some replies add, and how they lead into it
    "schema": ("model_class", "And the class that maps a row, so the two stay side by side:"),
    "model": ("ddl", "For reference, this is the table it maps:"),
    "query": ("tests", "And two tests that pin its behaviour down:"),
    "endpoint": ("query_func", "The routes lean on this query function:"),
    "tests": ("query_func", "For reference, this is the function under test:"),
    "export": ("cli", "If you want to run it by hand, a small entry point:"),
    "validation": ("tests", "Tests in the same spirit as the ones for the queries:"),
    "retry": ("config_loader", "The URL and timeouts can come from the settings:"),
    "config": ("logging_setup", "And the logging set-up that reads the level from those settings:"),
    "logging": ("config_loader", "The settings loader it pairs with:"),
    "cache": ("query_func", "The query behind the numbers, for reference:"),
    "cli": ("csv_export", "The export the CLI calls:"),
    "job": ("logging_setup", "So that the failures end up somewhere you will see them:"),
    "auth": ("endpoint", "And routes that would sit behind the key check:"),
    "review": ("tests", "And a test for the rewritten version:"),
    "debug": ("tests", "A regression test for it:"),
}

EXTRA = [
    "One more general point: small, frequent commits make this kind of change much easier to review and to "
    "revert. If something goes wrong after deploying, a commit that does one thing can be undone without "
    "untangling three other changes.",
    "It is also worth writing a line in the changelog or the project notes. In six months nobody will remember "
    "why {T} looks the way it does, and a sentence written today saves an afternoon of archaeology.",
    "If {mate} is going to maintain this part, walk them through it once. Code that only one person "
    "understands is a risk for {P}, however clean it is.",
    "I'd keep an eye on the logs for a few days after this goes live. Most problems with a change like this show "
    "up in the first week, usually with data nobody thought of while writing the tests.",
    "On naming: consistent names across the table, the class and the API save a surprising amount of confusion. "
    "If the table says {d}, the JSON should too, rather than a third spelling invented by the front end.",
    "Performance-wise this is fine for the sizes we've talked about. If {Es} ever reach millions of rows, the "
    "first thing to revisit is the index on {d}, then the page size, and only then anything more radical.",
    "Error messages deserve a bit of care here. Whoever sees them is usually in a hurry, so say what went wrong "
    "and what to do about it, and include the {E}'s {f} so they can find the row.",
    "Finally, think about what happens on the first run against real data: empty tables, missing values, "
    "names with odd characters. A quick dry run on a copy of production catches most of it.",
    "A word on reviews: even for a side project, having someone else read a change like this is worth it. "
    "Ask {mate} to look mostly at the edge cases; the happy path is usually fine, the odd rows are not.",
    "If this turns out to be slower than expected, measure before changing anything. Time the function with "
    "realistic data, look at the query plan, and only then decide whether it needs an index, a cache or a "
    "different approach altogether.",
    "Keep in mind that the {T} table will be read by more than this code sooner or later: a report, an export, "
    "somebody's spreadsheet. Clear column names and sensible types help every one of those readers.",
    "Documentation-wise, a short docstring saying what the function promises (and what it does not) is worth "
    "more than a long comment describing how it works; the how is in the code already.",
]

CONTEXT = [  # what users add about their situation
    "{mate} mentioned the {Es} page is slow on Monday mornings.", "We're expecting a few thousand {Es} by summer.",
    "The first real users start next month.", "{mate} will be the one maintaining it.",
    "We had a near miss with bad data last week.", "This part has grown a bit organically so far.",
    "{mate} will review whatever we come up with.", "The current version is a bit of a mess, honestly.",
    "I sketched something myself but I'm not happy with it.", "Nobody outside the team uses the {Es} part yet.",
    "Ideally this goes out before the end of the week.", "The old spreadsheet we're replacing had all of this.",
]

OPENERS = ["Thanks for the details, that helps.", "Sorry, I should have flagged that earlier.",
           "Good question!", "Apologies for the confusion in my last answer.", "Happy to help with this one.",
           "Thanks for sending the traceback."]
CLOSINGS = ["Let me know how it goes.", "Happy to go through any part of this in more detail.",
            "If you paste the output, I can take a look.", "Tell me if anything behaves differently on your side.",
            "Shout if the tests disagree with me."]
EMOJI = [" 🚀", " 🙂", " 🎉", " 👍"]

GREETINGS = ["Morning!", "Hi again.", "Back at it.", "Hey, quick session today.", "Hello!", "Evening.",
             "Right, where were we?", "Hi, I've got an hour before a meeting."]
FEEDBACK = ["That worked, thanks.", "The tests pass now.", "I tried your suggestion and it's much faster.",
            "Deployed it yesterday, no complaints so far.", "Got a bit stuck on the last part but figured it out.",
            "{mate} liked the approach.", "Merged it this morning.", "That fixed it.",
            "Makes sense, I've applied it.", "OK, that's in."]
SMALL_TALK = ["It's pouring here today.", "Third coffee of the morning.", "The office is empty because of the "
              "holiday.", "My laptop fan sounds like a jet engine.", "{mate} is off sick, so it's just me.",
              "Long week.", "The heating is broken again.", "I had a good run this morning.",
              "Lunch was terrible.", "The train was late again.", "It's finally sunny.",
              "We had a team lunch yesterday."]

FRENCH = {
    "intro": ["Voici une proposition pour les {Es}, avec quelques explications.",
              "D'accord, je réponds en français. Voici comment je ferais pour {P}.",
              "Bonne question. Voici une solution simple pour les {Es}.",
              "Voici le code, suivi de quelques remarques."],
    "body": ["Le point important, c'est de garder une seule fonction responsable de l'accès aux données. Si la "
             "requête change un jour, il n'y aura qu'un endroit à modifier, et les tests le couvriront.",
             "J'ai gardé les paramètres de la requête séparés du texte SQL. C'est plus sûr, et le pilote de la base "
             "de données s'occupe lui-même des dates et des guillemets.",
             "La limite par défaut évite qu'un appel oublié ne renvoie toute la table. Avec le temps, les {Es} vont "
             "s'accumuler, et une requête sans limite finit toujours par être lente.",
             "Pour les tests, je préfère une vraie base de données temporaire plutôt qu'une imitation du pilote : "
             "on vérifie ainsi que le SQL est valide et qu'il renvoie bien ce qu'on attend.",
             "Les montants restent en centimes dans la base, sous forme d'entiers. On ne convertit qu'au moment de "
             "l'affichage, ce qui évite les erreurs d'arrondi dans les totaux.",
             "Enfin, je journaliserais le nombre de lignes traitées : c'est la première chose qu'on veut savoir "
             "quand un chiffre semble bizarre."],
    "close": ["Dites-moi si quelque chose ne fonctionne pas comme prévu.", "N'hésitez pas si vous avez des "
              "questions.", "Je peux détailler n'importe quelle partie si besoin."],
    "tldr": ["En bref : une fonction simple, des paramètres, et une limite par défaut."],
    "next": ["tester sur une copie des données", "ajouter un test", "relire avec {mate}"],
}

REVIEW_CODE = """def load_{Es}(conn, since):
    data = []
    try:
        for r in conn.execute("SELECT * FROM {T} WHERE {d} > '%s'" % since):
            tmp = dict(r)
            tmp["{n}"] = tmp["{n}"] / 100
            data.append(tmp)
    except Exception:
        pass
    with open("out.csv", "w") as f:
        for d in data:
            f.write(",".join(str(v) for v in d.values()) + "\\n")
    return data"""
