"""The finished build: :class:`BuildResult` and how a build's pieces become it.

:func:`compose` turns the ordered prompt items and the per-input decisions into the evidence:
prompt positions (and the anchor position of a recalled message), the per-layer
:class:`ContextReport` with prefix reuse against the previous build, the :class:`BudgetSnapshot`
and the :class:`ContextDecision`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel

from ..messages import Message, ToolSpec, request_digest
from ..schema.pins import Pin
from .decisions import (
    BudgetSnapshot,
    ContextDecision,
    ContextReport,
    Fidelity,
    Layer,
    LayerReport,
    MessageDecision,
    TokenBudget,
)
from .sections import ContextSection

if TYPE_CHECKING:
    from .plan import Plan

MSG_FIELDS = frozenset(MessageDecision.model_fields)


_new = MessageDecision.__new__
_set = object.__setattr__


def _slot_setter(name: str) -> Callable[[Any, Any], None]:
    """The setter of one of pydantic's instance slots (its descriptor's, a little faster than setattr)."""
    desc = BaseModel.__dict__.get(name)
    setter = getattr(desc, "__set__", None)
    if setter is None:  # not a slot in this pydantic version: the generic way
        return lambda obj, value: _set(obj, name, value)
    return setter  # type: ignore[no-any-return]


_set_fields_set = _slot_setter("__pydantic_fields_set__")
_set_extra = _slot_setter("__pydantic_extra__")
_set_private = _slot_setter("__pydantic_private__")


def decision_from(values: dict[str, Any]) -> MessageDecision:
    """A MessageDecision from a dict of already-valid values, every field given, skipping
    validation (a build makes one per history message). The one place that sets pydantic's
    instance slots by hand: the objects dump and validate like any other."""
    obj = _new(MessageDecision)
    _set(obj, "__dict__", values)
    _set_fields_set(obj, MSG_FIELDS)
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def make_decision(**values: Any) -> MessageDecision:
    """:func:`decision_from` with the fields as keywords."""
    return decision_from(values)


@dataclass(frozen=True)
class BuildResult:
    """What :meth:`WorkingSetBuilder.build` returns: the prompt and the evidence of how it was made."""

    messages: list[Message]
    decision: ContextDecision
    report: ContextReport
    budget: BudgetSnapshot
    tools: list[ToolSpec] = field(default_factory=list)
    sections: list[ContextSection] = field(default_factory=list)
    pins: list[Pin] = field(default_factory=list)
    task: str | None = None
    probe: bool = False
    """A probe's result (``WorkingSetBuilder.abuild(probe=True)``) with template rows: never sent or recorded."""

    def digest(self, model: str = "") -> str:
        """The request digest of ``(model, messages, tools)`` (:func:`messages.request_digest`)."""
        return request_digest(self.messages, self.tools, model)

    def wire(self) -> list[dict[str, Any]]:
        return [m.wire() for m in self.messages]


class Item(NamedTuple):
    """One message of the prompt being assembled (an input's rendering, or the summary)."""

    msg: Message
    tokens: int
    owner: int | None  # decision index; None for the summary


@dataclass
class Pending:
    """A build that is waiting for the summariser (``llm_summarize``)."""

    folded: list[Message]
    key: tuple[Any, ...]
    finish: Callable[[str | None], BuildResult]


@dataclass
class Assembly:
    """What a build decided before assembling the prompt (shared by the two build phases)."""

    strategy: str
    overflow: bool
    live_pins: list[tuple[int, Pin, Message]]
    pin_tokens: dict[int, int]
    sec_render: dict[int, tuple[Message, int, Fidelity] | None]
    sec_msgs: list[Message]
    sec_tokens: list[int]
    task_tokens: int
    tools_tokens: int
    reply_priming: int
    plan: Plan


