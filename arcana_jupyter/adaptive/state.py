"""State objects: the units of adaptive context's working memory (seed 004).

Four kinds (task, decision, constraint, note), three tiers (active, soft, hard). An object is
never deleted: retraction sets a tombstone flag that hides it from every read and from the prompt
while the object stays in the engine's map (and in the trace) for audit and replay.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .standing import StandingKind

Kind = Literal["task", "decision", "constraint", "note"]
Tier = Literal["active", "soft", "hard"]
TaskStatus = Literal["open", "done"]
Origin = Literal["said", "added", "model"]
"""Where a standing object came from: ``said`` (recognised in the user's message), ``added`` (by the
user, from a magic, the inspector or Python), ``model`` (the model's ``add_constraint`` tool)."""

KINDS: tuple[str, ...] = ("task", "decision", "constraint", "note")
TIERS: tuple[str, ...] = ("active", "soft", "hard")

STANDING_FIELDS = ("standing", "origin", "revises", "remembered")
"""The fields only a standing object sets (left out of an event's object dump when unset)."""

_ID = re.compile(r"^s_(\d+)$")
_SPACE = re.compile(r"\s+")


def one_line(text: str, limit: int = 120) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``limit`` characters with an ellipsis."""
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= limit:
        return flat
    return flat[: max(1, limit - 1)].rstrip() + "…"


def object_number(object_id: str) -> int:
    """The ``n`` of ``s_<n>`` (objects sort by it); ``-1`` for anything else."""
    m = _ID.match(object_id)
    return int(m.group(1)) if m else -1


class StateObject(BaseModel):
    """One working-memory object.

    ``payload`` is the full text (what the active tier shows), ``summary`` the one-line stub (what
    the soft tier shows). ``status`` is set for tasks only, ``rationale`` for decisions and
    constraints (why). ``last_touched_turn`` drives demotion: created, updated, hydrated, focused
    and promoted objects are touched.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str
    kind: Kind
    payload: str
    summary: str
    tier: Tier = "active"
    created_turn: int
    last_touched_turn: int
    focused: bool = False
    retracted: bool = False
    retracted_turn: int | None = None
    retract_reason: str | None = None
    status: TaskStatus | None = None
    rationale: str | None = None
    standing: StandingKind | None = None
    """Set on a standing instruction, preference or constraint (a ``constraint`` object): it is in the
    ``standing`` section of every prompt, in the user's words, never demoted, until retracted — by the
    user, or by a later revision or revocation (adaptive/standing.py)."""
    origin: Origin | None = None
    """Who made a standing object (see :data:`Origin`)."""
    revises: str | None = None
    """The standing object this one replaced (retracted when this one was made)."""
    remembered: str | None = None
    """The long-term memory entry a standing object was kept as, when the user confirmed it
    (``%arcana_standing remember``, the inspector): the next notebook starts with it in its digest."""

    def record(self) -> dict[str, object]:
        """The object as an event records it: its JSON dump, without the standing fields when they are
        unset (so the events of other objects are as they were before standing instructions existed)."""
        data = self.model_dump(mode="json")
        for key in STANDING_FIELDS:
            if data[key] is None:
                del data[key]
        return data

    @property
    def number(self) -> int:
        return object_number(self.id)

    def search_text(self) -> str:
        """The text promotion matches against (summary, payload and rationale)."""
        parts = [self.summary, self.payload]
        if self.rationale:
            parts.append(self.rationale)
        return "\n".join(parts)

    def render_full(self) -> str:
        """The active-tier rendering: a header line and the full payload."""
        flags: list[str] = [self.kind]
        if self.standing is not None:
            flags.append(f"standing {self.standing}")
        if self.status is not None:
            flags.append(self.status)
        if self.focused:
            flags.append("focused")
        head = f"[{self.id} {', '.join(flags)}] {self.summary}"
        body = self.payload.strip()
        lines = [head]
        if body and body != self.summary.strip():
            lines.extend("  " + line for line in body.splitlines())
        if self.rationale:
            lines.append(f"  Rationale: {one_line(self.rationale, 400)}")
        return "\n".join(lines)

    def render_stub(self) -> str:
        """The soft-tier rendering: one line."""
        status = f" ({self.status})" if self.status == "done" else ""
        return f"{self.id} {self.kind}{status}: {one_line(self.summary, 100)}"
