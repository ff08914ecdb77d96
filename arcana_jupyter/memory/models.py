"""The memory vocabulary: kinds, confidence levels, scopes and the entry model.

Scopes are labels. Every entry carries ``user:<hash>`` and ``agent:arcana``; a *project* entry also
carries ``context:<hash of the project folder>``, a *global* entry carries no ``context:`` label.

Recall is strict AND-scoping: an entry matches a query scope set when it carries **every** label of
the set. One more rule makes that safe: an entry tied to a context is only visible to a query that
names that context — otherwise the global query ``{user, agent}`` would see every project's
entries (they carry ``user`` and ``agent`` too). A project session queries both sets
(:meth:`Scope.query_sets`) and merges the two result lists into one ranking.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["fact", "preference", "decision", "pattern", "mistake", "constraint"]
KINDS: tuple[str, ...] = ("fact", "preference", "decision", "pattern", "mistake", "constraint")

ConfidenceLevel = Literal["high", "medium", "low"]
CONFIDENCE_LEVELS: dict[str, float] = {"high": 0.8, "medium": 0.5, "low": 0.3}
"""Initial confidence by extraction certainty (seed 004)."""

Level = Literal["project", "global"]
AGENT_SCOPE = "agent:arcana"
ENTRY_ID = re.compile(r"^m_[0-9a-f]{6,32}$")


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def current_user() -> str:
    """The login name (``getpass``), falling back to ``$USER`` / ``$USERNAME`` / ``unknown``."""
    try:
        return getpass.getuser()
    except Exception:
        return os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"


def user_scope(user: str | None = None) -> str:
    return f"user:{_hash(user if user is not None else current_user())}"


def context_scope(project_dir: str | os.PathLike[str]) -> str:
    return f"context:{_hash(str(Path(project_dir).expanduser().resolve()))}"


class Scope(BaseModel):
    """Where a session lives: a user, the agent, and (for a project session) a project context.

    ``Scope.for_project(dir)`` for a notebook's folder, ``Scope.for_global()`` when there is no
    project. Project entries get :attr:`project_labels`, global entries :attr:`global_labels`.
    """

    model_config = ConfigDict(frozen=True)

    user: str
    agent: str = AGENT_SCOPE
    context: str | None = None
    project_dir: str | None = None
    """The resolved project folder, for display only."""

    @classmethod
    def for_project(cls, project_dir: str | os.PathLike[str], user: str | None = None) -> Scope:
        resolved = Path(project_dir).expanduser().resolve()
        return cls(user=user_scope(user), context=context_scope(resolved), project_dir=str(resolved))

    @classmethod
    def for_global(cls, user: str | None = None) -> Scope:
        return cls(user=user_scope(user))

    @property
    def is_project(self) -> bool:
        return self.context is not None

    @property
    def global_labels(self) -> tuple[str, ...]:
        return (self.user, self.agent)

    @property
    def project_labels(self) -> tuple[str, ...]:
        if self.context is None:
            raise ValueError("this scope has no project context (it was made with Scope.for_global)")
        return (self.user, self.agent, self.context)

    def labels_for(self, level: Level) -> tuple[str, ...]:
        """Labels a new entry of ``level`` gets (``project`` falls back to global without a project)."""
        if level == "project" and self.context is not None:
            return self.project_labels
        return self.global_labels

    def query_sets(self) -> list[tuple[str, ...]]:
        """The scope sets a session queries: project and global in a project, else global only."""
        if self.context is not None:
            return [self.project_labels, self.global_labels]
        return [self.global_labels]


class MemoryEntry(BaseModel):
    """One memory. Timestamps are timezone-aware UTC datetimes."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: Kind
    content: str
    scopes: tuple[str, ...]
    confidence: float = Field(ge=0.0, le=1.0)
    """The stored confidence; :func:`~arcana_jupyter.memory.ranking.effective_confidence` decays it."""
    validity: float = Field(default=0.5, ge=0.0, le=1.0)
    usefulness: float = Field(default=0.5, ge=0.0, le=1.0)
    pinned: bool = False
    layer: Literal[1, 2] = 1
    created_at: datetime
    updated_at: datetime
    last_accessed_at: datetime | None = None
    reinforced_at: datetime
    """When the confidence decay clock was last reset (creation, or acted on in a successful session)."""
    surfaced_count: int = 0
    surfaced_sessions: int = 0
    acted_on_count: int = 0
    retracted: bool = False
    source: str = "remember"

    @property
    def context(self) -> str | None:
        return next((s for s in self.scopes if s.startswith("context:")), None)

    @property
    def level(self) -> Level:
        return "project" if self.context else "global"

    def brief(self) -> dict[str, object]:
        """The compact form trace events carry (id, kind, scope, content, confidence)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "scope": self.level,
            "scopes": list(self.scopes),
            "content": self.content,
            "confidence": round(self.confidence, 4),
        }


def to_epoch(value: datetime) -> float:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, tz=UTC)
