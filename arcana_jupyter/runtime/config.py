"""RuntimeConfig: every knob of a runtime, validated, with defaults that work out of the box."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..adaptive.config import STANDING_SHARE
from ..trace.events import TraceContent
from ..trace.otel import env_enabled

if TYPE_CHECKING:
    from ..adaptive.config import AdaptiveConfig

PRIMITIVES = ("recall", "pin")

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant working inside a Jupyter notebook. Answer clearly and concisely."
)


MAX_DEFAULT_RESERVE = 1024


def default_reserve(total_window: int) -> int:
    """The reply reserve a window gets by default: a quarter of it, at most 1024 tokens."""
    return max(1, min(MAX_DEFAULT_RESERVE, total_window // 4))


class MemoryConfig(BaseModel):
    """The cognitive-memory settings as one group: ``RuntimeConfig(memory=MemoryConfig(...))``.

    Passing a group turns memory on unless ``enabled=False``. Each field is the ``RuntimeConfig``
    field named in its description (validated there, with the same bounds).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    """``memory``."""
    path: Path | None = None
    """``memory_path``."""
    url: str | None = Field(default=None, repr=False)
    """``memory_url``."""
    project_dir: Path | None = None
    """``project_dir``."""
    digest_tokens: int = Field(default=600, ge=0)
    """``memory_digest_tokens``."""
    tools: Literal["auto", "on", "off"] = "auto"
    """``memory_tools``."""
    learnings: Literal["auto", "on", "off"] = "auto"
    """``memory_learnings``."""


MEMORY_FIELDS = {
    "enabled": "memory", "path": "memory_path", "url": "memory_url", "project_dir": "project_dir",
    "digest_tokens": "memory_digest_tokens", "tools": "memory_tools", "learnings": "memory_learnings",
}
"""``MemoryConfig`` field -> the flat ``RuntimeConfig`` field it sets."""

ADAPTIVE_FIELDS = ("idle_soft_after_turns", "idle_hard_after_turns", "verbatim_turns", "digest_turns",
                   "artifact_min_tokens")
"""The ``AdaptiveConfig`` knobs a ``RuntimeConfig`` carries (same names)."""


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors())


def _is_group(value: Any) -> bool:
    return isinstance(value, (BaseModel, Mapping))


def _group_values(group: Any, name: str) -> dict[str, Any]:  # JSON edge: settings by name (kwargs, TOML)
    """The fields a group (model or mapping) was given explicitly."""
    if isinstance(group, BaseModel):
        return {k: getattr(group, k) for k in group.model_fields_set}
    if isinstance(group, Mapping):
        return dict(group)
    raise ValueError(f"{name}= takes {'an AdaptiveConfig' if name == 'adaptive' else 'a MemoryConfig'} or a dict, "
                    f"not {type(group).__name__}")


def flatten_groups(values: Mapping[str, Any]) -> dict[str, Any]:  # JSON edge: settings by name (kwargs, TOML)
    """``values`` with the ``adaptive=`` and ``memory=`` groups spelled as the flat fields they set.

    A flat field also given with a different value is an error naming both spellings. Used by the
    model itself and where settings are merged over an existing config (``runtime.chat(**overrides)``,
    ``pool.add(**overrides)``), so a group overrides the base config's flat values.
    """
    out = dict(values)
    mapped: dict[str, tuple[str, Any]] = {}
    adaptive = out.pop("adaptive", None)
    if adaptive is not None:
        given = _group_values(adaptive, "adaptive")
        from ..adaptive.config import AdaptiveConfig

        if isinstance(adaptive, Mapping):
            try:
                AdaptiveConfig.model_validate(given)  # its own rules and names first
            except ValidationError as exc:
                raise ValueError(f"adaptive=: {_problems(exc)}") from None
        alien = sorted(k for k in given if k not in ADAPTIVE_FIELDS)
        if alien:
            raise ValueError(
                f"adaptive={type(adaptive).__name__}(...) sets {alien}, which a RuntimeConfig does not carry "
                f"(it carries {list(ADAPTIVE_FIELDS)}); for those, make an AdaptiveEngine yourself")
        mapped.update({k: (f"adaptive.{k}", v) for k, v in given.items()})
    memory = out.get("memory")
    if _is_group(memory):  # memory=True / False (and what pydantic coerces to a bool) stays the flat switch
        out.pop("memory")
        given = _group_values(memory, "memory")
        try:
            group = memory if isinstance(memory, MemoryConfig) else MemoryConfig.model_validate(given)
        except ValidationError as exc:
            raise ValueError(f"memory=: {_problems(exc)}") from None
        given.setdefault("enabled", group.enabled)  # a group turns memory on unless it says otherwise
        unknown = sorted(k for k in given if k not in MEMORY_FIELDS)
        if unknown:
            raise ValueError(f"memory= group has unknown field(s) {unknown}; fields: {list(MEMORY_FIELDS)}")
        mapped.update({MEMORY_FIELDS[k]: (f"memory.{k}", v) for k, v in given.items()})
    for flat, (grouped, value) in mapped.items():
        if flat in out and out[flat] != value:
            raise ValueError(f"{flat}={out[flat]!r} and {grouped}={value!r} disagree: give one of them")
        out[flat] = value
    return out


