"""What a builder remembers between builds: the history's identity and per-message work.

A :class:`MessageCache` recognises the history a caller passes again (the same :class:`Message`
objects, or plain dicts with the same content as last time) and extends one shared
:class:`~.history.HistoryState` when the history only grew; it keeps per message what never changes
(token counts, compressed forms, sentences), the token count of the tool specs, the summariser's
texts, and the question's scores while the history does not grow (the builds of one call). It
never changes a result, only how fast it is computed.
"""

from __future__ import annotations

import copy
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..messages import Message, MessageLike, ToolSpec, as_message
from ..tokens import TokenCounter
from .decisions import Fidelity
from .fidelity import FidelityPolicy, render
from .history import HistoryState, MessageInfo
from .relevance import RelevanceIndex

T = TypeVar("T")
_MISSING = object()

CACHE_MAX = 200_000
"""Entries a cache keyed by content holds before it starts again (a bound on memory)."""
SUMMARIES_KEPT = 64
"""Summariser texts kept (the latest)."""
QUESTIONS_KEPT = 8
"""Questions whose scores are kept while the history does not grow (:meth:`MessageCache.question_scores`)."""
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
"""Where an excerpt may cut a message: after a sentence's end, or at a line break."""


def same_entry(new: Any, old: Any) -> bool:
    """Whether a history entry is the one seen at its position last time: the same object, or a
    dict with the same content as the copy kept of it."""
    if new is old:
        return True
    if type(new) is not dict or type(old) is not dict:
        return False
    try:
        return bool(new == old)
    except Exception:  # values that do not compare (arrays): not recognised, converted again
        return False


