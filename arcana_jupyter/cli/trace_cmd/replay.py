"""``arcana trace replay RUN [--turn N]``: a turn's decision table, prompt and active pins, or the
turns that can be replayed."""

from __future__ import annotations

import argparse
from typing import Any

from ...exceptions import TraceError
from ...schema.events import ContextDecisionEvent, ContextDecisionMetadata, PromptSnapshotEvent
from ...trace.events import TraceEvent
from ...trace.reader import TraceReader
from ...trace.recorded_prompt import format_replay
from .opening import dump, of_agent, open_run, ranges, trace_command, warn


@trace_command
def replay(args: argparse.Namespace) -> int:
    reader, run_id = open_run(args)
    return _replay_run(args, reader, run_id)


def _replay_run(args: argparse.Namespace, reader: TraceReader, run_id: str) -> int:
    if args.turn is None:
        return _replay_list(args, reader, run_id)
    replay = reader.replay_prompt(run_id, args.turn, args.agent, step=args.step)
    if replay is None:
        agent = args.agent
        turns = reader.list_turns(run_id, agent)
        evidence = reader.replay_turns(run_id, agent)
        if args.turn not in turns:
            raise TraceError(
                f"run {run_id} has no turn {args.turn}{of_agent(agent)}; turns: {ranges(turns)}"
                f" (with replay evidence: {ranges(evidence)})"
            )
        if args.turn in evidence:
            first = reader.replay_prompt(run_id, args.turn, agent)
            if first is None:  # the turn's decision is there but cannot be read (a malformed event)
                raise TraceError(f"the context decision of turn {args.turn} of run {run_id} cannot be read; "
                                 f"`arcana trace show {run_id} --errors` names the problem")
            raise TraceError(f"turn {args.turn} of run {run_id} has no step {args.step}; steps: {ranges(first.steps)}")
        raise TraceError(
            f"turn {args.turn} of run {run_id} has no recorded context decision; turns with replay evidence: "
            f"{ranges(evidence)}"
        )
    sent = None
    if not args.decision_only:
        from ...context.rebuild import prompt_as_sent

        sent = prompt_as_sent(reader, run_id, args.turn, args.agent, step=args.step)
    if args.json:
        data = replay.model_dump(mode="json")
        data["prompt_sent"] = sent.model_dump(mode="json") if sent is not None else None
        if args.decision_only:  # no model or user text: safe to share
            data = {k: data[k] for k in ("run_id", "agent", "turn", "step", "steps", "context_decision",
                                         "context_report", "budget_snapshot", "request_digest", "history_len")}
            if data["context_decision"].get("summary") is not None:
                data["context_decision"]["summary"] = "[left out of a decision-only replay]"
        elif args.prompt_only:
            data = {k: data[k] for k in ("run_id", "agent", "turn", "step", "prompt_snapshot", "prompt_sent",
                                         "active_pins", "request_digest")}
        dump(data)
    else:
        lines = format_replay(replay, decision=not args.prompt_only, prompt=not args.decision_only, sent=sent)
        for line in lines:
            print(line)
    warn(reader, run_id)
    return 0


def _replay_list(args: argparse.Namespace, reader: TraceReader, run_id: str) -> int:
    agents = [args.agent] if args.agent else [a for a in reader.agents(run_id) if reader.replay_turns(run_id, a)]
    rows: list[dict[str, Any]] = []
    for agent in agents:
        events = reader.events(run_id, event_types=["context_decision", "prompt_snapshot"], agent=agent)
        snaps = {(e.turn, snap.metadata.step) for e in events
                 if e.event_type == "prompt_snapshot" and isinstance(snap := e.typed(), PromptSnapshotEvent)}
        by_turn: dict[int, list[TraceEvent]] = {}
        for e in events:
            if e.event_type == "context_decision" and e.turn is not None:
                by_turn.setdefault(e.turn, []).append(e)
        for turn, decs in sorted(by_turn.items()):
            typed = decs[0].typed()  # only the first decision of the turn is read
            first = typed.metadata if isinstance(typed, ContextDecisionEvent) else ContextDecisionMetadata()
            d = first.decision
            outcomes: list[str] = [x.outcome for x in (d.decisions if d else None) or []]
            rows.append({
                "agent": agent, "turn": turn, "steps": len(decs), "strategy": d.strategy if d else None,
                "utilization": first.budget.utilization if first.budget else None,
                "messages": len(outcomes),
                **{k: outcomes.count(k) for k in ("kept", "compressed", "dropped", "summarized")},
                "snapshot": (turn, first.step) in snaps, "digest": first.request_digest,
            })
    if args.json:
        dump(rows)
        warn(reader, run_id)
        return 0
    who = f" (agent {args.agent})" if args.agent else ""
    across = f" across agents {', '.join(agents)}" if len(agents) > 1 else ""
    print(f"Run {run_id}{who}: {len(rows)} turn{'s' if len(rows) != 1 else ''} with replay evidence{across}")
    if rows:
        show_agent = len(agents) > 1
        head = f"  {'agent':<10}" if show_agent else ""
        print(f"{head}  {'turn':>4}  {'steps':>5}  {'strategy':<20}  {'util':>5}  {'msgs':>4}  {'kept':>4}  "
              f"{'compr':>5}  {'drop':>4}  {'summ':>4}  {'snapshot':<8}  digest")
        for r in rows:
            util = f"{r['utilization']:.2f}" if isinstance(r["utilization"], int | float) else "-"
            lead = f"  {r['agent']:<10}" if show_agent else ""
            print(f"{lead}  {r['turn']:>4}  {r['steps']:>5}  {r['strategy'] or '-':<20}  "
                  f"{util:>5}  {r['messages']:>4}  "
                  f"{r['kept']:>4}  {r['compressed']:>5}  {r['dropped']:>4}  {r['summarized']:>4}  "
                  f"{'yes' if r['snapshot'] else 'no':<8}  {r['digest'] or '-'}")
        print(f"\nReplay one: arcana trace replay {run_id} --turn N{' --agent NAME' if len(agents) > 1 else ''}")
    warn(reader, run_id)
    return 0
