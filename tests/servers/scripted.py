"""A real HTTP server on 127.0.0.1 that answers each request with the next scripted reply.

It speaks HTTP/1.1 over a real socket (stdlib ``http.server`` in a thread), so clients see real
status codes, headers, chunked server-sent-event streams, connections dropped mid-body and stalls
long enough to trip a read timeout. ``fake_openai`` and ``fake_anthropic`` add the bodies of the
two wire formats on top.

    server.script(Reply(status=429, headers={"Retry-After": "2"}), Reply(json={...}))
    ... client calls ...
    server.requests[0].json, server.requests[0].headers["authorization"]
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer.

    ``json`` becomes a JSON body; ``events`` a chunked ``text/event-stream`` (each item is one
    ``(event_name, data)`` pair, ``event_name`` ``None`` for data-only events, data a str or a
    JSON-able value); ``raw`` raw body bytes. ``drop_after`` cuts the connection after that many
    events without finishing the body; ``stall_after`` sends that many events then goes silent
    for ``stall_seconds`` (to trip the client's read timeout).
    """

    status: int = 200
    json: Any = None
    events: list[tuple[str | None, Any]] | None = None
    raw: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    drop_after: int | None = None
    stall_after: int | None = None
    stall_seconds: float = 5.0
    close_without_answer: bool = False
    stall_before: float = 0.0
    """Seconds to stay silent before sending anything (to trip a read timeout on the headers)."""
    frames: Iterable[bytes] | None = None
    """Raw body pieces of a chunked ``text/event-stream``, sent as they come — possibly forever (a
    generator): hostile servers (keep-alive comments only, an endless stream, a line that never
    ends). Sending stops when the client hangs up or the server stops."""
    frame_interval: float = 0.0
    """Seconds between two ``frames``."""


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class ScriptedServer:
    """Serve scripted replies in order on 127.0.0.1:<free port>; use as a context manager."""

    def __init__(self, name: str = "scripted", responder: Callable[[Recorded], Reply] | None = None) -> None:
        self.name = name
        self.responder = responder
        """Answers a request when no scripted reply is left (a stateful server: a prompt cache)."""
        self.requests: list[Recorded] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name=f"{name}-server", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *replies: Reply) -> None:
        """Append replies; each request takes the next one (an unscripted request gets a 599)."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def reset(self) -> None:
        with self._lock:
            self._replies.clear()
            self.requests.clear()

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            if self._replies:
                return self._replies.popleft()
        if self.responder is not None:
            return self.responder(recorded)
        return Reply(status=599, json={"error": {"message": f"{self.name}: no scripted reply left"}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client hanging up on a stream we are still writing is part of the tests, not an error
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        owner = self.server.owner
        reply = owner._next(
            Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        if reply.stall_before:
            owner._stop.wait(reply.stall_before)
        if reply.close_without_answer:
            self._cut()
            return
        if reply.frames is not None:
            self._frames(reply, owner)
            return
        if reply.events is not None:
            self._stream(reply, owner)
            return
        if reply.raw is not None:
            payload, ctype = reply.raw, "application/octet-stream"
        else:
            payload, ctype = json.dumps(reply.json if reply.json is not None else {}).encode(), "application/json"
        self.send_response(reply.status)
        headers = {"Content-Type": ctype} | reply.headers
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _stream(self, reply: Reply, owner: ScriptedServer) -> None:
        self.send_response(reply.status)
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"} | reply.headers
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for n, (name, data) in enumerate(reply.events or ()):
            if reply.drop_after is not None and n >= reply.drop_after:
                self._cut()
                return
            if reply.stall_after is not None and n >= reply.stall_after:
                owner._stop.wait(reply.stall_seconds)
                self._cut()
                return
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {name}\n" if name else "") + "".join(f"data: {line}\n" for line in text.split("\n"))
            self._chunk((frame + "\n").encode())
        if reply.drop_after is not None or reply.stall_after is not None:
            self._cut()
            return
        self._chunk(b"")

    def _frames(self, reply: Reply, owner: ScriptedServer) -> None:
        self.send_response(reply.status)
        headers = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"} | reply.headers
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for frame in reply.frames or ():
                if owner._stop.is_set():
                    break
                self._chunk(frame)
                if reply.frame_interval and owner._stop.wait(reply.frame_interval):
                    break
            else:
                self._chunk(b"")
                return
        except OSError:  # the client hung up: what a hostile stream is waiting for
            pass
        self._cut()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _cut(self) -> None:
        """Drop the connection without finishing the response."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
