"""What a ``%%arcana`` cell shows: the reply streaming in, then the turn's MIME bundle, plus the
live inspector widget under it.

Everything here runs on the kernel's main thread. The runtime's loop thread only appends tokens
and events to this object (under a lock); :meth:`TurnDisplay.tick`, called by the waiting cell,
turns them into display updates at most every ``interval`` seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from IPython.display import DisplayHandle, display

from .. import render
from ..trace.events import TraceEvent
from .notebook_path import NotebookLocation

MIME_TYPE = "application/vnd.arcana.turn+json"


def relative_bundle(bundle: Mapping[str, Any], location: NotebookLocation) -> dict[str, Any]:
    """The bundle with ``trace_path`` made relative to the notebook's folder."""
    data = dict(bundle)
    if data.get("trace_path"):
        data["trace_path"] = location.relative(str(data["trace_path"]))
    return data


def bundle_output(bundle: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(data, metadata)`` of a turn's display: the JSON bundle, static HTML and plain text."""
    data = {
        MIME_TYPE: dict(bundle),
        "text/html": render.turn_html(bundle),
        "text/plain": render.turn_plain(bundle),
    }
    metadata = {
        "arcana": {
            "run_id": bundle.get("run_id"),
            "agent": bundle.get("agent"),
            "turn": bundle.get("turn"),
            "trace_path": bundle.get("trace_path"),
        }
    }
    return data, metadata


class TurnDisplay:
    """The outputs of one turn, updated live."""

    def __init__(self, chat: Any, location: NotebookLocation, *, widgets: bool = True, interval: float = 0.15) -> None:
        self.chat = chat
        self.location = location
        self.interval = interval
        self.use_widgets = widgets
        self.turn: int = int(getattr(chat, "turn", 0)) + 1
        self._lock = threading.Lock()
        self._tokens: list[str] = []
        self._text_dirty = False
        self._events_dirty = False
        self._last_text = 0.0
        self._last_events = 0.0
        self.events: list[TraceEvent] = []
        self.handle: DisplayHandle | None = None
        self.inspector: Any = None

    # ---- called from the runtime's loop thread ---------------------------------------------
    def on_token(self, text: str) -> None:
        with self._lock:
            self._tokens.append(text)
            self._text_dirty = True

    def on_event(self, event: TraceEvent) -> None:
        with self._lock:
            if event.turn is not None and event.event_type == "turn_start":
                self.turn = int(event.turn)
            self.events.append(event)
            self._events_dirty = True
            if event.event_type == "llm_call" and (event.metadata.get("message") or {}).get("tool_calls"):
                self._tokens.clear()  # a tool-loop step ended: its text is not the final reply

    # ---- main thread ------------------------------------------------------------------------
    def start(self) -> None:
        self.handle = display(
            {"text/html": render.streaming_html("", note="waiting for the model…"), "text/plain": "…"},
            raw=True, display_id=True,
        )
        if self.use_widgets:
            from .widgets import InspectorWidget

            self.inspector = InspectorWidget(self.chat, self.turn, self.bundle)
            display(self.inspector)

    def partial_text(self) -> str:
        with self._lock:
            return "".join(self._tokens)

    def bundle(self) -> dict[str, Any]:
        return relative_bundle(self.chat.turn_bundle(self.turn), self.location)

    def tick(self, force: bool = False) -> None:
        now = time.monotonic()
        with self._lock:
            text_due = self._text_dirty and (force or now - self._last_text >= self.interval)
            events_due = self._events_dirty and (force or now - self._last_events >= 2 * self.interval)
            if text_due:
                self._text_dirty = False
                self._last_text = now
            if events_due:
                self._events_dirty = False
                self._last_events = now
            tools = [e.metadata.get("name") for e in self.events if e.event_type == "tool_call"]
        if text_due and self.handle is not None:
            partial = self.partial_text()
            note = "generating…" if not tools else f"generating… (after {len(tools)} tool call(s))"
            self.handle.update({"text/html": render.streaming_html(partial, note=note), "text/plain": partial}, raw=True)
        elif events_due and self.handle is not None and not self.partial_text():
            note = f"running tool {tools[-1]}…" if tools else "building the context…"
            self.handle.update({"text/html": render.streaming_html("", note=note), "text/plain": note}, raw=True)
        if events_due and self.inspector is not None:
            self.inspector.refresh(self.bundle())

    def finish(self) -> dict[str, Any]:
        """Replace the streaming view with the turn's MIME bundle; returns the bundle."""
        bundle = self.bundle()
        data, metadata = bundle_output(bundle)
        if self.handle is not None:
            self.handle.update(data, raw=True, metadata=metadata)
        else:
            display(data, raw=True, metadata=metadata)
        if self.inspector is not None:
            self.inspector.refresh(bundle)
        return bundle
