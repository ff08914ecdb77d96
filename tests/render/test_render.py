"""The one HTML renderer: escaping of hostile text, no external references, the replay scrubber."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from arcana_jupyter import render

HOSTILE = ('<script>alert("x")</script><img src=x onerror=alert(1)> <a href="https://evil.example/">x</a>'
           ' [click](javascript:alert(1)) ![i](https://evil.example/i.png)')
ALLOWED_TAGS = {
    "style", "div", "span", "b", "i", "p", "br", "strong", "em", "code", "pre", "details", "summary", "table",
    "thead", "tbody", "tr", "th", "td", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "hr", "input",
    "label", "svg", "rect", "line", "text", "g", "title", "s",
}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, Any]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def parse(html: str) -> list[tuple[str, dict[str, Any]]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


def assert_safe(html: str) -> None:
    for tag, attrs in parse(html):
        assert tag in ALLOWED_TAGS, tag
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name not in ("src", "href", "srcset"), (tag, name, value)
    assert "<script" not in html and "<img" not in html


def decision(
    index: int, role: str, outcome: str, before: int, after: int, position: int | None, **extra: Any
) -> dict[str, Any]:
    return {"index": index, "role": role, "outcome": outcome, "fidelity": "L0" if outcome == "kept" else "L2",
            "relevance_score": 0.42, "token_count_before": before, "token_count_after": after,
            "reason": extra.pop("reason", "tail_preserve_tail"), "layer": extra.pop("layer", "working"),
            "source": "history", "position": position, **extra}


def sample_bundle(text: str = "Hello **world**") -> dict[str, Any]:
    return {
        "version": 1, "run_id": "r_1", "agent": "main", "turn": 3, "trace_path": "analysis.arcana/r_1.jsonl",
        "model": "local", "status": "ok", "input": text, "reply": text,
        "steps": [{
            "step": 0,
            "decision": {"turn": 3, "step": 0, "strategy": "tail_preserve", "requested_strategy": "auto",
                         "utilization_before": 1.3, "notes": [text],
                         "decisions": [
                             decision(0, "system", "kept", 30, 30, 0, layer="identity", reason="system_prompt"),
                             decision(1, "user", "dropped", 200, 0, None, reason=text),
                             decision(2, "assistant", "compressed", 400, 90, 1),
                             decision(3, "user", "kept", 12, 12, 2),
                         ]},
            "report": {"layers": [{"layer": "identity", "messages": 1, "tokens_before": 30, "tokens_after": 30},
                                  {"layer": "working", "messages": 3, "tokens_before": 612, "tokens_after": 102}],
                       "total_before": 642, "total_after": 132, "tools_tokens": 40, "prefix_tokens_reused": 30},
            "budget": {"total_window": 1000, "response_reserve": 200, "available": 800, "used": 172,
                       "remaining": 628, "utilization": 0.215},
            "request_digest": "0123456789abcdef",
            "messages": [{"role": "system", "content": "sys"}, {"role": "assistant", "content": text},
                         {"role": "user", "content": text}],
        }],
        "tool_calls": [{"name": "describe_variable", "arguments": {"name": text}, "ok": True, "result": text,
                        "intercepted": False}],
        "primitives": [{"primitive": "pin", "args": {"content": text}, "result": {"pinned": True, "pin_id": "p_1"}}],
        "pins": [{"pin_id": "p_1", "label": text, "content": text, "tokens": 9, "until_turn": None, "created_turn": 2}],
        "tiers": {"active": [{"id": "t_1", "kind": "task", "summary": text, "payload": {}, "tier": "active",
                              "last_touched_turn": 3, "focused": True, "retracted": False}], "soft": [], "hard": []},
        "memories": [{"id": "m_1", "kind": "fact", "content": text, "score": 0.9, "scope": "project"}],
        "usage": {"input_tokens": 172, "output_tokens": 12, "cached_input_tokens": 30},
        "cost_usd": 0.0, "latency_ms": 250.0,
        "errors": [{"type": "ProviderError", "message": text, "where": "provider"}],
    }


def test_turn_html_escapes_every_model_and_user_string() -> None:
    html = render.turn_html(sample_bundle(HOSTILE))
    assert_safe(html)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count("&lt;script&gt;") >= 10  # reply, input, reason, notes, pins, tiers, memories, tools, errors...


def test_turn_html_shows_the_inspector_collapsed_with_its_sections() -> None:
    html = render.turn_html(sample_bundle())
    assert '<details class="arcana-inspector">' in html  # collapsed: no "open"
    for heading in ("Token budget", "Context decisions", "Tool calls", "Primitive calls", "Active pins",
                    "Adaptive context", "Memories ("):
        assert heading in html
    assert "<strong>world</strong>" in html
    assert "tail_preserve" in html and "0123456789abcdef" in html
    assert "200 → 0" in html and "400 → 90" in html
    assert "not sent" in html  # the dropped message has no text to show
    assert render.inspector_html(sample_bundle(), open_inspector=True).startswith(
        '<details class="arcana-inspector" open>')


def test_turn_plain_is_the_reply_and_a_summary_line() -> None:
    plain = render.turn_plain(sample_bundle("the answer"))
    assert plain.splitlines()[0] == "the answer"
    assert "turn 3" in plain and "172 in / 12 out" in plain and "r_1" in plain


def test_markdown_renders_blocks_and_keeps_links_as_text() -> None:
    html = render.markdown_to_html("# Title\n\n- a\n- b *c*\n\n```python\nx = '<b>'\n```\n\n"
                                   "see [docs](https://example.org/x) and `a<b`")
    assert "<h3>Title</h3>" in html and "<ul>\n<li>a</li>\n<li>b <em>c</em></li>\n</ul>" in html
    assert "&lt;b&gt;" in html and "<b>" not in html and "<code>a&lt;b</code>" in html
    assert 'class="language-python"' in html
    assert "href" not in html and "(https://example.org/x)" in html
    assert_safe(html)


def frame(turn: int, text: str = "hi") -> dict[str, Any]:
    bundle = sample_bundle(text)
    return {"run_id": "r_1", "agent": "main", "turn": turn, "input": text, "reply": text, "status": "ok",
            "usage": bundle["usage"], "step": bundle["steps"][0], "prompt_source": "rebuilt",
            "digest_verified": turn != 2, "digest_note": text, "pins": bundle["pins"],
            "diff": [{"index": 2, "role": "assistant", "source": "history", "change": "changed",
                      "before": {"outcome": "kept", "fidelity": "L0", "tokens": 400},
                      "after": {"outcome": "compressed", "fidelity": "L2", "tokens": 90}}]}


def test_replay_html_switches_turns_with_css_only() -> None:
    html = render.replay_html([frame(1), frame(2), frame(3, HOSTILE)], uid="abc", selected=1)
    assert_safe(html)
    tags = parse(html)
    radios = [a for t, a in tags if t == "input"]
    assert [r.get("type") for r in radios] == ["radio"] * 3
    assert [("checked" in r) for r in radios] == [False, True, False]
    assert "#arcana-rp-abc-1:checked~.arcana-frames>.arcana-f1{display:block}" in html
    assert html.count("digest verified") == 2 and html.count("digest mismatch") == 1
    assert "rebuilt from the transcript" in html and "Pins active at this turn" in html
    assert "changed" in html and "400" in html


def test_counterfactual_and_chart() -> None:
    step = sample_bundle()["steps"][0]
    html = render.counterfactual_html(step, step, label="passthrough, window 4,000")
    assert "as sent" in html and "passthrough, window 4,000" in html
    svg = render.tokens_chart_svg([{"label": "1", "input_tokens": 100, "output_tokens": 10},
                                   {"label": "2", "input_tokens": 300, "output_tokens": 20, "cached_input_tokens": 90}])
    assert svg.count("<rect") == 2 * 2 + 1 + 3  # two bars per turn, one cached part, three legend swatches
    assert "http" not in svg
    assert_safe(svg)


KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"


def test_every_renderer_masks_keys_the_model_echoes() -> None:
    """The one masking function runs on every value a page prints and on Markdown before parsing."""
    text = f"your key is {KEY}, really"
    html = render.turn_html(sample_bundle(text))
    assert KEY not in html and "[REDACTED]" in html
    assert KEY not in render.markdown_to_html(f"| key |\n|---|\n| {KEY} |")
    assert KEY not in render.replay_html([frame(1, text)], uid="k")
    import threading

    from arcana_jupyter.jupyter.display import TurnDisplay

    view = TurnDisplay.__new__(TurnDisplay)  # only the streamed-text part: what a running cell shows

    view._lock, view._tokens = threading.Lock(), ["the key ", KEY[:10], KEY[10:], " ok"]
    assert KEY not in view.partial_text() and "[REDACTED]" in view.partial_text()


def test_the_budget_line_says_how_much_of_the_previous_prompt_was_reused() -> None:
    from arcana_jupyter.render.turn import budget_html

    step = {"budget": {"total_window": 4096, "response_reserve": 1024, "available": 3072, "used": 2000},
            "report": {"layers": [], "prefix_tokens_reused": 1500, "prefix_share": 0.8123},
            "decision": {"decisions": []}}
    html = budget_html(step)
    assert "prefix reused <b>1,500</b> (81% of the previous prompt)" in html
    step["report"] = {"layers": [], "prefix_tokens_reused": 10, "prefix_share": None}
    assert "of the previous prompt" not in budget_html(step)


def test_the_notebooks_copy_shows_verbatim_messages_or_says_where_they_are() -> None:
    """The ``text/html`` fallback of a compact bundle (what the notebook keeps): a message sent verbatim
    is left to the trace; its row shows the text the bundle has anyway (the input, a pin), escaped, or
    names the trace file and the command that prints it — not a bare "in the trace"."""
    from arcana_jupyter.runtime.bundle import compact_bundle

    b = sample_bundle(HOSTILE)
    rows = [
        decision(0, "system", "kept", 30, 30, 0, layer="identity", reason="system_prompt"),
        decision(1, "user", "kept", 9, 9, 1, source="pin", section="p_1", pinned=True, reason="pinned"),
        decision(2, "assistant", "kept", 40, 40, 2, recalled=True, turn=1, reason="relevant"),
        decision(3, "assistant", "compressed", 400, 90, 3),
        decision(4, "user", "kept", 12, 12, 4, source="input", reason="current_input"),
    ]
    b["steps"][0]["decision"]["decisions"] = rows
    b["steps"][0]["messages"] = [{"role": "system", "content": "sys"}, {"role": "user", "content": HOSTILE},
                                 {"role": "assistant", "content": "recalled text"},
                                 {"role": "assistant", "content": "short form"}, {"role": "user", "content": HOSTILE}]
    b["pins"] = [{"pin_id": "p_1", "label": "budget", "content": "pinned <b>4,000</b> euros", "tokens": 9}]
    small = compact_bundle(b)
    assert [m.get("in_trace", False) for m in small["steps"][0]["messages"]] == [True, True, True, False, True]
    html = render.turn_html(small)
    assert_safe(html)
    assert "pinned &lt;b&gt;4,000&lt;/b&gt; euros" in html  # the pin's text, escaped
    assert ("sent verbatim: message 2 (turn 1); its text is in the trace analysis.arcana/r_1.jsonl "
            "(arcana trace replay r_1 --turn 3 --prompt-only" in html)  # the recalled history message
    assert "short form" in html  # a compressed text is in the notebook itself
    assert ">in the trace<" not in html
    assert "their rows and texts are in the trace analysis.arcana/r_1.jsonl" in html  # the unchanged rest


def test_the_standing_instructions_are_listed_with_their_turn_and_escaped() -> None:
    bundle = sample_bundle()
    bundle["standing"] = [
        {"id": "s_1", "kind": "instruction", "text": HOSTILE, "turn": 2, "by": "said", "shown": "full",
         "offer_memory": True},
        {"id": "s_3", "kind": "constraint", "text": "Plain ASCII in commit messages.", "turn": 5, "by": "said",
         "learned": True},
        {"id": "s_5", "kind": "instruction", "text": "Code before prose, please.", "turn": 8, "by": "said",
         "acknowledged": True},
        {"id": "s_4", "kind": "preference", "text": "I prefer httpx over requests.", "turn": 7, "by": "model",
         "shown": "short", "revises": "s_2", "memory_id": "m_0123456789abcdef"},
    ]
    html = render.turn_html(bundle)
    assert_safe(html)
    assert "Standing instructions (4)" in html
    rows = html.split('<tr class="arcana-standing-row">')[1:]
    assert "learned reader" not in rows[0] and "you said it (read by the learned reader)" in rows[1]
    assert "you said it (the reply took it up as lasting)" in rows[2] and "took it up" not in rows[0] + rows[1]
    del rows[1:3]
    assert len(rows) == 2 and "&lt;script&gt;alert(" in rows[0] and "&lt;img src=x onerror" in rows[0]
    assert "<code>s_1</code>" in rows[0] and '<td class="num">2</td>' in rows[0] and "you said it" in rows[0]
    assert "%arcana_standing remember s_1" in rows[0]
    assert "replaces <code>s_2</code>" in rows[1] and "shortened" in rows[1] and "m_0123456789abcdef" in rows[1]
    assert "No standing instructions" in render.turn_html(sample_bundle())
