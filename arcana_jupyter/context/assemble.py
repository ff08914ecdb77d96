"""A planned build becomes its prompt and its decisions.

:func:`assemble` writes one :class:`~.decisions.MessageDecision` per input — the identity, the task,
the sections and the pins (:func:`_decide_fixed_inputs`), each history message by the region the
plan put its unit in (:func:`_decide_conversation`: one pass over the history, the only one of a
build) — then brings back the earlier turns relevant to the question (:mod:`.recall`), orders the
prompt (stable first) and hands it to :func:`~.result.compose`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..messages import Message
from . import strategies as S
from .decisions import Fidelity
from .recall import Recalled, fill_recall
from .relevance import RecordedScores
from .result import Assembly, BuildResult, Item, compose, decision_from, make_decision

if TYPE_CHECKING:
    from .build import Build
    from .plan import Plan


class _Prompt:
    """The prompt's parts as they are assembled, in the order they are filled."""

    def __init__(self) -> None:
        self.head: list[Item] = []
        """Identity, task, head sections, pins."""
        self.stable: list[Item] = []
        """The conversation as planned (head exchange, middle band, window) up to the recent exchange."""
        self.late_sections: list[Item] = []
        self.recall: list[Item] = []
        self.recent: list[Item] = []
        """The exchange before the input, and the current turn."""
        self.summary: Item | None = None

    def tokens(self) -> int:
        return (sum(it.tokens for it in (*self.head, *self.stable, *self.late_sections, *self.recent))
                + (self.summary.tokens if self.summary else 0))


def assemble(build: Build, ctx: Assembly, summary_text: str | None) -> BuildResult:
    """The finished build (see the module docstring); ``summary_text``: the summariser's answer."""
    plan = ctx.plan
    prompt = _Prompt()
    current_turn = (build.turn if build.turn is not None
                    else (build.turns[build.input_index] if build.input_index is not None else None))
    score = RecordedScores(build.match, build.turns, build.infos, current_turn)
    _decide_fixed_inputs(build, ctx, prompt)
    summary_used: str | None = None
    if ctx.strategy == "llm_summarize" and plan.fold_until > 0:
        prompt.summary, summary_used = _summary_item(build, summary_text, max(plan.fold_until, plan.summary_until),
                                                     plan.summary_room)
    middle_rendered = _decide_conversation(build, ctx.strategy, plan, prompt, score)
    units = build.units
    if units:  # the recent exchange (from the last user message before the input) goes after the late block
        input_unit = len(units) - 1
        recent_from = build.recent_start(input_unit if plan.overflow else plan.window)
        members = set(units[recent_from]) if recent_from is not None else set(units[input_unit])
        cut = next((k for k, it in enumerate(prompt.stable) if it.owner in members), len(prompt.stable))
        prompt.recent = prompt.stable[cut:]
        del prompt.stable[cut:]
    # relevant earlier turns
    recalled: Recalled | None = None
    if not plan.overflow and ctx.strategy != "passthrough" and build.builder.recall:
        room = build.available - prompt.tokens() - ctx.tools_tokens - build.counter.reply_priming
        fill = not plan.blocks or plan.recall_fill
        quote = plan.blocks and not fill and build.builder.block_recall == "fill"
        if not fill and not quote:  # a small block: what the window leaves free between drops stays free
            room = min(room, plan.recall_room)
        tell = build.builder.block_tell_share
        if quote and tell is not None and not build.asks():
            # the input asks nothing of the past: the best few relevant messages, not all the room
            # (the block follows the input, so every token of it is billed again next turn)
            plan.tell_room = max(0, int(build.available * tell))
            room = min(room, plan.tell_room)
        if plan.blocks and not fill and build.builder.block_excerpts and not quote:
            # what the prompt already says, sentence by sentence: an excerpt never repeats it
            build.said = {p for it in (*prompt.head, *prompt.stable, *prompt.late_sections, *prompt.recent)
                          for p in build.cache.sentences(it.msg.content)}
        recalled = fill_recall(build, score, room, middle_rendered, prompt.recall, fill=fill, quote=quote)
    free_reason = _free_reason(build, ctx, plan, prompt, recalled)
    return compose(
        decisions=build.decisions, ordered=_ordered(build, prompt), ctx=ctx, budget=build.budget,
        previous=build.previous, turn=build.turn, step=build.step, requested=build.requested,
        utilization_before=build.util_before, notes=build.notes, summary=summary_used, tools=list(build.tools),
        sections=list(build.sections), pins=list(build.pins), task=build.task, n_history=build.n_messages,
        identity=build.identity, conversation=(build.n_messages - (build.identity is not None),
                                               sum(build.state.unit_cost)),
        probe=build.probed > 0, recalled_tokens=sum(it.tokens for it in prompt.recall), free_reason=free_reason,
    )


