"""Replay frames: each turn of a recorded run, read from its trace, ready for the renderer.

A frame holds what the replay view shows for one turn (see :mod:`arcana_jupyter.render.replay_view`):
the turn bundle's data (rebuilt from the trace's events), the prompt — the recorded snapshot, else
rebuilt from the transcript — with its digest checked against the recorded ``request_digest``,
the pins active at that turn, and the per-message changes against the previous turn. Nothing
here needs IPython; :func:`display_replay` is the only function that displays.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from .. import render
from ..context.decisions import ContextDecision
from ..context.rebuild import rebuild_turn
from ..exceptions import ArcanaError
from ..runtime.bundle import bundle_from_events
from ..trace.reader import TraceReader
from ..trace.recorded_prompt import decision_key


def _state(outcome: str | None, fidelity: str | None, tokens: int | None) -> dict[str, Any] | None:
    if outcome is None:
        return None
    return {"outcome": outcome, "fidelity": fidelity, "tokens": tokens}


def _agent(reader: TraceReader, run_id: str, agent: str | None) -> str:
    if agent is not None:
        return agent
    agents = reader.agents(run_id)
    return "main" if "main" in agents or not agents else agents[0]


def turn_diff(previous: ContextDecision, current: ContextDecision) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Messages whose outcome or fidelity changed since the previous turn (and pins / sections that
    left the prompt), and the messages that are new this turn.

    Entries are matched by :func:`~arcana_jupyter.trace.recorded_prompt.decision_key`, the rule
    :func:`~arcana_jupyter.trace.recorded_prompt.diff_decisions` uses too. What counts as a change
    differs on purpose: this compares a message's state from one turn to the next (outcome and
    fidelity; its token count alone is no change for the view), ``diff_decisions`` compares two
    builds of the same turn (recorded and counterfactual), where a token difference is a finding.
    The shapes differ too: the view lists new messages apart, with the current turn's index and source."""
    before = {decision_key(d): d for d in previous.decisions}
    changed: list[dict[str, Any]] = []
    new: list[dict[str, Any]] = []
    for d in current.decisions:
        p = before.pop(decision_key(d), None)
        if p is None:
            new.append({"index": d.index, "role": d.role, "source": d.source, "outcome": d.outcome})
        elif (p.outcome, p.fidelity) != (d.outcome, d.fidelity):
            changed.append({"index": d.index, "role": d.role, "source": d.source, "change": "changed",
                            "before": _state(p.outcome, p.fidelity, p.token_count_after),
                            "after": _state(d.outcome, d.fidelity, d.token_count_after)})
    for p in before.values():
        changed.append({"index": p.index, "role": p.role, "source": p.source, "change": "gone",
                        "before": _state(p.outcome, p.fidelity, p.token_count_after), "after": None})
    return changed, new


def build_frames(trace_dir: str | Path, run_id: str, *, agent: str | None = None,
                 reader: TraceReader | None = None) -> list[dict[str, Any]]:
    """One frame per recorded turn of ``run_id`` (agent ``agent``, default ``main``)."""
    reader = reader or TraceReader(trace_dir)
    name = _agent(reader, run_id, agent)
    info = reader.run_info(run_id)
    frames: list[dict[str, Any]] = []
    previous = None
    for turn in reader.list_turns(run_id, name):
        if turn < 1:
            continue  # actions before the first message (a pin set up front): they show in turn 1
        events = reader.events(run_id, turn=turn, agent=name)
        bundle = bundle_from_events(events, run_id=run_id, agent=name, turn=turn, model=info.model or "",
                                    trace_path=None)
        steps = bundle.get("steps") or []
        step = dict(steps[-1]) if steps else {}
        frame: dict[str, Any] = {
            "run_id": run_id, "agent": name, "turn": turn, "input": bundle.get("input"), "reply": bundle.get("reply"),
            "status": bundle.get("status"), "usage": bundle.get("usage"), "cost_usd": bundle.get("cost_usd"),
            "step": step, "pins": [],
            "prompt_source": None, "digest_verified": None, "digest_note": "", "diff": [], "new_messages": [],
            "primitives": bundle.get("primitives") or [], "errors": bundle.get("errors") or [],
        }
        replay = reader.replay_prompt(run_id, turn, name, step=int(step.get("step") or 0)) if step else None
        if replay is not None:
            frame["pins"] = [p.model_dump(mode="json") for p in replay.active_pins]
            try:
                check = rebuild_turn(reader, run_id, turn, agent=name, step=replay.step)
            except ArcanaError as exc:
                frame["digest_note"] = f"cannot rebuild: {exc}"
            else:
                frame["digest_verified"] = check.verified
                frame["digest_note"] = "; ".join(check.notes) or f"rebuilt {check.rebuilt_digest}"
                if step.get("messages"):
                    frame["prompt_source"] = "snapshot"
                elif check.messages:
                    step["messages"] = check.messages
                    frame["prompt_source"] = "rebuilt"
            if previous is not None:
                frame["diff"], frame["new_messages"] = turn_diff(previous, replay.context_decision)
            previous = replay.context_decision
        frames.append(frame)
    return frames


