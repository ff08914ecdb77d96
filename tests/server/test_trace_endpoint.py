"""The server extension (arcana_jupyter/server/): ``GET /arcana/trace`` in a real Jupyter server with no
kernel, the checks on the path it is asked, and the trace worker's bounds in memory and time on hostile
traces (issue 35, rows 5, 6, 8, 10, 11: the viewer shows a problem, the server lives)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from trace_bombs import write_bombs

from arcana_jupyter.schema.frontend import TraceReply
from arcana_jupyter.server import _jupyter_server_extension_points
from arcana_jupyter.server.handlers import Refused, request_of, trace_file
from arcana_jupyter.server.worker import TraceWorker
from tests.browser.fixtures.generate import CORRUPT_LINE, RUN_ID, make_trace

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "arcana-test-token"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``jupyter server`` on a free loopback port, our extension enabled by its config file, no kernel."""
    root = tmp_path_factory.mktemp("root")
    home = tmp_path_factory.mktemp("home")
    (root / "analysis.arcana").mkdir()
    (root / "analysis.arcana" / f"{RUN_ID}.jsonl").write_text(make_trace(RUN_ID), encoding="utf-8")
    config = home / "config"
    (config / "jupyter_server_config.d").mkdir(parents=True)
    # the file the wheel installs into etc/jupyter/jupyter_server_config.d/
    (config / "jupyter_server_config.d" / "arcana_jupyter.json").write_bytes(
        (ROOT / "arcana_jupyter" / "server" / "config" / "arcana_jupyter.json").read_bytes())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HOME": str(home), "JUPYTER_CONFIG_DIR": str(config), "JUPYTER_RUNTIME_DIR": str(home / "rt"),
           "JUPYTER_DATA_DIR": str(home / "data")}
    log = (home / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", "--ip=127.0.0.1",
                             f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
                             f"--ServerApp.root_dir={root}", "--ArcanaTraceServer.max_bytes=200000",
                             "--ArcanaTraceServer.max_seconds=20"],
                            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (home / "server.log").read_text()
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, (home / "server.log").read_text()
                time.sleep(0.25)
        yield base, root
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        log.close()


def _get(base: str, params: dict[str, Any], *, token: str | None = TOKEN) -> tuple[int, dict[str, Any]]:
    query = urllib.parse.urlencode({**params, **({"token": token} if token else {})})
    try:
        with urllib.request.urlopen(f"{base}/arcana/trace?{query}", timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()
        try:
            return exc.code, json.loads(body)
        except ValueError:
            return exc.code, {"raw": body.decode(errors="replace")}


def test_the_extension_is_found_by_its_config_file() -> None:
    config = json.loads((ROOT / "arcana_jupyter" / "server" / "config" / "arcana_jupyter.json").read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"arcana_jupyter.server": True}}}
    assert _jupyter_server_extension_points() == [{"module": "arcana_jupyter.server"}]
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert ('"arcana_jupyter/server/config/arcana_jupyter.json" = '
            '"etc/jupyter/jupyter_server_config.d/arcana_jupyter.json"') in pyproject


