"""Writes ``data/standing_dev.json`` and ``data/standing_test.json``: long project chats where the user says once
how things should be, revises or takes some of it back, and later asks for things that depend on it.

Run: ``python -m benchmarks.retention.make_standing``. Deterministic (seeded): the files in the repo are what this
script writes (``tests/benchmarks/test_make_standing.py`` regenerates them and compares bytes). No model is
involved. It ends with a self-check (:func:`check`), printed. The benchmark that drives these chats through real
sessions is :mod:`.standing`.

Each split has 8 chats between a user and an assistant about one software project (a bike shop's inventory API,
a greenhouse sensor pipeline, ...; dev and test have different projects, people, dates and seeds), discussed
over 12-20 dated sessions spread over several weeks: 114-136 exchanges and 60k-120k cl100k tokens per chat. The
first user message of a session starts with its date (``[9:40 am on 5 March, 2024] ``). The user asks for
tables, queries, endpoints, tests, exports, deployments, reviews, debugging help and plans; the assistant's
replies are long (explanations, code, lists of considerations) and follow the instructions in force at that
turn, as a good assistant's would (code fences tagged once the user asked for it, tabs once revised, French
between "answer in French from now on" and "you can go back to English", ...).

What the benchmark measures is planted like this (:mod:`.standing_items` has the texts and their definitions):

- **items** (9-10 per chat) stated in the first third, each one sentence inside a longer user message (feedback,
  the reason, the next request), in the forms people use: imperative ("Always format code with syntax
  highlighting, ..."), "from now on", "never", "I prefer", "please don't", "I'd rather you", "going forward",
  "make sure you", "keep answers under", "answer in French from now on", "we use PostgreSQL, not MySQL". Kinds:
  ``instruction`` (how to answer, ~4 a chat), ``preference`` (the project's choices, 3) and ``constraint``
  (facts of the project, 2-3);
- **revisions** (2 per chat, in the middle third): a later sentence replaces an item ("Actually, switch to tabs
  for indentation; ..." replaces "Use 4 spaces for indentation ..."); the replacement is an item of its own
  with ``revises`` set, the replaced one gets ``superseded_at``;
- **revocations** (1 per chat): "answer in French from now on" taken back a few exchanges later ("You can go back
  to English now, ...") or the TL;DR line dropped in the middle third; the item gets ``revoked_at`` and
  ``revoked_by`` (the sentence);
- **traps** (~14 per chat, all thirds): sentences that must never become standing, with the cue words of
  instructions: chit-chat ("Can't wait.", "I always forget my keys when ...", "I'd rather be sailing today,
  ha.", "Never mind, ..."), **one-off** requests ("For this one, just give me the code.": the reply does it,
  that turn only; they are NOT standing), questions ("Should we always use UUIDs for primary keys?"), quoted text
  (a README's "never run migrations on Fridays") and the assistant's own suggestions ("I'd recommend always
  pinning your dependencies ...", role ``assistant``);
- **probes** (7-8 per chat, in the last third): ordinary requests whose right answer depends on items stated
  long before ("Could you write the function that dumps all bikes into a CSV file for the accountant?" depends
  on the code-fence instruction), worded apart from them. ``depends_on``: the ids of the items (their latest
  revision) the probe was written for, in force at the probe; ``must_not_hold``: every version superseded or
  revoked before the probe (what the prompt must no longer carry as standing); ``expect``: what a right answer
  does. Every item in force in the last third is the dependency of at least one probe.

A chat's record: ``id``, ``project``, ``user``, ``sessions`` (``date_time``, ``first_turn``), ``turns``
(``id``, ``role``, ``content``; user and assistant alternate, one exchange per runtime turn), ``items`` (``id``,
``key``, ``kind``, ``turn``, ``message``, ``sentence``, ``revises``, ``superseded_at``, ``revoked_at``,
``revoked_by``, ``expect``), ``traps`` (``turn``, ``message``, ``role``, ``kind``, ``sentence``) and ``probes``
(``id``, ``turn``, ``message``, ``text``, ``depends_on``, ``must_not_hold``, ``expect``). ``turn`` is the
1-based exchange number: the runtime's turn number when the chat is sent turn by turn from the start.

**The held-out split** (``python -m benchmarks.retention.make_standing --holdout`` writes only
``data/standing_holdout.json``; dev and test are untouched): the recogniser was tuned while dev and test were in
view, so this third split is written apart from it: :mod:`.standing_holdout_items` has its own projects, people and
dates, its own items (other instructions, preferences and constraints: numbered lists, German, assumptions stated,
diffs, docstrings, file paths and SPDX headers on snippets, ISO dates, British spelling, ruff, uv, Typer, pydantic,
polars, MariaDB, systemd instead of Docker, ARM, a hosting budget, a deadline, EU data, no personal data in logs,
JSON logs, ...) in more grammatical forms (topic first, modal with a noun subject, verbless, in a list, after a
pasted snippet), revocations of several kinds, two more kinds of trap (``third_party``: instructions to someone
else; ``hypothetical``), and its own user side of the talk (requests, greetings, feedback, small talk); only the
assistant's explanations are shared. Same record format, sizes and self-check.

**The second blind split** (``--blind`` writes only ``data/standing_blind.json``; dev, test and the held-out split
are untouched): the held-out split was used for tuning in turn, so :mod:`.standing_blind_items` was written apart
from the recogniser again, with none of the earlier splits' wordings: new projects (a sailing club's berths, a
beekeeping cooperative, a choir's music library, a parking-permit system, ...), people and dates; new items (two
options then a recommendation, metric units, acronyms spelled out, an 80-column limit, doc links, confidence
ratings, keyword arguments, tests with every function, lowercase SQL, structlog, Alembic, Decimal, nox, Sentry, RQ,
Caddy, DuckDB, rich, offline use, an 18-month retention rule, WCAG, a maintenance window, a partner's rate limit,
an S3 bucket, Entra ID sign-in, an opening date, semicolon CSVs, an audit trail, old Safari, ...), a switch to
Spanish and back (its reply prose is the module's), new traps, acknowledgements and user talk. Same machinery
(:func:`choose_listed` serves both), record format, sizes and self-check.

**The third blind split, the test split** (``--blind2`` writes only ``data/standing_blind2.json``; the other four
files are untouched): the held-out and blind splits have both been used for tuning, so :mod:`.standing_blind2_items`
was written apart from the recogniser once more, and nobody tunes on it. None of the earlier splits' wordings: new
projects (a citizen-science bird count, a wedding-photography studio, a brewery's casks, a mountain hut, a tram
network's lost property, a repair café, ...), people and dates; new items (an informal tone, the takeaway in bold,
headings, line numbers in reviews, an example call per function, time estimates, one code block, abuse notes, no
lambdas, ``__main__`` guards, named constants, ASCII-only code, undo steps, attrs, orjson, tenacity, cron, factory_boy,
pyright, gunicorn, psycopg, cachetools, Protocols, a src layout, TOML settings, MkDocs, Jinja mail, AGPL, an e-ink
screen, PostgreSQL 12, guardian consent, no card data, IPv6 only, an SMS budget, a holiday freeze, barcode scanners,
town-level locations, a mail relay's cap, shared hosting, Welsh and English, an insurance group cap, ...), a switch
to Italian and back (its reply prose is the module's), new traps, acknowledgements and user talk. Same machinery,
record format, sizes and self-check; its chat ids are ``sx0``-``sx7``.

The self-check holds that: every sentence is in its message, once in the chat; items start in the first third,
revisions in the middle one, probes in the last; each probe's dependencies are in force at it and share under
60% of their content words (stemmed, stop words out) with the probe's text; a revision shares under half of its
content words with what it replaces; no trap holds 60% of an item's content words.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcana_jupyter.context.relevance import stems

from . import standing_blind2_items as sb2
from . import standing_blind_items as sb
from . import standing_code as sc
from . import standing_holdout_items as sh
from .standing_code import Entity, Style
from .standing_items import EXCLUSIVE, ITEM, ITEMS, ONE_OFF_EFFECT, QUESTION_ANSWER, TRAPS
from .standing_prose import (
    CLOSINGS,
    CODE_FOR,
    CONTEXT,
    EMOJI,
    EXTRA,
    FEEDBACK,
    FRENCH,
    GREETINGS,
    KINDS,
    OPENERS,
    REVIEW_CODE,
    SECOND,
    SMALL_TALK,
)

DATA = Path(__file__).parent / "data"
SEEDS = {"dev": 3901, "test": 4902, "holdout": 5903, "blind": 6904, "blind2": 7905}
N_CHATS = 8
SPLITS = ("dev", "test")
HOLDOUT = "holdout"
"""The blind held-out split (``--holdout``): :mod:`.standing_holdout_items`'s wordings, written without reading the
recogniser, its tests or its results; the same machinery, sizes and checks as dev and test."""
BLIND = "blind"
"""The second blind split (``--blind``): :mod:`.standing_blind_items`'s wordings, written after the held-out split had
been used for tuning, again without reading the recogniser; the same machinery, sizes and checks."""
BLIND2 = "blind2"
"""The third blind split (``--blind2``), the test split: :mod:`.standing_blind2_items`'s wordings, written after the
held-out and blind splits had both been used for tuning, without reading the recogniser; nobody tunes on it."""
CHAT_LETTER = {BLIND2: "x"}
"""A chat id is ``s``, a letter for the split (its first, unless given here) and the chat's index."""
EXCHANGES = (114, 136)
TOKENS = (60_000, 120_000)
HOLD = 0.6
"""A sentence is held by a text that has this share of its content words (the benchmark's threshold)."""

