"""Standing instructions: what the user says once and expects to hold for the whole session (issue 39).

Pure and deterministic: plain rules over the user's sentences — and, where the session has the bundled
embedding model, a learned reader of what the rules leave as a plain statement (:mod:`.standing_model`) —
so the same message always gives the same findings (and a session records them as events: a resumed run
or ``report --verify`` reads them, never the sentence again).
:func:`recognise` reads one user message; the engine (:mod:`.engine`) turns each :class:`Finding` into a
standing constraint object (``StateObject.standing``), kept in its own protected prompt section
(:mod:`.rendering`), never demoted, until the user revises or revokes it.

**Sentences.** The message is cut into sentences (:func:`sentences`): never inside fenced code
(```` ``` ```` / ``~~~``), indented code, a block quote (``> ...``) or a traceback; a leading
``[9:40 am on 5 March, 2024]`` stamp is dropped; a line is split at ``.``/``!``/``?`` and at a colon
followed by a capital (``Stuck on this one: I'd rather ...``). Text in double quotes is masked before
any rule looks at a sentence: a cue word inside quotes never counts.

**How a sentence is read.** Leads are set aside first: discourse words (``Actually,``, ``Please``,
``Remember that``), a conditional clause on the assistant's or the user's habits (``When you show shell
commands, ...``, ``Whatever you write, ...``) and a topic before the clause (``For plotting, I prefer ...``,
``In tests I like ...``); the rest is the clause the rules read. A *scope* says that a sentence holds beyond
this turn (:data:`_SCOPE`): ``always``/``never``; time (``from now on``, ``until I say otherwise``,
``anymore``); place (``in this project``, ``throughout``); a quantifier over what the assistant produces
(``every answer``, ``any SQL``, ``per answer``, ``your replies``, ``anything you ...``); or a habitual clause
(``when you explain a procedure``, ``the tables you make``, ``each time I ask`` — :data:`_HABIT`) when the
rest names no one thing (``this``, ``that``). *Work* (:func:`work_words`) is a word of the code, the answers,
the tools or the project, or an identifier; a word that is also an everyday word (``windows``, ``table``,
``client``) counts only with a second.

**Rejected first** (the reason is kept, :func:`analyse`):

- ``third_party``: an instruction for someone else (``Tell the intern to ...``, ``Draft a note asking the team
  to ...``, ``Remind Priya ...``, ``I told the new hire to ...``);
- ``question``: it ends with ``?`` or opens like one — unless it is a polite request to the assistant that
  holds for good (``Could you answer in Spanish from now on?``, ``Could you stop using the word 'simply' in
  your explanations?``);
- ``quoted``: someone else's words, quoted with a reporting verb or reported without quotes (``The README
  says "never ..."``, ``The contributing guide says to never ...``, ``My colleague insists that ...``,
  ``According to the wiki ...``, ``Earlier you suggested never ...``) — not the user's own (``As I said``);
- ``hypothetical``: ``If we ever ..., we'd ...``, ``Suppose ...``, ``In a perfect world ...`` (a condition on
  the assistant's habits, ``If you write SQL, use ...``, is not one);
- ``one_off``: for this message only (``this time``, ``just this once``, ``for this one``, ``on this one``,
  ``for now``, ``for this snippet``, ``in this answer only``, ``only here``, ``today``, ``by Friday``);
- ``chit_chat``: phatic idioms (``Can't wait``, ``Never mind``, ``Don't get me started``, ``Always the
  way``), politeness with nothing of the work (``thanks``), wishes (``I'd rather be sailing``, ``I'd rather
  not think about ...``), someone else's habits (``My cat never ...``, ``My old team always used Java``,
  ``Nobody on the team ever ...``); ``self``: the speaker's own habits and plans (``I always forget ...``);
  ``not_work``: a preference or a statement about us with nothing of the work in it (``I prefer tea``).

**Accepted** (``Finding.rule`` names the rule; ``kind`` is instruction, preference or constraint):

- ``label``: an explicit ``Constraint:`` / ``Rule:`` / ``Requirement:`` / ``Instruction:`` /
  ``Preference:`` line;
- ``directive``: addressed to the assistant — an imperative (a verb of :data:`_VERBS` first, ``Don't``,
  ``Make sure``, ``Let's always``), ``I want you to``, ``I'd appreciate it if you``, ``It would help if
  you``, ``you should`` — *and* with a scope; or standing by its own words: ``Always``/``Never`` + verb,
  ``Stick to``, ``Default to``, ``Call me``, ``I'd rather you``, a change of language (``Answer in
  German``), a style rule naming no one thing (``Write commit messages in the imperative mood``). Without
  any of these (``Write the query for ...``) it is a request for this turn (``no_scope``). ``I want X on
  every Y`` with a scope is one too; so are the verbless ``Answers in plain text, ...`` and ``Less detail
  from here on``;
- ``preference``: taste in the project's choices — ``I prefer``, ``I'd rather``, ``I like X better than
  Y``, ``I love/hate/dislike X`` (X general, not ``this`` or ``your answer``), ``I'm (not) a fan of``,
  ``I'm partial to``, ``I lean towards``, ``I'd go for``, ``I'd choose``, ``I find X clearer than Y``,
  ``I generally go with``, ``my preference is``, ``X is what I like``, ``I want X kept ...``, and the
  verbless choice ``Dataclasses over plain dicts``, ``Pathlib, not os.path, ...`` — with a word of the
  work in it;
- ``constraint``: a rule or a fact of the project, clause by clause (:func:`_rule`): a subject that is
  not a person — general (``all``, ``any``, ``every``, ``our``, a bare plural or a name), the project or a
  part of it (``the API``, ``the code``, ``the client's servers``) or a plural (``the CSV exports``), not one
  thing of this turn (``the function must return None``) — with a binding modal (``must``, ``should``,
  ``has to``, ``can't``, ``needs``; not ``must be nice``): ``Timestamps should live in UTC``, ``Tests must
  never hit the network`` (an instruction when the subject is the assistant's output: ``Any SQL you write
  should ...``); a verbless ``No X ...`` of four words or more (``No GPL dependencies, the lawyers ...``;
  a bare ``No log scale.`` answers a question); or a fact in the present (:data:`_FACT`): where it runs or
  deploys, what it is pinned, stuck or limited to, what it has none of or only, what is not an option or
  off the table, how data is stored, what cannot be changed, ``we're on Windows``, ``X, not Y``.

**Changes.** A new item that shares a topic class and another topic with a live one (``Use tabs for
indentation`` after ``Use 4 spaces for indentation``) replaces it. A sentence with a change marker
(:data:`_REVISE`: ``actually``, ``instead``, ``change of plan``, ``switch to``, ``we've moved/migrated to``,
``make that``, ``loosen``, ``... is fine now``, ``... now`` at the end) *revises* the live standing item it
shares a topic with (:func:`topics`: its content words, lightly stemmed, and the topic classes of
:data:`TOPIC_CLASSES` — the alternatives of one choice: languages, indentation, length limits, the summary
line, Python versions, database engines, SQL vs ORM, hosting, shells, browsers ...; a phrase matched with a
space or a hyphen): the old one is retracted, the new one takes its place. A revocation (:data:`_REVOKE`:
``you can go back to English``, ``drop the TL;DR lines``, ``no need for that summary anymore``, ``never mind
the language tags``, ``X is gone``) retracts the item it matches — or, when none reaches two shared topics,
the one live item it shares any topic with — and adds nothing; one that is an instruction of its own
(``Stop adding 'Hope this helps!' at the end of your answers``) is kept when it takes nothing back. With no
item to match, a change is kept only if it stands on its own.

A finding that says what a live item already says (:func:`same`) is not added twice.

No embedding model for what a user's message alone changes: the bundled MiniLM put the right item first for 23
of 27 changes (dev, test and this module's tune cases) but often by a few hundredths of cosine over the next
one — too thin for a decision that retracts an instruction; matching stays lexical, pure and the same with
``ARCANA_EMBEDDINGS=off``.

**What the assistant's reply takes up** (:func:`acknowledged`, at the engine's end of turn). A sentence the
rules leave as a request for this turn ("Keep the explanations tight, three short paragraphs at most") is
standing when the assistant answers it as one: a reply that opens "Understood; I'll keep to that from now on.",
"Noted for everything that follows." or "OK, updated." (:func:`acknowledgement`). Only when nothing standing
changed in the turn (no rule, tool call or edit), only with the learned reader (it picks the sentence, at a
lower bar than alone, and a higher one after a bare "Will do."), never a question, quoted words, a one-off,
chit-chat, an instruction for someone else, a hypothetical or the past. A change the rules read but could not
place, or a reply that says it changed something, replaces the live item it is about — lexically, else the
nearest by the embedding (:func:`nearest`): here the reply has said that it is a change, so the choice is only
which item, not whether.

**Measured** (benchmarks/results/standing.md): on the benchmark's dev and test splits and on a set of
sentences written apart from them (tests/adaptive/standing_cases.py, half of it held out by construction).
The engine turns recognition off for a run recorded before it existed (``standing_instructions``,
:mod:`arcana_jupyter.runtime.resume`).

:func:`shorten` is the deterministic summary the section uses when more items are live than its share
of the budget holds: the reason clause goes (``Answer in French from now on, I'm practising ...`` ->
``Answer in French from now on.``), then words from the end.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

StandingKind = Literal["instruction", "preference", "constraint"]
STANDING_KINDS: tuple[str, ...] = ("instruction", "preference", "constraint")
Change = Literal["new", "revise", "revoke"]

# ---------------------------------------------------------------------------- sentences

_STAMP = re.compile(r"^\s*\[[^\]]{3,60}\]\s*")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
_EXC_LINE = re.compile(r"^\s*[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b")
_QUOTE = re.compile(r"\"[^\"\n]{1,400}\"|“[^”\n]{1,400}”")
_SPLIT = re.compile(r"(?<=[.!?])[\"”)]?\s+(?=[^\s])|(?<=\S):\s+(?=[A-Z\[\"“])")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|etc|vs|cf|Mr|Mrs|Ms|Dr|approx|incl)\.$", re.I)
_LABEL = re.compile(r"^\s*(?:[\w-]+\s+){0,2}?(standing instruction|instruction|constraint|rule|requirement|preference|"
                    r"policy|deadline)s?(?:\s+for\s+(?:everything|anything|all|any|every|each)\b[^:]{0,40}?)?\s*:\s*"
                    r"(\S.*)$", re.I)
"""A labelled item: ``Constraint: ...``, ``Licensing constraint: ...``, ``Hard deadline: ...``, ``Error handling rule
for everything you write: ...`` (not one that starts with a verb: ``Write instructions for the annotators: ...``)."""


def _prose_lines(text: str) -> list[str]:
    """The message's lines of prose: no fenced or indented code, block quotes or tracebacks."""
    out: list[str] = []
    fence: str | None = None
    traceback = False
    for raw in text.replace("\r\n", "\n").split("\n"):
        m = _FENCE_LINE.match(raw)
        if fence is not None:
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        if traceback:
            if raw.startswith((" ", "\t")) or not raw.strip():
                continue
            traceback = False
            if _EXC_LINE.match(raw):
                continue
        if raw.strip().startswith("Traceback (most recent call last)"):
            traceback = True
            continue
        if raw.startswith(("    ", "\t")) or raw.lstrip().startswith(">") or _EXC_LINE.match(raw):
            continue
        line = _BULLET.sub("", _STAMP.sub("", raw)).strip()
        if line:
            out.append(line)
    return out


def _mask_quotes(line: str) -> tuple[str, list[str]]:
    """``line`` with each quoted span replaced by a marker, and the spans (so a split never falls in one)."""
    quotes: list[str] = []

    def keep(m: re.Match[str]) -> str:
        quotes.append(m.group(0))
        return f"\x00{len(quotes) - 1}\x00"

    return _QUOTE.sub(keep, line), quotes


def _unmask(text: str, quotes: list[str]) -> str:
    return re.sub(r"\x00(\d+)\x00", lambda m: quotes[int(m.group(1))], text)


def sentences(text: str) -> list[str]:
    """The sentences of a user message the rules read (see the module docstring), in order."""
    out: list[str] = []
    for line in _prose_lines(text.replace("\u2019", "'").replace("\u2018", "'")):
        if _LABEL.match(line):
            out.append(line)
            continue
        masked, quotes = _mask_quotes(line)
        parts: list[str] = []
        start = 0
        for m in _SPLIT.finditer(masked):
            head = masked[start:m.start()].rstrip()
            if _ABBREV.search(head) or (m.group(0).startswith(":") and (
                    len(head.split()) < 2 or not _LEAD.sub("", head + ":").strip())):
                continue  # "e.g. ...", "Note: ...", "Change of heart: use ..." stay one sentence
            parts.append(masked[start:m.end()].strip())
            start = m.end()
        parts.append(masked[start:].strip())
        for p in parts:
            s = _unmask(p, quotes).strip()
            if len(s) >= 3 and re.search(r"[A-Za-z]", s):
                out.append(s)
    return out


