"""A build (``_Build``) reaches its builder's caches only through ``_BuildCaches``; of the builder
itself it reads public settings only."""

from __future__ import annotations

import inspect
import re

from arcana_jupyter.context import builder as builder_module
from arcana_jupyter.context.builder import WorkingSetBuilder
from arcana_jupyter.context.decisions import TokenBudget
from arcana_jupyter.messages import Message


def test_a_build_uses_no_private_member_of_the_builder() -> None:
    source = inspect.getsource(builder_module._Build)
    assert re.findall(r"\bb\._\w+", source) == []


def test_the_summary_cache_keeps_the_64_latest() -> None:
    b = WorkingSetBuilder(TokenBudget(total_window=1000))
    caches = b._caches()
    for k in range(70):
        caches.remember_summary(("fold", k), f"summary {k}")
    assert list(b._summaries) == [("fold", k) for k in range(6, 70)]


def test_the_caches_are_the_builders() -> None:
    b = WorkingSetBuilder(TokenBudget(total_window=1000))
    caches = b._caches()
    msgs = caches.messages([{"role": "user", "content": "hi"}])
    assert msgs == [Message(role="user", content="hi")]
    state = caches.history_state(msgs)
    assert state is b._state and caches.info(msgs[0]) is state.infos[0]
