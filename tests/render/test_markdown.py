"""Replies outside JupyterLab: markdown-it-py with raw HTML off, GFM tables, math as text, Pygments.

Also the hostile-input defects of issue 13 that lived in the old hand-written renderer: 2 (quadratic
time on brackets), 3 (RecursionError on deep quotes) and 15 (the primitives summary escaped twice).
"""

from __future__ import annotations

import html as htmllib
import time
from html.parser import HTMLParser
from typing import Any

import pytest

from arcana_jupyter import render
from arcana_jupyter.render import md

from .test_render import HOSTILE, assert_safe, frame, sample_bundle

RICH = """Here is the summary.

| region | growth |
|:-------|-------:|
| North  | 12.5 % |
| South  | ~~3.1~~ 4.2 % |

The model is $y = x^2$ with $a_1 * b_2$ kept as written, and the total is

$$\\int_0^1 x^2 \\, dx = \\frac{1}{3}$$

```python
def growth(df):
    return df.groupby("region")["sales"].pct_change()  # per region
```
"""


class Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def text_of(fragment: str) -> str:
    parser = Text()
    parser.feed(fragment)
    return "".join(parser.parts)


def test_tables_math_code_and_strikethrough() -> None:
    html = md.markdown_to_html(RICH)
    assert_safe(html)
    assert ("<table>" in html and '<th style="text-align:left">region</th>' in html
            and '<td style="text-align:right">12.5 %</td>' in html)
    assert "<s>3.1</s>" in html
    assert '<span class="arcana-math">$y = x^2$</span>' in html
    assert '<span class="arcana-math">$a_1 * b_2$</span>' in html  # no emphasis inside math
    assert '<div class="arcana-math arcana-math-block">$$\\int_0^1 x^2 \\, dx = \\frac{1}{3}$$</div>' in html
    assert '<code class="language-python">' in html
    assert '<span class="k">def</span>' in html and '<span class="c1"># per region</span>' in html
    css = md.highlight_css(html)
    assert ".arcana-hl .k{" in css and ".arcana-hl .c1{" in css and ".arcana-hl .kd{" not in css
    # The turn's own output carries the rules its code uses (and only those).
    turn = render.turn_html(sample_bundle(RICH))
    assert ".arcana-hl .k{" in turn and ".arcana-hl .gd{" not in turn


def test_raw_html_links_and_images_are_inert() -> None:
    html = md.markdown_to_html(HOSTILE + "\n\n<div onclick=x>raw</div>\n\n"
                               "[a](vbscript:x) <https://auto.example/> ![alt](data:image/png;base64,AAAA)")
    assert_safe(html)
    assert "&lt;script&gt;" in html and "&lt;div onclick=x&gt;" in html
    assert "(https://evil.example/i.png)" in html and "[image: i]" in html
    assert "[a](vbscript:x)" in html and "(https://auto.example/)" in html  # no attribute: assert_safe


