"""What a replayed turn is made of, how two decisions differ, and their plain-text rendering.

:class:`PromptReplay` is what :meth:`TraceReader.replay_prompt` returns (seed 003): the recorded
decision, report and budget of one LLM call, the prompt snapshot when snapshots were on, the
request digest and the pins that were active. The ``format_*`` functions render them as the
``arcana trace`` CLI prints them (deterministic, plain text); the HTML renderers use the models.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ..schema.decisions import BudgetSnapshot, ContextDecision, ContextReport, MessageDecision
from ..schema.events import PromptSnapshot
from ..schema.labels import row_flag
from ..schema.pins import Pin


class PromptReplay(BaseModel):
    """Everything recorded about one LLM call (one ``context_decision`` and what belongs to it)."""

    run_id: str
    agent: str
    turn: int
    step: int = 0
    steps: list[int] = Field(default_factory=list)
    """Every step (LLM call) of this turn that has a recorded decision."""
    context_decision: ContextDecision
    context_report: ContextReport | None = None
    budget_snapshot: BudgetSnapshot | None = None
    prompt_snapshot: PromptSnapshot | None = None
    """``None`` when prompt snapshots were off."""
    request_digest: str | None = None
    history_len: int | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)  # JSON edge: DecisionInputs as the trace spells it
    builder: dict[str, Any] = Field(default_factory=dict)  # JSON edge: BuilderSettings as the trace spells it
    tools: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: ToolSpec dumps as recorded
    shape: dict[str, Any] | None = None  # JSON edge: the recorded shaping
    """How the call's prompt was shaped for the model (providers/shaping.py); ``None``: unshaped."""
    active_pins: list[Pin] = Field(default_factory=list)
    llm_call: dict[str, Any] | None = None  # JSON edge: the llm_call metadata as written
    """The metadata of the ``llm_call`` that sent this prompt (usage, finish reasons, response)."""
    decision_event_id: str | None = None


class SentPrompt(BaseModel):
    """One LLM call's prompt as the provider was given it, message by message (wire dicts).

    ``source``: ``prompt_sent`` (the event, the default since it exists), ``snapshot`` (an opt-in
    ``prompt_snapshot``) or ``rebuilt`` (an older trace, rebuilt from its transcript in Python).
    ``verified``: its request digest, recomputed from these messages, equals the one recorded for
    the call. ``masked``: messages holding a secret the trace masked (such a prompt cannot verify)."""

    run_id: str
    agent: str
    turn: int
    step: int = 0
    source: str = "prompt_sent"
    messages: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: wire messages
    tokens: list[int | None] = Field(default_factory=list)
    recorded_digest: str | None = None
    digest: str | None = None
    verified: bool = False
    masked: int = 0
    event_id: str | None = None
    note: str | None = None

    def status(self) -> str:
        """One line: where the prompt comes from and whether it verified."""
        where = {"prompt_sent": "recorded as sent", "snapshot": "from the prompt snapshot",
                 "rebuilt": "rebuilt from the transcript"}.get(self.source, self.source)
        if self.verified:
            return f"{where}; verified (digest {self.recorded_digest})"
        if self.masked:
            return (f"{where}; not verified: {self.masked} message(s) hold secrets the trace masked "
                    f"(digest {self.digest} vs {self.recorded_digest} recorded)")
        if self.recorded_digest is None:
            return f"{where}; no request digest recorded to verify against"
        return f"{where}; NOT verified (digest {self.digest} vs {self.recorded_digest} recorded)"


class MessageDiff(BaseModel):
    """How one message's decision differs between a recorded and another (counterfactual) build."""

    index: int
    role: str
    source: str = "history"
    recorded_outcome: str | None
    recorded_fidelity: str | None
    recorded_tokens: int | None
    other_outcome: str | None
    other_fidelity: str | None
    other_tokens: int | None
    recorded_reason: str | None = None
    other_reason: str | None = None
    recorded_section: str | None = None
    """The section that carries the message on that side (a dropped turn's ``checkpoint``, ``turn_digests``...)."""
    other_section: str | None = None

    @property
    def token_delta(self) -> int:
        return (self.other_tokens or 0) - (self.recorded_tokens or 0)


def decision_key(d: MessageDecision) -> tuple[str, Any]:
    """What makes two decisions' entries the same message: the one matching rule of every decision diff
    (:func:`diff_decisions` here, the replay view's turn-to-turn diff in ``jupyter/replay_frames.py``).

    History messages match by index, and the current input with them (one turn's input is the next
    turn's history message at the same index; within one build the input's index is no history
    message's); pins and sections match by their id / name (their index shifts with the history length).
    """
    if d.source in ("history", "input"):
        return ("message", d.index)
    return (d.source, d.section or d.index)


