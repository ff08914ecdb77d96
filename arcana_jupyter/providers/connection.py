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
  :meth:`HTTPConnection.scrub` (the one masking function, ``trace.redact.mask_secrets``, plus
  this connection's key and secret header values, which are also registered process-wide);
- bounding what a hostile or broken server can make us hold or wait for (:class:`StreamLimits`):
  the bytes of one answer, the bytes of one line of a stream, the wall time of one answer and
  the time between two data lines of a stream (keep-alive comments do not count).

Tests make retries fast and observable by passing ``sleep`` (an async callable that records the
delay) and ``rng`` (a seeded :class:`random.Random`).
"""

from __future__ import annotations

import asyncio
import contextlib
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
    ConfigError,
    ConnectionFailed,
    ContextLengthError,
    NotFoundError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamError,
    TemplateRefusedError,
    looks_like_context_length,
    looks_like_template_refusal,
)
from ..trace.redact import mask_secrets, register_secret

Sleep = Callable[[float], Awaitable[None]]

_MAX_QUOTE = 600
_MAX_ERROR_BODY = 64 * 1024
"""Bytes of an error answer (4xx/5xx) read to quote its message; the rest is not read."""

PROBE_SECONDS = 5.0
"""A side question's answer (llama.cpp's ``/props``, Ollama's ``/api/show``) in all, headers to last byte."""
PROBE_MAX_BYTES = 4 * 1024 * 1024
"""... and its size (a chat template is a few KB; ``/props`` with one is ~10 KB)."""
DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_LINE_BYTES = 1024 * 1024
DEFAULT_MAX_STREAM_SECONDS = 600.0
DEFAULT_STREAM_IDLE_SECONDS = 120.0

_SECRET_HEADER = re.compile(r"(?i)(auth|key|token|secret|password|cookie|credential|signature)")


def secret_header_values(headers: Mapping[str, Any] | None) -> list[str]:
    """The values of headers that carry credentials (``Authorization``, Azure's ``api-key``,
    ``x-api-key``, any ``*token*`` / ``*secret*`` / ``Cookie``...): masked like the API key."""
    out: list[str] = []
    for name, value in (headers or {}).items():
        if isinstance(name, str) and isinstance(value, str) and value and _SECRET_HEADER.search(name):
            out.append(value)
            # "Bearer <token>": the token alone must be masked too
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "token"):
                out.append(token.strip())
    return out