def test_a_real_server_with_no_kernel_sends_the_run_turns_and_diffs(served: tuple[str, Path]) -> None:
    base, _root = served
    with urllib.request.urlopen(f"{base}/api/kernels?token={TOKEN}", timeout=10) as r:
        assert json.loads(r.read()) == []  # nothing here runs a kernel
    path = f"analysis.arcana/{RUN_ID}.jsonl"
    status, body = _get(base, {"path": path})
    reply = TraceReply.model_validate(body)
    assert status == 200 and reply.ok and reply.run is not None and reply.path == path
    assert reply.run.turns == {"main": list(range(1, 13))} and reply.run.error_count == 1
    [problem] = reply.run.problems
    assert problem.line == make_trace(RUN_ID).splitlines().index(CORRUPT_LINE) + 1 and "invalid JSON" in problem.problem
    status, body = _get(base, {"path": path, "what": "turn", "turn": 4})
    turn = TraceReply.model_validate(body).turn_view
    assert status == 200 and turn is not None and turn.input == "Question 4: how did region 4 grow in quarter 1?"
    step = turn.steps[0]
    assert step.decision is not None and len(step.originals) == len(step.decision.decisions)
    assert step.sent is not None and step.sent.source == "snapshot" and [p.pin_id for p in step.pins] == [
        "p_00000002", "p_00000003"]
    status, body = _get(base, {"path": path, "what": "diff", "a": 3, "b": 11})
    diff = TraceReply.model_validate(body).diff
    assert diff is not None and {c for r in diff.rows for c in r.changes} >= {"added", "outcome", "fidelity"}
    # the CLI's errors, as a refusal of the question, not of the request
    status, body = _get(base, {"path": path, "what": "turn", "turn": 99})
    assert status == 200 and body["ok"] is False and "no turn 99" in body["message"]
    # the overview with the turn to draw first (-1: the last), and the viewer's read-ahead: the same views as
    # asked one by one; what the run does not have is left out
    one = TraceReply.model_validate(_get(base, {"path": path, "what": "turn", "turn": 12})[1]).turn_view
    status, body = _get(base, {"path": path, "what": "run", "turn": -1})
    first = TraceReply.model_validate(body)
    assert status == 200 and first.run is not None and first.turn_view == one
    status, body = _get(base, {"path": path, "what": "turns", "turns": "4,99,5", "pairs": "3:11,98:99"})
    batch = TraceReply.model_validate(body)
    assert status == 200 and batch.ok and batch.version == reply.version
    assert [t.turn for t in batch.turn_views or []] == [4, 5] and batch.turn_views[0] == turn
    assert batch.diffs == [diff]


def test_the_server_refuses_what_it_must_not_read(served: tuple[str, Path], tmp_path: Path) -> None:
    base, root = served
    outside = tmp_path / "secret.jsonl"
    outside.write_text(make_trace(RUN_ID))
    (root / "link.jsonl").symlink_to(outside)
    (root / "big.jsonl").write_text("x" * 300_000)
    (root / "notes.txt").write_text("not a trace")
    cases = {
        "../secret.jsonl": 400, "analysis.arcana/../../x.jsonl": 400, "": 400, "notes.txt": 400,
        "link.jsonl": 403, ".hidden/r.jsonl": 403, "missing.jsonl": 404, "big.jsonl": 413,
    }
    for path, want in cases.items():
        status, body = _get(base, {"path": path})
        assert status == want and body["ok"] is False and body["message"], (path, status, body)
    assert "outside the server's root" in _get(base, {"path": "link.jsonl"})[1]["message"]
    assert "arcana trace show big.jsonl" in _get(base, {"path": "big.jsonl"})[1]["message"]
    status, body = _get(base, {"path": f"analysis.arcana/{RUN_ID}.jsonl"}, token=None)
    assert status == 403  # @tornado.web.authenticated: no token, no trace
    status, body = _get(base, {"path": f"analysis.arcana/{RUN_ID}.jsonl", "what": "frames"})
    assert status == 400 and "run, turn, diff or turns" in body["message"]


