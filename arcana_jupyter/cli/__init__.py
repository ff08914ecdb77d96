"""The ``arcana`` command line: ``arcana trace ...``, ``arcana memory ...``, ``arcana report ...``, ``arcana run ...``.

Each command group lives in its own module with a ``register(subparsers)`` function that adds its
sub-parser and sets ``func`` (called with the parsed namespace, returns an exit code). Add a group
by appending its module name to ``COMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ..exceptions import ArcanaError

COMMAND_MODULES: tuple[str, ...] = ("trace_cmd", "memory_cmd", "report_cmd", "run_cmd")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arcana",
        description="Inspect, replay and report on arcana-jupyter traces and memory.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # that command group is not part of this build
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ArcanaError as exc:
        print(f"arcana: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
