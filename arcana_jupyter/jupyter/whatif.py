"""The what-if: one recorded turn rebuilt with other settings (window, reserve, strategy, mode,
relevance), as JSON for the front end — the inspector's and the replay's **What if…** over the comm
(:mod:`.comm`), the replay widget's own channel (:mod:`.widget`) — and the rows whose outcome changed,
as ``%arcana_replay --window`` shows them (:mod:`.replay_view`). A base module of the part: it imports
neither of those."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .limits import MAX_TARGET_CHARS, clip, valid_text


def row_state(outcome: str | None, fidelity: str | None, tokens: int | None, *, reason: str | None = None,
              section: str | None = None, source: str | None = None) -> dict[str, Any] | None:
    """One side of a changed row; with ``reason`` and ``where`` (the section that carries a dropped
    message: where its evidence went) when known."""
    if outcome is None:
        return None
    state: dict[str, Any] = {"outcome": outcome, "fidelity": fidelity, "tokens": tokens}
    if reason:
        state["reason"] = reason
    if outcome == "dropped" and section and (source or "history") not in ("section", "pin"):
        state["where"] = section
    return state


def changed_rows(result: Any) -> list[dict[str, Any]]:
    """The rows of a rebuild whose outcome changed against the recorded decision (``RebuildResult.diff``),
    as the replay's diff table and the inspector's what-if show them."""
    return [
        {"index": d.index, "role": d.role, "source": d.source,
         "change": "new" if d.recorded_outcome is None else ("gone" if d.other_outcome is None else "changed"),
         "before": row_state(d.recorded_outcome, d.recorded_fidelity, d.recorded_tokens, reason=d.recorded_reason,
                             section=d.recorded_section, source=d.source),
         "after": row_state(d.other_outcome, d.other_fidelity, d.other_tokens, reason=d.other_reason,
                            section=d.other_section, source=d.source)}
        for d in result.diff
    ]


def sent_tokens(reader: Any, result: Any) -> int:
    """The rebuilt prompt's tokens counted the way the recorded call's were: the prompt as shaped
    for the model (and its tool specs) counted exactly, in the recording's tokenizer — the
    recorded ``budget.used``. (The builder's own estimate, before shaping, differs by a few tokens.)"""
    from ..messages import ToolSpec, as_messages
    from ..providers.counting import counter_for_encoding
    from ..providers.shaping import PromptShape

    replay = reader.replay_prompt(result.run_id, result.turn, result.agent, step=result.step)
    if replay is None or not PromptShape.from_record(replay.shape).shapes:
        return int(result.budget.used)  # sent as built: the builder's count is the prompt's
    counter = counter_for_encoding(replay.builder.get("encoding"), result.model)
    tools = [ToolSpec.model_validate(t) for t in replay.tools]
    return int(counter.count_prompt(as_messages(result.messages), tools))


def tokens_line(sent: int | None, rebuilt: int, result: Any) -> str:
    """Tokens sent and rebuilt, and where the difference went: into the rows whose decision changed
    (their tokens after, against the recorded ones) and the prompt's framing around them (role
    markers, the context block, messages the shaping joined)."""
    changed = len(result.diff)
    rows = f"{changed} row{'s' if changed != 1 else ''} changed"
    if sent is None:
        return f"{rebuilt:,} tokens rebuilt · {rows}"
    delta = rebuilt - sent
    if delta == 0:
        same = ("the same prompt" if not result.counterfactual and result.verified
                else rows if changed else "every message decided as it was")
        return f"{sent:,} tokens sent → {rebuilt:,} rebuilt · {same}"
    in_rows = result.tokens - result.recorded_tokens
    parts = [f"the {rows} {in_rows:+,}" if changed else "no row changed"]
    framing = delta - (in_rows if changed else 0)
    if framing:
        parts.append(f"the prompt's framing (roles, the context block) {framing:+,}")
    return f"{sent:,} tokens sent → {rebuilt:,} rebuilt ({delta:+,}: {', '.join(parts)})"


WHATIF_MAX_MESSAGES = 400
"""At most this many prompt messages come back in a what-if answer (each clipped to
:data:`WHATIF_MAX_CHARS`): the answer stays small however long the run."""
WHATIF_MAX_CHARS = 2000


def _int_field(data: dict[str, Any], name: str, low: int, high: int) -> int | None:
    """``data[name]`` as an int in ``[low, high]``, ``None`` when absent; a ``ValueError`` that names it otherwise."""
    value = data.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{name} must be a whole number, not {clip(value)}")
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {clip(value)}") from None
    if not low <= number <= high:
        raise ValueError(f"{name} must be between {low:,} and {high:,}, not {number:,}")
    return number


def what_if_answer(trace_dir: Path, data: dict[str, Any]) -> dict[str, Any]:
    """Rebuild one recorded turn with another window, reserve or strategy (``arcana trace rebuild
    --window``, ``%arcana_replay --window`` and the inspector's what-if all come here or to
    :func:`~arcana_jupyter.context.rebuild.rebuild_turn`): the settings, the tokens, the rows whose
    outcome changed and the rebuilt prompt (clipped), as JSON for the front end."""
    from ..context.rebuild import rebuild_turn
    from ..context.strategies import STRATEGIES
    from ..exceptions import ArcanaError
    from ..trace.reader import TraceReader
    from .options import MIN_WINDOW

    run_id, agent = data.get("run_id"), data.get("agent")
    if not valid_text(run_id, MAX_TARGET_CHARS):
        return {"ok": False, "message": f"what-if: run_id must be a run id, not {clip(run_id)}"}
    if agent is not None and not valid_text(agent, MAX_TARGET_CHARS):
        return {"ok": False, "message": f"what-if: agent must be a session name, not {clip(agent)}"}
    try:
        turn = _int_field(data, "turn", 1, 10_000_000)
        step = _int_field(data, "step", 0, 10_000) or 0
        window = _int_field(data, "window", MIN_WINDOW, 100_000_000)
        reserve = _int_field(data, "reserve", 0, 100_000_000)
    except ValueError as exc:
        return {"ok": False, "message": f"what-if: {exc}"}
    strategy = data.get("strategy") or None
    if strategy is not None and strategy not in STRATEGIES:
        return {"ok": False, "message": f"what-if: unknown strategy {clip(strategy)} (known: {', '.join(STRATEGIES)})"}
    mode, relevance = data.get("mode") or None, data.get("relevance") or None
    if mode is not None and mode not in ("classic", "adaptive"):
        return {"ok": False, "message": f"what-if: unknown mode {clip(mode)} (known: classic, adaptive)"}
    if relevance is not None and relevance not in ("lexical", "semantic"):
        return {"ok": False, "message": f"what-if: unknown relevance {clip(relevance)} (known: lexical, semantic)"}
    if turn is None:
        return {"ok": False, "message": "what-if: which turn? (turn is missing)"}
    if window is not None and reserve is not None and reserve >= window:
        return {"ok": False, "message": f"what-if: a reserve of {reserve:,} leaves no room in a window of {window:,}"}
    reader = TraceReader(trace_dir)
    try:
        if str(run_id) not in reader.run_ids():  # a run id of this folder, never a path, a prefix or "latest"
            return {"ok": False, "message": f"what-if: {clip(run_id)} is not a run of this notebook (a run id, "
                                            "as the inspector shows it)"}
        if window is not None or reserve is not None:
            refused = _reserve_refused(reader, str(run_id), turn, agent, step, window, reserve)
            if refused is not None:
                return {"ok": False, "message": f"what-if: {refused}"}
        result = rebuild_turn(reader, str(run_id), turn, agent=agent, step=step, strategy=strategy,
                              total_window=window, response_reserve=reserve, mode=mode, relevance=relevance)
    except ArcanaError as exc:
        return {"ok": False, "message": f"what-if: {clip(str(exc), 400)}"}

    changes = changed_rows(result)
    recorded_tokens = result.recorded_budget.used if result.recorded_budget is not None else None
    tokens = sent_tokens(TraceReader(trace_dir), result)
    messages = [{"role": str(m.get("role") or ""),
                 "content": clip_text(str(m.get("content") or ""), WHATIF_MAX_CHARS)}
                for m in result.messages[:WHATIF_MAX_MESSAGES]]
    return {
        "ok": True, "run_id": result.run_id, "agent": result.agent, "turn": result.turn, "step": result.step,
        "verified": result.verified, "counterfactual": result.counterfactual,
        "recorded_settings": {**result.recorded_settings, "mode": result.recorded_mode,
                              "relevance": result.recorded_relevance},
        "settings": {**result.settings, "mode": result.mode, "relevance": result.relevance},
        "recorded_tokens": recorded_tokens, "tokens": tokens,
        "tokens_line": tokens_line(recorded_tokens, tokens, result), "changes": changes, "messages": messages,
        "messages_left_out": max(0, len(result.messages) - WHATIF_MAX_MESSAGES), "notes": list(result.notes),
        "message": (f"turn {result.turn} rebuilt with window {result.settings['total_window']:,}, reserve "
                    f"{result.settings['response_reserve']:,}, {result.settings['strategy']}, "
                    f"{result.mode} mode, {result.relevance} relevance: {len(changes)} "
                    f"row(s) changed"),
    }


def _reserve_refused(reader: Any, run_id: str, turn: int, agent: str | None, step: int, window: int | None,
                     reserve: int | None) -> str | None:
    """Why a window or reserve given alone leaves no room beside the recorded other (a window of 256 on a
    run recorded with a reserve of 512 dropped every message, ``ok: true``); None when it fits."""
    replay = reader.replay_prompt(run_id, turn, agent, step=step)
    builder = replay.builder if replay is not None else {}
    recorded_window, recorded_reserve = builder.get("total_window"), builder.get("response_reserve")
    window = window if window is not None else recorded_window if type(recorded_window) is int else None
    reserve = reserve if reserve is not None else recorded_reserve if type(recorded_reserve) is int else None
    if window is None or reserve is None or reserve < window:
        return None
    if reserve is recorded_reserve:
        return (f"the reserve recorded for this turn ({reserve:,} tokens) leaves no room in a window of {window:,}: "
                f"give a reserve below {window:,} too")
    return (f"a reserve of {reserve:,} leaves no room in the window recorded for this turn ({window:,} tokens): "
            "give a window above it too")


def clip_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + f"… ({len(text):,} characters)"
