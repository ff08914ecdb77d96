"""Standing instructions: what the user says once and expects to hold for the whole session (issue 39).

Pure and deterministic: plain rules over the user's sentences, no model, so the same message always
gives the same findings (a replay or ``report --verify`` recognises exactly what the session did).
:func:`recognise` reads one user message; the engine (:mod:`.engine`) turns each :class:`Finding` into a
standing constraint object (``StateObject.standing``), kept in its own protected prompt section
(:mod:`.rendering`), never demoted, until the user revises or revokes it.

**Sentences.** The message is cut into sentences (:func:`sentences`): never inside fenced code
(```` ``` ```` / ``~~~``), indented code, a block quote (``> ...``) or a traceback; a leading
``[9:40 am on 5 March, 2024]`` stamp is dropped; a line is split at ``.``/``!``/``?`` and at a colon
followed by a capital (``Stuck on this one: I'd rather ...``). Text in double quotes is masked before
any rule looks at a sentence: a cue word inside quotes never counts.

**Rejected first** (the reason is kept, :func:`analyse`):

- ``question``: it ends with ``?`` or opens like one — unless it is a polite request to the assistant
  that says it is for good (``Could you switch to French for your answers from now on?``);
- ``quoted``: someone else's words reported (``The README says "never ..."``, ``left a comment:``);
- ``one_off``: said for this message only (``this time``, ``just this once``, ``for this one``,
  ``for this snippet``, ``only for this``, ``for this quick test only``, ``today``, ``right now``);
- ``chit_chat``: phatic phrases (``Can't wait``, ``Never mind``, ``Don't get me started``, ``wish me
  luck`` ...), wishes (``I'd rather be sailing``), the speaker's own habits and plans (``I always forget
  ...``, ``I must have ...``, ``From now on I'm going to bed ...``), third parties' habits (``My cat never
  ...``), and preferences with nothing of the work in them (``I prefer tea to coffee``: no word of code,
  answers, tools or the project — :func:`work_words`).

**Accepted** (``Finding.rule`` names the rule; ``kind`` is instruction, preference or constraint):

- ``label``: an explicit ``Constraint:`` / ``Rule:`` / ``Requirement:`` / ``Instruction:`` /
  ``Preference:`` line;
- ``directive``: addressed to the assistant — an imperative (``Use ...``, ``Keep ...``, ``End each
  answer ...``, ``Please don't ...``, ``Make sure ...``, ``Let's always ...``), ``I want you to``,
  ``I'd rather you``, ``you should`` — *and* said for good: ``always``/``never`` or a scope marker
  (``from now on``, ``going forward``, ``from here on``, ``every``/``each``/``all`` answer, reply,
  snippet, function, test ..., ``in your answers``, ``whenever``, ``unless I ask``, ``by default``,
  ``in this project``, ``everywhere``, ``anymore``). A bare imperative (``Write the query for ...``) is a
  request for this turn, not standing;
- ``preference``: ``I prefer X (over Y)``, ``I'd rather ...``, ``I like X better than Y``, ``Prefer X over
  Y``, ``I'd like to keep ...``, ``I always use ...`` — with a word of the work in it;
- ``constraint``: a fact of the project the answers must respect, its subject the project (``we``,
  ``our ...``, ``the team``, ``it``, ``everything``, ``the server`` ...) and a predicate that binds
  (``has to``/``must``/``needs to`` run, work, be ...; ``can't use``; ``no GPL libraries``, ``no
  cloud``; ``only has 512 MB``; ``we use X, not Y``; ``it's X, not Y``; ``we deploy on ...``; ``we're
  on ...``; ``our CI runners have no internet access``).

**Changes.** A new item that shares a topic class and another topic with a live one (``Use tabs for
indentation`` after ``Use 4 spaces for indentation``) replaces it. A sentence with a change marker
(``actually``, ``instead``, ``change of plan``, ``after all``, ``switch to``, ``make that``, ``loosen``,
``we can target ... now``, ``... is fine from now on``) *revises* the live standing item it shares a
topic with (:func:`topics`: its content words, lightly stemmed, and the topic classes of
:data:`TOPIC_CLASSES` — languages, indentation, length limits, the summary line, Python versions,
database engines, SQL vs ORM ...): the old one is retracted, the new one takes its place. A revocation
(``you can go back to English``, ``you can drop the TL;DR lines``, ``no need for that summary
anymore``, ``stop ...``) retracts the item it matches and adds nothing. With no item to match, a
change is kept only if it stands on its own (a directive with a scope marker ...).

A finding that says what a live item already says (:func:`same`) is not added twice.

:func:`shorten` is the deterministic summary the section uses when more items are live than its share
of the budget holds: the reason clause goes (``Answer in French from now on, I'm practising ...`` ->
``Answer in French from now on.``), then words from the end.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
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
_LABEL = re.compile(r"^\s*(standing instruction|instruction|constraint|rule|requirement|preference)s?\s*:\s*(\S.*)$",
                    re.I)


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
            if _ABBREV.search(head) or (m.group(0).startswith(":") and len(head.split()) < 2):
                continue
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
    we're we'll you're you'll that's there's what's
    always never ever every each all any some please just also really very much more most less least
    now then still yet again once anyway actually instead though too well
    answer answers reply replies response responses code snippet snippets write writes written writing
    use uses used using make makes making sure keep keeps want wants prefer prefers rather like likes
    thing things way ways one ones new old good fine ok okay going forward from here on
    go goes going gone get gets got put puts give gives show shows tell let lets start end
    time times day days today now lot bit part""".split()
)
"""Words that say nothing of a standing item's topic (two items sharing them are not about the same thing)."""

