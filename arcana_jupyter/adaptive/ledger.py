"""The engine's state as a fold of its events: apply an event to the state, then hand it on.

Every change of the adaptive engine's state is a trace event, ``state_change``
(:class:`~arcana_jupyter.schema.events.StateChangeMetadata`) or ``context_action``
(:class:`~arcana_jupyter.schema.events.ContextActionMetadata`), built as its typed model where it
is made. :meth:`EngineState._record` applies the model to the state, then gives its trace form to
``emit``. :meth:`EngineState.load_events` applies recorded events to a fresh state, so a session
rebuilt from its trace has exactly the same objects, tiers, checkpoint and artifacts
(:meth:`EngineState.snapshot` compares equal); :meth:`EngineState.restore` reads a snapshot back.

The reads (:meth:`EngineState.objects` ...) hide tombstones (retracted objects). What changes the
state lives in :mod:`.actions` (the model's and the widgets' actions) and :mod:`.engine` (the
turn); what renders it in :mod:`.rendering`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Self

from ..schema.events import ContextActionMetadata, StateChangeMetadata
from ..tokens import TokenCounter
from .artifacts import Artifact, ArtifactStore
from .checkpoint import SessionCheckpoint
from .config import AdaptiveConfig
from .promotion import ObjectIndex, Promotion
from .search import EventDoc, TurnEventIndex
from .state import StateObject, one_line
from .turn_summary import TurnSummary, upgrade_recorded_summary

# the name users filter the engine's warnings by (they were logged from engine.py before the split)
log = logging.getLogger("arcana_jupyter.adaptive.engine")

Emit = Callable[[str, dict[str, Any]], Any]
"""``emit(event_type, metadata)``: where the engine's events go after they are applied (the trace)."""

EngineEvent = StateChangeMetadata | ContextActionMetadata
"""The metadata of the two event types the engine writes and reads."""

SNAPSHOT_VERSION = 2
"""2: digests and checkpoint items carry their source (model claims apart from findings); 1 is upgraded."""

NOT_RECORDED = "(text not recorded)"
_OBJECT_TEXT = ("payload", "summary", "rationale", "retract_reason")
_SUMMARY_LISTS = ("plans", "model_plans", "decisions", "constraints", "files", "findings", "claims", "errors",
                 "open_questions", "tools")


