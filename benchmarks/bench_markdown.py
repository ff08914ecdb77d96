"""Rendering replies outside JupyterLab: 1 MB of adversarial Markdown, and the worst case under the limit.

Run: ``python -m benchmarks.bench_markdown`` (writes ``benchmarks/results/markdown.md``).

Issue 13 (defects 2 and 3): the old hand-written renderer took 16 s on 60 KB of brackets and raised
``RecursionError`` on a 400-deep quote. Now replies go through markdown-it-py (linear, pure Python)
with two limits (``arcana_jupyter/render/md.py``): a reply longer than ``MAX_MARKDOWN_CHARS`` is
shown as escaped text, and block nesting deeper than ``MAX_NESTING`` likewise.

Measured, each the median of 3 runs of ``render.turn_html`` (the whole static turn view: reply,
inspector, Pygments CSS) on a bundle whose reply is the input:

1. **1 MB** of each adversarial pattern (the issue's criterion: under 1 s each) — the size limit
   sends it to the escaped-text path;
2. the same patterns cut to **just under the limit**, so they go through markdown-it-py and
   Pygments: the worst time a reply can cost through the Markdown path;
3. markdown-it-py alone at 50 / 100 / 200 KB (limit lifted), to show the time grows linearly;
4. (hostile pass, defect 1) **every Pygments lexer alias** as the fence language of a 4 KB reply,
   on adversarial inputs (one long line without ``=``, a long run of spaces, deep nesting, repeated
   quotes): ``markdown_to_html`` with its highlighting budget (criterion: every one under 1 s), and
   for the slowest lexers their time without the budget (capped), which names the worst lexer, and
   their time on a 1,000-character fence off the main thread (the untimed limit).

``--lexers-only`` runs part 4 alone.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import signal
import statistics
import sys
import threading
import time
from pathlib import Path

from arcana_jupyter import render
from arcana_jupyter.render import md
from benchmarks._machine import cpu_model

MB = 1_000_000

PATTERNS: dict[str, str] = {
    "nested brackets `[`×n `](`×n": "[" * 20_000 + "](" * 20_000,
    "10,000-deep quotes `> > > …`": "> " * 10_000 + "deep\n",
    "quote ladder (`>` … `>>>>…`, one per line)": "\n".join(">" * i + " q" for i in range(1, 3000)) + "\n",
    "10,000-deep list (indented `- `)": "\n".join("  " * i + "- item" for i in range(10_000)) + "\n",
    "unclosed fences (`` ``` `` per line)": "```\n" * 10_000,
    "emphasis runs `*a _b `": "*a _b " * 10_000,
    "backtick runs `` `a`` ``": " `a``" * 10_000,
    "dollar math `$a$ $$`": "$a$ $$ " * 10_000,
    "pipe table rows": "|a|b|\n|-|-|\n" + "|x|y|\n" * 10_000,
    "unclosed links `[a](b `": "[a](b " * 10_000,
    "`<` runs (raw HTML off)": "<" * 10_000,
    "python fence (Pygments)": "```python\n" + "def f(x):\n    return x ** 2  # c\n" * 400 + "```\n",
}


def _fill(pattern: str, size: int) -> str:
    return (pattern * (size // len(pattern) + 1))[:size]


def _median(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


REPLY_CHARS = 4_000
LEXER_INPUTS: dict[str, str] = {
    "one long line without `=`": "ab cd " * 1_000,
    "a long run of spaces": "a" + " " * 4_000,
    "deep nesting `([{`": "([{" * 700 + "}])" * 700,
    "repeated quotes": "\"'" * 2_000,
}
UNGUARDED_CAP_S = 3.0


def _fence(alias: str, code: str, size: int) -> str:
    head, tail = f"```{alias}\n", "\n```\n"
    return head + code[: size - len(head) - len(tail)] + tail


def _aliases() -> list[tuple[str, str]]:
    from pygments.lexers import get_all_lexers

    return [(alias, name) for name, aliases, *_ in get_all_lexers() for alias in aliases]


class _Cap(Exception):
    """Raised by the benchmark's own alarm: this lexer alone ran past the cap."""


