"""The memory tools the model may call: ``remember``, ``recall_memory``, ``forget_memory``.

The runtime intercepts them (they never reach user code). Each is declared once
(:data:`DECLARATIONS`: name, description, arguments model, the schema the model sees).
:class:`MemoryTools` binds a store to a session's scope; :meth:`MemoryTools.run` answers a call
whose arguments were validated (the runtime's one validation), :meth:`MemoryTools.handle` validates
them itself for a caller without a runtime; both return a JSON-able dict — errors as
``{"ok": False, "error": ..., "hint": ...}``, never exceptions (:func:`memory_answer` turns an error
into a :class:`~arcana_jupyter.schema.tools.ModelRetry` for the runtime)::

    tools = MemoryTools(store, scope, session_id=session_id)
    specs = tools.specs                      # list[ToolSpec] to offer the model
    result = tools.handle("recall_memory", {"query": "pandas version"})   # dict (or JSON text args)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator

from ..exceptions import MemoryStoreError
from ..messages import ToolSpec
from ..schema.tools import BAD_ARGUMENTS, FAILED, NOT_FOUND, UNKNOWN_TOOL, ModelRetry, ToolArguments, ToolDeclaration
from .models import ENTRY_ID, KINDS, Kind, Scope
from .store import MAX_CONTENT_CHARS, MemoryStore, OnEvent, route_events

MAX_RECALL_LIMIT = 20

class _Args(ToolArguments):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class RememberArgs(_Args):
    kind: Kind
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    scope: Literal["project", "global"] = "project"

    @field_validator("kind", "scope", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class RecallArgs(_Args):
    query: str = Field(min_length=1)
    kinds: list[Kind] | None = None
    limit: int = Field(default=5, ge=1, le=MAX_RECALL_LIMIT)

    @field_validator("kinds", mode="before")
    @classmethod
    def _one_kind(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            return [v.strip().lower() if isinstance(v, str) else v for v in value] or None
        return value


class ForgetArgs(_Args):
    id: str = Field(pattern=ENTRY_ID.pattern)


REMEMBER = ToolDeclaration(
    name="remember",
    args=RememberArgs,
    description=(
        "Store a durable memory for future sessions: a fact about this project, a user preference, a "
        "decision (with its reason), a pattern that worked, a mistake to avoid, or a constraint. One "
        "self-contained sentence. scope 'project' (default) = only this project; 'global' = all of the "
        "user's projects (personal preferences, universal constraints)."
    ),
    parameters={
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": list(KINDS)},
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT_CHARS},
            "scope": {"type": "string", "enum": ["project", "global"], "default": "project"},
        },
        "required": ["kind", "content"],
        "additionalProperties": False,
    },
)

RECALL_MEMORY = ToolDeclaration(
    name="recall_memory",
    args=RecallArgs,
    description=(
        "Search long-term memory (this project's and the user's global memories) for entries relevant to "
        "a query. Returns ranked entries with ids; cite an id like [m_…] when you rely on one."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "keywords to search for"},
            "kinds": {"type": "array", "items": {"type": "string", "enum": list(KINDS)}},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_RECALL_LIMIT, "default": 5},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
)

FORGET_MEMORY = ToolDeclaration(
    name="forget_memory",
    args=ForgetArgs,
    description=(
        "Retract a memory that is wrong or outdated (by its id, e.g. m_0123456789abcdef). It stops "
        "appearing in recall and in the session digest; it is kept for audit."
    ),
    parameters={
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": ENTRY_ID.pattern}},
        "required": ["id"],
        "additionalProperties": False,
    },
)

DECLARATIONS: tuple[ToolDeclaration[Any], ...] = (REMEMBER, RECALL_MEMORY, FORGET_MEMORY)
"""The memory tools, in the order they are offered (their schemas as recorded since the first
release: explicit, checked against the models)."""
REMEMBER_SPEC, RECALL_MEMORY_SPEC, FORGET_MEMORY_SPEC = (d.spec for d in DECLARATIONS)
MEMORY_TOOL_SPECS: tuple[ToolSpec, ...] = (REMEMBER_SPEC, RECALL_MEMORY_SPEC, FORGET_MEMORY_SPEC)
MEMORY_TOOL_NAMES: tuple[str, ...] = tuple(s.name for s in MEMORY_TOOL_SPECS)


_HINTS = {
    "remember": f"call remember with kind (one of {', '.join(KINDS)}), content (one sentence) and optional "
    "scope ('project' or 'global')",
    "recall_memory": f"call recall_memory with query (keywords), optional kinds (a list of {', '.join(KINDS)}) and "
    f"optional limit (1-{MAX_RECALL_LIMIT})",
    "forget_memory": "call forget_memory with the id of a memory, e.g. m_0123456789abcdef (recall_memory shows ids)",
}


def _error(error: str, hint: str) -> dict[str, Any]:
    return {"ok": False, "error": error, "hint": hint}


def _validation_error(tool: str, exc: ValidationError) -> dict[str, Any]:
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "extra_forbidden":
            problems.append(f"unexpected argument {loc!r}")
        elif err["type"] == "missing":
            problems.append(f"missing argument {loc!r}")
        else:
            problems.append(f"{loc}: {err['msg']}")
    return _error(f"invalid arguments for {tool}: " + "; ".join(problems), _HINTS[tool])


ARGS_MODELS: dict[str, type[_Args]] = {d.name: d.args for d in DECLARATIONS}
"""Each memory tool's arguments model."""


