"""Session-end learnings: the summariser prompt, and strict validation of what comes back.

The summariser is any ``async (prompt: str) -> str`` callable (the runtime wraps its provider).
It must answer with JSON ``{"learnings": [{"kind", "content", "confidence", "scope"}, ...]}`` (a bare
list is accepted too), at most :data:`MAX_LEARNINGS` items. Code fences and text before or after
the JSON are tolerated; anything else — invalid JSON, an unknown kind, a missing field, too many
items — makes the whole answer invalid: :func:`parse_learnings` returns the problems and *no*
learnings, so the store writes nothing (all or nothing).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..exceptions import MemoryStoreError
from ..tokens import TokenCounter
from .core import default_counter
from .entries import EntriesMixin
from .models import ConfidenceLevel, Kind, Level, MemoryEntry, Scope

MAX_LEARNINGS = 5
MAX_CONTENT_CHARS = 500

LEARNINGS_PROMPT = """You maintain the long-term memory of a coding assistant that works in Jupyter notebooks.
Read the session transcript below and extract at most {max_items} durable learnings worth remembering in
future sessions. Good learnings are specific and reusable: facts about the project, the user's
preferences, decisions taken (with the reason), patterns that worked, mistakes to avoid,
constraints that must hold. Skip small talk, one-off results and anything already obvious.

Answer with JSON only, exactly this shape (an empty list is a fine answer):
{{"learnings": [{{"kind": "fact|preference|decision|pattern|mistake|constraint",
  "content": "one self-contained sentence, at most {max_chars} characters",
  "confidence": "high|medium|low",
  "scope": "project|global"}}]}}

Use scope "global" only for things true across all of the user's projects (personal preferences,
universal constraints); everything about this project is "project".

Transcript:
{transcript}
"""


class Learning(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    kind: Kind
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    confidence: ConfidenceLevel = "medium"
    scope: Level = "project"

    @field_validator("kind", "confidence", "scope", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class LearningsPayload(BaseModel):
    model_config = ConfigDict(extra="ignore")

    learnings: list[Learning] = Field(max_length=MAX_LEARNINGS)


@dataclass
class LearningsResult:
    """What ``MemoryStore.extract_learnings`` reports. ``ok`` is False when nothing was stored
    because the summariser failed or answered something invalid; ``errors`` says what was wrong."""

    ok: bool
    stored: list[MemoryEntry] = field(default_factory=list)
    learnings: list[Learning] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    raw: str = ""
    duplicates: int = 0
    """Learnings that matched an existing memory (that memory was reinforced, not duplicated)."""

    @property
    def report(self) -> str:
        if self.ok:
            dup = f" ({self.duplicates} already known)" if self.duplicates else ""
            return f"stored {len(self.stored)} learning(s){dup}"
        return "no learnings stored: " + "; ".join(self.errors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "stored": [e.brief() for e in self.stored],
            "errors": list(self.errors),
            "duplicates": self.duplicates,
            "report": self.report,
        }


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def _json_candidates(text: str) -> list[str]:
    """Plausible JSON texts inside ``text``: fenced blocks, then from the first ``{`` or ``[``."""
    out = [m.group(1).strip() for m in _FENCE.finditer(text)]
    stripped = text.strip()
    out.append(stripped)
    for opener in ("{", "["):
        idx = stripped.find(opener)
        if idx > 0:
            out.append(stripped[idx:])
    return [c for c in out if c]


def _decode(text: str) -> tuple[Any, str | None]:
    decoder = json.JSONDecoder()
    first_error: str | None = None
    for candidate in _json_candidates(text):
        try:
            value, _end = decoder.raw_decode(candidate)  # tolerates trailing prose
            return value, None
        except json.JSONDecodeError as exc:
            first_error = first_error or f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    return None, first_error or "the summariser answered nothing (expected JSON)"


def _describe(exc: ValidationError) -> list[str]:
    out: list[str] = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        msg = err["msg"]
        if err["type"] == "too_long" and loc == "learnings":
            msg = f"too many learnings (at most {MAX_LEARNINGS})"
        out.append(f"{loc}: {msg}" if loc else msg)
    return out


def parse_learnings(text: str) -> tuple[list[Learning], list[str]]:
    """Validate a summariser answer: (learnings, []) when valid, ([], problems) when not."""
    value, error = _decode(text)
    if error is not None:
        return [], [error]
    if isinstance(value, list):
        value = {"learnings": value}
    if not isinstance(value, Mapping) or "learnings" not in value:
        return [], ['expected an object {"learnings": [...]} or a list of learnings']
    try:
        payload = LearningsPayload.model_validate(value)
    except ValidationError as exc:
        return [], _describe(exc)
    return payload.learnings, []


def format_transcript(transcript: Sequence[Mapping[str, Any]], *, max_tokens: int, counter: TokenCounter) -> str:
    """``role: content`` lines; if too long, the beginning and the end are kept (the middle elided)."""
    lines: list[str] = []
    for message in transcript:
        role = str(message.get("role", "?"))
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        calls = message.get("tool_calls") or ()
        names = [
            str((c.get("function") or {}).get("name") or c.get("name") or "?") if isinstance(c, Mapping) else "?"
            for c in calls
        ]
        if names:
            content = (content + " " if content else "") + f"[calls: {', '.join(names)}]"
        if content:
            lines.append(f"{role}: {content}")
    text = "\n".join(lines)
    if counter.count_text(text) <= max_tokens:
        return text
    half = max(1, max_tokens // 2)
    return (
        counter.truncate_text(text, half)
        + "\n[... middle of the session omitted ...]\n"
        + counter.tail_text(text, half)
    )


def learnings_prompt(transcript_text: str) -> str:
    return LEARNINGS_PROMPT.format(max_items=MAX_LEARNINGS, max_chars=MAX_CONTENT_CHARS, transcript=transcript_text)


# --- storing them (the store's learnings part) -----------------------------------------------


class LearningsMixin(EntriesMixin):
    async def extract_learnings(
        self,
        transcript: Sequence[Mapping[str, Any]],
        summarise: Callable[[str], Awaitable[str]],
        scope: Scope,
        *,
        max_transcript_tokens: int = 6000,
    ) -> LearningsResult:
        """Ask ``summarise`` for up to five learnings and store them — all of them or none.

        Never raises for a bad answer or a failing summariser: the result's ``errors`` say what was
        wrong and nothing is stored.
        """
        counter = self.counter or default_counter()
        prompt = learnings_prompt(format_transcript(transcript, max_tokens=max_transcript_tokens, counter=counter))
        try:
            raw = await summarise(prompt)
        except Exception as exc:
            return LearningsResult(ok=False, errors=[f"the summariser failed: {type(exc).__name__}: {exc}"])
        if not isinstance(raw, str):
            return LearningsResult(ok=False, errors=[f"the summariser returned {type(raw).__name__}, not text"])
        learnings, errors = parse_learnings(raw)
        if errors:
            return LearningsResult(ok=False, errors=errors, raw=raw)
        if not learnings:
            return LearningsResult(ok=True, raw=raw)
        items = [(lr.kind, lr.content, lr.scope, lr.confidence, False) for lr in learnings]
        try:
            stored = self.remember_many(items, scope, source="learning")  # type: ignore[arg-type]
        except (ValueError, MemoryStoreError) as exc:
            return LearningsResult(ok=False, learnings=learnings, errors=[str(exc)], raw=raw)
        return LearningsResult(
            ok=True,
            stored=[e for e, _ in stored],
            learnings=learnings,
            raw=raw,
            duplicates=sum(1 for _, created in stored if not created),
        )
