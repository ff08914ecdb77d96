"""The replay view: one precomputed frame per turn and a scrubber that needs no kernel and no script.

The markup is in ``templates/replay.html.j2`` (autoescaped); this module shapes the frames' data.
The scrubber is a row of radio buttons (one per turn) and CSS ``:checked`` rules that show the
selected frame: it works in JupyterLab, in nbconvert / report HTML opened from disk, and where CSS
is stripped (GitHub) every frame is simply shown one after another.

A frame is plain data (built by ``arcana_jupyter.jupyter.replay_view`` from a trace)::

    {"run_id", "agent", "turn", "input", "reply", "status", "usage",
     "step": {decision, report, budget, request_digest, messages},   # the turn's last LLM call
     "prompt_source": "snapshot" | "rebuilt" | "recorded" | None,
     "digest_verified": True | False | None, "digest_note": str,
     "pins": [...], "diff": [{"index", "role", "source", "change", "before", "after"}],
     "decision_error": str}   # only when the turn's decision cannot be read (the frame then has none)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .fragments import clip, css_ident, get, json_text
from .styles import CSS
from .templating import render_macro
from .turn import _map, _rows, budget_view, decision_table_view

Frame = Mapping[str, Any]
R = "replay.html.j2"

_PROMPT_LABELS = {
    "snapshot": "prompt snapshot (recorded as sent)",
    "rebuilt": "rebuilt from the transcript",
    "recorded": "recorded in the turn bundle",
}


def digest_mark(frame: Frame) -> str:
    return render_macro(R, "digest_mark", frame)


def _prompt_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    out = []
    for message in _rows(list(messages)):
        content = message.get("content")
        text = "[content not recorded]" if content is None else str(content)
        if message.get("tool_calls"):
            text += ("\n" if text else "") + "tool calls: " + json_text(message.get("tool_calls"))
        out.append({"role": str(message.get("role") or "?"), "name": message.get("name"), "text": clip(text, 3000)})
    return out


def prompt_html(messages: Sequence[Mapping[str, Any]], source: str | None) -> str:
    """The prompt as sent, one block per message."""
    return render_macro(R, "prompt", _prompt_messages(messages), _PROMPT_LABELS.get(source or "", "not available"))


def _sent_message(i: int, message: Mapping[str, Any], tokens: Any, limit: int = 3000) -> dict[str, Any]:
    view = _prompt_messages([message])[0]
    view["text"] = clip(view["text"], limit)
    return {**view, "index": i, "tokens": tokens if isinstance(tokens, int) else None}


def _sent_status(sent: Mapping[str, Any]) -> dict[str, Any]:
    """The verification line of a prompt as sent (``SentPrompt`` as a dict)."""
    where = {"prompt_sent": "recorded as sent", "snapshot": "from the prompt snapshot",
             "rebuilt": "rebuilt from the transcript"}.get(str(sent.get("source")), str(sent.get("source")))
    tokens = [t for t in sent.get("tokens") or [] if isinstance(t, int)]
    return {
        "where": where, "verified": bool(sent.get("verified")), "masked": int(sent.get("masked") or 0),
        "recorded": sent.get("recorded_digest"), "digest": sent.get("digest"), "note": sent.get("note"),
        "count": len(sent.get("messages") or []),
        "tokens": sum(tokens) if tokens and len(tokens) == len(sent.get("messages") or []) else None,
    }


def sent_prompt_html(sent: Mapping[str, Any] | None, *, missing: str = "") -> str:
    """The prompt as sent, message by message (role, text, tokens), marked verified when its digest
    matches the recorded one (``sent``: a ``SentPrompt`` dump); ``missing`` says why there is none."""
    if not sent or not sent.get("messages"):
        return render_macro(R, "sent_prompt", None, [], missing or "not recorded in this trace")
    tokens = list(sent.get("tokens") or [])
    messages = [_sent_message(i, m, tokens[i] if i < len(tokens) else None)
                for i, m in enumerate(_rows(list(sent.get("messages") or [])))]
    return render_macro(R, "sent_prompt", _sent_status(sent), messages, "")


def sent_prompt_changes(sent: Mapping[str, Any], previous: Mapping[str, Any] | None,
                        limit: int = 2000) -> dict[str, Any]:
    """One turn of the report's "Prompts as sent": the prefix shared with the previous prompt as a
    count, then each later message — its text when the previous prompt did not have it, else a
    reference (runs of them as one line). Costs what changed, so a long run's report stays linear."""
    messages = _rows(list(sent.get("messages") or []))
    tokens = list(sent.get("tokens") or [])
    before = _rows(list((previous or {}).get("messages") or []))
    keep = 0
    while keep < len(messages) and keep < len(before) and messages[keep] == before[keep]:
        keep += 1
    where: dict[str, int] = {}
    for i, m in enumerate(before):
        where.setdefault(json_text(m), i)
    rest: list[dict[str, Any]] = []
    for i in range(keep, len(messages)):
        j = where.get(json_text(messages[i]))
        if j is not None:
            last = rest[-1] if rest else None
            if last is not None and last.get("from") is not None and last["to"] == i - 1 and last["from_last"] == j - 1:
                last["to"], last["from_last"] = i, j
            else:
                rest.append({"from": j, "from_last": j, "first": i, "to": i})
        else:
            rest.append(_sent_message(i, messages[i], tokens[i] if i < len(tokens) else None, limit))
    kept_tokens = [t for t in tokens[:keep] if isinstance(t, int)]
    return {"turn": sent.get("turn"), "step": sent.get("step") or 0, "status": _sent_status(sent), "keep": keep,
            "keep_tokens": sum(kept_tokens) if len(kept_tokens) == keep and keep else None, "rest": rest,
            "first": previous is None}


