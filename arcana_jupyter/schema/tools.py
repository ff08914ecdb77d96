"""One tool-call contract: :class:`ToolOutcome`, :class:`ToolDeclaration`, :class:`ModelRetry` (ground layer).

Every kind of tool the model can call — a user function, an intercepted runtime tool
(``ask_user``), a cognitive primitive (``pin``, ``unpin``, ``recall``), an adaptive-context tool,
a memory tool — answers with a :class:`ToolOutcome`. The session records ``ok`` and ``error``
from it and shows the model ``content``; it never guesses success from the keys of a result.

Arguments are checked once, the same way for every kind, by :func:`validate_arguments`: against
the tool's pydantic model when it has one, otherwise against a model derived from its JSON schema
(:func:`schema_model`). A bad call becomes a ``bad_arguments`` outcome whose message names the
missing, unexpected or mistyped argument — never a traceback.

**One way to declare a runtime tool.** A :class:`ToolDeclaration` is a name, a description and a
pydantic model of the arguments; the JSON schema the model is offered is generated from that model
(:func:`arguments_schema`, as for user functions), or — for the built-in tools, whose hand-written
schemas predate this and are in every recorded request digest — given explicitly and checked
against the model (same properties, same required ones), so the two cannot drift.
:meth:`ToolDeclaration.parse` validates a call once and gives the handler a model instance.

**One "the model must fix this" error.** A handler raises :class:`ModelRetry` for anything the
model can fix (an unknown id, a value out of range, a refusal); the runtime turns it into the
call's structured result (:meth:`ModelRetry.outcome`) — the model reads it, the turn goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, create_model
from pydantic.fields import FieldInfo

from ..messages import ToolSpec, canonical_json

BAD_ARGUMENTS = "bad_arguments"
UNKNOWN_TOOL = "unknown_tool"
NOT_FOUND = "not_found"
FAILED = "failed"
REPEATED_CALL = "repeated_call"
INTERRUPTED = "interrupted"
"""A call the user interrupted (Kernel > Interrupt) before it finished: the turn ends there."""


class ToolOutcome(BaseModel):
    """What one tool call produced."""

    model_config = ConfigDict(frozen=True)

    ok: bool
    content: str
    """The text the model reads in the tool message."""
    error: str | None = None
    """A short code when ``ok`` is false: ``bad_arguments``, ``unknown_tool``, ``not_found``, ``failed``..."""
    message: str = ""
    """What went wrong, in a sentence (empty when ``ok``)."""
    data: dict[str, Any] = Field(default_factory=dict)  # JSON edge: the structured result
    """The structured result, as recorded in the trace."""

    @classmethod
    def success(cls, data: dict[str, Any], content: str | None = None) -> ToolOutcome:  # JSON edge: the result
        return cls(ok=True, content=to_json_text(data) if content is None else content, data=data)

    @classmethod
    def failure(
        cls, error: str, message: str,
        data: dict[str, Any] | None = None,  # JSON edge: the structured result
        content: str | None = None,
    ) -> ToolOutcome:
        """A failed call; ``data`` defaults to ``{"ok": false, "error", "message"}`` and is what the model reads."""
        data = {"ok": False, "error": error, "message": message} if data is None else data
        return cls(ok=False, content=canonical_json(data) if content is None else content, error=error,
                   message=message, data=data)

    def error_record(self) -> dict[str, str] | None:
        """The trace's ``{type, message}`` of a failed call."""
        return None if self.ok else {"type": self.error or FAILED, "message": self.message}


def shaped_failure(outcome: ToolOutcome, own: dict[str, Any], hint: str) -> ToolOutcome:  # JSON edge: own keys
    """A failed ``outcome`` answered in a tool's own shape: the tool's failure keys (``own``: defaults
    where the outcome's data lacks them, e.g. ``found: false, note`` for recall) next to the common
    ones every failure carries — ``ok: false``, ``error``, ``message`` and ``hint``."""
    if outcome.ok:
        return outcome
    data = {**own, **outcome.data}
    data["ok"] = False
    code = outcome.error or FAILED
    data.setdefault("error", code)
    message = outcome.message or str(data.get("message") or data["error"])
    data.setdefault("message", message)
    data.setdefault("hint", hint)
    return ToolOutcome(ok=False, content=to_json_text(data), error=code, message=message, data=data)


