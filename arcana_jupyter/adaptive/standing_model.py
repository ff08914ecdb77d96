"""The learned half of the standing-instruction recogniser: a logistic regression over a sentence's embedding.

The rules of :mod:`.standing` fit the wordings they were written against; on a blind split written apart from
them they found about half of the instructions (benchmarks/results/standing.md). This model reads the
sentences the rules leave as a plain statement or a request for this turn (``statement``, ``no_scope``) and
keeps those whose embedding says "a lasting instruction, preference or constraint": "For the next few weeks,
please answer me in German" has no scope word the rules know. Everything the rules reject for a reason —
a question, quoted words, a one-off, chit-chat, an instruction for someone else — stays rejected.

The weights (``data/standing_model.json``) are trained by ``python -m benchmarks.retention.train_standing`` on the
dev and test splits of the standing set, the labelled sentences of tests/adaptive/standing_cases.py and sentence
sets written apart (its docstring says which, and how the bars were chosen); they
belong to one embedding model (its ``name@version``), and a session whose relevance uses another one, or
none (``embeddings="off"``), runs the rules alone. A session's findings are recorded as events, so a resumed
run or ``report --verify`` never reads a sentence again.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

MODEL_FILE = Path(__file__).parent / "data" / "standing_model.json"


class StandingModel:
    """``model(sentence)``: whether the sentence's embedding reads as a standing instruction."""

    def __init__(self, embed: Callable[[str], Any], weights: list[float], bias: float, threshold: float,
                 ident: str, lenient_threshold: float | None = None) -> None:
        import numpy as np

        self._np = np
        self.embed = embed
        self.weights = np.asarray(weights, dtype=np.float64)
        self.bias = float(bias)
        self.threshold = float(threshold)
        self.lenient_threshold = float(threshold if lenient_threshold is None else lenient_threshold)
        """The bar for a sentence that says a liking in the first person ("I'd rather see medians than means"): the
        form already says "for good", the reader only has to say it is about the work."""
        self.ident = ident
        """The embedding model the weights belong to (``name@version``)."""

    def score(self, sentence: str) -> float:
        """The probability that ``sentence`` states something meant to hold for good."""
        vec = self._np.asarray(self.embed(sentence), dtype=self._np.float64).reshape(-1)
        if vec.shape != self.weights.shape:
            return 0.0
        z = float(vec @ self.weights) + self.bias
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def __call__(self, sentence: str) -> bool:
        return self.score(sentence) >= self.threshold

    def lenient(self, sentence: str) -> bool:
        """:meth:`__call__` at :attr:`lenient_threshold`."""
        return self.score(sentence) >= self.lenient_threshold


@lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(MODEL_FILE.read_text())
    return data


def standing_model(embed: Callable[[str], Any] | None, ident: str | None) -> StandingModel | None:
    """The shipped model over ``embed`` (an embedding model's ``embed``, or an embedding store's ``get``) when
    ``ident`` names the embedding model its weights were trained for; else ``None`` (the rules alone)."""
    if embed is None or ident is None:
        return None
    data = _shipped()
    if data.get("embedder") != ident:
        return None
    return StandingModel(embed, data["weights"], data["bias"], data["threshold"], ident,
                         data.get("lenient_threshold"))


__all__ = ["MODEL_FILE", "StandingModel", "standing_model"]
