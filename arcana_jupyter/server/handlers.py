"""``GET /arcana/trace``: a run's trace resolved for the viewer, read only from files under the server's root.

What the handler checks before anything is read (the same rules as the kernel's comm, docs/SECURITY.md):
``path`` is relative to the server's root, has no ``..``, ``.`` or empty part and no hidden part (unless
the server allows hidden files), names a ``.jsonl`` file that exists and resolves (symbolic links
followed) inside the root, of at most :attr:`ArcanaTraceServer.max_bytes`. Then the trace worker
(:mod:`.worker`) reads it, in a child process bounded in memory and time. Every answer is a
``TraceReply`` as JSON (``ok: false`` and a message saying what is wrong: the same errors as ``arcana
trace``); a refused path is also an HTTP error status (400, 403, 404, 413).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import threading
from pathlib import Path, PurePosixPath
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from traitlets import Float, Integer
from traitlets.config import LoggingConfigurable

from ..schema.frontend import TraceRequest
from ..schema.trace_view import MAX_BATCH
from .worker import DEFAULT_MEMORY_MB, DEFAULT_SECONDS, TraceWorker

ROUTE = "/arcana/trace"


class ArcanaTraceServer(LoggingConfigurable):
    """The bounds of the server extension (``c.ArcanaTraceServer.<name>`` in a Jupyter server config)."""

    max_bytes = Integer(512 * 1024 * 1024, config=True,
                        help="The largest trace file the viewer endpoint reads (larger: HTTP 413, read it with "
                             "`arcana trace`).")
    max_seconds = Float(DEFAULT_SECONDS, config=True,
                        help="How long reading one answer may take before the trace worker is stopped.")
    max_memory_mb = Integer(DEFAULT_MEMORY_MB, config=True,
                            help="The trace worker's address space in MiB (POSIX): a trace needing more is refused.")

    def worker(self, root: Path) -> TraceWorker:
        return TraceWorker(root, memory_mb=self.max_memory_mb, seconds=self.max_seconds)


class Refused(Exception):
    """A request refused before any trace is read: its HTTP status and what to say."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _clip(text: str, limit: int = 120) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"


def trace_file(root: Path, path: str | None, *, allow_hidden: bool, max_bytes: int) -> str:
    """The file ``path`` names, relative to ``root``, after every check of the module docstring."""
    if not path:
        raise Refused(400, "name the trace file: path=<a .jsonl file relative to the server's root>")
    if len(path) > 4096 or "\x00" in path or "\\" in path:
        raise Refused(400, f"{_clip(path)} is not a path relative to the server's root")
    parts = PurePosixPath(path.lstrip("/")).parts if path.strip("/") else ()
    raw_parts = path.lstrip("/").split("/")
    if not parts or any(part in ("", ".", "..") for part in raw_parts):
        raise Refused(400, f"{_clip(path)}: a path relative to the server's root has no '..', '.' or empty parts")
    if not allow_hidden and any(part.startswith(".") for part in parts):
        raise Refused(403, f"{_clip(path)} is a hidden file (the server does not show hidden files)")
    if not parts[-1].endswith(".jsonl"):
        raise Refused(400, f"{_clip(path)} is not a trace file (a .jsonl file)")
    candidate = root.joinpath(*parts)
    try:
        resolved = candidate.resolve()
        inside = resolved.is_relative_to(root)
    except (OSError, RuntimeError, ValueError):
        raise Refused(400, f"{_clip(path)} cannot be looked up") from None
    if not inside:
        raise Refused(403, f"{_clip(path)} resolves outside the server's root through a symbolic link; not read")
    try:
        st = resolved.stat()
    except FileNotFoundError:
        raise Refused(404, f"trace file {path} does not exist") from None
    except OSError as exc:
        raise Refused(400, f"trace file {path} cannot be read ({exc.strerror or exc})") from None
    if not resolved.is_file():
        raise Refused(400, f"{path} is not a file")
    if st.st_size > max_bytes:
        raise Refused(413, f"the trace {path} is {st.st_size:,} bytes (more than the {max_bytes:,} the viewer reads): "
                           f"read it with `arcana trace show {path}`")
    return "/".join(parts)


