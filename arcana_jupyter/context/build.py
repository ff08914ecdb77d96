"""One build: its inputs, the budget arithmetic, the question's relevance, and the plan.

A :class:`Build` holds one call's working state. :meth:`Build.prepare` numbers the inputs (history,
current input, task, pins, sections), chooses the strategy, makes what must be kept fit (the
checkpoint, then the current input, compressed just enough), sizes the sections, scores the history
against the question and plans the conversation (:mod:`.plan`); then :func:`.assemble.assemble`
writes the decisions and orders the prompt — at once, or once the summariser has answered
(:class:`~.result.Pending`). A build reads its builder's public settings and its
:class:`~.message_cache.MessageCache`; nothing else of the builder.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..messages import Message, MessageLike, ToolSpec, as_message
from ..schema.pins import Pin
from . import strategies as S
from .asking import asks
from .assemble import assemble
from .decisions import Fidelity, MessageDecision, Source
from .fidelity import fit_text
from .learned_fusion import features, learned_match, needs_core
from .message_cache import MessageCache
from .plan import plan_conversation
from .recall import RECALL_MIN_BM25
from .relevance import SEMANTIC_MIN, fuse, message_text, passages, question_core, without_names
from .result import Assembly, BuildResult, Pending
from .sections import ContextSection, render_task

if TYPE_CHECKING:
    from .builder import WorkingSetBuilder

BLOCK_GRAIN = 64
"""The block quantum is rounded to the nearest multiple of this, so that a few tokens more or less in
the available budget (calibration, the shaped prompt's recount) leave the drop points where they are
(the usual windows less their reserve, 1,536 / 3,072 / 7,168 / 15,360 tokens, are far from a midpoint)."""
LIFT: dict[str, Fidelity] = {"L1": "L1", "L2": "L1", "L3": "L2"}
"""A user message or an error is kept one fidelity level higher in a compressed band."""


def _unit(vec: Any) -> Any:
    """``vec`` scaled to length 1 (a zero vector stays zero)."""
    norm = float((vec @ vec) ** 0.5)
    return vec / norm if norm > 0 else vec


class Build:
    """One build's working state (see the module docstring)."""

    def __init__(
        self,
        builder: WorkingSetBuilder,
        cache: MessageCache,
        history: Sequence[MessageLike],
        current_input: MessageLike | str | None,
        task: str | None,
        pins: Iterable[Pin],
        sections: Iterable[ContextSection],
        tools: Iterable[ToolSpec],
        turn: int | None,
        step: int,
        previous: BuildResult | None,
        summary_override: str | None,
        probe: bool = False,
    ) -> None:
        self.builder = builder
        self.cache = cache
        self.counter = builder.counter
        self.budget = builder.budget
        self.available = builder.budget.available
        self.task = task
        self.pins = list(pins)
        self.sections = list(sections)
        self.tools = tuple(tools)
        self.turn = turn
        self.step = step
        self.previous = previous
        self.summary_override = summary_override
        self.probe = probe
        """Rows of messages dropped before the window are shared templates (``WorkingSetBuilder.abuild``)."""
        self.probed = 0
        """How many rows a probe left as templates (none: the probe is the full build)."""
        self.notes: list[str] = []
        self.said: set[str] = set()
        """Sentences the prompt already holds (set before the small block's excerpts are chosen)."""

        hist = cache.messages(history)
        self.n_history = len(hist)
        state = cache.history_state(hist)
        self.index = state.rel
        """The history's relevance index (shared with the builder's history state)."""
        if current_input is not None:
            cur = (
                Message(role="user", content=current_input)
                if isinstance(current_input, str)
                else as_message(current_input)
            )
            state = state.fork()
            state.append(cache.info(cur), index_text=False)
        self.state = state
        self.infos = state.infos
        self.msgs = state.msgs
        self.n_messages = len(state.msgs)
        """History messages and the separate current input, if any (the first decision indices)."""
        self.identity = state.identity
        self.units = state.units
        self.input_index = self.units[-1][-1] if self.units else None
        self.turns = state.turns
        self._exchanges: dict[int, tuple[int, int]] = {}
        self.window_start = 0

    # ---- before the plan -------------------------------------------------------------------
    def prepare(self) -> BuildResult | Pending:
        """Everything up to the plan; then the assembled build, or one that waits for the summariser."""
        b = self.builder
        counter = self.counter
        available = self.available
        infos = self.infos
        tools_tokens = self.cache.tool_tokens(self.tools) if self.tools else 0

        # inputs besides the history, with their decision indices
        n_inputs = self.n_messages
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

        unit_tokens = self.state.unit_cost
        total_before = sys_tokens + task_tokens + sum(pin_tokens.values()) + sum(sec_tokens) + sum(unit_tokens)
        prompt_before = total_before + tools_tokens + counter.reply_priming
        self.util_before = round(prompt_before / available, 4) if available > 0 else float(prompt_before)

        has_summary = b.summarizer is not None or self.summary_override is not None
        requested = b.strategy
        strategy = S.choose_auto(self.util_before, has_summary) if requested == "auto" else requested
        if strategy == "passthrough" and prompt_before > available:
            self.notes.append(
                f"passthrough does not fit ({prompt_before} > {available} tokens): fell back to tail_preserve")
            strategy = "tail_preserve"
        if strategy == "llm_summarize" and not has_summary:
            self.notes.append("llm_summarize has no summariser: fell back to tail_preserve")
            strategy = "tail_preserve"
        self.requested = requested

        # what must be kept does not fit: rather than send a prompt the model will refuse, compress
        # the checkpoint, then the current input (a lone user message), just enough to fit
        input_unit = len(self.units) - 1
        input_cost = unit_tokens[input_unit] if self.units else 0
        protected_secs = [k for k, s in enumerate(self.sections) if s.protected]
        must = (sys_tokens + task_tokens + sum(pin_tokens.values()) + sum(sec_tokens[k] for k in protected_secs)
                + input_cost + tools_tokens + counter.reply_priming)
        protected_fit: dict[int, tuple[Message, int, Fidelity]] = {}
        self.input_fit: tuple[Message, int, Fidelity] | None = None
        if must > available:
            for k in protected_secs:
                fitted = self.fit_section(sec_msgs[k], sec_tokens[k], sec_tokens[k] - (must - available))
                if fitted is not None and fitted[1] < sec_tokens[k]:
                    protected_fit[k] = fitted
                    must -= sec_tokens[k] - fitted[1]
                    what = "the checkpoint" if self.sections[k].name == "checkpoint" else \
                        f"the {self.sections[k].name} section"
                    self.notes.append(f"{what} was compressed to {fitted[2]} ({sec_tokens[k]} -> {fitted[1]} "
                                      "tokens) so that what must be kept fits the budget")
        if (must > available and self.input_index is not None and self.units
                and self.units[input_unit] == [self.input_index]):
            fitted = self.fit_input(input_cost - (must - available))
            if fitted is not None:
                self.input_fit = fitted
                must -= input_cost - fitted[1]
                unit_tokens = [*unit_tokens[:input_unit], fitted[1], *unit_tokens[input_unit + 1:]]
                self.notes.append(f"the current input was compressed to {fitted[2]} ({input_cost} -> {fitted[1]} "
                                  "tokens) to fit the budget")
                input_cost = fitted[1]
        overflow = must > available
        if overflow:
            self.notes.append(
                f"overflow: what must be kept (system prompt, task, pins, checkpoint, current input, tool specs "
                f"and reply priming: {must} tokens) exceeds the {available} available tokens; it is sent anyway and "
                "everything else was dropped"
            )
        self.quantum = max(16, int(available * b.band_fraction))
        self.block_quantum = max(BLOCK_GRAIN, round(available * b.block_fraction / BLOCK_GRAIN) * BLOCK_GRAIN)

        sec_render = self._size_sections(strategy, overflow, must, sec_msgs, sec_tokens, protected_fit)
        sections_after = sum(r[1] for r in sec_render.values() if r is not None)
        fixed_nonconv = (sys_tokens + task_tokens + sum(pin_tokens.values()) + sections_after + tools_tokens
                         + counter.reply_priming)
        # round the fixed part up to a quarter quantum so small changes in sections do not move bands
        grain = max(1, self.quantum // 4)
        rounded = -(-fixed_nonconv // grain) * grain
        room = available - rounded if available - rounded >= input_cost else available - fixed_nonconv

        # before any await: the shared index may grow meanwhile
        self.match, self.via, self.lexical = self._question_relevance(strategy != "passthrough" and b.recall)
        # the blocks policy's small block takes the question's literal best matches too (no feedback
        # expansion, which on look-alike turns ranks the look-alikes with the answer)
        # (only when the block alternates them with the fused ranking, or makes excerpts)
        query = (self.query() if b.drop_policy == "blocks" and strategy != "passthrough" and b.recall
                 and (b.block_ranking == "alternate" or b.block_excerpts) else "")
        self.literal: dict[int, float] = self.cache.question_scores(
            self.index, ("literal", query, self.n_history),
            lambda: self.index.scores(query, limit=self.n_history, feedback=False)) if query else {}

        self.stale: set[int] = set() if strategy == "passthrough" else self.state.stale()
        plan = plan_conversation(self, strategy, overflow, unit_tokens, room)
        strategy = plan.strategy

        ctx = Assembly(
            strategy=strategy, overflow=overflow, live_pins=live_pins, pin_tokens=pin_tokens,
            sec_render=sec_render, sec_msgs=sec_msgs, sec_tokens=sec_tokens, task_tokens=task_tokens,
            tools_tokens=tools_tokens, reply_priming=counter.reply_priming, plan=plan,
        )
        if strategy == "llm_summarize" and plan.fold_until > 0:
            folded = [self.msgs[i] for u in range(max(plan.fold_until, plan.summary_until)) for i in self.units[u]]
            key = tuple((m.role, m.content, m.tool_calls, m.tool_call_id) for m in folded)
            if self.summary_override is not None:
                return assemble(self, ctx, self.summary_override)
            self._detach()
            return Pending(folded=folded, key=key, finish=lambda text: self._summary_done(ctx, key, text))
        return assemble(self, ctx, None)

    def _size_sections(self, strategy: str, overflow: bool, must: int, sec_msgs: list[Message],
                       sec_tokens: list[int], protected_fit: dict[int, tuple[Message, int, Fidelity]]
                       ) -> dict[int, tuple[Message, int, Fidelity] | None]:
        """Each section as sent (compressed under pressure, never the checkpoint), ``None``: dropped."""
        sec_render: dict[int, tuple[Message, int, Fidelity] | None] = {}
        free = max(0, self.available - must)
        cap = int(free * self.builder.section_share)
        plain = [k for k, s in enumerate(self.sections) if not s.protected]
        for k, s in enumerate(self.sections):
            if s.protected:
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
                sec_render[k] = self.fit_section(sec_msgs[k], sec_tokens[k], cap * sec_tokens[k] // max(1, plain_total))
        return sec_render

    def _question_relevance(self, recall: bool) -> tuple[dict[int, float], dict[int, str], dict[int, float]]:
        """:meth:`relevance`, computed once for the builds of one call (same question, same history)."""
        store = self.builder.embeddings
        key = ("relevance", self.query(), self.n_history, recall,
               None if store is None else (store.ident, self.builder.fusion.spec()))

        computed = False

        def compute() -> tuple[dict[int, float], dict[int, str], dict[int, float], list[str]]:
            nonlocal computed
            computed = True
            before = len(self.notes)
            match, via, lexical = self.relevance(recall)
            return match, via, lexical, self.notes[before:]

        match, via, lexical, notes = self.cache.question_scores(self.index, key, compute)
        if not computed:  # the notes the computation wrote, as it would have written them
            self.notes.extend(notes)
        return match, via, lexical

    def relevance(self, recall: bool) -> tuple[dict[int, float], dict[int, str], dict[int, float]]:
        """``(match, via, bm25)`` of history messages against the current input + task (+ this turn's
        user message): see relevance.py. The embedding model (if any) is asked only when older turns
        may be brought back (``recall``): a passthrough build records the lexical match."""
        query = self.query()
        if not query:
            return {}, {}, {}
        aliased = self.aliased(query)
        lexical = self.index.scores(f"{query} {aliased}" if aliased else query, limit=self.n_history)
        store = self.builder.embeddings
        named = (self.index.query_speakers(query, roles=bool(self.builder.fusion.aliases))
                 if self.builder.speaker_weight > 0 else frozenset())
        if named:
            self.notes.append(f"relevance: the question names {', '.join(sorted(named))}: their messages first "
                              f"(others' scores / {1 + self.builder.speaker_weight:g})")
        if store is None or not recall:
            if recall:
                self.notes.append("relevance: lexical only (stemmed BM25 with feedback); no embedding model "
                                  "(embeddings off, or the model did not load)")
            match, via = fuse(lexical, None)
            return self.index.speaker_prior(match, named, self.builder.speaker_weight), via, lexical
        rel = self.index
        fusion = self.builder.fusion
        if fusion.sentences:
            while len(rel.passage_starts) < self.n_history:
                rel.passage_starts.append(len(rel.passage_vectors))
                rel.passage_vectors.extend(store.get(p) for p in passages(self.msgs[len(rel.passage_starts) - 1]))
        elif len(rel.vectors) < self.n_history:
            rel.vectors.extend(store.get(message_text(m)) for m in self.msgs[len(rel.vectors):self.n_history])
        if fusion.parts:
            # each part cached by content (the input's text is the one it is indexed by as history)
            texts = self.query_parts(indexed=True) or [query]
            if fusion.names and named:  # as asked and without the names, summed (see Fusion.names)
                texts += [without_names(t, named) for t in texts]
            parts = [store.get(t) for t in texts]
            qvec = parts[0] if len(parts) == 1 else _unit(sum(parts[1:], parts[0]))
        elif fusion.names and named:
            qvec = _unit(store.get(query) + store.get(without_names(query, named)))
        else:
            qvec = store.get(query)
        self.notes.append(f"relevance: stemmed BM25 with feedback + semantic ({store.ident}), fused by "
                          f"{fusion.spec()}")
        if fusion.method == "learned":
            sims = self._sims(qvec)
            core = self.core_sims(query, named, aliased) if needs_core(fusion.model) else None
            match, via = self.learned(sims, lexical, rel.coverage(query, lexical), named, core)
        else:
            semantic = (rel.semantic_passages(qvec, self.n_history) if fusion.sentences
                        else rel.semantic(qvec, self.n_history))
            coverage = rel.coverage(query, lexical) if fusion.head > 0 or fusion.method in ("gated", "score") else {}
            match, via = fuse(lexical, semantic, fusion, coverage)
        return self.index.speaker_prior(match, named, self.builder.speaker_weight), via, lexical

    def aliased(self, query: str) -> str:
        """With ``Fusion.aliases``, the names the relations ``query`` asks by point at, joined (:mod:`.aliases`:
        "Harper's sister" -> ``Nicole``, introduced as "my sister Nicole"), else ``""``. BM25 looks for them
        with the question, and the question's core is embedded with them."""
        if not self.builder.fusion.aliases:
            return ""
        found = self.index.alias_names(query, self.msgs, self.n_history)
        if not found:
            return ""
        self.notes.append("relevance: " + "; ".join(
            f"{owner}'s {word} is {name} (message {doc})" for owner, word, name, doc in found)
            + ": the question looks for those names too")
        return " ".join(name for _, _, name, _ in found)

    def core_sims(self, query: str, named: frozenset[str], aliased: str = "") -> Any:
        """Every history message's cosine (by its best passage, with ``Fusion.sentences``) with the question's
        core (:func:`~.relevance.question_core`) and the names its relations point at (``aliased``), embedded
        once more; ``None`` without an embedding model."""
        store = self.builder.embeddings
        if store is None:
            return None
        core = question_core(query, named)
        return self._sims(store.get(f"{core} {aliased}" if aliased else core))

    def _sims(self, vec: Any) -> Any:
        """Every history message's cosine with ``vec``: by its best passage with ``Fusion.sentences``, else whole."""
        rel = self.index
        return (rel.passage_sims(vec, self.n_history) if self.builder.fusion.sentences
                else rel.message_sims(vec, self.n_history))

    def learned(self, sims: Any, lexical: dict[int, float], coverage: dict[int, float],
                named: frozenset[str], core: Any = None) -> tuple[dict[int, float], dict[int, str]]:
        """``(match, via)`` by the learned fusion (:mod:`.learned_fusion`) of ``sims`` (every history message's
        cosine), the BM25 scores and ``core`` (the cosines with the question's core, for a version that reads
        them)."""
        if sims is None:
            return {}, {}
        return learned_match(self.fusion_features(sims, lexical, coverage, named, core), lexical, sims,
                             self.builder.fusion.model, SEMANTIC_MIN, RECALL_MIN_BM25)

    def fusion_features(self, sims: Any, lexical: dict[int, float], coverage: dict[int, float],
                        named: frozenset[str], core: Any = None) -> Any:
        """:func:`~.learned_fusion.features` of the history messages (what ``train_fusion`` learns from)."""
        rel = self.index
        n = len(sims)
        other = [bool(named) and not (rel.speakers[d] & named) for d in range(n)]
        return features(sims, lexical, coverage, other, rel.nwords[:n], rel.user[:n], core)

    def query(self) -> str:
        return " ".join(self.query_parts())

    def asks(self) -> bool:
        """Whether this turn's user message (the input, or the last user message before it in a tool
        loop) asks for something: a question or a request (:func:`~.asking.asks`). No user message: it does."""
        msgs = self.msgs
        if self.input_index is None:
            return True
        user = next((i for i in range(self.input_index, -1, -1) if msgs[i].role == "user"), None)
        return True if user is None else asks(msgs[user].content)

    def query_parts(self, indexed: bool = False) -> list[str]:
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
            self.cache.remember_summary(key, text)
        return assemble(self, ctx, text)

    def fit_input(self, target: int) -> tuple[Message, int, Fidelity] | None:
        """The current input compressed (head and tail kept, L1) to at most ``target`` tokens."""
        assert self.input_index is not None
        return self.fit_section(self.msgs[self.input_index], self.infos[self.input_index].tokens, target)

    def fit_section(self, msg: Message, tokens: int, target: int) -> tuple[Message, int, Fidelity] | None:
        """``msg`` (of ``tokens`` tokens) compressed to at most ``target`` tokens, or ``None``."""
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

    # ---- what the plan, the assembly and the recall ask of the history ----------------------
    def msg_cost(self, i: int, level: Fidelity) -> tuple[Message, int, Fidelity]:
        """Message ``i`` as sent at ``level`` (stale: L3; a user message or an error one level higher)."""
        if i in self.stale:
            level = "L3"
        elif level != "L0" and (self.msgs[i].role == "user" or self.infos[i].error):
            level = LIFT[level]
        return self.cache.render(self.infos[i], level, self.turns[i], i)

    def unit_cost(self, u: int, level: Fidelity) -> int:
        return sum(self.msg_cost(i, level)[1] for i in self.units[u])

    def shown(self, i: int) -> bool:
        """Whether message ``i`` already shows in the prompt in full or nearly (kept, or L1)."""
        d = self.decisions[i]
        return d is not None and (d.outcome == "kept" or (d.outcome == "compressed" and d.fidelity == "L1"))

    def exchange(self, u: int) -> tuple[int, int]:
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

    def unit_index(self, i: int) -> int | None:
        u = self.state.unit_of[i]
        return None if u < 0 else u

    def recent_start(self, window: int) -> int | None:
        """The unit where the recent exchange starts: the last user message before the input's unit."""
        last = len(self.units) - 1
        for u in range(last - 1, window - 1, -1):
            if self.msgs[self.units[u][0]].role == "user":
                return u
        return None

    def source(self, i: int) -> Source:
        return "input" if i == self.input_index else "history"
