"""Replies as HTML outside JupyterLab: markdown-it-py (CommonMark + GFM tables and strikethrough).

Inside JupyterLab the reply is rendered by JupyterLab's own Markdown renderer (the labextension
hands it to the app's ``text/markdown`` renderer with its sanitizer, MathJax and highlighting).
Everywhere else — the ``text/html`` fallback of a turn, replay frames, the report — this module is
the one place that turns Markdown into HTML:

- raw HTML is disabled: ``<script>`` in a reply is text, like every other character;
- links and images are inert: their text, then the address as plain text (no ``href``, no ``src``);
- math (``$x^2$``, ``$$\\int$$``) stays readable text in a ``arcana-math`` span or block, untouched
  by emphasis rules, so a reader without KaTeX/MathJax still reads the formula;
- fenced code gets ``class="language-X"`` and Pygments highlighting (CSS classes under
  ``.arcana-hl``: :func:`highlight_css` gives the rules a fragment uses);
- headings move down two levels (a reply sits inside a cell: ``#`` becomes ``<h3>``).

Limits (docs/SECURITY.md, docs/TURN_BUNDLE.md): a reply longer than :data:`MAX_MARKDOWN_CHARS`
is shown as escaped, preformatted text (markdown-it-py is linear but pure Python: about 1 µs per
character on prose, up to ~12 µs on adversarial tables); block nesting deeper than
:data:`MAX_NESTING` (markdown-it's ``maxNesting``, which would silently drop the rest) is shown the
same way; code blocks longer than :data:`MAX_HIGHLIGHT_CHARS` are escaped without highlighting.
Nothing here recurses on the input's depth, so no input raises ``RecursionError``.

Highlighting is bounded in time, not only in size: some Pygments lexers are super-linear (a C or
systemd fence of one long run of spaces costs O(n²) per token). The fences of one reply share a
wall-clock budget (:data:`HIGHLIGHT_SECONDS`, measured with ``time.perf_counter``); a fence whose
highlighting would overrun it, and every fence after the budget is spent, is shown as escaped
plain text. On the main thread a one-shot ``ITIMER_REAL`` alarm stops a single slow regular
expression mid-match (CPython's ``re`` checks for signals while it runs); elsewhere (another
thread, or the alarm is in use) the budget is checked between tokens and only fences up to
:data:`MAX_UNTIMED_HIGHLIGHT_CHARS` are highlighted, a size at which no Pygments lexer is slow
(``benchmarks/results/markdown.md`` tries every lexer alias).
"""

from __future__ import annotations

import html
import os
import re
import signal
import threading
import time
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import format as pygments_format
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from ..trace.redact import mask_secrets


def _setting(name: str, default: int, low: int) -> int:
    """An integer limit from the environment (``ARCANA_MARKDOWN_*``), else ``default``; never below ``low``."""
    raw = os.environ.get(name, "").strip()
    try:
        return max(low, int(raw)) if raw else default
    except ValueError:
        return default