def _unguarded(alias: str, code: str) -> float:
    """Seconds Pygments alone takes on ``code`` (stopped at UNGUARDED_CAP_S: then the cap is returned)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    def stop(*_: object) -> None:
        raise _Cap

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, UNGUARDED_CAP_S)
    start = time.perf_counter()
    try:
        highlight(code, get_lexer_by_name(alias, stripnl=False, ensurenl=False), HtmlFormatter(nowrap=True))
        return time.perf_counter() - start
    except _Cap:
        return UNGUARDED_CAP_S
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _in_thread(fn) -> float:
    out: list[float] = []

    def run() -> None:
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out[0]


def lexer_sweep() -> list[str]:
    """Part 4: every alias, every adversarial input, through the budgeted renderer."""
    aliases = _aliases()
    results: list[tuple[float, str, str, str, bool]] = []  # time, alias, lexer name, input, highlighted
    started = time.perf_counter()
    for alias, name in aliases:
        for label, code in LEXER_INPUTS.items():
            reply = _fence(alias, code, REPLY_CHARS)
            t0 = time.perf_counter()
            html = md.markdown_to_html(reply)
            results.append((time.perf_counter() - t0, alias, name, label, "<span" in html))
    sweep_s = time.perf_counter() - started
    results.sort(reverse=True)
    worst = results[0]
    over = [r for r in results if r[0] >= 1.0]
    fell_back = sorted({(r[1], r[3]) for r in results if not r[4] and r[0] >= md.HIGHLIGHT_SECONDS * 0.9})
    # every lexer that ran out of budget (and the slowest others), without the budget, on the inputs
    # that were slow for it: the worst lexer is the slowest of these
    candidates: dict[str, tuple[str, set[str]]] = {}
    for t, alias, name, label, highlighted in results:
        if (not highlighted and t >= md.HIGHLIGHT_SECONDS * 0.9) or len(candidates) < 6:
            candidates.setdefault(name, (alias, set()))[1].add(label)
    unguarded = []
    for name, (alias, labels) in candidates.items():
        times = {label: _unguarded(alias, _fence(alias, LEXER_INPUTS[label], REPLY_CHARS)[len(alias) + 4:-5])
                 for label in sorted(labels)}
        label = max(times, key=lambda k: times[k])
        unguarded.append((alias, name, label, times[label]))
    unguarded.sort(key=lambda r: (-r[3], r[1]))
    unguarded = unguarded[:12]
    # off the main thread: the largest fence still highlighted there (its content, newline included)
    untimed = [(alias, label, _in_thread(lambda a=alias, lab=label: md.markdown_to_html(
        _fence(a, LEXER_INPUTS[lab], md.MAX_UNTIMED_HIGHLIGHT_CHARS + len(a) + 8))))
        for alias, _n, label, _t in unguarded]
    top = unguarded[0]
    capped = [f"{n} (`{a}`)" for a, n, _l, t in unguarded if t >= UNGUARDED_CAP_S]
    if len(capped) > 1:
        worst_name = f"{', '.join(capped)}: each ≥ {UNGUARDED_CAP_S:.0f} s (stopped) without the budget"
    else:
        cap_note = f"≥ {UNGUARDED_CAP_S:.0f} s (stopped)" if top[3] >= UNGUARDED_CAP_S else f"{top[3]:.2f} s"
        worst_name = f"{top[1]} (`{top[0]}`), {cap_note} without the budget"
    lines = [
        f"## Every Pygments lexer alias, 4 KB replies — worst {worst[0] * 1000:.0f} ms "
        f"({'under' if worst[0] < 1 else 'OVER'} 1 s); worst lexer: {worst_name}",
        "",
        f"{len(aliases)} aliases × {len(LEXER_INPUTS)} inputs = {len(results):,} renders of a "
        f"{REPLY_CHARS:,}-character reply (one fence) by `markdown_to_html` on the main thread, in {sweep_s:.0f} s; "
        f"budget "
        f"`HIGHLIGHT_SECONDS` = {md.HIGHLIGHT_SECONDS * 1000:.0f} ms. Renders of 1 s or more: {len(over)}. "
        f"Fences that ran out of budget and were shown as escaped text: {len(fell_back)} "
        f"({', '.join(sorted({a for a, _ in fell_back})[:30])}{' …' if len(fell_back) > 30 else ''}).",
        "",
        "Inputs: " + "; ".join(f"{label} (`{code[:12]!r}…`)" for label, code in LEXER_INPUTS.items()) + ".",
        "",
        "| slowest renders | input | time | highlighted |",
        "| --- | --- | ---: | --- |",
        *[f"| `{alias}` ({name}) | {label} | {t * 1000:.0f} ms | {'yes' if h else 'no (escaped text)'} |"
          for t, alias, name, label, h in results[:12]],
        "",
        f"The slowest of the {len(candidates)} lexers that ran out of budget (or were slowest), without the budget "
        f"(Pygments alone, the same 4 KB fence, stopped at "
        f"{UNGUARDED_CAP_S:.0f} s), and with the budget off the main thread (no alarm there: fences over "
        f"`MAX_UNTIMED_HIGHLIGHT_CHARS` = {md.MAX_UNTIMED_HIGHLIGHT_CHARS:,} are escaped; timed here at that size):",
        "",
        "| lexer | input | Pygments alone, 4 KB | `markdown_to_html` in a thread, 1,000 chars |",
        "| --- | --- | ---: | ---: |",
        *[f"| `{alias}` ({name}) | {label} | {f'≥ {t:.0f} s' if t >= UNGUARDED_CAP_S else f'{t * 1000:.0f} ms'} | "
          f"{u * 1000:.0f} ms |" for (alias, name, label, t), (_a, _l, u) in zip(unguarded, untimed, strict=True)],
        "",
    ]
    for line in lines[:1]:
        print(line, flush=True)
    return lines


def _bundle(reply: str) -> dict:
    return {"version": 1, "run_id": "r_bench", "agent": "main", "turn": 1, "status": "ok", "reply": reply,
            "steps": [], "compact": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "markdown.md"))
    parser.add_argument("--lexers-only", action="store_true", help="run only the lexer sweep (part 4)")
    args = parser.parse_args()
    load0 = os.getloadavg()[0]
    if args.lexers_only:
        sweep = lexer_sweep()
        load1 = os.getloadavg()[0]
        Path(args.out).write_text("\n".join([
            "# Markdown rendering (replies outside JupyterLab): the Pygments lexer sweep",
            "",
            "Command: `python -m benchmarks.bench_markdown --lexers-only`  ",
            f"Date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC}  ",
            f"Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}, "
            f"{platform.system()} {platform.release()}  ",
            f"Load average (1 min) at start / end: {load0:.1f} / {load1:.1f}.",
            "", *sweep]), encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
        return
    rows_big, rows_limit, rows_scale = [], [], []
    under = md.MAX_MARKDOWN_CHARS - 1
    for name, pattern in PATTERNS.items():
        big = _fill(pattern, MB)
        t_big = _median(lambda big=big: render.turn_html(_bundle(big)))
        small = _fill(pattern, under)
        t_small = _median(lambda small=small: render.turn_html(_bundle(small)))
        html = md.markdown_to_html(small)
        path = "text" if 'class="arcana-md-text"' in html else "Markdown"
        rows_big.append((name, t_big))
        rows_limit.append((name, t_small, path))
        print(f"{name:45s} 1 MB {t_big * 1000:7.1f} ms   {under:,} chars {t_small * 1000:7.1f} ms ({path})", flush=True)
    for name in ("nested brackets `[`×n `](`×n", "pipe table rows", "emphasis runs `*a _b `"):
        times = []
        for size in (50_000, 100_000, 200_000):
            text = _fill(PATTERNS[name], size)
            times.append(_median(lambda text=text, size=size: md.markdown_to_html(text, limit=size), repeat=1))
        rows_scale.append((name, times))
    sweep = lexer_sweep()
    load1 = os.getloadavg()[0]
    worst_big = max(t for _, t in rows_big)
    worst_limit = max(t for _, t, _ in rows_limit)
    lines = [
        "# Markdown rendering (replies outside JupyterLab)",
        "",
        "Command: `python -m benchmarks.bench_markdown`  ",
        f"Date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC}  ",
        f"Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}  ",
        f"Load average (1 min) at start / end: {load0:.1f} / {load1:.1f} — other work shared the machine.  ",
        f"Limits: `MAX_MARKDOWN_CHARS` = {md.MAX_MARKDOWN_CHARS:,}, `MAX_NESTING` = {md.MAX_NESTING}, "
        f"`MAX_HIGHLIGHT_CHARS` = {md.MAX_HIGHLIGHT_CHARS:,}, `HIGHLIGHT_SECONDS` = {md.HIGHLIGHT_SECONDS:g}, "
        f"`MAX_UNTIMED_HIGHLIGHT_CHARS` = {md.MAX_UNTIMED_HIGHLIGHT_CHARS:,} (arcana_jupyter/render/md.py).",
        "",
        f"## 1 MB of adversarial Markdown: `render.turn_html` (median of 3) — worst {worst_big * 1000:.0f} ms "
        f"({'under' if worst_big < 1 else 'OVER'} 1 s)",
        "",
        "| input (1,000,000 characters) | time |",
        "| --- | ---: |",
        *[f"| {name} | {t * 1000:.1f} ms |" for name, t in rows_big],
        "",
        f"## Just under the limit ({under:,} characters): through markdown-it-py and Pygments — worst "
        f"{worst_limit * 1000:.0f} ms",
        "",
        "| input | time | rendered as |",
        "| --- | ---: | --- |",
        *[f"| {name} | {t * 1000:.1f} ms | {path} |" for name, t, path in rows_limit],
        "",
        "## Linear growth: `markdown_to_html` with the limit lifted (one run each)",
        "",
        "| input | 50 KB | 100 KB | 200 KB |",
        "| --- | ---: | ---: | ---: |",
        *[f"| {name} | " + " | ".join(f"{t * 1000:.0f} ms" for t in times) + " |" for name, times in rows_scale],
        "",
        "Before (the hand-written regex renderer, issue 13): 60 KB of brackets 16 s, 100 KB 85 s; "
        "`\"> \" * 500 + \"deep\"` raised RecursionError.",
        "",
        *sweep,
        "Before (hostile pass, defect 1): highlighting was bounded in characters only — a 2 KB reply with a "
        "```systemd fence of one long line took 16.7 s, 4 KB over 30 s.",
        "",
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
