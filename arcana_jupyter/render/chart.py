"""An inline SVG bar chart of tokens per turn (input, of which cached, and output).

The geometry is computed here; the markup is ``templates/chart.svg.j2`` (autoescaped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .templating import render_macro

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


def _n(value: float) -> str:
    return f"{value:.1f}"


def tokens_chart_svg(points: Sequence[Mapping[str, Any]], *, title: str = "Tokens per turn") -> str:
    """Stacked bars per turn: prompt tokens (cached part shaded) and reply tokens.

    ``points``: ``[{"label": "1", "input_tokens": 900, "output_tokens": 40, "cached_input_tokens": 0}]``.
    """
    width, height = 720, 240
    left, right, top, bottom = 56, 12, 28, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    totals = [int(p.get("input_tokens") or 0) + int(p.get("output_tokens") or 0) for p in points]
    y_max = _nice_max(max(totals, default=0))
    grid = []
    for i in range(5):
        y = top + plot_h - plot_h * i / 4
        grid.append({"y": _n(y), "label_y": _n(y + 4), "value": y_max * i // 4})
    n = max(len(points), 1)
    slot = plot_w / n
    bar = max(2.0, min(42.0, slot * 0.7))
    scale = plot_h / y_max
    y_base = top + plot_h
    bars = []
    for i, point in enumerate(points):
        x = left + slot * i + (slot - bar) / 2
        inp = int(point.get("input_tokens") or 0)
        cached = min(inp, int(point.get("cached_input_tokens") or 0))
        outp = int(point.get("output_tokens") or 0)
        h_in, h_cached, h_out = inp * scale, cached * scale, outp * scale
        bars.append({
            "tip": f"turn {point.get('label')}: {inp:,} in ({cached:,} cached), {outp:,} out",
            "x": _n(x), "w": _n(bar), "y_in": _n(y_base - h_in), "h_in": _n(h_in),
            "y_cached": _n(y_base - h_cached), "h_cached": _n(h_cached) if h_cached else None,
            "y_out": _n(y_base - h_in - h_out), "h_out": _n(h_out),
            "label": point.get("label") if (n <= 30 or i % max(1, n // 15) == 0) else None,
            "label_x": _n(x + bar / 2),
        })
    legend = []
    lx = width - right - 300
    for name, color, step in (
        ("prompt", INPUT_COLOR, 80), ("cached prompt", CACHED_COLOR, 130), ("reply", OUTPUT_COLOR, 0)
    ):
        legend.append((name, color, lx))
        lx += step
    chart = {
        "width": width, "height": height, "left": left, "right_x": width - right, "title": title, "grid": grid,
        "bars": bars, "label_y": top + plot_h + 14, "axis_x": _n(left + plot_w / 2), "legend": legend,
        "colors": {"input": INPUT_COLOR, "cached": CACHED_COLOR, "output": OUTPUT_COLOR},
    }
    return render_macro("chart.svg.j2", "chart", chart)
