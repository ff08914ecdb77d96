"""The turn widget (jupyter/widget.py): when it is shown, what its output carries, and its messages.

The message test runs a real ipykernel (jupyter_client) and talks to the widget the way a front end
does: a ``comm_msg`` to the widget's comm with ``method: custom``; the kernel answers with the
``arcana`` comm's own handler, and every answer is checked against the models of
``arcana_jupyter/schema/frontend.py`` (from which the TypeScript types are generated).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest
from IPython.utils.capture import capture_output

from arcana_jupyter.jupyter import widget as widget_mod
from arcana_jupyter.jupyter.comm import ArcanaComm
from arcana_jupyter.jupyter.replay_view import REPLAY_MIME_TYPE
from arcana_jupyter.jupyter.widget import WIDGET_VIEW, answer, replay_answer, wants_widget, widget_problem
from arcana_jupyter.schema.frontend import (
    REQUEST_ADAPTER,
    ActionReply,
    ActionRequest,
    ErrorReply,
    LiveState,
    PathReply,
    StateRequest,
    TraceReply,
    TraceRequest,
    WhatIfReply,
    parse_reply,
)
from tests.jupyter.conftest import MIME, echo, magics, run_cell_magic, turn_outputs

ROOT = Path(__file__).resolve().parents[2]

@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VSCODE_PID", "VSCODE_CWD", "JPY_SESSION_NAME", "COLAB_RELEASE_TAG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)


def test_a_plain_install_brings_the_widget() -> None:
    """anywidget and ipywidgets are core dependencies (no extra), and the widget's module is built:
    ``frontend = "auto"`` has what it needs on ``pip install arcana-jupyter``."""
    import importlib.metadata
    import tomllib

    def names(requirements: list[str]) -> set[str]:
        return {re.split(r"[<>=!;\[ ]", r, maxsplit=1)[0].lower() for r in requirements}

    # pyproject.toml, the source of truth (the installed metadata below is the one of the last install)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {"anywidget", "ipywidgets"} <= names(project["dependencies"])
    assert project["optional-dependencies"]["widgets"] == []  # kept for old install lines, empty
    requires = importlib.metadata.requires("arcana-jupyter") or []
    assert {"anywidget", "ipywidgets"} <= names([r for r in requires if "extra ==" not in r])
    assert widget_problem() is None


def test_vs_code_and_colab_get_the_live_widget(clean_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The detection behind ``frontend = "auto"``, one front end at a time, over a kernel's comm that
    our JupyterLab extension never answered (it does not run there)."""
    kernel = _link()
    assert not wants_widget("auto", kernel)
    monkeypatch.setenv("VSCODE_PID", "4242")  # a kernel VS Code's Jupyter extension started
    assert wants_widget("auto", kernel)
    monkeypatch.delenv("VSCODE_PID")
    monkeypatch.setenv("VSCODE_CWD", "/home/me")
    assert wants_widget("auto", kernel)
    monkeypatch.delenv("VSCODE_CWD")
    assert wants_widget("auto", kernel, {"__vsc_ipynb_file__": "/home/me/a.ipynb"})
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))  # Colab's kernel
    assert wants_widget("auto", kernel)
    monkeypatch.delitem(sys.modules, "google.colab")
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-20261201")
    assert wants_widget("auto", kernel)
    assert not wants_widget("mime", kernel)  # the user's choice wins
    assert not wants_widget("auto", _link(registered=False))  # a terminal IPython: no kernel, no front end


def _link(registered: bool = True, answered: bool = False) -> ArcanaComm:
    link = ArcanaComm(magics=None)
    link.registered, link.answered = registered, answered
    return link


