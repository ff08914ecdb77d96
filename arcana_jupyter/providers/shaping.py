"""Prompts shaped for the model that receives them: one pure step between the builder and the wire.

The working-set builder lays a prompt out for prefix reuse: system-role sections after the head,
late sections just before the recent turns, and a dropped turn-half can leave two user (or two
assistant) messages in a row. OpenAI-compatible servers (vLLM, llama.cpp's server, TGI, LM
Studio, Ollama) render ``messages`` through the model's own chat template, and many templates
refuse that (Mistral's: "Only user and assistant roles are supported, with the exception of an
initial optional system message"; Gemma's: "Conversation roles must alternate"; Gemma 2's refuses
any system message) or silently drop every system message but one (Phi-4-mini, DeepSeek-R1
distills). :func:`shape` rewrites the builder's messages so that every such template accepts them
and none of their content is lost:

- **one leading system message**: the system messages before the first other message join it,
  each under a heading from its ``name``; system messages later in the conversation (late
  sections, the ``llm_summarize`` summary, pins placed late) go into ONE delimited context block
  appended after the text of the current (last) user message — after, so that the user's own text
  stays a reusable prompt-cache prefix next turn;
- **alternation**: adjacent user (or assistant) messages outside tool exchanges are merged with a
  separator, and a conversation that opens with an assistant gets a marked user placeholder first;
- **tool-call ids** are mapped to 9 alphanumerics (Mistral) when the shape asks, the same way in
  ``assistant.tool_calls`` and ``tool.tool_call_id``;
- **no system role** (Gemma 1/2, Mistral 7B v0.1): the system text is folded, delimited, into the
  first user turn;
- **no tool role** (Gemma, Mistral 7B v0.1): tool calls and results become delimited text in the
  assistant and user turns, merged again for alternation; templates that drop an assistant's text
  when it also calls tools (Mistral) get that exchange as text too;
- **one tool call per message** (Llama 3.x): parallel calls are split into one assistant message
  per call, each followed by its result.

:class:`PromptShape` is the set of rules (recorded in every ``context_decision`` so that a rebuild
applies the same shape); :data:`SHAPES` names the usual ones, ``portable`` being the default for
every provider (unknown models are safe with it) and ``none`` the unshaped prompt of old traces.
:class:`ShapedPrompt` says, for every input message, where it went (:class:`Placement`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..messages import RECALLED_HEADING, RECALLED_NAME, Message, ToolCall

How = Literal["kept", "system", "context", "merged", "folded", "tool_text", "split"]
"""Where a message went: ``kept`` as it is; merged into the leading ``system`` message; moved into
the ``context`` block of the current user message; ``merged`` with the previous same-role message;
``folded`` into the first user turn (no system role); a tool call or result rendered as text
(``tool_text``); parallel tool calls ``split`` into one message per call."""

PLACEHOLDER_TEXT = "(earlier conversation omitted)"
"""The user turn put before a conversation that would open with an assistant (marked as such)."""
MERGE_SEPARATOR = "\n\n---\n\n"
"""Between the texts of two same-role messages merged into one."""
SHAPE_NAMES = ("auto", "none", "portable", "mistral", "llama3", "text_tools", "strict")
"""The values of ``RuntimeConfig.prompt_shape`` / ``--prompt-shape``."""


@dataclass(frozen=True)
class PromptShape:
    """The rules one model's chat template needs (see the module docstring)."""

    name: str = "portable"
    system: Literal["leading", "fold", "any"] = "leading"
    """``leading``: one system message, first; ``fold``: none (into the first user turn);
    ``any``: left as the builder made them (the unshaped ``none`` shape only)."""
    alternate: bool = True
    tool_role: bool = True
    """False: tool calls and results are written as text (the template has no tool role)."""
    tool_ids: Literal["any", "alnum9"] = "any"
    single_tool_call: bool = False
    """True: at most one tool call per assistant message (Llama 3.x)."""
    calls_drop_content: bool = False
    """True: the template drops an assistant's text when it also calls tools; such an exchange
    is written as text."""
    source: str = "default"
    """How the shape was chosen (``default``, ``config``, ``model family gemma-3``,
    ``template <hash>``, ``recorded``, ``refused by the server``): for the decision's notes, not part
    of the rules."""
    problem: str | None = field(default=None, compare=False)
    """Why the model's own template could not say (its probe's time or memory bound, a template that
    is not text ...): one line for the session's first decision, not recorded with the rules."""

    @property
    def shapes(self) -> bool:
        return self.system != "any"

    def rules(self) -> dict[str, Any]:
        """The rules as a JSON-able dict (what ``context_decision.shape`` records, minus the source)."""
        return {
            "name": self.name, "system": self.system, "alternate": self.alternate, "tool_role": self.tool_role,
            "tool_ids": self.tool_ids, "single_tool_call": self.single_tool_call,
            "calls_drop_content": self.calls_drop_content,
        }

    def record(self) -> dict[str, Any]:
        return {**self.rules(), "source": self.source}

    @classmethod
    def from_record(cls, data: dict[str, Any] | None) -> PromptShape:
        """The shape a trace recorded; ``None`` (a trace from before shaping): the unshaped ``none``."""
        if not data:
            return SHAPES["none"]
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})

    def with_source(self, source: str) -> PromptShape:
        return replace(self, source=source)


