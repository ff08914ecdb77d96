"""Every error arcana_jupyter raises on purpose, in one tree.

    ArcanaError
    ├── ConfigError            bad settings: unknown model string, missing key, bad option value
    ├── ProviderError          an LLM endpoint failed
    │   ├── AuthenticationError    401 / 403
    │   ├── NotFoundError          404 (unknown model or endpoint)
    │   ├── BadRequestError        400 / 422
    │   ├── RateLimitError         429 after all retries
    │   ├── ServerError            5xx after all retries
    │   ├── ConnectionFailed       could not connect / connection dropped after retries
    │   ├── StreamError            a stream broke off or carried garbage
    │   └── ReplayDivergence       the replay provider's strict mode saw a different request
    ├── TraceError             a trace file could not be read
    │   └── CorruptTraceError      a line that is not a valid event (file, line, what is wrong)
    └── MemoryStoreError       the memory database failed

Errors the *model* can fix (bad tool arguments, an unknown turn in ``recall``) are never raised:
they become structured tool results. These exceptions are for the programmer and the user, and
their messages say what to do. None of them ever contains an API key.
"""

from __future__ import annotations


class ArcanaError(Exception):
    """Base of all arcana_jupyter errors."""


class ConfigError(ArcanaError):
    """A setting is missing or wrong; the message says which one and what to set."""


class ProviderError(ArcanaError):
    """An LLM endpoint failed. ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status


class AuthenticationError(ProviderError):
    pass


class NotFoundError(ProviderError):
    pass


class BadRequestError(ProviderError):
    pass


class RateLimitError(ProviderError):
    pass


class ServerError(ProviderError):
    pass


class ConnectionFailed(ProviderError):
    pass


class StreamError(ProviderError):
    pass


class ReplayDivergence(ProviderError):
    """Strict replay saw a request that differs from the recorded one; ``report`` says how."""

    def __init__(self, message: str, *, report: str = "") -> None:
        super().__init__(message, provider="replay")
        self.report = report


class TraceError(ArcanaError):
    pass


class CorruptTraceError(TraceError):
    def __init__(self, path: str, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


class MemoryStoreError(ArcanaError):
    pass
