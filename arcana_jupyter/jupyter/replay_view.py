"""The replay in a notebook: the frames (:mod:`.replay_frames`) shown as our MIME type, which the
JupyterLab extension reads the trace for, beside a static scrubber (and the replay widget where our
extension does not run); the progress bar while a long run's frames are built.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from .. import render

REPLAY_MIME_TYPE = "application/vnd.arcana.replay+json"


def compact_frames(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The frames without the prompt texts the trace holds (what the notebook's static HTML keeps)."""
    from ..runtime.bundle import compact_messages

    out = []
    for frame in frames:
        small = dict(frame)
        step = dict(frame.get("step") or {})
        if step:
            step["messages"] = compact_messages(step)
            small["step"] = step
        small["prompt_source"] = "trace" if step.get("messages") else frame.get("prompt_source")
        out.append(small)
    return out


def replay_bundle(frames: list[dict[str, Any]], *, run_id: str, agent: str | None, trace_path: str,
                  selected: int | None = None) -> dict[str, Any]:
    """``application/vnd.arcana.replay+json``: where the run's trace is, and one line per turn.

    The JupyterLab extension reads the whole trace from ``trace_path`` (relative to the notebook's
    folder) through the contents API and shows the scrubber; the per-turn summary is what it shows
    before (or without) the file.
    """
    from ..runtime.bundle import session_totals

    turns = []
    for frame in frames:
        usage = frame.get("usage") or {}
        step = frame.get("step") or {}
        budget = step.get("budget") or {}
        turns.append({
            "turn": frame.get("turn"), "status": frame.get("status"),
            "input": _preview(frame.get("input")), "reply": _preview(frame.get("reply")),
            "usage": {k: int(usage.get(k) or 0) for k in ("input_tokens", "output_tokens", "cached_input_tokens")},
            "cost_usd": float(frame.get("cost_usd") or 0.0),
            "strategy": (step.get("decision") or {}).get("strategy"), "prompt_tokens": budget.get("used"),
            "digest_verified": frame.get("digest_verified"),
        })
    return {
        "version": 1, "run_id": run_id, "agent": agent or (frames[0].get("agent") if frames else "main"),
        "trace_path": trace_path,
        "selected_turn": frames[selected]["turn"] if selected is not None and frames else None,
        "turns": turns, "totals": session_totals(frames),
    }


def _preview(text: Any, limit: int = 160) -> Any:
    if isinstance(text, str) and len(text) > limit:
        return text[:limit] + "…"
    return text


DIFF_LIMIT = 40
"""Rows of a turn's changes table the static scrubber shows (the rest counted; the extension lists all)."""

PROGRESS_MIN_TURNS = 50
"""``%arcana_replay`` shows a progress bar while it builds the frames of a run this long or longer."""


class NotebookProgress:
    """A progress bar in the cell's output while frames are built (``%arcana_replay`` on a long run);
    :func:`display_replay` then puts the replay in its place."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.handle: Any = None
        self._shown = -1

    def __call__(self, done: int, total: int) -> None:
        from IPython.display import display

        percent = done * 100 // max(total, 1)
        if total < PROGRESS_MIN_TURNS or percent == self._shown:
            return
        self._shown = percent
        text = f"arcana replay of run {self.run_id}: building the frames, turn {done:,} of {total:,}"
        data = {"text/html": render.progress_html(text, done, total), "text/plain": text}
        if self.handle is None:
            self.handle = display(data, raw=True, display_id=True)
        else:
            self.handle.update(data, raw=True)


def display_replay(frames: list[dict[str, Any]], *, trace_dir: str | Path, turn: int | None = None,
                   widgets: bool = False, default_window: int = 8192, run_id: str | None = None,
                   agent: str | None = None, handle: Any = None) -> None:
    """Show the scrubber: our MIME type (the extension reads the trace) and a static CSS scrubber.

    ``widgets`` and ``default_window`` are accepted for older callers. Where our extension does not
    run, the output also carries the replay widget's view (:func:`.widget.with_replay_widget`); a
    reopened notebook still shows the scrubber with no kernel and no widget state. ``handle``: a
    display (the progress bar of :class:`NotebookProgress`) to replace instead of adding an output.
    """
    from IPython import get_ipython
    from IPython.display import display

    from .notebook_path import locate_notebook

    shell = get_ipython()
    location = locate_notebook(shell.user_ns if shell is not None else {})
    run = run_id or (frames[0]["run_id"] if frames else None)
    turns = [f["turn"] for f in frames]
    selected = turns.index(turn) if turn in turns else None
    static = render.replay_html(compact_frames(frames), uid=uuid.uuid4().hex[:10], selected=selected,
                                diff_limit=DIFF_LIMIT)
    plain = f"arcana replay of run {run or '?'}: turns {turns}"
    data: dict[str, Any] = {"text/html": static, "text/plain": plain}
    metadata: dict[str, Any] = {}
    if run is not None:
        trace_path = location.relative(Path(trace_dir) / f"{run}.jsonl")
        data = {REPLAY_MIME_TYPE: replay_bundle(frames, run_id=run, agent=agent, trace_path=trace_path,
                                                selected=selected), **data}
        metadata = {"arcana": {"run_id": run, "agent": agent, "trace_path": trace_path, "replay": True}}
        from .widget import with_replay_widget  # where our extension does not run (see .widget)

        data = with_replay_widget(shell, data, REPLAY_MIME_TYPE, Path(trace_dir) / f"{run}.jsonl")
    if handle is not None:
        handle.update(data, raw=True, metadata=metadata)
    else:
        display(data, raw=True, metadata=metadata)