SHAPES: dict[str, PromptShape] = {
    "none": PromptShape(name="none", system="any", alternate=False),
    "portable": PromptShape(name="portable"),
    "mistral": PromptShape(name="mistral", tool_ids="alnum9", calls_drop_content=True),
    "llama3": PromptShape(name="llama3", single_tool_call=True, calls_drop_content=True),
    "text_tools": PromptShape(name="text_tools", tool_role=False),
    "strict": PromptShape(name="strict", system="fold", tool_role=False),
}
"""The named shapes: ``portable`` (the default: one leading system message, alternation),
``mistral`` (+ 9-alphanumeric tool ids), ``llama3`` (+ one call per message), ``text_tools``
(no tool role: Gemma 3), ``strict`` (no system and no tool role: Gemma 1/2, Mistral 7B v0.1) and
``none`` (unshaped: traces from before shaping)."""


def named_shape(name: str, *, source: str = "config") -> PromptShape:
    """The shape called ``name`` (one of :data:`SHAPES`); a clear error for any other name."""
    shape = SHAPES.get(name)
    if shape is None:
        raise ValueError(f"unknown prompt shape {name!r}; known: {', '.join(SHAPE_NAMES)}")
    return shape.with_source(source)


@dataclass(frozen=True)
class Placement:
    """Where one input message went: ``how`` and the index of the shaped message that holds it."""

    how: How
    target: int

    def record(self) -> list[Any]:
        return [self.how, self.target]


@dataclass(frozen=True)
class ShapedPrompt:
    messages: list[Message]
    placements: list[Placement]
    """One per input message, in input order."""
    shape: PromptShape
    placeholder: int | None = None
    """The index of the inserted user placeholder, if one was needed."""
    id_map: dict[str, str] = field(default_factory=dict)
    """Tool-call ids that were mapped (original -> sent)."""
    original: list[Message] = field(default_factory=list)
    """The builder's messages (what the decisions' ``position`` refers to)."""

    @property
    def changed(self) -> bool:
        return any(p.how != "kept" for p in self.placements) or self.placeholder is not None or bool(self.id_map)

    def record(self) -> dict[str, Any]:
        """The shape and where the moved messages went (``context_decision.shape``)."""
        out: dict[str, Any] = self.shape.record()
        moved = {str(i): p.record() for i, p in enumerate(self.placements) if p.how != "kept" or p.target != i}
        if moved:
            out["moved"] = moved
        if self.placeholder is not None:
            out["placeholder"] = self.placeholder
        return out

    def summary(self) -> str:
        """One line for the decision's notes."""
        counts: dict[str, int] = {}
        for p in self.placements:
            if p.how != "kept":
                counts[p.how] = counts.get(p.how, 0) + 1
        parts = [f"{n} {how}" for how, n in sorted(counts.items())]
        if self.placeholder is not None:
            parts.append("a user placeholder first")
        if self.id_map:
            parts.append(f"{len(self.id_map)} tool id(s) mapped")
        what = ", ".join(parts) if parts else "nothing to change"
        return f"prompt shaped for the model ({self.shape.name}, {self.shape.source}): {what}"


# ---- text forms -----------------------------------------------------------------------------

def section_heading(name: str | None) -> str:
    return f"## {name or 'context'}"


def context_block(items: Sequence[tuple[str | None, str]]) -> str:
    """System-role text given to the model as context inside a user turn: one delimited block.

    One item: ``<system-context name="...">`` (the Anthropic provider's form for a late system
    message); several: one ``<system-context>`` block with a heading per item."""
    if len(items) == 1 and items[0][0] != RECALLED_NAME:
        name, content = items[0]
        label = f' name="{name}"' if name else ""
        return f"<system-context{label}>\n{content}\n</system-context>"
    parts: list[str] = []
    for k, (name, content) in enumerate(items):
        if name == RECALLED_NAME:  # a run of quoted earlier messages: one heading
            first = k == 0 or items[k - 1][0] != RECALLED_NAME
            parts.append(f"{section_heading(RECALLED_HEADING)}\n{content}" if first else content)
        else:
            parts.append(f"{section_heading(name)}\n{content}")
    return f"<system-context>\n{chr(10).join(_runs(parts, items))}\n</system-context>"


