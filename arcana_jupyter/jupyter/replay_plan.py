"""Which recorded run each session of a notebook replays: ``replay_runs`` (traitlet) and
``$ARCANA_REPLAY_RUNS``, session name -> a run id or a list of them (one per session opened under
that name, as ``arcana report --verify`` re-runs a notebook)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from IPython.core.error import UsageError

REPLAY_ENV = "ARCANA_REPLAY_RUNS"
"""JSON ``{"session name": "run id"}``: those sessions answer from the recorded run (``replay:<id>``)."""
LENIENT_ENV = "ARCANA_REPLAY_LENIENT"
"""``1``: a replayed call whose prompt differs from the recording is answered as recorded (and the
difference is left to the caller to find: ``report --verify`` compares every turn's digests), so
one turn that no longer reproduces does not change the history every later turn is built from."""


class ReplayPlan(dict[str, Any]):
    """Session name -> run id (or list of run ids, replayed one per session opened under the name)."""

    def __init__(self, runs: dict[str, Any], cursor: dict[str, int]) -> None:
        super().__init__(runs)
        self.cursor = cursor

    def peek(self, name: str, default: Any = None) -> Any:
        """The run the next session opened under ``name`` replays, without taking it off the plan:
        a ``%arcana_chat`` that fails (a bad ``--reserve``, an unknown ``fn:`` model) started no run in
        the recording either, so only a session that opens takes its run (:meth:`take`)."""
        value = super().get(name)
        if not isinstance(value, list):
            return value if value is not None else default
        if not value:
            return default
        return value[min(self.cursor.get(name, 0), len(value) - 1)]  # more sessions than runs: the last again

    def take(self, name: str) -> None:
        """A session opened under ``name``: the next one replays the next run."""
        if isinstance(super().get(name), list):
            self.cursor[name] = self.cursor.get(name, 0) + 1

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        """:meth:`peek` and :meth:`take` in one."""
        value = self.peek(name, default)
        self.take(name)
        return value


def replay_lenient() -> bool:
    """Replays answer a differing prompt as recorded (:data:`LENIENT_ENV`; ``report --verify`` sets it)."""
    return os.environ.get(LENIENT_ENV, "").strip() in ("1", "true", "yes")


def replay_configured(configured: Mapping[str, Any]) -> bool:
    """A replay is configured (``configured``: the traitlet, or the environment), without taking a run
    off the plan."""
    return bool(configured) or bool(os.environ.get(REPLAY_ENV, "").strip() not in ("", "{}"))


def replay_plan(configured: Mapping[str, Any], cursor: dict[str, int]) -> ReplayPlan:
    """Session name -> the recorded run its next ``%arcana_chat`` replays.

    Values (``configured``: the ``replay_runs`` traitlet, then ``$ARCANA_REPLAY_RUNS``) are a run id
    or a list of run ids: with a list, the n-th session opened under that name replays the n-th run
    (``arcana report --verify`` checks every run of a notebook this way); ``cursor`` counts the
    sessions opened so far by name. ``.get(name)`` on the result takes that name's next run."""
    runs: dict[str, Any] = dict(configured)
    raw = os.environ.get(REPLAY_ENV)
    if raw:
        try:
            loaded = json.loads(raw)
            runs.update({str(k): [str(x) for x in v] if isinstance(v, list) else str(v) for k, v in loaded.items()})
        except (ValueError, AttributeError):
            raise UsageError(f"${REPLAY_ENV} must be a JSON object of session name -> run id (or list of run "
                             f"ids), got {raw!r}") from None
    return ReplayPlan(runs, cursor)
