"""Prompt-prefix reuse of the runtime in steady state: the figure the builder must keep >= 80%.

Run: ``python -m benchmarks.retention.reuse --turns 300``. Runs :mod:`benchmarks.bench_runtime`'s
classic session (16k window, instant model) and reads every ``context_decision`` of the trace:
reuse = prefix tokens repeated from the previous build / that build's prompt tokens, averaged over
the second half of the turns (steady state: the history no longer fits and is compressed).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import tempfile
from pathlib import Path

from benchmarks.bench_runtime import session


def reuse(turns: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(session(turns, False, Path(tmp)))
        rows = []
        for f in Path(tmp).rglob("*.jsonl"):
            for line in f.read_text().splitlines():
                ev = json.loads(line)
                if ev.get("event_type") == "context_decision":
                    rep = ev["metadata"].get("report") or {}
                    rows.append((ev["turn"], rep.get("total_after"), rep.get("prefix_tokens_reused"),
                                 (ev["metadata"].get("budget") or {}).get("utilization")))
    rows.sort(key=lambda r: r[0] or 0)
    shares = []
    for prev, cur in itertools.pairwise(rows):
        if prev[1] and cur[2] is not None:
            shares.append((cur[0], cur[2] / prev[1]))
    steady = [s for t, s in shares if t and t > turns // 2]
    return {"mean_all": statistics.fmean(s for _, s in shares), "mean_steady": statistics.fmean(steady),
            "median_steady": statistics.median(steady), "n": len(steady)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    r = reuse(args.turns)
    print(f"prefix reuse over {args.turns} turns: mean {r['mean_all']:.1%}; steady state (second half, "
          f"{r['n']:.0f} builds) mean {r['mean_steady']:.1%}, median {r['median_steady']:.1%}")


if __name__ == "__main__":
    main()
