from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from arcana_jupyter.jupyter import _loaded, load_ipython_extension
from arcana_jupyter.jupyter.bridge import MainThreadBridge

MIME = "application/vnd.arcana.turn+json"


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    """A real IPython shell with the extension loaded, serving ``tmp_path/analysis.ipynb``."""
    monkeypatch.setenv("ARCANA_NOTEBOOK", str(tmp_path / "analysis.ipynb"))
    monkeypatch.delenv("ARCANA_REPLAY_RUNS", raising=False)
    monkeypatch.chdir(tmp_path)
    ip = InteractiveShell.instance()
    load_ipython_extension(ip)
    magics = _loaded[id(ip)]
    magics.max_tokens = 0
    magics._failed_chat = None  # one test's failed %arcana_chat is not the next one's
    yield ip
    magics.close_all()
    magics.replay_runs = {}
    magics.bridge = MainThreadBridge()
    for name in [n for n in ip.user_ns if n in ("echo", "flaky", "x", "df")]:
        del ip.user_ns[name]


def magics(ip: InteractiveShell) -> Any:
    return _loaded[id(ip)]


def run_cell_magic(ip: InteractiveShell, line: str, body: str) -> list[Any]:
    """Run ``%%arcana`` and return the captured rich outputs."""
    with capture_output() as captured:
        ip.run_cell_magic("arcana", line, body)
    return captured.outputs


def turn_outputs(outputs: list[Any]) -> list[Any]:
    return [o for o in outputs if MIME in o.data]


def echo(request: Any) -> str:
    """A FunctionProvider answer: repeats the user's last message."""
    return f"You said: {request.messages[-1].content}"
