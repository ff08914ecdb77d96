"""A misbehaving OTLP/HTTP collector on 127.0.0.1, on raw sockets (so it can answer as badly as it
likes): ``ok`` (200, empty body), ``huge`` (200 with a ``size``-byte body, sent as fast as the client
reads), ``drip`` (the answer two bytes at a time, every ``drip_every`` seconds, for ever), ``503``
and ``reset`` (the connection closed with RST). ``mode`` can change while it runs; ``sent`` counts
the body bytes it managed to send."""

from __future__ import annotations

import socket
import struct
import threading
import time


class HostileCollector:
    def __init__(self, mode: str = "ok", size: int = 200_000_000, drip_every: float = 0.2) -> None:
        self.mode, self.size, self.drip_every = mode, size, drip_every
        self.sent = 0
        self.requests = 0
        self.ok_answers = 0
        self.stop = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> bool:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            body += chunk
        return True

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        try:
            while not self.stop.is_set() and self._read_request(conn):
                self.requests += 1
                mode = self.mode
                if mode == "ok":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n"
                                 b"Content-Length: 0\r\n\r\n")
                    self.ok_answers += 1
                elif mode == "503":
                    conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n")
                elif mode == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                elif mode == "huge":
                    conn.sendall(f"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n"
                                 f"Content-Length: {self.size}\r\n\r\n".encode())
                    self.ok_answers += 1
                    block = b"\0" * 1_000_000
                    left = self.size
                    while left > 0 and not self.stop.is_set():
                        piece = block[: min(left, len(block))]
                        conn.sendall(piece)
                        self.sent += len(piece)
                        left -= len(piece)
                elif mode == "drip":
                    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n" + b"x" * 100_000_000
                    for i in range(0, len(answer), 2):
                        if self.stop.is_set():
                            return
                        conn.sendall(answer[i:i + 2])
                        time.sleep(self.drip_every)  # always less than the client's read timeout
        except OSError:
            return
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        self.thread.join(2)
