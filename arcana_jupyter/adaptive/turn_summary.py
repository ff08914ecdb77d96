"""TurnSummary: what one turn said and did, extracted deterministically from its messages.

(Called a "turn digest" in the trace and the prompt: the checkpoint event's ``digest``, the
``turn_digests`` section, the ``digest_turns`` knob keep that name; in the code "digest" is left to
the memory digest and the request hash.)

Never written by an LLM: plain rules over the turn's user, assistant and tool messages, so the
same transcript always gives the same summary (and so the same checkpoint, byte for byte). The
rules are deliberately conservative — each field takes a few sentences that carry a clear marker
("decided", "because", "must", "Traceback", a file name ...) rather than guessing.

The user's chit-chat, questions, quoted words and one-off requests (:func:`.standing.kept_apart`) are
never a decision, a constraint or a finding (nor is chit-chat part of the request), and neither are
their standing instructions: those are
kept, in their words, in the ``standing`` section (:mod:`.standing`), so the checkpoint does not say
them twice. Constraints are the explicit ``Constraint:`` lines only.

Every item says where it comes from. ``findings`` come only from tool results and the user's
statements; what the model's own replies assert is kept apart as ``claims`` (unverified: a wrong
answer must not come back in later prompts as a fact), and decisions, constraints and plans carry
``source`` (``user`` or ``model``). Summaries recorded before this (no ``version``) are read with
:func:`upgrade_recorded_summary`: their findings all came from the model's reply, so they become claims.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..messages import Message, MessageLike, as_message
from .standing import kept_apart, without_small_talk
from .state import one_line

_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_SENT_END = re.compile(r"(?<=[.!?])\s+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_NUMBERED = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+(.+)$")

_DECISION = re.compile(
    r"\b(decided|decide to|decision:|we(?:'ll| will| should) (?:use|go with|keep|stick)|"
    r"let's (?:use|go with|keep|stick)|"
    r"i(?:'ll| will) (?:use|go with)|going with|go with|chose|choose|chosen|opt(?:ed)? for|settled on|"
    r"switch(?:ed)? to|instead of|rather than|prefer)\b|^(?:please\s+|ok(?:ay)?,?\s+|so\s+)?(?:use|go with)\b",
    re.I,
)
_RATIONALE_IN = re.compile(r"\b(because|since|so that|due to|given that|as it|as they|to avoid)\b\s*(.*)$", re.I)
_RATIONALE_NEXT = re.compile(r"^(because|this is because|reason:|rationale:|that way|this way|since|so that)\b", re.I)
_WILL = re.compile(r"\b(?:i|we)(?:'ll| will| am going to| are going to)\b", re.I)
_CONSTRAINT = re.compile(
    r"\b(must|never|don't|do not|dont|always|only|should not|shouldn't|cannot|can't|avoid|make sure|ensure|"
    r"required|requires?|no more than|at most|at least|without|keep it|stay within|not allowed)\b",
    re.I,
)
"""Runs recorded before standing instructions (``standing=False``): a user's sentence with a cue word was an
implicit constraint."""
_EXPLICIT_CONSTRAINT = re.compile(r"^\s*(?:constraint|rule|requirement)s?\s*:\s*(.+)$", re.I)
_PLAN_MARKER = re.compile(r"\b(plan|steps?|approach|i(?:'ll| will)|let me|next|to do|todo|first)\b", re.I)
_PLAN_LINE = re.compile(r"^\s*(?:plan|next steps?|todo|to do)\s*:\s*(.+)$", re.I)
_INTENT = re.compile(r"^(?:next,?\s+i(?:'ll| will)|i(?:'ll| will) next|then i(?:'ll| will)|next step)\b", re.I)
_FINDING = re.compile(
    r"\b(found|finds?|shows?|showed|shown|indicates?|turns out|reveals?|confirm(?:s|ed)?|root cause|"
    r"the (?:cause|issue|problem|reason|result) (?:is|was)|fastest|slowest|highest|lowest|largest|smallest|"
    r"increase[sd]?|decrease[sd]?|grew|fell|dropped|rose|average|mean|median|total|correlat\w*|outliers?|"
    r"missing|duplicates?|fixed|succeeded|failed|works)\b",
    re.I,
)
_USER_FINDING = re.compile(
    r"\b(found|turns out|it shows|showed|actually|in fact|confirmed|wrong|incorrect|not correct|correct(?:ion)? is|"
    r"the (?:answer|cause|issue|problem|reason|result|value|number|total|mean|average) (?:is|was|are|were))\b|^no,\s",
    re.I,
)
_IMPERATIVE = re.compile(
    r"^(?:please\s+)?(?:find|show|check|compute|calculate|load|plot|list|tell|give|make|look|count|compare|"
    r"summari[sz]e|explain|what|how|why|which|where|when|can|could|would|will)\b",
    re.I,
)
_DIGIT = re.compile(r"\d")
_EXC_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))(?::\s*(.*))?\s*$")
_FILE = re.compile(
    r"(?<![\w/.\-:])((?:~?/)?(?:[\w.\-]+/)*[\w\-][\w.\-]*\.(?:py|ipynb|csv|tsv|json|jsonl|txt|md|rst|parquet|xlsx|xls|"
    r"yaml|yml|toml|ini|cfg|conf|log|sql|db|sqlite|sqlite3|js|ts|tsx|html|css|sh|pkl|pickle|npy|npz|h5|hdf5|"
    r"feather|arrow|xml|png|jpg|jpeg|svg|pdf|gz|zip|tar|rs|go|java|cpp|ipynb))(?![\w/\-])",
    re.I,
)

MAX_ITEM = 240
SUMMARY_VERSION = 2
"""2: items carry their source; the model's reply gives ``claims``, never ``findings``."""

