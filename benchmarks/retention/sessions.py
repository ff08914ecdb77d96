"""Retention and prefix reuse of real sessions, the default mode beside classic mode.

Run: ``python -m benchmarks.retention.sessions [FILE ...] [--windows 4096,16384] [--embeddings off]``
(default files: ``data/sessions_dev.json`` and ``data/sessions_test.json``, written by
:mod:`.make_sessions`; writes ``benchmarks/results/retention_sessions.md``).

Each conversation is driven through a real :class:`~arcana_jupyter.runtime.ChatSession`, started the
way ``Runtime()`` starts it (the default mode: adaptive context on) and, beside it, in classic mode
(``context_engine=False``): every user turn is sent with ``chat.send``, the scripted model answers
with the conversation's recorded assistant turn (instantly), and after the last turn each question
is sent as one more turn. What the model received for each question is what is measured:

- **fact in prompt**: the question's answer (a value stated once, early) appears in the prompt;
- **evidence verbatim**: the user message that stated it appears unchanged;
- **prefix reuse**: per call, the tokens the prompt repeats from the start of the previous prompt
  (``report.prefix_tokens_reused``, whole messages plus the common start of the first that differs)
  over the previous prompt's tokens — split into calls whose history still fits the window and calls
  after it filled (some earlier message not kept verbatim);
- **prompt tokens** of the question's call, and the runtime's own time per turn (the model is instant).

The data is ours (``make_sessions.py``): dev for tuning, test reported beside it; neither is the
held-out set.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage
from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from benchmarks._machine import cpu_model

HERE = Path(__file__).parent
DEFAULT_FILES = [HERE / "data" / "sessions_dev.json", HERE / "data" / "sessions_test.json"]


@dataclass
class Tally:
    questions: int = 0
    fact: int = 0
    verbatim: int = 0
    prompt_tokens: list[int] = field(default_factory=list)
    reuse_fits: list[float] = field(default_factory=list)
    reuse_full: list[float] = field(default_factory=list)
    turn_ms: list[float] = field(default_factory=list)
    system_after_first: int = 0
    calls: int = 0


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
    if user:
        out.append(("\n".join(user), "\n".join(reply) or "OK."))
    return out


async def drive(conv: dict[str, Any], *, engine: bool, window: int, embeddings: str, tally: Tally,
                builder: dict[str, Any] | None = None) -> None:
    pairs = exchanges(conv)
    replies = iter([r for _, r in pairs] + ["Noted."] * len(conv["questions"]))

    def answer(request: LLMRequest) -> LLMResponse:
        if request.messages[0].content.startswith("Summarise the conversation"):  # llm_summarize's call
            text = "Summary: the user and the assistant worked through the notebook's data step by step."
        else:
            text = next(replies, "OK.")
        return LLMResponse(message=Message(role="assistant", content=text),
                           usage=Usage(input_tokens=1, output_tokens=1))

    provider = FunctionProvider(answer)
    by_id = {t["id"]: t["content"] for t in conv["turns"]}
    with tempfile.TemporaryDirectory() as tmp:
        config = RuntimeConfig(trace_dir=tmp, context_engine=engine, total_window=window,
                               response_reserve=min(1024, window // 4), embeddings=embeddings,
                               system_prompt=conv.get("system") or RuntimeConfig().system_prompt)
        async with Runtime(config=config, provider=provider).chat() as chat:
            for name, value in (builder or {}).items():  # the trade-off rows: other builder settings
                setattr(chat.builder, name, value)
            decisions: list[dict[str, Any]] = []
            chat.subscribe(lambda e: decisions.append(e.metadata) if e.event_type == "context_decision" else None)
            for user, _ in pairs:
                started = time.perf_counter()
                await chat.send(user)
                tally.turn_ms.append((time.perf_counter() - started) * 1000)
            for q in conv["questions"]:
                await chat.send(q["question"])
                sent = "\n".join(m.content for m in provider.requests[-1].messages)
                tally.questions += 1
                tally.fact += q["answer"] in sent
                tally.verbatim += all(by_id[e] in sent for e in q["evidence"])
                tally.prompt_tokens.append(int(decisions[-1]["budget"]["used"]))
            for md in decisions:
                record(md, tally)
        for request in provider.requests:
            tally.calls += 1
            tally.system_after_first += any(m.role == "system" for m in request.messages[1:])


def record(md: dict[str, Any], tally: Tally) -> None:
    """Prefix reuse of one call, from its ``context_decision`` (live metadata: the full decision)."""
    share = (md.get("report") or {}).get("prefix_share")
    if share is None:
        return
    full = any(d["source"] == "history" and (d["outcome"] != "kept" or d["fidelity"] != "L0" or d["recalled"])
               for d in md["decision"]["decisions"])
    (tally.reuse_full if full else tally.reuse_fits).append(share)


TRADEOFF: list[tuple[str, dict[str, Any]]] = [
    ("default (as shipped): excerpts, look-alikes once, block up to 16%, drops of 35%", {}),
    ("excerpts, the rule before (three whatever their match, look-alikes all)", {"excerpt_match": "first3"}),
    ("excerpts, look-alikes once, block up to 8%", {"block_recall_share": 0.08}),
    ("excerpts, look-alikes once, drops of 25%", {"block_fraction": 0.25}),
    ("whole messages, small block 8%, drops of 25%",
     {"block_excerpts": False, "block_recall_min": 0, "block_recall_share": 0.08, "block_fraction": 0.25}),
    ("whole messages, fill (the default before), drops of 25%",
     {"block_excerpts": False, "block_recall_min": 1024, "block_recall_share": 0.08, "block_fraction": 0.25}),
]
"""The default mode with other settings of its relevant block and drops: the block of excerpts at
smaller sizes, and the whole-message block the default mode used before (below ``block_recall_min``
tokens it fills the room with relevant turns, their neighbours and recent turns instead)."""


def fmt(values: list[float], pct: bool = True) -> str:
    if not values:
        return "-"
    m = statistics.fmean(values)
    return f"{m:.0%}" if pct else f"{m:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    parser.add_argument("--windows", default="4096,16384")
    parser.add_argument("--embeddings", choices=("auto", "off"), default="off",
                        help="the sessions' relevance (RuntimeConfig.embeddings); 'off' is what CI has")
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "results" / "retention_sessions.md")
    parser.add_argument("--tradeoff", type=int, default=None, metavar="WINDOW",
                        help="also run the default mode at this window with smaller relevant blocks "
                             "(TRADEOFF): what more prefix reuse costs in retention")
    args = parser.parse_args()
    windows = [int(w) for w in args.windows.split(",")]
    load = os.getloadavg()[0]
    sections = []
    for path in args.files:
        convs = json.loads(path.read_text())
        turns = sum(len(exchanges(c)) for c in convs)
        rows = []
        for window in windows:
            for engine in (True, False):
                tally = Tally()
                for conv in convs:
                    asyncio.run(drive(conv, engine=engine, window=window, embeddings=args.embeddings, tally=tally))
                mode = "default (adaptive)" if engine else "classic"
                rows.append(
                    f"| {window:,} | {mode} | {tally.fact / tally.questions:.2f} | "
                    f"{tally.verbatim / tally.questions:.2f} | {fmt(tally.reuse_fits)} ({len(tally.reuse_fits)}) | "
                    f"{fmt(tally.reuse_full)} ({len(tally.reuse_full)}) | {fmt(tally.prompt_tokens, False)} | "
                    f"{statistics.median(tally.turn_ms):.1f} | {tally.system_after_first} of {tally.calls} |")
                print(path.name, rows[-1], flush=True)
        tradeoff = ""
        if args.tradeoff:
            lines = []
            for label, settings in TRADEOFF:
                tally = Tally()
                for conv in convs:
                    asyncio.run(drive(conv, engine=True, window=args.tradeoff, embeddings=args.embeddings,
                                      tally=tally, builder=settings))
                lines.append(f"| {label} | {tally.fact}/{tally.questions} ({tally.fact / tally.questions:.3f}) | "
                             f"{fmt(tally.reuse_full)} ({len(tally.reuse_full)}) | {fmt(tally.prompt_tokens, False)} |")
                print(path.name, lines[-1], flush=True)
            tradeoff = f"""
