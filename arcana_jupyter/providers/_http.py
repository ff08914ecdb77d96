"""The HTTP connection every remote provider shares: one httpx client, retries, error mapping.

Wire formats (``openai_compat``, ``anthropic``) build JSON bodies and parse answers; this module
owns everything about the connection:

- one :class:`httpx.AsyncClient` per provider, with a connect and a read timeout, so a silent
  server or a stream that stops mid-way raises instead of hanging;
- retries with exponential backoff and jitter on 429, 5xx and connection errors, honouring
  ``Retry-After`` (seconds or an HTTP date; ``retry-after-ms`` too), capped;
- the mapping of failures onto :mod:`arcana_jupyter.exceptions` at one boundary, quoting the
  provider's own error message from the JSON body;
- keeping API keys out of every exception message: any text that leaves this module goes through
  :meth:`HTTPConnection.scrub`.

Tests make retries fast and observable by passing ``sleep`` (an async callable that records the
delay) and ``rng`` (a seeded :class:`random.Random`).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..exceptions import (
    AuthenticationError,
    BadRequestError,
    ConnectionFailed,
    ContextLengthError,
    NotFoundError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
    looks_like_context_length,
)

Sleep = Callable[[float], Awaitable[None]]

_KEYLIKE = re.compile(r"\b(?:sk-ant-|sk-|xai-|gsk_)[A-Za-z0-9_\-]{8,}")
_BEARER = re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{8,}")
_MAX_QUOTE = 600


@dataclass
class RetryPolicy:
    """How often and how long to wait before trying a request again.

    The n-th retry (n = 0, 1, ...) waits ``min(max_delay, base_delay * 2**n)`` scaled by a random
    factor in [0.5, 1.0) (jitter), unless the server said how long with ``Retry-After``: then
    exactly that, capped at ``retry_after_cap`` seconds.
    """

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 20.0
    retry_after_cap: float = 60.0
    sleep: Sleep = field(default=asyncio.sleep)
    rng: random.Random = field(default_factory=random.Random)

    def backoff(self, retry: int) -> float:
        raw = min(self.max_delay, self.base_delay * (2**retry))
        return raw * (0.5 + self.rng.random() / 2)

    def delay(self, retry: int, response: httpx.Response | None) -> float:
        hinted = retry_after_seconds(response.headers) if response is not None else None
        if hinted is not None:
            return min(max(hinted, 0.0), self.retry_after_cap)
        return self.backoff(retry)


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``Retry-After`` seconds or date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    value = value.strip()
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def error_message_from_body(text: str) -> str:
    """The provider's own error message from an error body (OpenAI, Anthropic, FastAPI, Ollama shapes)."""
    text = text.strip()
    if not text:
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        return text[:_MAX_QUOTE]
    found = _find_message(data)
    return (found if found is not None else text)[:_MAX_QUOTE]


def _find_message(data: Any) -> str | None:
    if isinstance(data, str):
        return data
    if isinstance(data, Mapping):
        for key in ("error", "message", "detail", "msg"):
            if key in data:
                inner = _find_message(data[key])
                if inner:
                    if key == "error" and isinstance(data[key], Mapping):
                        kind = data[key].get("type") or data[key].get("code")
                        if isinstance(kind, str) and kind and kind not in inner:
                            return f"{inner} ({kind})"
                    return inner
        return None
    if isinstance(data, list) and data:
        parts = [p for p in (_find_message(item) for item in data) if p]
        return "; ".join(parts) if parts else None
    return None


