"""The what-if says where the tokens went. It compared the recorded ``budget.used`` (the prompt as
shaped for the model, counted exactly) with the rebuild's builder estimate (before shaping), so a
rebuild with the recorded settings read "559 tokens sent → 557 rebuilt · 0 rows changed". Both sides
are now counted the same way, and a difference is split into the rows that changed and the framing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arcana_jupyter.jupyter.replay_frames import build_frames, counterfactual
from arcana_jupyter.jupyter.whatif import what_if_answer
from arcana_jupyter.runtime import Runtime, RuntimeConfig

pytestmark = pytest.mark.slow

REPORT = " ".join(f"In week {i} the North region sold {100 + i} loaves and the South {90 + i}." for i in range(40))


def recorded_run(tmp_path: Path) -> str:
    """Four turns on the bundled model (its chat template shapes every prompt) in a 1,024 window."""
    runtime = Runtime(config=RuntimeConfig(model="local", total_window=1024, trace_dir=tmp_path, max_tokens=24))
    with runtime.chat() as chat:
        for text in ["Hi, I run a bakery.", f"Here is a report: {REPORT} Summarise it.", "Which region sold more?",
                     "Thanks."]:
            chat.send_sync(text)
        run_id = chat.run_id
    runtime.close()
    return run_id


def test_the_what_if_counts_both_prompts_alike_and_says_where_the_difference_went(tmp_path: Path) -> None:
    run_id = recorded_run(tmp_path)
    for turn in range(1, 5):
        same = what_if_answer(tmp_path, {"run_id": run_id, "turn": turn})
        assert same["ok"] and same["verified"] and not same["counterfactual"]
        assert same["tokens"] == same["recorded_tokens"], same["tokens_line"]
        assert same["tokens_line"] == f"{same['tokens']:,} tokens sent → {same['tokens']:,} rebuilt · the same prompt"
    wide = what_if_answer(tmp_path, {"run_id": run_id, "turn": 3, "window": 4096})
    assert wide["tokens"] > wide["recorded_tokens"] and wide["changes"]
    found = re.fullmatch(r"([\d,]+) tokens sent → ([\d,]+) rebuilt \(([+-][\d,]+): the (\d+) rows? changed "
                         r"([+-][\d,]+)(?:, the prompt's framing \(roles, the context block\) ([+-][\d,]+))?\)",
                         wide["tokens_line"])
    assert found, wide["tokens_line"]

    def number(text: str | None) -> int:
        return int((text or "0").replace(",", ""))

    sent, rebuilt, delta, rows, in_rows, framing = (number(g) for g in found.groups())
    assert (sent, rebuilt, rows) == (wide["recorded_tokens"], wide["tokens"], len(wide["changes"]))
    assert delta == rebuilt - sent == in_rows + framing  # every token accounted for
    # %arcana_replay --turn 3 --window 4096 says the same under the replay
    frames = build_frames(tmp_path, run_id)
    html = counterfactual(tmp_path, next(f for f in frames if f["turn"] == 3), total_window=4096)
    assert f"Changed by the counterfactual ({wide['tokens_line']})" in html.replace("&#x27;", "'")
