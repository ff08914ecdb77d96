"""The main-job demo: the README tour runs headless on the bundled model and its report verifies.

The tour is what a new user does first: eight turns, three of them pasted pages, in a 1,024-token
window that fills several times over. Every turn must end ok with a reply, in at most 4 LLM calls,
with the builder's counts equal to the model's and no prompt refused for length."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arcana_jupyter.demo import main

pytestmark = pytest.mark.slow


@pytest.mark.timeout(1200)
def test_demo_runs_the_readme_tour_and_writes_a_verified_offline_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--out", str(tmp_path / "demo")]) == 0
    printed = capsys.readouterr().out
    report = tmp_path / "demo" / "tour.report.html"
    assert f"report:            {report}" in printed
    assert "reproduced: 8 of 8 turn(s)" in printed
    check_tour_traces(tmp_path / "demo")
    html = report.read_text()
    assert re.findall(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html, re.IGNORECASE) == []
    assert "<script" not in html.lower() and "require.js" not in html and "cdn" not in html.lower()
    top = html[: html.index("<h2>Summary</h2>")]
    assert "reproduced: 8 of 8 turn(s) in 1 run(s) had the same prompt digest and reply" in top
    assert "<svg" in html and "Tokens per turn" in html
    assert html.count('<details class="arcana-inspector">') == 8  # every turn's inspector
    screenshot_report(report, "reproduced: 8 of 8 turn(s)")


def check_tour_traces(folder: Path) -> None:
    """Every turn ok with a reply in at most 4 calls; exact counts; no overflow; the banner says
    what the small model is not offered."""
    traces = list((folder / "tour.arcana").glob("*.jsonl"))
    assert len(traces) == 1
    events = [json.loads(line) for line in traces[0].read_text().splitlines()]
    ends = [e["metadata"] for e in events if e["event_type"] == "turn_end"]
    assert len(ends) == 8
    assert events[-1]["event_type"] == "run_end", "the kernel's shutdown closed the session"
    for end in ends:
        assert end["status"] == "ok" and end["reply"].strip() and end["steps"] <= 4, end
    calls = [e["metadata"] for e in events if e["event_type"] == "llm_call" and e["metadata"].get("purpose") is None]
    assert all(c["counted_input_tokens"] == c["reported_input_tokens"] for c in calls), "exact counts"
    assert not [e for e in events if e["event_type"] == "error"]
    from arcana_jupyter.trace.reader import TraceReader

    # read back through the reader: a chained decision may record its budget as a patch of the last one's
    decisions = [r.metadata for r in TraceReader(traces[0].parent).decision_records(traces[0].stem)]
    assert len(decisions) == sum(e["event_type"] == "context_decision" for e in events)
    assert not any(d["budget"]["overflow"] for d in decisions)
    assert max(d["budget"]["used"] for d in decisions) <= 1024 - 256
    assert sum(d["budget"]["utilization"] > 0.6 for d in decisions) >= 4, "the window fills, turn after turn"
    nb = json.loads((folder / "tour.ipynb").read_text())
    banner = json.dumps(nb["cells"][1]["outputs"])
    assert "not offered to this small model" in banner and "--tools" in banner and "--force" in banner
    # the memory and the pin the tour adds from the notebook: user actions, and in the prompts after them
    actions = [e["metadata"] for e in events if e["event_type"] == "user_action"]
    assert [(a["action"], a["via"], a["ok"]) for a in actions] == [("memory_add", "magic", True),
                                                                    ("pin", "magic", True)]
    # through the reader: a chained decision leaves out the inputs that did not change
    resolved = TraceReader(traces[0].parent).events(traces[0].stem, event_types=("context_decision",))
    pinned = [e.turn for e in resolved
              if any("28 percent" in (p.get("content") or "") for p in e.metadata["inputs"]["pins"])]
    assert sorted(set(pinned)) == [3, 4, 5, 6, 7, 8], pinned  # from the turn after the pin to the end
    digests = [e.turn for e in resolved
               if any("two sentences" in (sec.get("content") or "") for sec in e.metadata["inputs"]["sections"])]
    assert 1 in digests, digests  # added before the first turn: in its digest
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "".join(nb["cells"][1]["source"]).splitlines()[1] in readme, "the README shows the tour's %arcana_chat"


def screenshot_report(report: Path, verified: str) -> None:
    """The report opened from disk in headless Chromium with the network off: it must stand alone."""
    from playwright.sync_api import sync_playwright

    artifacts = Path(__file__).resolve().parents[1] / "test-artifacts" / "jupyter"
    artifacts.mkdir(parents=True, exist_ok=True)
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=args, headless=True)
        context = browser.new_context(offline=True, viewport={"width": 1200, "height": 1400})
        requests: list[str] = []
        page = context.new_page()
        page.on("request", lambda request: requests.append(request.url))
        page.goto(report.as_uri())
        assert [u for u in requests if not u.startswith("file://")] == []
        assert page.get_by_text(verified).first.is_visible()
        page.screenshot(path=str(artifacts / "report.png"))
        browser.close()
