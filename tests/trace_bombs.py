"""Hostile traces for the viewer's tests (issue 35, rows 5, 6, 8, 10, 11): a real run's trace with one of its
records turned into a bomb, each small on disk and each passing its own format check.

- ``self_prev``: turn 3's ``prompt_sent`` continues itself (``prev`` is its own id): a reader that follows
  the chain never reaches a keyframe.
- ``references``: turn 1's user message is 100 KB and turn 2's ``prompt_sent`` refers to it 100,000 times
  (about 10 GB of prompt).
- ``rows``: turn 4's chained decision has 200,000,000 rows, every column one run (``["r", n, value]``).

Written by :func:`write_bombs` (a real ``Runtime`` session with the instant model of the long-run
benchmarks, then the records edited in place)."""

from __future__ import annotations

import asyncio
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks import bench_frames

BOMB_ROWS = 200_000_000
BIG_MESSAGE = 100_000
REFERENCES = 100_000
TURNS = 5


def _record(folder: Path) -> Path:
    with ThreadPoolExecutor(1) as pool:  # a caller may be inside an event loop (Playwright's sync API)
        run = pool.submit(asyncio.run, bench_frames.record(TURNS, folder)).result()
    return Path(run["path"])


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _one(events: list[dict[str, Any]], event_type: str, turn: int) -> dict[str, Any]:
    return next(e for e in events if e["event_type"] == event_type and e["turn"] == turn)


def bomb(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """``events`` (a recorded run) with the record of ``kind`` (see the module docstring) made a bomb."""
    out = json.loads(json.dumps(events))
    if kind == "self_prev":
        sent = _one(out, "prompt_sent", 3)
        sent["metadata"]["prev"] = sent["event_id"]
    elif kind == "references":
        user = _one(out, "user_message", 1)
        user["metadata"]["message"]["content"] = "x" * BIG_MESSAGE
        sent = _one(out, "prompt_sent", 2)
        index = user["metadata"]["history_index"]
        sent["metadata"].update({"prev": None, "keep": 0, "messages": [{"h": index}] * REFERENCES, "tokens": []})
    elif kind == "rows":
        decision = _one(out, "context_decision", 4)
        chain = decision["metadata"]["chain"]
        keys = list(_one(out, "context_decision", 1)["metadata"]["chain"]["rows"]["keys"])
        chain["rows"] = {"count": BOMB_ROWS, "keys": keys, "columns": {k: [["r", BOMB_ROWS, 0]] for k in keys}}
    else:
        raise ValueError(kind)
    return out


def write_bombs(folder: Path, kinds: tuple[str, ...] = ("self_prev", "references", "rows")) -> tuple[str, Path]:
    """Record a run into ``folder`` and make every record of ``kinds`` a bomb in that one file; returns
    the run id and the file."""
    scratch = folder / "_recording"
    path = _record(scratch)
    events = _events(path)
    for kind in kinds:
        events = bomb(events, kind)
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / path.name
    out.write_text("".join(json.dumps(e) + "\n" for e in events))
    shutil.rmtree(scratch)
    return path.stem, out
