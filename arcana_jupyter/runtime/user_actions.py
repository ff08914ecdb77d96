"""What a person does outside the model — pin, unpin, add to the adaptive context, add a standing
instruction, hydrate, retract, remember (a standing one too), forget — traced like the model's own
actions (``cognitive_primitive`` or ``context_action`` where it is one, then ``user_action``), and a
replay applying the recorded actions no cell re-runs at the point they happened.

:class:`~arcana_jupyter.runtime.session.ChatSession`'s methods of the same names are the way in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..exceptions import ConfigError
from ..schema.events import CognitivePrimitiveMetadata, UserActionMetadata

if TYPE_CHECKING:
    from .session import ChatSession


def record_user_action(session: ChatSession, action: str, via: str, *, target: str | None,
                       args: dict[str, Any], ok: bool,  # JSON edge: the action's arguments as given
                       message: str | None = None, replayed: bool = False) -> None:
    """Record that a person (not the model) did ``action`` from ``via`` (schema ``user_action``)."""
    record = UserActionMetadata.build(action=action, via=via, target=target, args=args, ok=ok)
    if message:  # only when there is one: the trace keeps the keys given
        record.message = message
    if replayed:
        record.replayed = True
    session.emit(record)


def unpin(session: ChatSession, pin_id: str, via: str,
          replayed: bool) -> dict[str, Any]:  # JSON edge: the structured result
    """Unpin ``pin_id`` as the user."""
    result = session.pins.unpin({"pin_id": pin_id}, session.turn)
    session.emit(CognitivePrimitiveMetadata.build(primitive="unpin", tool_call_id=None,
                                                  args={"pin_id": pin_id}, result=result, source="user"))
    ok = result.get("unpinned") is True
    record_user_action(session, "unpin", via, target=pin_id, args={"pin_id": pin_id}, ok=ok,
                       message=None if ok else str(result.get("reason") or "failed"), replayed=replayed)
    return result


def pin(session: ChatSession, content: str, label: str | None, until_turn: int | None, via: str,
        replayed: bool) -> dict[str, Any]:  # JSON edge: the structured result
    """Pin ``content`` as the user, through the same machinery as the model's ``pin`` tool."""
    args = {"content": content, "label": label, "until_turn": until_turn}
    result = session.pins.pin(args, max(session.turn, 1))
    session.emit(CognitivePrimitiveMetadata.build(primitive="pin", tool_call_id=None,
                                                  args=args, result=result, source="user"))
    ok = result.get("pinned") is True
    pin_id = result.get("pin_id")
    record_user_action(session, "pin", via, target=pin_id if isinstance(pin_id, str) else None, args=args, ok=ok,
                       message=None if ok else str(result.get("reason") or "failed"), replayed=replayed)
    return result


def adaptive_action(session: ChatSession, action: str, object_id: str, via: str,
                    replayed: bool) -> dict[str, Any]:  # JSON edge: the structured result
    """``hydrate`` or ``retract`` ``object_id`` through the adaptive capability (classic mode: refused)."""
    adaptive: Any = session.capability("adaptive")
    if adaptive is None:
        from ..adaptive.tools import CLASSIC_MODE

        result = dict(CLASSIC_MODE)
    else:
        result = adaptive.hydrate(object_id) if action == "hydrate" else adaptive.retract(object_id)
    ok = result.get("ok") is not False
    record_user_action(session, action, via, target=object_id, args={"id": object_id}, ok=ok,
                       message=None if ok else str(result.get("message") or result.get("error") or "failed"),
                       replayed=replayed)
    return result


CONTEXT_KINDS = ("constraint", "task", "decision", "note")
"""What a person adds to the adaptive context (``%arcana_context add KIND TEXT``)."""


