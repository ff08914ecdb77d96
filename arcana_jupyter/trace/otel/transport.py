"""The exporter's HTTP transport: one export's request may take at most the export timeout in
wall-clock time, and at most :data:`~.settings.MAX_RESPONSE_BYTES` of the collector's answer are read
(see the :mod:`~arcana_jupyter.trace.otel` docstring)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from typing import Any

from .settings import EXPORT_TIMEOUT_S, MAX_RESPONSE_BYTES


def _sdk_transport_needed() -> bool:
    """A proxy or a credential-provider session is configured: only the SDK's ``requests`` transport knows them."""
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
             "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER")
    return any(os.environ.get(n) or os.environ.get(n.lower()) for n in names)


def _tls_context() -> Any:
    import ssl

    def env(name: str) -> str | None:
        return os.environ.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}") or os.environ.get(f"OTEL_EXPORTER_OTLP_{name}")

    context = ssl.create_default_context(cafile=env("CERTIFICATE"))
    cert = env("CLIENT_CERTIFICATE")
    if cert:
        context.load_cert_chain(cert, env("CLIENT_KEY"))
    return context


def bounded_transport() -> Any:
    """The exporter's HTTP transport (``None``: use the SDK's own, see the module docstring)."""
    if _sdk_transport_needed():
        return None
    try:
        from opentelemetry.exporter.http.transport._base import BaseHTTPResult, BaseHTTPTransport
    except ImportError:  # another SDK layout: its own transport, unbounded
        return None
    import http.client
    import socket
    from dataclasses import dataclass as _dataclass
    from dataclasses import field as _field
    from urllib.parse import urlsplit

    @_dataclass(frozen=True, slots=True)
    class Result(BaseHTTPResult):  # type: ignore[misc]
        body: bytes = b""
        header_map: Any = _field(default=None, hash=False, compare=False)

        def content(self) -> bytes:
            return self.body

        def headers(self) -> Any:
            return self.header_map if self.header_map is not None else {}

        def json(self) -> Any:
            return json.loads(self.body)

    class Bounded(BaseHTTPTransport):  # type: ignore[misc]
        def __init__(self) -> None:
            self._tls: Any = None

        def request(self, method: str, url: str, *, headers: dict[str, str] | None = None,
                    timeout: float | None = None, data: bytes | None = None) -> Any:
            budget = timeout if timeout is not None and timeout > 0 else EXPORT_TIMEOUT_S
            parts = urlsplit(url)
            try:
                if parts.scheme == "https":
                    if self._tls is None:
                        self._tls = _tls_context()
                    conn: Any = http.client.HTTPSConnection(parts.hostname or "", parts.port, timeout=budget,
                                                            context=self._tls)
                else:
                    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=budget)
            except Exception as exc:  # a bad certificate file: one failed export, counted
                return Result(error=exc)
            fired = threading.Event()

            def cut() -> None:
                fired.set()
                sock = conn.sock
                if sock is not None:
                    with contextlib.suppress(Exception):
                        sock.shutdown(socket.SHUT_RDWR)

            timer = threading.Timer(budget, cut)
            timer.daemon = True
            timer.start()
            try:
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                conn.request(method, path, body=data, headers=headers or {})
                response = conn.getresponse()
                body = response.read(MAX_RESPONSE_BYTES)  # the rest is never read: the connection closes
                return Result(status_code=response.status, reason=response.reason, body=body,
                              header_map=response.headers)
            except Exception as exc:  # the SDK counts a failed export
                error: Exception = exc
                if fired.is_set():
                    error = TimeoutError(f"the collector did not answer within {budget:.1f}s")
                return Result(error=error)
            finally:
                timer.cancel()
                with contextlib.suppress(Exception):
                    conn.close()

        def is_connection_error(self, exception: Exception | None) -> bool:
            return isinstance(exception, ConnectionError)

        def close(self) -> None:
            return None

    return Bounded()