def _common_start(a: str, b: str) -> int:
    """Length of the longest common start of ``a`` and ``b`` (binary search on slice equality)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def prefix_reuse(previous: list[Message], messages: list[Message], count_text: Callable[[str], int],
                 count_message: Callable[[Message], int]) -> tuple[int, int, int]:
    """``(messages, tokens, previous tokens)``: how much of ``messages`` repeats ``previous`` from
    its start, as a provider's prefix cache sees it — whole equal messages, then the common start of
    the first message that differs (same role and tool calls: a context block appended to a user
    message leaves the user's own text a reusable prefix)."""
    same = 0
    tokens = 0
    for a, b in zip(previous, messages, strict=False):
        if a is b or a == b:
            same += 1
            tokens += count_message(b)
            continue
        if a.role == b.role and a.tool_calls == b.tool_calls and a.name == b.name:
            n = _common_start(a.content, b.content)
            if n:
                tokens += count_text(a.content[:n])
        break
    return same, tokens, sum(count_message(m) for m in previous)


def _in_window(d: MessageDecision) -> bool:
    return d.source == "history" and d.outcome == "kept" and d.fidelity == "L0" and not d.recalled


def _left_window(before: list[MessageDecision], now: list[MessageDecision]) -> tuple[int, int]:
    """(messages, tokens) of the history that the previous build sent in place, verbatim, and this
    one no longer does: what the verbatim window gave way by since the previous call."""
    n = t = 0
    for a, b in zip(before, now, strict=False):
        if a.source != "history":
            break
        if _in_window(a) and not _in_window(b):
            n += 1
            t += b.token_count_before
    return n, t


def compose(
    *,
    decisions: list[MessageDecision | None],
    ordered: list[Item],
    ctx: Assembly,
    budget: TokenBudget,
    previous: BuildResult | None,
    turn: int | None,
    step: int,
    requested: str,
    utilization_before: float,
    notes: list[str],
    summary: str | None,
    tools: list[ToolSpec],
    sections: list[ContextSection],
    pins: list[Pin],
    task: str | None,
    n_history: int,
    identity: int | None,
    conversation: tuple[int, int],
    probe: bool = False,
    recalled_tokens: int = 0,
    free_reason: str | None = None,
) -> BuildResult:
    """Positions, accounting per layer, prefix reuse, budget snapshot: the finished build.

    ``n_history`` is the number of history inputs (with a separate current input), ``identity``
    the index of the identity system message, ``conversation`` the (count, tokens) of the other
    history inputs — all in the Working layer.
    """
    owners_seen: set[int] = set()
    for pos, it in enumerate(ordered):
        if it.owner is None:
            continue
        d = decisions[it.owner]
        assert d is not None
        if it.owner in owners_seen:
            # second appearance of a recalled message: the first one was its in-order anchor
            d.__dict__["anchor_position"] = d.__dict__["position"]
        d.__dict__["position"] = pos
        owners_seen.add(it.owner)
    final: list[MessageDecision] = [d for d in decisions if d is not None]
    assert len(final) == len(decisions), "every input gets a decision"
    messages = [it.msg for it in ordered]
    msg_tokens = sum(it.tokens for it in ordered)
    used = msg_tokens + ctx.tools_tokens + ctx.reply_priming
    A = budget.available
    overflow = used > A
    if overflow and not ctx.overflow:
        raise AssertionError(f"working-set builder exceeded its budget ({used} > {A}); this is a bug")
    if ctx.overflow:
        overflow = True

    # per-layer report: the history's part of "before" comes precomputed (it is all Working except
    # the identity message), "after" from what was sent: no pass over thousands of dropped decisions
    layers: dict[Layer, list[int]] = {"identity": [0, 0, 0], "task": [0, 0, 0], "working": [0, 0, 0],
                                      "external": [0, 0, 0]}
    layers["working"][0] += conversation[0]
    layers["working"][1] += conversation[1]
    for d in final[n_history:] if identity is None else [final[identity], *final[n_history:]]:
        acc = layers[d.layer]
        acc[0] += 1
        acc[1] += d.token_count_before
    summary_tokens = 0
    for it in ordered:
        if it.owner is None:
            summary_tokens += it.tokens
            layers["working"][2] += it.tokens
        else:
            layers[final[it.owner].layer][2] += it.tokens
    report = ContextReport(
        layers=[LayerReport(layer=name, messages=v[0], tokens_before=v[1], tokens_after=v[2])
                for name, v in layers.items()],
        total_before=sum(v[1] for v in layers.values()),
        total_after=msg_tokens,
        tools_tokens=ctx.tools_tokens,
        summary_tokens=summary_tokens,
        recalled_tokens=recalled_tokens,
        free_reason=free_reason,
    )
    if previous is not None:
        report.window_dropped, report.window_dropped_tokens = _left_window(previous.decision.decisions, final)
        prev = previous.messages
        reused = 0
        reused_tokens = 0
        for a, bm in zip(prev, ordered, strict=False):
            if a is bm.msg or a == bm.msg:
                reused += 1
                reused_tokens += bm.tokens
            else:
                break
        report.prefix_messages_reused = reused
        report.prefix_tokens_reused = reused_tokens
    snapshot = BudgetSnapshot(
        total_window=budget.total_window, response_reserve=budget.response_reserve, available=A,
        used=used, remaining=max(0, A - used), utilization=round(used / A, 4) if A > 0 else float(used),
        overflow=overflow,
    )
    # every field is already valid (and the decisions are MessageDecision objects): skip the
    # per-element validation pass over thousands of decisions
    decision = ContextDecision.model_construct(
        turn=turn, step=step, strategy=ctx.strategy, requested_strategy=requested,
        utilization_before=utilization_before, decisions=final, overflow=overflow, notes=notes,
        summary=summary,
    )
    return BuildResult(messages=messages, decision=decision, report=report, budget=snapshot, tools=tools,
                       sections=sections, pins=pins, task=task, probe=probe)
