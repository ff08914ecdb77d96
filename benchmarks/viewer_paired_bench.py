"""The trace viewer's open and scrub times, the same JavaScript in every checkout (benchmarks/viewer_paired.sh copies
this module into a checkout's tests/browser/ as test_zz_viewer_paired.py and runs it there, in a fresh JupyterLab).

``BENCH_VARIANT=audit``: the issue-37 audit's measure (tests/browser/test_labextension_browser.py at 5eef0b3: the
slider's label waited for, then the turn drawn); ``side``: the label and the turn drawn timed side by side from the
input (the browser test's measure since). The turn is drawn when its summary shows the turn asked for, then two
frames. One JSON line per run is appended to ``BENCH_OUT``, tagged ``BENCH_TREE``.
"""
import json
import os
from pathlib import Path
from typing import Any

from .fixtures.generate import BIG_RUN_ID, make_trace
from .helpers import wait_for_lab

AUDIT_OPEN_JS = """
async (path) => {
  const t0 = performance.now();
  await window.jupyterapp.commands.execute('arcana:open-trace-viewer', {path});
  const sel = '.arcana-viewer[data-turns="5000"]';
  while (!document.querySelector(sel)) { await new Promise(r => setTimeout(r, 5)); }
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const t1 = performance.now();
  const v = document.querySelector(sel);
  const rows = v.querySelectorAll('.arcana-turn-host .arcana-vt-body-row').length;
  // Scrub: jump to the middle with the slider, wait for the frame that renders it.
  const slider = v.querySelector('.arcana-slider');
  // The turn is drawn when Python's answer for it came (the viewer asks the server for each turn): wait
  // for its summary, not only for the label the slider updates at once.
  const drawn = async (turn) => {
    const want = `Turn ${turn}`;
    while (v.querySelector('.arcana-turn-summary strong')?.textContent !== want) {
      await new Promise(r => setTimeout(r, 1));
    }
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  };
  const s0 = performance.now();
  slider.value = '2499';
  slider.dispatchEvent(new Event('input', {bubbles: true}));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const sLabel = performance.now();
  await drawn(2500);
  const s1 = performance.now();
  const label = v.querySelector('.arcana-turn-label').textContent;
  // Ten steps with the keyboard, each to its turn drawn.
  v.focus();
  const k0 = performance.now();
  for (let i = 0; i < 10; i++) {
    v.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true}));
    await drawn(2501 + i);
  }
  const k1 = performance.now();
  return {open_ms: t1 - t0, fetch_ms: Number(v.dataset.fetchMs), turn_ms: Number(v.dataset.turnMs),
          render_ms: Number(v.dataset.renderMs),
          rows_in_dom: rows, scrub_ms: s1 - s0, scrub_label_ms: sLabel - s0, label, step_ms: (k1 - k0) / 10,
          label_after: v.querySelector('.arcana-turn-label').textContent};
}
"""

AUDIT_SCRUB = '''  const s0 = performance.now();
  slider.value = '2499';
  slider.dispatchEvent(new Event('input', {bubbles: true}));
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const sLabel = performance.now();
  await drawn(2500);
  const s1 = performance.now();'''
SIDE_SCRUB = '''  const s0 = performance.now();
  slider.value = '2499';
  slider.dispatchEvent(new Event('input', {bubbles: true}));
  const [sLabel, s1] = await Promise.all([
    new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now())))),
    drawn(2500).then(() => performance.now())]);'''



def js(variant: str) -> str:
    src = AUDIT_OPEN_JS
    start = src.index("  const s0 = performance.now();")
    end = src.index("  const label = v.querySelector")
    return src[:start] + (AUDIT_SCRUB if variant == "audit" else SIDE_SCRUB) + "\n" + src[end:]


def test_bench(page: Any, lab_root: Path) -> None:
    variant = os.environ["BENCH_VARIANT"]
    big_dir = lab_root / "big.arcana"
    big_dir.mkdir(exist_ok=True)
    text = make_trace(BIG_RUN_ID, turns=5000, max_msgs=16, snapshots_every=50, corrupt_at_turn=2500,
                      full_last_turn=True)
    (big_dir / f"{BIG_RUN_ID}.jsonl").write_text(text)
    page.goto(f"{page.base_url}/lab?reset")
    wait_for_lab(page)
    load0 = os.getloadavg()[0]
    res = page.evaluate(js(variant), f"big.arcana/{BIG_RUN_ID}.jsonl")
    res["load"] = [load0, os.getloadavg()[0]]
    res["bytes"] = len(text)
    assert res["label"].startswith("Turn 2500") and res["label_after"].startswith("Turn 2510")
    assert page.page_errors == []
    with open(os.environ["BENCH_OUT"], "a") as f:
        f.write(json.dumps({"tree": os.environ["BENCH_TREE"], "variant": variant, **res}) + "\n")
