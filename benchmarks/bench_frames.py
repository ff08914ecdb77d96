"""Long runs: replay frames, the report, trace bytes and runtime overhead per turn, at several lengths.

Run: ``python -m benchmarks.bench_frames`` (adds a section at the top of ``benchmarks/results/frames.md``;
``--sizes 100,1000`` for other lengths; frames and the report only up to ``--frames-upto`` turns, 1,000 by
default; ``--cuts 250,500``: the frames of the largest run cut at those turns too, for linearity;
``--trace FILE`` measures a recorded trace instead of recording one).

Each size is one real session: ``Runtime`` with its default settings (engine mode, adaptive
context) and an 8k window, the model a FunctionProvider that answers instantly (every 10th turn a
tool call first, so the tool loop runs; every 25th turn the user pins a fact, and unpins it 10
turns later), its trace written to a real file. Measured per size:

- runtime overhead per turn (``chat.send`` wall time, the model's own time is nil, and its CPU time,
  ``time.process_time``, which a shared machine's load inflates less): median over the run and over
  its last 100 turns;
- trace bytes per turn: the file's size over the turns, and the bytes the last 100 turns added;
  bytes per context_decision line and how many are keyframes;
- reading the trace: a fresh reader's index, then one pass over the decisions (``decision_records``);
- ``build_frames`` of the whole run (what ``%arcana_replay`` and ``arcana report`` call), from a
  fresh reader (the file is indexed first), with every turn's digest checked, and without the checks
  (``verify=False``: what the frames cost apart from the builder's own builds);
- the report of a notebook whose output points at the run (``write_report``, no ``--verify``):
  time and page size.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from benchmarks._machine import cpu_model
from benchmarks.bench_runtime import answer, lookup  # the same instant model and tool as the runtime benchmark


async def record(turns: int, folder: Path) -> dict[str, Any]:
    runtime = Runtime(config=RuntimeConfig(trace_dir=folder, total_window=8192), tools=[lookup],
                      provider=FunctionProvider(answer, keep_requests=1))
    times: list[float] = []
    cpu: list[float] = []  # the same turns in CPU time (time.process_time): comparable across loads
    size_at: dict[int, int] = {}
    block = max(100, turns // 20)
    marks = [0]
    async with runtime.chat() as chat:
        pinned: dict[int, str] = {}
        for i in range(1, turns + 1):
            if i % 25 == 5:
                pinned[i + 10] = str(chat.pin(f"fact {i}: region {i % 17} targets {i * 3}", label=f"f{i}")["pin_id"])
            if i in pinned:
                chat.unpin(pinned.pop(i))
            text = (f"turn {i}: please lookup the figures for region {i % 17}" if i % 10 == 0
                    else f"turn {i}: what changed in region {i % 17} since last week?")
            start, start_cpu = time.perf_counter(), time.process_time()
            await chat.send(text)
            times.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
            if i % block == 0 and chat.trace_path:  # progress, and the growth as it happens (stderr)
                now = chat.trace_path.stat().st_size
                print(f"record: turn {i:,}/{turns:,}: {now / 1e6:.1f} MB; last {block} turns: "
                      f"{(now - marks[-1]) / block / 1000:.1f} KB/turn, median {statistics.median(times[-block:]):.1f} "
                      f"ms/turn (CPU {statistics.median(cpu[-block:]):.1f}); load {os.getloadavg()[0]:.1f}",
                      file=sys.stderr, flush=True)
                marks.append(now)
            if i == turns - min(100, turns // 2):
                size_at[0] = chat.trace_path.stat().st_size if chat.trace_path else 0
        run_id, path = chat.run_id, chat.trace_path
    assert path is not None
    size = path.stat().st_size
    last = min(100, turns // 2)
    return {"run_id": run_id, "path": path, "size": size, "median_ms": statistics.median(times),
            "last_ms": statistics.median(times[-last:]), "last": last,
            "median_cpu_ms": statistics.median(cpu), "last_cpu_ms": statistics.median(cpu[-last:]),
            "last_bytes": (size - size_at[0]) / last}


def notebook_for(run: dict[str, Any], folder: Path) -> Path:
    import nbformat

    nb_path = folder / "long.ipynb"
    traces = folder / "long.arcana"
    traces.mkdir()
    shutil.copy(run["path"], traces / run["path"].name)
    meta = {"arcana": {"run_id": run["run_id"], "agent": "main", "turn": 1,
                       "trace_path": f"long.arcana/{run['path'].name}"}}
    cell = nbformat.v4.new_code_cell("%%arcana\nturn 1")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/plain": "turn 1"}, metadata=meta)]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), nb_path)
    return nb_path


def decision_bytes(path: Path) -> dict[str, Any]:
    """Bytes of the run's context_decision lines: per decision, and how many are keyframes (chained
    decisions with no ``prev``, or full decisions of an older encoding)."""
    import json

    sizes, keyframes = [], 0
    with path.open("rb") as fh:
        for line in fh:
            if b'"event_type":"context_decision"' not in line:
                continue
            sizes.append(len(line))
            meta = json.loads(line)["metadata"]
            chain = meta.get("chain")
            keyframes += (chain.get("prev") is None) if isinstance(chain, dict) else \
                isinstance((meta.get("decision") or {}).get("decisions"), list)
    return {"decisions": len(sizes), "decision_bytes": sum(sizes), "keyframes": keyframes,
            "last_decision_bytes": sum(sizes[-140:]) / max(1, len(sizes[-140:]))}


def measure_reads(run: dict[str, Any], tmp: Path, *, frames: bool = True, full_checked: bool = True
                  ) -> dict[str, Any]:
    """Reading a recorded run: index, one pass, frames (three ways) and the report."""
    from arcana_jupyter.jupyter.replay_frames import build_frames
    from arcana_jupyter.report.build import write_report
    from arcana_jupyter.report.execute import read_notebook
    from arcana_jupyter.trace.reader import TraceReader

    out: dict[str, Any] = {}
    reader = TraceReader(run["path"].parent, shared=False)
    t0 = time.perf_counter()
    reader.run_info(run["run_id"])
    out["index_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    out["records"] = sum(1 for _ in reader.decision_records(run["run_id"]))  # every decision resolved once
    out["records_s"] = time.perf_counter() - t0
    from arcana_jupyter.trace.frames import FramePass

    fast = TraceReader(run["path"].parent, shared=False)
    fast.run_info(run["run_id"])
    t0, c0 = time.perf_counter(), time.process_time()
    sum(1 for _ in FramePass(fast, run["run_id"], "main").records())  # the frames' pass (columns patched in place)
    out["records_fast_s"], out["records_fast_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    if not frames:
        return out
    t0, c0 = time.perf_counter(), time.process_time()
    light = build_frames(run["path"].parent, run["run_id"], verify=False, rows=False,
                         reader=TraceReader(run["path"].parent, shared=False))
    out["frames_light_s"], out["frames_light_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    out["frames"] = len(light)
    del light
    t0, c0 = time.perf_counter(), time.process_time()
    unchecked = build_frames(run["path"].parent, run["run_id"], verify=False,
                             reader=TraceReader(run["path"].parent, shared=False))
    out["frames_unverified_s"], out["frames_unverified_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    del unchecked
    if full_checked:
        t0 = time.perf_counter()
        built = build_frames(run["path"].parent, run["run_id"],
                             reader=TraceReader(run["path"].parent, shared=False))
        out["frames_s"] = time.perf_counter() - t0
        out["verified"] = sum(1 for f in built if f["digest_verified"] is True)
        del built
    nb = notebook_for(run, tmp)
    t0, c0 = time.perf_counter(), time.process_time()
    page = write_report(nb, read_notebook(nb))
    out["report_s"], out["report_cpu"] = time.perf_counter() - t0, time.process_time() - c0
    out["page"] = page.stat().st_size
    return out


def measure(turns: int, *, frames: bool = True, keep: Path | None = None, full_checked: bool = True
            ) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        run = asyncio.run(record(turns, tmp / "traces"))
        record_s = time.perf_counter() - t0
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(run["path"], keep / run["path"].name)
            print(f"kept {keep / run['path'].name}", file=sys.stderr, flush=True)
        out: dict[str, Any] = {**run, **decision_bytes(run["path"]), "turns": turns, "record_s": record_s,
                               "load_start": load}
        out.update(measure_reads(run, tmp, frames=frames, full_checked=full_checked))
        out["load_end"] = os.getloadavg()[0]
    return out


def measure_trace(path: Path, *, full_checked: bool = True) -> dict[str, Any]:
    """Frames and report of a trace recorded before (``--trace``): what the readers cost on it."""
    import json

    with path.open("rb") as fh:
        run_id = json.loads(fh.readline())["run_id"]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        load = os.getloadavg()[0]
        (tmp / "traces").mkdir()
        shutil.copy(path, tmp / "traces" / path.name)
        run = {"run_id": run_id, "path": tmp / "traces" / path.name}
        from arcana_jupyter.tokens import TokenCounter
        from arcana_jupyter.trace.reader import TraceReader

        # the tokenizer loaded first, as after a recording (and in a kernel): the frames count pins' tokens
        TokenCounter(TraceReader(run["path"], shared=False).run_info(run_id).model).count_text("x")
        out = {"trace": str(path), "load_start": load, **measure_reads(run, tmp, full_checked=full_checked)}
        out["load_end"] = os.getloadavg()[0]
    return out


def cut(path: Path, turns: int, folder: Path) -> Path:
    """The trace's lines up to the last of turn ``turns`` (the same run cut there), in ``folder``."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    out = folder / path.name
    with path.open("rb") as src, out.open("wb") as dst:
        for line in src:
            if not line.endswith(b"\n"):
                break
            if (json.loads(line).get("turn") or 0) > turns:
                break
            dst.write(line)
    return out


