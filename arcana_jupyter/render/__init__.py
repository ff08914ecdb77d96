"""The one HTML renderer: turn bundles, replay scrubbers, charts and report pieces.

Pure functions from plain JSON data to HTML strings. The markup comes from the Jinja2 templates in
``templates/`` (autoescaping on: every string that came from a model or a user is escaped unless a
template says ``|safe``, each with its reason); replies are Markdown rendered by markdown-it-py
(:mod:`.md`: raw HTML off, links inert, math as text, Pygments for code). No script, no event
handler, no external URL; CSS inline. The MIME bundle's ``text/html``, the replay and the report
use these functions; inside JupyterLab the labextension renders the reply with JupyterLab's own
Markdown renderer instead.
"""

from __future__ import annotations

from .chart import tokens_chart_svg
from .fragments import esc
from .md import MAX_MARKDOWN_CHARS, highlight_css, markdown_to_html
from .replay_view import (
    counterfactual_html,
    diff_html,
    frame_html,
    long_replay_html,
    progress_html,
    prompt_html,
    replay_html,
    sent_prompt_html,
    sent_prompts_html,
    turns_table_html,
)
from .styles import CSS, style_block
from .turn import (
    inspector_html,
    notice_html,
    pins_html,
    reply_html,
    sessions_html,
    streaming_html,
    turn_html,
    turn_plain,
)

__all__ = [
    "CSS",
    "MAX_MARKDOWN_CHARS",
    "counterfactual_html",
    "diff_html",
    "esc",
    "frame_html",
    "highlight_css",
    "inspector_html",
    "long_replay_html",
    "markdown_to_html",
    "notice_html",
    "pins_html",
    "progress_html",
    "prompt_html",
    "replay_html",
    "reply_html",
    "sent_prompt_html",
    "sent_prompts_html",
    "sessions_html",
    "streaming_html",
    "style_block",
    "tokens_chart_svg",
    "turn_html",
    "turn_plain",
    "turns_table_html",
]
