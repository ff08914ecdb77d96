"""``arcana memory list|search|forget|export``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from arcana_jupyter.cli import memory_cmd
from arcana_jupyter.exceptions import ArcanaError
from arcana_jupyter.memory import MemoryStore, Scope


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    """Like ``arcana.cli.main`` but with only the memory group (independent of the other groups)."""
    parser = argparse.ArgumentParser(prog="arcana")
    memory_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    try:
        code = args.func(args)
    except ArcanaError as exc:
        print(f"arcana: error: {exc}", file=__import__("sys").stderr)
        code = 1
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def db(tmp_path: Path, monkeypatch) -> dict[str, str]:
    project = tmp_path / "proj"
    other = tmp_path / "other"
    project.mkdir()
    other.mkdir()
    monkeypatch.chdir(project)
    path = tmp_path / "mem.sqlite3"
    scope = Scope.for_project(project)
    with MemoryStore(path) as store:
        ids = {
            "fact": store.remember("fact", "Sales data lives in data/sales.csv", scope).id,
            "pref": store.remember("preference", "Use seaborn for charts", scope, level="global", pinned=True).id,
            "other": store.remember("fact", "Other project uses polars for sales", Scope.for_project(other)).id,
            "gone": store.remember("mistake", "Sales totals were summed twice", scope).id,
        }
        store.forget(ids["gone"])
    return {"path": str(path), "other_dir": str(other), **ids}


def test_list_default_scope_is_this_project_plus_global(db, capsys) -> None:
    code, out, _ = run(["memory", "list", "--db", db["path"]], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "KIND", "SCOPE", "CONF", "L", "FLAGS", "CONTENT"]
    assert db["pref"] in lines[2] and "P" in lines[2].split()  # pinned first
    assert db["fact"] in out and db["other"] not in out and db["gone"] not in out
    assert "2 memories (project" in out


def test_list_variants(db, capsys) -> None:
    _, out, _ = run(["memory", "list", "--db", db["path"], "--global"], capsys)
    assert db["pref"] in out and db["fact"] not in out
    _, out, _ = run(["memory", "list", "--db", db["path"], "--all", "--retracted"], capsys)
    assert all(db[k] in out for k in ("fact", "pref", "other", "gone"))
    _, out, _ = run(["memory", "list", "--db", db["path"], "--project", db["other_dir"], "--kind", "fact"], capsys)
    assert db["other"] in out and db["pref"] not in out
    _, out, _ = run(["memory", "list", "--db", db["path"], "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["id"] for r in rows} == {db["fact"], db["pref"]} and {r["scope"] for r in rows} == {"project", "global"}
    _, out, _ = run(["memory", "list", "--db", db["path"], "--kind", "decision"], capsys)
    assert out.startswith("no memories")


def test_search(db, capsys) -> None:
    code, out, _ = run(["memory", "search", "sales data", "--db", db["path"]], capsys)
    assert code == 0 and out.splitlines()[0].split()[0] == "SCORE"
    assert db["fact"] in out and db["other"] not in out and db["gone"] not in out
    assert "keyword search" in out
    _, out, _ = run(["memory", "search", "sales", "--db", db["path"], "--json", "--all"], capsys)
    assert out == ""
    code, _, err = run(["memory", "search", "sales", "--db", db["path"], "--all"], capsys)
    assert code == 1 and "needs a scope" in err
    _, out, _ = run(["memory", "search", "sales", "--db", db["path"], "--json"], capsys)
    hit = json.loads(out.splitlines()[0])
    assert hit["id"] == db["fact"] and hit["mode"] == "keyword" and hit["score"] > 0
    _, out, _ = run(["memory", "search", "kubernetes", "--db", db["path"]], capsys)
    assert out.startswith("nothing matched 'kubernetes'")


def test_forget(db, capsys) -> None:
    code, out, _ = run(["memory", "forget", db["fact"], "--db", db["path"]], capsys)
    assert code == 0 and out.startswith(f"forgot {db['fact']} (fact, project)")
    _, out, _ = run(["memory", "forget", db["fact"], "--db", db["path"]], capsys)
    assert "already forgotten" in out
    code, _, err = run(["memory", "forget", "m_0000000000000000", "--db", db["path"]], capsys)
    assert code == 1 and "no memory m_0000000000000000" in err
    code, _, err = run(["memory", "forget", "42", "--db", db["path"]], capsys)
    assert code == 1 and "not a memory id" in err
    with MemoryStore(db["path"]) as store:
        assert store.get(db["fact"]).retracted  # kept for audit


def test_export(db, capsys, tmp_path: Path) -> None:
    code, out, _ = run(["memory", "export", "--db", db["path"]], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 4 and rows[-1]["retracted"] is True  # oldest first, tombstones kept
    target = tmp_path / "out.jsonl"
    code, _, err = run(["memory", "export", "--db", db["path"], "--global", "-o", str(target)], capsys)
    assert code == 0 and "exported 1 memories" in err
    assert [json.loads(x)["id"] for x in target.read_text().splitlines()] == [db["pref"]]
    _, out, _ = run(["memory", "export", "--db", db["path"], "--live-only"], capsys)
    assert len(out.splitlines()) == 3


def test_clear_errors(tmp_path: Path, capsys, monkeypatch) -> None:
    code, _, err = run(["memory", "list", "--db", str(tmp_path / "missing.db")], capsys)
    assert code == 1 and "no memory database at" in err and "--db" in err
    assert not (tmp_path / "missing.db").exists()  # listing never creates a database
    code, _, err = run(["memory", "list", "--db", str(tmp_path)], capsys)
    assert code == 1 and "is a folder" in err
    (tmp_path / "junk.db").write_text("junk" * 500)
    code, _, err = run(["memory", "list", "--db", str(tmp_path / "junk.db")], capsys)
    assert code == 1 and "not a usable memory database" in err
    monkeypatch.setenv("ARCANA_MEMORY_PATH", str(tmp_path / "env.sqlite3"))
    MemoryStore(tmp_path / "env.sqlite3").close()
    code, out, _ = run(["memory", "list", "--project", str(tmp_path)], capsys)
    assert code == 0 and out.startswith("no memories")
    code, _, err = run(["memory", "list", "--project", str(tmp_path / "nope")], capsys)
    assert code == 1 and "does not exist" in err
    code, out, _ = run(["memory"], capsys)
    assert code == 2 and "list" in out


def test_through_the_real_entry_point(db, capsys) -> None:
    from arcana_jupyter.cli import main

    assert main(["memory", "list", "--db", db["path"], "--json"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    assert main(["memory", "forget", "m_0000000000000000", "--db", db["path"]]) == 1
    assert "arcana: error: no memory" in capsys.readouterr().err


def test_add(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = str(tmp_path / "new.sqlite3")  # add creates the database
    code, out, _ = run(["memory", "add", "fact", "Revenue is in column rev_eur", "--db", path], capsys)
    assert code == 0 and out.startswith("remembered m_") and "(fact, project)" in out
    code, out, _ = run(["memory", "add", "preference", "Charts use viridis", "--scope", "global", "--pin",
                        "--db", path, "--json"], capsys)
    row = json.loads(out)
    assert code == 0 and row["scope"] == "global" and row["pinned"] and row["created"] and row["source"] == "cli"
    code, out, _ = run(["memory", "add", "fact", "revenue is in column  rev_eur", "--db", path], capsys)
    assert code == 0 and out.startswith("already known, reinforced")
    code, _, err = run(["memory", "add", "fact", "   ", "--db", path], capsys)
    assert code == 1 and "empty" in err
    _, out, _ = run(["memory", "search", "revenue column", "--db", path, "--json"], capsys)
    assert len(out.splitlines()) == 1


def test_export_then_import_keeps_everything(db, capsys, tmp_path: Path) -> None:
    dump = tmp_path / "all.jsonl"
    assert run(["memory", "export", "--db", db["path"], "-o", str(dump)], capsys)[0] == 0
    target = str(tmp_path / "copy.sqlite3")
    code, out, _ = run(["memory", "import", str(dump), "--db", target], capsys)
    assert code == 0 and out.startswith("imported 4 memories into")
    code, out, _ = run(["memory", "import", str(dump), "--db", target], capsys)
    assert code == 0 and "imported 0 memories (4 already there)" in out
    with MemoryStore(db["path"]) as a, MemoryStore(target) as b:
        assert b.list_entries(None, include_retracted=True) == a.list_entries(None, include_retracted=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dump.read_text() + '{"id": "m_1", "kind": "fact"}\n')
    code, _, err = run(["memory", "import", str(bad), "--db", str(tmp_path / "other.sqlite3")], capsys)
    assert code == 1 and "line 5 is not a memory entry" in err and "nothing was imported" in err
    with MemoryStore(tmp_path / "other.sqlite3") as c:
        assert c.count(include_retracted=True) == 0
    code, _, err = run(["memory", "import", str(tmp_path / "missing.jsonl"), "--db", target], capsys)
    assert code == 1 and "cannot read" in err


def test_move_a_sqlite_store_to_postgres(db, capsys, tmp_path: Path, postgres_server) -> None:
    url = postgres_server.fresh_url()
    dump = tmp_path / "all.jsonl"
    assert run(["memory", "export", "--db", db["path"], "-o", str(dump)], capsys)[0] == 0
    code, out, _ = run(["memory", "import", str(dump), "--url", url], capsys)
    assert code == 0 and out.startswith("imported 4 memories into postgresql://")
    with MemoryStore(db["path"]) as a, MemoryStore(url) as b:
        assert b.backend == "postgresql"
        assert b.list_entries(None, include_retracted=True) == a.list_entries(None, include_retracted=True)
    for argv in (["memory", "search", "sales data", "--json"], ["memory", "list", "--json"]):
        _, from_sqlite, _ = run([*argv, "--db", db["path"]], capsys)
        _, from_postgres, _ = run([*argv, "--url", url], capsys)
        assert [json.loads(x)["id"] for x in from_postgres.splitlines()] == [
            json.loads(x)["id"] for x in from_sqlite.splitlines()
        ]


def test_postgres_errors_are_one_line_and_masked(tmp_path: Path, capsys, monkeypatch, postgres_server) -> None:
    from arcana_jupyter.cli import main

    port = postgres_server.port
    cases = {
        f"postgresql://bob:hunter2secret@127.0.0.1:{port + 1 if port < 65535 else 1}/db": "cannot connect",
        "postgresql://bob:hunter2secret@127.0.0.1:notaport/db": "bad memory database URL",
        "postgresql://bob:hunter2secret@[::1/db": "bad memory database URL",
    }
    for url, message in cases.items():
        assert main(["memory", "list", "--url", url]) == 1
        err = capsys.readouterr().err
        assert err.startswith("arcana: error: ") and message in err and len(err.strip().splitlines()) == 1
        assert "hunter2secret" not in err and "bob:[REDACTED]@" in err
    assert main(["memory", "list", "--url", str(tmp_path / "x.sqlite3")]) == 1
    assert "must be a postgresql://" in capsys.readouterr().err
    url = postgres_server.fresh_url()
    monkeypatch.setitem(__import__("sys").modules, "psycopg", None)  # the extra not installed
    assert main(["memory", "add", "fact", "x", "--url", url]) == 1
    err = capsys.readouterr().err
    assert "pip install 'arcana-jupyter[postgres]'" in err and len(err.strip().splitlines()) == 1


def test_two_processes_add_at_once_on_postgres(tmp_path: Path, postgres_server) -> None:
    """Two ``arcana memory add`` processes at the same time (ARCANA_MEMORY_URL): both found by search."""
    import os
    import subprocess
    import sys

    url = postgres_server.fresh_url()
    env = {**os.environ, "ARCANA_MEMORY_URL": url, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("ARCANA_MEMORY_PATH", None)
    cli = [sys.executable, "-c", "import sys; from arcana_jupyter.cli import main; sys.exit(main())", "memory"]
    texts = ["Alpha kernel says the churn model uses gradient boosting",
             "Beta kernel says the churn model is retrained weekly"]
    procs = [subprocess.Popen([*cli, "add", "decision", t], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for t in texts]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert all(out.startswith("remembered m_") for out, _ in results)
    found = subprocess.run([*cli, "search", "churn model", "--json"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
    assert found.returncode == 0, found.stderr
    assert sorted(json.loads(x)["content"] for x in found.stdout.splitlines()) == sorted(texts)
