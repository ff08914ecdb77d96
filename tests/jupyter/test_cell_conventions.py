"""jupyter-ai's conventions in ``%%arcana``: {In[n]}, {Out[n]}, {Err[n]}, -f code|markdown|json|text, --out."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from nbclient import NotebookClient

from arcana_jupyter.jupyter.options import interpolate
from arcana_jupyter.jupyter.reply_delivery import ReplyJSON, ReplyText, code_blocks, reply_code
from tests.jupyter.conftest import MIME, echo, run_cell_magic, turn_outputs


def start(ip: Any) -> None:
    ip.user_ns["echo"] = echo
    with capture_output():
        ip.run_line_magic("arcana_chat", "--model fn:echo")


def sent(outputs: list[Any]) -> str:
    return str(turn_outputs(outputs)[-1].data[MIME]["input"])


def test_in_out_err_and_variables_fill_the_cell(shell: Any) -> None:
    start(shell)
    first = shell.run_cell("total = 6 * 7", store_history=True)
    second = shell.run_cell("total + 0.5", store_history=True)
    third = shell.run_cell("total / 0", store_history=True)
    assert isinstance(third.error_in_exec, ZeroDivisionError)
    n_in, n_out, n_err = first.execution_count, second.execution_count, third.execution_count
    body = f"code {{In[{n_in}]}} gave {{Out[{n_out}]}}; then {{Err[{n_err}]}}; total={{total}} {{{{literal}}}}"
    text = sent(run_cell_magic(shell, "", body))
    assert text == "code total = 6 * 7 gave 42.5; then ZeroDivisionError: division by zero; total=42 {literal}"
    # attribute, index and format spec work on history fields as on variables
    text = sent(run_cell_magic(shell, "", f"{{Out[{n_out}]:.3f}} {{In[{n_in}][0]}} {{Out[{n_out}].is_integer}}"))
    assert text.startswith("42.500 t <built-in method is_integer")


def test_a_syntax_error_is_an_err_too_and_a_fixed_cell_has_none(shell: Any) -> None:
    start(shell)
    broken = shell.run_cell("def f(:", store_history=True)
    assert broken.error_before_exec is not None or broken.error_in_exec is not None
    text = sent(run_cell_magic(shell, "", f"fix this: {{Err[{broken.execution_count}]}}"))
    assert text.startswith("fix this: SyntaxError")
    fine = shell.run_cell("ok = 1", store_history=True)
    with pytest.raises(UsageError,
                       match=rf"\{{Err\[{fine.execution_count}\]\}}: cell {fine.execution_count} raised no error"):
        shell.run_cell_magic("arcana", "", f"{{Err[{fine.execution_count}]}}")


def test_missing_history_is_a_clear_usage_error(shell: Any) -> None:
    start(shell)
    with pytest.raises(UsageError, match=r"\{In\[9999\]\}: no cell 9999 has run"):
        shell.run_cell_magic("arcana", "", "{In[9999]}")
    with pytest.raises(UsageError, match=r"\{Out\[9999\]\}: cell 9999 has no output"):
        shell.run_cell_magic("arcana", "", "{Out[9999]}")
    with pytest.raises(UsageError, match="names no variable"):
        shell.run_cell_magic("arcana", "", "{nope}")


def test_interpolate_without_a_shell() -> None:
    errors = {3: ValueError("bad value")}
    assert interpolate("{In[1]}|{Out[2]}|{Err[3]}|{v}", {"v": 1}, inputs=["", "a = 1"], outputs={2: [1, 2]},
                       errors=errors) == "a = 1|[1, 2]|ValueError: bad value|1"
    # without an error tracker, a user's own Err variable is used as before
    assert interpolate("{Err[0]}", {"Err": ["mine"]}) == "mine"


def test_out_stores_the_reply_and_formats_choose_the_result(shell: Any) -> None:
    start(shell)
    with capture_output():
        result = shell.run_cell_magic("arcana", "--out answer", "hello")
    assert result is None and shell.user_ns["answer"] == "You said: hello"
    with capture_output():
        text = shell.run_cell_magic("arcana", "-f text", "plain please")
    assert isinstance(text, ReplyText) and text == "You said: plain please"
    with capture_output():
        data = shell.run_cell_magic("arcana", "-f json -o doc", "as json")
    assert isinstance(data, ReplyJSON) and data["text"] == "You said: as json" == shell.user_ns["doc"]
    assert data["status"] == "ok" and data["turn"] == 3 and data["run_id"].startswith("r_")
    assert data["usage"]["input_tokens"] > 0 and data["error"] is None
    mime, meta = data._repr_json_()
    assert json.loads(json.dumps(mime))["text"] == "You said: as json" and meta["expanded"] is True
    with pytest.raises(UsageError, match="not a Python variable name"):
        shell.run_cell_magic("arcana", "--out 2bad", "x")
    with pytest.raises(UsageError, match="format"):
        shell.run_cell_magic("arcana", "-f yaml", "x")


def test_format_code_puts_the_code_in_the_next_cell(shell: Any) -> None:
    shell.user_ns["coder"] = lambda request: ("Sure:\n\n```python\nimport math\nprint(math.pi)\n```\n\n"
                                              "and\n\n~~~\nx = 1\n~~~\n")
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:coder")
    shell.rl_next_input = None
    outputs = run_cell_magic(shell, "-f code", "write code")
    assert turn_outputs(outputs)  # the reply is still shown under the cell
    assert shell.rl_next_input == "import math\nprint(math.pi)\n\nx = 1"


def test_code_blocks_and_bare_code() -> None:
    assert code_blocks("a\n```py\n1\n```\nb\n````\n```nested```\n````") == ["1", "```nested```"]
    assert reply_code("print('bare')\n") == "print('bare')"
    assert reply_code("```\n\n```") == "```\n\n```"  # an empty block is no code: the reply as it is


CODER = '''def coder(request):
    return "Here you go:\\n```python\\n" + request.messages[-1].content + "\\n```"'''


def test_format_code_creates_a_cell_in_a_real_kernel(tmp_path: Path) -> None:
    """nbclient: the kernel's execute_reply carries the set_next_input payload JupyterLab turns into a cell."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%load_ext arcana_jupyter"),
        nbformat.v4.new_code_cell(CODER),
        nbformat.v4.new_code_cell("%arcana_chat --model fn:coder"),
        nbformat.v4.new_code_cell("value = 40 + 2"),
        nbformat.v4.new_code_cell("value"),
        nbformat.v4.new_code_cell("value.missing"),
        nbformat.v4.new_code_cell("%%arcana -f code --out reply\nprint({In[4]!r}, {Out[5]}, {Err[6]!r})"),
        nbformat.v4.new_code_cell("print(repr(reply))"),
    ])
    path = tmp_path / "coding.ipynb"
    nbformat.write(nb, path)
    payloads: dict[int, list[dict[str, Any]]] = {}

    def executed(cell: Any, cell_index: int, execute_reply: dict[str, Any]) -> None:
        payloads[cell_index] = execute_reply["content"].get("payload", [])

    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}}, on_cell_executed=executed)
    env = {k: v for k, v in os.environ.items() if k != "ARCANA_REPLAY_RUNS"}
    client.execute(env={**env, "ARCANA_NOTEBOOK": str(path)}, cwd=str(tmp_path))
    expected = "print('value = 40 + 2', 42, \"AttributeError: 'int' object has no attribute 'missing'\")"
    assert payloads[6] == [{"source": "set_next_input", "text": expected, "replace": False}]
    bundle = next(o["data"][MIME] for o in nb.cells[6].outputs if MIME in o.get("data", {}))
    assert bundle["input"].strip() == expected and bundle["status"] == "ok"
    printed = "".join(o.get("text", "") for o in nb.cells[7].outputs)
    assert printed.strip() == repr(f"Here you go:\n```python\n{expected}\n\n```")


