"""The IPython magics: ``%arcana_chat``, ``%%arcana``, ``%arcana_replay``, ``%arcana_pins``,
``%arcana_export``, ``%arcana_status`` (and, from :mod:`.user_magics`, ``%arcana_pin``,
``%arcana_unpin``, ``%arcana_memory``).

One :class:`ArcanaMagics` class; defaults are traitlets (``%config ArcanaMagics.default_model =
"openai:gpt-4o-mini"``); each magic's line is parsed by IPython's ``magic_arguments`` and validated
into a pydantic model (:mod:`.options`); one handler per magic. A bad line raises ``UsageError``
with the magic's usage. A provider failure is shown as a short message in the cell; in both cases
the session lives on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display
from pydantic import BaseModel, ValidationError
from traitlets import Bool, Dict, Enum, Float, Int, List, Unicode

from .. import render
from ..cli import printable
from ..exceptions import ArcanaError, RunLockedError
from ..providers.base import Provider
from ..runtime.config import MAX_DEFAULT_RESERVE, RuntimeConfig, default_reserve
from ..runtime.tool_budget import CONVERSATION_FIRST, RUNTIME_TOOLS_SHARE
from .bridge import MainThreadBridge
from .cell_errors import cell_errors, track_errors
from .display import TurnDisplay
from .errors import TurnFailed, TurnInterrupted, explain, field_problem, usage_line
from .notebook_path import NotebookLocation, locate_notebook
from .options import CellOptions, ChatOptions, ExportOptions, ReplayOptions, TurnOptions, interpolate
from .replay_plan import ReplayPlan, replay_configured, replay_lenient, replay_plan
from .reply_delivery import deliver
from .tools import notebook_tools

M = TypeVar("M", bound=BaseModel)

CELL_MAGICS = ("arcana",)


@dataclass
class SessionEntry:
    """One chat of this notebook and what it was opened with."""

    name: str
    runtime: Any
    chat: Any
    location: NotebookLocation
    model: str
    resumed: bool = False
    """This session continues a recorded run."""
    note: str = ""
    """A line for the banner (what --new / --resume would do)."""
    banner: Any = None
    """The banner's display handle: redrawn when the notebook is renamed."""


