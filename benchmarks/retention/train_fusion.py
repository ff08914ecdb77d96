"""Train the learned fusion (arcana_jupyter/context/learned_fusion.py): a logistic model over what the builder
knows of each history message, fitted to say which messages hold a question's evidence.

Run: ``python -m benchmarks.retention.train_fusion [--vectors DIR]``: leave-one-conversation-out recall on the
dev splits (the learned order against the RRF fusion it replaces), then the weights fitted on all of them,
printed as a ``MODELS`` entry. Deterministic (Newton's method from zero weights). Nothing is written: a new
version is pasted into ``MODELS`` by hand, and a published version never changes (recorded builds name it).

Data: every question of ``data/talks_dev.json`` (8 conversations) and ``data/chats_dev.json`` (6), each asked
after the whole conversation; a message is positive when it holds the question's evidence. Never the test
splits: they measure it (``python -m benchmarks.retention.ranking`` and ``conversations``).

``--features 11`` fits version 1's features (it prints version 1's weights again); the default, all of them,
version 2's.

How the versions were chosen (leave one conversation out, recall of the evidence within the best 1,000 / 2,000 /
3,000 tokens, the dev splits' first three conversations, as ``ranking --limit 3`` reads them; RRF is the
fusion version 1 replaced):

| features | talks_dev | chats_dev |
| --- | --- | --- |
| RRF (``rrf:bm25=0.3,...,head=0.6``) | 0.76 / 0.89 / 0.94 | 0.75 / 0.86 / 0.90 |
| the 11 of version 1 | 0.78 / 0.89 / 0.94 | 0.81 / 0.89 / 0.93 |
| version 2: and ``zc``, the cosine with the question's core | 0.82 / 0.91 / 0.96 | 0.84 / 0.90 / 0.93 |
| every dev conversation, version 1 | 0.78 / 0.87 / 0.92 | 0.82 / 0.90 / 0.93 |
| every dev conversation, version 2 | 0.81 / 0.89 / 0.93 | 0.84 / 0.91 / 0.93 |

- Version 2's ``zc`` (:func:`~arcana_jupyter.context.relevance.question_core`): "Would Rosalind enjoy a
  visit to a botanical garden?" embedded as ``visit botanical garden``, a second view of the question beside the
  whole one. Open questions gain most (talks_dev 0.43 / 0.71 / 0.79 -> 0.52 / 0.76 / 0.88). Tried beside it: the
  core's gap and rank too (the same), the core summed into the question's vector instead of a feature (0.81 /
  0.91 / 0.96, 0.83 / 0.90 / 0.93), the core as a phrase with its stop words (0.81 / 0.90 / 0.96, 0.83 / 0.90 /
  0.93); pseudo-relevance feedback (the cosine with the centroid of the best 3-10 messages, or the best of them):
  within 0.01 either way.
| survey: RRF's match, other speaker, length (3) | 0.77 / 0.88 / 0.96 | 0.79 / 0.88 / 0.92 |
| survey: the 11 without the length | 0.75 / 0.88 / 0.95 | 0.76 / 0.87 / 0.90 |

(The survey rows come from a scratch script that ranked every message and counted the length in tokens.)

- The length of a message is most of the gain: evidence turns have a median of 53-58 tokens, the others 35-44;
  a short reaction ("haha, same!") whose one sentence happens to sit close to the question is rarely what it
  needs. It is counted in words, so the model is the same whatever tokenizer the session counts with.
- A message's place in the conversation helped talks_dev (0.81 at 1,000 tokens) and was left out: in our
  generated conversations the facts come early, which says nothing of a user's.
- L2 1 or 30 gave the same recall within 0.002; 240 candidates lose nothing against ranking every message.
- Tried and not kept (same protocol): the neighbours two or three messages away, the mean of a message's
  sentence cosines, the square of its z-score, the z-score times "another speaker", the coverage itself (each
  within 0.01 either way); ordering by probability per token (``p / tokens^0.3``: chats_dev 0.81 -> 0.70 at
  1,000 tokens); a one-hidden-layer network (16 tanh units) over the same features: chats_dev the same (0.81 /
  0.90 / 0.92), talks_dev worse (0.75 / 0.85 / 0.90).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context import learned_fusion as lf
from arcana_jupyter.context.build import Build
from arcana_jupyter.context.recall import RECALL_MIN_BM25
from arcana_jupyter.context.relevance import SEMANTIC_MIN
from benchmarks.retention.ranking import evidence_positions, history_of, ranked, within

HERE = Path(__file__).parent
DEV = [HERE / "data" / "talks_dev.json", HERE / "data" / "chats_dev.json"]
CUTS = (1000, 2000, 3000)
L2 = 1.0
LEARNED = "learned:parts=1,sentences=1,names=1,model=1"
"""How the features are computed (the weights are the ones being fitted)."""
RRF = "rrf:bm25=0.3,semantic=1,k=60,bm25_hi=0.3,gate_lo=1,gate_hi=1,head=0.6,parts=1,sentences=1,names=1"


def questions(files: list[Path], cache: Path) -> list[dict[str, Any]]:
    """Per question: its features, labels, token counts, what the fusion needs, and RRF's order."""
    out: list[dict[str, Any]] = []
    for path in files:
        for ci, conv in enumerate(json.loads(path.read_text())):
            history = history_of(conv)
            builder = WorkingSetBuilder(budget=TokenBudget(total_window=10**7, response_reserve=0),
                                        embedding_cache=cache, embedder="auto", fusion=LEARNED)
            rrf = WorkingSetBuilder(budget=TokenBudget(total_window=10**7, response_reserve=0),
                                    embedding_cache=cache, embedder="auto", fusion=RRF)
            tokens = [builder.counter.count_message(m) for m in history]
            where = evidence_positions(conv, history)
            for q in conv["questions"]:
                build = Build(builder, builder._cache, history, q["question"], None, (), (), (), None, 0, None, None)
                got: dict[str, Any] = {}
                original = build.fusion_features

                def grab(sims: Any, lexical: dict[int, float], coverage: dict[int, float], named: frozenset[str],
                         core: Any = None, original: Any = original, got: dict[str, Any] = got,
                         build: Build = build, question: str = q["question"]) -> Any:
                    # every feature, the question core's cosines included, whatever version LEARNED names
                    x = original(sims, lexical, coverage, named, build.core_sims(question, named))
                    got.update(x=x, sims=sims, lexical=lexical, named=named)
                    return x[:, :len(lf.MODELS[build.builder.fusion.model][0])]

                build.fusion_features = grab  # type: ignore[method-assign]
                build.relevance(True)
                y = np.zeros(len(got["sims"]))
                need = [where[e] for e in q["evidence"]]
                y[need] = 1
                out.append({**got, "y": y, "need": need, "tokens": tokens, "index": build.index,
                            "file": path.stem, "conv": ci, "rrf": ranked(rrf, history, q["question"]),
                            "weight": builder.speaker_weight})
            print(f"{path.stem} {ci}: {len(out)} questions", file=sys.stderr)
    return out


