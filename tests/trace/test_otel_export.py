"""OpenTelemetry export against our OTLP/HTTP receiver on 127.0.0.1 (tests/servers/otlp_receiver.py):
the spans and their attributes, a collector that is down, slow or failing, a full queue, the
missing extra, and `arcana trace export --otlp` of a recorded run."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import call, events_of, say
from servers.otlp_receiver import OTLPReceiver, closed_port

from arcana_jupyter.cli import main as cli_main
from arcana_jupyter.exceptions import ConfigError
from arcana_jupyter.trace import otel
from arcana_jupyter.trace.reader import TraceReader

KEY = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
HEADER_SECRET = "hdrTok-9f8e7d6c5b4a39281706"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.fixture(autouse=True)
def _clean_pipelines(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("ARCANA_OTEL", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_SERVICE_NAME",
                "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    yield
    otel.shutdown_all(timeout=1.0)


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    r = OTLPReceiver()
    yield r
    r.close()


def _run(make_runtime: Any, *, turns: int = 2, **config: Any) -> tuple[Any, list[float]]:
    """A chat with a tool call in turn 1 and a plain answer after; returns the closed chat and turn times."""
    runtime, _ = make_runtime(call("add", {"a": 1, "b": 2}), say(f"3 (my key was {KEY})", usage=(40, 7)),
                              *[say(f"answer {i}", usage=(50 + i, 3)) for i in range(turns)], tools=(add,), **config)
    chat = runtime.chat()
    times = []
    for i in range(turns):
        started = time.perf_counter()
        reply = chat.send_sync(f"question {i}: what is 1+2? key {KEY}")
        times.append(time.perf_counter() - started)
        assert reply.status == "ok"
    chat.close()
    runtime.close()
    return chat, times


def _run_end(chat: Any) -> dict[str, Any]:
    return events_of(chat.trace_path)[-1]["metadata"]


def test_turns_become_genai_spans_with_our_facts(make_runtime: Any, receiver: OTLPReceiver,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "otel-test")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"x-api-key={HEADER_SECRET}")
    chat, _ = _run(make_runtime, otel=True)
    record = _run_end(chat)["otel_export"]
    assert record["spans"] == record["exported"] == 6  # 2 turns, 3 chat calls, 1 tool
    assert record["failed"] == record["dropped"] == record["pending"] == 0
    spans = receiver.wait_for(6)
    assert receiver.requests[0]["path"] == "/v1/traces"
    assert receiver.requests[0]["headers"].get("x-api-key") == HEADER_SECRET  # sent, never recorded
    run = chat.run_id
    turns = sorted(receiver.named("invoke_agent"), key=lambda s: s["attributes"]["arcana.turn"])
    assert [s["name"] for s in turns] == ["invoke_agent main"] * 2
    first = turns[0]
    assert first["parent_span_id"] is None
    assert first["trace_id"] == f"{otel.trace_id_for(run, 'main', 1):032x}"
    assert first["resource"]["service.name"] == "otel-test"
    a = first["attributes"]
    assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"] == "main"
    assert a["gen_ai.conversation.id"] == run and a["arcana.status"] == "ok" and a["arcana.steps"] == 2
    assert first["status"] == 0
    chats = [s for s in receiver.named("chat ") if s["trace_id"] == first["trace_id"]]
    assert len(chats) == 2 and all(s["parent_span_id"] == first["span_id"] for s in chats)
    last = max(chats, key=lambda s: s["attributes"]["arcana.step"])
    c = last["attributes"]
    assert c["gen_ai.operation.name"] == "chat" and last["name"] == f"chat {c['gen_ai.request.model']}"
    assert c["gen_ai.provider.name"] == "function" and c["gen_ai.response.model"]
    assert c["gen_ai.usage.input_tokens"] == 40 and c["gen_ai.usage.output_tokens"] == 7
    assert c["gen_ai.usage.cache_read.input_tokens"] == 0
    assert c["gen_ai.response.finish_reasons"] == ["stop"]
    for key in ("arcana.strategy", "arcana.budget.used", "arcana.budget.available", "arcana.tokens.kept",
                "arcana.tokens.compressed", "arcana.tokens.dropped", "arcana.request_digest", "arcana.pins",
                "arcana.prefix.tokens_reused"):
        assert key in c, key
    recorded = [e for e in events_of(chat.trace_path) if e["event_type"] == "llm_call" and e["turn"] == 1]
    assert c["arcana.request_digest"] == recorded[-1]["metadata"]["request_digest"]
    assert first["start_ns"] <= min(s["start_ns"] for s in chats) and first["end_ns"] >= max(s["end_ns"] for s in chats)
    tool = receiver.named("execute_tool add")[0]
    assert tool["parent_span_id"] == first["span_id"]
    assert tool["attributes"]["gen_ai.tool.name"] == "add" and tool["attributes"]["gen_ai.tool.call.id"] == "c1"
    # content (trace_content="full"), masked
    out = json.loads(c["gen_ai.output.messages"])
    assert out[0]["role"] == "assistant" and "3 (my key was [REDACTED])" in out[0]["parts"][0]["content"]
    inputs = json.loads(c["gen_ai.input.messages"])
    assert inputs[0]["parts"][0]["type"] == "tool_call_response"
    everything = json.dumps(spans) + chat.trace_path.read_text()
    assert KEY not in everything and HEADER_SECRET not in everything


def test_no_content_unless_the_trace_keeps_it(make_runtime: Any, receiver: OTLPReceiver,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    chat, _ = _run(make_runtime, turns=1, otel=True, trace_content="redacted")
    assert _run_end(chat)["otel_export"]["exported"] == 4
    spans = receiver.wait_for(4)
    keys = {k for s in spans for k in s["attributes"]}
    assert not keys & {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments",
                       "gen_ai.tool.call.result"}
    assert "gen_ai.usage.input_tokens" in keys


def test_env_switch_and_off_by_default(make_runtime: Any, receiver: OTLPReceiver,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    chat, _ = _run(make_runtime, turns=1)
    assert "otel_export" not in _run_end(chat)
    monkeypatch.setenv("ARCANA_OTEL", "1")
    chat, _ = _run(make_runtime, turns=1)
    assert _run_end(chat)["otel_export"]["exported"] == 4
    assert receiver.wait_for(4) and len(receiver.spans) == 4


@pytest.mark.parametrize("collector", ["down", "slow", "error"])
def test_a_bad_collector_never_slows_or_fails_a_turn(make_runtime: Any, monkeypatch: pytest.MonkeyPatch,
                                                      collector: str) -> None:
    if collector == "down":
        url, bad = f"http://127.0.0.1:{closed_port()}", None
    else:
        bad = OTLPReceiver(mode="slow" if collector == "slow" else "error", delay=5.0)
        url = bad.url
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")  # ms: keeps the test short; the default is 2 s
    try:
        started = time.perf_counter()
        chat, times = _run(make_runtime, turns=3, otel=True)
        closed = time.perf_counter() - started
        assert max(times) < 0.5, times  # the export happens on the processor's thread
        assert closed < 3 * 0.5 + otel.FLUSH_TIMEOUT_S + 2, closed  # closing waits a bounded time
        record = _run_end(chat)["otel_export"]
        assert record["spans"] == 8 and record["exported"] == 0
        assert record["failed"] + record["pending"] + record["dropped"] == 8
        assert record["failed"] > 0 or collector == "slow"
        assert record["endpoint"] == url + "/v1/traces"
    finally:
        if bad is not None:
            bad.close()


def test_a_full_queue_drops_spans_and_counts_them(make_runtime: Any) -> None:
    import threading

    release = threading.Event()

    class Stuck:
        def export(self, spans: Any) -> Any:
            from opentelemetry.sdk.trace.export import SpanExportResult

            release.wait(5)
            return SpanExportResult.SUCCESS

        def shutdown(self) -> None:
            release.set()

        def force_flush(self, timeout_millis: int = 0) -> bool:
            return True

    pipeline = otel.OtelPipeline("http://127.0.0.1:9", exporter=Stuck(), max_queue=2, max_batch=1,
                                 schedule_delay_ms=10)
    runtime, _ = make_runtime(*[say(f"a{i}") for i in range(6)])
    chat = runtime.chat()
    for i in range(6):
        chat.send_sync(f"q{i}")
    chat.close()
    runtime.close()
    mapper = pipeline.mapper()
    for event in TraceReader(chat.trace_path.parent).events(chat.run_id):
        mapper.on_event(event)
    time.sleep(0.1)
    stats = pipeline.stats(chat.run_id)
    assert stats["spans"] == 12
    assert 12 - 4 <= stats["dropped"] <= 12 - 2  # at most one in export and two queued survive
    release.set()
    pipeline.shutdown(1.0)
    final = pipeline.stats(chat.run_id)
    assert final["exported"] + final["dropped"] == 12 and final["pending"] == final["failed"] == 0


def test_a_provider_error_is_an_error_span(make_runtime: Any, receiver: OTLPReceiver,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from arcana_jupyter.exceptions import RateLimitError

    def boom(request: Any) -> Any:
        raise RateLimitError("slow down", provider="function", status=429)

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    runtime, _ = make_runtime(boom, otel=True, max_retries=0)
    chat = runtime.chat()
    reply = chat.send_sync("hello", raise_errors=False)
    assert reply.status == "error"
    chat.close()
    runtime.close()
    spans = receiver.wait_for(2)
    turn = receiver.named("invoke_agent")[0]
    failed = receiver.named("chat")[0]
    assert turn["status"] == failed["status"] == 2  # STATUS_CODE_ERROR
    assert failed["attributes"]["error.type"] == "RateLimitError" and turn["attributes"]["arcana.status"] == "error"
    assert failed["parent_span_id"] == turn["span_id"] and len(spans) == 2


def test_without_the_extra_one_line_names_the_install(make_runtime: Any, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # import fails as if not installed
    monkeypatch.setattr(otel.pipeline, "_sdk_classes", {})
    runtime, _ = make_runtime(say("hi"), otel=True)
    with pytest.raises(ConfigError, match=r"pip install 'arcana-jupyter\[otel\]'"):
        runtime.chat()
    runtime.close()
    runtime, _ = make_runtime(say("hi"))
    chat = runtime.chat()
    chat.send_sync("hi")
    chat.close()
    runtime.close()
    assert cli_main(["trace", "export", str(chat.trace_path), "--otlp"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "arcana: error: OpenTelemetry export needs the [otel] extra: pip install 'arcana-jupyter[otel]'"


def test_cli_exports_a_recorded_run_with_the_live_ids(make_runtime: Any, receiver: OTLPReceiver,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    chat, _ = _run(make_runtime, otel=True)
    live = sorted((s["trace_id"], s["span_id"], s["parent_span_id"], s["name"], s["start_ns"], s["end_ns"])
                  for s in receiver.wait_for(6))
    again = OTLPReceiver()
    try:
        assert cli_main(["trace", "export", chat.run_id, "--dir", str(chat.trace_path.parent), "--otlp",
                         "--endpoint", again.url]) == 0
        assert capsys.readouterr().out.strip() == f"exported run {chat.run_id}: 6 spans to {again.url}/v1/traces"
        exported = again.wait_for(6)
        assert sorted((s["trace_id"], s["span_id"], s["parent_span_id"], s["name"], s["start_ns"], s["end_ns"])
                      for s in exported) == live  # same ids and times: re-export is idempotent
        chats = [s for s in exported if s["name"].startswith("chat")]
        assert all(s["attributes"]["gen_ai.usage.input_tokens"] > 0 for s in chats)
    finally:
        again.close()


def test_cli_export_to_a_dead_collector_fails_in_one_line(make_runtime: Any, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    chat, _ = _run(make_runtime, turns=1)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.perf_counter()
    code = cli_main(["trace", "export", str(chat.trace_path), "--otlp", "--endpoint", url, "--timeout", "5"])
    assert code == 1 and time.perf_counter() - started < 8
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith(f"arcana: error: could not export run {chat.run_id} to {url}/v1/traces:"
                          " 0 of 4 spans delivered")
    assert cli_main(["trace", "export", str(chat.trace_path)]) == 1
    assert "--otlp" in capsys.readouterr().err


def test_memory_operations_and_pools(tmp_path: Path, receiver: OTLPReceiver, monkeypatch: pytest.MonkeyPatch) -> None:
    from scripted_chat import Script

    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.runtime import Runtime, RuntimeConfig

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)

    def runtime(script: Script, traces: str) -> Runtime:
        config = RuntimeConfig(trace_dir=tmp_path / traces, memory=True, memory_path=tmp_path / "mem.sqlite3",
                               project_dir=tmp_path / "project", context_engine=False, memory_tools="on", otel=True)
        return Runtime(config=config, provider=FunctionProvider(script))

    first = runtime(Script(call("remember", {"kind": "fact", "content": "The warehouse table is sales_v2"}),
                           say("noted")), "t1")
    chat = first.chat()
    chat.send_sync("remember the table")
    chat.close()
    first.close()
    second = runtime(Script(say("sales_v2 it is")), "t2")
    chat2 = second.chat()
    chat2.send_sync("which table?")
    chat2.close()
    second.close()
    created = [s for s in receiver.wait_for(9) if s["name"] == "create_memory"]
    assert len(created) == 1 and created[0]["attributes"]["gen_ai.operation.name"] == "create_memory"
    assert (created[0]["attributes"]["gen_ai.memory.record.id"]
            and created[0]["attributes"]["arcana.memory.op"] == "remember")
    assert created[0]["attributes"]["gen_ai.conversation.id"] == chat.run_id
    searched = [s for s in receiver.spans if s["name"] == "search_memory"
                and s["attributes"]["gen_ai.conversation.id"] == chat2.run_id]
    assert searched and searched[0]["attributes"]["gen_ai.memory.record.count"] >= 1
    assert "sales_v2" in searched[0]["attributes"]["gen_ai.memory.records"]  # full content mode
    assert _run_end(chat2)["otel_export"]["failed"] == 0

    pool_runtime, _ = runtime(Script(say("a says hi"), say("b says hi")), "pool"), None
    pool = pool_runtime.collaborate()
    pool.add("a", memory=False)
    pool.add("b", memory=False)
    pool_runtime.loop.run(pool.broadcast("hello"))
    pool_runtime.loop.run(pool.aclose())
    pool_runtime.close()
    record = events_of(pool.writer.path)[-1]["metadata"]["otel_export"]
    assert record["spans"] == record["exported"] == 4
    names = {s["attributes"]["gen_ai.agent.name"] for s in receiver.spans
             if s["attributes"]["gen_ai.conversation.id"] == pool.run_id}
    assert names == {"a", "b"}
