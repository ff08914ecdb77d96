"""A reply with a pipe table, math and a fenced Python block, end to end in a real JupyterLab:

- while the turn streams (a model that answers line by line, slowly), the reply is already rendered
  by JupyterLab's own Markdown renderer inside our output: table, MathJax, highlighted code;
- the saved notebook's report opens in a browser with the network off and shows the same reply as
  a table, readable math and Pygments-highlighted code, fetching nothing.
Screenshots: test-artifacts/browser/reply-markdown-lab.png, reply-markdown-report.png.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .conftest import shot
from .helpers import CELL_DONE, open_new_notebook, run_cell

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RICH = """Growth by region:

| region | Q1 | Q4 | growth |
|:-------|---:|---:|-------:|
| West   | 100 | 118 | **+18%** |
| East   | 100 | 104 | +4% |

The growth rate is $g = x^2 / y$ and the total is

$$\\int_0^1 x^2 \\, dx = \\frac{1}{3}$$

```python
import pandas as pd

def fastest(df: pd.DataFrame) -> str:
    # the region whose sales grew most
    return df.groupby("region")["sales"].pct_change().idxmax()
```
"""

SETUP = f'''
import asyncio
from arcana_jupyter.providers.base import StreamChunk
from arcana_jupyter.providers.function import FunctionProvider

RICH = {RICH!r}

class SlowModel(FunctionProvider):
    """Streams its answer line by line, 0.35 s apart: slow enough to watch it arrive."""
    async def stream(self, request):
        response = await self.complete(request)
        for line in response.message.content.splitlines(keepends=True):
            yield StreamChunk(text=line)
            await asyncio.sleep(0.35)
        yield StreamChunk(response=response)

slow = SlowModel(lambda request: RICH, model_name="slow")
'''

# Streaming: the turn is still running and its reply already holds a rendered table.
STREAMING_TABLE = """() => {
  const out = document.querySelector('.jp-RenderedArcanaTurn');
  return !!(out && out.querySelector('.arcana-progress')
            && out.querySelector('.arcana-reply.jp-RenderedMarkdown table td'));
}"""


def test_reply_renders_as_jupyterlab_markdown_while_streaming_and_in_the_offline_report(
    page, browser, lab_root: Path
) -> None:
    path = lab_root / "rich.ipynb"
    open_new_notebook(page, path)
    run_cell(page, "%load_ext arcana_jupyter")
    run_cell(page, SETUP)
    run_cell(page, "%arcana_chat --model fn:slow --window 4096")
    index = run_cell(page, "%%arcana\nWhich region grew fastest?", wait=False)

    # While it streams: JupyterLab's Markdown renderer has drawn the table, the turn is still running.
    page.wait_for_function(STREAMING_TABLE, timeout=60_000, polling=50)
    page.wait_for_function(CELL_DONE, arg=index, timeout=120_000)

    out = page.locator(".jp-RenderedArcanaTurn").first
    reply = out.locator(".arcana-reply")
    expect(reply).to_have_class(re.compile(r"jp-RenderedMarkdown"))
    expect(out.locator(".arcana-progress")).to_have_count(0)
    # A table with its header and rows.
    expect(reply.locator("table th")).to_have_count(4)
    expect(reply.locator("table tbody tr")).to_have_count(2)
    expect(reply.locator("table td strong")).to_have_text("+18%")
    # LaTeX typeset by JupyterLab's MathJax: the inline formula and the display one.
    expect(reply.locator("mjx-container")).to_have_count(2, timeout=30_000)
    expect(reply.locator("mjx-container[display='true']")).to_have_count(1)
    # Highlighted code: the fenced block is split into styled tokens, and a keyword has its own colour.
    code = reply.locator("pre code")
    expect(code).to_contain_text("def fastest(df: pd.DataFrame) -> str:")
    tokens = code.locator("span")
    assert tokens.count() >= 8
    colours = set(code.evaluate("c => [...c.querySelectorAll('span')].map(s => getComputedStyle(s).color)"))
    assert len(colours) >= 3, colours
    out.scroll_into_view_if_needed()
    shot(page, "reply-markdown-lab")
    assert page.page_errors == []

    # The notebook as saved: the turn's bundle plus the static fallback.
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30_000)
    saved = json.loads(path.read_text())
    outputs = [o for c in saved["cells"] for o in c.get("outputs", [])
               if "application/vnd.arcana.turn+json" in o.get("data", {})]
    assert len(outputs) == 1 and outputs[0]["data"]["application/vnd.arcana.turn+json"]["reply"] == RICH
    assert "<table>" in "".join(outputs[0]["data"]["text/html"])

    # The offline report of that notebook, opened with the network off.
    from arcana_jupyter.report.build import build_report

    report = build_report(path, output=lab_root / "rich.report.html")
    context = browser.new_context(viewport={"width": 1200, "height": 1000}, offline=True)
    try:
        rp = context.new_page()
        fetched: list[str] = []
        rp.on("request",
              lambda r: fetched.append(r.url) if not r.url.startswith(("file:", "data:", "about:")) else None)
        rp.goto(report.as_uri())
        turn = rp.locator(".nb .arcana-turn").first
        rich = turn.locator(".arcana-reply")
        expect(rich.locator("table th")).to_have_count(4)
        expect(rich.locator("table tbody tr")).to_have_count(2)
        expect(rich.locator(".arcana-math")).to_have_count(2)
        expect(rich.locator(".arcana-math").first).to_have_text("$g = x^2 / y$")
        expect(rich.locator(".arcana-math-block")).to_have_text("$$\\int_0^1 x^2 \\, dx = \\frac{1}{3}$$")
        keyword = rich.locator("pre.arcana-hl code.language-python span.k", has_text="def")
        expect(keyword).to_have_text("def")
        # Pygments' default keyword colour
        assert keyword.evaluate("e => getComputedStyle(e).color") == "rgb(0, 128, 0)"
        # The replay at the end of the report shows the same reply, rendered the same way.
        expect(rp.locator(".arcana-scrub .arcana-reply table").first).to_be_attached()
        turn.scroll_into_view_if_needed()
        rp.screenshot(path=str(shot_path("reply-markdown-report")))
        assert fetched == []
    finally:
        context.close()


def shot_path(name: str) -> Path:
    from .conftest import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