def frames_per_turn(path: Path, cuts: list[int], tries: int = 2) -> list[dict[str, Any]]:
    """Linearity: ``build_frames`` (rows on demand, unchecked: what ``%arcana_replay`` and the report use)
    of the same run cut at each of ``cuts`` turns (and whole), a fresh reader each time, the tokenizer
    loaded first; the best CPU time of ``tries`` (``time.process_time``) and its wall time."""
    import json

    from arcana_jupyter.jupyter.replay_frames import build_frames
    from arcana_jupyter.tokens import TokenCounter
    from arcana_jupyter.trace.reader import TraceReader

    with path.open("rb") as fh:
        run_id = json.loads(fh.readline())["run_id"]
    out = []
    with tempfile.TemporaryDirectory() as tmp_name:
        for n in sorted(set(cuts), key=lambda c: c or float("inf")):  # 0: the whole run, last
            trace = cut(path, n, Path(tmp_name) / str(n)) if n else path
            TokenCounter(TraceReader(trace.parent, shared=False).run_info(run_id).model).count_text("x")
            best: tuple[float, float, int] | None = None
            for _ in range(tries):
                t0, c0 = time.perf_counter(), time.process_time()
                frames = build_frames(trace.parent, run_id, verify=False, rows=False,
                                      reader=TraceReader(trace.parent, shared=False))
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                if best is None or cpu < best[1]:
                    best = (wall, cpu, len(frames))
                del frames
            assert best is not None
            out.append({"turns": best[2], "wall": best[0], "cpu": best[1], "load": os.getloadavg()[0]})
            print(f"frames of the run cut at {best[2]:,} turns: CPU {best[1]:.2f} s ({best[1] / best[2] * 1000:.2f} "
                  f"ms/turn), wall {best[0]:.2f} s, load {out[-1]['load']:.1f}", file=sys.stderr, flush=True)
    return out