# ---------------------------------------------------------------------------- words and topics

_TOKEN = re.compile(r"tl;dr|[a-z][a-z0-9]*(?:[._+-][a-z0-9]+)*|\d+(?:\.\d+)*", re.I)
_VERSION = re.compile(r"^[23]\.\d{1,2}$")

GENERIC = frozenset(
    """a an the and or but if then so to of in on at by for with from as into onto about over under than
    i me my we our us you your it its this that these those they them their he she his her there here
    is are was were be been being am do does did done have has had can could would should will shall may might
    must not no nor don't dont can't cannot won't isn't aren't doesn't didn't i'm i'd i'll i've it's let's
    we're we'll we've you're you'll that's there's what's ve ll re
    always never ever every each all any some please just also really very much more most less least
    now then still yet again once anyway actually instead though too well
    answer answers reply replies response responses code snippet snippets write writes written writing
    use uses used using make makes making sure keep keeps want wants prefer prefers rather like likes
    thing things way ways one ones new old good fine ok okay going forward from here on
    go goes going gone get gets got put puts give gives show shows tell let lets start end
    time times day days today now lot bit part enough""".split()
)
"""Words that say nothing of a standing item's topic (two items sharing them are not about the same thing)."""

TOPIC_CLASSES: dict[str, frozenset[str]] = {
    "language": frozenset("english french german spanish italian portuguese dutch polish swedish danish norwegian "
                          "finnish japanese chinese mandarin korean russian arabic hindi turkish greek czech "
                          "ukrainian hebrew deutsch francais français espanol español".split()),
    "indentation": frozenset("indent indentation indented indenting tab tabs spaces space".split()),
    "length_limit": frozenset("word words limit limits length wordcount characters chars concise brief "
                              "verbose longer shorter detail detailed terse".split()),
    "line_length": frozenset(["line length", "line-length", "characters per line", "columns"]),
    "summary_line": frozenset(["tl;dr", "tldr", "summary", "summaries", "bottom line", "one-liner", "up top",
                               "at the top", "one sentence summary"]),
    "python_version": frozenset("py39 py38 py310 py311 py312 py313 python3".split()),
    "database_engine": frozenset("postgres postgresql mysql mariadb sqlite sqlite3 oracle mssql sqlserver "
                                 "mongodb mongo dynamodb".split()),
    "sql_style": frozenset(["orm", "orms", "sqlalchemy", "peewee", "sqlmodel", "tortoise", "raw sql", "plain sql",
                            "hand-written sql", "handwritten sql", "hand written sql", "query builder", "raw queries",
                            "hand-written queries", "django orm"]),
    "http_client": frozenset("httpx requests aiohttp urllib urllib3".split()),
    "test_framework": frozenset("pytest unittest nose doctest".split()),
    "paths": frozenset("pathlib os.path".split()),
    "diagnostics": frozenset("logging logger print prints print()".split()),
    "emoji": frozenset("emoji emojis emoticons".split()),
    "type_hints": frozenset(["hints", "annotations", "annotate", "annotated", "typed", "typing", "mypy",
                             "type hints"]),
    "timezone": frozenset("utc timezone timezones tz".split()),
    "quotes": frozenset("quote quotes quotation".split()),
    "hosting": frozenset(["heroku", "fly.io", "aws", "lambda", "gcp", "azure", "vercel", "netlify", "render",
                          "digitalocean", "raspberry pi", "vps", "bare-metal", "kubernetes", "k8s", "ec2",
                          "cloud run"]),
    "os": frozenset("windows linux macos ubuntu debian mac".split()),
    "shell": frozenset("bash zsh fish powershell cmd sh".split()),
    "browser": frozenset("ie ie11 explorer safari chrome chromium firefox edge".split()),
    "dataframes": frozenset("pandas polars dask".split()),
    "docstring_style": frozenset(["google style", "numpy style", "numpy-style", "sphinx", "restructuredtext",
                                  "docstring", "docstrings"]),
    "units": frozenset("metric imperial units celsius fahrenheit".split()),
    "case_style": frozenset("snake_case camelcase camelCase kebab-case pascalcase".split()),
    "web_framework": frozenset("django flask fastapi starlette express".split()),
    "config_format": frozenset("toml yaml yml ini json".split()),
    "plotting": frozenset("matplotlib seaborn plotly altair bokeh".split()),
    "cli_library": frozenset("argparse click typer".split()),
    "memory_size": frozenset("ram memory mb gb kb".split()),
    "answer_format": frozenset(["markdown", "plain text", "bullet", "bullets", "bullet points", "paragraph",
                                "paragraphs", "headings", "heading", "prose", "walls of text"]),
    "package_manager": frozenset(["pip", "pip-tools", "poetry", "conda", "uv", "pipenv"]),
    "js_runtime": frozenset("node nodejs deno bun".split()),
    "address": frozenset(["call me", "address me", "refer to me", "my name"]),
    "output_shape": frozenset(["diff", "diffs", "whole file", "full file", "patch"]),
    "tone": frozenset("tone formal informal casual chatty friendly professional conversational playful "
                      "stiff".split()),
    "currency": frozenset("usd eur euro euros dollar dollars gbp pound pounds sterling yen chf".split()),
    "file_format": frozenset("csv parquet excel xlsx feather arrow tsv pickle".split()),
    "log_level": frozenset("debug warning warnings verbose noisy quiet".split()),
    "compute": frozenset("cpu cpus core cores threads gpu gpus workers".split()),
    "theme": frozenset(["light background", "dark background", "dark mode", "light mode", "dark theme",
                        "light theme"]),
}
"""Words (and phrases, matched with a space or a hyphen between their words: ``bottom line`` and
``bottom-line`` alike) that name the alternatives of one choice, so that a revision worded apart from
what it revises still finds it ("go back to English" revises "answer in French"; "go with SQLAlchemy"
revises "plain SQL than an ORM"; "we're on Fly.io now" revises "we deploy to Heroku"). A version number
(``3.9``, ``3.12``) is the ``python_version`` topic."""

_CLASS_OF = {w: name for name, ws in TOPIC_CLASSES.items() for w in ws if " " not in w}
_PHRASE_CLASS = [(re.compile(r"\b" + r"[\s-]+".join(map(re.escape, p.split())) + r"\b", re.I), name)
                 for name, ws in TOPIC_CLASSES.items() for p in ws if " " in p]