def test_when_the_widget_is_shown(clean_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = _link()
    assert not wants_widget("auto", quiet)  # nbclient, a script: no server session, no widget
    assert wants_widget("widget", quiet) and not wants_widget("mime", quiet)
    assert not wants_widget("widget", None)  # no comm handler: nothing could answer the widget
    assert wants_widget("auto", quiet, {"__vsc_ipynb_file__": "/x/a.ipynb"})  # VS Code's kernel
    monkeypatch.setenv("JPY_SESSION_NAME", "/x/a.ipynb")  # a kernel a Jupyter server started ...
    assert wants_widget("auto", quiet)  # ... whose page never answered the arcana comm
    assert not wants_widget("auto", _link(answered=True))  # our extension answered: its renderer
    assert not wants_widget("auto", _link(registered=False))  # no kernel: no comm, nobody to answer
    monkeypatch.setenv("VSCODE_PID", "4242")
    assert wants_widget("auto", _link(answered=True))
    assert not wants_widget("auto", _link(registered=False))  # IPython in a VS Code terminal: no kernel
    assert not wants_widget("mime", _link())


def test_without_the_built_module_a_turn_is_the_mime_bundle(
        shell: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(widget_mod, "ESM", tmp_path / "widget.js")
    problem = widget_problem()
    assert problem is not None and "scripts/build-labextension.sh" in problem
    assert not wants_widget("widget", _link())
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo")
    shell.run_line_magic("config", 'ArcanaMagics.frontend = "widget"')
    try:
        outputs = run_cell_magic(shell, "", "hello")
    finally:
        magics(shell).frontend = "auto"
    assert outputs and not any(WIDGET_VIEW in o.data for o in outputs)
    assert MIME in outputs[-1].data and "text/html" in outputs[-1].data


def test_a_widget_turn_keeps_the_mime_bundle_and_the_static_html(shell: Any) -> None:
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo")
    with pytest.raises(Exception, match="frontend"):  # a value outside auto|mime|widget is refused
        magics(shell).frontend = "vscode"
    magics(shell).frontend = "widget"
    try:
        outputs = run_cell_magic(shell, "", "hello")
    finally:
        magics(shell).frontend = "auto"
    final = turn_outputs(outputs)[-1]
    assert {WIDGET_VIEW, MIME, "text/html", "text/plain"} <= set(final.data)
    views = {o.data[WIDGET_VIEW]["model_id"] for o in outputs if WIDGET_VIEW in o.data}
    assert len(views) == 1  # one widget, updated in place like the output
    view = final.data[WIDGET_VIEW]
    assert view["version_major"] == 2
    from ipywidgets.widgets.widget import _instances

    shown = _instances[view["model_id"]]
    assert shown.bundle == final.data[MIME] and shown.bundle["status"] == "ok"  # the trait is the bundle
    assert "You said: hello" in final.data["text/html"]
    esm = shown._esm
    assert "renderWidget" in esm and "@jupyterlab" not in esm  # the shared core, no JupyterLab code


def test_a_replay_is_a_widget_too_and_reads_only_its_own_trace(shell: Any, tmp_path: Path) -> None:
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo")
    run_cell_magic(shell, "", "one")
    run_cell_magic(shell, "", "two")
    chat = magics(shell).entry(None).chat
    magics(shell).frontend = "widget"
    try:
        with capture_output() as captured:
            shell.run_line_magic("arcana_replay", "")
    finally:
        magics(shell).frontend = "auto"
    final = [o for o in captured.outputs if REPLAY_MIME_TYPE in o.data][-1]
    assert {WIDGET_VIEW, REPLAY_MIME_TYPE, "text/html", "text/plain"} <= set(final.data)
    from ipywidgets.widgets.widget import _instances

    shown = _instances[final.data[WIDGET_VIEW]["model_id"]]
    assert shown.kind == "replay" and shown.replay == final.data[REPLAY_MIME_TYPE]
    assert [t["turn"] for t in shown.replay["turns"]] == [1, 2]
    trace_file = Path(str(chat.trace_path))
    got = TraceReply.model_validate(replay_answer(trace_file, "analysis.arcana/x.jsonl",
                                                  {"type": "trace", "request_id": "w1", "path": "/etc/passwd"}))
    assert got.ok and got.run is not None and got.request_id == "w1"  # its own file, whatever is asked
    assert got.run.run_id == chat.run_id and got.run.turns == {"main": [1, 2]} and got.path == "analysis.arcana/x.jsonl"
    second = TraceReply.model_validate(replay_answer(trace_file, "x", {"type": "trace", "what": "turn", "turn": 2}))
    assert second.ok and second.turn_view is not None and second.turn_view.input == "two"  # resolved by the kernel
    assert second.turn_view.steps[0].sent is not None and second.turn_view.steps[0].sent.verified
    gone = TraceReply.model_validate(replay_answer(tmp_path / "missing.jsonl", "m.jsonl", {"type": "trace"}))
    assert gone.ok is False and "m.jsonl" in (gone.message or "")
    assert replay_answer(trace_file, "x", {"type": "action", "action": "unpin", "target": "p"})["ok"] is False

    # What if: the widget's kernel rebuilds a turn of its own run (the replay's what-if form), no other run.
    asked = {"type": "whatif", "request_id": "w2", "run_id": chat.run_id, "agent": chat.agent, "turn": 1,
             "window": 512, "reserve": 128, "strategy": None, "mode": None, "relevance": None}
    rebuilt = WhatIfReply.model_validate(shown.answer_message(asked))
    assert rebuilt.ok and rebuilt.turn == 1 and rebuilt.request_id == "w2", rebuilt.message
    assert rebuilt.settings is not None and rebuilt.settings["total_window"] == 512
    assert rebuilt.counterfactual and rebuilt.verified
    other = WhatIfReply.model_validate(shown.answer_message({**asked, "run_id": "r_someone_else"}))
    assert other.ok is False and "r_someone_else" in (other.message or "")
    gone = WhatIfReply.model_validate(replay_answer(tmp_path / "missing.jsonl", "m.jsonl", asked))
    assert gone.ok is False and "m.jsonl" in (gone.message or "")


def test_every_answer_matches_its_model(shell: Any) -> None:
    """The real handlers' answers (comm and widget alike) against the models the TypeScript is made from."""
    shell.user_ns["echo"] = echo
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo --primitives pin")
    chat = magics(shell).entry(None).chat
    chat.pin("The deadline is 30 June.", label="deadline")
    run_cell_magic(shell, "", "when?")
    link = ArcanaComm(magics(shell))
    request = {"type": "state", "run_id": chat.run_id, "agent": "main", "request_id": "w1"}
    assert isinstance(REQUEST_ADAPTER.validate_python(request), StateRequest)
    state = parse_reply(answer(link, request))
    assert isinstance(state, LiveState) and state.live and state.request_id == "w1"
    pin_id = state.pins[0]["pin_id"]
    unpin = {"type": "action", "action": "unpin", "target": pin_id, "run_id": chat.run_id, "agent": "main",
             "request_id": 7}
    assert isinstance(REQUEST_ADAPTER.validate_python(unpin), ActionRequest)
    done = parse_reply(answer(link, unpin))
    assert isinstance(done, ActionReply) and done.ok and done.pins == [] and done.request_id == 7
    again = parse_reply(answer(link, unpin))  # nothing left to unpin: a structured "no"
    assert isinstance(again, ActionReply) and again.ok is False
    ask = {"type": "trace", "run_id": chat.run_id, "agent": "main", "request_id": "w4"}
    assert isinstance(REQUEST_ADAPTER.validate_python(ask), TraceRequest)
    trace = parse_reply(answer(link, ask))
    assert isinstance(trace, TraceReply) and trace.ok and trace.path == f"analysis.arcana/{chat.run_id}.jsonl"
    assert trace.run is not None and trace.run.run_id == chat.run_id  # the run's own file, as it is now
    turn = parse_reply(answer(link, {**ask, "what": "turn", "turn": 1}))
    assert isinstance(turn, TraceReply) and turn.turn_view is not None and turn.turn_view.input == "when?"
    assert [p.label for p in turn.turn_view.steps[0].pins] == ["deadline"]
    diff = parse_reply(answer(link, {**ask, "what": "diff", "a": 1, "b": 1}))
    assert isinstance(diff, TraceReply) and diff.diff is not None and diff.diff.rows == []
    missing = parse_reply(answer(link, {**ask, "what": "turn", "turn": 9}))
    assert isinstance(missing, TraceReply) and missing.ok is False and "no turn 9" in (missing.message or "")
    other = parse_reply(answer(link, {**ask, "run_id": "r_not_here", "path": "/etc/passwd"}))
    assert isinstance(other, TraceReply) and other.ok is False and other.run is None  # never a named path
    assert isinstance(parse_reply(link.handle({"type": "path", "path": "../x.ipynb"})), PathReply)
    bad = parse_reply(link.handle(["not", "an", "object"]))
    assert isinstance(bad, ErrorReply) and "JSON object" in bad.message
    # The widget asks state and action only: a path message through it changes nothing.
    fresh = ArcanaComm(magics(shell))
    refused = parse_reply(answer(fresh, {"type": "path", "path": "elsewhere.ipynb", "request_id": "w9"}))
    assert refused.ok is False and refused.request_id == "w9" and not fresh.answered  # type: ignore[union-attr]
    assert link.answered  # the path message of the JupyterLab extension (even a refused one) says it is there
    assert parse_reply(answer(link, "hello")).ok is False  # type: ignore[union-attr]
    with pytest.raises(Exception):  # noqa: B017 - a malformed request does not validate
        REQUEST_ADAPTER.validate_python({"type": "action", "action": "delete", "target": "x"})


# ---- a real kernel ------------------------------------------------------------------------------------
KERNEL_SETUP = """
%load_ext arcana_jupyter
%config ArcanaMagics.frontend = "widget"
def echo(request):
    return "You said: " + request.messages[-1].content
%arcana_chat --model fn:echo --primitives pin
import arcana_jupyter.jupyter as aj
_ = aj.session().pin("The deadline is 30 June.", label="deadline")
"""


def _execute(kc: Any, code: str, timeout: float = 60) -> list[dict[str, Any]]:
    """Run ``code`` and return its iopub messages (until the kernel is idle again)."""
    msg_id = kc.execute(code)
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        out.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            reply = kc.get_shell_msg(timeout=10)
            assert reply["content"]["status"] == "ok", reply["content"]
            return out
    raise AssertionError(f"no idle after {code!r}")


def _custom(kc: Any, comm_id: str, content: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
    """Send a custom message to the widget as a front end does; return the widget's custom answer."""
    msg = kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
    kc.shell_channel.send(msg)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        data = got["content"].get("data") or {}
        if (got["msg_type"] == "comm_msg" and got["content"].get("comm_id") == comm_id
                and data.get("method") == "custom" and data["content"].get("request_id") == content["request_id"]):
            answer_: dict[str, Any] = data["content"]
            return answer_
    raise AssertionError(f"the widget did not answer {content!r}")


@pytest.mark.slow
def test_the_widget_answers_a_front_end_over_a_real_kernel(tmp_path: Path) -> None:
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "PYTHONPATH": str(ROOT), "ARCANA_NOTEBOOK": str(tmp_path / "w.ipynb")}
    env.pop("VSCODE_PID", None)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        _execute(kc, KERNEL_SETUP)
        msgs = _execute(kc, "%%arcana\nwhen is the deadline?")
        shown = [m["content"]["data"] for m in msgs if m["msg_type"] in ("display_data", "update_display_data")]
        final = shown[-1]
        assert {WIDGET_VIEW, MIME, "text/html", "text/plain"} <= set(final)
        comm_id = final[WIDGET_VIEW]["model_id"]
        opened = [m for m in msgs if m["msg_type"] == "comm_open" and m["content"]["comm_id"] == comm_id]
        assert opened and opened[0]["content"]["data"]["state"]["_model_name"] == "AnyModel"
        bundle = final[MIME]
        run_id = bundle["run_id"]

        state = LiveState.model_validate(_custom(kc, comm_id, {"type": "state", "run_id": run_id, "agent": "main",
                                                                "request_id": "w1"}))
        assert state.live and state.turn == 1 and [p["label"] for p in state.pins] == ["deadline"]
        pin_id = state.pins[0]["pin_id"]
        done = ActionReply.model_validate(_custom(kc, comm_id, {"type": "action", "action": "unpin", "target": pin_id,
                                                                 "run_id": run_id, "agent": "main",
                                                                 "request_id": "w2"}))
        assert done.ok and done.pins == [] and "done" in done.message
        trace_reply = TraceReply.model_validate(_custom(kc, comm_id, {"type": "trace", "what": "turn", "turn": 1,
                                                                       "run_id": run_id, "agent": "main",
                                                                       "request_id": "w4"}))
        assert trace_reply.ok and trace_reply.turn_view is not None
        assert any(p.primitive == "unpin" for p in trace_reply.turn_view.primitives)  # the unpin just made
        bad = _custom(kc, comm_id, {"type": "action", "action": "unpin", "target": "x" * 500, "run_id": run_id,
                                    "agent": "main", "request_id": "w3"})
        assert parse_reply(bad).ok is False  # type: ignore[union-attr]
        trace = tmp_path / "w.arcana" / f"{run_id}.jsonl"
        events = [json.loads(line) for line in trace.read_text().splitlines()]
        unpins = [e for e in events if e["event_type"] == "cognitive_primitive"
                  and e["metadata"].get("primitive") == "unpin"]
        assert len(unpins) == 1 and unpins[0]["metadata"]["source"] == "user"  # the refused one left nothing
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