FREE_SHARE = 0.25
"""A build that leaves more than this share of the budget free while some earlier message is not in
the prompt says why (``ContextReport.free_reason`` and a note)."""


def _free_reason(build: Build, ctx: Assembly, plan: Plan, prompt: _Prompt, recalled: Recalled | None
                 ) -> str | None:
    """Why more than :data:`FREE_SHARE` of the budget stays free while earlier messages are out of
    the prompt (``None``: it does not, or nothing is out), also written to the notes."""
    available = build.available
    used = (prompt.tokens() + sum(it.tokens for it in prompt.recall) + ctx.tools_tokens
            + build.counter.reply_priming)
    free = available - used
    if available <= 0 or free <= available * FREE_SHARE or plan.overflow or ctx.strategy == "passthrough":
        return None
    out = [d for d in build.decisions[:build.n_messages]
           if d is not None and d.source == "history" and d.outcome == "dropped"]
    if not out:
        return None
    if not build.builder.recall:
        reason, why = "recall_off", "bringing earlier turns back is off (recall=False)"
    elif recalled is None:
        reason, why = "recall_off", "no earlier turns were brought back for this build"
    elif plan.tell_room is not None:
        reason, why = ("statement", f"the input asks nothing (no question, no request), so the block of earlier "
                                    f"messages relevant to it is kept to {plan.tell_room} tokens")
    elif not recalled.fill and not recalled.quote:
        reason, why = ("small_block", f"the block of relevant earlier turns is kept small ({plan.recall_room} tokens, "
                                      "block_recall='small')")
    elif recalled.left_over:
        reason, why = ("relevant_too_large", f"the {recalled.left_over} other relevant message(s) are larger than the "
                                             f"room left (the smallest needs {recalled.smallest_left} tokens)")
    else:
        reason, why = "no_more_relevant", "no other earlier message matches the input"
    build.notes.append(f"{free} of {available} tokens ({free / available:.0%}) left free while {len(out)} earlier "
                       f"message(s) stay out of the prompt: {why}")
    return reason


def _ordered(build: Build, prompt: _Prompt) -> list[Item]:
    """The prompt in its layout (see the builder's module docstring)."""
    ordered = [*prompt.head]
    if prompt.summary is not None:
        ordered.append(prompt.summary)
    recent = prompt.recent
    # the exchange before the input stays in conversation order, ahead of the question-dependent
    # block: next turn it is part of the verbatim window, so the cached prefix extends through it
    # (the current turn — from its user message on, with any tool steps — stays last, together)
    cut = next((k for k in range(len(recent) - 1, -1, -1) if recent[k].msg.role == "user"), 0)
    if build.builder.layout == "recent_first":
        ordered += prompt.stable + recent[:cut] + prompt.late_sections + prompt.recall + recent[cut:]
    else:
        ordered += prompt.stable + prompt.late_sections + prompt.recall + recent
    return ordered


