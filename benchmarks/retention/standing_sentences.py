"""The standing-instruction recogniser on single sentences written apart from it: the rules alone, and with the
learned reader a session with the bundled embedding model gets.

Run: ``python -m benchmarks.retention.standing_sentences [FILE ...]`` (default: the two sentence sets and the two
change sets below; prints a markdown table).

The files were written by separate sessions that never saw the rules, the reader or the other data: 150
sentences that state a standing instruction, preference or constraint, 250 that must not be kept (requests for
this turn, questions, chit-chat, one-offs, the past, quoted words, instructions for someone else,
hypotheticals, complaints, statements) and 30 changes (a later sentence that revises or revokes an earlier
one). ``standing_sentences_dev.json`` then became development data (the reader trains on it:
``train_standing.py``); ``standing_sentences_test.json`` is measured, never read for tuning.

Two more sets, of changes only, were written the same way later (``standing_changes_dev.json``, tuned on;
``standing_changes_test.json``, measured, never read): 50 revisions, 30 revocations and 30 **unrelated** pairs
each — a later standing item about something else, after which the earlier one must still hold.

Each sentence is given alone, as a user message, to a fresh engine (``AdaptiveEngine.begin_turn``): **found**
when the engine keeps a standing object, **kept** (of the ones that must not be) likewise; a **change** is
applied when, after the earlier sentence (turn 1) and the later one (turn 2), the earlier object is retracted
and — for a revision — a new live one replaces it; an unrelated pair is right when the earlier object is still
live. A change is counted only when the earlier sentence was kept (``of N kept``: how many were).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arcana_jupyter.adaptive import AdaptiveEngine
from arcana_jupyter.adaptive.standing_model import standing_model
from arcana_jupyter.context.embeddings import EmbeddingStore, default_embedder

HERE = Path(__file__).parent
DEFAULT_FILES = [HERE / "data" / f"standing_{name}.json"
                 for name in ("sentences_dev", "sentences_test", "changes_dev", "changes_test")]


def engine_with(reader: Callable[[str], bool] | None) -> AdaptiveEngine:
    engine = AdaptiveEngine()
    engine.standing_reader = reader
    return engine


def measure(data: dict[str, Any], reader: Callable[[str], bool] | None) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {k: Counter() for k in ("found", "items", "kept", "traps", "applied", "changes",
                                                           "stated")}
    for rec in data.get("standing", []):
        engine = engine_with(reader)
        engine.begin_turn(1, rec["text"])
        out["items"][rec["kind"]] += 1
        out["found"][rec["kind"]] += bool(engine.standing())
    for rec in data.get("not_standing", []):
        engine = engine_with(reader)
        engine.begin_turn(1, rec["text"])
        out["traps"][rec["why"]] += 1
        out["kept"][rec["why"]] += bool(engine.standing())
    for rec in data.get("changes", []):
        engine = engine_with(reader)
        engine.begin_turn(1, rec["earlier"])
        first = engine.standing()
        engine.begin_turn(2, rec["later"])
        change = rec["change"]
        out["changes"][change] += 1
        if len(first) == 1:
            out["stated"][change] += 1
            old = next(o for o in engine.audit_objects() if o.id == first[0].id)
            new = [o for o in engine.standing() if o.id != old.id]
            out["applied"][change] += (not old.retracted if change == "unrelated"
                                       else old.retracted and (change == "revoke" or bool(new)))
    return out


def row(name: str, m: dict[str, Counter[str]]) -> str:
    found, items, kept, traps = (sum(m[k].values()) for k in ("found", "items", "kept", "traps"))
    applied = ", ".join(f"{k} {m['applied'][k]}/{m['stated'][k]} (of {m['changes'][k]}, {m['stated'][k]} kept)"
                        for k in sorted(m["changes"]))
    if not items:  # a set of changes only
        return f"| {name} | {applied} |"
    by_kind = ", ".join(f"{k} {m['found'][k]}/{m['items'][k]}" for k in sorted(m["items"]))
    worst = ", ".join(f"{k} {m['kept'][k]}/{m['traps'][k]}" for k in sorted(m["traps"]) if m["kept"][k])
    precision = found / (found + kept) if found + kept else 0.0
    return (f"| {name} | {found}/{items} ({found / items:.2f}; {by_kind}) | {kept}/{traps} ({worst or 'none'}) | "
            f"{precision:.2f} | {applied} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--vectors", type=Path, default=Path(".bench-vectors"), help="where computed vectors are kept")
    args = parser.parse_args(argv)
    embedder = default_embedder()
    store = EmbeddingStore(embedder, args.vectors) if embedder is not None else None
    reader = standing_model(store.get, store.ident) if store is not None else None
    for path in args.files:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("standing"):
            print(f"## {path.name}\n\n| recogniser | standing found | not standing, kept | precision | "
                  "changes applied |\n| --- | --- | --- | ---: | --- |")
        else:
            print(f"## {path.name}\n\n| recogniser | changes applied (of the pairs whose earlier item was kept) |\n"
                  "| --- | --- |")
        print(row("rules alone (`embeddings=\"off\"`)", measure(data, None)))
        if reader is not None:
            print(row("rules + learned reader (`Runtime()` default)", measure(data, reader)))
        print()


if __name__ == "__main__":
    main()