PY_VERSION = {"py39": {"dev": "3.9", "test": "3.8"}, "py39_revised": {"dev": "3.12", "test": "3.11"}}

E = Entity
PROJECTS: dict[str, list[dict[str, Any]]] = {
    "dev": [
        {"key": "bikeshop", "title": "the inventory API for my brother's bike shop", "P": "the shop API",
         "fw": "fastapi", "py": "3.12",
         "entities": [E("bike", "bikes", "Bike", (("model", "str"), ("frame_size_cm", "int"), ("price_cents", "money"),
                                                   ("received_at", "date"))),
                      E("repair", "repairs", "Repair", (("customer_name", "str"), ("labour_minutes", "int"),
                                                         ("quote_cents", "money"), ("booked_at", "date"))),
                      E("supplier", "suppliers", "Supplier", (("company", "str"), ("lead_days", "int"),
                                                              ("last_order_at", "date")))]},
        {"key": "greenhouse", "title": "a pipeline for the greenhouse sensors at the allotment", "P": "the sensor "
         "pipeline", "fw": "flask", "py": "3.11",
         "entities": [E("reading", "readings", "Reading", (("sensor_code", "str"), ("humidity_pct", "int"),
                                                            ("temperature", "float"), ("taken_at", "date"))),
                      E("sensor", "sensors", "Sensor", (("label", "str"), ("battery_pct", "int"),
                                                         ("installed_at", "date"))),
                      E("alert", "alerts", "Alert", (("message", "str"), ("severity", "int"),
                                                      ("raised_at", "date")))]},
        {"key": "bookclub", "title": "a bot that runs our book club's reading schedule", "P": "the club bot",
         "fw": "flask", "py": "3.12",
         "entities": [E("book", "books", "Book", (("title", "str"), ("pages", "int"), ("chosen_at", "date"))),
                      E("member", "members", "Member", (("handle", "str"), ("books_read", "int"),
                                                         ("joined_at", "date"))),
                      E("meeting", "meetings", "Meeting", (("venue", "str"), ("attendees", "int"),
                                                            ("held_at", "date")))]},
        {"key": "finance", "title": "a personal finance tool that reads my bank exports", "P": "the budget tool",
         "fw": "fastapi", "py": "3.12",
         "entities": [E("transaction", "transactions", "Transaction", (("payee", "str"), ("amount_cents", "money"),
                                                                        ("booked_on", "date"))),
                      E("budget", "budgets", "Budget", (("category", "str"), ("limit_cents", "money"),
                                                         ("starts_on", "date"))),
                      E("account", "accounts", "Account", (("iban", "str"), ("balance_cents", "money"),
                                                            ("opened_on", "date")))]},
        {"key": "yoga", "title": "the booking site for my friend's yoga studio", "P": "the booking site",
         "fw": "flask", "py": "3.11",
         "entities": [E("booking", "bookings", "Booking", (("client_email", "str"), ("spots", "int"),
                                                            ("booked_at", "date"))),
                      E("session", "sessions", "Session", (("style", "str"), ("capacity", "int"),
                                                            ("starts_at", "date"))),
                      E("teacher", "teachers", "Teacher", (("full_name", "str"), ("hourly_rate_cents", "money"),
                                                            ("hired_on", "date")))]},
        {"key": "podcast", "title": "an analytics dashboard for our podcast", "P": "the dashboard",
         "fw": "fastapi", "py": "3.12",
         "entities": [E("episode", "episodes", "Episode", (("slug", "str"), ("duration_seconds", "int"),
                                                            ("published_at", "date"))),
                      E("download", "downloads", "Download", (("country", "str"), ("bytes_sent", "int"),
                                                              ("served_at", "date"))),
                      E("sponsor", "sponsors", "Sponsor", (("brand", "str"), ("fee_cents", "money"),
                                                            ("signed_at", "date")))]},
        {"key": "warehouse", "title": "a label-printing service for the warehouse", "P": "the label service",
         "fw": "fastapi", "py": "3.11",
         "entities": [E("parcel", "parcels", "Parcel", (("tracking_code", "str"), ("weight_grams", "int"),
                                                         ("packed_at", "date"))),
                      E("label", "labels", "Label", (("printer_name", "str"), ("copies", "int"),
                                                      ("printed_at", "date"))),
                      E("pallet", "pallets", "Pallet", (("bay", "str"), ("parcel_count", "int"),
                                                         ("loaded_at", "date")))]},
        {"key": "recipes", "title": "a recipe scaler for my partner's bakery", "P": "the recipe app",
         "fw": "flask", "py": "3.12",
         "entities": [E("recipe", "recipes", "Recipe", (("name", "str"), ("servings", "int"),
                                                         ("updated_at", "date"))),
                      E("ingredient", "ingredients", "Ingredient", (("ingredient_name", "str"),
                                                                     ("cost_per_kg_cents", "money"),
                                                                     ("stocked_at", "date"))),
                      E("batch", "batches", "Batch", (("product", "str"), ("loaves", "int"),
                                                       ("baked_at", "date")))]},
    ],
    "test": [
        {"key": "dental", "title": "the appointment API for a dental clinic", "P": "the clinic API",
         "fw": "fastapi", "py": "3.12",
         "entities": [E("appointment", "appointments", "Appointment", (("patient_ref", "str"),
                                                                        ("chair", "int"), ("scheduled_at", "date"))),
                      E("patient", "patients", "Patient", (("surname", "str"), ("visits", "int"),
                                                            ("registered_at", "date"))),
                      E("invoice", "invoices", "Invoice", (("treatment", "str"), ("total_cents", "money"),
                                                            ("issued_at", "date")))]},
        {"key": "weather", "title": "a data logger for the village weather station", "P": "the logger",
         "fw": "flask", "py": "3.11",
         "entities": [E("observation", "observations", "Observation", (("station_id", "str"),
                                                                        ("rain_tenths_mm", "int"),
                                                                        ("wind_speed", "float"),
                                                                        ("observed_at", "date"))),
                      E("station", "stations", "Station", (("station_name", "str"), ("altitude_m", "int"),
                                                            ("commissioned_at", "date"))),
                      E("gust", "gusts", "Gust", (("direction", "str"), ("peak_kmh", "int"),
                                                   ("recorded_at", "date")))]},
        {"key": "boardgames", "title": "a tracker for the board-game library at our café", "P": "the game tracker",
         "fw": "flask", "py": "3.12",
         "entities": [E("game", "games", "Game", (("title", "str"), ("max_players", "int"), ("bought_on", "date"))),
                      E("loan", "loans", "Loan", (("borrower", "str"), ("days_out", "int"), ("lent_at", "date"))),
                      E("tournament", "tournaments", "Tournament", (("game_title", "str"), ("entrants", "int"),
                                                                     ("played_on", "date")))]},
        {"key": "invoices", "title": "an invoicing CLI for my freelance work", "P": "the invoicing tool",
         "fw": "fastapi", "py": "3.12",
         "entities": [E("invoice", "invoices", "Invoice", (("client", "str"), ("amount_cents", "money"),
                                                            ("sent_on", "date"))),
                      E("client", "clients", "Client", (("company_name", "str"), ("payment_days", "int"),
                                                         ("since", "date"))),
                      E("timesheet", "timesheets", "Timesheet", (("project_code", "str"), ("minutes", "int"),
                                                                  ("worked_on", "date")))]},
        {"key": "running", "title": "the results site for our running club", "P": "the results site",
         "fw": "flask", "py": "3.11",
         "entities": [E("result", "results", "Result", (("runner", "str"), ("finish_seconds", "int"),
                                                         ("raced_on", "date"))),
                      E("race", "races", "Race", (("race_name", "str"), ("distance_m", "int"), ("held_on", "date"))),
                      E("runner", "runners", "Runner", (("club_number", "str"), ("races_run", "int"),
                                                         ("joined_on", "date")))]},
        {"key": "museum", "title": "the backend for a museum's ticket kiosks", "P": "the kiosk backend",
         "fw": "fastapi", "py": "3.12",
         "entities": [E("ticket", "tickets", "Ticket", (("barcode", "str"), ("price_cents", "money"),
                                                         ("sold_at", "date"))),
                      E("exhibition", "exhibitions", "Exhibition", (("exhibition_title", "str"), ("visitors", "int"),
                                                                     ("opens_on", "date"))),
                      E("kiosk", "kiosks", "Kiosk", (("location", "str"), ("paper_left", "int"),
                                                      ("serviced_at", "date")))]},
        {"key": "solar", "title": "a monitoring dashboard for the solar panels on the school roof",
         "P": "the solar dashboard", "fw": "fastapi", "py": "3.11",
         "entities": [E("sample", "samples", "Sample", (("inverter", "str"), ("watts", "int"),
                                                         ("measured_at", "date"))),
                      E("panel", "panels", "Panel", (("serial", "str"), ("rated_watts", "int"),
                                                      ("mounted_on", "date"))),
                      E("outage", "outages", "Outage", (("cause", "str"), ("minutes_down", "int"),
                                                         ("began_at", "date")))]},
        {"key": "timetable", "title": "a timetable planner for a small school", "P": "the planner",
         "fw": "flask", "py": "3.12",
         "entities": [E("lesson", "lessons", "Lesson", (("subject", "str"), ("room_number", "int"),
                                                         ("starts_at", "date"))),
                      E("teacher", "teachers", "Teacher", (("initials", "str"), ("weekly_hours", "int"),
                                                            ("contract_start", "date"))),
                      E("room", "rooms", "Room", (("building", "str"), ("seats", "int"), ("refurbished_on", "date")))]},
    ],
}
USERS = {"dev": ["Lena", "Marco", "Aisha", "Tom", "Greta", "Ravi", "Sofia", "Ben"],
         "test": ["Ingrid", "Kwame", "Yuki", "Pablo", "Helen", "Dmitri", "Amara", "Felix"]}