TOPIC_CLASSES: dict[str, frozenset[str]] = {
    "language": frozenset("english french german spanish italian portuguese dutch polish swedish danish norwegian "
                          "finnish japanese chinese mandarin korean russian arabic hindi turkish greek czech "
                          "ukrainian hebrew".split()),
    "indentation": frozenset("indent indentation indented indenting tab tabs spaces space".split()),
    "length_limit": frozenset("word words limit limits length wordcount characters chars concise brief "
                              "verbose".split()),
    "summary_line": frozenset("tl;dr tldr summary summaries bottom-line".split()),
    "python_version": frozenset("py39 py38 py310 py311 py312 py313 python3".split()),
    "database_engine": frozenset("postgres postgresql mysql mariadb sqlite sqlite3 oracle mssql "
                                 "sqlserver".split()),
    "sql_style": frozenset("orm orms sqlalchemy peewee sqlmodel tortoise sql raw-sql".split()),
    "http_client": frozenset("httpx requests aiohttp urllib urllib3".split()),
    "test_framework": frozenset("pytest unittest nose".split()),
    "paths": frozenset("pathlib os.path".split()),
    "diagnostics": frozenset("logging logger print prints print()".split()),
    "emoji": frozenset("emoji emojis emoticons".split()),
    "type_hints": frozenset("hints annotations annotate annotated typed typing mypy".split()),
    "timezone": frozenset("utc timezone timezones tz".split()),
    "quotes": frozenset("quote quotes quotation".split()),
}
"""Words that name one topic, so that a revision worded apart from what it revises still finds it
("go back to English" revises "answer in French"; "go with SQLAlchemy" revises "plain SQL than an
ORM"). A version number (``3.9``, ``3.12``) is the ``python_version`` topic."""

