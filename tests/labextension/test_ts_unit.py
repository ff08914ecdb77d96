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
    # The suite covers torn lines, corrupt lines, the turn index, pins and diffs: at least 13 tests.
    assert int(passed.group(1)) >= 13, out[-3000:]
    for name in ("torn last line", "corrupt middle line", "5,000 turns", "active pins", "turn diff"):
        assert name in out, f"TypeScript test about {name!r} did not run"


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
