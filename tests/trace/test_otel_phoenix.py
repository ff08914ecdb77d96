"""OpenTelemetry export to a real receiver: Arize Phoenix (``phoenix serve`` from ``.venv-phoenix``,
which ``scripts/setup.sh --browser`` installs), started once for the module on free loopback ports
with a temporary working dir; the spans are read back through its REST API.

The acceptance check: ``ARCANA_OTEL=1 OTEL_EXPORTER_OTLP_ENDPOINT=... jupyter nbconvert --execute``
of a copy of example-notebooks/quickstart.ipynb (the bundled local model) delivers an
``invoke_agent`` span per turn and a ``chat`` span per LLM call, with their attributes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import call, events_of, say
from servers.otlp_receiver import closed_port

from arcana_jupyter.trace import otel

ROOT = Path(__file__).resolve().parents[2]
PHOENIX = ROOT / ".venv-phoenix" / "bin" / "phoenix"

pytestmark = pytest.mark.slow


class Phoenix:
    def __init__(self, port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.port, self.proc, self.log = port, proc, log

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:
            return json.loads(response.read())

    def spans(self, run_id: str, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """The run's spans (by ``gen_ai.conversation.id``), waiting until at least ``count`` arrived."""
        deadline = time.monotonic() + timeout
        found: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            found, cursor = [], None
            while True:
                page = self.get("/v1/projects/default/spans?limit=1000" + (f"&cursor={cursor}" if cursor else ""))
                found += [s for s in page["data"] if s["attributes"].get("gen_ai.conversation.id") == run_id]
                cursor = page.get("next_cursor")
                if not cursor:
                    break
            if len(found) >= count:
                return found
            time.sleep(0.3)
        return found


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    assert PHOENIX.exists(), "Arize Phoenix is needed: scripts/setup.sh --browser installs it into .venv-phoenix"
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = closed_port(), closed_port()
    env = {**os.environ, "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(grpc), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_WORKING_DIR": str(work), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = work / "phoenix.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(PHOENIX), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT, cwd=work)
    server = Phoenix(port, proc, log)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"phoenix serve exited: {log.read_text()[-2000:]}"
            try:
                with urllib.request.urlopen(server.url + "/healthz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"phoenix did not come up in 120 s: {log.read_text()[-2000:]}"
            time.sleep(0.5)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(autouse=True)
def _own_pipelines(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in ("ARCANA_OTEL", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_SERVICE_NAME"):
        monkeypatch.delenv(var, raising=False)
    yield
    otel.shutdown_all(timeout=1.0)


def test_quickstart_through_nbconvert_reaches_phoenix(phoenix: Phoenix, tmp_path: Path) -> None:
    notebook = tmp_path / "quickstart.ipynb"
    shutil.copy(ROOT / "example-notebooks" / "quickstart.ipynb", notebook)
    env = {**os.environ, "ARCANA_OTEL": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.url}
    env.pop("ARCANA_TRACE_DIR", None)
    jupyter = Path(sys.executable).parent / "jupyter"
    done = subprocess.run([str(jupyter), "nbconvert", "--to", "notebook", "--execute", "--inplace", notebook.name],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    traces = sorted(tmp_path.glob("*.arcana/*.jsonl"))  # nbconvert names no notebook: notebook.arcana/
    assert len(traces) == 1
    events = events_of(traces[0])
    run_id = events[0]["run_id"]
    turns = [e for e in events if e["event_type"] == "turn_start"]
    calls = [e for e in events if e["event_type"] == "llm_call"]
    assert len(turns) == 2 and len(calls) >= 2
    run_end = events[-1]
    assert run_end["event_type"] == "run_end"  # written at kernel shutdown, after the bounded flush
    record = run_end["metadata"]["otel_export"]
    assert record["exported"] == record["spans"] == len(turns) + len(calls), record
    spans = phoenix.spans(run_id, len(turns) + len(calls))
    agents = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "invoke_agent"]
    chats = [s for s in spans if s["attributes"].get("gen_ai.operation.name") == "chat"]
    assert len(agents) == len(turns) and len(chats) == len(calls)
    assert sorted(s["attributes"]["arcana.turn"] for s in agents) == [1, 2]
    for agent in agents:
        assert agent["name"] == "invoke_agent main" and agent["parent_id"] is None
        assert agent["attributes"]["gen_ai.agent.name"] == "main" and agent["attributes"]["arcana.status"] == "ok"
    by_id = {s["context"]["span_id"]: s for s in agents}
    for chat in chats:
        a = chat["attributes"]
        assert chat["name"] == f"chat {a['gen_ai.request.model']}"
        assert chat["parent_id"] in by_id
        assert a["gen_ai.provider.name"] == "local"
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert a["gen_ai.response.model"] and a["gen_ai.response.finish_reasons"]
        assert a["arcana.strategy"] and a["arcana.budget.used"] > 0 and a["arcana.request_digest"]
        assert chat["context"]["trace_id"] == by_id[chat["parent_id"]]["context"]["trace_id"]
    digests = sorted(c["metadata"]["request_digest"] for c in calls)
    assert sorted(s["attributes"]["arcana.request_digest"] for s in chats) == digests


def test_a_tool_turn_reaches_phoenix(phoenix: Phoenix, make_runtime: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.url)
    runtime, _ = make_runtime(call("add", {"a": 2, "b": 3}), say("5", usage=(30, 2)), tools=(add,), otel=True)
    chat = runtime.chat()
    assert chat.send_sync("2+3?").text == "5"
    chat.close()
    runtime.close()
    assert events_of(chat.trace_path)[-1]["metadata"]["otel_export"]["exported"] == 4
    spans = phoenix.spans(chat.run_id, 4)
    tool = next(s for s in spans if s["name"] == "execute_tool add")
    assert tool["attributes"]["gen_ai.tool.call.id"] == "c1"
    assert tool["attributes"]["gen_ai.operation.name"] == "execute_tool"
    out = json.loads(next(s for s in spans if s["attributes"].get("arcana.step") == 1
                          and s["name"].startswith("chat"))["attributes"]["gen_ai.output.messages"])
    assert out[0]["parts"][0]["content"] == "5"
