"""The retention harness: input validation with clear errors, and a run on a tiny data set."""

from __future__ import annotations

import json

import pytest

from benchmarks.retention.run import DataError, evaluate, load, main


def conv(**changes):
    base = {"id": "c", "system": "sys", "turns": [
        {"id": "t0", "role": "user", "content": "The orders table lives in schema sales_prod."},
        {"id": "t1", "role": "assistant", "content": "Noted."},
        *({"id": f"t{k}", "role": "user" if k % 2 == 0 else "assistant", "content": "small talk " * 40}
          for k in range(2, 40)),
    ], "questions": [{"id": "q0", "question": "Which schema holds the orders table?", "evidence": ["t0"]}]}
    base.update(changes)
    return base


def test_bad_inputs_get_clear_errors(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(DataError, match="no such file"):
        load(missing)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match="not valid JSON"):
        load(bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps([conv(questions=[{"id": "q", "question": "x?", "evidence": ["t99"]}])]))
    with pytest.raises(DataError, match="unknown turn id"):
        load(wrong)
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps([conv(turns=[{"id": "a", "role": "user", "content": "x"}] * 2, questions=[])]))
    with pytest.raises(DataError, match="appears twice"):
        load(dup)
    shape = tmp_path / "shape.json"
    shape.write_text(json.dumps([{"id": "c", "turns": [{"id": "a", "role": "robot", "content": "x"}],
                                  "questions": []}]))
    with pytest.raises(DataError, match="Expected a list of"):
        load(shape)
    assert main([str(shape), "--out", str(tmp_path / "r.md")]) == 2


def test_builder_beats_the_tail_window_on_old_evidence(tmp_path):
    path = tmp_path / "qa.json"
    path.write_text(json.dumps({"conversations": [conv()]}))
    conversations = load(path)
    results = evaluate(conversations, [600], 100)
    assert results[(600, "builder (auto)")].row()[0] == 1.0
    assert results[(600, "tail-only baseline")].row()[0] == 0.0
    out = tmp_path / "r.md"
    assert main([str(path), "--budgets", "600", "--out", str(out)]) == 0
    assert "tail-only baseline" in out.read_text()
