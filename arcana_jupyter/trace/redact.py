"""Redaction of trace metadata: secrets always, personal data and message text on request.

Every string in an event's metadata passes through a :class:`Redactor` before it is written, in
every ``trace_content`` mode:

- **secrets** (all modes) become ``[REDACTED]``: OpenAI / Anthropic style keys (``sk-...``,
  ``sk-ant-...``, ``sk-proj-...``), GitHub tokens (``ghp_...``), Google API keys (``AIza...``),
  Slack tokens (``xox?-...``) — each with at least one digit, wherever it starts —
  ``Bearer <token>`` / ``Basic <token>`` credentials (8+ characters with a digit or
  ``-._~+/=``, or 20+ characters: "bearer tokens" in prose stays), a 32+ character key-looking token (letters
  *and* digits) written after a word such as ``key``, ``token``, ``secret`` or ``password``, and
  every literal value passed as ``secrets`` (provider keys from the configuration; values shorter
  than 6 characters are ignored, they would mask ordinary words). Dict keys are masked too.
- ``redacted`` additionally masks e-mail addresses and long digit runs: 9 or more consecutive
  digits, or digit groups joined by single spaces or dashes (every group after the first of 3+
  digits) totalling 9 or more digits — card numbers, ``+1-555-123-4567``. Dates and ids/digests
  (keys ``id``, ``*_id``, ``*digest``, ``sha256``) are left alone.
- ``none`` keeps no message text. The keys listed in :data:`NULLED_KEYS` become ``null`` where
  their value is a string (``result`` that is a dict is walked instead, so a pin's ``pin_id``
  survives); ``arguments`` and ``args`` keep their structure but every string inside them becomes
  ``null`` except under :data:`ARG_KEYS_KEPT`. Digests, token counts, ids, roles, decisions,
  reasons, model names and error messages (secrets masked) are kept.

Values that are not JSON types are converted on the way: pydantic models with ``model_dump``,
tuples and sets to lists, anything else with ``str()`` (then redacted like any string).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from .events import TraceContent
from .limits import WRITE_DEPTH

_PLAIN_NUMBERS = frozenset({int, float, bool, type(None)})
REDACTED = "[REDACTED]"

NULLED_KEYS: frozenset[str] = frozenset(
    {
        "content",  # message records, wire messages, pins, sections, memory entries, recall results
        "reply",  # turn_end
        "input",  # any recorded user input text
        "result",  # tool_call / context_action text results (dict results are walked)
        "system_prompt",  # run_start and the config dump
        "summary",  # decision.summary (the summariser's text), state objects
        "query",  # memory_read
        "label",  # pin labels
        "text",
        "title",
        "received",  # partial reply text of a cancelled or failed turn
    }
)
"""Keys whose string values become ``null`` under ``trace_content="none"``."""

ARG_CONTAINERS: frozenset[str] = frozenset({"arguments", "args"})
"""Keys whose whole value is argument data: all strings inside become ``null`` under ``none``."""

ARG_KEYS_KEPT: frozenset[str] = frozenset({"pin_id", "object_id", "id", "include", "kind", "turn", "tool_call_id"})
"""Argument keys that are identifiers, not text: kept under ``none``."""

_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    # no leading word boundary: "KEY=sk-...", "xsk-..." are caught too; a digit is required (below)
    # so that prose such as "task-management-and-planning" is left alone
    re.compile(r"sk-(?:ant-|proj-|live-|test-|admin-|svcacct-)[A-Za-z0-9_\-]{8,}"),
    re.compile(r"sk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?:xai-|gsk_)[A-Za-z0-9_\-]{16,}"),
    re.compile(r"gh[pousr]_[A-Za-z0-9]{30,}"),
    re.compile(r"github_pat_[A-Za-z0-9_]{30,}"),
    re.compile(r"AIza[0-9A-Za-z_\-]{30,}"),
    re.compile(r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),  # AWS access key ids
)
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*")
"""A JSON Web Token: base64url header and payload (both start ``eyJ`` = ``{"``) and a signature."""
_PEM = re.compile(
    r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----.*?(?:-----END \1-----|\Z)", re.DOTALL
)
"""A PEM (or PGP) private-key block, whole; an unterminated one is masked to the end of the text."""
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]{1,20}://)([^\s/?#@:\[\]]+):([^\s/?#@]+)@")
"""``scheme://user:password@host``: the password is masked, the user and host stay."""
_BEARER = re.compile(r"\b(Bearer|Basic)(\s+)([A-Za-z0-9\-._~+/]{8,}=*)", re.IGNORECASE)
_KEYWORD_TOKEN = re.compile(
    r"(?i)((?:api[_\-]?key|access[_\-]?key|secret[_\-]?key|private[_\-]?key|key|token|secret|password|passwd|"
    r"auth|authorization|credential|credentials)\b[\"']?\s*(?:[:=]|\bis\b)?\s*[\"']?)([A-Za-z0-9_\-./+=]{32,})"
)
_TRIGGERS = ("sk-", "xai-", "gsk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "aiza", "xox", "akia",
             "asia", "eyj", "-----begin", "://", "bearer", "basic", "key", "token", "secret", "passw", "auth",
             "credential")
"""Substrings (of the lower-cased text) without which no secret rule can apply (most strings)."""
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_DIGITS = re.compile(r"(?<![\w+])\+?(?:\d{9,}|\d+(?:[ \-]\d{3,})+)(?!\w)")

_MIN_LITERAL_SECRET = 6
_CACHE_MAX_LEN = 256
_CACHE_SIZE = 8192


@lru_cache(maxsize=4096)
def _is_identifier_key(key: str | None) -> bool:
    """Ids and digests are never personal data, even when they happen to be all digits."""
    return key is not None and (key in ("id", "digest", "sha256") or key.endswith(("_id", "digest")))


def _key_looking(token: str) -> bool:
    return any(c.isdigit() for c in token) and any(c.isalpha() for c in token)


def _mask_secret(match: re.Match[str]) -> str:
    return REDACTED if any(c.isdigit() for c in match.group(0)) else match.group(0)


def _mask_keyword_token(match: re.Match[str]) -> str:
    token = match.group(2)
    if not _key_looking(token):
        return match.group(0)
    return match.group(1) + REDACTED


def _mask_credential(match: re.Match[str]) -> str:
    token = match.group(3)
    # a credential has digits or base64/url punctuation, or is long; "bearer tokens" is prose
    if len(token) >= 16 or any(c.isdigit() or c in "-._~+/=" for c in token):
        return match.group(1) + match.group(2) + REDACTED
    return match.group(0)


def _mask_digits(match: re.Match[str]) -> str:
    text = match.group(0)
    return REDACTED if sum(c.isdigit() for c in text) >= 9 else text


class Redactor:
    """Masks secrets (always), personal data (``redacted``) and message text (``none``).

    ``redact_text`` works on one string; ``clean`` walks a metadata structure and returns a
    JSON-safe copy with every rule of the mode applied.
    """

    def __init__(self, content: TraceContent = "full", secrets: Iterable[str] = ()) -> None:
        if content not in ("full", "redacted", "none"):
            raise ValueError(f"trace_content must be 'full', 'redacted' or 'none', not {content!r}")
        self.content: TraceContent = content
        literals = sorted(
            {s for s in secrets if isinstance(s, str) and len(s.strip()) >= _MIN_LITERAL_SECRET},
            key=len,
            reverse=True,
        )
        self._literal: re.Pattern[str] | None = (
            re.compile("|".join(re.escape(s) for s in literals)) if literals else None
        )
        self._cache: dict[tuple[str, bool], str] = {}
        self._generation = _GENERATION[0]

    def add_secret(self, secret: str) -> None:
        """Mask ``secret`` from now on (e.g. a provider key configured after the writer opened)."""
        if not isinstance(secret, str) or len(secret.strip()) < _MIN_LITERAL_SECRET:
            return
        current = [] if self._literal is None else self._literal.pattern.split("|")
        current.append(re.escape(secret))
        self._literal = re.compile("|".join(sorted(set(current), key=len, reverse=True)))
        self._cache = {}

    def redact_text(self, text: str, *, personal: bool = True) -> str:
        """``text`` with the secrets (and, in ``redacted`` mode, e-mails and digit runs) masked.

        ``personal=False`` skips the e-mail and digit rules (used for ids and digests)."""
        if self._generation != _GENERATION[0]:
            self._cache, self._generation = {}, _GENERATION[0]
        if len(text) <= _CACHE_MAX_LEN:
            key = (text, personal)
            cached = self._cache.get(key)
            if cached is None:
                if len(self._cache) >= _CACHE_SIZE:
                    self._cache.clear()
                cached = self._cache[key] = self._redact(text, personal)
            return cached
        return self._redact(text, personal)

    def _redact(self, text: str, personal: bool) -> str:
        if self._literal is not None:
            text = self._literal.sub(REDACTED, text)
        text = _mask_known(text)
        if self.content == "redacted" and personal:
            if "@" in text:
                text = _EMAIL.sub(REDACTED, text)
            text = _DIGITS.sub(_mask_digits, text)
        return text

    def clean(self, value: Any) -> Any:
        """A JSON-safe copy of ``value`` with the rules of this redactor's mode applied."""
        return self._walk(value, None, False, 1)

    # -- internals ------------------------------------------------------------------------------

    def _walk(self, value: Any, key: str | None, in_args: bool, depth: int = 1, fmt: bool = False) -> Any:
        """``fmt``: inside a chained decision's rows (``chain.rows``), the format's own data — op names,
        value tables and their digit strings, ``n`` masks: secrets are masked there as everywhere, the
        personal rules (9+ digits, e-mail) are not (a keyframe's ``"0120120…"`` masked unreadable)."""
        cls = type(value)
        if depth > WRITE_DEPTH and (cls is dict or cls is list or isinstance(value, Mapping | list | tuple)):
            # deeper than any reader accepts a line (trace/limits.py): the value as its JSON text
            try:
                text = json.dumps(value, ensure_ascii=False, default=str)
            except (RecursionError, ValueError, TypeError):
                text = f"<a value nested deeper than {WRITE_DEPTH} levels>"
            return self._walk(text, key, in_args, depth, fmt)
        if cls is str and fmt:
            return self.redact_text(value, personal=False)
        if cls is str:
            if self.content == "none" and key is not None:
                if in_args and key not in ARG_KEYS_KEPT:
                    return None
                if key in NULLED_KEYS or key in ARG_CONTAINERS:
                    return None
            return self.redact_text(value, personal=not _is_identifier_key(key))
        if value is None or cls is int or cls is bool:
            return value
        if cls is float:
            return value if math.isfinite(value) else str(value)
        if cls is dict or isinstance(value, Mapping):
            out: dict[str, Any] = {}  # JSON edge: cleaning JSON values
            for k, v in value.items():
                name = k if isinstance(k, str) else str(k)
                inner = fmt or (key == "chain" and name == "rows")
                out[self.redact_text(name)] = self._walk(v, name, in_args or name in ARG_CONTAINERS, depth + 1,
                                                         inner)
            return out
        if isinstance(value, str):  # a str subclass
            return self._walk(str(value), key, in_args, depth, fmt)
        if isinstance(value, bool | int):
            return int(value) if not isinstance(value, bool) else bool(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else str(value)
        if cls is list and set(map(type, value)) <= _PLAIN_NUMBERS:
            return [v if type(v) is not float or math.isfinite(v) else str(v) for v in value] \
                if float in set(map(type, value)) else list(value)  # numbers hold no secrets: skip the walk
        if isinstance(value, list | tuple | set | frozenset):
            items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
            # list items inherit the key of their container (``messages`` items are dicts anyway)
            return [self._walk(v, key, in_args, depth + 1, fmt) for v in items]
        dump = getattr(value, "model_dump", None)
        if callable(dump):
            try:
                return self._walk(dump(mode="json"), key, in_args, depth, fmt)
            except Exception:  # a broken model: fall back to its text
                pass
        if isinstance(value, bytes | bytearray):
            value = bytes(value).decode("utf-8", errors="replace")
            return self._walk(value, key, in_args, depth, fmt)
        try:
            text = str(value)
        except Exception as exc:  # pragma: no cover - __str__ raising is pathological
            text = f"<unprintable {type(value).__name__}: {type(exc).__name__}>"
        return self._walk(text, key, in_args, depth, fmt)


def redact_text(text: str, secrets: Iterable[str] = (), content: TraceContent = "full") -> str:
    """One-shot :meth:`Redactor.redact_text` (for error messages, notebook output, reports)."""
    return Redactor(content, secrets).redact_text(text)


# -- the one masking function ---------------------------------------------------------------------

_REGISTERED: set[str] = set()
_REGISTERED_PATTERN: re.Pattern[str] | None = None
_REGISTRY_LOCK = threading.Lock()
_GENERATION = [0]
"""Bumped by :func:`register_secret`, so a :class:`Redactor`'s cache never serves an older masking."""


def register_secret(secret: str | None) -> None:
    """Mask ``secret`` (a configured API key, a secret header value) everywhere in this process
    from now on: exception messages, traces, memory, renderers. Values under 6 characters are
    ignored (they would mask ordinary words)."""
    global _REGISTERED_PATTERN
    if not isinstance(secret, str) or len(secret.strip()) < _MIN_LITERAL_SECRET:
        return
    with _REGISTRY_LOCK:
        if secret in _REGISTERED:
            return
        _REGISTERED.add(secret)
        _GENERATION[0] += 1
        _REGISTERED_PATTERN = re.compile(
            "|".join(re.escape(s) for s in sorted(_REGISTERED, key=len, reverse=True))
        )


def _mask_known(text: str) -> str:
    """Registered literal secrets and every secret pattern (see :func:`mask_secrets`)."""
    registered = _REGISTERED_PATTERN
    if registered is not None:
        text = registered.sub(REDACTED, text)
    lower = text.lower()
    if any(t in lower for t in _TRIGGERS):
        if "-----begin" in lower:
            text = _PEM.sub(REDACTED, text)
        for pattern in _SECRET_PATTERNS:
            text = pattern.sub(_mask_secret, text)
        if "eyj" in lower:
            text = _JWT.sub(REDACTED, text)
        if "://" in text:
            text = _URL_CREDENTIALS.sub(_mask_url_credentials, text)
        text = _BEARER.sub(_mask_credential, text)
        if len(text) >= 32:
            text = _KEYWORD_TOKEN.sub(_mask_keyword_token, text)
    return text


def _mask_url_credentials(match: re.Match[str]) -> str:
    return f"{match.group(1)}{match.group(2)}:{REDACTED}@"


def mask_secrets(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every secret replaced by ``[REDACTED]``: the one masking function.

    Exceptions (:class:`~arcana_jupyter.exceptions.ArcanaError`), trace writing (every
    ``trace_content`` mode), the memory store (on write and export) and the renderers use it.
    Masked: ``secrets`` given here and every value passed to :func:`register_secret` (configured
    provider keys and secret header values), API-key shapes (``sk-...``, ``sk-ant-...``,
    ``sk-proj-...``, ``xai-...``, ``gsk_...``, ``ghp_...``/``github_pat_...``, ``AIza...``,
    ``xox?-...``, AWS ``AKIA...``/``ASIA...``), JSON Web Tokens, PEM private-key blocks, the
    password in ``scheme://user:password@host``, ``Bearer``/``Basic`` credentials, and long
    key-looking tokens written after ``key``, ``token``, ``secret``, ``password``... The list is
    in docs/SECURITY.md.
    """
    if not isinstance(text, str):
        text = str(text)
    literals = sorted({s for s in secrets if isinstance(s, str) and len(s.strip()) >= 4}, key=len, reverse=True)
    for secret in literals:
        text = text.replace(secret, REDACTED)
    return _mask_known(text)