class MessageCache:
    """One builder's memory of the history and of the work done per message (see the module docstring)."""

    def __init__(self, counter: TokenCounter, policy: FidelityPolicy) -> None:
        self.counter = counter
        self.policy = policy
        self.state = HistoryState()
        """The shared history state of the last history (extended in place while it only grows)."""
        self._by_id: dict[int, MessageInfo] = {}
        self._by_key: dict[tuple[Any, ...], MessageInfo] = {}
        self._tools_key: tuple[int, ...] = ()
        self._tools_ref: tuple[ToolSpec, ...] = ()
        self._tools_tokens = 0
        self.summaries: dict[tuple[Any, ...], str] = {}
        self._sentences: dict[str, tuple[str, ...]] = {}
        self._by_dict: dict[tuple[Any, ...], Message] = {}
        self._seen: list[Any] = []
        """The last history as passed, position by position: a copy of each dict, or the Message."""
        self._seen_msgs: list[Message] = []
        """... and the Message each position became."""
        self._question: dict[tuple[Any, ...], Any] = {}
        self._question_index: RelevanceIndex | None = None
        self._question_size = 0

    # ---- history identity ------------------------------------------------------------------
    def messages(self, history: Sequence[MessageLike]) -> list[Message]:
        """``history`` as :class:`Message` objects; a plain dict seen before (same content) maps to
        the same object, so a dict history's unchanged prefix is recognised without validating it
        again."""
        # the unchanged prefix, recognised by content: a dict equal to the copy kept of the one at
        # that position last time (dict == compares the values, same strings by identity first)
        seen = self._seen
        n = min(len(history), len(seen))
        try:  # the usual case, one list comparison in C: the history only grew
            grew = n > 0 and list(history[:n]) == seen[:n]
        except Exception:  # values that do not compare (arrays): position by position below
            grew = False
        if grew:
            k = n
        else:
            k = 0
            for k, same in enumerate(map(same_entry, history, seen)):  # noqa: B007
                if not same:
                    break
            else:
                k = n
        out: list[Message] = self._seen_msgs[:k]
        del seen[k:]
        del self._seen_msgs[k:]
        cache = self._by_dict
        for m in (history[k:] if isinstance(history, list) else list(history)[k:]):
            if isinstance(m, Message):
                hit = m
                seen.append(m)
            elif isinstance(m, dict):
                calls = m.get("tool_calls")
                key = (m.get("role"), m.get("content"), repr(calls) if calls else None, m.get("tool_call_id"),
                       m.get("name"), m.get("turn"))
                found = cache.get(key)
                if found is None:
                    found = as_message(m)
                    if len(cache) >= CACHE_MAX:
                        cache.clear()
                    cache[key] = found
                hit = found
                # a copy: a caller that edits its dict in place must not find it equal to itself
                seen.append({f: v if isinstance(v, str | int | float | None) else copy.deepcopy(v)
                             for f, v in m.items()})
            else:
                hit = as_message(m)
                seen.append(m)
            out.append(hit)
            self._seen_msgs.append(hit)
        return out

    def history_state(self, msgs: list[Message]) -> HistoryState:
        """The shared history state of ``msgs``, extended in place when the history only grew."""
        state = self.state
        k = len(state.msgs)
        if len(msgs) >= k and all(map(operator.is_, state.msgs, msgs)):
            new = msgs[k:]
        else:
            state = self.state = HistoryState()
            new = msgs
        for m in new:
            state.append(self.info(m))
        return state

    # ---- per-message work ------------------------------------------------------------------
    def info(self, msg: Message) -> MessageInfo:
        """A message's token count and compressed forms (shared by messages with the same wire content)."""
        info = self._by_id.get(id(msg))
        if info is not None and info.msg is msg:
            return info
        # everything that is sent, as a hashable tuple (cheaper than Message.content_key's JSON)
        key = (msg.role, msg.content, msg.tool_calls, msg.tool_call_id, msg.name)
        info = self._by_key.get(key)
        if info is None:
            info = MessageInfo(msg, self.counter.count_message(msg))
            if len(self._by_key) >= CACHE_MAX:
                self._by_key.clear()
            self._by_key[key] = info
        elif info.msg is not msg:
            info = info.twin(msg)
        if len(self._by_id) >= CACHE_MAX:
            self._by_id.clear()
        self._by_id[id(msg)] = info
        return info

    def render(self, info: MessageInfo, level: Fidelity, turn: int | None, index: int
               ) -> tuple[Message, int, Fidelity]:
        """``info.msg`` at ``level`` (or at L0 when that level is not smaller): message, tokens, level."""
        if level == "L0":
            return info.msg, info.tokens, "L0"
        key: Any = level if level != "L3" else ("L3", turn, index)
        if key not in info.renders:
            if level == "L3" or info.msg.content:
                msg = render(self.counter, info.msg, level,
                             content_tokens=self._content_tokens(info) if level != "L3" else 0,
                             tokens=info.tokens, turn=turn, index=index, policy=self.policy)
            else:
                msg = None
            if msg is None:
                info.renders[key] = None
            else:
                n = self.counter.count_message(msg)
                info.renders[key] = (msg, n) if n < info.tokens else None
        hit = info.renders[key]
        if hit is None:
            return info.msg, info.tokens, "L0"
        return hit[0], hit[1], level

    def _content_tokens(self, info: MessageInfo) -> int:
        if info.content_tokens is None:
            info.content_tokens = self.counter.count_text(info.msg.content)
        return info.content_tokens

    def sentences(self, text: str) -> tuple[str, ...]:
        """``text``'s sentences (cut after a sentence's end or at a line break), cached by text."""
        cache = self._sentences
        hit = cache.get(text)
        if hit is None:
            hit = tuple(p for p in SENTENCE.split(text.strip()) if p)
            if len(cache) >= CACHE_MAX:
                cache.clear()
            cache[text] = hit
        return hit

    def tool_tokens(self, tools: tuple[ToolSpec, ...]) -> int:
        """The token count of these tool specs (counted again only when they are other objects)."""
        key = tuple(map(id, tools))
        if key != self._tools_key or not all(map(operator.is_, tools, self._tools_ref)):
            self._tools_key, self._tools_ref = key, tools
            self._tools_tokens = self.counter.count_tools(tools)
        return self._tools_tokens

    # ---- the question's scores -------------------------------------------------------------
    def question_scores(self, index: RelevanceIndex, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        """``compute()``, or what it returned for the same ``key`` over the same ``index`` at its
        current size: the builds of one call (the runtime builds again with the sections that cover
        what did not fit, or with a smaller window) ask the same question of the same history. The
        result is shared: callers only read it."""
        if self._question_index is not index or self._question_size != len(index):
            self._question_index, self._question_size = index, len(index)
            self._question.clear()
        hit = self._question.get(key, _MISSING)
        if hit is _MISSING:
            hit = compute()
            if len(self._question) >= QUESTIONS_KEPT:
                self._question.pop(next(iter(self._question)))
            self._question[key] = hit
        return hit  # type: ignore[no-any-return]

    # ---- the summariser's texts ------------------------------------------------------------
    def summary(self, key: tuple[Any, ...]) -> str | None:
        """The summariser's text kept for this fold, if any."""
        return self.summaries.get(key)

    def remember_summary(self, key: tuple[Any, ...], text: str) -> None:
        """Keep the summariser's text for ``key`` (the :data:`SUMMARIES_KEPT` latest)."""
        self.summaries[key] = text
        if len(self.summaries) > SUMMARIES_KEPT:
            self.summaries.pop(next(iter(self.summaries)))
