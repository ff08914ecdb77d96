"""What reaches the model in real sessions of long conversations: the default mode beside classic.

Run: ``python -m benchmarks.retention.conversations [FILE ...] [--budgets 1000,2000,4000,8000]``
(default files: ``data/talks_dev.json`` and ``data/talks_test.json``; writes
``benchmarks/results/conversations.md``; ``--out -`` prints only).

Each conversation (two people over many dated sessions, ``make_talks.py`` / ``make_chats.py``) is
driven turn by turn through a real :class:`~arcana_jupyter.runtime.ChatSession` started as
``Runtime()`` starts it — the default mode, every default setting — and, beside it, in classic mode
(``context_engine=False``), with ``total_window = B + 1000`` and ``response_reserve = 1000`` for a
prompt budget ``B``. The first speaker's turns are sent with ``chat.send``; a scripted model answers
each with the second speaker's recorded turn, instantly, and — like a hosted model — is offered the
runtime's tools (it never calls them). After the last turn every question is sent as one more
turn, and what the model received is measured:

- **evidence**: per question, the share of its evidence messages that are in the prompt as sent
  (whole, with their ``[date] Speaker:`` prefix), averaged over the questions; **evidence (any
  sentence)**: an evidence message also counts when one of its sentences is in the prompt (the
  lenient count: an excerpt of the right sentence counts; a sentence other messages of the
  conversation say too — small talk — counts for none);
- **prompt at a question**: the prompt's tokens as sent (messages and tool specs), and their share
  of ``B``; **tools**: the tool specs' tokens in it;
- **uncached tokens per turn**: the prompt tokens past the prefix it shares with the previous call
  (``ContextReport.uncached_tokens``: what a provider's prefix cache bills again), over the calls
  after the window first filled, before the questions; **reuse**: the shared prefix over the previous
  prompt (``prefix_share``);
- **runtime ms per turn**: the runtime's own time (the model is instant), median;
- **"when" with its date**: per "when did ..." question, the share of its evidence messages that are in the
  prompt whole *and* whose session's date is in the prompt too (the message's own date label, or the date the
  conversation labelled its session with, written at the session's first message: quoted earlier messages carry
  it since ``quote_dates``); the date is what answers the question.

By kind of question (single, when, multi, open) at each budget in a second table. Relevance as
``Runtime()`` starts it (``embeddings="auto"``: the bundled sentence-embedding model fused with BM25;
``--embeddings off`` for lexical only); the vectors sessions compute are kept in ``--vectors`` and
shared by every run (a session keeps them beside its trace), so only the first run embeds.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcana_jupyter.context.relevance import date_label, short_date
from arcana_jupyter.context.result import prefix_reuse
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from benchmarks._machine import cpu_model

HERE = Path(__file__).parent
DEFAULT_FILES = [HERE / "data" / "talks_dev.json", HERE / "data" / "talks_test.json"]
RESERVE = 1000
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
KIND_NAMES = {"date": "when"}


@dataclass
class Tally:
    """What one mode at one budget gave, over a file's conversations."""

    evidence: list[float] = field(default_factory=list)
    lenient: list[float] = field(default_factory=list)
    by_kind: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    prompt_tokens: list[int] = field(default_factory=list)
    tool_tokens: list[int] = field(default_factory=list)
    uncached_full: list[int] = field(default_factory=list)
    reuse_full: list[float] = field(default_factory=list)
    turn_ms: list[float] = field(default_factory=list)
    dated: list[float] = field(default_factory=list)
    """Per "when" question: the share of its evidence in the prompt with its session's date."""
    free_while_out: int = 0
    """Questions whose prompt left more than a quarter of the budget free while evidence stayed out."""


def exchanges(conv: dict[str, Any]) -> list[tuple[str, str]]:
    """(user text, assistant text) pairs; consecutive turns of one role are joined."""
    out: list[tuple[str, str]] = []
    user: list[str] = []
    reply: list[str] = []
    for t in conv["turns"]:
        if t["role"] == "user":
            if reply:
                out.append(("\n".join(user), "\n".join(reply)))
                user, reply = [], []
            user.append(t["content"])
        else:
            reply.append(t["content"])
    if user or reply:
        out.append(("\n".join(user) or "…", "\n".join(reply) or "OK."))
    return out


def session_dates(conv: dict[str, Any]) -> dict[str, str | None]:
    """Each turn's session date as the conversation labels it: its own date label, else the latest before it."""
    out: dict[str, str | None] = {}
    last: str | None = None
    for t in conv["turns"]:
        last = date_label(t["content"]) or last
        out[t["id"]] = last
    return out


