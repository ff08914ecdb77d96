"""The history as the builder sees it, kept incrementally while a conversation grows.

Per message: its cached :class:`MessageInfo` (token count, error flag, compressed forms), its turn;
over the conversation: the *units* (an assistant tool call and its results are one unit, never
split), the phase-0 stale tool results, and the BM25 index. When the next build's history starts
with the same message objects, only the new messages are processed, so a warm build does work
proportional to what changed, plus one light pass to write the decisions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..messages import Message
from .relevance import RelevanceIndex, looks_like_error, static_score


class MessageInfo:
    """Per-message cache: token count, error flag, static relevance, compressed renderings."""

    __slots__ = ("content_tokens", "error", "msg", "renders", "static", "tokens")

    def __init__(self, msg: Message, tokens: int) -> None:
        self.msg = msg
        self.tokens = tokens
        self.content_tokens: int | None = None
        self.error = looks_like_error(msg.content)
        self.static = static_score(msg.role, self.error)
        self.renders: dict[Any, tuple[Message, int] | None] = {}

    def twin(self, msg: Message) -> MessageInfo:
        """The info of another object with the same wire content (shares the counts)."""
        other = MessageInfo.__new__(MessageInfo)
        other.msg, other.tokens, other.error, other.static = msg, self.tokens, self.error, self.static
        other.content_tokens = self.content_tokens
        # compressed forms carry the message's metadata (turn): share them only when it is the same
        other.renders = self.renders if self.msg.turn == msg.turn else {}
        return other


Signature = tuple[str, str]


@dataclass
class HistoryState:
    """Everything derived from a history that does not depend on the question or the budget."""

    msgs: list[Message] = field(default_factory=list)
    infos: list[MessageInfo] = field(default_factory=list)
    turns: list[int | None] = field(default_factory=list)
    users: int = 0
    identity: int | None = None
    units: list[list[int]] = field(default_factory=list)
    unit_of: list[int] = field(default_factory=list)
    """Unit of each message (``-1`` for the identity system message)."""
    unit_cost: list[int] = field(default_factory=list)
    open_ids: set[str] = field(default_factory=set)
    calls: dict[str, Signature] = field(default_factory=dict)
    last_result: dict[Signature, int] = field(default_factory=dict)
    superseded: set[int] = field(default_factory=set)
    rel: RelevanceIndex = field(default_factory=RelevanceIndex)
    rows: list[dict[str, Any] | None] = field(default_factory=list)
    """Per message, the values of its decision when dropped, but for its relevance score and reason
    (made by :meth:`row` when first asked for; a build copies it: a dict copy is cheaper than a new one)."""

    def row(self, i: int) -> dict[str, Any]:
        """The decision values of message ``i`` dropped (relevance score and reason to fill in): a
        template to copy, never to change."""
        row = self.rows[i]
        if row is None:
            info = self.infos[i]
            row = self.rows[i] = {
                "index": i, "role": info.msg.role, "outcome": "dropped", "fidelity": None, "relevance_score": None,
                "token_count_before": info.tokens, "token_count_after": 0, "reason": "", "layer": "working",
                "source": "history", "section": None, "pinned": False, "turn": self.turns[i], "position": None,
                "recalled": False, "anchor_position": None,
            }
        return row

    def append(self, info: MessageInfo, *, index_text: bool = True) -> None:
        """Add the next message (``index_text=False`` for a current input that is not history)."""
        m = info.msg
        i = len(self.msgs)
        self.msgs.append(m)
        self.infos.append(info)
        self.rows.append(None)
        if m.role == "user":
            self.users += 1
        self.turns.append(m.turn if m.turn is not None else (self.users or None))
        if index_text:
            self.rel.add(m)
        if m.role == "system" and self.identity is None:
            self.identity = i
            self.unit_of.append(-1)
            return
        if m.role == "tool" and self.units and m.tool_call_id is not None and m.tool_call_id in self.open_ids:
            self.units[-1].append(i)
            self.unit_cost[-1] += info.tokens
            self.unit_of.append(len(self.units) - 1)
        else:
            self.unit_of.append(len(self.units))
            self.units.append([i])
            self.unit_cost.append(info.tokens)
            if m.role == "assistant" and m.tool_calls:
                self.open_ids = {c.id for c in m.tool_calls}
                for c in m.tool_calls:
                    self.calls[c.id] = (c.name, c.arguments)
            else:
                self.open_ids = set()
        if m.role == "tool" and m.tool_call_id is not None:
            sig = self.calls.get(m.tool_call_id)
            if sig is not None:
                prev = self.last_result.get(sig)
                if prev is not None:
                    self.superseded.add(prev)
                self.last_result[sig] = i

    def fork(self) -> HistoryState:
        """A copy that can take the current input without changing this state (shallow where safe)."""
        last = [list(self.units[-1])] if self.units else []
        return HistoryState(
            msgs=list(self.msgs), infos=list(self.infos), turns=list(self.turns), users=self.users,
            identity=self.identity, units=self.units[:-1] + last, unit_of=list(self.unit_of),
            unit_cost=list(self.unit_cost),
            open_ids=set(self.open_ids), calls=dict(self.calls), last_result=dict(self.last_result),
            superseded=set(self.superseded), rel=self.rel, rows=list(self.rows),
        )

    def stale(self) -> set[int]:
        """Phase 0: tool results superseded by a later identical call, outside the current unit."""
        if not self.superseded:
            return set()
        return self.superseded.difference(self.units[-1]) if self.units else set(self.superseded)
