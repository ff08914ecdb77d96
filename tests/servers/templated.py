"""A real OpenAI-compatible server on 127.0.0.1 that renders every request through a real chat template,
the way vLLM does, and refuses what the template refuses.

vLLM, TGI and LM Studio do not expose their template: they apply it to ``messages`` (transformers'
``apply_chat_template``: a Jinja2 ``ImmutableSandboxedEnvironment`` with ``trim_blocks`` /
``lstrip_blocks``, the ``loopcontrols`` extension, a ``raise_exception`` global and a plain-JSON ``tojson``)
and answer a template error with HTTP 400 and the template's own message followed by its cause
(``f"{e} {e.__cause__}"``: "System role not supported None") — vLLM's
``{"object": "error", "message": ..., "type": "BadRequestError", "param": null, "code": 400}`` (``nested``:
the newer ``{"error": {...}}``). Here the renderer is written out on its own (not the package's), so a
test checks the package against it, not against itself.

    with TemplatedServer(GEMMA2, answer=lambda messages, tools: "Hi.") as server:
        ... base_url=f"{server.root_url}/v1" ...
    server.refusals, server.renderings, server.requests
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

Answer = Callable[[list[dict[str, Any]], list[dict[str, Any]]], "str | dict[str, Any]"]
"""(messages, tools) -> the reply's text, or an assistant message dict (with ``tool_calls``)."""


def vllm_environment() -> ImmutableSandboxedEnvironment:
    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


@dataclass
class Refusal:
    messages: list[dict[str, Any]]
    message: str


class TemplatedServer:
    """``POST /v1/chat/completions`` rendered through ``template``; a refusal is a 400 as vLLM sends it."""

    def __init__(self, template: str, answer: Answer, *, nested: bool = False, bos: str = "<bos>",
                 eos: str = "<eos>", bad_request: str | None = None) -> None:
        self.template = vllm_environment().from_string(template)
        self.answer = answer
        self.nested = nested
        self.bos, self.eos = bos, eos
        self.bad_request = bad_request
        """A 400 of another kind answered to every request (``"temperature must be ..."``): not the template's."""
        self.requests: list[dict[str, Any]] = []
        self.renderings: list[str] = []
        self.refusals: list[Refusal] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def root_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> TemplatedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def render(self, body: dict[str, Any]) -> str:
        kwargs: dict[str, Any] = {"messages": body.get("messages") or [], "add_generation_prompt": True,
                                  "bos_token": self.bos, "eos_token": self.eos}
        if body.get("tools"):
            kwargs["tools"] = body["tools"]
        return self.template.render(**kwargs)

    def error_body(self, message: str) -> dict[str, Any]:
        error = {"message": message, "type": "BadRequestError", "param": None, "code": 400}
        return {"error": error} if self.nested else {"object": "error", **error}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(404, b'{"detail": "Not Found"}')  # vLLM has no /props: the template is not exposed

    def do_POST(self) -> None:
        server: TemplatedServer = self.server.owner  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with server._lock:
            server.requests.append(body)
        if server.bad_request is not None:
            self._send(400, json.dumps(server.error_body(server.bad_request)).encode())
            return
        try:
            rendering = server.render(body)
        except jinja2.exceptions.TemplateError as exc:
            with server._lock:
                server.refusals.append(Refusal(body.get("messages") or [], str(exc)))
            # vLLM's serving_chat: ``create_error_response(f"{e} {e.__cause__}")`` ("System role not supported None")
            self._send(400, json.dumps(server.error_body(f"{exc} {exc.__cause__}")).encode())
            return
        with server._lock:
            server.renderings.append(rendering)
        reply = server.answer(body.get("messages") or [], body.get("tools") or [])
        message = reply if isinstance(reply, dict) else {"role": "assistant", "content": reply}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": max(1, len(rendering) // 4), "completion_tokens": 5,
                 "total_tokens": max(1, len(rendering) // 4) + 5}
        if not body.get("stream"):
            self._send(200, json.dumps({
                "id": "c1", "object": "chat.completion", "created": 1, "model": body.get("model"),
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}).encode())
            return
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
        chunks = [{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": body.get("model"),
                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                  {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": body.get("model"),
                   "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                  {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": body.get("model"),
                   "choices": [], "usage": usage}]
        data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        self._send(200, data.encode(), "text/event-stream")