_CLASS_OF = {w: name for name, ws in TOPIC_CLASSES.items() for w in ws}


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
    """What a sentence is about: its content words (lightly stemmed, :data:`GENERIC` words out) and the
    topic classes (``#language`` ...) of :data:`TOPIC_CLASSES` its words belong to."""
    out: set[str] = set()
    for t in tokens(text):
        if _VERSION.match(t):
            out.add("#python_version")
            out.add(t)
            continue
        cls = _CLASS_OF.get(t)
        if cls is not None:
            out.add("#" + cls)
        if t in GENERIC or len(t) < 2 or t.isdigit():
            continue
        out.add(_light_stem(t))
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
    """code coding snippet snippets function functions method methods class classes module modules package packages
    library libraries dependency dependencies dep deps import imports stdlib standard framework frameworks
    test tests testing fixture fixtures mock mocks ci cd pipeline pipelines build builds lint linter linting formatter
    style format formatting indentation indent tab tabs spaces comment comments docstring docstrings type types
    hint hints annotation annotations variable variables name names naming syntax language
    answer answers reply replies response responses explanation explanations prose paragraph paragraphs bullet
    bullets list lists table tables heading headings markdown summary tl;dr word words sentence sentences emoji
    emojis tone english french german spanish italian dutch japanese chinese
    sql query queries orm database databases db schema schemas migration migrations index indexes table column
    columns row rows transaction transactions postgres postgresql mysql sqlite sqlalchemy
    api apis endpoint endpoints http https request requests client server servers service services backend frontend
    deploy deployment deployments deploying production prod staging docker container containers kubernetes cloud
    aws gcp azure vps host hosting machine box vm ram memory cpu disk gb mb
    python python3 version versions pip venv poetry requirements json csv yaml toml xml html css javascript
    typescript rust go java shell bash command commands terminal cli script scripts prompt
    log logs logging logger print prints error errors exception exceptions traceback retry retries timeout
    timeouts async await thread threads process processes cache caching config configuration settings env
    secret secrets token tokens auth password passwords file files path paths pathlib folder folders
    directory directories git commit commits branch branches repo repository pr review reviews license licence
    gpl mit apache utc timezone timestamp timestamps date dates datetime windows linux macos internet network
    offline online data dataset datasets dataframe pandas numpy notebook notebooks jupyter cell cells project codebase
    app application
    tool tools bot site website ui interface dataclass dataclasses dict dicts tuple tuples string strings int ints
    float floats enum enums f-string f-strings lambda lambdas generator generators comprehension comprehensions
    decorator decorators regex regexes loop loops recursion variable global globals constant constants
    spelling""".split()
)
"""Words of the work (code, answers, tools, the project): a preference or a project statement must
hold one, or look like an identifier (``os.path``, ``SQLAlchemy``, ``3.9``, ``snake_case``)."""

_TECHY = re.compile(r"test|^py[a-z]{2,}|[a-z]{2,}(?:lib|sql|db|js|api|ql)$|^http|^json|^yaml|^sql")
"""Word shapes of the work (``pytest``, ``unittest``, ``pathlib``, ``mysql``, ``graphql``, ``httpx`` ...)."""
_IDENT = re.compile(r"[a-z]+\.[a-z]+|[a-z]+_[a-z]+|[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}\b|\b\d+(?:\.\d+)+\b|`[^`]+`")


def work_words(text: str) -> list[str]:
    """The words of ``text`` that belong to the work (:data:`WORK_WORDS`), and identifier-like tokens."""
    found = [t for t in tokens(text) if t in WORK_WORDS or _light_stem(t) in WORK_WORDS or _TECHY.search(t)]
    found += [m.group(0) for m in _IDENT.finditer(text) if m.group(0) not in ("I", "OK", "TV")]
    return found


# ---------------------------------------------------------------------------- the rules

def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


_QUESTION_OPEN = _rx(r"^(?:so,?\s+|and\s+|but\s+|also,?\s+|quick question:?\s+)?(?:(?:what|why|how|which|who|whose)\b|"
                     r"(?:when|where)\s+(?:do|does|did|is|are|was|were|should|would|could|can|will|shall)\b|"
                     r"(?:should|shall|do|does|did|is|are|was|were|would|could|can|will|have|has|may|might|must|"
                     r"isn't|aren't|don't|doesn't|won't|wouldn't|shouldn't)\s+(?:i|we|you|it|they|he|she|this|"
                     r"that|there|these|those|the|our|my|your|anyone|someone)\b)")
