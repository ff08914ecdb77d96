"""Anthropic's prompt cache, as its documentation states the rules, behind a loopback Messages API.

https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching: a prompt is the blocks of
``tools``, then ``system``, then ``messages`` in order; a block marked ``cache_control`` (at most
four per request, ``{"type": "ephemeral"}`` with an optional ``ttl`` of ``5m`` or ``1h``, never on an
empty text block, only on tools, system text blocks and message blocks of the cacheable types)
caches the prefix ending with it, if that prefix is at least the model's minimum (1,024 tokens for
the Sonnet and Opus models); a later request reads the longest cached prefix ending at one of its
breakpoints or at one of the 20 block boundaries before each. ``usage`` then says
``cache_read_input_tokens`` (read), ``cache_creation_input_tokens`` (written, up to the last
breakpoint) and ``input_tokens`` (the rest). Tokens are counted with cl100k_base (Anthropic's own
tokenizer is not public; the rules do not depend on which).

:class:`PromptCache` answers each request of a :class:`~servers.scripted.ScriptedServer` with
``responder=`` (a short text reply, streamed or not) and refuses, with the API's 400, a request
that breaks a rule — so a test that passes sent only what the API accepts.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from arcana_jupyter.tokens import TokenCounter

from . import fake_anthropic as an
from .scripted import Recorded, Reply

MIN_CACHEABLE = 1024
LOOKBACK = 20
MAX_BREAKPOINTS = 4
CACHEABLE_TYPES = {"text", "image", "document", "tool_use", "tool_result"}


class Refused(Exception):
    pass


@dataclass
class PromptCache:
    """A stateful Messages API that applies the prompt cache's rules (see the module docstring)."""

    minimum: int = MIN_CACHEABLE
    reply_text: str = "Noted."
    cached: set[str] = field(default_factory=set)
    usages: list[dict[str, int]] = field(default_factory=list)
    """The ``usage`` of every answer, in order."""
    refusals: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _counter: TokenCounter = field(default_factory=TokenCounter)

    def __call__(self, recorded: Recorded) -> Reply:
        body = recorded.json
        try:
            blocks, marks = self._blocks(body)
        except Refused as exc:
            self.refusals.append(str(exc))
            return an.error(400, str(exc))
        with self._lock:
            usage = self._account(blocks, marks)
            self.usages.append(usage)
        if body.get("stream"):
            events = an.stream([an.text_block(self.reply_text)], input_tokens=usage["input_tokens"],
                               cache_read=usage["cache_read_input_tokens"])
            start = events[0][1]["message"]["usage"]
            start["cache_creation_input_tokens"] = usage["cache_creation_input_tokens"]
            return Reply(events=events)
        return an.message([an.text_block(self.reply_text)], input_tokens=usage["input_tokens"],
                          cache_read=usage["cache_read_input_tokens"],
                          cache_write=usage["cache_creation_input_tokens"])

    # ---- the rules ----------------------------------------------------------------------------
    def _blocks(self, body: Any) -> tuple[list[tuple[str, int]], list[int]]:
        """The prompt as (hash of the block, its tokens) in order, and the indexes of the breakpoints."""
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or "max_tokens" not in body:
            raise Refused("messages and max_tokens are required")
        blocks: list[tuple[str, int]] = []
        marks: list[int] = []

        def add(block: dict[str, Any], kind: str) -> None:
            control = block.get("cache_control")
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            text = json.dumps(plain, sort_keys=True, ensure_ascii=False)
            blocks.append((hashlib.sha256(text.encode()).hexdigest(), self._counter.count_text(text)))
            if control is None:
                return
            if not isinstance(control, dict) or control.get("type") != "ephemeral" or \
                    set(control) - {"type", "ttl"} or control.get("ttl", "5m") not in ("5m", "1h"):
                raise Refused(f"cache_control: unknown value {control!r}")
            if kind == "message" and block.get("type") not in CACHEABLE_TYPES:
                raise Refused(f"cache_control cannot be set on a {block.get('type')!r} block")
            if block.get("type") == "text" and not block.get("text"):
                raise Refused("cache_control cannot be set for empty text blocks")
            marks.append(len(blocks) - 1)

        for tool in body.get("tools") or []:
            add(tool, "tool")
        system = body.get("system")
        if isinstance(system, list):
            for block in system:
                if block.get("type") != "text":
                    raise Refused("system: only text blocks")
                add(block, "system")
        elif isinstance(system, str):
            add({"type": "text", "text": system}, "system")
        for k, message in enumerate(body["messages"]):
            if message.get("role") not in ("user", "assistant"):
                raise Refused(f"messages.{k}.role: Input should be 'user' or 'assistant'")
            if k and message["role"] == body["messages"][k - 1]["role"]:
                raise Refused(f"messages: roles must alternate (messages {k - 1} and {k} are both {message['role']})")
            content = message.get("content")
            for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
                add(block, "message")
        if len(marks) > MAX_BREAKPOINTS:
            raise Refused(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
                          f"Found {len(marks)}.")
        return blocks, marks

    def _account(self, blocks: list[tuple[str, int]], marks: list[int]) -> dict[str, int]:
        prefix: list[str] = []
        tokens = [0]
        digest = hashlib.sha256()
        for h, n in blocks:
            digest.update(h.encode())
            prefix.append(digest.hexdigest())
            tokens.append(tokens[-1] + n)
        total = tokens[-1]
        read_at = 0  # blocks read from the cache
        for m in marks:
            for b in range(m, max(-1, m - LOOKBACK - 1), -1):
                if prefix[b] in self.cached:
                    read_at = max(read_at, b + 1)
                    break
        read = tokens[read_at]
        written = 0
        for m in marks:
            if m + 1 > read_at and tokens[m + 1] >= self.minimum:
                self.cached.add(prefix[m])
                written = tokens[m + 1] - read
        return {"input_tokens": total - read - written, "output_tokens": 2,
                "cache_read_input_tokens": read, "cache_creation_input_tokens": written}
