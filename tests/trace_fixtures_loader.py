"""tests/trace/trace_fixtures.py for test modules in other folders.

tests/trace cannot be imported as a package (its name is the standard library's ``trace``), so the
file is loaded from its path, once, under the name ``arcana_trace_fixtures``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

NAME = "arcana_trace_fixtures"


def load_trace_fixtures() -> ModuleType:
    if NAME in sys.modules:
        return sys.modules[NAME]
    spec = importlib.util.spec_from_file_location(NAME, Path(__file__).resolve().parent / "trace" / "trace_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module
    spec.loader.exec_module(module)
    return module
