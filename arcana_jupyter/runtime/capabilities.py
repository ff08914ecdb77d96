"""Capabilities: the one typed way an optional part of cognition attaches to a chat session.

The turn loop (session.py) knows :class:`Capability` and nothing else: not the adaptive engine,
not the memory store, not OpenTelemetry. A capability offers tools (and says which it withheld from
a model too small to use them), adds prompt sections, may stand in for the turns that did not fit
the prompt verbatim (:meth:`Capability.overflow_sections`), hears the turn's start, each user
tool's result and the turn's end, sees every event the session emits, and is closed (async) when the session ends.

**A base class with no-op defaults, not a Protocol.** Every capability uses only a few of the
hooks (the primitives only offer tools, OpenTelemetry only listens to events); with no-op defaults
an implementation overrides what it uses and the session calls every hook on every capability
without ``hasattr`` checks. Subclassing also makes "this is a capability" explicit, which a
structural Protocol would not; :attr:`Capability.name` is the one thing each must say.

**Hooks get a context, not the session.** Every hook that runs during the session gets the
:class:`~arcana_jupyter.runtime.context.SessionContext`: what a capability may read (run id,
agent, turn, history, config, provider, counter, pins, the tools offered) and do (``emit``).

**Per session, by factory, in a fixed order.** A :data:`CapabilityFactory` gets the
:class:`~arcana_jupyter.runtime.context.SessionContext` and returns a capability or ``None`` (off
in this session's config: pool members may differ). This module knows no implementation: the
runtime (runtime/runtime.py, ``DEFAULT_CAPABILITIES``) picks the defaults — OpenTelemetry,
primitives, adaptive context, memory — and hands them to each session, which keeps that order
everywhere:

- start (the factories run in order): OpenTelemetry first, so it sees the events the others
  record while they start (the memory digest's read);
- tools offered, tools withheld, prompt sections, before-turn, tool-result and after-turn: in order
  (the model sees ``ask_user``, then ``recall``/``pin``/``unpin``, then the adaptive tools, then the
  memory tools);
- close: in reverse order, so the memory learnings run before OpenTelemetry flushes its spans.

``Runtime.add_capability(factory)`` appends a factory (it runs last at start, first at close).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..context.bands import OverflowCover
from ..context.sections import ContextSection
from ..messages import ToolCall
from ..trace.events import TraceEvent
from .context import SessionContext
from .intercept import InterceptedTool

if TYPE_CHECKING:
    from .session import ChatReply


class Capability:
    """One optional part of a session's cognition; override the hooks it uses (all default to no-ops)."""

    name: str = "capability"
    """Short and unique within a session: ``otel``, ``primitives``, ``adaptive``, ``memory``."""

    def tools(self) -> list[InterceptedTool]:
        """The tools this capability offers the model (intercepted: the runtime runs them)."""
        return []

    def withheld(self) -> list[str]:
        """Names of the tools it would offer but withholds from this model (recorded in ``run_start``)."""
        return []

    def sections(self, ctx: SessionContext, turn: int) -> list[ContextSection]:
        """Prompt sections for the call being built in ``turn``."""
        return []

    def overflow_sections(self, ctx: SessionContext, turn: int, turns: Sequence[int],
                          max_tokens: int) -> OverflowCover | None:
        """Sections that stand in for ``turns``: earlier turns the builder could not keep verbatim in
        the call being built in ``turn`` (the adaptive engine's checkpoint and turn digests), in at
        most ``max_tokens`` tokens (a share of the budget, and less than the turns they replace).

        Asked only when some turn did not fit; the builder then builds again with them, so they
        take the place of what no longer fits, never of what does. The first capability that
        returns a cover with sections decides (the adaptive engine)."""
        return None

    def before_turn(self, ctx: SessionContext, text: str) -> None:
        """The user's text, after ``user_message`` is recorded and before the first call is built.

        An exception here ends the turn before its first call (as it always has)."""

    def tool_result(self, ctx: SessionContext, call: ToolCall, content: str) -> str | None:
        """A user tool's result before it is bounded and recorded; return replacement content (a large
        output becomes an artifact card) or ``None`` to keep it."""
        return None

    def after_turn(self, ctx: SessionContext, reply: ChatReply) -> None:
        """The turn's reply (also of a failed or cancelled turn), before ``turn_end``; errors are recorded."""

    def on_event(self, ctx: SessionContext, event: TraceEvent) -> None:
        """Every event the session emits, as it is written (before the session's subscribers)."""

    def run_end_fields(self) -> dict[str, Any]:  # JSON edge: run_end keys
        """Fields this capability adds to ``run_end`` (read after :meth:`close`): fields of
        :class:`~arcana_jupyter.schema.events.RunEndMetadata`, through which ``run_end`` is built."""
        return {}

    async def close(self, ctx: SessionContext) -> None:
        """The session is ending (before ``run_end``); errors are recorded, the others still close."""


CapabilityFactory = Callable[[SessionContext], Capability | None]
"""Makes a session's capability, or ``None`` when the session's config leaves it off."""
