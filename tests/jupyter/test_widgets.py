"""The live inspector's actions and the replay widget's front-end switching."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ipywidgets as widgets

from arcana_jupyter.jupyter.replay import build_frames
from arcana_jupyter.jupyter.widgets import InspectorWidget, ReplayWidget
from tests.jupyter.conftest import echo, magics, run_cell_magic


def test_inspector_unpin_button_goes_through_the_runtime_and_is_traced(shell: Any, tmp_path: Path) -> None:
    shell.user_ns["echo"] = echo
    shell.run_line_magic("arcana_chat", "--model fn:echo --primitives pin")
    chat = magics(shell).entry(None).chat
    chat.pin("The deadline is 30 June.", label="deadline")
    run_cell_magic(shell, "", "when is the deadline?")
    widget = InspectorWidget(chat, 1, lambda: chat.turn_bundle(1))
    assert widget.accordion.selected_index is None  # collapsed by default
    widget.refresh()
    assert "The deadline is 30 June." in widget.html.value
    buttons = [b for row in widget.actions.children for b in row.children if isinstance(b, widgets.Button)]
    assert [b.description for b in buttons] == [f"unpin {chat.pins.active(1)[0].pin_id}"]
    buttons[0].click()
    assert chat.pins.active(chat.turn) == []
    assert "done" in widget.status.value
    unpins = [e for e in chat.turn_events(1) if e.event_type == "cognitive_primitive" and e.metadata["primitive"] == "unpin"]
    assert unpins and unpins[-1].metadata["source"] == "user"


def test_replay_widget_links_slider_and_stack_in_the_front_end(shell: Any) -> None:
    shell.user_ns["echo"] = echo
    shell.run_line_magic("arcana_chat", "--model fn:echo --window 800 --reserve 100 --classic --no-tools")
    for i in range(3):
        run_cell_magic(shell, "", f"turn {i} " + "text " * 100)
    entry = magics(shell).entry(None)
    frames = build_frames(entry.location.trace_dir, entry.chat.run_id)
    seen: list[tuple[int, str, int]] = []

    def rebuild(index: int, strategy: str, window: int) -> str:
        seen.append((index, strategy, window))
        return f"<div>rebuilt {index}</div>"

    widget = ReplayWidget(frames, selected=1, rebuild=rebuild)
    assert len(widget.stack.children) == 3 and widget.stack.selected_index == 1
    assert type(widget.link).__name__ == "Link" and widget.link._model_name == "LinkModel"  # jslink: works with no kernel once the state is saved
    assert widget.link.source == (widget.slider, "index") and widget.link.target == (widget.stack, "selected_index")
    assert [label for label, _ in widget.slider.options] == ["1", "2", "3"]
    assert "digest verified" in widget.stack.children[2].value
    widget.slider.index = 2
    widget.strategy.value = "passthrough"
    widget.window.value = 4096
    widget.run_button.click()
    assert seen == [(2, "passthrough", 4096)] and widget.counterfactual.value == "<div>rebuilt 2</div>"
