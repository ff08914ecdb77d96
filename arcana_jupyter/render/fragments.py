"""Small building blocks: escaping, numbers as text, JSON previews, nested ``get``.

The static views (turn, replay, report) come from the Jinja2 templates in ``templates/`` with
autoescaping on; they use the ``*_text`` formatters (text, escaped by the template). The HTML
helpers below (``esc``, ``fmt_*``, ``pill``, ``table``) remain for the small views outside
``render/`` (memory tables, counterfactual notes): every string they put into HTML goes through
:func:`esc`. Nothing here emits a URL, a script or an event-handler attribute.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

MAX_PREVIEW_CHARS = 4000


def esc(value: Any) -> str:
    """Escape any value for use as HTML text or a quoted attribute value."""
    if value is None:
        return ""
    return html.escape(str(value), quote=True)


def int_text(value: Any) -> str:
    """``1,234`` (text, not HTML: templates escape it; ``fmt_int`` is the escaped form)."""
    if value is None:
        return "–"
    try:
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)


def cost_text(value: Any) -> str:
    if value is None:
        return "–"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if number == 0:
        return "$0"
    return f"${number:.4f}" if number < 1 else f"${number:,.2f}"


def ms_text(value: Any) -> str:
    if value is None:
        return "–"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{number:,.0f} ms" if number < 10_000 else f"{number / 1000:,.1f} s"


def score_text(value: Any) -> str:
    if value is None:
        return ""
    try:
        return f"{float(value):.2f}"
    except (TypeError, ValueError):
        return str(value)


def fmt_int(value: Any) -> str:
    return esc(int_text(value))


def fmt_cost(value: Any) -> str:
    return esc(cost_text(value))


def fmt_ms(value: Any) -> str:
    return esc(ms_text(value))


def fmt_score(value: Any) -> str:
    return esc(score_text(value))


def clip(text: str, limit: int = MAX_PREVIEW_CHARS) -> str:
    """Cut ``text`` to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters]"


def json_text(value: Any) -> str:
    """A compact JSON text of a value (strings are returned as they are)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def json_preview(value: Any, limit: int = 600) -> str:
    """A compact, escaped JSON rendering of a tool argument or result."""
    return esc(clip(json_text(value), limit))


def attrs(**values: Any) -> str:
    parts = []
    for key, value in values.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        parts.append(name if value is True else f'{name}="{esc(value)}"')
    return (" " + " ".join(parts)) if parts else ""


def tag(name: str, body: str = "", **attributes: Any) -> str:
    """``<name attrs>body</name>``; ``body`` must already be HTML (escape text first)."""
    return f"<{name}{attrs(**attributes)}>{body}</{name}>"


Cell = str | tuple[str, str]


def _td(cell: Cell) -> str:
    if isinstance(cell, tuple):
        return f'<td class="{esc(cell[1])}">{cell[0]}</td>'
    return f"<td>{cell}</td>"


def table(headers: Iterable[str], rows: Iterable[Iterable[Any]], cls: str = "arcana-table") -> str:
    """An HTML table; headers are plain text, cells are HTML (or ``(html, css_class)``)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_td(cell) for cell in row) + "</tr>" for row in rows)
    return f'<table class="{esc(cls)}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def pill(text: str, kind: str) -> str:
    safe_kind = re.sub(r"[^a-z0-9_-]", "", kind.lower())
    return f'<span class="arcana-pill arcana-{safe_kind}">{esc(text)}</span>'


def get(mapping: Any, *keys: str, default: Any = None) -> Any:
    """Nested ``dict.get`` that tolerates ``None`` and non-mappings on the way."""
    current = mapping
    for key in keys:
        if not isinstance(current, Mapping):
            return default
        current = current.get(key)
        if current is None:
            return default
    return current


def css_ident(value: Any) -> str:
    """A value made safe for use inside a class or id (letters, digits, ``-`` and ``_``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", str(value))
