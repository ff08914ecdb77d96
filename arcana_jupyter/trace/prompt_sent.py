"""The prompt as sent, recorded compactly: the ``prompt_sent`` event (docs/TRACE_FORMAT.md "The prompt as sent").

Every LLM call of a turn writes, beside its ``context_decision``, the shaped prompt exactly as the
provider was given it (``Message.wire()`` dicts), encoded against the previous ``prompt_sent`` of the
same agent so that a record costs what changed::

    {"step": 0, "digest": "<request digest>", "prev": "e_000123" | null, "keep": 41,
     "messages": [{"h": [57, 2]}, {"p": 40}, {"role": "user", "content": "..."}], "tokens": [12, 9, 95]}

- ``keep``: the first ``keep`` messages are the previous prompt's first ``keep`` (its resolved messages);
- ``messages``: the rest, each either a wire dict, ``{"h": i}`` / ``{"h": [i, n]}`` (the history messages
  recorded with ``history_index`` i .. i+n-1, as ``Message.record()`` -> wire) or ``{"p": i}`` /
  ``{"p": [i, n]}`` (messages i .. i+n-1 of the previous prompt), or ``{"e": [i, ops]}``: message ``i``
  of the previous prompt with its content rebuilt from line edits (``[start, n]`` copies lines of its
  content plus a newline, cut after each newline; a string is new text; ``[k, a, text, b]`` is line k
  with its middle changed; ``{"h": i}`` quotes history message i's content; the last newline is
  dropped) — a section that changed a little (:func:`sent_edit_ops`); or ``{"J": ops}`` /
  ``{"J": ops, "b": back}``: a message made of history messages joined with :data:`JOIN_SEPARATOR`
  (the shaping step's merge of adjacent same-role messages: the recalled user messages and the input),
  its parts (:func:`join_parts`: texts, and history messages as gaps from the one before) given by ops
  that copy runs of an earlier joined message's parts (:func:`copy_ops`: the recalled messages move on
  together, so their gaps repeat from one call to the next), its other fields those of its first
  history message; or ``{"j": parts}`` (traces before ``J``: parts as absolute references ``i`` /
  ``[i, n]`` and strings);
- ``tokens``: the counted tokens of the messages that are not ``p`` references, in order (kept and
  ``p`` messages keep the previous prompt's counts);
- ``prev``: the event id of the previous prompt_sent of the agent, ``null`` for a keyframe (then
  ``keep`` is 0 and no ``p`` reference or ``J`` copy occurs). A keyframe is written first and then
  every :data:`CHAIN_MAX` prompts, so a random read resolves at most that many records.

A record's size follows what changed, not the history's length: references are runs, a joined
message's parts are gaps copied from an earlier one's, and an edit quotes the history and changes a
line's middle in place (issue 26: 762 -> ~500 bytes a turn at turn 1,000, docs/TRACE_FORMAT.md).

The writer's redaction applies to the inline messages as to any metadata; a reference resolves to the
recorded (equally redacted) transcript message, so the resolved prompt is the sent one with secrets
masked. It verifies (its request digest recomputed equals the recorded one) when nothing was masked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

from ..messages import Message, ToolSpec, as_message, canonical_json, request_digest
from .limits import MESSAGE_CHARS, Budget
from .limits import max_chars as limit_chars
from .line_edits import MIN_QUOTE, apply_line_edit, sent_edit_ops

CHAIN_MAX = 64
"""A keyframe at least every this many prompts of one agent (the longest chain a random read walks)."""
RECENT_QUOTES = 400
"""How many of the last history messages an edit's new text may quote by reference (the checkpoint
quotes the requests of the last few dozen turns)."""
JOIN_BASES = 4
"""A ``{"J": ops}`` copies the parts of one of the last this many joined messages (a tool turn's
recalled messages follow another pattern than the others': the last but one may be the right base)."""
GOOD_COPY = 48
"""The encoder stops trying older bases once a ``J``'s ops are this small (characters)."""
JOIN_SEPARATOR = "\n\n---\n\n"
"""What a joined message (``{"J": ops}``, ``{"j": parts}``) puts between its parts:
``providers.shaping.MERGE_SEPARATOR`` (a format constant here: what traces hold does not follow later
changes of the shaping step)."""


class PromptSentEncoder:
    """Encodes each prompt of one agent's session against the previous one (see the module doc)."""

    def __init__(self, chain_max: int = CHAIN_MAX, redact: Callable[[str], str] | None = None) -> None:
        self.chain_max = max(1, chain_max)
        self.redact = redact
        """The writer's redaction of a text: a line edit is computed on the texts as the trace holds them."""
        self._prev_id: str | None = None
        self._prev_keys: list[str] = []
        self._prev_at: dict[str, int] = {}
        self._prev_wire: list[dict[str, Any]] = []  # JSON edge: the previous prompt's wire messages
        self._chain = 0
        self._hist_keys: dict[str, int] = {}
        self._hist_seen: list[str] = []
        self._hist_text: dict[str, int] = {}
        """A history message's content -> its index (the last with that content): the parts of a joined message."""
        self._history: Sequence[Message] = ()
        self._joined_base: list[list[str | int]] = []
        """The parts (:func:`join_parts`) of the last :data:`JOIN_BASES` joined messages written since the
        keyframe, the last last: what a ``{"J": ops}`` copies from."""
        self._join_at: list[list[str | int]] = []
        """The same while a prompt is encoded (its own joined messages added): written with the prompt."""
        self._quote_cache: dict[int, tuple[str, str]] = {}
        """history index -> (its content, redacted): the texts an edit may quote (:meth:`_recent_quotes`)."""
        self._pending: tuple[list[str], bool, list[dict[str, Any]], list[list[str | int]]] = (  # JSON edge: wire
            [], True, [], [])

    def _history_index(self, history: Sequence[Message]) -> dict[str, int]:
        """content key -> history index (the last message with that key), kept up to date incrementally;
        rebuilt when the history was changed other than by appending."""
        seen = self._hist_seen
        if len(history) < len(seen) or (seen and history[len(seen) - 1].content_key() != seen[-1]):
            self._hist_keys, self._hist_seen, self._hist_text = {}, [], {}
            seen = self._hist_seen
        for i in range(len(seen), len(history)):
            key = history[i].content_key()
            seen.append(key)
            self._hist_keys[key] = i
            if history[i].content:
                self._hist_text[history[i].content] = i
        self._history = history
        return self._hist_keys

    def encode(self, *, step: int, digest: str | None, messages: Sequence[Message], history: Sequence[Message],
               tokens: Sequence[int | None] | None = None) -> dict[str, Any]:  # JSON edge: the metadata written
        """The metadata of the ``prompt_sent`` event for ``messages`` (call :meth:`written` with its id)."""
        keys = [m.content_key() for m in messages]
        keyframe = self._prev_id is None or self._chain >= self.chain_max
        prev = self._prev_keys
        keep = 0
        if not keyframe:
            while keep < len(keys) and keep < len(prev) and keys[keep] == prev[keep]:
                keep += 1
        hist = self._history_index(history)
        seen = self._hist_seen
        self._join_at = [] if keyframe else self._joined_base  # the base of this prompt's next joined message
        out: list[dict[str, Any]] = []  # JSON edge: the record's messages and references
        counts: list[int | None] = []
        run: list[Any] | None = None  # the open reference run: [kind, start, length]
        for i in range(keep, len(keys)):
            key = keys[i]
            if run is not None:  # continue the open run when the next message follows it
                nxt = run[1] + run[2]
                if (prev if run[0] == "p" else seen)[nxt:nxt + 1] == [key]:
                    run[2] += 1
                    if run[0] == "h" and tokens is not None:
                        counts.append(tokens[i])
                    continue
            p = None if keyframe else self._prev_at.get(key)
            h = hist.get(key) if p is None else None
            if run is not None:
                out.append({run[0]: run[1] if run[2] == 1 else [run[1], run[2]]})
                run = None
            if p is not None:
                run = ["p", p, 1]
            elif h is not None:
                run = ["h", h, 1]
            else:
                out.append(self._inline(messages[i].wire(), i, keyframe))
            if p is None and tokens is not None:
                counts.append(tokens[i])
        if run is not None:
            out.append({run[0]: run[1] if run[2] == 1 else [run[1], run[2]]})
        meta: dict[str, Any] = {  # JSON edge: the metadata written
            "step": step, "digest": digest, "prev": None if keyframe else self._prev_id, "keep": keep, "messages": out}
        if tokens is not None:
            meta["tokens"] = counts
        self._pending = (keys, keyframe, [m.wire() for m in messages], self._join_at)
        return meta

    def _inline(self, wire: dict[str, Any], i: int, keyframe: bool) -> dict[str, Any]:  # JSON edge: wire in, record out
        """A message that is neither in the history nor in the previous prompt: as history messages
        joined (the recalled messages merged into one, :meth:`_joined`), or as line edits of the previous
        prompt's message at its place (a section that changed a little: the checkpoint) when that is
        less than half its size, else as it is."""
        joined = self._joined(wire)
        if joined is not None:
            return joined
        if keyframe or i >= len(self._prev_wire) or len(str(wire.get("content") or "")) < 200:
            return wire
        base = self._prev_wire[i]
        if {k: v for k, v in base.items() if k != "content"} != {k: v for k, v in wire.items() if k != "content"}:
            return wire
        redact = self.redact or _same
        ops = sent_edit_ops(redact(str(base.get("content") or "")), redact(str(wire.get("content") or "")), redact,
                            self._recent_quotes)
        edit = {"e": [i, ops]}
        return edit if len(canonical_json(edit)) * 2 < len(canonical_json(wire)) else wire

    def _recent_quotes(self) -> list[tuple[str, int]]:
        """(content as the trace holds it, index) of the last :data:`RECENT_QUOTES` history messages
        with :data:`MIN_QUOTE`+ characters (the last of equal ones), longest first."""
        history = self._history
        found: dict[str, int] = {}
        for i in range(max(0, len(history) - RECENT_QUOTES), len(history)):
            content = history[i].content
            if content and len(content) >= MIN_QUOTE:
                cached = self._quote_cache.get(i)
                if cached is None or cached[0] is not content:
                    cached = (content, self.redact(content) if self.redact is not None else content)
                    self._quote_cache[i] = cached
                found[cached[1]] = i
        if len(self._quote_cache) > 2 * RECENT_QUOTES:
            for i in [i for i in self._quote_cache if i < len(history) - RECENT_QUOTES]:
                del self._quote_cache[i]
        return sorted(found.items(), key=lambda item: -len(item[0]))

    def _joined(self, wire: dict[str, Any]) -> dict[str, Any] | None:  # JSON edge: wire in, record out
        """``{"J": ops}`` for a message whose content is history messages' contents (and other text)
        joined with :data:`JOIN_SEPARATOR`, when that is smaller; None otherwise. Its parts (history
        messages as gaps, :func:`join_parts`) are written against the last joined message's: the
        recalled messages move on together from one call to the next, so their gaps repeat. The reader
        takes each history part from the recorded (redacted) transcript and the rest from this record
        (redacted by the writer): used only when that makes the text the writer's redaction of the
        whole makes."""
        content = wire.get("content")
        if not isinstance(content, str) or JOIN_SEPARATOR not in content:
            return None
        pieces = content.split(JOIN_SEPARATOR)
        found = [self._hist_text.get(p) for p in pieces]
        first = next((h for h in found if h is not None), None)
        if first is None or sum(h is not None for h in found) < 2:
            return None
        base = self._history[first].wire()
        if {k: v for k, v in base.items() if k != "content"} != {k: v for k, v in wire.items() if k != "content"}:
            return None
        if self.redact is not None and JOIN_SEPARATOR.join(map(self.redact, pieces)) != self.redact(content):
            return None  # the writer's redaction of the parts is not that of the whole
        parts = join_parts([piece if h is None else h for piece, h in zip(pieces, found, strict=True)])
        out: dict[str, Any] = {"J": parts}  # JSON edge: the record's message
        size = len(canonical_json(parts))
        for back, prior in enumerate(reversed(self._join_at)):  # the last first; a small enough copy ends it
            ops = copy_ops(parts, prior)
            if len(canonical_json(ops)) + (6 if back else 0) < size:
                out, size = ({"J": ops, "b": back} if back else {"J": ops}), len(canonical_json(ops))
                if size <= GOOD_COPY:
                    break
        if len(canonical_json(out)) >= len(canonical_json(wire)):
            return None
        self._join_at = [*self._join_at, parts][-JOIN_BASES:]
        return out

    def written(self, event_id: str) -> None:
        """The event just encoded was written with ``event_id``: it is the base of the next."""
        keys, keyframe, wire, joined = self._pending
        self._joined_base = joined
        self._prev_id = event_id
        self._prev_keys = keys
        self._prev_wire = wire
        self._prev_at = {k: i for i, k in enumerate(keys)}
        self._chain = 0 if keyframe else self._chain + 1


def standalone_prompt_sent(*, step: int, model: str, purpose: str, messages: Sequence[Message],
                           tokens: Sequence[int | None] | None = None) -> dict[str, Any]:  # JSON edge: metadata
    """The ``prompt_sent`` metadata of a call outside the turn's chain (the summariser's, ``step`` -1):
    a keyframe of its own, every message inline, that no other prompt continues — the agent's chain of
    turn prompts (:class:`PromptSentEncoder`) is left as it was. It has no ``context_decision``, so it
    names the ``model`` its request digest (no tools) is computed with."""
    meta: dict[str, Any] = {  # JSON edge: the metadata written
        "step": step, "digest": request_digest(messages, (), model), "prev": None, "keep": 0,
        "messages": [m.wire() for m in messages], "model": model, "purpose": purpose}
    if tokens is not None:
        meta["tokens"] = list(tokens)
    return meta


def copy_ops(parts: Sequence[str | int], base: Sequence[str | int]) -> list[Any]:  # JSON edge: the ops
    """``parts`` as the ops of a ``{"J": ops}`` message: ``[k, n]`` copies parts k .. k+n-1 of ``base``
    (an earlier joined message's), a string or an int is a part as it is; a copy only where it is
    shorter than the parts it stands for. Greedy, left to right: at each part the longest run of
    ``base`` it continues (among the places its first two parts occur, the place the last copy ended
    first) — linear in practice, where a general diff is quadratic."""
    if not base:
        return list(parts)
    at: dict[tuple[str | int, str | int], list[int]] = {}
    for k in range(len(base) - 1):
        at.setdefault((base[k], base[k + 1]), []).append(k)
    ops: list[Any] = []
    j, after = 0, -1
    while j < len(parts):
        best_k = best_n = 0
        if j + 1 < len(parts):
            places = at.get((parts[j], parts[j + 1]), ())
            for k in ([after, *places[:MATCH_TRIES]] if after in places else places[:MATCH_TRIES]):
                n = 2
                while j + n < len(parts) and k + n < len(base) and parts[j + n] == base[k + n]:
                    n += 1
                if n > best_n:
                    best_k, best_n = k, n
        if best_n >= 2 and len(canonical_json([best_k, best_n])) < len(canonical_json(list(parts[j:j + best_n]))):
            ops.append([best_k, best_n])
            j, after = j + best_n, best_k + best_n
        else:
            ops.append(parts[j])
            j += 1
    return ops


MATCH_TRIES = 8
"""How many places of a pair of parts :func:`copy_ops` extends (beside where the last copy ended)."""


def join_parts(indexes_and_texts: Sequence[str | int]) -> list[str | int]:
    """A joined message's parts as a ``J`` holds them: a text as it is, history message ``h`` as its
    gap ``h - end`` (``end``: one after the history message of the part before, 0 at the start), so
    messages that move on together keep their parts."""
    out: list[str | int] = []
    end = 0
    for part in indexes_and_texts:
        if isinstance(part, str):
            out.append(part)
        else:
            out.append(part - end)
            end = part + 1
    return out


def _same(text: str) -> str:
    return text


def _run(value: Any) -> tuple[int, int] | None:
    """A reference's ``i`` or ``[i, n]`` as (start, length); None when it is neither."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value, 1
    if isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                             for x in value) and value[1] >= 1:
        return value[0], value[1]
    return None


class ResolvedPrompt(TypedDict):
    """One ``prompt_sent`` record resolved (:func:`resolve_prompt_sent`): the prompt as the provider got it."""

    messages: list[dict[str, Any]]  # JSON edge: wire messages (Message.wire())
    tokens: list[int | None]
    model: NotRequired[str]
    """A standalone prompt (the summariser's) names the model its digest is computed with."""
    digest: NotRequired[str | None]
    """The request digest the record holds (set by the trace reader)."""
    joined: NotRequired[list[list[str | int]]]
    """The parts (:func:`join_parts`) of the last :data:`JOIN_BASES` joined messages of the chain up to
    this prompt (since its keyframe), the last last: the bases of the next record's ``{"J": ops}``."""
    units: NotRequired[list[int]]
    """What each message counts against the resolution's limit (:func:`message_units`): kept for the
    next record, whose ``keep`` and ``p`` references count them again."""


def message_units(message: Mapping[str, Any]) -> int:  # JSON edge: a wire message
    """What one resolved message counts against a prompt's limit (trace/limits.py :func:`max_chars`): its
    text, its other fields' text, and :data:`~.limits.MESSAGE_CHARS` (an empty message counts too)."""
    total = MESSAGE_CHARS
    for value in message.values():
        total += len(value) if type(value) is str else len(str(value)) if value is not None else 0
    return total


def resolve_prompt_sent(meta: Mapping[str, Any], previous: Mapping[str, Any] | None,
                        history: Callable[[int], Mapping[str, Any] | None],
                        max_chars: int | None = None) -> ResolvedPrompt:
    """The full prompt of one ``prompt_sent`` record: ``{"messages": [wire...], "tokens": [...]}``.

    ``previous`` is the resolved previous prompt (required when ``meta["prev"]`` is set), ``history(i)``
    the recorded history message ``i`` (a ``Message.record()`` dict) or None. Raises ``ValueError`` on
    a record that cannot be resolved, and :class:`~.limits.TooLarge` (one) on a record that resolves to
    more than ``max_chars`` (:func:`~.limits.max_chars` of its file; None: of a file of 16 MiB), counted
    as it is resolved (:func:`message_units`): a trace bomb costs its limit, never more."""
    budget = Budget(max_chars if max_chars is not None else limit_chars(None), "characters")
    wires: dict[int, tuple[dict[str, Any], int]] = {}  # JSON edge: history index -> (its wire message, units)

    def wire_of(h: int) -> tuple[dict[str, Any], int] | None:  # JSON edge: a history message as sent
        if h not in wires:
            record = history(h)
            if record is None:
                return None
            wire = wire_of_record(record)
            wires[h] = (wire, message_units(wire))
        return wires[h]

    def quoted(i: int) -> str | None:  # an edit's {"h": i}: the history message's content as sent
        found = wire_of(i)
        return None if found is None else str(found[0].get("content") or "")

    keep = meta.get("keep") or 0
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 0:
        raise ValueError(f"keep must be a non-negative integer, not {keep!r}")
    prev_msgs: list[dict[str, Any]] = (  # JSON edge: wire messages
        list(previous["messages"]) if previous is not None else [])
    prev_tokens: list[Any] = list(previous.get("tokens") or []) if previous is not None else []
    prev_tokens += [None] * (len(prev_msgs) - len(prev_tokens))
    prev_units: list[int] = list(previous.get("units") or []) if previous is not None else []
    if len(prev_units) != len(prev_msgs):
        prev_units = [message_units(m) for m in prev_msgs]
    if meta.get("prev") is not None and previous is None:
        raise ValueError(f"the previous prompt {meta.get('prev')} is not in the trace")
    if keep > len(prev_msgs):
        raise ValueError(f"keep {keep} but the previous prompt has {len(prev_msgs)} message(s)")
    rest = meta.get("messages")
    if not isinstance(rest, list):
        raise ValueError("messages is not a list")
    msgs = prev_msgs[:keep]
    tokens: list[Any] = prev_tokens[:keep]
    units: list[int] = prev_units[:keep]
    where = "the prompt"
    budget.take(sum(units), where)
    joined: list[list[str | int]] = list(previous.get("joined") or []) if previous is not None and meta.get(
        "prev") is not None else []
    own: list[int] = []  # positions whose count comes from meta["tokens"] (not copied from the previous prompt)
    for item in rest:
        at = len(msgs)
        if not isinstance(item, dict):
            raise ValueError(f"message {at} is not an object")
        where = f"message {at}"
        if "role" in item:
            msgs.append(dict(item))
            own.append(at)
            tokens.append(None)
            units.append(message_units(item))
            budget.take(units[-1], where)
        elif "h" in item:
            ref = _run(item["h"])
            if ref is None:
                raise ValueError(f"message {at}: the history reference {item['h']!r} is not i or [i, n]")
            for h in range(ref[0], ref[0] + ref[1]):
                found = wire_of(h)
                if found is None:
                    raise ValueError(f"message {len(msgs)} refers to history message {h}, which is not recorded")
                budget.take(found[1], f"message {len(msgs)}")
                own.append(len(msgs))
                msgs.append(dict(found[0]))
                tokens.append(None)
                units.append(found[1])
        elif "e" in item:
            edit = item["e"]
            if not (isinstance(edit, list) and len(edit) == 2 and isinstance(edit[0], int)
                    and not isinstance(edit[0], bool) and 0 <= edit[0] < len(prev_msgs) and isinstance(edit[1], list)):
                raise ValueError(f"message {at}: the edit {str(edit)[:80]} is not [index in the previous prompt, ops]")
            base = prev_msgs[edit[0]]
            text = apply_line_edit(str(base.get("content") or ""), edit[1], where, quoted, budget=budget)
            if text is None:
                raise ValueError(f"message {at}: the edit holds a null text")
            msgs.append({**base, "content": text})
            own.append(at)
            tokens.append(None)
            units.append(message_units(msgs[-1]))
            budget.take(units[-1] - len(text), where)  # the text was counted as the edit made it
        elif "j" in item or "J" in item:
            parts = _absolute_parts(item["j"], where, budget) if "j" in item else _copied_parts(
                item, joined, where, budget)
            joined = [*joined, parts][-JOIN_BASES:]
            msgs.append(_joined_message(parts, wire_of, where, budget))
            own.append(at)
            tokens.append(None)
            units.append(message_units(msgs[-1]))
        elif "p" in item:
            ref = _run(item["p"])
            if ref is None or ref[0] < 0 or ref[0] + ref[1] > len(prev_msgs):
                raise ValueError(f"message {at} refers to messages {item['p']!r} of the previous prompt, which has "
                                 f"{len(prev_msgs)}")
            budget.take(sum(prev_units[ref[0]:ref[0] + ref[1]]), where)
            msgs.extend(dict(m) for m in prev_msgs[ref[0]:ref[0] + ref[1]])
            tokens.extend(prev_tokens[ref[0]:ref[0] + ref[1]])
            units.extend(prev_units[ref[0]:ref[0] + ref[1]])
        else:
            raise ValueError(f"message {at} is neither a message nor a reference")
    toks = meta.get("tokens")
    if isinstance(toks, list) and len(toks) == len(own):
        for position, t in zip(own, toks, strict=True):
            tokens[position] = t if isinstance(t, int) and not isinstance(t, bool) else None
    out: ResolvedPrompt = {"messages": msgs, "tokens": tokens, "units": units}
    if joined:
        out["joined"] = joined
    if isinstance(meta.get("model"), str):  # a standalone prompt (the summariser's): its digest's model
        out["model"] = meta["model"]
    return out


PART_CHARS = len(JOIN_SEPARATOR)
"""What one part of a joined message counts against a prompt's limit besides its text (its separator)."""


def _absolute_parts(parts: Any, where: str, budget: Budget) -> list[str | int]:  # JSON edge: a record's j parts
    """A ``{"j": parts}`` message's parts (history references ``i`` / ``[i, n]`` and texts, as traces
    before ``J`` hold them) as :func:`join_parts` parts."""
    if not isinstance(parts, list) or not parts:
        raise ValueError(f"{where}: the joined message {str(parts)[:80]} is not a list of parts")
    flat: list[str | int] = []
    for part in parts:
        if isinstance(part, str):
            flat.append(part)
            continue
        ref = _run(part)
        if ref is None or ref[0] < 0 or ref[1] > 1_000_000:
            raise ValueError(f"{where}: the joined message's part {str(part)[:40]} is not text, i or [i, n]")
        budget.take(ref[1] * PART_CHARS, where)
        flat.extend(range(ref[0], ref[0] + ref[1]))
    return join_parts(flat)


def _copied_parts(item: Mapping[str, Any], bases: Sequence[Sequence[str | int]],
                  where: str, budget: Budget) -> list[str | int]:  # JSON edge: a J message
    """A ``{"J": ops, "b": back}`` message's parts: a text or a gap as it is, ``[k, n]`` the parts
    k .. k+n-1 of its base, the joined message ``back`` (0 when left out) before the last of ``bases``."""
    ops, back = item["J"], item.get("b", 0)
    if not isinstance(back, int) or isinstance(back, bool) or back < 0 or (back and back >= len(bases)):
        raise ValueError(f"{where}: the joined message's base {str(back)[:20]} is not one of the last "
                         f"{len(bases)} joined message(s)")
    base = bases[-1 - back] if bases else []
    if not isinstance(ops, list) or not ops:
        raise ValueError(f"{where}: the joined message {str(ops)[:80]} is not a list of parts")
    parts: list[str | int] = []
    for op in ops:
        if isinstance(op, str) or (isinstance(op, int) and not isinstance(op, bool)):
            parts.append(op)
            continue
        ref = _run(op) if isinstance(op, list) else None
        if ref is None or ref[0] < 0 or ref[0] + ref[1] > len(base):
            raise ValueError(f"{where}: the joined message's part {str(op)[:40]} is not text, a gap or [k, n] of "
                             f"the last joined message's {len(base)} part(s)")
        budget.take(ref[1] * PART_CHARS, where)
        parts.extend(base[ref[0]:ref[0] + ref[1]])
    return parts


def _joined_message(parts: Sequence[str | int],
                    history: Callable[[int], tuple[dict[str, Any], int] | None],  # JSON edge: a wire message
                    where: str, budget: Budget) -> dict[str, Any]:  # JSON edge: a wire message
    """A joined message from its :func:`join_parts` parts: their texts joined with
    :data:`JOIN_SEPARATOR`, the other fields those of the first history message referred to
    (``history(h)``: its wire message and units)."""
    texts: list[str] = []
    first: dict[str, Any] | None = None  # JSON edge: a wire message
    end = 0
    for part in parts:
        if isinstance(part, str):
            budget.take(len(part) + PART_CHARS, where)
            texts.append(part)
            continue
        h = end + part
        found = history(h) if h >= 0 else None
        if found is None:
            raise ValueError(f"{where} joins history message {h}, which is not recorded")
        end = h + 1
        wire = found[0]
        first = first if first is not None else wire
        text = str(wire.get("content") or "")
        budget.take(len(text) + PART_CHARS, where)
        texts.append(text)
    if first is None:
        raise ValueError(f"{where}: the joined message refers to no history message")
    return {**first, "content": JOIN_SEPARATOR.join(texts)}


def wire_of_record(record: Mapping[str, Any]) -> dict[str, Any]:  # JSON edge: a wire message
    """A recorded history message (``Message.record()``) as it was sent (``Message.wire()``)."""
    data = dict(record)
    if data.get("content") is None:
        data["content"] = ""
    return as_message(data).wire()


def prompt_digest(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]], model: str) -> str:
    """:func:`~arcana_jupyter.messages.request_digest` of wire messages and recorded ToolSpec dumps."""
    text = canonical_json({"messages": list(messages), "model": model,
                           "tools": [ToolSpec.model_validate(t).wire() for t in tools]})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


MASK = "[REDACTED]"


def masked_count(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many messages hold a masked secret (why such a prompt cannot verify)."""
    return sum(1 for m in messages if MASK in canonical_json(m))