Source = Literal["user", "model"]


class DecisionItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    rationale: str | None = None
    source: Source = "user"
    """Who stated it: the user, or the model in a reply (then it is the model's claim)."""


class ConstraintItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    implicit: bool = True
    """False when stated as ``Constraint: ...``; True when inferred from must / never / only ..."""
    source: Source = "user"


class FindingItem(BaseModel):
    """A finding with evidence behind it: a tool result's line or the user's statement."""

    model_config = ConfigDict(frozen=True)

    text: str
    source: str = "user"
    """``user`` or ``tool:<name>``."""


class TurnSummary(BaseModel):
    """The deterministic summary of one turn (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    version: int = SUMMARY_VERSION
    turn: int
    request: str = ""
    plans: list[str] = Field(default_factory=list)
    """Plan steps the user wrote."""
    model_plans: list[str] = Field(default_factory=list)
    """Plan steps from the model's replies (its intentions, not facts)."""
    decisions: list[DecisionItem] = Field(default_factory=list)
    constraints: list[ConstraintItem] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    findings: list[FindingItem] = Field(default_factory=list)
    """From tool results and the user's statements only."""
    claims: list[str] = Field(default_factory=list)
    """What the model's final reply asserted (its findings-like sentences, else its first sentence): unverified."""
    errors: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    """Questions the model's final reply asked."""
    tools: list[str] = Field(default_factory=list)
    narrative: str = ""
    """``T<n>: request → tools → error``: what happened, without what the model said."""

    def text(self) -> str:
        """Everything the summary holds as plain text (what search and relevance scoring see)."""
        parts = [self.request, *self.plans, *self.model_plans]
        for d in self.decisions:
            parts.append(d.text if not d.rationale else f"{d.text} {d.rationale}")
        parts += [c.text for c in self.constraints]
        parts += self.files + [f.text for f in self.findings] + self.claims + self.errors + self.open_questions
        parts += self.tools
        parts.append(self.narrative)
        return "\n".join(p for p in parts if p)

    def render(self, user_constraints: bool = False) -> str:
        """The summary as a compact block (the prompt's ``turn_digests`` section). ``user_constraints``:
        the user's constraints too (a run recorded before standing instructions, which had no section of
        their own)."""
        fields: list[str] = []
        if self.request:
            fields.append(f"request: {one_line(self.request, 200)}")
        if self.plans:
            fields.append("plan: " + " | ".join(one_line(p, 100) for p in self.plans))
        if self.model_plans:
            fields.append("model's plan: " + " | ".join(one_line(p, 100) for p in self.model_plans))
        for d in self.decisions:
            why = f" (why: {one_line(d.rationale, 120)})" if d.rationale else ""
            who = "decided" if d.source == "user" else "model said it decided"
            fields.append(f"{who}: {one_line(d.text, 140)}{why}")
        shown = [c for c in self.constraints if user_constraints or c.source != "user"]  # else: the standing section
        if shown:
            fields.append("constraints: " + " | ".join(
                one_line(c.text, 120) + ("" if c.source == "user" else " (model)") for c in shown))
        if self.files:
            fields.append("files: " + ", ".join(self.files))
        if self.tools:
            fields.append("tools: " + ", ".join(self.tools))
        if self.findings:
            fields.append("found: " + " | ".join(f"{one_line(f.text, 140)} ({f.source})" for f in self.findings))
        if self.errors:
            fields.append("errors: " + " | ".join(one_line(e, 140) for e in self.errors))
        if self.claims:
            fields.append("model claimed (unverified): " + " | ".join(one_line(c, 140) for c in self.claims))
        if self.open_questions:
            fields.append("model asked: " + " | ".join(one_line(q, 120) for q in self.open_questions))
        body = "\n".join("  " + f for f in fields)
        return f"T{self.turn}:\n{body}" if body else f"T{self.turn}: (nothing recorded)"