class RuntimeConfig(BaseModel):
    """Settings of a :class:`~arcana_jupyter.Runtime` and of every chat it opens.

    Settings come in groups, ``RuntimeConfig(adaptive=AdaptiveConfig(...), memory=MemoryConfig(...))``,
    or as the flat keywords below (``idle_soft_after_turns=...``, ``memory=True``,
    ``memory_path=...``) — accepted as they always were, and the form a config is stored, read
    (``cfg.memory_path``) and recorded in a trace's ``run_start`` in. ``cfg.adaptive`` and
    ``cfg.memory_group`` read a config back as groups. Settings that cannot work together (idle
    thresholds out of order, a group disagreeing with a flat keyword) are a ``ValidationError``
    naming the fields.

    The tool loop of a turn is bounded by ``max_tool_steps``, ``max_tool_seconds`` and the loop
    guard (runtime/guard.py): a repeated identical call is answered once from the guard and stops
    the loop — except the cognitive primitives, whose repeats run and answer in their own shape
    (``already_pinned: true``) — and ``tool_no_progress_steps`` steps that get nowhere stop it
    (default 2 for the bundled small local model, 4 otherwise).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    @model_validator(mode="before")
    @classmethod
    def _groups(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and ("adaptive" in data or _is_group(data.get("memory"))):
            return flatten_groups(data)
        return data

    @property
    def adaptive(self) -> AdaptiveConfig:
        """The adaptive-context engine's settings this config makes (its other knobs at their defaults)."""
        from ..adaptive.config import AdaptiveConfig

        return AdaptiveConfig.from_runtime(self)

    @property
    def memory_group(self) -> MemoryConfig:
        """The cognitive-memory settings as a :class:`MemoryConfig`."""
        return MemoryConfig(**{k: getattr(self, flat) for k, flat in MEMORY_FIELDS.items()})

    model: str = "auto"
    """``provider:model`` (``openai:gpt-4o-mini``, ``anthropic:claude-...``, ``local``,
    ``local:/path/model.gguf``, ``replay:<run_id>``) or ``auto``: the first provider with a key
    configured, else the bundled local model."""
    system_prompt: str = DEFAULT_SYSTEM_PROMPT

    # context window
    total_window: int = Field(default=8192, gt=0)
    """The model's context window, in the model's own tokens (prompt and reply together)."""
    response_reserve: int = Field(default=-1, ge=-1)
    """Tokens kept free for the reply; also the cap on the reply's length. ``-1`` (default): a
    quarter of the window, at most 1024 (:func:`default_reserve`). Must be below the window."""
    strategy: Literal["auto", "passthrough", "tail_preserve", "aggressive_truncate", "llm_summarize"] = "auto"
    recall_share: float = Field(default=0.25, ge=0, le=1)
    """Part of the conversation budget kept for the earlier turns relevant to the current input
    once the window is full (at most 1,536 tokens). That block changes with every question, so it
    is the part of the prompt a provider's prefix cache cannot reuse: larger keeps more evidence
    for questions about the distant past, smaller keeps more of the prompt cached
    (benchmarks/results/retention_sessions.md measures both). The builder's own default is 0.5."""
    prompt_shape: Literal["auto", "none", "portable", "mistral", "llama3", "text_tools", "strict"] = "auto"
    """How prompts are shaped for the model's chat template (providers/shaping.py). ``auto``: the
    model's own template where it can be read (a local GGUF's, llama.cpp server's ``/props``),
    probed; else its family's by name; else ``portable`` (one leading system message, alternating
    roles: safe for every template that has a system role). ``none``: the builder's layout as is."""
    embeddings: Literal["auto", "on", "off"] = "auto"
    """Semantic relevance of earlier turns (an offline embedding model fused with BM25). ``auto``:
    on when the embedding model loads (a core dependency since issue 38; if its package is missing or
    broken, lexical, said once in the decision notes); ``on``: required (a ``ConfigError`` when it does
    not load); ``off``: lexical. Vectors are kept
    beside the trace (``<trace dir>/embeddings/``): a resumed or rebuilt session does not re-embed."""

    # cognitive primitives (seed 000)
    cognitive_primitives: list[str] = Field(default_factory=list)
    user_tools: Literal["auto", "on", "off"] = "auto"
    """Offer the runtime's tools (your Python functions, ``ask_user``) to the model. ``auto``: yes,
    except for the bundled 135M local model (see ``primitive_tools``)."""
    primitive_tools: Literal["auto", "on", "off"] = "auto"
    """Offer the enabled primitives to the model as tools. ``auto``: yes, except for the bundled
    135M local model, which calls them in a loop (measured: 8 tool calls and a junk pin in one
    turn); pins made from the notebook and recall placeholders work either way."""
    pin_budget_fraction: float = Field(default=0.5, gt=0, le=1)

    # adaptive context (seed 004)
    context_engine: bool = True
    engine_tools: Literal["auto", "on", "off"] = "auto"
    """Offer the adaptive-context tools (create_task, decide, hydrate ...) to the model. ``auto``:
    yes, except for the bundled local model — a 135M model drowns in ten tool schemas (measured:
    one turn spent 24k prompt tokens calling tools in a loop). Tiers, promotion, the checkpoint and
    artifacts work either way; only the model's own tool access is withheld."""
    idle_soft_after_turns: int = Field(default=3, ge=1)
    idle_hard_after_turns: int = Field(default=8, ge=1)
    verbatim_turns: int = Field(default=3, ge=1)
    """Engine mode: the most recent turns the prompt keeps verbatim."""
    digest_turns: int = Field(default=4, ge=0)
    """Engine mode: the turns before those, shown as scored digests; older ones live in the checkpoint."""
    artifact_min_tokens: int = Field(default=1000, ge=64)
    """Engine mode: tool outputs longer than this are stored whole as artifacts, shown as a card."""
    standing_share: float = Field(default=STANDING_SHARE, gt=0, le=0.5)
    """Engine mode: the most of the prompt budget the user's standing instructions (the ``standing``
    section) may take; beyond it the oldest are shortened (benchmarks/results/standing.md)."""
    standing_instructions: bool = True
    """Engine mode: recognise the user's standing instructions, preferences and constraints and keep them
    in the ``standing`` section. Recorded in every ``run_start``; a run recorded before it existed
    resumes and replays with it off (the behaviour it was recorded with: no standing section, the
    checkpoint's cue-word constraints)."""

    # cognitive memory (seed 004)
    memory: bool = False
    memory_path: Path | None = None
    """SQLite file of the memory store; default ``~/.arcana/memory.sqlite3``."""
    memory_url: str | None = Field(default=None, repr=False)
    """A PostgreSQL server for the memory store (``postgresql://user@host/db``, the ``[postgres]``
    extra), shared by every kernel pointed at it; takes precedence over ``memory_path``. Default
    ``$ARCANA_MEMORY_URL`` when neither is set. Its password is masked wherever it could show."""
    project_dir: Path | None = None
    """The project memories are scoped to (a notebook's folder); default the working directory."""
    memory_digest_tokens: int = Field(default=600, ge=0)
    """Token budget of the memory digest that enters the prompt at session start."""
    memory_tools: Literal["auto", "on", "off"] = "auto"
    """Offer remember / recall_memory / forget_memory to the model. ``auto``: yes, except for the
    bundled local model, which stores junk with them; the digest reaches the prompt either way."""
    memory_learnings: Literal["auto", "on", "off"] = "auto"
    """Extract up to five learnings at session end with a summariser call. ``auto``: only with a
    remote provider (seed 004: the summariser is disabled when no API key is available)."""

    # traces (seed 003)
    trace_dir: Path | None = Path("traces")
    """Where run traces go; ``None`` keeps no trace file (recall then works from memory only)."""
    trace_include_prompt_snapshots: bool = False
    trace_prompt_sent: bool = True
    """Record each call's prompt as sent (a ``prompt_sent`` event, encoded against the previous one: a
    few hundred bytes per turn) so the inspector, replay, viewer and report show it without a kernel.
    Never with ``trace_content="none"``."""
    trace_content: TraceContent = "full"
    otel: bool = Field(default_factory=env_enabled)
    """Export every turn as OpenTelemetry GenAI spans over OTLP/HTTP as it happens (the ``[otel]``
    extra; endpoint, headers and service name from the standard ``OTEL_*`` variables). Default: on
    when ``ARCANA_OTEL=1``. Export never slows or fails a turn; ``run_end.otel_export`` counts what
    arrived (docs/TRACE_FORMAT.md)."""

    # the model call
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    max_tool_steps: int = Field(default=8, ge=1)
    """LLM calls with tools per turn; then one more without tools, so the turn still answers."""
    max_tool_seconds: float = Field(default=120.0, gt=0)
    """Wall-clock budget of a turn's tool loop: past it, the model answers without tools."""
    tool_no_progress_steps: int | None = Field(default=None, ge=1)
    """Tool steps in a row that get nowhere (every call failed, or every result repeats one the
    model already has) before the loop guard stops offering tools (``no_progress``,
    runtime/guard.py). ``None`` (default): 2 for the bundled small local model (SmolLM2-135M, also
    replayed), which calls tools in a loop; 4 for every other model, so a capable model can read two
    failed calls' errors and recover. ``max_tool_steps`` and ``max_tool_seconds`` bound it either way."""
    tool_output_max_tokens: int = Field(default=2000, ge=64)
    request_timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)

    # limits on what a provider can make us hold or wait for (docs/SECURITY.md)
    max_reply_bytes: int = Field(default=8 * 1024 * 1024, gt=0)
    """Bytes of one answer's body (streamed or not); past it the answer is cut off with a
    ``StreamError`` and the partial reply is kept. Default 8 MiB."""
    max_sse_line_bytes: int = Field(default=1024 * 1024, gt=0)
    """Bytes of one line of a streamed answer (a line with no newline would grow forever). Default 1 MiB."""
    max_stream_seconds: float = Field(default=600.0, gt=0)
    """Wall time of one answer (one LLM call), from its headers to its last byte. Default 600 s."""
    stream_idle_seconds: float = Field(default=120.0, gt=0)
    """Time a stream may go without a data event; keep-alive comments do not count. Default 120 s."""
    prices: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """USD per million (input, output) tokens by model name; overrides the built-in table."""

    @model_validator(mode="after")
    def _reserve_below_window(self) -> RuntimeConfig:
        if self.response_reserve == -1:
            object.__setattr__(self, "response_reserve", default_reserve(self.total_window))
        if self.response_reserve >= self.total_window:
            raise ValueError(
                f"response_reserve ({self.response_reserve}) must be smaller than total_window "
                f"({self.total_window}): nothing would be left for the prompt. Use a larger window or a "
                f"smaller reserve (default: a quarter of the window, at most {MAX_DEFAULT_RESERVE})."
            )
        return self

    @model_validator(mode="after")
    def _adaptive_knobs_agree(self) -> RuntimeConfig:
        """The adaptive-context knobs must make a valid engine: a clear error here, not a silent
        fall back to classic mode when the first chat opens."""
        if self.idle_hard_after_turns <= self.idle_soft_after_turns:
            raise ValueError(
                f"idle_hard_after_turns ({self.idle_hard_after_turns}) must be greater than "
                f"idle_soft_after_turns ({self.idle_soft_after_turns}): an object is demoted to a stub "
                f"after idle_soft_after_turns idle turns and to an anchor after idle_hard_after_turns"
            )
        from ..adaptive.config import AdaptiveConfig

        try:
            AdaptiveConfig.from_runtime(self)  # any other rule of the engine's own config
        except ValidationError as exc:
            raise ValueError(f"the adaptive-context knobs do not make a valid engine: {_problems(exc)}") from None
        return self

    @field_validator("memory_url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        from ..memory.backend import is_url, url_password
        from ..trace.redact import register_secret

        register_secret(url_password(value))  # masked in traces, errors and displays from now on
        if not is_url(value):
            raise ValueError("memory_url must be a postgresql://... connection string")
        return value.strip()

    @field_validator("cognitive_primitives")
    @classmethod
    def _known_primitives(cls, value: list[str]) -> list[str]:
        unknown = [p for p in value if p not in PRIMITIVES]
        if unknown:
            raise ValueError(f"unknown cognitive primitive(s) {unknown}; accepted: {list(PRIMITIVES)}")
        return list(dict.fromkeys(value))