def sentences(text: str) -> list[str]:
    """The sentences of a message worth counting alone (a few words at least; not its bare prefix)."""
    return [s for s in SENTENCE.split(text) if len(s.split()) >= 4]


def present(text: str, sent: str, common: set[str]) -> tuple[bool, bool]:
    """(whole message in the prompt, whole or one of its own sentences in the prompt); ``common``:
    sentences that other messages of the conversation say too (small talk), which count for none."""
    if text in sent:
        return True, True
    return False, any(s in sent for s in sentences(text) if s not in common)


async def drive(conv: dict[str, Any], *, engine: bool, budget: int, tally: Tally,
                builder: dict[str, Any] | None = None, embeddings: str = "auto", vectors: Path | None = None) -> None:
    pairs = exchanges(conv)
    replies = iter([r for _, r in pairs] + ["Noted."] * len(conv.get("questions") or []))
    uncached: list[int] = []
    previous: list[LLMRequest] = []

    def answer(request: LLMRequest) -> LLMResponse:
        if request.messages[0].content.startswith("Summarise the conversation"):  # llm_summarize's call
            text = "Summary: two friends caught up on their news over many sessions."
        else:
            text = next(replies, "OK.")
            # what a provider's prefix cache would bill again: the prompt past the start it shares
            # with the previous call (tool specs come first in every rendering)
            counter = chat.counter
            total = counter.count_prompt(request.messages, request.tools)
            if previous:
                prev = previous[-1]
                _, same, _ = prefix_reuse(prev.messages, request.messages, counter.count_text, counter.count_message)
                tools = counter.count_tools(request.tools) if request.tools and request.tools == prev.tools else 0
                uncached.append(total - same - tools)
            else:
                uncached.append(total)
            previous[:] = [request]
        return LLMResponse(message=Message(role="assistant", content=text),
                           usage=Usage(input_tokens=1, output_tokens=1))

    provider = FunctionProvider(answer, keep_requests=1)
    by_id = {t["id"]: t["content"] for t in conv["turns"]}
    dates = session_dates(conv)
    seen: Counter[str] = Counter(s for t in conv["turns"] for s in set(sentences(t["content"])))
    common = {s for s, n in seen.items() if n > 1}
    with tempfile.TemporaryDirectory() as tmp:
        if vectors is not None:  # the vectors computed by earlier runs (a session keeps them beside its trace)
            vectors.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / "embeddings").symlink_to(vectors.resolve(), target_is_directory=True)
        config = RuntimeConfig(trace_dir=tmp, context_engine=engine, total_window=budget + RESERVE,
                               response_reserve=RESERVE, embeddings=embeddings,
                               system_prompt=conv.get("system") or RuntimeConfig().system_prompt)
        async with Runtime(config=config, provider=provider).chat() as chat:
            for name, value in (builder or {}).items():  # experiments: other builder settings
                setattr(chat.builder, name, value)
            reports: list[dict[str, Any]] = []
            chat.subscribe(lambda e: reports.append(e.metadata) if e.event_type == "context_decision" else None)
            full = False
            for user, _ in pairs:
                started = time.perf_counter()
                reply = await chat.send(user)
                tally.turn_ms.append((time.perf_counter() - started) * 1000)
                decision = reply.decision
                full = full or (decision is not None and any(
                    d.source == "history" and (d.outcome != "kept" or d.fidelity != "L0" or d.recalled)
                    for d in decision.decisions))
                report = reports[-1].get("report") or {}
                if full and report.get("prefix_share") is not None:
                    tally.reuse_full.append(report["prefix_share"])
                    tally.uncached_full.append(uncached[-1])
            counter = chat.counter
            for q in conv.get("questions") or []:  # a conversation without questions: its cost only
                await chat.send(q["question"])
                request = provider.requests[-1]
                sent = "\n".join(m.content for m in request.messages)
                found = [present(by_id[e], sent, common) for e in q["evidence"]]
                strict = sum(f[0] for f in found) / len(found)
                lenient = sum(f[1] for f in found) / len(found)
                tally.evidence.append(strict)
                tally.lenient.append(lenient)
                tally.by_kind[KIND_NAMES.get(q["kind"], q["kind"])].append(strict)
                if q["kind"] == "date":
                    tally.dated.append(sum(f[0] and short_date(dates[e] or "\0") in sent
                                           for f, e in zip(found, q["evidence"], strict=True)) / len(found))
                used = int(reports[-1]["budget"]["used"])
                tools = counter.count_tools(request.tools) if request.tools else 0
                tally.prompt_tokens.append(used)
                tally.tool_tokens.append(tools)
                tally.free_while_out += strict < 1 and used < 0.75 * budget