def _add_sent(rows: list[dict[str, Any]], sent: Mapping[str, Any], previous: Mapping[str, Any] | None
              ) -> Mapping[str, Any] | None:
    """One call's prompt row; returns what the next call's prompt is compared with. The summariser's
    prompt (step -1) is shown whole and is no base for the next."""
    if int(sent.get("step") or 0) < 0:
        rows.append(sent_prompt_changes(sent, None))
        return previous
    rows.append(sent_prompt_changes(sent, previous))
    return sent


def sent_prompts_html(prompts: Sequence[Mapping[str, Any]], *, missing: str = "",
                      turns: Sequence[int] | None = None) -> str:
    """The report's "Prompts as sent" section for one run: every call's prompt, compactly (see
    :func:`sent_prompt_changes`); self-contained, so the report's layout can place it anywhere.

    ``turns`` (a long run's report): every turn of the run, of which ``prompts`` hold only some (the
    turns shown in full). Each stretch of turns without a prompt here gets one line; a prompt whose
    previous call is not here is shown in full (there is nothing on the page to compare it with)."""
    rows: list[dict[str, Any]] = []
    previous: Mapping[str, Any] | None = None
    if turns is None or not prompts:
        for sent in prompts:
            previous = _add_sent(rows, sent, previous)
        return render_macro(R, "sent_prompts", rows, missing)
    by_turn: dict[Any, list[Mapping[str, Any]]] = {}
    for sent in prompts:
        by_turn.setdefault(sent.get("turn"), []).append(sent)
    gap: list[int] = []

    def close_gap() -> None:
        if gap:
            rows.append({"omitted": True, "first": gap[0], "last": gap[-1], "count": len(gap)})
            gap.clear()

    for turn in turns:
        shown = by_turn.get(turn)
        if not shown:
            gap.append(turn)
            previous = None
            continue
        close_gap()
        for sent in shown:
            previous = _add_sent(rows, sent, previous)
    close_gap()
    return render_macro(R, "sent_prompts", rows, missing)


def diff_html(diff: Sequence[Mapping[str, Any]], turn: Any) -> str:
    """Which input messages changed outcome or fidelity since the previous turn."""
    if isinstance(turn, str):
        return render_macro(R, "diff", _rows(list(diff)), "as sent", turn)
    return render_macro(R, "diff", _rows(list(diff)), f"before turn {turn}", f"at turn {turn}")


def _counts(frame: Frame, step: Mapping[str, Any]) -> dict[str, int]:
    rows = get(step, "decision", "decisions", default=None)
    if not isinstance(rows, list) and isinstance(frame.get("outcome_counts"), Mapping):
        return {str(k): int(v) for k, v in frame["outcome_counts"].items()}  # a frame without its rows
    counts: dict[str, int] = {}
    for d in _rows(rows or []):
        counts[str(d.get("outcome"))] = counts.get(str(d.get("outcome")), 0) + 1
    return counts


def frame_view(frame: Frame, *, grouped: bool = False, diff_limit: int | None = None) -> dict[str, Any]:
    """What the frame macro shows of ``frame``. ``diff_limit``: at most that many rows of the changes
    table (the rest counted on one line: a long run's recall block moves hundreds of rows a turn)."""
    step = _map(frame.get("step"))
    compact = frame.get("prompt_source") == "trace" or bool(frame.get("rows_omitted"))
    counts = _counts(frame, step)
    diff = _rows(frame.get("diff"))
    more = 0
    if diff_limit is not None and len(diff) > diff_limit:
        more, diff = len(diff) - diff_limit, diff[:diff_limit]
    user = frame.get("input")
    return {
        "frame": frame,
        "usage": _map(frame.get("usage")),
        "user": clip(str(user), 2000) if user is not None else None,
        "step": bool(step),
        "compact": compact,
        "step_budget": _map(step.get("budget")),
        "counts": ", ".join(f"{n} {name}" for name, n in counts.items()) or "none",
        "strategy": get(step, "decision", "strategy"),
        "budget": budget_view(step) if step and not compact else None,
        "table": decision_table_view(step, grouped=grouped) if step and not compact else None,
        "messages": _prompt_messages(step.get("messages") or []) if not compact else [],
        "prompt_label": _PROMPT_LABELS.get(str(frame.get("prompt_source") or ""), "not available"),
        "show_pins": bool(frame.get("pins")) or not compact,
        "pins": _rows(frame.get("pins")),
        "diff": diff,
        "diff_more": more,
        "new": _rows(frame.get("new_messages")),
    }


