"""Prompt-prefix reuse of the runtime in steady state: the figure the builder must keep >= 80%.

Run: ``python -m benchmarks.retention.reuse --turns 300 [--embeddings off|auto|both]``.
Runs :mod:`benchmarks.bench_runtime`'s
classic session (16k window, instant model) and reads every ``context_decision`` of the trace:
reuse = prefix tokens repeated from the previous build / that build's prompt tokens, averaged over
the second half of the turns (steady state: the history no longer fits and is compressed).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import tempfile
from pathlib import Path

from arcana_jupyter.trace.reader import TraceReader
from benchmarks.bench_runtime import session


def reuse(turns: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(session(turns, False, Path(tmp)))
        rows = []
        # through the reader: a chained decision (trace encoding 2) records its report and budget as
        # patches of the previous decision's, so the raw lines do not hold them
        reader = TraceReader(Path(tmp), shared=False)
        for run_id in reader.run_ids():
            for rec in reader.decision_records(run_id, only=()):
                rep = rec.metadata.get("report") or {}
                rows.append((rec.turn, rep.get("total_after"), rep.get("prefix_tokens_reused"),
                             (rec.metadata.get("budget") or {}).get("utilization")))
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
    parser.add_argument("--embeddings", choices=("off", "auto", "both"), default="both",
                        help="the session's relevance (RuntimeConfig.embeddings=auto, or ARCANA_EMBEDDINGS=off)")
    args = parser.parse_args()
    from arcana_jupyter.context.embeddings import default_embedder

    modes = ["off", "auto"] if args.embeddings == "both" else [args.embeddings]
    for mode in modes:
        old = os.environ.get("ARCANA_EMBEDDINGS")
        if mode == "off":
            os.environ["ARCANA_EMBEDDINGS"] = "off"
        elif default_embedder() is None:
            print("embeddings: the embedding model is not installed here, skipped")
            continue
        try:
            r = reuse(args.turns)
        finally:
            if old is None:
                os.environ.pop("ARCANA_EMBEDDINGS", None)
            else:
                os.environ["ARCANA_EMBEDDINGS"] = old
        label = "lexical" if mode == "off" else "with embeddings"
        print(f"{label}: prefix reuse over {args.turns} turns: mean {r['mean_all']:.1%}; steady state (second half, "
              f"{r['n']:.0f} builds) mean {r['mean_steady']:.1%}, median {r['median_steady']:.1%}", flush=True)


if __name__ == "__main__":
    main()
