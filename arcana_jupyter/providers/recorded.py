"""Answer every call from a recorded trace, so a notebook re-runs offline and identically.

    provider = ReplayProvider("analysis.arcana", "r_20261130_010203_ab12cd")

The n-th call of an agent gets the n-th recorded ``llm_call`` of that agent: its assistant
message, usage, finish reason and model. Before answering, the new request's digest
(:func:`~arcana_jupyter.messages.request_digest` over model, messages and tools) is compared with
the recorded one:

- strict mode (default) raises :class:`~arcana_jupyter.exceptions.ReplayDivergence` whose report
  says which recorded turn and step, which message index and role, and what changed (a short
  unified diff of the content, added or removed messages, tool-call or tool-spec changes);
- lenient mode appends a :class:`Divergence` to :attr:`ReplayProvider.divergences` and answers
  with the recording anyway.

The recorded prompt the report compares against is the ``prompt_snapshot`` of that call when the
run kept snapshots (exact), else the recorded transcript the builder started from (the report
says which). Calls past the end of the recording raise ``ReplayDivergence`` in both modes.

A call that failed in the recording (an ``error`` event with ``where: "provider"``: a 429 after
every retry, a stream that broke off ...) fails again at the same position, as the same error: an
exception of the recorded class (the :mod:`~arcana_jupyter.exceptions` class of that name, else a
:class:`~arcana_jupyter.exceptions.ProviderError` subclass given that name) with the recorded
message and status, after streaming the partial reply the recording received. So a turn that
errored reproduces as the same error.

A call the user interrupted (a turn that ended ``cancelled`` while its call streamed: a
``context_decision`` with no ``llm_call`` after it) is cancelled again at the same position:
the partial reply the recording received is streamed, then ``asyncio.CancelledError`` is raised,
so the session ends the turn as cancelled with the same partial reply and the same closing
message in its history, and the turns after it are built as they were. A turn interrupted before a
call's prompt was built (before its first call, or while a tool ran) is cancelled by the session at
that point (:meth:`ReplayProvider.cancelled_before_build`, asked through ``RecordedActions``).

A session that calls :meth:`ReplayProvider.begin_turn` (``ChatSession`` does, before each turn)
is answered turn by turn: each turn starts at the recording's first call of that turn, so a turn
that made fewer calls than recorded (it failed early) does not shift the turns after it, and a
turn that asks for more calls than the recording made is a divergence.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import exceptions as _exceptions
from ..exceptions import ConfigError, ProviderError, ReplayDivergence, TraceError
from ..messages import as_message, canonical_json, request_digest
from ..schema.events import (
    REPLAYED_VIAS,
    ContextDecisionEvent,
    ContextDecisionMetadata,
    ErrorEvent,
    LlmCall,
    ToolCallEvent,
    TurnEnd,
    TurnStart,
    UserAction,
    UserActionMetadata,
)
from ..schema.tools import INTERRUPTED
from ..tokens import TokenCounter
from ..trace.reader import TraceReader
from .base import LLMRequest, LLMResponse, Provider, StreamChunk, Usage
from .shaping import SHAPES, PromptShape

_WORDS = re.compile(r"\S+\s*|\s+")
_MAX_DIFF_LINES = 24


@dataclass(frozen=True)
class CancelledCall:
    """A recorded call the user interrupted while it streamed: its turn, step, request digest and
    the partial reply received (``turn_end.reply``)."""

    turn: int | None
    step: int
    request_digest: str | None
    partial: str


ScriptItem = LlmCall | ErrorEvent | CancelledCall


def recorded_script(events: Sequence[Any]) -> list[ScriptItem]:
    """What an agent's recorded calls did, in order, from its ``context_decision``, ``llm_call``,
    ``error`` and ``turn_end`` events (typed): answered (``llm_call``), failed (a provider
    ``error``) or interrupted (:class:`CancelledCall`: a turn that ended ``cancelled`` after a
    decision no call answered)."""
    script: list[ScriptItem] = []
    pending: tuple[int | None, int, str | None] | None = None
    for event in events:
        match event:
            case ContextDecisionEvent(metadata=md):
                pending = (event.turn, md.step, md.request_digest)
            case LlmCall(metadata=md):
                script.append(event)
                if md.purpose is None:
                    pending = None
            case ErrorEvent(metadata=md) if md.where == "provider":
                script.append(event)
                pending = None
            case TurnEnd(metadata=md):
                if md.status == "cancelled" and pending is not None and pending[0] == event.turn:
                    script.append(CancelledCall(pending[0], pending[1], pending[2], md.reply or ""))
                pending = None
    return script


@dataclass(frozen=True)
class Divergence:
    """One request that differed from the recording (lenient mode keeps going after it)."""

    call: int
    """1-based index of the call among the agent's recorded calls."""
    turn: int | None
    step: int | None
    recorded_digest: str | None
    new_digest: str
    report: str


