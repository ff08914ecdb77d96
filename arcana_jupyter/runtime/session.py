"""ChatSession: one agent's conversation — the turn loop, and the session people use.

A turn: record the user's message; build the working set (context builder, with pins, adaptive
sections and the memory digest); call the provider (streamed); run any tool calls (user tools or
intercepted ones) and call again, until the model answers without tools or ``max_tool_steps`` is
reached; record the turn's end. Every step is a trace event, emitted as it happens and passed to
subscribers (the notebook's live inspector).

The steps' parts live beside it, each a module of its own: the builder's setup and the overflow
cover's room (working_set.py), shaping a prompt for the model (prompt_shaper.py), recording a call's
decision and prompt (call_record.py), running a step's tool calls (tool_calls.py), the summariser
(summarizer.py), and what a person does outside the model (user_actions.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ..context.bands import OverflowCover, annotate_overflow, lost_turns
from ..context.decisions import ContextDecision, TokenBudget, decision_record, recorded_scores
from ..context.embeddings import EmbeddingsUnavailable, embedder_from_setting
from ..context.rebuild import EMBEDDINGS_FOLDER
from ..context.result import BuildResult
from ..context.sections import ContextSection, PinBlock
from ..exceptions import ArcanaError, ConfigError, ContextLengthError, ProviderError, TemplateRefusedError
from ..messages import Message, ToolSpec, digest, interrupted_reply
from ..primitives.pin import PinState
from ..providers.base import LLMRequest, LLMResponse, Provider, Usage
from ..schema.events import (
    ErrorMetadata,
    MessageRecord,
    Record,
    RunEndMetadata,
    ToolLoopStop,
    TurnEndMetadata,
    TurnStartMetadata,
    UserMessageMetadata,
    event_type_of,
    llm_call_metadata,
)
from ..tokens import TokenCounter
from ..trace.decision_delta import ChainEncoder
from ..trace.events import TraceEvent
from ..trace.prompt_sent import PromptSentEncoder
from ..trace.writer import TraceWriter
from . import gc_policy, user_actions
from .builtin_tools import no_progress_steps
from .calibration import Calibration
from .call_record import CallRecorder, recorded_decision
from .capabilities import Capability, CapabilityFactory
from .config import RuntimeConfig
from .context import SessionContext
from .guard import ToolLoopGuard, readable_reply
from .intercept import AskUser, InterceptedTool
from .prompt_shaper import PromptShaper
from .summarizer import summarize
from .tool_budget import ToolOffer
from .tool_budget import offer as offer_tools
from .tool_calls import ToolResult as ToolResult  # re-exported: where the steps' types were
from .tool_calls import run_tool_calls
from .tools import ToolRegistry
from .user_actions import RecordedActions
from .working_set import cover_room, session_builder

if TYPE_CHECKING:
    from ..adaptive.engine import AdaptiveEngine
    from ..memory.session import MemorySession
    from ..trace.otel import SpanMapper
    from .runtime import Runtime

log = logging.getLogger("arcana_jupyter")

INEXACT_SLACK = 1.03
"""Room kept on top of the observed count ratio when the counter is not the model's own."""

TOOLS_MAX_SHARE = 0.5
"""Tools whose specs would take more than this share of the prompt budget are not offered."""
TokenCallback = Callable[[str], None]
EventCallback = Callable[[TraceEvent], None]


class BuiltPrompt(NamedTuple):
    """One call's prompt as :meth:`ChatSession._build` made and recorded it."""

    build: BuildResult
    """The builder's result, shaped for the model (its messages are what is sent)."""
    decision: ContextDecision
    digest: str
    """The request digest (``context_decision.request_digest``)."""
    decision_event: TraceEvent
    """The ``context_decision`` written for it: the parent of the call's events."""


@dataclass
class TurnInProgress:
    """What the steps of one turn share: the turn, the reply being filled in, where streamed text goes."""

    turn: int
    reply: ChatReply
    on_token: TokenCallback | None = None
    partial: list[str] = field(default_factory=list)
    """The text streamed so far by the call in progress (what a cancelled or failed call received)."""


@dataclass(frozen=True)
class ProviderCall:
    """What :meth:`ChatSession._call` sends (a built prompt, the tools offered) and for which step."""

    turn: TurnInProgress
    step: int
    prompt: BuiltPrompt
    tools: list[ToolSpec]


@dataclass
class ChatReply:
    """The outcome of one :meth:`ChatSession.send`."""

    text: str
    turn: int
    run_id: str
    agent: str
    status: str = "ok"
    """``ok``, ``error`` or ``cancelled``."""
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    steps: int = 0
    decision: ContextDecision | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # JSON edge: as recorded
    primitives: list[dict[str, Any]] = field(default_factory=list)  # JSON edge: as recorded
    error: ArcanaError | None = None

    def __str__(self) -> str:
        return self.text


