from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from arcana_jupyter.memory import MemoryStore, Scope

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, *, days: float = 0, seconds: float = 0) -> None:
        self.now += timedelta(days=days, seconds=seconds)


class Events:
    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, event_type: str, metadata: dict[str, Any]) -> None:
        self.items.append((event_type, metadata))

    def of(self, event_type: str, **match: Any) -> list[dict[str, Any]]:
        return [m for t, m in self.items if t == event_type and all(m.get(k) == v for k, v in match.items())]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """Every test that uses a store (through ``store`` or ``mem_location``) runs on both backends."""
    return str(request.param)


Location = Callable[..., str]


@pytest.fixture
def mem_location(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> Location:
    """``mem_location(name="memory")``: where a store lives in this test — a SQLite file in
    ``tmp_path``, or a PostgreSQL schema of its own on the session's server; the same name gives the
    same place (to reopen it, as another process would)."""
    if backend == "sqlite":
        return lambda name="memory": str(tmp_path / f"{name}.sqlite3")
    server = request.getfixturevalue("postgres_server")
    places: dict[str, str] = {}

    def location(name: str = "memory") -> str:
        if name not in places:
            places[name] = server.fresh_url()
        return places[name]

    return location


@pytest.fixture
def store(mem_location: Location, clock: FakeClock, events: Events) -> Iterator[MemoryStore]:
    s = MemoryStore(mem_location(), clock=clock, on_event=events)
    yield s
    s.close()


@pytest.fixture
def project_a(tmp_path: Path) -> Scope:
    d = tmp_path / "project_a"
    d.mkdir()
    return Scope.for_project(d, user="alice")


@pytest.fixture
def project_b(tmp_path: Path) -> Scope:
    d = tmp_path / "project_b"
    d.mkdir()
    return Scope.for_project(d, user="alice")


@pytest.fixture
def global_scope() -> Scope:
    return Scope.for_global(user="alice")
