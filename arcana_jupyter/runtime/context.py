"""``SessionContext``: what a capability or an intercepted tool's handler may read and do.

A capability's hooks and a runtime tool's handler get this, not the session: the run's identity
(``run_id``, ``agent``), the turn and the history so far, the settings, the model's provider and
token counter, the pins, the tools the call being built offers, the trace (``emit`` and the file),
the way to ask the user, and the keys to keep out of what is recorded. Everything else of
:class:`~arcana_jupyter.runtime.session.ChatSession` — the builder, the tool loop, the other
capabilities — stays the loop's. Values that change (``turn``, ``history``, ``offered_tools``)
are read live: a context is made once per session and handed to every hook.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..messages import Message
from ..primitives.pin import PinState
from ..providers.base import Provider
from ..schema.events import Record
from ..tokens import TokenCounter
from ..trace.events import TraceEvent
from .config import RuntimeConfig

if TYPE_CHECKING:
    from ..context.embeddings import EmbeddingStore
    from .session import ChatSession

AskUser = Callable[[str], str | Awaitable[str]]


class SessionContext:
    """One session as its capabilities and runtime tools see it (read live)."""

    __slots__ = ("_session",)

    def __init__(self, session: ChatSession) -> None:
        self._session = session

    @property
    def run_id(self) -> str:
        return self._session.run_id

    @property
    def agent(self) -> str:
        return self._session.agent

    @property
    def turn(self) -> int:
        """The turn in progress (0 before the first)."""
        return self._session.turn

    @property
    def embeddings(self) -> EmbeddingStore | None:
        """The session's sentence vectors (its relevance model, kept beside the trace), or ``None`` when
        relevance is lexical."""
        return self._session.builder.embeddings

    @property
    def history(self) -> Sequence[Message]:
        """The transcript so far (read-only: the loop appends to it)."""
        return tuple(self._session.history)

    def turn_messages(self, turn: int | None = None) -> list[Message]:
        """The messages of ``turn`` (default: the one in progress).

        The transcript is in turn order (the loop appends each turn's messages; a resumed session reads
        them back in order), so this scans back from its end to the first message of an earlier turn:
        the turn in progress costs its own messages, not the history (called at every turn's end)."""
        t = self.turn if turn is None else turn
        history = self._session.history
        found: list[Message] = []
        for k in range(len(history) - 1, -1, -1):
            m = history[k]
            mt = m.turn
            if mt == t:
                found.append(m)
            elif mt is not None and mt < t:
                break
        found.reverse()
        return found

    @property
    def config(self) -> RuntimeConfig:
        return self._session.config

    @property
    def provider(self) -> Provider:
        return self._session.provider

    @property
    def provider_model(self) -> str:
        return self._session.provider_model

    @property
    def counter(self) -> TokenCounter:
        """Counts in the tokens of the model that gets the prompt."""
        return self._session.counter

    @property
    def available_tokens(self) -> int:
        """The prompt budget of the call being built (the window less the reply's reserve, calibrated):
        what a section sized to a share of the budget is sized against."""
        return int(self._session.builder.budget.available)

    @property
    def pins(self) -> PinState:
        return self._session.pins

    @property
    def offered_tools(self) -> frozenset[str]:
        """The tool names of the call being built (a section may name only these)."""
        return self._session.offered_tools

    @property
    def trace_path(self) -> Path | None:
        return self._session.trace_path

    @property
    def ask_user(self) -> AskUser | None:
        """How ``ask_user`` questions reach a person, if one can answer."""
        return self._session.ask_user_callback

    def emit(self, metadata: Record, *, turn: int | None = -1) -> TraceEvent:
        """Record an event in the session's trace — ``metadata`` is its type's metadata model
        (``ErrorMetadata.build(...)``) — ``turn=-1``: the turn in progress; ``None``: none."""
        return self._session.emit(metadata, turn=turn)

    def emit_json(self, event_type: str, metadata: dict[str, Any], *,  # JSON edge: engine and memory store events
                  turn: int | None = -1) -> TraceEvent:
        """:meth:`emit` for metadata already in the trace's form: the adaptive engine's and the memory
        store's events, which their packages hand over as the JSON objects they write."""
        return self._session.emit_json(event_type, metadata, turn=turn)

    def secrets(self) -> list[str]:
        """Every key the runtime knows: masked wherever text is recorded."""
        return self._session.runtime.secrets()
