"""The static HTML's decision-row labels on the cases the TypeScript inspector is tested on
(labextension/test/row_labels.json): the report, nbconvert HTML and the inspector say the same."""

from __future__ import annotations

import json
from pathlib import Path

from arcana_jupyter.schema.labels import change_label, is_change, outcome_label, row_flag, source_label

ALL = json.loads((Path(__file__).resolve().parents[2] / "labextension" / "test" / "row_labels.json").read_text())
CASES, CHANGES = ALL["rows"], ALL["changes"]


def test_row_labels_match_the_inspectors() -> None:
    assert len(CASES) >= 12
    for case in CASES:
        d = case["d"]
        flag = row_flag(d)
        assert (flag[0] if flag else None) == case["flag"], d
        assert source_label(d) == case["source"], d
        assert outcome_label(d) == case["outcome"], d


def test_change_labels_match_the_inspectors() -> None:
    """The checkpoint the engine records every turn is no change ("Adaptive-context changes (1)" on a
    chat where nothing changed), and its kind is not said twice ("checkpoint checkpoint")."""
    assert len(CHANGES) >= 8
    for case in CHANGES:
        assert is_change(case["c"]) is case["change"], case["c"]
        assert change_label(case["c"]) == case["label"], case["c"]


def test_the_cli_flags_rows_as_the_inspector_does() -> None:
    """``arcana trace show --context`` and ``trace replay`` flagged the checkpoint (a protected
    section) ``[PIN]``; they use the same rule now."""
    from arcana_jupyter.context.decisions import ContextDecision, MessageDecision
    from arcana_jupyter.trace.recorded_prompt import format_context_decisions, format_decision_table

    def row(index: int, **fields: object) -> MessageDecision:
        base = {"index": index, "role": "system", "outcome": "kept", "fidelity": "L0", "token_count_before": 5,
                "token_count_after": 5, "reason": "section"}
        return MessageDecision.model_validate({**base, **fields})

    decision = ContextDecision(strategy="passthrough", requested_strategy="auto", utilization_before=0.1, decisions=[
        row(0, source="section", section="checkpoint", pinned=True),
        row(1, source="pin", section="p_1", pinned=True, reason="pinned"),
        row(2, role="user", source="history", recalled=True, reason="relevant_bm25"),
        row(3, role="user", source="history", reason="tail")])
    lines = format_context_decisions(decision)
    assert [line.split("[", 2)[1].split("]")[0] if line.startswith("[") else None for line in lines] == [
        "KEEP", "PIN", "REC", None]
    table = format_decision_table(decision.decisions)
    assert table[1].endswith("[KEEP] [section] checkpoint") and table[2].endswith("[PIN] p_1")
    assert table[3].endswith("[REC]") and "[" not in table[4].split("tail")[-1]


def test_a_turn_where_nothing_changed_lists_no_change(tmp_path: Path) -> None:
    """The bundle's ``state_changes`` leave out the engine's checkpoint bookkeeping."""
    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.runtime import Runtime, RuntimeConfig

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path), provider=FunctionProvider(lambda r: "ok"))
    with runtime.chat() as chat:
        chat.send_sync("hello")
        chat.send_sync("again")
        assert chat.turn_bundle(2)["state_changes"] == []
        chat.add_context("constraint", "Be brief")
        chat.send_sync("third")
        changes = chat.turn_bundle(2)["state_changes"]
    runtime.close()
    assert [change_label(c) for c in changes] == ["add_constraint s_1 (constraint) by you",
                                                  "s_1 (constraint): new → active · created"]


def test_static_html_is_kept_away_from_mathjax() -> None:
    """"$0 … $0" in a summary line is money, not math: every static root opts out of MathJax
    (JupyterLab's and Notebook's typesetters skip ``tex2jax_ignore`` / ``mathjax_ignore``)."""
    from arcana_jupyter.render.turn import notice_html

    html = notice_html("this turn: 10 in / 2 out tokens, $0 · session: 1 turn, $0")
    assert 'class="arcana tex2jax_ignore mathjax_ignore"' in html


def test_the_latency_says_the_models_time_and_the_runtimes(tmp_path: Path) -> None:
    """The trace has each call's latency and the turn's: the bundle sums the calls (the model's time)
    and the inspector says both."""
    import time

    from arcana_jupyter.providers.function import FunctionProvider
    from arcana_jupyter.render.turn import latency_text, turn_html
    from arcana_jupyter.runtime import Runtime, RuntimeConfig

    def slow(request: object) -> str:
        time.sleep(0.05)
        return "ok"

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path), provider=FunctionProvider(slow))
    with runtime.chat() as chat:
        chat.send_sync("hello")
        bundle = chat.turn_bundle(1)
        calls = [e.metadata["latency_ms"] for e in chat.turn_events(1) if e.event_type == "llm_call"]
    runtime.close()
    assert bundle["model_latency_ms"] == round(sum(calls), 3) >= 50
    assert bundle["latency_ms"] >= bundle["model_latency_ms"]
    line = latency_text(bundle)
    assert line is not None and line.startswith(f"{bundle['latency_ms']:,.0f} ms (model ")
    assert ", runtime " in line and line in turn_html(bundle)
    assert latency_text({"latency_ms": 12.0}) == "12 ms"  # an older bundle: one number
