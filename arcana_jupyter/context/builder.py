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

This module is the façade: the settings and :meth:`WorkingSetBuilder.build` / ``abuild``. The work
is split by idea: :mod:`.message_cache` (what a builder remembers between builds: the history's
identity, per-message counts and compressed forms, the question's scores within a call),
:mod:`.build` (one build's inputs, budget arithmetic and relevance), :mod:`.plan` (the regions of
the conversation), :mod:`.assemble` (the decisions and the prompt's order) and :mod:`.recall` (the
earlier turns relevant to the question).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..messages import Message, MessageLike, ToolSpec
from ..schema.pins import Pin
from ..tokens import TokenCounter
from . import strategies as S
from .build import BLOCK_GRAIN, Build
from .decisions import TokenBudget
from .embeddings import Embedder, EmbeddingStore, default_embedder, embedder_for
from .fidelity import FidelityPolicy
from .message_cache import MessageCache
from .plan import MIN_SUMMARY_TOKENS
from .recall import (
    EXCERPT_MATCH_DEFAULT,
    EXCERPT_MATCHES,
    EXCERPT_NAME,
    EXCERPT_POOL,
    EXCERPT_SENTENCES,
    NEIGHBOUR_EXCHANGES,
    RECALL_MAX_UNITS,
    RECALL_MIN_BM25,
    RECENCY_MAX_MISSES,
    RECENCY_MIN_ROOM,
    Excerpt,
)
from .relevance import SPEAKER_WEIGHT, Fusion, parse_fusion
from .result import BuildResult
from .sections import ContextSection

Summarizer = Callable[[list[Message]], str]
AsyncSummarizer = Callable[[list[Message]], Awaitable[str]]

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
BLOCK_RECALLS = ("small", "fill")
"""With ``drop_policy="blocks"``, how much room the earlier turns relevant to the input get
(``block_recall``): ``small`` (what traces recorded before the setting rebuild with) — at most
``block_recall_share`` of the conversation budget, the rest of what the window leaves free between
drops stays free; ``fill`` (the runtime's default mode) — at least that share, and all that the
window leaves free: relevant messages best first, whole (their exchanges after them, while they
fit), each quoted as a ``recalled`` system message that the shaping step puts in the context block
after the input's text, so the next prompt's cached prefix still runs through that text. What stays
free when the relevant messages run out is said in the decision's notes and
``ContextReport.free_reason``."""
BLOCK_RANKINGS = ("alternate", "fused")
"""How the default mode's block ranks the earlier messages relevant to the input (``block_ranking``):
``alternate`` (what traces recorded before the setting rebuild with) — the question's literal (BM25)
best matches alternately with the fused ranking's; ``fused`` — the fused ranking alone, as classic mode
ranks them. Since the fused ranking weighs the best sentence, the speakers and the question without the
name (issue 38), interleaving the literal ranking put weaker matches ahead of the second fact of
two-fact questions (dev splits of benchmarks/retention/conversations.py, see runtime/working_set.py)."""
QUOTE_COUNTINGS = ("message", "line")
"""How quoted earlier messages are counted (``quote_counting``): as messages of their own (their framing
counted each time) or as the lines the shaping step writes them as, under one heading in the context block
(providers/shaping.py ``context_block``): the runtime's sessions, whose prompts are always shaped, count
``line`` — as messages the builder counted ~5 tokens more per quote than was sent, ~7% of a 1k budget left
unused."""
LAYOUTS = ("recent_first", "recall_first")
"""Where the exchange before the input goes: before the question-dependent block (``recent_first``,
the default since the prefix-reuse work: next turn it is part of the window, so the cached prefix
extends through it), or after it (``recall_first``: traces recorded before, which rebuild so)."""


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
        summary_grid: ``llm_summarize`` summarises up to the next multiple of this share of the
            available tokens (counted from the conversation's start), so one summary serves the turns
            until the window passes that point instead of a new summariser call whenever the window
            moves; ``0`` (default, what traces recorded before the setting rebuild with): up to the
            window's start.
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
        block_recall: with ``blocks``, ``small`` (default) or ``fill`` (see :data:`BLOCK_RECALLS`).
        block_ranking: with ``blocks``, ``alternate`` (default) or ``fused`` (see :data:`BLOCK_RANKINGS`).
        fusion: how the BM25 and the cosine rankings are combined when there is an embedder: a
            :class:`~.relevance.Fusion` or its ``spec()`` string; ``None`` (default): the tuned
            :data:`~.relevance.DEFAULT_FUSION`. Recorded as ``settings()["fusion"]``; lexical-only
            builds do not depend on it.
        block_tell_share: with ``block_recall="fill"``, the most of the available tokens the block of
            relevant earlier messages takes when the turn's user message asks nothing — no question, no
            request (:func:`~.asking.asks`): the best few, where a question gets all the room the window
            leaves. ``None`` (default, and what traces recorded before the setting rebuild with): no limit.
        quote_counting: how a quoted earlier message (``block_recall="fill"``) is counted: ``message``
            (default, and what traces recorded before the setting rebuild with) as a message of its own;
            ``line`` as the line it becomes in the context block after the input's text, the block's
            heading counted once (what a session whose prompts are shaped sends: :data:`QUOTE_COUNTINGS`).
        quote_dates: when the input asks about time (:func:`~.asking.asks_when`: "when", "how long ago",
            "what came after ..."), an earlier message brought back as relevant that carries no date label of
            its own is quoted with its session's date, the latest one the conversation labelled a message with
            before it, without the time of day ("when did Melanie set a PB?" is answered by the date of the
            session she said it in, written once at its start); ``False`` (default, and what traces recorded
            before the setting rebuild with): turn and role only. The runtime's default mode sets it.
        speaker_weight: when the question names a speaker of the conversation (``Maria:`` labels in
            pasted chats and transcripts), every other message's match is divided by ``1 +
            speaker_weight`` (:meth:`~.relevance.RelevanceIndex.speaker_prior`); 0 turns it off (what
            builds recorded before the setting rebuild with).
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
        block_recall: str = "small",
        block_ranking: str = "alternate",
        summary_grid: float = 0.0,
        speaker_weight: float = SPEAKER_WEIGHT,
        block_tell_share: float | None = None,
        quote_counting: str = "message",
        quote_dates: bool = False,
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
                            ("block_recall_share", block_recall_share), ("summary_grid", summary_grid)):
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
        self.summary_grid = summary_grid
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
        if block_recall not in BLOCK_RECALLS:
            raise ValueError(f"block_recall must be one of {list(BLOCK_RECALLS)}, got {block_recall!r}")
        self.block_recall = block_recall
        if block_ranking not in BLOCK_RANKINGS:
            raise ValueError(f"block_ranking must be one of {list(BLOCK_RANKINGS)}, got {block_ranking!r}")
        self.block_ranking = block_ranking
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
        if speaker_weight < 0:
            raise ValueError(f"speaker_weight must be >= 0, got {speaker_weight}")
        self.speaker_weight = float(speaker_weight)
        if block_tell_share is not None and not 0.0 <= block_tell_share <= 1.0:
            raise ValueError(f"block_tell_share must be between 0 and 1 or None, got {block_tell_share}")
        self.block_tell_share = block_tell_share
        if quote_counting not in QUOTE_COUNTINGS:
            raise ValueError(f"quote_counting must be one of {list(QUOTE_COUNTINGS)}, got {quote_counting!r}")
        self.quote_counting = quote_counting
        self.quote_dates = bool(quote_dates)
        self._cache = MessageCache(self.counter, self.policy)
        """What this builder remembers between builds (never changes a result, only how fast it comes)."""

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
            "summary_grid": self.summary_grid,
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
            "block_recall": self.block_recall,
            "block_ranking": self.block_ranking,
            "speaker_weight": self.speaker_weight,
            "block_tell_share": self.block_tell_share,
            "quote_counting": self.quote_counting,
            "quote_dates": self.quote_dates,
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
        probe: bool = False,
    ) -> BuildResult:
        """Build the working set (see the class docstring). Uses a sync summariser, if any.
        ``probe``: see :meth:`abuild`."""
        steps = self._steps(Build(self, self._cache, history, current_input, task, pins, sections, tools, turn,
                                  step, previous, summary_override, probe))
        folded = next(steps)
        if folded is None:
            return _result(steps, None)
        assert self.summarizer is not None
        if inspect.iscoroutinefunction(self.summarizer):
            raise TypeError("this builder's summarizer is async: call `await builder.abuild(...)`")
        out = self.summarizer(folded)
        if inspect.isawaitable(out):
            close = getattr(out, "close", None)
            if close is not None:
                close()
            raise TypeError("this builder's summarizer returned an awaitable: call `await builder.abuild(...)`")
        return _result(steps, str(out))

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
        probe: bool = False,
    ) -> BuildResult:
        """:meth:`build` with an async (or sync) summariser.

        ``probe``: a build made only to see which turns do not fit (the session's first build in engine
        mode, :func:`~.bands.lost_turns`): the rows of the messages dropped before the window are the
        history's shared templates, with no relevance score or reason — the outcomes, fidelities,
        turns and token counts every row holds are the full build's. Such a result says so
        (``BuildResult.probe``) and is never to be sent or recorded: build again without ``probe``."""
        steps = self._steps(Build(self, self._cache, history, current_input, task, pins, sections, tools, turn,
                                  step, previous, summary_override, probe))
        folded = next(steps)
        if folded is None:
            return _result(steps, None)
        assert self.summarizer is not None
        out: Any = self.summarizer(folded)
        if inspect.isawaitable(out):
            out = await out
        return _result(steps, str(out))

    def _steps(self, build: Build) -> Generator[list[Message] | None, str | None, BuildResult]:
        """The one body of :meth:`build` and :meth:`abuild`: yields the messages to summarise (``None``:
        no summariser call is needed), is sent the summariser's text, returns the result."""
        pending = build.prepare()
        if isinstance(pending, BuildResult):
            yield None
            return pending
        text = self._cache.summary(pending.key)
        if text is not None or self.summarizer is None:
            yield None
            return pending.finish(text)
        answer = yield pending.folded
        return pending.finish(answer)


def _result(steps: Generator[list[Message] | None, str | None, BuildResult], text: str | None) -> BuildResult:
    """Send the summariser's text (``None``: none was asked for) and take the build's result."""
    try:
        steps.send(text)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    raise AssertionError("a build asks for one summary at most")


__all__ = [
    "BLOCK_GRAIN",
    "BLOCK_RECALLS",
    "DROP_POLICIES",
    "EXCERPT_MATCHES",
    "EXCERPT_MATCH_DEFAULT",
    "EXCERPT_NAME",
    "EXCERPT_POOL",
    "EXCERPT_SENTENCES",
    "LAYOUTS",
    "MIN_SUMMARY_TOKENS",
    "NEIGHBOUR_EXCHANGES",
    "RECALL_MAX_UNITS",
    "RECALL_MIN_BM25",
    "RECENCY_MAX_MISSES",
    "RECENCY_MIN_ROOM",
    "AsyncSummarizer",
    "BuildResult",
    "Excerpt",
    "Summarizer",
    "WorkingSetBuilder",
]