def add_context(session: ChatSession, kind: str, text: str, detail: str | None,
                via: str) -> dict[str, Any]:  # JSON edge: the engine's answer
    """Add a working-memory object as the user, through the engine's own action (the one the model's
    ``add_constraint`` / ``create_task`` / ``decide`` / ``note`` tools take): ``detail`` is a
    constraint's or decision's rationale, a task's description, a note's title. In the prompt from
    the next call on, active until idle; recorded as ``context_action`` (``source: "user"``) and
    ``user_action`` (``context_add``)."""
    engine = session.engine
    if engine is None:
        why = f" ({session.engine_note})" if session.engine_note else ""
        raise ConfigError("classic mode has no adaptive context: start the session in engine mode "
                          f"(%arcana_chat without --classic){why}")
    if kind not in CONTEXT_KINDS:
        raise ConfigError(f"unknown kind {kind!r}: one of {', '.join(CONTEXT_KINDS)}")
    if not text.strip():
        raise ConfigError(f"the {kind}'s text is empty")
    turn = session.turn + 1  # the first turn whose prompt holds it (idle turns count from there)
    if kind == "constraint":
        result = engine.add_constraint(text, detail, turn=turn, source="user")
    elif kind == "decision":
        result = engine.decide(text, detail, turn=turn, source="user")
    elif kind == "task":
        result = engine.create_task(text, detail, turn=turn, source="user")
    else:
        result = engine.note(text, detail, turn=turn, source="user")
    ok = result.get("ok") is not False
    record_user_action(session, "context_add", via, target=str(result.get("id")) if ok else None,
                       args={"kind": kind, "text": text, "detail": detail}, ok=ok,
                       message=None if ok else str(result.get("message") or result.get("error") or "failed"))
    return dict(result)


def _engine(session: ChatSession) -> Any:
    engine = session.engine
    if engine is None:
        why = f" ({session.engine_note})" if session.engine_note else ""
        raise ConfigError("classic mode has no standing instructions: start the session in engine mode "
                          f"(%arcana_chat without --classic){why}")
    return engine


def add_standing(session: ChatSession, text: str, kind: str,
                 via: str) -> dict[str, Any]:  # JSON edge: the engine's answer
    """A standing instruction, preference or constraint the user adds by hand (``%arcana_standing add``, Python):
    in the ``standing`` section of every prompt from the next call on, until retracted; recorded as
    ``context_action`` (``standing``, ``source: "user"``) and ``user_action`` (``standing_add``)."""
    from ..adaptive.standing import STANDING_KINDS

    engine = _engine(session)
    if kind not in STANDING_KINDS:
        raise ConfigError(f"unknown kind {kind!r}: one of {', '.join(STANDING_KINDS)}")
    if not text.strip():
        raise ConfigError("the standing instruction's text is empty")
    result = engine.add_standing(text, kind, turn=session.turn + 1, origin="added", source="user")
    ok = result.get("ok") is not False
    record_user_action(session, "standing_add", via, target=str(result.get("id")) if ok else None,
                       args={"kind": kind, "text": text}, ok=ok,
                       message=None if ok else str(result.get("message") or result.get("error") or "failed"))
    return dict(result)


MEMORY_KIND_OF_STANDING = {"instruction": "preference", "preference": "preference", "constraint": "constraint"}
"""The memory kind a standing object is kept as (``remember``): how the user wants the work done is a
preference, a fact of the project a constraint."""


def remember_standing(session: ChatSession, object_id: str, scope: str, via: str,
                      replayed: bool = False) -> dict[str, Any]:  # JSON edge: the structured result
    """Keep the standing object ``object_id`` in long-term memory (the user confirmed the offer:
    ``%arcana_standing remember ID``, the inspector's button), as a ``preference`` (a ``constraint`` for a
    project constraint), through the one path ``%arcana_memory add`` takes: the next notebook's session
    starts with it in its memory digest. Recorded as ``memory_write``, ``context_action`` (``remember``)
    and ``user_action`` (``memory_add`` with ``args.standing``: a replay of the inspector's applies it again)."""
    from ..memory.manual import add_memory

    engine = _engine(session)
    obj = engine.get(object_id)
    if obj is None or obj.standing is None:
        live = ", ".join(o.id for o in engine.standing()) or "none"
        raise ConfigError(f"no standing instruction {object_id!r} (standing: {live})")
    cap = _memory_capability(session)
    kind = MEMORY_KIND_OF_STANDING[obj.standing]
    entry, created = add_memory(cap.memory.store, kind, obj.payload, cap.memory.scope, level=scope)
    cap.refresh_digest()
    engine.mark_remembered(obj.id, entry.id, turn=max(session.turn, 1), source="user")
    record_user_action(session, "memory_add", via, target=entry.id,
                       args={"kind": kind, "content": obj.payload, "scope": scope, "standing": obj.id},
                       ok=True, message=None if created else "already known: reinforced", replayed=replayed)
    return {"ok": True, "id": entry.id, "kind": entry.kind, "scope": entry.level, "created": created,
            "content": entry.content, "standing": obj.id}


