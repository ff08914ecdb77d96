"""What a failed or interrupted turn shows in its cell: one red line in the user's terms.

A ``%%arcana`` turn that fails must look failed: Jupyter marks a cell failed when its code raised,
and shows the exception's traceback. A traceback through our magics helps nobody, so the
exceptions here carry their own one-line rendering (IPython calls ``_render_traceback_`` when an
exception has it; the kernel sends those lines as the cell's error output): what failed, named by
the magic's flags and the provider, and what to try. ``%config ArcanaMagics.raise_errors = False``
shows the same line without failing the cell.

Argument errors (``--window abc``) are IPython ``UsageError``s with one line built by
:func:`usage_line`.
"""

from __future__ import annotations

import re
from typing import Any

from ..exceptions import (
    ArcanaError,
    AuthenticationError,
    ConfigError,
    ConnectionFailed,
    ContextLengthError,
    NotFoundError,
    RateLimitError,
    ReplayDivergence,
    ServerError,
    StreamError,
)

RED = "\x1b[0;31m"
BOLD_RED = "\x1b[1;31m"
RESET = "\x1b[0m"


class _OneLine(Exception):
    """An exception IPython shows as one coloured line instead of a traceback."""

    label = "arcana"

    def _render_traceback_(self) -> list[str]:
        return [f"{BOLD_RED}{self.label}:{RESET} {RED}{self}{RESET}"]


class TurnFailed(_OneLine):
    """A ``%%arcana`` turn ended with an error (the turn and its error are in the trace)."""

    label = "arcana turn failed"


class TurnInterrupted(_OneLine):
    """Ctrl-C (or the stop button) during a turn: the partial reply is kept in the trace."""

    label = "arcana"


def explain(error: BaseException, *, model: str, window: int, reserve: int) -> str:
    """One line saying what failed and what to try, in the terms of ``%arcana_chat``'s flags."""
    said = _first_sentence(str(error))
    provider = getattr(error, "provider", "") or model.split(":", 1)[0]
    if isinstance(error, ContextLengthError):
        return (f"the prompt did not fit {model}'s context window even after shrinking it "
                f"(--window {window}, --reserve {reserve}): give %arcana_chat a smaller --window, or "
                f"--strategy aggressive_truncate. {provider} said: {said}")
    if isinstance(error, AuthenticationError):
        return (f"{provider} refused the API key: check the key in the environment (OPENAI_API_KEY, "
                f"ANTHROPIC_API_KEY, DEEPSEEK_API_KEY) or run %arcana_chat --model local. {provider} said: {said}")
    if isinstance(error, NotFoundError):
        return f"{provider} does not know the model in --model {model}: check its name. {provider} said: {said}"
    if isinstance(error, RateLimitError):
        return f"{provider} is rate limiting this key: wait a minute and run the cell again. {said}"
    if isinstance(error, ServerError):
        return f"{provider} is failing (server error), not your request: run the cell again later. {said}"
    if isinstance(error, ConnectionFailed):
        return f"could not reach {provider}: is the server running and its base_url right? {said}"
    if isinstance(error, ReplayDivergence):
        return f"this notebook no longer matches its recording: {said}"
    if isinstance(error, StreamError):
        return f"{provider}'s answer broke off: run the cell again. {said}"
    if isinstance(error, ConfigError):
        return f"{said} (see %arcana_chat? for the flags)"
    if isinstance(error, ArcanaError):
        return f"{provider}: {said}"
    return f"{type(error).__name__}: {said}"


def _first_sentence(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_INVALID = re.compile(r"argument (?P<flag>-[-\w]+)(?:/-\w+)?: invalid (?P<kind>\w+) value: (?P<value>.+)")
_KINDS = {"int": "a whole number", "float": "a number"}


def usage_line(magic: str, problem: str) -> str:
    """``%magic: problem (%magic? lists every option)``: one line, the flag named as typed."""
    found = _INVALID.search(problem)
    if found:
        kind = _KINDS.get(found["kind"], f"a {found['kind']}")
        problem = f"{found['flag']} must be {kind}, got {found['value']}"
    problem = problem.removeprefix("UsageError: ").strip().rstrip(".")
    return f"%{magic}: {problem} (%{magic}? lists every option)"


def field_problem(error: Any, flags: dict[str, str] | None = None) -> str:
    """A pydantic error as ``--flag: what is wrong (got VALUE)``."""
    loc = ".".join(str(p) for p in error.get("loc", ())) or "line"
    flag = (flags or {}).get(loc, "--" + loc.replace("_", "-") if loc != "line" else loc)
    msg = str(error.get("msg", "")).removeprefix("Value error, ")
    msg = msg.replace("Input should be ", "must be ").replace("greater than or equal to", "at least")
    if msg.startswith("String should match pattern"):
        msg = "must be 1 to 64 letters, digits, '_', '.' or '-'"
    value = error.get("input")
    got = f" (got {value!r})" if value is not None and not isinstance(value, dict) else ""
    return f"{flag} {msg}{got}" if msg.startswith("must") else f"{flag}: {msg}{got}"
