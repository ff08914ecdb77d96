"""The first five minutes, as a user meets them: what the session banner says to a user of the
bundled model, and Ctrl-C. Real IPython shells and the real bundled model (the README tour itself
runs headless in tests/test_demo.py, and in JupyterLab in tests/browser/test_first_use_browser.py)."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from IPython.utils.capture import capture_output

from arcana_jupyter.jupyter.errors import TurnInterrupted
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Provider, StreamChunk
from tests.jupyter.conftest import MIME, magics, turn_outputs


def test_the_bundled_model_is_not_offered_tools_unless_forced(shell: Any) -> None:
    with capture_output() as captured:
        shell.run_line_magic("arcana_chat", "--model local --window 1024 --primitives recall,pin")
    banner = captured.outputs[0].data["text/plain"]
    assert banner.count("\n") == 1 and "not offered to this small model" in banner.splitlines()[1]
    chat = magics(shell).entry(None).chat
    assert chat.tool_specs() == [] and {"recall", "pin", "unpin"} <= set(chat.withheld_tools)
    assert chat.config.response_reserve == 256 and chat.provider.n_ctx == 1024
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model local --window 1024 --primitives recall,pin --force --name f")
    forced = magics(shell).entry("f").chat
    assert {"recall", "pin", "unpin"} <= {t.name for t in forced.tool_specs()}
    assert not {"recall", "pin"} & set(forced.withheld_tools)
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model local --window 1024 --tools --name t")
    offered = {t.name for t in magics(shell).entry("t").chat.tool_specs()}
    assert {"list_variables", "describe_variable", "read_cells", "ask_user"} <= offered, "--tools: notebook tools"


class SlowStream(Provider):
    """Streams a few words, then takes its time (long enough to be interrupted)."""

    name = "slow"
    model_name = "slow"
    count_margin = 1.0

    async def complete(self, request: LLMRequest) -> LLMResponse:  # pragma: no cover - stream is used
        raise AssertionError("stream only")

    async def stream(self, request: LLMRequest) -> AsyncIterator[StreamChunk]:
        yield StreamChunk(text="The North region ")
        await asyncio.sleep(30)
        yield StreamChunk(response=LLMResponse(message=Message(role="assistant", content="never")))


def test_ctrl_c_prints_one_line_and_the_inspector_says_cancelled(shell: Any, tmp_path: Path) -> None:
    shell.user_ns["slow"] = SlowStream()
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:slow --classic")
    main = threading.main_thread().ident
    assert main is not None
    timer = threading.Timer(1.0, lambda: signal.pthread_kill(main, signal.SIGINT))
    timer.start()
    with capture_output() as captured:
        result = shell.run_cell("%%arcana\nwhich region grew fastest?")
    timer.cancel()
    error = result.error_in_exec
    assert isinstance(error, TurnInterrupted), error
    lines = error._render_traceback_()
    assert len(lines) == 1 and "interrupted; partial reply (17 characters) kept in the trace" in lines[0]
    assert "Traceback" not in captured.stdout + captured.stderr and "KeyboardInterrupt" not in captured.stdout
    final = turn_outputs(captured.outputs)[-1]
    assert final.data[MIME]["status"] == "cancelled"
    chat = magics(shell).entry(None).chat
    events = [json.loads(line) for line in Path(chat.trace_path).read_text().splitlines()]
    end = [e for e in events if e["event_type"] == "turn_end"][-1]["metadata"]
    assert end["status"] == "cancelled" and end["reply"] == "The North region "
    # the session lives on
    shell.user_ns["echo"] = lambda request: "still here"
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:echo --classic --name next")
        shell.run_cell_magic("arcana", "", "hello?")
