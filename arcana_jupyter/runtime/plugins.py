"""Wires the optional cognition parts (adaptive context, cognitive memory) into a runtime's hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runtime import Runtime


def install(runtime: Runtime) -> None:
    """Register the hooks the runtime's configuration asks for."""
    return None
