"""What a ``%%arcana`` cell gives back after the turn (``--out``, ``-f text|json|code``): the reply as
plain text, as a JSON tree, or its Python code blocks as the next cell."""

from __future__ import annotations

import json
from typing import Any

from ..render import md as render_md
from .options import CellOptions


def code_blocks(text: str) -> list[str]:
    """The fenced code blocks of a Markdown reply, in order (without their fences): CommonMark, linear
    (:func:`arcana_jupyter.render.md.code_blocks`; a regex here was quadratic on unclosed fences)."""
    return render_md.code_blocks(text)


PYTHON_FENCES = ("", "python", "py", "python3", "py3", "ipython", "ipython3", "ipy")
"""Fence languages ``%%arcana -f code`` copies into the new (Python) cell; an untagged fence counts."""


def reply_code(text: str) -> str:
    """What ``%%arcana -f code`` puts into the new cell: the reply's Python (or untagged) fenced code
    blocks, joined by a blank line — never a ``bash``, ``json`` or other fence, which a Python cell
    would not run as meant — else, a reply with no fence at all (bare code), the whole reply."""
    fences = [(lang, code) for lang, code in render_md.code_fences(text) if code.strip()]
    if fences:
        return "\n\n".join(code for lang, code in fences if lang in PYTHON_FENCES)
    return (text or "").strip()


class ReplyText(str):
    """``%%arcana -f text``: the reply as the cell's result, shown as plain text (not quoted)."""

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


class ReplyJSON(dict[str, Any]):
    """``%%arcana -f json``: the reply and its turn as the cell's result (a JSON tree in JupyterLab)."""

    def _repr_json_(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return dict(self), {"expanded": True, "root": "reply"}

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(json.dumps(dict(self), indent=2, ensure_ascii=False, default=str))


def deliver(shell: Any, reply: Any, opts: CellOptions) -> Any:
    """After the turn: ``--out`` stores the text; ``-f`` picks what the cell returns or adds."""
    if reply is None:
        return None
    text = str(getattr(reply, "text", "") or "")
    if opts.out is not None and shell is not None:
        shell.user_ns[opts.out] = text
    if opts.format == "code":
        code = reply_code(text)
        if getattr(reply, "status", "ok") == "ok" and code and shell is not None:
            shell.set_next_input(code, replace=False)
        return None
    if opts.format == "text":
        return ReplyText(text)
    if opts.format == "json":
        usage = getattr(reply, "usage", None)
        error = getattr(reply, "error", None)
        return ReplyJSON({
            "text": text, "status": getattr(reply, "status", None), "run_id": getattr(reply, "run_id", None),
            "agent": getattr(reply, "agent", None), "turn": getattr(reply, "turn", None),
            "usage": getattr(usage, "model_dump", lambda: usage)(),
            "cost_usd": getattr(reply, "cost_usd", None),
            "error": None if error is None else f"{type(error).__name__}: {error}",
            "code": code_blocks(text),
        })
    return None