class ReplayProvider(Provider):
    """Replays the recorded ``llm_call`` events of one agent of one run, in order.

    Args:
        trace: the trace directory (or one ``.jsonl`` file), or a :class:`TraceReader`.
        run_id: the run to replay.
        agent: the pool member whose calls to replay (``"main"`` for a single chat).
        strict: raise on the first differing request (``True``) or record and continue.
    """

    name = "replay"

    def __init__(self, trace: str | Path | TraceReader, run_id: str, agent: str = "main", strict: bool = True) -> None:
        self.reader = trace if isinstance(trace, TraceReader) else TraceReader(Path(trace))
        self.run_id = run_id
        self.agent = agent
        self.strict = strict
        self.position = 0
        self.divergences: list[Divergence] = []
        self.turn: int | None = None
        """The turn being answered (:meth:`begin_turn`), or ``None``: answer in recorded order."""
        try:
            recorded = self.reader.events(
                run_id, event_types=["context_decision", "llm_call", "error", "turn_end", "tool_call"], agent=agent)
        except (TraceError, FileNotFoundError, KeyError) as exc:
            raise ConfigError(
                f"cannot replay run {run_id!r}: {exc}. Check the run id and the trace directory."
            ) from exc
        typed = [e.typed() for e in recorded]  # each parsed once
        self.script: list[ScriptItem] = recorded_script(typed)
        """What the recording's calls did, in order: answered (``llm_call``), failed (``error``) or
        interrupted (:class:`CancelledCall`)."""
        self.calls: list[LlmCall] = [e for e in self.script if isinstance(e, LlmCall)]
        self.cancelled_builds: dict[int, set[int]] = {}
        """Turns the user interrupted -> the steps whose prompt the recording built before that."""
        for event in typed:
            if isinstance(event, TurnEnd) and event.metadata.status == "cancelled" and event.turn is not None:
                self.cancelled_builds[event.turn] = {
                    e.metadata.step for e in typed if isinstance(e, ContextDecisionEvent) and e.turn == event.turn}
        self.interrupted_tools: set[tuple[int | None, str | None]] = {
            (e.turn, e.metadata.tool_call_id) for e in typed if isinstance(e, ToolCallEvent)
            and e.metadata.error is not None and e.metadata.error.type == INTERRUPTED}
        """(turn, tool call id) of the tool calls the user interrupted."""
        if not self.script and not self.cancelled_builds:
            raise ConfigError(
                f"run {run_id!r} has no recorded LLM calls for agent {agent!r}; nothing to replay "
                f"(agents in the run: {', '.join(self.reader.agents(run_id)) or 'none'})"
            )

    def __repr__(self) -> str:
        return f"ReplayProvider(run_id={self.run_id!r}, agent={self.agent!r}, strict={self.strict})"

    @property
    def model_name(self) -> str:
        """The model the recorded run asked for (what the replaying run should request)."""
        if self.calls:
            return self.calls[0].metadata.request_model or ""
        for event in self.reader.events(self.run_id, event_types=["context_decision"], agent=self.agent):
            decision = event.typed()
            builder = decision.metadata.builder if isinstance(decision, ContextDecisionEvent) else None
            if builder is not None and builder.model:
                return builder.model
        model = str(self.reader.run_info(self.run_id).model or "")
        return model.split(":", 1)[1] if ":" in model else model

    @property
    def recorded_provider(self) -> str:
        """The provider the recorded run talked to (``local``, ``openai`` ...): settings that depend
        on the provider (which tools ``auto`` offers) follow the recording, not the replay."""
        if self.calls:
            return self.calls[0].metadata.system or ""
        model = str(self.reader.run_info(self.run_id).model or "")
        return model.split(":", 1)[0] if ":" in model else model

    def _first_decision(self) -> ContextDecisionMetadata:
        for event in self.reader.events(self.run_id, event_types=["context_decision"], agent=self.agent):
            decision = event.typed()
            return decision.metadata if isinstance(decision, ContextDecisionEvent) else ContextDecisionMetadata()
        return ContextDecisionMetadata()

    def token_counter(self, model: str | None = None) -> TokenCounter:
        """Count as the recording did: the encoding its builder recorded (a GGUF model's own too)."""
        from .counting import counter_for_encoding

        builder = self._first_decision().builder
        encoding = builder.encoding if builder is not None else None
        return counter_for_encoding(encoding or None, model)

    async def prompt_shape(self, model: str | None = None) -> PromptShape:
        """The shape the recording used (unshaped for traces from before shaping)."""
        recorded = self._first_decision().shape
        return PromptShape.from_record(recorded).with_source("recorded") if recorded else SHAPES["none"]

    def initial_margin(self, counter: TokenCounter) -> float:
        """The calibration the recording started from, so every budget is rebuilt as it was."""
        calibration = self._first_decision().calibration
        if calibration is not None and calibration.ratio is not None:
            return calibration.ratio
        return 1.0

    @property
    def remaining(self) -> int:
        return len(self.script) - self.position

    def for_agent(self, agent: str) -> ReplayProvider:
        """A replay of another agent of the same run (pools: one provider per member)."""
        return ReplayProvider(self.reader, self.run_id, agent=agent, strict=self.strict)

    # -- answering --------------------------------------------------------------------------------

    def begin_turn(self, turn: int) -> None:
        """The session starts ``turn``: answer it from the recording's first call of that turn on
        (skipping what the turns before it did not ask for)."""
        self.turn = turn
        while self.position < len(self.script):
            at = self.script[self.position].turn
            if at is None or at >= turn:
                break
            self.position += 1

    def interrupted_tool(self, turn: int, tool_call_id: str | None) -> bool:
        """The user interrupted ``turn`` while this tool call ran (or before it): the replay is
        cancelled before it runs."""
        return (turn, tool_call_id) in self.interrupted_tools

    def cancelled_before_build(self, turn: int, step: int) -> bool:
        """The user interrupted ``turn`` before the recording built the prompt of ``step`` (before its
        first call, or while a tool ran): the replay is cancelled at the same point."""
        built = self.cancelled_builds.get(turn)
        return built is not None and step not in built

    def _next(self, request: LLMRequest) -> ScriptItem:
        item = self.script[self.position] if self.position < len(self.script) else None
        if item is not None and self.turn is not None and item.turn is not None and item.turn != self.turn:
            made = sum(1 for e in self.script if e.turn == self.turn)
            what = (f"the recording's turn {self.turn} made {made} (a different tool loop)" if made
                    else f"the recording made no model call in turn {self.turn}")
            raise ReplayDivergence(f"replay of run {self.run_id} (agent {self.agent}): turn {self.turn} asks for "
                                   f"model call {made + 1}, but {what}", report="")
        if item is None:
            last = self.script[-1]
            raise ReplayDivergence(
                f"replay of run {self.run_id} (agent {self.agent}): call {self.position + 1} asked, but the "
                f"recording has only {len(self.script)} LLM call(s) (the last at turn {last.turn}). The new run "
                "makes more model calls than the recorded one (a different tool loop or an extra turn).",
                report="",
            )
        self.position += 1
        if isinstance(item, LlmCall):
            self._check(request, item, self.position)
        elif isinstance(item, CancelledCall):
            self._check_cancelled(request, item)
        return item

    async def complete(self, request: LLMRequest) -> LLMResponse:
        event = self._next(request)
        if isinstance(event, CancelledCall):
            raise asyncio.CancelledError(f"replayed: the user interrupted turn {event.turn} here")
        if isinstance(event, ErrorEvent):
            raise self.recorded_error(event)
        return self._response(event, self.position)

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        event = self._next(request)
        if isinstance(event, CancelledCall):
            for piece in _WORDS.findall(event.partial):
                yield StreamChunk(text=piece)
            raise asyncio.CancelledError(f"replayed: the user interrupted turn {event.turn} here")
        if isinstance(event, ErrorEvent):
            error = event.metadata
            received = error.received
            if received is None and error.received_chars:
                received = self._partial_reply(event)
            for piece in _WORDS.findall(received or ""):
                yield StreamChunk(text=piece)
            raise self.recorded_error(event)
        response = self._response(event, self.position)
        for piece in _WORDS.findall(response.message.content):
            yield StreamChunk(text=piece)
        for call in response.message.tool_calls:
            yield StreamChunk(tool_call_delta=call)
        yield StreamChunk(response=response)

    def _partial_reply(self, event: ErrorEvent) -> str:
        """The partial reply of a failed call: recorded once, in its turn's ``turn_end.reply``
        (older traces put it in the error's ``received``)."""
        if event.turn is None:
            return ""
        try:
            ends = self.reader.events(self.run_id, event_types=["turn_end"], turn=event.turn, agent=self.agent)
        except TraceError:
            return ""
        end = ends[-1].typed() if ends else None
        reply = end.metadata.reply if isinstance(end, TurnEnd) else None
        return reply or ""

    def recorded_user_actions(self) -> dict[tuple[Any, ...], list[UserActionMetadata]]:
        """The recorded user actions that no cell of the notebook re-runs (``via`` in
        :data:`~arcana_jupyter.schema.events.REPLAYED_VIAS`: the inspector's buttons), by the point
        they happened: ``("turn", T)`` before turn T started, ``("build", T, step)`` before that
        call was built. Failed actions changed nothing and are left out; actions after the last
        build have no point to be applied at."""
        out: dict[tuple[Any, ...], list[UserActionMetadata]] = {}
        pending: list[UserActionMetadata] = []
        for event in self.reader.events(self.run_id, event_types=["user_action", "turn_start", "context_decision"],
                                        agent=self.agent):
            typed = event.typed()
            if isinstance(typed, UserAction):
                action = typed.metadata
                if action.via in REPLAYED_VIAS and action.ok is True:
                    pending.append(action)
                continue
            if not pending or event.turn is None:
                continue
            match typed:
                case TurnStart():
                    point: tuple[Any, ...] = ("turn", event.turn)
                case ContextDecisionEvent():
                    point = ("build", event.turn, typed.metadata.step)
                case _:
                    continue
            out.setdefault(point, []).extend(pending)
            pending = []
        return out

    def recorded_error(self, event: ErrorEvent) -> ProviderError:
        """The error a recorded ``error`` event describes, as an exception of the same class name."""
        meta = event.metadata
        exc = _error_class(meta.type or "ProviderError")(
            meta.message or "", provider=self.recorded_provider, status=meta.status,
        )
        exc.recorded = True  # type: ignore[attr-defined]
        return exc

    def _response(self, event: LlmCall, call: int) -> LLMResponse:
        meta = event.metadata
        if meta.message is None:
            raise ProviderError(
                f"replay: recorded call {call} (turn {event.turn}) has no response message", provider="replay"
            )
        if meta.message.content is None and not meta.message.tool_calls:
            raise ProviderError(
                f"replay: run {self.run_id} was recorded with trace_content='none': call {call} (turn {event.turn}) "
                "has no response text to replay. Record with trace_content='full' or 'redacted' to replay.",
                provider="replay",
            )
        message = as_message(meta.message.model_dump(exclude_unset=True)).replace(turn=None, role="assistant")
        reasons = meta.finish_reasons or ["stop"]
        return LLMResponse(
            message=message,
            usage=Usage(
                input_tokens=meta.input_tokens or 0,
                output_tokens=meta.output_tokens or 0,
                cached_input_tokens=meta.cached_input_tokens or 0,
            ),
            finish_reason=str(reasons[0]),
            model=meta.response_model or meta.request_model or "",
        )

    # -- checking ---------------------------------------------------------------------------------

    def _check_cancelled(self, request: LLMRequest, item: CancelledCall) -> None:
        if not item.request_digest or not self.strict:
            return
        new = request_digest(request.messages, request.tools, request.model)
        if new != item.request_digest and request_digest(request.messages, request.tools,
                                                         self.model_name) != item.request_digest:
            raise ReplayDivergence(
                f"replay of run {self.run_id} (agent {self.agent}) diverged at turn {item.turn}, step {item.step} "
                f"(the call the user interrupted): the request differs from the recorded one (request digest: "
                f"recorded {item.request_digest}, new {new})", report="")

    def _check(self, request: LLMRequest, event: LlmCall, call: int) -> None:
        meta = event.metadata
        recorded = meta.request_digest
        if not recorded:
            return  # e.g. a summariser call, recorded without a digest
        recorded_model = meta.request_model or ""
        new = request_digest(request.messages, request.tools, request.model)
        if new == recorded or request_digest(request.messages, request.tools, recorded_model) == recorded:
            return
        step = meta.step
        report = self.divergence_report(request, event, call, new)
        where = f"turn {event.turn}, step {step}" if event.turn is not None else f"call {call}"
        divergence = Divergence(call, event.turn, step, recorded, new, report)
        if self.strict:
            raise ReplayDivergence(
                f"replay of run {self.run_id} (agent {self.agent}) diverged at {where}: the request differs "
                f"from the recorded one.\n{report}",
                report=report,
            )
        self.divergences.append(divergence)

    def divergence_report(self, request: LLMRequest, event: LlmCall, call: int, new_digest: str) -> str:
        """A readable account of how ``request`` differs from what was sent at recorded call ``call``."""
        meta = event.metadata
        step = meta.step
        lines = [
            f"run {self.run_id}, agent {self.agent}, turn {event.turn}, step {step} "
            f"(recorded LLM call {call} of {len(self.script)})",
            f"request digest: recorded {meta.request_digest}, new {new_digest}",
        ]
        recorded_messages, recorded_tools, source = self._recorded_request(event, step)
        lines.append(f"compared with: {source}")
        new_messages = [m.wire() for m in request.messages]
        new_tools = [t.wire() for t in request.tools]
        body: list[str] = []
        if recorded_messages is not None:
            body += diff_messages(recorded_messages, new_messages)
        if recorded_tools is not None:
            body += diff_tools(recorded_tools, new_tools)
        recorded_model = meta.request_model or ""
        if recorded_model and request.model != recorded_model:
            body.append(f"model: recorded {recorded_model!r}, new {request.model!r}")
        if not body:
            body.append(
                "no difference found in the recorded content (the trace may hold redacted or no content, "
                "or the builder's output differs in a part the transcript does not show)"
            )
        return "\n".join(lines + body)

    def _recorded_request(
        self, event: LlmCall, step: Any
    ) -> tuple[list[dict[str, Any]] | None, list[dict[str, Any]] | None, str]:
        if event.turn is None:
            return None, None, "nothing (the call has no turn)"
        step_no = step if isinstance(step, int) and step >= 0 else 0
        try:
            replay = self.reader.replay_prompt(self.run_id, event.turn, self.agent, step=step_no)
        except TraceError:
            replay = None
        tools = None
        if replay is not None:
            if replay.prompt_snapshot is not None:
                snap = replay.prompt_snapshot
                return list(snap.messages), list(snap.tools), "the recorded prompt snapshot (exact)"
            tools = [_tool_wire(t) for t in replay.tools]
            try:
                sent = self.reader.prompt_sent(self.run_id, event.turn, step=step_no, agent=self.agent)
            except TraceError:
                sent = None
            if sent is not None and sent.messages:
                return list(sent.messages), tools, "the recorded prompt as sent (prompt_sent; secrets masked)"
            if replay.history_len is not None:
                history = self.reader.history(self.run_id, self.agent, strict=False)[: replay.history_len]
                return (
                    [m.wire() for m in history],
                    tools,
                    f"the recorded transcript (first {replay.history_len} history messages; prompt snapshots were "
                    "off, so messages the builder compressed or added may also show up here)",
                )
        return None, tools, "nothing (no context decision recorded for this call)"


