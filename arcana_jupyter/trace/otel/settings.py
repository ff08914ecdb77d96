"""OpenTelemetry export settings: the constants, the ``OTEL_*`` / ``ARCANA_OTEL`` variables, and
whether the optional ``[otel]`` extra is installed (:func:`require_otel`)."""

from __future__ import annotations

import logging
import os

from ...exceptions import ConfigError

INSTALL_HINT = "pip install 'arcana-jupyter[otel]'"
DEFAULT_SERVICE_NAME = "arcana-jupyter"
DEFAULT_ENDPOINT = "http://localhost:4318"
TRACES_PATH = "/v1/traces"
EXPORT_TIMEOUT_S = 2.0
"""Seconds one export (one batch, retries included) may take unless
``OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT`` says otherwise."""
MAX_QUEUE = 2048
"""Spans waiting for export; past it the oldest are dropped (and counted)."""
MAX_BATCH = 256
SCHEDULE_DELAY_MS = 500
FLUSH_TIMEOUT_S = 3.0
"""How long closing a session waits for its spans to leave; what has not left by then is ``pending``."""
MAX_RESPONSE_BYTES = 64 * 1024
"""Bytes of a collector's answer that are read; the rest is never received (the connection is closed)."""
CONTENT_LIMIT = 32_000
"""Characters of one content attribute (messages, tool arguments and results); longer is cut."""

SCOPE = "arcana_jupyter"
RUN_ATTR = "gen_ai.conversation.id"

log = logging.getLogger("arcana_jupyter")


class OtelUnavailable(ConfigError):
    """The OpenTelemetry SDK or the OTLP exporter is not installed."""


def require_otel() -> None:
    """Raise :class:`OtelUnavailable` (one line, with the install command) when the extra is missing."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise OtelUnavailable(f"OpenTelemetry export needs the [otel] extra: {INSTALL_HINT}") from None


def env_enabled() -> bool:
    """``ARCANA_OTEL`` is set to a true value (``1``, ``true``, ``yes``, ``on``)."""
    return os.environ.get("ARCANA_OTEL", "").strip().lower() in ("1", "true", "yes", "on")


def traces_endpoint(endpoint: str | None = None) -> str:
    """The OTLP/HTTP traces URL: ``endpoint`` (a base URL; ``/v1/traces`` is appended unless it is
    there), else ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as is, else ``OTEL_EXPORTER_OTLP_ENDPOINT`` +
    ``/v1/traces``, else ``http://localhost:4318/v1/traces`` — the SDK's own rules."""
    if endpoint:
        base = endpoint.rstrip("/")
        return base if base.endswith(TRACES_PATH) else base + TRACES_PATH
    signal = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if signal:
        return signal
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or DEFAULT_ENDPOINT
    return base.rstrip("/") + TRACES_PATH


def _header_values() -> list[str]:
    """The values of ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`` (``k=v,k2=v2``): registered as secrets."""
    values: list[str] = []
    for var in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        for item in os.environ.get(var, "").split(","):
            if "=" in item:
                value = item.split("=", 1)[1].strip()
                if value:
                    values.append(value)
                    from urllib.parse import unquote

                    values.append(unquote(value))
    return values


def _export_timeout() -> float:
    for var in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        raw = os.environ.get(var, "").strip()
        if raw:
            try:
                return max(0.1, float(raw) / 1000)  # the spec says milliseconds
            except ValueError:
                pass  # not a number: ignored, as the OpenTelemetry SDK ignores it (next variable, then our default)
    return EXPORT_TIMEOUT_S
