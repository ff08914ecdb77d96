"""A small, safe Markdown renderer for replies: the text is escaped first, then formatted.

It covers what chat replies use (paragraphs, headings, lists, quotes, fenced and inline code,
bold, italics, tables of pipes are left as text). Links become their text followed by the address
in plain text: no ``href``, no ``src``, nothing a reply can use to load or run anything.
"""

from __future__ import annotations

import re

from ._html import esc

_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+.-]*)\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_ORDERED = re.compile(r"^\s*\d{1,9}[.)]\s+(.*)$")
_QUOTE = re.compile(r"^\s*>\s?(.*)$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")

_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_ITALIC = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])|(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


def inline(text: str) -> str:
    """Escape ``text`` and apply inline formatting (code spans are left untouched inside)."""
    pieces: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        pieces.append(_inline_plain(text[last : match.start()]))
        pieces.append(f"<code>{esc(match.group(1))}</code>")
        last = match.end()
    pieces.append(_inline_plain(text[last:]))
    return "".join(pieces)


def _inline_plain(text: str) -> str:
    out = esc(text)
    out = _LINK.sub(lambda m: f'{m.group(1)} <span class="arcana-url">({m.group(2)})</span>', out)
    out = _BOLD.sub(lambda m: f"<strong>{m.group(1) or m.group(2)}</strong>", out)
    out = _ITALIC.sub(lambda m: f"<em>{m.group(1) or m.group(2)}</em>", out)
    return out


def markdown_to_html(text: str | None) -> str:
    """Render chat Markdown to HTML; every character of ``text`` is escaped."""
    if not text:
        return ""
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    paragraph: list[str] = []
    list_kind: str | None = None
    list_items: list[str] = []
    quote: list[str] = []

    def flush_paragraph() -> None:
        if paragraph:
            out.append("<p>" + "<br>".join(inline(line) for line in paragraph) + "</p>")
            paragraph.clear()

    def flush_list() -> None:
        nonlocal list_kind
        if list_kind:
            items = "".join(f"<li>{inline(item)}</li>" for item in list_items)
            out.append(f"<{list_kind}>{items}</{list_kind}>")
            list_kind = None
            list_items.clear()

    def flush_quote() -> None:
        if quote:
            out.append("<blockquote>" + markdown_to_html("\n".join(quote)) + "</blockquote>")
            quote.clear()

    def flush_all() -> None:
        flush_paragraph()
        flush_list()
        flush_quote()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush_all()
            marker, lang = fence.group(1), fence.group(2)
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i].strip() != marker:
                body.append(lines[i])
                i += 1
            i += 1  # the closing fence (or the end of an unterminated block)
            label = f' data-lang="{esc(lang)}"' if lang else ""
            out.append(f"<pre class=\"arcana-code\"{label}><code>{esc(chr(10).join(body))}</code></pre>")
            continue
        quote_match = _QUOTE.match(line)
        if quote_match:
            flush_paragraph()
            flush_list()
            quote.append(quote_match.group(1))
            i += 1
            continue
        flush_quote()
        if not line.strip():
            flush_paragraph()
            flush_list()
        elif heading := _HEADING.match(line):
            flush_paragraph()
            flush_list()
            level = min(len(heading.group(1)) + 2, 6)  # replies sit inside a cell: h3..h6
            out.append(f"<h{level}>{inline(heading.group(2).strip())}</h{level}>")
        elif _RULE.match(line):
            flush_paragraph()
            flush_list()
            out.append("<hr>")
        elif item := (_BULLET.match(line) or _ORDERED.match(line)):
            flush_paragraph()
            kind = "ul" if item.re is _BULLET else "ol"
            if list_kind and list_kind != kind:
                flush_list()
            list_kind = kind
            list_items.append(item.group(1))
        elif list_kind and line.startswith(("  ", "\t")) and list_items:
            list_items[-1] += " " + line.strip()
        else:
            flush_list()
            paragraph.append(line)
        i += 1
    flush_all()
    return "".join(out)
