"""Long runs, paired in one process: the engine's probe build on and off, turn by turn, and the collector's time.

Run: ``python -m benchmarks.bench_long_turns --turns 2000`` (prints; writes nothing). Twice at once, one with
``ARCANA_GC_FREEZE=1``, compares the heap freezing of runtime/gc_policy.py (off by default) under the same load.

The session is ``benchmarks/bench_frames.py``'s (the ``Runtime()`` defaults, an 8k window, an instant model
that calls the tool every 10th turn, a pin every 25 turns). In each window of turns (``--windows``, default
901-1000 and 1901-2000) the even turns build without the probe (``WorkingSetBuilder.abuild(probe=False)``):
a probe changes no decision, so the session is the same either way, and both halves are timed under the
same load — on a shared machine CPU time (``time.process_time``) is inflated by the load too, and two runs
at different moments do not compare. Per window: the median CPU per turn with and without the probe, the
mean over all its turns, the wall median, and the time spent in garbage collections (``gc.callbacks``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arcana_jupyter.context.builder import WorkingSetBuilder
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from benchmarks.bench_runtime import answer, lookup


class _Collector:
    """CPU milliseconds spent in garbage collections so far."""

    def __init__(self) -> None:
        self.ms = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.ms += (time.process_time() - self._start) * 1000


async def run(turns: int, windows: list[tuple[int, int]], folder: Path) -> dict[str, dict[str, list[float]]]:
    probing = {"on": True}
    full_build = WorkingSetBuilder.abuild

    async def abuild(self: WorkingSetBuilder, *args: Any, probe: bool = False, **kwargs: Any) -> Any:
        return await full_build(self, *args, probe=probe and probing["on"], **kwargs)

    collector = _Collector()
    gc.callbacks.append(collector)
    WorkingSetBuilder.abuild = abuild  # type: ignore[method-assign]
    out: dict[str, dict[str, list[float]]] = {}
    try:
        runtime = Runtime(config=RuntimeConfig(trace_dir=folder, total_window=8192), tools=[lookup],
                          provider=FunctionProvider(answer, keep_requests=1))
        async with runtime.chat() as chat:
            pinned: dict[int, str] = {}
            for i in range(1, turns + 1):
                window = next((w for w in windows if w[0] <= i <= w[1]), None)
                probing["on"] = not (window is not None and i % 2 == 0)
                if i % 25 == 5:
                    pin = chat.pin(f"fact {i}: region {i % 17} targets {i * 3}", label=f"f{i}")
                    pinned[i + 10] = str(pin["pin_id"])
                if i in pinned:
                    chat.unpin(pinned.pop(i))
                text = (f"turn {i}: please lookup the figures for region {i % 17}" if i % 10 == 0
                        else f"turn {i}: what changed in region {i % 17} since last week?")
                gc_before, cpu, wall = collector.ms, time.process_time(), time.perf_counter()
                await chat.send(text)
                cpu, wall = (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000
                if window is not None:
                    r = out.setdefault(f"{window[0]:,}-{window[1]:,}",
                                       {"on": [], "off": [], "wall": [], "gc": [], "load": []})
                    r["on" if probing["on"] else "off"].append(cpu)
                    r["wall"].append(wall)
                    r["gc"].append(collector.ms - gc_before)
                    r["load"].append(os.getloadavg()[0])
                if i % 100 == 0:
                    print(f"long_turns: turn {i:,}/{turns:,}", file=sys.stderr, flush=True)
    finally:
        WorkingSetBuilder.abuild = full_build  # type: ignore[method-assign]
        gc.callbacks.remove(collector)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--windows", default="901-1000,1901-2000", help="turn windows timed, e.g. 901-1000")
    args = parser.parse_args()
    windows = [(int(a), int(b)) for a, b in (w.split("-") for w in args.windows.split(","))]
    if any(b - a < 3 or b > args.turns for a, b in windows):
        raise SystemExit(f"--windows: each window within 1..{args.turns} and at least 4 turns long")
    with tempfile.TemporaryDirectory() as tmp:
        results = asyncio.run(run(args.turns, windows, Path(tmp)))
    freeze = os.environ.get("ARCANA_GC_FREEZE", "0")
    for name, r in results.items():
        both = r["on"] + r["off"]
        print(f"turns {name}: CPU median with the probe {statistics.median(r['on']):.1f} ms, without "
              f"{statistics.median(r['off']):.1f} ms (all: median {statistics.median(both):.1f}, mean "
              f"{statistics.mean(both):.1f}); wall median {statistics.median(r['wall']):.1f} ms; GC "
              f"{statistics.mean(r['gc']):.1f} ms/turn (largest {max(r['gc']):.0f}); load "
              f"{statistics.mean(r['load']):.1f}; ARCANA_GC_FREEZE={freeze}", flush=True)


if __name__ == "__main__":
    main()