_POLITE_YOU = _rx(r"^(?:please,?\s+)?(?:could|can|would|will)\s+you\s+(?:please\s+)?(?!ever\b|never\b|always\b)[a-z]+")
_REPORTED = _rx(r"\b(?:says|said|say|wrote|writes|written|left a (?:comment|note)|comment:|notes? says?|told (?:me|us)|"
                r"according to|reads|read:|on the whiteboard|quote|quoting|the sign)\b")
_ONE_OFF = _rx(r"\b(?:this time|just this once|this once|for this one|for now only|only this time|for (?:this|that|the "
               r"next) (?:one|snippet|answer|reply|response|question|function|file|test|example|query|script|part|bit|"
               r"step|case|task|cell|request|message|draft|version|demo|call|run|quick test|time)\b|only for this|"
               r"for this quick|just for (?:this|now|today|the demo)|right now|today|tonight|this morning|"
               r"this afternoon|this evening|in this (?:one|answer|reply|response|snippet)|here only|just here)")
_PHATIC = _rx(r"(?:^|\b)(?:can't wait|cannot wait|can't complain|can't believe|never mind|nevermind|don't get me "
              r"started|don't even (?:ask|get me started)|wish me luck|fingers crossed|no worries|no problem|"
              r"never again|for what it's worth,? i'd rather be|oh wait|ha\b|haha|lol\b|thank you|thanks|cheers|"
              r"you don't get one|enjoy the weekend|have a good|hope you)")
_THIRD_HABIT = _rx(r"^(?:my|our|his|her|their)\s+(?:\w+\s+){0,2}?(?:always|never|keeps?|won't|doesn't|didn't)\b")
"""Someone else's habits (``My cat never lets me work``): chit-chat when nothing of the work is in it."""
_WISH = _rx(r"\b(?:i'd|i would) rather be\b|\bi'd love to be\b")
_SELF = _rx(r"^(?:i|i'm|i am|i've|i have|i'll|i will|i'd|i was|i must|i should|i need|i keep|i kept|i can|i can't|"
            r"i cannot|i just|i really|i still|i also|i usually|i often|i sometimes|i always|i never|i hardly|"
            r"i tried|i think|i guess|i hope|i promise|i wish|i forgot|i found)\b")
_TO_YOU = _rx(r"^(?:i|we)(?:\s+|(?='))(?:really\s+)?(?:want|need|would like|'d like|'d rather|would rather|'d prefer|"
              r"would prefer|prefer|expect|ask)\s+(?:you|that you|for you)\b")
_RATHER_YOU = _rx(r"^(?:i|we)(?:'d|\s+would)\s+(?:much\s+)?(?:rather|prefer)\s+(?:that\s+)?you\b")
"""``I'd rather you ...``: a preference about how the assistant works, standing by its own words."""
_PREFER = _rx(r"^(?:i|we)(?:\s+|(?='))(?:really\s+|strongly\s+|much\s+|generally\s+|usually\s+|also\s+|still\s+|"
              r"definitely\s+)?"
              r"(?:prefer|'d prefer|would prefer|'d rather|would rather|favou?r|like\s+.+\s+better|'d like to keep|"
              r"would like to keep|want to keep|like to keep|don't like|do not like|dislike|hate|can't stand|"
              r"(?:always|never)\s+(?:use|write|indent|pick|choose|go with|put|name|run|deploy|work with|avoid))\b")
_PREFER_ANY = _rx(r"^(?:please\s+)?prefer\s+\S+|\b\S+ (?:over|rather than|instead of) \S+,? please\b")

