"""What the ``prompt_sent`` encoder costs per call: a recorded session's prompts encoded again, in order,
against the history as it was at each call (trace/prompt_sent.py, ``PromptSentEncoder``).

Run: ``python -m benchmarks.bench_prompt_sent TRACE.jsonl [--windows 1-100,901-1000]``. The prompts are
the trace's own (resolved by the reader), the history its recorded messages; each call's CPU time
(``time.process_time``) and wall time are measured around ``encode`` + ``written``, per window of turns,
with the bytes of what it encodes (the ``messages`` and ``tokens`` fields).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from arcana_jupyter.messages import Message, as_message
from arcana_jupyter.trace.prompt_sent import PromptSentEncoder
from arcana_jupyter.trace.reader import TraceReader
from arcana_jupyter.trace.redact import Redactor


def measure(path: Path, windows: list[tuple[int, int]]) -> dict[tuple[int, int], dict[str, float]]:
    reader = TraceReader(path.parent, shared=False)
    prompts = {p.event_id: p for p in reader.prompts_sent(path.stem) if p.step >= 0}
    history: list[Message] = []
    known: dict[tuple[Any, ...], Message] = {}  # the same message, the same object (as in the runtime)
    enc = PromptSentEncoder(redact=Redactor("full").redact_text)
    runs: dict[tuple[int, int], dict[str, list[float]]] = {w: {"cpu": [], "wall": [], "bytes": []} for w in windows}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            event = json.loads(line)
            meta: Any = event.get("metadata")  # JSON edge: as written
            if isinstance(meta, dict) and isinstance(meta.get("history_index"), int) and isinstance(
                    meta.get("message"), dict) and meta["history_index"] == len(history):
                history.append(_message({**meta["message"], "content": meta["message"].get("content") or ""}, known))
            elif event.get("event_type") == "run_start" and not history:
                history.append(Message(role="system", content=str(meta.get("system_prompt") or "")))
            sent = prompts.get(event.get("event_id"))
            if sent is None:
                continue
            messages = [_message(m, known) for m in sent.messages]
            tokens = [t if isinstance(t, int) else 0 for t in sent.tokens]
            wall, cpu = time.perf_counter(), time.process_time()
            out = enc.encode(step=sent.step, digest=sent.recorded_digest, messages=messages, history=history,
                             tokens=tokens)
            enc.written(event["event_id"])
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            for w, run in runs.items():
                if w[0] <= sent.turn <= w[1]:
                    run["cpu"].append(cpu * 1000)
                    run["wall"].append(wall * 1000)
                    run["bytes"].append(len(json.dumps([out["messages"], out.get("tokens")], separators=(",", ":"))))
    return {w: {"calls": len(r["cpu"]), "cpu_ms_mean": statistics.fmean(r["cpu"]),
                "cpu_ms_median": statistics.median(r["cpu"]), "cpu_ms_max": max(r["cpu"]),
                "wall_ms_mean": statistics.fmean(r["wall"]), "bytes_mean": statistics.fmean(r["bytes"])}
            for w, r in runs.items() if r["cpu"]}


def _message(wire: dict[str, Any], known: dict[tuple[Any, ...], Message]) -> Message:  # JSON edge: wire
    """The message of ``wire``, the same object for the same message: the runtime hands the encoder the
    history's own messages (their ``content_key`` computed once), not new ones every call."""
    key = (wire.get("role"), wire.get("content"), wire.get("tool_call_id"), wire.get("name"),
           json.dumps(wire.get("tool_calls"), sort_keys=True) if wire.get("tool_calls") else None)
    found = known.get(key)
    if found is None:
        found = known[key] = as_message(wire)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--windows", default="1-100,901-1000")
    args = parser.parse_args()
    windows = [(int(a), int(b)) for a, b in (w.split("-") for w in args.windows.split(","))]
    print(f"load {os.getloadavg()[0]:.1f}")
    for (lo, hi), r in measure(args.trace, windows).items():
        print(f"turns {lo}-{hi}: {r['calls']} calls; encode CPU {r['cpu_ms_mean']:.3f} ms mean, "
              f"{r['cpu_ms_median']:.3f} median, {r['cpu_ms_max']:.2f} max; wall {r['wall_ms_mean']:.3f} ms mean; "
              f"{r['bytes_mean']:.0f} bytes (messages + tokens) per call")


if __name__ == "__main__":
    main()
