"""The OTLP exporter against hostile collectors (hostile pass, defects 7 and 8, and the guards that
held: 503 and resetting collectors never slow a turn): tests/servers/hostile_collector.py."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from scripted_chat import events_of, say
from servers.hostile_collector import HostileCollector

from arcana_jupyter.trace import otel


@pytest.fixture(autouse=True)
def _clean_pipelines(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("ARCANA_OTEL", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SERVICE_NAME",
                "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "HTTP_PROXY", "HTTPS_PROXY",
                "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    yield
    otel.shutdown_all(timeout=1.0)


@pytest.fixture
def collector() -> Iterator[HostileCollector]:
    c = HostileCollector()
    yield c
    c.close()


def session(make_runtime: Any, turns: int = 2) -> tuple[dict[str, Any], list[float]]:
    """One chat of ``turns`` turns with OpenTelemetry on; its ``otel_export`` record and turn times."""
    runtime, _ = make_runtime(*[say(f"answer {i}", usage=(30, 3)) for i in range(turns)], otel=True)
    chat = runtime.chat()
    times = []
    for i in range(turns):
        started = time.perf_counter()
        assert chat.send_sync(f"question {i}").status == "ok"
        times.append(time.perf_counter() - started)
    chat.close()
    runtime.close()
    return events_of(chat.trace_path)[-1]["metadata"]["otel_export"], times


@pytest.mark.timeout(60)
def test_hostile_7_a_huge_collector_answer_is_not_read(make_runtime: Any, collector: HostileCollector,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    collector.mode = "huge"  # 200 MB of answer: before, the exporter read all of it into memory
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
    record, _ = session(make_runtime)
    assert record["spans"] > 0 and record["exported"] == record["spans"], record  # a 200 is a 200
    assert collector.sent < 30_000_000, collector.sent  # what the loopback buffers took, not 200 MB


@pytest.mark.timeout(60)
def test_hostile_8_a_dripping_collector_does_not_wedge_later_exports(make_runtime: Any,
                                                                     collector: HostileCollector,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    collector.mode = "drip"  # two bytes every 0.2 s, for ever: each read is quicker than the 0.5 s timeout
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")  # ms, per batch
    first, times = session(make_runtime)
    assert max(times) < 0.5 and first["exported"] == 0
    collector.mode = "ok"  # the collector recovers: the same process's next session exports everything
    time.sleep(1.0)  # the dripped batch's deadline passes
    second, _ = session(make_runtime)
    assert second["spans"] > 0 and second["exported"] == second["spans"], second
    assert second["pending"] == 0


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["503", "reset"])
def test_held_503_and_resetting_collectors_never_slow_a_turn(make_runtime: Any, collector: HostileCollector,
                                                             monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    collector.mode = mode
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
    started = time.perf_counter()
    record, times = session(make_runtime, turns=3)
    assert max(times) < 0.5, times
    assert time.perf_counter() - started < 3 * 0.5 + otel.FLUSH_TIMEOUT_S + 2
    assert record["exported"] == 0 and record["failed"] + record["pending"] + record["dropped"] == record["spans"]