# ---- hostile pass, defects 12, 13 and 14 --------------------------------------------------------

@pytest.mark.parametrize("name", ["__builtins__", "get_ipython", "In", "Out", "_ih", "_3", "_i2", "print", "len",
                                  "__name__", "exit"])
def test_hostile_12_out_refuses_names_python_or_ipython_needs(shell: Any, name: str) -> None:
    start(shell)
    before = shell.user_ns.get(name, KeyError)
    with pytest.raises(UsageError, match="would replace a name Python or IPython needs"):
        shell.run_cell_magic("arcana", f"--out {name}", "x")
    assert shell.user_ns.get(name, KeyError) is before
    assert shell.run_cell("1 + 1").result == 2  # later cells still run
    with capture_output():
        shell.run_cell_magic("arcana", "--out _reply", "fine")
    assert shell.user_ns["_reply"] == "You said: fine"


class Hostile:
    def __format__(self, spec: str) -> str:
        raise RuntimeError("no formatting for you")


def test_hostile_13_format_fields_fail_in_one_clear_line(shell: Any) -> None:
    start(shell)
    shell.user_ns["bad"] = Hostile()
    first = shell.run_cell("'abc'", store_history=True)
    with pytest.raises(UsageError, match=r"formatting a Hostile value failed: RuntimeError: no formatting for you"):
        shell.run_cell_magic("arcana", "", "{bad}")
    shell.user_ns["Out"][first.execution_count] = Hostile()
    with pytest.raises(UsageError, match="RuntimeError: no formatting for you"):
        shell.run_cell_magic("arcana", "", f"{{Out[{first.execution_count}]}}")
    with pytest.raises(UsageError, match="more than 10,000 characters"):
        shell.run_cell_magic("arcana", "", f"{{In[{first.execution_count}]:>3000000000}}")
    with pytest.raises(UsageError, match="more than 10,000 characters"):
        shell.run_cell_magic("arcana", "", "{x:.{w}f}".replace("x", "bad").replace("{w}", "99999"))
    for field in ("{Out[-1]}", "{In[-2]}", "{Err[-1]}"):
        with pytest.raises(UsageError, match=r"cells are numbered from 1"):
            shell.run_cell_magic("arcana", "", field)
    shell.user_ns["d"] = {"a": 1}
    with pytest.raises(UsageError) as err:
        shell.run_cell_magic("arcana", "", "{d[missing]}")
    assert "names no variable" not in str(err.value) and "missing" in str(err.value)
    assert interpolate("{x:>5}", {"x": "ab"}) == "   ab"  # ordinary widths still work


def test_hostile_14_format_code_copies_only_python_fences(shell: Any) -> None:
    shell.user_ns["coder"] = lambda request: ("Run\n\n```bash\nrm -rf ~/x\n```\n\nthen\n\n```json\n{\"a\": 1}\n```\n\n"
                                              "and\n\n```python\nprint('ok')\n```\n")
    with capture_output():
        shell.run_line_magic("arcana_chat", "--model fn:coder")
    shell.rl_next_input = None
    run_cell_magic(shell, "-f code", "write code")
    assert shell.rl_next_input == "print('ok')"
    assert reply_code("```bash\nrm -rf ~/x\n```\n") == ""  # no Python block: no new cell
    assert reply_code("```sh\nls\n```\n```\nx = 1\n```\n```py\ny = 2\n```") == "x = 1\n\ny = 2"