MAX_MARKDOWN_CHARS = _setting("ARCANA_MARKDOWN_MAX_CHARS", 50_000, 1_000)
"""Replies longer than this are shown as escaped text (worst case measured: benchmarks/results/markdown.md).
Setting: ``ARCANA_MARKDOWN_MAX_CHARS`` (read when the module loads)."""
MAX_NESTING = _setting("ARCANA_MARKDOWN_MAX_NESTING", 20, 4)
"""Deepest block nesting rendered as Markdown (quotes in quotes, lists in lists); deeper: escaped text.
Setting: ``ARCANA_MARKDOWN_MAX_NESTING``."""
MAX_HIGHLIGHT_CHARS = _setting("ARCANA_MARKDOWN_MAX_HIGHLIGHT_CHARS", 20_000, 0)
"""Code blocks longer than this are escaped without Pygments highlighting.
Setting: ``ARCANA_MARKDOWN_MAX_HIGHLIGHT_CHARS``."""
HIGHLIGHT_SECONDS = _setting("ARCANA_MARKDOWN_HIGHLIGHT_MS", 250, 1) / 1000
"""Wall-clock budget for highlighting the fences of one reply, in seconds; past it, fences are escaped text.
Setting: ``ARCANA_MARKDOWN_HIGHLIGHT_MS`` (milliseconds)."""
CHARS_PER_TABLE_CELL = _setting("ARCANA_MARKDOWN_CHARS_PER_TABLE_CELL", 3, 1)
"""A reply's tables may make at most one cell per this many of its characters (beyond
:data:`MIN_TABLE_CELLS`); more, and the reply is shown as escaped text. A cell costs ~20 µs to parse and
render, and GFM fills short rows with empty cells: a 4-column header over 25,000 one-character rows made
100,000 cells of 50,000 characters (84 µs a character). Setting: ``ARCANA_MARKDOWN_CHARS_PER_TABLE_CELL``."""
MIN_TABLE_CELLS = _setting("ARCANA_MARKDOWN_MIN_TABLE_CELLS", 2_000, 0)
"""Table cells any reply may make, however short."""
MAX_UNTIMED_HIGHLIGHT_CHARS = _setting("ARCANA_MARKDOWN_MAX_UNTIMED_HIGHLIGHT_CHARS", 1_000, 0)
"""Where a slow regular expression cannot be interrupted (off the main thread, or ``SIGALRM`` in use),
longer fences are escaped without highlighting. Setting: ``ARCANA_MARKDOWN_MAX_UNTIMED_HIGHLIGHT_CHARS``."""
HIGHLIGHT_STYLE = "default"


class _HighlightTimeout(Exception):
    """The highlighting budget ran out (raised by the alarm or between tokens)."""


class _Deadline:
    """The time left for highlighting one reply's fences."""

    def __init__(self, seconds: float) -> None:
        self.end = time.perf_counter() + seconds

    def left(self) -> float:
        return self.end - time.perf_counter()


