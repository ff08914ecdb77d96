"""The adaptive-context tools the model calls: their declarations and typed handlers.

Each :class:`AdaptiveTool` pairs a :class:`~arcana_jupyter.schema.tools.ToolDeclaration` (name,
description, arguments model; the schema the model sees) with ``run(engine, turn, args) -> dict``,
which gets the arguments validated once — by the runtime (runtime/adaptive_capability.py), or by
:func:`handle` for a caller without one. Nothing raises: a bad call returns ``{"ok": false,
"error": <code>, "message": ..., "hint": ...}`` and, like every call, is recorded as a
``context_action`` event (:func:`adaptive_answer` turns such a result into a
:class:`~arcana_jupyter.schema.tools.ModelRetry` for the runtime). Widgets reach the same engine
methods with ``source="widget"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from ..messages import ToolSpec
from ..schema.tools import BAD_ARGUMENTS, ModelRetry, ToolArguments, ToolDeclaration, ToolOutcome
from .actions import failure
from .engine import AdaptiveEngine

Run = Callable[[AdaptiveEngine, "int | None", Any], dict[str, Any]]
"""``(engine, turn, arguments) -> result``: the arguments an instance of the tool's model."""

_ID_SCHEMA = {"type": "string", "description": 'A working-memory object id such as "s_3".'}


class _Args(ToolArguments):
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
    """One tool: what the model sees and what it accepts (``declaration``), how to run it (``run``)."""

    declaration: ToolDeclaration[Any]
    run: Run

    @property
    def name(self) -> str:
        return self.declaration.name

    @property
    def spec(self) -> ToolSpec:
        return self.declaration.spec

    @property
    def args_model(self) -> type[_Args]:
        model: type[_Args] = self.declaration.args
        return model


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
        parsed = model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:5]
        )
        required = [k for k, f in model.model_fields.items() if f.is_required()]
        return engine.reject(name, turn, raw, failure(
            "invalid_arguments", f"{name}: {problems}",
            f"accepted arguments: {accepted}; required: {', '.join(required) or 'none'}"))
    parsed._sent = raw
    return parsed


def _create_task(engine: AdaptiveEngine, turn: int | None, a: CreateTaskArgs) -> dict[str, Any]:
    return _too_long(engine, "create_task", turn, a.sent, {"description": a.description}) or engine.create_task(
        a.title, a.description, a.status, turn=turn)


def _update_task(engine: AdaptiveEngine, turn: int | None, a: UpdateTaskArgs) -> dict[str, Any]:
    return _too_long(engine, "update_task", turn, a.sent, {"description": a.description}) or engine.update_task(
        a.id, title=a.title, description=a.description, status=a.status, turn=turn)


def _decide(engine: AdaptiveEngine, turn: int | None, a: DecideArgs) -> dict[str, Any]:
    return _too_long(engine, "decide", turn, a.sent, {"decision": a.decision, "rationale": a.rationale}) or \
        engine.decide(a.decision, a.rationale, turn=turn)


def _add_constraint(engine: AdaptiveEngine, turn: int | None, a: ConstraintArgs) -> dict[str, Any]:
    return _too_long(engine, "add_constraint", turn, a.sent, {"constraint": a.constraint, "rationale": a.rationale}) \
        or engine.add_constraint(a.constraint, a.rationale, turn=turn)


def _note(engine: AdaptiveEngine, turn: int | None, a: NoteArgs) -> dict[str, Any]:
    return _too_long(engine, "note", turn, a.sent, {"text": a.text}) or engine.note(a.text, a.title, turn=turn)


def _hydrate(engine: AdaptiveEngine, turn: int | None, a: IdArgs) -> dict[str, Any]:
    return engine.hydrate(a.id, turn=turn)


def _retract(engine: AdaptiveEngine, turn: int | None, a: RetractArgs) -> dict[str, Any]:
    return engine.retract(a.id, a.reason, turn=turn)


def _focus(engine: AdaptiveEngine, turn: int | None, a: IdArgs) -> dict[str, Any]:
    return engine.focus(a.id, turn=turn)


def _search(engine: AdaptiveEngine, turn: int | None, a: SearchArgs) -> dict[str, Any]:
    return engine.search_turn_events(a.query, a.limit, turn=turn)


def _retrieve(engine: AdaptiveEngine, turn: int | None, a: RetrieveArgs) -> dict[str, Any]:
    return engine.retrieve_artifact(a.id, a.offset, a.limit, turn=turn)


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


