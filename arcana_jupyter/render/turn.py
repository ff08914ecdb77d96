"""The static view of one turn (docs/TURN_BUNDLE.md): the reply, then a collapsed inspector.

Used for the ``text/html`` of every turn bundle and in the report. The markup is in
``templates/turn.html.j2`` (autoescaped); the functions here only shape the bundle's data (sums,
filters, which rows to show). Every string of the bundle is model or user text: the templates
escape it, the reply goes through :mod:`.md` (Markdown with raw HTML disabled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..schema.labels import outcome_label, row_flag, source_label
from .fragments import clip, cost_text, get, int_text, json_text, ms_text
from .md import MAX_MARKDOWN_CHARS, highlight_css
from .styles import CSS, LAYER_COLORS, OUTCOME_COLORS
from .templating import render_macro

Bundle = Mapping[str, Any]
T = "turn.html.j2"


def turn_plain(bundle: Bundle) -> str:
    """``text/plain`` of a turn: the reply and a one-line summary."""
    line = (
        f"[arcana {bundle.get('agent', 'main')} turn {bundle.get('turn')} · {bundle.get('status', '?')}"
        f" · {usage_text(bundle)} · run {bundle.get('run_id')}]"
    )
    reply = bundle.get("reply") or ""
    errors = bundle.get("errors") or []
    if errors and not reply:
        reply = "Error: " + "; ".join(str(e.get("message", e)) for e in errors)
    return f"{reply}\n{line}" if reply else line


_NOT_IN_A_TURN = (".arcana-scrub", ".arcana-turns", ".arcana-track", ".arcana-frame", ".arcana-side", ".arcana-chart",
                  ".arcana-summary{", ".arcana-stat", ".arcana-msg", ".arcana-verified", ".arcana-mismatch")


def turn_css(fragment: str = "") -> str:
    """The stylesheet without the rules of replays, charts and reports (a turn's output carries its
    own copy: 4.1 KB instead of 5.9 KB per turn in the notebook), plus the Pygments rules that the
    fragment's highlighted code uses."""
    rules = [line for line in CSS.strip().splitlines() if not line.startswith(_NOT_IN_A_TURN)]
    return "\n".join(rules) + "\n" + highlight_css(fragment)


def turn_style_block(fragment: str = "") -> str:
    return render_macro("turn.html.j2", "style", turn_css(fragment))




def turn_html(bundle: Bundle, *, open_inspector: bool = False, include_style: bool = True) -> str:
    """The whole static turn view: reply (Markdown), errors, and the inspector."""
    html = render_macro(T, "turn", bundle, inspector_view(bundle, open_inspector=open_inspector), "")
    return (turn_style_block(html) + html) if include_style else html


def reply_html(bundle: Bundle) -> str:
    """The reply (Markdown, via :mod:`.md`) and the turn's errors."""
    return render_macro(T, "reply_block", bundle)


def usage_text(bundle: Bundle) -> str:
    """``this turn: 1,234 in / 56 out tokens, $0.0012 · session: 3 turns, 4,567 in / 89 out, $0.0040``."""
    usage = bundle.get("usage") or {}
    cost = bundle.get("cost_usd")
    text = (f"this turn: {int_text(usage.get('input_tokens') or 0)} in / "
            f"{int_text(usage.get('output_tokens') or 0)} out tokens"
            f", {cost_text(cost if cost is not None else 0.0)}")
    session = bundle.get("session")
    if isinstance(session, Mapping):
        turns = int(session.get("turns") or 0)
        text += (f" · session: {turns} turn{'s' if turns != 1 else ''}, "
                 f"{int_text(session.get('input_tokens') or 0)} in / "
                 f"{int_text(session.get('output_tokens') or 0)} out, {cost_text(session.get('cost_usd') or 0.0)}")
    return text


def _summary(bundle: Bundle) -> dict[str, Any]:
    usage = _map(bundle.get("usage"))
    last = _last_step(bundle)
    utilization = get(last, "budget", "utilization")
    return {
        "agent": bundle.get("agent") or "main", "turn": bundle.get("turn"), "status": str(bundle.get("status") or "?"),
        "usage": usage_text(bundle), "cached": usage.get("cached_input_tokens"),
        "strategy": get(last, "decision", "strategy"),
        "utilization": utilization if isinstance(utilization, int | float) else None,
        "primitives": len(_rows(bundle.get("primitives"))), "pins": len(_rows(bundle.get("pins"))),
    }


def summary_line(bundle: Bundle) -> str:
    """The one-line header of the inspector (also its ``summary`` element)."""
    return render_macro(T, "summary_line", _summary(bundle))


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _rows(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list | tuple) else []


