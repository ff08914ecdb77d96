"""Which recorded run each session replays (jupyter/replay_plan.py), without a kernel."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from arcana_jupyter.jupyter.replay_plan import REPLAY_ENV, replay_configured, replay_plan


def test_a_list_replays_one_run_per_session_then_the_last_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REPLAY_ENV, '{"b": ["r1", "r2"], "c": "r9"}')
    cursor: dict[str, int] = {}
    plan = replay_plan({"a": "r0", "c": "r8"}, cursor)
    assert plan.get("a") == "r0" and plan.get("c") == "r9"  # the environment wins over the traitlet
    assert [replay_plan({}, cursor).get("b") for _ in range(3)] == ["r1", "r2", "r2"]
    assert plan.get("missing", "default") == "default"


def test_a_bad_environment_value_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REPLAY_ENV, '["r1"]')
    with pytest.raises(UsageError, match="must be a JSON object of session name -> run id"):
        replay_plan({}, {})


def test_configured_by_the_traitlet_or_a_non_empty_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REPLAY_ENV, "{}")
    assert not replay_configured({})
    assert replay_configured({"a": "r0"})
    monkeypatch.setenv(REPLAY_ENV, '{"a": "r0"}')
    assert replay_configured({})