def fmt(values: list[float], pct: bool = False, digits: int = 2) -> str:
    if not values:
        return "-"
    m = statistics.fmean(values)
    return f"{m:.0%}" if pct else (f"{m:,.0f}" if digits == 0 else f"{m:.{digits}f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--budgets", default="1000,2000,4000,8000")
    parser.add_argument("--modes", default="default,classic")
    parser.add_argument("--limit", type=int, default=None, help="first N conversations of each file")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=JSON",
                        help="an experiment: set a builder attribute of the default mode's sessions")
    parser.add_argument("--embeddings", default="auto", choices=("auto", "on", "off"),
                        help="RuntimeConfig.embeddings (default: auto, as Runtime() starts)")
    parser.add_argument("--vectors", type=Path, default=Path(os.environ.get("ARCANA_BENCH_VECTORS", ".bench-vectors")),
                        help="where sessions keep the vectors they compute, shared by every run")
    parser.add_argument("--out", default=str(Path(__file__).parents[1] / "results" / "conversations.md"))
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    modes = args.modes.split(",")
    settings = {k: json.loads(v) for k, _, v in (s.partition("=") for s in args.set)}
    load = os.getloadavg()[0]
    sections = []
    for path in args.files:
        convs = json.loads(path.read_text())[: args.limit]
        rows, kind_rows = [], []
        for budget in budgets:
            for mode in modes:
                tally = Tally()
                for conv in convs:
                    asyncio.run(drive(conv, engine=mode == "default", budget=budget, tally=tally,
                                      builder=settings if mode == "default" else None,
                                      embeddings=args.embeddings, vectors=args.vectors))
                used = [p / budget for p in tally.prompt_tokens]
                rows.append(
                    f"| {budget:,} | {mode} | {fmt(tally.evidence)} | {fmt(tally.lenient)} | "
                    f"{fmt(tally.prompt_tokens, digits=0)} ({fmt(used, pct=True)}) | "
                    f"{fmt(tally.tool_tokens, digits=0)} | {tally.free_while_out} | "
                    f"{fmt(tally.uncached_full, digits=0)} | {fmt(tally.reuse_full, pct=True)} | "
                    f"{statistics.median(tally.turn_ms):.1f} |")
                kinds = ", ".join(f"{k} {fmt(v)}" for k, v in sorted(tally.by_kind.items()))
                kinds += f"; \"when\" with its date {fmt(tally.dated)}" if tally.dated else ""
                kind_rows.append(f"| {budget:,} | {mode} | {kinds} |")
                print(path.name, rows[-1], kind_rows[-1], flush=True)
        n_q = sum(len(c.get("questions") or []) for c in convs)
        n_x = sum(len(exchanges(c)) for c in convs)
        name = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path
        sections.append(f"""## {name}

{len(convs)} conversations, {n_x} exchanges, {n_q} questions asked after the last turn.

| budget B | mode | evidence | evidence (any sentence) | prompt at a question (of B) | tools | \
questions with > 25% free and evidence out | uncached tokens per turn, window full | reuse, window full | \
runtime ms/turn |
| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(rows)}

Evidence by kind of question:

| budget B | mode | by kind |
| ---: | --- | --- |
{chr(10).join(kind_rows)}
""")
    command = " ".join(["python -m benchmarks.retention.conversations", *(str(f) for f in args.files),
                        "--budgets", args.budgets, *(["--limit", str(args.limit)] if args.limit else [])])
    text = f"""# What reaches the model in long conversations: the default mode beside classic

Command: `{command}`
Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; machine: {os.cpu_count()} cores, {cpu_model()}, \
Python {platform.python_version()}; load average at start {load:.2f}

Sessions started as `Runtime()` starts them (the default mode, every default setting) and in classic
mode beside it; `total_window = B + 1000`, `response_reserve = 1000`, relevance `embeddings={args.embeddings}`. See the
module docstring of `benchmarks/retention/conversations.py` for what each column measures.

{chr(10).join(sections)}"""
    if args.out == "-":
        sys.stdout.write(text)
        return
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