# --------------------------------------------------------------------------- helpers


def _norm(text: str) -> str:
    return text.replace("\u2019", "'").replace("\u2018", "'")


def _prose(text: str) -> str:
    """``text`` without fenced code blocks."""
    return _FENCE.sub("\n", _norm(text))


def sentences(text: str) -> list[str]:
    """Sentences of prose: split on line breaks and sentence ends; bullets stripped; fences removed."""
    out: list[str] = []
    for line in _prose(text).splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        for s in _SENT_END.split(line):
            s = s.strip()
            if len(s) >= 3:
                out.append(s)
    return out


def _dedupe(items: Iterable[str], limit: int) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        key = item.lower()
        if key not in seen:
            seen[key] = item
        if len(seen) >= limit:
            break
    return list(seen.values())


def extract_files(text: str) -> list[str]:
    """File names and paths with a known extension, in order of first mention."""
    return _dedupe((m.group(1).rstrip(".") for m in _FILE.finditer(_norm(text))), 50)


def extract_errors(text: str) -> list[str]:
    """Exceptions named in ``text``: a traceback's final line, ``XError: msg`` lines, ``{"ok": false}``."""
    found: list[str] = []
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("ok") is False and data.get("error"):
            found.append(f"error: {one_line(str(data['error']), MAX_ITEM)}")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _EXC_LINE.match(line)
        if not m or m.group(1).endswith("Warning"):
            continue
        if line.startswith((" ", "\t")) and i + 1 < len(lines) and lines[i + 1].strip():
            continue  # an indented line in the middle of a frame listing: not the final exception line
        msg = (m.group(2) or "").strip()
        found.append(one_line(f"{m.group(1)}: {msg}" if msg else m.group(1), MAX_ITEM))
    return _dedupe(found, 5)