@dataclass
class SSEEvent:
    """One server-sent event: the ``event:`` name (``""`` when absent) and its joined ``data:`` lines."""

    event: str
    data: str


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[SSEEvent]:
    """Parse a server-sent-event stream (https://html.spec.whatwg.org/#event-stream-interpretation)."""
    event = ""
    data: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield SSEEvent(event, "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        # "id" and "retry" fields carry nothing we use
    if data:
        yield SSEEvent(event, "\n".join(data))


class HTTPConnection:
    """One provider's connection: base URL, headers (with the key), timeouts, retries.

    Args:
        provider: the provider's name, used in every error message.
        base_url: the API root, e.g. ``https://api.openai.com/v1``.
        headers: sent with every request (the API key goes here).
        secrets: strings that must never appear in an error message (the API key).
        timeout: seconds to wait for a connection and between two bytes of an answer.
        retry: the retry policy; ``RetryPolicy(max_retries=...)`` by default.
        key_hint: appended to authentication errors, e.g. "set OPENAI_API_KEY".
        transport: an httpx transport (tests pass ``httpx.MockTransport`` for parsing tests).
    """

    def __init__(
        self,
        *,
        provider: str,
        base_url: str,
        headers: Mapping[str, str] | None = None,
        secrets: Sequence[str | None] = (),
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        key_hint: str = "",
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.key_hint = key_hint
        self._secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)
        self._headers = dict(headers or {})
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _current_client(self) -> httpx.AsyncClient:
        """The client for the running event loop: a connection pool cannot outlive its loop, and a
        script may call ``asyncio.run`` more than once with the same provider."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.is_closed or self._client_loop is not loop:
            self._client = httpx.AsyncClient(
                headers=self._headers,
                timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 15.0)),
                transport=self._transport,
                follow_redirects=True,
            )
            self._client_loop = loop
        return self._client

    def __repr__(self) -> str:
        return f"HTTPConnection(provider={self.provider!r}, base_url={self.base_url!r})"

    def scrub(self, text: str) -> str:
        """``text`` with every configured secret and anything key-shaped replaced by ``[REDACTED]``."""
        for secret in self._secrets:
            text = text.replace(secret, "[REDACTED]")
        text = _KEYLIKE.sub("[REDACTED]", text)
        return _BEARER.sub(r"\1 [REDACTED]", text)

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    async def aclose(self) -> None:
        """Close the connection pool (the next request opens a new one)."""
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.aclose()

    # -- requests ---------------------------------------------------------------------------------

    async def post_json(self, path: str, body: Mapping[str, Any]) -> tuple[Any, int]:
        """POST ``body`` as JSON and return (the decoded JSON answer, number of attempts)."""
        async with self._send(path, body, stream=False) as (response, attempts):
            text = response.text
        try:
            return json.loads(text), attempts
        except ValueError as exc:
            raise ProviderError(
                self.scrub(
                    f"{self.provider}: the answer from POST {self.url(path)} is not valid JSON "
                    f"({exc}); it starts with {text[:200]!r}. Is base_url an OpenAI/Anthropic-style API?"
                ),
                provider=self.provider,
                status=response.status_code,
            ) from None

    @asynccontextmanager
    async def stream_lines(self, path: str, body: Mapping[str, Any]) -> AsyncIterator[tuple[AsyncIterator[str], int]]:
        """POST ``body`` and yield (the answer's lines, attempts) once a 2xx status arrived.

        Failures before the first byte of the body are retried like :meth:`post_json`. Once lines
        flow, a dropped connection or a read timeout raises :class:`StreamError` (never retried:
        part of the answer was already handed out).
        """
        async with self._send(path, body, stream=True) as (response, attempts):
            yield self._guarded_lines(response, path), attempts

    async def _guarded_lines(self, response: httpx.Response, path: str) -> AsyncIterator[str]:
        try:
            async for line in response.aiter_lines():
                yield line
        except httpx.TimeoutException as exc:
            raise StreamError(
                f"{self.provider}: the stream from {self.url(path)} stalled: no data for {self.timeout:g} s "
                f"(read timeout). The answer is incomplete.",
                provider=self.provider,
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.NetworkError) as exc:
            raise StreamError(
                self.scrub(
                    f"{self.provider}: the connection dropped in the middle of the stream from "
                    f"{self.url(path)} ({type(exc).__name__}: {exc}). The answer is incomplete."
                ),
                provider=self.provider,
            ) from exc

    @asynccontextmanager
    async def _send(
        self, path: str, body: Mapping[str, Any], *, stream: bool
    ) -> AsyncIterator[tuple[httpx.Response, int]]:
        url = self.url(path)
        retries = 0
        while True:
            attempts = retries + 1
            client = self._current_client()
            request = client.build_request("POST", url, json=body)
            failed: httpx.Response | None = None
            cause: BaseException | None = None
            try:
                response = await client.send(request, stream=True)
            except (httpx.ReadTimeout, httpx.WriteTimeout) as exc:
                # the server took the request and went silent: asking again would wait as long again
                raise self._silent(url, attempts) from exc
            except httpx.TimeoutException as exc:
                failure: ProviderError = ConnectionFailed(
                    f"{self.provider}: could not connect to {url} within {self.timeout:g} s "
                    f"after {attempts} attempt(s) (connect timeout). Is the server up and base_url right?",
                    provider=self.provider,
                )
                cause = exc
            except httpx.TransportError as exc:
                failure = ConnectionFailed(
                    self.scrub(
                        f"{self.provider}: could not connect to {url} after {attempts} attempt(s) "
                        f"({type(exc).__name__}: {exc}). Is the server up and base_url right?"
                    ),
                    provider=self.provider,
                )
                cause = exc
            else:
                if response.status_code < 400:
                    body_error = None if stream else await self._read_body(response)
                    if body_error is None:
                        try:
                            yield response, attempts
                        finally:
                            await response.aclose()
                        return
                    if isinstance(body_error, httpx.TimeoutException):
                        raise self._silent(url, attempts) from body_error
                    failure = ConnectionFailed(
                        self.scrub(
                            f"{self.provider}: the connection dropped while reading the answer from {url} "
                            f"after {attempts} attempt(s) ({type(body_error).__name__}: {body_error})."
                        ),
                        provider=self.provider,
                    )
                    cause = body_error
                else:
                    await self._read_body(response)
                    failed = response
                    failure = self._status_error(response, url, attempts)
                    if not isinstance(failure, RateLimitError | ServerError):
                        raise failure
            if retries >= self.retry.max_retries:
                raise failure from cause
            await self.retry.sleep(self.retry.delay(retries, failed))
            retries += 1

    def _silent(self, url: str, attempts: int) -> ConnectionFailed:
        return ConnectionFailed(
            f"{self.provider}: {url} accepted the request but sent nothing for {self.timeout:g} s "
            f"(read timeout, attempt {attempts}; not retried). Raise the timeout (RuntimeConfig.request_timeout) "
            "for slow models, or check the server.",
            provider=self.provider,
        )

    @staticmethod
    async def _read_body(response: httpx.Response) -> httpx.TransportError | None:
        try:
            await response.aread()
        except httpx.TransportError as exc:
            return exc
        finally:
            await response.aclose()
        return None

    def _status_error(self, response: httpx.Response, url: str, attempts: int) -> ProviderError:
        status = response.status_code
        try:
            quoted = error_message_from_body(response.text)
        except (httpx.HTTPError, httpx.StreamError, UnicodeDecodeError):
            quoted = ""
        said = f": {quoted}" if quoted else ""
        where = f"{self.provider}: HTTP {status} from POST {url}"
        if status in (401, 403):
            hint = f" Check the API key ({self.key_hint})." if self.key_hint else " Check the API key."
            error: ProviderError = AuthenticationError(f"{where}{said}.{hint}", provider=self.provider, status=status)
        elif status == 404:
            error = NotFoundError(
                f"{where}{said}. Check the model name and base_url.", provider=self.provider, status=status
            )
        elif status == 429:
            error = RateLimitError(
                f"{where} (rate limited) after {attempts} attempt(s){said}.", provider=self.provider, status=status
            )
        elif status >= 500:
            error = ServerError(
                f"{where} after {attempts} attempt(s){said}.", provider=self.provider, status=status
            )
        elif status in (400, 413, 422) and looks_like_context_length(said):
            numbers = [int(n) for n in re.findall(r"\b(\d{2,7})\b", said)]
            error = ContextLengthError(
                f"{where}: the prompt is longer than the model's context window{said}.", provider=self.provider,
                status=status, prompt_tokens=max(numbers) if numbers else None,
                limit=min(numbers) if len(numbers) > 1 else None,
            )
        elif status in (400, 413, 422):
            error = BadRequestError(f"{where}: the request was rejected{said}.", provider=self.provider, status=status)
        else:
            error = ProviderError(f"{where}{said}.", provider=self.provider, status=status)
        error.args = (self.scrub(str(error)),)
        return error