def _short(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 600 else text[:600] + "…"


@magics_class
class ArcanaMagics(Magics):
    """Chat with LLM agents from cells and inspect what they saw."""

    default_model = Unicode(
        "auto", help="Model of new sessions: provider:model, local, replay:<run_id>, fn:NAME or auto."
    ).tag(config=True)
    default_window = Int(8192, help="Context window (tokens) of new sessions.").tag(config=True)
    default_reserve = Int(
        -1, help="Tokens kept free for the reply (-1: a quarter of the window, at most 1024)."
    ).tag(config=True)
    default_strategy = Unicode("auto", help="Working-set strategy of new sessions.").tag(config=True)
    default_primitives = List(
        Unicode(), default_value=[], help="Cognitive primitives of new sessions."
    ).tag(config=True)
    snapshots = Bool(False, help="Record full prompt snapshots in traces.").tag(config=True)
    engine = Bool(True, help="Adaptive context engine (False: classic mode).").tag(config=True)
    memory = Bool(False, help="Long-term cognitive memory.").tag(config=True)
    memory_path = Unicode(
        "", help="SQLite file of the memory store (empty: ~/.arcana/memory.sqlite3)."
    ).tag(config=True)
    memory_url = Unicode(
        "", help="PostgreSQL server of the memory store, postgresql://... (empty: $ARCANA_MEMORY_URL or the file)."
    ).tag(config=True)
    system_prompt = Unicode("", help="System prompt of new sessions (empty: the runtime's default).").tag(config=True)
    max_tokens = Int(0, help="Cap on reply tokens (0: no cap).").tag(config=True)
    max_tool_steps = Int(
        0, help="Cap on LLM calls per turn in the tool loop (0: the runtime's default)."
    ).tag(config=True)
    seed = Int(0, help="Sampling seed passed to providers that accept one.").tag(config=True)
    stream_interval = Float(0.15, help="Seconds between display updates while a reply streams.").tag(config=True)
    tools = Bool(
        True, help="Offer tools to the model: the notebook tools and ask_user (--no-tools turns them off)."
    ).tag(config=True)
    notebook_tools = Bool(
        True, help="Offer the read-only notebook tools (variables, cells) to the model."
    ).tag(config=True)
    allow_run_code = Bool(False, help="Offer the run_code tool (asks the user before each run).").tag(config=True)
    raise_errors = Bool(
        True, help="A failed turn fails its cell (one red line); False: the line only."
    ).tag(config=True)
    replay_runs = Dict(
        default_value={}, help="Session name -> recorded run id to replay (also $ARCANA_REPLAY_RUNS)."
    ).tag(config=True)
    frontend = Enum(
        ["auto", "mime", "widget"], "auto", help="How a turn is shown: 'mime' (our JupyterLab extension's "
        "renderer, static HTML elsewhere), 'widget' (also the anywidget inspector), 'auto' (the widget in VS Code, "
        "Colab, or when the page never answered the arcana comm)."
    ).tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.sessions: dict[str, SessionEntry] = {}
        self.current: str | None = None
        self.bridge = MainThreadBridge()
        self._location_noted = False
        self._failed_chat: str | None = None
        """The error of the last %arcana_chat that failed (cleared by one that works)."""

    # ---- helpers ------------------------------------------------------------------------------
    def _parse(self, method: Any, line: str, model: type[M], **renames: str) -> M:
        """The magic's line as ``model``; a bad line is a one-line ``UsageError`` naming the flag."""
        name = (
            ("%" if getattr(method, "__name__", "") in CELL_MAGICS else "")
            + str(getattr(method, "__name__", "magic"))
        )
        try:
            ns = parse_argstring(method, line)
        except UsageError as exc:
            raise UsageError(usage_line(name, str(exc))) from None
        values = {renames.get(k, k): v for k, v in vars(ns).items()}
        try:
            return model.model_validate(values)
        except ValidationError as exc:
            flags = {v: f"--{k}" for k, v in renames.items()}
            problems = "; ".join(field_problem(e, flags) for e in exc.errors(include_url=False))
            raise UsageError(usage_line(name, problems)) from None

    def location(self) -> NotebookLocation:
        location = locate_notebook(self.shell.user_ns if self.shell is not None else {})
        if location.is_fallback and not self._location_noted:
            self._location_noted = True
            display({"text/html": render.notice_html(location.describe()), "text/plain": location.describe()}, raw=True)
        return location

    def _replay_runs(self) -> ReplayPlan:
        """Session name -> the recorded run its next ``%arcana_chat`` replays (replay_plan.py)."""
        cursor: dict[str, int] = self.__dict__.setdefault("_replay_cursor", {})
        return replay_plan(self.replay_runs, cursor)

    def _provider_from_namespace(self, model: str) -> Provider | None:
        if not model.startswith("fn:"):
            return None
        from ..providers.function import FunctionProvider

        name = model[3:]
        value = self.shell.user_ns.get(name) if self.shell is not None else None
        if isinstance(value, Provider):
            return value
        if callable(value):
            return FunctionProvider(value, model_name=name)
        raise UsageError(f"--model fn:{name}: no function or Provider named {name!r} in the notebook")

    def entry(self, name: str | None) -> SessionEntry:
        key = name or self.current
        if key is None:
            raise UsageError("no arcana session yet: start one with %arcana_chat (e.g. %arcana_chat --model local)")
        if key not in self.sessions:
            known = ", ".join(self.sessions) or "none"
            raise UsageError(f"no arcana session named {key!r}; sessions: {known}")
        return self.sessions[key]

    def _error(self, message: str) -> None:
        display({"text/html": render.notice_html(message, kind="error"), "text/plain": message}, raw=True)

    # ---- %arcana_chat -------------------------------------------------------------------------
    @magic_arguments()
    @argument("--model", "-m", default=None, help="provider:model, local, replay:<run_id>, fn:NAME or auto")
    @argument("--window", "-w", type=int, default=None, help="context window in tokens")
    @argument("--reserve", type=int, default=None, help="tokens kept free for the reply")
    @argument("--strategy", default=None, help="auto, passthrough, tail_preserve, aggressive_truncate, llm_summarize")
    @argument("--prompt-shape", dest="prompt_shape", default=None,
              help="prompt shape for the model's chat template: auto (default), portable, mistral, llama3, "
                   "text_tools, strict, none")
    @argument("--primitives", default=None, help="comma-separated cognitive primitives: recall,pin")
    @argument("--snapshots", action="store_true", default=None, help="record full prompt snapshots")
    @argument("--engine", dest="engine", action="store_true", default=None, help="adaptive context engine (default)")
    @argument("--classic", dest="engine", action="store_false", help="classic mode: full transcript, no engine")
    @argument("--memory", action="store_true", dest="memory", default=None, help="long-term memory on")
    @argument("--no-memory", action="store_false", dest="memory", help="long-term memory off")
    @argument("--memory-url", dest="memory_url", default=None, metavar="URL",
              help="keep long-term memory on a PostgreSQL server (postgresql://user@host/db)")
    @argument("--tools", dest="tools", action="store_true", default=None,
              help="offer notebook tools and ask_user (default)")
    @argument("--no-tools", dest="tools", action="store_false",
              help="no tools besides the primitives (for small models)")
    @argument("--force", action="store_true", default=None,
              help="offer the primitives and the engine and memory tools even to the bundled 135M model")
    @argument("--otel", action="store_true", default=None,
              help="export every turn as OpenTelemetry GenAI spans over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT; "
                   "also ARCANA_OTEL=1); needs pip install 'arcana-jupyter[otel]'")
    @argument("--resume", default=None, metavar="RUN",
              help="continue a recorded run of this notebook: latest, or a run id (after a kernel restart the "
                   "first %%%%arcana does this by itself)")
    @argument("--new", action="store_true", default=False,
              help="start a fresh run even if this notebook has an earlier one of this session name")
    @argument("--name", "-n", default="main", help="session name (several can live in one notebook)")
    @line_magic
    def arcana_chat(self, line: str = "") -> SessionEntry | None:
        """Start (or resume) a chat session whose traces live beside the notebook."""
        opts = self._parse(self.arcana_chat, line, ChatOptions)
        try:
            entry = self.open_session(opts)
        except ArcanaError as exc:
            self._failed_chat = f"arcana: could not start the session: {_short(exc)}"
            raise UsageError(usage_line("arcana_chat", f"could not start the session: {_short(exc)}")) from None
        self._failed_chat = None
        self.current = entry.name
        self.show_banner(entry)
        return None

    def banner_text(self, entry: SessionEntry) -> str:
        """What a session says when it starts: its model, run, window, mode and trace file."""
        chat = entry.chat
        mode = "adaptive" if chat.engine is not None else "classic"
        trace = entry.location.relative(chat.trace_path) if chat.trace_path is not None else "(no trace)"
        if entry.resumed:
            earlier = "the 1 earlier turn is" if chat.turn == 1 else f"the {chat.turn} earlier turns are"
            head = (f"arcana session {entry.name!r} resumed run {chat.run_id} at turn {chat.turn + 1} "
                    f"({earlier} in its context)")
        else:
            head = f"arcana session {entry.name!r} started run {chat.run_id}"
        message = (f"{head}: model {entry.model}, window {chat.config.total_window} "
                   f"(reply reserve {chat.config.response_reserve}), {mode} context, trace {trace}")
        if entry.location.notebook is not None:
            message += f" (notebook {entry.location.notebook.name})"
        memory = memory_line(chat)
        if memory:
            message += "\n" + memory
        if entry.note:
            message += "\n" + entry.note
        withheld = withheld_line(chat.withheld_tools)
        if withheld:
            message += "\n" + withheld
        held = [n for n in chat.held_back_tools if n not in chat.withheld_tools]
        if held:
            message += (f"\nthe runtime's tools take at most {RUNTIME_TOOLS_SHARE:.0%} of the prompt budget past "
                        f"its first {CONVERSATION_FIRST:,} tokens: held back "
                        f"{', '.join(held)} (a larger --window offers them)")
        return message

    def show_banner(self, entry: SessionEntry) -> None:
        message = self.banner_text(entry)
        entry.banner = display({"text/html": render.notice_html(message), "text/plain": message}, raw=True,
                               display_id=True)

    def refresh_banner(self, entry: SessionEntry) -> None:
        """The notebook was renamed: the banner names the new notebook and trace file."""
        if entry.banner is None:
            return
        message = self.banner_text(entry)
        with contextlib.suppress(Exception):  # a front end gone mid-rename: the trace still records it
            entry.banner.update({"text/html": render.notice_html(message), "text/plain": message}, raw=True)

    def open_session(self, opts: ChatOptions, *, implicit: bool = False) -> SessionEntry:
        """Build the runtime and the chat for ``opts`` (defaults from the traitlets).

        ``opts.resume`` (``latest`` or a run id) continues a recorded run of this notebook; so does
        an ``implicit`` session (the first ``%%arcana`` with no ``%arcana_chat`` in this kernel) when
        the notebook's trace folder holds a run of that session name, unless ``opts.new``. A resumed
        session keeps the settings its run was recorded with; options the line gives win.
        """
        from ..runtime.runtime import Runtime

        if opts.resume and not opts.new and replay_configured(self.replay_runs):
            return self._resume_replayed(opts)
        location = self.location()
        plan = self._replay_runs()
        replay = plan.peek(opts.name)  # taken off the plan once the session opens: a failed line started no run
        resume, recorded, recorded_model, note = self._resume_choice(opts, location, implicit=implicit,
                                                                     replaying=bool(replay))
        same = self.sessions.get(opts.name)
        if resume is not None and same is not None and same.chat.run_id == resume and not same.chat.closed:
            # --resume of the run this kernel's session already writes (after a restart the first
            # %%arcana continued it): that session goes on; with other settings it is reopened
            if all(v is None for v in opts.model_dump(exclude={"resume", "name", "new"}).values()):
                same.resumed = True
                same.note = f"run {resume} is this session's own: it goes on"
                return same
            self._close(same)
            del self.sessions[opts.name]
        model = opts.model or recorded_model or self.default_model
        if replay:
            self._check_replayed_model(opts, location, replay)
            model = f"replay:{replay}@{opts.name}"  # the recorded calls of this session's own agent
        provider = self._provider_from_namespace(model)
        settings: dict[str, Any] = {
            "total_window": self.default_window,
            "response_reserve": self.default_reserve,
            "strategy": self.default_strategy,
            "cognitive_primitives": list(self.default_primitives),
            "trace_include_prompt_snapshots": self.snapshots,
            "context_engine": self.engine,
            "memory": self.memory,
        }
        if self.system_prompt:
            settings["system_prompt"] = self.system_prompt
        if self.memory_path:
            settings["memory_path"] = location.resolve(os.path.expanduser(self.memory_path))
        if self.max_tokens:
            settings["max_tokens"] = self.max_tokens
        if self.seed:
            settings["seed"] = self.seed
        if self.max_tool_steps:
            settings["max_tool_steps"] = self.max_tool_steps
        settings.update(recorded)  # a resumed run goes on as it was recorded
        given = {"total_window": opts.window, "response_reserve": opts.reserve, "strategy": opts.strategy,
                 "cognitive_primitives": opts.primitives, "trace_include_prompt_snapshots": opts.snapshots,
                 "context_engine": opts.engine, "memory": opts.memory, "prompt_shape": opts.prompt_shape}
        settings.update({k: v for k, v in given.items() if v is not None})
        settings.update(model="auto" if provider is not None else model, project_dir=location.folder,
                        trace_dir=location.trace_dir)
        if opts.memory_url or self.memory_url:
            settings["memory_url"] = opts.memory_url or self.memory_url
        if settings["response_reserve"] == -1:
            settings["response_reserve"] = default_reserve(settings["total_window"])
        if settings["response_reserve"] >= settings["total_window"]:
            raise UsageError(usage_line("arcana_chat", (
                f"--window {settings['total_window']} leaves no room for the prompt with --reserve "
                f"{settings['response_reserve']}: give a larger --window or a smaller --reserve (by default the "
                f"reserve is a quarter of the window, at most {MAX_DEFAULT_RESERVE})")))
        use_tools = (self.tools and recorded.get("user_tools") != "off") if opts.tools is None else opts.tools
        if opts.tools is True:
            settings["user_tools"] = "on"  # --tools: offered even to the bundled model
        elif not use_tools:
            settings.update(user_tools="off", engine_tools="off", memory_tools="off")
        if opts.force:
            settings.update(primitive_tools="on", engine_tools="on", memory_tools="on")
        if opts.otel:
            settings["otel"] = True
        try:
            config = RuntimeConfig(**settings)
        except ValidationError as exc:
            problems = "; ".join(field_problem(e) for e in exc.errors(include_url=False))
            if recorded and implicit and not opts.resume:
                # an implicit resume must never stop the user from chatting: a fresh run, and why
                fresh = self.open_session(opts.model_copy(update={"new": True}), implicit=True)
                fresh.note = (f"run {resume} could not be continued (its recorded settings are not valid "
                              f"now: {problems}), so a new run was started")
                return fresh
            raise UsageError(usage_line("arcana_chat", f"bad session settings: {problems}")) from None
        tools = []
        if use_tools and self.notebook_tools and self.shell is not None:
            tools = notebook_tools(
                self.shell, allow_run_code=self.allow_run_code, ask=self.bridge.ask, run_in_main=self.bridge.call
            )
        old = self.sessions.get(opts.name)
        lenient = {"replay": {"strict": False}} if replay and replay_lenient() else None
        runtime = Runtime(lenient, config=config, tools=tools, provider=provider,
                          ask_user=self.bridge.ask_user if use_tools else None)
        notebook = str(location.notebook) if location.notebook else None
        try:
            try:
                chat = runtime.chat(name=opts.name, resume=resume, trace_dir=location.trace_dir, notebook=notebook)
            except RunLockedError:
                if not implicit or opts.resume:
                    raise
                # the run is open in another kernel (a second tab on this notebook): a new run instead
                note = f"run {resume} is open in another kernel, so a new run was started"
                resume = None
                chat = runtime.chat(name=opts.name, trace_dir=location.trace_dir, notebook=notebook)
        except BaseException:
            runtime.close()
            raise
        if old is not None:  # the same name again: the old session ends cleanly
            self._close(old)
        entry = SessionEntry(opts.name, runtime, chat, location, chat.model_string,
                             resumed=resume is not None, note=note)
        self.sessions[opts.name] = entry
        if replay:
            plan.take(opts.name)
        return entry

    @staticmethod
    def _check_replayed_model(opts: ChatOptions, location: NotebookLocation, replay: str) -> None:
        """A replay: a line that names another model than the run it would replay ran on started no
        run when it was recorded (no API key, a model that would not load): it fails again, and the
        run stays for the line that started it."""
        if not opts.model:
            return
        from ..exceptions import ConfigError
        from .resuming import recorded_settings

        _, ran_on = recorded_settings(location.trace_dir, replay)
        if ran_on and not same_model(opts.model, ran_on):
            raise ConfigError(f"replaying: the next recorded run of session {opts.name!r} ({replay}) ran on {ran_on}, "
                              f"not {opts.model}: this line started no run when the notebook was recorded")

    def _resume_replayed(self, opts: ChatOptions) -> SessionEntry:
        """``%arcana_chat --resume`` in a replay (``report --verify``): the notebook runs in one kernel,
        so the run the recording resumed after its restart is the one this kernel's session of that
        name replays; it goes on. Any other run cannot be replayed from here: one line says why."""
        from ..providers.recorded import ReplayProvider

        entry = self.sessions.get(opts.name)
        replaying = entry.chat.provider if entry is not None else None
        if entry is not None and isinstance(replaying, ReplayProvider) and opts.resume in ("latest", replaying.run_id):
            entry.resumed = True
            entry.note = f"replaying: the run this session replays ({replaying.run_id}) goes on"
            return entry
        raise UsageError(usage_line("arcana_chat", (
            f"--resume {opts.resume}: cannot be replayed here: no session {opts.name!r} of this notebook's "
            "earlier cells replays that run (the recording continued a run these cells did not start)")))

    def _resume_choice(self, opts: ChatOptions, location: NotebookLocation, *, implicit: bool,
                       replaying: bool) -> tuple[str | None, dict[str, Any], str | None, str]:
        """The run to continue (or ``None``), its recorded settings and model, and a line for the banner."""
        from .resuming import latest_run, pick_run, recorded_settings, turns_word

        if opts.new and opts.resume:
            raise UsageError(usage_line("arcana_chat", "--new starts a fresh run and --resume continues one: "
                                                       "give one of them"))
        run = None
        if opts.resume:
            try:
                run = pick_run(location.trace_dir, opts.name, opts.resume)
            except ValueError as exc:
                raise UsageError(usage_line("arcana_chat", str(exc))) from None
        elif not opts.new and not location.is_fallback:
            earlier = latest_run(location.trace_dir, opts.name)
            if earlier is not None and implicit and not replaying:
                run = earlier
            elif earlier is not None and not replaying:
                return None, {}, None, (f"an earlier run of {opts.name!r} ({earlier.run_id}, "
                                        f"{turns_word(earlier.turns)}) can be continued: %arcana_chat --resume latest")
        if run is None:
            return None, {}, None, ""
        recorded, model = recorded_settings(location.trace_dir, run.run_id)
        recorded_model = recorded.pop("model", None)
        if recorded_model == "auto" and model and model.startswith("function:"):
            recorded_model = "fn:" + model.split(":", 1)[1]  # a fn: model: the notebook's function again
        note = "" if opts.resume else "to start a fresh run instead: %arcana_chat --new"
        return run.run_id, recorded, recorded_model, note

    @staticmethod
    def _close(entry: SessionEntry) -> None:
        try:
            entry.chat.close()
        finally:
            entry.runtime.close()

    def close_all(self) -> None:
        for entry in list(self.sessions.values()):
            with contextlib.suppress(Exception):  # unloading must go on
                self._close(entry)
        self.sessions.clear()
        self.current = None

    # ---- %%arcana -----------------------------------------------------------------------------
    @magic_arguments()
    @argument("--session", "-s", default=None, help="which session (default: the latest started)")
    @argument("--format", "-f", default="markdown", metavar="FORMAT",
              help="markdown (default: the reply rendered under the cell), code (the reply's code goes into a "
                   "new cell below), json (the cell's result is the reply with its run, turn, status, usage), "
                   "text (the cell's result is the reply as plain text)")
    @argument("--out", "-o", default=None, metavar="NAME", help="store the reply's text in the variable NAME")
    @cell_magic
    def arcana(self, line: str, cell: str) -> Any:
        """Send the cell as the user's turn. ``{var}`` fills in notebook variables, ``{In[n]}`` /
        ``{Out[n]}`` / ``{Err[n]}`` the source, result or error of cell n; ``{{ }}`` is literal."""
        opts = self._parse(self.arcana, line, CellOptions)
        if not self.sessions and opts.session is None:  # no %arcana_chat yet: start one with the defaults
            failed = self._failed_chat
            unplanned = replay_configured(self.replay_runs) and not self._replay_runs().peek(ChatOptions().name)
            if failed or unplanned:
                # never paper over a failed %arcana_chat with a session of other settings; a replay
                # (``report --verify``) replays the run this cell started itself, and never calls a model
                raise UsageError((failed + "\n" if failed else "") +
                                 "no session: run %arcana_chat (fixed) before sending a turn")
            try:
                entry = self.open_session(ChatOptions(), implicit=True)
            except ArcanaError as exc:
                self._error(f"arcana: could not start a session: {_short(exc)}")
                return None
            self.current = entry.name
            self.show_banner(entry)  # an implicit session says what it is, like %arcana_chat
        elif opts.session is not None and opts.session not in self.sessions and not replay_configured(self.replay_runs):
            self._resume_named(opts.session)  # --session NAME after a restart: that session's run goes on
        entry = self.entry(opts.session)
        text = self._fill(cell)
        if not text.strip():
            raise UsageError("the cell is empty: write your message under %%arcana")
        reply = self.send(entry, text)
        return deliver(self.shell, reply, opts)

    def _resume_named(self, name: str) -> None:
        """``%%arcana --session NAME`` with no such session in this kernel: continue the notebook's
        latest run of ``NAME`` if it has one (else :meth:`entry` says which sessions there are)."""
        from .resuming import latest_run

        try:
            options = ChatOptions(name=name)
        except ValidationError:
            return  # not a session name: entry() answers
        location = self.location()
        if location.is_fallback or latest_run(location.trace_dir, name) is None:
            return
        try:
            entry = self.open_session(options, implicit=True)
        except ArcanaError as exc:
            raise UsageError(f"arcana: could not resume session {name!r}: {_short(exc)}") from None
        self.show_banner(entry)

    def _fill(self, cell: str) -> str:
        """The cell with ``{var}``, ``{In[n]}``, ``{Out[n]}``, ``{Err[n]}`` filled in."""
        shell = self.shell
        user_ns = shell.user_ns if shell is not None else {}
        history = getattr(shell, "history_manager", None)
        raw = getattr(history, "input_hist_raw", None)
        try:
            return interpolate(cell, user_ns, inputs=raw if isinstance(raw, list) else None,
                               errors=cell_errors(shell))
        except (KeyError, ValueError) as exc:
            raise UsageError(str(exc.args[0] if exc.args else exc)) from None

    def send(self, entry: SessionEntry, text: str) -> Any:
        """Run one turn with live display; returns the ``ChatReply`` (or ``None`` if it never started)."""
        chat = entry.chat
        from .widget import shell_link, wants_widget

        link = shell_link(self.shell)
        shown = link if wants_widget(self.frontend, link, getattr(self.shell, "user_ns", None)) else None
        view = TurnDisplay(chat, entry.location, interval=self.stream_interval, link=shown)
        view.start()
        unsubscribe = chat.subscribe(view.on_event)
        future = asyncio.run_coroutine_threadsafe(
            chat.send(text, on_token=view.on_token, raise_errors=False), chat.runtime.loop.loop
        )
        try:
            reply = self.bridge.run_until(future, view.tick)
        except (KeyboardInterrupt, concurrent.futures.CancelledError) as exc:
            # Ctrl-C / the stop button; or a replay of a turn the user interrupted (the replay provider
            # cancels it where the recording was cancelled): the same line either way
            if isinstance(exc, KeyboardInterrupt):
                future.cancel()
            _wait_for_turn_end(view)  # the runtime records the cancellation and the partial reply
            unsubscribe()
            view.finish()
            received = len(view.partial_text())
            kept = f"partial reply ({received} characters) kept in the trace" if received else "nothing was received"
            raise TurnInterrupted(f"interrupted; {kept}") from None
        except ArcanaError as exc:  # the turn could not even start (closed session...)
            unsubscribe()
            raise TurnFailed(explain(exc, model=entry.model, window=chat.config.total_window,
                                     reserve=chat.config.response_reserve)) from None
        unsubscribe()
        view.tick(force=True)
        view.finish()
        if reply.status == "error" and reply.error is not None:
            line = explain(reply.error, model=entry.model, window=chat.config.total_window,
                           reserve=chat.config.response_reserve)
            if self.raise_errors:
                raise TurnFailed(line)
            self._error(f"arcana turn failed: {line}")
        return reply

    # ---- %arcana_replay -----------------------------------------------------------------------
    @magic_arguments()
    @argument("run_id", nargs="?", default=None, help="run to replay (default: the current session's)")
    @argument("--turn", "-t", type=int, default=None, help="turn to open at")
    @argument("--session", "-s", default=None, help="session whose agent and folder to use")
    @argument("--window", "-w", type=int, default=None,
              help="what if: rebuild the turn (--turn, default the last) with this window, beside the recorded one")
    @argument("--reserve", type=int, default=None, help="what if: this reply reserve")
    @argument("--strategy", default=None,
              help="what if: this strategy (auto, passthrough, tail_preserve, aggressive_truncate, llm_summarize)")
    @argument("--mode", default=None, help="what if: classic (no adaptive-context sections) or adaptive")
    @argument("--relevance", default=None, help="what if: lexical (BM25) or semantic (with the embedding model)")
    @line_magic
    def arcana_replay(self, line: str = "") -> None:
        """Scrub the turns of a run: decisions, prompt (digest-checked), pins, changes per turn."""
        opts = self._parse(self.arcana_replay, line, ReplayOptions)
        from .replay_frames import build_frames, decision_errors, replay_checks
        from .replay_view import NotebookProgress, display_replay

        if opts.session or (opts.run_id is None and self.sessions):
            entry = self.entry(opts.session)
            run_id, agent, trace_dir, window = (
                opts.run_id or entry.chat.run_id, entry.chat.agent,
                entry.location.trace_dir, entry.chat.config.total_window,
            )
        else:
            location = self.location()
            trace_dir, agent, window = location.trace_dir, None, self.default_window
            from ..report.sources import replay_source  # the runs the saved notebook recorded count too

            trace_dir, found = replay_source(location.notebook, trace_dir, opts.run_id)
            run_id = found or _latest_run(trace_dir)
        progress = NotebookProgress(run_id)
        try:
            frames = build_frames(trace_dir, run_id, agent=agent, progress=progress,
                                  verify=replay_checks(trace_dir, run_id, agent, opts.turn), rows=False)
        except ArcanaError as exc:
            if progress.handle is not None:
                progress.handle.update({"text/plain": ""}, raw=True)
            raise UsageError(f"cannot replay {run_id}: {_short(exc)}") from None
        display_replay(frames, trace_dir=trace_dir, turn=opts.turn,
                       default_window=window, handle=progress.handle)
        refused = decision_errors(frames)
        if refused is not None:  # the other turns replay: one line on those whose decision cannot be read
            self._error(printable(f"{run_id}: {refused if len(refused) <= 600 else refused[:600] + '…'}"))
        if opts.what_if:
            self._what_if(frames, trace_dir, opts)

    def _what_if(self, frames: list[dict[str, Any]], trace_dir: Path, opts: ReplayOptions) -> None:
        """``%arcana_replay --turn N --window W``: turn N rebuilt with W beside the recorded prompt."""
        from .replay_frames import counterfactual

        turn = opts.turn or max((int(f["turn"]) for f in frames), default=0)
        frame = next((f for f in reversed(frames) if int(f["turn"]) == turn), None)
        if frame is None:
            known = ", ".join(str(f["turn"]) for f in frames) or "none"
            raise UsageError(usage_line("arcana_replay", f"--turn {turn}: no such turn in this run (turns: {known})"))
        try:
            html = counterfactual(trace_dir, frame, opts.strategy, opts.window, opts.reserve, mode=opts.mode,
                                  relevance=opts.relevance)
        except ArcanaError as exc:
            raise UsageError(f"cannot rebuild turn {turn} with other settings: {_short(exc)}") from None
        what = ", ".join(f"{k} {v}" for k, v in (("window", opts.window), ("reserve", opts.reserve),
                                                 ("strategy", opts.strategy), ("mode", opts.mode),
                                                 ("relevance", opts.relevance)) if v is not None)
        display({"text/html": html, "text/plain": f"turn {turn} rebuilt with {what} beside the recorded prompt"},
                raw=True)

    # ---- %arcana_pins -------------------------------------------------------------------------
    @magic_arguments()
    @argument("--session", "-s", default=None)
    @line_magic
    def arcana_pins(self, line: str = "") -> None:
        """The session's active pins (unpin them from a turn's inspector in JupyterLab, or ``session().unpin``)."""
        opts = self._parse(self.arcana_pins, line, TurnOptions)
        entry = self.entry(opts.session)
        chat = entry.chat
        pins = [p.summary() for p in chat.pins.active(max(chat.turn, 1))]
        html = render.style_block() + '<div class="arcana">' + render.pins_html(pins) + "</div>"
        plain = printable("\n".join(
            f"{p.get('pin_id')}: {p.get('label') or ''} ({p.get('tokens')} tokens)" for p in pins
        ) or "no active pins")
        display({"text/html": html, "text/plain": plain}, raw=True)

    # ---- %arcana_memory, %arcana_pin, %arcana_unpin: user_magics.py (registered in load) ---------

    # ---- %arcana_export -----------------------------------------------------------------------
    @magic_arguments()
    @argument("--output", "-o", default=None, help="where to write the report (default: NOTEBOOK.report.html)")
    @argument("--verify", action="store_true", help="re-execute with the replay provider and check every turn")
    @argument("--embed", action="store_true", help="also store the traces in the notebook file's metadata")
    @line_magic
    def arcana_export(self, line: str = "") -> str | None:
        """Write the notebook's self-contained HTML report (save the notebook first)."""
        opts = self._parse(self.arcana_export, line, ExportOptions)
        location = self.location()
        if location.notebook is None or not location.notebook.exists():
            raise UsageError(
                "cannot tell which notebook file to export (set ARCANA_NOTEBOOK, or run `arcana report NOTEBOOK` "
                "in a terminal)"
            )
        from ..report.build import build_report

        out = build_report(location.notebook, output=Path(opts.output) if opts.output else None, verify=opts.verify,
                           embed=opts.embed)
        message = f"arcana: report written to {out} (from the notebook as last saved)"
        display({"text/html": render.notice_html(message), "text/plain": message}, raw=True)
        return str(out)

    # ---- %arcana_status -----------------------------------------------------------------------
    @line_magic
    def arcana_status(self, line: str = "") -> None:
        """The notebook's sessions: run, model, turns, tokens, cost, trace file."""
        if line.strip():
            raise UsageError("%arcana_status takes no arguments")
        rows = []
        for name, entry in self.sessions.items():
            chat = entry.chat
            rows.append({
                "name": name, "default": name == self.current, "run_id": chat.run_id, "model": entry.model,
                "turns": chat.turn, "input_tokens": chat.usage.input_tokens, "output_tokens": chat.usage.output_tokens,
                "cost_usd": chat.cost_usd, "mode": "adaptive" if chat.engine is not None else "classic",
                "trace_path": entry.location.relative(chat.trace_path) if chat.trace_path else None,
            })
        plain = "\n".join(
            f"{r['name']}: run {r['run_id']} · {r['model']} · {r['turns']} turns" for r in rows
        ) or "no sessions"
        display({"text/html": render.sessions_html(rows), "text/plain": plain}, raw=True)


def same_model(line: str, recorded: str) -> bool:
    """Whether ``--model line`` names the model a run recorded as ``recorded`` (its model string:
    ``function:NAME`` for ``fn:NAME``, ``local:FILE`` for ``local`` and ``auto``)."""
    if line in (recorded, "auto"):
        return True
    if line.startswith("fn:"):
        return recorded == "function:" + line[3:]
    return line == "local" and recorded.startswith("local")


def memory_line(chat: Any) -> str:
    """The banner's line about long-term memory when it is on: which store, and what the digest holds."""
    memory = chat.memory
    if memory is None:
        return ""
    from ..memory.backend import masked

    store = memory.store
    where = masked(str(store.path))
    home = os.path.expanduser("~")
    if where.startswith(home + os.sep):
        where = "~" + where[len(home):]
    entries = len(memory.digest.items) if memory.digest is not None else 0
    held = (f"{entries} memor{'y' if entries == 1 else 'ies'} in the prompt's digest" if entries
            else "nothing in the digest yet")
    return (f"memory on: {'PostgreSQL' if store.backend == 'postgresql' else 'SQLite'} store {where} "
            f"({held}; %arcana_memory list shows the store)")


def withheld_line(names: list[str]) -> str:
    """The banner's one line about tools the bundled model is not offered (empty when none)."""
    if not names:
        return ""
    shown = ", ".join(dict.fromkeys(names).keys())
    if len(shown) > 120:
        shown = shown[:117].rsplit(", ", 1)[0] + ", …"
    return (f"not offered to this small model (it calls tools in a loop): {shown}; "
            "--tools offers the notebook tools, --force the rest")


def _wait_for_turn_end(view: TurnDisplay, timeout: float = 10.0) -> None:
    """After Ctrl-C: wait (ignoring further Ctrl-C) until the cancelled turn recorded its end."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(e.event_type == "turn_end" for e in list(view.events)):
                return
            time.sleep(0.02)
        except KeyboardInterrupt:
            continue


def entry_bundle(entry: SessionEntry) -> dict[str, Any]:
    from .display import relative_bundle

    return relative_bundle(entry.chat.turn_bundle(max(entry.chat.turn, 1)), entry.location)


def _latest_run(trace_dir: Path) -> str:
    from ..trace.reader import TraceReader

    if not trace_dir.is_dir():
        raise UsageError(f"no traces yet in {trace_dir}: start a session with %arcana_chat, or give a RUN_ID")
    runs = TraceReader(trace_dir).list_runs()
    if not runs:
        raise UsageError(f"no runs in {trace_dir}")
    return sorted(runs, key=lambda r: r.started or "")[-1].run_id


def load(ipython: Any) -> ArcanaMagics:
    magics = ArcanaMagics(shell=ipython)
    ipython.register_magics(magics)
    from .user_magics import register as register_user_magics

    register_user_magics(ipython, magics)  # %arcana_pin, %arcana_unpin, %arcana_memory
    track_errors(ipython)
    return magics