_LEAD = _rx(r"^(?:(?:ok(?:ay)?|right|also|and|so|oh,? and|one more thing|one last thing|btw|by the way|actually|"
            r"honestly|seriously|generally|in general|in future|in the future|from now on|going forward|from here on"
            r"(?: out)?|henceforth|for the rest of (?:this|the) (?:chat|conversation|session|project)|as a rule|"
            r"by default|change of plan|change of heart|on second thought|scratch that|correction|instead|"
            r"good news|quick note|note|reminder|remember|just so you know|fyi|please|kindly)\b[,:;.!\s-]*)+")
_WHEN_LEAD = _rx(r"^(?:when(?:ever)?|if|any time|every time|each time)\s+you\s+[^,]{2,80},\s*")

_DONT = _rx(r"^(?:please\s+)?(?:do not|don't|no more)\b")
_DO = (
    "use answer reply respond write keep make put start begin end finish open close give show add include avoid stop "
    "skip explain format indent switch stick go drop remove leave name call tag mark label list return prefer "
    "mention cite quote limit cap stay reply respond speak talk address spell capitalise capitalize sort order "
    "number wrap break split comment document annotate type test run assume target treat consider default choose "
    "pick favour favor follow apply respect check validate handle store save convert display print log raise "
    "catch translate summarise summarize lead place move append prepend"
).split()
_IMPERATIVE = _rx(r"^(?:please\s+)?(?:(?:do not|don't|never|always)\s+)?(?:" + "|".join(_DO) + r")\b")
_ALWAYS_NEVER = _rx(r"^(?:please\s+)?(?:never|always)\s+(?!(?:mind|again|ever|happy|glad|sad|a|an|the|so|too|very|fun|"
                    r"good|great|nice|bad|funny|interesting|been|was|were|is|are|am|had|has|have|did|does|seems?|"
                    r"thinks?|thought|ends?|gets?|got|feels?|felt|wanted|liked|loved)\b)[a-z]+")
_MAKE_SURE = _rx(r"^(?:please\s+)?(?:make sure|ensure|be sure|remember to|don't forget to)\b")
_YOU_MODAL = _rx(r"^you\s+(?:should|must|need to|have to|'ll need to|will need to|are to|can't|cannot|shouldn't|"
                 r"mustn't|may not|don't need to|no longer need to)\b")
_SETTLED = _rx(r"^(?:please\s+)?(?:stick (?:to|with)|default to|refrain from|stay away from|keep using|keep to|"
                r"call me|address me as|refer to me as|only (?:use|write|answer|reply|respond|suggest|import|recommend|"
                r"show|give))\b")
"""Directives that hold for good by their own words (no scope marker needed)."""
_LETS = _rx(r"^let's\s+(?:always|never|not|stick|keep|stay|use|go with|switch|stop|avoid|prefer|return|go back|"
            r"loosen|tighten|raise|lower|make|change|drop|target|move|standardi[sz]e)\b")
_SCOPE = _rx(r"\b(?:always|never|from now on|going forward|from here on|henceforth|in (?:the )?future|for the rest "
             r"of|every time|each time|whenever|any time you|unless i (?:ask|say)|by default|as a rule|in general|"
             r"everywhere|throughout|anymore|any more|no longer|from this point|across the (?:project|codebase|"
             r"repo)|in (?:this|the|our) (?:project|codebase|repo|repository|code base)|for this project|in anything|"
             r"(?:every|each|all(?: of)?(?: your| the| my)?|any) (?:of (?:your|the|my) )?(?:answers?|repl(?:y|ies)|"
             r"responses?|messages?|explanations?|snippets?|code(?: blocks?)?|code you|functions?|methods?|"
             r"classes|examples?|scripts?|quer(?:y|ies)|tests?|files?|modules?|commits?|endpoints?|commands?|"
             r"signatures?|tables?|lines?|blocks?|summar(?:y|ies)|thing you)|(?:your|all|the) (?:answers|replies|"
             r"responses|explanations|code blocks|snippets)\b|^(?:keep|make)\s+(?:your\s+)?(?:answers|replies|"
             r"responses|explanations|code|prose)\b|when you (?:show|write|give|answer|reply|explain|suggest|"
             r"use|add|post|paste|share)|(?:the|any) (?:code|sql|snippets?|examples?|scripts?|tests?) (?:you|that you) "
             r"(?:write|give|send|show|suggest|produce|generate|add))")