MATES = {"dev": ["Jonas", "Priti", "Carl", "Mei"], "test": ["Olu", "Sanna", "Viktor", "Rosa"]}
START = {"dev": dt.datetime(2024, 2, 5, 9, 30), "test": dt.datetime(2024, 9, 2, 9, 30)}
OPENING = {
    "dev": ["I'm building {title} and I'd like a second pair of eyes over the next few weeks.",
            "I've started on {title}; it's a side project but people will depend on it.",
            "I'm working on {title} and could use help with the design and the code."],
    "test": ["We're starting {title} and I'd like your help along the way.",
             "I've been asked to put together {title}, mostly on my own.",
             "I'm about to build {title}; it should be small but solid."],
}
ACKS = ["Noted, I'll stick to that from here on.", "Understood, will do from now on.", "Got it.",
        "Makes sense; noted for the rest of the project.", "Sure, I'll keep to that."]
ACK_FR = "Très bien, je réponds en français à partir de maintenant."
ACK_BACK = ["Sure, back to English.", "No problem, English it is again."]
ACK_DROP = ["Understood, no summary line from now on.", "OK, dropping it."]
ACK_REVISE = ["Noted, I'll switch.", "Got it, updated.", "Understood, the new rule replaces the old one."]
PROJECTS[HOLDOUT] = sh.PROJECTS
USERS[HOLDOUT] = sh.USERS
MATES[HOLDOUT] = sh.MATES
START[HOLDOUT] = sh.START
OPENING[HOLDOUT] = sh.OPENING
PROJECTS[BLIND] = sb.PROJECTS
USERS[BLIND] = sb.USERS
MATES[BLIND] = sb.MATES
START[BLIND] = sb.START
OPENING[BLIND] = sb.OPENING
PROJECTS[BLIND2] = sb2.PROJECTS
USERS[BLIND2] = sb2.USERS
MATES[BLIND2] = sb2.MATES
START[BLIND2] = sb2.START
OPENING[BLIND2] = sb2.OPENING

_WORD_SPLIT = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Catalogue:
    """What a split's chats are written from: the items and traps with their wordings, the user's side of the
    talk (greetings, feedback, small talk, context, requests) and the assistant's acknowledgements. dev and test
    share one (:mod:`.standing_items`, :mod:`.standing_prose`); the held-out and blind splits have their own
    (:mod:`.standing_holdout_items`, :mod:`.standing_blind_items`, :mod:`.standing_blind2_items`), written without
    reading the recogniser."""

    items: list[dict[str, Any]]
    exclusive: list[set[str]]
    traps: dict[str, dict[str, list[str]]]
    trap_counts: dict[str, int | tuple[int, int]]
    """User traps per chat by kind: a number, or (lo, hi) drawn per chat."""
    suggestions: int | None
    """How many of the assistant's suggestions a chat gets (None: every one of the split's)."""
    one_off_effect: dict[str, str]
    question_answer: dict[str, str]
    asks: dict[str, list[str]]
    greetings: list[str]
    feedback: list[str]
    small_talk: list[str]
    context: list[str]
    review_code: str
    acks: list[str]
    ack_revise: list[str]
    ack_stated: dict[str, str]
    """An item's fixed acknowledgement when stated (the language switches)."""
    soon: frozenset[str]
    """Items stated early and revoked a few exchanges later (the language switches)."""
    choose: Callable[[str, int, random.Random, Counter[str]], tuple[list[str], set[str], str]]
    """(split, chat index, rng, how often each key was said in the split so far) -> the chat's keys, revised,
    revoked."""
    assumptions: tuple[str, ...] = ()
    """What the assistant says it assumes, when asked to say so (by the language the reply is in)."""
    assumptions_de: tuple[str, ...] = ()
    """The same in the split's second language (German for the held-out split, Spanish for the blind one, Italian for
    the third blind one)."""
    acks_second: tuple[str, ...] = ()
    """Acknowledgements in the split's second language, for an item stated while the replies are in it (none: the
    ordinary ones)."""
    rotate: bool = False
    """Revision and revocation wordings come in turn over the split (as statements do) instead of at random."""

    @property
    def item(self) -> dict[str, dict[str, Any]]:
        return {it["key"]: it for it in self.items}


# ---- helpers ----------------------------------------------------------------------------------------------

def part(items: list[Any], split: str) -> list[Any]:
    if len(items) < 2:
        return list(items)
    return items[0::2] if split == "dev" else items[1::2]


def stamp(t: dt.datetime) -> str:
    h = t.hour % 12 or 12
    return f"{h}:{t.minute:02d} {'am' if t.hour < 12 else 'pm'} on {t.day} {t.strftime('%B')}, {t.year}"


def share(sentence: str, text: str) -> float:
    """The share of ``sentence``'s content words (stemmed, stop words out) that ``text`` holds."""
    want = set(stems(sentence))
    if not want:
        return 0.0
    return len(want & set(stems(text))) / len(want)


def slots(ent: Entity, proj: dict[str, Any], mate: str) -> dict[str, str]:
    return {"E": ent.name, "Es": ent.plural, "C": ent.cls, "T": ent.table, "f": ent.key, "n": ent.num,
            "d": ent.date, "d_h": ent.date.removesuffix("_at").removesuffix("_on").replace("_", " "),
            "P": proj["P"], "fw": "FastAPI" if proj["fw"] == "fastapi" else "Flask", "mate": mate,
            "db": "the database"}


