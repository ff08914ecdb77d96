"""AdaptiveEngine: tiered working memory, session checkpoint, artifacts — pure, no runtime inside.

Per turn the runtime calls :meth:`AdaptiveEngine.begin_turn` (promotion by the user's input),
:meth:`AdaptiveEngine.sections` (what goes into the prompt), the tool handlers of
:mod:`.tools` while the model works, :meth:`AdaptiveEngine.ingest_tool_output` for every tool
output, and :meth:`AdaptiveEngine.end_turn` with the turn's messages (the turn's summary, the
checkpoint, demotion).

This module is the façade: the class people use, made of one part per idea —

- :mod:`.ledger` — the state as a fold of its events: every change is a ``state_change`` or
  ``context_action`` event, built as its typed model, applied, then emitted; ``load_events``
  applies the same events to a fresh engine (resume, replay; :meth:`snapshot` compares equal).
- :mod:`.actions` — the ten actions of the model's tools and the widgets.
- :mod:`.rendering` — the prompt sections (the standing instructions, tiers, and the cover for turns
  that did not fit).
- :mod:`.standing` — the rules that recognise standing instructions, preferences and constraints in
  the user's messages (and revisions and revocations of them).

and the turn itself (below): standing instructions and promotion by the input, the end-of-turn
summary and demotion, large tool outputs stored as artifacts.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import MessageLike, as_messages
from ..schema.events import ContextActionMetadata
from ..tokens import TokenCounter
from .actions import ADAPTIVE_TOOL_NAMES, EngineActions
from .ledger import Emit
from .promotion import Promotion, demotion_target, find_promotions
from .rendering import SECTION_NAMES, PromptRendering
from .search import docs_for_turn
from .standing import (
    Reader,
    acknowledged,
    analyse,
    change_in_context,
    live_changes,
    match,
    nearest,
    pointed_value,
    same,
    says_what_changed,
    strong_change,
)
from .state import one_line
from .turn_summary import summarise_turn

log = logging.getLogger(__name__)


class AdaptiveEngine(EngineActions, PromptRendering):
    """Working memory of one chat session (see the module docstring)."""

    standing_reader: Reader | None = None
    """The learned reader of the user's sentences the rules leave as plain statements (a session sets it
    when its relevance uses the embedding model the reader was trained for: :mod:`.standing_model`)."""

    def begin_turn(self, turn: int, user_input: str) -> list[Promotion]:
        """Keep the standing instructions the input states (:meth:`recognise_standing`), then promote
        peripheral objects the input mentions (keyword, then BM25); emit each."""
        self._input = user_input or ""
        self._input_turn = turn
        self.turn = max(self.turn, turn)
        if self._input.strip() and self.config.standing_instructions:
            self.recognise_standing(turn, self._input)
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

    def recognise_standing(self, turn: int, text: str) -> list[dict[str, Any]]:
        """The standing instructions, preferences and constraints the user's message ``text`` states
        (:func:`.standing.recognise`), kept as standing objects (``origin: said``, ``source: user``);
        a revision replaces the live one it is about (:func:`.standing.match`), a revocation retracts
        it, a new one on the same choice as a live one (a topic class and a word shared) replaces it,
        and one said again is answered with the live one. A sentence the rules leave alone may still
        change a live item it is about (:func:`.standing.change_in_context`: "Change the seed to 1234
        please."). Returns the engine's answer to each (recorded as ``context_action`` events)."""
        out: list[dict[str, Any]] = []
        verdicts = analyse(text, self.standing_reader)
        # the findings left once a message's repeats are dropped (live_changes keeps the first wording)
        kept = set(map(id, live_changes([v.finding for v in verdicts if v.finding is not None])))
        for verdict in verdicts:
            found = verdict.finding
            live = self.standing()
            pairs = [(o.id, o.payload) for o in live]
            if found is None:
                # a change the rules do not keep on its own ("Change the seed to 1234 please."), read with
                # what holds: it changes the live item it is about
                said = change_in_context(verdict.sentence, pairs, verdict)
                if said is not None:
                    out.extend(self._apply_change(turn, verdict.sentence, said[1], said[0], rule="revision"))
                continue
            if id(found) not in kept:
                continue
            # a change is about what the rules found when it matches one of those; what the learned reader
            # kept (less sure) only when it matches none of them
            ruled = [(i, t) for i, t in pairs if i not in self.learned]
            if found.change == "new":
                # said again: answered with the live one; on the same choice as a live one: replaces it; one
                # that says it changes something ("use uv instead"): replaces the live one it is about
                # (what the learned reader kept adds and never replaces, unless it says so)
                conflict = None
                if not any(same(found.text, t) for _, t in pairs):
                    if strong_change(found.text):
                        conflict = match(found.text, ruled, loose=True) or match(found.text, pairs, loose=True)
                    elif found.rule != "learned":
                        conflict = (match(found.text, ruled, min_overlap=3, same_class=True)
                                    or match(found.text, pairs, min_overlap=3, same_class=True))
                out.append(self.add_standing(found.text, found.kind, turn=turn, origin="said", rule=found.rule,
                                             revises=conflict))
                continue
            # a change said as one (a cue word, a new value) may name its item by one shared topic, when no
            # other live item shares any
            loose = found.change == "revoke" or (found.change == "revise" and says_what_changed(found.text))
            target = match(found.text, ruled, loose=loose) or match(found.text, pairs, loose=loose)
            if target is None and found.change == "revise":
                target = pointed_value(found.text, pairs)  # "make it 120": the latest item with a number
            if target is not None:
                out.extend(self._apply_change(turn, found.text, found.change, target, rule=found.rule,
                                              kind=found.kind))
            elif found.rule not in ("revision", "revocation") or found.standalone:  # it stands on its own: new
                out.append(self.add_standing(found.text, found.kind, turn=turn, origin="said", rule=found.rule))
        return out

    def _apply_change(self, turn: int, text: str, change: str, target: str, *, rule: str,
                      kind: str | None = None) -> list[dict[str, Any]]:
        """Revoke the live item ``target``, or replace it with ``text`` (its kind kept for a revision)."""
        old = self.get(target)
        if old is None:
            return []
        if change == "revoke":
            return [self.retract(old.id, f"revoked at turn {turn}: {one_line(text, 100)}", turn=turn,
                                 source="user")]
        new_kind = (old.standing or kind) if rule == "revision" or kind is None else kind
        return [self.add_standing(text, new_kind or "constraint", turn=turn, origin="said", rule=rule,
                                  revises=old.id)]

    def end_turn(self, turn: int, transcript_of_turn: Sequence[MessageLike]) -> list[Promotion]:
        """Keep what the assistant's reply took up as lasting (:meth:`acknowledged_standing`), summarise the
        turn and reconcile the checkpoint with it, then demote idle objects; returns demotions."""
        if self.config.standing_instructions:
            self.acknowledged_standing(turn, transcript_of_turn)
        summary = summarise_turn(turn, transcript_of_turn, ADAPTIVE_TOOL_NAMES,
                                 standing=self.config.standing_instructions)
        docs = docs_for_turn(turn, transcript_of_turn, summary.text(), ADAPTIVE_TOOL_NAMES)
        self._record(ContextActionMetadata(
            action="checkpoint",
            object_id=None,
            kind="checkpoint",
            args={"turn": turn},
            result={"ok": True, "turn": turn},
            source="engine",
            turn=turn,
            objects=[],
            digest=summary.model_dump(mode="json"),
            events=[d.model_dump(mode="json") for d in docs],
        ))
        out: list[Promotion] = []
        for obj in self.objects():
            target = demotion_target(
                obj, turn, self.config.idle_soft_after_turns, self.config.idle_hard_after_turns
            )
            if target is not None:
                out.append(self._state_change(obj, target, "idle", turn))
        return out

    def acknowledged_standing(self, turn: int, transcript_of_turn: Sequence[MessageLike]) -> list[dict[str, Any]]:
        """When nothing standing changed this turn (no rule, tool or edit), the sentence of the user's input that
        the assistant's final reply takes up as lasting (:func:`.standing.acknowledged`: "Understood; I'll keep to
        that from now on."), kept as a standing object (``rule: acknowledged``); an acknowledgement that says a
        change ("OK, updated.") replaces the live item the sentence is about, when one is. Recorded as events,
        like every finding: a resumed run or ``report --verify`` never reads the reply again."""
        if turn != self._input_turn or not self._input.strip():
            return []
        if any(o.standing is not None and turn in (o.created_turn, o.retracted_turn) for o in self.audit_objects()):
            return []
        reply = next((m.content for m in reversed(as_messages(transcript_of_turn))
                      if m.role == "assistant" and m.content and not m.tool_calls), "")
        found = acknowledged(self._input, reply, self.standing_reader)
        if found is None:
            return []
        pairs = [(o.id, o.payload) for o in self.standing()]
        target = None
        if found.change != "new":  # the reply says it changes something: what it is about, else the nearest
            target = match(found.text, pairs, loose=True) or nearest(found.text, pairs, self.standing_reader)
        if target is not None:
            # a revision keeps the kind of what it revises
            return self._apply_change(turn, found.text, found.change, target, rule="acknowledged")
        if found.change == "revoke":
            return []
        return [self.add_standing(found.text, found.kind, turn=turn, origin="said", rule="acknowledged")]

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
        self._record(ContextActionMetadata(
            action="store_artifact",
            object_id=art.id,
            kind="artifact",
            args={"tool": tool_name, "tool_call_id": tool_call_id},
            result={"ok": True, "id": art.id, "kind": art.kind, "chars": art.chars, "tokens": art.tokens},
            source="engine",
            turn=turn,
            objects=[],
            artifact=art.model_dump(mode="json"),
        ))
        return art.card

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


__all__ = ["ADAPTIVE_TOOL_NAMES", "SECTION_NAMES", "AdaptiveEngine", "engine_or_none"]
