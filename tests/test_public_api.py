"""The names arcana_jupyter and its subpackages export are the ones we mean to export (and the ones
docs/ARCHITECTURE.md's "The public surface" names), and each resolves."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import arcana_jupyter

EXPECTED = [
    "AgentPool", "ArcanaError", "ChatReply", "ChatSession", "ConfigError", "ContextDecision", "ContextSection",
    "Message", "MessageDecision", "PinBlock", "ProviderError", "Runtime", "RuntimeConfig", "TokenBudget",
    "TokenCounter", "Tool", "ToolSpec", "TraceReader", "TraceWriter", "WorkingSetBuilder", "__version__",
    "load_ipython_extension", "session", "unload_ipython_extension",
]

SUBPACKAGES = {
    "adaptive": ["AdaptiveConfig", "AdaptiveEngine", "AdaptiveTool", "StateObject"],
    "context": ["BudgetSnapshot", "ContextDecision", "ContextReport", "ContextSection", "MessageDecision", "Pin",
                "PinBlock", "TokenBudget", "WorkingSetBuilder"],
    "memory": ["MemorySession", "MemoryStore", "MemoryTools", "Scope"],
    "providers": ["AnthropicProvider", "FunctionProvider", "LLMRequest", "LLMResponse", "LocalProvider",
                  "OpenAICompatProvider", "Provider", "ReplayDivergence", "ReplayProvider", "ScriptedProvider",
                  "StreamChunk", "Usage", "cost", "create_provider", "price_for"],
    "report": ["TurnCheck", "build_report", "collect_bundles", "verify_notebook"],
    "runtime": ["AdaptiveConfig", "AgentPool", "Capability", "ChatReply", "ChatSession", "InterceptedTool",
                "MemoryConfig", "Runtime", "RuntimeConfig", "Tool"],
    "schema": ["BudgetSnapshot", "ContextDecision", "ContextReport", "EVENT_ADAPTER", "Envelope", "Event",
               "MessageDecision", "Pin", "PinChange", "Record", "TokenBudget", "fold_pins"],
    "trace": ["PromptReplay", "TraceEvent", "TraceReader", "TraceWriter", "new_run_id"],
    "jupyter": ["load_ipython_extension", "session", "unload_ipython_extension"],
    "render": ["CSS", "MAX_MARKDOWN_CHARS", "counterfactual_html", "diff_html", "esc", "frame_html", "highlight_css",
               "inspector_html", "long_replay_html", "markdown_to_html", "notice_html", "pins_html", "progress_html",
               "prompt_html", "replay_html", "reply_html", "sent_prompt_html", "sent_prompts_html", "sessions_html",
               "streaming_html", "style_block", "tokens_chart_svg", "turn_html", "turn_plain", "turns_table_html"],
}

ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md"


def test_all_is_sorted_and_complete() -> None:
    assert arcana_jupyter.__all__ == sorted(EXPECTED)


def test_every_export_resolves() -> None:
    for name in arcana_jupyter.__all__:
        assert getattr(arcana_jupyter, name) is not None, name


def test_root_exports_lazily_without_jupyter() -> None:
    code = ("import sys, arcana_jupyter as a; a.Runtime; a.TraceReader; a.PinBlock; "
            "bad = [m for m in ('IPython', 'nbformat', 'arcana_jupyter.jupyter') if m in sys.modules]; "
            "sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_every_subpackage_is_pinned() -> None:
    package = Path(arcana_jupyter.__file__).parent
    with_all = sorted(p.parent.name for p in package.glob("*/__init__.py") if "__all__" in p.read_text())
    assert with_all == sorted(SUBPACKAGES)


@pytest.mark.parametrize("sub", sorted(SUBPACKAGES))
def test_subpackage_exports_only_its_public_names(sub: str) -> None:
    module = importlib.import_module(f"arcana_jupyter.{sub}")
    assert sorted(module.__all__) == sorted(SUBPACKAGES[sub])
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{sub}.{name}"


@pytest.mark.parametrize("sub", sorted(SUBPACKAGES))
def test_subpackage_imports_nothing_public_beyond_all(sub: str) -> None:
    # a name imported into the __init__ but left out of __all__ is public all the same
    module = importlib.import_module(f"arcana_jupyter.{sub}")
    if sub == "providers":  # lazy: its namespace holds only what was asked for
        return
    extra = {n for n, v in vars(module).items() if not n.startswith("_") and not isinstance(v, type(sys))
             and getattr(v, "__module__", "").startswith("arcana_jupyter")} - set(module.__all__)
    assert not extra, f"arcana_jupyter.{sub} exposes {sorted(extra)} beside __all__"


def test_the_docs_name_every_public_name() -> None:
    text = ARCHITECTURE.read_text()
    section = text[text.index("## The public surface"):]
    section = section[: section.index("\n## ", 1)]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \| (.+) \|$", section, re.M)}
    assert sorted(rows) == sorted(SUBPACKAGES)
    for sub, names in SUBPACKAGES.items():
        assert sorted(set(re.findall(r"`(\w+)`", rows[sub])) & set(names)) == sorted(names), sub


# ---- the snapshot: every exported name and its kind, and the deprecated aliases ---------------

SNAPSHOT = Path(__file__).resolve().parent / "public_api.json"
UPDATE = "ARCANA_UPDATE_API_SNAPSHOT"


def _kind(value: object) -> str:
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "function"
    return type(value).__name__


def api_snapshot() -> dict[str, dict[str, object]]:
    """Per package (the root and each subpackage with ``__all__``): each exported name's kind (class, function
    or the type of a constant), and the names still answered as deprecated aliases with the module each
    points at (arcana_jupyter/compat.py)."""
    import warnings

    out: dict[str, dict[str, object]] = {}
    for package in ["", *sorted(SUBPACKAGES)]:
        module = importlib.import_module(f"arcana_jupyter.{package}" if package else "arcana_jupyter")
        exported = {}
        for name in module.__all__:
            exported[name] = _kind(getattr(module, name))
        moved = dict(sorted(getattr(module, "_MOVED", {}).items()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for name in moved:
                getattr(module, name)  # each alias resolves
        out[module.__name__] = {"exports": exported, "deprecated": moved}
    return out


def test_the_public_api_is_the_snapshot() -> None:
    """The names the package exports change only on purpose: rerun with ARCANA_UPDATE_API_SNAPSHOT=1 to write
    tests/public_api.json, and say in CHANGELOG.md what went (a deprecated alias first) or came."""
    import json

    now = api_snapshot()
    text = json.dumps(now, indent=1, sort_keys=True) + "\n"
    if os.environ.get(UPDATE) == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    recorded = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    changed = sorted(f"{pkg}: {sorted(set(now[pkg]['exports']) ^ set(recorded.get(pkg, {}).get('exports', {})))}"
                     for pkg in set(now) | set(recorded)
                     if now.get(pkg) != recorded.get(pkg))
    assert now == recorded, (f"the public API changed ({'; '.join(changed)}); if on purpose, rerun with {UPDATE}=1 "
                             "and say so in CHANGELOG.md")


def test_names_removed_last_round_are_deprecated_aliases() -> None:
    """``from arcana_jupyter.providers import tool_call`` and ``from arcana_jupyter.context import LayerReport``
    (and the other names the 0.1 surface dropped) work for one more release, with a warning naming their home."""
    with pytest.warns(DeprecationWarning, match=r"import it from arcana_jupyter\.providers\.function"):
        from arcana_jupyter.providers import tool_call
    from arcana_jupyter.providers.function import tool_call as home

    assert tool_call is home
    with pytest.warns(DeprecationWarning, match=r"arcana_jupyter\.context\.LayerReport .*arcana_jupyter\.context\."
                                                r"decisions"):
        from arcana_jupyter.context import LayerReport
    from arcana_jupyter.schema.decisions import LayerReport as model

    assert LayerReport is model
    with pytest.raises(AttributeError):
        importlib.import_module("arcana_jupyter.context").NotAName  # noqa: B018
    for package in SUBPACKAGES:
        module = importlib.import_module(f"arcana_jupyter.{package}")
        assert not set(getattr(module, "_MOVED", {})) & set(module.__all__), package
        assert not set(getattr(module, "_MOVED", {})) & set(dir(module)) - set(vars(module)), package


def test_a_deprecated_alias_warns_the_code_that_imports_it() -> None:
    """Each alias's warning names the importing line, not the package: Python's and IPython's default filters
    show a DeprecationWarning only when it is attributed to ``__main__`` (the providers' warning named
    providers/__init__.py, so a script or a notebook cell importing ``tool_call`` from there saw nothing)."""
    import warnings

    for package in SUBPACKAGES:
        module = importlib.import_module(f"arcana_jupyter.{package}")
        for name in getattr(module, "_MOVED", {}):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                getattr(module, name)
            assert [w.filename for w in caught if w.category is DeprecationWarning] == [__file__], (package, name)
    code = ("from arcana_jupyter.providers import tool_call\n"
            "from arcana_jupyter.context import LayerReport\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"})
    assert proc.returncode == 0, proc.stderr
    assert "providers.tool_call is no longer exported" in proc.stderr, proc.stderr
    assert "context.LayerReport is no longer exported" in proc.stderr, proc.stderr
