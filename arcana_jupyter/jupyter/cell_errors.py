"""The error each cell raised, kept by execution count, for ``{Err[n]}`` in a ``%%arcana`` cell."""

from __future__ import annotations

from typing import Any


def cell_errors(shell: Any) -> dict[int, BaseException] | None:
    """Execution count -> the error that cell raised (kept by :func:`track_errors`)."""
    return getattr(shell, "_arcana_cell_errors", None) if shell is not None else None


def track_errors(shell: Any) -> None:
    """Keep each cell's error (``result.error_in_exec`` or ``error_before_exec``) for ``{Err[n]}``."""
    if shell is None or getattr(shell, "_arcana_cell_errors", None) is not None:
        return
    errors: dict[int, BaseException] = {}
    shell._arcana_cell_errors = errors

    def post_run_cell(result: Any) -> None:
        count = getattr(result, "execution_count", None)
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        if isinstance(count, int):
            if isinstance(error, BaseException):
                errors[count] = error
                while len(errors) > 1000:  # bounded: the oldest go first
                    errors.pop(next(iter(errors)))
            else:
                errors.pop(count, None)

    shell.events.register("post_run_cell", post_run_cell)
