"""Secrets never live in the memory store and never leave it: masked on write (the same function as
traces) and on every way out (export, the CLI), for entries stored before masking existed too."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from arcana_jupyter.cli import main
from arcana_jupyter.memory import MemoryStore, Scope

KEYS = (
    "sk-proj-AbCdEf0123456789GhIjKl",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "xoxb-123456789012-abcdefABCDEF",
    "AKIAIOSFODNN7EXAMPLE",
)


@pytest.mark.parametrize("key", KEYS)
def test_remember_masks_key_like_strings(tmp_path: Path, mem_location, backend: str, key: str) -> None:
    with MemoryStore(mem_location("m")) as store:
        entry = store.remember("fact", f"the deploy token is {key} (do not share)", Scope.for_project(tmp_path))
        assert key not in entry.content and "[REDACTED]" in entry.content
        out = io.StringIO()
        store.export_jsonl(out)
        if backend == "postgresql":  # what the server holds, every text column
            with store._lock:
                stored = store._conn.execute("SELECT entries::text FROM entries").fetchall()
            assert stored and all(key not in row[0] for row in stored)
    if backend == "sqlite":
        raw = (tmp_path / "m.sqlite3").read_bytes()
        assert key.encode() not in raw
    assert key not in out.getvalue()


def test_old_unmasked_entries_are_masked_on_the_way_out(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch, mem_location) -> None:
    monkeypatch.chdir(tmp_path)
    path = mem_location("m")
    with MemoryStore(path) as store:
        entry = store.remember("fact", "placeholder memory", Scope.for_project(tmp_path), level="global")
        with store._lock:  # as an older version stored it
            store._conn.execute("UPDATE entries SET content = ? WHERE id = ?", (f"key {KEYS[0]}", entry.id))
    option = "--url" if path.startswith("postgresql://") else "--db"
    for argv in (["memory", "export"], ["memory", "list", "--all"], ["memory", "list", "--all", "--json"]):
        assert main([*argv, option, str(path)]) == 0
        out = capsys.readouterr().out
        assert KEYS[0] not in out and "[REDACTED]" in out
    with MemoryStore(path) as store:
        buffer = io.StringIO()
        store.export_jsonl(buffer)
    assert KEYS[0] not in buffer.getvalue() and json.loads(buffer.getvalue().splitlines()[0])["id"] == entry.id