_PROJECT_SUBJECT = _rx(r"^(?:(?:good news|bad news|fyi|note|also|and|so|actually|for context|just so you know|"
                       r"heads up|reminder)[,:\s]+)*(?:we|we're|we've|we'll|we are|our\b|ours\b|us\b|the team|half "
                       r"the team|the whole team|everyone|everybody|the project|this project|the app|the code|the "
                       r"codebase|the repo|the service|the site|the tool|the bot|the api|the database|the db|the "
                       r"server|the box|the machine|the host|the vps|production|prod|staging|ci|the ci|it|it's|it "
                       r"has|it must|it needs|everything|anything|nothing|all (?:the|our) \w+|the (?:client|customer|"
                       r"company|office|business|shop)(?:'s)?|the (?:hosting|deployment|target|runtime|environment|"
                       r"stack|build|pipeline)|\w+(?: \w+)? (?:is|are|runs|run) on)\b")
_BINDING = _rx(
    r"\b(?:has to|have to|must|needs? to|is required to|are required to|is not allowed|are not allowed|isn't allowed|"
    r"aren't allowed|can't|cannot|can not|won't|mustn't|shouldn't)\s+(?:be|run|work|stay|remain|support|fit|"
    r"handle|use|go|target|comply|call|access|reach|install|depend|rely|touch|leave|hit|ship|include|pass|"
    r"have|live|keep)\b"
    r"|\b(?:only|just) (?:has|have|runs?|supports?|allows?|gets?)\b|\b(?:is|are) (?:limited|restricted|capped) to\b"
    r"|\bno (?:gpl|agpl|copyleft|internet|network|cloud|external|outbound|third-party|new|extra|docker|root|sudo|"
    r"database server|server|gpu|admin)\b|\bnot (?:mysql|postgres|postgresql|sqlite|windows|linux|the cloud|python 2)\b"
    r"|^(?:we|we're|we are)\s+(?:use|using|run|running|deploy|deploying|host|hosting|target|targeting|on|stuck on|"
    r"staying on|stay on|build on|ship|standardi[sz]ed on|limited to|locked to)\b"
    r"|^it's\s+[A-Z\w.-]+(?: \d[\w.]*)?,\s+not\b|,\s+not\s+[A-Z][\w.]*[,.]"
    r"|\b(?:our|the) (?:database|db|stack|ci|server|host|hosting|runtime|deployment|target|box|machine|"
    r"runners?|python|platform|os) (?:is|are|runs|has|have)\b"
    r"|\b(?:run|runs|running|deploy|deployed|hosted|lives?) (?:on|in) (?:a |an |the |our |one )?[A-Z0-9][\w.-]*"
    r"|\bthere(?:'s| is) no\b|\bthere won't be\b|\bis (?:stuck|pinned|locked) (?:on|to|at)\b",
)
_REVISE = _rx(r"^(?:actually|instead|on second thought|scratch that|change of plan|change of heart|correction|"
              r"update|good news|new rule|make that|make it)\b|\b(?:after all|instead(?! of)|"
              r"switch(?:ed)? (?:back )?to|"
              r"moved (?:us )?to|got upgraded|upgraded|make that|loosen|tighten|raise|lower|relax|change that|"
              r"from here on|(?:is|are) fine (?:now|from now on)|can (?:now )?(?:target|use|drop|go with|switch)|"
              r"now that)\b")
