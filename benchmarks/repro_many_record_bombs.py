"""Many decisions, each within its own bound, in one trace (issue 35, rows 6-7 over a whole run).

trace/limits.py bounded what *one* record resolves to by the bytes of its file (a decision: 4,096 + one
row per 64 bytes). The replay frames hold, or digest-check, every turn's decision: the report's replay
(``build_frames`` with rows, runs of at most 100 turns) and ``%arcana_replay`` (every digest checked up to
200 turns) spent the sum over the records — the number of decisions times the per-record bound.

This writes a real short run's first decision again as N turns' keyframes, each of the most rows its
file allows (every column one run, a few columns varying by turn), the file padded by a note event,
then reads it as the report (every row, every digest checked) and as ``%arcana_replay`` (rows on demand,
every digest checked) do, in a child process whose address space is capped (``--cap-gb``, 3 by default),
and prints CPU, peak RSS and the outcome. ``--within M`` writes the bomb made to pass the bound that
answers it (a decision's rows at most the transcript recorded before it): M one-line transcript records,
then N small chained decisions of M + 1 rows each, changing every row every turn (``--unchanged``: none,
each claiming the whole transcript for its digest check).

Run: ``python -m benchmarks.repro_many_record_bombs [--turns 60] [--pad 3000000] [--cap-gb 3]
[--within 10000 [--unchanged]]``.

Measured at the end of the issue-35 audit (audit-35, 2 CPUs, shared), 3 GB cap: 60 turns, 3.2 MB, 54,499
rows each (3.27M in all): the report's frames MemoryError after 23.7 s CPU (peak RSS 3.0 GB; once an
abort in a Rust extension instead), ``%arcana_replay``'s frames 122.8 s CPU and 1.8 GB; ``arcana report`` on
a notebook whose run's trace was made so: "arcana: error: unexpected MemoryError (this is a bug ...)",
exit 70. After (issue-35-runbound: the transcript bound, the pass's budget): every one of the 60 decisions
refused (65 rows allowed each), 0.1 s CPU, 97 MB; ``--within 10000 --turns 1000`` (2.4 MB) 1.6-2.2 s and
160-234 MB, the first 21 turns replayed, the rest refused; ``--within 10000 --turns 200 --unchanged``
(1.9 MB) 5.3-6.1 s and 305-316 MB, the digests of the first turns checked (benchmarks/results/hostile.md).
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


def write_within(folder: Path, turns: int, messages: int, change: bool = True) -> tuple[str, int, int]:
    """The bomb made to pass the transcript bound (trace/limits.py ``FileLimits.for_decision``): ``messages``
    minimal transcript records first (one user message each), then ``turns`` small chained decisions, each
    of as many rows as there are messages, every frame column rewritten (``index`` and ``outcome`` one run
    of a value that changes every turn: every row changes and moves in the turn-to-turn diff). Each
    decision is within its bound; the pass over them is ``turns`` times ``messages`` rows."""
    events = short_run(folder / "base")
    first = {e["event_type"]: e for e in events if e["turn"] == 1}
    keys = first["context_decision"]["metadata"]["chain"]["rows"]["keys"]
    run_id = events[0]["run_id"]
    rows = messages + 1  # the system prompt is not a transcript record: one of the 64 rows of slack
    n = 0

    def eid() -> str:
        nonlocal n
        n += 1
        return f"e_{n:07d}"

    def line(event: dict) -> str:
        return json.dumps(event, separators=(",", ":")) + "\n"

    out = [line(events[0])]
    for h in range(1, messages + 1):
        out.append(line({"event_id": eid(), "run_id": run_id, "turn": 1, "event_type": "user_message",
                         "metadata": {"message": {"role": "user", "content": "q"}, "history_index": h}}))
    prev = None
    for turn in range(1, turns + 1):
        if prev is None:
            decision = copy.deepcopy(first["context_decision"])
            decision["metadata"]["chain"]["rows"] = {"count": rows, "keys": keys, "columns": {
                k: [["r", rows, 0]] for k in keys}}
        else:
            decision = {"run_id": run_id, "event_type": "context_decision", "metadata": {"step": 0, "chain": {
                "v": 2, "prev": prev, "same": ["tools", "builder", "shape", "inputs.pins", "inputs.sections",
                                               "inputs.task", "inputs.overflow"],
                "patch": {"decision": {"turn": [turn]}},
                "rows": {"count": rows, "align": [[0, rows, 0]], "columns": {
                    k: ([["r", rows, turn]] if k == "index" and change else
                        [["r", rows, ("kept", "dropped")[turn % 2]]] if k == "outcome" and change else [rows])
                    for k in keys}}}}}
        decision["event_id"], decision["turn"] = eid(), turn
        prev = decision["event_id"]
        out.append(line(decision))
    body = "".join(out)
    (folder / "bomb").mkdir()
    (folder / "bomb" / f"{run_id}.jsonl").write_text(body)
    return run_id, len(body.encode()), rows


def child(folder: str, run_id: str, how: str, cap_gb: float) -> None:
    cap = int(cap_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    from arcana_jupyter.jupyter.replay_frames import build_frames
    from arcana_jupyter.trace import TraceReader

    kwargs = {"report": {}, "replay": {"verify": True, "rows": False}}[how]
    start = time.process_time()
    try:
        frames = build_frames(folder, run_id, reader=TraceReader(folder, shared=False), **kwargs)
        refused = [f for f in frames if f.get("decision_error")]
        unchecked = sum(1 for f in frames if "checks of this run would rebuild more" in (f.get("digest_note") or ""))
        outcome = (f"{len(frames)} frames, {len(refused)} of their decisions refused, "
                   f"{sum(1 for f in frames if f.get('digest_verified') is not None)} digests checked, {unchecked} "
                   "left unchecked for the pass's budget")
        if refused:
            outcome += f" (the first: {refused[0]['decision_error'][-200:]})"
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
    parser.add_argument("--within", type=int, default=0, metavar="MESSAGES",
                        help="the bomb made to pass the transcript bound instead: MESSAGES transcript records, then "
                             "--turns decisions of as many rows each")
    parser.add_argument("--unchanged", action="store_true",
                        help="with --within: the decisions change no row (what the frames' pass does not count)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.child[2], args.cap_gb)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if args.within:
            run_id, size, rows = write_within(Path(tmp), args.turns, args.within, not args.unchanged)
            print(f"{args.within:,} transcript records, then {args.turns} decisions of {rows:,} rows each (within "
                  f"the transcript bound), {size:,} bytes, {args.turns * rows:,} rows in all", flush=True)
        else:
            run_id, size, rows = write(Path(tmp), args.turns, args.pad)
            print(f"{args.turns} decisions of {rows:,} rows each (the per-record bound), {size:,} bytes, "
                  f"{args.turns * rows:,} rows in all", flush=True)
        for how in ("report", "replay"):
            subprocess.run([sys.executable, "-m", "benchmarks.repro_many_record_bombs", "--cap-gb", str(args.cap_gb),
                            "--child", str(Path(tmp) / "bomb"), run_id, how], check=False, timeout=3600)


if __name__ == "__main__":
    main()