def fill(text: str, s: dict[str, str]) -> str:
    return text.format(**s)


def style_for(item: dict[str, Any], split: str, revised: bool = False) -> dict[str, Any]:
    src = item["revision"]["style"] if revised else item["style"]
    out = dict(src)
    if item["key"] == "py39":
        out["py"] = PY_VERSION["py39_revised" if revised else "py39"][split]
    return out


# ---- replies ----------------------------------------------------------------------------------------------

def snippet(kind: str, ent: Entity, style: Style, rng: random.Random, proj: dict[str, Any],
            err: str | None = None) -> str:
    if kind == "debug":
        lang, lines = sc.fix_snippet(ent, err or "KeyError", style)
        if style.diff:
            return sc.as_diff(f"app/{ent.vars}.py", removed_lines(ent, err or "KeyError"), lines, style)
        return sc.fence(lang, lines, style)
    if kind == "review":
        lang, lines = sc.query_func(ent, style, rng)
        if style.diff:
            return sc.as_diff(f"app/{ent.vars}.py", removed_lines(ent, "review"), lines, style)
        return sc.fence(lang, lines, style)
    name = CODE_FOR[kind]
    if name == "dockerfile" and style.no_docker:
        name = "systemd_unit"
    if name == "endpoint":
        lang, lines = sc.endpoint(ent, style, rng, proj["fw"])
    else:
        lang, lines = getattr(sc, name)(ent, style, rng)
    out = sc.fence(lang, lines, style)
    if kind == "deploy" and style.no_docker:
        slug = proj["key"]
        install = ["uv sync --frozen --no-dev"] if style.uv else ["poetry install --only main"] if style.poetry \
            else ["python3 -m venv .venv", ".venv/bin/pip install -r requirements.txt"]
        cmds = ["cd /opt/app", "git pull", *install, f"sudo cp deploy/app.service /etc/systemd/system/{slug}.service",
                "sudo systemctl daemon-reload", f"sudo systemctl enable --now {slug}", f"journalctl -u {slug} -f"]
        out += "\n\nThen, on the machine:\n\n" + sc.shell(cmds, style)
    elif kind == "deploy":
        slug = proj["key"]
        cmds = [f"docker buildx build --platform linux/arm64 -t {slug}:latest ." if style.arm
                else f"docker build -t {slug}:latest ."]
        run = f"docker run -d --name {slug} --restart unless-stopped --env-file .env -p 8000:8000"
        if style.small_memory:
            run += " --memory 400m"
        cmds.append(f"{run} {slug}:latest")
        if style.on_prem:
            cmds.insert(0, "sudo systemctl enable --now docker")
        cmds.append(f"docker logs -f {slug}")
        out += "\n\nThen, on the machine:\n\n" + sc.shell(cmds, style)
    return out


def removed_lines(ent: Entity, err: str) -> list[str]:
    """The lines a diff takes out: what the traceback or the reviewed code had."""
    return {"IntegrityError": ["    conn.execute(SQL_INSERT, values)"],
            "TypeError": [f'        {ent.date}=datetime.fromisoformat(row["{ent.date}"]),'],
            "KeyError": [f"COLUMNS = ({ent.key!r}, {ent.date!r})"],
            "NameError": ["from datetime import datetime"],
            "review": [f"def fetch_{ent.vars}(db, start):", "    out = []",
                       f"    for row in db.execute(\"SELECT * FROM {ent.table} WHERE {ent.date} >= '\" + str(start) + "
                       "\"'\"):"]}[err]


def bullets(items: list[str], s: dict[str, str], numbered: bool = False) -> str:
    if numbered:
        return "\n".join(f"{i}. {fill(b, s)[:1].upper() + fill(b, s)[1:]}" for i, b in enumerate(items, 1))
    return "\n".join(f"- {fill(b, s)[:1].upper() + fill(b, s)[1:]}" for b in items)


def code_first(parts: list[str], intro: str) -> list[str]:
    """The first code block moved ahead of the explanation."""
    at = next((i for i, p in enumerate(parts) if p.startswith("```")), None)
    where = parts.index(intro)
    if at is not None and at > where:
        parts.insert(where, parts.pop(at))
    return parts


def french_reply(kind: str, ent: Entity, style: Style, rng: random.Random, proj: dict[str, Any],
                 s: dict[str, str], ack: str | None, err: str | None, prose: dict[str, Any] = FRENCH,
                 assume: str | None = None) -> str:
    """A reply in French (or, with the held-out split's ``prose``, in German)."""
    parts: list[str] = []
    if style.tldr:
        parts.append(prose["tldr"][0])
    if ack:
        parts.append(ack)
    if assume:
        parts.append(assume)
    intro = fill(rng.choice(prose["intro"]), s)
    parts.append(intro)
    bodies = rng.sample(prose["body"], 3)
    parts.append(fill(bodies[0], s))
    if kind in CODE_FOR or kind == "debug":
        parts.append(snippet(kind, ent, style, rng, proj, err))
    parts += [fill(b, s) for b in bodies[1:]]
    parts.append(rng.choice(prose["close"]))
    if style.next_steps:
        steps = [fill(x, s) for x in prose["next"]]
        marks = [f"{i}." for i in range(1, len(steps) + 1)] if style.numbered else ["-"] * len(steps)
        parts.append(prose.get("next_label", "Prochaines étapes :") + "\n"
                     + "\n".join(f"{m} {x}" for m, x in zip(marks, steps, strict=True)))
    if style.code_first:
        parts = code_first(parts, intro)
    return "\n\n".join(parts)


def reply(kind: str, ent: Entity, style: Style, rng: random.Random, proj: dict[str, Any], s: dict[str, str], *,
          ack: str | None = None, one_off: str | None = None, answer: str | None = None,
          suggestion: str | None = None, err: tuple[str, str] | None = None, assume: str | None = None) -> str:
    """The assistant's reply to a request of ``kind`` about ``ent``, in the style in force (``assume``: the
    assumption it states first, when asked to)."""
    k = KINDS[kind]
    if err is not None:
        s = {**s, "err_low": "a " + err[0], "cause": err[1]}
    if one_off == "print":
        style = style.with_(logging=False)
    elif one_off in ("long", "short"):  # the held-out split's one-offs: this reply only
        style = style.with_(short=one_off == "short")
    if style.french:
        return french_reply(kind, ent, style, rng, proj, s, ack, err[0] if err else None)
    if style.german:
        return french_reply(kind, ent, style, rng, proj, s, ack, err[0] if err else None, prose=sh.GERMAN,
                            assume=assume)
    if style.spanish:
        return french_reply(kind, ent, style, rng, proj, s, ack, err[0] if err else None, prose=sb.SPANISH,
                            assume=assume)
    if style.italian:
        return french_reply(kind, ent, style, rng, proj, s, ack, err[0] if err else None, prose=sb2.ITALIAN,
                            assume=assume)
    parts: list[str] = []
    if style.tldr:
        parts.append("TL;DR: " + fill(rng.choice(k["tldr"]), s))
    if ack:
        parts.append(ack)
    elif not style.no_apology and rng.random() < 0.3:
        parts.append(rng.choice(OPENERS))
    if assume:
        parts.append(assume)
    intro = fill(rng.choice(k["intro"]), s)
    has_code = kind in CODE_FOR or kind == "debug"
    if one_off == "code_only" and has_code:
        parts.append(snippet(kind, ent, style, rng, proj, err[0] if err else None))
        parts.append("That's the whole change.")
        return "\n\n".join(parts)
    parts.append(intro)
    n_body = 2 if style.short else rng.choice((3, 3, 4))
    pool = [b for b in k["body"] if ent.has("money") or "cent" not in b]
    bodies = rng.sample(pool, min(len(pool), n_body + (0 if style.comments else 1)))
    parts += [fill(b, s) for b in bodies[:n_body]]
    if answer:
        parts.append(answer)
    if has_code:
        parts.append(snippet(kind, ent, style, rng, proj, err[0] if err else None))
        if kind == "review":
            parts.append("Here is how I'd rewrite the fetching part, with parameters and no silent failures:")
            parts[-1], parts[-2] = parts[-2], parts[-1]
    if has_code and kind in SECOND and rng.random() < (0.4 if style.short else 0.8):
        name, lead = SECOND[kind]
        lang, lines = (sc.endpoint(ent, style, rng, proj["fw"]) if name == "endpoint"
                       else getattr(sc, name)(ent, style, rng))
        parts += [fill(lead, s), sc.fence(lang, lines, style)]
    parts += [fill(b, s) for b in bodies[n_body:]]
    n_bul = 3 if style.short else rng.randint(4, 6)
    parts.append(rng.choice(["A few things to keep in mind:", "Things worth checking:", "Some details:",
                             "Before you move on:"]) + "\n" + bullets(rng.sample(k["bullets"], n_bul), s,
                                                                        style.numbered))
    parts += [fill(x, s) for x in rng.sample(EXTRA, 1 if style.short else rng.choice((1, 2, 2)))]
    if suggestion:
        parts.append(suggestion)
    closing = rng.choice(CLOSINGS)
    if not style.no_emoji and rng.random() < 0.35:
        closing += rng.choice(EMOJI)
    parts.append(closing)
    if style.next_steps:
        parts.append("Next steps:\n" + bullets(k["next"], s, style.numbered))
    if style.code_first and has_code:
        parts = code_first(parts, intro)
    return "\n\n".join(parts)


