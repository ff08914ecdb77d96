"""Guards that held in the hostile pass, each without a test until now: keep them holding.

(The other held guards have their tests where their code is: wrong-typed comm fields, lone
surrogates and a rename during a turn in tests/jupyter/test_comm_hostile.py, ``-p`` literals in
tests/cli/test_cli_hostile.py, 503 and resetting collectors in tests/trace/test_otel_hostile.py;
``-f code`` never executing, out-of-range ``{In[n]}``, one retry per length refusal, wrong-typed
``prompt_tokens``, bad PostgreSQL URLs and hung collectors were tested already.)"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from render.test_render import assert_safe, parse, sample_bundle
from scripted_chat import say

from arcana_jupyter import render
from arcana_jupyter.exceptions import MemoryStoreError
from arcana_jupyter.memory import MemoryStore, Scope
from arcana_jupyter.render import md
from arcana_jupyter.trace.reader import TraceReader

INERT = [
    r"$\href{javascript:alert(1)}{click}$ and $$\href{javascript:alert(2)}{x}$$",
    r"$\unicode{x3C}script\unicode{x3E}$ $\unicode[some-font]{x1F600}$",
    "[a](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==) ![b](data:image/svg+xml,<svg onload=alert(1)>)",
    '<svg onload="alert(1)"><script>alert(2)</script></svg> <svg><foreignObject><iframe src=x></iframe>',
    "<style>body{display:none}</style><style>@import url(https://evil.example/x.css)</style>",
    "<a href='javascript:alert(1)'>x</a> [j](javascript:alert(1)) <javascript:alert(1)>",
]


@pytest.mark.parametrize("reply", INERT)
def test_held_math_links_svg_and_style_in_replies_render_inert(reply: str) -> None:
    for html in (md.markdown_to_html(reply), render.turn_html(sample_bundle(reply))):
        assert_safe(html)
        values = [v or "" for _tag, attrs in parse(html) for v in attrs.values()]
        assert not any("javascript:" in v or "data:" in v for v in values)
    reply_html = md.markdown_to_html(reply)
    assert not {tag for tag, _ in parse(reply_html)} & {"svg", "style", "a", "img", "iframe", "foreignobject"}


def test_held_garbage_and_foreign_lines_in_a_live_trace_are_skipped(make_runtime: Any) -> None:
    runtime, _ = make_runtime(say("first"), say("second"))
    chat = runtime.chat()
    assert chat.send_sync("one").status == "ok"
    path = Path(chat.trace_path)
    foreign = {"v": 1, "event_id": "e_foreign", "run_id": "r_someone_else", "agent": "main", "turn": 1,
               "event_type": "turn_end", "ts": "2026-01-01T00:00:00Z", "parent_id": None, "metadata": {}}
    with path.open("a", encoding="utf-8") as f:  # another process scribbles into the live file
        f.write("garbage that is not json\n[1, 2, 3]\n" + json.dumps(foreign) + "\n"
                + json.dumps({"event_type": 7, "metadata": "x"}) + "\n\x00\x1b[2J\n")
    assert chat.send_sync("two").status == "ok"
    assert chat.turn_bundle(2)["reply"] == "second" and chat.turn_bundle(1)["reply"] == "first"
    chat.close()
    runtime.close()
    reader = TraceReader(path.parent, shared=False)
    events = reader.events(chat.run_id)
    assert [e.event_type for e in events if e.event_type == "turn_end"] == ["turn_end", "turn_end"]
    assert all(e.run_id == chat.run_id for e in events)
    assert any("an event of another run ('r_someone_else')" in w for w in reader.warnings)  # listed, not raised


def test_held_postgres_metacharacters_and_quoted_scopes_round_trip(postgres_server, tmp_path: Path) -> None:
    folder = tmp_path / "it's a \"project\"; DROP TABLE entries; --"
    folder.mkdir()
    scope = Scope.for_project(folder, user="o'brien\\x")
    texts = ["'; DROP TABLE entries; --", "100% of $1 and %s and ? and ?? and \\N", "tab\tnew\nline \\' \" `x`",
             "unicode – ünïcødé 🚀 \u202e", "NUL\x00inside"]
    with MemoryStore(postgres_server.fresh_url()) as store:
        ids = [store.remember("fact", t, scope).id for t in texts]
        listed = {e.id: e.content for e in store.list_entries(scope)}
        assert [listed[i] for i in ids[:-1]] == texts[:-1]
        assert listed[ids[-1]] == "NULinside" or "\x00" not in listed[ids[-1]]
        assert store.count(scope) == len(texts)
        assert store.search("DROP TABLE entries", scope).hits


@pytest.fixture
def not_postgres() -> Iterator[int]:
    """A loopback server that answers every connection with an HTTP error page (not PostgreSQL)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.recv(1024)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    server.close()
    thread.join(2)


def test_held_a_foreign_server_is_one_masked_line(not_postgres: int) -> None:
    url = f"postgresql://bob:hunter2secret@127.0.0.1:{not_postgres}/db"
    with pytest.raises(MemoryStoreError) as err:
        MemoryStore(url, busy_timeout=0.5)
    message = str(err.value)
    assert "hunter2secret" not in message and "bob:[REDACTED]@" in message and "\n" not in message.strip()