def memory_answer(result: dict[str, Any]) -> dict[str, Any]:
    """A memory tool's result as the model reads it: the result, or — an error — a :class:`ModelRetry`
    with it as the data. The error text is the message; the code says what kind of failure it is."""
    if result.get("ok") is not False:
        return result
    message = str(result.get("error") or "")
    if message.startswith(("invalid arguments", "arguments ", "argument names")):
        code = BAD_ARGUMENTS
    elif message.startswith("unknown memory tool"):
        code = UNKNOWN_TOOL
    elif message.startswith("no memory "):
        code = NOT_FOUND
    else:
        code = FAILED
    raise ModelRetry(message, code=code, data=result)


class MemoryTools:
    """The three memory tools bound to one store, scope and (optional) session."""

    def __init__(
        self, store: MemoryStore, scope: Scope, *, session_id: str | None = None, on_event: OnEvent | None = None
    ) -> None:
        self.store = store
        self.scope = scope
        self.session_id = session_id
        self.on_event = on_event
        """When set, this object's reads and writes are traced here instead of the store's ``on_event``."""

    @property
    def specs(self) -> list[ToolSpec]:
        return list(MEMORY_TOOL_SPECS)

    @property
    def handlers(self) -> dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]]:
        return {
            "remember": self._remember,
            "recall_memory": self._recall,
            "forget_memory": self._forget,
        }

    def run(self, name: str, args: _Args) -> dict[str, Any]:
        """Answer a call whose arguments were validated against its declaration's model."""
        with route_events(self.on_event):
            if isinstance(args, RememberArgs):
                return self._remember_args(args)
            if isinstance(args, RecallArgs):
                return self._recall_args(args)
            if isinstance(args, ForgetArgs):
                return self._forget_args(args)
        raise TypeError(f"memory tool {name!r}: unexpected arguments {type(args).__name__}")

    def handle(self, name: str, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """Dispatch a tool call by name; ``arguments`` may be a dict or the raw JSON text."""
        if name not in MEMORY_TOOL_NAMES:
            return _error(f"unknown memory tool {name!r}", f"one of {', '.join(MEMORY_TOOL_NAMES)}")
        if arguments is None or arguments == "":
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError as exc:
                return _error(f"arguments are not valid JSON: {exc.msg}", _HINTS[name])
        if not isinstance(arguments, Mapping):
            return _error("arguments must be a JSON object", _HINTS[name])
        if not all(isinstance(k, str) for k in arguments):
            return _error("argument names must be strings", _HINTS[name])
        with route_events(self.on_event):
            return self.handlers[name](arguments)

    def remember(self, **arguments: Any) -> dict[str, Any]:
        """``remember(kind, content, scope="project")``."""
        with route_events(self.on_event):
            return self._remember(arguments)

    def recall_memory(self, **arguments: Any) -> dict[str, Any]:
        """``recall_memory(query, kinds=None, limit=5)``."""
        with route_events(self.on_event):
            return self._recall(arguments)

    def forget_memory(self, **arguments: Any) -> dict[str, Any]:
        """``forget_memory(id)``."""
        with route_events(self.on_event):
            return self._forget(arguments)

    def _remember(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            args = RememberArgs.model_validate(arguments)
        except ValidationError as exc:
            return _validation_error("remember", exc)
        return self._remember_args(args)

    def _remember_args(self, args: RememberArgs) -> dict[str, Any]:
        try:
            entry, created = self.store.remember_many(
                [(args.kind, args.content, args.scope, "high", False)], self.scope, source="remember"
            )[0]
        except ValueError as exc:
            return _error(str(exc), _HINTS["remember"])
        except MemoryStoreError as exc:
            return _error(f"memory store unavailable: {exc}", "continue without storing; tell the user if it matters")
        out: dict[str, Any] = {
            "ok": True,
            "id": entry.id,
            "kind": entry.kind,
            "scope": entry.level,
            "content": entry.content,
            "created": created,
        }
        if not created:
            out["note"] = "an identical memory already existed; it was reinforced instead of duplicated"
        if args.scope == "project" and not self.scope.is_project:
            out["note"] = "no project in this session: stored as a global memory"
        return out

    def _recall(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            args = RecallArgs.model_validate(arguments)
        except ValidationError as exc:
            return _validation_error("recall_memory", exc)
        return self._recall_args(args)

    def _recall_args(self, args: RecallArgs) -> dict[str, Any]:
        try:
            result = self.store.recall(
                args.query, self.scope, kinds=args.kinds, limit=args.limit, session_id=self.session_id
            )
        except ValueError as exc:
            return _error(str(exc), _HINTS["recall_memory"])
        except MemoryStoreError as exc:
            return _error(f"memory store unavailable: {exc}", "continue without memory")
        out: dict[str, Any] = {
            "ok": True,
            "query": args.query,
            "mode": result.mode,
            "count": len(result.hits),
            "results": [h.to_dict() for h in result.hits],
        }
        if result.mode == "keyword":
            out["note"] = "keyword search only (no semantic embedder configured): try other words if nothing fits"
        if not result.hits:
            out["note"] = "no memory matched; try fewer or different keywords" + (
                " (keyword search only)" if result.mode == "keyword" else ""
            )
        return out

    def _forget(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            args = ForgetArgs.model_validate(arguments)
        except ValidationError as exc:
            return _validation_error("forget_memory", exc)
        return self._forget_args(args)

    def _forget_args(self, args: ForgetArgs) -> dict[str, Any]:
        try:
            before = self.store.get(args.id)
            entry = self.store.forget(args.id, self.scope)
        except MemoryStoreError as exc:
            return _error(f"memory store unavailable: {exc}", "try again later")
        if entry is None:
            return _error(f"no memory {args.id} in this session's scope", _HINTS["forget_memory"])
        return {
            "ok": True,
            "id": entry.id,
            "retracted": True,
            "already_retracted": bool(before is not None and before.retracted),
            "content": entry.content,
        }