def _decisions(sourced: Sequence[tuple[str, Source]], standing: bool = True) -> list[DecisionItem]:
    out: list[DecisionItem] = []
    seen: set[str] = set()
    sents = [s for s, _ in sourced]
    for i, (s, source) in enumerate(sourced):
        if s.endswith("?") or (standing and source == "user" and kept_apart(s)):
            continue
        if not _DECISION.search(s) and not (_WILL.search(s) and _RATIONALE_IN.search(s)):
            continue  # a decision: a choice word, or an intention with its reason ("I'll X since Y")
        rationale: str | None = None
        text = s
        m = _RATIONALE_IN.search(s)
        if m and m.group(2).strip() and s[: m.start()].strip(" ,;:-"):
            rationale = m.group(0).strip()
            text = s[: m.start()].rstrip(" ,;:-")
        elif i + 1 < len(sents) and _RATIONALE_NEXT.match(sents[i + 1]):
            rationale = sents[i + 1]
        text = one_line(text, MAX_ITEM)
        if text.lower() in seen:
            continue
        seen.add(text.lower())
        out.append(DecisionItem(text=text, rationale=one_line(rationale, MAX_ITEM) if rationale else None,
                                source=source))
        if len(out) >= 4:
            break
    return out


def _constraints(user_texts: Sequence[str], other_texts: Sequence[str], standing: bool = True) -> list[ConstraintItem]:
    """The explicit ``Constraint:`` / ``Rule:`` / ``Requirement:`` lines, the user's and the model's. (The
    user's standing instructions in other words are recognised by :mod:`.standing` and kept in their
    own section; sentences with a cue word — "never", "can't" — are no longer taken: "Can't wait.")"""
    out: list[ConstraintItem] = []
    seen: set[str] = set()

    def add(text: str, implicit: bool, source: Source) -> None:
        t = one_line(text, MAX_ITEM)
        if t.lower() not in seen and len(out) < 6:
            seen.add(t.lower())
            out.append(ConstraintItem(text=t, implicit=implicit, source=source))

    sources: list[tuple[str, Source]] = [(t, "user") for t in user_texts] + [(t, "model") for t in other_texts]
    for text, source in sources:
        for line in _prose(text).splitlines():
            m = _EXPLICIT_CONSTRAINT.match(_BULLET.sub("", line))
            if m:
                add(m.group(1), False, source)
    if not standing:  # a run recorded before standing instructions: cue words, as it was
        for text in user_texts:
            for s in sentences(text):
                if not _EXPLICIT_CONSTRAINT.match(s) and _CONSTRAINT.search(s):
                    add(s, True, "user")
    return out


def _plans(user_texts: Sequence[str], assistant_texts: Sequence[str], final: str) -> tuple[list[str], list[str]]:
    """Plan steps, the user's and the model's: ``Plan:`` lines, list items after a plan intro line
    ("Plan:", "I'll ...:"), any list the user wrote, and forward-looking sentences of the final reply
    ("Next, I'll ...", the model's)."""
    user_steps: list[str] = []
    model_steps: list[str] = []
    sources = [(t, True) for t in user_texts] + [(t, False) for t in assistant_texts]
    for text, is_user in sources:
        steps = user_steps if is_user else model_steps
        intro = False
        for line in _prose(text).splitlines():
            if not line.strip():
                continue
            explicit = _PLAN_LINE.match(line)
            if explicit:
                steps.append(explicit.group(1))
                continue
            item = _NUMBERED.match(line)
            if item:
                if is_user or intro:
                    steps.append(item.group(1))
            else:
                intro = bool(_PLAN_MARKER.search(line)) and line.rstrip().endswith(":")
    for s in sentences(final):
        if _INTENT.match(s):
            model_steps.append(s)
    users = _dedupe((one_line(s, 160) for s in user_steps), 8)
    taken = {u.lower() for u in users}
    models = _dedupe((one_line(s, 160) for s in model_steps if one_line(s, 160).lower() not in taken),
                     max(0, 8 - len(users)))
    return users, models


def _claim_like(s: str, exclude: set[str]) -> bool:
    return not (s.endswith(("?", ":")) or one_line(s, MAX_ITEM).lower() in exclude or _DECISION.search(s)
                or (_WILL.search(s) and _RATIONALE_IN.search(s)))


