"""SessionCheckpoint: a structured within-session summary, reconciled from TurnSummary models only.

After every turn the engine folds that turn's :class:`~.turn_summary.TurnSummary` into the checkpoint with
fixed rules (latest request wins, plans keep a short history, decisions keep their rationale,
constraints and files accumulate with caps, open questions are the latest turn's). No LLM writes
it, so the same turns always give the same checkpoint text, byte for byte.

It renders as two parts. :meth:`SessionCheckpoint.render` holds what the user said and what tools
returned (request, the user's plan and decisions, files, findings, errors, the narrative of what
happened; the user's constraints are standing instructions, in the ``standing`` section in their own
words, not repeated here): the ``checkpoint`` section, kept like a pin. :meth:`render_claims`
holds what the model's own replies said — its claims, plans, decisions and questions — under
"Model's earlier claims (unverified)": the ``model_claims`` section, an ordinary section the
builder may compress or drop, so one wrong answer is not repeated to the model as a fact in every
later prompt.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..context.decisions import Placement
from ..context.sections import CHECKPOINT_SECTION, ContextSection
from .state import one_line
from .turn_summary import ConstraintItem, DecisionItem, FindingItem, TurnSummary

SECTION_CLAIMS = "model_claims"
"""The checkpoint's part from the model's own replies: an ordinary section (compressible, droppable)."""

MAX_DECISIONS = 12
MAX_CONSTRAINTS = 15
MAX_FILES = 20
MAX_FINDINGS = 8
MAX_CLAIMS = 8
MAX_ERRORS = 5
MAX_PLAN_HISTORY = 3

CLAIMS_HEADING = "Model's earlier claims (unverified: from its own replies, not checked against tools or the user)"


class PlanRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    turn: int
    steps: list[str]
    source: str = "user"
    """``user`` (steps the user wrote) or ``model`` (from the model's replies)."""


class TurnItem(BaseModel):
    """A checkpoint entry and the turn it was (last) seen in."""

    model_config = ConfigDict(frozen=True)

    turn: int
    text: str
    rationale: str | None = None
    implicit: bool = False
    source: str = "user"
    """``user``, ``tool:<name>`` or ``model``."""


def _key(text: str) -> str:
    return " ".join(text.lower().split())


class SessionCheckpoint(BaseModel):
    """The reconciled checkpoint (see the module docstring)."""

    last_turn: int = 0
    turns: int = 0
    active_request: str = ""
    active_request_turn: int | None = None
    plan: PlanRecord | None = None
    plan_history: list[PlanRecord] = Field(default_factory=list)
    decisions: list[TurnItem] = Field(default_factory=list)
    constraints: list[TurnItem] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    findings: list[TurnItem] = Field(default_factory=list)
    """From tool results and the user only."""
    claims: list[TurnItem] = Field(default_factory=list)
    """What the model's replies asserted (unverified)."""
    errors: list[TurnItem] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    """The questions the model's latest reply asked."""
    open_questions_turn: int | None = None
    narrative: list[str] = Field(default_factory=list)

    def reconcile(self, summary: TurnSummary) -> None:
        """Fold one turn's summary in (turns are expected in increasing order)."""
        t = summary.turn
        self.last_turn = max(self.last_turn, t)
        self.turns += 1
        if summary.request:
            self.active_request = summary.request
            self.active_request_turn = t
        steps, source = (summary.plans, "user") if summary.plans else (summary.model_plans, "model")
        if steps and (self.plan is None or self.plan.steps != steps):
            if self.plan is not None:
                self.plan_history = [*self.plan_history, self.plan][-MAX_PLAN_HISTORY:]
            self.plan = PlanRecord(turn=t, steps=list(steps), source=source)
        self.decisions = _merge_decisions(self.decisions, summary.decisions, t)
        self.constraints = _merge_constraints(self.constraints, summary.constraints, t)
        files = [f for f in self.files if f.lower() not in {g.lower() for g in summary.files}]
        self.files = [*files, *summary.files][-MAX_FILES:]
        self.findings = _merge_findings(self.findings, summary.findings, t)
        self.claims = _merge_plain(self.claims, summary.claims, t, MAX_CLAIMS, source="model")
        self.errors = _merge_plain(self.errors, summary.errors, t, MAX_ERRORS)
        self.open_questions = list(summary.open_questions)
        self.open_questions_turn = t if summary.open_questions else None
        if summary.narrative:
            self.narrative = [*self.narrative, summary.narrative]

    def render(self, narrative_lines: int = 12, user_constraints: bool = False) -> str:
        """The user- and tool-derived part: the ``checkpoint`` section, kept like a pin (deterministic text).
        ``user_constraints``: with the user's constraints (a run recorded before standing instructions)."""
        if self.turns == 0:
            return ""
        out = [
            f"Session checkpoint (reconciled after turn {self.last_turn}; "
            "written from turn digests, not by a model; only what the user said and tools returned)"
        ]
        if self.active_request:
            out.append(f"Active request (turn {self.active_request_turn}): {one_line(self.active_request, 300)}")
        if self.plan is not None and self.plan.source == "user":
            out.append(f"Current plan (turn {self.plan.turn}, the user's):")
            out += [f"  {i}. {one_line(s, 160)}" for i, s in enumerate(self.plan.steps, 1)]
        users = [p for p in self.plan_history if p.source == "user"]
        if users:
            out.append("Earlier plans (the user's):")
            out += [f"  turn {p.turn}: " + " | ".join(one_line(s, 80) for s in p.steps) for p in users]
        decisions = [d for d in self.decisions if d.source == "user"]
        if decisions:
            out.append("Decisions (the user's):")
            for d in decisions:
                why = f" — why: {one_line(d.rationale, 160)}" if d.rationale else ""
                out.append(f"  - (turn {d.turn}) {one_line(d.text, 200)}{why}")
        constraints = [c for c in self.constraints if c.source == "user"] if user_constraints else []
        if constraints:
            out.append("Constraints:")
            for c in constraints:
                tag = " [implicit]" if c.implicit else ""
                out.append(f"  - (turn {c.turn}) {one_line(c.text, 200)}{tag}")
        if self.files:
            out.append("Files: " + ", ".join(self.files))
        if self.findings:
            out.append("Findings (from tool results and the user):")
            out += [f"  - (turn {f.turn}, {_who(f.source)}) {one_line(f.text, 200)}" for f in self.findings]
        if self.errors:
            out.append("Errors seen:")
            out += [f"  - (turn {e.turn}) {one_line(e.text, 200)}" for e in self.errors]
        if self.narrative:
            shown = self.narrative[-narrative_lines:]
            hidden = len(self.narrative) - len(shown)
            out.append("Narrative:")
            if hidden:
                out.append(f"  ({hidden} earlier turn(s) not shown; search_turn_events(query) finds them)")
            out += [f"  {one_line(line, 220)}" for line in shown]
        return "\n".join(out)

    def render_claims(self) -> str:
        """The part from the model's own replies: the ``model_claims`` section (not protected), or ``""``."""
        out: list[str] = []
        if self.claims:
            out.append("Said in its replies:")
            out += [f"  - (turn {c.turn}) {one_line(c.text, 200)}" for c in self.claims]
        if self.plan is not None and self.plan.source == "model":
            out.append(f"Its plan (turn {self.plan.turn}):")
            out += [f"  {i}. {one_line(s, 160)}" for i, s in enumerate(self.plan.steps, 1)]
        earlier = [p for p in self.plan_history if p.source == "model"]
        if earlier:
            out.append("Its earlier plans:")
            out += [f"  turn {p.turn}: " + " | ".join(one_line(s, 80) for s in p.steps) for p in earlier]
        decisions = [d for d in self.decisions if d.source != "user"]
        if decisions:
            out.append("Decisions it stated:")
            for d in decisions:
                why = f" — its reason: {one_line(d.rationale, 160)}" if d.rationale else ""
                out.append(f"  - (turn {d.turn}) {one_line(d.text, 200)}{why}")
        constraints = [c for c in self.constraints if c.source != "user"]
        if constraints:
            out.append("Constraints it stated:")
            out += [f"  - (turn {c.turn}) {one_line(c.text, 200)}" for c in constraints]
        if self.open_questions:
            out.append(f"Questions it asked (turn {self.open_questions_turn or self.last_turn}):")
            out += [f"  - {one_line(q, 200)}" for q in self.open_questions]
        if not out:
            return ""
        return "\n".join([f"{CLAIMS_HEADING}; check them before relying on them:", *out])


def checkpoint_sections(checkpoint: SessionCheckpoint, narrative_lines: int = 12,
                        placement: Placement = "late", user_constraints: bool = False) -> list[ContextSection]:
    """The checkpoint as prompt sections: ``checkpoint`` (the user's and the tools' part, protected
    like a pin) and ``model_claims`` (the model's own replies, unverified, not protected); either is
    left out when empty."""
    out: list[ContextSection] = []
    text = checkpoint.render(narrative_lines, user_constraints)
    if text:
        out.append(ContextSection(name=CHECKPOINT_SECTION, content=text, placement=placement))
    claims = checkpoint.render_claims()
    if claims:
        out.append(ContextSection(name=SECTION_CLAIMS, content=claims, placement=placement))
    return out


def _who(source: str) -> str:
    return f"tool {source[5:]}" if source.startswith("tool:") else source


def _merge_decisions(current: list[TurnItem], new: list[DecisionItem], turn: int) -> list[TurnItem]:
    items = list(current)
    for d in new:
        key = _key(d.text)
        old = next((i for i, x in enumerate(items) if _key(x.text) == key), None)
        rationale = d.rationale
        if old is not None:
            rationale = rationale or items[old].rationale
            del items[old]
        items.append(TurnItem(turn=turn, text=d.text, rationale=rationale, source=d.source))
    return items[-MAX_DECISIONS:]


def _merge_constraints(current: list[TurnItem], new: list[ConstraintItem], turn: int) -> list[TurnItem]:
    items = list(current)
    for c in new:
        key = _key(c.text)
        old = next((i for i, x in enumerate(items) if _key(x.text) == key), None)
        if old is not None:
            del items[old]
        items.append(TurnItem(turn=turn, text=c.text, implicit=c.implicit, source=c.source))
    return items[-MAX_CONSTRAINTS:]


def _merge_plain(current: list[TurnItem], new: list[str], turn: int, cap: int, source: str = "user") -> list[TurnItem]:
    items = list(current)
    for text in new:
        key = _key(text)
        items = [x for x in items if _key(x.text) != key]
        items.append(TurnItem(turn=turn, text=text, source=source))
    return items[-cap:]


def _merge_findings(current: list[TurnItem], new: list[FindingItem], turn: int) -> list[TurnItem]:
    items = list(current)
    for f in new:
        key = _key(f.text)
        items = [x for x in items if _key(x.text) != key]
        items.append(TurnItem(turn=turn, text=f.text, source=f.source))
    return items[-MAX_FINDINGS:]
