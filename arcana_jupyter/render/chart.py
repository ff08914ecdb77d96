"""An inline SVG bar chart of tokens per turn (input, of which cached, and output)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._html import esc

INPUT_COLOR = "#3a7bd5"
CACHED_COLOR = "#1f9e9a"
OUTPUT_COLOR = "#d67a1f"


def _nice_max(value: int) -> int:
    if value <= 0:
        return 10
    magnitude = 10 ** (len(str(value)) - 1)
    for factor in (1, 2, 2.5, 5, 10):
        top = int(factor * magnitude)
        if top >= value:
            return top
    return value


def tokens_chart_svg(points: Sequence[Mapping[str, Any]], *, title: str = "Tokens per turn") -> str:
    """Stacked bars per turn: prompt tokens (cached part shaded) and reply tokens.

    ``points``: ``[{"label": "1", "input_tokens": 900, "output_tokens": 40, "cached_input_tokens": 0}]``.
    """
    width, height = 720, 240
    left, right, top, bottom = 56, 12, 28, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [int(p.get("input_tokens") or 0) + int(p.get("output_tokens") or 0) for p in points]
    y_max = _nice_max(max(totals, default=0))
    out = [
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}">',
        f'<text x="{left}" y="16" font-weight="600">{esc(title)}</text>',
    ]
    for i in range(5):
        value = y_max * i // 4
        y = top + plot_h - plot_h * i / 4
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="currentColor" stroke-opacity=".15"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{value:,}</text>')
    n = max(len(points), 1)
    slot = plot_w / n
    bar = max(2.0, min(42.0, slot * 0.7))
    for i, point in enumerate(points):
        x = left + slot * i + (slot - bar) / 2
        inp = int(point.get("input_tokens") or 0)
        cached = min(inp, int(point.get("cached_input_tokens") or 0))
        outp = int(point.get("output_tokens") or 0)
        scale = plot_h / y_max
        y_base = top + plot_h
        h_in, h_cached, h_out = inp * scale, cached * scale, outp * scale
        tip = f"turn {point.get('label')}: {inp:,} in ({cached:,} cached), {outp:,} out"
        out.append(f"<g><title>{esc(tip)}</title>")
        out.append(f'<rect x="{x:.1f}" y="{y_base - h_in:.1f}" width="{bar:.1f}" height="{h_in:.1f}" fill="{INPUT_COLOR}"/>')
        if h_cached:
            out.append(
                f'<rect x="{x:.1f}" y="{y_base - h_cached:.1f}" width="{bar:.1f}" height="{h_cached:.1f}" fill="{CACHED_COLOR}"/>'
            )
        out.append(
            f'<rect x="{x:.1f}" y="{y_base - h_in - h_out:.1f}" width="{bar:.1f}" height="{h_out:.1f}" fill="{OUTPUT_COLOR}"/>'
        )
        out.append("</g>")
        if n <= 30 or i % max(1, n // 15) == 0:
            out.append(f'<text x="{x + bar / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle">{esc(point.get("label"))}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle" opacity=".7">turn</text>')
    lx = width - right - 300
    for name, color, step in (("prompt", INPUT_COLOR, 80), ("cached prompt", CACHED_COLOR, 130), ("reply", OUTPUT_COLOR, 0)):
        out.append(f'<rect x="{lx}" y="8" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{lx + 14}" y="17">{name}</text>')
        lx += step
    out.append("</svg>")
    return '<div class="arcana-chart">' + "".join(out) + "</div>"
