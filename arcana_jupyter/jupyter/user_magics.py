"""What the person does from the notebook, besides talking: ``%arcana_pin``, ``%arcana_unpin``,
``%arcana_context [list | add KIND TEXT | retract ID | undo | hydrate ID]``,
``%arcana_standing [list | add TEXT | retract ID | remember ID]`` and
``%arcana_memory [list | add KIND TEXT | forget ID | search QUERY]``.

Pins go through the session's one pin machinery (``ChatSession.pin`` / ``unpin``: the ``pin``
primitive's :class:`~arcana_jupyter.primitives.pin.PinState`, the same calls the inspector's
buttons make), memories through the one code path ``arcana memory add|forget`` uses
(:mod:`arcana_jupyter.memory.manual`), working-memory objects through the engine's own actions
(``ChatSession.add_context`` / ``retract`` / ``hydrate``, the calls the inspector's buttons make).
Each is recorded in the session's trace as a
``user_action`` with ``via: "magic"`` (a re-execution re-runs the cell, so ``report --verify``
does not apply it a second time), next to the effect's own event (``cognitive_primitive``,
``memory_write``, ``context_action``).

``%arcana_context`` (not ``%arcana_note``: it acts on the inspector's "Adaptive context" — the
session's working memory of constraints, tasks, decisions and notes — as ``%arcana_memory`` acts on
long-term memory, with the same ``add`` / ``list`` verbs, and it hydrates and retracts objects the
model made too, which are not notes) needs a session in engine mode.

``%arcana_standing`` acts on the session's standing instructions (the ``standing`` section: what the
user said once and expects to hold, recognised in their messages, added by hand, or the model's
``add_constraint``): ``list`` (id, kind, the turn it was given, who, the text, how the last prompt showed it,
whether it is in long-term memory), ``add TEXT [--kind instruction|preference|constraint]``, ``retract ID``,
``remember ID [--scope global]`` (keep it in long-term memory: the next notebook starts with it; needs
``--memory``).

``%arcana_memory`` works without a session: it opens the store a session of this notebook would
(the ``memory_url`` / ``memory_path`` settings, else ``$ARCANA_MEMORY_URL`` / ``$ARCANA_MEMORY_PATH``,
else ``~/.arcana/memory.sqlite3``; inside ``report --verify`` the sandbox copy) with the notebook's
folder as the project. With a session that has memory on, it uses that session's store and the
next call's digest holds what was added (and leaves out what was forgotten).

Bad input is one ``UsageError`` line: an unknown kind, an empty text, an unknown id, a flag that
does not exist.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_magic, magics_class
from IPython.display import display

from .. import render
from ..cli import printable
from ..exceptions import ArcanaError
from ..render.fragments import esc, fmt_score, pill, table
from .memory_view import KIND_HINT, STORE_HINT

_TOKEN = re.compile(r"""(?:"[^"]*"|'[^']*')(?=\s|$)|\S+""")
MEMORY_ACTIONS = ("list", "add", "forget", "search")
CONTEXT_ACTIONS = ("list", "add", "retract", "undo", "hydrate")
STANDING_ACTIONS = ("list", "add", "retract", "remember")
STANDING_USAGE = ("%arcana_standing list, %arcana_standing add TEXT [--kind instruction|preference|constraint], "
                  "%arcana_standing retract ID, %arcana_standing remember ID [--scope project|global]")
CONTEXT_USAGE = ("%arcana_context add constraint|task|decision|note TEXT [--why WHY], %arcana_context list, "
                 "%arcana_context retract ID, %arcana_context undo, %arcana_context hydrate ID")


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "\"'":
        return token[1:-1]
    return token


