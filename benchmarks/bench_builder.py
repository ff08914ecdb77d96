"""Working-set builder: cold and warm build times, and prompt-prefix reuse, on long histories.

Run: ``python -m benchmarks.bench_builder`` (writes ``benchmarks/results/builder.md``);
``--quick`` runs a smaller set for a smoke check.

Histories are deterministic and realistic in shape: words drawn from a Zipf distribution over
~4,000 words (common data vocabulary, then made-up identifiers), user questions of 10-60 words,
assistant answers of 40-300 words, and every third exchange a tool call whose result is a CSV preview, a
``describe()`` table or a traceback (100-1,500 tokens). For each history size (100 / 1,000 /
10,000 messages) and window (4k / 16k / 128k tokens, 1k reserved for the reply):

- **cold**: a new builder (empty caches, new ``TokenCounter``) builds the full history;
- **warm**: the same builder, turn after turn, with the history grown by one message each call
  (what a chat session does); ``previous=`` is passed so the report carries prefix reuse;
- **tiktoken once**: encoding every message's content once with the same encoding — the floor any
  exact-count builder pays on a cold history. Each cold build is paired with a tiktoken run just
  before it; the ratio is the median of the per-pair ratios.

Times are wall clock and this thread's CPU time (``time.thread_time``), median and p95; on a
shared machine the CPU column is the one to compare. Prefix reuse is the share of the previous
prompt's tokens that the new prompt repeats verbatim at its start (what a provider's prompt cache
can reuse), averaged over the warm calls.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import random
import statistics
import time
from pathlib import Path
from typing import Any

from arcana_jupyter.context import TokenBudget, WorkingSetBuilder
from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.tokens import TokenCounter
from benchmarks._machine import cpu_model

SIZES = (100, 1_000, 10_000)
WINDOWS = (4_000, 16_000, 128_000)
RESERVE = 1_000
WORDS = (
    "data frame column region sales revenue growth quarter month customer order product price mean median "
    "plot chart axis label filter group merge join index pivot table value count missing null type string "
    "integer float date time series trend forecast model train test split score accuracy error loss feature "
    "notebook cell kernel import pandas numpy matplotlib seaborn sklearn function variable list dict result"
).split()


SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "do", "fi", "gu", "ha", "je", "bo"]


def _vocabulary(size: int = 4000) -> tuple[list[str], list[float]]:
    """Common data words first, then made-up identifiers (column, file, variable names), Zipf weights."""
    rng = random.Random(11)
    extra: set[str] = set()
    while len(extra) < size - len(WORDS):
        extra.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) + rng.choice(["", "_id", "s", "2"]))
    vocab = list(WORDS) + sorted(extra)
    cum: list[float] = []
    total = 0.0
    for rank in range(1, len(vocab) + 1):
        total += 1.0 / rank
        cum.append(total)
    return vocab, cum


VOCAB, CUM = _vocabulary()


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choices(VOCAB, cum_weights=CUM, k=n)).capitalize() + "."


def _tool_output(rng: random.Random, k: int) -> str:
    kind = k % 3
    if kind == 0:
        cols = rng.sample(WORDS, 5)
        rows = [",".join(cols)] + [",".join(str(rng.randint(0, 9999)) for _ in cols)
                                   for _ in range(rng.randint(20, 180))]
        return "\n".join(rows)
    if kind == 1:
        stats = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]
        cols = rng.sample(WORDS, 6)
        lines = ["       " + "  ".join(cols)]
        lines += [f"{s:<6} " + "  ".join(f"{rng.uniform(0, 1000):.2f}" for _ in cols) for s in stats]
        return "\n".join(lines * rng.randint(1, 6))
    frames = "\n".join(f'  File "/tmp/ipykernel_{rng.randint(1000, 9999)}.py", line {rng.randint(1, 300)}, in '
                       f"{rng.choice(WORDS)}\n    {_sentence(rng, 8)}" for _ in range(rng.randint(3, 25)))
    return f"Traceback (most recent call last):\n{frames}\nKeyError: '{rng.choice(WORDS)}'"


def make_history(n: int, seed: int = 3) -> list[Message]:
    """A deterministic notebook chat of exactly ``n`` messages (system prompt first)."""
    rng = random.Random(seed)
    out: list[Message] = [Message(role="system", content="You are a data assistant in a Jupyter notebook. "
                                                            "Answer clearly; use tools to run code.")]
    turn = 0
    while len(out) < n:
        turn += 1
        out.append(Message(role="user", content=_sentence(rng, rng.randint(10, 60)), turn=turn))
        if turn % 3 == 0:
            call = ToolCall(id=f"call_{turn}", name="run_cell",
                            arguments=f'{{"code": "df.{rng.choice(WORDS)}()  # {turn}"}}')
            out.append(Message(role="assistant", content="", tool_calls=(call,), turn=turn))
            out.append(Message(role="tool", content=_tool_output(rng, turn), tool_call_id=call.id, turn=turn))
        out.append(Message(role="assistant", content=" ".join(_sentence(rng, rng.randint(8, 30))
                                                               for _ in range(rng.randint(2, 10))), turn=turn))
    return out[:n]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _timed(fn):  # type: ignore[no-untyped-def]
    w0, c0 = time.perf_counter(), time.thread_time()
    out = fn()
    return out, (time.perf_counter() - w0) * 1000, (time.thread_time() - c0) * 1000


def bench(n: int, window: int, cold_reps: int, warm_calls: int) -> dict[str, object]:
    full = make_history(n + warm_calls, seed=n)
    history = full[:n]
    budget = TokenBudget(total_window=window, response_reserve=RESERVE)
    enc = TokenCounter().encoding
    texts = [m.content for m in history]
    # tiktoken and the cold build alternate, so both see the same machine conditions; the ratio is
    # taken per pair and its median reported
    tk_wall, tk_cpu, cold_wall, cold_cpu, ratios = [], [], [], [], []
    result = None
    for _ in range(cold_reps):
        _, w, c = _timed(lambda: [enc.encode(t, disallowed_special=()) for t in texts])
        tk_wall.append(w)
        tk_cpu.append(c)
        builder = WorkingSetBuilder(budget=budget, counter=TokenCounter())
        result, w, c2 = _timed(lambda b=builder: b.build(history))
        cold_wall.append(w)
        cold_cpu.append(c2)
        ratios.append(c2 / c if c > 0 else float("inf"))
    assert result is not None
    strategy = result.decision.strategy
    # warm: one new message per call, same builder, previous= for prefix reuse
    builder = WorkingSetBuilder(budget=budget, counter=TokenCounter())
    prev = builder.build(history)
    warm_wall, warm_cpu, reuse = [], [], []
    grown = list(history)
    for k in range(warm_calls):
        grown.append(full[n + k])
        res, w, c = _timed(lambda p=prev: builder.build(grown, previous=p))
        warm_wall.append(w)
        warm_cpu.append(c)
        prev_tokens = prev.report.total_after
        reuse.append((res.report.prefix_tokens_reused or 0) / prev_tokens if prev_tokens else 1.0)
        assert res.budget.used <= budget.available
        prev = res
    return {
        "n": n, "window": window, "strategy": strategy, "util": result.decision.utilization_before,
        "tk_cpu": statistics.median(tk_cpu), "tk_wall": statistics.median(tk_wall),
        "cold_cpu": statistics.median(cold_cpu), "cold_wall": statistics.median(cold_wall),
        "ratio": statistics.median(ratios),
        "warm_cpu": statistics.median(warm_cpu), "warm_cpu_p95": _pct(warm_cpu, 0.95),
        "warm_wall": statistics.median(warm_wall), "warm_wall_p95": _pct(warm_wall, 0.95),
        "reuse_mean": statistics.fmean(reuse), "reuse_half": sum(r >= 0.5 for r in reuse) / len(reuse),
        "warm_strategy": prev.decision.strategy,
    }




def dict_warm(n: int = 1_000, window: int = 16_000, calls: int = 60) -> dict[str, float]:
    """Warm builds on a plain OpenAI-style dict history (what library users pass), grown by one message per call."""
    full = [m.wire() | {"turn": m.turn} for m in make_history(n + calls, seed=n)]
    # lexical, whatever is installed: with the [embeddings] extra every new message would be embedded
    # (~15 ms each here, benchmarks/results/retention.md) and this times the dict path
    builder = WorkingSetBuilder(budget=TokenBudget(total_window=window, response_reserve=RESERVE),
                                counter=TokenCounter(), embedder=None)
    grown = [dict(m) for m in full[:n]]
    builder.build(grown)
    cpu = []
    for k in range(calls):
        # a new list of new dicts each call (copies: equal content, other objects), as a caller
        # rebuilding its messages would pass; the copying is not timed
        grown = [*(dict(m) for m in grown), dict(full[n + k])]
        _, _, c = _timed(lambda g=grown: builder.build(g))
        cpu.append(c)
    return {"median": statistics.median(cpu), "p95": _pct(cpu, 0.95)}


KEPT = "<!-- sections below are kept when bench_builder rewrites this file -->"


def session_calls(turns: int, last: int) -> list[tuple[WorkingSetBuilder, dict[str, Any]]]:
    """The builder calls of the last ``last`` turns of a runtime session of ``turns`` turns (the one
    ``benchmarks.bench_frames`` records: the default mode, an 8k window, an instant model, a tool
    call every 10th turn, pins), with each call's history, arguments, budget and summariser."""
    import asyncio
    import tempfile

    from benchmarks.bench_frames import record

    calls: list[tuple[WorkingSetBuilder, dict[str, Any]]] = []
    original = WorkingSetBuilder.abuild

    async def spy(self: WorkingSetBuilder, history: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("turn") is not None and kwargs["turn"] > turns - last:
            calls.append((self, {"history": list(history), "args": args, "kwargs": dict(kwargs),
                                 "budget": self.budget, "summarizer": self.summarizer}))
        return await original(self, history, *args, **kwargs)

    WorkingSetBuilder.abuild = spy  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(record(turns, Path(folder)))
    finally:
        WorkingSetBuilder.abuild = original  # type: ignore[method-assign]
    return calls


def session_replay(turns: int, last: int = 10, reps: int = 7) -> dict[str, float]:
    """The builder calls of a session's last turns replayed in order on its builder, ``reps`` times:
    per call its least CPU time (``time.thread_time``; the first call, which rebuilds the history
    state, not counted), summed; per build and per turn."""
    calls = session_calls(turns, last)
    if len(calls) < 2:
        raise ValueError(f"the session's last {last} turns made {len(calls)} builder call(s): too few to time")
    builder = calls[0][0]
    best = [float("inf")] * len(calls)
    for _ in range(reps):
        for k, (_, call) in enumerate(calls):
            builder.budget, builder.summarizer = call["budget"], call["summarizer"]
            start = time.thread_time()
            builder.build(call["history"], *call["args"], **call["kwargs"])
            best[k] = min(best[k], time.thread_time() - start)
    total = sum(best[1:]) * 1000
    return {"turns": turns, "last": last, "builds": len(calls), "history": len(calls[-1][1]["history"]),
            "per_build": total / (len(calls) - 1), "per_turn": total / last}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few repetitions (smoke check)")
    parser.add_argument("--out", default="benchmarks/results/builder.md")
    parser.add_argument("--session", default=None, metavar="TURNS",
                        help="instead: replay the builder calls of the last 10 turns of runtime sessions of these "
                             "lengths (comma-separated, e.g. 400,1000; bench_frames' session) and print the "
                             "least CPU per build (writes nothing)")
    args = parser.parse_args()
    if args.session:
        for turns in (int(t) for t in args.session.split(",")):
            replay = session_replay(turns)
            print(f"session of {turns:,} turns, last {replay['last']:.0f} turns: {replay['builds']:.0f} builds, "
                  f"history {replay['history']:,.0f} messages: least CPU {replay['per_build']:.2f} ms per build, "
                  f"{replay['per_turn']:.1f} ms per turn (load {os.getloadavg()[0]:.1f})", flush=True)
        return
    sizes = (100, 1_000) if args.quick else SIZES
    load = os.getloadavg()[0]
    rows = []
    for n in sizes:
        for window in WINDOWS:
            reps = 7 if n <= 1_000 else 3
            calls = {100: 40, 1_000: 100}.get(n, 20)
            row = bench(n, window, reps, calls)
            rows.append(row)
            print(f"{n:>6} msgs {window:>7} tok: {row['strategy']:<20} cold {row['cold_cpu']:.1f} ms cpu "
                  f"(tiktoken {row['tk_cpu']:.1f}) warm {row['warm_cpu']:.2f} ms cpu p95 {row['warm_cpu_p95']:.2f} "
                  f"reuse {row['reuse_mean']:.0%}", flush=True)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Working-set builder benchmark",
        "",
        f"Command: `.venv/bin/python -m benchmarks.bench_builder{' --quick' if args.quick else ''}`",
        f"Date: {now}",
        f"Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}; "
        f"load average at start {load:.2f} (other processes share the machine: wall-clock columns include "
        "their interference, CPU columns are this thread's own time)",
        "",
        "Histories: deterministic notebook chats (user 10-60 words, assistant 40-300 words, a tool call with a "
        "CSV preview / describe() table / traceback result every third exchange). Window = total tokens, "
        f"{RESERVE} reserved for the reply. Cold: new builder and counter, full history. Warm: same builder, "
        "history grown by one message per call, `previous=` passed. Prefix reuse: share of the previous "
        "prompt's message tokens repeated verbatim at the start of the new prompt (mean over warm calls; "
        "'turns >= 50%' = share of calls that reused at least half).",
        "",
        "| messages | window | strategy (cold) | util. before | tiktoken once ms (cpu) | cold ms (cpu) "
        "| cold / tiktoken (median of paired runs) "
        "| warm median ms (cpu) | warm p95 ms (cpu) | warm median ms (wall) | warm p95 ms (wall) | prefix reuse mean "
        "| turns >= 50% reuse |",
        "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']:,} | {r['window']:,} | {r['strategy']} | {r['util']:.2f} | {r['tk_cpu']:.1f} | "
            f"{r['cold_cpu']:.1f} | {r['ratio']:.2f}x | {r['warm_cpu']:.2f} | "
            f"{r['warm_cpu_p95']:.2f} | {r['warm_wall']:.2f} | {r['warm_wall_p95']:.2f} | {r['reuse_mean']:.0%} | "
            f"{r['reuse_half']:.0%} |"
        )
    thousand = [r for r in rows if r["n"] == 1_000]
    if thousand:
        worst = max(float(r["warm_cpu"]) for r in thousand)  # type: ignore[arg-type]
        ratio = max(float(r["ratio"]) for r in rows)  # type: ignore[arg-type]
        lines += [
            "",
            f"Targets: warm next-turn build at 1,000 messages < 5 ms median — worst window {worst:.2f} ms CPU "
            f"({'met' if worst < 5 else 'NOT met'}); cold build within 2x of tiktoken encoding the history once — "
            f"worst ratio {ratio:.2f}x ({'met' if ratio <= 2 else 'NOT met'}).",
        ]
    lines += ["", "Plain dict history (OpenAI-style dicts with a `turn` key, 1,000 messages, "
                  "one message more per call, "
                  "a new list of new dicts each call — equal content, other objects, so the unchanged prefix is "
                  "recognised by content; 60 warm calls; target < 5 ms median):", "",
              "| messages | window | warm median ms (cpu) | warm p95 ms (cpu) | target |",
              "| ---: | ---: | ---: | ---: | --- |"]
    for window in WINDOWS:
        dw = dict_warm(window=window)
        print(f"dict history, 1,000 messages, {window} tok, warm: median {dw['median']:.2f} ms cpu, "
              f"p95 {dw['p95']:.2f}", flush=True)
        lines.append(f"| 1,000 | {window:,} | {dw['median']:.2f} | {dw['p95']:.2f} | "
                     f"{'met' if dw['median'] < 5 else 'NOT met'} |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = out.read_text().split(KEPT, 1) if out.exists() else []
    if len(kept) == 2:  # hand-written sections (measurements of other commands) stay
        lines += ["", KEPT + kept[1].rstrip("\n")]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
