"""The explainable working-set builder (seed 003): what the model sees, and why.

:class:`WorkingSetBuilder` turns the full history plus pins, sections, a task and tool specs into
the messages to send, within a :class:`~arcana_jupyter.context.decisions.TokenBudget`, and records
one :class:`MessageDecision` per input (history first, then the separate current input, the task,
the pins and the sections, in that order). It is a pure function of its inputs — no clock, no
randomness, no dependence on earlier calls — so a turn is rebuilt from its trace byte for byte;
the builder object only caches (token counts, compressed forms, the BM25 index) to be fast when it
is reused turn after turn. ``previous=`` (the previous :class:`BuildResult`) is only compared with
the new prompt to report ``prefix_tokens_reused`` / ``prefix_messages_reused``: stability across
turns comes from the quantized bands of :mod:`.strategies`, not from remembering old decisions, so
a rebuild needs nothing but the turn's own inputs.

Prompt layout (stable first, so providers can reuse the cached prefix)::

    identity (system prompt) | task | head sections | pins | head exchange (tail_preserve)
    | summary (llm_summarize) | middle bands (tail_preserve) | verbatim window | recent exchange
    | late sections | earlier turns relevant to this input | current input

(``layout="recall_first"``, what traces before it recorded: the recent exchange after the relevant
turns, just before the input.) With ``drop_policy="blocks"`` (the runtime's default mode) there are
no middle bands and no summary: the head exchange, then the verbatim window, which gives way a large
block at a time at absolute positions (see :data:`DROP_POLICIES`).

Strategies, reasons and the quantized window are described in :mod:`.strategies`; fidelity levels
in :mod:`.fidelity`; relevance in :mod:`.relevance`.
"""

from __future__ import annotations

import copy
import inspect
import operator
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any, NamedTuple

from ..messages import Message, MessageLike, ToolSpec, as_message
from ..schema.pins import Pin
from ..tokens import TokenCounter
from . import strategies as S
from .decisions import (
    Fidelity,
    MessageDecision,
    Source,
    TokenBudget,
)
from .embeddings import Embedder, EmbeddingStore, default_embedder, embedder_for
from .fidelity import FidelityPolicy, fit_text, render
from .history import HistoryState, MessageInfo
from .relevance import RECENCY_HALF_TURNS, W_BM25, W_RECENCY, Fusion, fuse, message_text, parse_fusion, stems
from .result import MSG_FIELDS, Assembly, BuildResult, Item, Pending, compose, make_decision
from .sections import ContextSection, render_task

Summarizer = Callable[[list[Message]], str]
AsyncSummarizer = Callable[[list[Message]], Awaitable[str]]

RECALL_MIN_BM25 = 0.2
"""Normalised BM25 an older message needs to be brought back as relevant to the current input
(with an embedding model, a message in the cosine ranking qualifies too, see relevance.py)."""
RECALL_MAX_UNITS = 160
"""Most relevant units brought back in one build (the budget is the usual limit)."""
NEIGHBOUR_EXCHANGES = 3
"""Exchanges before and after a relevant one brought back as ``neighbour`` (nearest first)."""
RECENCY_MIN_ROOM = 8
"""The recency fill stops when fewer tokens than this are left (no message is that small)."""
RECENCY_MAX_MISSES = 24
"""... or after this many units in a row that did not fit (a bound on the cost of a build)."""
MIN_SUMMARY_TOKENS = 64
_INFO_CACHE_MAX = 200_000
DROP_POLICIES = ("bands", "blocks")
"""How the verbatim window gives way once the conversation no longer fits (see :data:`S.BLOCK_KEPT`):
``bands`` (the builder's default, and what every trace recorded before the policy existed rebuilds
with): the quantized bands of :mod:`.strategies` (head exchange, compressed middle, a window that
moves by ``band_fraction``), the room left after the window filled by relevant earlier turns, their
neighbours and the most recent turns; ``blocks`` (the runtime's default mode): the head exchange
(when it fits beside the input) and the window, which gives way a large block (``block_fraction``
of the available tokens) at a time at absolute positions, so the prompt only grows at its end for
several turns between drops, and a small block of earlier turns relevant to the input
(``block_recall_share``: the question's literal best matches alternately with the fused ranking's,
and their exchanges; no neighbours, no recency fill) — what is left of the budget between drops
stays free. When that small block would be under ``block_recall_min`` tokens (small windows), the
room left goes to relevant turns, their neighbours and recent turns, as with ``bands``.
(Measured on benchmarks/retention/sessions.py, see benchmarks/results/retention_sessions.md.)"""
BLOCK_GRAIN = 64
"""The block quantum is rounded to the nearest multiple of this, so that a few tokens more or less in
the available budget (calibration, the shaped prompt's recount) leave the drop points where they are
(the usual windows less their reserve, 1,536 / 3,072 / 7,168 / 15,360 tokens, are far from a midpoint)."""
LAYOUTS = ("recent_first", "recall_first")
"""Where the exchange before the input goes: before the question-dependent block (``recent_first``,
the default since the prefix-reuse work: next turn it is part of the window, so the cached prefix
extends through it), or after it (``recall_first``: traces recorded before, which rebuild so)."""
_LIFT: dict[str, Fidelity] = {"L1": "L1", "L2": "L1", "L3": "L2"}
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
"""Where an excerpt may cut a message: after a sentence's end, or at a line break."""
EXCERPT_NAME = "excerpt"
"""The name of an excerpt's system message (a heading in the shaped prompt's context block)."""
EXCERPT_MATCHES: dict[str, tuple[float, int, bool]] = {
    "distinct": (0.5, 1, True),
    "first3": (0.3, 3, False),
}
"""When an excerpt is worth its room (``excerpt_match``), as (least match, excerpts taken whatever
their match, look-alikes discounted). The match is the part of the question's term weight (the idf
of its terms found earlier in the conversation) that an excerpt's best sentence holds. Past the
excerpts taken whatever their match (the best ones: a question worded unlike the statement it asks
about still gets its closest), an excerpt comes back when its match is at least the least match, or
when it holds the question's most specific term that any candidate holds.

- ``distinct`` (the default): an excerpt matching the same question terms as n excerpts already
  taken counts 1/(n+1) of its match, so look-alike statements (the same kind of fact with other
  values) come back once, not all; the block is far smaller than its room on most turns, and the
  next prompt repeats more of this one. Tuned at 4k on the dev split of
  benchmarks/retention/sessions.py and two more splits written the same way with other seeds:
  against ``first3``, prefix reuse once the window is full went from 77% to 82% and facts found
  from 69, 66, 63 to 69, 67, 65; a least match of 0.4 gives 81%, 0.6 82%, same facts; keeping at
  most a few excerpts that hold the most specific term loses facts.
- ``first3``: the rule before (what traces that recorded no ``excerpt_match`` rebuild with)."""
EXCERPT_MATCH_DEFAULT = "distinct"
EXCERPT_SENTENCES = 2
EXCERPT_POOL = 48
"""Relevant units (best first) the excerpts are chosen from."""
"""Most sentences an excerpt keeps (those that match the question best, equally well)."""


class Excerpt(NamedTuple):
    """A message brought back as its sentences that match the question (``block_excerpts``)."""

    msg: Message
    tokens: int
    matched: frozenset[str]
    """The question's terms its sentences hold."""
    value: float
    """The part of the question's term weight (idf) its best sentence holds."""


def _unit(vec: Any) -> Any:
    """``vec`` scaled to length 1 (a zero vector stays zero)."""
    norm = float((vec @ vec) ** 0.5)
    return vec / norm if norm > 0 else vec


def _same_entry(new: Any, old: Any) -> bool:
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


