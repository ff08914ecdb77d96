"""The inspector and the replay scrubber rendered in headless Chromium (Debian's package).

Screenshots go to test-artifacts/jupyter/. The replay test also proves the scrubber switches turns
with CSS alone: no kernel, no script (the page has JavaScript disabled).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, sync_playwright

from arcana_jupyter import render
from arcana_jupyter.jupyter.display import relative_bundle
from arcana_jupyter.jupyter.replay_frames import build_frames
from tests.jupyter.conftest import magics, run_cell_magic, turn_outputs

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "jupyter"
LIGHT = "background:#ffffff;color:#1f2328"
DARK = "background:#1e1e1e;color:#d4d4d4"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


def page_html(body: str, theme: str = LIGHT) -> str:
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"></head>'
            f'<body style="{theme};margin:0;padding:18px 22px;font-family:sans-serif">{body}</body></html>')


def session_with_decisions(shell: Any) -> Any:
    """Four turns with a small window, a pin and a tool call: an inspector with something in it."""
    calls = {"n": 0}

    def model(request: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 4:
            return {"tool": "list_variables", "args": {}}
        last = request.messages[-1].content
        return (f"Here is what I found about **{last[:40]}**:\n\n"
                "- the west grew fastest\n- `revenue_eur` is in euros\n\n"
                "<script>alert('not run')</script>")

    shell.user_ns["echo"] = model
    shell.user_ns["df_sales"] = [1, 2, 3]
    shell.run_line_magic("arcana_chat", "--model fn:echo --window 900 --reserve 150 --classic --primitives pin")
    chat = magics(shell).entry(None).chat
    chat.pin("Revenue is reported in EUR, quarters are calendar quarters.", label="units")
    for i, text in enumerate(["Load sales.csv and describe it. " + "The file has quarterly data. " * 12,
                              "Which region grew fastest? " + "Compare Q1 with Q4. " * 10,
                              "What variables do I have?", "Summarise in one line."]):
        run_cell_magic(shell, "", f"{text} (message {i + 1})")
    return chat


def test_inspector_screenshot_light_and_dark(shell: Any, browser: Browser) -> None:
    chat = session_with_decisions(shell)
    bundle = relative_bundle(chat.turn_bundle(4), magics(shell).entry(None).location)
    html = render.turn_html(bundle, open_inspector=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, theme in (("inspector.png", LIGHT), ("inspector-dark.png", DARK)):
        page = browser.new_page(viewport={"width": 1100, "height": 900}, java_script_enabled=False)
        page.set_content(page_html(html, theme))
        assert page.locator("details.arcana-inspector table.arcana-table").last.is_visible()
        assert page.get_by_text("Active pins").is_visible() and page.get_by_role("cell", name="units").is_visible()
        assert page.locator(".arcana-bar span").count() >= 3
        page.screenshot(path=str(ARTIFACTS / name), full_page=True)
        page.close()
    assert (ARTIFACTS / "inspector.png").stat().st_size > 20_000


def test_replay_scrubber_switches_turns_without_a_kernel(shell: Any, browser: Browser) -> None:
    chat = session_with_decisions(shell)
    entry = magics(shell).entry(None)
    frames = build_frames(entry.location.trace_dir, chat.run_id)
    html = render.replay_html(frames, uid="shot")
    page = browser.new_page(viewport={"width": 1100, "height": 900}, java_script_enabled=False)
    page.set_content(page_html(html))
    frame = page.locator(".arcana-frame")
    assert frame.count() == len(frames) == 4, [f["turn"] for f in frames]
    assert [frame.nth(i).is_visible() for i in range(4)] == [False, False, False, True]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "replay.png"), full_page=True)
    page.click("label[for=arcana-rp-shot-1]")  # the "2" chip: turn 2
    assert [frame.nth(i).is_visible() for i in range(4)] == [False, True, False, False]
    page.locator(".arcana-f1 .arcana-nav").first.click()  # "◀ turn 1"
    assert frame.nth(0).is_visible() and not frame.nth(1).is_visible()
    page.locator(".arcana-f0 details summary").first.click()
    page.screenshot(path=str(ARTIFACTS / "replay-turn1.png"), full_page=True)
    assert page.locator(".arcana-f0").get_by_text("digest verified").is_visible()
    page.close()


def test_turn_output_html_is_safe_in_a_real_browser(shell: Any, browser: Browser) -> None:
    shell.user_ns["echo"] = lambda request: ('<img src=x onerror="document.title=\'pwned\'">'
                                             '<script>document.title="pwned"</script>')
    shell.run_line_magic("arcana_chat", "--model fn:echo")
    html = turn_outputs(run_cell_magic(shell, "", "hi"))[-1].data["text/html"]
    page = browser.new_page()  # JavaScript on: nothing in the output may run
    page.set_content(page_html(html))
    assert page.title() == "" and page.locator("img").count() == 0
    assert "<script>" in page.locator(".arcana-reply").inner_text()
    page.close()
