"""The core runs in a script or a CLI: only arcana_jupyter.jupyter (and the report) may import Jupyter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "arcana_jupyter"
JUPYTER_MODULES = ("IPython", "ipywidgets", "nbformat", "nbclient", "nbconvert", "ipykernel", "traitlets")
ALLOWED = ("jupyter", "report", "demo.py", "cli/report_cmd.py")

# ground < cognition < runtime < face: a module may import only its own layer and those below.
LAYERS = {
    "messages": 0, "tokens": 0, "text": 0, "exceptions": 0, "schema": 0, "trace": 0, "providers": 0,
    "context": 1, "primitives": 1, "adaptive": 1, "memory": 1,
    "runtime": 2,
    "jupyter": 3, "render": 3, "cli": 3, "report": 3, "demo": 3,
}


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, 0) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or "", node.level))
    return found


def _top(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def test_core_never_imports_jupyter() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(ALLOWED):
            continue
        for name, level in _imports(path):
            if level == 0 and name.split(".")[0] in JUPYTER_MODULES:
                offenders.append(f"{rel} imports {name}")
    assert offenders == []


def test_layers_point_downwards() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        top = _top(path)
        if top not in LAYERS:
            continue
        for name, level in _imports(path):
            if level == 0:
                if not name.startswith("arcana_jupyter."):
                    continue
                target = name.split(".")[1]
            else:
                depth = len(path.relative_to(PACKAGE).parts) - 1  # folders between the root and the file
                if level - 1 != depth:
                    continue  # stays inside its own top-level module
                target = (name or "").split(".")[0]
            if target in LAYERS and LAYERS[target] > LAYERS[top]:
                offenders.append(f"{path.relative_to(PACKAGE)} ({top}) imports {target}")
    assert offenders == []


def test_importing_the_runtime_loads_no_jupyter_module() -> None:
    code = (
        "import sys, arcana_jupyter, arcana_jupyter.runtime, arcana_jupyter.context, arcana_jupyter.trace.reader;"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {JUPYTER_MODULES!r}];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
