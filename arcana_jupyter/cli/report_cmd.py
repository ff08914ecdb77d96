"""``arcana report NOTEBOOK [-o OUT] [--verify]``: the notebook's self-contained HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a self-contained HTML report of a notebook and its traces",
        description=(
            "Write one offline HTML file with the notebook, every turn's inspector, a chart of tokens per turn, "
            "the run summary and a replay scrubber. --verify re-executes the notebook against its recorded runs "
            "(replay provider) and reports, turn by turn, whether each prompt and reply was reproduced."
        ),
    )
    parser.add_argument("notebook", help="the .ipynb file (its traces: the trace_path each turn's output recorded, "
                                         "else NOTEBOOK.arcana/ beside it, else embedded)")
    parser.add_argument("-o", "--output", default=None, help="output file (default: NOTEBOOK.report.html)")
    parser.add_argument(
        "--verify", action="store_true", help="re-execute with the replay provider and check every turn"
    )
    parser.add_argument("--embed", action="store_true",
                        help="also store the traces in the notebook's metadata (one file carries everything)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell when verifying (default 600)")
    parser.set_defaults(func=run)


def _output(path: Path, output: str | None) -> Path | None:
    from ..exceptions import ArcanaError

    if output is None:
        return None
    out = Path(output)
    if out.suffix == ".ipynb" or (out.exists() and out.resolve() == path):
        raise ArcanaError(f"refusing to write the HTML report over a notebook ({out}); give -o a .html file")
    if out.is_dir():
        raise ArcanaError(f"-o {out} is a folder; give a file name such as {out / (path.stem + '.report.html')}")
    if not out.parent.is_dir():
        raise ArcanaError(f"cannot write {out}: the folder {out.parent} does not exist")
    return out


def _one_line(text: str, limit: int = 2000) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


class StderrProgress:
    """What ``arcana report`` is doing, on stderr: one line per stage, redrawn in place on a terminal
    (elsewhere, a line every 10% of a long stage), so a long run's report never sits silent. A report
    with no long replay says nothing (as before)."""

    MIN_TURNS = 50
    """Replays shorter than this are quick: no turn count for them."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._what: str | None = None
        self._shown = -1
        self._long = False

    def __call__(self, what: str, done: int, total: int) -> None:
        if what.startswith("warning: "):  # a run the page replays in part, or not at all: one line, always
            self._end()
            self._what = None
            self._line(f"arcana: {_one_line(what)}")
            return
        if what != self._what:
            self._end()
            self._what, self._shown = what, -1
            if what == "page":
                if self._long:
                    self._line("report: writing the page")
                return
            if what.startswith("reading "):  # a large trace: said before its index is built
                self._long = True
                self._line(f"report: {what}")
                return
        if what == "page" or total < self.MIN_TURNS:
            return
        self._long = True
        tenth = done * 10 // max(total, 1)
        if self.tty:
            self.stream.write(f"\rreport: {what}: turn {done:,} of {total:,}")
            self.stream.flush()
        elif tenth != self._shown:
            self._shown = tenth
            self._line(f"report: {what}: turn {done:,} of {total:,}")

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _end(self) -> None:
        if self.tty and self._what is not None and self._what != "page" and not self._what.startswith("reading "):
            self.stream.write("\n")
            self.stream.flush()

    def close(self) -> None:
        self._end()
        self._what = None


def run(args: argparse.Namespace) -> int:
    from ..exceptions import ArcanaError
    from ..report.build import write_report
    from ..report.execute import read_notebook
    from ..report.verify import verify_notebook

    path = Path(args.notebook).resolve()
    if not path.is_file():
        raise ArcanaError(f"no notebook at {path}")
    output = _output(path, args.output)
    nb = read_notebook(path)
    if args.embed:
        from ..report.embed import embed_traces

        print(f"embedded {len(embed_traces(path))} trace file(s) in {path.name}")
        nb = read_notebook(path)
    progress = StderrProgress()
    try:
        if not args.verify:
            out = write_report(path, nb, output=output, progress=progress)
            progress.close()
            print(f"report: {out}")
            return 0
        print(f"report: verifying {path.name} (re-executing it against its recorded runs)", file=sys.stderr,
              flush=True)
        result = verify_notebook(path, timeout=args.timeout)
        out = write_report(path, nb, output=output, verification=result, progress=progress)
        progress.close()
    except OSError as exc:
        raise ArcanaError(f"cannot write the report: {exc.strerror or exc}") from None
    many = len({c.run_id for c in result.checks}) > 1
    for check in result.checks:
        mark = "ok  " if check.ok else "FAIL"
        run_note = f" (run {check.run_id})" if many else ""
        detail = check.difference or check.note.split("\n", 1)[0]  # a divergence report's first line
        print(f"{mark} {check.session} turn {check.turn}{run_note}: "
              f"prompt {'same' if check.prompt_reproduced else 'differs'}, "
              f"reply {'same' if check.reply_reproduced else 'differs'}{' — ' + detail if detail else ''}")
    for error in result.errors:
        print(f"error: {error}", file=sys.stderr)
    print(f"{result.summary()}\nreport: {out}")
    return 0 if result.ok else 1