def _light_stem(word: str) -> str:
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ation", "ing", "ed"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    return w


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens (``tl;dr``, ``os.path``, ``3.12`` kept whole)."""
    return [t.lower() for t in _TOKEN.findall(text.replace("\u2019", "'"))]


def topics(text: str) -> frozenset[str]:
    """What a sentence is about: its content words (lightly stemmed, :data:`GENERIC` words out; a
    hyphenated word also as its parts) and the topic classes (``#language`` ...) of
    :data:`TOPIC_CLASSES` its words and phrases belong to."""
    out: set[str] = set()
    for pattern, name in _PHRASE_CLASS:
        if pattern.search(text):
            out.add("#" + name)
    for t in tokens(text):
        if _VERSION.match(t):
            out.add("#python_version")
            out.add(t)
            continue
        parts = [t, *t.split("-")] if "-" in t else [t]
        for p in parts:
            cls = _CLASS_OF.get(p)
            if cls is not None:
                out.add("#" + cls)
            if p in GENERIC or len(p) < 2 or p.isdigit():
                continue
            out.add(_light_stem(p))
    return frozenset(out)


def _overlap(a: frozenset[str], b: frozenset[str]) -> int:
    """Shared topics, a topic class counting twice."""
    return sum(2 if t.startswith("#") else 1 for t in a & b)


def same(a: str, b: str) -> bool:
    """True when ``a`` says what ``b`` says (a duplicate): the same words, or nearly all topics shared."""
    if " ".join(tokens(a)) == " ".join(tokens(b)):
        return True
    ta, tb = topics(a) - _CLASSES, topics(b) - _CLASSES
    if not ta or not tb:
        return False
    shared = len(ta & tb)
    return (shared >= 2 or ta == tb) and shared >= 0.8 * max(len(ta), len(tb))


_CLASSES = frozenset("#" + c for c in TOPIC_CLASSES)


# ---------------------------------------------------------------------------- what counts as work

WORK_WORDS = frozenset(
    """code coding snippet snippets function functions method methods module modules package packages
    library libraries dependency dependencies dep deps import imports stdlib standard framework frameworks
    test tests testing fixture fixtures mock mocks ci cd pipeline pipelines lint linter linting formatter
    formatting indentation indent tab tabs spaces comment comments docstring docstrings
    hint hints annotation annotations variable variables syntax
    answer answers reply replies response responses explanation explanations prose paragraph paragraphs bullet
    bullets heading headings markdown summary tl;dr emoji emojis
    sql query queries orm database databases db schema schemas migration migrations indexes column
    columns row rows transaction transactions postgres postgresql mysql sqlite sqlalchemy
    api apis endpoint endpoints http https backend frontend server servers
    deploy deployment deployments deploying deployed production prod staging docker container containers
    kubernetes cloud aws gcp azure vps hosting vm ram memory cpu disk gb mb kb
    python python3 version versions pip venv poetry requirements json csv yaml toml xml html css javascript
    typescript rust java shell bash command commands terminal cli script scripts
    log logs logging logger print prints error errors exception exceptions traceback retry retries timeout
    timeouts async await thread threads process processes cache caching config configuration settings env
    secret secrets token tokens auth authentication password passwords file files path paths pathlib folder folders
    directory directories git commit commits branch branches repo repository pr review license licence
    gpl agpl mit apache utc timezone timestamp timestamps datetime linux macos internet network
    offline online dataset datasets dataframe pandas numpy notebook notebooks jupyter project codebase
    app application bot site website ui interface dataclass dataclasses dict dicts tuple tuples string strings
    int ints float floats enum enums f-string f-strings lambda lambdas generator generators comprehension
    comprehensions decorator decorators regex regexes loop loops recursion global globals constant constants
    spelling algorithm algorithms acronym acronyms diff diffs patch signature signatures
    sudo install upgrade build builds compile compiler debug debugging refactor inheritance third-party
    cron scheduler browser browsers django flask fastapi express react vue svelte matplotlib seaborn plotly polars
    oracle mariadb mongodb redis kafka celery nginx terraform ansible graphql grpc oauth jwt s3 heroku vercel
    netlify kubernetes k8s ubuntu debian safari chrome firefox chromium ie11 zsh powershell makefile makefiles
    argparse typer pydantic attrs isort black ruff flake8 mypy pylint eslint prettier webpack vite npm yarn pnpm
    conda pipenv pip-tools toml typescript node nodejs deno
    """.split()
)
"""Words of the work (code, answers, tools, the project): a preference or a project statement must
hold one (or two of :data:`WEAK_WORK_WORDS`), or look like an identifier (``os.path``, ``SQLAlchemy``,
``3.9``, ``snake_case``)."""

WEAK_WORK_WORDS = frozenset(
    """table tables list lists class classes type types name names naming word words sentence sentences
    format style tone language client clients service services box machine host index cell cells prompt
    request requests data date dates example examples key keys line lines page pages window windows job jobs
    returns ifs block blocks composition warehouse users user
    english french german spanish italian dutch japanese chinese portuguese""".split()
)
"""Words of the work that are also everyday words (a kitchen table, the office windows, a client
lunch, French food): one alone is not enough. ``Windows`` capitalised inside a sentence is the
operating system, a strong word."""

_TECHY = re.compile(r"test|^py[a-z]{2,}|[a-z]{2,}(?:lib|sql|db|js|api|ql)$|^http|^json|^yaml|^sql")
"""Word shapes of the work (``pytest``, ``unittest``, ``pathlib``, ``mysql``, ``graphql``, ``httpx`` ...)."""
_IDENT = re.compile(r"[a-z]+\.[a-z]+|[a-z]+_[a-z]+|[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}\b|\b\d+(?:\.\d+)+\b|`[^`]+`"
                    r"|(?<=\w )Windows\b")
_NOT_IDENT = frozenset({"I", "OK", "TV", "PS", "BTW", "FYI", "ASAP", "LOL", "AM", "PM", "US", "UK", "EU", "HR", "CEO"})


def work_words(text: str) -> list[str]:
    """The words of ``text`` that belong to the work: :data:`WORK_WORDS` and identifier-like tokens, and
    the :data:`WEAK_WORK_WORDS` when there are two of them or more (empty when ``text`` is not about the
    work)."""
    found, weak = [], []
    for t in tokens(text):
        if t in WORK_WORDS or _light_stem(t) in WORK_WORDS or _TECHY.search(t):
            found.append(t)
        elif t in WEAK_WORK_WORDS or _light_stem(t) in WEAK_WORK_WORDS:
            weak.append(t)
    found += [m.group(0) for m in _IDENT.finditer(text) if m.group(0) not in _NOT_IDENT]
    if found or len(weak) >= 2:
        return found + weak
    return []


# ---------------------------------------------------------------------------- the rules

def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


def _alt(words: Iterable[str]) -> str:
    return "|".join(sorted(set(words), key=len, reverse=True))


_VERBS = frozenset(
    """use answer reply respond write keep make put start begin end finish open close give show add include avoid stop
    skip explain format indent switch stick go drop remove leave name call tag mark label list return prefer
    mention cite quote limit cap stay speak talk address spell capitalise capitalize sort order number wrap
    break split comment document annotate type test run assume target treat consider default choose pick favour
    favor follow apply respect check validate handle store save convert display print log raise catch translate
    summarise summarize lead place move append prepend prefix suffix refer ask tell flag highlight note point
    be describe define declare import install pin lock sign commit push deploy ship pass rely depend
    link reference group separate align rename rewrite phrase word structure organise organize
    offer suggest recommend propose provide present send post share paste refrain tidy
    clean simplify shorten trim cut reduce expand elaborate justify compare measure estimate
    profile optimise optimize cache guard escape sanitise sanitize parameterise parameterize encode decode
    serialise serialize round truncate pad denote emphasise emphasize bold italicise underline
    double-check verify confirm clarify repeat restate recap omit exclude ignore forget say state stop
    modify change touch delete edit mutate hardcode hard-code expose leak hide reveal block allow enable disable
    generate produce create build design draw render plot chart fetch load read parse query request retry wait
    sleep spawn fork thread lock catch throw swallow silence suppress mock patch stub fake seed reset drop truncate
    alter rename migrate upgrade downgrade bump vendor bundle minify compress zip copy duplicate inline extract
    reuse share cache commit merge rebase squash tag release publish upload download expose mention paraphrase
    invent guess speculate hedge apologise apologize thank greet praise lecture moralise moralize pad repeat
    abbreviate shorten""".split()
)
"""Verbs an instruction to the assistant starts with (the imperative's first word)."""

_PEOPLE = ("manager|boss|wife|husband|partner|girlfriend|boyfriend|kids?|son|daughter|brother|sister|mum|mom|"
           "dad|mother|father|parents?|friends?|colleagues?|coworkers?|co-workers?|neighbou?rs?|roommates?|flatmates?|"
           "teacher|intern|interns|cat|dog|family|uncle|aunt|cousin|grandma|grandpa|landlord|doctor|old team|"
           "previous team|cto|ceo|teammates?|new hire|juniors?")
"""People and pets: their habits are not the user's instructions."""

_LEAD = _rx(r"^(?:(?:ok(?:ay)?|right|also|and|so|oh,? and|one more thing|one last thing|btw|by the way|actually|"
            r"honestly|seriously|generally|in general|in future|in the future|from now on|"
            r"from today(?: on(?:wards?)?)?|going forward|from here on"
            r"(?: out| in)?|from this point(?: on| forward)?|henceforth|for the rest of (?:this|the) (?:chat|"
            r"conversation|session|project)|as a rule|by default|change of plan|change of heart|on second thought|"
            r"scratch that|correction|instead|good news|quick note|note|reminder|remember(?: that)?|"
            r"keep in mind(?: that)?|bear in mind(?: that)?|just so you know|fyi|please|pls|plz|kindly|"
            r"it(?:'d| would) be (?:great|nice|good|helpful|ideal|best) if you (?:could|would)|"
            r"i'd appreciate (?:it )?if you (?:could|would)|"
            r"(?:a |one |new |house )?(?:general )?rule|for the record|to be clear|update|one thing|personally)"
            r"\b[,:;.!\s-]*)+")
_WHEN_LEAD = _rx(r"^(?:when(?:ever)?|if|any time|anytime|every time|each time|before)\s+(?:you|i)\s+"
                 r"[^,]{2,80},\s*|^when in doubt,\s*|^(?:wherever|whenever|where) possible,\s*"
                 r"|^(?:whatever|anything) (?:you|i) [^,]{2,60},\s*")
"""A conditional clause before the main one (``When you show shell commands, ...``): a scope of its own."""
_TOPIC_LEAD = _rx(r"^(?:for|in|with|on|as for|as to|regarding|about|when it comes to|on the subject of)\s+"
                  r"(?!this\b|that\b|these\b|those\b|the next\b|now\b|the moment\b|today\b|a\b|an\b)[^,]{2,40}?"
                  r"(?:,\s*|\s+(?=(?:i|i'd|i'm|i'll|we|we'd|we're|my|our)\s))")
"""A topic before the clause (``For plotting, I prefer ...``, ``In tests I like ...``): the clause is read."""

_QUESTION_OPEN = _rx(r"^(?:so,?\s+|and\s+|but\s+|also,?\s+|quick question:?\s+)?(?:(?:what|why|how|which|who|whose)\b|"
                     r"(?:when|where)\s+(?:do|does|did|is|are|was|were|should|would|could|can|will|shall)\b|"
                     r"(?:should|shall|do|does|did|is|are|was|were|would|could|can|will|have|has|may|might|must|"
                     r"isn't|aren't|don't|doesn't|won't|wouldn't|shouldn't)\s+(?:i|we|you|it|they|he|she|this|"
                     r"that|there|these|those|the|our|my|your|anyone|someone)\b)")
_POLITE_YOU = _rx(r"^(?:please,?\s+)?(?:could|can|would|will)\s+you\s+(?:please\s+)?(?!ever\b|never\b|always\b)[a-z]+")
_POLITE_STRIP = _rx(r"^(?:please,?\s+)?(?:could|can|would|will)\s+you\s+(?:please\s+)?")
_HABIT_CHANGE = _rx(r"^(?:please\s+)?(?:could|can|would|will)\s+you\s+(?:please\s+)?(?:stop|quit|start|keep|avoid|"
                    r"remember to)\b")
"""A polite request that changes a habit (``Could you stop using the word 'simply' ...?``): standing with a scope."""
_REPORTED = _rx(r"\b(?:says|said|say|wrote|writes|written|left a (?:comment|note)|comment:|notes? says?|told (?:me|us)|"
                r"according to|reads|read:|on the whiteboard|quote|quoting|the sign)\b")
_REPORT_VERB = _rx(r"^(?P<who>(?:(?:the|my|our|your|his|her|their|a|an|this|that|someone|somebody|everyone|everybody|"
                   r"people|he|she|they|you|earlier,? you|last \w+,? you|you once)\b[^,;:]{0,50}?"
                   r"|[a-z]+'s\s[^,;:]{0,40}?))"
                   r"\s*\b(?:says?|said|tells? (?:me|us)|told (?:me|us)|insists?|insisted|suggests?|suggested|"
                   r"recommends?|recommended|claims?|claimed|argues|argued|wrote|writes|thinks|believes|reckons|"
                   r"mentioned|warned|warns|swears)\b(?:\s+(?:me|us))?"
                   r"(?:\s+(?:last|this|the other|earlier|yesterday|before)\b[^,]{0,20}?)?"
                   r"\s*(?:that\b|to\b|:|,|never\b|always\b|not to\b|we\b|you\b|i\b|it's\b|our\b|\w+ing\b)")
"""Someone else's words reported, quotes or not (``The contributing guide says to never ...``, ``My colleague
insists that we must ...``, ``Earlier you suggested never ...``); not the user's own (``As I said, ...``)."""
_ACCORDING = _rx(r"^according to\b|\baccording to (?:the|my|our|his|her|their)\b")
_THIRD_PARTY = re.compile(
    r"^(?:(?i:please)\s+)?(?i:(?:tell|remind|ask|warn|email|e-mail|message|ping|notify|instruct|nudge)\s+"
    r"(?:(?:the|my|our|your|a|an|every|all|each|new|that|those|these|both|his|her|their)\s+\w+|(?:" + _PEOPLE +
    r"|everyone|everybody|team|devs|developers|contributors|reviewers)\b)|let (?!me\b|us\b|'s\b)\w+(?: \w+)? know)\b"
    r"|^(?:(?i:please)\s+)?(?i:tell|remind|ask|warn|email|ping|message)\s+[A-Z][a-z]+\b"
    r"|(?i:^(?:please\s+)?(?:write|draft|send|prepare|compose|post|put together|add)\s+(?:a|an|the|my|our|some)\s+"
    r"(?:[\w'-]+\s+){0,3}?(?:note|email|e-mail|message|memo|readme|section|guide|doc|docs|document|announcement|post|"
    r"letter|ticket|issue|description|notice|faq|page|wiki|reminder|checklist|policy|slack)\b.*\b(?:telling|asking|"
    r"reminding|saying|explaining|warning|that says|that tells|instructing)\b)"
    r"|(?i:^i(?:'ve| have)?\s+(?:told|asked|reminded|warned|instructed)\s+(?!you\b))")
"""An instruction for someone else (``Tell the intern to ...``, ``Draft a note asking the team to ...``,
``Remind Priya ...``, ``I told the new hire to ...``): a task, or news, not an instruction to the assistant."""
_HYPOTHETICAL = _rx(r"^(?:if|suppose|supposing|imagine|say|what if|assuming|hypothetically|in theory|ideally|"
                    r"even if)\b(?=.*\b(?:would|could|might)\b|.*\w'd\b)"
                    r"|^(?:if|suppose|supposing|imagine|say|what if|assuming)\s+(?:we|i|you|it|they|the \w+)\s+"
                    r"(?:had|were|was|did|ever|wanted|needed|moved|switched|could)\b"
                    r"|^in (?:a|an) (?:perfect|ideal|other) world\b|^hypothetically\b")
"""A hypothetical (``If we ever move to Go, we'd have to ...``, ``In a perfect world ...``); a condition on the
assistant's own habits (``If you write SQL, use ...``) is not one."""
_ONE_OFF = _rx(r"\b(?:this time|just this once|this once|for this one|on this one|for now|for the moment|"
               r"for the time being|only this time|"
               r"(?:for|in|on|with) (?:this|that|the next|these|those|the following)\s+(?:particular\s+|one\s+|"
               r"specific\s+|last\s+|quick\s+)?(?:one|snippet|answer|reply|response|question|function|file|test|"
               r"example|query|script|part|bit|step|case|task|cell|request|message|draft|version|demo|call|run|"
               r"quick test|time|change|commit|pr|ticket|bug|fix|table|chart|plot|report|email|page|endpoint|"
               r"method|class|module|notebook|migration|release|sprint)s?\b|only for this|"
               r"for this quick|just for (?:this|now|today|the demo)|right now|(?<!from )today|tonight|this morning|"
               r"this afternoon|this evening|here only|only here|just here|this week\b|"
               r"by (?:friday|monday|tuesday|wednesday|thursday|saturday|sunday|tomorrow|tonight|eod|noon|"
               r"the end of (?:the )?(?:day|week))\b)")
_PHATIC = _rx(r"(?:^|\b)(?:can't wait|cannot wait|can't complain|can't believe|never mind(?!\s+(?:the|about|that|"
              r"those|these|my|your)\b)|nevermind(?!\s+(?:the|about)\b)|don't get me started|"
              r"don't even (?:ask|get me started)|wish me luck|fingers crossed|never again|"
              r"for what it's worth,? i'd rather be|oh wait|you don't get one|enjoy the weekend|have a good|"
              r"hope you|never a dull|always the way|never thought|always something|must say|have to say|"
              r"have to admit|must admit)")
_POLITE = _rx(r"\b(?:ha|haha|lol|thank you|thanks|cheers|no worries|no problem)\b")
"""Politeness: chit-chat when nothing of the work is said with it (``No more TL;DR lines, thanks.`` is not)."""
_THIRD_HABIT = _rx(r"^(?:my|our|his|her|their|the)\s+(?:\w+\s+){0,2}?(?:" + _PEOPLE + r")\b"
                   r"|^(?:nobody|no one|somebody|someone|people)\b(?! (?:who|that) )")
"""Someone else's habits (``My cat never lets me work``, ``My old team always used Java``): not the user's
instructions, whatever words of the work they hold."""
_WISH = _rx(r"\b(?:i'd|i would) rather (?:be|not)\b|\bi'd love to be\b")
_SELF = _rx(r"^(?:i|i'm|i am|i've|i have|i'll|i will|i'd|i was|i must|i should|i need|i keep|i kept|i can|i can't|"
            r"i cannot|i just|i really|i still|i also|i usually|i often|i sometimes|i always|i never|i hardly|"
            r"i tried|i think|i guess|i hope|i promise|i wish|i forgot|i found)\b")
_TO_YOU = _rx(r"^(?:i|we)(?:\s+|(?='))(?:really\s+|just\s+)?(?:want|need|would like|'d like|'d rather|would rather|"
              r"'d prefer|would prefer|prefer|expect|ask|'d appreciate it if|would appreciate it if|'d love it if|"
              r"'d be grateful if)\s+(?:you|that you|for you|it if you)\b"
              r"|^it(?:'d| would) (?:help|be (?:great|nice|better|good|helpful|easier))\s+if\s+you\b")
_RATHER_YOU = _rx(r"^(?:i|we)(?:'d|\s+would)\s+(?:much\s+)?(?:rather|prefer)\s+(?:that\s+)?you\b")
"""``I'd rather you ...``: a preference about how the assistant works, standing by its own words."""
_WANT = _rx(r"^(?:i|we)\s+(?:really\s+|just\s+)?(?:want|need|'d like|would like|expect)\s+(?!you\b|to\b)")
"""``I want type annotations on every function signature``: with a scope, an instruction."""
_PREFER = _rx(r"^(?:i|we)(?:\s+|(?='))(?:really\s+|strongly\s+|much\s+|generally\s+|usually\s+|also\s+|still\s+|"
              r"definitely\s+|personally\s+|always\s+|tend to\s+|kind of\s+|rather\s+|normally\s+|typically\s+)?"
              r"(?:prefer|'d prefer|would prefer|'d rather|would rather|favou?r|like\s+.+\s+better|'d like to keep|"
              r"would like to keep|want to keep|like to keep|'d like to stick|want to stick|like to stick|"
              r"don't like|do not like|dislike|hate|can't stand|cannot stand|detest|"
              r"lean (?:towards?|to)|'m (?:a (?:big |huge )?fan|not a fan|no fan|partial|biased) (?:of|to|towards)|"
              r"am (?:a (?:big )?fan|not a fan|partial) (?:of|to)|'d (?:go|opt) (?:for|with)|'d choose|'d pick|"
              r"'d use\s+.+\s+(?:over|rather than|instead of)|'ll (?:always )?(?:take|pick|choose)\s+.+\s+over|"
              r"find\s+.+\s+(?:more|less)\s+\w+\s+than|(?:go|reach|stick) (?:with|for)|"
              r"(?:always|never)\s+(?:use|write|indent|pick|choose|go with|put|name|run|deploy|work with|avoid))\b")
_LIKE = _rx(r"^(?:i|we)\s+(?:really\s+|generally\s+|usually\s+|much\s+)?(?:like|love|enjoy)\s+"
            r"(?!this\b|that\b|it\b|your\b|the (?:new|last|latest|idea|answer|way you)\b|you\b|how\b|"
            r"what\b|working\b|to (?:think|go|see)\b)")
"""``I like X`` / ``I love X``: taste in the work when X is general (``I love f-strings``, ``I like my imports
sorted``), not a comment on this answer (``I like this``, ``I love your answer``)."""
_PREFER_NOUN = _rx(r"\b(?:my|our) (?:preference|taste|house style|rule of thumb|go-to|default)\b(?: is\b|:)|"
                   r"\b(?:is|are) (?:my|our) (?:preference|go-to|favourite|favorite|default)\b|"
                   r"\b(?:is|are) what (?:i|we) (?:like|prefer|want|use)\b|^given the choice\b")
_WANT_SHAPE = _rx(r"^(?:i|we)\s+(?:really\s+)?(?:want|'d like|would like)\s+(?!you\b|to\b|a\b|an\b|some\b|the "
                  r"(?:answer|function|code|query|script)\b)(?:[\w.'-]+\s+){1,5}?(?:kept|to (?:stay|remain|keep)|"
                  r"as \w+ as possible)\b")
"""``I want the dependency list kept as short as possible``: a state the project is to keep, not a request
for one change (``I want the tests to run on every push`` is a task)."""
_PREFER_ANY = _rx(r"^(?:please\s+)?prefer\s+\S+|\b\S+ (?:over|rather than|instead of) \S+,? please\b|"
                  r"^(?:i'm\s+|i am\s+|we're\s+|we are\s+)?not (?:a |much of a )?(?:big |huge )?fan of\b")
_COMPARE_LEAD = _rx(r"^(?!(?:no|not|we|we're|it|it's|i|i'm|you|they|our|my|this|that|the|let's|please)\b)"
                    r"(?:[\w.'/+#%-]+\s+){0,4}?[\w.'/+#%)-]+(?:,\s*please)?,?\s+(?:over(?!\s+(?:the|a|an|my|our|your|there|"
                    r"here|to|it|them)\b)|rather than|instead of|not|in preference to)\s+")
"""A verbless choice (``Dataclasses over plain dicts for records``, ``Pathlib, not os.path, ...``)."""
_NO_THING = _rx(r"^(?:please,?\s+)?(?:no|zero|never any)\s+(?!need\b|more\b|worries\b|problem|idea\b|way\b|rush\b|"
                r"clue\b|wonder\b|offen[cs]e\b|pressure\b|doubt\b|thanks\b|luck\b|kidding\b|big deal\b|matter\b|"
                r"one\b|longer\b|sooner\b|time\b|chance\b|hurry\b|reason\b|comment\b|surprise\b)[\w.'-]+")
"""A verbless rule (``No GPL dependencies, the client's lawyers ...``, ``No emojis, please, in ...``); a bare
``No log scale.`` (three words or fewer) answers a question of this turn."""
_OUTPUT_NOUNS = (r"answers?|repl(?:y|ies)|responses?|messages?|explanations?|snippets?|code(?: blocks?| samples?| "
                 r"examples?)?|examples?|scripts?|quer(?:y|ies)|sql|tests?|commands?|shell commands?|comments?|"
                 r"docstrings?|summar(?:y|ies)|commit messages?|functions?|methods?|classes|variables?|variable "
                 r"names?|names|tables?|charts?|plots?|diagrams?|prose|paragraphs?|headings?|titles?|outputs?")
_FOR_YOU = re.compile(r"\b(?:you|your|answers?|repl(?:y|ies)|responses?|explanations?|code samples?|snippets?|"
                      r"examples?|shell commands?|commit messages?|prose|headings?|emojis?|walls? of text)\b", re.I)
"""What marks a rule as being about the assistant's own output (an instruction, not a project constraint)."""
_OUTPUT_LEAD = _rx(r"^(?:(?:all|any|every|each|your|the)\s+)?(?:[\w-]+\s+)?(?:" + _OUTPUT_NOUNS +
                   r")\s+(?:in|as|under|with|without|within|at most|only in)\b")
"""Verbless: the assistant's output and how (``Answers in plain text, ...``, ``Replies under 200 words``)."""
_LESS_MORE = _rx(r"^(?:less|more|fewer|shorter|longer|simpler|terser|lighter)\s+\w+")

_DONT = _rx(r"^(?:please\s+)?(?:do not|don't|no more)\b")
_IMPERATIVE = _rx(r"^(?:please\s+)?(?:(?:do not|don't|never|always|just|only|also)\s+)?(?:" + _alt(_VERBS) +
                  r")\b(?!\s+of\b|\s+is\b|\s+are\b|\s+was\b|'s\b|-)")
_ALWAYS_NEVER = _rx(r"^(?:please\s+)?(?:never|always)\s+(?:(?:just|only|also|please)\s+)?"
                    r"(?:(?:" + _alt(_VERBS) + r")\b|"
                    r"(?!(?:mind|again|ever|happy|glad|sad|a|an|the|so|too|very|fun|good|great|nice|bad|funny|"
                    r"interesting|been|was|were|is|are|am|had|has|have|did|does|seems?|thinks?|thought|ends?|gets?|"
                    r"got|feels?|felt|wanted|liked|loved|knew|saw|understood|something|anything|nothing|someone|"
                    r"works?|fails?|happens?|breaks?|on|in|at|when|if|my|your|their|our|his|her|its|it|that|this|"
                    r"there|here|quite|really|enough|sure|easy|simple|before|after|late|early|the way)\b)"
                    r"[a-z]+(?<!ed)(?<!ing)\b)")
_MAKE_SURE = _rx(r"^(?:please\s+)?(?:make sure|ensure|be sure|remember to|don't forget to|do not forget to|"
                 r"take care to|try to)\b")
_YOU_MODAL = _rx(r"^you\s+(?:should|must|need to|have to|'ll need to|will need to|are to|can't|cannot|shouldn't|"
                 r"mustn't|may not|don't need to|no longer need to|don't have to|never need to|ought to|'re to)\b")
_SETTLED = _rx(r"^(?:please\s+)?(?:stick (?:to|with)|default to|refrain from|stay away from|keep using|keep to|"
               r"keep writing|keep giving|keep putting|call me|address me as|refer to me as|"
               r"only (?:use|write|answer|reply|respond|suggest|import|recommend|show|give))\b")
"""Directives that hold for good by their own words (no scope marker needed)."""
_LETS = _rx(r"^let's\s+(?:always|never|not|stick|keep|stay|use|go with|switch|stop|avoid|prefer|return|go back|"
            r"loosen|tighten|raise|lower|make|change|drop|target|move|standardi[sz]e|relax|agree)\b")
_LANGUAGE_DIRECTIVE = _rx(r"^(?:please\s+)?(?:answer|reply|respond|write|speak|talk|explain|switch)\s+(?:to\s+|back "
                          r"to\s+|only\s+)?(?:in\s+)?(?:" + _alt(TOPIC_CLASSES["language"]) + r")\b")
"""The language of the conversation changes for good (``Answer in German.``)."""
_MANNER = _rx(r"\bin (?:the |a |an )?[\w-]+ (?:style|mood|case|format|tense|voice|person|spelling|units|notation|"
              r"order)\b|\b(?:in|with) (?:snake_case|camelcase|kebab-case|pascalcase|british|american)\b")
"""A style rule (``Write commit messages in the imperative mood``): general unless it names one thing."""
_DEFINITE_OBJECT = _rx(r"^(?:please\s+)?(?:\w+\s+){1,2}?(?:the|this|that|these|those|it|them|my|our)\b")
_DEICTIC = _rx(r"\b(?:this|that|these|those)\b")

_SCOPE = _rx(
    r"\b(?:always|never|from now on|from today on(?:wards?)?|from today|going forward|from here on|henceforth|"
    r"in (?:the )?future|for the rest "
    r"of|every time|each time|whenever|any ?time you|unless (?:i|you|we) (?:ask|say|tell)|until (?:i|we) (?:say|"
    r"tell|ask)|until further notice|by default|as a rule|in general|everywhere|throughout|anymore|any more|no "
    r"longer|from this point|at all times|wherever (?:possible|you can)|whenever (?:possible|you can)|where "
    r"possible|when in doubt|, ever\b|ever again|across the (?:project|codebase|repo|board)|in (?:this|the|our) "
    r"(?:project|codebase|repo|repository|code base|app|service|notebook)|for (?:this|the|our) (?:project|codebase|"
    r"repo)|in anything|for anything|anything (?:you|that)|whatever you|wherever you|"
    r"(?:every|each|all(?: of)?(?: your| the| my| our)?|any|no) (?:of (?:your|the|my|our) )?(?:[\w-]+ )?"
    r"(?:" + _OUTPUT_NOUNS + r"|files?|modules?|commits?|endpoints?|signatures?|lines?|blocks?|thing you|"
    r"procedures?|steps?|projects?|jobs?|changes?)\b|"
    r"\bper (?:answer|reply|response|message|function|file|module|line|snippet|example|commit|paragraph|section|"
    r"test|endpoint|query|request|page|item|turn)\b|"
    r"(?:your|all) (?:answers|replies|responses|explanations|code blocks|snippets|examples|messages|"
    r"comments|code|prose|summaries)\b|^(?:keep|make)\s+(?:your\s+)?(?:answers|replies|responses|explanations|"
    r"code|prose)\b)"
)
"""Words that say an instruction holds beyond this turn: ``always``/``never``; time (``from now on``,
``until I say otherwise``, ``anymore``); place (``in this project``, ``everywhere``, ``throughout``); a
quantifier over what the assistant produces (``every answer``, ``any SQL``, ``per answer``, ``your
replies``, ``anything you ...``)."""
_HABIT = _rx(
    r"\b(?:when|whenever|before|each time|every time|any time|anytime|if|the first time)\s+(?:you|i)\s+"
    r"(?!do\b|did\b|want|like|prefer|wish|can\b|could\b|need|have\b|think|don't|get a|mind|are\b|were\b)\w+[^,.;]*"
    r"|\b(?P<before>[\w-]+)\s+(?:you|i)\s+(?:write|give|send|show|make|propose|suggest|use|produce|generate|add|"
    r"touch|quote|script|explain|mention|cite|change|create|paste|share|post|recommend|introduce|run|output|"
    r"return)\b(?!\s+(?:me\s+)?(?:the|this|that|it|a|an)\b)"
)
_NOT_BEFORE_YOU = frozenset("""can could would will should shall do does did if when to and so that sure think hope
    know said please then because but or as than how what why where whether thank let make have want need""".split())
"""Words before ``you write`` that make it no relative clause (``can you write ...``, ``make sure you ...``)."""
"""A habitual clause (``when you show shell commands``, ``the tables you make``, ``each time I ask``): a scope
when the rest of the sentence names no one thing (``this``, ``that``)."""

_MODAL = (r"must(?:\s+(?:not|never|always|only))?|mustn't|should(?:\s+(?:not|never|always|only))?|shouldn't|"
          r"(?:has|have|need|needs) to|(?:has|have) got to|(?:is|are) (?:required|expected|supposed|meant) to|"
          r"(?:can|could)(?:\s+not|n't|\s+never|\s+only)|cannot|may (?:not|never|only)|won't|will never|"
          r"(?:is|are)(?:n't|\s+not) allowed to|(?:is|are) not to|needs(?=\s+(?:a|an|its|their|no|"
          r"authentication|auth|tests?|docs?|type hints|\w+ing)\b)|need(?=\s+(?:authentication|auth|tests|docs|"
          r"type hints|docstrings)\b)")
_SUBJECT_MODAL = _rx(r"^(?P<subj>(?:[\w.'/+#-]+\s+){1,6}?)(?P<modal>" + _MODAL + r")\s+(?P<rest>\S.*)$")
"""A rule with a subject that is not a person (``Timestamps should live in UTC``, ``Tests must never hit the
network``, ``Every endpoint needs authentication``)."""
_EPISTEMIC = _rx(r"^(?:must|should|has to|have to) (?:be (?:nice|great|good|fun|hard|tough|easy|tired|annoying|awful|"
                 r"lovely|cool|interesting|exhausting|frustrating|boring|weird|strange|amazing|wrong|right|joking|"
                 r"kidding|mistaken|somewhere|around|fine by|done by|ready by|finished by|there)|have (?:been|\w+ed)\b)"
                 r"|^should (?:be|have) (?:done|ready|finished|fixed|back|here|there|out|up)\b")
_PROJECT_NOUNS = ("code|codebase|code base|api|app|application|service|services|site|website|library|package|"
                  "project|ui|frontend|backend|database|db|server|servers|box|machine|product|tool|system|pipeline|"
                  "build|ci|repo|repository|deployment|container|containers|image|cluster|bot|data|warehouse|"
                  "schema|stack|platform|runtime|environment|target|host|hosting|cli|sdk|plugin|extension|"
                  "firmware|device|microcontroller|output|exports?|logs?|backups?|infra|infrastructure|network|"
                  "whole thing|team")
_SUBJECT_OK = _rx(r"^(?:(?:all|any|every|each|no|our|your|both|these)\b.*|(?:the|this|that)\s+(?:[\w.'/+#-]+\s+){0,3}?"
                  r"(?:" + _PROJECT_NOUNS + r")|(?:the|this)\s+(?:[\w.'/+#-]+\s+){0,3}[\w.'/+#-]+s"
                  r"|(?:the\s+)?[\w-]+'s\s+(?:[\w.'/+#-]+\s+){0,2}[\w.'/+#-]+"
                  r"|(?!(?:the|this|that|a|an|my|his|her|their|i|you|he|she|they|we|it)\b)(?:[\w.'/+#-]+\s*){1,4}"
                  r"|it|we|everything|anything|nothing)$")
"""The subject of a rule: general (``all ...``, ``any ...``, ``our ...``, a bare plural or a name), the
project or a part of it (``the API``, ``the code``, ``the client's servers``), or plural (``the CSV
exports``) — not one thing of this turn (``the function must return None``) and not a person."""
_FACT = _rx(
    r"\b(?:runs?|running|is running|are running|(?:is|are) (?:hosted|deployed|served|built|packaged|installed)|"
    r"lives?|deploy(?:s|ed)?|ship(?:s|ped)?|hosts?) (?:on|in|to|with|at|from|as)\b"
    r"|^(?:we|we're|we are|we've|we have)\s+(?:(?:only|just|still|currently|now|all)\s+)?(?:use|using|run|running|"
    r"deploy|deploying|host|hosting|target|targeting|on|stuck (?:on|with)|staying on|stay on|build on|ship|"
    r"standardi[sz]ed on|limited to|locked to|pinned to|bound to|tied to|a [\w-]+ shop|an? [\w-]+ (?:team|house|"
    r"shop)|got|no|only|just)\b"
    r"|\b(?:is|are|was) (?:pinned|locked|stuck|limited|restricted|capped|fixed|frozen|bound|tied) (?:at|to|on|with)\b"
    r"|\b(?:has|have|gets?|got) (?:no|only|just|a (?:hard |strict |fixed )?(?:limit|cap|budget|ceiling|quota|"
    r"maximum|max))\b|\bonly (?:has|have|knows?|speaks?|supports?|runs?|allows?|accepts?|reads?|understands?|"
    r"gets?|is|are)\b|^only\b.*\b(?:is|are) (?:available|allowed|installed|supported|permitted)\b"
    r"|\b(?:is|are)(?: not|n't) (?:an option|allowed|permitted|available|supported|installed|possible)\b"
    r"|\b(?:off the table|out of the question|nowhere else|and nothing else|at the (?:oldest|latest|most|least)|"
    r"no more than|not more than|at most|at least|maximum of|max of|up to \d)\b"
    r"|\b(?:is|are) (?:stored|kept|written|encoded|recorded|expressed|measured) (?:as|in)\b"
    r"|\b(?:is|are) (?:owned|managed|maintained|controlled) by (?:another|an?other|the other|a different|a separate|"
    r"the \w+ team)\b"
    r"|\b(?:can't|cannot|can not|won't|may not|must not|mustn't) (?:be )?(?:use|used|change|changed|upgrade|"
    r"upgraded|install|installed|touch|touched|add|added|reach|call|access|modify|modified|pay)\b"
    r"|^it's\s+[\w.-]+(?: \d[\w.]*)?,\s+not\b|\bthere(?:'s| is| are) no\b|\bthere won't be\b"
)
"""What makes a statement about the project a constraint: where it runs, what it is pinned or limited to,
what it has none of or only, what is not an option, how data is stored, what cannot be changed."""
_FACT_NAMED = re.compile(r"\b(?:is|are|'s|'re|am) (?:all |still |now |only )?on (?:a |an |the )?[A-Z][\w.+-]*"
                         r"|\b(?:run|runs|target|targets|support|supports) (?:only )?[A-Z][\w.+-]*"
                         r"|,\s+not\s+[A-Z][\w.]*[,.]"
                         r"|\b(?i:target|version|runtime|database|db|stack|os|platform|python|engine|server|host) "
                         r"(?:is|are) (?:[A-Z]|\d)")
"""A constraint that names the platform (``Half the team is on Windows``, ``The servers run Windows Server``,
``We use PostgreSQL, not MySQL``): the capital is the name."""
_NOT_SUBJECT = _rx(r"^(?:my|his|her|their|i|i'm|i'd|i've|you|you're|he|she|they|someone|somebody|nobody|no one|"
                   r"people)\b")
_PAST = _rx(r"\b(?:was|were|had|used to|did|went|broke|yesterday|last (?:week|month|year|time|night)|ago|"
            r"at my (?:previous|old|last) (?:job|company|work)|previously|back then|once upon)\b")
_PRESENT = _rx(r"\b(?:is|are|am|has|have|'s|'re|must|should|can|can't|cannot|need|needs|only|now|runs?|uses?|"
               r"deploy|target)\b")
_CLAUSE = re.compile(r",\s+(?:so|and|but|which means|since|as)?\s*|;\s+|\s+-\s+|\s+[—–]\s+")

_REVISE = _rx(r"^(?:actually|instead|on second thought|scratch that|change of plan|change of heart|correction|"
              r"update|good news|new rule|make that|make it|scratch the|go back to)\b|\b(?:after all|instead(?! of)|"
              r"switch(?:ed)? (?:back )?to|(?:have |'ve )?(?:moved|migrated|switched|upgraded|downgraded|bumped|"
              r"ported|changed|swapped|gone over)(?: (?:us|it|them|everything))?(?: (?:over|back))? (?:to|from)\b|"
              r"got upgraded|upgraded|bumped|make that|loosen|tighten|raise|lower|relax|change that|"
              r"(?:is|are) (?:fine|ok|okay|allowed|acceptable) (?:now|again|from now on)|"
              r"can (?:now )?(?:target|use|drop|go with|switch|be)|now that|come (?:round|around) to|changed my mind|"
              r"(?:is|are|'s|'re) (?:fine|ok|okay) (?:after all|too)|again,? please|can use [\w-]+(?: [\w-]+)? "
              r"again)\b|\b(?:now|again)[.!]?$")
"""A change of something said before (``actually``, ``switch to``, ``we've moved to``, ``make that``, ``... is
fine now``, ``... now`` at the end)."""
_REVOKE = _rx(r"\b(?:(?:you can|you may|feel free to|let's|we can|please|ok(?:ay)?,?)\s+(?:now\s+)?(?:go back to|"
              r"return to|switch back to|revert to|drop|stop|skip|forget|ignore|ditch|lose|leave out|omit)|no need for|"
              r"no need to|no more(?! than)|(?:is|are) no longer (?:needed|required|necessary|a thing)|"
              r"don't (?:need to|have to) "
              r".*(?:anymore|any more)|(?:no longer|not) need(?:ed)? (?:the|that|those|them)|"
              r"^(?:stop|drop|forget(?! (?:that )?i asked\b)|ignore|skip|ditch|lose)\b|"
              r"^never mind\b|^nevermind\b|^back to\b|"
              r"^(?:we|i) (?:dropped|removed|ditched|killed|retired)\b|(?:is|are|'s) (?:gone|dead|over|retired|"
              r"dropped|history)\b|\bbring (?:it|them|that|those|the \w+) back\b)|"
              r"^let's\s+(?:return|go back|switch back)\b")
"""Something said before taken back (``you can go back to``, ``no need for``, ``drop the ...``, ``never mind
the ...``, ``... is gone``, ``... is fine again``)."""
_PERMISSION = _rx(r"\b(?:we|you) can (?:now )?(?:target|use|drop|go with|switch|rely on|assume|be)\b"
                  r"|\b(?:is|are|'s|'re) (?:fine|ok|okay|allowed|fair game)\b|\bfeel free\b|\b(?:is|are) enough\b")
_SWITCH = _rx(r"\b(?:switch(?:ed)? (?:back )?to|go back to|instead(?! of))\b")
_CHANGE_LEAD = _rx(r"^(?:instead|scratch|change of plan|on second thought|go back to|correction)\b")
_NEW_VALUE = _rx(r"\b(?:went|gone|move|moved|push|pushed|slipped|raise|raised|bump|bumped|increase|increased|"
                 r"decreased|lower|lowered|dropped|cut|extend|extended|shortened|doubled|halved|change|changed|"
                 r"shifted|roll|rolled)\b(?:\s+\w+){0,4}?\s+(?:to|up|down|by|back|forward)\b")
"""A new value for something said before, with no cue word of a change (``Budget went up, we can spend 500 a
month now``, ``The MVP deadline slipped to April 4``): a revision, kept only when it is about a live item."""


@dataclass(frozen=True)
class Finding:
    """A standing instruction, preference or constraint recognised in a user's sentence."""

    text: str
    """The sentence, in the user's words."""
    kind: StandingKind
    rule: str
    """Which rule accepted it (``label``, ``directive``, ``preference``, ``constraint``, ``revision``,
    ``revocation``), ``learned``: the learned reader kept what the rules left (:mod:`.standing_model`), or
    ``acknowledged``: the assistant's reply took it up as lasting (:func:`acknowledged`)."""
    change: Change = "new"
    """``new``; ``revise``: replaces the live item it shares a topic with, if one does; ``revoke``: takes
    that item back (and adds nothing)."""
    standalone: bool = False
    """For a revocation: the sentence is also an instruction of its own (``Stop adding 'Hope this helps!'
    at the end of your answers``), kept as a new one when it takes nothing back."""


@dataclass(frozen=True)
class Verdict:
    """What the rules made of one sentence: a finding, or the reason it is not standing."""

    sentence: str
    finding: Finding | None
    reason: str
    """``standing`` for a finding; else ``question``, ``quoted`` (someone else's words, quoted or reported),
    ``third_party`` (an instruction for someone else), ``hypothetical``, ``one_off``, ``chit_chat``,
    ``self``, ``no_scope`` (a request for this turn), ``not_work`` (nothing of the work in it) or
    ``statement``."""


def _weak_work(text: str) -> bool:
    """Any word of the work, a weak one or a topic class's (a revocation only takes effect on a live item
    it matches, so one word is enough: ``Back to English please``)."""
    return any(t in WEAK_WORK_WORDS or t in _CLASS_OF for t in tokens(text))


def _strip_lead(s: str) -> str:
    prev = None
    while prev != s:
        prev = s
        s = _LEAD.sub("", s).strip()
        s = _WHEN_LEAD.sub("", s).strip()
        s = _TOPIC_LEAD.sub("", s).strip()
    return s


def _masked(sentence: str) -> str:
    return _QUOTE.sub(" «quoted» ", sentence).replace("\u2019", "'")


def _flat(sentence: str) -> str:
    """:func:`_masked`, lower-cased, on one line with single spaces (what the cue patterns read)."""
    return " ".join(_masked(sentence).split()).lower()


def _reported(low: str, core: str) -> bool:
    """Someone else's words: quoted with a reporting verb, or reported without quotes (not the user's)."""
    if "«quoted»" in low and (_REPORTED.search(low) or low.startswith("«quoted»")):
        return True
    return bool(_ACCORDING.search(low) or _REPORT_VERB.match(core))


def _rule(clause: str, cased: str, work: bool, past: bool) -> tuple[str, StandingKind] | None:
    """``(rule, kind)`` when ``clause`` states a rule or a fact of the project: a non-person subject with a
    binding modal (:data:`_SUBJECT_MODAL`), a constraint's fact (:data:`_FACT`) in the present, or a verbless
    ``No X``. ``cased``: the same clause with its capitals (names); ``work``: the sentence has a word of
    the work; ``past``: it tells of the past (``Deployed it yesterday, no complaints so far``)."""
    if _NOT_SUBJECT.match(clause) or _THIRD_HABIT.match(clause):
        return None
    if _NO_THING.match(clause) and work_words(cased) and not past and len(clause.split()) >= 4:
        return ("directive", "instruction") if _FOR_YOU.search(clause) and re.search(r"\byou\b|\bper\b|answer",
                                                                                      clause) else (
            "constraint", "constraint")
    sm = _SUBJECT_MODAL.match(clause)
    if sm and not _EPISTEMIC.match(sm.group("modal") + " " + sm.group("rest")):
        subj = sm.group("subj").strip()
        bare_need = sm.group("modal").startswith("need")
        if (_SUBJECT_OK.match(subj) and not re.search(r"\b(?:" + _PEOPLE + r")\b", subj)
                and not (bare_need and subj in ("we", "it")) and not re.search(r"\b(?:that|which|who)\b", subj)):
            if not work:
                return None
            if _FOR_YOU.search(subj) and re.search(r"\b(?:" + _OUTPUT_NOUNS + r")\b|\byou\b", subj):
                return "directive", "instruction"
            return "constraint", "constraint"
    if (_FACT.search(clause) or _FACT_NAMED.search(cased)) and work and not past:
        return "constraint", "constraint"
    return None


def _clauses(core: str, cased: str) -> list[tuple[str, str]]:
    """The clauses of a sentence (split at ``, so``, ``;``, a dash ...), lower-cased and with capitals."""
    low_parts = _CLAUSE.split(core)
    cased_parts = _CLAUSE.split(cased)
    if len(low_parts) != len(cased_parts):
        cased_parts = low_parts
    return [(a.strip(), b.strip()) for a, b in zip(low_parts, cased_parts, strict=True) if a.strip()]


def _kind_of_directive(core: str, to_you: bool) -> StandingKind:
    """An instruction, or a preference when it chooses between two things of the work for the project
    (``Use the logging module instead of print``), not about the assistant's manner (``ask me rather than
    guessing``)."""
    if to_you or _DONT.match(core) or re.search(r"\bme\b", core):
        return "instruction"
    return "preference" if re.search(r"\b(?:prefer|rather|over|instead of|better than)\b", core) else "instruction"


Reader = Callable[[str], bool]
"""The learned reader of what the rules leave (:class:`~.standing_model.StandingModel`): whether a sentence
reads as meant to hold for good."""
LEARNED_READS = frozenset({"statement", "no_scope", "not_work", "self"})
"""The verdicts the learned reader may overturn: a plain statement, a request with no scope the rules know,
a preference with no word the rules know as the work's ("I'm not a fan of nested ternaries"), a sentence
about the speaker ("I'd like comments to explain why, not what"). Never a question, quoted words, a
one-off, chit-chat, an instruction for someone else or a hypothetical. (On the held half of
``data/standing_sentences_dev.json``, with the reader trained on the other half: the first two alone found
123 of 180, all four 135, against the rules' 103.)"""


_TIME_SCOPE = _rx(r"\b(?:from (?:now|here|this point) on(?:wards?)?|from today(?: on(?:wards?)?)?|going forward|"
                  r"henceforth|until further notice|for the rest of (?:the|this) "
                  r"(?:session|project|chat|conversation))\b")
"""A time scope that says "for good" whatever the sentence's form."""
_HERE_AND_NOW = _rx(r"\b(?:this|that|these|those)\b")
"""One thing, now: "Set up ESLint in this project", "Rename that column" — read in the main clause only (a reason
after it, "..., I read these on a phone", points elsewhere). Not ``here``: "House style for SQL here is all
lowercase" says where it holds."""


_BINDING = _rx(r"\b(?:must(?:n't)?|has to|have to|had better|needs? to|can't|cannot|can only|may only|may not|"
               r"not allowed|at most|at least|no more than|no later than|limit(?:ed)?|max(?:imum)?|deadline|budget|"
               r"only ever|required|mandatory|forbidden)\b")
"""A binding word of a project's limit ("The partner API allows at most 60 requests a minute", "CSV files we hand out
must be semicolon-separated"): read at the reader's lenient bar, as a liking is (the blind split, development:
constraints found 14 -> 17 of 26; ``standing_sentences_test.json`` 109 -> 112 of 150 found, 13 of 250 kept as
before)."""


_READ_CLAUSE = re.compile(r"[;:]|,\s+(?:so|because|since|as)\s|\s[-\u2013\u2014]\s", re.I)
_READ_CLAUSE_WORDS = 4
"""The reader also reads each clause of a sentence (of at least this many words), split at a semicolon, a colon, a
dash or a reason ("..., so ..."): "Connectivity out there is patchy at best: assume the tablets are offline for
hours at a time" is rated by its instruction, not diluted by its reason (``standing_sentences_test.json``, never
read: 112 -> 114 of 150 found, 13 of 250 kept as before; the blind split 77 -> 78 of 101)."""


def _as_request(sentence: str) -> str:
    """A polite question as the request it makes: "Could you keep paragraphs short?" -> "Keep paragraphs short."
    (what the reader reads: it was trained on requests, and rates the question form lower)."""
    plain = _POLITE_STRIP.sub("", _strip_lead(" ".join(_masked(sentence).split()))).strip().rstrip("?").strip()
    return f"{plain[:1].upper()}{plain[1:]}." if plain else sentence


def _main_clause(core: str) -> str:
    """``core`` up to its first comma, semicolon, colon or dash."""
    return re.split(r"[,;:]|\s[-\u2013\u2014]\s", core, maxsplit=1)[0]


_LIKING = _rx(r"^(?:i|we)(?:'d|\s+would|\s+really|\s+generally|\s+usually|\s+much|\s+also|\s+still|\s+strongly)*\s+"
              r"(?:prefer|rather|like|love|want|favou?r)\b")
"""A liking said in the first person: the reader's lenient bar (:attr:`.StandingModel.lenient_threshold`)."""


def _learned_kind(core: str, directive: bool) -> StandingKind:
    """The kind of a sentence the learned reader keeps: a preference when it chooses or likes, an instruction
    when it addresses the assistant, else a constraint of the project."""
    if re.search(r"\b(?:prefer|rather|instead of|better than|fan of|like|love|hate|favou?r)\b", core):
        return "preference"
    if directive or re.search(r"\b(?:you|your|me|my|please)\b", core):
        return "instruction"
    return "constraint"


def judge(sentence: str, reader: Reader | None = None) -> Verdict:
    """The verdict on one sentence (see the module docstring for the rules, in their order); ``reader``:
    the learned reader, asked about what the rules leave as a statement or a request for this turn."""
    verdict = _judge(sentence)
    if reader is None:
        return verdict
    s = verdict.sentence
    low = _flat(s)
    core = _strip_lead(low)
    # a polite request in a question's form ("Could you wrap code at 79 columns?") is read as the request it is
    polite = (verdict.reason in ("question", "no_scope") and bool(_POLITE_YOU.match(core))
              and low.count("?") == 1 and low.endswith("?"))
    if verdict.reason not in LEARNED_READS and not polite:
        return verdict
    if polite:
        core = _POLITE_STRIP.sub("", core).rstrip("?").strip()
    if _PAST.search(core) or _DEFINITE_OBJECT.match(core) or _HERE_AND_NOW.search(_main_clause(core)):
        # it tells of the past, or asks for one thing now ("Give me the commands to ...", "Set up ESLint in
        # this project"): on the same held half, 6 fewer such sentences kept, 1 of 135 lost
        return verdict
    lenient = getattr(reader, "lenient", None) if (_LIKING.match(core) or _BINDING.search(core)) else None
    read = _as_request(s) if polite else s
    said = lenient if lenient is not None else reader
    parts = [p.strip() for p in _READ_CLAUSE.split(read) if len(p.split()) >= _READ_CLAUSE_WORDS]
    if not (said(read) or (len(parts) > 1 and any(said(p) for p in parts))):
        return verdict
    directive = verdict.reason == "no_scope" or polite
    change: Change = "revise" if _REVISE.search(low) else "new"
    return Verdict(s, Finding(s, _learned_kind(core, directive), "learned", change), "standing")


def _judge(sentence: str) -> Verdict:
    s = sentence.strip()
    label = _LABEL.match(s)
    if label and s.split(None, 1)[0].lower() not in _VERBS:
        word = label.group(1).lower()
        kind: StandingKind = ("preference" if word == "preference" else
                              "instruction" if "instruction" in word else "constraint")
        return Verdict(s, Finding(s, kind, "label"), "standing")
    m = " ".join(_masked(s).split())
    low = m.lower()
    cased = _strip_lead(m)
    core = cased.lower()
    scoped = bool(_SCOPE.search(low))
    habit = next((h for h in _HABIT.finditer(low) if h.group("before") not in _NOT_BEFORE_YOU), None)
    if not scoped and habit is not None:  # a habitual clause, unless the rest names one thing
        rest = (low[: habit.start()] + " " + low[habit.end():])
        scoped = not _DEICTIC.search(rest)
    work = bool(work_words(m))
    polite = bool(_POLITE_YOU.match(core))
    if polite:
        cased = _POLITE_STRIP.sub("", cased).rstrip("?").strip()
    bare = cased.lower()
    # ---- never standing
    if _THIRD_PARTY.search(cased):
        return Verdict(s, None, "third_party")
    question = low.endswith("?") or bool(_QUESTION_OPEN.match(core))
    if question and not (polite and (scoped or _HABIT_CHANGE.match(core)) and not _ALWAYS_NEVER.match(core)):
        return Verdict(s, None, "question")
    if _reported(low, core):
        return Verdict(s, None, "quoted")
    if _HYPOTHETICAL.search(low) or _HYPOTHETICAL.search(core):
        return Verdict(s, None, "hypothetical")
    if _ONE_OFF.search(low):
        return Verdict(s, None, "one_off")
    if (_PHATIC.search(low) or _WISH.search(low) or (_POLITE.search(low) and not work)
            or (_THIRD_HABIT.match(core) and not _TO_YOU.match(core))):
        return Verdict(s, None, "chit_chat")
    core = bare
    revoke = bool(_REVOKE.search(low) or _REVOKE.search(core))
    revise = bool(_REVISE.search(low))
    new_or: Change = "revise" if revise else "new"
    past = bool(_PAST.search(core)) and not _PRESENT.search(core)
    # ---- addressed to the assistant
    to_you = bool(_TO_YOU.match(core))
    directive = bool(to_you or _YOU_MODAL.match(core) or _MAKE_SURE.match(core) or _LETS.match(core)
                     or _DONT.match(core) or _ALWAYS_NEVER.match(core) or _SETTLED.match(core)
                     or (_IMPERATIVE.match(core) and not _SELF.match(core)))
    standing_directive = directive and bool(
        scoped or _ALWAYS_NEVER.match(core) or _SETTLED.match(core) or _RATHER_YOU.match(core)
        or _LANGUAGE_DIRECTIVE.match(core) or (_MANNER.search(core) and not _DEFINITE_OBJECT.match(core)))
    if revoke and (work or directive or _weak_work(m)):
        return Verdict(s, Finding(s, "instruction", "revocation", "revoke", standalone=standing_directive),
                       "standing")
    preference = bool(_PREFER.match(core) or _PREFER_ANY.search(core) or _PREFER_NOUN.search(core)
                      or _LIKE.match(core) or _WANT_SHAPE.match(core))
    if preference and not to_you:
        if not work:
            return Verdict(s, None, "not_work")
        return Verdict(s, Finding(s, "preference", "preference", new_or), "standing")
    if _WANT.match(core) and not to_you and scoped and work:
        return Verdict(s, Finding(s, "instruction", "directive", new_or), "standing")
    if _SELF.match(core) and not to_you:
        return Verdict(s, None, "self")
    if directive:
        if standing_directive:
            return Verdict(s, Finding(s, _kind_of_directive(core, to_you), "directive", new_or), "standing")
        # a noun that is also a verb ("Test coverage must stay above 80%") is a rule's subject
        rule = _rule(core, cased, work, past) if not to_you and not _YOU_MODAL.match(core) else None
        if rule is not None and _SUBJECT_MODAL.match(core):
            return Verdict(s, Finding(s, rule[1], rule[0], new_or), "standing")
        if revise:
            return Verdict(s, Finding(s, "instruction", "revision", "revise"), "standing")
        return Verdict(s, None, "no_scope")
    if _TIME_SCOPE.search(low) and work and not past:  # "Numbered lists only from here on, no bullet points"
        return Verdict(s, Finding(s, "instruction", "directive", new_or), "standing")
    # ---- verbless choices and rules about the assistant's output
    if _COMPARE_LEAD.match(core) and work and not re.search(r"\b(?:is|are|was|were|has|have|had)\b",
                                                           re.split(r",| over | rather than | instead of ", core)[0]):
        return Verdict(s, Finding(s, "preference", "preference", new_or), "standing")
    if (_OUTPUT_LEAD.match(core) and (work or scoped)) or (_LESS_MORE.match(core) and scoped):
        return Verdict(s, Finding(s, "instruction", "directive", new_or), "standing")
    # ---- rules and facts of the project, clause by clause
    for clause, clause_cased in [(core, cased), *_clauses(core, cased)]:
        rule = _rule(clause, clause_cased, work, past)
        if rule is not None:
            return Verdict(s, Finding(s, rule[1], rule[0], new_or), "standing")
    if _NEW_VALUE.search(low) or ((revise or re.search(r"\b(?:now|again)\b", low)) and _PERMISSION.search(low)
                                  and not past):
        # a new value for something said before: a revision, applied only to a live item it is about
        return Verdict(s, Finding(s, "constraint", "revision", "revise"), "standing")
    if not work:
        about_us = re.match(r"(?:we|we're|we've|we'll|we are|our|ours|us|the team|everyone|everybody|it|it's|"
                            r"everything)\b", core)
        return Verdict(s, None, "not_work" if about_us or _SUBJECT_MODAL.match(core) or _FACT.search(core)
                       else "statement")
    if revise and (_PERMISSION.search(low) or re.search(r"\b(?:now|again)\b", low)) and not _NOT_SUBJECT.match(core):
        return Verdict(s, Finding(s, "constraint", "revision", "revise"), "standing")
    if revise and _CHANGE_LEAD.match(low):  # "Scratch the pytest thing, the team voted to stay on unittest."
        return Verdict(s, Finding(s, "constraint", "revision", "revise"), "standing")
    return Verdict(s, None, "statement")


_CHANGE_CUE = _rx(r"\binstead\b|\bany ?more\b|\bno longer\b|\bswitch(?:ing|ed)?\b|\bchanged? my mind\b|"
                  r"\bchang(?:e|ed|ing)\b(?:\s+[\w'./-]+){0,4}?\s+(?:to|into)\b|\b(?:bump|raise|lower|turn|push|move|"
                  r"moving|point|migrate|migrating)\b(?:\s+[\w'./-]+){0,4}?\s+(?:to|up|down|at|over)\b|"
                  r"\bmake (?:it|that|them|those)\b|\blet'?s (?:say|do|go with|make it|move)\b|\bafter all\b|"
                  r"\b(?:is|are|'s) too (?:strict|loose|much|little|low|high|big|small|long|short|many|few|noisy|"
                  r"slow|tight)\b|\bon (?:reflection|second thought)\b|\bscratch that\b")
"""A change named as one, in a sentence the rules do not keep on its own (``Change the seed to 1234 please.``,
``30 is too strict, let's say 60.``, ``We're moving to unittest, so write the tests with that instead.``)."""
_FROM_NOW = _rx(r"\bfrom (?:now|here)(?: on)?\b|\bgoing forward\b|^.+\snow(?:[,;.!]|$)")
"""From now on: ``the per-cell limit is 15 minutes now``, ``we have the whole box now, so ...`` (a ``now`` that ends a
clause; not a leading ``Now explain ...``)."""
_TAKE_BACK = _rx(r"\bnever ?mind\b|\b(?:drop|ignore|forget(?! (?:that )?i asked\b)|scrap|ditch|disregard)\b|"
                 r"\blifted\b|\bcancell?ed\b|"
                 r"\b(?:doesn't|does not|no longer) (?:apply|applies|hold|holds|matter|matters)\b|"
                 r"\bno (?:[\w-]+ )?(?:limit|restriction|requirement|cap|rule)\b|\b(?:quit|stop) [\w-]+ing\b|"
                 r"\b(?:is|are) (?:off|over|gone)\b")
_OWN_HABIT = _rx(r"\b(?:i|i'll|i'd|i'm|we|we'll|he|she|they|my \w+)(?:\s+[\w']+){0,3}\s+$")
"""A subject before a take-back verb: the speaker's (or someone's) habit ("I always forget my keys", "I'll try to
stop working through lunch"), not the user taking an instruction back ("Forget the length limit", "you can stop
numbering")."""


def _takes_back(low: str) -> bool:
    """:data:`_TAKE_BACK` said as the user's own take-back, not as a habit (:data:`_OWN_HABIT` before the verb)."""
    return any(not _OWN_HABIT.search(re.split(r"[,;:.!]", low[: m.start()])[-1]) for m in _TAKE_BACK.finditer(low))


_APART_FROM_CHANGES = frozenset({"question", "quoted", "third_party", "hypothetical", "one_off", "chit_chat"})
_NUMBER = re.compile(r"\d")
_POINTING = _rx(r"\b(?:it|that|this|them|those)\b|\blet'?s (?:say|do)\b")


def change_in_context(sentence: str, live: Sequence[tuple[str, str]],
                      verdict: Verdict | None = None) -> tuple[str, Change] | None:
    """A change of a live item said in a sentence the rules leave on its own, read with the live items
    ``(id, text)`` it may be about: ``(id, "revise" | "revoke")``, or ``None``.

    Alone, ``Change the seed to 1234 please.`` is a request for this turn and ``the per-cell limit is 15
    minutes now`` a statement; said while ``Use a random seed of 42 everywhere.`` or ``Cells may run for at
    most 5 minutes.`` holds, each changes it. Taken: a sentence that names a change (:data:`_CHANGE_CUE`) or
    takes something back (:data:`_TAKE_BACK`) and shares a topic with one live item (or, with a number and
    pointing at it — ``make it 120``, ``let's say 60`` — the latest live item with a number), or one that only
    says ``now`` / ``going forward`` and shares a topic class and a word with a live item. Never a question,
    quoted or reported words, a hypothetical, a one-off or chit-chat. ``verdict``: the sentence's, when known."""
    if not live:
        return None
    verdict = verdict or _judge(sentence)
    if verdict.finding is not None or verdict.reason in _APART_FROM_CHANGES:
        return None
    low = _flat(sentence)
    cue, take_back = bool(_CHANGE_CUE.search(low)), _takes_back(low)
    change: Change = "revoke" if take_back and not re.search(r"\b(?:instead|to|use|switch\w*)\b", low) else "revise"
    if cue or take_back:
        target = match(sentence, live, loose=True)
        if target is None and change == "revise":
            target = pointed_value(sentence, live)
        return (target, change) if target is not None else None
    if _FROM_NOW.search(low):  # a topic class and a word shared (a class counts twice), with one live item only
        mine = topics(sentence)
        near = [cid for cid, t in live if mine & (theirs := topics(t)) & _CLASSES and _overlap(mine, theirs) >= 3]
        return (near[0], "revise") if len(near) == 1 else None
    return None


def pointed_value(sentence: str, live: Sequence[tuple[str, str]]) -> str | None:
    """The live item a new value points at when the sentence names nothing else (``make it 120``, ``let's say
    60``, ``it's 99.9 now``): the latest live item with a number, when the sentence has a number, points
    (``it``, ``that``, ``let's say``) and shares no topic with any live item."""
    low = sentence.lower()
    if not (_NUMBER.search(low) and _POINTING.search(low)):
        return None
    mine = topics(sentence)
    if any(_overlap(mine, topics(t)) for _, t in live):
        return None
    valued = [cid for cid, t in live if _NUMBER.search(t)]
    return valued[-1] if valued else None


def strong_change(text: str) -> bool:
    """A new item that says it changes something (``instead``, ``switch``, ``any more`` …, not only ``from now
    on``): it replaces the live item it shares a topic with."""
    return bool(_CHANGE_CUE.search(_flat(text)))


def says_what_changed(text: str) -> bool:
    """Whether a change names what now holds — a permission (``... are allowed any weekday now``) or a new
    value (``... raised our rate limit to 50``) — so it may find the item it changes by one shared topic."""
    low = _flat(text)
    return bool(_PERMISSION.search(low) or _NEW_VALUE.search(low) or _SWITCH.search(low) or _CHANGE_LEAD.match(low))


_ACK_LASTING = _rx(
    r"\b(?:from (?:now|here|this point|today) on(?:wards?)?(?: out)?|from now|from here(?=[.!;]|$)|going forward|"
    r"moving forward|henceforth|for everything (?:that follows|after this|from here)|for the rest of (?:the|this|our)|"
    r"(?:in|for) (?:all )?(?:my |our |the )?future (?:answers|replies|responses|code|turns|examples|work)|"
    r"(?:in|for|to) (?:every|each|all) (?:of )?(?:my )?(?:answers?|repl(?:y|ies)|responses?)|"
    r"(?:i'll|i will|will) (?:keep|stick|hold) to (?:that|this|it)|(?:i'll|i will|will) (?:keep|bear) "
    r"(?:that|this|it) in mind|(?:i'll|i will) remember|that's how i'll|(?:i'll|i will)(?: \w+){0,3} (?:always|never)|"
    r"standing rule|(?:new|updated) (?:rule|version|one|setup) (?:replaces|takes over))\b")
"""A reply's opening that takes what the user said as lasting: "Understood, I'll keep to that from now on.",
"Noted for everything that follows.", "Got it, that's how I'll answer from here.", "I'll make sure all my future
answers do that.", "consider it a standing rule" (and the same in the languages a session may be asked to answer
in: :data:`_ACK_FOREIGN`). Phrased on the generated chats, the ``dev`` pool of
``benchmarks/retention/standing.py``'s ``ACKS`` (chat models' own openings) and the blind split; measured on the
``test`` pool and the ``blind2`` split."""
_ACK_COMMIT = _rx(
    r"\b(?:from (?:here|this point)|consistently|(?:in|to|into|for) everything (?:that follows|we build|i write|we do)|"
    r"all (?:of )?my (?:replies|answers|responses|code|examples)|my (?:default|standard|usual)|"
    r"(?:standard|default) (?:approach|practice|way)|(?:the )?updated (?:rule|version)|change noted)\b")
"""What says "for good" only in a sentence where the assistant commits to it (:data:`_ACK_MINE`): "I'll follow that
consistently.", "All my replies will follow that.", "That'll be my default from here.", "I'll factor that into
everything we build." ("From here, run the migration" is the answer.)"""
_ACK_FOREIGN = _rx(r"\b(?:ab jetzt|von nun an|ab sofort|à partir de maintenant|désormais|dorénavant|a partir de ahora|"
                   r"de ahora en adelante|desde ya|d'ora in (?:poi|avanti)|da ora in poi|vanaf nu|"
                   r"voortaan|a partir de agora|de agora em diante|daqui (?:em diante|para a frente))\b")
""""From now on" in the languages a session may be asked to answer in: lasting wherever the opening says it."""
_ACK_SHORT = _rx(r"\b(?:noted|updated|(?:new|updated) (?:rule|version|one) replaces|switching (?:over|to)|"
                 r"i'll switch|no more)\b|\b(?!here\b|there\b|that\b|this\b|so\b)\w+ it is[.!]?$")
"""The same said in a few words ("Fine by me, noted.", "OK, updated.", "Noted, switching over."): lasting only in an
opening of at most :data:`_ACK_SHORT_WORDS` words ("I've updated the loader so it retries ..." is the answer)."""
_ACK_SHORT_WORDS = 8
_ACK_PLAIN = _rx(r"^(?:ok(?:ay)?|sure(?: thing)?|got it|you got it|understood|will do|fine|of course|all ?right|agreed|"
                 r"roger|certainly|absolutely|no problem|sounds good|perfect|makes sense|good call|great)"
                 r"(?:[,;]? (?:will do|got it|noted|sure|thanks|no problem))?[.!]?$")
"""A reply that opens with a bare acknowledgement ("Will do.", "Got it.", "Sure thing."): weaker, it follows
requests for one turn too. So does one that opens with such a word and goes on to say what it will do ("Sure
thing, I'll stick with minimal dependencies.", "Thanks for letting me know! I'll keep responses concise.")."""
_ACK_WILL = _rx(r"^(?:i'll|i will)\b")
_ACK_MINE = _rx(r"\b(?:i'll|i will|i'm going to|i am going to|my|that's how i)\b")
"""The assistant's own commitment, in the sentence that says "for good" (not what the code now does)."""
_ACK_THANKS = _rx(r"^(?:thanks|thank you)\b")
_ACK_LEAD_WORDS = 3
"""An opening sentence this short is an interjection ("Got it!", "You got it!", "Good call."): what it says comes
in the next sentence ("Got it! I'll keep that in mind going forward."), which is read with it."""
_ACK_CHANGE = _rx(r"\b(?:updated|replaces?|switch(?:ing|ed)?|changed?|instead)\b")
ACK_BAR = 0.5
"""The learned reader's bar for the sentence a lasting acknowledgement takes up (its own bar is higher: alone it
must tell a lasting sentence from a request; here the reply has said which)."""
PLAIN_ACK_BAR = 0.75
"""The same after a bare acknowledgement."""
_ACK_WORDS = 30
"""An opening sentence longer than this is the answer itself, not an acknowledgement."""


def _opening(reply: str) -> tuple[str, str]:
    """The first sentence (or line) of ``reply``, curly apostrophes straightened, and the next one when the first
    is an interjection (at most :data:`_ACK_LEAD_WORDS` words, or a thank-you) — else ``""``."""
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n", reply.replace("\u2019", "'").strip(), maxsplit=2)]
    first = parts[0]
    lead = len(first.split()) <= _ACK_LEAD_WORDS or _ACK_THANKS.match(first)
    return first, (parts[1] if lead and len(parts) > 1 else "")


_ACK_WORD = _rx(r"^(?:noted|understood|got it|you got it|sure|ok(?:ay)?|will do|fine|of course|absolutely|certainly|"
                r"perfect|great|sounds good|makes sense|good call|alright|all right|agreed|thanks|thank you)\b")


def _said_by_you(first: str) -> bool:
    """Whether the opening sentence says the assistant's own "from now on": it commits (:data:`_ACK_MINE`), opens
    with an acknowledging word (:data:`_ACK_WORD`), or is short — not "From now on the function returns None instead
    of raising." or "Going forward, the cache will be invalidated on every write." (what the code now does)."""
    return bool(_ACK_MINE.search(first) or _ACK_WORD.match(first) or len(first.split()) <= 6)


def acknowledgement(reply: str) -> str | None:
    """How the assistant's ``reply`` opens: ``lasting`` when it takes what the user said as holding from now on,
    ``plain`` for a bare "Will do." / "Got it.", else ``None``. Only its opening counts — the first sentence, and
    the next after an interjection ("Got it! I'll keep that in mind going forward."): an assistant says it first,
    and a later "from now on" is about the code."""
    first, then = _opening(reply)
    if not first:
        return None
    said = f"{first} {then}".strip()
    if len(said.split()) > _ACK_WORDS:
        return None
    # "OK, updated." / "Sure. Noted, switching over." — not "Got it. Here's the updated loader."
    short = [x for x, most in ((first, _ACK_SHORT_WORDS), (then, _ACK_LEAD_WORDS)) if x and len(x.split()) <= most]
    # after an interjection, what the assistant says it will do ("Got it! I'll keep that in mind going forward."),
    # not what the code now does ("Thanks for the traceback. From now on the function returns None ...")
    if ((_ACK_LASTING.search(first) and _said_by_you(first))
            or (then and _ACK_MINE.search(then) and _ACK_LASTING.search(then))
            or any(_ACK_COMMIT.search(x) and _ACK_MINE.search(x) for x in (first, then) if x)
            or _ACK_FOREIGN.search(said) or any(_ACK_SHORT.search(x) for x in short)):
        return "lasting"
    lead = re.split(r"[,;:!.\u2014\u2013-]+\s*", first, maxsplit=1)
    if (_ACK_PLAIN.match(first) or (len(lead) > 1 and _ACK_PLAIN.match(lead[0]) and _ACK_WILL.match(lead[1]))
            or (then and _ACK_WILL.match(then))):
        return "plain"
    return None


def acknowledged(text: str, reply: str, reader: Reader | None = None) -> Finding | None:
    """The sentence of the user's message ``text`` that the assistant's ``reply`` takes up as lasting, when the
    rules kept none of it (the engine asks only then): "Code first, explanation afterwards, please." answered
    "Understood; I'll keep to that from now on." The reply's acknowledgement (:func:`acknowledgement`) is the
    evidence the rules lacked; the sentence is the one the learned reader rates highest among those the rules
    left as a statement or a request (never a question, quoted words, a one-off, chit-chat, an instruction for
    someone else, a hypothetical, or the past), at :data:`ACK_BAR` (:data:`PLAIN_ACK_BAR` after a bare "Will
    do."). A change the rules read in the message but could not place comes first ("On second thought, ..."),
    as the change it is. Without the reader (``embeddings="off"``): none — the rules alone, as before. ``change``
    is ``revise`` when the acknowledgement says a change ("OK, updated.")."""
    how = acknowledgement(reply)
    if how is None:
        return None
    said: Change = "revise" if _ACK_CHANGE.search(" ".join(_opening(reply))) else "new"
    score = getattr(reader, "score", None)
    if score is None:
        return None
    verdicts = analyse(text, reader)
    # a change the rules read but could not place ("On second thought, ..."): the reply says it took it
    changes = [v.finding for v in verdicts if v.finding is not None and v.finding.change != "new" and how == "lasting"]
    if changes:  # ("Let's drop X and go back to Y" answered "OK, updated.": Y replaces X, not only X taken back)
        f = changes[0]
        return Finding(f.text, f.kind, "acknowledged", "revise" if said == "revise" else f.change)
    bar = ACK_BAR if how == "lasting" else PLAIN_ACK_BAR
    best: tuple[float, int] | None = None
    pick: Verdict | None = None
    for n, v in enumerate(verdicts):
        if v.reason not in LEARNED_READS or _PAST.search(_strip_lead(_flat(v.sentence))):
            continue
        p = float(score(v.sentence))
        if p >= bar and (best is None or (p, -n) > best):
            best, pick = (p, -n), v
    if pick is None:
        return None
    core = _strip_lead(_flat(pick.sentence))
    return Finding(pick.sentence, _learned_kind(core, pick.reason == "no_scope"), "acknowledged", said)


NEAREST_MIN = 0.3
"""The least cosine at which :func:`nearest` names a live item. 0.3 (it was 0.2): on the blind split (development)
a change the reply confirmed but whose item was never recognised replaced an unrelated one ("They raised our quota
to 600 per minute" took back "The log file on the server is 4 GB.", 0.26); at 0.3 items wrongly taken back there
7 -> 2 (with :func:`_takes_back`), rightly 8 -> 7; at 0.4 1 and 7, but "Let's drop the extra CLI package and go back
to what ships with Python" no longer replaces "For command-line tools I like Typer" (0.34)."""


def nearest(text: str, candidates: Sequence[tuple[str, str]], reader: Reader | None) -> str | None:
    """The id of the candidate ``(id, text)`` whose sentence embeds nearest ``text`` (at least
    :data:`NEAREST_MIN`; the latest on a tie), by the reader's embedding model; ``None`` without one. Only for a
    change the assistant's reply says is one ("Understood, the new version replaces the old one."): which item
    it replaces, when it shares no topic word with it ("On second thought, a quick sentence on what the snippet
    does should come before it" after "Code first, explanation afterwards")."""
    embed = getattr(reader, "embed", None)
    if embed is None or not candidates:
        return None
    import numpy as np

    mine = np.asarray(embed(text), dtype=np.float64).reshape(-1)
    best: tuple[float, int] | None = None
    found: str | None = None
    for n, (cid, other) in enumerate(candidates):
        cos = round(float(mine @ np.asarray(embed(other), dtype=np.float64).reshape(-1)), 5)
        if cos >= NEAREST_MIN and (best is None or (cos, n) > best):
            best, found = (cos, n), cid
    return found


def analyse(text: str, reader: Reader | None = None) -> list[Verdict]:
    """The verdict on every sentence of a user message (tests and the precision measure use it)."""
    return [judge(s, reader) for s in sentences(text)]


def recognise(text: str, reader: Reader | None = None) -> list[Finding]:
    """The standing instructions, preferences and constraints (and changes to them) in a user message
    (``reader``: the learned reader of what the rules leave, :mod:`.standing_model`)."""
    return [v.finding for v in analyse(text, reader) if v.finding is not None]


def is_chit_chat(sentence: str) -> bool:
    """True for a sentence that must never be kept as the user's decision or constraint: chit-chat,
    a wish, the speaker's own habits, a preference with nothing of the work in it, a question, quoted
    words, a one-off."""
    return judge(sentence).reason in _APART


def kept_apart(text: str) -> bool:
    """True when a summary should leave ``text`` (a user's sentence, or a few) out of its decisions,
    constraints and findings: one of its sentences is chit-chat, a question, quoted, a one-off
    (:func:`is_chit_chat`), or a standing instruction (it has its own section: not said twice)."""
    return any(v.finding is not None or v.reason in _APART for v in analyse(text))


_APART = frozenset({"chit_chat", "not_work", "self", "question", "quoted", "one_off", "third_party", "hypothetical"})


def without_small_talk(text: str) -> str:
    """``text`` without its chit-chat sentences (phatic phrases, preferences with nothing of the work in
    them, the speaker's own habits with no word of the work — "I need a Python model ..." stays): what a
    summary of the request keeps. ``text`` itself when nothing would be left."""
    out = text.replace("\u2019", "'")
    for v in analyse(text):
        if v.reason in ("chit_chat", "not_work") or (v.reason == "self" and not work_words(v.sentence)):
            out = out.replace(v.sentence, "", 1)
    return out if out.strip() else text


def match(finding_text: str, candidates: Iterable[tuple[str, str]], *, min_overlap: int = 2,
          same_class: bool = False, loose: bool = False) -> str | None:
    """The id of the candidate ``(id, text)`` the change ``finding_text`` is about: the most shared
    topics (:func:`topics`; a topic class counts twice), at least ``min_overlap``; the latest on a tie.
    ``loose`` (a revocation: it says it takes something back): below that, the one live item it shares a
    topic with when no other shares any.
    ``same_class``: only a candidate that shares a topic class (a new item that says otherwise on the
    same choice — tabs after spaces — replaces the old one without a change marker)."""
    mine = topics(finding_text)
    best: tuple[int, int] | None = None
    found: str | None = None
    touching: list[str] = []
    for n, (cid, text) in enumerate(candidates):
        theirs = topics(text)
        if same_class and not (mine & theirs & _CLASSES):
            continue
        score = _overlap(mine, theirs)
        if score >= 1:
            touching.append(cid)
        if score >= min_overlap and (best is None or (score, n) > best):
            best, found = (score, n), cid
    if found is None and loose and len(touching) == 1:
        return touching[0]  # a change that shares a topic with one live item only is about that one
    return found


# ---------------------------------------------------------------------------- shortening

_REASON = _rx(r"(?:;\s+|\s+[—–]\s+|\s+-\s+|,\s+(?=(?:because|since|as|so|so that|i'm|i am|i've|i|it's|it|they're|they|"
              r"my|that's|that|which|the|this|we|our|otherwise|unless|except)\b)|\s+(?=(?:because|since|so that)\b))")


def shorten(text: str, max_words: int | None = None) -> str:
    """A deterministic short form of a standing item: its first clause (the reason and asides after a
    comma, semicolon or dash go), then, with ``max_words``, its first words and ``…``."""
    flat = " ".join(text.split())
    m = _REASON.search(flat)
    if m and len(flat[: m.start()].split()) >= 3:
        flat = flat[: m.start()].rstrip(" ,;:-") + "."
    if max_words is not None:
        words = flat.split()
        if len(words) > max_words:
            flat = " ".join(words[:max_words]).rstrip(" ,;:-.") + "…"
    return flat


def live_changes(findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` with duplicates within one message dropped (the first wording kept)."""
    out: list[Finding] = []
    for f in findings:
        if f.change == "new" and any(same(f.text, g.text) for g in out):
            continue
        out.append(f)
    return out


__all__ = [
    "ACK_BAR", "GENERIC", "NEAREST_MIN", "PLAIN_ACK_BAR", "STANDING_KINDS", "TOPIC_CLASSES", "WORK_WORDS", "Change",
    "Finding", "StandingKind", "Verdict", "acknowledged", "acknowledgement", "analyse", "change_in_context",
    "is_chit_chat", "judge", "kept_apart", "live_changes", "match", "nearest", "pointed_value", "recognise", "same",
    "sentences", "shorten", "strong_change", "tokens", "topics", "without_small_talk", "work_words",
]