class WorkingSetBuilder:
    """Builds the working set of each LLM call and explains it (see the module docstring).

    Args:
        budget: the context window and the reply reserve.
        strategy: ``auto`` (default), ``passthrough``, ``tail_preserve``, ``aggressive_truncate`` or
            ``llm_summarize``.
        counter: the token counter (the model's encoding); a ``cl100k_base`` one by default.
        summarizer: ``messages -> str`` for :meth:`build`, or an async one for :meth:`abuild`.
        placeholder_hint: appended to L3 placeholders, e.g. ``"recall({turn}) to read it"`` when the
            recall primitive is enabled. ``None`` (default): placeholders mention no primitive.
        fidelity: sizes of the compressed forms.
        recall_share: part of the conversation budget reserved for relevant earlier turns (at least:
            whatever the quantized verbatim window leaves free goes to them too) ...
        recall_max_tokens: ... but at most this many tokens (``None``: no cap). That block changes
            with every question, so it is not part of the prefix a provider caches: on large windows
            a capped block keeps most of the prompt a reusable prefix (measured: 82% prefix reuse in
            steady state at a 16k window, 61% uncapped with the budget filled).
        section_share: most of the free budget sections may take before they are compressed.
        summary_max_tokens: largest summary the ``llm_summarize`` strategy makes room for.
        band_fraction: the quantum the verbatim window moves by, as a part of the available tokens.
            Larger: the prompt prefix survives more turns, but more of the prompt is the
            question-dependent fill after the window (the window takes between ``1 - band_fraction``
            and all of its share), which is not a reusable prefix.
        recall: bring older turns relevant to the current input back, late in the prompt (default).
            ``False`` keeps the prompt a pure function of position (no relevance-driven block).
        embedder: semantic relevance. ``"auto"`` (default): the bundled model when the
            ``[embeddings]`` extra is installed (and ``ARCANA_EMBEDDINGS`` is not ``off``), else
            lexical only, said in the decision's notes; ``None``: lexical only whatever is installed;
            a model's ``name@version`` (what :meth:`settings` records): that model, or an error
            saying what to install; or an :class:`~.embeddings.Embedder`.
        embedding_cache: a folder where computed vectors are kept (append-only, one file per
            model), so a resumed or rebuilt session does not embed again. Not a setting: it never
            changes a result.
        layout: ``recent_first`` (default) or ``recall_first`` (see :data:`LAYOUTS`).
        drop_policy: ``bands`` (default) or ``blocks`` (see :data:`DROP_POLICIES`).
        block_fraction: with ``blocks``, the size of one drop as a part of the available tokens
            (the window holds between ``1 - block_fraction`` of its room and all of it).
        block_recall_share: with ``blocks``, the part of the conversation budget the block of
            relevant earlier turns may take (at most ``recall_max_tokens``) ...
        block_recall_min: ... when that is fewer tokens than this, the budget is too small for a
            small block to hold what a question needs: the window keeps ``recall_share`` free and
            the room left goes to relevant turns, their neighbours and recent turns, as with ``bands``.
        block_excerpts: with ``blocks``, the small block brings each relevant message back as its
            sentences that match the question (an excerpt, ``L1`` with a cut marker, reason
            ``relevant_excerpt``) rather than whole, and without the rest of its exchange: several
            times more distinct matches fit in the same small block (see :data:`DROP_POLICIES`).
            ``False`` (default, and what traces recorded before the setting rebuild with): whole messages.
        excerpt_match: when an excerpt is worth its room, a key of :data:`EXCERPT_MATCHES`
            (``distinct``, the default; traces that recorded none rebuild with ``first3``).
        fusion: how the BM25 and the cosine rankings are combined when there is an embedder: a
            :class:`~.relevance.Fusion` or its ``spec()`` string; ``None`` (default): the tuned
            :data:`~.relevance.DEFAULT_FUSION`. Recorded as ``settings()["fusion"]``; lexical-only
            builds do not depend on it.
    """

    def __init__(
        self,
        budget: TokenBudget,
        strategy: str = "auto",
        counter: TokenCounter | None = None,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        *,
        placeholder_hint: str | None = None,
        fidelity: FidelityPolicy | None = None,
        recall_share: float = 0.5,
        section_share: float = 0.5,
        head_share: float = 0.15,
        window_share: float = 0.6,
        summary_max_tokens: int = 512,
        band_fraction: float = 0.125,
        recall: bool = True,
        recall_max_tokens: int | None = 1536,
        embedder: Embedder | str | None = "auto",
        embedding_cache: str | Path | None = None,
        layout: str = "recent_first",
        fusion: Fusion | str | None = None,
        drop_policy: str = "bands",
        block_fraction: float = 0.25,
        block_recall_share: float = 0.08,
        block_recall_min: int = 1024,
        block_excerpts: bool = False,
        excerpt_match: str = EXCERPT_MATCH_DEFAULT,
    ) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"unknown layout {layout!r}; choose one of {list(LAYOUTS)}")
        self.layout = layout
        if drop_policy not in DROP_POLICIES:
            raise ValueError(f"unknown drop_policy {drop_policy!r}; choose one of {list(DROP_POLICIES)}")
        self.drop_policy = drop_policy
        if strategy not in S.STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; choose one of {list(S.STRATEGIES)}")
        for name, value in (("recall_share", recall_share), ("section_share", section_share),
                            ("head_share", head_share), ("window_share", window_share),
                            ("band_fraction", band_fraction), ("block_fraction", block_fraction),
                            ("block_recall_share", block_recall_share)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {value}")
        self.budget = budget
        self.strategy = strategy
        self.counter = counter or TokenCounter()
        self.summarizer = summarizer
        base = fidelity or FidelityPolicy()
        self.policy = FidelityPolicy(base.l1_head, base.l1_tail, base.l2_head, placeholder_hint)
        self.recall_share = recall_share
        self.section_share = section_share
        self.head_share = head_share
        self.window_share = window_share
        self.summary_max_tokens = summary_max_tokens
        self.band_fraction = band_fraction
        self.block_fraction = block_fraction
        self.block_recall_share = block_recall_share
        if block_recall_min < 0:
            raise ValueError(f"block_recall_min must be >= 0, got {block_recall_min}")
        self.block_recall_min = block_recall_min
        self.block_excerpts = bool(block_excerpts)
        if excerpt_match not in EXCERPT_MATCHES:
            raise ValueError(f"excerpt_match must be one of {sorted(EXCERPT_MATCHES)}, got {excerpt_match!r}")
        self.excerpt_match = excerpt_match
        self.recall = recall
        if recall_max_tokens is not None and recall_max_tokens < 0:
            raise ValueError(f"recall_max_tokens must be >= 0 or None, got {recall_max_tokens}")
        self.recall_max_tokens = recall_max_tokens
        if embedder == "auto":
            embedder = default_embedder()
        elif isinstance(embedder, str):
            embedder = embedder_for(embedder)
        self.embedder: Embedder | None = embedder
        self.embeddings: EmbeddingStore | None = (
            EmbeddingStore(embedder, embedding_cache) if embedder is not None else None)
        self.fusion: Fusion = parse_fusion(fusion)
        # caches (never change a result, only how fast it is computed)
        self._by_id: dict[int, MessageInfo] = {}
        self._by_key: dict[tuple[Any, ...], MessageInfo] = {}
        self._state = HistoryState()
        self._tools_key: tuple[int, ...] = ()
        self._tools_ref: tuple[ToolSpec, ...] = ()
        self._tools_tokens = 0
        self._summaries: dict[tuple[Any, ...], str] = {}
        self._sentence_cache: dict[str, tuple[str, ...]] = {}
        self._by_dict: dict[tuple[Any, ...], Message] = {}
        self._seen: list[Any] = []
        """The last history as passed, position by position: a copy of each dict, or the Message."""
        self._seen_msgs: list[Message] = []
        """... and the Message each position became."""

    @property
    def placeholder_hint(self) -> str | None:
        return self.policy.placeholder_hint

    def settings(self) -> dict[str, Any]:
        """Every knob that shapes a build, JSON-ready: record it with a decision to rebuild the turn.

        ``WorkingSetBuilder(budget=TokenBudget(total_window=..., response_reserve=...), **rest)``
        where ``rest`` is this dict minus ``total_window``, ``response_reserve`` and ``summarizer``
        (a flag: whether a summariser was configured — ``auto`` chooses differently with one), and
        with ``fidelity`` turned back into a :class:`FidelityPolicy`.
        """
        p = self.policy
        return {
            "strategy": self.strategy,
            "total_window": self.budget.total_window,
            "response_reserve": self.budget.response_reserve,
            "placeholder_hint": p.placeholder_hint,
            "fidelity": {"l1_head": p.l1_head, "l1_tail": p.l1_tail, "l2_head": p.l2_head},
            "recall_share": self.recall_share,
            "section_share": self.section_share,
            "head_share": self.head_share,
            "window_share": self.window_share,
            "summary_max_tokens": self.summary_max_tokens,
            "band_fraction": self.band_fraction,
            "recall": self.recall,
            "recall_max_tokens": self.recall_max_tokens,
            "embedder": self.embedder.ident if self.embedder is not None else None,
            "fusion": self.fusion.spec(),
            "summarizer": self.summarizer is not None,
            "encoding": self.counter.encoding_name,
            "layout": self.layout,
            "drop_policy": self.drop_policy,
            "block_fraction": self.block_fraction,
            "block_recall_share": self.block_recall_share,
            "block_recall_min": self.block_recall_min,
            "block_excerpts": self.block_excerpts,
            "excerpt_match": self.excerpt_match,
        }

    # ---- public API ------------------------------------------------------------------------
    def build(
        self,
        history: Sequence[MessageLike],
        current_input: MessageLike | str | None = None,
        *,
        task: str | None = None,
        pins: Iterable[Pin] = (),
        sections: Iterable[ContextSection] = (),
        tools: Iterable[ToolSpec] = (),
        turn: int | None = None,
        step: int = 0,
        previous: BuildResult | None = None,
        summary_override: str | None = None,
    ) -> BuildResult:
        """Build the working set (see the class docstring). Uses a sync summariser, if any."""
        pending = self._prepare(history, current_input, task, pins, sections, tools, turn, step, previous,
                                summary_override)
        if isinstance(pending, BuildResult):
            return pending
        text = self._summaries.get(pending.key)
        if text is None and self.summarizer is not None:
            if inspect.iscoroutinefunction(self.summarizer):
                raise TypeError("this builder's summarizer is async: call `await builder.abuild(...)`")
            out = self.summarizer(pending.folded)
            if inspect.isawaitable(out):
                close = getattr(out, "close", None)
                if close is not None:
                    close()
                raise TypeError("this builder's summarizer returned an awaitable: call `await builder.abuild(...)`")
            text = str(out)
        return pending.finish(text)

    async def abuild(
        self,
        history: Sequence[MessageLike],
        current_input: MessageLike | str | None = None,
        *,
        task: str | None = None,
        pins: Iterable[Pin] = (),
        sections: Iterable[ContextSection] = (),
        tools: Iterable[ToolSpec] = (),
        turn: int | None = None,
        step: int = 0,
        previous: BuildResult | None = None,
        summary_override: str | None = None,
    ) -> BuildResult:
        """:meth:`build` with an async (or sync) summariser."""
        pending = self._prepare(history, current_input, task, pins, sections, tools, turn, step, previous,
                                summary_override)
        if isinstance(pending, BuildResult):
            return pending
        text = self._summaries.get(pending.key)
        if text is None and self.summarizer is not None:
            out: Any = self.summarizer(pending.folded)
            if inspect.isawaitable(out):
                out = await out
            text = str(out)
        return pending.finish(text)

    # ---- caches ----------------------------------------------------------------------------
    def _as_messages(self, history: Sequence[MessageLike]) -> list[Message]:
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
            for k, same in enumerate(map(_same_entry, history, seen)):  # noqa: B007
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
                    if len(cache) >= _INFO_CACHE_MAX:
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

    def _info(self, msg: Message) -> MessageInfo:
        info = self._by_id.get(id(msg))
        if info is not None and info.msg is msg:
            return info
        # everything that is sent, as a hashable tuple (cheaper than Message.content_key's JSON)
        key = (msg.role, msg.content, msg.tool_calls, msg.tool_call_id, msg.name)
        info = self._by_key.get(key)
        if info is None:
            info = MessageInfo(msg, self.counter.count_message(msg))
            if len(self._by_key) >= _INFO_CACHE_MAX:
                self._by_key.clear()
            self._by_key[key] = info
        elif info.msg is not msg:
            info = info.twin(msg)
        if len(self._by_id) >= _INFO_CACHE_MAX:
            self._by_id.clear()
        self._by_id[id(msg)] = info
        return info

    def _sync_history(self, msgs: list[Message]) -> HistoryState:
        """The history state of ``msgs``, extended in place when the history only grew."""
        state = self._state
        k = len(state.msgs)
        if len(msgs) >= k and all(map(operator.is_, state.msgs, msgs)):
            new = msgs[k:]
        else:
            state = self._state = HistoryState()
            new = msgs
        for m in new:
            state.append(self._info(m))
        return state

    def _tool_tokens(self, tools: tuple[ToolSpec, ...]) -> int:
        key = tuple(map(id, tools))
        if key != self._tools_key or not all(map(operator.is_, tools, self._tools_ref)):
            self._tools_key, self._tools_ref = key, tools
            self._tools_tokens = self.counter.count_tools(tools)
        return self._tools_tokens

    def _content_tokens(self, info: MessageInfo) -> int:
        if info.content_tokens is None:
            info.content_tokens = self.counter.count_text(info.msg.content)
        return info.content_tokens

    def _remember_summary(self, key: tuple[Any, ...], text: str) -> None:
        """Keep the summariser's text for ``key`` (the 64 latest)."""
        self._summaries[key] = text
        if len(self._summaries) > 64:
            self._summaries.pop(next(iter(self._summaries)))

    def _caches(self) -> _BuildCaches:
        return _BuildCaches(self._as_messages, self._sync_history, self._info, self._tool_tokens, self._render,
                            self._remember_summary, self._sentences)

    def _sentences(self, text: str) -> tuple[str, ...]:
        """``text``'s sentences (cut after a sentence's end or at a line break), cached by text."""
        cache = self._sentence_cache
        hit = cache.get(text)
        if hit is None:
            hit = tuple(p for p in _SENTENCE.split(text.strip()) if p)
            if len(cache) >= _INFO_CACHE_MAX:
                cache.clear()
            cache[text] = hit
        return hit

    def _render(
        self, info: MessageInfo, level: Fidelity, turn: int | None, index: int
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

    # ---- the build -------------------------------------------------------------------------
    def _prepare(
        self,
        history: Sequence[MessageLike],
        current_input: MessageLike | str | None,
        task: str | None,
        pins_in: Iterable[Pin],
        sections_in: Iterable[ContextSection],
        tools_in: Iterable[ToolSpec],
        turn: int | None,
        step: int,
        previous: BuildResult | None,
        summary_override: str | None,
    ) -> BuildResult | Pending:
        return _Build(self, self._caches(), history, current_input, task, pins_in, sections_in, tools_in, turn, step,
                      previous, summary_override).run()


class _BuildCaches(NamedTuple):
    """What a build uses of its builder's caches, and nothing else of its private state (the rest it
    reads are the builder's public settings). A cache never changes a result, only how fast it comes."""

    messages: Callable[[Sequence[MessageLike]], list[Message]]
    """The history as Message objects (a dict seen before maps to the same object)."""
    history_state: Callable[[list[Message]], HistoryState]
    """The shared history state of these messages, extended in place when the history only grew."""
    info: Callable[[Message], MessageInfo]
    """A message's token count and compressed forms."""
    tool_tokens: Callable[[tuple[ToolSpec, ...]], int]
    render: Callable[[MessageInfo, Fidelity, int | None, int], tuple[Message, int, Fidelity]]
    """A message at a fidelity level (or at L0 when that level is not smaller): message, tokens, level."""
    remember_summary: Callable[[tuple[Any, ...], str], None]
    """Keep the summariser's text for a fold, for the next build of the same fold."""
    sentences: Callable[[str], tuple[str, ...]]
    """A text's sentences (where an excerpt may cut it)."""


class _Build:
    """One build's working state (the algorithm lives here; the builder holds the caches)."""

    def __init__(
        self,
        b: WorkingSetBuilder,
        caches: _BuildCaches,
        history: Sequence[MessageLike],
        current_input: MessageLike | str | None,
        task: str | None,
        pins_in: Iterable[Pin],
        sections_in: Iterable[ContextSection],
        tools_in: Iterable[ToolSpec],
        turn: int | None,
        step: int,
        previous: BuildResult | None,
        summary_override: str | None,
    ) -> None:
        self.b = b
        self.caches = caches
        self.counter = b.counter
        self.budget = b.budget
        self.A = b.budget.available
        self.task = task
        self.pins = list(pins_in)
        self.sections = list(sections_in)
        self.tools = tuple(tools_in)
        self.turn = turn
        self.step = step
        self.previous = previous
        self.summary_override = summary_override
        self.notes: list[str] = []
        self._said: set[str] = set()
        """Sentences the prompt already holds (set before the small block's excerpts are chosen)."""

        hist = caches.messages(history)
        self.n_hist = len(hist)
        state = caches.history_state(hist)
        self.rel = state.rel
        if current_input is not None:
            cur = (
                Message(role="user", content=current_input)
                if isinstance(current_input, str)
                else as_message(current_input)
            )
            state = state.fork()
            state.append(caches.info(cur), index_text=False)
        self.state = state
        self.infos = state.infos
        self.msgs = state.msgs
        self.N = len(state.msgs)
        self.identity = state.identity
        self.units = state.units
        self.input_index = self.units[-1][-1] if self.units else None
        self.turns = state.turns
        self._exchanges: dict[int, tuple[int, int]] = {}
        self.window_start = 0

    # ---- run -------------------------------------------------------------------------------
    def run(self) -> BuildResult | Pending:
        b = self.b
        counter = self.counter
        A = self.A
        msgs, infos = self.msgs, self.infos
        tools_tokens = self.caches.tool_tokens(self.tools) if self.tools else 0

        # inputs besides the history, with their decision indices
        n_inputs = self.N
        self.task_msg = render_task(self.task) if self.task else None
        self.task_index = n_inputs if self.task_msg is not None else None
        n_inputs += 1 if self.task_msg is not None else 0
        self.pin_base = n_inputs
        n_inputs += len(self.pins)
        self.section_base = n_inputs
        n_inputs += len(self.sections)
        self.decisions: list[MessageDecision | None] = [None] * n_inputs

        live_pins = [(k, p, p.render()) for k, p in enumerate(self.pins) if not p.expired(self.turn)]
        pin_tokens = {k: counter.count_message(m) for k, _, m in live_pins}
        sec_msgs = [s.render() for s in self.sections]
        sec_tokens = [counter.count_message(m) for m in sec_msgs]
        task_tokens = counter.count_message(self.task_msg) if self.task_msg is not None else 0
        sys_tokens = infos[self.identity].tokens if self.identity is not None else 0

        unit_l0 = self.state.unit_cost
        conv_l0 = sum(unit_l0)
        total_before = sys_tokens + task_tokens + sum(pin_tokens.values()) + sum(sec_tokens) + conv_l0
        prompt_before = total_before + tools_tokens + counter.reply_priming
        util_before = round(prompt_before / A, 4) if A > 0 else float(prompt_before)
        self.util_before = util_before

        has_summary = b.summarizer is not None or self.summary_override is not None
        requested = b.strategy
        strategy = S.choose_auto(util_before, has_summary) if requested == "auto" else requested
        if strategy == "passthrough" and prompt_before > A:
            self.notes.append(f"passthrough does not fit ({prompt_before} > {A} tokens): fell back to tail_preserve")
            strategy = "tail_preserve"
        if strategy == "llm_summarize" and not has_summary:
            self.notes.append("llm_summarize has no summariser: fell back to tail_preserve")
            strategy = "tail_preserve"
        self.requested = requested

        input_unit = len(self.units) - 1
        input_cost = unit_l0[input_unit] if self.units else 0
        protected_secs = [k for k, s in enumerate(self.sections) if s.protected]
        must = (sys_tokens + task_tokens + sum(pin_tokens.values()) + sum(sec_tokens[k] for k in protected_secs)
                + input_cost + tools_tokens + counter.reply_priming)
        # What must be kept does not fit: rather than send a prompt the model will refuse, compress
        # the checkpoint, then the current input (a lone user message), just enough to fit.
        protected_fit: dict[int, tuple[Message, int, Fidelity]] = {}
        self.input_fit: tuple[Message, int, Fidelity] | None = None
        if must > A:
            for k in protected_secs:
                fitted = self._fit_section(k, sec_msgs[k], sec_tokens[k], sec_tokens[k] - (must - A))
                if fitted is not None and fitted[1] < sec_tokens[k]:
                    protected_fit[k] = fitted
                    must -= sec_tokens[k] - fitted[1]
                    self.notes.append(f"the checkpoint was compressed to {fitted[2]} ({sec_tokens[k]} -> {fitted[1]} "
                                      "tokens) so that what must be kept fits the budget")
        if must > A and self.input_index is not None and self.units and self.units[input_unit] == [self.input_index]:
            fitted = self._fit_input(input_cost - (must - A))
            if fitted is not None:
                self.input_fit = fitted
                must -= input_cost - fitted[1]
                unit_l0 = [*unit_l0[:input_unit], fitted[1], *unit_l0[input_unit + 1:]]
                self.notes.append(f"the current input was compressed to {fitted[2]} ({input_cost} -> {fitted[1]} "
                                  "tokens) to fit the budget")
                input_cost = fitted[1]
        overflow = must > A
        if overflow:
            self.notes.append(
                f"overflow: what must be kept (system prompt, task, pins, checkpoint, current input, tool specs "
                f"and reply priming: {must} tokens) exceeds the {A} available tokens; it is sent anyway and "
                "everything else was dropped"
            )
        self.quantum = max(16, int(A * b.band_fraction))
        self.block_quantum = max(BLOCK_GRAIN, round(A * b.block_fraction / BLOCK_GRAIN) * BLOCK_GRAIN)

        # ---- sections (compressed under pressure, never the checkpoint) -------------------
        sec_render: dict[int, tuple[Message, int, Fidelity] | None] = {}
        free = max(0, A - must)
        cap = int(free * b.section_share)
        plain = [k for k, s in enumerate(self.sections) if not s.protected]
        for k in protected_secs:
            sec_render[k] = protected_fit.get(k, (sec_msgs[k], sec_tokens[k], "L0"))
        plain_total = sum(sec_tokens[k] for k in plain)
        if strategy == "passthrough" or (not overflow and plain_total <= cap):
            for k in plain:
                sec_render[k] = (sec_msgs[k], sec_tokens[k], "L0")
        elif overflow:
            for k in plain:
                sec_render[k] = None
        else:
            for k in plain:
                sec_render[k] = self._fit_section(
                    k, sec_msgs[k], sec_tokens[k], cap * sec_tokens[k] // max(1, plain_total)
                )
        sections_after = sum(r[1] for r in sec_render.values() if r is not None)

        fixed_nonconv = (sys_tokens + task_tokens + sum(pin_tokens.values()) + sections_after + tools_tokens
                         + counter.reply_priming)
        # round the fixed part up to a quarter quantum so small changes in sections do not move bands
        grain = max(1, self.quantum // 4)
        rounded = -(-fixed_nonconv // grain) * grain
        C = A - rounded if A - rounded >= input_cost else A - fixed_nonconv

        # before any await: the shared index may grow meanwhile
        self.bm25, self.via, self.lexical = self._relevance(strategy != "passthrough" and b.recall)
        # the blocks policy's small block takes the question's literal best matches too (no feedback
        # expansion, which on look-alike turns ranks the look-alikes with the answer)
        query = self._query() if b.drop_policy == "blocks" and strategy != "passthrough" and b.recall else ""
        self.literal: dict[int, float] = self.rel.scores(query, limit=self.n_hist, feedback=False) if query else {}

        # ---- plan the conversation --------------------------------------------------------
        self.stale: set[int] = set() if strategy == "passthrough" else self.state.stale()
        plan = self._plan(strategy, overflow, unit_l0, C)
        strategy = plan["strategy"]

        ctx = Assembly(
            strategy=strategy, overflow=overflow, live_pins=live_pins, pin_tokens=pin_tokens,
            sec_render=sec_render, sec_msgs=sec_msgs, sec_tokens=sec_tokens, task_tokens=task_tokens,
            tools_tokens=tools_tokens, reply_priming=counter.reply_priming, plan=plan,
        )
        if strategy == "llm_summarize" and plan["fold_until"] > 0:
            folded = [msgs[i] for u in range(plan["fold_until"]) for i in self.units[u]]
            key = tuple((m.role, m.content, m.tool_calls, m.tool_call_id) for m in folded)
            if self.summary_override is not None:
                return self._finish(ctx, self.summary_override)
            self._detach()
            return Pending(folded=folded, key=key, finish=lambda text: self._summary_done(ctx, key, text))
        return self._finish(ctx, None)

    def _relevance(self, recall: bool) -> tuple[dict[int, float], dict[int, str], dict[int, float]]:
        """``(match, via, bm25)`` of history messages against the current input + task (+ this turn's
        user message): see relevance.py. The embedding model (if any) is asked only when older turns
        may be brought back (``recall``): a passthrough build records the lexical match."""
        query = self._query()
        if not query:
            return {}, {}, {}
        lexical = self.rel.scores(query, limit=self.n_hist)
        store = self.b.embeddings
        if store is None or not recall:
            if recall:
                self.notes.append("relevance: lexical only (stemmed BM25 with feedback); no embedding model "
                                  "(pip install 'arcana-jupyter[embeddings]')")
            match, via = fuse(lexical, None)
            return match, via, lexical
        rel = self.rel
        if len(rel.vectors) < self.n_hist:
            rel.vectors.extend(store.get(message_text(m)) for m in self.msgs[len(rel.vectors):self.n_hist])
        fusion = self.b.fusion
        if fusion.parts:
            # each part cached by content (the input's text is the one it is indexed by as history)
            parts = [store.get(t) for t in self._query_parts(indexed=True)] or [store.get(query)]
            qvec = parts[0] if len(parts) == 1 else _unit(sum(parts[1:], parts[0]))
        else:
            qvec = store.get(query)
        semantic = rel.semantic(qvec, self.n_hist)
        coverage = rel.coverage(query, lexical) if fusion.head > 0 or fusion.method in ("gated", "score") else {}
        self.notes.append(f"relevance: stemmed BM25 with feedback + semantic ({store.ident}), fused by "
                          f"{fusion.spec()}")
        match, via = fuse(lexical, semantic, fusion, coverage)
        return match, via, lexical

    def _query(self) -> str:
        return " ".join(self._query_parts())

    def _query_parts(self, indexed: bool = False) -> list[str]:
        """The current input, this turn's user message when the input is not it, and the task.
        ``indexed``: the input by the text it is indexed by as a history message (its embedding is
        then the one the next build needs anyway)."""
        msgs = self.msgs
        query_parts = []
        if self.input_index is not None:
            msg = msgs[self.input_index]
            query_parts.append(message_text(msg) if indexed else msg.content)
            if msg.role != "user":
                last_user = next((i for i in range(self.input_index - 1, -1, -1) if msgs[i].role == "user"), None)
                if last_user is not None:
                    query_parts.append(message_text(msgs[last_user]) if indexed else msgs[last_user].content)
        if self.task:
            query_parts.append(self.task)
        return [p for p in query_parts if p] if indexed else query_parts

    def _detach(self) -> None:
        """Own copies of the shared history state, for a build that waits on the summariser: another
        build on the same builder may extend the shared state meanwhile."""
        state = self.state.fork()
        self.state, self.msgs, self.infos, self.units, self.turns = (
            state, state.msgs, state.infos, state.units, state.turns
        )

    def _summary_done(self, ctx: Assembly, key: tuple[Any, ...], text: str | None) -> BuildResult:
        if text is not None:
            self.caches.remember_summary(key, text)
        return self._finish(ctx, text)

    def _fit_input(self, target: int) -> tuple[Message, int, Fidelity] | None:
        """The current input compressed (head and tail kept, L1) to at most ``target`` tokens."""
        assert self.input_index is not None
        info = self.infos[self.input_index]
        msg = self.msgs[self.input_index]
        return self._fit_section(-1, msg, info.tokens, target)

    def _fit_section(self, k: int, msg: Message, tokens: int, target: int) -> tuple[Message, int, Fidelity] | None:
        overhead = tokens - self.counter.count_text(msg.content)
        fitted = fit_text(self.counter, msg.content, tokens - overhead, target - overhead)
        if fitted is None:
            return None
        text, level = fitted
        if level == "L0":
            return msg, tokens, "L0"
        new = msg.replace(content=text)
        n = self.counter.count_message(new)
        return (new, n, level) if n <= max(target, 0) else None

    # ---- planning ----------------------------------------------------------------------------
    def _msg_cost(self, i: int, level: Fidelity) -> tuple[Message, int, Fidelity]:
        if i in self.stale:
            level = "L3"
        elif level != "L0" and (self.msgs[i].role == "user" or self.infos[i].error):
            level = _LIFT[level]
        return self.caches.render(self.infos[i], level, self.turns[i], i)

    def _unit_cost(self, u: int, level: Fidelity) -> int:
        return sum(self._msg_cost(i, level)[1] for i in self.units[u])

    def _plan(self, strategy: str, overflow: bool, unit_l0: list[int], C: int) -> dict[str, Any]:
        """Decide, per unit, its region: dropped / middle (level) / window; and the summary room."""
        b = self.b
        U = len(self.units)
        hi = U - 1
        plan: dict[str, Any] = {"strategy": strategy, "head": None, "drop_until": 0, "mid_from": 0, "window": 0,
                                "level": None, "fold_until": 0, "summary_room": 0, "no_budget_middle": False}
        if U == 0:
            return plan
        if strategy == "passthrough":
            return plan
        if overflow:
            plan["strategy"] = strategy
            plan["window"] = hi
            plan["drop_until"] = hi
            plan["mid_from"] = hi
            plan["overflow"] = True
            return plan
        # base (phase-0) costs: stale results at L3
        base = list(unit_l0)
        for u in sorted({self.state.unit_of[i] for i in self.stale}):
            base[u] = sum(self._msg_cost(i, "L0")[1] for i in self.units[u])
        offsets = [0, *accumulate(base)]
        Q = self.quantum
        recall_room = int(C * b.recall_share) if b.recall else 0
        if b.recall_max_tokens is not None:
            recall_room = min(recall_room, b.recall_max_tokens)

        if strategy == "llm_summarize":
            room = min(b.summary_max_tokens, int(C * 0.25))
            if room < MIN_SUMMARY_TOKENS:
                self.notes.append(f"no budget for a summary ({room} tokens): fell back to tail_preserve")
                strategy = "tail_preserve"
                plan["strategy"] = strategy
            else:
                w = S.window_start(offsets, C - recall_room - room, Q, 0, hi)
                room = min(room, C - (offsets[-1] - offsets[w]))
                if w == 0:
                    self.notes.append("llm_summarize: everything fits in the verbatim window, nothing to summarise")
                    plan.update(window=0, summary_room=0)
                    return plan
                if room >= MIN_SUMMARY_TOKENS:
                    plan.update(window=w, fold_until=w, drop_until=w, mid_from=w, summary_room=room)
                    return plan
                self.notes.append(f"no budget for a summary ({room} tokens): fell back to tail_preserve")
                strategy = "tail_preserve"
                plan["strategy"] = strategy
        if b.drop_policy == "blocks" and strategy in ("tail_preserve", "aggressive_truncate"):
            # the head exchange and the window, dropped a block at a time at absolute positions; a
            # small block of relevant turns, or on budgets too small for one, the usual fill
            # (DROP_POLICIES)
            room = int(C * b.block_recall_share) if b.recall else 0
            if b.recall_max_tokens is not None:
                room = min(room, b.recall_max_tokens)
            fill = b.recall and room < b.block_recall_min
            if fill:
                room = recall_room
            lo = 0
            first = self.units[0]
            if (hi > 0 and self.msgs[first[0]].role == "user" and base[0] <= int(C * b.head_share)
                    and base[0] + base[hi] <= C - room):
                plan["head"] = 0
                lo = 1
            budget = C - room - (base[0] if lo else 0)
            w = S.window_start(offsets, budget, self.block_quantum, lo, hi)
            if w <= lo:  # nothing between the head and the window: no head of its own
                plan["head"] = None
                w = S.window_start(offsets, C - room, self.block_quantum, 0, hi)
            plan.update(window=w, drop_until=w, mid_from=w, blocks=True, recall_room=room, recall_fill=fill)
            return plan
        if strategy == "aggressive_truncate":
            w = S.window_start(offsets, C - recall_room, Q, 0, hi)
            plan.update(window=w, drop_until=w, mid_from=w)
            return plan
        # tail_preserve
        mid_lo = 0
        first = self.units[0]
        if (hi > 0 and self.msgs[first[0]].role == "user" and base[0] <= int(C * b.head_share)
                and base[0] + base[hi] <= C - recall_room):
            plan["head"] = 0
            mid_lo = 1
        budget = C - recall_room - (base[0] if plan["head"] is not None else 0)
        drop_until, w, level = S.plan_middle(offsets, self._unit_cost, mid_lo, hi, budget, Q, b.window_share)
        plan.update(drop_until=drop_until, mid_from=drop_until, window=w, level=level)
        if level is None:
            plan["drop_until"] = plan["mid_from"] = w
            plan["no_budget_middle"] = w > mid_lo
        return plan

    # ---- assembly ----------------------------------------------------------------------------
    def _finish(self, ctx: Assembly, summary_text: str | None) -> BuildResult:
        msgs, infos = self.msgs, self.infos
        plan = ctx.plan
        strategy = ctx.strategy
        decisions = self.decisions
        turns = self.turns
        items_head: list[Item] = []
        items_stable: list[Item] = []
        items_late_sections: list[Item] = []
        items_recall: list[Item] = []
        items_recent: list[Item] = []

        bm25 = self.bm25
        cur_turn = (
            self.turn
            if self.turn is not None
            else (turns[self.input_index] if self.input_index is not None else None)
        )
        input_unit = len(self.units) - 1

        recency: dict[int, float] = {}
        bm25_get = bm25.get

        def score(i: int) -> float:
            # relevance.combined(), inlined: this runs once per history message on every build
            t = turns[i]
            age = cur_turn - t if (cur_turn is not None and t is not None and t < cur_turn) else 0
            rec = recency.get(age)
            if rec is None:
                rec = recency[age] = W_RECENCY / (1.0 + age / RECENCY_HALF_TURNS)
            return round(W_BM25 * bm25_get(i, 0.0) + rec + infos[i].static, 4)

        input_index = self.input_index
        new_obj = MessageDecision.__new__
        setattr_ = object.__setattr__

        def make(values: dict[str, Any]) -> MessageDecision:  # make_decision(), inlined for the hot loops
            obj = new_obj(MessageDecision)
            setattr_(obj, "__dict__", values)
            setattr_(obj, "__pydantic_fields_set__", MSG_FIELDS)
            setattr_(obj, "__pydantic_extra__", None)
            setattr_(obj, "__pydantic_private__", None)
            return obj

        def put(i: int, into: list[Item], msg: Message, tokens: int, outcome: str, level: Fidelity | None,
                reason: str, rel: float | None) -> None:
            into.append(Item(msg, tokens, i))
            decisions[i] = make({
                "index": i, "role": msgs[i].role, "outcome": outcome, "fidelity": level, "relevance_score": rel,
                "token_count_before": infos[i].tokens, "token_count_after": tokens, "reason": reason,
                "layer": "working", "source": "input" if i == input_index else "history", "section": None,
                "pinned": False, "turn": turns[i], "position": None, "recalled": False, "anchor_position": None,
            })

        def drop(i: int, reason: str, rel: float | None, outcome: str = "dropped") -> None:
            decisions[i] = make({
                "index": i, "role": msgs[i].role, "outcome": outcome, "fidelity": None, "relevance_score": rel,
                "token_count_before": infos[i].tokens, "token_count_after": 0, "reason": reason,
                "layer": "working", "source": "history", "section": None, "pinned": False, "turn": turns[i],
                "position": None, "recalled": False, "anchor_position": None,
            })

        # identity, task, head sections, pins
        if self.identity is not None:
            i = self.identity
            items_head.append(Item(msgs[i], infos[i].tokens, i))
            decisions[i] = make_decision(
                index=i, role="system", outcome="kept", fidelity="L0", relevance_score=None,
                token_count_before=infos[i].tokens, token_count_after=infos[i].tokens, reason=S.PASSTHROUGH,
                layer="identity", source="history", section=None, pinned=False, turn=turns[i], position=None,
                recalled=False, anchor_position=None,
            )
        if self.task_msg is not None and self.task_index is not None:
            items_head.append(Item(self.task_msg, ctx.task_tokens, self.task_index))
            decisions[self.task_index] = make_decision(
                index=self.task_index, role="system", outcome="kept", fidelity="L0", relevance_score=None,
                token_count_before=ctx.task_tokens, token_count_after=ctx.task_tokens, reason=S.TASK, layer="task",
                source="section", section="task", pinned=True, turn=None, position=None, recalled=False,
                anchor_position=None,
            )
        for k, sec in enumerate(self.sections):
            idx = self.section_base + k
            r = ctx.sec_render[k]
            before = ctx.sec_tokens[k]
            if r is None:
                decisions[idx] = make_decision(
                    index=idx, role=sec.role, outcome="dropped", fidelity=None, relevance_score=None,
                    token_count_before=before, token_count_after=0, reason=S.section_reason(sec.name),
                    layer=sec.layer, source="section", section=sec.name, pinned=False, turn=None, position=None,
                    recalled=False, anchor_position=None,
                )
                continue
            m, n, level = r
            (items_head if sec.placement == "head" else items_late_sections).append(Item(m, n, idx))
            decisions[idx] = make_decision(
                index=idx, role=sec.role, outcome="kept" if level == "L0" else "compressed", fidelity=level,
                relevance_score=None, token_count_before=before, token_count_after=n,
                reason=S.section_reason(sec.name), layer=sec.layer, source="section", section=sec.name,
                pinned=sec.protected, turn=None, position=None, recalled=False, anchor_position=None,
            )
        live = {k for k, _, _ in ctx.live_pins}
        pin_msgs = {k: m for k, _, m in ctx.live_pins}
        for k, pin in enumerate(self.pins):
            idx = self.pin_base + k
            if k in live:
                n = ctx.pin_tokens[k]
                items_head.append(Item(pin_msgs[k], n, idx))
                decisions[idx] = make_decision(
                    index=idx, role="system", outcome="kept", fidelity="L0", relevance_score=None,
                    token_count_before=n, token_count_after=n, reason=S.PINNED, layer="working", source="pin",
                    section=pin.pin_id, pinned=True, turn=pin.created_turn, position=None, recalled=False,
                    anchor_position=None,
                )
            else:
                n = self.counter.count_message(pin.render())
                decisions[idx] = make_decision(
                    index=idx, role="system", outcome="dropped", fidelity=None, relevance_score=None,
                    token_count_before=n, token_count_after=0, reason=S.PIN_EXPIRED, layer="working",
                    source="pin", section=pin.pin_id, pinned=True, turn=pin.created_turn, position=None,
                    recalled=False, anchor_position=None,
                )

        units = self.units
        summary_item: Item | None = None
        summary_used: str | None = None
        overflowing = plan.get("overflow", False)
        drop_until = plan["drop_until"]
        mid_from = plan["mid_from"]
        window = plan["window"]
        self.window_start = window
        level = plan["level"]
        head = plan["head"]
        fold_until = plan["fold_until"]
        blocks = plan.get("blocks", False)
        if strategy == "passthrough":
            keep_reason, drop_reason = S.PASSTHROUGH, S.PASSTHROUGH
        elif blocks:
            keep_reason, drop_reason = S.BLOCK_KEPT, S.BLOCK_DROPPED
        elif strategy == "tail_preserve":
            keep_reason = S.TP_TAIL
            drop_reason = S.TP_NO_BUDGET_FOR_MIDDLE if plan["no_budget_middle"] else S.TP_MIDDLE_DROPPED
        elif strategy == "aggressive_truncate":
            keep_reason, drop_reason = S.AT_KEPT, S.AT_DROP
        else:  # llm_summarize: the verbatim window is the preserved tail
            keep_reason, drop_reason = S.TP_TAIL, S.TP_MIDDLE_DROPPED
        if overflowing:
            drop_reason = S.OVERFLOW
        if strategy == "llm_summarize" and fold_until > 0:
            summary_item, summary_used = self._summary_item(summary_text, fold_until, plan["summary_room"])
        middle_rendered: dict[int, tuple[Message, int, Fidelity]] = {}
        stale = self.stale
        for u, unit in enumerate(units):
            if u == input_unit:
                for i in unit:
                    if i == self.input_index and self.input_fit is not None:
                        m, n, lv = self.input_fit
                        put(i, items_stable, m, n, "compressed", lv, S.CURRENT_INPUT_COMPRESSED, None)
                    elif i == self.input_index:
                        put(i, items_stable, msgs[i], infos[i].tokens, "kept", "L0", S.CURRENT_INPUT, None)
                    else:
                        put(i, items_stable, msgs[i], infos[i].tokens, "kept", "L0", keep_reason, score(i))
            elif head is not None and u == head:
                for i in unit:
                    m, n, lv = self._msg_cost(i, "L0")
                    if i in self.stale:
                        put(i, items_stable, m, n, "compressed", lv, S.STALE_TOOL_RESULT, score(i))
                    else:
                        put(i, items_stable, m, n, "kept", "L0", S.TP_HEAD, score(i))
            elif u < fold_until and summary_item is not None:
                for i in unit:
                    drop(i, S.SUMMARIZED, score(i), outcome="summarized")
            elif u < drop_until or u < mid_from or (strategy != "tail_preserve" and u < window):
                # the hot loop of long histories: score() and drop() inlined
                for i in unit:
                    t = turns[i]
                    age = cur_turn - t if (cur_turn is not None and t is not None and t < cur_turn) else 0
                    rec = recency.get(age)
                    if rec is None:
                        rec = recency[age] = W_RECENCY / (1.0 + age / RECENCY_HALF_TURNS)
                    info = infos[i]
                    obj = new_obj(MessageDecision)
                    setattr_(obj, "__dict__", {
                        "index": i, "role": info.msg.role, "outcome": "dropped", "fidelity": None,
                        "relevance_score": round(W_BM25 * bm25_get(i, 0.0) + rec + info.static, 4),
                        "token_count_before": info.tokens, "token_count_after": 0,
                        "reason": S.STALE_TOOL_RESULT if i in stale else drop_reason, "layer": "working",
                        "source": "history", "section": None, "pinned": False, "turn": t, "position": None,
                        "recalled": False, "anchor_position": None,
                    })
                    setattr_(obj, "__pydantic_fields_set__", MSG_FIELDS)
                    setattr_(obj, "__pydantic_extra__", None)
                    setattr_(obj, "__pydantic_private__", None)
                    decisions[i] = obj
            elif u < window:  # tail_preserve middle band
                assert level is not None
                for i in unit:
                    m, n, lv = self._msg_cost(i, level)
                    middle_rendered[i] = (m, n, lv)
                    if i in self.stale:
                        put(i, items_stable, m, n, "compressed", lv, S.STALE_TOOL_RESULT, score(i))
                    elif lv == "L0":
                        put(i, items_stable, m, n, "kept", "L0", S.TP_MIDDLE_KEPT, score(i))
                    else:
                        put(i, items_stable, m, n, "compressed", lv, S.TP_MIDDLE_COMPRESSED, score(i))
            else:  # verbatim window (hot on long windows: put() and score() inlined)
                for i in unit:
                    if i in stale:
                        m, n, lv = self._msg_cost(i, "L0")
                        put(i, items_stable, m, n, "compressed", lv, S.STALE_TOOL_RESULT, score(i))
                        continue
                    t = turns[i]
                    age = cur_turn - t if (cur_turn is not None and t is not None and t < cur_turn) else 0
                    rec = recency.get(age)
                    if rec is None:
                        rec = recency[age] = W_RECENCY / (1.0 + age / RECENCY_HALF_TURNS)
                    info = infos[i]
                    items_stable.append(Item(info.msg, info.tokens, i))
                    obj = new_obj(MessageDecision)
                    setattr_(obj, "__dict__", {
                        "index": i, "role": info.msg.role, "outcome": "kept", "fidelity": "L0",
                        "relevance_score": round(W_BM25 * bm25_get(i, 0.0) + rec + info.static, 4),
                        "token_count_before": info.tokens, "token_count_after": info.tokens, "reason": keep_reason,
                        "layer": "working", "source": "history", "section": None, "pinned": False, "turn": t,
                        "position": None, "recalled": False, "anchor_position": None,
                    })
                    setattr_(obj, "__pydantic_fields_set__", MSG_FIELDS)
                    setattr_(obj, "__pydantic_extra__", None)
                    setattr_(obj, "__pydantic_private__", None)
                    decisions[i] = obj
        # the recent exchange (from the last user message before the input) goes after the late block
        if units:
            recent_from = self._recent_start(input_unit if overflowing else window)
            members = set(units[recent_from]) if recent_from is not None else set(units[input_unit])
            cut = next((k for k, it in enumerate(items_stable) if it.owner in members), len(items_stable))
            items_recent = items_stable[cut:]
            del items_stable[cut:]
        # relevant earlier turns
        if not overflowing and strategy != "passthrough" and self.b.recall:
            used = (self._sum(items_head) + self._sum(items_stable) + self._sum(items_late_sections)
                    + self._sum(items_recent) + (summary_item.tokens if summary_item else 0))
            room = self.A - used - ctx.tools_tokens - self.counter.reply_priming
            fill = not blocks or plan["recall_fill"]
            if not fill:  # a small block: what the window leaves free between drops stays free
                room = min(room, plan["recall_room"])
            if blocks and not fill and self.b.block_excerpts:
                # what the prompt already says, sentence by sentence: an excerpt never repeats it
                self._said = {p for it in (*items_head, *items_stable, *items_late_sections, *items_recent)
                              for p in self._sentences(it.msg.content)}
            self._recall(strategy, bm25, score, room, middle_rendered, items_recall, fill=fill)

        # ---- order, positions, accounting -------------------------------------------------------
        ordered = [*items_head]
        if summary_item is not None:
            ordered.append(summary_item)
        # the exchange before the input stays in conversation order, ahead of the question-dependent
        # block: next turn it is part of the verbatim window, so the cached prefix extends through it
        # (the current turn — from its user message on, with any tool steps — stays last, together)
        cut = next((k for k in range(len(items_recent) - 1, -1, -1) if items_recent[k].msg.role == "user"), 0)
        if self.b.layout == "recent_first":
            ordered += items_stable + items_recent[:cut] + items_late_sections + items_recall + items_recent[cut:]
        else:
            ordered += items_stable + items_late_sections + items_recall + items_recent
        return compose(
            decisions=self.decisions, ordered=ordered, ctx=ctx, budget=self.budget, previous=self.previous,
            turn=self.turn, step=self.step, requested=self.requested, utilization_before=self.util_before,
            notes=self.notes, summary=summary_used, tools=list(self.tools), sections=list(self.sections),
            pins=list(self.pins), task=self.task, n_history=self.N, identity=self.identity,
            conversation=(self.N - (self.identity is not None), sum(self.state.unit_cost)),
        )

    def _summary_item(self, text: str | None, fold_until: int, room: int) -> tuple[Item | None, str | None]:
        """The summary message (cut to ``room`` tokens), or ``None`` when there is no summary text."""
        if text is None or not text.strip():
            self.notes.append("no summary text (the summariser returned nothing): folded messages dropped instead")
            return None, None
        count = sum(len(self.units[u]) for u in range(fold_until))
        header = f"Summary of the earlier conversation ({count} messages):\n"
        msg = Message(role="system", content=header + text, name="summary")
        n = self.counter.count_message(msg)
        if n > room:
            self.notes.append(f"the summary was cut to fit its {room} tokens")
            keep = self.counter.count_text(text) - (n - room)
            while n > room and keep > 0:
                text = self.counter.truncate_text(text, keep)
                msg = Message(role="system", content=header + text, name="summary")
                n = self.counter.count_message(msg)
                keep -= max(1, n - room)
            if n > room:
                self.notes.append("no room for the summary: folded messages dropped instead")
                return None, None
        return Item(msg, n, None), text

    def _recall(
        self,
        strategy: str,
        bm25: dict[int, float],
        score: Callable[[int], float],
        room: int,
        middle_rendered: dict[int, tuple[Message, int, Fidelity]],
        out: list[Item],
        fill: bool = True,
    ) -> None:
        """Fill ``room`` with older turns relevant to the current input, whole exchanges where they fit.

        Units are ranked by their best message's match (``bm25``: the fused match, see relevance.py);
        relevant units come back verbatim (or at L1 when verbatim does not fit), best first, until
        the room is used up or the ranking ends; then the rest of their exchanges (the user turn and
        the replies to it), then the exchanges just before and after them, nearest first
        (``neighbour``: the context a fact was stated in); then the most recent earlier turns not in
        the prompt yet (``recency``), whole exchanges where they fit. Deterministic: ties go to the
        earlier unit. Placed in conversation order, late in the prompt. (Measured on the dev split:
        taking each hit's exchange at once left room for fewer distinct hits: 0.61 -> 0.71 at 2k.)
        ``fill=False`` (the ``blocks`` drop policy): the relevant units and their exchanges only —
        no neighbours, no recency fill.
        """
        decisions = self.decisions
        units = self.units
        last = len(units) - 1
        lexical = self.lexical
        via = self.via
        candidates, best_msg = self._best_per_unit(
            bm25, lambda i, s: not (via.get(i) == "bm25" and lexical.get(i, 0.0) < RECALL_MIN_BM25))
        if room <= 0:
            return
        ranked = sorted(candidates, key=lambda u: (-candidates[u], u))[:RECALL_MAX_UNITS]
        literal_best: dict[int, float] = {}
        if not fill and self.literal:
            # the small block: the literal best matches and the fused ranking's, alternately
            # (excerpts: any literal match; its sentences' own match decides, see _excerpt)
            floor = 0.0 if self.b.block_excerpts else RECALL_MIN_BM25
            literal, literal_msg = self._best_per_unit(self.literal, lambda i, s: s > 0 and s >= floor)
            literal_best = literal
            first = sorted(literal, key=lambda u: (-literal[u], u))
            merged: list[int] = []
            seen: set[int] = set()
            for k in range(max(len(first), len(ranked))):
                for u in (first[k] if k < len(first) else None, ranked[k] if k < len(ranked) else None):
                    if u is not None and u not in seen:
                        seen.add(u)
                        merged.append(u)
                        best_msg.setdefault(u, literal_msg.get(u, -1))
            ranked = merged[:RECALL_MAX_UNITS]
        chosen: dict[int, tuple[list[tuple[Message, int, Fidelity]], str]] = {}
        excerpts = not fill and self.b.block_excerpts
        terms = self._excerpt_terms() if excerpts else {}

        def take(u: int, reason: str, levels: tuple[Fidelity, ...] = ("L0", "L1")) -> bool:
            nonlocal room
            if room < RECENCY_MIN_ROOM or u in chosen or u >= last or u < 0 or any(self._shown(i) for i in units[u]):
                return False
            for level in levels:
                rendered = [self._msg_cost(i, level) if i not in self.stale else self._msg_cost(i, "L3")
                            for i in units[u]]
                cost = sum(r[1] for r in rendered)
                if cost <= room:
                    room -= cost
                    chosen[u] = (rendered, reason)
                    return True
            return False

        if excerpts:
            # the small block as excerpts: the best match first, then whichever adds most, a match
            # of the same question terms as n excerpts already taken counting 1/(n+1) of its own
            # (several look-alike statements do not crowd out the one that matches the rest)
            pool: list[tuple[float, Any, int, int, Excerpt | None]] = []
            for k, u in enumerate(ranked[:EXCERPT_POOL]):
                if u >= last or any(self._shown(i) for i in units[u]):
                    continue
                made = self._excerpt(units[u], terms)
                if made is False:  # no sentence the prompt does not hold already matches
                    continue
                if made is True:  # not a message an excerpt is made of: whole, by its own match
                    pool.append((max(candidates.get(u, 0.0), literal_best.get(u, 0.0)), ("unit", u), k, u, None))
                else:
                    pool.append((made.value, made.matched, k, u, made))
            # the most specific question term that any candidate holds: a sentence holding it comes
            # back even when it matches little else (a question worded unlike the statement)
            found = {t for _, key, _, _, ex in pool if ex is not None for t in key}
            anchor = max(sorted(found), key=lambda t: terms[t]) if found else None
            repeats: dict[Any, int] = {}
            least, any_match, discount = EXCERPT_MATCHES[self.b.excerpt_match]
            while pool and room >= RECENCY_MIN_ROOM:
                j = max(range(len(pool)), key=lambda j: (round(pool[j][0] / (1 + repeats.get(pool[j][1], 0)), 6),
                                                         -pool[j][2]))
                _, key, _, u, ex = pool.pop(j)
                if (ex is not None and ex.value / (1 + (repeats.get(key, 0) if discount else 0)) < least
                        and len(chosen) >= any_match and anchor not in ex.matched):
                    continue  # a weak match (or a look-alike of one taken), and the block has its first
                if ex is None:
                    i = best_msg[u]
                    ok = take(u, S.RELEVANT_SEMANTIC if via.get(i) == "semantic" else S.RELEVANT_BM25)
                elif ex.tokens <= room:
                    room -= ex.tokens
                    chosen[u] = ([(ex.msg, ex.tokens, "L1")], S.RELEVANT_EXCERPT)
                    ok = True
                else:
                    ok = False
                if ok:
                    repeats[key] = repeats.get(key, 0) + 1
        for u in ranked if not excerpts else ():
            if room < RECENCY_MIN_ROOM:
                break
            i = best_msg[u]
            take(u, S.RELEVANT_SEMANTIC if via.get(i) == "semantic" else S.RELEVANT_BM25)
        seeds = [u for u in ranked if u in chosen]
        # then the rest of the exchanges of the ones brought back, best first (not with excerpts:
        # the room goes to more distinct matches) ...
        for u in seeds if not excerpts else ():
            if room < RECENCY_MIN_ROOM:
                break
            lo, hi = self._exchange(u)
            for v in range(lo, hi + 1):
                take(v, S.NEIGHBOUR, ("L0",))
        # ... then the exchanges around them, nearest first, while they fit
        for dist in range(1, NEIGHBOUR_EXCHANGES + 1 if fill else 1):
            if room < RECENCY_MIN_ROOM:
                break
            for u in seeds:
                if room < RECENCY_MIN_ROOM:
                    break
                lo, hi = self._exchange(u)
                before, after = lo, hi
                for _ in range(dist):
                    if before > 0:
                        before = self._exchange(before - 1)[0]
                    if after < last - 1:
                        after = self._exchange(after + 1)[1]
                for a, b in ((before, lo - 1), (hi + 1, after)):
                    if a <= b and not any(v in chosen for v in range(a, b + 1)):
                        for v in range(a, b + 1):
                            take(v, S.NEIGHBOUR, ("L0",))
        # then the most recent earlier turns not in the prompt yet (recency), newest first, whole
        # exchanges where they fit, else the units of the exchange that fit
        u = min(last, self.window_start) - 1  # everything from the window on is in the prompt
        misses = 0
        while fill and u >= 0 and room >= RECENCY_MIN_ROOM and misses < RECENCY_MAX_MISSES:
            lo, hi = self._exchange(u)
            free = [v for v in range(lo, hi + 1)
                    if v not in chosen and not any(self._shown(i) for i in units[v])]
            if free:
                whole = sum(self._unit_cost(v, "L0") for v in free)
                if whole <= room:
                    for v in free:
                        take(v, S.RECENCY, ("L0",))
                    misses = 0
                else:
                    for v in free:
                        if room < RECENCY_MIN_ROOM:
                            break
                        misses = 0 if take(v, S.RECENCY, ("L0",)) else misses + 1
            u = lo - 1
        for u in sorted(chosen):
            rendered, reason = chosen[u]
            for i, (m, n, lv) in zip(units[u], rendered, strict=True):
                out.append(Item(m, n, i))
                old = decisions[i]
                anchor = middle_rendered.get(i)
                decisions[i] = make_decision(
                    index=i, role=self.msgs[i].role, outcome="kept" if lv == "L0" else "compressed", fidelity=lv,
                    relevance_score=old.relevance_score if old is not None else score(i),
                    token_count_before=self.infos[i].tokens, token_count_after=n + (anchor[1] if anchor else 0),
                    reason=reason, layer="working", source=self._source(i), section=None, pinned=False,
                    turn=self.turns[i], position=None, recalled=True, anchor_position=None,
                )

    def _excerpt_terms(self) -> dict[str, float]:
        """The question's weighty terms (stems, see relevance.py) and their idf: what an excerpt matches."""
        query = self._query()
        if not query:
            return {}
        # a term only the current input (or what follows it) holds matches nothing earlier
        end = self.input_index if self.input_index is not None else self.n_hist
        rel = self.rel
        return {t: rel.bm25.idf(t) for t in rel.query_terms(query) if (docs := rel._docs_with(t)) and docs[0] < end}

    def _excerpt(self, unit: list[int], terms: dict[str, float]) -> Excerpt | bool:
        """A lone message (no tool calls) as its sentences that best match ``terms`` — the best one,
        and one more that matches as well — with ``[…]`` where text was cut, as a system message.
        ``False``: no sentence the prompt does not hold already matches well enough
        (:data:`EXCERPT_MATCHES`); ``True``: the unit is not one an excerpt is made of (tool calls,
        one sentence): it comes back whole if it fits."""
        if len(unit) != 1 or not terms:
            return True
        i = unit[0]
        msg = self.msgs[i]
        if i in self.stale or msg.tool_calls or msg.role not in ("user", "assistant") or not msg.content:
            return True
        parts = self._sentences(msg.content)
        if len(parts) < 2:
            return True
        said = self._said
        scored = [0.0 if p in said else round(sum(w for t in set(stems(p)) if (w := terms.get(t)) is not None), 6)
                  for p in parts]
        best = max(scored)
        if best <= 0:
            return False
        keep = [k for k, v in enumerate(scored) if v >= best][:EXCERPT_SENTENCES]
        matched = frozenset(t for k in keep for t in stems(parts[k]) if t in terms)
        out: list[str] = []
        at = 0
        for k in keep:
            if k > at:
                out.append("[…]")
            out.append(parts[k])
            at = k + 1
        if at < len(parts):
            out.append("[…]")
        # a system message: the shaping step gives it to the model in the context block after the
        # current input's text (providers/shaping.py), so next turn the prompt's prefix runs on
        # through that input
        turn = self.turns[i]
        new = Message(role="system", name=EXCERPT_NAME,
                      content=(f"(turn {turn}) " if turn is not None else "") + " ".join(out))
        n = self.counter.count_message(new)
        return Excerpt(new, n, matched, round(best / sum(terms.values()), 6)) if n < self.infos[i].tokens else True

    def _sentences(self, text: str) -> tuple[str, ...]:
        return self.caches.sentences(text)

    def _best_per_unit(self, scores: dict[int, float], keep: Callable[[int, float], bool]
                       ) -> tuple[dict[int, float], dict[int, int]]:
        """Per unit (an exchange) not yet in the prompt, before the input's: its best score among
        ``scores`` (rounded, so equal scores tie the same way everywhere) and the message holding it.
        Stale messages, the input and messages already shown are skipped, and so is what ``keep`` refuses."""
        last = len(self.units) - 1
        best: dict[int, float] = {}
        best_msg: dict[int, int] = {}
        for i, s in scores.items():
            if i in self.stale or not keep(i, s):
                continue
            d = self.decisions[i]
            if d is None or d.source == "input" or self._shown(i):
                continue
            u = self._unit_index(i)
            if u is None or u == last:
                continue
            key = round(s, 6)
            if key > best.get(u, -1.0):
                best[u] = key
                best_msg[u] = i
        return best, best_msg

    def _shown(self, i: int) -> bool:
        """Whether message ``i`` already shows in the prompt in full or nearly (kept, or L1)."""
        d = self.decisions[i]
        return d is not None and (d.outcome == "kept" or (d.outcome == "compressed" and d.fidelity == "L1"))

    def _exchange(self, u: int) -> tuple[int, int]:
        """The units of the exchange holding unit ``u``: from its user turn to the last reply before the next."""
        hit = self._exchanges.get(u)
        if hit is not None:
            return hit
        units, msgs = self.units, self.msgs
        last = len(units) - 1
        lo = u
        while lo > 0 and msgs[units[lo][0]].role != "user":
            lo -= 1
        hi = u
        while hi + 1 < last and msgs[units[hi + 1][0]].role != "user":
            hi += 1
        self._exchanges[u] = (lo, hi)
        return lo, hi

    def _unit_index(self, i: int) -> int | None:
        u = self.state.unit_of[i]
        return None if u < 0 else u

    def _recent_start(self, window: int) -> int | None:
        """The unit where the recent exchange starts: the last user message before the input's unit."""
        last = len(self.units) - 1
        for u in range(last - 1, window - 1, -1):
            if self.msgs[self.units[u][0]].role == "user":
                return u
        return None

    def _source(self, i: int) -> Source:
        return "input" if i == self.input_index else "history"

    @staticmethod
    def _sum(items: list[Item]) -> int:
        return sum(it.tokens for it in items)

__all__ = ["AsyncSummarizer", "BuildResult", "Summarizer", "WorkingSetBuilder"]
