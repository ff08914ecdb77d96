"""TurnDigest: what one turn said and did, extracted deterministically from its messages.

Never written by an LLM: plain rules over the turn's user, assistant and tool messages, so the
same transcript always gives the same digest (and so the same checkpoint, byte for byte). The
rules are deliberately conservative — each field takes a few sentences that carry a clear marker
("decided", "because", "must", "Traceback", a file name ...) rather than guessing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..messages import Message, MessageLike, as_message
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
_DIGIT = re.compile(r"\d")
_EXC_LINE = re.compile(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))(?::\s*(.*))?\s*$")
_FILE = re.compile(
    r"(?<![\w/.\-:])((?:~?/)?(?:[\w.\-]+/)*[\w\-][\w.\-]*\.(?:py|ipynb|csv|tsv|json|jsonl|txt|md|rst|parquet|xlsx|xls|"
    r"yaml|yml|toml|ini|cfg|conf|log|sql|db|sqlite|sqlite3|js|ts|tsx|html|css|sh|pkl|pickle|npy|npz|h5|hdf5|"
    r"feather|arrow|xml|png|jpg|jpeg|svg|pdf|gz|zip|tar|rs|go|java|cpp|ipynb))(?![\w/\-])",
    re.I,
)

MAX_ITEM = 240


class DecisionItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    rationale: str | None = None


class ConstraintItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    implicit: bool = True
    """False when stated as ``Constraint: ...``; True when inferred from must / never / only ..."""


class TurnDigest(BaseModel):
    """The deterministic digest of one turn (see the module docstring)."""

    model_config = ConfigDict(frozen=True)

    turn: int
    request: str = ""
    plans: list[str] = Field(default_factory=list)
    decisions: list[DecisionItem] = Field(default_factory=list)
    constraints: list[ConstraintItem] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    findings: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    tools: list[str] = Field(default_factory=list)
    narrative: str = ""

    def text(self) -> str:
        """Everything the digest holds as plain text (what search and relevance scoring see)."""
        parts = [self.request, *self.plans]
        for d in self.decisions:
            parts.append(d.text if not d.rationale else f"{d.text} {d.rationale}")
        parts += [c.text for c in self.constraints]
        parts += self.files + self.findings + self.errors + self.open_questions + self.tools
        parts.append(self.narrative)
        return "\n".join(p for p in parts if p)

    def render(self) -> str:
        """The digest as a compact block (the digest band of the prompt)."""
        fields: list[str] = []
        if self.request:
            fields.append(f"request: {one_line(self.request, 200)}")
        if self.plans:
            fields.append("plan: " + " | ".join(one_line(p, 100) for p in self.plans))
        for d in self.decisions:
            why = f" (why: {one_line(d.rationale, 120)})" if d.rationale else ""
            fields.append(f"decided: {one_line(d.text, 140)}{why}")
        if self.constraints:
            fields.append("constraints: " + " | ".join(one_line(c.text, 120) for c in self.constraints))
        if self.files:
            fields.append("files: " + ", ".join(self.files))
        if self.tools:
            fields.append("tools: " + ", ".join(self.tools))
        if self.findings:
            fields.append("found: " + " | ".join(one_line(f, 140) for f in self.findings))
        if self.errors:
            fields.append("errors: " + " | ".join(one_line(e, 140) for e in self.errors))
        if self.open_questions:
            fields.append("open: " + " | ".join(one_line(q, 120) for q in self.open_questions))
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


def _decisions(sents: Sequence[str]) -> list[DecisionItem]:
    out: list[DecisionItem] = []
    seen: set[str] = set()
    for i, s in enumerate(sents):
        if s.endswith("?"):
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
        out.append(DecisionItem(text=text, rationale=one_line(rationale, MAX_ITEM) if rationale else None))
        if len(out) >= 4:
            break
    return out


def _constraints(user_texts: Sequence[str], other_texts: Sequence[str]) -> list[ConstraintItem]:
    out: list[ConstraintItem] = []
    seen: set[str] = set()

    def add(text: str, implicit: bool) -> None:
        t = one_line(text, MAX_ITEM)
        if t.lower() not in seen and len(out) < 6:
            seen.add(t.lower())
            out.append(ConstraintItem(text=t, implicit=implicit))

    for text in [*user_texts, *other_texts]:
        for line in _prose(text).splitlines():
            m = _EXPLICIT_CONSTRAINT.match(_BULLET.sub("", line))
            if m:
                add(m.group(1), False)
    for text in user_texts:
        for s in sentences(text):
            if _EXPLICIT_CONSTRAINT.match(s):
                continue
            if _CONSTRAINT.search(s):
                add(s, True)
    return out


def _plans(user_texts: Sequence[str], assistant_texts: Sequence[str], final: str) -> list[str]:
    """Plan steps: ``Plan:`` lines, list items after a plan intro line ("Plan:", "I'll ...:"), any
    list the user wrote, and forward-looking sentences of the final reply ("Next, I'll ...")."""
    steps: list[str] = []
    sources = [(t, True) for t in user_texts] + [(t, False) for t in assistant_texts]
    for text, is_user in sources:
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
            steps.append(s)
    return _dedupe((one_line(s, 160) for s in steps), 8)


def _findings(final: str, exclude: set[str]) -> list[str]:
    out: list[str] = []
    for s in sentences(final):
        if (s.endswith(("?", ":")) or one_line(s, MAX_ITEM).lower() in exclude or _DECISION.search(s)
                or (_WILL.search(s) and _RATIONALE_IN.search(s))):
            continue
        if _FINDING.search(s) or (_DIGIT.search(s) and len(s) >= 20):
            out.append(one_line(s, MAX_ITEM))
        if len(out) >= 4:
            break
    return out


def _questions(final: str) -> list[str]:
    return _dedupe((one_line(s, MAX_ITEM) for s in sentences(final) if s.endswith("?")), 3)


def extract_digest(turn: int, messages: Iterable[MessageLike], skip_tools: Iterable[str] = ()) -> TurnDigest:
    """The :class:`TurnDigest` of ``turn`` from that turn's messages (user, assistant, tool).

    Calls and results of ``skip_tools`` (the adaptive-context tools, whose content lives in state
    objects) are left out, so a retracted object never reaches the checkpoint through them.
    """
    skip = frozenset(skip_tools)
    msgs: list[Message] = [as_message(m) for m in messages]
    skipped_ids = {c.id for m in msgs for c in m.tool_calls if c.name in skip}
    user_texts = [m.content for m in msgs if m.role == "user" and m.content]
    assistant_texts = [m.content for m in msgs if m.role == "assistant" and m.content]
    tool_texts = [m.content for m in msgs if m.role == "tool" and m.content and m.tool_call_id not in skipped_ids
                  and (m.name is None or m.name not in skip)]
    final = ""
    for m in reversed(msgs):
        if m.role == "assistant" and m.content and not m.tool_calls:
            final = m.content
            break
    else:
        final = assistant_texts[-1] if assistant_texts else ""

    tools: list[str] = []
    call_args: list[str] = []
    for m in msgs:
        for c in m.tool_calls:
            if c.name in skip:
                continue
            if c.name not in tools:
                tools.append(c.name)
            call_args.append(c.arguments)

    request = one_line(user_texts[0], 400) if user_texts else ""
    decisions = _decisions([s for t in [*user_texts, *assistant_texts] for s in sentences(t)])
    constraints = _constraints(user_texts, assistant_texts)
    files = _dedupe([f for t in [*user_texts, *assistant_texts, *call_args] for f in extract_files(t)], 12)
    errors = _dedupe([e for t in [*tool_texts, *user_texts] for e in extract_errors(t)], 4)
    plans = _plans(user_texts, assistant_texts, final)
    exclude = {d.text.lower() for d in decisions} | {p.lower() for p in plans}
    exclude |= {d.rationale.lower() for d in decisions if d.rationale}
    findings = _findings(final, exclude)
    questions = _questions(final)

    narrative = f"T{turn}: {one_line(request, 90)}" if request else f"T{turn}: (no user message)"
    if tools:
        narrative += f" → tools: {', '.join(tools)}"
    if errors:
        narrative += f" → error: {one_line(errors[0], 60)}"
    first = next((s for s in sentences(final) if len(s.split()) >= 4), "")
    if first:
        narrative += f" → {one_line(first, 90)}"
    return TurnDigest(
        turn=turn,
        request=request,
        plans=plans,
        decisions=decisions,
        constraints=constraints,
        files=files,
        findings=findings,
        errors=errors,
        open_questions=questions,
        tools=tools,
        narrative=narrative,
    )
