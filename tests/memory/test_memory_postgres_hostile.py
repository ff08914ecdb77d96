"""PostgreSQL memory against a server that goes silent after connecting (hostile pass, defect 6).

A loopback TCP proxy in front of the real test server forwards bytes both ways until told to go
silent; then it keeps the connection open and answers nothing, as a hung server or a stalled
network does."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from arcana_jupyter.exceptions import MemoryStoreError
from arcana_jupyter.memory import MemoryStore, Scope


class SilentProxy:
    def __init__(self, port: int) -> None:
        self.target = port
        self.silent = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.sockets: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                continue
            server = socket.create_connection(("127.0.0.1", self.target))
            self.sockets += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        src.settimeout(0.2)
        while not self.stop.is_set():
            try:
                data = src.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            while self.silent.is_set() and not self.stop.is_set():
                time.sleep(0.05)  # swallow nothing, answer nothing: the bytes wait here
            try:
                dst.sendall(data)
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        self.listener.close()
        for s in self.sockets:
            s.close()
        self.thread.join(2)


@pytest.fixture
def proxy(postgres_server) -> Iterator[SilentProxy]:
    p = SilentProxy(postgres_server.port)
    yield p
    p.close()


@pytest.mark.timeout(60)
def test_hostile_6_a_silent_server_gives_a_clear_error_within_the_deadline(postgres_server, proxy: SilentProxy,
                                                                           project_a: Scope) -> None:
    url = postgres_server.fresh_url().replace(f":{postgres_server.port}/", f":{proxy.port}/")
    scope = project_a
    with MemoryStore(url, busy_timeout=0.5, write_deadline=1.0) as store:
        store.remember("fact", "The churn window is 90 days", scope)
        assert len(store.search("churn", scope).hits) == 1
        proxy.silent.set()
        start = time.monotonic()
        with pytest.raises(MemoryStoreError, match="did not answer within 1s") as err:
            store.search("churn window", scope)
        assert time.monotonic() - start < 5  # the read deadline (1 s), not for ever
        assert "127.0.0.1" in str(err.value)
        start = time.monotonic()
        with pytest.raises(MemoryStoreError, match=r"did not answer|connection timeout expired"):
            store.remember("fact", "never written", scope)
        assert time.monotonic() - start < 8  # connect_timeout (2 s) or the write deadline (1.5 s)
        proxy.silent.clear()
        assert len(store.search("churn", scope).hits) == 1  # the next call reconnects