def test_unknown_language_and_long_code_are_escaped_without_highlighting() -> None:
    html = md.markdown_to_html("```no-such-lang\n<b>x</b>\n```")
    assert '<code class="language-no-such-lang">&lt;b&gt;x&lt;/b&gt;' in html
    long = "x = 1\n" * (md.MAX_HIGHLIGHT_CHARS // 6 + 1)
    html = md.markdown_to_html(f"```python\n{long}```")
    assert '<span class="n">' not in html and html.count("x = 1") == long.count("x = 1")
    html = md.markdown_to_html('```python" onmouseover="x\ncode\n```')
    assert_safe(html)


def test_over_the_size_limit_the_reply_is_escaped_text() -> None:
    text = "# heading <b>\n" + "a" * md.MAX_MARKDOWN_CHARS
    html = md.markdown_to_html(text)
    assert '<pre class="arcana-md-text">' in html and "<h3>" not in html
    assert htmllib.unescape(text_of(html)).endswith(text)
    assert "Shown as text" in html


# ---- issue 13, defect 2: quadratic time ------------------------------------------------------

@pytest.mark.timeout(30)
def test_defect_2_brackets_render_in_linear_time() -> None:
    # 48 KB of "[" then "](": the old renderer took ~10 s (60 KB: 16 s, 100 KB: 85 s); under the
    # Markdown limit, so this goes through markdown-it-py (~0.5 s here).
    text = "[" * 16_000 + "](" * 16_000
    assert len(text) < md.MAX_MARKDOWN_CHARS
    start = time.perf_counter()
    html = render.turn_html(sample_bundle(text))
    assert time.perf_counter() - start < 5
    assert_safe(html)
    # 1 MB of it (the issue's size): shown as escaped text, at once.
    start = time.perf_counter()
    big = md.markdown_to_html(text * 21)
    assert time.perf_counter() - start < 5 and big.count("[") == 16_000 * 21


# ---- issue 35, row 15: a table whose short rows GFM fills with cells ------------------------------

@pytest.mark.parametrize("header, row", [
    ("| a | b | c | d |\n|---|---|---|---|\n", "|\n"),  # the issue's: 4 columns, one-cell rows
    ("a|b|c|d|e|f|g|h\n-|-|-|-|-|-|-|-\n", "x\n"),     # rows without a pipe continue the table too
    ("|a|b|c|d|\n|-|-|-|-|\n", "|||\n"),               # cells written, not filled in
    ("> |a|b|c|d|\n> |-|-|-|-|\n", "> |\n"),          # inside a quote
])
def test_issue35_a_reply_whose_tables_make_more_cells_than_characters_allow_is_text(header: str, row: str) -> None:
    """A 4-column header over ~25,000 one-character rows (49,990 characters) made 100,000 cells: 4.2 s,
    84 µs a character, where the documented worst is ~12. Its cells are counted before the table is
    parsed: more than one per :data:`md.CHARS_PER_TABLE_CELL` characters and the reply is escaped text."""
    text = header + row * ((49_990 - len(header)) // len(row))
    assert len(text) < md.MAX_MARKDOWN_CHARS
    html = md.markdown_to_html(text)
    assert "Shown as text: its tables would make more than" in html and "<table>" not in html
    assert html.count("|") == text.count("|")  # every character is still there, escaped


def test_issue35_real_tables_of_a_long_reply_are_still_tables() -> None:
    header = "| region | Q1 | Q2 | growth |\n|---|---:|---:|---:|\n"
    text = header + "".join(f"| north-{i} | {i * 7} | {i * 9} | {i % 13}% |\n" for i in range(1_400))
    assert 40_000 < len(text) < md.MAX_MARKDOWN_CHARS
    html = md.markdown_to_html(text + "\n" + header + "| one | 1 | 2 | 3% |\n")  # two tables share the allowance
    assert html.count("<table>") == 2 and html.count("<tr>") == 1_400 + 3
    short = "|a|b|\n|-|-|\n" + "|\n" * 600  # a short reply may fill cells: under MIN_TABLE_CELLS
    assert "<table>" in md.markdown_to_html(short)


# ---- issue 13, defect 3: RecursionError ------------------------------------------------------

@pytest.mark.timeout(30)
@pytest.mark.parametrize("text", [
    "> " * 500 + "deep",                                  # the defect's 1,001-byte reply
    "> " * 10_000 + "deep",
    "\n".join(">" * i + " deep" for i in range(1, 2000)),
    "\n".join("  " * i + "- deep" for i in range(3000)),
    "\n".join("   " * i + "1. deep" for i in range(3000)),
    "* " * 10_000 + "deep",
    "```\n" * 10_000 + "deep",
    "[" * 20_000 + "deep" + "]" * 20_000,
    "*" * 20_000 + "deep" + "*" * 20_000,
])
def test_defect_3_deep_nesting_renders_without_recursion_error_and_keeps_the_text(text: str) -> None:
    for _ in range(2):  # and the next render works too (the defect broke every later cell)
        html = md.markdown_to_html(text)
        assert "deep" in html
        assert_safe(html)
    assert "deep" in render.turn_html(sample_bundle(text))
    assert "deep" in render.replay_html([frame(1, text)], uid="x")


def test_nesting_just_under_the_limit_is_still_markdown() -> None:
    html = md.markdown_to_html("> " * 5 + "five levels")
    assert html.count("<blockquote>") == 5 and "five levels" in html


# ---- issue 13, defect 15: the primitives summary escaped twice -------------------------------

def test_defect_15_primitive_summary_is_escaped_once() -> None:
    bundle: dict[str, Any] = sample_bundle("plain")
    bundle["primitives"] = [{"primitive": "pin", "args": {"label": "a<b"}, "result": {"label": "facts & figures"}}]
    html = render.turn_html(bundle)
    assert "&amp;quot;" not in html and "&amp;#34;" not in html and "&amp;amp;" not in html
    start = html.index("Primitive calls")
    summary = html[html.index("<summary>", start) + len("<summary>"):html.index("</summary>", start)]
    assert htmllib.unescape(summary) == '{"label": "facts & figures"}'


# ---- the one Markdown parser: `%%arcana -f code` takes the reply's fences from it too ----------

def test_code_blocks_come_from_the_same_parser() -> None:
    from arcana_jupyter.jupyter.reply_delivery import code_blocks

    assert code_blocks(RICH) == ['def growth(df):\n    return df.groupby("region")["sales"].pct_change()  # per region']
    assert code_blocks("- item\n\n  ```sh\n  ls\n  ```\n> ```\n> quoted\n> ```") == ["ls", "quoted"]
    assert code_blocks("```\nunclosed") == ["unclosed"]


@pytest.mark.timeout(30)
def test_code_blocks_are_linear_on_unclosed_fences() -> None:
    # 40 KB of fence openers that never close: the regex this replaced took ~5 s (quadratic).
    start = time.perf_counter()
    assert len(md.code_blocks("```a\n" * 8_000)) == 1
    assert time.perf_counter() - start < 2


# ---- hostile pass, defect 1: super-linear Pygments lexers ------------------------------------

SLOW_FENCES = [
    ("systemd", "a" + " " * 2_000),  # O(n²) per token: ~30 s before
    ("c", "a" + " " * 4_000),         # one 4 KB run of spaces: one regex match of seconds
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("lang", "code"), SLOW_FENCES)
def test_hostile_1_a_slow_lexer_falls_back_to_escaped_text_within_the_budget(lang: str, code: str) -> None:
    reply = f"intro\n\n```{lang}\n{code}<b>\n```\n\n```python\nx = 1\n```\n"
    start = time.perf_counter()
    html = md.markdown_to_html(reply)
    elapsed = time.perf_counter() - start
    assert elapsed < md.HIGHLIGHT_SECONDS + 2  # the budget, not the lexer, decides (before: 17-30 s)
    assert f'data-lang="{lang}"><code class="language-{lang}">{code}&lt;b&gt;\n</code>' in html  # plain, escaped
    assert_safe(html)


def test_hostile_1_the_budget_is_shared_by_the_fences_of_one_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = "```python\nx = 1\n```\n"
    assert '<span class="n">x</span>' in md.markdown_to_html(fast)
    monkeypatch.setattr(md, "HIGHLIGHT_SECONDS", 0.0)
    html = md.markdown_to_html(fast * 3)
    assert '<span class="n">' not in html and html.count("x = 1") == 3


@pytest.mark.timeout(30)
def test_hostile_1_off_the_main_thread_only_short_fences_are_highlighted() -> None:
    import threading

    out: dict[str, str] = {}

    def work() -> None:
        out["short"] = md.markdown_to_html("```c\nint x;\n```")
        out["long"] = md.markdown_to_html("```c\na" + " " * 4_000 + "\n```")

    thread = threading.Thread(target=work)
    start = time.perf_counter()
    thread.start()
    thread.join(25)
    assert not thread.is_alive() and time.perf_counter() - start < md.HIGHLIGHT_SECONDS + 2
    assert '<span class="kt">int</span>' in out["short"]
    assert "<span" not in out["long"] and out["long"].count(" ") >= 4_000


@pytest.mark.timeout(60)
def test_hostile_1_the_alarm_inside_pygments_is_escaped_text_not_an_error(tmp_path: Any) -> None:
    """A fresh process: JuliaLexer's regexes compile on first use, inside jlcon's highlighting, under the
    alarm; Pygments wraps the timeout in ValueError("uncompilable regex"), which escaped the renderer."""
    import os
    import subprocess
    import sys

    script = ("from arcana_jupyter.render import md\n"
              "html = md.markdown_to_html('```jlcon\\njulia> x = 1\\n```\\n')\n"
              "assert 'julia&gt; x = 1' in html, html\n"
              "print('ok')\n")
    env = {**os.environ, "ARCANA_MARKDOWN_HIGHLIGHT_MS": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=50)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
