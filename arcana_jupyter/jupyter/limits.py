"""What the front end may ask of the kernel, and how much of what it sent an answer repeats: the
limits the ``arcana`` comm (comm.py) and the widgets (widget.py) share."""

from __future__ import annotations

from typing import Any

MAX_TRACE_BYTES = 16 * 1024 * 1024
"""The largest trace a ``trace`` request sends (a longer one: ``ok: false``, read it beside the notebook)."""
MAX_ECHO_CHARS = 80
"""How much of a user field an answer repeats."""


def clip(value: Any, limit: int = MAX_ECHO_CHARS) -> str:
    """``repr(value)``, at most ``limit`` characters: the one rule for echoing what the front end sent."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text):,} characters)"