def _runs(parts: list[str], items: Sequence[tuple[str | None, str]]) -> list[str]:
    """The parts of a context block with a blank line between them (one line break inside a run of
    quoted earlier messages)."""
    out: list[str] = []
    for k, part in enumerate(parts):
        if k and not (items[k][0] == RECALLED_NAME and items[k - 1][0] == RECALLED_NAME):
            out.append("")
        out.append(part)
    return out


def folded_system(text: str) -> str:
    """The system text as the first user turn carries it when the template has no system role."""
    return f"<system>\n{text}\n</system>"


def tool_call_text(call: ToolCall) -> str:
    return f'<tool_call name="{call.name}" id="{call.id}">{call.arguments}</tool_call>'


def tool_result_text(message: Message) -> str:
    label = f' name="{message.name}"' if message.name else ""
    return f'<tool_result{label} id="{message.tool_call_id or ""}">\n{message.content}\n</tool_result>'


def alnum9(value: str, salt: int = 0) -> str:
    """A deterministic 9-character alphanumeric id for ``value`` (the id itself when it already is one)."""
    if salt == 0 and len(value) == 9 and value.isascii() and value.isalnum():
        return value
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    n = int.from_bytes(hashlib.sha256(f"{value}#{salt}".encode()).digest()[:8], "big")
    out = []
    for _ in range(9):
        n, r = divmod(n, len(alphabet))
        out.append(alphabet[r])
    return "".join(out)


# ---- the step --------------------------------------------------------------------------------

@dataclass
class _Out:
    role: str
    content: str
    sources: list[int]
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    turn: int | None = None

    def message(self) -> Message:
        return Message(role=self.role, content=self.content, tool_calls=self.tool_calls,  # type: ignore[arg-type]
                       tool_call_id=self.tool_call_id, name=self.name, turn=self.turn)


def _join(a: str, b: str) -> str:
    if not a:
        return b
    if not b:
        return a
    return a + MERGE_SEPARATOR + b