def _decide_fixed_inputs(build: Build, ctx: Assembly, prompt: _Prompt) -> None:
    """The decisions of the identity, the task, the sections and the pins."""
    decisions = build.decisions
    if build.identity is not None:
        i = build.identity
        tokens = build.infos[i].tokens
        prompt.head.append(Item(build.msgs[i], tokens, i))
        decisions[i] = make_decision(
            index=i, role="system", outcome="kept", fidelity="L0", relevance_score=None,
            token_count_before=tokens, token_count_after=tokens, reason=S.PASSTHROUGH,
            layer="identity", source="history", section=None, pinned=False, turn=build.turns[i], position=None,
            recalled=False, anchor_position=None,
        )
    if build.task_msg is not None and build.task_index is not None:
        prompt.head.append(Item(build.task_msg, ctx.task_tokens, build.task_index))
        decisions[build.task_index] = make_decision(
            index=build.task_index, role="system", outcome="kept", fidelity="L0", relevance_score=None,
            token_count_before=ctx.task_tokens, token_count_after=ctx.task_tokens, reason=S.TASK, layer="task",
            source="section", section="task", pinned=True, turn=None, position=None, recalled=False,
            anchor_position=None,
        )
    for k, sec in enumerate(build.sections):
        idx = build.section_base + k
        rendered = ctx.sec_render[k]
        before = ctx.sec_tokens[k]
        if rendered is None:
            decisions[idx] = make_decision(
                index=idx, role=sec.role, outcome="dropped", fidelity=None, relevance_score=None,
                token_count_before=before, token_count_after=0, reason=S.section_reason(sec.name),
                layer=sec.layer, source="section", section=sec.name, pinned=False, turn=None, position=None,
                recalled=False, anchor_position=None,
            )
            continue
        m, n, level = rendered
        (prompt.head if sec.placement == "head" else prompt.late_sections).append(Item(m, n, idx))
        decisions[idx] = make_decision(
            index=idx, role=sec.role, outcome="kept" if level == "L0" else "compressed", fidelity=level,
            relevance_score=None, token_count_before=before, token_count_after=n,
            reason=S.section_reason(sec.name), layer=sec.layer, source="section", section=sec.name,
            pinned=sec.protected, turn=None, position=None, recalled=False, anchor_position=None,
        )
    live = {k: m for k, _, m in ctx.live_pins}
    for k, pin in enumerate(build.pins):
        idx = build.pin_base + k
        if k in live:
            n = ctx.pin_tokens[k]
            prompt.head.append(Item(live[k], n, idx))
            decisions[idx] = make_decision(
                index=idx, role="system", outcome="kept", fidelity="L0", relevance_score=None,
                token_count_before=n, token_count_after=n, reason=S.PINNED, layer="working", source="pin",
                section=pin.pin_id, pinned=True, turn=pin.created_turn, position=None, recalled=False,
                anchor_position=None,
            )
        else:
            n = build.counter.count_message(pin.render())
            decisions[idx] = make_decision(
                index=idx, role="system", outcome="dropped", fidelity=None, relevance_score=None,
                token_count_before=n, token_count_after=0, reason=S.PIN_EXPIRED, layer="working",
                source="pin", section=pin.pin_id, pinned=True, turn=pin.created_turn, position=None,
                recalled=False, anchor_position=None,
            )


def _reasons(strategy: str, plan: Plan) -> tuple[str, str]:
    """``(keep, drop)``: the reasons of a history message kept in the window, and of one dropped."""
    if strategy == "passthrough":
        keep, drop = S.PASSTHROUGH, S.PASSTHROUGH
    elif plan.blocks:
        keep, drop = S.BLOCK_KEPT, S.BLOCK_DROPPED
    elif strategy == "tail_preserve":
        keep = S.TP_TAIL
        drop = S.TP_NO_BUDGET_FOR_MIDDLE if plan.no_budget_middle else S.TP_MIDDLE_DROPPED
    elif strategy == "aggressive_truncate":
        keep, drop = S.AT_KEPT, S.AT_DROP
    else:  # llm_summarize: the verbatim window is the preserved tail
        keep, drop = S.TP_TAIL, S.TP_MIDDLE_DROPPED
    if plan.overflow:
        drop = S.OVERFLOW
    return keep, drop