_REVOKE = _rx(r"\b(?:(?:you can|you may|feel free to|let's|we can|please|ok(?:ay)?,?)\s+(?:now\s+)?(?:go back to|"
              r"return to|switch back to|revert to|drop|stop|skip|forget|ignore|ditch|lose)|no need for|no need to|"
              r"no more|(?:is|are) no longer (?:needed|required|necessary)|don't (?:need to|have to) .*(?:anymore|any "
              r"more)|(?:no longer|not) need(?:ed)? (?:the|that|those|them)|^(?:stop|drop|forget|ignore)\b)|"
              r"^let's\s+(?:return|go back|switch back)\b")
_PERMISSION = _rx(r"\b(?:we|you) can (?:now )?(?:target|use|drop|go with|switch|rely on|assume)\b|\b(?:is|are) fine\b")


@dataclass(frozen=True)
class Finding:
    """A standing instruction, preference or constraint recognised in a user's sentence."""

    text: str
    """The sentence, in the user's words."""
    kind: StandingKind
    rule: str
    """Which rule accepted it (``label``, ``directive``, ``preference``, ``constraint``, ``revision``,
    ``revocation``)."""
    change: Change = "new"
    """``new``; ``revise``: replaces the live item it shares a topic with, if one does; ``revoke``: takes
    that item back (and adds nothing)."""


@dataclass(frozen=True)
class Verdict:
    """What the rules made of one sentence: a finding, or the reason it is not standing."""

    sentence: str
    finding: Finding | None
    reason: str
    """``standing`` for a finding; else ``question``, ``quoted``, ``one_off``, ``chit_chat``, ``self``,
    ``no_scope`` (a request for this turn), ``not_work`` (nothing of the work in it) or ``statement``."""


_EVERY = _rx(r"\b(?:every|each|all|any)\s+(?:of\s+(?:the|your|my|our)\s+)?(\S+)(?:\s+(\S+))?")


def _every_work(text: str) -> bool:
    """``every`` / ``each`` / ``all`` / ``any`` followed (within two words) by a word of the work."""
    return any(work_words(" ".join(g for g in m.groups() if g)) for m in _EVERY.finditer(text))


def _strip_lead(s: str) -> str:
    prev = None
    while prev != s:
        prev = s
        s = _LEAD.sub("", s).strip()
        s = _WHEN_LEAD.sub("", s).strip()
    return s


def _masked(sentence: str) -> str:
    return _QUOTE.sub(" «quoted» ", sentence).replace("\u2019", "'")