Trade-off at {args.tradeoff:,} tokens, default mode (classic beside it above): the relevant block
smaller and question-independent room left free, against facts found.

| default mode | fact in prompt | prefix reuse, window full (calls) | prompt tokens at a question |
| --- | ---: | ---: | ---: |
{chr(10).join(lines)}
"""
        sections.append(f"""## {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}

{len(convs)} sessions, {turns} exchanges, {sum(len(c['questions']) for c in convs)} questions about facts of the
first third of each session, asked after its last turn.

| window | mode | fact in prompt | evidence verbatim | prefix reuse, history fits (calls) | \
prefix reuse, window full (calls) | prompt tokens at a question | median runtime ms/turn | \
calls with a system message after the first |
| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
{chr(10).join(rows)}
{tradeoff}""")
    text = f"""# Retention and prefix reuse of real sessions: the default mode beside classic

Command: `python -m benchmarks.retention.sessions {' '.join(str(f) for f in args.files)} \
--windows {args.windows} --embeddings {args.embeddings}{f' --tradeoff {args.tradeoff}' if args.tradeoff else ''}`
Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; machine: {os.cpu_count()} cores, {cpu_model()}, \
Python {platform.python_version()}; load average at start {load:.2f}

Each session is driven through `ChatSession.send` (the default mode as `Runtime()` starts it, and
classic mode beside it) with an instant scripted model replaying the recorded replies; reply
reserve a quarter of the window (at most 1,024). See the module docstring of
`benchmarks/retention/sessions.py` for what each column measures.

The default mode's verbatim window gives way a block at a time (`drop_policy="blocks"` in
`arcana_jupyter/context/builder.py`: 35% of the available tokens per drop, at absolute positions, so
the prompt only grows at its end between drops). The earlier turns relevant to the input come back
as excerpts (`block_excerpts`: the sentences that match the input, as system messages that the
shaping step puts in the context block after the input's text, so the next prompt reuses the
previous one through that text): at most 16% of the conversation budget, usually far less, because
an excerpt past the best one must hold half of the question's term weight or its most specific term,
and a look-alike of n excerpts already taken (the same question terms matched) counts 1/(n+1) of its
match (`excerpt_match="distinct"`). So "evidence verbatim" (the whole stating message) is rare in
the default mode; "fact in prompt" is what the issue's target counts.

{chr(10).join(sections)}"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
