"""Recording one call's prompt: its ``context_decision`` (chained to the previous one by
trace/decision_delta.py's encoder, and seen live by subscribers with its rows resolved), the optional
``prompt_snapshot``, and ``prompt_sent`` (encoded against the history by trace/prompt_sent.py).

One :class:`CallRecorder` per session: both encoders keep what they last wrote."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..context.bands import OverflowCover
from ..context.decisions import ContextDecision
from ..context.result import BuildResult
from ..context.sections import ContextSection, PinBlock
from ..messages import ToolSpec
from ..providers.shaping import ShapedPrompt
from ..schema.events import ContextDecisionMetadata, PromptSentMetadata, PromptSnapshotMetadata, ToolLoopStop
from ..trace.decision_delta import ChainEncoder, is_chained, resolve_chain_metadata
from ..trace.events import TraceEvent
from ..trace.prompt_sent import PromptSentEncoder

if TYPE_CHECKING:
    from .session import ChatSession


def recorded_decision(decision: ContextDecision, rows: Sequence[Mapping[str, Any]]) -> ContextDecision:
    """``decision`` as the trace records it — the one the session reports (``ChatReply.decision``): each
    row with the ``relevance_score`` its recorded row holds (``rows``, :func:`~..context.decisions.
    recorded_scores`: a score only where it decided an outcome, else None). So the decision a reader gets
    back from the trace (the inspector, replay, the report) is the decision the session handed out; the
    builder keeps its own, with every score. Rows whose score is kept are the builder's objects."""
    out = list(decision.decisions)
    for i, (row, src) in enumerate(zip(rows, decision.decisions, strict=True)):
        score = row.get("relevance_score")
        if score != src.relevance_score:
            out[i] = type(src).model_construct(**{**src.__dict__, "relevance_score": score})
    return decision.model_copy(update={"decisions": out})


class CallRecorder:
    """Writes a built prompt's events for one session."""

    def __init__(self, decisions: ChainEncoder, prompts: PromptSentEncoder) -> None:
        self.decisions = decisions
        self.prompts = prompts
        self._live_previous: dict[str, Any] | None = None  # JSON edge: the last decision, as written

    def record(
        self, session: ChatSession, *, turn: int, step: int, build: BuildResult,
        decision_md: dict[str, Any],  # JSON edge: the decision as recorded (decision_record, scores kept)
        digest: str, pins: list[PinBlock], sections: list[ContextSection], cover: OverflowCover | None,
        tools: list[ToolSpec], tool_loop: ToolLoopStop | None, shaped: ShapedPrompt,
    ) -> TraceEvent:
        """Write the call's decision (returned: the parent of the call's events), then its snapshot and
        the prompt as sent when the config asks for them."""
        config = session.config
        metadata: dict[str, Any] = {  # JSON edge: the parts, dumped
            "step": step,
            "decision": {**decision_md, "decisions": None},  # the rows go in chain.rows (trace/decision_delta.py)
            "report": build.report.model_dump(mode="json"),
            "budget": build.budget.model_dump(mode="json"),
            "request_digest": digest,
            "history_len": len(session.history),
            "inputs": {
                "pins": [p.model_dump(mode="json") for p in pins],
                "sections": [s.model_dump(mode="json", exclude_none=True) for s in sections],
                "task": None,
                "overflow": dict(cover.carries) if cover is not None else {},
            },
            "builder": {**session.builder.settings(), "model": session.provider_model},
            "tools": [t.model_dump(mode="json") for t in tools],
            "calibration": {**session.calibration.record(), "window": config.total_window,
                            "response_reserve": config.response_reserve},
        }
        if tool_loop is not None:
            metadata["tool_loop"] = tool_loop
        if shaped.shape.shapes:
            metadata["shape"] = shaped.record()
        full = ContextDecisionMetadata.build(**metadata).wire()  # JSON edge: the chain encoder works on the trace form
        packed = self.decisions.pack(full, decision_md["decisions"])
        decision_event = session.emit_json("context_decision", packed, live_metadata=self._live(decision_md))
        self.decisions.written(decision_event.event_id)
        if config.trace_include_prompt_snapshots:
            session.emit(PromptSnapshotMetadata.build(
                turn=turn, step=step, model=session.provider_model,
                messages=[m.wire() for m in build.messages], tools=[t.wire() for t in tools],
                response_format=None, budget_snapshot=build.budget.model_dump(mode="json"),
            ), parent_id=decision_event.event_id)
        if config.trace_prompt_sent and config.trace_content != "none":
            sent = self.prompts.encode(
                step=step, digest=digest, messages=build.messages, history=session.history,
                tokens=[session.counter.count_message(m) for m in build.messages])
            event = session.emit(PromptSentMetadata.build(**sent), parent_id=decision_event.event_id)
            self.prompts.written(event.event_id)
        return decision_event

    def _live(self, decision_md: dict[str, Any]  # JSON edge: the decision as recorded
              ) -> Callable[[dict[str, Any]], dict[str, Any]]:  # JSON edge: written -> seen
        """What subscribers see of a decision: the written (redacted) metadata resolved as a reader
        resolves it — what ``chain.same`` stands for taken from the previous decision — with the rows."""

        def live(written: dict[str, Any]) -> dict[str, Any]:  # JSON edge: as written
            meta = written
            if is_chained(written):
                meta = resolve_chain_metadata(written, self._live_previous, "the decision just written")
            self._live_previous = meta
            return {**meta, "decision": {**meta["decision"], "decisions": decision_md["decisions"]}}

        return live
