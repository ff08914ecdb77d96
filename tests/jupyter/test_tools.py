"""The notebook-aware tools: read-only views of variables and cells, and run_code behind a question."""

from __future__ import annotations

import asyncio
from typing import Any

import pandas as pd
from IPython.core.interactiveshell import InteractiveShell

from arcana_jupyter.jupyter.tools import notebook_tools


def tools(ip: InteractiveShell, **kwargs: Any) -> dict[str, Any]:
    return {t.name: t for t in notebook_tools(ip, **kwargs)}


def call(tool: Any, **arguments: Any) -> Any:
    return asyncio.run(tool.call(arguments))


def test_list_and_describe_variables(shell: InteractiveShell) -> None:
    shell.user_ns["df"] = pd.DataFrame({"region": ["North", "South", None], "revenue": [1.5, 2.0, 3.25]})
    shell.user_ns["x"] = [1, 2, 3]
    found = tools(shell)
    assert set(found) == {"list_variables", "describe_variable", "read_cells"}  # no run_code unless enabled
    listed = {v["name"]: v for v in call(found["list_variables"])["variables"]}
    assert listed["df"]["shape"] == "3x2" and listed["df"]["type"] == "pandas.DataFrame"
    assert listed["x"] == {"name": "x", "type": "list", "shape": "len 3"}
    assert "pd" not in listed and "In" not in listed  # modules and IPython internals are left out
    described = call(found["describe_variable"], name="df", rows=2)
    assert described["ok"] and described["columns"][0] == {
        "name": "region", "dtype": described["columns"][0]["dtype"], "non_null": 2}
    assert "North" in described["head"] and "3.25" not in described["head"]  # bounded to 2 rows
    missing = call(found["describe_variable"], name="nope")
    assert missing["ok"] is False and missing["error"] == "unknown_variable" and "df" in missing["known"]


def test_read_cells_returns_code_and_results_bounded(shell: InteractiveShell) -> None:
    shell.run_cell("a = 40 + 2", store_history=True)
    shell.run_cell("a * 2", store_history=True)
    shell.run_cell("print('the current cell')", store_history=True)
    cells = call(tools(shell)["read_cells"], last=2)["cells"]
    assert [c["code"] for c in cells] == ["a = 40 + 2", "a * 2"]
    assert cells[1]["result"] == "84"


def test_run_code_is_off_by_default_and_asks_first(shell: InteractiveShell) -> None:
    questions: list[str] = []
    declined = tools(shell, allow_run_code=True, ask=lambda q: questions.append(q) or "no")["run_code"]
    result = call(declined, code="flag = 1")
    assert result["error"] == "declined" and "flag" not in shell.user_ns
    assert "flag = 1" in questions[0] and "[y/N]" in questions[0]
    approved = tools(shell, allow_run_code=True, ask=lambda q: "y")["run_code"]
    result = call(approved, code="flag = 7\nprint('ran', flag)\nflag * 6")
    assert result["ok"] and result["approved_by_user"] and shell.user_ns["flag"] == 7
    assert "ran 7" in result["stdout"] and result["result"] == "42"
    del shell.user_ns["flag"]