def shape(messages: Iterable[Message], rules: PromptShape) -> ShapedPrompt:
    """The builder's ``messages`` shaped by ``rules`` (pure and deterministic; see the module docstring)."""
    msgs = list(messages)
    how: list[How] = ["kept"] * len(msgs)
    if not rules.shapes:
        return ShapedPrompt(messages=msgs, placements=[Placement("kept", i) for i in range(len(msgs))], shape=rules,
                            original=msgs)

    # 1. the leading system messages, and the late ones
    head_end = 0
    while head_end < len(msgs) and msgs[head_end].role == "system":
        head_end += 1
    head_parts: list[str] = []
    for i in range(head_end):
        m = msgs[i]
        if i == 0:
            head_parts.append(m.content)
        else:
            how[i] = "system"
            if m.content:
                head_parts.append(f"{section_heading(m.name)}\n{m.content}")
    head_text = "\n\n".join(p for p in head_parts if p)
    late: list[int] = [i for i in range(head_end, len(msgs)) if msgs[i].role == "system"]
    for i in late:
        how[i] = "context"

    # 2. tool exchanges the template cannot take natively become text; ids mapped
    id_map: dict[str, str] = {}
    if rules.tool_ids == "alnum9":
        used: set[str] = set()
        for m in msgs:
            for cid in [c.id for c in m.tool_calls] + ([m.tool_call_id] if m.tool_call_id else []):
                if cid in id_map:
                    continue
                salt, new = 0, alnum9(cid)
                while new in used:
                    salt += 1
                    new = alnum9(cid, salt)
                used.add(new)
                id_map[cid] = new
    as_text: set[str] = set()  # call ids whose exchange is written as text
    if rules.calls_drop_content and rules.tool_role:
        for m in msgs:
            if m.role == "assistant" and m.tool_calls and m.content.strip():
                as_text.update(c.id for c in m.tool_calls)

    body: list[_Out] = []
    for i in range(head_end, len(msgs)):
        m = msgs[i]
        if m.role == "system":
            continue
        if m.role == "tool":
            if not rules.tool_role or (m.tool_call_id in as_text):
                how[i] = "tool_text"
                body.append(_Out("user", tool_result_text(m), [i], turn=m.turn))
            else:
                result_id = id_map.get(m.tool_call_id or "", m.tool_call_id or "") if m.tool_call_id else None
                body.append(_Out("tool", m.content, [i], tool_call_id=result_id, name=m.name, turn=m.turn))
            continue
        if m.role == "assistant" and m.tool_calls:
            if not rules.tool_role or any(c.id in as_text for c in m.tool_calls):
                how[i] = "tool_text"
                text = "\n".join([m.content, *(tool_call_text(c) for c in m.tool_calls)]).strip("\n")
                body.append(_Out("assistant", text, [i], turn=m.turn))
                continue
            calls = tuple(c.model_copy(update={"id": id_map.get(c.id, c.id)}) for c in m.tool_calls)
            if rules.single_tool_call and len(calls) > 1:
                how[i] = "split"
                for k, c in enumerate(calls):
                    body.append(_Out("assistant", m.content if k == 0 else "", [i], tool_calls=(c,), turn=m.turn))
                continue
            body.append(_Out("assistant", m.content, [i], tool_calls=calls, turn=m.turn))
            continue
        body.append(_Out(m.role, m.content, [i], name=m.name if m.role == "user" else None, turn=m.turn))

    if rules.single_tool_call:
        body = _pair_split_calls(body)

    # 3. alternation: merge adjacent user/user and assistant/assistant (never across tool messages)
    if rules.alternate:
        merged: list[_Out] = []
        for o in body:
            prev = merged[-1] if merged else None
            if prev is not None and prev.role == o.role and o.role in ("user", "assistant") and not prev.tool_calls:
                prev.content = _join(prev.content, o.content)
                prev.tool_calls = o.tool_calls
                for s in o.sources:
                    if how[s] == "kept":
                        how[s] = "merged"
                prev.sources.extend(o.sources)
                continue
            merged.append(o)
        body = merged

    # 4. the late system messages: one context block after the current (last) user message's text
    if late:
        block = context_block([(msgs[i].name, msgs[i].content) for i in late])
        users = [k for k, o in enumerate(body) if o.role == "user"]
        if users:
            target = body[users[-1]]
            target.content = f"{target.content}\n\n{block}" if target.content else block
            target.sources.extend(late)
        else:
            body.append(_Out("user", block, list(late)))

    # 5. a conversation opening with an assistant gets a marked user placeholder
    placeholder: _Out | None = None
    if rules.alternate and body and body[0].role != "user":
        placeholder = _Out("user", PLACEHOLDER_TEXT, [])
        body.insert(0, placeholder)

    # 6. the system text: one leading message, or folded into the first user turn
    out: list[_Out] = []
    if rules.system == "fold":
        if head_end:
            for i in range(head_end):
                how[i] = "folded"
            folded = folded_system(head_text)
            first = next((o for o in body if o.role == "user"), None)
            if first is None:
                body.insert(0, _Out("user", folded, list(range(head_end))))
            else:
                first.content = f"{folded}\n\n{first.content}" if first.content else folded
                first.sources.extend(range(head_end))
        out = body
    else:
        if head_end:
            out.append(_Out("system", head_text, list(range(head_end)), turn=msgs[0].turn))
        out.extend(body)

    placements: list[Placement | None] = [None] * len(msgs)
    for k, o in enumerate(out):
        for s in o.sources:
            if placements[s] is None:
                placements[s] = Placement(how[s], k)
    final = [p if p is not None else Placement(how[i], 0) for i, p in enumerate(placements)]
    placeholder_at = next((k for k, o in enumerate(out) if o is placeholder), None)
    return ShapedPrompt(messages=[o.message() for o in out], placements=final, shape=rules,
                        placeholder=placeholder_at, id_map={k: v for k, v in id_map.items() if k != v}, original=msgs)


def _pair_split_calls(body: list[_Out]) -> list[_Out]:
    """After splitting parallel calls: each call's result right after its own assistant message."""
    out: list[_Out] = []
    i = 0
    while i < len(body):
        o = body[i]
        run = [o]
        i += 1
        if o.role == "assistant" and o.tool_calls:
            while i < len(body) and body[i].role == "assistant" and body[i].sources == o.sources:
                run.append(body[i])
                i += 1
        if len(run) == 1:
            out.append(o)
            continue
        results: list[_Out] = []
        while i < len(body) and body[i].role == "tool":
            results.append(body[i])
            i += 1
        for a in run:
            out.append(a)
            out.extend(r for r in results if r.tool_call_id == a.tool_calls[0].id)
        ids = {a.tool_calls[0].id for a in run}
        out.extend(r for r in results if r.tool_call_id not in ids)
    return out


def wire_json(messages: Sequence[Message]) -> str:
    """The shaped messages as JSON (for debugging and tests)."""
    return json.dumps([m.wire() for m in messages], ensure_ascii=False, indent=1)
