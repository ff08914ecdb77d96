"""Typed options of the magics: argparse (IPython's magic_arguments) parses, pydantic validates."""

from __future__ import annotations

import keyword
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..runtime.config import PRIMITIVES

Strategy = Literal["auto", "passthrough", "tail_preserve", "aggressive_truncate", "llm_summarize"]
PromptShapeName = Literal["auto", "none", "portable", "mistral", "llama3", "text_tools", "strict"]


MIN_WINDOW = 256
"""The smallest ``--window``: below it not even a system prompt and one question fit."""


class ChatOptions(BaseModel):
    """``%arcana_chat`` after parsing; ``None`` means "use the ``ArcanaMagics`` default"."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    window: int | None = Field(default=None, ge=MIN_WINDOW)
    reserve: int | None = Field(default=None, ge=0)
    strategy: Strategy | None = None
    prompt_shape: PromptShapeName | None = None
    primitives: list[str] | None = None
    snapshots: bool | None = None
    engine: bool | None = None
    memory: bool | None = None
    memory_url: str | None = None
    tools: bool | None = None
    force: bool | None = None
    otel: bool | None = None
    resume: str | None = Field(default=None, pattern=r"^(latest|[A-Za-z0-9_.-]{1,128})$")
    new: bool = False
    name: str = Field(default="main", pattern=r"^[A-Za-z0-9_.-]{1,64}$")

    @field_validator("primitives", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        return value

    @field_validator("primitives")
    @classmethod
    def _known(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return value
        unknown = [p for p in value if p not in PRIMITIVES]
        if unknown:
            raise ValueError(f"unknown primitive(s) {', '.join(unknown)}; choose from {', '.join(PRIMITIVES)}")
        return value


class TurnOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session: str | None = None


ReplyFormat = Literal["markdown", "code", "json", "text"]


class CellOptions(TurnOptions):
    """``%%arcana`` after parsing."""

    format: ReplyFormat = "markdown"
    out: str | None = None

    @field_validator("format", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("out")
    @classmethod
    def _identifier(cls, value: str | None) -> str | None:
        if value is not None and (not value.isidentifier() or keyword.iskeyword(value)):
            raise ValueError(f"--out {value!r} is not a Python variable name")
        if value is not None and reserved_name(value):
            raise ValueError(f"--out {value!r} would replace a name Python or IPython needs ({reserved_name(value)}); "
                             "choose another variable name, such as reply")
        return value


_IPYTHON_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "display", "_ih", "_oh", "_dh", "_",
                            "__", "___", "_i", "_ii", "_iii", "_exit_code"})
_IPYTHON_NUMBERED = re.compile(r"_i{0,3}\d+")


def reserved_name(name: str) -> str | None:
    """Why ``name`` may not be overwritten by ``--out`` (``None``: it may)."""
    import builtins

    if name.startswith("__") and name.endswith("__"):
        return "a special name"
    if name in _IPYTHON_NAMES or _IPYTHON_NUMBERED.fullmatch(name):
        return "IPython's own"
    if hasattr(builtins, name):
        return "a built-in"
    return None


class ReplayOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str | None = None
    turn: int | None = Field(default=None, ge=1)
    session: str | None = None
    window: int | None = Field(default=None, ge=MIN_WINDOW)
    reserve: int | None = Field(default=None, ge=0)
    strategy: Strategy | None = None
    mode: Literal["classic", "adaptive"] | None = None
    relevance: Literal["lexical", "semantic"] | None = None

    @property
    def what_if(self) -> bool:
        """Another window, reserve, strategy, mode or relevance: rebuild the turn with them beside the
        recorded one."""
        return any(v is not None for v in (self.window, self.reserve, self.strategy, self.mode, self.relevance))


class ExportOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    output: str | None = None
    verify: bool = False
    embed: bool = False


MAX_FORMAT_WIDTH = 10_000
"""The largest width or precision a ``{x:...}`` format spec may ask for (``{x:>3000000000}`` would
allocate gigabytes)."""


class _UnknownName(KeyError):
    """A ``{name}`` that is not in the notebook's namespace (not a missing key *inside* a value)."""


class _Namespace(dict[str, Any]):
    """The notebook namespace for ``str.format``: a missing name is a clear error."""

    def __missing__(self, key: str) -> Any:
        raise _UnknownName(key)


_HISTORY_FIELD = re.compile(r"(In|Out|Err)\[\s*(-?\d+)\s*\](.*)", re.DOTALL)
_SPEC_NUMBER = re.compile(r"\d+")


