"""Resume: rebuild a session from its trace after a kernel restart, and keep writing to it.

History comes from the recorded transcript, pins from the ``cognitive_primitive`` events, usage
from ``turn_end`` events, adaptive state from the engine's own replay of its events. The resumed
session appends to the same trace file, after a ``run_start`` event marked ``resumed_from``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..exceptions import ConfigError
from ..messages import Message
from ..providers.base import Usage
from ..schema.events import CognitivePrimitive, ErrorEvent, LlmCall, PinChange, RunStart, TurnEnd
from ..trace.events import TraceEvent
from .config import RuntimeConfig
from .intercept import AskUser

if TYPE_CHECKING:
    from .runtime import Runtime
    from .session import ChatSession


def pin_changes(events: list[TraceEvent]) -> list[tuple[int, PinChange]]:
    """The pin and unpin calls a run's ``cognitive_primitive`` events record, with their turns."""
    changes: list[tuple[int, PinChange]] = []
    for ev in events:
        if ev.event_type == "cognitive_primitive" and isinstance(typed := ev.typed(), CognitivePrimitive):
            change = typed.metadata.pin_change()
            if change is not None:
                changes.append((ev.turn or 1, change))
    return changes


def recorded_standing(config: Mapping[str, Any] | None) -> bool | None:
    """``standing_instructions`` as a run's first ``run_start`` recorded its config: the value recorded;
    ``False`` for a config recorded without it (a run from before standing instructions, issue 39: it goes
    on as it was recorded, without a standing section); ``None`` when no config was recorded."""
    if not isinstance(config, Mapping):
        return None
    value = config.get("standing_instructions")
    return False if value is None else bool(value)


def as_recorded(cfg: RuntimeConfig, config: Mapping[str, Any] | None) -> RuntimeConfig:
    """``cfg`` with the behaviour settings ``config`` (a run's recorded ``run_start`` config) fixes for the
    rest of that run, whatever the settings now: ``standing_instructions`` (:func:`recorded_standing`) and the
    ``standing_share`` it was recorded with (a run from when the default was 10% goes on at 10%)."""
    update: dict[str, Any] = {}
    standing = recorded_standing(config)
    if standing is not None and standing != cfg.standing_instructions:
        update["standing_instructions"] = standing
    share = config.get("standing_share") if isinstance(config, Mapping) else None
    if isinstance(share, int | float) and not isinstance(share, bool) and 0 < share <= 0.5 \
            and share != cfg.standing_share:
        update["standing_share"] = float(share)
    return cfg.model_copy(update=update) if update else cfg


def first_run_config(events: list[TraceEvent]) -> Mapping[str, Any] | None:
    """The config the run's first ``run_start`` recorded (``None`` without one)."""
    start = next((typed for e in events if e.event_type == "run_start" and isinstance(typed := e.typed(), RunStart)),
                 None)
    return start.metadata.config if start is not None else None


def restore_calibration(session: ChatSession, events: list[TraceEvent]) -> None:
    """Teach the session's calibration what the run's calls taught it, in order: each call's counted
    and reported prompt tokens, each length refusal (as :meth:`ChatSession` handles one), so a
    resumed turn gets the budget the run would have given it without the restart."""
    calibration = session.calibration
    for ev in events:
        if ev.event_type not in ("llm_call", "error"):
            continue
        match ev.typed():
            case LlmCall(metadata=call):
                counted, reported = call.counted_input_tokens, call.reported_input_tokens
                if call.purpose is None and counted is not None and reported is not None:
                    calibration.observe(counted, reported)
            case ErrorEvent(metadata=err) if err.type == "ContextLengthError" and err.where == "provider":
                counted, reported = err.counted_input_tokens, err.reported_input_tokens
                needed = reported / counted if reported and counted else calibration.ratio * 1.25
                calibration.require(max(needed, calibration.ratio) * 1.02)


def resume_session(runtime: Runtime, run_id: str, cfg: RuntimeConfig, trace_dir: Path | None, *, agent: str,
                   ask_user: AskUser | None, notebook: str | None = None) -> ChatSession:
    """The session of ``run_id`` as its trace left it, writing on to the same file. ``notebook`` is
    the notebook's path now (recorded in the new ``run_start``: it may have been renamed)."""
    from ..trace.reader import TraceReader

    if trace_dir is None or not trace_dir.is_dir():
        raise ConfigError(f"cannot resume {run_id}: trace folder {trace_dir} does not exist (set trace_dir)")
    reader = TraceReader(trace_dir)
    known = [r.run_id for r in reader.list_runs()]
    if run_id not in known:
        raise ConfigError(f"cannot resume {run_id}: no such run in {trace_dir}; "
                          f"runs there: {', '.join(known) or 'none'}")
    events = reader.events(run_id, agent=agent)
    history = reader.history(run_id, agent=agent)
    run_start = next((typed for e in events if e.event_type == "run_start"
                      and isinstance(typed := e.typed(), RunStart)), None)
    if not history or history[0].role != "system":
        system = (run_start.metadata.system_prompt if run_start else None) or cfg.system_prompt
        history.insert(0, Message(role="system", content=system))
    cfg = as_recorded(cfg, first_run_config(events))  # a run from before standing instructions stays without
    writer = runtime.open_writer(trace_dir, run_id, cfg)

    def restore(session: ChatSession) -> None:
        session.history = history
        session.turn = max((e.turn or 0 for e in events), default=0)
        session.pins.restore(pin_changes(events))
        for ev in events:
            if ev.event_type == "turn_end" and isinstance(typed := ev.typed(), TurnEnd):
                end = typed.metadata
                if end.usage is not None:
                    session.usage = session.usage + Usage.model_validate(end.usage.model_dump())
                session.cost_usd += end.cost_usd or 0.0
        restore_calibration(session, events)
        refusals = [typed.metadata.message or "" for e in events if e.event_type == "error"
                    and isinstance(typed := e.typed(), ErrorEvent) and typed.metadata.type == "TemplateRefusedError"]
        if refusals:  # the server refused the run's first shape: go on with the one it accepted
            session.shaper.resume_refused(refusals[-1])
        if session.engine is not None:
            session.engine.load_events(events)

    try:
        return runtime.new_session(agent, run_id, writer, cfg, ask_user=ask_user, resumed_from=run_id,
                                   prepare=restore, notebook=notebook)
    except BaseException:
        writer.close()  # release the run's lock
        raise