class EngineState:
    """Objects, turn summaries, checkpoint, artifacts and the turn event index of one session,
    changed only by applying events (see the module docstring)."""

    def __init__(
        self,
        config: Any = None,
        emit: Emit | None = None,
        *,
        counter: TokenCounter | None = None,
        **knobs: Any,
    ) -> None:
        if isinstance(config, AdaptiveConfig):
            cfg = config.model_copy(update=knobs) if knobs else config
            if knobs:
                cfg = AdaptiveConfig(**cfg.model_dump())
        elif config is None:
            cfg = AdaptiveConfig(**knobs)
        else:
            base = AdaptiveConfig.from_runtime(config)
            cfg = AdaptiveConfig(**(base.model_dump() | knobs))
        self.config = cfg
        self.emit = emit
        self.counter = counter or TokenCounter()
        self._reset()

    def _reset(self) -> None:
        self._objects: dict[str, StateObject] = {}
        self._next_object = 1
        self.artifacts = ArtifactStore(
            self.counter, min_tokens=self.config.artifact_min_tokens, card_tokens=self.config.artifact_card_tokens
        )
        self.turn_summaries: dict[int, TurnSummary] = {}
        """The per-turn summaries by turn (``TurnSummary``, made by :meth:`end_turn`)."""
        self.checkpoint = SessionCheckpoint()
        self.tools_offered = True
        """Whether the model has the adaptive tools: prompt texts only mention hydrate() when it does."""
        self.events = TurnEventIndex()
        self.turn = 0
        """The latest turn any recorded event belongs to."""
        self._input = ""
        self._input_turn: int | None = None
        self._index = ObjectIndex()
        self.load_warnings: list[str] = []
        """Events :meth:`load_events` could not apply (each also logged as a warning)."""
        self.learned: set[str] = set()
        """The standing objects the learned reader kept (``args.rule == "learned"``; adaptive/standing_model.py)."""
        self.acknowledged: set[str] = set()
        """The standing objects kept because the assistant's reply took them up as lasting (``args.rule ==
        "acknowledged"``; :func:`.standing.acknowledged`)."""

    # ------------------------------------------------------------------ reads (tombstones hidden)

    def get(self, object_id: str) -> StateObject | None:
        """The live object ``object_id`` (``None`` when unknown or retracted)."""
        obj = self._objects.get(object_id)
        return None if obj is None or obj.retracted else obj

    def objects(self) -> list[StateObject]:
        """Every live object, by id."""
        return [o for o in self._objects.values() if not o.retracted]

    def active(self) -> list[StateObject]:
        return [o for o in self.objects() if o.tier == "active"]

    def standing(self) -> list[StateObject]:
        """The live standing instructions, preferences and constraints, oldest first."""
        return [o for o in self.objects() if o.standing is not None]

    def peripheral(self) -> list[StateObject]:
        """Soft and hard objects (the ones promotion looks at)."""
        return [o for o in self.objects() if o.tier != "active"]

    def focused(self) -> StateObject | None:
        return next((o for o in self.objects() if o.focused), None)

    def tiers_view(self) -> dict[str, list[dict[str, Any]]]:
        """Live objects by tier as JSON-safe dicts (the turn bundle's ``tiers``; tombstones hidden)."""
        view: dict[str, list[dict[str, Any]]] = {"active": [], "soft": [], "hard": []}
        for o in self.objects():
            view[o.tier].append(o.record())
        return view

    def audit_objects(self) -> list[StateObject]:
        """Every object including tombstones (for audit views only; never for the prompt)."""
        return list(self._objects.values())

    # ------------------------------------------------------------------ events: apply, then emit

    def _record(self, event: EngineEvent) -> None:
        """Apply ``event`` to the state, then emit its trace form (the keys it was built with)."""
        self._apply(event)
        if self.emit is not None:
            event_type = "state_change" if isinstance(event, StateChangeMetadata) else "context_action"
            metadata = event.model_dump(by_alias=True, exclude_unset=True)
            self.emit(event_type, _without_text(metadata) if self.config.trace_content == "none" else metadata)

    def _apply(self, event: EngineEvent, event_turn: int | None = None) -> None:
        """Change the state as ``event`` says (``event_turn``: the envelope's turn, for a recorded
        event without its own)."""
        turn = event.turn if "turn" in event.model_fields_set else event_turn
        if isinstance(turn, int):
            self.turn = max(self.turn, turn)
        if isinstance(event, StateChangeMetadata):
            obj = self._objects.get(str(event.object_id))
            if obj is None:
                return
            if event.to_tier is None:
                raise ValueError("a state_change without to_tier")
            updates: dict[str, Any] = {"tier": event.to_tier}
            if event.cause != "idle" and isinstance(turn, int):
                updates["last_touched_turn"] = turn
            self._objects[obj.id] = obj.model_copy(update=updates)
            return
        for data in event.objects or ():
            new = StateObject.model_validate(_with_placeholders(data))
            old = self._objects.get(new.id)
            self._objects[new.id] = new
            if old is None:
                self._index.added(new)
            elif (old.search_text() != new.search_text() or old.summary != new.summary
                    or old.retracted != new.retracted):
                self._index.invalidate()
            self._next_object = max(self._next_object, new.number + 1)
            rule = event.args.get("rule") if event.action == "standing" and isinstance(event.args, dict) else None
            if rule == "learned":
                self.learned.add(new.id)
            elif rule == "acknowledged":
                self.acknowledged.add(new.id)
        if event.action == "checkpoint" and event.digest is not None:
            summary = TurnSummary.model_validate(upgrade_recorded_summary(_summary_without_nulls(event.digest)))
            self.turn_summaries[summary.turn] = summary
            self.checkpoint.reconcile(summary)
            self.events.add(
                EventDoc.model_validate(d) for d in event.events or () if isinstance(d.get("text"), str)
            )
        elif event.action == "store_artifact" and event.artifact is not None:
            art = dict(event.artifact)
            if art.get("card") is None:
                art["card"] = f"[artifact {art.get('id')} · text not recorded in the trace]"
            self.artifacts.put(Artifact.model_validate(art))

    def _state_change(self, obj: StateObject, to_tier: str, cause: str, turn: int) -> Promotion:
        p = Promotion(object_id=obj.id, kind=obj.kind, from_tier=obj.tier, to_tier=to_tier, cause=cause)  # type: ignore[arg-type]
        self._record(StateChangeMetadata(**p.model_dump(mode="json", exclude={"score"}), turn=turn))
        return p

    def _turn(self, turn: int | None) -> int:
        return max(1, self.turn if turn is None else turn)

    # ------------------------------------------------------------------ resume

    def snapshot(self) -> dict[str, Any]:
        """Everything the engine holds, as JSON-safe data (equal after :meth:`load_events` of its events)."""
        return {
            "version": SNAPSHOT_VERSION,
            "config": self.config.model_dump(mode="json"),
            "turn": self.turn,
            "next_object": self._next_object,
            "objects": [o.model_dump(mode="json") for o in self._objects.values()],
            "digests": [self.turn_summaries[t].model_dump(mode="json") for t in sorted(self.turn_summaries)],
            "checkpoint": self.checkpoint.model_dump(mode="json"),
            "artifacts": [a.model_dump(mode="json") for a in self.artifacts.all()],
            "events": [d.model_dump(mode="json") for d in self.events.docs],
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any], emit: Emit | None = None, *,
                counter: TokenCounter | None = None) -> Self:
        """An engine holding exactly what :meth:`snapshot` returned."""
        version = data.get("version")
        if version not in (1, SNAPSHOT_VERSION):
            raise ValueError(f"unsupported adaptive snapshot version {version!r} "
                             f"(this build reads versions 1 and {SNAPSHOT_VERSION})")
        engine = cls(AdaptiveConfig.model_validate(data["config"]), emit, counter=counter)
        engine.turn = int(data["turn"])
        for o in data["objects"]:
            obj = StateObject.model_validate(o)
            engine._objects[obj.id] = obj
        engine._next_object = int(data["next_object"])
        for d in data["digests"]:
            summary = TurnSummary.model_validate(upgrade_recorded_summary(d))
            engine.turn_summaries[summary.turn] = summary
        if version == SNAPSHOT_VERSION:
            engine.checkpoint = SessionCheckpoint.model_validate(data["checkpoint"])
        else:  # version 1: its checkpoint took findings from the model's replies; fold the upgraded summaries again
            engine.checkpoint = SessionCheckpoint()
            for t in sorted(engine.turn_summaries):
                engine.checkpoint.reconcile(engine.turn_summaries[t])
        for a in data["artifacts"]:
            engine.artifacts.put(Artifact.model_validate(a))
        engine.events.add(EventDoc.model_validate(d) for d in data["events"])
        return engine

    @classmethod
    def from_events(cls, events: Iterable[Any], config: Any = None, emit: Emit | None = None, *,
                    agent: str | None = None, counter: TokenCounter | None = None) -> Self:
        """A new engine whose state is rebuilt from recorded trace events (``emit`` is set after)."""
        engine = cls(config, None, counter=counter)
        engine.load_events(events, agent=agent)
        engine.emit = emit
        return engine

    def load_events(self, events: Iterable[Any], *, agent: str | None = None) -> Self:
        """Reset this engine and rebuild its state from recorded trace events (``state_change`` and
        ``context_action``; with ``agent``, only that agent's), keeping its ``emit``: nothing is
        emitted while restoring. Returns the engine."""
        self._load_events(events, agent=agent)
        return self

    def _load_events(self, events: Iterable[Any], *, agent: str | None = None) -> None:
        emit, self.emit = self.emit, None
        # whether the model has the tools is the session's, not recorded state: a resumed engine keeps it
        offered, hints = self.tools_offered, self.artifacts.tool_hints
        try:
            self._reset()
            self.tools_offered, self.artifacts.tool_hints = offered, hints
            for ev in events:
                if isinstance(ev, Mapping):
                    etype, md, eturn, eagent = (
                        ev.get("event_type"), ev.get("metadata") or {}, ev.get("turn"), ev.get("agent")
                    )
                else:
                    etype, md = getattr(ev, "event_type", None), getattr(ev, "metadata", None) or {}
                    eturn, eagent = getattr(ev, "turn", None), getattr(ev, "agent", None)
                if agent is not None and eagent is not None and eagent != agent:
                    continue
                if etype not in ("state_change", "context_action"):
                    continue
                try:
                    # validated, not read leniently: a record that does not fit raises and is skipped
                    model = StateChangeMetadata if etype == "state_change" else ContextActionMetadata
                    self._apply(model.model_validate(md), eturn)
                except Exception as exc:  # one bad record must not lose the rest of the session
                    where = getattr(ev, "event_id", None) or (ev.get("event_id") if isinstance(ev, Mapping) else None)
                    note = f"skipped {etype} event {where or '?'}: {type(exc).__name__}: {one_line(str(exc), 200)}"
                    self.load_warnings.append(note)
                    log.warning("arcana: adaptive load_events %s", note)
        finally:
            self.emit = emit


