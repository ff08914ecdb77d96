"""A fingerprint of what a scripted session records and what the trace tools make of it, for
refactors that must not change behaviour (benchmarks/results/contracts.md).

Run: ``python scripts/scripted_trace_digest.py [--keep DIR]``. Two scripted sessions (classic and
adaptive context; tool calls, a pin, a call of a missing tool, a provider error) are written with a
fixed run id; then the trace's lines (times and latencies masked), the OpenTelemetry spans made from
it (an in-memory exporter: names, ids, parents, attributes, latencies left out), the replay
provider's answers and every ``arcana trace`` command's output (times masked) are hashed. Prints one
SHA-256 per part and one over all; identical before and after means the refactor changed none of them.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from arcana_jupyter.exceptions import RateLimitError
from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig

_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?Z?)?")
_VOLATILE = ("latency_ms", "ts", "arcana_version", "cost_usd")


def _say(text: str) -> LLMResponse:
    return LLMResponse(message=Message(role="assistant", content=text), finish_reason="stop",
                       usage=Usage(input_tokens=100, output_tokens=20))


def _call(name: str, args: dict[str, Any], call_id: str) -> LLMResponse:
    return LLMResponse(message=Message(role="assistant", content="", tool_calls=(
        ToolCall(id=call_id, name=name, arguments=json.dumps(args)),)), finish_reason="tool_calls",
        usage=Usage(input_tokens=90, output_tokens=10))


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _model() -> Any:
    steps: list[Any] = [
        _call("add", {"a": 2, "b": 3}, "c1"), _say("2 + 3 = 5."),
        _call("pin", {"content": "The unit of every figure is kelvin.", "label": "units"}, "c2"), _say("Pinned."),
        _call("missing_tool", {"reason": "no"}, "c3"), _say("The tool failed."),
        RateLimitError("slow down", provider="function", status=429),
        _say("Fine again. " * 30),
    ]
    steps += [_say(f"Answer {i}: " + "words " * 40) for i in range(6)]

    def model(request: LLMRequest) -> LLMResponse:
        if not steps:
            return _say("(done)")
        step = steps.pop(0)
        if isinstance(step, Exception):
            raise step
        return step

    return model


def _session(folder: Path, run_id: str, engine: bool) -> Path:
    config = RuntimeConfig(trace_dir=folder, total_window=1200, response_reserve=200, context_engine=engine,
                           cognitive_primitives=["recall", "pin"], max_retries=0)
    runtime = Runtime(config=config, tools=[add], provider=FunctionProvider(_model()))
    chat = runtime.chat(run_id=run_id)
    questions = ["What is 2 + 3?", "Pin the units.", "Run a tool that is not there.", "Are you there?", "And now?"]
    questions += [f"Question {i}: tell me more about item {i}. " + "context " * 30 for i in range(6)]
    for q in questions:
        with contextlib.suppress(Exception):
            chat.send_sync(q)
    chat.close()
    runtime.close()
    return folder / f"{run_id}.jsonl"


def _masked_line(line: str, folder: Path) -> str:
    obj = json.loads(line)
    where = str(folder)

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("<masked>" if k in _VOLATILE else walk(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return _TS.sub("<ts>", value.replace(where, "<dir>")) if isinstance(value, str) else value

    return json.dumps(walk(obj), sort_keys=True)


def _spans(path: Path) -> list[str]:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from arcana_jupyter.trace import TraceReader, otel

    exporter = InMemorySpanExporter()
    pipeline = otel.OtelPipeline("http://127.0.0.1:9", exporter=exporter)
    reader = TraceReader(path)
    stats = otel.export_events(reader.events(path.stem), pipeline, timeout=10)
    pipeline.shutdown(1.0)
    rows = [json.dumps({k: v for k, v in stats.items() if k != "endpoint"}, sort_keys=True)]
    for span in exporter.get_finished_spans():
        attrs = {k: v for k, v in (span.attributes or {}).items() if "latency" not in k and "cost" not in k}
        rows.append(json.dumps({
            "name": span.name, "trace": f"{span.context.trace_id:032x}", "span": f"{span.context.span_id:016x}",
            "parent": f"{span.parent.span_id:016x}" if span.parent else None, "kind": str(span.kind),
            "status": str(span.status.status_code), "attrs": {k: list(v) if isinstance(v, tuple) else v
                                                              for k, v in sorted(attrs.items())},
            "events": [(e.name, dict(e.attributes or {})) for e in span.events],
        }, sort_keys=True, default=str))
    return sorted(rows)


def _replay(path: Path) -> list[str]:
    from arcana_jupyter.providers.recorded import ReplayProvider

    provider = ReplayProvider(path.parent, path.stem)
    rows = [provider.model_name, provider.recorded_provider, repr(provider.initial_margin(None)),  # type: ignore[arg-type]
            repr(sorted(provider.recorded_user_actions()))]
    for event in provider.script:
        rows.append(f"{event.event_type} {event.event_id} turn={event.turn}")
        if event.event_type == "llm_call":
            rows.append(repr(provider._response(event, 1)))  # type: ignore[arg-type]
        else:
            exc = provider.recorded_error(event)  # type: ignore[arg-type]
            rows.append(f"{type(exc).__name__}: {exc}")
    return rows


def _cli(path: Path) -> list[str]:
    from arcana_jupyter.cli import main

    run = path.stem
    where = ["--dir", str(path.parent)]
    commands = [["trace", "list"], ["trace", "show", run], ["trace", "show", run, "--json"],
                ["trace", "show", run, "--cognitive", "--context", "--errors"],
                ["trace", "replay", run], ["trace", "replay", run, "--turn", "2"],
                ["trace", "replay", run, "--turn", "4", "--json"], ["trace", "replay", run, "--turn", "9"],
                ["trace", "rebuild", run, "--turn", "3"], ["trace", "rebuild", run, "--turn", "9", "--json"],
                ["trace", "rebuild", run, "--turn", "8", "--strategy", "aggressive_truncate", "--window", "700"],
                ["trace", "show", "no_such_run"], ["trace", "show", str(path.parent / "missing.jsonl")]]
    rows = []
    for argv in commands:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([*argv, *where])
        text = f"$ {' '.join(argv)}\nexit {code}\n{out.getvalue()}\n{err.getvalue()}"
        text = text.replace(str(path.parent), "<dir>")
        rows.append(re.sub(r'"latency_ms": [0-9.e-]+', '"latency_ms": <masked>', _TS.sub("<ts>", text)))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--keep", type=Path, default=None, help="write the hashed texts to this folder")
    args = parser.parse_args(argv)
    parts: dict[str, list[str]] = {}
    # a folder of this run's own (runs at the same time don't share it); the trace records it
    # (run_start's trace_dir), so it is masked as <dir> like the CLI's outputs
    tmp = Path(tempfile.mkdtemp(prefix="arcana_scripted_trace_digest_"))
    try:
        for engine in (False, True):
            mode = "adaptive" if engine else "classic"
            path = _session(Path(tmp) / mode, f"r_20261201_000000_{'ad' if engine else 'c1'}0000", engine)
            parts[f"{mode}.trace"] = [_masked_line(x, path.parent) for x in path.read_text().splitlines() if x.strip()]
            parts[f"{mode}.spans"] = _spans(path)
            parts[f"{mode}.replay"] = _replay(path)
            parts[f"{mode}.cli"] = _cli(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total = hashlib.sha256()
    for name, rows in parts.items():
        text = "\n".join(rows)
        digest = hashlib.sha256(text.encode()).hexdigest()
        total.update(digest.encode())
        print(f"{name:<18} {len(rows):>4} rows  {digest[:16]}")
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / f"{name}.txt").write_text(text)
    print(f"{'all':<18} {'':>9}  {total.hexdigest()[:16]}")


if __name__ == "__main__":
    sys.exit(main())
