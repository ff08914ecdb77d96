"""What a model's chat template needs, found out by asking the template itself.

:func:`detect_shape` renders a few small probe conversations through a real Jinja chat template
the way vLLM and llama.cpp render them (Jinja2's ``ImmutableSandboxedEnvironment`` with a
``raise_exception`` global, ``trim_blocks`` / ``lstrip_blocks``) and watches what happens: does it
refuse a system message, a second system message, two user messages in a row, a tool role, a
tool-call id that is not 9 alphanumerics, two calls in one message? Does it silently drop a
message's text (each probe message carries a marker that is searched for in the rendering)? The
answers become a :class:`~.shaping.PromptShape`, cached per template hash.

Where no template can be read (a hosted API, Ollama's Go templates), :func:`shape_for_model`
maps the model's name to its family's shape; anything unknown gets the portable shape.
"""

from __future__ import annotations

import hashlib
from datetime import date
from functools import lru_cache
from typing import Any

from .shaping import SHAPES, PromptShape

_MARK = "ZQX"


class TemplateRefused(Exception):
    """The template called ``raise_exception`` (or failed to render) for a conversation."""


def _raise(message: str) -> None:
    raise TemplateRefused(message)


@lru_cache(maxsize=32)
def _compiled(template: str) -> Any:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: date(2025, 1, 1).strftime(fmt)
    return env.from_string(template)


def render_template(template: str, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                    bos_token: str = "<s>", eos_token: str = "</s>", add_generation_prompt: bool = True) -> str:
    """``messages`` rendered through ``template`` as servers render them; :class:`TemplateRefused` if refused."""
    kwargs: dict[str, Any] = {"messages": messages, "bos_token": bos_token, "eos_token": eos_token,
                              "add_generation_prompt": add_generation_prompt}
    if tools:
        kwargs["tools"] = tools
    try:
        return str(_compiled(template).render(**kwargs))
    except TemplateRefused:
        raise
    except Exception as exc:  # a template error on this input is a refusal too (TypeError, UndefinedError ...)
        raise TemplateRefused(f"{type(exc).__name__}: {exc}") from None


def template_hash(template: str) -> str:
    return hashlib.sha256(template.encode()).hexdigest()[:12]


_TOOL = {"type": "function", "function": {"name": "probe", "description": "a probe",
                                          "parameters": {"type": "object", "properties": {}}}}


def _call(cid: str, n: int = 1) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "probe", "arguments": f'{{"n": {n}}}'}}


def _accepts(template: str, messages: list[dict[str, Any]], marks: list[str], tools: bool = False) -> bool:
    """True when the template renders ``messages`` and every marker is in the rendering."""
    try:
        text = render_template(template, messages, tools=[_TOOL] if tools else None)
    except TemplateRefused:
        return False
    return all(m in text for m in marks)


@lru_cache(maxsize=32)
def detect_shape(template: str) -> PromptShape:
    """The shape ``template`` needs, found by rendering probe conversations (cached per template)."""
    m = _MARK
    sys_ok = _accepts(template, [{"role": "system", "content": f"{m}s1"}, {"role": "user", "content": f"{m}u1"}],
                      [f"{m}s1", f"{m}u1"])
    head = [{"role": "system", "content": f"{m}s1"}] if sys_ok else []
    user = {"role": "user", "content": f"{m}u1"}
    tool_role, ids, single, drops = True, "any", False, False
    long_id, short_id = "call_1", "abcDEF123"

    def exchange(cid: str, content: str = "", calls: int = 1) -> list[dict[str, Any]]:
        msgs: list[dict[str, Any]] = [*head, user, {"role": "assistant", "content": content,
                              "tool_calls": [_call(f"{cid}{k}" if calls > 1 else cid, k) for k in range(calls)]}]
        msgs += [{"role": "tool", "tool_call_id": f"{cid}{k}" if calls > 1 else cid, "content": f"{m}t{k}"}
                 for k in range(calls)]
        return msgs

    if not _accepts(template, exchange(long_id), [f"{m}t0"], tools=True):  # any id works: keep "any"
        if _accepts(template, exchange(short_id), [f"{m}t0"], tools=True):
            ids = "alnum9"
        else:
            tool_role = False
    cid = long_id if ids == "any" else short_id
    if tool_role:
        drops = not _accepts(template, exchange(cid, content=f"{m}a1"), [f"{m}a1", f"{m}t0"], tools=True)
        two = exchange(cid[:-1] if ids == "alnum9" else cid, calls=2)  # ids end in 0, 1
        single = not _accepts(template, two, [f"{m}t0", f"{m}t1"], tools=True)
    system = "leading" if sys_ok else "fold"
    if system == "fold" and not tool_role:
        name = "strict"
    elif not tool_role:
        name = "text_tools"
    elif ids == "alnum9":
        name = "mistral"
    elif single:
        name = "llama3"
    else:
        name = "portable"
    return PromptShape(name=name, system=system, tool_role=tool_role, tool_ids=ids,  # type: ignore[arg-type]
                       single_tool_call=single, calls_drop_content=drops,
                       source=f"template {template_hash(template)}")


_FAMILIES: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("gemma-3", "gemma3"), "text_tools", "gemma-3"),
    (("gemma",), "strict", "gemma"),
    (("mistral-7b-instruct-v0.1", "mistral-7b-instruct-v0.2", "mixtral-8x7b-instruct-v0.1"), "strict", "mistral-7b"),
    (("mistral", "mixtral", "ministral", "magistral", "devstral", "codestral", "pixtral"), "mistral", "mistral"),
    (("llama-3", "llama3", "llama-4", "llama4"), "llama3", "llama-3"),
    (("phi-4", "phi4", "phi-3", "phi3"), "portable", "phi"),
    (("deepseek-r1", "r1-distill"), "portable", "deepseek-r1"),
    (("qwen",), "portable", "qwen"),
)
"""Model-name fragments -> shape, first match wins (the name is compared lower-case)."""


def shape_for_model(model: str | None) -> PromptShape:
    """The shape for a model known by name only: its family's, else ``portable``."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    for fragments, shape, family in _FAMILIES:
        if any(f in name for f in fragments):
            return SHAPES[shape].with_source(f"model family {family}")
    return SHAPES["portable"].with_source("default")
