"""Seconds per turn on the bundled model: the default mode beside classic, same conversation.

Run: ``python -m benchmarks.bench_local_modes [--window 2048] [--turns 16]`` (writes
``benchmarks/results/local_modes.md``).

The conversation is the README tour's eight ``%%arcana`` cells (three pasted pages) followed by
short follow-up questions, sent through ``ChatSession.send`` to the bundled SmolLM2-135M
(``--model local``, in-process llama.cpp, replies capped at 48 tokens, temperature 0). Each mode
runs in a fresh session, one after the other in the same process (the model is loaded once and its
KV cache is reset between sessions by the new prompts). What differs between the modes is what the
prompt holds and how much of it repeats the previous prompt's start — llama.cpp re-evaluates only
the tokens after the common prefix, so the prefix reuse drives the time per turn.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from arcana_jupyter.runtime import Runtime, RuntimeConfig
from benchmarks._machine import cpu_model

ROOT = Path(__file__).resolve().parents[1]
FOLLOW_UPS = [
    "Which region grew fastest?", "What did the report say about costs?", "Summarise our discussion so far.",
    "Which store had problems?", "What should we look at next week?", "Give me one risk in a sentence.",
    "What was the third-quarter revenue?", "Thanks — anything else I should know?",
]


def tour_turns() -> list[str]:
    nb = json.loads((ROOT / "example-notebooks" / "tour.ipynb").read_text())
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return [c.split("\n", 1)[1] for c in cells if c.startswith("%%arcana\n")]


async def run(engine: bool, window: int, turns: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        config = RuntimeConfig(trace_dir=tmp, model="local", total_window=window, max_tokens=48, temperature=0,
                               context_engine=engine, embeddings="off")
        times: list[float] = []
        shares: list[float] = []
        async with Runtime(config=config).chat() as chat:
            reports: list[dict[str, Any]] = []
            chat.subscribe(lambda e: reports.append(e.metadata.get("report") or {})
                           if e.event_type == "context_decision" else None)
            statuses = []
            for text in turns:
                started = time.perf_counter()
                reply = await chat.send(text, raise_errors=False)
                times.append(time.perf_counter() - started)
                statuses.append(reply.status)
            shares = [r["prefix_share"] for r in reports if isinstance(r.get("prefix_share"), float | int)]
    return {"median_s": statistics.median(times), "total_s": sum(times), "ok": statuses.count("ok"),
            "turns": len(turns), "reuse": statistics.fmean(shares) if shares else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=2048)
    parser.add_argument("--turns", type=int, default=16)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "local_modes.md")
    args = parser.parse_args()
    turns = (tour_turns() + FOLLOW_UPS)[: args.turns]
    load = os.getloadavg()[0]
    rows = []
    results = {}
    for engine in (False, True):
        r = results[engine] = asyncio.run(run(engine, args.window, turns))
        mode = "default (adaptive)" if engine else "classic"
        reuse = f"{r['reuse']:.0%}" if r["reuse"] is not None else "-"
        rows.append(f"| {mode} | {r['ok']} of {r['turns']} | {r['median_s']:.2f} | {r['total_s']:.1f} | {reuse} |")
        print(rows[-1], flush=True)
    ratio = results[True]["median_s"] / results[False]["median_s"]
    text = f"""# Seconds per turn on the bundled model: default mode beside classic

Command: `python -m benchmarks.bench_local_modes --window {args.window} --turns {args.turns}`
Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; machine: {os.cpu_count()} cores, {cpu_model()}, \\
Python {platform.python_version()}; load average at start {load:.2f}

The README tour's eight cells, then short follow-ups ({args.turns} turns in all), on SmolLM2-135M
(`--model local`), {args.window}-token window, replies capped at 48 tokens. See the module
docstring for the set-up.

| mode | turns answered | median s/turn | total s | mean prefix reuse |
| --- | ---: | ---: | ---: | ---: |
{chr(10).join(rows)}

Default over classic, median seconds per turn: **{ratio:.2f}x** (target: at most 1.2x).
"""
    args.out.write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
