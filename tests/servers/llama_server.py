"""llama.cpp's own OpenAI-compatible server (``python -m llama_cpp.server``) on 127.0.0.1.

Runs the bundled SmolLM2-135M GGUF with the ``chatml-function-calling`` chat format so the
answers carry real ``tool_calls``. Started once per test session by the ``llama_server`` fixture.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def run_llama_server(model: Path, *, n_ctx: int = 4096, startup_timeout: float = 90.0,
                     chat_format: str | None = "chatml-function-calling") -> Iterator[str]:
    """Start the server on a free port, wait for ``/v1/models``, yield the base URL (``.../v1``).

    ``chat_format=None``: no ``--chat_format``, so the server renders with the GGUF's own template."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)  # noqa: SIM115
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model),
        *(["--chat_format", chat_format] if chat_format else []),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
        "--seed", "7",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited with {proc.returncode}: {Path(log.name).read_text()[-2000:]}"
                )
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not answer within {startup_timeout} s")
            time.sleep(0.2)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        log.close()
        os.unlink(log.name)