def test_trace_file_and_request_checks(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "r.jsonl").write_text("{}\n")
    assert trace_file(tmp_path, "a/r.jsonl", allow_hidden=False, max_bytes=100) == "a/r.jsonl"
    assert trace_file(tmp_path, "/a/r.jsonl", allow_hidden=False, max_bytes=100) == "a/r.jsonl"
    (tmp_path / ".h").mkdir()
    (tmp_path / ".h" / "r.jsonl").write_text("{}\n")
    assert trace_file(tmp_path, ".h/r.jsonl", allow_hidden=True, max_bytes=100) == ".h/r.jsonl"
    for bad in ("a//r.jsonl", "a/./r.jsonl", "a\\r.jsonl", "a/r.jsonl\x00", "a" * 5000 + ".jsonl", "a"):
        with pytest.raises(Refused):
            trace_file(tmp_path, bad, allow_hidden=False, max_bytes=100)
    assert request_of({"what": [b"turn"], "turn": [b"3"], "agent": [b"main"]}) == {
        "type": "trace", "what": "turn", "turn": 3, "agent": "main"}
    assert request_of({"what": [b"turns"], "turns": [b"3,4"], "pairs": [b"2:3,3:4"]}) == {
        "type": "trace", "what": "turns", "turns": [3, 4], "pairs": [{"a": 2, "b": 3}, {"a": 3, "b": 4}]}
    assert request_of({"what": [b"run"], "turn": [b"-1"]}) == {"type": "trace", "what": "run", "turn": -1}
    for bad_args in ({"turn": [b"three"]}, {"a": [b"1" * 20]}, {"agent": [b""]}, {"what": [b"text"]},
                     {"what": [b"turn"], "turns": [b"3"]}, {"what": [b"turns"], "pairs": [b"3"]},
                     {"what": [b"turns"], "turns": [b"3,x"]}, {"what": [b"turns"], "pairs": [b"1:2:3"]},
                     {"what": [b"turns"], "turns": [",".join(map(str, range(33))).encode()]}):
        with pytest.raises(Refused):
            request_of(bad_args)