class ChatSession:
    """One conversation with one model, as one agent of a run. Create it with ``Runtime.chat()``."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        agent: str,
        run_id: str,
        writer: TraceWriter,
        config: RuntimeConfig,
        provider: Provider,
        provider_model: str,
        model_string: str,
        tools: ToolRegistry,
        intercepted: Sequence[InterceptedTool] = (),
        ask_user: AskUser | None = None,
        withheld: Sequence[str] = (),
    ) -> None:
        self.runtime = runtime
        self.agent = agent
        self.run_id = run_id
        self.writer = writer
        self.config = config
        self.provider = provider
        self.provider_model = provider_model
        self.model_string = model_string
        self.tools = tools
        self._own_withheld = list(withheld)
        self._intercepted: dict[str, InterceptedTool] = {t.name: t for t in intercepted}
        self.capabilities: list[Capability] = []
        """The optional parts of cognition, in the runtime's order (runtime/capabilities.py)."""
        self.context = SessionContext(self)
        """What the capabilities' hooks and the intercepted tools' handlers see of this session."""
        self.ask_user_callback = ask_user
        self.counter: TokenCounter = provider.token_counter(provider_model)
        """Counts in the tokens of the model that gets the prompt (see tokens.py)."""
        self.calibration = Calibration(provider.initial_margin(self.counter),
                                       slack=1.0 if self.counter.exact else INEXACT_SLACK)
        self.budget = TokenBudget(total_window=config.total_window, response_reserve=config.response_reserve)
        """The window and reserve in the model's tokens; the builder gets them calibrated."""
        try:
            embedder, note = embedder_from_setting(config.embeddings)
        except EmbeddingsUnavailable as exc:
            raise ConfigError(str(exc)) from None
        self._embeddings_note: str | None = note
        """Which relevance the session uses and why: added to its first decision's notes."""
        embedding_cache = writer.path.parent / EMBEDDINGS_FOLDER if writer.path is not None else None
        self.builder = session_builder(config, self.calibration.budget(config.total_window, config.response_reserve),
                                       self.counter, self._summarize, embedder, embedding_cache)
        self.pins = PinState(self.counter, config.total_window, config.pin_budget_fraction)
        self.history: list[Message] = [Message(role="system", content=config.system_prompt)]
        self.turn = 0
        self.usage = Usage()
        self.cost_usd = 0.0
        self._subscribers: list[EventCallback] = []
        self._previous_build: BuildResult | None = None
        self.shaper = PromptShaper(provider, provider_model, self.counter, config.prompt_shape)
        """Shapes each prompt for the model and reports its prefix reuse (runtime/prompt_shaper.py)."""
        redactor = getattr(writer, "redactor", None)
        self.recorder = CallRecorder(
            ChainEncoder(), PromptSentEncoder(redact=redactor.redact_text if redactor is not None else None))
        """Writes each call's decision and prompt (runtime/call_record.py)."""
        self._turn_events: dict[int, list[TraceEvent]] = {}
        self.sent_messages: dict[tuple[int, int], list[Message]] = {}
        """The prompts of recent steps, by (turn, step), for the inspector's message text."""
        self._recorded_actions = RecordedActions()
        """A replay's recorded user actions no cell re-runs (runtime/user_actions.py)."""
        self.offered_tools: frozenset[str] = frozenset()
        """The tool names of the call being built (a capability's sections may name only these)."""
        self._tool_offer: tuple[tuple[str, ...], ToolOffer] | None = None
        self._tool_note_said = False
        self._lock = asyncio.Lock()
        self.closed = False
        self.owns_run = True
        """False for pool members: the pool writes ``run_end``."""

    # ---- capabilities ---------------------------------------------------------------------
    def attach(self, factories: Sequence[CapabilityFactory]) -> None:
        """Make and attach the capabilities ``factories`` give (``None``: off for this session), in order."""
        for factory in factories:
            capability = factory(self.context)
            if capability is not None:  # a clashing tool name is a ConfigError before the next one starts
                self.add_capability(capability)

    def add_capability(self, capability: Capability) -> None:
        """Attach ``capability`` (last): its tools join the offered ones, its hooks run from now on.

        The runtime attaches its own at session creation (``Runtime.add_capability`` adds a factory);
        a tool name that clashes with a user tool is a :class:`ConfigError` (:meth:`check_tool_names`)."""
        self.capabilities.append(capability)
        for tool in capability.tools():
            self._intercepted[tool.name] = tool
        self.check_tool_names()

    @property
    def intercepted(self) -> Mapping[str, InterceptedTool]:
        """Every intercepted tool offered, by name: the runtime's own (``ask_user``), then the
        capabilities' tools in their order. Read-only: tools come and go with capabilities."""
        return MappingProxyType(self._intercepted)

    def capability(self, name: str) -> Capability | None:
        """The attached capability called ``name`` (``adaptive``, ``memory``, ``otel``, ``primitives``)."""
        return next((c for c in self.capabilities if c.name == name), None)

    def _provided(self, name: str, attribute: str) -> Any:
        """``attribute`` of the capability called ``name`` (the loop knows no concrete capability)."""
        found = self.capability(name)
        return getattr(found, attribute, None) if found is not None else None

    @property
    def engine(self) -> AdaptiveEngine | None:
        """The adaptive-context engine, or ``None`` in classic mode."""
        return cast("AdaptiveEngine | None", self._provided("adaptive", "engine"))

    @property
    def engine_note(self) -> str | None:
        """Why classic mode runs, when it does."""
        return cast("str | None", self._provided("adaptive", "note"))

    @property
    def memory(self) -> MemorySession | None:
        """The memory session (memory/session.py), or ``None`` when memory is off."""
        return cast("MemorySession | None", self._provided("memory", "memory"))

    @property
    def otel(self) -> SpanMapper | None:
        """The OpenTelemetry span mapper (trace/otel.py) when ``config.otel`` is on."""
        return cast("SpanMapper | None", self._provided("otel", "mapper"))

    @property
    def withheld_tools(self) -> list[str]:
        """Tools enabled in the config but not offered to this model (too small to use them)."""
        return [*self._own_withheld, *(name for c in self.capabilities for name in c.withheld())]

    @property
    def run_end_metadata(self) -> dict[str, Any]:  # JSON edge: run_end keys
        """Extra ``run_end`` fields the capabilities add (``otel_export``)."""
        fields: dict[str, Any] = {}  # JSON edge: run_end keys
        for c in self.capabilities:
            fields.update(c.run_end_fields())
        return fields

    # ---- events ---------------------------------------------------------------------------
    def subscribe(self, callback: EventCallback) -> Callable[[], None]:
        """Call ``callback(event)`` for every event this session emits; returns an unsubscribe function."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def emit(self, metadata: Record, *, parent_id: str | None = None, turn: int | None = -1) -> TraceEvent:
        """Write an event — ``metadata`` is its type's metadata model, which says the event type — and
        pass it to subscribers. ``turn`` -1: the current turn."""
        return self.emit_json(event_type_of(metadata), metadata.wire(), parent_id=parent_id, turn=turn)

    def emit_json(self, event_type: str, metadata: dict[str, Any], *,  # JSON edge: an encoder's or engine's output
                  parent_id: str | None = None, turn: int | None = -1,
                  live_metadata: Callable[[dict[str, Any]], dict[str, Any]] | None = None,  # JSON edge: as written
                  ) -> TraceEvent:
        """:meth:`emit` for metadata already in the trace's form (the chained decision, the adaptive
        engine's and the memory store's events).

        ``live_metadata(written metadata)`` gives the metadata subscribers and :meth:`turn_events` see,
        where the trace holds a compact form (a chained decision, see trace/decision_delta.py)."""
        t = self.turn if turn == -1 else turn
        event = self.writer.emit_json(event_type, metadata, turn=t, agent=self.agent, parent_id=parent_id)
        if live_metadata is not None:
            event = event.model_copy(update={"metadata": live_metadata(event.metadata)})
        if t is not None:
            events = self._turn_events.setdefault(t, [])
            events.append(event)
            if len(self._turn_events) > 64:  # the bundle of old turns is rebuilt from the trace
                self._turn_events.pop(min(self._turn_events))
        for cap in list(self.capabilities):
            try:
                cap.on_event(self.context, event)
            except Exception:  # a broken exporter must not break the conversation
                log.exception("arcana: the %s capability failed on an event", cap.name)
        for cb in list(self._subscribers):
            try:
                cb(event)
            except Exception:  # a broken display must not break the conversation
                log.exception("arcana: an event subscriber failed")
        return event

    @property
    def trace_path(self) -> Path | None:
        return self.writer.path

    def turn_events(self, turn: int) -> list[TraceEvent]:
        events = self._turn_events.get(turn)
        if events is not None:
            return list(events)
        if self.writer.path is None:
            return []
        from ..trace.reader import TraceReader

        return TraceReader(self.writer.path.parent).events(self.run_id, turn=turn, agent=self.agent)

    # ---- tools ----------------------------------------------------------------------------
    def add_tool(self, tool: Any) -> None:
        """Register a Python function (or :class:`Tool`) for this session only.

        Raises :class:`ConfigError` when its name is taken by one of the runtime's tools."""
        from .tools import as_tool

        t = as_tool(tool)
        if t.name in self.intercepted:
            raise ConfigError(self._clash_message([t.name]))
        self.tools.add(t)

    def check_tool_names(self) -> None:
        """Every tool the model is offered has its own name: a user function named like an enabled
        primitive or another runtime tool (``pin``, ``recall``, ``remember``...) is refused with a
        :class:`ConfigError` naming both, instead of sending the name twice and never running it."""
        clash = sorted(set(self.tools.names()) & set(self.intercepted))
        if clash:
            raise ConfigError(self._clash_message(clash))

    def _clash_message(self, names: list[str]) -> str:
        parts = []
        for name in names:
            tool = self.intercepted[name]
            what = (f"the cognitive primitive {tool.primitive!r}" if tool.primitive
                    else f"the runtime's {tool.group} tool")
            parts.append(f"your tool {name!r} and {what} {name!r}")
        return (f"two tools with the same name: {'; '.join(parts)}. The model could only ever call one of them. "
                "Rename your function (e.g. Tool(fn, name='my_" + names[0] + "')) or leave the runtime's tool out "
                "(cognitive_primitives / memory / context_engine settings).")

    def tool_specs(self) -> list[ToolSpec]:
        """The specs of every tool offered: the user's, then the runtime's own within their share of
        the budget (runtime/tool_budget.py, chosen once per set of tools)."""
        self.check_tool_names()
        return [*self.tools.specs(), *self.tool_offer().specs]

    def tool_offer(self) -> ToolOffer:
        """Which of the runtime's own tools are offered, in which form, and which are held back."""
        specs = [t.spec for t in self.intercepted.values()]
        key = tuple(s.name for s in specs)
        if self._tool_offer is None or self._tool_offer[0] != key:
            available = self.calibration.budget(self.config.total_window, self.config.response_reserve).available
            cfg = self.config
            forced = {"primitives": cfg.primitive_tools, "adaptive": cfg.engine_tools, "memory": cfg.memory_tools,
                      "runtime": cfg.user_tools}
            required = frozenset(t.name for t in self.intercepted.values() if forced.get(t.group) == "on")
            self._tool_offer = (key, offer_tools(specs, available, self.counter, required=required))
        return self._tool_offer[1]

    @property
    def cache_key(self) -> str:
        """This conversation's id for a provider's prompt cache (``LLMRequest.cache_key``): the same
        for every call of the session, never the run id itself."""
        return "arcana-" + digest(f"{self.run_id}/{self.agent}", 16)

    @property
    def held_back_tools(self) -> list[str]:
        """Runtime tools not offered because their specs would take too much of the prompt budget."""
        return list(self.tool_offer().held_back)

    def _sections(self, turn: int) -> list[ContextSection]:
        return [section for c in self.capabilities for section in c.sections(self.context, turn)]

    def _overflow_capable(self) -> bool:
        """Whether a capability stands in for turns that do not fit (engine mode)."""
        return self.engine is not None

    def _overflow_cover(self, turn: int, turns: Sequence[int], decision: ContextDecision,
                        available: int) -> OverflowCover | None:
        """The first capability's cover for ``turns`` (see :meth:`_build`), in the room
        :func:`~.working_set.cover_room` gives it."""
        cap = cover_room(self.builder.drop_policy, turns, decision, available)
        wanted = list(turns)
        while wanted:
            for c in self.capabilities:
                cover = c.overflow_sections(self.context, turn, wanted, cap)
                if cover is not None and cover.sections:
                    return cover
            # even the smallest cover of them all is larger than its room: cover the most recent half
            # (the older ones are still in the trace, for recall and the relevant block)
            wanted = wanted[len(wanted) // 2:] if len(wanted) > 1 else []
        return None

    def _pin_blocks(self) -> list[PinBlock]:
        return [
            PinBlock(pin_id=p.pin_id, content=p.content, label=p.label, until_turn=p.until_turn,
                     created_turn=p.created_turn)
            for p in self.pins.active(self.turn)
        ]

    # ---- the turn -------------------------------------------------------------------------
    async def send(
        self,
        text: str,
        *,
        on_token: TokenCallback | None = None,
        raise_errors: bool = True,
    ) -> ChatReply:
        """Send one user turn and return the model's answer (after any tool calls)."""
        if self.closed:
            raise ArcanaError("this chat is closed; open a new one with runtime.chat()")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("send() needs a non-empty message")
        async with self._lock:
            try:
                return await self._send(text, on_token, raise_errors)
            finally:
                gc_policy.after_turn(self.turn)  # a long session's heap is frozen (runtime/gc_policy.py)

    async def _send(self, text: str, on_token: TokenCallback | None, raise_errors: bool) -> ChatReply:
        self._recorded_actions.apply(self, ("turn", self.turn + 1))
        self.turn += 1
        turn = self.turn
        started = time.perf_counter()
        reply = ChatReply(text="", turn=turn, run_id=self.run_id, agent=self.agent)
        self.emit(TurnStartMetadata.build(input_tokens=self.counter.count_text(text)))
        user = Message(role="user", content=text, turn=turn)
        self.history.append(user)
        self.emit(UserMessageMetadata.build(message=user.record(),
                                            history_index=len(self.history) - 1))
        for cap in self.capabilities:
            cap.before_turn(self.context, text)
        progress = TurnInProgress(turn, reply, on_token)
        partial = progress.partial
        status = "ok"
        guard = ToolLoopGuard(
            self.config.max_tool_steps, self.config.max_tool_seconds,
            no_progress_steps=no_progress_steps(self.config.tool_no_progress_steps, self.provider,
                                                self.provider_model),
            rerun=frozenset(name for name, tool in self.intercepted.items() if tool.repeatable),
        )
        try:
            step = 0
            while True:
                offer = guard.reason is None
                response = await self._step(progress, step, tool_loop=None if offer else guard.record())
                reply.steps = step + 1
                partial.clear()
                if not response.message.tool_calls or not offer:
                    # never raw tool output as the answer (a small model after a stopped loop):
                    # a plain note instead; the transcript keeps the model's message as it was
                    reply.text = readable_reply(response.message.content, reply.tool_calls,
                                                guard.detail if guard.reason else None)
                    break
                outcomes = await run_tool_calls(self, progress, step, response.message.tool_calls, guard)
                reason = guard.after_step(step, response.message.tool_calls, outcomes)
                if reason is not None:
                    self.emit(ErrorMetadata.build(type=reason, where="runtime", recoverable=True,
                                                  message=f"{guard.detail}: asking once more, without tools"))
                step += 1
        except (asyncio.CancelledError, KeyboardInterrupt):
            status = "cancelled"
            received = "".join(partial)
            closing = self._close_interrupted(turn, received)
            if received:
                # no final usage arrived: count what was received, so the turn (and the session) say
                # how many reply tokens it cost instead of 0
                got = Usage(output_tokens=self.counter.count_text(received))
                reply.usage = reply.usage + got
                self.usage = self.usage + got
            reply.text = received
            # the partial reply is recorded in turn_end.reply (received_chars says how much), and with
            # the note in turn_end.message when it closes the turn in the history
            self.emit(ErrorMetadata.build(type="cancelled", where="runtime", recoverable=True,
                                          message="the turn was cancelled", received_chars=len(received)))
            await self._turn_end_hooks(reply)
            self._end_turn(reply, status, started, closing)
            raise
        except ProviderError as exc:
            status = "error"
            reply.error = exc
            received = "".join(partial)
            reply.text = received  # kept for the caller, and recorded once: in turn_end.reply
            self.emit(ErrorMetadata.build(type=type(exc).__name__, where="provider", recoverable=True,
                                          message=str(exc), status=exc.status, received_chars=len(received)))
        except ArcanaError as exc:
            status = "error"
            reply.error = exc
            self.emit(ErrorMetadata.build(type=type(exc).__name__, where="runtime", recoverable=True,
                                          message=str(exc)))
        except Exception as exc:  # a bug: record it, close the turn, and let it surface
            self.emit(ErrorMetadata.build(type=type(exc).__name__, where="runtime", recoverable=False,
                                          message=str(exc)))
            await self._turn_end_hooks(reply)
            self._end_turn(reply, "error", started)
            raise
        await self._turn_end_hooks(reply)
        self._end_turn(reply, status, started)
        if reply.error is not None and raise_errors:
            raise reply.error
        return reply

    async def _turn_end_hooks(self, reply: ChatReply) -> None:
        """Adaptive reconciliation, memory bookkeeping: run even for failed turns, never fatal."""
        for cap in self.capabilities:
            try:
                cap.after_turn(self.context, reply)
            except Exception as exc:
                log.exception("arcana: the %s capability failed at turn end", cap.name)
                self.emit(ErrorMetadata.build(type=type(exc).__name__, where="runtime", recoverable=True,
                                              message=f"at turn end: {exc}"))

    def _close_interrupted(self, turn: int, received: str) -> Message | None:
        """A cancelled turn's last word in the history: the partial reply and a note that the user
        interrupted it (``None`` when the model had already answered in full). The next turn then
        answers its own input, not the interrupted question run together with it."""
        last = self.history[-1] if self.history else None
        if last is not None and last.role == "assistant" and not last.tool_calls and not received:
            return None
        closing = Message(role="assistant", content=interrupted_reply(received), turn=turn)
        self.history.append(closing)
        return closing

    def _end_turn(self, reply: ChatReply, status: str, started: float, closing: Message | None = None) -> None:
        reply.status = status
        reply.latency_ms = (time.perf_counter() - started) * 1000
        record = TurnEndMetadata.build(
            status=status, reply=reply.text, usage=reply.usage.model_dump(),
            cost_usd=reply.cost_usd, latency_ms=round(reply.latency_ms, 3), steps=reply.steps,
        )
        if closing is not None:  # recorded as a history message: resume, rebuild and replay see it
            record.message = MessageRecord.model_validate(closing.record())
            record.history_index = next(i for i in range(len(self.history) - 1, -1, -1) if self.history[i] is closing)
        self.emit(record)

    async def _step(self, progress: TurnInProgress, step: int, *, tool_loop: ToolLoopStop | None = None
                    ) -> LLMResponse:
        """One LLM call of the turn: build, record and send the prompt; tools are offered unless
        ``tool_loop`` says why the loop stopped. A prompt the provider refuses as too long is built
        again once, with the budget shrunk by what the provider counted."""
        tools = self.tool_specs() if tool_loop is None else []
        if tools and tool_loop is None:
            # tool specs larger than half of what the window leaves for the prompt would crowd out
            # the conversation (a small --window with the adaptive tools): this call goes without them
            available = self.calibration.budget(self.config.total_window, self.config.response_reserve).available
            spec_tokens = self.counter.count_tools(tools)
            if spec_tokens > available * TOOLS_MAX_SHARE:
                tool_loop = ToolLoopStop.build(
                    stopped=True, reason="tools_too_large",
                    detail=f"their specs take {spec_tokens} tokens of the {available} the window leaves "
                           f"for the prompt; a larger --window offers them")
                tools = []
        refused: ContextLengthError | None = None
        for attempt in range(2):
            prompt = await self._build(progress.turn, step, tools, tool_loop, refused)
            progress.reply.decision = prompt.decision
            try:
                return await self._call(ProviderCall(progress, step, prompt, tools))
            except ContextLengthError as exc:
                if attempt or progress.partial:
                    raise
                refused = exc
                counted = prompt.build.budget.used
                self.emit(ErrorMetadata.build(type=type(exc).__name__, where="provider", recoverable=True,
                                              message=str(exc), status=exc.status, received="",
                                              request_digest=prompt.digest, counted_input_tokens=counted,
                                              reported_input_tokens=exc.prompt_tokens),
                          parent_id=prompt.decision_event.event_id)
                needed = exc.prompt_tokens / counted if exc.prompt_tokens and counted else self.calibration.ratio * 1.25
                self.calibration.require(max(needed, self.calibration.ratio) * 1.02)
            except TemplateRefusedError as exc:  # the server's template refused the shape: reshape, once
                if attempt or progress.partial or self.shaper.reshape(exc) is None:
                    raise
                self.emit(ErrorMetadata.build(type=type(exc).__name__, where="provider", recoverable=True,
                                              message=str(exc), status=exc.status, received="",
                                              request_digest=prompt.digest),
                          parent_id=prompt.decision_event.event_id)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _build(
        self, turn: int, step: int, tools: list[ToolSpec], tool_loop: ToolLoopStop | None,
        refused: ContextLengthError | None,
    ) -> BuiltPrompt:
        """Build the working set of one call and record its decision.

        The builder always gets the whole history (both modes): turns stay verbatim while they fit.
        When some earlier turns do not, a capability (the adaptive engine) may stand in for exactly
        those turns (its checkpoint and turn digests, :meth:`Capability.overflow_sections`): the
        builder builds again with them, at most twice more (the cover takes room, so a few more
        turns may leave), and the decision marks each message of a covered turn with the section
        that carries it."""
        self._recorded_actions.apply(self, ("build", turn, step))
        self.offered_tools = frozenset(t.name for t in tools)
        budget = self.calibration.budget(self.config.total_window, self.config.response_reserve)
        if budget != self.builder.budget:
            self.builder.budget = budget
        if self.builder.summarizer is not None and self._overflow_capable():
            # engine mode: the adaptive cover stands in for what does not fit; no summariser calls
            # (``auto`` then truncates above twice the budget instead of summarising)
            self.builder.summarizer = None
        # every shape puts the quoted earlier messages in one context block after the input's text: the
        # builder counts each as its line there, not as a message of its own (count_message's framing)
        self.builder.quote_counting = "line" if (await self.shaper.rules()).shapes else "message"
        pins, sections = self._pin_blocks(), self._sections(turn)
        # engine mode: the first build only says which turns do not fit (a probe: the rows of what it
        # drops are templates, no relevance scored; the same turns lost, the same room for the cover)
        probe = self._overflow_capable()
        build = await self.builder.abuild(
            self.history, None, task=None, pins=pins, sections=sections, tools=tools,
            turn=turn, step=step, previous=self._previous_build, probe=probe,
        )
        cover: OverflowCover | None = None
        covered: list[int] = []
        for _ in range(2):
            lost = lost_turns(build.decision)
            wanted = sorted(set(covered) | set(lost))
            if not lost or wanted == covered:
                break
            found = self._overflow_cover(turn, wanted, build.decision, budget.available)
            if found is None:
                break
            cover, covered = found, wanted
            build = await self.builder.abuild(
                self.history, None, task=None, pins=pins, sections=[*sections, *cover.sections], tools=tools,
                turn=turn, step=step, previous=self._previous_build,
            )
        if build.probe:  # no cover after all: the build the probe stood for
            build = await self.builder.abuild(
                self.history, None, task=None, pins=pins, sections=sections, tools=tools,
                turn=turn, step=step, previous=self._previous_build,
            )
        if cover is not None:
            sections = [*sections, *cover.sections]
            marked = annotate_overflow(build.decision, cover.carries)
            if marked:
                names = " and ".join(cover.carries)
                build.decision.notes.append(
                    f"engine mode: {marked} earlier message(s) that did not fit verbatim reach the prompt through "
                    f"the {names} section(s) (turns {covered[0]}–{covered[-1]})")
        build, shaped = await self.shaper.shape(build, tools)
        shrink = 0
        for attempt in range(4):
            excess = build.budget.used - budget.available
            if not shaped.shape.shapes or excess <= 0:
                break
            # the shaped prompt counts more than the builder's estimate left room for: shrink by the
            # excess (and a margin growing with each try: a block that fills the budget fills it again)
            # and build again (recorded as the builder's window, so a rebuild does the same)
            shrink += excess + 4 * attempt
            self.builder.budget = TokenBudget(total_window=max(1, budget.total_window - shrink),
                                              response_reserve=budget.response_reserve)
            build = await self.builder.abuild(
                self.history, None, task=None, pins=pins, sections=sections, tools=tools,
                turn=turn, step=step, previous=self._previous_build,
            )
            build, shaped = await self.shaper.shape(build, tools)
        if shrink:
            build.decision.notes.append(
                f"the shaped prompt counted more than the builder's estimate: rebuilt with the window shrunk by "
                f"{shrink} token(s)")
        decision = build.decision
        self._previous_build = build
        self.shaper.report_prefix(build)
        self.sent_messages[(turn, step)] = shaped.original  # the builder's layout: what decision positions index
        while len(self.sent_messages) > 128:
            self.sent_messages.pop(next(iter(self.sent_messages)))
        decision.notes.extend(s.note for s in sections if s.note)  # what a section's producer says of it
        if self._embeddings_note is not None:  # said once, in the session's first decision
            decision.notes.append(self._embeddings_note)
            self._embeddings_note = None
        held = [n for n in self.tool_offer().held_back if n not in self.withheld_tools]
        if (tools or held) and not self._tool_note_said:  # ... and which runtime tools the budget held back
            self._tool_note_said = True  # (all of them, on a small window: then no tool is sent at all)
            note = self.tool_offer().note()
            if note is not None:
                decision.notes.append(note)
        if tool_loop is not None:
            decision.notes.append(f"tools withheld for this call: {tool_loop.reason} ({tool_loop.detail})")
        if refused is not None:
            decision.notes.append(
                f"the provider refused the previous prompt as too long ({refused.prompt_tokens or '?'} tokens by its "
                f"count); rebuilt with the budget shrunk by {self.calibration.ratio:.3f} and retried once")
        digest = build.digest(self.provider_model)
        # the JSON edge: the trace form (decision_record's) with one copy of each row: scores only where they decided an
        # outcome, the rest changed every call with no effect (recorded_scores copies the rows it changes)
        live = [row.__dict__ for row in decision.decisions]
        decision_md = decision_record(decision.model_copy(update={"decisions": []}))
        decision_md["decisions"] = [row.copy() if row is src else row
                                    for row, src in zip(recorded_scores(live), live, strict=True)]
        decision_event = self.recorder.record(
            self, turn=turn, step=step, build=build, decision_md=decision_md, digest=digest, pins=pins,
            sections=sections, cover=cover, tools=tools, tool_loop=tool_loop, shaped=shaped)
        return BuiltPrompt(build, recorded_decision(decision, decision_md["decisions"]), digest, decision_event)

    def _max_tokens(self) -> int | None:
        """The reply's cap: the reserve (what the window keeps free for it), or less if configured."""
        reserve = self.config.response_reserve
        if self.config.max_tokens is not None:
            return min(self.config.max_tokens, reserve) if reserve > 0 else self.config.max_tokens
        return reserve if reserve > 0 else None

    async def _call(self, call: ProviderCall) -> LLMResponse:
        """Send one built prompt, stream the answer, record the call (and what it says about counting)."""
        turn, step, build, tools = call.turn.turn, call.step, call.prompt.build, call.tools
        on_token, partial, reply = call.turn.on_token, call.turn.partial, call.turn.reply
        request = LLMRequest(
            model=self.provider_model, messages=build.messages, tools=tools, temperature=self.config.temperature,
            max_tokens=self._max_tokens(), seed=self.config.seed, cache_key=self.cache_key,
        )
        started = time.perf_counter()
        response: LLMResponse | None = None
        async for chunk in self.provider.stream(request):
            if chunk.text:
                partial.append(chunk.text)
                if on_token is not None:
                    on_token(chunk.text)
            if chunk.response is not None:
                response = chunk.response
        if response is None:
            from ..exceptions import StreamError

            raise StreamError("the provider's stream ended without a final response", provider=self.provider.name)
        latency = (time.perf_counter() - started) * 1000
        message = response.message.replace(turn=turn, role="assistant")
        self.history.append(message)
        from ..providers.pricing import cost

        call_cost = cost(self.provider_model, response.usage, self.config.prices)
        self.usage = self.usage + response.usage
        reply.usage = reply.usage + response.usage
        self.cost_usd += call_cost
        reply.cost_usd += call_cost
        counted = build.budget.used
        reported = response.prompt_tokens if response.prompt_tokens is not None else response.usage.input_tokens
        observed = self.calibration.observe(counted, reported)
        self.emit(llm_call_metadata(
            step=step,
            system=self.provider.name,
            request_model=self.provider_model,
            response_model=response.model or self.provider_model,
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            cached_input_tokens=response.usage.cached_input_tokens,
            finish_reasons=[response.finish_reason],
            latency_ms=round(latency, 3),
            request_digest=call.prompt.digest,
            streamed=True,
            message=message.record(),
            history_index=len(self.history) - 1,
            cost_usd=call_cost,
            counted_input_tokens=counted,
            reported_input_tokens=reported,
            count_ratio=observed,
            calibration=self.calibration.ratio,
        ), parent_id=call.prompt.decision_event.event_id)
        return response

    async def _summarize(self, messages: list[Message]) -> str:
        """The summariser ``llm_summarize`` calls (runtime/summarizer.py)."""
        return await summarize(self, messages)

    # ---- actions from outside the model (the inspector, magics, Python): runtime/user_actions.py -----
    def unpin(self, pin_id: str, *, via: str = "python",
              replayed: bool = False) -> dict[str, Any]:  # JSON edge: the structured result
        """Unpin ``pin_id`` as the user (the inspector's button, ``%arcana_unpin``, Python)."""
        return user_actions.unpin(self, pin_id, via, replayed)

    def pin(self, content: str, label: str | None = None, until_turn: int | None = None, *, via: str = "python",
            replayed: bool = False) -> dict[str, Any]:  # JSON edge: the structured result
        """Pin ``content`` as the user, through the same machinery as the model's ``pin`` tool."""
        return user_actions.pin(self, content, label, until_turn, via, replayed)

    def add_context(self, kind: str, text: str, detail: str | None = None, *, via: str = "python",
                    ) -> dict[str, Any]:  # JSON edge: the engine's answer
        """Add a constraint, task, decision or note to the adaptive context as the user
        (``%arcana_context add``): ``detail`` is its rationale (constraint, decision), description
        (task) or title (note). Raises :class:`ConfigError` in classic mode or for a bad kind or text."""
        return user_actions.add_context(self, kind, text, detail, via)

    def standing(self) -> list[Any]:
        """The live standing instructions, preferences and constraints (``StateObject`` with ``standing``
        set), oldest first; ``[]`` in classic mode."""
        return self.engine.standing() if self.engine is not None else []

    def add_standing(self, text: str, kind: str = "instruction", *, via: str = "python",
                     ) -> dict[str, Any]:  # JSON edge: the engine's answer
        """Add a standing instruction (``kind``: instruction, preference or constraint) as the user
        (``%arcana_standing add``): in every prompt from the next call on, in these words, until
        retracted. Raises :class:`ConfigError` in classic mode or for a bad kind or text."""
        return user_actions.add_standing(self, text, kind, via)

    def remember_standing(self, object_id: str, *, scope: str = "project", via: str = "python",
                          replayed: bool = False) -> dict[str, Any]:  # JSON edge: the structured result
        """Keep a standing instruction in long-term memory (``%arcana_standing remember``, the inspector's
        button): the next notebook starts with it in its digest. Needs memory on (``--memory``)."""
        return user_actions.remember_standing(self, object_id, scope, via, replayed)

    def hydrate(self, object_id: str, *, via: str = "python",
                replayed: bool = False) -> dict[str, Any]:  # JSON edge: the structured result
        """Bring an adaptive object back in full (a widget's action): through the adaptive capability."""
        return user_actions.adaptive_action(self, "hydrate", object_id, via, replayed)

    def retract(self, object_id: str, *, via: str = "python",
                replayed: bool = False) -> dict[str, Any]:  # JSON edge: the structured result
        """Take an adaptive object out of the prompt (a widget's action): through the adaptive capability."""
        return user_actions.adaptive_action(self, "retract", object_id, via, replayed)

    def remember(self, kind: str, content: str, *, scope: str = "project",
                 via: str = "python") -> dict[str, Any]:  # JSON edge: the structured result
        """Store a memory as the user (``%arcana_memory add``): the same code path as ``arcana memory add``;
        the next call's digest holds it. Raises :class:`~arcana_jupyter.exceptions.MemoryStoreError`
        (bad kind, empty text, a store that fails) or :class:`ConfigError` when memory is off."""
        return user_actions.remember(self, kind, content, scope, via)

    def forget_memory(self, entry_id: str, *,
                      via: str = "python") -> dict[str, Any]:  # JSON edge: the structured result
        """Forget (tombstone) a memory as the user (``%arcana_memory forget``); the next digest leaves it out."""
        return user_actions.forget_memory(self, entry_id, via)

    # ---- sync use (scripts, notebook magics) --------------------------------------------
    def send_sync(self, text: str, **kwargs: Any) -> ChatReply:
        """:meth:`send` for code without an event loop — or inside a running one (a notebook cell)."""
        return self.runtime.loop.run(self.send(text, **kwargs))

    def turn_bundle(self, turn: int | None = None) -> dict[str, Any]:  # JSON edge: the structured result
        """The ``application/vnd.arcana.turn+json`` object of ``turn`` (default: the latest)."""
        from .bundle import turn_bundle

        return turn_bundle(self, self.turn if turn is None else turn)

    async def aclose(self) -> None:
        """End the session: close the capabilities in reverse order (memory learnings, then OpenTelemetry's
        flush), then ``run_end`` if it owns the run."""
        if self.closed:
            return
        self.closed = True
        for cap in reversed(self.capabilities):
            try:
                await cap.close(self.context)
            except Exception as exc:  # closing must always finish and record
                self.emit(ErrorMetadata.build(type=type(exc).__name__, where="runtime", recoverable=True,
                                              message=f"at session end: {exc}"), turn=None)
        if self.owns_run:
            self.emit(RunEndMetadata.build(turns=self.turn, usage=self.usage.model_dump(),
                                           cost_usd=self.cost_usd, **self.run_end_metadata), turn=None)
            self.writer.close()
        gc_policy.release()

    def close(self) -> None:
        self.runtime.loop.run(self.aclose())

    async def __aenter__(self) -> ChatSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __enter__(self) -> ChatSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


