"""What a ``%%arcana`` cell shows: one output, the turn's MIME bundle, updated live.

The output is created when the turn starts and updated in place (``display_id``) as tokens and
events arrive: the JupyterLab extension renders the reply so far with JupyterLab's own Markdown
renderer and redraws its inspector from each update; everywhere else the ``text/html`` shows the
reply streaming in (Markdown through markdown-it-py; past a quarter of the Markdown limit, as text
until the turn ends, so a long reply does not cost a full render per update). At the end it holds
the turn's compact bundle (:func:`arcana_jupyter.runtime.bundle.compact_bundle`): a summary whose
detail (the prompt texts) is read from the trace beside the notebook. Live actions (unpin, hydrate,
retract) travel over the ``arcana`` comm (:mod:`.comm`). Where our extension does not run (``link``
given, see :func:`.widget.wants_widget`) the same output also carries the turn widget's view
(:mod:`.widget`), whose ``bundle`` trait follows every update.

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
from ..cli import printable
from ..runtime.bundle import compact_bundle
from ..schema.bundle import MIME_TYPE
from ..schema.events import LlmCall, ToolCallEvent
from ..trace.events import TraceEvent
from ..trace.redact import mask_secrets
from .notebook_path import NotebookLocation


def relative_bundle(bundle: Mapping[str, Any], location: NotebookLocation) -> dict[str, Any]:
    """The bundle with ``trace_path`` made relative to the notebook's folder."""
    data = dict(bundle)
    if data.get("trace_path"):
        data["trace_path"] = location.relative(str(data["trace_path"]))
    return data


def session_usage(chat: Any) -> dict[str, Any]:
    """Tokens and cost of the session so far (every turn of this run, in this kernel and before)."""
    usage = getattr(chat, "usage", None)
    return {
        "turns": int(getattr(chat, "turn", 0) or 0),
        "input_tokens": int(getattr(usage, "input_tokens", 0) or 0),
        "output_tokens": int(getattr(usage, "output_tokens", 0) or 0),
        "cached_input_tokens": int(getattr(usage, "cached_input_tokens", 0) or 0),
        "cost_usd": float(getattr(chat, "cost_usd", 0.0) or 0.0),
    }


def bundle_output(bundle: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(data, metadata)`` of a turn's display: the JSON bundle, static HTML and plain text."""
    data = {
        MIME_TYPE: dict(bundle),
        "text/html": render.turn_html(bundle),
        "text/plain": printable(render.turn_plain(bundle)),  # a terminal front end prints it
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
    """The output of one turn, updated live."""

    def __init__(self, chat: Any, location: NotebookLocation, *, widgets: bool = False, interval: float = 0.15,
                 link: Any = None) -> None:
        # ``widgets`` is accepted for callers written for the old ipywidgets inspector; it does nothing.
        # ``link``: the shell's comm handler; given, the output also shows the turn widget (.widget).
        self.link = link
        self.widget: Any = None
        self.chat = chat
        self.location = location
        self.interval = interval
        self.turn: int = int(getattr(chat, "turn", 0)) + 1
        self._lock = threading.Lock()
        self._tokens: list[str] = []
        self._text_dirty = False
        self._events_dirty = False
        self._last_text = 0.0
        self._last_events = 0.0
        self.events: list[TraceEvent] = []
        self.handle: DisplayHandle | None = None
        self._live: dict[str, Any] | None = None
        """The last bundle built while the turn runs (compact), reused between event updates."""

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
            typed = event.typed() if event.event_type == "llm_call" else None
            message = typed.metadata.message if isinstance(typed, LlmCall) else None
            if message is not None and message.tool_calls:
                self._tokens.clear()  # a tool-loop step ended: its text is not the final reply

    # ---- main thread ------------------------------------------------------------------------
    def start(self) -> None:
        self.handle = display(self._with_widget(self._running_output("", "waiting for the model…")), raw=True,
                              display_id=True)

    def partial_text(self) -> str:
        """The reply so far, masked like everything recorded (a key the model echoes is not shown)."""
        with self._lock:
            text = "".join(self._tokens)
        return mask_secrets(text) if text else text

    def full_bundle(self) -> dict[str, Any]:
        """Everything about the turn (prompts included), ``trace_path`` relative to the notebook."""
        bundle = relative_bundle(self.chat.turn_bundle(self.turn), self.location)
        bundle["session"] = session_usage(self.chat)
        return bundle

    def bundle(self) -> dict[str, Any]:
        """The notebook's copy: the compact bundle (see :func:`compact_bundle`)."""
        return compact_bundle(self.full_bundle())

    def _running_output(self, partial: str, note: str) -> dict[str, Any]:
        data: dict[str, Any] = {
            "text/html": render.streaming_html(partial, note=note),
            "text/plain": printable(partial or note),
        }
        # Always our MIME type, from the first token on: in JupyterLab the extension renders the reply
        # with JupyterLab's own Markdown renderer while it streams (docs/TURN_BUNDLE.md).
        live = dict(self._live) if self._live is not None else self._placeholder()
        live["status"] = "running"
        live["reply"] = partial
        live["progress"] = note
        return {MIME_TYPE: live, **data}

    def _placeholder(self) -> dict[str, Any]:
        """The bundle before the turn's first event: who and where, nothing decided yet."""
        trace = getattr(self.chat, "trace_path", None)
        try:
            where = self.location.relative(str(trace)) if trace else None
        except Exception:  # a path the location cannot express: the final bundle has it
            where = None
        return {"version": 1, "run_id": getattr(self.chat, "run_id", None),
                "agent": getattr(self.chat, "agent", None) or "main",
                "turn": self.turn, "trace_path": where, "model": None, "input": None, "steps": [], "compact": True}

    def _refresh_live(self) -> None:
        try:
            self._live = self.bundle()
        except Exception:  # the turn may not have written its first event yet
            self._live = None

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
            tools = [t.metadata.name for e in self.events
                     if e.event_type == "tool_call" and isinstance(t := e.typed(), ToolCallEvent)]
        if events_due:
            self._refresh_live()
        if self.handle is None or not (text_due or events_due):
            return
        partial = self.partial_text()
        if partial:
            note = "generating…" if not tools else f"generating… (after {len(tools)} tool call(s))"
        else:
            note = f"running tool {tools[-1]}…" if tools else "building the context…"
        self.handle.update(self._with_widget(self._running_output(partial, note)), raw=True)

    def finish(self) -> dict[str, Any]:
        """Replace the streaming view with the turn's compact MIME bundle; returns the full bundle."""
        full = self.full_bundle()
        data, metadata = bundle_output(compact_bundle(full))
        data = self._with_widget(data)
        if self.handle is not None:
            self.handle.update(data, raw=True, metadata=metadata)
        else:
            display(data, raw=True, metadata=metadata)
        return full

    def _with_widget(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` with the turn widget's view added (its ``bundle`` set to ``data``'s), when there is a link."""
        if self.link is None:
            return data
        from .widget import WIDGET_VIEW, turn_widget

        try:
            if self.widget is None:
                self.widget = turn_widget(data[MIME_TYPE], self.link)
            else:
                self.widget.bundle = data[MIME_TYPE]
        except Exception:  # no widget then: the MIME bundle and the HTML still show the turn
            self.link = None
            return data
        return {WIDGET_VIEW: self.widget.view(), **data}
