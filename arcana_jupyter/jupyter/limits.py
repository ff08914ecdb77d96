"""What the front end may ask of the kernel, and how much of what it sent an answer repeats: the
limits the ``arcana`` comm (comm.py) and the widgets (widget.py) share."""

from __future__ import annotations

from typing import Any

MAX_TRACE_BYTES = 64 * 1024 * 1024
"""The largest trace the kernel reads for a ``trace`` request (a longer one: ``ok: false``, open it in the
trace viewer, which the Jupyter server reads)."""
MAX_ECHO_CHARS = 80
"""How much of a user field an answer repeats."""


def clip(value: Any, limit: int = MAX_ECHO_CHARS) -> str:
    """``repr(value)``, at most ``limit`` characters: the one rule for echoing what the front end sent."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text):,} characters)"


MAX_TARGET_CHARS = 128
"""The longest action target (a pin or object id) accepted; ids are a few dozen characters."""


def valid_text(value: Any, limit: int) -> bool:
    """A non-empty string of at most ``limit`` characters, without control characters or lone surrogates."""
    if not isinstance(value, str) or not value or len(value) > limit:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return not any(ord(c) < 32 or ord(c) == 127 for c in value)