# ---- one chat ---------------------------------------------------------------------------------------------

def choose_items(split: str, idx: int, rng: random.Random, said: Counter[str] | None = None,
                 ) -> tuple[list[str], set[str], str]:
    """(item keys, the keys that get revised, the key that gets revoked)."""
    revoked = "french" if idx % 2 == 0 else "tldr"
    revisable = [it["key"] for it in ITEMS if "revision" in it]
    revised = set(rng.sample(revisable, 2))
    keys = [revoked, *sorted(revised)]

    def fill_kind(kind: str, total: int) -> None:
        pool = [it["key"] for it in ITEMS if it["kind"] == kind and it["key"] not in keys
                and it["key"] not in ("french", "tldr") and "revision" not in it]
        rng.shuffle(pool)
        for key in pool:
            if sum(ITEM[k]["kind"] == kind for k in keys) >= total:
                break
            if any(key in ex and keys_in for ex in EXCLUSIVE for keys_in in [ex & set(keys)]):
                continue
            keys.append(key)

    fill_kind("instruction", 4 + (revoked == "tldr"))
    fill_kind("preference", 3)
    fill_kind("constraint", 3 if idx % 3 else 2)
    return keys, revised, revoked


def choose_listed(mod: Any) -> Callable[[str, int, random.Random, Counter[str] | None],
                                         tuple[list[str], set[str], str]]:
    """The chooser of a split written in a module of its own (:mod:`.standing_holdout_items`,
    :mod:`.standing_blind_items`): (item keys, revised keys, revoked key) for a chat, from ``mod``'s ``ITEMS``,
    ``EXCLUSIVE`` and ``REVOKED``."""

    def choose(split: str, idx: int, rng: random.Random, said: Counter[str] | None = None,
               ) -> tuple[list[str], set[str], str]:
        """The revoked item by chat (the language switch in three chats, another instruction in the others), two
        of the revisable ones revised, then instructions, preferences and constraints to 5, 3 and 2-3; the ones
        whose wordings the split's earlier chats have not all used yet come first, then the ones said least (so
        that every item and wording comes up); an item that can be revised or revoked may also just stay."""
        said = Counter() if said is None else said
        item = {it["key"]: it for it in mod.ITEMS}
        revoked = mod.REVOKED[idx]
        clash = set().union(*(ex for ex in mod.EXCLUSIVE if revoked in ex)) - {revoked}
        revisable = [key for key, it in item.items() if "revision" in it and key != revoked and key not in clash]
        rng.shuffle(revisable)
        revisable.sort(key=lambda key: said[f"{key}:revision"])
        revised = set(revisable[:2])
        keys = [revoked, *sorted(revised)]

        def fill_kind(kind: str, total: int) -> None:
            pool = [key for key, it in item.items() if it["kind"] == kind and key not in keys and it["probes"][split]]
            rng.shuffle(pool)
            pool.sort(key=lambda key: (said[key] >= len(item[key]["say"][split]), said[key]))
            for key in pool:
                if sum(item[k]["kind"] == kind for k in keys) >= total:
                    break
                if any(key in ex and ex & set(keys) for ex in mod.EXCLUSIVE):
                    continue
                keys.append(key)

        fill_kind("instruction", 5)
        fill_kind("preference", 3)
        fill_kind("constraint", 3 if idx % 3 else 2)
        return keys, revised, revoked

    return choose


choose_holdout = choose_listed(sh)
"""The held-out split's (item keys, revised keys, revoked key)."""
choose_blind = choose_listed(sb)
"""The blind split's (item keys, revised keys, revoked key)."""
choose_blind2 = choose_listed(sb2)
"""The third blind split's (item keys, revised keys, revoked key)."""


def spread(rng: random.Random, lo: int, hi: int, n: int, taken: set[int], gap: int = 2) -> list[int]:
    """``n`` exchange indices in ``[lo, hi)``, not in ``taken``, at least ``gap`` apart where possible."""
    for g in (gap, 1):
        for _ in range(200):
            cand = sorted(rng.sample([i for i in range(lo, hi) if i not in taken], n))
            if all(b - a >= g for a, b in itertools.pairwise(cand)):
                return cand
    raise ValueError(f"cannot place {n} in [{lo}, {hi})")


