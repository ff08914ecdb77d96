"""The one HTML renderer: turn bundles, replay scrubbers, charts and report pieces.

Pure functions from plain JSON data to HTML strings. They escape every string that came from a
model or a user, emit no script, no event handler and no external URL, and carry their CSS inline.
The MIME bundle's ``text/html``, the widgets and the report all use these functions.
"""

from __future__ import annotations

from ._html import esc
from .chart import tokens_chart_svg
from .markdown import markdown_to_html
from .replay import counterfactual_html, diff_html, frame_html, prompt_html, replay_html
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
    "counterfactual_html",
    "diff_html",
    "esc",
    "frame_html",
    "inspector_html",
    "markdown_to_html",
    "notice_html",
    "pins_html",
    "prompt_html",
    "replay_html",
    "reply_html",
    "sessions_html",
    "streaming_html",
    "style_block",
    "tokens_chart_svg",
    "turn_html",
    "turn_plain",
]