def _last_step(bundle: Bundle) -> Mapping[str, Any]:
    steps = _rows(bundle.get("steps"))
    return steps[-1] if steps else {}


def inspector_view(bundle: Bundle, *, open_inspector: bool = False) -> dict[str, Any]:
    """What the inspector template shows, shaped from the bundle."""
    steps = _rows(bundle.get("steps"))
    compact = bool(bundle.get("compact"))
    shown: list[dict[str, Any]] = []
    earlier_in_trace = 0
    if steps and compact:
        # The notebook's copy: the last LLM call, the messages the builder changed; the rest is in the trace.
        title = "Context decisions" + (f" · LLM call {len(steps)} of {len(steps)}" if len(steps) > 1 else "")
        shown.append({"title": title, "earlier": False,
                      "table": decision_table_view(steps[-1], changed_only=True, bundle=bundle)})
        earlier_in_trace = len(steps) - 1
    else:
        for number, step in enumerate(steps):
            title = "Context decisions" + (f" · LLM call {number + 1} of {len(steps)}" if len(steps) > 1 else "")
            shown.append({"title": title, "earlier": number + 1 < len(steps),
                          "table": decision_table_view(step, bundle=bundle)})
    tiers = _map(bundle.get("tiers"))
    tier_rows = [(name, _rows(tiers.get(name))) for name in ("active", "soft", "hard")]
    return {
        "open": open_inspector,
        "summary": _summary(bundle),
        "meta": _meta(bundle),
        "steps": shown,
        "budget": budget_view(steps[-1]) if steps else None,
        "earlier_in_trace": earlier_in_trace,
        "tool_calls": _rows(bundle.get("tool_calls")),
        "primitives": _rows(bundle.get("primitives")),
        "pins": _rows(bundle.get("pins")),
        "tiers": tier_rows if any(rows for _, rows in tier_rows) else [],
        "standing": _rows(bundle.get("standing")),
        "memories": _rows(bundle.get("memories")),
    }


def inspector_html(bundle: Bundle, *, open_inspector: bool = False) -> str:
    """The collapsible inspector: budget, decisions, primitives, pins, standing instructions, tiers, memories."""
    return render_macro(T, "inspector", inspector_view(bundle, open_inspector=open_inspector))


def _meta(bundle: Bundle) -> list[tuple[str, Any]]:
    items = [
        ("run", bundle.get("run_id")),
        ("model", bundle.get("model")),
        ("latency", latency_text(bundle)),
        ("cost", cost_text(bundle.get("cost_usd")) if bundle.get("cost_usd") is not None else None),
        ("trace", bundle.get("trace_path")),
    ]
    return [(k, v) for k, v in items if v not in (None, "")]


def latency_text(bundle: Bundle) -> str | None:
    """The turn's latency and how it splits: ``1,234 ms (model 1,100 ms, runtime 134 ms)``."""
    total, model = bundle.get("latency_ms"), bundle.get("model_latency_ms")
    if not isinstance(total, int | float):
        return None
    if not isinstance(model, int | float):
        return ms_text(total)
    return f"{ms_text(total)} (model {ms_text(model)}, runtime {ms_text(max(0.0, total - model))})"


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def budget_view(step: Mapping[str, Any]) -> dict[str, Any]:
    """Two bars: the prompt by layer against the window, and the input by outcome."""
    report = _map(step.get("report"))
    budget = _map(step.get("budget"))
    decisions = _rows(get(step, "decision", "decisions", default=[]))
    available = _int(budget.get("available"))
    used = _int(budget.get("used") or report.get("total_after"))
    layers = [(str(layer.get("layer", "?")), _int(layer.get("tokens_after")),
               LAYER_COLORS.get(str(layer.get("layer")), "#888"))
              for layer in _rows(report.get("layers"))]
    if report.get("tools_tokens"):
        layers.append(("tools", _int(report["tools_tokens"]), LAYER_COLORS["tools"]))
    free = max(0, available - used)
    by_outcome: dict[str, list[int]] = {}
    for d in decisions:
        entry = by_outcome.setdefault(str(d.get("outcome")), [0, 0, 0])
        entry[0] += 1
        entry[1] += _int(d.get("token_count_before"))
        entry[2] += _int(d.get("token_count_after"))
    total_before = sum(v[1] for v in by_outcome.values())
    return {
        "window": _int(budget.get("total_window") or available or used),
        "reserve": _int(budget.get("response_reserve")),
        "used": used, "available": available, "free": free, "prefix": report.get("prefix_tokens_reused"),
        "prefix_share": report.get("prefix_share") if isinstance(report.get("prefix_share"), int | float) else None,
        "overflow": bool(budget.get("overflow")),
        "layers": [*layers, ("free", free, "rgba(127,127,127,0)")], "layer_total": max(available, used),
        "outcomes": [(f"{name} ({by_outcome[name][0]} msg)", by_outcome[name][1], color)
                     for name, color in OUTCOME_COLORS.items() if name in by_outcome],
        "total_before": total_before,
        "explain": [str(x) for x in step.get("explain") or ()] if isinstance(step.get("explain"), list) else [],
    }