def fit(x: Any, y: Any, l2: float = L2, steps: int = 50) -> tuple[Any, float]:
    """Class-balanced, L2-penalised logistic regression by Newton's method (standardised features)."""
    mean, sd = x.mean(0), x.std(0) + 1e-9
    xn = np.hstack([(x - mean) / sd, np.ones((len(x), 1))])
    pos = y.sum()
    ws = np.where(y > 0, 0.5 / pos, 0.5 / (len(y) - pos))
    w = np.zeros(xn.shape[1])
    reg = np.full(xn.shape[1], l2 / len(y))
    reg[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xn @ w)))
        hessian = (xn * (ws * p * (1 - p))[:, None]).T @ xn + np.diag(reg)
        step = np.linalg.solve(hessian, xn.T @ ((p - y) * ws) + reg * w)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1] / sd, float(w[-1] - (mean / sd) @ w[:-1])


def recall(order: list[int], q: dict[str, Any]) -> list[float]:
    return within(order, q["tokens"], q["need"], CUTS)


def learned_order(q: dict[str, Any], weights: Any, bias: float) -> list[int]:
    lf.MODELS[-1] = (tuple(float(v) for v in weights), bias)
    match, via = lf.learned_match(q["x"], q["lexical"], q["sims"], -1, SEMANTIC_MIN, RECALL_MIN_BM25)
    match = q["index"].speaker_prior(match, q["named"], q["weight"])
    keep = [i for i in match if i > 0 and not (via[i] == "bm25" and q["lexical"].get(i, 0.0) < RECALL_MIN_BM25)]
    return sorted(keep, key=lambda i: (-match[i], i))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=Path, default=Path(".bench-vectors"), help="where computed vectors are kept")
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--features", type=int, default=len(lf.FEATURES),
                        help=f"fit the first N of {', '.join(lf.FEATURES)} (11: version 1's)")
    args = parser.parse_args(argv)
    data = questions(DEV, args.vectors)
    for q in data:
        q["x"] = q["x"][:, : args.features]
    convs = sorted({(q["file"], q["conv"]) for q in data})
    rows: dict[tuple[str, str], list[list[float]]] = defaultdict(list)
    for held in convs:
        train = [q for q in data if (q["file"], q["conv"]) != held]
        w, b = fit(np.concatenate([q["x"][1:] for q in train]), np.concatenate([q["y"][1:] for q in train]), args.l2)
        for q in data:
            if (q["file"], q["conv"]) == held:
                for name, sub in ((q["file"], "all"), (q["file"] + "[:3]", "first 3")):
                    if sub == "all" or q["conv"] < 3:
                        rows[(name, "learned")].append(recall(learned_order(q, w, b), q))
                        rows[(name, "rrf")].append(recall(q["rrf"], q))
    print("| data | fusion | n | " + " | ".join(f"recall@{c:,}" for c in CUTS) + " |")
    print("| --- | --- | ---: | " + " | ".join("---:" for _ in CUTS) + " |")
    for (name, how), vals in sorted(rows.items()):
        print(f"| {name} | {how} | {len(vals)} | "
              + " | ".join(f"{statistics.fmean(v[k] for v in vals):.3f}" for k in range(len(CUTS))) + " |")
    w, b = fit(np.concatenate([q["x"][1:] for q in data]), np.concatenate([q["y"][1:] for q in data]), args.l2)
    print("\n" + ", ".join(f"{name}={v:.3f}" for name, v in zip(lf.FEATURES, w, strict=False)))
    print(f"MODELS entry: (({', '.join(f'{v:.3f}' for v in w)}), {b:.3f})")


if __name__ == "__main__":
    main()
