"""The main-job demo: run the README tour headless on the bundled local model, then report.

    python -m arcana_jupyter.demo [--out arcana-demo] [--notebook tour] [--no-verify]

Copies ``example-notebooks/<notebook>.ipynb`` (and its data files) into ``--out``, executes it with
nbclient (as Jupyter would, but with no browser), saves the executed notebook with its traces in
``<notebook>.arcana/`` beside it, and writes ``<notebook>.report.html`` — verified by re-executing
the notebook against its own recorded run unless ``--no-verify``. Prints where everything is. The
tour's memory goes to ``--out``/memory.sqlite3 (``$ARCANA_MEMORY_PATH`` if set), never the user's store.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .report.build import collect_bundles, sessions_of, write_report
from .report.execute import execute_notebook
from .report.verify import verify_notebook
from .trace.reader import notebook_trace_dir

EXAMPLES = Path(__file__).resolve().parents[1] / "example-notebooks"


def run_demo(out: Path, notebook: str = "tour", *, verify: bool = True, timeout: int = 600) -> dict[str, Path]:
    """Copy, execute and report one example notebook; returns the paths written."""
    source = EXAMPLES / f"{notebook}.ipynb"
    if not source.is_file():
        raise SystemExit(f"arcana demo: no example notebook {source} (run from a source checkout of arcana-jupyter)")
    out.mkdir(parents=True, exist_ok=True)
    target = out / source.name
    shutil.copy2(source, target)
    for data in EXAMPLES.iterdir():
        if data.is_file() and data.suffix in (".csv", ".json", ".txt"):
            shutil.copy2(data, out / data.name)
    traces = notebook_trace_dir(target)
    if traces.exists():
        shutil.rmtree(traces)
    env = dict(os.environ)
    # The tour stores a memory: in a store of the demo's own (unless one is named), not the user's.
    memory = Path(env.setdefault("ARCANA_MEMORY_PATH", str(out / "memory.sqlite3")))
    if memory.parent == out and memory.exists():
        memory.unlink()  # each demo starts from an empty store, like the first run
    nb = execute_notebook(target, timeout=timeout, env=env)
    verification = verify_notebook(target, sessions_of(collect_bundles(nb)), timeout=timeout) if verify else None
    report = write_report(target, nb, verification=verification)
    paths = {"notebook": target, "traces": traces, "report": report}
    if verification is not None:
        print(verification.summary())
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arcana_jupyter.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="arcana-demo", help="folder for the executed notebook, traces and report")
    parser.add_argument("--notebook", default="tour", help="example notebook name (default: tour, the README tour)")
    parser.add_argument("--no-verify", dest="verify", action="store_false", help="skip the replay verification")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)
    started = time.monotonic()
    paths = run_demo(Path(args.out).resolve(), args.notebook, verify=args.verify, timeout=args.timeout)
    print(f"executed notebook: {paths['notebook']}")
    print(f"traces:            {paths['traces']}/")
    print(f"report:            {paths['report']}")
    print(f"done in {time.monotonic() - started:.1f} s — open the report in a browser (it needs no network)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