def budget_html(step: Mapping[str, Any]) -> str:
    return render_macro(T, "budget", budget_view(step))


def _in_trace_cell(decision: Mapping[str, Any], where: Mapping[str, Any] | None) -> dict[str, str]:
    """A message the notebook's copy leaves out because it was sent exactly as the trace records it:
    its text when the bundle has it anyway (the input, a pin's content), else where to read it."""
    where = where or {}
    source = str(decision.get("source") or "history")
    if source == "input" and isinstance(where.get("input"), str):
        return {"kind": "text", "text": clip(str(where["input"]))}
    if source == "pin":
        for pin in _rows(where.get("pins")):
            if pin.get("pin_id") == decision.get("section") and isinstance(pin.get("content"), str):
                return {"kind": "text", "text": clip(str(pin["content"]))}
    trace = where.get("trace_path")
    turn, step = where.get("turn"), where.get("step")
    what = (f"message {decision.get('index')}" + (f" (turn {decision['turn']})" if decision.get("turn") else "")
            if source == "history" else f"the {source_label(decision)} message")
    text = f"sent verbatim: {what}; its text is in the trace" + (f" {trace}" if trace else "")
    if where.get("run_id") and isinstance(turn, int):
        text += (f" (arcana trace replay {where['run_id']} --turn {turn}" + (f" --step {step}" if step else "")
                 + " --prompt-only, or open the inspector with the extension)")
    return {"kind": "note", "text": text}


def _message_cell(decision: Mapping[str, Any], sent: Sequence[Any],
                  where: Mapping[str, Any] | None = None) -> dict[str, str]:
    position = decision.get("position")
    if isinstance(position, int) and 0 <= position < len(sent) and isinstance(sent[position], Mapping):
        content = sent[position].get("content")
        if content is None:
            if sent[position].get("in_trace"):
                return _in_trace_cell(decision, where)
            return {"kind": "note", "text": "content not recorded"}
        text = str(content)
        calls = sent[position].get("tool_calls")
        if calls:
            text += ("\n" if text else "") + "tool calls: " + json_text(calls)
        return {"kind": "text", "text": clip(text)}
    if decision.get("outcome") in ("dropped", "summarized"):
        return {"kind": "note", "text": "not sent"}
    return {"kind": "note", "text": "not recorded"}


def _row(d: Mapping[str, Any], cell: dict[str, Any] | None) -> dict[str, Any]:
    return {"d": d, "cell": cell, "flag": row_flag(d), "source": source_label(d), "outcome": outcome_label(d)}


def _unchanged(d: Mapping[str, Any]) -> bool:
    """A history message sent verbatim, in place, for no special reason."""
    return (d.get("outcome") == "kept" and d.get("fidelity") in ("L0", None) and not d.get("pinned")
            and not d.get("recalled") and (d.get("source") or "history") in ("history", "input"))


GROUP_MIN = 4
"""Runs of at least this many consecutive rows decided alike are one line in a grouped table."""


def _group_key(d: Mapping[str, Any]) -> tuple[Any, ...]:
    return (d.get("outcome"), d.get("fidelity"), d.get("reason"), d.get("source") or "history", d.get("layer"),
            bool(d.get("pinned")), bool(d.get("recalled")))


