"""The report's "Prompts as sent": every call's prompt from the trace's prompt_sent events, each turn as
what changed since the previous prompt (the shared prefix a count), verified, all text escaped."""

from __future__ import annotations

import re
from pathlib import Path

from scripted_chat import Script, say

from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.report import build_report
from arcana_jupyter.report.build import prompts_section
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.reader import TraceReader

from .test_report import recorded_notebook

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>"


async def recorded_run(tmp_path: Path, turns: int = 4) -> Path:
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", context_engine=False, total_window=4000,
                                           response_reserve=300),
                      provider=FunctionProvider(Script(*[say(f"reply {i} {HOSTILE}") for i in range(turns)])))
    async with runtime.chat() as chat:
        for i in range(turns):
            await chat.send(f"question {i} & {HOSTILE}")
        return Path(chat.trace_path)


async def test_each_turn_shows_what_changed_escaped_and_verified(tmp_path: Path) -> None:
    path = await recorded_run(tmp_path)
    html = prompts_section(TraceReader(path.parent), path.stem, "main")
    assert "<script" not in html and "<img" not in html
    assert "question 3 &amp; &lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count('<details class="arcana-sent-turn">') == 4
    assert html.count("✓ verified (digest") == 4
    # turn 4's prompt: the 6 messages of turn 3's prompt unchanged, then the reply and the new question
    turn4 = html[html.rindex('<details class="arcana-sent-turn">'):]
    assert "messages 0–5" in turn4 and "as in the previous prompt" in turn4
    assert "reply 2" in turn4 and "question 3" in turn4 and "question 2" not in turn4
    assert "You are a helpful assistant" not in turn4, "the shared prefix is a count, not its text"


async def test_an_older_trace_says_the_prompt_is_not_recorded(tmp_path: Path) -> None:
    path = await recorded_run(tmp_path, turns=2)
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if '"prompt_sent"' not in line))
    html = prompts_section(TraceReader(path.parent, shared=False), path.stem, "main")
    assert "not recorded in this trace" in html and "arcana-sent-turn" not in html


def test_the_report_prints_each_turns_prompt(tmp_path: Path) -> None:
    path = recorded_notebook(tmp_path)
    html = build_report(path).read_text()
    section = html[html.index("Prompts as sent"):]
    assert section.count('<details class="arcana-sent-turn">') == 2 and section.count("✓ verified (digest") == 2
    assert "First question about tides." in section and "Second question about tides." in section
    assert "<script" not in html.lower()
    assert re.search(r"messages 0–\d+", section)
