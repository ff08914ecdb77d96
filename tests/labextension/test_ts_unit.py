"""Runs the TypeScript unit tests (labextension/test/*.test.ts: trace parsing, pins, diffs) so the
Python suite covers them: tsc compiles them to CommonJS and node's own test runner executes them."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import jlpm


def test_typescript_unit_tests_pass(node_packages: Path) -> None:
    proc = jlpm("test", timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    passed = re.search(r"^# pass (\d+)$", out, re.M)
    failed = re.search(r"^# fail (\d+)$", out, re.M)
    assert passed and failed, out[-3000:]
    assert int(failed.group(1)) == 0, out[-6000:]
    # The suite covers the trace source (a turn per file version, Python's refusals, diffs, the kernel's
    # answers), the widget link and the row labels: at least 8 tests (the extension decodes no trace).
    assert int(passed.group(1)) >= 8, out[-3000:]
    for name in ("a turn is asked once per file version", "refusal is an error", "a diff names its two turns",
                 "the widget asks the kernel the same questions", "widget link"):
        assert name in out, f"TypeScript test about {name!r} did not run"


def test_the_extension_decodes_no_trace() -> None:
    """Issue 37: labextension/src holds no decoder of the trace's grammar -- chained decisions (``chain``,
    ``rows``, ``columns``, ops), deltas (``decisions_delta``), ``prompt_sent`` records (``prev``, ``keep``,
    ``{"h"}``, ``{"J"}``, line edits), Python's JSON and truthiness imitated, a SHA-256 of its own, a file's text fetched: it
    renders what Python sends (src/source.ts). Only comments may name them."""
    from .conftest import EXT

    grammar = re.compile(r"decisions_delta|\.chain\b|['\"]chain['\"]|rows\.columns|\bkeyframe|\.prev\b|['\"]keep['\"]|"
                         r"['\"][hJjpe]['\"]\s*in\b|applyLineEdit|pyTruthy|pyInt|pySlice|pyRepr|PyFloat|sha256|"
                         r"JSON\.parse|parseTrace|readRaw|getDownloadUrl")
    found = []
    for path in sorted((EXT / "src").glob("*.ts")):
        if path.name == "schema.gen.ts":
            continue  # generated types: documentation only
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//", 1)[0]
            if code.lstrip().startswith(("*", "/*")):
                continue
            if grammar.search(code):
                found.append(f"{path.name}:{no}: {line.strip()}")
    assert found == [], "\n".join(found)
    assert not (EXT / "src" / "trace.ts").exists() and not (EXT / "src" / "sha256.ts").exists()


def test_sources_never_turn_text_into_html() -> None:
    """Model and user text reach the page through text nodes only: no HTML sinks in the sources."""
    from .conftest import EXT

    sinks = re.compile(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|dangerouslySetInnerHTML|\.srcdoc|new Function|eval\(")
    found = []
    for path in sorted((EXT / "src").glob("*.ts")):
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if sinks.search(line):
                found.append(f"{path.name}:{no}: {line.strip()}")
    assert found == []