def _grouped(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs of :data:`GROUP_MIN` or more rows with the same outcome, fidelity, reason, source and layer
    become one ``{"group": ...}`` row: a long run's table stays as long as its decisions are varied."""
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(rows):
        key = _group_key(rows[i]["d"])
        j = i + 1
        while j < len(rows) and _group_key(rows[j]["d"]) == key:
            j += 1
        if j - i >= GROUP_MIN:
            run = [r["d"] for r in rows[i:j]]
            first = run[0]
            out.append({"group": {
                "first": first.get("index"), "last": run[-1].get("index"), "count": j - i,
                "roles": ", ".join(sorted({str(d.get("role")) for d in run})), "outcome": first.get("outcome"),
                "fidelity": first.get("fidelity"), "reason": first.get("reason"),
                "source": first.get("source") or "history", "layer": first.get("layer"),
                "before": sum(_int(d.get("token_count_before")) for d in run),
                "after": sum(_int(d.get("token_count_after")) for d in run),
            }})
        else:
            out.extend(rows[i:j])
        i = j
    return out


def decision_table_view(step: Mapping[str, Any], *, changed_only: bool = False, grouped: bool = False,
                        bundle: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The per-message decision table with each sent message's text on demand.

    ``changed_only``: only the messages the builder did something to (compressed, dropped,
    summarised, pinned, recalled, sections), then one line for the rest (the notebook's copy).
    ``grouped``: runs of rows decided alike as one line each, without the messages' text (the
    report's replay: the prompt is shown beside it, and a long run has thousands of rows per turn).
    ``bundle``: the turn bundle the step is from; a message its compact copy leaves to the trace
    (sent verbatim) shows the text the bundle has anyway (the input, a pin) or where the trace has it.
    """
    decision = _map(step.get("decision"))
    sent = step.get("messages") if isinstance(step.get("messages"), list) else []
    everything = _rows(decision.get("decisions"))
    shown = [d for d in everything if not (changed_only and _unchanged(d))]
    rest = None
    if changed_only and len(shown) < len(everything):
        same = [d for d in everything if _unchanged(d)]
        rest = {"count": len(same), "tokens": sum(_int(d.get("token_count_after")) for d in same)}
    notes = decision.get("notes")
    where: dict[str, Any] = {}
    if bundle is not None:
        where = {"input": bundle.get("input"), "pins": bundle.get("pins"), "trace_path": bundle.get("trace_path"),
                 "run_id": bundle.get("run_id"), "turn": bundle.get("turn"), "step": step.get("step")}
    return {
        "strategy": decision.get("strategy"), "requested": decision.get("requested_strategy"),
        "utilization": decision.get("utilization_before"), "digest": step.get("request_digest") or "–",
        "notes": [str(n) for n in notes] if isinstance(notes, list) else [],
        "summary": decision.get("summary"),
        "rows": _grouped([_row(d, None) for d in shown]) if grouped
        else [_row(d, _message_cell(d, sent or [], where)) for d in shown],
        "rest": rest,
        "trace_path": where.get("trace_path"),
        "counting": counting_text(step.get("counting")),
    }


def counting_text(counting: Any) -> str:
    """How a step's prompt was counted, in one line (the same words as the labextension's ``fmtCounting``)."""
    if not isinstance(counting, Mapping):
        return ""
    parts = []
    encoding = counting.get("encoding")
    if isinstance(encoding, str) and encoding:
        parts.append(f"counted with the model's own tokenizer ({encoding[5:].rsplit('/', 1)[-1]})"
                     if encoding.startswith("gguf:") else f"counted with {encoding}")
    counted, reported = counting.get("counted"), counting.get("reported")
    if isinstance(counted, int) and isinstance(reported, int) and counted != reported:
        parts.append(f"the model counted {reported:,} for {counted:,}")
    ratio = counting.get("ratio")
    if isinstance(ratio, int | float) and ratio > 1:
        parts.append(f"budget calibrated ×{ratio:.3f}")
    return " · ".join(parts)


def decision_table_html(step: Mapping[str, Any], *, changed_only: bool = False) -> str:
    return render_macro(T, "decision_table", decision_table_view(step, changed_only=changed_only))


def tool_calls_html(calls: Sequence[Mapping[str, Any]]) -> str:
    return render_macro(T, "tool_calls", _rows(list(calls)))


def primitives_html(primitives: Sequence[Mapping[str, Any]]) -> str:
    return render_macro(T, "primitives", _rows(list(primitives)))


def pins_html(pins: Sequence[Mapping[str, Any]], *, title: str = "Active pins") -> str:
    return render_macro(T, "pins", _rows(list(pins)), title)


def streaming_html(partial: str, *, note: str = "generating…", include_style: bool = True,
                   limit: int = MAX_MARKDOWN_CHARS // 4) -> str:
    """The reply while it streams in, with a small progress note under it.

    Rendered again on every update, so a reply longer than ``limit`` is shown as text until it ends.
    """
    html = render_macro(T, "streaming", partial, note, "", limit)
    return (turn_style_block(html) + html) if include_style else html


def notice_html(message: str, *, kind: str = "info") -> str:
    """A short message in a cell (session started, an error the user can fix...)."""
    # Inline styles, not the stylesheet: a one-line notice should not cost 6 KB of notebook.
    return render_macro(T, "notice", message, kind)


def sessions_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """The ``%arcana_status`` table: one row per chat session of the notebook."""
    if not rows:
        return notice_html("No arcana session yet: start one with %arcana_chat.")
    return render_macro(T, "sessions", _rows(list(rows)), CSS)