def _claims(final: str, exclude: set[str]) -> list[str]:
    """What the model's final reply asserts: its findings-like sentences (a marker, or a number in
    a sentence of some length), else its first sentence of four words or more. Unverified."""
    out: list[str] = []
    for s in sentences(final):
        if not _claim_like(s, exclude):
            continue
        if _FINDING.search(s) or (_DIGIT.search(s) and len(s) >= 20):
            out.append(one_line(s, MAX_ITEM))
        if len(out) >= 4:
            break
    if not out:
        first = next((s for s in sentences(final) if len(s.split()) >= 4 and _claim_like(s, exclude)), "")
        if first:
            out.append(one_line(first, MAX_ITEM))
    return out


def _findings(tool_texts: Sequence[tuple[str, str]], user_texts: Sequence[str], exclude: set[str],
              standing: bool = True) -> list[FindingItem]:
    """Findings with evidence: lines of successful tool results that carry a marker or a number,
    and the user's statements of fact (corrections included) — never the model's reply."""
    out: list[FindingItem] = []
    seen: set[str] = set()

    def add(text: str, source: str) -> None:
        t = one_line(text, MAX_ITEM)
        if t.lower() not in seen and t.lower() not in exclude:
            seen.add(t.lower())
            out.append(FindingItem(text=t, source=source))

    for text in user_texts:
        for s in sentences(text):
            if s.endswith("?") or _DECISION.search(s) or _IMPERATIVE.match(s) or (standing and kept_apart(s)):
                continue
            if _USER_FINDING.search(s):  # a statement of fact or a correction, not a request
                add(s, "user")
    for name, text in tool_texts:
        if extract_errors(text):
            continue  # a failed call is an error, not a finding
        kept = 0
        for s in sentences(text):
            if kept >= 2:
                break
            if _FINDING.search(s) or (_DIGIT.search(s) and len(s) >= 12):
                add(s, f"tool:{name}")
                kept += 1
    return out[:4]


def _questions(final: str) -> list[str]:
    return _dedupe((one_line(s, MAX_ITEM) for s in sentences(final) if s.endswith("?")), 3)


def summarise_turn(turn: int, messages: Iterable[MessageLike], skip_tools: Iterable[str] = (), *,
                   standing: bool = True) -> TurnSummary:
    """The :class:`TurnSummary` of ``turn`` from that turn's messages (user, assistant, tool).

    Calls and results of ``skip_tools`` (the adaptive-context tools, whose content lives in state
    objects) are left out, so a retracted object never reaches the checkpoint through them.
    ``standing=False``: as before standing instructions (a run recorded then, ``standing_instructions``
    off) — the user's sentences with a cue word are implicit constraints, and chit-chat, questions,
    quotes and one-offs are not kept apart.
    """
    skip = frozenset(skip_tools)
    msgs: list[Message] = [as_message(m) for m in messages]
    skipped_ids = {c.id for m in msgs for c in m.tool_calls if c.name in skip}
    user_texts = [m.content for m in msgs if m.role == "user" and m.content]
    assistant_texts = [m.content for m in msgs if m.role == "assistant" and m.content]
    tool_msgs = [m for m in msgs if m.role == "tool" and m.content and m.tool_call_id not in skipped_ids
                 and (m.name is None or m.name not in skip)]
    tool_texts = [m.content for m in tool_msgs]
    final = ""
    for m in reversed(msgs):
        if m.role == "assistant" and m.content and not m.tool_calls:
            final = m.content
            break
    else:
        final = assistant_texts[-1] if assistant_texts else ""

    tools: list[str] = []
    call_args: list[str] = []
    names: dict[str, str] = {}
    for m in msgs:
        for c in m.tool_calls:
            names[c.id] = c.name
            if c.name in skip:
                continue
            if c.name not in tools:
                tools.append(c.name)
            call_args.append(c.arguments)

    request = one_line(without_small_talk(user_texts[0]) if standing else user_texts[0], 400) if user_texts else ""
    sourced: list[tuple[str, Source]] = [(s, "user") for t in user_texts for s in sentences(t)]
    sourced += [(s, "model") for t in assistant_texts for s in sentences(t)]
    decisions = _decisions(sourced, standing)
    constraints = _constraints(user_texts, assistant_texts, standing)
    files = _dedupe([f for t in [*user_texts, *assistant_texts, *call_args] for f in extract_files(t)], 12)
    errors = _dedupe([e for t in [*tool_texts, *user_texts] for e in extract_errors(t)], 4)
    plans, model_plans = _plans(user_texts, assistant_texts, final)
    exclude = {d.text.lower() for d in decisions} | {p.lower() for p in [*plans, *model_plans]}
    exclude |= {d.rationale.lower() for d in decisions if d.rationale}
    findings = _findings([(m.name or names.get(m.tool_call_id or "", "tool"), m.content) for m in tool_msgs],
                         user_texts, exclude, standing)
    claims = _claims(final, exclude)
    questions = _questions(final)
    return TurnSummary(
        turn=turn,
        request=request,
        plans=plans,
        model_plans=model_plans,
        decisions=decisions,
        constraints=constraints,
        files=files,
        findings=findings,
        claims=claims,
        errors=errors,
        open_questions=questions,
        tools=tools,
        narrative=_narrative(turn, request, tools, errors),
    )


