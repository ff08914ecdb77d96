"""Shared pytest fixtures: real loopback servers and the bundled local model.

Load with ``pytest_plugins = ["servers.fixtures"]`` in ``tests/conftest.py``.

- ``fake_openai``: a scripted OpenAI-protocol server (function scope); ``fake_openai.base_url``
  ends in ``/v1``; script replies with ``servers.fake_openai.completion(...)`` etc.
- ``fake_anthropic``: the same for Anthropic's Messages API; ``fake_anthropic.base_url``.
- ``recorded_sleep``: an async ``sleep`` that records delays instead of waiting (pass it in a
  ``RetryPolicy``).
- ``smollm2_path``: path of the bundled SmolLM2-135M GGUF (session).
- ``local_provider``: a ``LocalProvider`` on that model, loaded once per session (n_ctx 4096).
- ``llama_server``: base URL (``http://127.0.0.1:<port>/v1``) of ``python -m llama_cpp.server``
  running that model with tool calling (session; started on first use, ~2 s).
- ``postgres_server``: a real PostgreSQL server (session; ``.fresh_url()`` gives each test a schema).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from arcana_jupyter.providers.connection import RetryPolicy
from arcana_jupyter.providers.local import LocalProvider, default_model_path

from .llama_server import run_llama_server
from .postgres import PostgresCluster
from .scripted import ScriptedServer


class RecordedSleep:
    """Stands in for ``asyncio.sleep`` in a :class:`RetryPolicy`: records each delay, returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)

    def policy(self, max_retries: int = 3, **kw: float) -> RetryPolicy:
        """A retry policy sleeping through this recorder, with a seeded jitter rng."""
        return RetryPolicy(max_retries=max_retries, sleep=self, rng=random.Random(0), **kw)


class FakeServer(ScriptedServer):
    """A :class:`ScriptedServer` with the base URL a provider is configured with."""

    def __init__(self, name: str, api_root: str) -> None:
        super().__init__(name)
        self.api_root = api_root

    @property
    def base_url(self) -> str:
        return self.root_url + self.api_root


@pytest.fixture
def recorded_sleep() -> RecordedSleep:
    return RecordedSleep()


@pytest.fixture
def fake_openai() -> Iterator[FakeServer]:
    with FakeServer("fake-openai", "/v1") as server:
        yield server


@pytest.fixture
def fake_anthropic() -> Iterator[FakeServer]:
    with FakeServer("fake-anthropic", "") as server:
        yield server


@pytest.fixture(scope="session")
def smollm2_path() -> Path:
    return default_model_path()


@pytest.fixture(scope="session")
def llama_server(smollm2_path: Path) -> Iterator[str]:
    with run_llama_server(smollm2_path) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def local_provider(smollm2_path: Path) -> LocalProvider:
    return LocalProvider(smollm2_path, n_ctx=4096, seed=7)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresCluster]:
    """A real PostgreSQL server on 127.0.0.1 (session; started on first use, ~2 s): ``.url()``,
    ``.fresh_url()`` (a new schema per call). ``make test`` installs psycopg (the ``postgres`` extra)
    and the server (``scripts/setup.sh --browser``); without them the tests fail and say so, never skip."""
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