TOOLS: tuple[AdaptiveTool, ...] = (
    AdaptiveTool(ToolDeclaration(
        name="create_task", args=CreateTaskArgs,
        description="Add a task to working memory (active tier). Use for multi-step work you must keep track of.",
        parameters=_schema({
            "title": {"type": "string", "description": "One line naming the task (at most 200 characters)."},
            "description": {"type": "string", "description": "Details: what done looks like, steps, context."},
            "status": {"type": "string", "enum": ["open", "done"], "description": "Default open."},
        }, ["title"])), _create_task),
    AdaptiveTool(ToolDeclaration(
        name="update_task", args=UpdateTaskArgs,
        description="Change a task's title, description or status (open / done). Marking it done unfocuses it.",
        parameters=_schema({
            "id": _ID_SCHEMA,
            "title": {"type": "string"},
            "description": {"type": "string"},
            "status": {"type": "string", "enum": ["open", "done"]},
        }, ["id"])), _update_task),
    AdaptiveTool(ToolDeclaration(
        name="decide", args=DecideArgs,
        description="Record a decision and why it was made, so it survives when the conversation scrolls away.",
        parameters=_schema({
            "decision": {"type": "string", "description": "What was decided."},
            "rationale": {"type": "string", "description": "Why (the alternatives and the reason)."},
        }, ["decision"])), _decide),
    AdaptiveTool(ToolDeclaration(
        name="add_constraint", args=ConstraintArgs,
        description="Record a rule the work must respect (from the user or the environment).",
        parameters=_schema({
            "constraint": {"type": "string", "description": "The rule, e.g. 'never modify raw/'."},
            "rationale": {"type": "string", "description": "Where it comes from or why it holds."},
        }, ["constraint"])), _add_constraint),
    AdaptiveTool(ToolDeclaration(
        name="note", args=NoteArgs,
        description="Keep a fact or finding in working memory.",
        parameters=_schema({
            "text": {"type": "string", "description": "The note."},
            "title": {"type": "string", "description": "Optional one-line summary."},
        }, ["text"])), _note),
    AdaptiveTool(ToolDeclaration(
        name="hydrate", args=IdArgs,
        description="Bring a peripheral (stub or anchor) working-memory object back in full and make it active.",
        parameters=_schema({"id": _ID_SCHEMA}, ["id"])), _hydrate),
    AdaptiveTool(ToolDeclaration(
        name="retract_task", args=RetractArgs,
        description="Retract a stale, wrong or duplicate working-memory object (any kind). It disappears from "
                    "working memory and search; the record is kept for audit.",
        parameters=_schema({"id": _ID_SCHEMA, "reason": {"type": "string", "description": "Why it is retracted."}},
                           ["id"])), _retract),
    AdaptiveTool(ToolDeclaration(
        name="focus", args=IdArgs,
        description="Make a task the one you are working on now (shown first, kept active).",
        parameters=_schema({"id": _ID_SCHEMA}, ["id"])), _focus),
    AdaptiveTool(ToolDeclaration(
        name="search_turn_events", args=SearchArgs,
        description="Search earlier turns of this session (their digests, messages and tool results) and working "
                    "memory. Use it when something from earlier is no longer in view.",
        parameters=_schema({
            "query": {"type": "string", "description": "A few words describing what to find."},
            "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Results to return (default 5)."},
        }, ["query"])), _search),
    AdaptiveTool(ToolDeclaration(
        name="retrieve_artifact", args=RetrieveArgs,
        description="Read a stored large tool output (its card shows the id, e.g. a_3) — a slice at a time.",
        parameters=_schema({
            "id": {"type": "string", "description": 'The artifact id, e.g. "a_3".'},
            "offset": {"type": "integer", "minimum": 0, "description": "Start, in characters (default 0)."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many characters (default 4000, max 16000)."},
        }, ["id"])), _retrieve),
)

CLASSIC_MODE = {"ok": False, "error": "classic_mode", "message": "adaptive context is off in this session"}
"""The answer to an adaptive action (a widget's hydrate, retract) in a session without the engine."""

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
        parsed = _parse(engine, name, turn, args, tool.args_model)
        return parsed if isinstance(parsed, dict) else tool.run(engine, turn, parsed)
    except Exception as exc:  # a bug must not end the turn: report it as a structured result
        return engine.reject(name, turn, args if isinstance(args, dict) else {"raw": repr(args)}, failure(
            "internal_error", f"{type(exc).__name__}: {exc}", "this is a bug in arcana; continue without this tool"))


def adaptive_answer(result: dict[str, Any]) -> dict[str, Any]:
    """An adaptive tool's result as the model reads it: the result, or — a refusal — a
    :class:`ModelRetry` with it as the data (``invalid_arguments`` is the code ``bad_arguments``)."""
    if result.get("ok", True) is not False:
        return result
    code = str(result.get("error") or "failed")
    code = BAD_ARGUMENTS if code == "invalid_arguments" else code
    raise ModelRetry(str(result.get("message") or ""), code=code, data=result)


def reject_bad_arguments(engine: AdaptiveEngine, name: str, turn: int | None, raw: Any, outcome: ToolOutcome) -> None:
    """Record a call the runtime's validator refused as a ``context_action``, like any refused action."""
    engine.reject(name, turn, raw if isinstance(raw, dict) else {"raw": raw if isinstance(raw, str) else repr(raw)},
                  dict(outcome.data))