def test_the_worker_bounds_time_and_memory_and_comes_back(tmp_path: Path) -> None:
    """A child that does not answer in time is stopped and replaced; a decision of 200 million rows and
    100,000 references to a 100 KB message run out of the worker's memory; each is ``ok: false`` saying so,
    and the next question about a sound trace is answered. A prompt_sent that continues itself is answered
    at once (the reader bounds the chain), well inside the worker's time."""
    _run_id, bombs = write_bombs(tmp_path / "bombs")
    good = tmp_path / "bombs" / "good.jsonl"
    good.write_text(make_trace(RUN_ID), encoding="utf-8")

    def ask(worker: TraceWorker, file: str, **q: Any) -> dict[str, Any]:
        return json.loads(worker.ask(file, {"type": "trace", "request_id": "q", **q}))

    # the reader bounds every bomb it knows of, so the time limit is shown on a child that never answers
    # (a real process: it reads the request and sleeps), then the real child takes over
    hung = tmp_path / "hung-python"
    hung.write_text("#!/bin/sh\nread line\nexec sleep 60\n")
    hung.chmod(0o755)
    slow = TraceWorker(tmp_path / "bombs", seconds=1.5, python=str(hung))
    try:
        began = time.monotonic()
        late = ask(slow, bombs.name, what="turn", turn=3)
        assert late["ok"] is False and "took longer than 1.5 s" in late["message"] and late["request_id"] == "q"
        assert time.monotonic() - began < 30  # stopped, not waited for
        slow.python = sys.executable
        assert ask(slow, "good.jsonl", what="turn", turn=2)["ok"] and slow.started == 2
        looped = ask(slow, bombs.name, what="diff", a=2, b=3)  # turn 3's prompt_sent continues itself
        assert looped["request_id"] == "q" and slow.started == 2
    finally:
        slow.close()
    # the reader refuses each bomb by the file's size before it costs memory: the turn is answered, its step
    # names the record it could not resolve, and the same child goes on
    worker = TraceWorker(tmp_path / "bombs", seconds=120, memory_mb=1024)
    try:
        rows = ask(worker, bombs.name, what="turn", turn=4)["turn_view"]["steps"][0]
        assert rows["decision"] is None and "200,000,000 rows, more than" in rows["problem"], rows
        refs = ask(worker, bombs.name, what="turn", turn=2)["turn_view"]["steps"][0]
        assert refs["sent"] is None and "more than a trace file of this size can hold" in refs["sent_problem"], refs
        assert worker.started == 1
    finally:
        worker.close()
    # a trace that really needs more memory than the child may take (a 40 MB message at a 256 MiB cap) stops
    # the child, is answered saying so, and the next question gets a fresh child
    events = [json.loads(line) for line in good.read_text().splitlines() if line != CORRUPT_LINE]
    user = next(e for e in events if e["event_type"] == "user_message")
    user["metadata"]["message"]["content"] = "x" * 40_000_000
    (tmp_path / "bombs" / "large.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    worker = TraceWorker(tmp_path / "bombs", seconds=60, memory_mb=256)
    try:
        for _ in range(2):
            big = ask(worker, "large.jsonl", what="turn", turn=user["turn"])
            assert big["ok"] is False and ("ran out of memory" in big["message"]
                                           or "needs more than the 256 MiB" in big["message"]), big
            assert ask(worker, "good.jsonl", what="run")["ok"]
        assert worker.started == 3
        first = TraceReply.model_validate(ask(worker, bombs.name, what="turn", turn=1))
        assert first.ok and first.turn_view is not None and first.turn_view.steps[0].decision is not None
        outside = ask(worker, "../elsewhere.jsonl", what="run")
        assert outside["ok"] is False and "not a file under the server's root" in outside["message"]
    finally:
        worker.close()


def test_a_request_the_page_stopped_waiting_for_is_not_read(tmp_path: Path) -> None:
    """The viewer aborts the questions it no longer needs (it moved to another turn): one still queued when
    its page went is answered ``ok: false`` without asking the child (the handler's ``gone`` event)."""
    (tmp_path / "good.jsonl").write_text(make_trace(RUN_ID), encoding="utf-8")
    worker = TraceWorker(tmp_path, seconds=60)
    try:
        gone = threading.Event()
        gone.set()
        skipped = json.loads(worker.ask("good.jsonl", {"type": "trace", "what": "run", "request_id": 7}, gone))
        assert skipped == {"type": "trace", "ok": False, "message": "not read: the page stopped waiting for this "
                           "answer", "request_id": 7}
        assert worker.skipped == 1 and worker.started == 0
        assert json.loads(worker.ask("good.jsonl", {"type": "trace", "what": "run"}, threading.Event()))["ok"]
    finally:
        worker.close()


def test_the_worker_collects_between_answers_and_freezes_its_indexes(tmp_path: Path) -> None:
    """The child answers with the cyclic collector off, collects after each answer and freezes what is
    left (the indexes); views it drops are unfrozen and collected."""
    import gc

    from arcana_jupyter.server import worker as worker_module

    (tmp_path / "good.jsonl").write_text(make_trace(RUN_ID), encoding="utf-8")
    was_enabled = gc.isenabled()
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        gc.collect()
        gc.freeze()  # this test's process: what is frozen here is not the answers'
        base = gc.get_freeze_count()
        gc.disable()
        answers = worker_module._Answers(memory_mb=1024)
        out, stop = answers.handle(json.dumps({"file": "good.jsonl", "request": {"what": "turn", "turn": 3}}).encode())
        assert json.loads(out)["ok"] and not stop
        answers.tidy()
        frozen = gc.get_freeze_count()
        assert frozen > base and gc.get_count()[0] < 50  # the index and the views, frozen; nothing left young
        out, _ = answers.handle(json.dumps({"file": "good.jsonl", "request": {"what": "turn", "turn": 4}}).encode())
        answers.tidy()
        assert gc.get_freeze_count() >= frozen  # nothing dropped: nothing unfrozen
        answers.views.clear()  # the file's views dropped (as the LRU drops them)
        answers.tidy()
        assert gc.get_freeze_count() < frozen  # everything was unfrozen, collected, frozen again
    finally:
        os.chdir(here)
        gc.unfreeze()
        if was_enabled:
            gc.enable()
