"""Runtime: providers, tools and settings, from which chats and agent pools are opened."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..providers.base import Provider
from ..schema.events import RunStartMetadata
from ..trace.writer import TraceWriter, new_run_id
from ..version import __version__
from .adaptive_capability import adaptive_capability
from .capabilities import CapabilityFactory
from .config import RuntimeConfig, flatten_groups
from .event_loop_thread import LoopThread
from .intercept import ASK_USER, AskUser, InterceptedTool
from .memory_capability import memory_capability
from .otel_capability import otel_capability
from .primitives_capability import primitives_capability
from .session import ChatSession
from .tools import Tool, ToolRegistry


def local_context(total_window: int) -> int:
    """The llama.cpp context for a ``total_window`` budget: the window itself. The budget is counted
    with the model's own tokenizer through its own chat template (providers/local.py), and the
    reply is capped at the reserve, so prompt and reply together never exceed it."""
    return total_window


DEFAULT_CAPABILITIES: tuple[CapabilityFactory, ...] = (
    otel_capability, primitives_capability, adaptive_capability, memory_capability)
"""The runtime's capabilities, in their fixed order (runtime/capabilities.py says why): the runtime
picks them; the session knows only :class:`~arcana_jupyter.runtime.capabilities.Capability`."""


class Runtime:
    """Opens chats (``runtime.chat()``) and pools (``runtime.collaborate()``) with shared settings.

    Args:
        providers: API keys by provider name (``{"openai": "sk-..."}``), or dicts with ``api_key``
            and ``base_url``. Keys may also come from the usual environment variables.
        config: settings; see :class:`RuntimeConfig`.
        tools: Python functions (or :class:`Tool`) the model may call.
        provider: a ready :class:`Provider` instance to use instead of resolving ``config.model``
            (e.g. a ``FunctionProvider`` in tests).
        ask_user: how ``ask_user`` questions reach a person (a callable returning the answer).
    """

    def __init__(
        self,
        providers: Mapping[str, Any] | None = None,
        config: RuntimeConfig | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        provider: Provider | None = None,
        ask_user: AskUser | None = None,
    ) -> None:
        self.providers = dict(providers or {})
        self.config = config or RuntimeConfig()
        self.tools = ToolRegistry(tools)
        self.provider_instance = provider
        self.ask_user = ask_user
        self.loop = LoopThread()
        self.capability_factories: list[CapabilityFactory] = list(DEFAULT_CAPABILITIES)
        """What each new session gets, in order: OpenTelemetry, primitives, adaptive context, memory
        (runtime/capabilities.py says why this order)."""

    def add_capability(self, factory: CapabilityFactory) -> CapabilityFactory:
        """Give every session opened afterwards the capability ``factory(context)`` makes (``None``:
        none for that session). It comes after the runtime's own: last at start, first at close."""
        self.capability_factories.append(factory)
        return factory

    def tool(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: register ``fn`` as a tool for every chat opened afterwards."""
        self.tools.add(fn)
        return fn

    def secrets(self) -> list[str]:
        """Every key this runtime knows (API keys, secret header values such as Azure's ``api-key``):
        masked wherever text is recorded."""
        from ..providers.connection import secret_header_values

        found: list[str] = []
        for value in self.providers.values():
            key = value.get("api_key") if isinstance(value, Mapping) else value
            if isinstance(key, str) and key:
                found.append(key)
            if isinstance(value, Mapping) and isinstance(value.get("headers"), Mapping):
                found += secret_header_values(value["headers"])
        for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY"):
            if os.environ.get(var):
                found.append(os.environ[var])
        return found

    def _provider(self, model: str, trace_dir: Path | None,
                  config: RuntimeConfig | None = None) -> tuple[Provider, str, str]:
        if self.provider_instance is not None:
            name = getattr(self.provider_instance, "model_name", None) or self.provider_instance.name
            return self.provider_instance, str(name), f"{self.provider_instance.name}:{name}"
        from ..providers.connection import StreamLimits
        from ..providers.registry import create_provider

        cfg = config or self.config
        limits = StreamLimits(max_reply_bytes=cfg.max_reply_bytes, max_line_bytes=cfg.max_sse_line_bytes,
                              max_stream_seconds=cfg.max_stream_seconds, stream_idle_seconds=cfg.stream_idle_seconds)
        provider, provider_model = create_provider(
            model, self.providers, timeout=cfg.request_timeout, max_retries=cfg.max_retries,
            trace_dir=trace_dir, n_ctx=local_context(cfg.total_window), seed=cfg.seed, limits=limits,
        )
        resolved = model if model != "auto" else f"{provider.name}:{provider_model}"
        return provider, provider_model, resolved

    def _config_record(self, config: RuntimeConfig) -> dict[str, Any]:  # JSON edge: run_start.config
        data = config.model_dump(mode="json")
        data.pop("prices", None)
        if data.get("memory_url"):
            from ..memory.backend import masked

            data["memory_url"] = masked(data["memory_url"])  # never a password in a trace
        return data

    def chat(
        self,
        *,
        name: str = "main",
        resume: str | None = None,
        config: RuntimeConfig | None = None,
        trace_dir: str | Path | None = None,
        run_id: str | None = None,
        notebook: str | None = None,
        ask_user: AskUser | None = None,
        **overrides: Any,
    ) -> ChatSession:
        """Open a chat. Use as ``async with runtime.chat() as chat`` (or ``with`` + ``send_sync``).

        ``resume=RUN_ID`` rebuilds the session from its trace — history, pins, adaptive state —
        and continues writing to the same trace file. Keyword ``overrides`` change single settings
        (``runtime.chat(total_window=4000)``).
        """
        cfg = config or self.config
        if overrides:  # a group (adaptive=, memory=) overrides the flat values it spells
            cfg = RuntimeConfig.model_validate(cfg.model_dump() | flatten_groups(overrides))
        tdir = Path(trace_dir) if trace_dir is not None else cfg.trace_dir
        if resume is not None:
            from .resume import resume_session

            return resume_session(self, resume, cfg, tdir, agent=name, ask_user=ask_user or self.ask_user,
                                  notebook=notebook)
        rid = run_id or new_run_id()
        writer = self.open_writer(tdir, rid, cfg)
        try:
            return self.new_session(name, rid, writer, cfg, ask_user=ask_user or self.ask_user, notebook=notebook)
        except BaseException:
            writer.close()  # release the run's lock
            # a session that never started (no such model, bad config) leaves no empty run behind
            if writer.path is not None and writer.path.is_file() and writer.path.stat().st_size == 0:
                writer.path.unlink()
            raise

    def open_writer(self, trace_dir: Path | None, run_id: str, cfg: RuntimeConfig) -> TraceWriter:
        path = None
        if trace_dir is not None:
            trace_dir.mkdir(parents=True, exist_ok=True)
            path = trace_dir / f"{run_id}.jsonl"
        return TraceWriter(path, run_id, content=cfg.trace_content, secrets=self.secrets())

    def new_session(
        self,
        agent: str,
        run_id: str,
        writer: TraceWriter,
        cfg: RuntimeConfig,
        *,
        ask_user: AskUser | None,
        notebook: str | None = None,
        resumed_from: str | None = None,
        prepare: Callable[[ChatSession], None] | None = None,
    ) -> ChatSession:
        """Build a session that writes to ``writer`` and record its ``run_start`` event.

        The one way a session comes to be: :meth:`chat` (a new run), :class:`AgentPool` members
        (one run, several agents) and resume (``resumed_from=RUN_ID``) all go through it. The
        provider is resolved, user tools offered or withheld, the capabilities attached in order
        (OpenTelemetry, primitives, adaptive engine, memory), then ``prepare(session)`` — if given — restores state
        (resume: history, pins, usage) before ``run_start`` is written. The caller owns ``writer``.
        """
        session = self._build_session(agent, run_id, writer, cfg, ask_user=ask_user)
        if prepare is not None:
            prepare(session)
        self._run_start(session, notebook=notebook, resumed_from=resumed_from)
        return session

    def _build_session(
        self, agent: str, run_id: str, writer: TraceWriter, cfg: RuntimeConfig, *, ask_user: AskUser | None
    ) -> ChatSession:
        tdir = writer.path.parent if writer.path is not None else None
        provider, provider_model, model_string = self._provider(cfg.model, tdir, cfg)
        cfg = self._as_replayed(provider, cfg)
        from .builtin_tools import offers_tools

        withheld: list[str] = []
        tools = self.tools.copy()
        if not offers_tools(cfg.user_tools, provider, provider_model):
            withheld += [spec.name for spec in tools.specs()] + (["ask_user"] if ask_user is not None else [])
            tools, ask_user = ToolRegistry(()), None
        intercepted: list[InterceptedTool] = [ASK_USER] if ask_user is not None else []
        session = ChatSession(
            self, agent=agent, run_id=run_id, writer=writer, config=cfg, provider=provider,
            provider_model=provider_model, model_string=model_string, tools=tools, intercepted=intercepted,
            ask_user=ask_user, withheld=withheld,
        )
        session.check_tool_names()
        session.attach(self.capability_factories)
        return session

    @staticmethod
    def _as_replayed(provider: Any, cfg: RuntimeConfig) -> RuntimeConfig:
        """A replay (``replay:RUN``, ``report --verify``) runs with the behaviour its run was recorded with:
        a run from before standing instructions replays without them (``resume.as_recorded``)."""
        from ..providers.recorded import ReplayProvider
        from .resume import as_recorded, first_run_config

        if not isinstance(provider, ReplayProvider):
            return cfg
        try:
            events = provider.reader.events(provider.run_id, event_types=("run_start",))
        except Exception:  # an unreadable trace: the replay itself says so, with its own error
            return cfg
        return as_recorded(cfg, first_run_config(list(events)))

    def _run_start(self, session: ChatSession, *, notebook: str | None = None,
                   resumed_from: str | None = None) -> None:
        session.emit(RunStartMetadata.build(
            arcana_version=__version__,
            model=session.model_string,
            provider=session.provider.name,
            config=self._config_record(session.config),
            system_prompt=session.config.system_prompt,
            tools=[t.model_dump(mode="json") for t in session.tool_specs()],
            notebook=notebook,
            resumed_from=resumed_from,
            withheld_tools=list(session.withheld_tools),
        ), turn=None)

    def collaborate(self, *, cognitive_primitives: list[str] | None = None, trace_dir: str | Path | None = None,
                    run_id: str | None = None) -> Any:
        """Open an agent pool: members with their own history, pins and budget, one trace."""
        from .pool import AgentPool

        return AgentPool(self, cognitive_primitives=cognitive_primitives, trace_dir=trace_dir, run_id=run_id)

    def close(self) -> None:
        self.loop.close()

