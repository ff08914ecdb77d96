"""Relevance from a notebook, as a user meets it: ``%arcana_chat`` with its defaults, then ``%%arcana`` cells. A
question that asks by a relation ("my sister") brings back the turn that says only the name the user gave her
once, and the turn's inspector says why (context/aliases.py)."""

from __future__ import annotations

import json
from typing import Any

from tests.jupyter.conftest import MIME, run_cell_magic


def test_my_sister_finds_the_turn_about_nicole(shell: Any) -> None:
    prompts: list[str] = []

    def model(request: Any) -> str:
        prompts.append("\n".join(m.content or "" for m in request.messages))
        return "Noted."

    shell.user_ns["model"] = model
    shell.run_line_magic("arcana_chat", "--model fn:model --window 1400 --reserve 400")
    run_cell_magic(shell, "", "My sister Nicole borrowed my good suitcase again.")
    for k in range(10):
        run_cell_magic(shell, "", f"Week {k}: the garden and the office took all of it, nothing new.")
    run_cell_magic(shell, "", "Nicole announced she is moving to San Diego for work!")
    for k in range(10):
        run_cell_magic(shell, "", f"Another week {k}, the bus was late and the weather turned.")
    outputs = run_cell_magic(shell, "", "Remind me, what's new with my sister?")
    assert "Nicole announced she is moving to San Diego for work!" in prompts[-1]
    turn = [o.data[MIME] for o in outputs if MIME in o.data][-1]  # the finished turn (the first: running)
    assert "user's sister is Nicole" in json.dumps(turn)