@dataclass(frozen=True)
class StreamLimits:
    """What one answer may cost us, whatever the server sends (RuntimeConfig fields of the same names).

    - ``max_reply_bytes``: bytes of one answer's body (streamed or not); past it the answer is cut
      and :class:`StreamError` raised (the partial reply is kept).
    - ``max_line_bytes``: bytes of one line of a stream (an SSE line with no newline grows forever).
    - ``max_stream_seconds``: wall time of one answer, from the response headers to the last byte.
    - ``stream_idle_seconds``: time between two data lines of a stream; SSE comments (``: keep-alive``)
      and blank lines do not count, so a server that only keeps the connection alive is cut off.
    """

    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_stream_seconds: float = DEFAULT_MAX_STREAM_SECONDS
    stream_idle_seconds: float = DEFAULT_STREAM_IDLE_SECONDS

    def __post_init__(self) -> None:
        for name in ("max_reply_bytes", "max_line_bytes", "max_stream_seconds", "stream_idle_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ConfigError(f"StreamLimits.{name} must be a positive number, not {value!r}")


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


async def _close(chunks: AsyncIterator[bytes]) -> None:
    """Close an async generator of body bytes (its ``aclose`` is not part of ``AsyncIterator``)."""
    close = getattr(chunks, "aclose", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()


def _decode(response: httpx.Response, raw: bytes) -> str:
    try:
        return raw.decode(response.charset_encoding or "utf-8", errors="replace")
    except LookupError:  # an unknown charset in Content-Type
        return raw.decode("utf-8", errors="replace")


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
        limits: bytes and seconds one answer may take (:class:`StreamLimits`, defaults sane).
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
        limits: StreamLimits | None = None,
    ) -> None:
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.key_hint = key_hint
        self.limits = limits or StreamLimits()
        self._headers = dict(headers or {})
        found = [*(s for s in secrets if s), *secret_header_values(self._headers)]
        self._secrets = sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)
        for secret in self._secrets:
            register_secret(secret)
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
        return mask_secrets(text, self._secrets)

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    async def aclose(self) -> None:
        """Close the connection pool (the next request opens a new one)."""
        client, self._client = self._client, None
        if client is not None and self._client_loop is asyncio.get_running_loop():
            await client.aclose()

    # -- requests ---------------------------------------------------------------------------------

    async def probe_json(self, url: str, body: Mapping[str, Any] | None = None, *, timeout: float | None = None,
                         max_bytes: int = PROBE_MAX_BYTES) -> Any:
        """One best-effort request (``GET``, or ``POST`` of ``body``) to an absolute ``url`` with
        this connection's headers and transport, no retries: the parsed JSON of a 200 answer, else
        ``None`` — never an exception (a server that does not know the endpoint, is down, answers
        garbage, more than ``max_bytes`` or slower than ``timeout`` seconds *in all* — headers, then a
        byte every two seconds — just has nothing to say). For side questions such as llama.cpp's
        ``/props``. ``timeout`` defaults to :data:`PROBE_SECONDS`."""
        try:
            # a total deadline: httpx's timeout is per read
            async with asyncio.timeout(PROBE_SECONDS if timeout is None else timeout):
                client = self._current_client()
                request = client.build_request("GET", url) if body is None else client.build_request(
                    "POST", url, json=dict(body))
                response = await client.send(request, stream=True)
                try:
                    if response.status_code != 200:
                        return None
                    data = bytearray()
                    async for chunk in response.aiter_bytes():
                        data += chunk
                        if len(data) > max_bytes:
                            return None
                finally:
                    await response.aclose()
            return json.loads(_decode(response, bytes(data)))
        except (httpx.HTTPError, ValueError, TimeoutError, RecursionError):
            return None

    async def post_json(self, path: str, body: Mapping[str, Any]) -> tuple[Any, int]:
        """POST ``body`` as JSON and return (the decoded JSON answer, number of attempts)."""
        async with self._send(path, body, stream=False) as (response, attempts, raw):
            text = _decode(response, raw or b"")
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
        flow, a dropped connection, a read timeout or a limit of :attr:`limits` raises
        :class:`StreamError` (never retried: part of the answer was already handed out).
        """
        async with self._send(path, body, stream=True) as (response, attempts, _):
            yield self._guarded_lines(response, path), attempts

    async def _guarded_lines(self, response: httpx.Response, path: str) -> AsyncIterator[str]:
        """The answer's lines, split here (not by httpx) so that no line, no answer and no silence
        can grow past :attr:`limits`."""
        limits = self.limits
        url = self.url(path)
        loop = asyncio.get_running_loop()
        begun = loop.time()
        wall_deadline = begun + limits.max_stream_seconds
        idle_deadline = begun + limits.stream_idle_seconds
        total = 0
        buffer = bytearray()
        chunks = response.aiter_bytes()
        try:
            while True:
                deadline = min(wall_deadline, idle_deadline)
                try:
                    chunk = await asyncio.wait_for(anext(chunks), max(0.0, deadline - loop.time()))
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise self._deadline_error(url, wall=wall_deadline <= idle_deadline) from None
                total += len(chunk)
                if total > limits.max_reply_bytes:
                    raise self._too_large(url)
                buffer += chunk
                start = 0
                while True:
                    end = buffer.find(b"\n", start)
                    if end < 0:
                        break
                    if end - start > limits.max_line_bytes:
                        raise self._line_too_long(url)
                    line = bytes(buffer[start:end])
                    start = end + 1
                    if line.startswith(b"data"):
                        idle_deadline = loop.time() + limits.stream_idle_seconds
                    yield line.rstrip(b"\r").decode("utf-8", errors="replace")
                del buffer[:start]
                if len(buffer) > limits.max_line_bytes:
                    raise self._line_too_long(url)
            if buffer:
                yield bytes(buffer).rstrip(b"\r").decode("utf-8", errors="replace")
        except httpx.TimeoutException as exc:
            raise StreamError(
                f"{self.provider}: the stream from {url} stalled: no data for {self.timeout:g} s "
                f"(read timeout). The answer is incomplete.",
                provider=self.provider,
            ) from exc
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.NetworkError, httpx.DecodingError) as exc:
            raise StreamError(
                self.scrub(
                    f"{self.provider}: the connection dropped in the middle of the stream from "
                    f"{url} ({type(exc).__name__}: {exc}). The answer is incomplete."
                ),
                provider=self.provider,
            ) from exc
        finally:
            await _close(chunks)

    def _deadline_error(self, url: str, *, wall: bool) -> StreamError:
        limits = self.limits
        if wall:
            problem = (f"was still running after {limits.max_stream_seconds:g} s (max_stream_seconds); "
                       "it was cut off. Raise RuntimeConfig.max_stream_seconds for very long answers")
        else:
            problem = (f"sent no data for {limits.stream_idle_seconds:g} s (stream_idle_seconds; keep-alive "
                       "comments do not count); it was cut off. Raise RuntimeConfig.stream_idle_seconds for "
                       "slow models")
        return StreamError(f"{self.provider}: the answer from {url} {problem}. The answer is incomplete.",
                           provider=self.provider)

    def _too_large(self, url: str) -> StreamError:
        return StreamError(
            f"{self.provider}: the answer from {url} passed {self.limits.max_reply_bytes:,} bytes "
            "(max_reply_bytes); it was cut off. The answer is incomplete; raise RuntimeConfig.max_reply_bytes "
            "if the model really writes that much.",
            provider=self.provider,
        )

    def _line_too_long(self, url: str) -> StreamError:
        return StreamError(
            f"{self.provider}: the stream from {url} sent a line longer than {self.limits.max_line_bytes:,} bytes "
            "(max_sse_line_bytes) without a line break: not a server-sent-event stream. The answer is incomplete.",
            provider=self.provider,
        )

    async def _read_limited(self, response: httpx.Response, max_bytes: int, url: str, *,
                            cut: bool) -> tuple[bytes, BaseException | None]:
        """The body, at most ``max_bytes`` of it (``cut``: silently truncated, else a :class:`StreamError`),
        within ``max_stream_seconds``; a transport failure is returned, not raised."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.max_stream_seconds
        data = bytearray()
        chunks = response.aiter_bytes()
        try:
            while True:
                try:
                    chunk = await asyncio.wait_for(anext(chunks), max(0.0, deadline - loop.time()))
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    if cut:
                        break
                    raise self._deadline_error(url, wall=True) from None
                data += chunk
                if len(data) > max_bytes:
                    if cut:
                        del data[max_bytes:]
                        break
                    raise self._too_large(url)
        except httpx.TransportError as exc:
            return bytes(data), exc
        finally:
            await _close(chunks)
            await response.aclose()
        return bytes(data), None

    @asynccontextmanager
    async def _send(
        self, path: str, body: Mapping[str, Any], *, stream: bool
    ) -> AsyncIterator[tuple[httpx.Response, int, bytes | None]]:
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
                    raw, body_error = (None, None) if stream else await self._read_limited(
                        response, self.limits.max_reply_bytes, url, cut=False)
                    if body_error is None:
                        try:
                            yield response, attempts, raw
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
                    raw, _ = await self._read_limited(response, _MAX_ERROR_BODY, url, cut=True)
                    failed = response
                    failure = self._status_error(response, url, attempts, _decode(response, raw))
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

    def _status_error(self, response: httpx.Response, url: str, attempts: int, text: str = "") -> ProviderError:
        status = response.status_code
        quoted = error_message_from_body(text)
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
        elif status in (400, 422) and looks_like_template_refusal(said):
            error = TemplateRefusedError(f"{where}: the model's chat template refused the prompt{said}.",
                                         provider=self.provider, status=status)
        elif status in (400, 413, 422):
            error = BadRequestError(f"{where}: the request was rejected{said}.", provider=self.provider, status=status)
        else:
            error = ProviderError(f"{where}{said}.", provider=self.provider, status=status)
        error.args = (self.scrub(str(error)),)
        return error