def make_chat(split: str, idx: int, rng: random.Random, said: Counter[str] | None = None,
              cat: Catalogue | None = None) -> dict[str, Any]:
    """One chat; ``said`` counts how often each wording list was used in the split, so that every wording
    comes in turn (each form people use appears)."""
    said = Counter() if said is None else said
    cat = CATALOGUES[split] if cat is None else cat
    ITEM = cat.item  # the split's items (the module's ITEM is dev and test's)
    frames: dict[str, str] = {}

    def wording(key: str, options: list[Any]) -> str:
        """A wording is a sentence, or (sentence, frame): the frame is the text around it in the message (a
        list, a pasted snippet before it)."""
        said[key] += 1
        chosen = options[(said[key] - 1) % len(options)]
        if isinstance(chosen, tuple):
            chosen, frames[key] = chosen
        return chosen

    def pick(key: str, options: list[str]) -> str:
        return wording(key, options) if cat.rotate else rng.choice(options)

    proj = PROJECTS[split][idx]
    cid = f"s{CHAT_LETTER.get(split, split[0])}{idx}"
    user = USERS[split][idx]
    mates = MATES[split]
    n = rng.randint(*EXCHANGES)
    third = n // 3
    keys, revised, revoked = cat.choose(split, idx, rng, said)
    ents = list(proj["entities"])

    # ---- where things happen (exchange indices, 0-based) ----
    taken: set[int] = {0}
    order = list(keys)
    rng.shuffle(order)
    lang = next((key for key in order if key in cat.soon), None)
    if lang is not None:  # French (German) early enough that its revocation stays before the middle
        order.remove(lang)
        order.insert(rng.randrange(0, max(1, len(order) // 2)), lang)
    stated_at = dict(zip(order, spread(rng, 2, third, len(order), taken, gap=2), strict=True))
    taken |= set(stated_at.values())
    revoke_at: dict[str, int] = {}
    if revoked in cat.soon:
        k = stated_at[revoked] + rng.randint(3, 5)
        while k in taken:
            k += 1
        revoke_at[revoked] = k
    else:
        revoke_at[revoked] = spread(rng, third, 2 * third, 1, taken)[0]
    taken |= set(revoke_at.values())
    revise_at = dict(zip(sorted(revised), spread(rng, third, 2 * third, len(revised), taken, gap=3), strict=True))
    taken |= set(revise_at.values())
    n_probes = rng.randint(7, 8)
    probe_at = spread(rng, 2 * third + 1, n, n_probes, taken, gap=2)
    taken |= set(probe_at)
    n_traps = {kind: n if isinstance(n, int) else rng.randint(*n) for kind, n in cat.trap_counts.items()}
    trap_plan: dict[int, tuple[str, str]] = {}
    for kind, count in n_traps.items():
        pool = list(cat.traps[kind][split])
        rng.shuffle(pool)
        if cat.rotate:  # the least used last, as they are taken from the end
            pool.sort(key=lambda trap: -said[f"trap:{trap}"])
        for i in spread(rng, 1, n - 1, count, taken | set(trap_plan), gap=1):
            trap_plan[i] = (kind, pool.pop())
            said[f"trap:{trap_plan[i][1]}"] += 1
    suggestions = list(cat.traps["assistant"][split])
    if cat.suggestions is None:
        rng.shuffle(suggestions)
    else:
        rng.shuffle(suggestions)
        suggestions.sort(key=lambda trap: said[f"trap:{trap}"])
        suggestions = suggestions[:cat.suggestions]
        said.update(f"trap:{trap}" for trap in suggestions)
    suggest_at = dict(zip(spread(rng, 1, 2 * third, len(suggestions), set(probe_at), gap=3), suggestions,
                          strict=True))

    # ---- items and probes, planned before writing ----
    items: list[dict[str, Any]] = []
    by_key: dict[str, dict[str, Any]] = {}
    for key in keys:
        it = ITEM[key]
        rec = {"id": None, "key": key, "kind": it["kind"], "turn": stated_at[key] + 1, "message": None,
               "sentence": wording(key, it["say"][split]), "revises": None, "superseded_at": None,
               "revoked_at": None, "revoked_by": None, "expect": it["expect"]}
        items.append(rec)
        by_key[key] = rec
        if key in revised:
            rev = {"id": None, "key": key, "kind": it["kind"], "turn": revise_at[key] + 1, "message": None,
                   "sentence": pick(f"{key}:revision", it["revision"]["say"][split]), "revises": rec,
                   "superseded_at": None, "revoked_at": None, "revoked_by": None, "expect": it["revision"]["expect"]}
            rec["superseded_at"] = rev["turn"]
            items.append(rev)
        if key in revoke_at:
            rec["revoked_at"] = revoke_at[key] + 1
            rec["revoked_by"] = pick(f"{key}:revoke", it["revoke"]["say"][split])
    items.sort(key=lambda r: r["turn"])
    for i, rec in enumerate(items):
        rec["id"] = f"{cid}_i{i}"
    for rec in items:
        if rec["revises"] is not None:
            rec["revises"] = rec["revises"]["id"]

    def in_force(turn: int) -> list[dict[str, Any]]:
        return [r for r in items if r["turn"] < turn and (r["superseded_at"] is None or r["superseded_at"] > turn)
                and (r["revoked_at"] is None or r["revoked_at"] > turn)]

    def gone(turn: int) -> list[str]:
        return [r["id"] for r in items if (r["superseded_at"] is not None and r["superseded_at"] <= turn)
                or (r["revoked_at"] is not None and r["revoked_at"] <= turn)]

    def relevant(rec: dict[str, Any], kind: str) -> bool:
        scope = ITEM[rec["key"]]["scope"]
        if scope == "answer":
            return True
        if scope == "code":
            return kind in CODE_FOR or kind == "debug"
        return kind in scope

    def probe_options(rec: dict[str, Any]) -> list[tuple[str, str]]:
        it = ITEM[rec["key"]]
        src = it["revision"]["probes"] if rec["revises"] else it["probes"]
        return list(src[split])

    probes: list[dict[str, Any]] = []
    covered: set[str] = set()
    used_texts: set[str] = set()
    for k in probe_at:
        turn = k + 1
        live = [r for r in in_force(turn) if probe_options(r)]
        fresh = [r for r in live if any(o[1] not in used_texts for o in probe_options(r))]
        todo = [r for r in live if r["id"] not in covered] or fresh or live
        primary = rng.choice(todo)
        options = [o for o in probe_options(primary) if o[1] not in used_texts] or probe_options(primary)
        kind, text = rng.choice(options)
        used_texts.add(text)
        deps = [primary]
        others = [r for r in live if r is not primary and r["id"] not in covered and relevant(r, kind)]
        if others:
            deps.append(rng.choice(others))
        covered.update(r["id"] for r in deps)
        probes.append({"id": f"{cid}_p{len(probes)}", "turn": turn, "message": None, "text": None, "kind": kind,
                       "template": text, "depends_on": [r["id"] for r in deps], "must_not_hold": gone(turn),
                       "expect": "; ".join(r["expect"] for r in deps)})

    # ---- sessions ----
    sessions: list[tuple[int, dt.datetime]] = []
    when = START[split] + dt.timedelta(days=idx * 3, minutes=rng.randint(0, 600))
    k = 0
    while k < n:
        sessions.append((k, when))
        k += rng.randint(5, 10)
        when = (when + dt.timedelta(days=rng.randint(1, 4))).replace(hour=rng.randint(8, 20),
                                                                     minute=rng.choice(range(0, 60, 5)))
    session_starts = {k: t for k, t in sessions}

    # ---- writing the turns ----
    style = Style(indent="  ", py=proj["py"])
    for key in keys:
        style = style.with_(**ITEM[key].get("default", {}))
    if not any(key.startswith("db_") for key in keys):
        style = style.with_(dialect="postgres" if proj["fw"] == "fastapi" else "sqlite")
    stated_by_k = {stated_at[key]: key for key in keys}
    revised_by_k = {revise_at[key]: key for key in revise_at}
    revoked_by_k = {revoke_at[key]: key for key in revoke_at}
    probe_by_k = {p["turn"] - 1: p for p in probes}
    weights = {"concept": 2, "planning": 1, "debug": 3, "review": 2}
    all_kinds = [kd for kd in KINDS for _ in range(weights.get(kd, 2))]
    turns: list[dict[str, Any]] = []
    traps: list[dict[str, Any]] = []
    last_kind = ""
    ent_i = 0
    for k in range(n):
        uid, aid = f"{cid}_t{2 * k}", f"{cid}_t{2 * k + 1}"
        mate = rng.choice(mates)
        ent = ents[ent_i % len(ents)]
        if rng.random() < 0.4:
            ent_i += 1
        s = slots(ent, proj, mate)
        pieces: list[str] = []
        if k in session_starts:
            pieces.append(rng.choice(cat.greetings))
        if k == 0:
            pieces.append(rng.choice(OPENING[split]).format(title=proj["title"]))
        elif k not in probe_by_k and rng.random() < 0.45:
            pieces.append(fill(rng.choice(cat.feedback), s))
        if k not in probe_by_k and k not in stated_by_k and rng.random() < 0.2:
            pieces.append(fill(rng.choice(cat.small_talk), s))
        if k not in probe_by_k and rng.random() < 0.75:
            pieces += [fill(x, s) for x in rng.sample(cat.context, rng.choice((1, 2)))]
        ack = None
        one_off = None
        answer = None
        err = None
        statement: str | None = None
        if k in probe_by_k:
            p = probe_by_k[k]
            kind = p["kind"]
        else:
            kind = rng.choice([kd for kd in all_kinds if kd != last_kind])
            if k == 0:
                kind = "schema"
        tb = ""
        if kind in ("debug",) or (k in probe_by_k and "{tb}" in probe_by_k[k]["template"]):
            tb, err_name, cause = sc.traceback_text(ent, rng, style)
            err = (err_name, cause)
        request = fill(rng.choice(cat.asks[kind]), {**s, "tb": tb, "code": fill(cat.review_code, s)})
        if k in probe_by_k:
            request = fill(probe_by_k[k]["template"], {**s, "tb": tb, "code": fill(cat.review_code, s)})
        # what the user states at this exchange
        if k in stated_by_k:
            rec = by_key[stated_by_k[k]]
            statement = rec["sentence"]
            reasons = ITEM[rec["key"]]["why"][split]
            extra = [rng.choice(reasons)] if reasons and rng.random() < 0.6 else []
            second = cat.acks_second if cat.acks_second and (style.german or style.spanish or style.italian) else ()
            ack = cat.ack_stated[rec["key"]] if rec["key"] in cat.ack_stated else rng.choice(second or cat.acks)
            style = style.with_(**style_for(ITEM[rec["key"]], split))
            where = rng.randrange(3)
            block = [statement, *extra]
            if rec["key"] in frames:  # a list or a pasted snippet: at the end of the message, on its own
                block, where = [fill(frames[rec["key"]], {**s, "s": statement})], 1 if "\n" in request else 2
            if where == 0:  # after the greeting and the feedback, before the rest
                cut = min(len(pieces), (k in session_starts) + 1)
                pieces = pieces[:cut] + block + pieces[cut:] + [request]
            elif where == 1:
                pieces = pieces + block + [request]
            else:
                pieces = [*pieces, request, *block]
            rec["message"] = uid
        elif k in revised_by_k:
            rec = next(r for r in items if r["key"] == revised_by_k[k] and r["revises"])
            statement = rec["sentence"]
            ack = rng.choice(cat.ack_revise)
            style = style.with_(**style_for(ITEM[rec["key"]], split, revised=True))
            pieces = [*pieces, statement, request] if rng.random() < 0.5 else [*pieces, request, statement]
            rec["message"] = uid
        elif k in revoked_by_k:
            rec = by_key[revoked_by_k[k]]
            statement = rec["revoked_by"]
            revoke = ITEM[rec["key"]]["revoke"]
            ack = rng.choice(revoke.get("ack") or (ACK_BACK if rec["key"] == "french" else ACK_DROP))
            style = style.with_(**ITEM[rec["key"]]["revoke"]["style"])
            pieces = [*pieces, statement, request]
        elif k in trap_plan:
            tkind, sentence = trap_plan[k]
            one_off = cat.one_off_effect.get(sentence) if tkind == "one_off" else None
            answer = cat.question_answer.get(sentence) if tkind == "question" else None
            if tkind == "one_off":  # after the request, or before it when a paste follows
                pieces = [*pieces, sentence, request] if "\n" in request else [*pieces, request, sentence]
                if one_off == "code_only" and kind not in CODE_FOR and kind != "debug":
                    kind = "query"
                    old, request = request, fill(rng.choice(cat.asks[kind]), s)
                    pieces = [request if p is old else p for p in pieces]
            else:
                pos = rng.randrange(2)
                pieces = pieces + ([sentence, request] if pos == 0 else [request, sentence])
            traps.append({"turn": k + 1, "message": uid, "role": "user", "kind": tkind, "sentence": sentence})
        else:
            pieces = [*pieces, request]
        lead, _, paste = request.partition("\n\n")  # a pasted traceback or code goes after the prose
        text = " ".join(lead if p is request else p for p in pieces)
        if paste:
            text += "\n\n" + paste
        if k in session_starts:
            text = f"[{stamp(session_starts[k])}] {text}"
        suggestion = suggest_at.get(k) if not (style.french or style.german or style.spanish or style.italian) else None
        assume = None
        if style.assumptions and one_off != "code_only":
            second_language = style.german or style.spanish or style.italian
            assume = fill(rng.choice(cat.assumptions_de if second_language else cat.assumptions), s)
        content = reply(kind, ent, style, rng, proj, s, ack=ack, one_off=one_off, answer=answer,
                        suggestion=suggestion, err=err, assume=assume)
        if suggestion and suggestion in content:
            traps.append({"turn": k + 1, "message": aid, "role": "assistant", "kind": "assistant",
                          "sentence": suggestion})
        if k in probe_by_k:
            probe_by_k[k]["message"] = uid
            probe_by_k[k]["text"] = text
        turns.append({"id": uid, "role": "user", "content": text})
        turns.append({"id": aid, "role": "assistant", "content": content})
        last_kind = kind
    traps.sort(key=lambda t: (t["turn"], t["role"] != "user"))
    for p in probes:
        del p["template"], p["kind"]
    return {"id": cid, "project": proj["title"], "user": user,
            "sessions": [{"date_time": stamp(t), "first_turn": f"{cid}_t{2 * k}"} for k, t in sessions],
            "turns": turns, "items": items, "traps": traps, "probes": probes}


DEV_TEST = Catalogue(
    items=ITEMS, exclusive=EXCLUSIVE, traps=TRAPS,
    trap_counts={"chit_chat": (6, 7), "one_off": 2, "question": 2, "quoted": 2}, suggestions=None,
    one_off_effect=ONE_OFF_EFFECT, question_answer=QUESTION_ANSWER, asks={k: v["ask"] for k, v in KINDS.items()},
    greetings=GREETINGS, feedback=FEEDBACK, small_talk=SMALL_TALK, context=CONTEXT, review_code=REVIEW_CODE,
    acks=ACKS, ack_revise=ACK_REVISE, ack_stated={"french": ACK_FR}, soon=frozenset({"french"}),
    choose=choose_items)
HELD_OUT = Catalogue(
    items=sh.ITEMS, exclusive=sh.EXCLUSIVE, traps=sh.TRAPS, trap_counts=sh.TRAP_COUNTS,
    suggestions=sh.SUGGESTIONS_PER_CHAT, one_off_effect=sh.ONE_OFF_EFFECT, question_answer=sh.QUESTION_ANSWER,
    asks=sh.ASKS, greetings=sh.GREETINGS, feedback=sh.FEEDBACK, small_talk=sh.SMALL_TALK, context=sh.CONTEXT,
    review_code=sh.REVIEW_CODE, acks=sh.ACKS, ack_revise=sh.ACK_REVISE, ack_stated=sh.ACK_STATED,
    soon=frozenset(sh.SOON), choose=choose_holdout, assumptions=tuple(sh.ASSUMPTIONS),
    assumptions_de=tuple(sh.ASSUMPTIONS_DE), rotate=True)
BLIND_CAT = Catalogue(
    items=sb.ITEMS, exclusive=sb.EXCLUSIVE, traps=sb.TRAPS, trap_counts=sb.TRAP_COUNTS,
    suggestions=sb.SUGGESTIONS_PER_CHAT, one_off_effect=sb.ONE_OFF_EFFECT, question_answer=sb.QUESTION_ANSWER,
    asks=sb.ASKS, greetings=sb.GREETINGS, feedback=sb.FEEDBACK, small_talk=sb.SMALL_TALK, context=sb.CONTEXT,
    review_code=sb.REVIEW_CODE, acks=sb.ACKS, ack_revise=sb.ACK_REVISE, ack_stated=sb.ACK_STATED,
    soon=frozenset(sb.SOON), choose=choose_blind, assumptions=tuple(sb.ASSUMPTIONS),
    assumptions_de=tuple(sb.ASSUMPTIONS_ES), acks_second=tuple(sb.ACKS_ES), rotate=True)
BLIND2_CAT = Catalogue(
    items=sb2.ITEMS, exclusive=sb2.EXCLUSIVE, traps=sb2.TRAPS, trap_counts=sb2.TRAP_COUNTS,
    suggestions=sb2.SUGGESTIONS_PER_CHAT, one_off_effect=sb2.ONE_OFF_EFFECT, question_answer=sb2.QUESTION_ANSWER,
    asks=sb2.ASKS, greetings=sb2.GREETINGS, feedback=sb2.FEEDBACK, small_talk=sb2.SMALL_TALK, context=sb2.CONTEXT,
    review_code=sb2.REVIEW_CODE, acks=sb2.ACKS, ack_revise=sb2.ACK_REVISE, ack_stated=sb2.ACK_STATED,
    soon=frozenset(sb2.SOON), choose=choose_blind2, assumptions=tuple(sb2.ASSUMPTIONS),
    assumptions_de=tuple(sb2.ASSUMPTIONS_IT), acks_second=tuple(sb2.ACKS_IT), rotate=True)
CATALOGUES = {"dev": DEV_TEST, "test": DEV_TEST, HOLDOUT: HELD_OUT, BLIND: BLIND_CAT, BLIND2: BLIND2_CAT}


def make(split: str) -> list[dict[str, Any]]:
    rng = random.Random(SEEDS[split])
    said: Counter[str] = Counter()
    return [make_chat(split, i, rng, said) for i in range(N_CHATS)]


# ---- the self-check ---------------------------------------------------------------------------------------

def check(chats: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts and the problems found (an empty ``problems`` list: the data holds what the docstring says)."""
    from arcana_jupyter.tokens import TokenCounter

    counter = TokenCounter()
    problems: list[str] = []
    tokens: list[int] = []
    exchanges: list[int] = []
    kinds: Counter[str] = Counter()
    trap_kinds: Counter[str] = Counter()
    deps = Counter()
    coverage: list[float] = []
    for c in chats:
        turns = c["turns"]
        n = len(turns) // 2
        exchanges.append(n)
        tokens.append(sum(counter.count_text(t["content"]) for t in turns))
        third = n // 3
        if not EXCHANGES[0] <= n <= EXCHANGES[1] or not TOKENS[0] <= tokens[-1] <= TOKENS[1]:
            problems.append(f"{c['id']}: {n} exchanges, {tokens[-1]} tokens")
        by_id = {t["id"]: t for t in turns}
        if [t["role"] for t in turns] != ["user", "assistant"] * n:
            problems.append(f"{c['id']}: roles do not alternate")
        items = {r["id"]: r for r in c["items"]}

        def once(sentence: str, message: str, where: str, c: dict[str, Any] = c,
                 by_id: dict[str, Any] = by_id, turns: list[dict[str, Any]] = turns) -> None:
            if sentence not in by_id[message]["content"]:
                problems.append(f"{c['id']}: {where} not in its message: {sentence!r}")
            found = [t["id"] for t in turns if sentence in t["content"]]
            if found != [message]:
                problems.append(f"{c['id']}: {where} in {found}, not only in {message}")

        for r in c["items"]:
            kinds[r["kind"]] += 1
            once(r["sentence"], r["message"], r["id"])
            if by_id[r["message"]]["role"] != "user" or int(r["message"].rsplit("_t", 1)[1]) // 2 + 1 != r["turn"]:
                problems.append(f"{c['id']}: {r['id']} turn/message mismatch")
            if r["revises"] is None and not 1 < r["turn"] <= third:
                problems.append(f"{c['id']}: {r['id']} stated at {r['turn']}, not in the first third")
            if r["revises"] is not None:
                old = items[r["revises"]]
                if not third < r["turn"] <= 2 * third:
                    problems.append(f"{c['id']}: revision {r['id']} at {r['turn']}, not in the middle third")
                if old["superseded_at"] != r["turn"]:
                    problems.append(f"{c['id']}: {old['id']} superseded_at != {r['id']}'s turn")
                if max(share(old["sentence"], r["sentence"]), share(r["sentence"], old["sentence"])) >= 0.5:
                    problems.append(f"{c['id']}: revision {r['id']} shares half its words with {old['id']}")
            if r["revoked_by"] is not None:
                msg = f"{c['id']}_t{2 * (r['revoked_at'] - 1)}"
                once(r["revoked_by"], msg, f"revocation of {r['id']}")
                if share(r["sentence"], r["revoked_by"]) >= HOLD:
                    problems.append(f"{c['id']}: the revocation of {r['id']} holds it")
        for t in c["traps"]:
            trap_kinds[t["kind"]] += 1
            once(t["sentence"], t["message"], f"trap at {t['turn']}")
            for r in c["items"]:
                if share(t["sentence"], r["sentence"]) >= HOLD or share(r["sentence"], t["sentence"]) >= HOLD:
                    problems.append(f"{c['id']}: trap {t['sentence']!r} looks like {r['id']}")
        last = [r for r in c["items"]]
        covered: set[str] = set()
        for p in c["probes"]:
            if not 2 * third < p["turn"] <= n:
                problems.append(f"{c['id']}: probe {p['id']} at {p['turn']}, not in the last third")
            if by_id[p["message"]]["content"] != p["text"]:
                problems.append(f"{c['id']}: probe {p['id']} text is not its message")
            for d in p["depends_on"]:
                r = items.get(d)
                if r is None:
                    problems.append(f"{c['id']}: probe {p['id']} depends on unknown {d}")
                    continue
                deps[r["kind"]] += 1
                live = r["turn"] < p["turn"] and (r["superseded_at"] or 10**9) > p["turn"] and \
                    (r["revoked_at"] or 10**9) > p["turn"]
                if not live:
                    problems.append(f"{c['id']}: probe {p['id']} depends on {d}, not in force at {p['turn']}")
                if share(r["sentence"], p["text"]) >= HOLD:
                    problems.append(f"{c['id']}: probe {p['id']} restates {d}")
                covered.add(d)
            for d in p["must_not_hold"]:
                r = items[d]
                if not ((r["superseded_at"] or 10**9) <= p["turn"] or (r["revoked_at"] or 10**9) <= p["turn"]):
                    problems.append(f"{c['id']}: probe {p['id']} must_not_hold {d}, still in force")
        first_probe = min(p["turn"] for p in c["probes"])
        live_late = [r["id"] for r in last if r["turn"] < first_probe and (r["superseded_at"] or 10**9) > n
                     and (r["revoked_at"] or 10**9) > n]
        coverage.append(len(set(live_late) & covered) / len(live_late))
        if set(live_late) - covered:
            problems.append(f"{c['id']}: items in force but never probed: {sorted(set(live_late) - covered)}")
    return {"chats": len(chats), "exchanges": [min(exchanges), max(exchanges), sum(exchanges)],
            "tokens": [min(tokens), max(tokens), sum(tokens) // len(tokens)], "items": dict(sorted(kinds.items())),
            "revisions": sum(1 for c in chats for r in c["items"] if r["revises"]),
            "revocations": sum(1 for c in chats for r in c["items"] if r["revoked_at"]),
            "traps": dict(sorted(trap_kinds.items())), "probes": sum(len(c["probes"]) for c in chats),
            "dependencies": dict(sorted(deps.items())), "coverage": round(min(coverage), 3), "problems": problems}


def write(out: Path = DATA) -> dict[str, dict[str, Any]]:
    """Generate both splits into ``out``; returns each split's :func:`check`."""
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, dict[str, Any]] = {}
    for split in SPLITS:
        chats = make(split)
        (out / f"standing_{split}.json").write_text(json.dumps(chats, indent=0, ensure_ascii=False) + "\n",
                                                    encoding="utf-8")
        report[split] = check(chats)
    return report


def write_one(split: str, out: Path = DATA) -> dict[str, Any]:
    """Generate one split written apart (``holdout``, ``blind``, ``blind2``) into ``out`` (``standing_<split>.json``);
    returns its :func:`check`."""
    out.mkdir(parents=True, exist_ok=True)
    chats = make(split)
    (out / f"standing_{split}.json").write_text(json.dumps(chats, indent=0, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
    return check(chats)


def write_holdout(out: Path = DATA) -> dict[str, Any]:
    """The held-out split (``standing_holdout.json``): :func:`write_one`."""
    return write_one(HOLDOUT, out)


def write_blind(out: Path = DATA) -> dict[str, Any]:
    """The second blind split (``standing_blind.json``): :func:`write_one`."""
    return write_one(BLIND, out)


def write_blind2(out: Path = DATA) -> dict[str, Any]:
    """The third blind split, the test split (``standing_blind2.json``): :func:`write_one`."""
    return write_one(BLIND2, out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holdout", action="store_true",
                        help="write only data/standing_holdout.json, the blind held-out split (dev and test untouched)")
    parser.add_argument("--blind", action="store_true",
                        help="write only data/standing_blind.json, the second blind split (the others untouched)")
    parser.add_argument("--blind2", action="store_true",
                        help="write only data/standing_blind2.json, the third blind split (the test split; the others "
                             "untouched)")
    args = parser.parse_args(argv)
    if args.holdout + args.blind + args.blind2 > 1:
        parser.error("--holdout, --blind and --blind2 write one split each; give one of them")
    report = ({HOLDOUT: write_holdout()} if args.holdout else {BLIND: write_blind()} if args.blind
              else {BLIND2: write_blind2()} if args.blind2 else write())
    for split, r in report.items():
        print(f"standing_{split}.json: {r['chats']} chats, exchanges {r['exchanges']}, tokens (min, max, mean) "
              f"{r['tokens']}")
        print(f"  items {r['items']}, revisions {r['revisions']}, revocations {r['revocations']}")
        print(f"  traps {r['traps']}; probes {r['probes']}, dependencies by kind {r['dependencies']}, "
              f"items in force probed (min over chats) {r['coverage']:.0%}")
        print(f"  problems: {'none' if not r['problems'] else '; '.join(r['problems'][:12])}")


if __name__ == "__main__":
    main()
