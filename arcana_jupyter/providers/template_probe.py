"""Rendering a chat template the way servers do, and the probe that asks a template what it needs.

:func:`render_template` renders ``messages`` through a Jinja chat template as vLLM and llama.cpp do
(Jinja2's ``ImmutableSandboxedEnvironment`` with a ``raise_exception`` global, ``trim_blocks`` /
``lstrip_blocks``, the ``loopcontrols`` extension and a plain-JSON ``tojson`` filter, as transformers'
``apply_chat_template`` sets it up). :func:`probe_rules` renders a few small probe conversations and watches what
happens: does the template refuse a system message, a tool role, a tool-call id that is not 9
alphanumerics, two calls in one message? Does it silently drop a message's text (each probe message
carries a marker that is searched for in the rendering)? The answers are the rules of a
:class:`~.shaping.PromptShape`, as a dict.

A template is code from a model hub or a server: two nested ``range(100000)`` loops, ``lipsum(n=10**8)``
or ``7 ** 1000000000`` (one C call that holds the GIL) would stop the kernel that renders it. So the
probe runs out of process (:mod:`.chat_templates` starts ``python -m`` this module with the template on
stdin), and the process bounds itself before it reads it: its address space (:data:`PROBE_MEMORY`), its
CPU time (:data:`PROBE_CPU_SECONDS`); the caller bounds the wall clock. This module imports nothing of
the package (the process starts in a fraction of a second) — only the standard library and Jinja2.
"""

from __future__ import annotations

import json
import sys
from datetime import date
from functools import lru_cache
from typing import Any

_MARK = "ZQX"
PROBE_MEMORY = 512 << 20
"""The probe process's address space (``RLIMIT_AS``): Python and Jinja2 take ~60 MB of it."""
PROBE_CPU_SECONDS = 5
"""The probe process's CPU time (``RLIMIT_CPU``); the caller also stops it after a wall-clock bound."""
MAX_POWER_BITS = 4096
"""``**`` in a template (intercepted) may make integers of at most this many bits."""


class TemplateRefused(Exception):
    """The template called ``raise_exception`` (or failed to render) for a conversation."""


def _raise(message: str) -> None:
    raise TemplateRefused(message)


def _power(left: Any, right: Any) -> Any:
    """``left ** right`` as a template may compute it: no integer of more than :data:`MAX_POWER_BITS` bits."""
    if isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1 \
            and right * max(1, abs(left).bit_length()) > MAX_POWER_BITS:
        raise TemplateRefused(f"the template computes {left} ** {right}, too large a number")
    return left ** right


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    """``tojson`` as transformers' ``apply_chat_template`` (vLLM, TGI) and llama.cpp define it: plain
    ``json.dumps``. Jinja2's own filter returns markup with ``<``, ``>``, ``&``, ``'`` escaped as
    ``\u003c`` ..., and ``'<|tool_response|>' + (content | tojson)`` then HTML-escapes the marker too:
    Phi-4-mini's tool results came out as ``&lt;|tool_response|&gt;"{\"label\": \"A \u0026 B\"}"``."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


@lru_cache(maxsize=32)
def _compiled(template: str) -> Any:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class _Environment(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"**"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            if operator == "**":
                return _power(left, right)
            return super().call_binop(context, operator, left, right)

    env = _Environment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: date(2025, 1, 1).strftime(fmt)
    return env.from_string(template)


def render_template(template: str, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None,
                    bos_token: str = "<s>", eos_token: str = "</s>", add_generation_prompt: bool = True) -> str:
    """``messages`` rendered through ``template`` as servers render them; :class:`TemplateRefused` if refused.

    In this process: for templates that are known (tests, a loopback server). A template from outside
    is probed through :func:`~.chat_templates.detect_shape`, out of process."""
    kwargs: dict[str, Any] = {"messages": messages, "bos_token": bos_token, "eos_token": eos_token,
                              "add_generation_prompt": add_generation_prompt}
    if tools:
        kwargs["tools"] = tools
    try:
        return str(_compiled(template).render(**kwargs))
    except (TemplateRefused, MemoryError):
        raise
    except Exception as exc:  # a template error on this input is a refusal too (TypeError, UndefinedError ...)
        raise TemplateRefused(f"{type(exc).__name__}: {exc}") from None


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


def probe_rules(template: str) -> dict[str, Any]:
    """The rules ``template`` needs (a :class:`~.shaping.PromptShape`'s fields but ``source``), found by
    rendering probe conversations."""
    m = _MARK
    try:
        render_template(template, [{"role": "user", "content": f"{m}u1"}])
    except TemplateRefused as exc:  # not even one user message: nothing to learn from it
        raise TemplateRefused(f"the template renders no conversation ({str(exc)[:200]})") from None
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
    return {"name": name, "system": system, "alternate": True, "tool_role": tool_role, "tool_ids": ids,
            "single_tool_call": single, "calls_drop_content": drops}


def _bound_myself() -> None:
    """This process's own limits, set before the template is read (the kernel that started it has
    threads: a ``preexec_fn`` would not be safe there)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - no resource limits (Windows): the wall clock still holds
        return
    for limit, value in ((resource.RLIMIT_AS, PROBE_MEMORY), (resource.RLIMIT_CPU, PROBE_CPU_SECONDS)):
        try:
            _, hard = resource.getrlimit(limit)
            bound = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (bound, hard))
        except (ValueError, OSError):  # pragma: no cover - a lower limit already holds
            continue


def main() -> int:
    """The probe process: ``{"template": ...}`` (JSON) on stdin, ``{"rules": {...}}`` or ``{"error": ...}``
    on stdout. A template that exhausts the limits ends the process (a ``MemoryError``, ``SIGXCPU``)."""
    _bound_myself()
    try:
        template = json.loads(sys.stdin.read())["template"]
        out: dict[str, Any] = {"rules": probe_rules(template)}
    except MemoryError:
        out = {"error": f"the template needs more than {PROBE_MEMORY >> 20} MB to render"}
    except TemplateRefused as exc:
        out = {"error": str(exc)[:300]}
    except Exception as exc:  # a template the sandbox cannot even compile: the caller falls back
        out = {"error": f"the template does not compile ({type(exc).__name__}: {exc})"[:300]}
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