def _memory_capability(session: ChatSession) -> Any:
    found = session.capability("memory")
    if found is None:
        raise ConfigError("long-term memory is off in this session (start it with memory=True, "
                          "%arcana_chat --memory)")
    return found


def remember(session: ChatSession, kind: str, content: str, scope: str,
             via: str) -> dict[str, Any]:  # JSON edge: the structured result
    """Store a memory as the user: the same code path as ``arcana memory add``."""
    from ..memory.manual import add_memory

    cap = _memory_capability(session)
    entry, created = add_memory(cap.memory.store, kind, content, cap.memory.scope, level=scope)
    cap.refresh_digest()
    record_user_action(session, "memory_add", via, target=entry.id,
                       args={"kind": kind, "content": content, "scope": scope},
                       ok=True, message=None if created else "already known: reinforced")
    return {"ok": True, "id": entry.id, "kind": entry.kind, "scope": entry.level, "created": created,
            "content": entry.content}


def forget_memory(session: ChatSession, entry_id: str, via: str) -> dict[str, Any]:  # JSON edge: the result
    """Forget (tombstone) a memory as the user."""
    from ..memory.manual import forget_memory as forget

    cap = _memory_capability(session)
    entry, already = forget(cap.memory.store, entry_id)
    cap.refresh_digest()
    record_user_action(session, "memory_forget", via, target=entry.id, args={"id": entry_id}, ok=True,
                       message="already forgotten" if already else None)
    return {"ok": True, "id": entry.id, "kind": entry.kind, "already_forgotten": already,
            "content": entry.content}


class RecordedActions:
    """A replay's (``report --verify``) recorded user actions no cell re-runs (the inspector's), by the
    point they happened — ``("turn", T)``: before turn T started, ``("build", T, step)``: before that
    call was built; loaded from the replay provider at the first point asked. At each turn's start
    it also tells the replay provider which turn to answer (``ReplayProvider.begin_turn``)."""

    def __init__(self) -> None:
        self._pending: dict[tuple[Any, ...], list[UserActionMetadata]] | None = None

    def apply(self, session: ChatSession, point: tuple[Any, ...]) -> None:
        """Apply the actions recorded just before ``point``, the way the person did; at a turn's
        start the replay provider goes to that turn's recorded calls."""
        from ..providers.recorded import ReplayProvider

        replay = session.provider if isinstance(session.provider, ReplayProvider) else None
        if self._pending is None:
            self._pending = replay.recorded_user_actions() if replay is not None else {}
        if replay is not None and point[0] == "turn":
            replay.begin_turn(int(point[1]))
        if replay is not None and point[0] == "build" and replay.cancelled_before_build(int(point[1]), int(point[2])):
            import asyncio

            raise asyncio.CancelledError(f"replayed: the user interrupted turn {point[1]} before this call was built")
        for action in self._pending.pop(point, []):
            target, via = action.target or "", action.via or "inspector"
            args = action.args or {}
            if action.action == "unpin":
                session.unpin(target, via=via, replayed=True)
            elif action.action == "pin":
                until = args.get("until_turn")
                session.pin(str(args.get("content") or ""),
                            args.get("label") if isinstance(args.get("label"), str) else None,
                            until if isinstance(until, int) else None, via=via, replayed=True)
            elif action.action in ("hydrate", "retract"):
                adaptive_action(session, action.action, target, via, True)
            elif action.action == "memory_add" and isinstance(args.get("standing"), str):
                scope = args.get("scope")
                remember_standing(session, str(args["standing"]), scope if isinstance(scope, str) else "project",
                                  via, True)