def _narrative(turn: int, request: str, tools: Sequence[str], errors: Sequence[str]) -> str:
    narrative = f"T{turn}: {one_line(request, 90)}" if request else f"T{turn}: (no user message)"
    if tools:
        narrative += f" → tools: {', '.join(tools)}"
    if errors:
        narrative += f" → error: {one_line(errors[0], 60)}"
    return narrative


def _in(text: str, request: str) -> bool:
    key = " ".join(text.lower().split()).rstrip(".…")
    return bool(key) and key in " ".join(request.lower().split())


def upgrade_recorded_summary(data: Mapping[str, Any]) -> dict[str, Any]:
    """A turn summary as recorded in a trace (a checkpoint event's ``digest``), in this version's
    fields (a current one is returned as is).

    Summaries recorded before sources were kept (no ``version``) took their findings from the model's
    final reply: they become ``claims``; the narrative's last part (the reply's first sentence) is
    cut off and becomes the claim when there was no finding; decisions, constraints and plan steps
    are the user's when the turn's request holds their text, else the model's. Deterministic, so a
    rebuild from an old trace gives the same checkpoint every time.
    """
    out = dict(data)
    if "version" in out:
        return out
    out["version"] = SUMMARY_VERSION
    request = str(out.get("request") or "")
    old_findings = [f for f in out.pop("findings", None) or [] if isinstance(f, str)]
    claims = list(old_findings)
    narrative = out.get("narrative")
    turn = out.get("turn")
    if isinstance(narrative, str) and isinstance(turn, int):
        tools = [t for t in out.get("tools") or [] if isinstance(t, str)]
        errors = [e for e in out.get("errors") or [] if isinstance(e, str)]
        prefix = _narrative(turn, request, tools, errors)
        if narrative.startswith(prefix + " → "):
            said = narrative[len(prefix) + 3:]
            out["narrative"] = prefix
            if not claims and said:
                claims = [said]
    out["claims"] = claims
    out["findings"] = []
    plans = [p for p in out.get("plans") or [] if isinstance(p, str)]
    out["plans"] = [p for p in plans if _in(p, request)]
    out["model_plans"] = [p for p in plans if not _in(p, request)]
    out["decisions"] = [
        {**d, "source": "user" if _in(str(d.get("text") or ""), request) else "model"}
        for d in out.get("decisions") or [] if isinstance(d, dict)
    ]
    out["constraints"] = [
        {**c, "source": "user" if c.get("implicit", True) or _in(str(c.get("text") or ""), request) else "model"}
        for c in out.get("constraints") or [] if isinstance(c, dict)
    ]
    return out
