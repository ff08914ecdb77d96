"""The engine's actions: what the model's tools and the widgets do to working memory.

Ten actions, each a method with typed arguments that never raises: create_task, update_task,
decide, add_constraint, note, hydrate, retract (the ``retract_task`` tool), focus,
search_turn_events and retrieve_artifact; and :meth:`EngineActions.add_standing`, a standing
instruction, preference or constraint (recognised in the user's message, added by the user, or the
model's ``add_constraint``: every constraint is standing). Each builds its ``context_action`` event
(:class:`~arcana_jupyter.schema.events.ContextActionMetadata`, plus a ``state_change`` when a tier
changes) and records it through :class:`~.ledger.EngineState`, a refused call included
(``{"ok": false, "error", "message", "hint"}``, see :func:`failure`). The tools' declarations and
argument checks are in :mod:`.tools`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..schema.events import ContextActionMetadata, StateChangeMetadata
from .ledger import EngineState
from .search import snippet
from .standing import STANDING_KINDS, same
from .state import Kind, Origin, StateObject, TaskStatus, one_line

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


class EngineActions(EngineState):
    """The ten actions on the engine's state (see the module docstring)."""

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
    ) -> dict[str, Any]:
        """Record ``action`` (its arguments, its result, the objects it changed) and return ``result``."""
        self._record(ContextActionMetadata(
            action=action,
            object_id=obj.id if obj is not None else object_id,
            kind=obj.kind if obj is not None else None,
            args=dict(args),
            result=result,
            source=source,
            turn=turn,
            objects=[o.record() for o in changed],
        ))
        return result

    def reject(self, action: str, turn: int | None, args: Any, result: dict[str, Any], *,
               source: str = "llm") -> dict[str, Any]:
        """Record a refused action (bad arguments ...) as a ``context_action`` and return ``result``."""
        recorded = dict(args) if isinstance(args, Mapping) else {"raw": repr(args)}
        return self._action(ACTION_OF.get(action, action), self._turn(turn), recorded, result, source=source)


    def _new_id(self) -> str:
        return f"s_{self._next_object}"

    def _create(
        self, action: str, turn: int, args: Mapping[str, Any], *, kind: Kind, payload: str, summary: str,
        source: str, status: TaskStatus | None = None, rationale: str | None = None, **standing: Any,
    ) -> dict[str, Any]:
        obj = StateObject(
            id=self._new_id(), kind=kind, payload=payload, summary=one_line(summary, 160), tier="active",
            created_turn=turn, last_touched_turn=turn, status=status, rationale=rationale, **standing,
        )
        result = {"ok": True, "id": obj.id, "kind": kind, "tier": "active", "summary": obj.summary}
        if obj.standing is not None:
            result["standing"] = obj.standing
        self._action(action, turn, args, result, source=source, obj=obj, changed=[obj])
        self._state_change_created(obj, turn)
        return result

    def _duplicate(self, action: str, turn: int, args: Mapping[str, Any], text: str, source: str
                   ) -> dict[str, Any] | None:
        """A live standing object that already says ``text``: the call is answered with it (recorded),
        nothing is added twice."""
        found = next((o for o in self.standing() if same(o.payload, text)), None)
        if found is None:
            return None
        result = {"ok": True, "id": found.id, "kind": found.kind, "standing": found.standing, "already": True,
                  "note": f"{found.id} (turn {found.created_turn}) already says this"}
        return self._action(action, turn, args, result, source=source, object_id=found.id)

    def add_standing(self, text: str, kind: str = "constraint", *, turn: int | None = None, origin: Origin = "added",
                     source: str = "user", rule: str | None = None, revises: str | None = None,
                     rationale: str | None = None) -> dict[str, Any]:
        """A standing instruction, preference or constraint (``kind``), in ``text``'s words: in the
        ``standing`` section of every prompt, never demoted, until retracted. ``revises``: the live
        standing object it replaces, retracted with a reason naming this one. A text a live one
        already says is answered with that one (``already: true``)."""
        t = self._turn(turn)
        args: dict[str, Any] = {"text": text, "kind": kind, "origin": origin}
        if rule is not None:
            args["rule"] = rule
        if revises is not None:
            args["revises"] = revises
        if rationale is not None:
            args["rationale"] = rationale
        if not isinstance(text, str) or not text.strip():
            return self._action("standing", t, args, failure(
                "invalid_arguments", "the standing instruction's text is empty", "say what should hold"),
                source=source)
        if kind not in STANDING_KINDS:
            return self._action("standing", t, args, failure(
                "invalid_arguments", f"unknown kind {kind!r}", f"one of {', '.join(STANDING_KINDS)}"), source=source)
        old = self.get(revises) if revises is not None else None
        if old is None:
            dup = self._duplicate("standing", t, args, text, source)
            if dup is not None:
                return dup
        result = self._create("standing", t, args, kind="constraint", payload=text.strip(), summary=text,
                              source=source, rationale=rationale, standing=kind, origin=origin,
                              revises=old.id if old is not None else None)
        if old is not None:
            done = self.retract(old.id, f"revised at turn {t} by {result['id']}: {one_line(text, 100)}", turn=t,
                                source=source)
            result["revised"] = old.id if done.get("ok") else None
        return result

    def _state_change_created(self, obj: StateObject, turn: int) -> None:
        self._record(StateChangeMetadata(object_id=obj.id, kind=obj.kind, from_tier=None, to_tier="active",
                                         cause="created", turn=turn))

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

    def mark_remembered(self, object_id: str, entry_id: str, *, turn: int | None = None,
                        source: str = "user") -> dict[str, Any]:
        """Note that the standing object ``object_id`` was kept in long-term memory as ``entry_id``
        (the memory's own event records the entry; this one the link, for the inspector and a replay)."""
        t = self._turn(turn)
        args = {"id": object_id, "memory_id": entry_id}
        found = self._lookup("remember", t, args, object_id, source)
        if isinstance(found, dict):
            return found
        if found.standing is None:
            return self._action("remember", t, args, failure(
                "wrong_kind", f"{found.id} is not a standing instruction", "%arcana_standing list shows them"),
                source=source, object_id=found.id)
        new = found.model_copy(update={"remembered": entry_id})
        result = {"ok": True, "id": new.id, "memory_id": entry_id}
        return self._action("remember", t, args, result, source=source, obj=new, changed=[new])

    def add_constraint(self, constraint: str, rationale: str | None = None, *, turn: int | None = None,
                       source: str = "llm") -> dict[str, Any]:
        """A constraint (the model's tool, or the user's ``%arcana_context add constraint``): a standing
        one (``origin`` ``model`` or ``added``), answered with the live one that already says it, if any."""
        t = self._turn(turn)
        args = {"constraint": constraint, "rationale": rationale}
        if not self.config.standing_instructions:  # a run from before standing instructions: as it was
            return self._create("add_constraint", t, args, kind="constraint", payload=constraint, summary=constraint,
                                source=source, rationale=rationale)
        if isinstance(constraint, str) and constraint.strip():
            dup = self._duplicate("add_constraint", t, args, constraint, source)
            if dup is not None:
                return dup
        return self._create("add_constraint", t, args, kind="constraint", payload=constraint, summary=constraint,
                            source=source, rationale=rationale, standing="constraint",
                            origin="model" if source == "llm" else "added")

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



__all__ = ["ACTION_OF", "ADAPTIVE_TOOL_NAMES", "EngineActions", "failure"]
