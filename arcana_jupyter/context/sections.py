"""Pins and sections: the blocks besides the history that a working set is built from.

A pin (:class:`~arcana_jupyter.schema.pins.Pin`, also exported as ``PinBlock``) is content the user or
the model pinned (seed 000's ``pin`` primitive). Pins live in the Working layer, are never compressed
and never dropped while they are live; a pin whose ``until_turn`` is before the current turn is
expired and not rendered.

A :class:`ContextSection` is anything else the runtime wants the model to see: the memory digest
(``layer="external"``), adaptive-context tiers, the session checkpoint... Sections are placed at
the head of the prompt (after the system prompt) or late (just before the recent turns); under
pressure they may be compressed to L1/L2 or dropped, except the protected sections, treated like a
pin: ``checkpoint`` and ``standing``. The checkpoint holds only what the user said and what tools
returned: what the model's own replies said is the ordinary ``model_claims`` section
(adaptive/checkpoint.py), so a wrong answer is never protected as a fact. ``standing`` holds the
user's standing instructions, preferences and constraints in their own words (adaptive/standing.py),
bounded by its producer to a share of the budget so that it always fits.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..messages import Message, Role
from ..schema.pins import Pin
from .decisions import Layer, Placement

CHECKPOINT_SECTION = "checkpoint"
"""The one section that is never compressed or dropped (the user- and tool-derived part of the
adaptive session checkpoint; the model's claims are not in it)."""

STANDING_SECTION = "standing"
"""The user's standing instructions, preferences and constraints (adaptive/rendering.py): protected
like the checkpoint; its producer keeps it within its share of the budget."""

PROTECTED_SECTIONS = frozenset({CHECKPOINT_SECTION, STANDING_SECTION})
"""The sections never compressed or dropped (unless what must be kept does not fit at all)."""

TASK_SECTION = "task"
"""Section name the builder gives the ``task=`` text in its decisions."""


PinBlock = Pin
"""The pin the builder renders: the one :class:`~arcana_jupyter.schema.pins.Pin` model (public name kept)."""


class ContextSection(BaseModel):
    """A named block of context (memory digest, adaptive state, checkpoint ...)."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    content: str
    layer: Layer = "working"
    role: Role = "system"
    placement: Placement = "head"
    """``head``: right after the system prompt (stable, cache-friendly); ``late``: just before the
    recent turns (for content that changes every turn)."""
    entries: list[dict[str, Any]] | None = None
    """What the section lists, for readers (the memory digest: ``{id, kind, scope, score, content}``
    per memory): recorded with the decision's inputs, never rendered (the builder sends ``content``)."""
    note: str | None = None
    """What its producer says about it in the decision's notes (``standing``: which items were shortened
    to fit its share of the budget); recorded with the inputs, never rendered."""

    @property
    def protected(self) -> bool:
        """True for sections that are never compressed or dropped (the checkpoint, the standing instructions)."""
        return self.name in PROTECTED_SECTIONS

    def render(self, content: str | None = None) -> Message:
        """The message the section becomes (``content`` overrides the text, for compressed forms)."""
        return Message(role=self.role, content=self.content if content is None else content, name=self.name)


def render_task(task: str) -> Message:
    """The Task-layer message for ``task=`` text."""
    return Message(role="system", content=f"Current task: {task}", name=TASK_SECTION)

