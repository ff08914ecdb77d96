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
3. markdown-it-py alone at 50 / 100 / 200 KB (limit lifted), to show the time grows linearly.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
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


def _bundle(reply: str) -> dict:
    return {"version": 1, "run_id": "r_bench", "agent": "main", "turn": 1, "status": "ok", "reply": reply,
            "steps": [], "compact": True}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "markdown.md"))
    args = parser.parse_args()
    load0 = os.getloadavg()[0]
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
        f"`MAX_HIGHLIGHT_CHARS` = {md.MAX_HIGHLIGHT_CHARS:,} (arcana_jupyter/render/md.py).",
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
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
