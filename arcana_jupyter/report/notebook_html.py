"""The notebook part of a report: nbconvert's ``basic`` template, made offline and kernel-free.

Widget views are replaced by the ``text/html`` each arcana widget carries (the CSS scrubber
instead of the jslinked slider: no widget manager, no RequireJS, no CDN); JavaScript outputs are
dropped; anything left that would load from the network is removed.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import nbformat
from nbconvert import HTMLExporter
from pygments.formatters import HtmlFormatter

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

_EXTERNAL_TAG = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*</script\s*>|<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^>]*>",
    re.IGNORECASE,
)
_EXTERNAL_ATTR = re.compile(
    r"\b(src|href|srcset|data-src|poster|background)\s*=\s*([\"'])\s*(?:https?:)?//[^\"']*\2", re.IGNORECASE
)
_CSS_IMPORT = re.compile(r"@import\s+(?:url\()?[\"']?(?:https?:)?//[^;]*;", re.IGNORECASE)
_CSS_URL = re.compile(r"url\(\s*[\"']?(?:https?:)?//[^)]*\)", re.IGNORECASE)


def strip_external(html: str) -> str:
    """Remove every reference that would make a browser fetch something from the network."""
    html = _EXTERNAL_TAG.sub("", html)
    html = _EXTERNAL_ATTR.sub(lambda m: f'data-removed-{m.group(1).lower()}=""', html)
    html = _CSS_IMPORT.sub("", html)
    return _CSS_URL.sub("none", html)


def offline_notebook(nb: Any) -> Any:
    """A copy of ``nb`` whose outputs render without a kernel, a widget manager or the network."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data is not None:
                data.pop("application/javascript", None)
                if WIDGET_VIEW in data:
                    if "text/html" in data:
                        data.pop(WIDGET_VIEW)
                    else:
                        continue  # a live-only widget (inspector buttons): its content is in the bundle
                if not data:
                    continue
            kept.append(output)
        cell["outputs"] = kept
    return nb


def notebook_body_html(nb: Any) -> str:
    """The cells of ``nb`` as HTML (basic template: no page, no scripts)."""
    exporter = HTMLExporter(template_name="basic", exclude_input_prompt=False)
    body, _ = exporter.from_notebook_node(nbformat.from_dict(offline_notebook(nb)))
    return strip_external(body)


def pygments_css() -> str:
    return str(HtmlFormatter(style="default").get_style_defs(".highlight"))


NOTEBOOK_CSS = ("""
.nb .cell{margin:10px 0}
.nb .input,.nb .output_area,.nb .text_cell{display:flex;gap:8px}
.nb .prompt{min-width:64px;flex:0 0 64px;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;"""
"""opacity:.55;text-align:right;padding-top:6px}
.nb .inner_cell,.nb .output_subarea{flex:1 1 auto;min-width:0}
.nb .input_area{border:1px solid rgba(127,127,127,.3);border-radius:6px;background:rgba(127,127,127,.06)}
.nb .input_area pre{margin:0;padding:8px 10px;white-space:pre-wrap;font-size:12.5px}
.nb .highlight{background:none}
.nb .output_subarea{padding:4px 0;overflow-x:auto}
.nb .output_text pre,.nb .output_stream pre{margin:0;white-space:pre-wrap;font-size:12.5px}
.nb .output_stderr{background:rgba(208,73,63,.08)}
.nb .text_cell_render{padding:2px 4px}
.nb .anchor-link{display:none}
.nb table.dataframe{border-collapse:collapse;font-size:12px}
.nb table.dataframe td,.nb table.dataframe th{border:1px solid rgba(127,127,127,.3);padding:2px 6px}
""")