def judge(sentence: str) -> Verdict:
    """The verdict on one sentence (see the module docstring for the rules, in their order)."""
    s = sentence.strip()
    label = _LABEL.match(s)
    if label:
        word = label.group(1).lower()
        kind: StandingKind = ("preference" if word == "preference" else
                              "instruction" if "instruction" in word else "constraint")
        return Verdict(s, Finding(s, kind, "label"), "standing")
    m = _masked(s)
    low = m.lower().strip()
    core = _strip_lead(low)
    scoped = bool(_SCOPE.search(low))
    question = low.rstrip().endswith("?") or bool(_QUESTION_OPEN.match(core))
    if question and not (_POLITE_YOU.match(core) and scoped and not _ALWAYS_NEVER.search(core)):
        return Verdict(s, None, "question")
    if "«quoted»" in low and (_REPORTED.search(low) or low.startswith("«quoted»")):
        return Verdict(s, None, "quoted")
    if _ONE_OFF.search(low):
        return Verdict(s, None, "one_off")
    if _PHATIC.search(low) or _WISH.search(low) or (_THIRD_HABIT.match(low) and not work_words(m)):
        return Verdict(s, None, "chit_chat")
    if _POLITE_YOU.match(core):
        core = re.sub(r"^(?:please,?\s+)?(?:could|can|would|will)\s+you\s+(?:please\s+)?", "", core).rstrip("?")
    revoke = bool(_REVOKE.search(low))
    revise = bool(_REVISE.search(low))
    work = bool(work_words(m))
    # addressed to the assistant
    directive = bool(_TO_YOU.match(core) or _YOU_MODAL.match(core) or _MAKE_SURE.match(core) or _LETS.match(core)
                     or _DONT.match(core) or _ALWAYS_NEVER.match(core) or _SETTLED.match(core)
                     or (_IMPERATIVE.match(core) and not _SELF.match(core)))
    if revoke and work:
        return Verdict(s, Finding(s, "instruction", "revocation", "revoke"), "standing")
    if (_PREFER.match(core) or _PREFER_ANY.search(core)) and not _TO_YOU.match(core):
        if not work:
            return Verdict(s, None, "not_work")
        return Verdict(s, Finding(s, "preference", "preference", "revise" if revise else "new"), "standing")
    if _SELF.match(core) and not _TO_YOU.match(core):
        return Verdict(s, None, "self")
    if directive:
        standing = scoped or bool(_ALWAYS_NEVER.match(core) or _SETTLED.match(core) or _RATHER_YOU.match(core)
                                  or _every_work(core))
        if standing:
            compares = re.search(r"\b(?:prefer|rather|over|instead of)\b", core) and not _TO_YOU.match(core)
            kind = "preference" if compares else "instruction"
            return Verdict(s, Finding(s, kind, "directive", "revise" if revise else "new"), "standing")
        if revise:
            return Verdict(s, Finding(s, "instruction", "revision", "revise"), "standing")
        return Verdict(s, None, "no_scope")
    if _PROJECT_SUBJECT.match(low) or _PROJECT_SUBJECT.match(core):
        if not work:
            return Verdict(s, None, "not_work")
        if _BINDING.search(m) or _BINDING.search(core):
            return Verdict(s, Finding(s, "constraint", "constraint", "revise" if revise else "new"), "standing")
        if revise and _PERMISSION.search(low):
            return Verdict(s, Finding(s, "constraint", "revision", "revise"), "standing")
    if revise and _PERMISSION.search(low) and work:
        return Verdict(s, Finding(s, "constraint", "revision", "revise"), "standing")
    return Verdict(s, None, "statement")


def analyse(text: str) -> list[Verdict]:
    """The verdict on every sentence of a user message (tests and the precision measure use it)."""
    return [judge(s) for s in sentences(text)]


def recognise(text: str) -> list[Finding]:
    """The standing instructions, preferences and constraints (and changes to them) in a user message."""
    return [v.finding for v in analyse(text) if v.finding is not None]


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


_APART = frozenset({"chit_chat", "not_work", "self", "question", "quoted", "one_off"})


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
          same_class: bool = False) -> str | None:
    """The id of the candidate ``(id, text)`` the change ``finding_text`` is about: the most shared
    topics (:func:`topics`; a topic class counts twice), at least ``min_overlap``; the latest on a tie.
    ``same_class``: only a candidate that shares a topic class (a new item that says otherwise on the
    same choice — tabs after spaces — replaces the old one without a change marker)."""
    mine = topics(finding_text)
    best: tuple[int, int] | None = None
    found: str | None = None
    for n, (cid, text) in enumerate(candidates):
        theirs = topics(text)
        if same_class and not (mine & theirs & _CLASSES):
            continue
        score = _overlap(mine, theirs)
        if score >= min_overlap and (best is None or (score, n) > best):
            best, found = (score, n), cid
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
    "GENERIC", "STANDING_KINDS", "TOPIC_CLASSES", "WORK_WORDS", "Change", "Finding", "StandingKind", "Verdict",
    "analyse", "is_chit_chat", "judge", "kept_apart", "live_changes", "match", "recognise", "same", "sentences",
    "shorten", "tokens", "topics", "without_small_talk", "work_words",
]