def to_json_text(value: Any) -> str:
    """How a structured result is shown to the model (JSON, non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False, default=str)


class ToolArguments(BaseModel):
    """Base of a tool's arguments model: unknown arguments are refused, and :attr:`sent` keeps the
    arguments as the model sent them (a primitive whose contract reads the sent values — ``recall``
    tells ``true`` from ``1`` — answers from those)."""

    model_config = ConfigDict(extra="forbid")
    _sent: dict[str, Any] = PrivateAttr(default_factory=dict)  # JSON edge: the arguments as sent

    @property
    def sent(self) -> dict[str, Any]:  # JSON edge: the arguments as sent
        """The decoded arguments, uncoerced (what the model wrote)."""
        return self._sent


# ---- one argument validator -------------------------------------------------------------------
_JSON_TYPES: dict[str, Any] = {  # JSON edge: JSON Schema type names -> annotations
    "string": str, "integer": int, "number": float, "boolean": bool,
    "object": dict[str, Any],  # JSON edge: a JSON object argument
    "null": type(None),
}


def _annotation(prop: dict[str, Any]) -> Any:  # JSON edge: a JSON Schema property
    if "enum" in prop:
        return Literal[tuple(prop["enum"])]
    kind = prop.get("type")
    if isinstance(kind, list):
        parts = tuple(_annotation({**prop, "type": k}) for k in kind)
        return parts[0] if len(parts) == 1 else _union(parts)
    if kind == "array":
        items = prop.get("items")
        return list[_annotation(items) if isinstance(items, dict) else Any]  # type: ignore[misc]
    return _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any


def _union(parts: tuple[Any, ...]) -> Any:
    out = parts[0]
    for p in parts[1:]:
        out = out | p
    return out


_CONSTRAINTS = {"minLength": "min_length", "maxLength": "max_length", "minimum": "ge", "maximum": "le",
                "pattern": "pattern"}


def schema_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:  # JSON edge: a JSON Schema
    """A pydantic model (unknown arguments forbidden) for a tool's JSON ``parameters`` schema."""
    required = set(schema.get("required", []))
    fields: dict[str, tuple[Any, FieldInfo]] = {}  # create_model's field definitions
    for pname, prop in (schema.get("properties") or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        constraints = {_CONSTRAINTS[k]: v for k, v in prop.items() if k in _CONSTRAINTS and "enum" not in prop}
        default = ... if pname in required else prop.get("default")
        fields[pname] = (_annotation(prop), Field(default, **constraints))
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        f"{name}_arguments", __base__=ToolArguments, **fields
    )
    return model


def decode_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:  # JSON edge: the arguments
    """Tool-call arguments as a dict; raises ``ValueError`` when they are not a JSON object."""
    if isinstance(raw, dict):
        return raw
    if raw is None or not str(raw).strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(value, dict):
        raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
    return value


def _problem(err: Any) -> dict[str, str]:
    loc = ".".join(str(p) for p in err["loc"]) or "(arguments)"
    if err["type"] == "missing":
        return {"argument": loc, "problem": "missing required argument"}
    if err["type"] == "extra_forbidden":
        return {"argument": loc, "problem": "unexpected argument"}
    return {"argument": loc, "problem": err["msg"]}


def bad_arguments(tool: str, message: str, problems: list[dict[str, str]],
                  schema: dict[str, Any] | None = None) -> ToolOutcome:  # JSON edge: the offered schema
    data: dict[str, Any] = {  # JSON edge: the result the model reads
        "ok": False, "error": BAD_ARGUMENTS, "message": message, "problems": problems}
    if schema is not None:
        data["schema"] = schema
    return ToolOutcome.failure(BAD_ARGUMENTS, message, data)


def validate_arguments(
    tool: str, raw: str | dict[str, Any] | None,  # JSON edge: the model's arguments
    *, model: type[BaseModel] | None = None,
    schema: dict[str, Any] | None = None,  # JSON edge: the offered schema
) -> dict[str, Any] | ToolOutcome:  # JSON edge: the arguments as decoded
    """The decoded arguments when they fit ``model`` (or ``schema``), else a ``bad_arguments`` outcome
    (:func:`parse_arguments`, returning the arguments as decoded, not coerced)."""
    parsed = parse_arguments(tool, raw, model or schema_model(tool, schema or {}), schema)
    if isinstance(parsed, ToolOutcome):
        return parsed
    return decode_arguments(raw)


# ---- one way to declare a tool, one error the model must fix ------------------------------------
A = TypeVar("A", bound=BaseModel)


