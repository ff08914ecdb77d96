"""Pins and sections: the blocks besides the history that a working set is built from.

A pin (:class:`~arcana_jupyter.schema.pins.Pin`, also exported as ``PinBlock``) is content the user or
the model pinned (seed 000's ``pin`` primitive). Pins live in the Working layer, are never compressed
and never dropped while they are live; a pin whose ``until_turn`` is before the current turn is
expired and not rendered.

A :class:`ContextSection` is anything else the runtime wants the model to see: the memory digest
(``layer="external"``), adaptive-context tiers, the session checkpoint... Sections are placed at
the head of the prompt (after the system prompt) or late (just before the recent turns); under
pressure they may be compressed to L1/L2 or dropped, except the section named ``checkpoint``,
which is treated like a pin. It holds only what the user said and what tools returned: what the
model's own replies said is the ordinary ``model_claims`` section (adaptive/checkpoint.py), so a
wrong answer is never protected as a fact.
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

    @property
    def protected(self) -> bool:
        """True for sections that are never compressed or dropped (the checkpoint)."""
        return self.name == CHECKPOINT_SECTION

    def render(self, content: str | None = None) -> Message:
        """The message the section becomes (``content`` overrides the text, for compressed forms)."""
        return Message(role=self.role, content=self.content if content is None else content, name=self.name)


def render_task(task: str) -> Message:
    """The Task-layer message for ``task=`` text."""
    return Message(role="system", content=f"Current task: {task}", name=TASK_SECTION)

