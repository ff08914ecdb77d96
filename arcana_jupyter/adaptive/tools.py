"""The adaptive-context tools the model calls: specs (JSON schema) and validating handlers.

Each :class:`AdaptiveTool` pairs a :class:`~arcana_jupyter.messages.ToolSpec` with a handler
``(engine, turn, args) -> dict``. Handlers validate the arguments and never raise: a bad call
returns ``{"ok": false, "error": <code>, "message": ..., "hint": ...}`` and, like every call, is
recorded as a ``context_action`` event. Widgets reach the same engine methods with
``source="widget"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..messages import ToolSpec
from ..schema.tools import BAD_ARGUMENTS, ToolOutcome, to_json_text
from .engine import AdaptiveEngine, failure

Handler = Callable[[AdaptiveEngine, "int | None", Any], dict[str, Any]]

_ID_SCHEMA = {"type": "string", "description": 'A working-memory object id such as "s_3".'}


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class CreateTaskArgs(_Args):
    title: str = Field(min_length=1, max_length=200)
    description: str | None = None
    status: Literal["open", "done"] = "open"


class UpdateTaskArgs(_Args):
    id: str = Field(min_length=1)
    title: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = None
    status: Literal["open", "done"] | None = None


class DecideArgs(_Args):
    decision: str = Field(min_length=1)
    rationale: str | None = None


class ConstraintArgs(_Args):
    constraint: str = Field(min_length=1)
    rationale: str | None = None


class NoteArgs(_Args):
    text: str = Field(min_length=1)
    title: str | None = Field(default=None, max_length=200)


class IdArgs(_Args):
    id: str = Field(min_length=1)


class RetractArgs(_Args):
    id: str = Field(min_length=1)
    reason: str | None = None


class SearchArgs(_Args):
    query: str = Field(min_length=1, max_length=500)
    limit: int | None = Field(default=None, ge=1, le=20)


class RetrieveArgs(_Args):
    id: str = Field(min_length=1, pattern=r"^a_\d+$")
    offset: int = Field(default=0, ge=0)
    limit: int | None = Field(default=None, ge=1)


@dataclass(frozen=True)
class AdaptiveTool:
    """One tool: what the model sees (``spec``), how to run it (``handler``), what it accepts."""

    spec: ToolSpec
    handler: Handler
    args_model: type[BaseModel]

    @property
    def name(self) -> str:
        return self.spec.name


def _too_long(engine: AdaptiveEngine, name: str, turn: int | None, args: dict[str, Any],
              fields: dict[str, str | None]) -> dict[str, Any] | None:
    cap = engine.config.max_payload_chars
    for field, value in fields.items():
        if value is not None and len(value) > cap:
            return engine.reject(name, turn, args, failure(
                "too_long", f"{field} is {len(value):,} characters; the limit is {cap:,}",
                "keep working memory short: put the essentials here and leave long output in artifacts"))
    return None


def _parse(engine: AdaptiveEngine, name: str, turn: int | None, raw: Any, model: type[_Args]
           ) -> _Args | dict[str, Any]:
    accepted = ", ".join(model.model_fields)
    if not isinstance(raw, dict):
        return engine.reject(name, turn, {"raw": raw if isinstance(raw, str) else repr(raw)}, failure(
            "invalid_arguments", f"{name} expects a JSON object of arguments, got {type(raw).__name__}",
            f"call {name} with an object with: {accepted}"))
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5]
        )
        required = [k for k, f in model.model_fields.items() if f.is_required()]
        return engine.reject(name, turn, raw, failure(
            "invalid_arguments", f"{name}: {problems}",
            f"accepted arguments: {accepted}; required: {', '.join(required) or 'none'}"))


def _create_task(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "create_task", turn, raw, CreateTaskArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, CreateTaskArgs)
    return _too_long(engine, "create_task", turn, raw, {"description": a.description}) or engine.create_task(
        a.title, a.description, a.status, turn=turn)


def _update_task(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "update_task", turn, raw, UpdateTaskArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, UpdateTaskArgs)
    return _too_long(engine, "update_task", turn, raw, {"description": a.description}) or engine.update_task(
        a.id, title=a.title, description=a.description, status=a.status, turn=turn)


def _decide(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "decide", turn, raw, DecideArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, DecideArgs)
    return _too_long(engine, "decide", turn, raw, {"decision": a.decision, "rationale": a.rationale}) or \
        engine.decide(a.decision, a.rationale, turn=turn)


def _add_constraint(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "add_constraint", turn, raw, ConstraintArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, ConstraintArgs)
    return _too_long(engine, "add_constraint", turn, raw, {"constraint": a.constraint, "rationale": a.rationale}) \
        or engine.add_constraint(a.constraint, a.rationale, turn=turn)


def _note(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "note", turn, raw, NoteArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, NoteArgs)
    return _too_long(engine, "note", turn, raw, {"text": a.text}) or engine.note(a.text, a.title, turn=turn)


def _hydrate(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "hydrate", turn, raw, IdArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, IdArgs)
    return engine.hydrate(a.id, turn=turn)


def _retract(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "retract_task", turn, raw, RetractArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, RetractArgs)
    return engine.retract(a.id, a.reason, turn=turn)


def _focus(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "focus", turn, raw, IdArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, IdArgs)
    return engine.focus(a.id, turn=turn)


def _search(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "search_turn_events", turn, raw, SearchArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, SearchArgs)
    return engine.search_turn_events(a.query, a.limit, turn=turn)


def _retrieve(engine: AdaptiveEngine, turn: int | None, raw: Any) -> dict[str, Any]:
    a = _parse(engine, "retrieve_artifact", turn, raw, RetrieveArgs)
    if isinstance(a, dict):
        return a
    assert isinstance(a, RetrieveArgs)
    return engine.retrieve_artifact(a.id, a.offset, a.limit, turn=turn)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


TOOLS: tuple[AdaptiveTool, ...] = (
    AdaptiveTool(ToolSpec(
        name="create_task",
        description="Add a task to working memory (active tier). Use for multi-step work you must keep track of.",
        parameters=_schema({
            "title": {"type": "string", "description": "One line naming the task (at most 200 characters)."},
            "description": {"type": "string", "description": "Details: what done looks like, steps, context."},
            "status": {"type": "string", "enum": ["open", "done"], "description": "Default open."},
        }, ["title"])), _create_task, CreateTaskArgs),
    AdaptiveTool(ToolSpec(
        name="update_task",
        description="Change a task's title, description or status (open / done). Marking it done unfocuses it.",
        parameters=_schema({
            "id": _ID_SCHEMA,
            "title": {"type": "string"},
            "description": {"type": "string"},
            "status": {"type": "string", "enum": ["open", "done"]},
        }, ["id"])), _update_task, UpdateTaskArgs),
    AdaptiveTool(ToolSpec(
        name="decide",
        description="Record a decision and why it was made, so it survives when the conversation scrolls away.",
        parameters=_schema({
            "decision": {"type": "string", "description": "What was decided."},
            "rationale": {"type": "string", "description": "Why (the alternatives and the reason)."},
        }, ["decision"])), _decide, DecideArgs),
    AdaptiveTool(ToolSpec(
        name="add_constraint",
        description="Record a rule the work must respect (from the user or the environment).",
        parameters=_schema({
            "constraint": {"type": "string", "description": "The rule, e.g. 'never modify raw/'."},
            "rationale": {"type": "string", "description": "Where it comes from or why it holds."},
        }, ["constraint"])), _add_constraint, ConstraintArgs),
    AdaptiveTool(ToolSpec(
        name="note",
        description="Keep a fact or finding in working memory.",
        parameters=_schema({
            "text": {"type": "string", "description": "The note."},
            "title": {"type": "string", "description": "Optional one-line summary."},
        }, ["text"])), _note, NoteArgs),
    AdaptiveTool(ToolSpec(
        name="hydrate",
        description="Bring a peripheral (stub or anchor) working-memory object back in full and make it active.",
        parameters=_schema({"id": _ID_SCHEMA}, ["id"])), _hydrate, IdArgs),
    AdaptiveTool(ToolSpec(
        name="retract_task",
        description="Retract a stale, wrong or duplicate working-memory object (any kind). It disappears from "
                    "working memory and search; the record is kept for audit.",
        parameters=_schema({"id": _ID_SCHEMA, "reason": {"type": "string", "description": "Why it is retracted."}},
                           ["id"])), _retract, RetractArgs),
    AdaptiveTool(ToolSpec(
        name="focus",
        description="Make a task the one you are working on now (shown first, kept active).",
        parameters=_schema({"id": _ID_SCHEMA}, ["id"])), _focus, IdArgs),
    AdaptiveTool(ToolSpec(
        name="search_turn_events",
        description="Search earlier turns of this session (their digests, messages and tool results) and working "
                    "memory. Use it when something from earlier is no longer in view.",
        parameters=_schema({
            "query": {"type": "string", "description": "A few words describing what to find."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Results to return (default 5)."},
        }, ["query"])), _search, SearchArgs),
    AdaptiveTool(ToolSpec(
        name="retrieve_artifact",
        description="Read a stored large tool output (its card shows the id, e.g. a_3) — a slice at a time.",
        parameters=_schema({
            "id": {"type": "string", "description": 'The artifact id, e.g. "a_3".'},
            "offset": {"type": "integer", "minimum": 0, "description": "Start, in characters (default 0)."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many characters (default 4000, max 16000)."},
        }, ["id"])), _retrieve, RetrieveArgs),
)

TOOLS_BY_NAME: dict[str, AdaptiveTool] = {t.name: t for t in TOOLS}


def adaptive_tools() -> list[AdaptiveTool]:
    """Every adaptive-context tool, in a stable order (register all of them in engine mode)."""
    return list(TOOLS)


def tool_specs() -> list[ToolSpec]:
    return [t.spec for t in TOOLS]


def handle(engine: AdaptiveEngine, name: str, turn: int | None, args: Any) -> dict[str, Any]:
    """Run tool ``name``; an unknown name is a structured error too."""
    tool = TOOLS_BY_NAME.get(name)
    if tool is None:
        return engine.reject(name, turn, args if isinstance(args, dict) else {"raw": repr(args)}, failure(
            "unknown_tool", f"no adaptive-context tool {name!r}", f"tools: {', '.join(TOOLS_BY_NAME)}"))
    try:
        return tool.handler(engine, turn, args)
    except Exception as exc:  # a bug must not end the turn: report it as a structured result
        return engine.reject(name, turn, args if isinstance(args, dict) else {"raw": repr(args)}, failure(
            "internal_error", f"{type(exc).__name__}: {exc}", "this is a bug in arcana; continue without this tool"))


def adaptive_outcome(result: dict[str, Any]) -> ToolOutcome:
    """An adaptive tool's result as the one tool-call outcome (``invalid_arguments`` is ``bad_arguments``)."""
    if result.get("ok", True) is not False:
        return ToolOutcome.success(result)
    code = str(result.get("error") or "failed")
    code = BAD_ARGUMENTS if code == "invalid_arguments" else code
    return ToolOutcome.failure(code, str(result.get("message") or ""), result, content=to_json_text(result))


def reject_bad_arguments(engine: AdaptiveEngine, name: str, turn: int | None, raw: Any, outcome: ToolOutcome) -> None:
    """Record a call the runtime's validator refused as a ``context_action``, like any refused action."""
    engine.reject(name, turn, raw if isinstance(raw, dict) else {"raw": raw if isinstance(raw, str) else repr(raw)},
                  dict(outcome.data))
