"""The one small async interface every provider implements, and the types it exchanges.

A provider turns an :class:`LLMRequest` into an :class:`LLMResponse`, either in one piece
(:meth:`Provider.complete`) or as a stream of :class:`StreamChunk` ending in the full response
(:meth:`Provider.stream`). Wire formats live in one module each; endpoints that share a wire
format (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp server, LM Studio) are configuration, not code.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..messages import Message, ToolCall, ToolSpec
from ..tokens import TokenCounter
from .chat_templates import shape_for_model
from .shaping import PromptShape


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    """Prompt tokens the provider served from its prefix cache, when it reports them."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
        )


class LLMRequest(BaseModel):
    model: str
    """The provider's own model name (``gpt-4o-mini``), without the ``provider:`` prefix."""
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    response_format: dict[str, Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    """``"auto"`` (the default when tools are given), ``"none"``, ``"required"``, or
    ``{"type": "function", "function": {"name": ...}}`` to force one tool (OpenAI shape; other
    wire formats translate it)."""
    cache_key: str | None = None
    """One id for the calls of one conversation, for a provider whose prompt cache is routed by a
    key (OpenAI's ``prompt_cache_key``); not part of the request digest, ignored by the rest."""


FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "cancelled", "error"]


class LLMResponse(BaseModel):
    message: Message
    """The assistant message: text and/or tool calls."""
    usage: Usage = Field(default_factory=Usage)
    finish_reason: FinishReason | str = "stop"
    model: str = ""
    """The model name the provider reported."""
    raw_id: str | None = None
    attempts: int = 1
    """HTTP attempts it took (1 = no retry); 1 for in-process providers."""
    prompt_tokens: int | None = None
    """The prompt's size as the model counted it, when ``usage.input_tokens`` adds up several
    model calls (the local model decides on tools, then answers): what calibration compares with."""


class StreamChunk(BaseModel):
    """A piece of a streamed answer. The last chunk of a stream carries ``response``."""

    text: str = ""
    tool_call_delta: ToolCall | None = None
    response: LLMResponse | None = None


class Provider(abc.ABC):
    """An LLM endpoint. Implementations must be safe to call again after any error."""

    name: str = "provider"

    @abc.abstractmethod
    async def complete(self, request: LLMRequest) -> LLMResponse:
        """Send the request and return the whole answer."""

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        """Stream the answer; the default streams a completed answer as one chunk."""
        response = await self.complete(request)
        if response.message.content:
            yield StreamChunk(text=response.message.content)
        yield StreamChunk(response=response)

    count_margin: float = 1.15
    """How many of the model's tokens one counted token may be, before any call has been measured
    (the runtime's calibration starts here and follows the ``prompt_tokens`` the provider reports).
    Providers whose :meth:`token_counter` is exact use 1.0."""

    def token_counter(self, model: str | None = None) -> TokenCounter:
        """The counter whose tokens this provider's model uses: tiktoken's encoding of an OpenAI
        model, else ``cl100k_base`` (inexact: see :attr:`count_margin`)."""
        return TokenCounter(model)

    def initial_margin(self, counter: TokenCounter) -> float:
        """The calibration ratio to start from: 1.0 for an exact counter, else :attr:`count_margin`."""
        return 1.0 if counter.exact else self.count_margin

    async def prompt_shape(self, model: str | None = None) -> PromptShape:
        """The shape of the prompts this provider's model takes (providers/shaping.py): by default
        its model family's by name (chat_templates.py), else the portable shape. Providers that can
        read the model's own chat template probe it instead."""
        return shape_for_model(model)

    async def aclose(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections and other resources."""


LOCAL_KIND = "local"
"""The :func:`provider_kind` of the bundled llama.cpp model (providers/local.py)."""

OFFLINE_KINDS = (LOCAL_KIND, "function", "scripted", "replay")
"""Kinds with no API key behind them: settings such as ``memory_learnings="auto"`` make no extra call."""


def provider_kind(provider: Any) -> str:
    """Which kind of model a provider talks to: its ``name`` (``local``, ``openai``, ``function`` ...),
    or for a replay the provider of the recorded run, so settings that depend on the model (which tools
    ``auto`` offers, whether learnings are summarised) follow the recording, not the replay.

    The one answer to "is this the local / recorded model?" (runtime/builtin_tools.py, memory)."""
    return str(getattr(provider, "recorded_provider", None) or getattr(provider, "name", ""))


def is_local(provider: Any) -> bool:
    """True when the model is the bundled local one (also while a recording of it is replayed)."""
    return provider_kind(provider) == LOCAL_KIND


def is_offline(provider: Any) -> bool:
    """True for a provider with no API key behind it (:data:`OFFLINE_KINDS`, also when replayed)."""
    return provider_kind(provider) in OFFLINE_KINDS
