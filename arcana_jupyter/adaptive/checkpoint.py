"""SessionCheckpoint: a structured within-session summary, reconciled from TurnDigests only.

After every turn the engine folds that turn's :class:`~.digest.TurnDigest` into the checkpoint with
fixed rules (latest request wins, plans keep a short history, decisions keep their rationale,
constraints and files accumulate with caps, open questions are the latest turn's). No LLM writes
it, so the same turns always give the same checkpoint text, byte for byte.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .digest import ConstraintItem, DecisionItem, TurnDigest
from .state import one_line

MAX_DECISIONS = 12
MAX_CONSTRAINTS = 15
MAX_FILES = 20
MAX_FINDINGS = 8
MAX_ERRORS = 5
MAX_PLAN_HISTORY = 3


class PlanRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    turn: int
    steps: list[str]


class TurnItem(BaseModel):
    """A checkpoint entry and the turn it was (last) seen in."""

    model_config = ConfigDict(frozen=True)

    turn: int
    text: str
    rationale: str | None = None
    implicit: bool = False


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
    errors: list[TurnItem] = Field(default_factory=list)
    open_questions: list[str] = Field(default_factory=list)
    narrative: list[str] = Field(default_factory=list)

    def reconcile(self, digest: TurnDigest) -> None:
        """Fold one turn's digest in (turns are expected in increasing order)."""
        t = digest.turn
        self.last_turn = max(self.last_turn, t)
        self.turns += 1
        if digest.request:
            self.active_request = digest.request
            self.active_request_turn = t
        if digest.plans and (self.plan is None or self.plan.steps != digest.plans):
            if self.plan is not None:
                self.plan_history = [*self.plan_history, self.plan][-MAX_PLAN_HISTORY:]
            self.plan = PlanRecord(turn=t, steps=list(digest.plans))
        self.decisions = _merge_decisions(self.decisions, digest.decisions, t)
        self.constraints = _merge_constraints(self.constraints, digest.constraints, t)
        files = [f for f in self.files if f.lower() not in {g.lower() for g in digest.files}]
        self.files = [*files, *digest.files][-MAX_FILES:]
        self.findings = _merge_plain(self.findings, digest.findings, t, MAX_FINDINGS)
        self.errors = _merge_plain(self.errors, digest.errors, t, MAX_ERRORS)
        self.open_questions = list(digest.open_questions)
        if digest.narrative:
            self.narrative = [*self.narrative, digest.narrative]

    def render(self, narrative_lines: int = 12) -> str:
        """The checkpoint as the pinned prompt section (deterministic text)."""
        if self.turns == 0:
            return ""
        out = [
            f"Session checkpoint (reconciled after turn {self.last_turn}; "
            "written from turn digests, not by a model)"
        ]
        if self.active_request:
            out.append(f"Active request (turn {self.active_request_turn}): {one_line(self.active_request, 300)}")
        if self.plan is not None:
            out.append(f"Current plan (turn {self.plan.turn}):")
            out += [f"  {i}. {one_line(s, 160)}" for i, s in enumerate(self.plan.steps, 1)]
        if self.plan_history:
            out.append("Earlier plans:")
            out += [
                f"  turn {p.turn}: " + " | ".join(one_line(s, 80) for s in p.steps) for p in self.plan_history
            ]
        if self.decisions:
            out.append("Decisions:")
            for d in self.decisions:
                why = f" — why: {one_line(d.rationale, 160)}" if d.rationale else ""
                out.append(f"  - (turn {d.turn}) {one_line(d.text, 200)}{why}")
        if self.constraints:
            out.append("Constraints:")
            for c in self.constraints:
                tag = " [implicit]" if c.implicit else ""
                out.append(f"  - (turn {c.turn}) {one_line(c.text, 200)}{tag}")
        if self.files:
            out.append("Files: " + ", ".join(self.files))
        if self.findings:
            out.append("Findings:")
            out += [f"  - (turn {f.turn}) {one_line(f.text, 200)}" for f in self.findings]
        if self.errors:
            out.append("Errors seen:")
            out += [f"  - (turn {e.turn}) {one_line(e.text, 200)}" for e in self.errors]
        if self.open_questions:
            out.append("Open questions:")
            out += [f"  - {one_line(q, 200)}" for q in self.open_questions]
        if self.narrative:
            shown = self.narrative[-narrative_lines:]
            hidden = len(self.narrative) - len(shown)
            out.append("Narrative:")
            if hidden:
                out.append(f"  ({hidden} earlier turn(s) not shown; search_turn_events(query) finds them)")
            out += [f"  {one_line(line, 220)}" for line in shown]
        return "\n".join(out)


def _merge_decisions(current: list[TurnItem], new: list[DecisionItem], turn: int) -> list[TurnItem]:
    items = list(current)
    for d in new:
        key = _key(d.text)
        old = next((i for i, x in enumerate(items) if _key(x.text) == key), None)
        rationale = d.rationale
        if old is not None:
            rationale = rationale or items[old].rationale
            del items[old]
        items.append(TurnItem(turn=turn, text=d.text, rationale=rationale))
    return items[-MAX_DECISIONS:]


def _merge_constraints(current: list[TurnItem], new: list[ConstraintItem], turn: int) -> list[TurnItem]:
    items = list(current)
    for c in new:
        key = _key(c.text)
        old = next((i for i, x in enumerate(items) if _key(x.text) == key), None)
        if old is not None:
            del items[old]
        items.append(TurnItem(turn=turn, text=c.text, implicit=c.implicit))
    return items[-MAX_CONSTRAINTS:]


def _merge_plain(current: list[TurnItem], new: list[str], turn: int, cap: int) -> list[TurnItem]:
    items = list(current)
    for text in new:
        key = _key(text)
        items = [x for x in items if _key(x.text) != key]
        items.append(TurnItem(turn=turn, text=text))
    return items[-cap:]