def _alarm_usable() -> bool:
    """A one-shot ``SIGALRM`` can interrupt us: main thread, no handler or timer of someone else."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return False
    try:
        return signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None) and \
            signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    except (ValueError, OSError):
        return False


def _timed_tokens(lexer: Any, code: str, deadline: _Deadline) -> Any:
    for token in lexer.get_tokens(code):
        if deadline.left() <= 0:
            raise _HighlightTimeout
        yield token


def _format(formatter: HtmlFormatter, tokens: Any) -> str:
    return str(pygments_format(tokens, formatter))


def _highlight_within(code: str, lexer: Any, deadline: _Deadline) -> str | None:
    """``code`` highlighted, or ``None`` when it did not finish within the deadline.

    Any exception counts as not finished: the alarm can land inside Pygments itself (a lexer that
    compiles a sub-lexer's regexes on first use wraps our timeout in ``ValueError("uncompilable
    regex")``), and a lexer may fail on odd input; the fence is then escaped text."""
    left = deadline.left()
    if left <= 0:
        return None
    formatter = _formatter()
    if not _alarm_usable():
        if len(code) > MAX_UNTIMED_HIGHLIGHT_CHARS:
            return None
        try:
            return _format(formatter, _timed_tokens(lexer, code, deadline))
        except Exception:  # the budget ran out, or the lexer failed: escaped text
            return None
    armed = [True]

    def on_alarm(signum: int, frame: Any) -> None:
        if armed[0]:
            raise _HighlightTimeout

    try:
        previous = signal.signal(signal.SIGALRM, on_alarm)
        try:
            signal.setitimer(signal.ITIMER_REAL, left)
            return _format(formatter, _timed_tokens(lexer, code, deadline))
        finally:
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    except Exception:  # _HighlightTimeout, also when Pygments wrapped it, or a lexer's own failure
        return None


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _css_ident(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9_+-]", "-", value)[:40]


def _render_link_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    env.setdefault("arcana_links", []).append(str(tokens[idx].attrGet("href") or ""))
    return '<span class="arcana-link">'


def _render_link_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    stack = env.get("arcana_links") or [""]
    href = stack.pop()
    return "</span>" + (f' <span class="arcana-url">({_esc(href)})</span>' if href else "")


def _render_image(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = str(token.attrGet("src") or "")
    return (f'<span class="arcana-image">[image: {_esc(alt)}]</span>'
            + (f' <span class="arcana-url">({_esc(src)})</span>' if src else ""))


def _render_heading_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    level = min(int(tokens[idx].tag[1:]) + 2, 6)
    return f"<h{level}>"


def _render_heading_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    level = min(int(tokens[idx].tag[1:]) + 2, 6)
    return f"</h{level}>\n"


def _code(code: str, lang: str, env: dict[str, Any] | None = None) -> str:
    cls = f' class="language-{_esc(_css_ident(lang))}"' if lang else ""
    body = _esc(code)
    if lang and len(code) <= MAX_HIGHLIGHT_CHARS:
        try:
            lexer = get_lexer_by_name(lang, stripnl=False, ensurenl=False)
        except ClassNotFound:
            lexer = None
        if lexer is not None:
            env = {} if env is None else env
            deadline = env.setdefault("arcana_highlight_deadline", _Deadline(HIGHLIGHT_SECONDS))
            highlighted = _highlight_within(code, lexer, deadline)
            if highlighted is not None:
                body = highlighted
    lang_attr = f' data-lang="{_esc(lang)}"' if lang else ""
    return f'<pre class="arcana-code arcana-hl"{lang_attr}><code{cls}>{body}</code></pre>\n'


def _render_fence(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    token = tokens[idx]
    lang = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
    return _code(token.content, lang, env)


def _render_code_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    return _code(tokens[idx].content, "")


def _render_math_inline(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    markup = tokens[idx].markup or "$"
    return f'<span class="arcana-math">{_esc(markup + tokens[idx].content + markup)}</span>'


def _render_math_block(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
    return f'<div class="arcana-math arcana-math-block">{_esc("$$" + tokens[idx].content.strip() + "$$")}</div>\n'


@lru_cache(maxsize=1)
def _formatter() -> HtmlFormatter:
    return HtmlFormatter(style=HIGHLIGHT_STYLE, nowrap=True)


class _TooManyCells(Exception):
    """A reply's tables would make more cells than its length allows (:data:`CHARS_PER_TABLE_CELL`)."""


def _bounded_table(table: Any) -> Any:
    """markdown-it's GFM table rule, bounded: before a table is parsed, its cells are counted from its
    lines (columns of the delimiter row times the rows up to the next blank line: an upper bound) and
    taken from the reply's allowance (``env["arcana_table_cells"]``); past it, :class:`_TooManyCells`."""

    def rule(state: Any, start: int, end: int, silent: bool) -> bool:
        if silent or not table(state, start, end, True):  # not a table here (cheap): nothing to count
            return bool(table(state, start, end, silent)) if silent else False
        left = state.env.get("arcana_table_cells")
        if left is not None:
            delimiter = state.src[state.bMarks[start + 1] + state.tShift[start + 1]:state.eMarks[start + 1]]
            columns = delimiter.strip().strip("|").count("|") + 1
            line = start + 2
            while line < end and not state.isEmpty(line):
                line += 1
            cells = columns * (line - start)
            if cells > left:
                raise _TooManyCells(cells)
            state.env["arcana_table_cells"] = left - cells
        return bool(table(state, start, end, False))

    return rule


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "maxNesting": MAX_NESTING})
    md.enable(["table", "strikethrough"])
    md.block.ruler.at("table", _bounded_table(md.block.ruler.__rules__[md.block.ruler.__find__("table")].fn),
                      {"alt": ["paragraph", "reference"]})
    md.use(dollarmath_plugin, allow_space=True, allow_digits=False, double_inline=True)
    rules = md.add_render_rule
    rules("link_open", _render_link_open)
    rules("link_close", _render_link_close)
    rules("image", _render_image)
    rules("heading_open", _render_heading_open)
    rules("heading_close", _render_heading_close)
    rules("fence", _render_fence)
    rules("code_block", _render_code_block)
    rules("math_inline", _render_math_inline)
    rules("math_inline_double", _render_math_inline)
    rules("math_block", _render_math_block)
    rules("math_block_label", _render_math_block)
    return md


def _as_text(text: str, why: str) -> str:
    return (f'<div class="arcana-muted arcana-md-note">{_esc(why)}</div>'
            f'<pre class="arcana-md-text">{_esc(text)}</pre>')


def markdown_to_html(text: str | None, *, limit: int | None = None) -> str:
    """Render a reply's Markdown to safe HTML (every character of ``text`` is escaped or parsed).

    ``limit`` (default :data:`MAX_MARKDOWN_CHARS`): longer texts are shown as escaped text.
    """
    if not text:
        return ""
    text = mask_secrets(str(text))  # the one masking function: a key the model echoes never reaches a page
    limit = MAX_MARKDOWN_CHARS if limit is None else limit
    if len(text) > limit:
        return _as_text(text, f"Shown as text: {len(text):,} characters, more than the {limit:,} rendered as Markdown.")
    md = _parser()
    cells = max(MIN_TABLE_CELLS, len(text) // CHARS_PER_TABLE_CELL)
    env: dict[str, Any] = {"arcana_table_cells": cells}
    try:
        tokens = md.parse(text, env)
    except _TooManyCells:
        return _as_text(text, f"Shown as text: its tables would make more than {cells:,} cells "
                              f"(one per {CHARS_PER_TABLE_CELL} characters).")
    if tokens and max(t.level for t in tokens) >= MAX_NESTING - 1:
        return _as_text(text, f"Shown as text: nested more than {MAX_NESTING} levels deep.")
    return str(md.renderer.render(tokens, md.options, env))


_PYGMENTS_CLASS = re.compile(r'<span class="([A-Za-z0-9]{1,4})">')


@lru_cache(maxsize=1)
def _highlight_rules() -> dict[str, str]:
    rules: dict[str, str] = {}
    for line in str(_formatter().get_style_defs(".arcana-hl")).splitlines():
        m = re.match(r"\.arcana-hl \.([A-Za-z0-9]+) \{(.*?)\}", line)
        if m:
            rules[m.group(1)] = f".arcana-hl .{m.group(1)}{{{m.group(2).strip()}}}"
    return rules


def highlight_css(fragment: str | None = None) -> str:
    """The Pygments rules (scoped to ``.arcana-hl``) that ``fragment`` uses, or all of them."""
    rules = _highlight_rules()
    if fragment is None:
        return "\n".join(rules.values())
    if "arcana-hl" not in fragment:
        return ""
    used = sorted(set(_PYGMENTS_CLASS.findall(fragment)) & rules.keys())
    return "".join(rules[c] for c in used)


@lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "maxNesting": MAX_NESTING})
    md.core.ruler.disable(["inline", "text_join"], ignoreInvalid=True)  # blocks only: fences are blocks
    return md


def code_blocks(text: str | None) -> list[str]:
    """The fenced code blocks of a Markdown reply, in order, without their fences (``%%arcana -f code``).

    The same CommonMark parser as the rendering (fences in lists and quotes count), block rules only:
    linear, about 0.5–1.5 s per MB of adversarial input.
    """
    return [code for _, code in code_fences(text)]


def code_fences(text: str | None) -> list[tuple[str, str]]:
    """``(language, code)`` of each fenced code block (language: the info string's first word, lower-case)."""
    if not text:
        return []
    return [((t.info.strip().split(maxsplit=1) or [""])[0].lower(), t.content.rstrip("\n"))
            for t in _block_parser().parse(str(text)) if t.type == "fence"]
