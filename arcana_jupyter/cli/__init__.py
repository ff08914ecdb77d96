"""The ``arcana`` command line: ``arcana trace ...``, ``arcana memory ...``, ``arcana report ...``, ``arcana run ...``.

Each command group lives in its own module with a ``register(subparsers)`` function that adds its
sub-parser and sets ``func`` (called with the parsed namespace, returns an exit code). Add a group
by appending its module name to ``COMMAND_MODULES``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
import sys
from collections.abc import Sequence
from typing import TextIO

from ..exceptions import ArcanaError, is_extension_panic

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


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Terminal control characters (ESC, BEL, CR, C1 controls such as CSI) and bidi overrides: text from
a trace (user input, model output) must not retitle, recolour or rewrite the terminal."""


def printable(text: str) -> str:
    """``text`` with every terminal control character shown as an escape (``\\x1b``); newlines and
    tabs stay."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        text)


class SafeOutput(io.TextIOBase):
    """A text stream that writes through :func:`printable` (every ``arcana`` command's stdout and stderr)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._stream.isatty()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", "utf-8")

    def fileno(self) -> int:
        return self._stream.fileno()


def _one_line(text: str, limit: int = 2000) -> str:
    """An error message as one line, at most ``limit`` characters (a 5,000-character run id is not echoed whole)."""
    text = " ".join(text.split())
    return (
        text
        if len(text) <= limit
        else text[: limit // 2] + f" ... [{len(text) - limit:,} characters] ... " + text[-limit // 2 :]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeOutput(out), SafeOutput(err)  # type: ignore[assignment]
    try:
        return int(args.func(args) or 0)
    except ArcanaError as exc:
        print(f"arcana: error: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        print("arcana: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # a file the command was pointed at: missing, a folder, a full disk, a name too long
        where = f": {_one_line(str(exc.filename), 200)}" if exc.filename else ""
        print(f"arcana: error: {exc.strerror or type(exc).__name__}{where}", file=sys.stderr)
        return 1
    except MemoryError:  # an input past every limit foreseen (docs/SECURITY.md): said, not called a bug
        print("arcana: error: out of memory: the input holds more than this process can (docs/SECURITY.md, limits "
              "of a trace)", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: one line, and the traceback on request
        if os.environ.get("ARCANA_DEBUG"):
            raise
        print(f"arcana: error: unexpected {type(exc).__name__}: {_one_line(str(exc), 300)} "
              "(this is a bug; ARCANA_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 70
    except BaseException as exc:
        if not is_extension_panic(exc) or os.environ.get("ARCANA_DEBUG"):
            raise
        # a Rust extension (pydantic-core, tokenizers) that panicked — on a hostile input, most often an
        # allocation it could not make: one line, as out of memory is
        print(f"arcana: error: a compiled extension failed ({type(exc).__name__}: {_one_line(str(exc), 300)}); "
              "out of memory is the usual cause (docs/SECURITY.md, limits of a trace)", file=sys.stderr)
        return 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        sys.stdout, sys.stderr = out, err


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