def arguments_schema(model: type[BaseModel]) -> dict[str, Any]:  # JSON edge: a JSON Schema
    """The JSON schema the model is offered for ``model`` (pydantic's, without the titles)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


@dataclass(frozen=True)
class ToolDeclaration(Generic[A]):
    """A tool as the model sees it — ``name``, ``description``, the arguments ``args`` — declared once.

    ``parameters`` is an explicit JSON schema for tools whose recorded schema pydantic does not
    generate byte for byte (the built-in tools); it must name the model's fields and required ones.
    """

    name: str
    description: str
    args: type[A]
    parameters: dict[str, Any] | None = field(default=None, compare=False)  # JSON edge: a JSON Schema

    def __post_init__(self) -> None:
        if self.parameters is None:
            return
        props = set((self.parameters.get("properties") or {}).keys())
        required = set(self.parameters.get("required") or [])
        fields = self.args.model_fields
        wanted = {n for n, f in fields.items() if f.is_required()}
        if props != set(fields) or required != wanted:
            raise TypeError(f"tool {self.name!r}: the schema's properties {sorted(props)} (required "
                            f"{sorted(required)}) do not match its arguments model {sorted(fields)} "
                            f"(required {sorted(wanted)})")

    @cached_property
    def spec(self) -> ToolSpec:
        """What the model is offered (recorded in ``run_start`` and every request digest)."""
        params = self.parameters if self.parameters is not None else arguments_schema(self.args)
        return ToolSpec(name=self.name, description=self.description, parameters=params)

    def parse(self, raw: str | dict[str, Any] | None) -> A | ToolOutcome:  # JSON edge: the arguments
        """The one validation of a call: the arguments as a model instance, or a ``bad_arguments``
        outcome naming what is wrong (the spec's schema attached, for the model to read)."""
        return parse_arguments(self.name, raw, self.args, self.spec.parameters)

    @classmethod
    def from_spec(cls, spec: ToolSpec) -> ToolDeclaration[BaseModel]:
        """A declaration from a JSON schema alone (a capability written before declarations): its
        arguments model derived by :func:`schema_model`."""
        return ToolDeclaration(spec.name, spec.description, schema_model(spec.name, spec.parameters),
                               spec.parameters)


class ModelRetry(Exception):
    """Raised by a tool's handler for what the model must fix; the runtime answers the call with
    :meth:`outcome` (never an exception that ends the turn).

    ``data`` is the structured result the model reads (default ``{"ok": false, "error", "message"}``);
    ``code`` is the short error code recorded in the trace."""

    def __init__(self, message: str, *, code: str = BAD_ARGUMENTS, data: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.data = dict(data) if data is not None else {"ok": False, "error": code, "message": message}

    def outcome(self) -> ToolOutcome:
        return ToolOutcome.failure(self.code, self.message, self.data, content=to_json_text(self.data))


def with_common_keys(data: Mapping[str, Any], code: str, message: str,
                     hint: str) -> dict[str, Any]:  # JSON edge: a structured result
    """A tool's own failure result (``pinned: false, reason``...) with the keys every failure carries —
    ``ok: false``, ``error``, ``message``, ``hint`` — where it lacks them."""
    out = {**data, "ok": False}
    out.setdefault("error", code)
    out.setdefault("message", message)
    out.setdefault("hint", hint)
    return out


def parse_arguments(tool: str, raw: str | dict[str, Any] | None,  # JSON edge: the model's arguments
                    model: type[A],
                    schema: dict[str, Any] | None = None) -> A | ToolOutcome:  # JSON edge: the offered schema
    """Decode and validate ``raw`` against ``model`` once: an instance (with :attr:`ToolArguments.sent`
    set when ``model`` is one) or a ``bad_arguments`` outcome."""
    try:
        args = decode_arguments(raw)
    except ValueError as exc:
        return bad_arguments(tool, f"{tool}: {exc}", [{"argument": "(arguments)", "problem": str(exc)}], schema)
    try:
        value = model.model_validate(args)
    except ValidationError as exc:
        problems = [_problem(e) for e in exc.errors(include_url=False)]
        text = "; ".join(f"{p['argument']}: {p['problem']}" for p in problems)
        return bad_arguments(tool, f"bad arguments for {tool}: {text}", problems, schema)
    if isinstance(value, ToolArguments):
        value._sent = args
    return value
