"""Hostile input, bounded (issue 35): what a trace bomb, a chat template or a table costs before it is refused,
and what the bounds cost real traces.

Run: ``python -m benchmarks.bench_hostile`` (writes ``benchmarks/results/hostile.md``; ``--turns N`` for the
recorded run, 300 by default; ``--reading-only --trace FILE`` prints the reading figures of a recorded trace
only, e.g. with another checkout's package first on ``PYTHONPATH`` for a before/after).

1. Trace bombs (docs/SECURITY.md, "Limits on what a trace can make us hold"): each written into the file of a
   short real run, then read as a user would (``TraceReader.prompt_sent`` / ``replay_prompt``): the file's
   bytes, the time to the refusal (CPU, ``time.process_time``) and the peak of Python allocations while
   reading it (``tracemalloc``), and that peak per byte of the file.
2. Reading a real run with the bounds: a default-mode session of ``--turns`` turns (the instant model of
   ``bench_runtime``), read by a fresh reader — the index (which checks each line's nesting), every decision
   (``decision_records``), every prompt as sent (``prompts_sent``) and the replay frames without digest checks
   (``build_frames(verify=False)``) — and the nesting check alone over every line.
3. The chat-template probe, out of process: each vendored real template (wall and CPU of the kernel's side),
   and the hostile ones until their bound.
4. Markdown: the issue's table (a 4-column header over one-character rows) and a dense real one.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._machine import cpu_model

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "tests" / "fixtures" / "chat_templates"


def _cpu(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


# -- 1. trace bombs ------------------------------------------------------------------------------------


def _short_run(folder: Path) -> tuple[str, list[dict[str, Any]]]:
    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.runtime import Runtime, RuntimeConfig

    answers = iter(["one " * 30, "two " * 30, "three " * 30])
    runtime = Runtime(config=RuntimeConfig(trace_dir=folder, context_engine=False, embeddings="off"),
                      provider=FunctionProvider(lambda request: next(answers)))
    with runtime.chat() as chat:
        for text in ("first question", "second question", "third question"):
            chat.send_sync(text)
        run_id, path = chat.run_id, chat.trace_path
    assert path is not None
    return run_id, [json.loads(line) for line in path.read_text().splitlines()]


def _event(run_id: str, event_id: str, event_type: str, turn: int, metadata: dict[str, Any],
           parent_id: str | None = None) -> dict[str, Any]:
    return {"v": 1, "event_id": event_id, "run_id": run_id, "agent": "main", "turn": turn,
            "ts": "2026-12-01T00:00:00.000000Z", "event_type": event_type, "parent_id": parent_id,
            "metadata": metadata}


def _bombs(run_id: str, events: list[dict[str, Any]]) -> dict[str, tuple[list[dict[str, Any]], str, int]]:
    """name -> (the events, what to read: "prompt" or "decision", the turn)."""
    def sent_at(turn: int) -> int:
        return next(i for i, e in enumerate(events) if e["event_type"] == "prompt_sent" and e["turn"] == turn)

    decision3 = next(e for e in events if e["event_type"] == "context_decision" and e["turn"] == 3)
    out: dict[str, tuple[list[dict[str, Any]], str, int]] = {}
    lines = 8
    chain = [_event(run_id, "e_900000", "prompt_sent", 3, {"step": 7, "digest": None, "prev": None, "keep": 0,
             "messages": [{"role": "user", "content": "\n".join(["abcdefghijklmnopqrstuvwxyz"] * lines)}]})]
    for k in range(1, 41):
        chain.append(_event(run_id, f"e_9{k:05d}", "prompt_sent", 3, {
            "step": 0 if k == 40 else 7, "digest": None, "prev": chain[-1]["event_id"], "keep": 0,
            "messages": [{"e": [0, [[0, lines], [0, lines]]]}]}, parent_id=decision3["event_id"] if k == 40 else None))
        lines *= 2
    at = sent_at(3)
    out["row 4: 40 line edits, each copying the last text twice"] = ([*events[:at], *chain, *events[at + 1:]],
                                                                    "prompt", 3)
    big = _event(run_id, "e_900000", "user_message", 3, {"message": {"role": "user", "content": "x" * 100_000},
                                                          "history_index": 999})
    sent = json.loads(json.dumps(events[at]))
    sent["metadata"].update({"prev": None, "keep": 0, "messages": [{"h": 999}] * 100_000})
    out["row 5: 100,000 references to one 100 KB message"] = ([*events[:at], big, sent, *events[at + 1:]],
                                                              "prompt", 3)
    for name, change in (("rows.count 2e8 (every column a run)", "rows"), ("400 overflow runs of 10M", "overflow"),
                         ("300 moved runs of 1M", "moved")):
        copy = json.loads(json.dumps(events))
        first = next(e for e in copy if e["event_type"] == "context_decision" and e["turn"] == 1)
        chain1 = first["metadata"]["chain"]
        if change == "rows":
            chain1["rows"]["count"] = 200_000_000
            chain1["rows"]["columns"] = {k: [["r", 200_000_000, 0]] for k in chain1["rows"]["columns"]}
        elif change == "overflow":
            chain1["overflow"] = {"checkpoint": [[1, 10_000_000]] * 400}
        else:
            first["metadata"].setdefault("shape", {"name": "portable"})
            chain1["moved"] = [[0, 1_000_000, "kept", 0]] * 300
        out[f"row 6: {name}"] = (copy, "decision", 2)
    loop = json.loads(json.dumps(events))
    at2 = sent_at(2)
    loop[at2]["metadata"]["prev"] = loop[at2]["event_id"]
    out["row 8: a prompt_sent whose prev is its own id"] = (loop, "prompt", 2)
    return out


def bombs(folder: Path) -> list[str]:
    from arcana_jupyter.exceptions import TraceError
    from arcana_jupyter.trace import TraceReader

    run_id, events = _short_run(folder / "base")
    rows = []
    for n, (name, (bomb, what, turn)) in enumerate(_bombs(run_id, events).items()):
        case = folder / f"bomb{n}"
        case.mkdir()
        path = case / f"{run_id}.jsonl"
        path.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in bomb))
        size = path.stat().st_size
        reader = TraceReader(case, shared=False)
        reader.list_runs()  # indexed first: the bomb is in what is read next
        tracemalloc.start()
        start = time.process_time()
        try:
            reader.prompt_sent(run_id, turn) if what == "prompt" else reader.replay_prompt(run_id, turn)
            outcome = "read (not refused!)"
        except TraceError as exc:
            outcome = "TraceError: " + str(exc).split(": ", 2)[-1][:90]
        except MemoryError:
            outcome = "MemoryError"
        cpu = time.process_time() - start
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        rows.append(f"| {name} | {size:,} | {cpu * 1000:.1f} ms | {peak / 1e6:.1f} MB | {peak / size:.0f} "
                    f"| {outcome} |")
        print(rows[-1], flush=True)
    deep = folder / "deep"
    deep.mkdir()
    text = (folder / "base" / f"{run_id}.jsonl").read_text()
    line = '{"v":1,"event_id":"e_999999","run_id":"' + run_id + '","event_type":"note","metadata":{"x":' + \
        "[" * 100_000 + "]" * 100_000 + "}}\n"
    (deep / f"{run_id}.jsonl").write_text(text + line)
    size = (deep / f"{run_id}.jsonl").stat().st_size
    tracemalloc.start()
    start = time.process_time()
    reader = TraceReader(deep, shared=False)
    reader.list_runs()
    listed = any("nested deeper" in w for w in reader.warnings)
    cpu = time.process_time() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rows.append(f"| row 9: one line of 100,000 nested lists (indexing the file) | {size:,} | {cpu * 1000:.1f} ms | "
                f"{peak / 1e6:.1f} MB | {peak / size:.0f} | {'skipped and listed' if listed else 'NOT listed'} |")
    print(rows[-1], flush=True)
    return ["| bomb | file bytes | CPU to the refusal | peak allocations | bytes held per file byte | outcome |",
            "| --- | ---: | ---: | ---: | ---: | --- |", *rows]


# -- 2. reading a real run ------------------------------------------------------------------------------


async def _record(turns: int, folder: Path) -> Path:
    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.runtime import Runtime, RuntimeConfig
    from benchmarks.bench_runtime import answer, lookup

    runtime = Runtime(config=RuntimeConfig(trace_dir=folder, total_window=8192), tools=[lookup],
                      provider=FunctionProvider(answer, keep_requests=1))
    async with runtime.chat() as chat:
        for i in range(1, turns + 1):
            await chat.send(f"turn {i}: what changed in region {i % 17} since last week?")
        assert chat.trace_path is not None
        return chat.trace_path


def reading(path: Path) -> list[tuple[str, float]]:
    from arcana_jupyter.jupyter.replay_frames import build_frames
    from arcana_jupyter.trace import TraceReader

    run_id = path.stem
    out: list[tuple[str, float]] = []
    reader = TraceReader(path.parent, shared=False)
    out.append(("index (fresh reader, every line parsed and checked)", _cpu(reader.list_runs)[0]))
    out.append(("every decision (decision_records)", _cpu(lambda: sum(1 for _ in reader.decision_records(run_id)))[0]))
    out.append(("every prompt as sent (prompts_sent, digests checked)",
                _cpu(lambda: sum(1 for _ in reader.prompts_sent(run_id)))[0]))
    out.append(("replay frames (build_frames, verify=False)",
                _cpu(lambda: build_frames(path.parent, run_id, reader=TraceReader(path.parent, shared=False),
                                          verify=False))[0]))
    try:
        from arcana_jupyter.trace.limits import too_deep
    except ImportError:  # a checkout from before the bounds
        return out
    lines = path.read_bytes().splitlines()
    out.append(("the nesting check alone, over every line (limits.too_deep)",
                _cpu(lambda: sum(map(too_deep, lines)))[0]))
    return out


# -- 3. the probe --------------------------------------------------------------------------------------


def probe() -> list[str]:
    from arcana_jupyter.providers import chat_templates
    from arcana_jupyter.providers.chat_templates import detect_shape, shape_for_model

    rows = []
    for path in sorted(TEMPLATES.glob("*.jinja")):
        wall0, cpu0 = time.perf_counter(), time.process_time()
        shape = detect_shape(path.read_text() + "{# bench #}")
        rows.append(f"| {path.stem} | {shape.name} | {(time.perf_counter() - wall0) * 1000:.0f} ms | "
                    f"{(time.process_time() - cpu0) * 1000:.1f} ms |")
    hostile = {
        "two nested range(100000) loops": "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}"
                                          "{% endfor %}{% endfor %}",
        "lipsum(n=10**8)": "{{ lipsum(n=10**8) }}{% for m in messages %}{{ m.content }}{% endfor %}",
        "7 ** 1000000000": "{{ 7 ** 1000000000 }}{% for m in messages %}{{ m.content }}{% endfor %}",
    }
    for name, template in hostile.items():
        wall0, cpu0 = time.perf_counter(), time.process_time()
        shape = detect_shape(template, shape_for_model("gemma-2-9b-it"))
        rows.append(f"| {name} | {shape.name} ({shape.problem}) | {(time.perf_counter() - wall0) * 1000:.0f} ms | "
                    f"{(time.process_time() - cpu0) * 1000:.1f} ms |")
        print(rows[-1], flush=True)
    return [f"Bounds: {chat_templates.PROBE_SECONDS:g} s wall clock; the process limits itself to 512 MB of address "
            "space and 5 s of CPU.", "",
            "| template | shape | wall (probe process started, rendered, answered) | kernel CPU |",
            "| --- | --- | ---: | ---: |", *rows]


# -- 4. markdown ---------------------------------------------------------------------------------------


def markdown() -> list[str]:
    from arcana_jupyter.render.md import markdown_to_html

    cases = {
        "the issue's: 4-column header, one-character rows": "| a | b | c | d |\n|---|---|---|---|\n" + "|\n" * 24_977,
        "8 columns, rows without a pipe": "a|b|c|d|e|f|g|h\n-|-|-|-|-|-|-|-\n" + "x\n" * 24_979,
        "the densest that renders: rows of two cells `xx` and `y` (2 cells in 7 characters)":
            "|a|b|\n|-|-|\n" + "|xx|y|\n" * 7_139,
        "a real table: 1,400 rows of 4 cells": "| region | Q1 | Q2 | growth |\n|---|---:|---:|---:|\n" + "".join(
            f"| north-{i} | {i * 7} | {i * 9} | {i % 13}% |\n" for i in range(1_400)),
    }
    rows = []
    for name, text in cases.items():
        start = time.perf_counter()
        html = markdown_to_html(text)
        took = time.perf_counter() - start
        how = "text" if "Shown as text" in html else "Markdown"
        rows.append(f"| {name} | {len(text):,} | {took * 1000:.0f} ms | {took / len(text) * 1e6:.2f} µs | {how} |")
    return ["| reply | characters | time | per character | rendered as |", "| --- | ---: | ---: | ---: | --- |", *rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "hostile.md"))
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--trace", help="measure the reading of this recorded trace instead of recording one")
    parser.add_argument("--reading-only", action="store_true")
    args = parser.parse_args()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = Path(args.trace) if args.trace else asyncio.run(_record(args.turns, folder / "run"))
        read = reading(path)
        for name, cpu in read:
            print(f"{name}: {cpu * 1000:.0f} ms CPU", flush=True)
        if args.reading_only:
            return
        bomb_rows = bombs(folder / "bombs")
        probe_rows = probe()
        md_rows = markdown()
        size = path.stat().st_size
    load1 = os.getloadavg()[0]
    lines = [
        "# Hostile input, bounded (issue 35)", "",
        "Command: `python -m benchmarks.bench_hostile`  ",
        f"Date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC}  ",
        f"Machine: {os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}  ",
        f"Load average (1 min) at start / end: {load0:.1f} / {load1:.1f} — other work shared the machine.", "",
        "## Trace bombs: refused, at a cost that follows the file", "",
        *bomb_rows, "",
        f"## Reading a real run with the bounds: {args.turns} turns, default mode, {size / 1e6:.2f} MB", "",
        "| what | CPU |", "| --- | ---: |", *[f"| {name} | {cpu * 1000:.0f} ms |" for name, cpu in read], "",
        "## The chat-template probe, out of process", "", *probe_rows, "",
        "## Markdown tables", "", *md_rows, "",
    ]
    Path(args.out).write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
