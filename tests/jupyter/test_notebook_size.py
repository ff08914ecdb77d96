"""Small notebooks: the notebook keeps a summary per turn (≤ 30 KB per turn on average for the tour),
the trace beside it the detail. Executed headless (nbclient) with a fast, deterministic model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from arcana_jupyter.demo import execute_notebook

pytestmark = pytest.mark.slow

TURN_MIME = "application/vnd.arcana.turn+json"
REPLAY_MIME = "application/vnd.arcana.replay+json"

MODEL = '''\
def tour_model(request):
    """A fast, deterministic model for the tour: answers in Markdown, pins a fact on turn 2."""
    users = [m for m in request.messages if m.role == "user"]
    last = request.messages[-1]
    if last.role == "tool":
        return "Pinned: the west region grew fastest (**+18%**)."
    if len(users) == 2 and "remember" in (last.content or ""):
        return {"tool": "pin",
                "args": {"content": "The west region grew fastest: +18% from Q1 to Q4.", "label": "finding"}}
    return (f"Turn {len(users)}: I read *{(last.content or '')[:40]}*.\\n\\n"
            "| region | growth |\\n|---|---|\\n| west | +18% |\\n| east | +4% |")
'''

TURNS = [
    "Load sales.csv with pandas and tell me which region grew fastest.",
    "Please remember that finding for later.",
    "Which quarter was the best one?",
    "Summarise what we found in one line.",
]

# The README tour's settings, with the model above.
TOUR = [
    "%load_ext arcana_jupyter",
    MODEL,
    "%arcana_chat --model fn:tour_model --window 4096 --primitives recall,pin",
    *[f"%%arcana\n{t}" for t in TURNS],
    "%arcana_replay",
]

LIMIT = 30_000
"""Bytes per turn, on average, of the saved tour (docs/TURN_BUNDLE.md)."""


def test_the_tour_notebook_keeps_a_summary_per_turn(tmp_path: Path) -> None:
    path = tmp_path / "tour.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in TOUR]), path)
    nb = execute_notebook(path, env={**os.environ, "HOME": str(tmp_path)})
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    turns = [o for o in outputs if TURN_MIME in o.get("data", {})]
    assert len(turns) == len(TURNS) and all(o["data"][TURN_MIME]["compact"] for o in turns)
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    assert not nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state")
    (replay,) = [o for o in outputs if REPLAY_MIME in o.get("data", {})]
    trace = tmp_path / replay["data"][REPLAY_MIME]["trace_path"]
    assert trace.is_file() and trace.parent.name == "tour.arcana"
    size = path.stat().st_size
    assert size / len(TURNS) <= LIMIT, f"{size} bytes for {len(TURNS)} turns"
    # The detail is in the trace: every turn's prompt texts are there, not in the notebook.
    saved = path.read_text()
    user_texts = [json.loads(line)["metadata"]["message"]["content"] for line in trace.read_text().splitlines()
                  if json.loads(line)["event_type"] == "user_message"]
    assert [t.strip() for t in user_texts] == TURNS
    assert saved.count(TURNS[0]) <= 8  # the input, the reply quoting it, the replay preview: not every prompt