def diff_decisions(recorded: ContextDecision, other: ContextDecision) -> list[MessageDiff]:
    """Per-message changes from ``recorded`` to ``other`` (outcome, fidelity or tokens).

    Entries are matched by :func:`decision_key`; a difference in tokens alone counts (two builds of
    the same turn). Messages present on one side only are reported with ``None`` on the other.
    """
    left = {decision_key(d): d for d in recorded.decisions}
    right = {decision_key(d): d for d in other.decisions}
    order: list[tuple[str, Any]] = list(left)
    order += [k for k in right if k not in left]
    out: list[MessageDiff] = []
    for key in order:
        a, b = left.get(key), right.get(key)
        if (
            a is not None
            and b is not None
            and (a.outcome, a.fidelity, a.token_count_after) == (b.outcome, b.fidelity, b.token_count_after)
        ):
            continue
        ref = a or b
        assert ref is not None
        out.append(
            MessageDiff(
                index=ref.index,
                role=ref.role,
                source=ref.source,
                recorded_outcome=a.outcome if a else None,
                recorded_fidelity=a.fidelity if a else None,
                recorded_tokens=a.token_count_after if a else None,
                other_outcome=b.outcome if b else None,
                other_fidelity=b.fidelity if b else None,
                other_tokens=b.token_count_after if b else None,
                recorded_reason=a.reason if a else None,
                other_reason=b.reason if b else None,
                recorded_section=a.section if a else None,
                other_section=b.section if b else None,
            )
        )
    return out


# -- plain-text rendering ----------------------------------------------------------------------------


def one_line(text: str | None, width: int = 72) -> str:
    """``text`` on one line, cut to ``width`` characters with ``...``."""
    if text is None:
        return "(content not recorded)"
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(0, width - 3)].rstrip() + "..."


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def format_decision_table(decisions: Sequence[MessageDecision]) -> list[str]:
    """The seed-003 per-message table: idx, role, outcome, tokens, reason, fidelity, score."""
    lines = [f"  {'idx':>3}  {'role':<10}  {'outcome':<12}  {'tokens':<11}  {'reason':<32}  {'fidelity':<8}  score"]
    for d in decisions:
        fidelity = d.fidelity if d.outcome == "compressed" else ""
        row = (
            f"  {d.index:>3}  {d.role:<10}  {d.outcome:<12}  {f'{d.token_count_before}→{d.token_count_after}':<11}  "
            f"{d.reason:<32}  {fidelity or '':<8}  {_score(d.relevance_score):<5}"
        )
        flag = row_flag(d.model_dump())
        if d.source == "pin":
            row += f"  [PIN] {d.section or ''}"
        elif d.source == "section":
            row += f"  {flag[0] + ' ' if flag else ''}[section] {d.section or ''}"
        elif d.source == "input":
            row += "  [input]"
        elif flag:
            row += f"  {flag[0]}"
        lines.append(row.rstrip())
    return lines


def _message_preview(msg: dict[str, Any], width: int) -> str:  # JSON edge: a wire message
    content = msg.get("content")
    calls = msg.get("tool_calls") or []
    if isinstance(content, list):  # content parts
        content = " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    text = one_line(content, width) if content or content is None else ""
    if calls:
        names = []
        for c in calls:
            fn = c.get("function", c) if isinstance(c, dict) else {}
            names.append(f"{fn.get('name', '?')}()")
        text = (text + " " if text else "") + "→ tool_calls: " + ", ".join(names)
    return text


def format_prompt_preview(messages: Sequence[dict[str, Any]],  # JSON edge: wire messages
                          tokens: int | None, width: int = 72) -> list[str]:
    """``Prompt preview (N messages, T tokens):`` and one line per message."""
    head = f"Prompt preview ({len(messages)} messages" + (f", {tokens} tokens):" if tokens is not None else "):")
    lines = [head]
    for m in messages:
        lines.append(f"  {'[' + str(m.get('role', '?')) + ']':<12}{_message_preview(m, width)}".rstrip())
    return lines


def format_active_pins(pins: Iterable[Pin], turn: int, agent: str | None = None) -> list[str]:
    pins = list(pins)
    who = f" (agent {agent})" if agent else ""
    if not pins:
        return [f"Active pins at turn {turn}{who}: none"]
    lines = [f"Active pins at turn {turn}{who}: {len(pins)}"]
    for p in pins:
        parts = [f"  {p.pin_id}"]
        parts.append(f"label={p.label!r}" if p.label is not None else "label=-")
        if p.tokens is not None:
            parts.append(f"{p.tokens} tokens")
        if p.created_turn is not None:
            parts.append(f"since turn {p.created_turn}")
        parts.append(f"until turn {p.until_turn}" if p.until_turn is not None else "until unpinned")
        lines.append("  ".join(parts))
        lines.append(f"      {one_line(p.content, 68)}")
    return lines


