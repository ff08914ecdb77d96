"""arcana_jupyter.providers imports its names lazily (tests/test_public_api.py pins the names)."""

from __future__ import annotations

import subprocess
import sys


def test_importing_providers_does_not_import_llama_cpp():
    code = ("import sys, arcana_jupyter.providers as p; p.create_provider; p.LocalProvider;"
            "sys.exit(1 if 'llama_cpp' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