def counterfactual(trace_dir: str | Path, frame: dict[str, Any], strategy: str, total_window: int) -> str:
    """HTML: the recorded prompt of ``frame``'s turn beside the same turn rebuilt differently."""
    reader = TraceReader(trace_dir)
    result = rebuild_turn(reader, frame["run_id"], int(frame["turn"]), agent=frame.get("agent"),
                          step=int((frame.get("step") or {}).get("step") or 0), strategy=strategy,
                          total_window=total_window)
    recorded = dict(frame.get("step") or {})
    alternative = {
        "step": result.step, "decision": result.decision.model_dump(mode="json"),
        "budget": result.budget.model_dump(mode="json"), "messages": result.messages, "request_digest": None,
    }
    diff = [
        {"index": d.index, "role": d.role, "source": d.source,
         "change": "new" if d.recorded_outcome is None else ("gone" if d.other_outcome is None else "changed"),
         "before": _state(d.recorded_outcome, d.recorded_fidelity, d.recorded_tokens),
         "after": _state(d.other_outcome, d.other_fidelity, d.other_tokens)}
        for d in result.diff
    ]
    label = f"{strategy}, window {total_window:,}"
    notes = "".join(f'<div class="arcana-muted">{render.esc(n)}</div>' for n in result.notes)
    return (
        render.style_block()
        + render.counterfactual_html(recorded, alternative, label=label)
        + f'<div class="arcana"><h4 class="arcana-h">Changed by the counterfactual ({result.recorded_tokens:,} → '
        + f"{result.tokens:,} tokens)</h4>{render.diff_html(diff, 'the counterfactual')}{notes}</div>"
    )


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


def display_replay(frames: list[dict[str, Any]], *, trace_dir: str | Path, turn: int | None = None,
                   widgets: bool = False, default_window: int = 8192, run_id: str | None = None,
                   agent: str | None = None) -> None:
    """Show the scrubber: our MIME type (the extension reads the trace) and a static CSS scrubber.

    ``widgets`` and ``default_window`` are accepted for older callers; there is no widget any more
    (a reopened notebook shows the same scrubber with no kernel and no widget state).
    """
    from IPython import get_ipython
    from IPython.display import display

    from .notebook_path import locate_notebook

    shell = get_ipython()
    location = locate_notebook(shell.user_ns if shell is not None else {})
    run = run_id or (frames[0]["run_id"] if frames else None)
    turns = [f["turn"] for f in frames]
    selected = turns.index(turn) if turn in turns else None
    static = render.replay_html(compact_frames(frames), uid=uuid.uuid4().hex[:10], selected=selected)
    plain = f"arcana replay of run {run or '?'}: turns {turns}"
    data: dict[str, Any] = {"text/html": static, "text/plain": plain}
    metadata: dict[str, Any] = {}
    if run is not None:
        trace_path = location.relative(Path(trace_dir) / f"{run}.jsonl")
        data = {REPLAY_MIME_TYPE: replay_bundle(frames, run_id=run, agent=agent, trace_path=trace_path,
                                                selected=selected), **data}
        metadata = {"arcana": {"run_id": run, "agent": agent, "trace_path": trace_path, "replay": True}}
    display(data, raw=True, metadata=metadata)
