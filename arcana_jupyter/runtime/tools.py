"""Plain Python functions as LLM tools: schema from type hints and docstring, validated calls.

``Tool.from_function(fn)`` reads the signature with pydantic, so ``def area(w: float, h: float)``
becomes a JSON schema with two required numbers: a user tool is a
:class:`~arcana_jupyter.schema.tools.ToolDeclaration` whose arguments model is generated from the
signature, the same path the runtime's own tools are declared through. Calls are validated once
against that model; a bad call (unknown tool, malformed JSON, wrong types, the function raising)
becomes a structured result the model can read and fix — never an exception that ends the turn. A
function may raise :class:`~arcana_jupyter.schema.tools.ModelRetry` to answer with its own code
and message.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import traceback
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.fields import FieldInfo

from ..messages import ToolSpec, canonical_json
from ..schema.tools import FAILED, UNKNOWN_TOOL, ModelRetry, ToolDeclaration, ToolOutcome, decode_arguments
from ..tokens import TokenCounter

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """The summary and the per-argument descriptions of a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines) and not _ARGS_HEADER.match(lines[i]):
        summary.append(lines[i])
        i += 1
    current: str | None = None
    indent: int | None = None
    for line in lines[i + 1 :]:
        if not line.strip():
            continue
        this_indent = len(line) - len(line.lstrip())
        if indent is None:
            indent = this_indent
        if this_indent < indent:
            break  # the next section (Returns:, Raises:)
        m = _ARG_LINE.match(line)
        if this_indent == indent and m:
            current = m.group(1).lstrip("*")
            params[current] = m.group(3).strip()
        elif current:
            params[current] = (params[current] + " " + line.strip()).strip()
    text = "\n".join(summary).strip()
    return text.split("\n\n")[0].replace("\n", " "), params


class Tool:
    """A Python function the model may call."""

    def __init__(self, fn: Callable[..., Any], *, name: str | None = None, description: str | None = None) -> None:
        self.fn = fn
        self.name = name or fn.__name__
        doc_summary, doc_params = parse_docstring(fn.__doc__)
        self.description = description if description is not None else doc_summary
        sig = inspect.signature(fn)
        fields: dict[str, tuple[Any, FieldInfo]] = {}  # create_model's field definitions
        for pname, param in sig.parameters.items():
            if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TypeError(f"tool {self.name!r}: *args/**kwargs cannot be described to a model")
            annotation = param.annotation if param.annotation is not inspect.Parameter.empty else Any
            default = param.default if param.default is not inspect.Parameter.empty else ...
            from pydantic import Field

            fields[pname] = (annotation, Field(default, description=doc_params.get(pname) or None))
        self.arguments_model: type[BaseModel] = create_model(  # type: ignore[call-overload]
            f"{self.name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
        )
        self.declaration: ToolDeclaration[BaseModel] = ToolDeclaration(self.name, self.description,
                                                                       self.arguments_model)
        self.spec: ToolSpec = self.declaration.spec  # generated from the arguments model
        self.is_async = inspect.iscoroutinefunction(fn)

    async def call(self, arguments: dict[str, Any]) -> Any:  # JSON edge: parsed arguments
        """Validate ``arguments`` and run the function (sync functions run in a worker thread)."""
        return await self.call_parsed(self.arguments_model.model_validate(arguments))

    async def call_parsed(self, model: BaseModel) -> Any:
        """Run the function with arguments already validated against :attr:`arguments_model`."""
        kwargs = {k: getattr(model, k) for k in self.arguments_model.model_fields}
        if self.is_async:
            return await self.fn(**kwargs)
        return await asyncio.to_thread(self.fn, **kwargs)


def as_tool(value: Tool | Callable[..., Any]) -> Tool:
    return value if isinstance(value, Tool) else Tool(value)


def bound_text(text: str, counter: TokenCounter, max_tokens: int) -> tuple[str, bool]:
    """Keep head and tail of ``text`` within ``max_tokens``, with a marker saying what was cut."""
    total = counter.count_text(text)
    if total <= max_tokens:
        return text, False
    keep = max(16, max_tokens - 24)
    head = counter.truncate_text(text, keep * 2 // 3)
    tail = counter.tail_text(text, keep - keep * 2 // 3)
    cut = total - counter.count_text(head) - counter.count_text(tail)
    return f"{head}\n[... {cut} tokens of tool output cut ...]\n{tail}", True


def to_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def error_result(kind: str, message: str, **extra: Any) -> dict[str, Any]:  # JSON edge: the error result
    return {"ok": False, "error": kind, "message": message, **extra}


class ToolRegistry:
    """The user's tools, by name, and the one place a tool call is executed."""

    def __init__(self, tools: Iterable[Tool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, tool: Tool | Callable[..., Any]) -> Tool:
        t = as_tool(tool)
        self._tools[t.name] = t
        return t

    def copy(self) -> ToolRegistry:
        """A registry with the same tools; adding to the copy leaves this one unchanged."""
        return ToolRegistry(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [t.spec for t in self._tools.values()]

    async def execute(self, name: str,
                      raw_arguments: str | dict[str, Any] | None) -> ToolOutcome:  # JSON edge: the model's arguments
        """Run one call; the outcome's text is not yet bounded (see :func:`bound_text`)."""
        tool = self._tools.get(name)
        if tool is None:
            err = error_result("unknown_tool", f"no tool named {name!r}", available=sorted(self._tools))
            return ToolOutcome.failure(UNKNOWN_TOOL, err["message"], err)
        args = tool.declaration.parse(raw_arguments)  # the one validation
        if isinstance(args, ToolOutcome):
            return args
        try:
            value = await tool.call_parsed(args)
        except ModelRetry as retry:  # the function's own answer for what the model must fix
            return retry.outcome()
        except Exception as exc:  # the tool's own failure is the model's information, not ours to raise
            frames = traceback.format_exception(exc)
            err = error_result(type(exc).__name__, str(exc), traceback="".join(frames[-3:])[-1500:])
            return ToolOutcome.failure(FAILED, f"{type(exc).__name__}: {exc}", err, content=canonical_json(err))
        return ToolOutcome(ok=True, content=to_text(value), data=value if isinstance(value, dict) else {"value": value})


class ArgumentsError(ValueError):
    """Tool-call arguments that are not a JSON object."""


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:  # JSON edge: arguments
    """Decode tool-call arguments; raises :class:`ArgumentsError` when they are not a JSON object."""
    try:
        return decode_arguments(raw)
    except ValueError as exc:
        raise ArgumentsError(str(exc)) from None
