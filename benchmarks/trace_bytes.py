"""Where a trace's bytes per turn go: by event type, by field of the decisions and prompts, and by
column of the chained decisions' rows, over windows of turns (what grows with the history).

Run: ``python -m benchmarks.trace_bytes TRACE.jsonl [--windows 1-100,901-1000]``. Sizes are of the
compact JSON of each part, per turn of the window (a window the trace does not reach is left out).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

Table = dict[tuple[int, int], dict[str, int]]


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":")))


def _parts(obj: dict[str, Any], size: int) -> list[tuple[str, str, int]]:
    """(table, key, bytes) of one trace line: its event type, its decision / prompt fields, its columns."""
    kind = str(obj.get("event_type"))
    out = [("events", kind, size)]
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    if kind == "context_decision":
        chain = meta.get("chain")
        if isinstance(chain, dict):  # chained decisions: the keyframes' share (whole lines)
            out.append(("fields", "(context_decision lines: keyframes)" if chain.get("prev") is None
                        else "(context_decision lines: deltas)", size))
        for k, v in meta.items():
            if k == "chain" and isinstance(v, dict):
                for ck, cv in v.items():
                    if ck == "rows" and isinstance(cv, dict):
                        for rk, rv in cv.items():
                            if rk == "columns" and isinstance(rv, dict):
                                out.extend(("cols", col, _size(ops)) for col, ops in rv.items())
                            else:
                                out.append(("fields", f"chain.rows.{rk}", _size(rv)))
                    else:
                        out.append(("fields", f"chain.{ck}", _size(cv)))
            elif k == "decision" and isinstance(v, dict):
                out.extend(("fields", f"decision.{dk}", _size(dv)) for dk, dv in v.items())
            else:
                out.append(("fields", k, _size(v)))
    elif kind == "prompt_sent":
        out.extend(("fields", f"prompt_sent.{k}", _size(v)) for k, v in meta.items())
    return out


def measure(path: Path, windows: list[tuple[int, int]]) -> tuple[Table, Table, Table]:
    """Bytes per event type, field and column in each window (windows may overlap: a line counts in each
    window holding its turn); the event table also has an "(all events)" row."""
    tables: dict[str, Table] = {name: defaultdict(lambda: defaultdict(int)) for name in ("events", "fields", "cols")}
    with path.open("rb") as fh:
        for line in fh:
            obj = json.loads(line)
            turn = obj.get("turn") or 0
            holding = [w for w in windows if w[0] <= turn <= w[1]]
            if not holding:
                continue
            parts = _parts(obj, len(line))
            for w in holding:
                tables["events"][w]["(all events)"] += len(line)
                for name, key, size in parts:
                    tables[name][w][key] += size
    return tables["events"], tables["fields"], tables["cols"]


def table(title: str, data: Table, windows: list[tuple[int, int]], floor: float = 20.0) -> str:
    ws = [w for w in windows if w in data]
    if not ws:
        return f"{title}: no turn in the windows\n"
    keys = sorted({k for w in ws for k in data[w]}, key=lambda k: -data[ws[-1]].get(k, 0))
    head = "| " + title + " | " + " | ".join(f"turns {a:,}-{b:,}" for a, b in ws) + " |"
    lines = [head, "| --- |" + " ---: |" * len(ws)]
    for k in keys:
        vals = [data[w].get(k, 0) / (w[1] - w[0] + 1) for w in ws]
        if max(vals) >= floor:
            lines.append(f"| {k} | " + " | ".join(f"{v:,.0f}" for v in vals) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("trace", type=Path)
    parser.add_argument("--windows", default="1-100,401-500,901-1000,1901-2000,4901-5000",
                        help="comma-separated turn ranges, inclusive")
    args = parser.parse_args(argv)
    windows = [(int(a), int(b)) for a, b in (w.split("-") for w in args.windows.split(","))]
    events, fields, cols = measure(args.trace, windows)
    print(table("event type (bytes per turn)", events, windows))
    print(table("decision / prompt_sent field", fields, windows))
    print(table("decision row column", cols, windows))


if __name__ == "__main__":
    main()
