"""benchmarks/retention/reuse.py reads its figure from a real trace: it must read chained decisions.

The trace's decisions are chained (a decision's report is a patch of the previous one's); reading raw
lines found no report and the benchmark failed with "fmean requires at least one data point"."""

from __future__ import annotations

import pytest

from benchmarks.retention.reuse import reuse


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_reuse_benchmark_reads_every_decision_of_a_chained_trace() -> None:
    r = reuse(120)  # bench_runtime.session measures memory at turn 100
    assert r["n"] >= 55  # the second half's builds, each one read through its chain
    assert 0.0 < r["mean_steady"] <= 1.0 and 0.0 < r["mean_all"] <= 1.0
