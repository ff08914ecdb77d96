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