def split_line(magic: str, line: str, flags: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """``(words, options)`` of a magic's line: ``flags`` maps each flag (``--label``, ``-s``) to its
    option name; every flag takes one value (quoted for several words). The words keep the order
    they were typed in; an unknown ``--flag`` or a flag without a value is a ``UsageError``."""
    words: list[str] = []
    options: dict[str, str] = {}
    tokens = _TOKEN.findall(line or "")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name = token.split("=", 1)[0]
        if name in flags:
            if "=" in token:
                value = token.split("=", 1)[1]
            elif i + 1 < len(tokens):
                i += 1
                value = tokens[i]
            else:
                raise UsageError(f"%{magic}: {name} needs a value (%{magic}? shows the usage)")
            options[flags[name]] = _unquote(value)
        elif token.startswith("--") and len(token) > 2:
            known = ", ".join(sorted({f for f in flags if f.startswith("--")}))
            raise UsageError(f"%{magic}: unknown option {token} (options: {known})")
        else:
            words.append(token)
        i += 1
    return words, options


def _text(words: list[str]) -> str:
    if len(words) == 1:
        return _unquote(words[0]).strip()
    return " ".join(words).strip()


def _notice(message: str) -> None:
    display({"text/html": render.notice_html(message), "text/plain": printable(message)}, raw=True)


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 400 else text[:400] + "…"


class UserActions:
    """The handlers behind the magics; ``arcana`` is the notebook's :class:`~.magics.ArcanaMagics`."""

    def __init__(self, arcana: Any) -> None:
        self.arcana = arcana

    # ---- pins -----------------------------------------------------------------------------------
    def _engine_chat(self, magic: str, session: str | None, what: str) -> Any:
        """The session's chat, which must run in engine mode (``what``: what classic mode lacks)."""
        chat = self.arcana.entry(session).chat
        if chat.engine is None:
            raise UsageError(f"%{magic}: this session runs in classic mode (no {what}); start one in engine mode, "
                             "e.g. %arcana_chat --new without --classic")
        return chat

    def pin(self, line: str) -> dict[str, Any]:
        words, opts = split_line("arcana_pin", line, {"--label": "label", "-l": "label",
                                                      "--until-turn": "until_turn", "--session": "session",
                                                      "-s": "session"})
        text = _text(words)
        if not text:
            raise UsageError("%arcana_pin: give the text to pin, e.g. %arcana_pin The deadline is 30 June "
                             "--label deadline")
        until: int | None = None
        if "until_turn" in opts:
            try:
                until = int(opts["until_turn"])
            except ValueError:
                raise UsageError(
                    f"%arcana_pin: --until-turn must be a turn number, got {opts['until_turn']!r}") from None
        chat = self.arcana.entry(opts.get("session")).chat
        result = chat.pin(text, opts.get("label"), until, via="magic")
        if not result.get("pinned"):
            reason = str(result.get("reason") or "failed")
            detail = "; ".join(result.get("problems") or []) or str(result.get("suggestion") or "")
            raise UsageError(f"%arcana_pin: not pinned ({reason.replace('_', ' ')}{': ' + detail if detail else ''})")
        pin_id = str(result["pin_id"])
        pin = chat.pins.pins.get(pin_id)
        tokens = f", {pin.tokens} tokens" if pin is not None and pin.tokens is not None else ""
        label = f" “{result.get('label')}”" if result.get("label") else ""
        until_note = f" until turn {until}" if until is not None else ""
        verb = "already pinned as" if result.get("already_pinned") else "pinned"
        _notice(f"{verb} {pin_id}{label}{tokens}: in the prompt from the next call{until_note}, never compressed; "
                f"%arcana_unpin {pin_id} removes it")
        return result

    def unpin(self, line: str) -> dict[str, Any]:
        words, opts = split_line("arcana_unpin", line, {"--session": "session", "-s": "session"})
        if len(words) != 1:
            raise UsageError("%arcana_unpin: give one pin id, e.g. %arcana_unpin p_1a2b3c4d (%arcana_pins lists them)")
        pin_id = _unquote(words[0])
        chat = self.arcana.entry(opts.get("session")).chat
        active = [p.pin_id for p in chat.pins.active(max(chat.turn, 1))]
        if pin_id not in active:
            known = ", ".join(active) or "none"
            raise UsageError(f"%arcana_unpin: no active pin {pin_id!r} (active pins: {known})")
        result = chat.unpin(pin_id, via="magic")
        _notice(f"unpinned {pin_id}: its text may be compressed or dropped from the next call on")
        return result

    # ---- adaptive context (working memory) ---------------------------------------------------------
    def context(self, line: str) -> Any:
        line, why = _split_why(line or "")
        words, opts = split_line("arcana_context", line, {"--session": "session", "-s": "session"})
        if why is not None:
            opts["why"] = why
        action = words[0] if words else "list"
        if action not in CONTEXT_ACTIONS:
            raise UsageError(f"%arcana_context: unknown action {action!r}; {CONTEXT_USAGE}")
        if "why" in opts and action != "add":
            raise UsageError("%arcana_context: --why goes with add (%arcana_context add constraint TEXT --why WHY)")
        chat = self._engine_chat("arcana_context", opts.get("session"), "adaptive context")
        rest = words[1:]
        if action == "list":
            if rest:
                raise UsageError(f"%arcana_context list takes no words, got {' '.join(rest)!r}")
            return self._context_list(chat)
        if action == "add":
            return self._context_add(chat, rest, opts.get("why"))
        if action == "undo":
            if rest:
                raise UsageError("%arcana_context undo takes no words: it retracts the last object you added")
            added = [i for i in _added_by_you(chat) if (o := chat.engine.get(i)) is not None and not o.retracted]
            if not added:
                raise UsageError("%arcana_context undo: nothing of yours to undo (%arcana_context list shows the "
                                 "objects; retract ID takes out one the model made)")
            return self._context_act(chat, "retract", added[-1])
        if len(rest) != 1:
            raise UsageError(f"%arcana_context {action}: give one object id, e.g. %arcana_context {action} s_3 "
                             "(%arcana_context list shows them)")
        return self._context_act(chat, action, _unquote(rest[0]))

    def _context_add(self, chat: Any, rest: list[str], why: str | None) -> dict[str, Any]:
        from ..runtime.user_actions import CONTEXT_KINDS

        kinds = "|".join(CONTEXT_KINDS)
        if not rest or rest[0] not in CONTEXT_KINDS:
            got = f" (got {rest[0]!r})" if rest else ""
            raise UsageError(f"%arcana_context add: give a kind ({kinds}) and the text{got}, e.g. "
                             "%arcana_context add constraint Answer in English --why the report is in English")
        kind, text = rest[0], _text(rest[1:])
        if not text:
            raise UsageError(f"%arcana_context add {kind}: the text is missing, e.g. %arcana_context add {kind} "
                             "Keep the total under 600 EUR")
        try:
            result = chat.add_context(kind, text, why, via="magic")
        except ArcanaError as exc:
            raise UsageError(f"%arcana_context add: {_short(exc)}") from None
        if result.get("ok") is False:
            raise UsageError(f"%arcana_context add: {result.get('message') or result.get('error')}")
        _notice(f"added {result['id']} ({kind}, active): in the prompt's working memory from the next call; "
                f"%arcana_context retract {result['id']} (or undo) takes it out")
        return result

    def _context_act(self, chat: Any, action: str, object_id: str) -> dict[str, Any]:
        found = next((o for o in chat.engine.audit_objects() if o.id == object_id), None)
        if found is None:
            live = ", ".join(o.id for o in chat.engine.objects()) or "none"
            raise UsageError(f"%arcana_context {action}: no object {object_id!r} (objects: {live})")
        if found.retracted:
            raise UsageError(f"%arcana_context {action}: {object_id} was already retracted "
                             f"at turn {found.retracted_turn}")
        result = chat.retract(object_id, via="magic") if action == "retract" else chat.hydrate(object_id, via="magic")
        if result.get("ok") is False:
            raise UsageError(f"%arcana_context {action}: {result.get('message') or result.get('error')}")
        if action == "retract":
            _notice(f"retracted {object_id} ({found.kind}): out of the prompt from the next call; the trace keeps it "
                    "for audit")
        else:
            _notice(f"hydrated {object_id} ({found.kind}): back in the active tier, in full, from the next call "
                    f"(it was {result.get('from_tier')})")
        return result

    def _context_list(self, chat: Any) -> list[dict[str, Any]]:
        yours = set(_added_by_you(chat))
        objects = [o for o in chat.engine.audit_objects() if not o.retracted]
        rows = [{"id": o.id, "kind": o.kind, "tier": o.tier, "turn": o.created_turn,
                 "by": "you" if o.id in yours else "model", "summary": o.summary} for o in objects]
        cells = [[f"<code>{esc(r['id'])}</code>", pill(r["kind"], "unknown"), pill(r["tier"], "unknown"),
                  (esc(r["turn"]), "num"), esc(r["by"]), esc(r["summary"])] for r in rows]
        body = (table(["id", "kind", "tier", "from turn", "by", "text"], cells) if cells
                else '<div class="arcana-empty">No working-memory objects yet: %arcana_context add constraint TEXT '
                     'adds one.</div>')
        html = (render.style_block() + '<div class="arcana"><h4 class="arcana-h">Adaptive context (working memory) of '
                f'session {esc(chat.agent)}</h4>{body}</div>')
        plain = ("\n".join(f"{r['id']} [{r['kind']}, {r['tier']}, from turn {r['turn']}, by {r['by']}] {r['summary']}"
                            for r in rows) or "no working-memory objects yet")
        display({"text/html": html, "text/plain": plain}, raw=True)
        return rows

    # ---- standing instructions ---------------------------------------------------------------------
    def standing(self, line: str) -> Any:
        words, opts = split_line("arcana_standing", line, {"--kind": "kind", "--scope": "scope",
                                                           "--session": "session", "-s": "session"})
        action = words[0] if words else "list"
        if action not in STANDING_ACTIONS:
            raise UsageError(f"%arcana_standing: unknown action {action!r}; {STANDING_USAGE}")
        if "kind" in opts and action != "add":
            raise UsageError("%arcana_standing: --kind goes with add (%arcana_standing add TEXT --kind preference)")
        if "scope" in opts and action != "remember":
            raise UsageError("%arcana_standing: --scope goes with remember "
                             "(%arcana_standing remember ID --scope global)")
        chat = self._engine_chat("arcana_standing", opts.get("session"), "standing instructions")
        rest = words[1:]
        if action == "list":
            if rest:
                raise UsageError(f"%arcana_standing list takes no words, got {' '.join(rest)!r}")
            return self._standing_list(chat)
        if action == "add":
            text = _text(rest)
            if not text:
                raise UsageError("%arcana_standing add: the text is missing, e.g. %arcana_standing add Always answer "
                                 "in English")
            kind = opts.get("kind", "instruction")
            try:
                result = chat.add_standing(text, kind, via="magic")
            except ArcanaError as exc:
                raise UsageError(f"%arcana_standing add: {_short(exc)}") from None
            if result.get("ok") is False:
                raise UsageError(f"%arcana_standing add: {result.get('message') or result.get('error')}")
            if result.get("already"):
                _notice(f"{result['id']} already says this: nothing added")
            else:
                _notice(f"added {result['id']} ({kind}): in every prompt from the next call on, in these words; "
                        f"%arcana_standing retract {result['id']} takes it out")
            return result
        if len(rest) != 1:
            raise UsageError(f"%arcana_standing {action}: give one id, e.g. %arcana_standing {action} s_3 "
                             "(%arcana_standing list shows them)")
        object_id = _unquote(rest[0])
        found = next((o for o in chat.engine.audit_objects() if o.id == object_id and o.standing is not None), None)
        if found is None:
            live = ", ".join(o.id for o in chat.standing()) or "none"
            raise UsageError(f"%arcana_standing {action}: no standing instruction {object_id!r} (standing: {live})")
        if found.retracted:
            raise UsageError(f"%arcana_standing {action}: {object_id} was retracted at turn {found.retracted_turn}"
                             + (f" ({found.retract_reason})" if found.retract_reason else ""))
        if action == "retract":
            result = chat.retract(object_id, via="magic")
            if result.get("ok") is False:
                raise UsageError(f"%arcana_standing retract: {result.get('message') or result.get('error')}")
            _notice(f"retracted {object_id}: out of the prompt from the next call on; the trace keeps it for audit")
            return result
        try:
            result = chat.remember_standing(object_id, scope=opts.get("scope", "project"), via="magic")
        except ArcanaError as exc:
            raise UsageError(f"%arcana_standing remember: {_short(exc)}") from None
        _notice(f"kept {object_id} in long-term memory as {result['kind']} {result['id']} ({result['scope']}): "
                "the next session of this project starts with it in its memory digest")
        return result

    def _standing_list(self, chat: Any) -> list[dict[str, Any]]:
        rows = standing_rows(chat)
        cells = [[f"<code>{esc(r['id'])}</code>", pill(r["kind"], "unknown"), (esc(r["turn"]), "num"), esc(r["by"]),
                  esc(r["text"]), esc(r["shown"]), esc(r["memory"] or "")] for r in rows]
        body = (table(["id", "kind", "from turn", "by", "text", "in the last prompt", "memory"], cells) if cells
                else '<div class="arcana-empty">No standing instructions yet: say one ("From now on, ...") or '
                     '%arcana_standing add TEXT.</div>')
        html = (render.style_block() + '<div class="arcana"><h4 class="arcana-h">Standing instructions of session '
                f'{esc(chat.agent)}</h4>{body}</div>')
        plain = ("\n".join(f"{r['id']} [{r['kind']}, from turn {r['turn']}, by {r['by']}, {r['shown']}"
                           + (f", memory {r['memory']}" if r["memory"] else "") + f"] {r['text']}" for r in rows)
                 or "no standing instructions yet")
        display({"text/html": html, "text/plain": plain}, raw=True)
        return rows

    # ---- memory ---------------------------------------------------------------------------------
    def memory(self, line: str) -> Any:
        words, opts = split_line("arcana_memory", line, {"--scope": "scope", "--session": "session",
                                                         "-s": "session"})
        action = words[0] if words else None
        if action not in MEMORY_ACTIONS:
            if "scope" in opts:
                raise UsageError("%arcana_memory: --scope goes with add (%arcana_memory add KIND TEXT --scope global)")
            return self._session_view(opts.get("session"), _text(words) or None)
        rest = words[1:]
        if action == "add":
            return self._add(rest, opts)
        if "scope" in opts:
            raise UsageError("%arcana_memory: --scope goes with add (%arcana_memory add KIND TEXT --scope global)")
        if action == "forget":
            if len(rest) != 1:
                raise UsageError("%arcana_memory forget: give one memory id, e.g. %arcana_memory forget "
                                 "m_0123456789abcdef (%arcana_memory list shows them)")
            return self._forget(_unquote(rest[0]), opts.get("session"))
        if action == "search":
            query = _text(rest)
            if not query:
                raise UsageError("%arcana_memory search: give what to look for, e.g. %arcana_memory search deadline")
            return self._search(query, opts.get("session"))
        if rest:
            raise UsageError(f"%arcana_memory list takes no words, got {' '.join(rest)!r}; "
                             "%arcana_memory search QUERY searches")
        return self._list(opts.get("session"))

    def _session_view(self, name: str | None, query: str | None) -> None:
        """Today's ``%arcana_memory`` (and ``%arcana_memory WORDS``): the session's reads and writes."""
        if query is not None:
            return self._search(query, name)
        entry = self.arcana.entry(name)
        from .memory_view import memory_html

        html, plain = memory_html(entry.chat, None)
        display({"text/html": html, "text/plain": plain}, raw=True)
        return None

    def _memory_session(self, name: str | None) -> Any:
        """The session's memory (``MemorySession``) when the named (or current) session has memory on."""
        sessions = getattr(self.arcana, "sessions", {})
        if name is None and not sessions:
            return None
        if name is None and self.arcana.current is None:
            return None
        chat = self.arcana.entry(name).chat
        return chat if chat.memory is not None else None

    @contextmanager
    def _store(self) -> Iterator[tuple[Any, Any]]:
        """``(store, scope)`` as a session of this notebook would open them (closed afterwards)."""
        import os

        from ..memory.models import Scope
        from ..memory.store import MemoryStore

        location = self.arcana.location()
        where: Any = None
        if self.arcana.memory_url:
            where = self.arcana.memory_url
        elif self.arcana.memory_path:
            where = location.resolve(os.path.expanduser(self.arcana.memory_path))
        try:
            store = MemoryStore(where)
        except ArcanaError as exc:
            raise UsageError(f"%arcana_memory: cannot open the memory store: {_short(exc)}") from None
        try:
            yield store, Scope.for_project(location.folder)
        finally:
            store.close()

    def _add(self, rest: list[str], opts: dict[str, str]) -> dict[str, Any]:
        from ..memory.manual import add_memory, check_kind

        if not rest:
            raise UsageError(f"%arcana_memory add: give a kind and the text, e.g. %arcana_memory add fact The report "
                             f"is due on Friday (kinds: {KIND_HINT})")
        kind, text = rest[0], _text(rest[1:])
        scope = opts.get("scope", "project")
        try:
            check_kind(kind)
            if scope not in ("project", "global"):
                raise UsageError(f"%arcana_memory add: --scope must be project or global, got {scope!r}")
            if not text:
                raise UsageError(f"%arcana_memory add {kind}: the text is missing, e.g. %arcana_memory add {kind} "
                                 "The report is due on Friday")
            chat = self._memory_session(opts.get("session"))
            if chat is not None:
                result = chat.remember(kind, text, scope=scope, via="magic")
                where = f"session {chat.agent!r}'s store; in the prompt's memory digest from the next call"
            else:
                with self._store() as (store, project):
                    entry, created = add_memory(store, kind, text, project, level=scope)
                    result = {"ok": True, "id": entry.id, "kind": entry.kind, "scope": entry.level,
                              "created": created, "content": entry.content}
                    where = f"{store.path}; sessions started with --memory get it in their digest"
        except ArcanaError as exc:
            raise UsageError(f"%arcana_memory add: {_short(exc)}") from None
        verb = "remembered" if result["created"] else "already known, reinforced"
        _notice(f"{verb} {result['id']} ({result['kind']}, {result['scope']}) in {where}; "
                f"%arcana_memory forget {result['id']} retracts it")
        return result

    def _forget(self, entry_id: str, name: str | None) -> dict[str, Any]:
        from ..memory.manual import forget_memory

        try:
            chat = self._memory_session(name)
            if chat is not None:
                result = chat.forget_memory(entry_id, via="magic")
            else:
                with self._store() as (store, _):
                    entry, already = forget_memory(store, entry_id)
                    result = {"ok": True, "id": entry.id, "kind": entry.kind, "already_forgotten": already,
                              "content": entry.content}
        except ArcanaError as exc:
            raise UsageError(f"%arcana_memory forget: {_short(exc)}") from None
        if result["already_forgotten"]:
            _notice(f"{entry_id} was already forgotten")
        else:
            _notice(f"forgot {entry_id} ({result['kind']}): it leaves the digest and recall; kept for audit")
        return result

    def _entries(self, name: str | None, fn: Any) -> Any:
        chat = self._memory_session(name)
        if chat is not None:
            memory = chat.memory
            return fn(memory.store, memory.scope)
        with self._store() as (store, scope):
            return fn(store, scope)

    def _list(self, name: str | None) -> None:
        entries = self._entries(name, lambda store, scope: (store.list_entries(scope, limit=50), store.path))
        rows = [[f"<code>{esc(e.id)}</code>", pill(str(e.kind), "unknown"), esc(e.level),
                 "pinned" if e.pinned else "", esc(e.content)] for e in entries[0]]
        body = (table(["id", "kind", "scope", "", "content"], rows) if rows
                else f'<div class="arcana-empty">No memories yet: {esc(STORE_HINT)}.</div>')
        # text a terminal front end prints: control characters shown as escapes, as the CLI shows them
        plain = printable("\n".join(f"{e.id} [{e.kind}, {e.level}] {e.content}" for e in entries[0])
                          or f"no memories yet: {STORE_HINT}")
        html = (render.style_block() + f'<div class="arcana"><h4 class="arcana-h">Memories (this project and global, '
                f'{esc(entries[1])})</h4>{body}</div>')
        display({"text/html": html, "text/plain": plain}, raw=True)

    def _search(self, query: str, name: str | None) -> None:
        try:
            hits = self._entries(name, lambda store, scope: [h.to_dict() for h in store.search(query, scope,
                                                                                                 limit=10).hits])
        except ValueError as exc:
            raise UsageError(f"%arcana_memory search: {_short(exc)}") from None
        rows = [[f"<code>{esc(h['id'])}</code>", pill(str(h["kind"]), "unknown"), esc(h.get("scope")),
                 (fmt_score(h.get("score")), "num"), esc(h.get("content"))] for h in hits]
        body = (table(["id", "kind", "scope", "score", "content"], rows) if rows
                else '<div class="arcana-empty">No match.</div>')
        plain = printable("\n".join(f"{h['id']} [{h['kind']}] {h['content']}" for h in hits) or "no match")
        display({"text/html": render.style_block()
                 + f'<div class="arcana"><h4 class="arcana-h">Memory search: {esc(query)}</h4>{body}</div>',
                 "text/plain": plain}, raw=True)


_WHY = re.compile(r"(?:^|\s)--why(?:=|\s+|$)")


def _split_why(line: str) -> tuple[str, str | None]:
    """``(the line before --why, the rest of the line)``: ``--why`` takes every word after it."""
    found = _WHY.search(line)
    if found is None:
        return line, None
    return line[:found.start()], _unquote(line[found.end():].strip())


BY = {"said": "you (said)", "added": "you (added)", "model": "model"}
HOW = {"learned": "you (said; read by the learned reader)", "acknowledged": "you (said; the reply took it up)"}
"""Who, for the items no rule kept: less sure, so the list says so, as the inspector does."""
SHOWN = {"full": "in full", "short": "shortened", "cut": "cut short", "folded": "named by id only"}


def standing_rows(chat: Any) -> list[dict[str, Any]]:
    """The live standing instructions of ``chat`` as ``%arcana_standing list`` shows them."""
    engine = chat.engine
    shown = getattr(engine, "standing_shown", {}) if engine is not None else {}

    def by(o: Any) -> str:
        for how in HOW:
            if o.id in getattr(engine, how, ()):
                return HOW[how]
        return BY.get(o.origin or "", o.origin or "?")

    return [{"id": o.id, "kind": o.standing, "turn": o.created_turn, "by": by(o),
             "text": o.payload, "shown": SHOWN.get(shown.get(o.id, ""), "not sent yet"),
             "memory": o.remembered, "revises": o.revises} for o in chat.standing()]


def _added_by_you(chat: Any) -> list[str]:
    """The ids of the objects a person added to ``chat``'s adaptive context, in order (from its trace:
    the ``user_action`` events, so a resumed session knows them too)."""
    if chat.trace_path is None:
        return []
    from ..schema.events import UserAction
    from ..trace.reader import TraceReader

    out: list[str] = []
    for event in TraceReader(chat.trace_path.parent).events(chat.run_id, event_types=["user_action"], agent=chat.agent):
        typed = event.typed()
        if isinstance(typed, UserAction) and typed.metadata.action == "context_add" and typed.metadata.ok \
                and typed.metadata.target:
            out.append(typed.metadata.target)
    return out


@magics_class
class UserMagics(Magics):
    """``%arcana_pin``, ``%arcana_unpin``, ``%arcana_context``, ``%arcana_standing``, ``%arcana_memory``:
    registered beside :class:`~.magics.ArcanaMagics`."""

    def __init__(self, shell: Any, arcana: Any) -> None:
        super().__init__(shell=shell)
        self.actions = UserActions(arcana)

    @line_magic
    def arcana_pin(self, line: str = "") -> None:
        """Pin text for the session: ``%arcana_pin TEXT [--label L] [--until-turn N] [--session S]``.

        The pin is in every prompt from the next call on, never compressed, until ``%arcana_unpin ID``
        (or the inspector's unpin button) or turn N has passed."""
        self.actions.pin(line)

    @line_magic
    def arcana_unpin(self, line: str = "") -> None:
        """Remove a pin: ``%arcana_unpin ID [--session S]`` (``%arcana_pins`` lists the active ones)."""
        self.actions.unpin(line)

    @line_magic
    def arcana_context(self, line: str = "") -> None:
        """The session's adaptive context (working memory), as the inspector shows and acts on it:
        ``%arcana_context add constraint|task|decision|note TEXT [--why WHY]``, ``%arcana_context list``
        (id, kind, tier, the turn it came from, who made it), ``%arcana_context retract ID``,
        ``%arcana_context undo`` (retract the last object you added), ``%arcana_context hydrate ID``
        (back to the active tier in full); ``--session S`` picks a session.

        ``--why`` (the rest of the line) is a constraint's or decision's rationale, a task's
        description, a note's title.
        Each is recorded as a ``user_action``; ``arcana report --verify`` re-runs the cell."""
        self.actions.context(line)

    @line_magic
    def arcana_standing(self, line: str = "") -> None:
        """The session's standing instructions (what you said once and expect to hold; the model's
        ``add_constraint`` too): ``%arcana_standing list`` (id, kind, the turn it was given, who, the text,
        how the last prompt showed it, its memory id), ``%arcana_standing add TEXT [--kind
        instruction|preference|constraint]``, ``%arcana_standing retract ID``, ``%arcana_standing remember ID
        [--scope project|global]`` (keep it in long-term memory, with ``--memory``: the next notebook starts
        with it); ``--session S`` picks a session. Each is recorded as a ``user_action``; ``arcana report
        --verify`` re-runs the cell."""
        self.actions.standing(line)

    @line_magic
    def arcana_memory(self, line: str = "") -> None:
        """Long-term memory: ``%arcana_memory`` (what this session recalled and wrote),
        ``%arcana_memory list``, ``%arcana_memory add KIND TEXT [--scope project|global]``,
        ``%arcana_memory forget ID``, ``%arcana_memory search QUERY``; ``--session S`` picks a session.

        KIND is one of fact, preference, decision, pattern, mistake, constraint. Without a session
        (or with one whose memory is off) it works on the store a ``--memory`` session of this
        notebook opens; with memory on, on that session's store, and the next call's digest has it."""
        self.actions.memory(line)


def register(shell: Any, arcana: Any) -> UserMagics:
    magics = UserMagics(shell, arcana)
    shell.register_magics(magics)
    return magics
