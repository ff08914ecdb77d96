"""How the package's parts may import each other.

- The core runs in a script or a CLI: only arcana_jupyter.jupyter, arcana_jupyter.report (the parts
  whose job is a notebook) and arcana_jupyter.server (the Jupyter server extension) import Jupyter.
- Layers point downwards: ground < cognition < runtime < face.
- Nothing imports from the package root (``from .. import __version__``): the root imports the
  runtime, so every such import runs upwards. ``from .. import render`` names a subpackage and is
  checked as an import of it.
- A private name (``_x``, or a module ``_x.py``) is not imported from another top-level part.
- Inside a part, run-time imports (module level and inside functions) form no cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "arcana_jupyter"
JUPYTER_MODULES = ("IPython", "ipywidgets", "nbformat", "nbclient", "nbconvert", "ipykernel", "traitlets",
                   "jupyter_server", "tornado")
NOTEBOOK_PARTS = ("jupyter", "report", "server")

# ground < cognition < runtime < face: a module may import only its own layer and those below.
LAYERS = {
    "version": 0, "compat": 0, "messages": 0, "tokens": 0, "text": 0, "exceptions": 0, "schema": 0, "trace": 0,
    "providers": 0,
    "context": 1, "primitives": 1, "adaptive": 1, "memory": 1,
    "runtime": 2,
    "jupyter": 3, "render": 3, "cli": 3, "report": 3, "demo": 3, "server": 3,
}


MODULES = {p.relative_to(PACKAGE).with_suffix("").as_posix().removesuffix("/__init__") for p in PACKAGE.rglob("*.py")}


def _from_base(node: ast.ImportFrom, here: tuple[str, ...]) -> tuple[str, ...] | None:
    """The module path inside the package that ``from X import ...`` in package ``here`` names;
    None for another package."""
    if node.level == 0:
        parts = (node.module or "").split(".")
        return tuple(parts[1:]) if parts[0] == PACKAGE.name else None
    return here[: len(here) - (node.level - 1)] + (tuple(node.module.split(".")) if node.module else ())


def _imports(path: Path) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every import of ``path`` as (module path inside the package, names imported); imports of
    other packages are left out. ``from .. import render`` gives (("render",), ()): the subpackage."""
    rel = path.relative_to(PACKAGE)
    here = rel.parts[:-1]  # the package the file is in
    found: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(tuple(a.name.split(".")[1:]), ()) for a in node.names if a.name.split(".")[0] == PACKAGE.name]
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, here)
            if base is None:
                continue
            for alias in node.names:
                sub = (*base, alias.name)
                if "/".join(sub) in MODULES:
                    found.append((sub, ()))
                else:
                    found.append((base, (alias.name,)))
    return found


def _top(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_core_never_imports_jupyter() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(NOTEBOOK_PARTS):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            offenders += [f"{rel} imports {n}" for n in names if n.split(".")[0] in JUPYTER_MODULES]
    assert offenders == [], "\n".join(offenders)


def test_layers_point_downwards() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        top = _top(path)
        for module, _names in _imports(path):
            if not module:
                continue  # the package root: test_nothing_imports_from_the_package_root
            target = module[0]
            if target != top and LAYERS.get(target, 0) > LAYERS.get(top, 3):
                offenders.append(f"{path.relative_to(PACKAGE)} ({top}) imports {'.'.join(module)}")
    assert offenders == [], "\n".join(offenders)


def test_every_part_has_a_layer() -> None:
    parts = {_top(p) for p in PACKAGE.rglob("*.py")} - {"__init__", "__main__"}
    assert parts - LAYERS.keys() == set()


def test_nothing_imports_from_the_package_root() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent == PACKAGE and path.name in ("__init__.py", "__main__.py"):
            continue
        offenders += [f"{path.relative_to(PACKAGE)} imports {', '.join(names)} from the package root"
                      for module, names in _imports(path) if not module and names]
    assert offenders == [], "\n".join(offenders)


def test_no_private_name_is_imported_across_parts() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        top = _top(path)
        for module, names in _imports(path):
            if not module or module[0] == top:
                continue
            private = [p for p in module if _private(p)] + [n for n in names if _private(n)]
            if private:
                offenders.append(f"{path.relative_to(PACKAGE)} imports {'.'.join(module)}: {', '.join(private)}")
    assert offenders == [], "\n".join(offenders)


def test_importing_the_runtime_loads_no_jupyter_module() -> None:
    code = (
        "import sys, arcana_jupyter, arcana_jupyter.runtime, arcana_jupyter.context, arcana_jupyter.trace.reader;"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {JUPYTER_MODULES!r}];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:`` (annotations only, never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
                or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def _module_of(path: Path) -> str:
    return path.relative_to(PACKAGE).with_suffix("").as_posix().removesuffix("/__init__")


def _run_time_imports(path: Path) -> set[str]:
    """The package modules ``path`` imports when it runs: at module level and inside functions
    (``if TYPE_CHECKING:`` imports left out); ``from . import x`` of a name counts as the package."""
    here = path.relative_to(PACKAGE).parts[:-1]
    tree = ast.parse(path.read_text())
    skipped = _type_checking_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {"/".join(a.name.split(".")[1:]) for a in node.names if a.name.split(".")[0] == PACKAGE.name}
        elif isinstance(node, ast.ImportFrom):
            base = _from_base(node, here)
            if base is None:
                continue
            for alias in node.names:
                sub = "/".join((*base, alias.name))
                found.add(sub if sub in MODULES else "/".join(base))
    return found & MODULES


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_inside_a_part() -> None:
    """Inside each top-level part, the modules' run-time imports (module level and inside functions)
    form no cycle: a part reads from its base modules up, and nothing is imported lazily to hide a
    cycle. Type-only imports (``if TYPE_CHECKING:``) are left out: they never run."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = _module_of(path)
        part = module.split("/")[0]
        graph[module] = {m for m in _run_time_imports(path) if m.split("/")[0] == part and m != module}
    assert _cycles(graph) == []


def test_the_cycle_check_sees_function_level_imports() -> None:
    assert _cycles({"a/x": {"a/y"}, "a/y": {"a/x"}, "a/z": set()}) == [["a/x", "a/y"]]
    here = PACKAGE / "runtime" / "session.py"
    assert "runtime/bundle" in _run_time_imports(here)  # imported inside turn_bundle()
    assert "runtime/runtime" not in _run_time_imports(here)  # only under TYPE_CHECKING
