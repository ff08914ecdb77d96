"""The replay view: one precomputed frame per turn and a scrubber that needs no kernel and no script.

The scrubber is a row of radio buttons (one per turn) and CSS ``:checked`` rules that show the
selected frame: it works in JupyterLab, in nbconvert / report HTML opened from disk, and where CSS
is stripped (GitHub) every frame is simply shown one after another.

A frame is plain data (built by ``arcana_jupyter.jupyter.replay`` from a trace)::

    {"run_id", "agent", "turn", "input", "reply", "status", "usage",
     "step": {decision, report, budget, request_digest, messages},   # the turn's last LLM call
     "prompt_source": "snapshot" | "rebuilt" | "recorded" | None,
     "digest_verified": True | False | None, "digest_note": str,
     "pins": [...], "diff": [{"index", "role", "source", "change", "before", "after"}]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._html import clip, css_ident, esc, fmt_cost, fmt_int, get, json_text, pill, table
from .markdown import markdown_to_html
from .styles import style_block
from .turn import budget_html, decision_table_html, pins_html

Frame = Mapping[str, Any]


def digest_mark(frame: Frame) -> str:
    verified = frame.get("digest_verified")
    note = frame.get("digest_note") or ""
    if verified is True:
        return pill("✓ digest verified", "verified") + (f' <span class="arcana-muted">{esc(note)}</span>' if note else "")
    if verified is False:
        return pill("✗ digest mismatch", "mismatch") + (f' <span class="arcana-muted">{esc(note)}</span>' if note else "")
    return pill("digest not checked", "unknown") + (f' <span class="arcana-muted">{esc(note)}</span>' if note else "")


def prompt_html(messages: Sequence[Mapping[str, Any]], source: str | None) -> str:
    """The prompt as sent, one block per message."""
    label = {
        "snapshot": "prompt snapshot (recorded as sent)",
        "rebuilt": "rebuilt from the transcript",
        "recorded": "recorded in the turn bundle",
    }.get(source or "", "not available")
    if not messages:
        return f'<div class="arcana-empty">Prompt {esc(label)}.</div>'
    blocks = []
    for number, message in enumerate(messages):
        role = str(message.get("role") or "?")
        content = message.get("content")
        text = "[content not recorded]" if content is None else str(content)
        if message.get("tool_calls"):
            text += ("\n" if text else "") + "tool calls: " + json_text(message.get("tool_calls"))
        blocks.append(
            f'<div class="arcana-msg arcana-msg-{css_ident(role)}"><span class="arcana-role">{number} · {esc(role)}'
            f"{' · ' + esc(message.get('name')) if message.get('name') else ''}</span>"
            f"<pre>{esc(clip(text, 3000))}</pre></div>"
        )
    return f'<div class="arcana-muted" style="font-size:11.5px">{len(messages)} messages, {esc(label)}</div>' + "".join(blocks)


def diff_html(diff: Sequence[Mapping[str, Any]], turn: Any) -> str:
    """Which input messages changed outcome or fidelity since the previous turn."""
    if not diff:
        return '<div class="arcana-empty">No earlier message changed outcome or fidelity.</div>'

    def state(value: Mapping[str, Any] | None) -> str:
        if not value:
            return '<span class="arcana-muted">–</span>'
        return f"{pill(str(value.get('outcome')), str(value.get('outcome')))} {esc(value.get('fidelity') or '')} <span class='arcana-muted'>{fmt_int(value.get('tokens'))} tok</span>"

    rows = [
        [
            (esc(d.get("index")), "num"),
            esc(d.get("role")),
            esc(d.get("source") or "history"),
            esc(d.get("change")),
            state(d.get("before")),
            state(d.get("after")),
        ]
        for d in diff
    ]
    if isinstance(turn, str):
        return table(["#", "role", "source", "change", "as sent", turn], rows)
    return table(["#", "role", "source", "change", f"before turn {turn}", f"at turn {turn}"], rows)


def frame_html(frame: Frame) -> str:
    """Everything about one turn: input, reply, budget, decisions, prompt, pins, diff."""
    step = frame.get("step") or {}
    usage = frame.get("usage") or {}
    head = (
        f'<div class="arcana-meta"><span>turn <b>{esc(frame.get("turn"))}</b></span>'
        f"<span>{pill(str(frame.get('status') or '?'), str(frame.get('status') or 'unknown'))}</span>"
        f"<span>{fmt_int(usage.get('input_tokens'))} in / {fmt_int(usage.get('output_tokens'))} out"
        f"{', ' + fmt_cost(frame.get('cost_usd')) if frame.get('cost_usd') is not None else ''}</span>"
        f"<span>{digest_mark(frame)}</span></div>"
    )
    user = frame.get("input")
    convo = (
        '<div class="arcana-msg arcana-msg-user"><span class="arcana-role">user</span>'
        f"<pre>{esc(clip(str(user), 2000)) if user is not None else '[not recorded]'}</pre></div>"
        '<div class="arcana-msg arcana-msg-assistant"><span class="arcana-role">assistant</span>'
        f'<div class="arcana-reply">{markdown_to_html(frame.get("reply") or "")}</div></div>'
    )
    parts = [head, convo]
    if step:
        compact = frame.get("prompt_source") == "trace"
        if not compact:
            parts.append(budget_html(step))
        else:
            budget = step.get("budget") or {}
            parts.append(f'<div class="arcana-meta"><span>prompt <b>{fmt_int(budget.get("used"))}</b> of '
                         f'{fmt_int(budget.get("available"))} tokens</span></div>')
        if compact:
            # The notebook's copy: counts here; each turn's output and the trace have the rows.
            counts: dict[str, int] = {}
            for d in get(step, "decision", "decisions", default=[]) or []:
                counts[str(d.get("outcome"))] = counts.get(str(d.get("outcome")), 0) + 1
            summary = ", ".join(f"{n} {name}" for name, n in counts.items()) or "none"
            parts.append(f'<div class="arcana-meta"><span>decisions: {esc(summary)} '
                         f'(strategy {esc(get(step, "decision", "strategy"))})</span></div>')
        else:
            parts.append('<h4 class="arcana-h">Decisions</h4>' + decision_table_html(step))
    if frame.get("prompt_source") == "trace":
        parts.append('<div class="arcana-muted">The decision rows and the prompt are in the trace beside the notebook '
                     "(the JupyterLab extension, <code>arcana trace replay</code> and the report show them).</div>")
    else:
        parts.append(
            '<h4 class="arcana-h">Prompt</h4><details><summary>show the prompt</summary>'
            + prompt_html(step.get("messages") or [], frame.get("prompt_source"))
            + "</details>"
        )
    if frame.get("pins") or frame.get("prompt_source") != "trace":
        parts.append(pins_html(frame.get("pins") or []).replace("Active pins", "Pins active at this turn"))
    new = frame.get("new_messages") or []
    added = ""
    if new:
        items = ", ".join(f"#{esc(m.get('index'))} {esc(m.get('role'))} ({esc(m.get('outcome'))})" for m in new)
        added = f'<div class="arcana-muted" style="font-size:12px;margin-top:3px">{len(new)} new this turn: {items}</div>'
    parts.append(
        f'<h4 class="arcana-h">Changes since the previous turn</h4>{diff_html(frame.get("diff") or [], frame.get("turn"))}{added}'
    )
    return "".join(parts)


def replay_html(frames: Sequence[Frame], *, uid: str, selected: int | None = None, include_style: bool = True) -> str:
    """A scrubber over ``frames`` that switches with CSS only (no kernel, no JavaScript)."""
    uid = "arcana-rp-" + css_ident(uid)
    if not frames:
        return (style_block() if include_style else "") + '<div class="arcana"><div class="arcana-empty">No turns recorded in this run.</div></div>'
    first = frames[0]
    chosen = selected if selected is not None and 0 <= selected < len(frames) else len(frames) - 1
    rules = [f"#{uid} .arcana-frame{{display:none}}"]
    radios = []
    chips = []
    panels = []
    for n, frame in enumerate(frames):
        rid = f"{uid}-{n}"
        rules.append(f"#{rid}:checked~.arcana-frames>.arcana-f{n}{{display:block}}")
        rules.append(
            f"#{rid}:checked~.arcana-turns label[for={rid}]{{background:rgba(58,123,213,.85);color:#fff;border-color:rgba(58,123,213,1)}}"
        )
        checked = " checked" if n == chosen else ""
        radios.append(f'<input type="radio" name="{uid}" id="{rid}"{checked}>')
        chips.append(f'<label for="{rid}" title="turn {esc(frame.get("turn"))}">{esc(frame.get("turn"))}</label>')
        nav = []
        if n > 0:
            nav.append(f'<label for="{uid}-{n - 1}" class="arcana-nav">◀ turn {esc(frames[n - 1].get("turn"))}</label>')
        if n + 1 < len(frames):
            nav.append(f'<label for="{uid}-{n + 1}" class="arcana-nav">turn {esc(frames[n + 1].get("turn"))} ▶</label>')
        panels.append(
            f'<div class="arcana-frame arcana-f{n}"><div class="arcana-turns">{"".join(nav)}</div>{frame_html(frame)}</div>'
        )
    rules.append(f"#{uid} .arcana-nav{{cursor:pointer;font-size:12px;opacity:.8;border:1px solid rgba(127,127,127,.4);border-radius:12px;padding:1px 9px}}")
    style = f"<style>{''.join(rules)}</style>"
    header = (
        f'<div class="arcana-meta"><span><b>Replay</b></span><span>run <b>{esc(first.get("run_id"))}</b></span>'
        f"<span>agent <b>{esc(first.get('agent') or 'main')}</b></span><span>{len(frames)} turn(s)</span></div>"
    )
    return (
        (style_block() if include_style else "")
        + style
        + f'<div class="arcana arcana-scrub" id="{uid}">{header}{"".join(radios)}'
        + f'<div class="arcana-turns"><span class="arcana-muted" style="font-size:12px">turn</span>{"".join(chips)}<span class="arcana-track"></span></div>'
        + f'<div class="arcana-frames">{"".join(panels)}</div></div>'
    )


def counterfactual_html(recorded: Mapping[str, Any], alternative: Mapping[str, Any], *, label: str) -> str:
    """Side by side: the step that was sent, and the same turn rebuilt under other settings."""

    def column(title: str, step: Mapping[str, Any]) -> str:
        budget = step.get("budget") or {}
        used = budget.get("used")
        strategy = get(step, "decision", "strategy")
        kept = sum(1 for d in get(step, "decision", "decisions", default=[]) or [] if d.get("outcome") == "kept")
        return (
            f'<div class="arcana-card"><h5>{esc(title)}</h5>'
            f'<div class="arcana-meta"><span>strategy <b>{esc(strategy)}</b></span><span>prompt <b>{fmt_int(used)}</b> tokens</span>'
            f"<span>{kept} kept</span></div>"
            + decision_table_html(step)
            + "<details><summary>prompt</summary>"
            + prompt_html(step.get("messages") or [], "rebuilt")
            + "</details></div>"
        )

    return (
        f'<div class="arcana"><div class="arcana-side">{column("as sent", recorded)}{column(label, alternative)}</div></div>'
    )
