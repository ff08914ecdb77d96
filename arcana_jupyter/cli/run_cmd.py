"""``arcana run NB.ipynb [-p key=value ...] [-o OUT.ipynb]``: execute a notebook headless, its identity known."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help="execute a notebook headless (papermill-style parameters), traces beside the notebook written",
        description=(
            "Execute a notebook with nbclient, telling arcana which notebook it is (ARCANA_NOTEBOOK is the "
            "notebook written, the working directory the input's folder), so its traces land in OUT.arcana/ "
            "and `arcana report OUT.ipynb --verify` works. -p key=value injects a parameters cell after the cell "
            "tagged 'parameters' (or at the top); values are Python literals when they parse as one, else strings."
        ),
    )
    parser.add_argument("notebook", help="the .ipynb file to execute")
    parser.add_argument("-p", "--parameter", action="append", default=[], metavar="KEY=VALUE",
                        help="a parameter (repeatable)")
    parser.add_argument("-o", "--output", default=None, metavar="OUT.ipynb",
                        help="write the executed notebook here (default: in place)")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    parser.add_argument("--kernel", default=None, help="kernel name (default: the notebook's, else python3)")
    parser.add_argument("--allow-errors", action="store_true", help="keep executing after a cell fails")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..report.execute import parse_parameters, run_notebook

    parameters = parse_parameters(args.parameter)
    result = run_notebook(args.notebook, parameters=parameters, output=args.output, timeout=args.timeout,
                          kernel_name=args.kernel, allow_errors=args.allow_errors)
    where = ", ".join(result.trace_folders) or "none"
    print(f"executed {result.notebook}: {result.cells} cells in {result.seconds:.1f} s; "
          f"{result.turns} arcana turn(s) in {len(result.runs)} run(s); traces in {where}")
    if result.error is not None:
        print(f"arcana: error: execution stopped at {result.error} (the notebook was saved up to there)",
              file=sys.stderr)
        return 1
    for error in result.errors:
        print(f"error: {error}", file=sys.stderr)
    return 0 if result.ok else 1
