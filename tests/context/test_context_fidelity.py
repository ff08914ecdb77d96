"""Fidelity levels: exact cuts, markers, placeholders, and section fitting."""

from __future__ import annotations

import pytest

from arcana_jupyter.context.fidelity import FidelityPolicy, fit_text, l1_text, l2_text, placeholder_text, render
from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.tokens import TokenCounter

C = TokenCounter()
TEXT = " ".join(f"word{k}" for k in range(500))


def test_l1_keeps_head_and_tail_and_names_the_cut():
    n = C.count_text(TEXT)
    out = l1_text(C, TEXT, n, 20, 10)
    head, marker, tail = out.split("\n")
    assert TEXT.startswith(head) and TEXT.endswith(tail)
    assert C.count_text(head) <= 20 and C.count_text(tail) <= 10
    cut = int(marker.split()[1])
    assert marker == f"[… {cut} tokens cut …]" and cut == n - C.count_text(head) - C.count_text(tail)


def test_l2_keeps_head_only():
    n = C.count_text(TEXT)
    out = l2_text(C, TEXT, n, 30)
    head, marker = out.split("\n")
    assert TEXT.startswith(head) and C.count_text(head) <= 30
    assert marker == f"[… {n - C.count_text(head)} more tokens cut]"


def test_short_texts_are_not_compressed():
    assert l1_text(C, "short", 1, 20, 10) is None
    assert l2_text(C, "short", 1, 30) is None
    msg = Message(role="user", content="short")
    assert render(C, msg, "L1", content_tokens=1, tokens=6, turn=1, index=1, policy=FidelityPolicy()) is None


def test_l3_placeholder_names_role_turn_size_and_hint_only_when_given():
    assert placeholder_text("assistant", 3, 7, 240) == "[assistant turn 3: 240 tokens omitted]"
    assert placeholder_text("tool", None, 7, 12) == "[tool message 7: 12 tokens omitted]"
    hinted = placeholder_text("assistant", 3, 7, 240, "recall({turn}) to read it")
    assert hinted == "[assistant turn 3: 240 tokens omitted — recall(3) to read it]"


def test_render_keeps_tool_pairing_fields():
    call = ToolCall(id="c1", name="f", arguments="{}")
    tool = Message(role="tool", content=TEXT, tool_call_id="c1")
    asst = Message(role="assistant", content=TEXT, tool_calls=(call,))
    for level in ("L1", "L2", "L3"):
        t = render(C, tool, level, content_tokens=C.count_text(TEXT), tokens=C.count_message(tool), turn=2, index=4,
                   policy=FidelityPolicy())
        a = render(C, asst, level, content_tokens=C.count_text(TEXT), tokens=C.count_message(asst), turn=2, index=3,
                   policy=FidelityPolicy())
        assert t.tool_call_id == "c1" and t.role == "tool" and C.count_message(t) < C.count_message(tool)
        assert a.tool_calls == (call,)
    assert render(C, tool, "L0", content_tokens=0, tokens=0, turn=None, index=0, policy=FidelityPolicy()) is tool


def test_long_text_cuts_are_exact_without_encoding_everything():
    huge = "x" * 10 + " ".join(["数据分析"] * 20000)
    n = C.count_text(huge)
    out = l2_text(C, huge, n, 25)
    assert C.count_text(out.split("\n")[0]) <= 25


def test_fit_text_for_sections():
    n = C.count_text(TEXT)
    assert fit_text(C, TEXT, n, n + 5) == (TEXT, "L0")
    text, level = fit_text(C, TEXT, n, 200)
    assert level == "L1" and C.count_text(text) <= 200
    text, level = fit_text(C, TEXT, n, 40)
    assert level == "L2" and C.count_text(text) <= 40
    assert fit_text(C, TEXT, n, 10) is None


def test_policy_validation():
    with pytest.raises(ValueError, match="at least 1 token"):
        FidelityPolicy(l1_head=0)
