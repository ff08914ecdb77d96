"""Every error arcana_jupyter raises on purpose, in one tree.

    ArcanaError
    ├── ConfigError            bad settings: unknown model string, missing key, bad option value
    ├── ProviderError          an LLM endpoint failed
    │   ├── AuthenticationError    401 / 403
    │   ├── NotFoundError          404 (unknown model or endpoint)
    │   ├── BadRequestError        400 / 422
    │   │   ├── ContextLengthError     the prompt is longer than the model's context window
    │   │   └── TemplateRefusedError   the server's chat template refused the prompt's shape
    │   ├── RateLimitError         429 after all retries
    │   ├── ServerError            5xx after all retries
    │   ├── ConnectionFailed       could not connect / connection dropped after retries
    │   ├── StreamError            a stream broke off or carried garbage
    │   └── ReplayDivergence       the replay provider's strict mode saw a different request
    ├── TraceError             a trace file could not be read
    │   ├── CorruptTraceError      a line that is not a valid event (file, line, what is wrong)
    │   └── RunLockedError         another writer holds the run (its trace file is locked)
    └── MemoryStoreError       the memory database failed

Errors the *model* can fix (bad tool arguments, an unknown turn in ``recall``) are never raised:
they become structured tool results. These exceptions are for the programmer and the user, and
their messages say what to do. None of them ever contains an API key: every message passes
through :func:`arcana_jupyter.trace.redact.mask_secrets` (the one masking function) when the error
is made and again when it is printed, whoever built the text.
"""

from __future__ import annotations


def _masked(value: object) -> object:
    if not isinstance(value, str):
        return value
    from .trace.redact import mask_secrets  # lazy: trace/ imports this module

    return mask_secrets(value)


class ArcanaError(Exception):
    """Base of all arcana_jupyter errors. Its message never carries a secret (see the module doc)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(_masked(a) for a in args))

    def __str__(self) -> str:
        return str(_masked(super().__str__()))


class ConfigError(ArcanaError):
    """A setting is missing or wrong; the message says which one and what to set."""


class ProviderError(ArcanaError):
    """An LLM endpoint failed. ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


class AuthenticationError(ProviderError):
    """401 / 403: the key is missing, wrong or lacks access; the message says which setting."""


class NotFoundError(ProviderError):
    """404: an unknown model or endpoint; the message quotes the provider."""


class BadRequestError(ProviderError):
    """400 / 422: the provider rejected the request's payload; the message quotes why."""


class ContextLengthError(BadRequestError):
    """The provider refused the prompt as longer than its context window. ``prompt_tokens`` and
    ``limit`` are the provider's own figures when it gave them. The runtime shrinks the budget and
    retries once; seeing this at all means the token count drifted from the model's."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None,
                 prompt_tokens: int | None = None, limit: int | None = None) -> None:
        super().__init__(message, provider=provider, status=status)
        self.prompt_tokens = prompt_tokens
        self.limit = limit


_CONTEXT_PATTERNS = (
    "context length", "context_length", "context window", "maximum context", "too many tokens",
    "prompt is too long", "exceed context", "exceeds the context", "reduce the length",
)


def looks_like_context_length(message: str) -> bool:
    """True when a provider's 400 message says the prompt does not fit (OpenAI, Anthropic, llama.cpp, vLLM)."""
    low = message.lower()
    return any(p in low for p in _CONTEXT_PATTERNS)


class TemplateRefusedError(BadRequestError):
    """The server rendered the prompt through the model's chat template and the template refused it
    (vLLM, TGI, LM Studio answer 400 with the template's own message: "System role not supported",
    "Conversation roles must alternate ..."). The runtime reshapes the prompt (the ``strict`` shape:
    the system text folded into the first user turn, roles alternating, tool calls and results as text),
    retries once and keeps that shape for the session; the trace records both."""


_TEMPLATE_PATTERNS = (
    "roles must alternate", "role not supported", "system role", "only user and assistant roles",
    "conversation roles", "chat template", "chat_template", "template error", "jinja", "tool role",
    "raise_exception", "tool call ids", "after the optional system message", "unexpected role",
)


def looks_like_template_refusal(message: str) -> bool:
    """True when a server's 400/422 message is its chat template refusing the prompt's roles or layout."""
    low = message.lower()
    return any(p in low for p in _TEMPLATE_PATTERNS)


class RateLimitError(ProviderError):
    """429 after every retry (Retry-After honoured); wait, or lower the request rate."""


class ServerError(ProviderError):
    """5xx after every retry: the provider is failing, not the request."""


class ConnectionFailed(ProviderError):
    """The endpoint could not be reached, or dropped the connection, after every retry."""


class StreamError(ProviderError):
    """A stream broke off, or carried something that is not the documented protocol."""


class ReplayDivergence(ProviderError):
    """Strict replay saw a request that differs from the recorded one; ``report`` says how."""

    def __init__(self, message: str, *, report: str = "") -> None:
        super().__init__(message, provider="replay")
        self.report = report


class TraceError(ArcanaError):
    """A trace file could not be read or written; the message names the file."""


class CorruptTraceError(TraceError):
    def __init__(self, path: str, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


class RunLockedError(TraceError):
    """Another writer (a live process, or another open session in this one) holds the run's lock:
    two writers would interleave their events. The lock dies with its process."""


class MemoryStoreError(ArcanaError):
    """The memory database could not be opened, migrated or written."""


def is_extension_panic(exc: BaseException) -> bool:
    """``pyo3_runtime.PanicException``: a panic in a Rust extension (pydantic-core, tokenizers) — on a
    hostile input most often an allocation it could not make. It is a ``BaseException``, not an
    ``Exception``: an ``except Exception`` lets it through, so the few places that turn running out of
    memory into one line (``arcana``'s commands, the replay frames) ask this too."""
    return type(exc).__name__ == "PanicException" and type(exc).__module__ in ("pyo3_runtime", "builtins")
