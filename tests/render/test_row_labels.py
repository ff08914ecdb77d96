"""The static HTML's decision-row labels on the cases the TypeScript inspector is tested on
(labextension/test/row_labels.json): the report, nbconvert HTML and the inspector say the same."""

from __future__ import annotations

import json
from pathlib import Path

from arcana_jupyter.render.turn import outcome_label, row_flag, source_label

CASES = json.loads((Path(__file__).resolve().parents[2] / "labextension" / "test" / "row_labels.json").read_text())


def test_row_labels_match_the_inspectors() -> None:
    assert len(CASES) >= 9
    for case in CASES:
        d = case["d"]
        flag = row_flag(d)
        assert (flag[0] if flag else None) == case["flag"], d
        assert source_label(d) == case["source"], d
        assert outcome_label(d) == case["outcome"], d


def test_static_html_is_kept_away_from_mathjax() -> None:
    """"$0 … $0" in a summary line is money, not math: every static root opts out of MathJax
    (JupyterLab's and Notebook's typesetters skip ``tex2jax_ignore`` / ``mathjax_ignore``)."""
    from arcana_jupyter.render.turn import notice_html

    html = notice_html("this turn: 10 in / 2 out tokens, $0 · session: 1 turn, $0")
    assert 'class="arcana tex2jax_ignore mathjax_ignore"' in html
