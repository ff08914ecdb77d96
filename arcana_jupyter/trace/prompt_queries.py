"""The prompt questions of a trace: a recorded LLM call replayed (its decision, snapshot and ``llm_call``
joined) and its prompt as sent, resolved from the ``prompt_sent`` records and verified against the
request digest the call recorded.

These are :class:`~arcana_jupyter.trace.reader.TraceReader`'s :meth:`replay_prompt`, :meth:`prompt_sent`
and :meth:`prompts_sent` (the reader's methods call these functions), answered from its file index
(trace/index.py); the resolved ``prompt_sent`` records are cached in that index (``FileIndex.sent``).
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..exceptions import TraceError
from ..schema.decisions import BudgetSnapshot, ContextDecision, ContextReport
from ..schema.events import (
    EVENT_ADAPTER,
    ContextDecisionEvent,
    ContextDecisionMetadata,
    Event,
    PromptSentMetadata,
    PromptSnapshotEvent,
)
from .decision_delta import ChainResolver, is_chained
from .decision_json import with_rows
from .events import TraceEvent
from .index import FileIndex, first_problem
from .limits import FileLimits, max_chars
from .prompt_sent import ResolvedPrompt, masked_count, prompt_digest, resolve_prompt_sent
from .recorded_prompt import PromptReplay, PromptSnapshot, SentPrompt

if TYPE_CHECKING:
    from .reader import TraceReader


def _parsed_for_replay(event: TraceEvent) -> Event:
    """``event`` as its typed event, by the one parser (:data:`EVENT_ADAPTER`), as replay reads it: laxly
    (as ``model_validate`` of its metadata always did) and raising :class:`ValidationError` when the
    metadata does not fit -- replay reports that instead of reading a field as unset, which is why this
    is not :meth:`TraceEvent.typed` (strict, and tolerant). Only the type, id and metadata are handed
    over (the envelope was checked when indexed), so an error's location is ``(event type, "metadata",
    ...)``: reported with ``first_problem(exc, within=2)``."""
    return EVENT_ADAPTER.validate_python(
        {"event_type": event.event_type, "event_id": event.event_id, "metadata": event.metadata})


def replay_prompt(reader: TraceReader, run_id: str, turn: int, agent: str | None = None,
                  step: int = 0) -> PromptReplay | None:
    """Join the ``context_decision``, ``prompt_snapshot`` and ``llm_call`` of (turn, step).

    ``None`` when that turn (or step) has no recorded decision.
    """
    idx = reader._index(run_id)
    name = reader._resolve_agent(idx, run_id, agent, turn)
    positions = idx.by_turn.get((name, turn), [])
    decisions = {
        idx.entries[p].step or 0: p for p in positions if idx.entries[p].event_type == "context_decision"
    }
    if step not in decisions:
        return None
    wanted = [decisions[step]]
    decision_id = idx.entries[decisions[step]].event_id

    def belonging(event_type: str) -> list[int]:
        """Events of that type for this step: children of the decision first, then same step."""
        found = [p for p in positions if idx.entries[p].event_type == event_type]
        children = [p for p in found if idx.entries[p].parent_id == decision_id]
        return children or [p for p in found if (idx.entries[p].step or 0) == step]

    wanted += belonging("prompt_snapshot")[-1:] + belonging("llm_call")[:1]
    loaded = {e.event_type: e for e in reader._load(idx, wanted)}
    try:
        parsed = _parsed_for_replay(loaded["context_decision"])
        assert isinstance(parsed, ContextDecisionEvent)
        meta = parsed.metadata
        if meta.decision is None or meta.decision.decisions is None:
            raise ValueError("no decision recorded")
    except (ValidationError, ValueError) as exc:
        line = idx.entries[decisions[step]].line
        why = first_problem(exc, within=2) if isinstance(exc, ValidationError) else str(exc)
        raise TraceError(
            f"{idx.path}:{line}: context_decision of turn {turn} step {step} does not match the decision "
            f"model ({why})"
        ) from None
    decision = ContextDecision.model_construct(  # its fields were validated with the metadata
        **{k: getattr(meta.decision, k) for k in ContextDecision.model_fields}
    )
    report, budget = meta.report, meta.budget
    snapshot = None
    if "prompt_snapshot" in loaded:
        try:
            parsed = _parsed_for_replay(loaded["prompt_snapshot"])
        except ValidationError as exc:
            raise TraceError(
                f"{idx.path}: prompt_snapshot of turn {turn} step {step} does not match the snapshot model "
                f"({first_problem(exc, within=2)})"
            ) from None
        assert isinstance(parsed, PromptSnapshotEvent)
        snapshot = parsed.metadata
        if budget is None and snapshot.budget_snapshot is not None:
            budget = snapshot.budget_snapshot
    llm = loaded["llm_call"].metadata if "llm_call" in loaded else None
    try:
        return _replay(reader, idx, name, turn, step, sorted(decisions), decision, report, budget, snapshot, meta,
                       llm, decision_id)
    except ValidationError as exc:
        line = idx.entries[decisions[step]].line
        raise TraceError(f"{idx.path}:{line}: the recorded turn {turn} step {step} cannot be replayed: "
                         f"{first_problem(exc)}") from None


def _replay(reader: TraceReader, idx: FileIndex, name: str, turn: int, step: int, steps: list[int],
            decision: ContextDecision, report: ContextReport | None, budget: BudgetSnapshot | None,
            snapshot: PromptSnapshot | None,
            meta: ContextDecisionMetadata, llm: dict[str, Any] | None,  # JSON edge: llm_call metadata
            decision_id: str) -> PromptReplay:
    return PromptReplay(
        run_id=reader._run_id_of(idx.path),
        agent=name,
        turn=turn,
        step=step,
        steps=steps,
        context_decision=decision,
        context_report=report,
        budget_snapshot=budget,
        prompt_snapshot=snapshot,
        request_digest=meta.request_digest,
        history_len=meta.history_len,
        inputs=meta.inputs.model_dump(mode="json", by_alias=True, exclude_unset=True) if meta.inputs else {},
        builder=meta.builder.model_dump(mode="json", by_alias=True, exclude_unset=True) if meta.builder else {},
        tools=meta.tools,
        shape=meta.shape,
        active_pins=reader._active_pins(idx, name, turn, step),
        llm_call=llm,
        decision_event_id=decision_id,
    )


def prompt_sent(reader: TraceReader, run_id: str, turn: int, step: int = 0,
                agent: str | None = None) -> SentPrompt | None:
    """The prompt of (turn, step) as the provider was given it: from its ``prompt_sent`` event
    (trace/prompt_sent.py), else its ``prompt_snapshot``; ``None`` when the trace holds neither
    (an older trace: ``context.rebuild.prompt_as_sent`` rebuilds it) or the call has no decision.
    ``verified`` says whether its request digest, recomputed, equals the one the call recorded."""
    replay = replay_prompt(reader, run_id, turn, agent, step=step)
    if replay is None:
        return None
    idx = reader._index(run_id)
    positions = idx.by_turn.get((replay.agent, turn), [])
    found = [p for p in positions if idx.entries[p].event_type == "prompt_sent"]
    mine = [p for p in found if idx.entries[p].parent_id == replay.decision_event_id] \
        or [p for p in found if (idx.entries[p].step or 0) == step]
    recorded = None
    if isinstance(replay.llm_call, dict) and isinstance(replay.llm_call.get("request_digest"), str):
        recorded = replay.llm_call["request_digest"]
    recorded = recorded or replay.request_digest
    model = str(replay.builder.get("model") or (replay.prompt_snapshot.model if replay.prompt_snapshot else ""))
    event_id = None
    if mine:
        event_id = idx.entries[mine[0]].event_id
        resolved = resolve_sent(reader, idx, replay.agent, event_id)
        messages, tokens, source = resolved["messages"], resolved["tokens"], "prompt_sent"
        recorded = recorded or resolved.get("digest")
    elif replay.prompt_snapshot is not None and replay.prompt_snapshot.messages:
        messages, tokens, source = list(replay.prompt_snapshot.messages), [], "snapshot"
        model = model or replay.prompt_snapshot.model
    else:
        return None
    try:
        digest = prompt_digest(messages, replay.tools, model)
    except (ValueError, TypeError, ValidationError):
        digest = None
    return SentPrompt(
        run_id=replay.run_id, agent=replay.agent, turn=turn, step=step, source=source, messages=messages,
        tokens=tokens or [None] * len(messages), recorded_digest=recorded, digest=digest,
        verified=recorded is not None and digest == recorded, masked=masked_count(messages), event_id=event_id,
    )


def prompts_sent(reader: TraceReader, run_id: str, agent: str | None = None, *,
                 turns: Container[int] | None = None) -> Iterator[SentPrompt]:
    """Every ``prompt_sent`` of ``agent`` in file order, resolved and verified, in one pass (each
    record against the previous one; the decisions read for their tools and model, without rows):
    what the report's "Prompts as sent" section shows. Older traces yield nothing.

    ``turns``: only the calls of these turns (a long run's report shows the prompts of the turns it
    shows in full): the decisions are then read only up to the last of them, and only the wanted
    prompts are resolved and their digests recomputed."""
    idx = reader._index(run_id)
    name = reader._resolve_agent(idx, run_id, agent)
    sent = [p for p in idx.by_type.get("prompt_sent", []) if idx.entries[p].agent == name
            and (turns is None or (idx.entries[p].turn or 0) in turns)]
    if not sent:
        return
    wanted = {idx.entries[p].parent_id for p in sent}
    positions = [p for p in idx.by_type.get("context_decision", []) if idx.entries[p].agent == name]
    if turns is not None:
        last = max((p for p in positions if idx.entries[p].event_id in wanted), default=-1)
        positions = [p for p in positions if p <= last]
    # the metadata alone (tools, model, digest): no column of the rows decoded
    chained = ChainResolver(lambda event_id: reader._metadata_of(idx, event_id), keep=2, only=(),
                            limits=FileLimits.of(idx.size, idx.seen))
    calls: dict[str, tuple[list[Any], str, str | None]] = {}
    for start in range(0, len(positions), 64):
        chunk = positions[start:start + 64]
        for p, obj in zip(chunk, reader._read_raw(idx, chunk), strict=True):
            entry = idx.entries[p]
            raw_meta = obj.get("metadata")
            meta: dict[str, Any] = dict(raw_meta) if isinstance(raw_meta, dict) else {}  # JSON edge: as written
            if is_chained(meta):
                try:
                    meta = chained.resolve(entry.event_id, meta, rows=False)
                except (ValueError, KeyError, TypeError, AttributeError, IndexError):
                    continue  # that call is shown unverified (replay_prompt reports the decision's problem)
            if entry.event_id in wanted:
                md = ContextDecisionMetadata.read(with_rows(meta, None))  # typed, the rows left out
                calls[entry.event_id] = (md.tools, (md.builder.model if md.builder else None) or "",
                                         md.request_digest)
    run = reader._run_id_of(idx.path)
    for p in sent:
        entry = idx.entries[p]
        resolved = resolve_sent(reader, idx, name, entry.event_id)
        tools, model, recorded = calls.get(entry.parent_id or "", ([], "", None))
        model = model or str(resolved.get("model") or "")  # a standalone prompt (the summariser's) names it
        recorded = recorded or resolved.get("digest")
        messages = resolved["messages"]
        try:
            digest: str | None = prompt_digest(messages, tools, model)
        except (ValueError, TypeError, ValidationError):
            digest = None
        yield SentPrompt(run_id=run, agent=name, turn=entry.turn or 0, step=entry.step or 0, source="prompt_sent",
                         messages=messages, tokens=resolved["tokens"], recorded_digest=recorded, digest=digest,
                         verified=recorded is not None and digest == recorded, masked=masked_count(messages),
                         event_id=entry.event_id)


def resolve_sent(reader: TraceReader, idx: FileIndex, agent: str, event_id: str) -> ResolvedPrompt:
    """The resolved prompt of the ``prompt_sent`` ``event_id``: its chain walked back to a keyframe
    (or a cached prompt), then resolved forward. Raises :class:`TraceError` when it cannot be."""
    with reader._lock:
        chain: list[tuple[str, dict[str, Any]]] = []  # JSON edge: prompt_sent metadata as written
        current: str | None = event_id
        base: ResolvedPrompt | None = None
        after: int | None = None  # the position of the record that continues ``current``
        while current is not None:
            if current in idx.sent:
                base = idx.sent[current]
                break
            p = idx.prompt_at.get(current)
            if p is not None and after is not None and p >= after:
                # a prompt continues one written before it: a ``prev`` that is itself or later is a loop
                raise TraceError(f"{idx.path}: prompt_sent {chain[-1][0]} continues {current}, which is not an "
                                 "earlier prompt: its chain loops; refused")
            raw = reader._read_raw(idx, [p]) if p is not None else []
            meta = raw[0].get("metadata") if raw else None
            if not isinstance(meta, dict):
                raise TraceError(f"{idx.path}: prompt_sent {event_id}: the prompt {current} it continues is not "
                                 "in the trace")
            chain.append((current, meta))
            after = p
            current = PromptSentMetadata.read(meta).prev
            if len(chain) > 100_000:
                raise TraceError(f"{idx.path}: prompt_sent {event_id}: its chain does not end")
        records = idx.records.get(agent, {})
        system = idx.system_prompts.get(agent)

        def history(h: int) -> dict[str, Any] | None:  # JSON edge: a message record as written
            if h in records:
                return records[h]
            if h == 0 and system is not None:
                return {"role": "system", "content": system}
            return None

        limit = max_chars(idx.size)
        for eid, meta in reversed(chain):
            try:
                base = resolve_prompt_sent(meta, base, history, limit)
                base["digest"] = PromptSentMetadata.read(meta).digest
            except ValueError as exc:
                raise TraceError(f"{idx.path}: prompt_sent {eid} cannot be resolved ({exc})") from None
            idx.sent[eid] = base
            while len(idx.sent) > 64:
                idx.sent.popitem(last=False)
        assert base is not None
        idx.sent.move_to_end(event_id)
        return base