def format_sent_prompt(sent: SentPrompt, width: int = 72) -> list[str]:
    """``Prompt as sent (N messages, T tokens): <status>`` and one line per message."""
    known = [t for t in sent.tokens if t is not None]
    tokens = f", {sum(known)} tokens" if known and len(known) == len(sent.messages) else ""
    lines = [f"Prompt as sent ({len(sent.messages)} messages{tokens}): {sent.status()}"]
    if sent.note:
        lines.append(f"  note: {sent.note}")
    for i, m in enumerate(sent.messages):
        t = sent.tokens[i] if i < len(sent.tokens) else None
        count = f"{t:>6} " if t is not None else ""
        lines.append(f"  {i:>3} {count}{'[' + str(m.get('role', '?')) + ']':<12}{_message_preview(m, width)}".rstrip())
    return lines


def format_replay(replay: PromptReplay, *, decision: bool = True, prompt: bool = True,
                  sent: SentPrompt | None = None) -> list[str]:
    """The human-readable ``arcana trace replay RUN --turn N`` output (``sent``: the prompt as sent,
    :meth:`TraceReader.prompt_sent` or its rebuild)."""
    d = replay.context_decision
    b = replay.budget_snapshot
    utilization = b.utilization if b is not None else d.utilization_before
    lines = [f"Turn {replay.turn}  strategy={d.strategy}  utilization={utilization:.2f}"]
    info = [f"agent={replay.agent}", f"step={replay.step}"]
    if len(replay.steps) > 1:
        info.append(f"steps={','.join(map(str, replay.steps))}")
    if d.requested_strategy != d.strategy:
        info.append(f"requested={d.requested_strategy}")
    if b is not None:
        info.append(f"used={b.used}/{b.available}")
        info.append(f"window={b.total_window}")
        info.append(f"reserve={b.response_reserve}")
    if replay.request_digest:
        info.append(f"digest={replay.request_digest}")
    if d.overflow:
        info.append("OVERFLOW")
    lines.append("  ".join(info))
    for note in d.notes:
        lines.append(f"  note: {note}")
    if decision:
        lines.append("")
        lines.extend(format_decision_table(d.decisions))
        if d.summary is not None or any(x.outcome == "summarized" for x in d.decisions):
            lines.append("")
            if prompt:
                lines.append(f"Summary: {one_line(d.summary, 100)}")
            else:  # decision only: no model or user text
                size = f"{len(d.summary)} characters" if d.summary is not None else "not recorded"
                lines.append(f"Summary: ({size}; text left out of a decision-only replay)")
    if prompt:
        lines.append("")
        sent_tokens = sum(x.token_count_after for x in d.decisions)
        if sent is not None and sent.messages and sent.source != "snapshot":
            lines.extend(format_sent_prompt(sent))
        elif replay.prompt_snapshot is not None:
            lines.extend(format_prompt_preview(replay.prompt_snapshot.messages, sent_tokens))
        else:
            lines.append(
                "Prompt preview: no prompt snapshot recorded for this turn (set trace_include_prompt_snapshots=True, "
                f"or rebuild it: arcana trace rebuild {replay.run_id} --turn {replay.turn})"
            )
        lines.append("")
        lines.extend(format_active_pins(replay.active_pins, replay.turn, replay.agent))
    return lines


def format_context_decisions(decision: ContextDecision) -> list[str]:
    """``show --context`` lines: one per message, flagged as the inspector flags it (``[PIN]`` for a
    pin only, seed 000; ``[KEEP]`` for a protected section, ``[REC]`` / ``[RECENT]``)."""
    lines = []
    for d in decision.decisions:
        found = row_flag(d.model_dump())
        flag = f"{found[0]} " if found else "      "
        if d.outcome == "kept":
            what = f"{d.token_count_after} tokens (kept at {d.fidelity or 'L0'})"
        elif d.outcome == "compressed":
            what = f"{d.token_count_before}→{d.token_count_after} tokens (compressed to {d.fidelity})"
        else:
            what = f"{d.token_count_before}→{d.token_count_after} tokens ({d.outcome})"
        extra = f"  {d.reason}"
        if d.source == "section" and d.section:
            extra += f"  section={d.section}"
        elif d.source == "pin" and d.section:
            extra += f"  pin_id={d.section}"
        lines.append(f"{flag}[{d.index}] {d.role} {what}{extra}")
    return lines
