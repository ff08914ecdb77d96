"""Fidelity levels: how much of a message survives compression (seed 003).

- ``L0`` — the original message.
- ``L1`` — head and tail of the content kept, with a marker naming how many tokens were cut:
  ``"<head>\\n[… 812 tokens cut …]\\n<tail>"``.
- ``L2`` — head only, with a marker: ``"<head>\\n[… 860 more tokens cut]"``.
- ``L3`` — a one-line placeholder naming role, turn and original size:
  ``"[assistant turn 3: 240 tokens omitted]"``. A hint may follow the size (``placeholder_hint``,
  a format string with ``{turn}``, ``{index}``, ``{role}`` and ``{tokens}``), but only when the
  caller passes one: the builder never mentions a primitive (``recall``) that was not enabled.

Only the ``content`` changes: roles, tool calls and ``tool_call_id`` are kept, so an assistant
tool call and its results stay a valid pair at any level. Cuts are exact token cuts
(:meth:`TokenCounter.truncate_text` / :meth:`TokenCounter.tail_text`); to keep compression cheap on
very long texts, only a slice of characters large enough to hold the wanted tokens is encoded.
A compressed form is used only when it is smaller than the original; otherwise the message stays
at ``L0``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..messages import Message
from ..tokens import TokenCounter
from .decisions import Fidelity

LEVELS: tuple[Fidelity, ...] = ("L0", "L1", "L2", "L3")
RANK: dict[str, int] = {lvl: i for i, lvl in enumerate(LEVELS)}

# A token is rarely longer than this many characters; a slice of ``n * _CHARS_PER_TOKEN_CAP`` chars
# holds the first ``n`` tokens of nearly any text (and if it holds fewer, the cut is just shorter).
_CHARS_PER_TOKEN_CAP = 12


@dataclass(frozen=True)
class FidelityPolicy:
    """Sizes of the compressed forms (in tokens of content) and the optional placeholder hint."""

    l1_head: int = 96
    l1_tail: int = 32
    l2_head: int = 48
    placeholder_hint: str | None = None

    def __post_init__(self) -> None:
        if min(self.l1_head, self.l1_tail, self.l2_head) < 1:
            raise ValueError("FidelityPolicy sizes must be at least 1 token")


def head_text(counter: TokenCounter, text: str, n: int) -> str:
    """The first ``n`` tokens of ``text`` (exact cut, encoding only a bounded slice)."""
    return counter.truncate_text(text[: n * _CHARS_PER_TOKEN_CAP + 16], n)


def tail_text(counter: TokenCounter, text: str, n: int) -> str:
    """The last ``n`` tokens of ``text`` (exact cut, encoding only a bounded slice)."""
    cap = n * _CHARS_PER_TOKEN_CAP + 16
    return counter.tail_text(text[-cap:] if len(text) > cap else text, n)


def l1_text(counter: TokenCounter, text: str, content_tokens: int, head: int, tail: int) -> str | None:
    """Head + marker + tail, or ``None`` when the text is too short to gain anything."""
    if content_tokens <= head + tail + 8:
        return None
    h = head_text(counter, text, head)
    t = tail_text(counter, text, tail)
    cut = content_tokens - counter.count_text(h) - counter.count_text(t)
    if cut <= 0:
        return None
    return f"{h}\n[… {cut} tokens cut …]\n{t}"


def l2_text(counter: TokenCounter, text: str, content_tokens: int, head: int) -> str | None:
    """Head + marker, or ``None`` when the text is too short to gain anything."""
    if content_tokens <= head + 8:
        return None
    h = head_text(counter, text, head)
    cut = content_tokens - counter.count_text(h)
    if cut <= 0:
        return None
    return f"{h}\n[… {cut} more tokens cut]"


def placeholder_text(role: str, turn: int | None, index: int, tokens: int, hint: str | None = None) -> str:
    """The L3 one-line placeholder (see the module docstring)."""
    where = f"turn {turn}" if turn is not None else f"message {index}"
    text = f"[{role} {where}: {tokens} tokens omitted"
    if hint:
        text += " — " + hint.format(turn=turn if turn is not None else "?", index=index, role=role, tokens=tokens)
    return text + "]"


def render(
    counter: TokenCounter,
    message: Message,
    level: Fidelity,
    *,
    content_tokens: int,
    tokens: int,
    turn: int | None,
    index: int,
    policy: FidelityPolicy,
) -> Message | None:
    """``message`` at ``level`` (``None`` when that level would not be smaller than the original).

    ``content_tokens`` is the token count of ``message.content``; ``tokens`` the message's full
    count (what the placeholder reports as the original size).
    """
    if level == "L0":
        return message
    text = message.content
    new: str | None
    if level == "L1":
        new = l1_text(counter, text, content_tokens, policy.l1_head, policy.l1_tail)
    elif level == "L2":
        new = l2_text(counter, text, content_tokens, policy.l2_head)
    else:
        new = placeholder_text(message.role, turn, index, tokens, policy.placeholder_hint)
    if new is None:
        return None
    return message.replace(content=new)


def fit_text(counter: TokenCounter, text: str, content_tokens: int, target: int) -> tuple[str, Fidelity] | None:
    """Compress ``text`` to at most ``target`` content tokens: L1 when there is room, else L2.

    Used for sections, whose compressed size follows the space they are given rather than fixed
    sizes. ``None`` when ``target`` is too small for a meaningful head (the section is dropped).
    """
    if content_tokens <= target:
        return text, "L0"
    marker_room = 16
    if target >= 64:
        room = target - marker_room
        head = room * 2 // 3
        new = l1_text(counter, text, content_tokens, head, room - head)
        if new is not None and counter.count_text(new) <= target:
            return new, "L1"
    if target >= 24:
        new = l2_text(counter, text, content_tokens, target - marker_room)
        if new is not None and counter.count_text(new) <= target:
            return new, "L2"
    return None
