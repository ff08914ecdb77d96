"""Reproducible trace reports: one self-contained HTML file per notebook.

``build_report(notebook)`` writes ``NOTEBOOK.report.html`` with the run summary (turns, tokens,
cost, primitive calls), a chart of tokens per turn, the notebook itself (every turn's output
carries its inspector), a replay scrubber per run and, with ``verify=True``, the turn-by-turn
result of re-executing the notebook against the replay provider. Nothing in the file loads
anything from the network: no CDN, no external script, style, font or image.
"""

from __future__ import annotations

from ..compat import moved as _moved
from .build import build_report, collect_bundles
from .verify import TurnCheck, verify_notebook

__all__ = ["TurnCheck", "build_report", "collect_bundles", "verify_notebook"]


# Names exported before 0.1's public surface (issue 25), answered for one more release with a warning.
_MOVED = {
    "VerifyResult": "arcana_jupyter.report.verify",
    "embed_traces": "arcana_jupyter.report.embed",
    "extract_traces": "arcana_jupyter.report.embed",
    "render_report": "arcana_jupyter.report.build",
    "write_report": "arcana_jupyter.report.build",
}
__getattr__ = _moved("arcana_jupyter.report", _MOVED)