def frame_html(frame: Frame) -> str:
    """Everything about one turn: input, reply, budget, decisions, prompt, pins, diff."""
    return render_macro(R, "frame", frame_view(frame))


def replay_html(frames: Sequence[Frame], *, uid: str, selected: int | None = None, include_style: bool = True,
                grouped: bool = False, diff_limit: int | None = None) -> str:
    """A scrubber over ``frames`` that switches with CSS only (no kernel, no JavaScript).

    ``grouped``: each decision table with its runs of rows decided alike as one line (see
    :func:`~.turn.decision_table_view`): what the report uses, so a long run's page grows with its
    turns, not with turns times history."""
    from .md import highlight_css

    views = [frame_view(f, grouped=grouped, diff_limit=diff_limit) for f in frames]
    chosen = selected if selected is not None and 0 <= selected < len(frames) else len(frames) - 1
    html = render_macro(R, "scrubber", "arcana-rp-" + css_ident(uid), views, chosen, "")
    if not include_style:
        return html
    return render_macro("turn.html.j2", "style", CSS + "\n" + highlight_css(html)) + html


def _turn_rows(frames: Sequence[Frame], detailed: Sequence[Any], notes: Mapping[Any, str] | None
               ) -> list[dict[str, Any]]:
    shown = set(detailed)
    rows = []
    for f in frames:
        step = _map(f.get("step"))
        usage = _map(f.get("usage"))
        counts = _counts(f, step)
        rows.append({
            "turn": f.get("turn"), "status": f.get("status"), "in": usage.get("input_tokens"),
            "out": usage.get("output_tokens"), "used": get(step, "budget", "used"),
            "counts": ", ".join(f"{n} {name}" for name, n in counts.items()) or "–",
            "changed": len(f.get("diff") or []), "new": len(f.get("new_messages") or []),
            "pins": len(f.get("pins") or []), "errors": len(f.get("errors") or []),
            "input": clip(str(f.get("input") or ""), 120), "full": f.get("turn") in shown,
            "note": (notes or {}).get(f.get("turn"), ""),
        })
    return rows


def turns_table_html(frames: Sequence[Frame], *, detailed: Sequence[Any] = (), notes: Mapping[Any, str] | None = None
                     ) -> str:
    """One compact row per turn: status, tokens, the prompt's size, outcome counts, how many messages
    changed, and why a turn is shown in full (``notes``, by turn). Autoescaped; linear in the turns,
    not in the history."""
    return render_macro(R, "turns_table", _turn_rows(frames, detailed, notes))


def long_replay_html(frames: Sequence[Frame], detailed: Sequence[Frame], *, uid: str,
                     notes: Mapping[Any, str] | None = None, skipped: int = 0, diff_limit: int | None = None) -> str:
    """A long run's replay (the report): a scrubber over the ``detailed`` frames (grouped decision
    tables, changes cut at ``diff_limit`` rows), then :func:`turns_table_html` of every frame.
    ``skipped``: notable turns left to the table (a cap on the frames in full)."""
    views = [frame_view(f, grouped=True, diff_limit=diff_limit) for f in detailed]
    turns = [f.get("turn") for f in detailed]
    rows = _turn_rows(frames, turns, {t: w for t, w in (notes or {}).items() if t in set(turns)})
    return render_macro(R, "long_replay", "arcana-rp-" + css_ident(uid), views, len(views) - 1, len(frames), skipped,
                        rows)


def progress_html(text: str, done: int, total: int) -> str:
    """A progress bar and what it measures (``%arcana_replay`` while it builds a long run's frames)."""
    return render_macro(R, "progress", text, int(done), int(total))


def counterfactual_html(recorded: Mapping[str, Any], alternative: Mapping[str, Any], *, label: str) -> str:
    """Side by side: the step that was sent, and the same turn rebuilt under other settings."""

    def column(title: str, step: Mapping[str, Any]) -> dict[str, Any]:
        decisions = _rows(get(step, "decision", "decisions", default=[]))
        return {"title": title, "strategy": get(step, "decision", "strategy"), "used": get(step, "budget", "used"),
                "kept": sum(1 for d in decisions if d.get("outcome") == "kept"), "table": decision_table_view(step),
                "messages": _prompt_messages(step.get("messages") or [])}

    return render_macro(R, "counterfactual", [column("as sent", recorded), column(label, alternative)])
