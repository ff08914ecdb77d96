"""The Jinja2 environment of every static arcana view (templates/ beside this module).

Autoescaping is on for every template: a value put into a page is escaped unless the template
writes ``|safe`` — and each ``|safe`` carries a ``{# safe: why #}`` comment on its line
(tests/render/test_templates.py fails on one without). The templates are written indented for
reading; :class:`_CompactEnvironment` drops each line break and the indentation that follows it
when a template is loaded, so the HTML that reaches a notebook has no layout whitespace (write
``{{ " " }}`` where a space between two inline elements matters). Nothing model- or user-written
is ever part of a template's source, so this touches only our own markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from ..trace.redact import mask_secrets
from .fragments import clip, cost_text, css_ident, get, int_text, json_text, ms_text, score_text
from .md import highlight_css, markdown_to_html

_LAYOUT = re.compile(r"\n[ \t]*")


class _CompactEnvironment(Environment):
    def preprocess(self, source: str, name: str | None = None, filename: str | None = None) -> str:
        return _LAYOUT.sub("", super().preprocess(source, name, filename))


def _pill_kind(value: Any) -> str:
    return re.sub(r"[^a-z0-9_-]", "", str(value).lower())


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _items(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list | tuple) else []


def _masked(value: Any) -> Any:
    """Every text a template prints passes the one masking function (docs/SECURITY.md) first.

    ``Markup`` is HTML these templates (or ``markdown_to_html``, which masks its input) already
    built from masked values, so it is not scanned again at every level of nesting."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return mask_secrets(value)
    return value


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = _CompactEnvironment(
        loader=PackageLoader("arcana_jupyter.render", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=False,
        finalize=_masked,
    )
    env.filters.update(
        fmt_int=int_text, fmt_cost=cost_text, fmt_ms=ms_text, fmt_score=score_text, clip=clip, json_text=json_text,
        css_ident=css_ident, pill_kind=_pill_kind, markdown=markdown_to_html, highlight_css=highlight_css,
        mapping=_mapping, items=_items, tojson_compact=lambda v: json.dumps(v, ensure_ascii=False),
    )
    env.globals.update(get=get)
    return env


def render_template(template: str, **context: Any) -> str:
    """Render ``templates/<template>`` with ``context`` (autoescaped)."""
    return environment().get_template(template).render(**context)


def render_macro(template: str, macro: str, *args: Any, **kwargs: Any) -> str:
    """Call one macro of a template (a fragment: a table, a section) and return its HTML."""
    module = environment().get_template(template).module
    return str(getattr(module, macro)(*args, **kwargs))