def request_of(arguments: dict[str, list[bytes]]) -> dict[str, Any]:  # JSON edge: a TraceRequest as JSON
    """The ``trace`` request the query string asks (a wrong value: :class:`Refused`)."""
    def one(name: str) -> str | None:
        values = arguments.get(name)
        return values[-1].decode("utf-8", errors="replace") if values else None

    def turn_number(name: str, value: str) -> int:
        if not value.strip().lstrip("-").isdigit() or len(value) > 12:
            raise Refused(400, f"{name}={_clip(value)} is not a turn number")
        return int(value)

    out: dict[str, Any] = {"type": "trace", "what": one("what") or "run"}
    if out["what"] not in ("run", "turn", "diff", "turns"):
        raise Refused(400, f"what={_clip(out['what'])}: ask for run, turn, diff or turns")
    agent = one("agent")
    if agent is not None:
        if not agent or len(agent) > 200:
            raise Refused(400, f"agent={_clip(agent)} is not an agent name")
        out["agent"] = agent
    for name in ("turn", "a", "b"):
        value = one(name)
        if value is not None:
            out[name] = turn_number(name, value)
    # a `turns` request: turns=3,4,5 and pairs=2:3,3:4 (at most MAX_BATCH of each)
    turns, pairs = one("turns"), one("pairs")
    if turns is not None or pairs is not None:
        if out["what"] != "turns":
            raise Refused(400, "turns= and pairs= belong to a what=turns request")
        items = [t for t in (turns or "").split(",") if t] if turns is not None else []
        couples = [p for p in (pairs or "").split(",") if p] if pairs is not None else []
        if len(items) > MAX_BATCH or len(couples) > MAX_BATCH:
            raise Refused(400, f"a turns request asks for at most {MAX_BATCH} turns and {MAX_BATCH} pairs")
        out["turns"] = [turn_number("turns", t) for t in items]
        out["pairs"] = []
        for couple in couples:
            a, sep, b = couple.partition(":")
            if not sep:
                raise Refused(400, f"pairs={_clip(couple)}: a pair of turns is written a:b")
            out["pairs"].append({"a": turn_number("pairs", a), "b": turn_number("pairs", b)})
    TraceRequest.model_validate(out)
    return out


class TraceHandler(APIHandler):
    """``GET /arcana/trace``: see the module docstring."""

    def initialize(self, config: ArcanaTraceServer, worker: TraceWorker) -> None:
        self.config_ = config
        self.worker = worker
        self.gone = threading.Event()
        """Set when the page closed the connection (an aborted fetch): a request still queued is not read."""

    def on_connection_close(self) -> None:
        self.gone.set()

    @tornado.web.authenticated
    async def get(self) -> None:
        path = self.get_argument("path", None)
        try:
            request = request_of(self.request.arguments)
            allow_hidden = bool(getattr(self.settings.get("contents_manager"), "allow_hidden", False))
            file = trace_file(self.worker.root, path, allow_hidden=allow_hidden, max_bytes=self.config_.max_bytes)
        except Refused as exc:
            self.set_status(exc.status)
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"type": "trace", "ok": False, "message": str(exc)}))
            return
        body = await asyncio.get_running_loop().run_in_executor(None, self.worker.ask, file, request, self.gone)
        if self.gone.is_set():
            return  # nobody is waiting for it
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(body)


def load(serverapp: Any) -> None:
    """Add the endpoint to ``serverapp`` (called by jupyter_server when it loads the extension)."""
    config = ArcanaTraceServer(parent=serverapp)
    worker = config.worker(Path(serverapp.root_dir).expanduser().resolve())
    web_app = serverapp.web_app
    route = url_path_join(web_app.settings["base_url"], ROUTE)
    web_app.add_handlers(".*$", [(route, TraceHandler, {"config": config, "worker": worker})])
    try:
        worker.start()  # the child imports the reader now, not on the first request
    except OSError as exc:
        serverapp.log.warning("arcana: could not start the trace worker now (%s); the first request will", exc)
    # the child also stops by itself when the server goes (its stdin closes)
    atexit.register(worker.close)
    serverapp.log.info("arcana: trace viewer endpoint at %s (traces of at most %s bytes, %g s, %s MiB)", route,
                       f"{config.max_bytes:,}", config.max_seconds, config.max_memory_mb)
