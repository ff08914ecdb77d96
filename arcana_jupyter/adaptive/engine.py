"""AdaptiveEngine: tiered working memory, session checkpoint, artifacts — pure, no runtime inside.

Per turn the runtime calls :meth:`AdaptiveEngine.begin_turn` (promotion by the user's input),
:meth:`AdaptiveEngine.sections` (what goes into the prompt), the tool handlers of
:mod:`.tools` while the model works, :meth:`AdaptiveEngine.ingest_tool_output` for every tool
output, and :meth:`AdaptiveEngine.end_turn` with the turn's messages (checkpoint, demotion).

Every change of state is an event (``state_change`` or ``context_action``) that the engine first
applies to itself and then hands to ``emit``. :meth:`AdaptiveEngine.load_events` applies the same
events to a fresh engine, so a session rebuilt from its trace has exactly the same objects,
tiers, checkpoint and artifacts (:meth:`snapshot` compares equal).
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..context.bands import OverflowCover
from ..context.sections import CHECKPOINT_SECTION, ContextSection
from ..messages import MessageLike
from ..schema.events import ContextActionMetadata, StateChangeMetadata
from ..tokens import TokenCounter
from .artifacts import Artifact, ArtifactStore
from .checkpoint import SECTION_CLAIMS, SessionCheckpoint, checkpoint_sections
from .config import AdaptiveConfig
from .digest import TurnDigest, extract_digest, upgrade_recorded_digest
from .promotion import ObjectIndex, Promotion, demotion_target, find_promotions
from .search import EventDoc, TurnEventIndex, docs_for_turn, snippet
from .state import KINDS, Kind, StateObject, TaskStatus, object_number, one_line

log = logging.getLogger(__name__)

Emit = Callable[[str, dict[str, Any]], Any]
SNAPSHOT_VERSION = 2
"""2: digests and checkpoint items carry their source (model claims apart from findings); 1 is upgraded."""

SECTION_ACTIVE = "adaptive_active"
SECTION_SOFT = "adaptive_soft"
SECTION_HARD = "adaptive_hard"
SECTION_DIGESTS = "turn_digests"
SECTION_NAMES = (SECTION_HARD, SECTION_SOFT, CHECKPOINT_SECTION, SECTION_CLAIMS, SECTION_DIGESTS, SECTION_ACTIVE)

ADAPTIVE_TOOL_NAMES = frozenset(
    {
        "create_task",
        "update_task",
        "decide",
        "add_constraint",
        "note",
        "hydrate",
        "retract_task",
        "focus",
        "search_turn_events",
        "retrieve_artifact",
    }
)

ACTION_OF = {"retract_task": "retract"}
"""Tool name -> ``context_action`` action name where they differ."""


def failure(error: str, message: str, hint: str) -> dict[str, Any]:
    """A structured tool error: ``{"ok": false, "error", "message", "hint"}``."""
    return {"ok": False, "error": error, "message": message, "hint": hint}


class AdaptiveEngine:
    """Working memory of one chat session (see the module docstring)."""

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
        self.digests: dict[int, TurnDigest] = {}
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
        self._full_cache: dict[str, tuple[StateObject, str]] = {}
        self._overflow_cache: dict[tuple[Any, ...], OverflowCover] = {}
        # the checkpoint folded over the turns last summarised (and their digests): the next cover
        # usually summarises those plus the turns that just left the verbatim window
        self._folded: list[tuple[tuple[int, ...], list[Any], SessionCheckpoint]] = []
        """:meth:`overflow_sections` by the turns covered (a turn's digest never changes once made)."""
        self._stub_cache: dict[str, tuple[StateObject, str]] = {}

    def _full(self, obj: StateObject) -> str:
        hit = self._full_cache.get(obj.id)
        if hit is None or hit[0] is not obj:
            hit = (obj, obj.render_full())
            self._full_cache[obj.id] = hit
        return hit[1]

    def _stub(self, obj: StateObject) -> str:
        hit = self._stub_cache.get(obj.id)
        if hit is None or hit[0] is not obj:
            hit = (obj, obj.render_stub())
            self._stub_cache[obj.id] = hit
        return hit[1]

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

    def peripheral(self) -> list[StateObject]:
        """Soft and hard objects (the ones promotion looks at)."""
        return [o for o in self.objects() if o.tier != "active"]

    def focused(self) -> StateObject | None:
        return next((o for o in self.objects() if o.focused), None)

    def tiers_view(self) -> dict[str, list[dict[str, Any]]]:
        """Live objects by tier as JSON-safe dicts (the turn bundle's ``tiers``; tombstones hidden)."""
        view: dict[str, list[dict[str, Any]]] = {"active": [], "soft": [], "hard": []}
        for o in self.objects():
            view[o.tier].append(o.model_dump(mode="json"))
        return view

    def audit_objects(self) -> list[StateObject]:
        """Every object including tombstones (for audit views only; never for the prompt)."""
        return list(self._objects.values())

    # ------------------------------------------------------------------ events: apply, then emit

    def _record(self, event_type: str, metadata: dict[str, Any]) -> None:
        self._apply(event_type, metadata)
        if self.emit is not None:
            self.emit(event_type, _without_text(metadata) if self.config.trace_content == "none" else metadata)

    def _apply(self, event_type: str, md: Mapping[str, Any], event_turn: int | None = None) -> None:
        # validated, not read leniently: a record that does not fit raises, and load_events() skips it with a warning
        if event_type == "state_change":
            change = StateChangeMetadata.model_validate(md)
            turn = change.turn if "turn" in change.model_fields_set else event_turn
        elif event_type == "context_action":
            act = ContextActionMetadata.model_validate(md)
            turn = act.turn if "turn" in act.model_fields_set else event_turn
        else:
            return
        if isinstance(turn, int):
            self.turn = max(self.turn, turn)
        if event_type == "state_change":
            obj = self._objects.get(str(change.object_id))
            if obj is None:
                return
            if change.to_tier is None:
                raise ValueError("a state_change without to_tier")
            updates: dict[str, Any] = {"tier": change.to_tier}
            if change.cause != "idle" and isinstance(turn, int):
                updates["last_touched_turn"] = turn
            self._objects[obj.id] = obj.model_copy(update=updates)
            return
        for data in act.objects or ():
            new = StateObject.model_validate(_with_placeholders(data))
            old = self._objects.get(new.id)
            self._objects[new.id] = new
            if old is None:
                self._index.added(new)
            elif (old.search_text() != new.search_text() or old.summary != new.summary
                    or old.retracted != new.retracted):
                self._index.invalidate()
            self._next_object = max(self._next_object, new.number + 1)
        if act.action == "checkpoint" and act.digest is not None:
            digest = TurnDigest.model_validate(upgrade_recorded_digest(_digest_without_nulls(act.digest)))
            self.digests[digest.turn] = digest
            self.checkpoint.reconcile(digest)
            self.events.add(
                EventDoc.model_validate(d) for d in act.events or () if isinstance(d.get("text"), str)
            )
        elif act.action == "store_artifact" and act.artifact is not None:
            art = dict(act.artifact)
            if art.get("card") is None:
                art["card"] = f"[artifact {art.get('id')} · text not recorded in the trace]"
            self.artifacts.put(Artifact.model_validate(art))

    def _action(
        self,
        action: str,
        turn: int,
        args: Mapping[str, Any],
        result: dict[str, Any],
        *,
        source: str,
        obj: StateObject | None = None,
        changed: Sequence[StateObject] = (),
        object_id: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        md: dict[str, Any] = {
            "action": action,
            "object_id": obj.id if obj is not None else object_id,
            "kind": obj.kind if obj is not None else None,
            "args": dict(args),
            "result": result,
            "source": source,
            "turn": turn,
            "objects": [o.model_dump(mode="json") for o in changed],
        }
        md.update(extra)
        self._record("context_action", md)
        return result

    def reject(self, action: str, turn: int | None, args: Any, result: dict[str, Any], *,
               source: str = "llm") -> dict[str, Any]:
        """Record a refused action (bad arguments ...) as a ``context_action`` and return ``result``."""
        recorded = dict(args) if isinstance(args, Mapping) else {"raw": repr(args)}
        return self._action(ACTION_OF.get(action, action), self._turn(turn), recorded, result, source=source)

    def _state_change(self, obj: StateObject, to_tier: str, cause: str, turn: int) -> Promotion:
        p = Promotion(object_id=obj.id, kind=obj.kind, from_tier=obj.tier, to_tier=to_tier, cause=cause)  # type: ignore[arg-type]
        md = p.model_dump(mode="json", exclude={"score"}) | {"turn": turn}
        self._record("state_change", md)
        return p

    def _turn(self, turn: int | None) -> int:
        return max(1, self.turn if turn is None else turn)

    # ------------------------------------------------------------------ the turn

    def begin_turn(self, turn: int, user_input: str) -> list[Promotion]:
        """Promote peripheral objects the input mentions (keyword, then BM25); emit each."""
        self._input = user_input or ""
        self._input_turn = turn
        self.turn = max(self.turn, turn)
        peripheral = self.peripheral()
        if not peripheral or not self._input.strip():
            return []
        self._index.ensure(self._objects.values())
        found = find_promotions(self._input, peripheral, self._index, self.config.bm25_threshold)
        out: list[Promotion] = []
        for p in found:
            obj = self._objects[p.object_id]
            self._state_change(obj, "active", p.cause, turn)
            out.append(p)
        return out

    def end_turn(self, turn: int, transcript_of_turn: Sequence[MessageLike]) -> list[Promotion]:
        """Reconcile the checkpoint from the turn's digest, then demote idle objects; returns demotions."""
        digest = extract_digest(turn, transcript_of_turn, ADAPTIVE_TOOL_NAMES)
        docs = docs_for_turn(turn, transcript_of_turn, digest.text(), ADAPTIVE_TOOL_NAMES)
        self._record(
            "context_action",
            {
                "action": "checkpoint",
                "object_id": None,
                "kind": "checkpoint",
                "args": {"turn": turn},
                "result": {"ok": True, "turn": turn},
                "source": "engine",
                "turn": turn,
                "objects": [],
                "digest": digest.model_dump(mode="json"),
                "events": [d.model_dump(mode="json") for d in docs],
            },
        )
        out: list[Promotion] = []
        for obj in self.objects():
            target = demotion_target(
                obj, turn, self.config.idle_soft_after_turns, self.config.idle_hard_after_turns
            )
            if target is not None:
                out.append(self._state_change(obj, target, "idle", turn))
        return out

    # ------------------------------------------------------------------ the prompt

    def sections(self, turn: int | None = None) -> list[ContextSection]:
        """The tier sections: anchors and stubs (head), active objects in full (late).

        What stands in for turns that did not fit is :meth:`overflow_sections`, asked for by the
        runtime only when the builder could not keep every turn verbatim. ``turn`` is accepted for
        symmetry with the capability hook; tiers are the engine's current state."""
        live = self.objects()
        out: list[ContextSection] = []
        hard = [o for o in live if o.tier == "hard"]
        if hard:
            groups: dict[str, list[str]] = {}
            for o in hard:
                groups.setdefault(o.kind, []).append(o.id)
            listing = "; ".join(f"{k}s: {', '.join(groups[k])}" for k in KINDS if k in groups)
            out.append(
                ContextSection(
                    name=SECTION_HARD,
                    content=(
                        "Archived working memory (anchors only — id and kind). "
                        f"{listing}.\n"
                        + (f"To see one in full, call hydrate(id), e.g. hydrate(\"{hard[0].id}\"); "
                           "mentioning its subject also brings it back." if self.tools_offered
                           else "Mentioning its subject brings it back.")
                    ),
                    placement="head",
                )
            )
        soft = [o for o in live if o.tier == "soft"]
        if soft:
            lines = "\n".join("- " + self._stub(o) for o in soft)
            out.append(
                ContextSection(
                    name=SECTION_SOFT,
                    content=("Peripheral working memory (one-line stubs; hydrate(id) shows the full text):\n"
                             if self.tools_offered else "Peripheral working memory (one-line stubs):\n") + lines,
                    placement="head",
                )
            )
        active = sorted((o for o in live if o.tier == "active"), key=lambda o: not o.focused)  # live is in id order
        if active:
            body = "\n".join(self._full(o) for o in active)
            out.append(
                ContextSection(
                    name=SECTION_ACTIVE,
                    content=(
                        "Active working memory (full text; keep it current with update_task, decide, "
                        "add_constraint, note, focus and retract_task):\n" + body
                    ),
                    placement="late",
                )
            )
        return out

    def checkpoint_sections(self) -> list[ContextSection]:
        """The whole session's checkpoint as sections (``checkpoint``, ``model_claims``): what the
        inspector shows. The prompt gets the checkpoint of the turns that did not fit instead
        (:meth:`overflow_sections`)."""
        return checkpoint_sections(self.checkpoint, self.config.narrative_lines, placement="head")

    def overflow_sections(self, turns: Iterable[int], max_tokens: int | None = None) -> OverflowCover:
        """What stands in for ``turns``, the turns that did not reach the prompt verbatim.

        A checkpoint reconciled from their digests (the most recent ``digest_turns`` of them
        excepted; the model's own claims apart, see checkpoint.py) and those recent ones as full
        digests. Both are a function of which turns they cover, never of the question, so they
        change only when the builder's verbatim window moves (when the prompt's prefix changes
        anyway): they are placed in the head, where the provider's prompt cache keeps them.

        ``max_tokens`` bounds the cover (the runtime passes a share of the budget, and never more
        than the turns it replaces): the checkpoint shows fewer narrative lines, the model's claims
        go, then the digests move into the checkpoint, until it fits — or, when even the smallest
        checkpoint is larger, no cover at all. Turns without a digest (not yet ended) are skipped."""
        covered = tuple(sorted({t for t in turns if t in self.digests}))
        if not covered:
            return OverflowCover()
        key = (covered, max_tokens)
        hit = self._overflow_cache.get(key)
        if hit is not None:
            return hit
        detail = min(self.config.digest_turns, len(covered))
        lines = self.config.narrative_lines
        claims = True
        while True:
            cover = self._cover(covered, detail, lines, claims)
            if max_tokens is None or self._cover_tokens(cover) <= max_tokens:
                break
            if lines > 0:
                lines //= 2
            elif claims:
                claims = False
            elif detail > 0:
                detail -= 1
            else:  # even the smallest checkpoint is larger than what it would stand in for
                cover = OverflowCover()
                break
        if len(self._overflow_cache) > 64:
            self._overflow_cache.clear()
        self._overflow_cache[key] = cover
        return cover

    def _cover(self, covered: tuple[int, ...], detail: int, narrative_lines: int, claims: bool) -> OverflowCover:
        detailed = covered[len(covered) - detail:] if detail else ()
        summarised = covered[: len(covered) - len(detailed)]
        out: list[ContextSection] = []
        carries: dict[str, list[int]] = {}
        if summarised:
            checkpoint = self._fold(summarised)
            for section in checkpoint_sections(checkpoint, narrative_lines, placement="head"):
                if section.name == SECTION_CLAIMS and not claims:
                    continue
                out.append(section)
                carries[section.name] = list(summarised)
        if detailed:
            span = f"turn {detailed[0]}" if len(detailed) == 1 else f"turns {detailed[0]}–{detailed[-1]}"
            lines = [f"Earlier {span}, not in this prompt verbatim, as digests"
                     + ("; search_turn_events(query) finds more):" if self.tools_offered else "):")]
            lines += [self.digests[t].render() for t in detailed]
            out.append(ContextSection(name=SECTION_DIGESTS, content="\n".join(lines), placement="head"))
            carries[SECTION_DIGESTS] = list(detailed)
        return OverflowCover(sections=out, carries=carries)

    def _fold(self, turns: tuple[int, ...]) -> SessionCheckpoint:
        """``SessionCheckpoint()`` reconciled with the digests of ``turns``, in order, continuing from
        the last fold when it covered a prefix of them with the same digests: reconcile is a pure fold
        (it replaces its lists, never edits them), so a shallow copy carries on exactly. A cover then
        costs the turns that joined it, not every turn before them."""
        digests = list(map(self.digests.__getitem__, turns))
        start, checkpoint = 0, None
        # the longest of the last few folds that is a prefix (a cover is tried at several sizes per call)
        for done, used, state in sorted(self._folded, key=lambda f: -len(f[0])):
            n = len(done)
            if n <= len(turns) and turns[:n] == done and all(map(operator.is_, used, digests[:n])):
                start, checkpoint = n, state.model_copy()
                break
        if checkpoint is None:
            checkpoint = SessionCheckpoint()
        for digest in digests[start:]:
            checkpoint.reconcile(digest)
        self._folded = [*[f for f in self._folded if f[0] != turns][-7:], (turns, digests, checkpoint.model_copy())]
        return checkpoint

    def _cover_tokens(self, cover: OverflowCover) -> int:
        return sum(self.counter.count_message(s.render()) for s in cover.sections)

    def render_flat(self) -> str:
        """Every live object in full, as one block (what the prompt would hold without tiering)."""
        return "Working memory:\n" + "\n".join(self._full(o) for o in self.objects())

    # ------------------------------------------------------------------ artifacts

    def ingest_tool_output(self, turn: int, tool_name: str, text: str, tool_call_id: str | None = None) -> str:
        """``text`` itself when small; else store it as an artifact and return its bounded card."""
        if tool_name in ADAPTIVE_TOOL_NAMES:
            return text
        store, tokens = self.artifacts.should_store(text)
        if not store:
            return text
        art = self.artifacts.build(
            text, turn=turn, source=f"tool:{tool_name}", tool_call_id=tool_call_id, tokens=tokens
        )
        self._record(
            "context_action",
            {
                "action": "store_artifact",
                "object_id": art.id,
                "kind": "artifact",
                "args": {"tool": tool_name, "tool_call_id": tool_call_id},
                "result": {"ok": True, "id": art.id, "kind": art.kind, "chars": art.chars, "tokens": art.tokens},
                "source": "engine",
                "turn": turn,
                "objects": [],
                "artifact": art.model_dump(mode="json"),
            },
        )
        return art.card

    # ------------------------------------------------------------------ actions (tools and widgets)

    def _new_id(self) -> str:
        return f"s_{self._next_object}"

    def _create(
        self, action: str, turn: int, args: Mapping[str, Any], *, kind: Kind, payload: str, summary: str,
        source: str, status: TaskStatus | None = None, rationale: str | None = None,
    ) -> dict[str, Any]:
        obj = StateObject(
            id=self._new_id(), kind=kind, payload=payload, summary=one_line(summary, 160), tier="active",
            created_turn=turn, last_touched_turn=turn, status=status, rationale=rationale,
        )
        result = {"ok": True, "id": obj.id, "kind": kind, "tier": "active", "summary": obj.summary}
        self._action(action, turn, args, result, source=source, obj=obj, changed=[obj])
        self._state_change_created(obj, turn)
        return result

    def _state_change_created(self, obj: StateObject, turn: int) -> None:
        md = {"object_id": obj.id, "kind": obj.kind, "from_tier": None, "to_tier": "active", "cause": "created",
              "turn": turn}
        self._record("state_change", md)

    def _lookup(self, action: str, turn: int, args: Mapping[str, Any], object_id: Any, source: str
                ) -> StateObject | dict[str, Any]:
        if not isinstance(object_id, str) or not object_id:
            return self._action(action, turn, args, failure(
                "invalid_arguments", "id must be a non-empty string like \"s_3\"",
                "pass the id shown in the working-memory sections"), source=source)
        obj = self._objects.get(object_id)
        if obj is None:
            live = [o.id for o in self.objects()]
            known = ", ".join(live[-12:]) or "none yet"
            return self._action(action, turn, args, failure(
                "not_found", f"no working-memory object {object_id!r}",
                f"ids look like s_3; live ids: {known}"), source=source, object_id=object_id)
        if obj.retracted:
            return self._action(action, turn, args, failure(
                "retracted", f"{object_id} was retracted at turn {obj.retracted_turn} and is hidden",
                "create a new object if it is needed again"), source=source, object_id=object_id)
        return obj

    def create_task(self, title: str, description: str | None = None, status: TaskStatus = "open", *,
                    turn: int | None = None, source: str = "llm") -> dict[str, Any]:
        t = self._turn(turn)
        args = {"title": title, "description": description, "status": status}
        return self._create("create_task", t, args, kind="task", payload=description or title, summary=title,
                            source=source, status=status)

    def decide(self, decision: str, rationale: str | None = None, *, turn: int | None = None,
               source: str = "llm") -> dict[str, Any]:
        t = self._turn(turn)
        return self._create("decide", t, {"decision": decision, "rationale": rationale}, kind="decision",
                            payload=decision, summary=decision, source=source, rationale=rationale)

    def add_constraint(self, constraint: str, rationale: str | None = None, *, turn: int | None = None,
                       source: str = "llm") -> dict[str, Any]:
        t = self._turn(turn)
        return self._create("add_constraint", t, {"constraint": constraint, "rationale": rationale},
                            kind="constraint", payload=constraint, summary=constraint, source=source,
                            rationale=rationale)

    def note(self, text: str, title: str | None = None, *, turn: int | None = None,
             source: str = "llm") -> dict[str, Any]:
        t = self._turn(turn)
        return self._create("note", t, {"text": text, "title": title}, kind="note", payload=text,
                            summary=title or text, source=source)

    def update_task(self, object_id: str, *, title: str | None = None, description: str | None = None,
                    status: TaskStatus | None = None, turn: int | None = None, source: str = "llm") -> dict[str, Any]:
        t = self._turn(turn)
        args = {"id": object_id, "title": title, "description": description, "status": status}
        found = self._lookup("update_task", t, args, object_id, source)
        if isinstance(found, dict):
            return found
        if found.kind != "task":
            return self._action("update_task", t, args, failure(
                "wrong_kind", f"{found.id} is a {found.kind}, not a task",
                "update_task changes tasks; for a changed decision call decide() and retract_task() the old one"),
                source=source, object_id=found.id)
        if title is None and description is None and status is None:
            return self._action("update_task", t, args, failure(
                "invalid_arguments", "nothing to update", "pass at least one of title, description, status"),
                source=source, object_id=found.id)
        updates: dict[str, Any] = {"last_touched_turn": t, "tier": "active"}
        if title is not None:
            updates["summary"] = one_line(title, 160)
            if found.payload == found.summary and description is None:
                updates["payload"] = title
        if description is not None:
            updates["payload"] = description
        if status is not None:
            updates["status"] = status
            if status == "done":
                updates["focused"] = False
        new = found.model_copy(update=updates)
        new = StateObject.model_validate(new.model_dump())
        result = {"ok": True, "id": new.id, "status": new.status, "summary": new.summary, "tier": new.tier}
        if found.tier != "active":
            self._state_change(found, "active", "update", t)
        return self._action("update_task", t, args, result, source=source, obj=new, changed=[new])

    def hydrate(self, object_id: str, *, turn: int | None = None, source: str = "llm") -> dict[str, Any]:
        """Bring an object back to the active tier (manual promotion) and return its full text."""
        t = self._turn(turn)
        args = {"id": object_id}
        found = self._lookup("hydrate", t, args, object_id, source)
        if isinstance(found, dict):
            return found
        before = found.tier
        if before != "active":
            self._state_change(found, "active", "hydrate" if source == "llm" else "widget", t)
        new = self._objects[found.id].model_copy(update={"last_touched_turn": t, "tier": "active"})
        result = {"ok": True, "id": new.id, "kind": new.kind, "from_tier": before, "tier": "active",
                  "text": new.render_full()}
        return self._action("hydrate", t, args, result, source=source, obj=new, changed=[new])

    def retract(self, object_id: str, reason: str | None = None, *, turn: int | None = None,
                source: str = "llm") -> dict[str, Any]:
        """Tombstone an object: hidden from every read and the prompt, kept for audit and replay."""
        t = self._turn(turn)
        args = {"id": object_id, "reason": reason}
        found = self._lookup("retract", t, args, object_id, source)
        if isinstance(found, dict):
            return found
        new = found.model_copy(update={"retracted": True, "retracted_turn": t, "retract_reason": reason,
                                       "focused": False})
        result = {"ok": True, "id": new.id, "kind": new.kind, "retracted": True,
                  "note": "hidden from working memory and search; kept in the trace for audit"}
        return self._action("retract", t, args, result, source=source, obj=new, changed=[new])

    def focus(self, object_id: str, *, turn: int | None = None, source: str = "llm") -> dict[str, Any]:
        """Make a task the focused one (shown first, never demoted while focused)."""
        t = self._turn(turn)
        args = {"id": object_id}
        found = self._lookup("focus", t, args, object_id, source)
        if isinstance(found, dict):
            return found
        if found.kind != "task":
            return self._action("focus", t, args, failure(
                "wrong_kind", f"{found.id} is a {found.kind}; only tasks can be focused",
                "create_task() for the work, then focus() it"), source=source, object_id=found.id)
        changed: list[StateObject] = [
            o.model_copy(update={"focused": False}) for o in self.objects() if o.focused and o.id != found.id
        ]
        if found.tier != "active":
            self._state_change(found, "active", "focus", t)
        new = self._objects[found.id].model_copy(update={"focused": True, "tier": "active", "last_touched_turn": t})
        changed.append(new)
        result = {"ok": True, "id": new.id, "focused": True, "unfocused": [o.id for o in changed[:-1]]}
        return self._action("focus", t, args, result, source=source, obj=new, changed=changed)

    def search_turn_events(self, query: str, limit: int | None = None, *, turn: int | None = None,
                           source: str = "llm") -> dict[str, Any]:
        """BM25 over stored turn digests, messages and tool results, plus live objects."""
        t = self._turn(turn)
        n = limit or self.config.search_limit
        args = {"query": query, "limit": limit}
        if not isinstance(query, str) or not query.strip():
            return self._action("search_turn_events", t, args, failure(
                "invalid_arguments", "query must be a non-empty string", "describe what to look for in a few words"),
                source=source)
        hits: list[tuple[float, int, dict[str, Any]]] = []
        for doc, s in self.events.search(query):
            hit = {"type": doc.type, "turn": doc.turn, "score": round(s, 4), "snippet": snippet(doc.text, query)}
            if doc.name:
                hit["name"] = doc.name
            if doc.artifact:
                hit["artifact"] = doc.artifact
            hits.append((s, doc.turn, hit))
        live = self.objects()
        if live:
            self._index.ensure(self._objects.values())
            scores = self._index.scores(query, [o.id for o in live])
            for o in live:
                s = scores.get(o.id, 0.0)
                if s > 0:
                    hits.append((s, o.last_touched_turn, {
                        "type": "state_object", "id": o.id, "kind": o.kind, "tier": o.tier,
                        "turn": o.created_turn, "score": round(s, 4), "snippet": snippet(o.search_text(), query)}))
        hits.sort(key=lambda h: (-h[0], -h[1]))
        results = [h[2] for h in hits[:n]]
        result: dict[str, Any] = {"ok": True, "query": query, "total": len(hits), "results": results}
        if not results:
            result["hint"] = "nothing matched; try other words, or look at the session checkpoint"
        return self._action("search_turn_events", t, args, result, source=source)

    def retrieve_artifact(self, artifact_id: str, offset: int = 0, limit: int | None = None, *,
                          turn: int | None = None, source: str = "llm") -> dict[str, Any]:
        t = self._turn(turn)
        n = min(limit or self.config.retrieve_default_chars, self.config.retrieve_max_chars)
        args = {"id": artifact_id, "offset": offset, "limit": limit}
        result = self.artifacts.read(artifact_id, offset, n)
        # the content already lives in the store_artifact event: keep the audit record small
        logged = {k: v for k, v in result.items() if k != "content"}
        self._action("retrieve_artifact", t, args, logged, source=source, object_id=artifact_id)
        return result

    # ------------------------------------------------------------------ resume

    def snapshot(self) -> dict[str, Any]:
        """Everything the engine holds, as JSON-safe data (equal after :meth:`load_events` of its events)."""
        return {
            "version": SNAPSHOT_VERSION,
            "config": self.config.model_dump(mode="json"),
            "turn": self.turn,
            "next_object": self._next_object,
            "objects": [o.model_dump(mode="json") for o in self._objects.values()],
            "digests": [self.digests[t].model_dump(mode="json") for t in sorted(self.digests)],
            "checkpoint": self.checkpoint.model_dump(mode="json"),
            "artifacts": [a.model_dump(mode="json") for a in self.artifacts.all()],
            "events": [d.model_dump(mode="json") for d in self.events.docs],
        }

    @classmethod
    def restore(cls, data: Mapping[str, Any], emit: Emit | None = None, *,
                counter: TokenCounter | None = None) -> AdaptiveEngine:
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
            digest = TurnDigest.model_validate(upgrade_recorded_digest(d))
            engine.digests[digest.turn] = digest
        if version == SNAPSHOT_VERSION:
            engine.checkpoint = SessionCheckpoint.model_validate(data["checkpoint"])
        else:  # version 1: its checkpoint took findings from the model's replies; fold the upgraded digests again
            engine.checkpoint = SessionCheckpoint()
            for t in sorted(engine.digests):
                engine.checkpoint.reconcile(engine.digests[t])
        for a in data["artifacts"]:
            engine.artifacts.put(Artifact.model_validate(a))
        engine.events.add(EventDoc.model_validate(d) for d in data["events"])
        return engine

    @classmethod
    def from_events(cls, events: Iterable[Any], config: Any = None, emit: Emit | None = None, *,
                    agent: str | None = None, counter: TokenCounter | None = None) -> AdaptiveEngine:
        """A new engine whose state is rebuilt from recorded trace events (``emit`` is set after)."""
        engine = cls(config, None, counter=counter)
        engine.load_events(events, agent=agent)
        engine.emit = emit
        return engine

    def load_events(self, events: Iterable[Any], *, agent: str | None = None) -> AdaptiveEngine:
        """Reset this engine and rebuild its state from recorded trace events (``state_change`` and
        ``context_action``; with ``agent``, only that agent's), keeping its ``emit``: nothing is
        emitted while restoring. Returns the engine."""
        self._load_events(events, agent=agent)
        return self

    def _load_events(self, events: Iterable[Any], *, agent: str | None = None) -> None:
        emit, self.emit = self.emit, None
        try:
            self._reset()
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
                    self._apply(str(etype), md, eturn)
                except Exception as exc:  # one bad record must not lose the rest of the session
                    where = getattr(ev, "event_id", None) or (ev.get("event_id") if isinstance(ev, Mapping) else None)
                    note = f"skipped {etype} event {where or '?'}: {type(exc).__name__}: {one_line(str(exc), 200)}"
                    self.load_warnings.append(note)
                    log.warning("arcana: adaptive load_events %s", note)
        finally:
            self.emit = emit


NOT_RECORDED = "(text not recorded)"
_OBJECT_TEXT = ("payload", "summary", "rationale", "retract_reason")
_DIGEST_LISTS = ("plans", "model_plans", "decisions", "constraints", "files", "findings", "claims", "errors",
                 "open_questions", "tools")


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


def _digest_without_nulls(data: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in data.items() if v is not None}
    for key in _DIGEST_LISTS:
        if key in out:
            out[key] = [x for x in out[key] if x is not None and not (isinstance(x, dict) and x.get("text") is None)]
    return out


def engine_or_none(
    config: Any, emit: Emit | None = None, *, counter: TokenCounter | None = None
) -> tuple[AdaptiveEngine | None, str | None]:
    """``(engine, None)`` in engine mode; ``(None, reason)`` for classic mode.

    ``context_engine=False`` gives ``(None, "context_engine is off ...")``; an engine that fails to
    initialise (bad knobs, no token encoding ...) is logged as a warning and gives ``(None, reason)``
    so the runtime can run classic mode and tell the user why.
    """
    enabled = (
        config.get("context_engine", True)
        if isinstance(config, Mapping)
        else getattr(config, "context_engine", True)
    )
    if enabled is False:
        return None, "classic mode: context_engine is off (full verbatim transcript, no adaptive context)"
    try:
        return AdaptiveEngine(config, emit, counter=counter), None
    except Exception as exc:
        reason = (
            f"classic mode: the adaptive context engine failed to initialise ({type(exc).__name__}: "
            f"{one_line(str(exc), 300)}); running with the full verbatim transcript instead"
        )
        log.warning("arcana: %s", reason)
        return None, reason


__all__ = [
    "ADAPTIVE_TOOL_NAMES",
    "SECTION_NAMES",
    "AdaptiveEngine",
    "engine_or_none",
    "failure",
    "object_number",
]
