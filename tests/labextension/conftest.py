"""Shared helpers for the labextension tests: where things are, and node packages installed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "labextension"


def jlpm(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run jlpm (JupyterLab's bundled yarn) inside labextension/."""
    code = "import sys; from jupyter_builder.jlpm import main; sys.argv[0] = 'jlpm'; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=EXT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def node_packages() -> Path:
    """labextension/node_modules, installed from the lock file if missing."""
    assert shutil.which("node"), "node is needed for the labextension tests: apt-get install -y nodejs npm"
    if not (EXT / "node_modules" / "typescript").is_dir():
        proc = jlpm("install", "--immutable")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return EXT / "node_modules"
