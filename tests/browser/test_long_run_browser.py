"""A long run in the trace viewer, in a real JupyterLab and headless Chromium (issue 26).

A real 300-turn default-mode session (``benchmarks/bench_frames.py``'s: ``Runtime()`` defaults, an 8k
window that fills at about turn 80, then a recall block that changes with every question) is recorded
beside the lab. Its trace holds every encoding a long run writes: chained decisions with sparse ops,
prompts as sent recorded against the previous one (references, quotes, line edits). The viewer opens it at its last
turn; scrubbed back one turn it shows the same decisions Python reads, and the prompt as sent,
resolved in Python by the server extension (the viewer decodes nothing), has the recorded digest
("verified").
Screenshots go to test-artifacts/browser/.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from arcana_jupyter.providers.shaping import MERGE_SEPARATOR
from arcana_jupyter.trace.reader import TraceReader
from benchmarks import bench_frames

from .conftest import shot
from .helpers import wait_for_lab

pytestmark = pytest.mark.browser

TURNS = 300
TURN = TURNS - 1  # no tool call on it: one build, one prompt


@pytest.fixture(scope="module")
def long_run(lab_root: Path) -> dict[str, Any]:
    folder = lab_root / "long.arcana"
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API runs an event loop in this thread
        run = pool.submit(asyncio.run, bench_frames.record(TURNS, folder)).result()
    reader = TraceReader(folder, shared=False)
    [record] = [r for r in reader.decision_records(run["run_id"]) if r.turn == TURN]
    rows = record.metadata["decision"]["decisions"]
    sent = reader.prompt_sent(run["run_id"], TURN)
    assert sent is not None and sent.verified
    return {"run_id": run["run_id"], "rows": rows, "sent": sent}


def test_a_long_run_opens_scrubs_and_verifies_its_prompts_in_the_viewer(page, long_run: dict[str, Any]) -> None:
    run_id = long_run["run_id"]
    page.goto(f"{page.base_url}/lab/tree/long.arcana/{run_id}.jsonl?reset")
    wait_for_lab(page)
    viewer = page.locator(".arcana-viewer")
    label = viewer.locator(".arcana-turn-label")
    expect(label).to_contain_text(f"Turn {TURNS} ({TURNS} of {TURNS})", timeout=90_000)
    expect(viewer.locator(".arcana-problems")).to_have_count(0)

    viewer.locator(".arcana-slider").focus()
    page.keyboard.press("ArrowLeft")
    expect(label).to_contain_text(f"Turn {TURN} ({TURN} of {TURNS})")

    # The decisions the viewer decoded (sparse ops and all) are Python's: their number and outcomes.
    rows = long_run["rows"]
    counts = Counter(r["outcome"] for r in rows)
    assert counts["kept"] and counts["dropped"]  # the window is full: the recall block churns
    expect(viewer.locator(".arcana-section-title", has_text="Decisions (")).to_contain_text(f"Decisions ({len(rows)})")
    summary = viewer.locator(".arcana-turn-summary")
    for outcome, n in counts.items():
        expect(summary).to_contain_text(f"{n} {outcome}")

    # The prompt as sent, resolved by Python from its prompt_sent records (references, quotes, line edits,
    # joins) and sent verified: it hashes to the recorded digest; the viewer shows its messages.
    sent = long_run["sent"]
    title = re.compile(rf"^Prompt as sent \({len(sent.messages)} messages.*verified")
    button = viewer.get_by_role("button", name=title)
    expect(button).to_be_visible()
    button.click()
    prompt = viewer.locator(".arcana-prompt")
    last = sent.messages[-1]["content"]
    expect(prompt).to_contain_text(last.split(MERGE_SEPARATOR)[-1].split("\n", 1)[0])  # the question itself
    assert "earlier in this conversation" in last or MERGE_SEPARATOR in last  # the recall block came back
    shot(page, "viewer-long-run")
