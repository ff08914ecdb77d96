"""While a turn streams, its output carries our MIME type from the first token (JupyterLab renders the
reply with its own Markdown renderer), and the ``text/html`` stays cheap for long replies."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from arcana_jupyter.jupyter.display import MIME_TYPE, TurnDisplay
from arcana_jupyter.jupyter.notebook_path import NotebookLocation
from arcana_jupyter.render import md


def test_running_output_carries_the_turn_mime_type_before_the_first_event(tmp_path: Path) -> None:
    location = NotebookLocation(notebook=tmp_path / "a.ipynb", folder=tmp_path, source="test")
    chat = SimpleNamespace(turn=2, run_id="r_1", agent="main", trace_path=tmp_path / "a.arcana" / "r_1.jsonl")
    view = TurnDisplay(chat, location)
    data = view._running_output("| a | b |\n|---|---|\n| 1 | 2 |", "generating…")
    live = data[MIME_TYPE]
    assert live["status"] == "running" and live["turn"] == 3 and live["run_id"] == "r_1"
    assert live["reply"].startswith("| a | b |") and live["progress"] == "generating…"
    assert live["trace_path"] == "a.arcana/r_1.jsonl"
    assert "<table>" in data["text/html"]
    # A long partial reply is shown as text while it streams (it is re-rendered on every update).
    long = "| a |\n|---|\n" + "| x |\n" * (md.MAX_MARKDOWN_CHARS // 4 // 6 + 10)
    html = view._running_output(long, "generating…")["text/html"]
    assert "<table>" not in html and 'class="arcana-md-text"' in html