def _without_text(md: Mapping[str, Any]) -> dict[str, Any]:
    """``md`` with every text the engine adds removed (``trace_content="none"``); ids, kinds, tiers,
    turns, flags and counts stay. Arguments and results are left to the trace writer's redactor."""
    out = dict(md)
    if out.get("objects"):
        out["objects"] = [{**o, **{k: None for k in _OBJECT_TEXT if o.get(k) is not None}} for o in out["objects"]]
    if out.get("digest") is not None:
        out["digest"] = {"turn": out["digest"].get("turn"), "version": out["digest"].get("version")}
    if "events" in out:
        out["events"] = []
    if out.get("artifact") is not None:
        out["artifact"] = {**out["artifact"], "content": None, "card": None}
    result = out.get("result")
    if isinstance(result, dict) and isinstance(result.get("results"), list):
        out["result"] = {**result, "results": [{**r, "snippet": None} if isinstance(r, dict) else r
                                               for r in result["results"]]}
    return out


def _with_placeholders(data: Mapping[str, Any]) -> dict[str, Any]:
    """An object record from a text-less trace, made valid: missing texts read "(text not recorded)"."""
    out = dict(data)
    for key in ("payload", "summary"):
        if out.get(key) is None:
            out[key] = NOT_RECORDED
    return out


def _summary_without_nulls(data: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded turn summary (a checkpoint event's ``digest``) from a text-less trace, made valid:
    null fields and list items without text dropped."""
    out = {k: v for k, v in data.items() if v is not None}
    for key in _SUMMARY_LISTS:
        if key in out:
            out[key] = [x for x in out[key] if x is not None and not (isinstance(x, dict) and x.get("text") is None)]
    return out


__all__ = ["SNAPSHOT_VERSION", "Emit", "EngineEvent", "EngineState"]
