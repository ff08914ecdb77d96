"""Notebook-aware tools the agent may call: look at the user's variables and earlier cells.

They are read-only and their outputs bounded. ``run_code`` is the exception: it is only offered
when enabled (``%config ArcanaMagics.allow_run_code = True``) and asks the person first, through
the same ``ask_user`` path the runtime uses, before anything runs.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import Any

from ..runtime.tools import Tool

MAX_VARIABLES = 60
MAX_REPR = 1500
MAX_CELL = 1500
HIDDEN = {"In", "Out", "exit", "quit", "get_ipython", "open"}


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more characters]"


def _safe_repr(value: Any, limit: int = MAX_REPR) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ is information, not a failure
        text = f"<unrepresentable {type(value).__name__}: {exc}>"
    return _clip(text, limit)


def _type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", "__main__") else f"{module.split('.')[0]}.{cls.__qualname__}"


def _shape(value: Any) -> str | None:
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return "x".join(str(n) for n in shape)
    if isinstance(value, (list, tuple, dict, set, frozenset, str, bytes)):
        return f"len {len(value)}"
    return None


def _user_variables(user_ns: Mapping[str, Any], hidden: Mapping[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for name, value in user_ns.items():
        if name.startswith("_") or name in HIDDEN or (name in hidden and hidden[name] is value):
            continue
        if isinstance(value, (types.ModuleType, type)) or (callable(value) and not hasattr(value, "shape")):
            continue
        out.append((name, value))
    return out


def _is_dataframe(value: Any) -> bool:
    return all(hasattr(value, attr) for attr in ("columns", "dtypes", "head", "shape"))


def describe_value(name: str, value: Any, rows: int = 5) -> dict[str, Any]:
    """A bounded description of one value (DataFrame schema and head, array summary, or a repr)."""
    info: dict[str, Any] = {"name": name, "type": _type_name(value)}
    shape = _shape(value)
    if shape:
        info["shape"] = shape
    if _is_dataframe(value):
        try:
            info["columns"] = [
                {"name": str(col), "dtype": str(dtype), "non_null": int(value[col].notna().sum())}
                for col, dtype in list(value.dtypes.items())[:50]
            ]
            info["head"] = _clip(value.head(max(1, min(rows, 20))).to_string(), 2500)
        except Exception as exc:
            info["error"] = f"could not describe the frame: {exc}"
        return info
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        info["dtype"] = str(dtype)
        try:
            if getattr(value, "size", 0) and getattr(dtype, "kind", "") in "iuf":
                info["min"], info["max"], info["mean"] = float(value.min()), float(value.max()), float(value.mean())
        except Exception:
            pass
    if isinstance(value, dict):
        info["keys"] = [_safe_repr(k, 80) for k in list(value)[:30]]
    info["repr"] = _safe_repr(value)
    return info


def notebook_tools(
    shell: Any,
    *,
    allow_run_code: bool = False,
    ask: Callable[[str], str] | None = None,
    run_in_main: Callable[[Callable[[], Any]], Any] | None = None,
) -> list[Tool]:
    """The notebook tools bound to an IPython ``shell``.

    Args:
        shell: the InteractiveShell whose namespace and history the tools read.
        allow_run_code: offer ``run_code`` (off by default).
        ask: how to ask the person before running code (the runtime's ``ask_user`` path).
        run_in_main: runs a function on the kernel's main thread (tools run in worker threads).
    """
    call_main = run_in_main or (lambda fn: fn())

    def list_variables() -> dict[str, Any]:
        """List the variables defined in the user's notebook, with their types and shapes."""
        variables = _user_variables(shell.user_ns, getattr(shell, "user_ns_hidden", {}))
        listed = []
        for name, value in variables[:MAX_VARIABLES]:
            entry = {"name": name, "type": _type_name(value)}
            shape = _shape(value)
            if shape:
                entry["shape"] = shape
            listed.append(entry)
        return {"variables": listed, "count": len(variables), "truncated": len(variables) > MAX_VARIABLES}

    def describe_variable(name: str, rows: int = 5) -> dict[str, Any]:
        """Describe one notebook variable: for a DataFrame its columns, dtypes and first rows.

        Args:
            name: the variable's name in the notebook.
            rows: how many rows of a table to show (at most 20).
        """
        if name not in shell.user_ns or name.startswith("_"):
            known = [n for n, _ in _user_variables(shell.user_ns, getattr(shell, "user_ns_hidden", {}))][:30]
            return {"ok": False, "error": "unknown_variable", "message": f"no variable named {name!r}", "known": known}
        return {"ok": True, **describe_value(name, shell.user_ns[name], rows)}

    def read_cells(last: int = 5, include_outputs: bool = True) -> dict[str, Any]:
        """Read the notebook's most recent executed cells (their code and result values).

        Args:
            last: how many of the latest cells to return (at most 20).
            include_outputs: also return each cell's result value, when it had one.
        """
        inputs = list(shell.user_ns.get("In") or [])
        outputs = shell.user_ns.get("Out") or {}
        count = max(1, min(int(last), 20))
        # The last entry is the cell running now (the one that called the model): skip it.
        numbered = [(n, src) for n, src in enumerate(inputs) if n > 0 and src.strip()][:-1]
        cells = []
        for n, src in numbered[-count:]:
            cell: dict[str, Any] = {"cell": n, "code": _clip(src, MAX_CELL)}
            if include_outputs and n in outputs:
                cell["result"] = _safe_repr(outputs[n], 800)
            cells.append(cell)
        return {"cells": cells, "total_executed": len(numbered)}

    tools = [Tool(list_variables), Tool(describe_variable), Tool(read_cells)]

    if allow_run_code:

        def run_code(code: str) -> dict[str, Any]:
            """Run Python code in the user's kernel. The user is asked first and may refuse.

            Args:
                code: the Python code to run.
            """
            question = f"The assistant wants to run this code in your kernel:\n\n{code}\n\nRun it? [y/N]"
            answer = (ask(question) if ask is not None else "").strip().lower()
            if answer not in ("y", "yes"):
                return {"ok": False, "error": "declined", "message": "the user did not approve running this code",
                        "answer": answer}

            def execute() -> dict[str, Any]:
                from IPython.utils.capture import capture_output

                with capture_output() as captured:
                    result = shell.run_cell(code, store_history=False, silent=False)
                error = result.error_in_exec or result.error_before_exec
                return {
                    "ok": error is None,
                    "stdout": _clip(captured.stdout, 2000),
                    "stderr": _clip(captured.stderr, 1000),
                    "result": _safe_repr(result.result, 1000) if result.result is not None else None,
                    "error": f"{type(error).__name__}: {error}" if error is not None else None,
                    "approved_by_user": True,
                }

            return dict(call_main(execute))

        tools.append(Tool(run_code))
    return tools