def _decide_conversation(build: Build, strategy: str, plan: Plan, prompt: _Prompt, score: RecordedScores
                         ) -> dict[int, tuple[Message, int, Fidelity]]:
    """The decision of each history message (and the current input) by its unit's region; the
    middle band's renderings (an anchor a recalled message's count includes)."""
    msgs, infos, turns, decisions = build.msgs, build.infos, build.turns, build.decisions
    stale, input_index = build.stale, build.input_index
    stable = prompt.stable
    build.window_start = window = plan.window
    keep_reason, drop_reason = _reasons(strategy, plan)
    input_unit = len(build.units) - 1
    folded = plan.fold_until if prompt.summary is not None else 0
    dropped_until = max(plan.drop_until, plan.mid_from, window if strategy != "tail_preserve" else 0)
    middle_rendered: dict[int, tuple[Message, int, Fidelity]] = {}
    rows, row = build.state.rows, build.state.row

    def put(i: int, msg: Message, tokens: int, outcome: str, level: Fidelity | None, reason: str,
            relevance: float | None) -> None:
        stable.append(Item(msg, tokens, i))
        decisions[i] = decision_from({
            "index": i, "role": msgs[i].role, "outcome": outcome, "fidelity": level, "relevance_score": relevance,
            "token_count_before": infos[i].tokens, "token_count_after": tokens, "reason": reason,
            "layer": "working", "source": "input" if i == input_index else "history", "section": None,
            "pinned": False, "turn": turns[i], "position": None, "recalled": False, "anchor_position": None,
        })

    for u, unit in enumerate(build.units):
        if u == input_unit:
            for i in unit:
                if i == input_index and build.input_fit is not None:
                    m, n, lv = build.input_fit
                    put(i, m, n, "compressed", lv, S.CURRENT_INPUT_COMPRESSED, None)
                elif i == input_index:
                    put(i, msgs[i], infos[i].tokens, "kept", "L0", S.CURRENT_INPUT, None)
                else:
                    put(i, msgs[i], infos[i].tokens, "kept", "L0", keep_reason, score(i))
        elif u == plan.head:
            for i in unit:
                m, n, lv = build.msg_cost(i, "L0")
                if i in stale:
                    put(i, m, n, "compressed", lv, S.STALE_TOOL_RESULT, score(i))
                else:
                    put(i, m, n, "kept", "L0", S.TP_HEAD, score(i))
        elif u < folded:
            for i in unit:
                decisions[i] = decision_from({
                    "index": i, "role": msgs[i].role, "outcome": "summarized", "fidelity": None,
                    "relevance_score": score(i), "token_count_before": infos[i].tokens, "token_count_after": 0,
                    "reason": S.SUMMARIZED, "layer": "working", "source": "history", "section": None,
                    "pinned": False, "turn": turns[i], "position": None, "recalled": False, "anchor_position": None,
                })
        elif u < dropped_until and build.probe:  # what lost_turns reads is the template's (see abuild)
            for i in unit:
                decisions[i] = decision_from(rows[i] or row(i))
            build.probed += len(unit)
        elif u < dropped_until:  # the hot loop of long histories: the message's own row, copied
            for i in unit:
                values = (rows[i] or row(i)).copy()
                values["relevance_score"] = score(i)
                values["reason"] = S.STALE_TOOL_RESULT if i in stale else drop_reason
                decisions[i] = decision_from(values)
        elif u < window:  # tail_preserve middle band
            assert plan.level is not None
            for i in unit:
                m, n, lv = build.msg_cost(i, plan.level)
                middle_rendered[i] = (m, n, lv)
                if i in stale:
                    put(i, m, n, "compressed", lv, S.STALE_TOOL_RESULT, score(i))
                elif lv == "L0":
                    put(i, m, n, "kept", "L0", S.TP_MIDDLE_KEPT, score(i))
                else:
                    put(i, m, n, "compressed", lv, S.TP_MIDDLE_COMPRESSED, score(i))
        else:  # the verbatim window (hot on long windows)
            for i in unit:
                if i in stale:
                    m, n, lv = build.msg_cost(i, "L0")
                    put(i, m, n, "compressed", lv, S.STALE_TOOL_RESULT, score(i))
                    continue
                info = infos[i]
                stable.append(Item(info.msg, info.tokens, i))
                values = (rows[i] or row(i)).copy()
                values["outcome"] = "kept"
                values["fidelity"] = "L0"
                values["relevance_score"] = score(i)
                values["token_count_after"] = info.tokens
                values["reason"] = keep_reason
                decisions[i] = decision_from(values)
    return middle_rendered


def _summary_item(build: Build, text: str | None, fold_until: int, room: int) -> tuple[Item | None, str | None]:
    """The summary message (cut to ``room`` tokens), or ``None`` when there is no summary text."""
    if text is None or not text.strip():
        build.notes.append("no summary text (the summariser returned nothing): folded messages dropped instead")
        return None, None
    counter = build.counter
    count = sum(len(build.units[u]) for u in range(fold_until))
    header = f"Summary of the earlier conversation ({count} messages):\n"
    msg = Message(role="system", content=header + text, name="summary")
    n = counter.count_message(msg)
    if n > room:
        build.notes.append(f"the summary was cut to fit its {room} tokens")
        keep = counter.count_text(text) - (n - room)
        while n > room and keep > 0:
            text = counter.truncate_text(text, keep)
            msg = Message(role="system", content=header + text, name="summary")
            n = counter.count_message(msg)
            keep -= max(1, n - room)
        if n > room:
            build.notes.append("no room for the summary: folded messages dropped instead")
            return None, None
    return Item(msg, n, None), text
