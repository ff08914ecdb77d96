"""Reproducer (open gap of issue 35, rows 6-7): many decisions, each within its own bound, in one trace.

trace/limits.py bounds what *one* record resolves to by the bytes of its file (a decision: 4,096 + one
row per 64 bytes). The replay frames hold, or digest-check, every turn's decision: the report's replay
(``build_frames`` with rows, runs of at most 100 turns) and ``%arcana_replay`` (every digest checked up to
200 turns) spend the sum over the records — the number of decisions times the per-record bound.

This writes a real short run's first decision again as N turns' keyframes, each of the most rows its
file allows (every column one run, a few columns varying by turn), the file padded by a note event,
then reads it as the report and as ``%arcana_replay`` do, in a child process whose address space is
capped (``--cap-gb``, 3 by default), and prints CPU, peak RSS and the outcome.

Run: ``python -m benchmarks.repro_many_record_bombs [--turns 60] [--pad 3000000] [--cap-gb 3]``.
Measured at the end of the issue-35 audit (2 CPUs, shared), 3 GB cap: 60 turns, 3.2 MB, 54,499 rows each
(3.27M in all): the report's frames MemoryError after 23.7 s CPU (peak RSS 3.0 GB; once an abort in a Rust
extension instead), ``%arcana_replay``'s frames 122.8 s CPU and 1.8 GB; 100 turns of 56,925 rows (3.4 MB):
``%arcana_replay``'s 224.6 s CPU and 2.3 GB. ``arcana report`` on a notebook whose run's trace was made so
(60 turns, 3.4 MB): "arcana: error: unexpected MemoryError (this is a bug ...)", exit 70.
"""

from __future__ import annotations

import argparse
import copy
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VARYING = ("index", "position", "token_count_before", "turn")


def short_run(folder: Path) -> list[dict]:
    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.runtime import Runtime, RuntimeConfig

    answers = iter(["one " * 30, "two " * 30])
    runtime = Runtime(config=RuntimeConfig(trace_dir=folder, context_engine=False, embeddings="off"),
                      provider=FunctionProvider(lambda request: next(answers)))
    with runtime.chat() as chat:
        chat.send_sync("first question")
        chat.send_sync("second question")
        path = chat.trace_path
    assert path is not None
    return [json.loads(line) for line in path.read_text().splitlines()]


def write(folder: Path, turns: int, pad: int) -> tuple[str, int, int]:
    from arcana_jupyter.trace.limits import max_rows

    events = short_run(folder / "base")
    first = {e["event_type"]: e for e in events if e["turn"] == 1}
    keys = first["context_decision"]["metadata"]["chain"]["rows"]["keys"]

    def text(rows: int) -> str:
        out = [events[0], {**first["turn_start"], "event_id": "e_900000", "event_type": "note", "turn": None,
                           "metadata": {"pad": "p" * pad}}]
        n = 1
        for turn in range(1, turns + 1):
            for kind in ("turn_start", "user_message", "context_decision", "turn_end"):
                event = copy.deepcopy(first[kind])
                n += 1
                event["event_id"], event["turn"] = f"e_{n:06d}", turn
                if kind == "user_message":
                    event["metadata"]["history_index"] = 2 * turn - 1
                if kind == "context_decision":
                    event["metadata"]["decision"]["turn"] = turn
                    event["metadata"]["chain"]["rows"] = {"count": rows, "keys": keys, "columns": {
                        k: [["r", rows, turn if k in VARYING else 0]] for k in keys}}
                out.append(event)
        return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in out)

    rows = max_rows(len(text(4096).encode())) - 64
    body = text(rows)
    assert rows <= max_rows(len(body.encode()))  # every decision within its own bound
    (folder / "bomb").mkdir()
    path = folder / "bomb" / f"{events[0]['run_id']}.jsonl"
    path.write_text(body)
    return events[0]["run_id"], len(body.encode()), rows


def child(folder: str, run_id: str, how: str, cap_gb: float) -> None:
    cap = int(cap_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from arcana_jupyter.jupyter.replay_frames import build_frames
    from arcana_jupyter.trace import TraceReader

    kwargs = {"report": {}, "replay": {"verify": True, "rows": False}}[how]
    start = time.process_time()
    try:
        outcome = f"{len(build_frames(folder, run_id, reader=TraceReader(folder, shared=False), **kwargs))} frames"
    except MemoryError:
        outcome = "MemoryError"
    except Exception as exc:  # a TraceError is what the fix would give
        outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{how}: {outcome}; {time.process_time() - start:.1f} s CPU, peak RSS {rss:,.0f} MB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--pad", type=int, default=3_000_000)
    parser.add_argument("--cap-gb", type=float, default=3.0)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.child[2], args.cap_gb)
        return
    with tempfile.TemporaryDirectory() as tmp:
        run_id, size, rows = write(Path(tmp), args.turns, args.pad)
        print(f"{args.turns} decisions of {rows:,} rows each (the per-record bound), {size:,} bytes, "
              f"{args.turns * rows:,} rows in all", flush=True)
        for how in ("report", "replay"):
            subprocess.run([sys.executable, "-m", "benchmarks.repro_many_record_bombs", "--cap-gb", str(args.cap_gb),
                            "--child", str(Path(tmp) / "bomb"), run_id, how], check=False, timeout=3600)


if __name__ == "__main__":
    main()
