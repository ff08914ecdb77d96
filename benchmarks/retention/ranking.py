"""How well the builder's relevance ranks the evidence of a question, apart from how a prompt is composed.

Run: ``python -m benchmarks.retention.ranking [FILE ...] [--limit N] [--config NAME=JSON ...]``
(default files: the dev splits ``data/talks_dev.json`` and ``data/chats_dev.json``; prints a table,
``--out PATH`` writes it as Markdown too).

For each conversation the history is what a session holds after its last turn (the system prompt,
then each exchange's user and assistant messages, as ``conversations.exchanges`` joins them); each
question is the current input of one build, and the builder's own relevance
(:meth:`~arcana_jupyter.context.build.Build.relevance`: BM25 with feedback, the speaker prior, the
cosine ranking and their fusion) ranks the earlier messages as the relevant block takes them: messages
BM25 alone found that score under ``RECALL_MIN_BM25`` are not candidates. **recall@T** is the share of
a question's evidence messages among the best-ranked messages whose tokens add up to at most ``T``
(the room a relevant block has at a budget: roughly 500 tokens at 1k, 1,000-1,500 at 4k, 2,000-3,000 at
8k), averaged over the questions, overall and by kind. No prompt is composed and no model is called,
so a configuration is compared in seconds (the vectors are cached in ``--cache``).

A configuration is builder keyword arguments as JSON: ``lexical={"embedder": null}``,
``speakers={"embedder": null, "speaker_weight": 2}``, ``semantic={"embedder": "auto", "fusion": "..."}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.context.build import Build
from arcana_jupyter.context.recall import RECALL_MIN_BM25
from arcana_jupyter.messages import Message
from benchmarks._machine import cpu_model
from benchmarks.retention.conversations import exchanges

HERE = Path(__file__).parent
DEFAULT_FILES = [HERE / "data" / "talks_dev.json", HERE / "data" / "chats_dev.json"]
CUTS = (500, 1000, 2000, 3000)
DEFAULT_CONFIGS = {
    "lexical": {"embedder": None, "speaker_weight": 0},
    "lexical+speakers": {"embedder": None},
    "semantic": {"embedder": "auto"},
}


def history_of(conv: dict[str, Any]) -> list[Message]:
    """The history a session holds after the conversation's last turn (system prompt first)."""
    out = [Message(role="system", content=conv.get("system") or "You are a helpful assistant.")]
    for k, (user, reply) in enumerate(exchanges(conv), 1):
        out.append(Message(role="user", content=user, turn=k))
        out.append(Message(role="assistant", content=reply, turn=k))
    return out


def evidence_positions(conv: dict[str, Any], history: list[Message]) -> dict[str, int]:
    """Each turn id -> the history message that holds its text."""
    where: dict[str, int] = {}
    for t in conv["turns"]:
        for i, m in enumerate(history):
            if t["content"] in m.content:
                where[t["id"]] = i
                break
    return where


def ranked(builder: WorkingSetBuilder, history: list[Message], question: str) -> list[int]:
    """The history messages in the order the relevant block would take them (best match first)."""
    build = Build(builder, builder._cache, history, question, None, (), (), (), None, 0, None, None)
    match, via, lexical = build.relevance(True)
    keep = {i: s for i, s in match.items()
            if i < len(history) and not (via.get(i) == "bm25" and lexical.get(i, 0.0) < RECALL_MIN_BM25)}
    return sorted(keep, key=lambda i: (-keep[i], i))


def within(order: list[int], tokens: list[int], need: list[int], cuts: tuple[int, ...]) -> list[float]:
    """For each cut, the share of ``need`` among the messages of ``order`` whose ``tokens`` add up to at most it."""
    at: dict[int, int] = {}
    total = 0
    for i in order:
        total += tokens[i]
        at[i] = total
    return [sum(1 for i in need if at.get(i, cut + 1) <= cut) / len(need) for cut in cuts]


