"""The static view of one turn (docs/TURN_BUNDLE.md): the reply, then a collapsed inspector.

Used for the ``text/html`` of every turn bundle, inside the live widget, and in the report. It
reads the bundle as plain JSON data and treats every string in it as text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._html import (
    clip,
    esc,
    fmt_cost,
    fmt_int,
    fmt_ms,
    fmt_score,
    get,
    json_preview,
    json_text,
    pill,
    table,
)
from .markdown import markdown_to_html
from .styles import CSS, LAYER_COLORS, OUTCOME_COLORS, style_block

Bundle = Mapping[str, Any]


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


def turn_style_block() -> str:
    """The stylesheet without the rules of replays, charts and reports (a turn's output carries its
    own copy: 4.1 KB instead of 5.9 KB per turn in the notebook)."""
    rules = [line for line in CSS.strip().splitlines() if not line.startswith(_NOT_IN_A_TURN)]
    return "<style>\n" + "\n".join(rules) + "\n</style>"


def turn_html(bundle: Bundle, *, open_inspector: bool = False, include_style: bool = True) -> str:
    """The whole static turn view: reply (Markdown), errors, and the inspector."""
    parts = [turn_style_block()] if include_style else []
    parts.append('<div class="arcana arcana-turn">')
    parts.append(reply_html(bundle))
    parts.append(inspector_html(bundle, open_inspector=open_inspector))
    parts.append("</div>")
    return "".join(parts)


def reply_html(bundle: Bundle) -> str:
    out = [f'<div class="arcana-reply">{markdown_to_html(bundle.get("reply") or "")}</div>']
    for error in bundle.get("errors") or []:
        out.append(
            '<div class="arcana-error-box"><b>'
            + esc(error.get("type") or "Error")
            + "</b>: "
            + esc(error.get("message") or "")
            + (f' <span class="arcana-muted">({esc(error.get("where"))})</span>' if error.get("where") else "")
            + "</div>"
        )
    return "".join(out)


def usage_text(bundle: Bundle) -> str:
    """``this turn: 1,234 in / 56 out tokens, $0.0012 · session: 3 turns, 4,567 in / 89 out, $0.0040``."""
    usage = bundle.get("usage") or {}
    cost = bundle.get("cost_usd")
    text = (f"this turn: {fmt_int(usage.get('input_tokens') or 0)} in / {fmt_int(usage.get('output_tokens') or 0)} out tokens"
            f", {fmt_cost(cost if cost is not None else 0.0)}")
    session = bundle.get("session")
    if isinstance(session, Mapping):
        turns = int(session.get("turns") or 0)
        text += (f" · session: {turns} turn{'s' if turns != 1 else ''}, {fmt_int(session.get('input_tokens') or 0)} in / "
                 f"{fmt_int(session.get('output_tokens') or 0)} out, {fmt_cost(session.get('cost_usd') or 0.0)}")
    return text


def summary_line(bundle: Bundle) -> str:
    """The one-line header of the inspector (also its ``<summary>``)."""
    usage = bundle.get("usage") or {}
    steps = bundle.get("steps") or []
    last = steps[-1] if steps else {}
    strategy = get(last, "decision", "strategy")
    utilization = get(last, "budget", "utilization")
    bits = [
        f"<b>arcana</b> {esc(bundle.get('agent') or 'main')} · turn {esc(bundle.get('turn'))}",
        pill(str(bundle.get("status") or "?"), str(bundle.get("status") or "unknown")),
        esc(usage_text(bundle)),
    ]
    if usage.get("cached_input_tokens"):
        bits.append(f"{fmt_int(usage.get('cached_input_tokens'))} cached")
    if strategy:
        bits.append(f"strategy {esc(strategy)}")
    if isinstance(utilization, int | float):
        bits.append(f"window {utilization:.0%} used")
    if bundle.get("primitives"):
        bits.append(f"{len(bundle['primitives'])} primitive call(s)")
    if bundle.get("pins"):
        bits.append(f"{len(bundle['pins'])} pin(s)")
    return "".join(f"<span>{b}</span>" for b in bits)


def inspector_html(bundle: Bundle, *, open_inspector: bool = False) -> str:
    """The collapsible inspector: budget, decisions, primitives, pins, tiers, memories."""
    body = [meta_html(bundle)]
    steps = bundle.get("steps") or []
    compact = bool(bundle.get("compact"))
    if steps and compact:
        # The notebook's copy: the last LLM call, the messages the builder changed; the rest is in the trace.
        body.append(budget_html(steps[-1]))
        title = "Context decisions" + (f" · LLM call {len(steps)} of {len(steps)}" if len(steps) > 1 else "")
        body.append(f'<h4 class="arcana-h">{esc(title)}</h4>')
        body.append(decision_table_html(steps[-1], changed_only=True))
        if len(steps) > 1:
            body.append(f'<div class="arcana-muted">The {len(steps) - 1} earlier LLM call(s) of the tool loop: in the trace.</div>')
    elif steps:
        body.append(budget_html(steps[-1]))
        for number, step in enumerate(steps):
            title = "Context decisions"
            if len(steps) > 1:
                title += f" · LLM call {number + 1} of {len(steps)}"
            if number + 1 < len(steps):  # earlier calls of the tool loop: on demand
                body.append(
                    f'<details><summary class="arcana-h" style="cursor:pointer;font-size:12px;opacity:.8">{esc(title)} '
                    f"(before a tool call)</summary>{decision_table_html(step)}</details>"
                )
                continue
            body.append(f'<h4 class="arcana-h">{esc(title)}</h4>')
            body.append(decision_table_html(step))
    else:
        body.append('<div class="arcana-empty">No context decision recorded yet.</div>')
    body.append(tool_calls_html(bundle.get("tool_calls") or []))
    body.append(primitives_html(bundle.get("primitives") or []))
    body.append(pins_html(bundle.get("pins") or []))
    body.append(tiers_html(bundle.get("tiers") or {}))
    body.append(memories_html(bundle.get("memories") or []))
    opened = " open" if open_inspector else ""
    return (
        f'<details class="arcana-inspector"{opened}><summary>{summary_line(bundle)}</summary>'
        f'<div class="arcana-body">{"".join(body)}</div></details>'
    )


def meta_html(bundle: Bundle) -> str:
    items = [
        ("run", bundle.get("run_id")),
        ("model", bundle.get("model")),
        ("latency", fmt_ms(bundle.get("latency_ms")) if bundle.get("latency_ms") is not None else None),
        ("cost", fmt_cost(bundle.get("cost_usd")) if bundle.get("cost_usd") is not None else None),
        ("trace", bundle.get("trace_path")),
    ]
    spans = [f"<span>{esc(k)} <b>{esc(v)}</b></span>" for k, v in items if v not in (None, "")]
    return f'<div class="arcana-meta">{"".join(spans)}</div>'


def _bar(segments: Sequence[tuple[str, int, str]], total: int, label: str) -> str:
    total = max(total, 1)
    spans = []
    legend = []
    for name, tokens, color in segments:
        if tokens <= 0:
            continue
        width = 100.0 * tokens / total
        spans.append(
            f'<span style="width:{width:.3f}%;background:{esc(color)}" title="{esc(name)}: {tokens:,} tokens"></span>'
        )
        legend.append(f'<span><i style="background:{esc(color)}"></i>{esc(name)} {tokens:,}</span>')
    return (
        f'<div class="arcana-barlabel">{label}</div>'
        f'<div class="arcana-bar">{"".join(spans)}</div>'
        f'<div class="arcana-legend">{"".join(legend)}</div>'
    )


def budget_html(step: Mapping[str, Any]) -> str:
    """Two bars: the prompt by layer against the window, and the input by outcome."""
    report = step.get("report") or {}
    budget = step.get("budget") or {}
    decisions = get(step, "decision", "decisions", default=[]) or []
    available = int(budget.get("available") or 0)
    used = int(budget.get("used") or report.get("total_after") or 0)
    layers = [
        (layer.get("layer", "?"), int(layer.get("tokens_after") or 0), LAYER_COLORS.get(layer.get("layer"), "#888"))
        for layer in report.get("layers") or []
    ]
    if report.get("tools_tokens"):
        layers.append(("tools", int(report["tools_tokens"]), LAYER_COLORS["tools"]))
    window = int(budget.get("total_window") or available or used)
    reserve = int(budget.get("response_reserve") or 0)
    free = max(0, available - used)
    head = (
        f'<h4 class="arcana-h">Token budget</h4><div class="arcana-meta">'
        f"<span>window <b>{fmt_int(window)}</b></span><span>reserved for reply <b>{fmt_int(reserve)}</b></span>"
        f"<span>prompt <b>{fmt_int(used)}</b> of {fmt_int(available)}</span><span>free <b>{fmt_int(free)}</b></span>"
    )
    if report.get("prefix_tokens_reused") is not None:
        head += f"<span>prefix reused <b>{fmt_int(report.get('prefix_tokens_reused'))}</b></span>"
    if budget.get("overflow"):
        head += f"<span>{pill('overflow', 'error')}</span>"
    head += "</div>"
    by_layer = _bar([*layers, ("free", free, "rgba(127,127,127,0)")], max(available, used), "Prompt by layer")
    by_outcome: dict[str, list[int]] = {}
    for d in decisions:
        entry = by_outcome.setdefault(str(d.get("outcome")), [0, 0, 0])
        entry[0] += 1
        entry[1] += int(d.get("token_count_before") or 0)
        entry[2] += int(d.get("token_count_after") or 0)
    total_before = sum(v[1] for v in by_outcome.values())
    segments = [
        (f"{name} ({by_outcome[name][0]} msg)", by_outcome[name][1], color)
        for name, color in OUTCOME_COLORS.items()
        if name in by_outcome
    ]
    outcome_bar = _bar(segments, total_before, f"Input by outcome ({total_before:,} tokens before → {used:,} sent)")
    return head + by_layer + outcome_bar


def _message_cell(decision: Mapping[str, Any], sent: Sequence[Mapping[str, Any]]) -> str:
    position = decision.get("position")
    if isinstance(position, int) and 0 <= position < len(sent):
        content = sent[position].get("content")
        if content is None:
            if sent[position].get("in_trace"):
                return '<span class="arcana-muted">in the trace</span>'
            return '<span class="arcana-muted">content not recorded</span>'
        text = str(content)
        calls = sent[position].get("tool_calls")
        if calls:
            text += ("\n" if text else "") + "tool calls: " + json_text(calls)
        return f"<details><summary>show</summary><pre>{esc(clip(text))}</pre></details>"
    if decision.get("outcome") in ("dropped", "summarized"):
        return '<span class="arcana-muted">not sent</span>'
    return '<span class="arcana-muted">not recorded</span>'


def _unchanged(d: Mapping[str, Any]) -> bool:
    """A history message sent verbatim, in place, for no special reason."""
    return (d.get("outcome") == "kept" and d.get("fidelity") in ("L0", None) and not d.get("pinned")
            and not d.get("recalled") and (d.get("source") or "history") in ("history", "input"))


def decision_table_html(step: Mapping[str, Any], *, changed_only: bool = False) -> str:
    """The per-message decision table with each sent message's text on demand.

    ``changed_only``: only the messages the builder did something to (compressed, dropped,
    summarised, pinned, recalled, sections), then one line for the rest (the notebook's copy).
    """
    decision = step.get("decision") or {}
    rows = []
    sent = step.get("messages") or []
    everything = decision.get("decisions") or []
    shown = [d for d in everything if not (changed_only and _unchanged(d))]
    for d in shown:
        source = d.get("source") or "history"
        where = esc(source)
        if d.get("section"):
            where += f":{esc(d.get('section'))}"
        if d.get("pinned"):
            where += " <span class='arcana-muted'>(pinned)</span>"
        fidelity = d.get("fidelity") or ""
        rows.append(
            [
                (esc(d.get("index")), "num"),
                esc(d.get("role")),
                pill(str(d.get("outcome")), str(d.get("outcome"))),
                esc(fidelity),
                (f"{fmt_int(d.get('token_count_before'))} → {fmt_int(d.get('token_count_after'))}", "nowrap"),
                f"<code>{esc(d.get('reason'))}</code>",
                fmt_score(d.get("relevance_score")),
                f"{where}<br><span class='arcana-muted'>{esc(d.get('layer') or '')}</span>",
                _message_cell(d, sent),
            ]
        )
    head = (
        f'<div class="arcana-meta"><span>strategy <b>{esc(decision.get("strategy"))}</b>'
        f" (asked {esc(decision.get('requested_strategy'))})</span>"
        f"<span>utilisation before <b>{fmt_score(decision.get('utilization_before'))}</b></span>"
        f"<span>digest <code>{esc(step.get('request_digest') or '–')}</code></span></div>"
    )
    notes = decision.get("notes") or []
    if notes:
        head += '<div class="arcana-muted">' + "; ".join(esc(n) for n in notes) + "</div>"
    if decision.get("summary"):
        head += f"<details><summary>summary used</summary><pre>{esc(clip(decision['summary']))}</pre></details>"
    rest = ""
    if changed_only and len(shown) < len(everything):
        same = [d for d in everything if _unchanged(d)]
        rest = (f'<div class="arcana-muted">{len(same)} message(s) sent verbatim '
                f"({fmt_int(sum(int(d.get('token_count_after') or 0) for d in same))} tokens): listed in the trace.</div>")
    if not rows:
        return head + (rest or '<div class="arcana-empty">No messages.</div>')
    return head + table(
        ["#", "role", "outcome", "fidelity", "tokens", "reason", "score", "source", "message"], rows
    ) + rest


def tool_calls_html(calls: Sequence[Mapping[str, Any]]) -> str:
    if not calls:
        return ""
    rows = [
        [
            f"<code>{esc(c.get('name'))}</code>" + (" <span class='arcana-muted'>runtime</span>" if c.get("intercepted") else ""),
            pill("ok" if c.get("ok") else "error", "ok" if c.get("ok") else "error"),
            f"<code>{json_preview(c.get('arguments'), 300)}</code>",
            f"<details><summary>{esc(clip(str(c.get('result') or ''), 60))}</summary><pre>{json_preview(c.get('result'), 3000)}</pre></details>",
        ]
        for c in calls
    ]
    return '<h4 class="arcana-h">Tool calls</h4>' + table(["tool", "", "arguments", "result"], rows)


def primitives_html(primitives: Sequence[Mapping[str, Any]]) -> str:
    head = '<h4 class="arcana-h">Primitive calls</h4>'
    if not primitives:
        return head + '<div class="arcana-empty">None this turn.</div>'
    rows = [
        [
            f"<code>{esc(p.get('primitive'))}</code>",
            f"<code>{json_preview(p.get('args'), 300)}</code>",
            f"<details><summary>{esc(clip(json_preview(p.get('result'), 2000), 70))}</summary><pre>{json_preview(p.get('result'), 4000)}</pre></details>",
        ]
        for p in primitives
    ]
    return head + table(["primitive", "arguments", "result"], rows)


def pins_html(pins: Sequence[Mapping[str, Any]]) -> str:
    head = '<h4 class="arcana-h">Active pins</h4>'
    if not pins:
        return head + '<div class="arcana-empty">No active pins.</div>'
    rows = [
        [
            f"<code>{esc(p.get('pin_id'))}</code>",
            esc(p.get("label") or ""),
            f"<details><summary>{esc(clip(str(p.get('content') or ''), 70))}</summary><pre>{esc(clip(str(p.get('content') or '')))}</pre></details>",
            (fmt_int(p.get("tokens")), "num"),
            esc(p.get("created_turn") if p.get("created_turn") is not None else ""),
            esc(p.get("until_turn") if p.get("until_turn") is not None else "∞"),
        ]
        for p in pins
    ]
    return head + table(["pin", "label", "content", "tokens", "since turn", "until turn"], rows)


def tiers_html(tiers: Mapping[str, Any]) -> str:
    head = '<h4 class="arcana-h">Adaptive context</h4>'
    if not any(tiers.get(t) for t in ("active", "soft", "hard")):
        return head + '<div class="arcana-empty">No state objects (classic mode or nothing tracked yet).</div>'
    cards = []
    for tier in ("active", "soft", "hard"):
        objects = tiers.get(tier) or []
        items = []
        for obj in objects:
            flags = []
            if obj.get("focused"):
                flags.append(pill("focused", "running"))
            if obj.get("retracted"):
                flags.append(pill("retracted", "dropped"))
            items.append(
                f'<div class="arcana-tier"><code>{esc(obj.get("id"))}</code> {pill(str(obj.get("kind")), "unknown")} '
                f"{esc(clip(str(obj.get('summary') or ''), 160))} {''.join(flags)}"
                f' <span class="arcana-muted">touched turn {esc(obj.get("last_touched_turn"))}</span></div>'
            )
        body = "".join(items) or '<div class="arcana-empty">empty</div>'
        cards.append(f'<div class="arcana-card"><h5>{esc(tier)} ({len(objects)})</h5>{body}</div>')
    return head + f'<div class="arcana-grid">{"".join(cards)}</div>'


def memories_html(memories: Sequence[Mapping[str, Any]]) -> str:
    head = '<h4 class="arcana-h">Memories recalled</h4>'
    if not memories:
        return head + '<div class="arcana-empty">None recalled this turn.</div>'
    rows = [
        [
            f"<code>{esc(m.get('id'))}</code>",
            pill(str(m.get("kind")), "unknown"),
            esc(m.get("scope") or ""),
            (fmt_score(m.get("score")), "num"),
            esc(clip(str(m.get("content") or ""), 400)),
        ]
        for m in memories
    ]
    return head + table(["id", "kind", "scope", "score", "content"], rows)


def streaming_html(partial: str, *, note: str = "generating…", include_style: bool = True) -> str:
    """The reply while it streams in, with a small progress note under it."""
    return (
        (turn_style_block() if include_style else "")
        + '<div class="arcana arcana-turn">'
        + f'<div class="arcana-reply">{markdown_to_html(partial)}</div>'
        + f'<div class="arcana-meta"><span>{pill(note, "running")}</span></div></div>'
    )


def notice_html(message: str, *, kind: str = "info") -> str:
    """A short message in a cell (session started, an error the user can fix...)."""
    # Inline styles, not the stylesheet: a one-line notice should not cost 6 KB of notebook.
    if kind == "error":
        style = "border:1px solid rgba(208,73,63,.6);background:rgba(208,73,63,.1);border-radius:6px;padding:6px 10px;margin:4px 0"
        box = "arcana-error-box"
    else:
        style = "opacity:.78;font-size:12px;margin:2px 0 4px 0"
        box = "arcana-meta"
    return f'<div class="arcana"><div class="{box}" style="{style}">{esc(message)}</div></div>'


def sessions_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """The ``%arcana_status`` table: one row per chat session of the notebook."""
    if not rows:
        return notice_html("No arcana session yet: start one with %arcana_chat.")
    body = [
        [
            esc(r.get("name")) + (" <span class='arcana-muted'>(default)</span>" if r.get("default") else ""),
            f"<code>{esc(r.get('run_id'))}</code>",
            esc(r.get("model")),
            (fmt_int(r.get("turns")), "num"),
            (fmt_int(r.get("input_tokens")), "num"),
            (fmt_int(r.get("output_tokens")), "num"),
            (fmt_cost(r.get("cost_usd")), "num"),
            esc(r.get("mode") or ""),
            f"<code>{esc(r.get('trace_path'))}</code>",
        ]
        for r in rows
    ]
    return style_block() + '<div class="arcana">' + table(
        ["session", "run", "model", "turns", "in", "out", "cost", "context", "trace"], body
    ) + "</div>"
