"""The magics driven through a real IPython shell, with the FunctionProvider as the model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from arcana_jupyter.exceptions import ProviderError
from arcana_jupyter.jupyter.errors import TurnFailed
from tests.jupyter.conftest import MIME, echo, magics, run_cell_magic, turn_outputs
from tests.render.test_render import HOSTILE, assert_safe


def start(ip: Any, line: str = "") -> list[Any]:
    ip.user_ns["echo"] = echo
    with capture_output() as captured:
        ip.run_line_magic("arcana_chat", f"--model fn:echo {line}")
    return captured.outputs


def test_turn_is_a_mime_bundle_with_metadata_and_a_trace_beside_the_notebook(shell: Any, tmp_path: Path) -> None:
    notes = start(shell, "--window 4000 --reserve 500")
    assert "trace analysis.arcana/r_" in notes[0].data["text/plain"]
    shell.user_ns["x"] = 42
    outputs = turn_outputs(run_cell_magic(shell, "", "x is {x}, braces {{kept}}"))
    final = outputs[-1]
    bundle = final.data[MIME]
    chat = magics(shell).entry(None).chat
    assert bundle["version"] == 1 and bundle["turn"] == 1 and bundle["status"] == "ok"
    assert bundle["input"] == "x is 42, braces {kept}"
    assert bundle["reply"] == "You said: x is 42, braces {kept}"
    assert bundle["steps"][0]["decision"]["decisions"][0]["role"] == "system"
    rel = f"analysis.arcana/{chat.run_id}.jsonl"
    assert final.metadata == {"arcana": {"run_id": chat.run_id, "agent": "main", "turn": 1, "trace_path": rel}}
    assert bundle["trace_path"] == rel and (tmp_path / rel).is_file()
    assert "You said: x is 42" in final.data["text/plain"] and "turn 1" in final.data["text/plain"]
    assert '<details class="arcana-inspector">' in final.data["text/html"]
    events = [json.loads(line)["event_type"] for line in (tmp_path / rel).read_text().splitlines()]
    assert events[0] == "run_start" and "turn_end" in events


def test_hostile_reply_is_escaped_in_the_html(shell: Any) -> None:
    shell.user_ns["echo"] = lambda request: HOSTILE
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo")
    final = turn_outputs(run_cell_magic(shell, "", "say something nasty"))[-1]
    assert final.data[MIME]["reply"] == HOSTILE  # the data is the text as written
    html = final.data["text/html"]
    assert_safe(html)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in html


def test_several_named_sessions_and_status(shell: Any) -> None:
    start(shell, "--name a")
    start(shell, "--name b --classic")
    run_cell_magic(shell, "--session a", "to a")
    out = turn_outputs(run_cell_magic(shell, "", "to b (the latest)"))[-1]
    assert out.metadata["arcana"]["agent"] == "b"
    with capture_output() as captured:
        shell.run_line_magic("arcana_status", "")
    html = captured.outputs[0].data["text/html"]
    assert html.count("<code>r_") == 2 and "(default)" in html and "classic" in html


@pytest.mark.parametrize(
    ("magic", "line", "expected"),
    [
        ("arcana_chat", "--window abc", "--window must be a whole number, got 'abc'"),
        ("arcana_chat", "--window 0", "--window must be at least 256 (got 0)"),
        ("arcana_chat", "--reserve -5", "--reserve must be at least 0 (got -5)"),
        ("arcana_chat", "--window 1024 --reserve 1024",
         "--window 1024 leaves no room for the prompt with --reserve 1024"),
        ("arcana_chat", "--window 300 --reserve 4000", "give a larger --window or a smaller --reserve"),
        ("arcana_chat", "--model nosuchprovider:x", "unknown provider 'nosuchprovider'"),
        ("arcana_chat", "--model gpt5", "model string 'gpt5' has no provider"),
        ("arcana_chat", "--primitives recall,teleport", "--primitives: unknown primitive(s) teleport"),
        ("arcana_chat", "--strategy sideways", "--strategy must be 'auto'"),
        ("arcana_chat", "--name 'a b'", "--name must be 1 to 64 letters"),
        ("arcana_replay", "--turn 0", "--turn must be at least 1"),
        ("arcana_status", "now", "takes no arguments"),
    ],
)
def test_bad_lines_are_one_line_usage_errors_naming_the_flag(shell: Any, magic: str, line: str, expected: str) -> None:
    shell.user_ns["echo"] = echo
    with pytest.raises(UsageError) as info:
        shell.run_line_magic(magic, line)
    message = str(info.value)
    assert expected in message and "\n" not in message
    if magic != "arcana_status":
        assert message.startswith(f"%{magic}: ") and message.endswith(f"(%{magic}? lists every option)")
    assert not magics(shell).sessions, "a bad line starts no session"


def test_bad_cells_raise_usage_error_and_the_session_survives(shell: Any) -> None:
    start(shell)
    with pytest.raises(UsageError, match="%%arcana: unrecognized arguments: --bogus"):
        shell.run_cell_magic("arcana", "--bogus", "hello")
    with pytest.raises(UsageError, match=r"\{nowhere\} names no variable.*\{\{ and \}\}"):
        shell.run_cell_magic("arcana", "", "value {nowhere}")
    with pytest.raises(UsageError, match="no arcana session named 'zzz'"):
        shell.run_cell_magic("arcana", "--session zzz", "hello")
    result = shell.run_cell("%arcana_chat --window -5")
    assert isinstance(result.error_in_exec, UsageError)
    out = turn_outputs(run_cell_magic(shell, "", "still here?"))[-1]
    assert out.data[MIME]["turn"] == 1 and out.data[MIME]["status"] == "ok"


def test_provider_error_fails_the_cell_with_one_line_and_the_session_survives(shell: Any) -> None:
    calls = {"n": 0}

    def flaky(request: Any) -> str:
        calls["n"] += 1
        if calls["n"] <= 3:
            raise ProviderError("quota exceeded for this key; try again later", provider="function", status=429)
        return "recovered"

    shell.user_ns["flaky"] = flaky
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:flaky")
    # a real cell: IPython marks it failed and shows our one line instead of a traceback
    with capture_output() as captured:
        result = shell.run_cell("%%arcana\nfirst")
    assert isinstance(result.error_in_exec, TurnFailed)
    rendered = result.error_in_exec._render_traceback_()
    assert len(rendered) == 1 and "quota exceeded" in rendered[0] and "magics.py" not in captured.stdout
    assert "Traceback" not in captured.stdout + captured.stderr
    # the turn itself is recorded and shown, with its error
    with pytest.raises(TurnFailed, match="quota exceeded"):
        run_cell_magic(shell, "", "first again")
    # raise_errors=False: the same line, the cell does not fail
    magics(shell).raise_errors = False
    with capture_output() as captured:
        shell.run_cell_magic("arcana", "", "first, once more")
    first = turn_outputs(captured.outputs)[-1]
    assert any("arcana turn failed" in o.data.get("text/plain", "") for o in captured.outputs)
    magics(shell).raise_errors = True
    assert first.data[MIME]["status"] == "error"
    assert "quota exceeded" in first.data["text/html"] and "Traceback" not in first.data["text/html"]
    assert "arcana-error-box" in first.data["text/html"]
    second = turn_outputs(run_cell_magic(shell, "", "second"))[-1]
    assert second.data[MIME]["status"] == "ok" and second.data[MIME]["reply"] == "recovered"


def test_resume_continues_the_run_in_the_same_trace(shell: Any, tmp_path: Path) -> None:
    start(shell)
    run_cell_magic(shell, "", "remember the word pelican")
    run_cell_magic(shell, "", "second turn")
    run_id = magics(shell).entry(None).chat.run_id
    magics(shell).close_all()  # what a kernel restart leaves: only the trace
    seen: list[Any] = []
    shell.user_ns["echo"] = lambda request: seen.append(request) or "resumed"
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", f"--model fn:echo --resume {run_id}")
    assert "resumed" in captured.outputs[0].data["text/plain"] and "at turn 3" in captured.outputs[0].data["text/plain"]
    out = turn_outputs(run_cell_magic(shell, "", "what word?"))[-1]
    assert out.metadata["arcana"]["run_id"] == run_id and out.metadata["arcana"]["turn"] == 3
    assert any("pelican" in m.content for m in seen[0].messages)
    assert len(list((tmp_path / "analysis.arcana").glob("*.jsonl"))) == 1


def test_replay_magic_shows_a_css_scrubber_with_verified_digests(shell: Any) -> None:
    start(shell, "--window 700 --reserve 100 --classic --no-tools")
    for i in range(3):
        run_cell_magic(shell, "", f"turn {i} " + "words " * 120)
    with capture_output() as captured:
        shell.run_line_magic("arcana_replay", "--turn 2")
    html = captured.outputs[0].data["text/html"]
    assert_safe(html)
    assert html.count('type="radio"') == 3 and html.count('" checked>') == 1
    assert html.count("✓ digest verified") == 3
    assert "dropped" in html or "compressed" in html  # the small window forced decisions


def test_replay_of_a_long_run_shows_progress_then_the_replay_in_its_place(shell: Any) -> None:
    from arcana_jupyter.jupyter.replay_view import PROGRESS_MIN_TURNS, REPLAY_MIME_TYPE

    start(shell, "--window 2000 --reserve 200 --no-tools")
    chat = magics(shell).entry(None).chat
    for i in range(PROGRESS_MIN_TURNS + 2):
        chat.send_sync(f"question {i}")
    with capture_output() as captured:
        shell.run_line_magic("arcana_replay", "")
    texts = [o.data.get("text/plain", "") for o in captured.outputs]
    assert texts[0].startswith(f"arcana replay of run {chat.run_id}: building the frames, turn 0 of 52")
    assert any("turn 52 of 52" in t for t in texts)
    assert "<progress" in captured.outputs[0].data["text/html"]
    assert REPLAY_MIME_TYPE in captured.outputs[-1].data  # the progress bar's display, updated to the replay
    assert all(REPLAY_MIME_TYPE not in o.data for o in captured.outputs[:-1])


def test_pins_magic_and_memory_off_message(shell: Any) -> None:
    start(shell, "--primitives pin")
    run_cell_magic(shell, "", "hello")
    chat = magics(shell).entry(None).chat
    chat.pin("Budget: <b>120k</b>", label="budget")
    with capture_output() as captured:
        shell.run_line_magic("arcana_pins", "")
    html = captured.outputs[0].data["text/html"]
    assert "budget" in html and "Budget: &lt;b&gt;120k&lt;/b&gt;" in html
    with capture_output() as captured:
        shell.run_line_magic("arcana_memory", "")
    assert "memory is off" in captured.outputs[0].data["text/plain"]


def test_memory_on_a_postgres_server(shell: Any, postgres_server: Any) -> None:
    url = postgres_server.fresh_url(password="magic-secret-pw-77")
    notes = start(shell, f"--memory --memory-url {url}")
    assert "magic-secret-pw-77" not in notes[0].data["text/plain"]
    run_cell_magic(shell, "", "hello")
    chat = magics(shell).entry(None).chat
    assert chat.memory is not None and chat.memory.store.backend == "postgresql"
    assert chat.config.memory_url == url and "magic-secret-pw-77" not in repr(chat.config)
    with pytest.raises(UsageError, match="memory_url must be a postgresql://"):
        shell.run_line_magic("arcana_chat", "--model fn:echo --memory --memory-url notes.sqlite3 --name other")


def test_ask_user_reaches_the_person_on_the_main_thread(shell: Any) -> None:
    import threading

    asked: list[tuple[str, bool]] = []

    def person(question: str) -> str:
        asked.append((question, threading.current_thread() is threading.main_thread()))
        return "blue"

    def model(request: Any) -> Any:
        last = request.messages[-1]
        if last.role == "tool":
            return f"You answered: {last.content}"
        return {"tool": "ask_user", "args": {"question": "Which colour?"}}

    magics(shell).bridge.input_fn = person
    shell.user_ns["echo"] = model
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo")
    bundle = turn_outputs(run_cell_magic(shell, "", "pick a colour for the chart"))[-1].data[MIME]
    assert asked == [("Which colour? ", True)]
    assert bundle["tool_calls"][0]["name"] == "ask_user" and "blue" in bundle["reply"]


def test_export_magic_writes_the_report_of_the_saved_notebook(shell: Any, tmp_path: Path) -> None:
    import nbformat

    start(shell)
    final = turn_outputs(run_cell_magic(shell, "", "hello"))[-1]
    cell = nbformat.v4.new_code_cell("%%arcana\nhello", outputs=[nbformat.v4.new_output(
        "display_data", data=final.data, metadata=final.metadata)])
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "analysis.ipynb")
    with capture_output():
        out = shell.run_line_magic("arcana_export", "-o report.html")
    assert out == "report.html" and "You said: hello" in (tmp_path / "report.html").read_text()


def test_a_cell_without_a_session_starts_one_and_a_bad_model_is_a_short_message(shell: Any) -> None:
    magics(shell).default_model = "nosuchprovider:model-x"
    try:
        with capture_output() as captured:
            shell.run_cell_magic("arcana", "", "hello")
        text = captured.outputs[0].data["text/plain"]
        assert text.startswith("arcana: could not start a session:") and "nosuchprovider" in text
        assert "Traceback" not in text and len(text) < 700
    finally:
        magics(shell).default_model = "auto"
    shell.user_ns["echo"] = echo
    magics(shell).default_model = "fn:echo"
    try:
        out = turn_outputs(run_cell_magic(shell, "", "hello again"))[-1]
    finally:
        magics(shell).default_model = "auto"
    assert out.data[MIME]["reply"] == "You said: hello again" and out.metadata["arcana"]["agent"] == "main"


def test_a_failed_arcana_chat_is_not_papered_over_by_a_default_session(shell: Any) -> None:
    with pytest.raises(UsageError, match="could not start the session"):
        shell.run_line_magic("arcana_chat", "--model nosuchprovider:model-x")
    with pytest.raises(UsageError, match="run %arcana_chat"):
        shell.run_cell_magic("arcana", "", "hello")
    assert not magics(shell).sessions
    start(shell)  # fixed: turns work again
    assert turn_outputs(run_cell_magic(shell, "", "hi"))[-1].data[MIME]["reply"] == "You said: hi"


def test_a_named_session_replays_its_own_agent(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    start(shell, "--name analyst --classic")
    run_cell_magic(shell, "", "first question")
    run_id = magics(shell).entry("analyst").chat.run_id
    magics(shell).sessions.clear()
    monkeypatch.setenv("ARCANA_REPLAY_RUNS", json.dumps({"analyst": run_id}))
    with capture_output():
        shell.run_line_magic("arcana_chat", "--name analyst --classic")
    entry = magics(shell).entry("analyst")
    assert entry.chat.provider.name == "replay" and entry.chat.provider.agent == "analyst"
    out = turn_outputs(run_cell_magic(shell, "", "first question"))[-1]
    assert out.data[MIME]["reply"] == "You said: first question"


def test_otel_flag_exports_the_turns_or_names_the_extra(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from arcana_jupyter.trace import otel
    from tests.servers.otlp_receiver import OTLPReceiver

    assert "--otel" in (magics(shell).arcana_chat.__doc__ or "")
    receiver = OTLPReceiver()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.delenv("ARCANA_OTEL", raising=False)
    try:
        start(shell, "--otel")
        chat = magics(shell).entry(None).chat
        assert chat.config.otel and chat.otel is not None
        run_cell_magic(shell, "", "hello spans")
        chat.close()
        spans = receiver.wait_for(2)
        assert sorted(s["name"] for s in spans) == ["chat echo", "invoke_agent main"]
    finally:
        receiver.close()
        otel.shutdown_all(timeout=1.0)
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # as if the extra were not installed
    monkeypatch.setattr(otel.pipeline, "_sdk_classes", {})
    shell.user_ns["echo"] = echo
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("arcana_chat", "--model fn:echo --otel --name other")
    message = str(info.value)
    assert "\n" not in message and "pip install 'arcana-jupyter[otel]'" in message


def test_replay_what_if_rebuilds_a_turn_with_another_window_beside_the_recorded_one(shell: Any) -> None:
    start(shell, "--window 700 --reserve 100 --no-tools")
    for i in range(4):
        run_cell_magic(shell, "", f"turn {i} <b>fact {i}</b> " + "words " * 120)
    with capture_output() as captured:
        shell.run_line_magic("arcana_replay", "--turn 4 --window 4000")
    replay, what_if = captured.outputs
    assert "arcana-scrub" in replay.data["text/html"]
    html = what_if.data["text/html"]
    assert_safe(html)
    assert what_if.data["text/plain"] == "turn 4 rebuilt with window 4000 beside the recorded prompt"
    assert "window 4,000" in html and "Changed by the counterfactual" in html
    tokens = re.search(r"Changed by the counterfactual \(([\d,]+) tokens sent → ([\d,]+) rebuilt \(\+", html)
    assert tokens and int(tokens[2].replace(",", "")) > int(tokens[1].replace(",", ""))  # the bigger window keeps more
    assert "&lt;b&gt;fact 0&lt;/b&gt;" in html  # the earlier turn is back, escaped
    changed = html.split("Changed by the counterfactual")[1]
    assert re.search(r"(compressed|dropped).{0,400}kept", changed, re.S)  # turn 1 was cut, now kept whole
    with capture_output() as captured:
        shell.run_line_magic("arcana_replay", "--strategy passthrough --reserve 50")  # the last turn by default
    assert "turn 4 rebuilt with reserve 50, strategy passthrough" in captured.outputs[-1].data["text/plain"]
    with capture_output() as captured:  # relevance: the run was lexical; mode: what adaptive would add is unknown
        shell.run_line_magic("arcana_replay", "--relevance lexical --mode classic")
    assert "turn 4 rebuilt with mode classic, relevance lexical" in captured.outputs[-1].data["text/plain"]
    with pytest.raises(UsageError, match="mode"):
        shell.run_line_magic("arcana_replay", "--mode turbo")
    with pytest.raises(UsageError, match=r"--turn 9: no such turn in this run \(turns: 1, 2, 3, 4\)"):
        shell.run_line_magic("arcana_replay", "--turn 9 --window 4000")
    with pytest.raises(UsageError, match="window"):
        shell.run_line_magic("arcana_replay", "--window 3")