def evaluate(files: list[Path], configs: dict[str, dict[str, Any]], limit: int | None, cache: Path | None,
             build_ms: dict[tuple[str, str], list[float]] | None = None,
             ) -> dict[tuple[str, str, str], dict[int, list[float]]]:
    """Recall at each cut per (configuration, file, kind); ``build_ms`` (when given) gets, per
    (configuration, file), the CPU milliseconds of a whole build at a 4k budget per question (the
    history as after the conversation, the builder warm: what a session's build for a new question costs)."""
    res: dict[tuple[str, str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for name, kwargs in configs.items():
        for path in files:
            for conv in json.loads(path.read_text())[:limit]:
                history = history_of(conv)
                builder = WorkingSetBuilder(budget=TokenBudget(total_window=10**7, response_reserve=0),
                                            embedding_cache=cache, **kwargs)
                timed = WorkingSetBuilder(budget=TokenBudget(total_window=5000, response_reserve=1000),
                                          embedding_cache=cache, **kwargs) if build_ms is not None else None
                if timed is not None:
                    timed.build(history)  # warm: the history's counts and index, as in a session
                counter = builder.counter
                tokens = [counter.count_message(m) for m in history]
                where = evidence_positions(conv, history)
                for q in conv["questions"]:
                    if timed is not None and build_ms is not None:
                        started = time.process_time()
                        timed.build([*history, Message(role="user", content=q["question"])])
                        build_ms.setdefault((name, path.stem), []).append((time.process_time() - started) * 1000)
                    order = ranked(builder, history, q["question"])
                    need = [where[e] for e in q["evidence"]]
                    kind = {"date": "when"}.get(q["kind"], q["kind"])
                    for cut, got in zip(CUTS, within(order, tokens, need, CUTS), strict=True):
                        res[(name, path.stem, kind)][cut].append(got)
                        res[(name, path.stem, "all")][cut].append(got)
    return res


def table(res: dict[tuple[str, str, str], dict[int, list[float]]]) -> str:
    head = "| configuration | data | kind | n | " + " | ".join(f"recall@{c:,}" for c in CUTS) + " |"
    rows = [head, "| --- | --- | --- | ---: | " + " | ".join("---:" for _ in CUTS) + " |"]
    kinds = ["all", "single", "when", "multi", "open"]
    for key in sorted(res, key=lambda k: (k[1], k[0], kinds.index(k[2]) if k[2] in kinds else 9)):
        cols = res[key]
        rows.append(f"| {key[0]} | {key[1]} | {key[2]} | {len(cols[CUTS[0]])} | "
                    + " | ".join(f"{statistics.fmean(cols[c]):.2f}" for c in CUTS) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--limit", type=int, default=None, help="first N conversations of each file")
    parser.add_argument("--config", action="append", default=[], metavar="NAME=JSON",
                        help="builder keyword arguments (default: lexical, lexical+speakers, semantic)")
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("ARCANA_BENCH_VECTORS", ".bench-vectors")),
                        help="where computed vectors are kept between runs")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    configs = ({k: json.loads(v) for k, _, v in (c.partition("=") for c in args.config)}
               if args.config else DEFAULT_CONFIGS)
    started = time.perf_counter()
    build_ms: dict[tuple[str, str], list[float]] = {}
    res = evaluate(args.files, configs, args.limit, args.cache, build_ms)
    text = table(res) + "\n\n" + "\n".join([
        "A whole build at a 4k budget (window 5,000, reserve 1,000) for each question, on the history after the "
        "conversation, the builder warm: CPU ms, median and p95.", "",
        "| configuration | data | messages | median ms | p95 ms |", "| --- | --- | ---: | ---: | ---: |",
        *(f"| {n} | {f} | {len(history_of(json.loads(p.read_text())[0]))} | {statistics.median(v):.1f} | "
          f"{sorted(v)[int(len(v) * 0.95) - 1]:.1f} |"
          for (n, f), v in build_ms.items() for p in args.files if p.stem == f)])
    print(text)
    print(f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    if args.out:
        command = " ".join(["python -m benchmarks.retention.ranking", *(str(f) for f in args.files),
                            *(["--limit", str(args.limit)] if args.limit else []),
                            *(f"--config '{c}'" for c in args.config)])
        Path(args.out).write_text(f"""# How well the builder ranks a question's evidence

Command: `{command}`
Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; machine: {os.cpu_count()} cores, {cpu_model()}, \
Python {platform.python_version()}

{text}
""")


if __name__ == "__main__":
    main()
