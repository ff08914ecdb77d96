"""``arcana trace rebuild RUN --turn N``: rebuild a turn's prompt, verify its digest, try other settings."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ...exceptions import TraceError
from ...trace.reader import TraceReader
from ...trace.recorded_prompt import MessageDiff
from .opening import dump, open_run, trace_command, warn


@trace_command
def rebuild(args: argparse.Namespace) -> int:
    reader, run_id = open_run(args)
    return _rebuild_run(args, reader, run_id)


def _diff_rows(diff: Sequence[MessageDiff]) -> list[str]:
    def side(outcome: str | None, fidelity: str | None) -> str:
        if outcome is None:
            return "(absent)"
        return f"{outcome} {fidelity}" if outcome == "compressed" and fidelity else outcome

    lines = [f"  {'idx':>3}  {'role':<10}  {'recorded':<16}  {'counterfactual':<16}  tokens"]
    for c in diff:
        tag = "" if c.source == "history" else f"  [{c.source}]"
        lines.append(
            f"  {c.index:>3}  {c.role:<10}  {side(c.recorded_outcome, c.recorded_fidelity):<16}  "
            f"{side(c.other_outcome, c.other_fidelity):<16}  {c.recorded_tokens or 0}→{c.other_tokens or 0}{tag}"
        )
    return lines


def _rebuild_run(args: argparse.Namespace, reader: TraceReader, run_id: str) -> int:
    from ...context.rebuild import rebuild_turn

    if args.window is not None and args.window <= 0:
        raise TraceError("--window must be a positive number of tokens")
    if args.reserve is not None and args.reserve < 0:
        raise TraceError("--reserve must be 0 or more tokens")
    result = rebuild_turn(
        reader, run_id, args.turn, args.agent, args.step,
        strategy=args.strategy, total_window=args.window, response_reserve=args.reserve,
        mode=args.mode, relevance=args.relevance,
    )
    if args.json:
        dump(result.model_dump(mode="json"))
        warn(reader, run_id)
        return 0 if result.verified else 3
    rec = result.recorded_settings
    print(f"Rebuild of run {run_id} turn {result.turn} step {result.step} (agent {result.agent})  "
          f"history={result.history_len} messages  model={result.model or '-'}")
    print(f"  recorded settings: strategy={rec['strategy']} window={rec['total_window']} "
          f"reserve={rec['response_reserve']}"
          f"  → {result.recorded_decision.strategy}")
    print(f"  recorded digest:   {result.recorded_digest or '-'}")
    print(f"  rebuilt digest:    {result.rebuilt_digest}  "
          f"{'verified: the recorded prompt is reproduced exactly' if result.verified else 'NOT VERIFIED'}")
    if result.counterfactual:
        s = result.settings
        b = result.budget
        print(f"\nCounterfactual: strategy={s['strategy']} window={s['total_window']} reserve={s['response_reserve']}"
              + (f" mode={result.mode} (recorded {result.recorded_mode})"
                 if result.mode != result.recorded_mode else "")
              + (f" relevance={result.relevance} (recorded {result.recorded_relevance})"
                 if result.relevance != result.recorded_relevance else "")
              + f"  → {result.decision.strategy}  utilization={b.utilization:.2f}")
        if result.diff:
            for line in _diff_rows(result.diff):
                print(line)
        else:
            print("  every message gets the same decision as recorded")
        delta = result.tokens - result.recorded_tokens
        print(f"  {len(result.diff)} message{'s' if len(result.diff) != 1 else ''} changed; prompt tokens "
              f"{result.recorded_tokens} → {result.tokens} ({delta:+d})")
    for note in result.notes:
        print(f"  note: {note}")
    warn(reader, run_id)
    return 0 if result.verified else 3