_ERROR_CLASSES: dict[str, type[ProviderError]] = {}


def _error_class(name: str) -> type[ProviderError]:
    """The exception class a recorded provider error had: ours by name, else a ProviderError named so."""
    known = getattr(_exceptions, name, None)
    if isinstance(known, type) and issubclass(known, ProviderError) and known is not ReplayDivergence:
        return known
    safe = re.sub(r"\W", "_", name)[:80] or "ProviderError"
    if safe[0].isdigit():
        safe = "_" + safe
    if safe not in _ERROR_CLASSES:
        _ERROR_CLASSES[safe] = type(safe, (ProviderError,), {
            "__module__": __name__, "__doc__": f"A recorded provider error of type {name} (replayed)."})
    return _ERROR_CLASSES[safe]


def _tool_wire(spec: dict[str, Any]) -> dict[str, Any]:
    if "function" in spec:
        return spec
    return {"type": "function", "function": {"name": spec.get("name", ""), "description": spec.get("description", ""),
                                             "parameters": spec.get("parameters", {})}}


def _preview(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _describe(message: dict[str, Any]) -> str:
    extra = ""
    if message.get("tool_calls"):
        names = ", ".join(c.get("function", {}).get("name", "?") for c in message["tool_calls"])
        extra = f" [tool calls: {names}]"
    return f"{message.get('role')}: {_preview(str(message.get('content') or ''))!r}{extra}"


def diff_messages(recorded: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[str]:
    """Lines describing how the ``new`` wire messages differ from the ``recorded`` ones."""
    a = [canonical_json(m) for m in recorded]
    b = [canonical_json(m) for m in new]
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if op == "replace" and i2 - i1 == j2 - j1:
            for offset in range(i2 - i1):
                out += _diff_one(i1 + offset, j1 + offset, recorded[i1 + offset], new[j1 + offset])
            continue
        for i in range(i1, i2):
            out.append(f"message {i} removed (recorded {_describe(recorded[i])})")
        for j in range(j1, j2):
            out.append(f"message {j} added (new {_describe(new[j])})")
    return out


def _diff_one(i: int, j: int, old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    label = f"message {j}" if i == j else f"message {j} (recorded index {i})"
    if old.get("role") != new.get("role"):
        return [f"{label}: role changed from {old.get('role')} to {new.get('role')} "
                f"(recorded {_describe(old)}; new {_describe(new)})"]
    out: list[str] = []
    role = new.get("role")
    old_text, new_text = str(old.get("content") or ""), str(new.get("content") or "")
    if old_text != new_text:
        out.append(f"{label} ({role}): content changed")
        diff = list(
            difflib.unified_diff(old_text.splitlines(), new_text.splitlines(), "recorded", "new", n=1, lineterm="")
        )
        if len(diff) > _MAX_DIFF_LINES:
            diff = [*diff[:_MAX_DIFF_LINES], f"... ({len(diff) - _MAX_DIFF_LINES} more diff lines)"]
        out += [f"    {line}" for line in diff]
    for key in sorted((set(old) | set(new)) - {"role", "content"}):
        if old.get(key) != new.get(key):
            out.append(f"{label} ({role}): {key} changed: recorded {json.dumps(old.get(key))[:200]}, "
                       f"new {json.dumps(new.get(key))[:200]}")
    return out


def diff_tools(recorded: Sequence[dict[str, Any]], new: Sequence[dict[str, Any]]) -> list[str]:
    """Lines naming tools added, removed or changed between the recorded and the new tool specs."""

    def by_name(specs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {str(s.get("function", {}).get("name", "")): s.get("function", {}) for s in specs}

    old, cur = by_name(recorded), by_name(new)
    out = [f"tool {name!r} added" for name in cur if name not in old]
    out += [f"tool {name!r} removed" for name in old if name not in cur]
    for name in old:
        if name in cur and canonical_json(old[name]) != canonical_json(cur[name]):
            fields = [
                k for k in ("description", "parameters")
                if canonical_json(old[name].get(k)) != canonical_json(cur[name].get(k))
            ]
            out.append(f"tool {name!r} changed ({', '.join(fields) or 'spec'})")
    if not out and (
        [s.get("function", {}).get("name") for s in recorded] != [s.get("function", {}).get("name") for s in new]
    ):
        out.append("tools reordered")
    return out