def cuts_text(rows: list[dict[str, Any]]) -> str:
    return "\n".join(f"| {r['turns']:,} | {r['cpu']:.2f} s | {r['cpu'] / r['turns'] * 1000:.2f} ms | {r['wall']:.2f} s "
                     f"| {r['load']:.1f} |" for r in rows)


def frames_text(r: dict[str, Any]) -> str:
    n = max(1, r["frames"])
    text = (f"rows on demand, unchecked {r['frames_light_s']:.2f} s ({r['frames_light_s'] / n * 1000:.2f} ms/turn, "
            f"CPU {r['frames_light_cpu']:.2f} s); "
            f"every row, unchecked {r['frames_unverified_s']:.2f} s (CPU {r['frames_unverified_cpu']:.2f} s)")
    if "frames_s" in r:
        text += f"; every row, every digest checked {r['frames_s']:.2f} s ({r['verified']:,}/{r['frames']:,} verified)"
    return text


def row(r: dict[str, Any]) -> str:
    turns = r["turns"]
    if "frames" in r:
        frames = frames_text(r)
        report = f"{r['report_s']:.2f} s (CPU {r['report_cpu']:.2f} s), {r['page'] / 1e6:.1f} MB"
    else:
        frames = report = "not measured (see below)"
    return (f"| {turns:,} | {frames} | {report} | {r['index_s']:.2f} s + {r['records_s']:.2f} s "
            f"| {r['size'] / 1e6:.1f} MB | {r['size'] / turns / 1000:.1f} KB | {r['last_bytes'] / 1000:.1f} KB "
            f"| {r['decision_bytes'] / r['decisions'] / 1000:.1f} KB ({r['keyframes']} keyframes) "
            f"| {r['median_ms']:.1f} ms (CPU {r['median_cpu_ms']:.1f}) "
            f"| {r['last_ms']:.1f} ms (CPU {r['last_cpu_ms']:.1f}) "
            f"| {r['load_start']:.1f} / {r['load_end']:.1f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="100,1000,5000", help="comma-separated run lengths in turns")
    parser.add_argument("--frames-upto", type=int, default=1000,
                        help="measure frames and the report only up to this many turns (they hold every turn's "
                             "decision rows in memory)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "frames.md")
    parser.add_argument("--keep", type=Path, default=None, help="copy each recorded trace into this folder")
    parser.add_argument("--trace", type=Path, default=None,
                        help="measure only the frames and the report of this recorded trace (no recording)")
    parser.add_argument("--no-checked-frames", action="store_true",
                        help="skip the frames with every digest checked (a builder run per turn: slow)")
    parser.add_argument("--cuts", default="",
                        help="comma-separated turn counts: frames of the (largest) run cut there too, to see "
                             "whether their cost per turn stays flat")
    args = parser.parse_args(argv)
    cuts = [int(c) for c in args.cuts.split(",") if c.strip()]
    if args.trace is not None:
        if cuts:
            print(cuts_text(frames_per_turn(args.trace, [*cuts, 0])), flush=True)
        r = measure_trace(args.trace, full_checked=not args.no_checked_frames)
        print(f"{r['trace']}: frames: {frames_text(r)}; report {r['report_s']:.2f} s (CPU {r['report_cpu']:.2f} s), "
              f"{r['page'] / 1e6:.1f} MB; "
              f"index {r['index_s']:.2f} s + one pass {r['records_s']:.2f} s (the frames' fast path: "
              f"{r['records_fast_s']:.2f} s, CPU {r['records_fast_cpu']:.2f} s); "
              f"load {r['load_start']:.1f} / {r['load_end']:.1f}", flush=True)
        return
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    rows = []
    linear = ""
    keep = args.keep if args.keep is not None or not cuts else Path(tempfile.mkdtemp(prefix="bench_frames_"))
    for turns in sizes:
        r = measure(turns, frames=turns <= args.frames_upto, keep=keep, full_checked=not args.no_checked_frames)
        rows.append(row(r))
        print(rows[-1], flush=True)
        if cuts and turns == max(sizes) and keep is not None:
            linear = cuts_text(frames_per_turn(keep / r["path"].name, [c for c in cuts if c < turns] + [0]))
    cmd = "python -m benchmarks.bench_frames" + ("" if args.sizes == "100,1000,5000" else f" --sizes {args.sizes}") \
        + ("" if args.frames_upto == 1000 else f" --frames-upto {args.frames_upto}")
    machine = (f"{os.cpu_count()} CPUs (nproc), {cpu_model()}, Python {platform.python_version()}, "
               f"{platform.system()} {platform.release()}")
    head = ("| turns | `build_frames`, whole run (fresh reader): rows on demand (what the report and "
            "`%arcana_replay` use), every row, every row and digest "
            "| report (no --verify): time, page | trace read: index + one pass over the decisions "
            "| trace | bytes per turn (whole run) | bytes per turn (last 100 turns) | bytes per decision "
            "| runtime overhead per turn, median | median of the last 100 turns "
            "| load average (1 min) at start / end |")
    if linear:
        cmd += f" --cuts {args.cuts}"
        linear = ("\n\nFrames of the largest run cut at fewer turns (rows on demand, unchecked; best CPU of 2):\n\n"
                  "| turns | CPU | per turn | wall | load |\n| ---: | ---: | ---: | ---: | ---: |\n" + linear)
    text = f"""## `{cmd}`, {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}

Command: `{cmd}`
Date: {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}
Machine: {machine} — shared with other work (load average per size in the last column).

One real session per size (default settings: engine mode; 8k window; instant FunctionProvider; a
tool call every 10th turn; a pin every 25 turns, unpinned 10 turns later).

{head}
| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |
{chr(10).join(rows)}{linear}
"""
    # a new top section: the file keeps every earlier measurement below it
    title = "# Long runs: frames, report, trace bytes, runtime overhead\n"
    before = args.out.read_text() if args.out.exists() else title
    rest = before[len(title):].lstrip("\n") if before.startswith(title) else before
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(f"{title}\n{text}\n{rest}")
    print(text)


if __name__ == "__main__":
    main()