class _CellFormatter(string.Formatter):
    """``str.format`` plus ``{In[n]}``, ``{Out[n]}`` and ``{Err[n]}`` with errors that name the cell."""

    def __init__(self, inputs: Sequence[str] | None, outputs: Mapping[int, Any] | None,
                 errors: Mapping[int, BaseException] | None) -> None:
        self.inputs, self.outputs, self.errors = inputs, outputs, errors

    def _history(self, kind: str, n: int) -> Any:
        if n < 0:
            raise LookupError(f"{{{kind}[{n}]}}: cells are numbered from 1 (the number in [n] left of the cell); "
                              "negative indexes are not supported")
        if kind == "In":
            if self.inputs is None or not 0 < n < len(self.inputs):
                raise LookupError(f"{{In[{n}]}}: no cell {n} has run in this kernel yet")
            return self.inputs[n]
        if kind == "Out":
            if self.outputs is None or n not in self.outputs:
                raise LookupError(f"{{Out[{n}]}}: cell {n} has no output (it has not run, or returned nothing)")
            return self.outputs[n]
        if self.errors is None or n not in self.errors:
            raise LookupError(f"{{Err[{n}]}}: cell {n} raised no error (or has not run)")
        return error_text(self.errors[n])

    def get_field(self, field_name: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        match = _HISTORY_FIELD.fullmatch(field_name)
        if match is not None:
            kind, n, rest = match.group(1), int(match.group(2)), match.group(3)
            if kind != "Err" or self.errors is not None:
                value = self._history(kind, n)
                if not rest:
                    return value, field_name
                return super().get_field("_" + rest, (), {"_": value})
        return super().get_field(field_name, args, kwargs)

    def format_field(self, value: Any, format_spec: str) -> Any:
        if any(int(n) > MAX_FORMAT_WIDTH for n in _SPEC_NUMBER.findall(format_spec)):
            raise _FieldError(f"the format spec {format_spec[:40]!r} asks for more than {MAX_FORMAT_WIDTH:,} "
                              "characters")
        try:
            return super().format_field(value, format_spec)
        except Exception as exc:  # a value's own __format__ / __str__ may raise anything
            raise _FieldError(f"formatting a {type(value).__name__} value failed: "
                              f"{type(exc).__name__}: {str(exc)[:200]}") from None


class _FieldError(Exception):
    """A value could not be formatted (its ``__format__`` raised, or the spec is too wide)."""


def error_text(exc: BaseException) -> str:
    """What ``{Err[n]}`` becomes: ``Type: message``."""
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def interpolate(body: str, user_ns: Mapping[str, Any], *, inputs: Sequence[str] | None = None,
                outputs: Mapping[int, Any] | None = None, errors: Mapping[int, BaseException] | None = None) -> str:
    """Fill ``{name}`` (and ``{name.attr}``, ``{name[0]}``, ``{x:.2f}``) from the notebook's variables,
    and — as in jupyter-ai — ``{In[n]}`` (the source of cell n, as typed), ``{Out[n]}`` (its result)
    and ``{Err[n]}`` (the error it raised, ``Type: message``).

    ``inputs``/``outputs`` default to the namespace's ``In``/``Out``; ``errors`` (execution count ->
    exception) comes from the magics' post-run hook. ``{{`` and ``}}`` stay literal braces. Raises
    ``KeyError`` for an unknown name and ``ValueError`` for a malformed field or a missing cell, with
    a message that says what to do.
    """
    if inputs is None and isinstance(user_ns.get("In"), list):
        inputs = user_ns["In"]
    if outputs is None and isinstance(user_ns.get("Out"), dict):
        outputs = user_ns["Out"]
    formatter = _CellFormatter(inputs, outputs, errors)
    try:
        return formatter.vformat(body, (), _Namespace(user_ns))
    except _FieldError as exc:
        raise ValueError(f"cannot fill the cell's {{...}} fields: {exc}; write {{{{ and }}}} for literal braces") \
            from None
    except LookupError as exc:
        if not isinstance(exc, KeyError | IndexError):
            raise ValueError(str(exc.args[0] if exc.args else exc)) from None
        if isinstance(exc, _UnknownName) and isinstance(exc.args[0] if exc.args else None, str):
            raise KeyError(
                f"{{{exc.args[0]}}} names no variable in the notebook; "
                f"define it, or write {{{{ and }}}} for literal braces"
            ) from None
        raise ValueError(
            f"cannot fill the cell's {{...}} fields: {exc!r}; write {{{{ and }}}} for literal braces"
        ) from None
    except (ValueError, AttributeError, TypeError) as exc:
        raise ValueError(
            f"cannot fill the cell's {{...}} fields: {exc}; write {{{{ and }}}} for literal braces"
        ) from None
    except Exception as exc:  # a value's __getitem__ / __getattr__ may raise anything (and MemoryError)
        raise ValueError(
            f"cannot fill the cell's {{...}} fields: {type(exc).__name__}: {str(exc)[:200]}; "
            "write {{ and }} for literal braces"
        ) from None
