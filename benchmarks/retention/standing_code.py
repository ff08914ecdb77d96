"""Code snippets for :mod:`.make_standing`'s assistant replies, written in the style the user asked for.

Every snippet is built from a project's entity (its class, table and fields) and the reply style in force at
that turn (:class:`Style`): fence language tags, indentation, type hints, the Python version's syntax, logging
or print, pathlib or os.path, the SQL dialect, plain SQL or SQLAlchemy Core, pytest or unittest, httpx or
requests, the standard library or a third-party package, explanations as comments, shell prompts. So the
recorded replies follow the standing instructions in force, as a good assistant's would (and the ones before
an instruction do not), without anyone checking them: the benchmark measures the prompt, not the replies.
Deterministic: no randomness but the ``rng`` passed in.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Entity:
    name: str
    plural: str
    cls: str
    fields: tuple[tuple[str, str], ...]
    """(name, kind): kind one of str, int, money, float, date, bool."""

    @property
    def table(self) -> str:
        return self.plural.replace(" ", "_")

    @property
    def var(self) -> str:
        return self.name.replace(" ", "_")

    @property
    def vars(self) -> str:
        return self.plural.replace(" ", "_")

    def first(self, kind: str) -> str:
        return next(f for f, k in self.fields if k == kind)

    def has(self, kind: str) -> bool:
        return any(k == kind for _, k in self.fields)

    @property
    def key(self) -> str:
        return self.first("str")

    @property
    def num(self) -> str:
        return next(f for f, k in self.fields if k in ("int", "money", "float"))

    @property
    def date(self) -> str:
        return self.first("date")


@dataclass(frozen=True)
class Style:
    """How the replies write code and answers at a turn: the standing instructions in force."""

    lang_tag: bool = False
    indent: str = "  "
    hints: bool = False
    py39: bool = False
    logging: bool = False
    pathlib: bool = False
    dialect: str = "sqlite"
    orm: bool = False
    unittest: bool = True
    httpx: bool = False
    stdlib: bool = False
    comments: bool = False
    dollar: bool = True
    windows: bool = False
    utc: bool = False
    short_funcs: bool = False
    offline_tests: bool = False
    small_memory: bool = False
    no_gpl: bool = False
    on_prem: bool = False
    py: str = "3.12"
    """The Python version the project targets (Dockerfile, CI)."""
    tldr: bool = False
    french: bool = False
    next_steps: bool = False
    no_apology: bool = False
    no_emoji: bool = False
    short: bool = False
    # the held-out split's instructions (:mod:`.standing_holdout_items`); all off by default, so the dev and test
    # replies are what they were before these existed
    german: bool = False
    numbered: bool = False
    assumptions: bool = False
    code_first: bool = False
    docstrings: bool = False
    path_header: bool = False
    spdx: str = ""
    """The licence identifier of an SPDX header on every code block ("" for none)."""
    diff: bool = False
    mariadb: bool = False
    no_docker: bool = False
    arm: bool = False
    ruff: bool = False
    uv: bool = False
    poetry: bool = False
    typer: bool = False
    pydantic: bool = False
    polars: bool = False
    json_logs: bool = False
    # the blind split's language switch (:mod:`.standing_blind_items`); off by default like the ones above
    spanish: bool = False
    # the third blind split's language switch (:mod:`.standing_blind2_items`); off by default too
    italian: bool = False

    def with_(self, **changes: Any) -> Style:
        return replace(self, **changes)


Lines = list[tuple[int, str]]
"""(indent level, text) per line; rendered with the style's indentation."""


def render(lines: Lines, style: Style) -> str:
    return "\n".join((style.indent * lvl + text) if text else "" for lvl, text in lines)


def fence(lang: str, lines: Lines, style: Style) -> str:
    tag = lang if style.lang_tag else ""
    if style.docstrings and lang == "python":
        lines = with_docstrings(lines)
    return f"```{tag}\n{headers(lang, lines, style)}{render(lines, style)}\n```"


COMMENT = {"python": "#", "yaml": "#", "dockerfile": "#", "ini": "#", "sql": "--"}


def headers(lang: str, lines: Lines, style: Style) -> str:
    """The lines a code block starts with when asked: an SPDX licence header, the file's path."""
    mark = COMMENT.get(lang)
    if mark is None or not (style.spdx or style.path_header):
        return ""
    out = []
    if style.spdx:
        out.append(f"{mark} SPDX-License-Identifier: {style.spdx}")
    if style.path_header:
        out.append(f"{mark} {file_path(lang, lines)}")
    return "\n".join(out) + "\n"


def file_path(lang: str, lines: Lines) -> str:
    if lang == "sql":
        return "db/schema.sql" if any(t.startswith("CREATE TABLE") for _, t in lines) else "db/queries.sql"
    if lang != "python":
        return {"yaml": ".github/workflows/tests.yml", "dockerfile": "Dockerfile", "ini": "deploy/app.service"}[lang]
    names = [m.group(1) or m.group(2) for lvl, t in lines if lvl == 0
             for m in [re.match(r"(?:async )?def (\w+)|class (\w+)", t)] if m]
    name = re.sub(r"(?<!^)(?=[A-Z])", "_", names[0]).lower() if names else "main"
    tests = any(t.startswith(("import pytest", "import unittest")) for _, t in lines)
    return f"tests/test_{name.removeprefix('test_')}.py" if tests else f"app/{name}.py"


def with_docstrings(lines: Lines) -> Lines:
    """Every function gets a one-line docstring (those without one)."""
    out: Lines = []
    for i, (lvl, text) in enumerate(lines):
        out.append((lvl, text))
        m = re.match(r"(?:async )?def (\w+)\(.*:$", text)
        if m is None:
            continue
        after = next((t for _, t in lines[i + 1:] if t), "")
        if not after.startswith('"""'):
            words = m.group(1).strip("_").replace("_", " ")
            out.append((lvl + 1, f'"""{words[:1].upper() + words[1:]}."""'))
    return out


def as_diff(path: str, removed: list[str], lines: Lines, style: Style) -> str:
    """A unified diff that replaces ``removed`` with ``lines``."""
    new = render(lines, style).split("\n")
    body = [f"--- a/{path}", f"+++ b/{path}", f"@@ -1,{len(removed)} +1,{len(new)} @@"]
    body += ["-" + r for r in removed] + ["+" + n for n in new]
    tag = "diff" if style.lang_tag else ""
    return f"```{tag}\n" + "\n".join(body) + "\n```"


def shell(commands: list[str], style: Style) -> str:
    prefix = "$ " if style.dollar else ""
    tag = "bash" if style.lang_tag else ""
    return f"```{tag}\n" + "\n".join(prefix + c for c in commands) + "\n```"


PY_TYPES = {"str": "str", "int": "int", "money": "int", "float": "float", "date": "datetime", "bool": "bool"}
SQL_TYPES = {
    "sqlite": {"str": "TEXT NOT NULL", "int": "INTEGER NOT NULL", "money": "INTEGER NOT NULL", "float": "REAL",
               "date": "TEXT NOT NULL", "bool": "INTEGER NOT NULL DEFAULT 0"},
    "postgres": {"str": "text NOT NULL", "int": "integer NOT NULL", "money": "bigint NOT NULL",
                 "float": "double precision", "date": "timestamptz NOT NULL", "bool": "boolean NOT NULL DEFAULT false"},
    "mysql": {"str": "VARCHAR(255) NOT NULL", "int": "INT NOT NULL", "money": "BIGINT NOT NULL", "float": "DOUBLE",
              "date": "DATETIME NOT NULL", "bool": "TINYINT(1) NOT NULL DEFAULT 0"},
}
SAMPLE = {"str": '"sample"', "int": "3", "money": "1999", "float": "2.5", "bool": "True"}


def opt(t: str, style: Style) -> str:
    return f"Optional[{t}]" if style.py39 else f"{t} | None"


def lst(t: str, style: Style) -> str:
    return f"List[{t}]" if style.py39 else f"list[{t}]"


def sig(name: str, params: list[tuple[str, str]], ret: str, style: Style, prefix: str = "def") -> str:
    if style.hints:
        ps = ", ".join(f"{p}: {t}" if t else p for p, t in params)
        return f"{prefix} {name}({ps}) -> {ret}:"
    plain = [p + ("=" + t.split("=", 1)[1].strip() if "=" in t else "") for p, t in params]
    return f"{prefix} {name}({', '.join(plain)}):"


def typing_import(style: Style, *names: str) -> Lines:
    if style.hints and style.py39 and names:
        return [(0, f"from typing import {', '.join(sorted(set(names)))}")]
    return []


def log_lines(level: int, message: str, style: Style, *args: str) -> Lines:
    if style.logging:
        a = "".join(f", {x}" for x in args)
        return [(level, f'logger.info("{message}"{a})')]
    if args:
        shown = message
        for x in args:
            shown = shown.replace("%s", "{" + x + "}", 1).replace("%d", "{" + x + "}", 1)
        return [(level, f'print(f"{shown}")')]
    return [(level, f'print("{message}")')]


def logger_header(style: Style) -> Lines:
    return [(0, "import logging"), (0, ""), (0, "logger = logging.getLogger(__name__)")] if style.logging else []


def comment(level: int, text: str, style: Style) -> Lines:
    return [(level, f"# {text}")] if style.comments else []


def now_expr(style: Style) -> str:
    return "datetime.now(timezone.utc)" if style.utc else "datetime.now()"


def dt_import(style: Style) -> str:
    return "from datetime import datetime, timezone" if style.utc else "from datetime import datetime"


# ---- snippets ---------------------------------------------------------------------------------------------

def ddl(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    t = SQL_TYPES[style.dialect]
    pk = {"sqlite": "id INTEGER PRIMARY KEY AUTOINCREMENT",
          "postgres": "id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
          "mysql": "id BIGINT AUTO_INCREMENT PRIMARY KEY"}[style.dialect]
    lines: Lines = [(0, f"CREATE TABLE {e.table} (")]
    if style.comments:
        lines.append((1, "-- surrogate key: the natural key can change, this never does"))
    lines.append((1, pk + ","))
    for name, kind in e.fields:
        extra = " UNIQUE" if name == e.key and rng.random() < 0.5 else ""
        lines.append((1, f"{name} {t[kind]}{extra},"))
    created = {"sqlite": "created_at TEXT NOT NULL DEFAULT (datetime('now'))",
               "postgres": "created_at timestamptz NOT NULL DEFAULT now()",
               "mysql": "created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP"}[style.dialect]
    lines.append((1, created))
    lines.append((0, ");"))
    lines.append((0, ""))
    lines.append((0, f"CREATE INDEX {e.table}_{e.date}_idx ON {e.table} ({e.date});"))
    return "sql", lines


def model_class(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    lines: Lines = [(0, "from __future__ import annotations"), (0, "")] if not style.py39 else []
    lines += [(0, "from dataclasses import dataclass, field"), (0, dt_import(style))]
    lines += typing_import(style, "Optional")
    lines += [(0, ""), (0, ""), (0, "@dataclass")]
    lines.append((0, f"class {e.cls}:"))
    lines.append((1, f'"""One row of the {e.table} table."""'))
    lines.append((0, ""))
    for name, kind in e.fields:
        lines += comment(1, f"{name.replace('_', ' ')} as stored", style) if kind == "money" else []
        lines.append((1, f"{name}: {PY_TYPES[kind]}"))
    lines.append((1, f"id: {opt('int', style)} = None"))
    lines.append((1, f"tags: {lst('str', style)} = field(default_factory=list)"))
    lines.append((0, ""))
    lines.append((1, sig("is_recent", [("self", ""), ("days", "int")], "bool", style).replace("days", "days")))
    lines += comment(2, "compare in one timezone, or the difference is off by the UTC offset", style)
    lines.append((2, f"return ({now_expr(style)} - self.{e.date}).days <= days"))
    lines.append((0, ""))
    lines.append((1, "@classmethod"))
    lines.append((1, sig("from_row", [("cls", ""), ("row", "dict")], f'"{e.cls}"', style)))
    lines.append((2, "return cls("))
    for name, kind in e.fields:
        if kind == "date":
            lines.append((3, f"{name}=datetime.fromisoformat(row[\"{name}\"]),"))
        else:
            lines.append((3, f"{name}=row[\"{name}\"],"))
    lines.append((3, "id=row.get(\"id\"),"))
    lines.append((2, ")"))
    return "python", lines


def query_func(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    fn = f"{e.vars}_since"
    lines: Lines = []
    if style.orm:
        lines += [(0, "from sqlalchemy import select"), (0, "from sqlalchemy.engine import Connection")]
        lines += [(0, dt_import(style)), *typing_import(style, "List"), (0, "")]
        lines += [(0, f"from .tables import {e.table}_table"), (0, ""), (0, "")]
        lines.append((0, sig(fn, [("conn", "Connection"), ("since", "datetime"), ("limit", "int = 100")],
                             lst("dict", style), style)))
        lines.append((1, f'"""{e.plural.capitalize()} changed since ``since``, newest first."""'))
        lines += comment(1, "Core builds the SQL for us; no string formatting anywhere", style)
        lines.append((1, "stmt = ("))
        lines.append((2, f"select({e.table}_table)"))
        lines.append((2, f".where({e.table}_table.c.{e.date} >= since)"))
        lines.append((2, f".order_by({e.table}_table.c.{e.date}.desc())"))
        lines.append((2, ".limit(limit)"))
        lines.append((1, ")"))
        lines.append((1, "return [dict(row._mapping) for row in conn.execute(stmt)]"))
        return "python", lines
    mark = "%s" if style.dialect == "postgres" or style.mariadb else "?"
    module = "psycopg" if style.dialect == "postgres" else "pymysql" if style.mariadb else "sqlite3"
    lines += [(0, f"import {module}"), (0, dt_import(style)), *typing_import(style, "List"), *logger_header(style)]
    lines += [(0, ""), (0, "")]
    lines.append((0, "SQL = \"\"\""))
    lines.append((0, f"SELECT id, {', '.join(f for f, _ in e.fields)}"))
    lines.append((0, f"FROM {e.table}"))
    lines.append((0, f"WHERE {e.date} >= {mark}"))
    lines.append((0, f"ORDER BY {e.date} DESC"))
    lines.append((0, f"LIMIT {mark}"))
    lines.append((0, '"""'))
    lines.append((0, ""))
    lines.append((0, ""))
    conn_t = {"psycopg": "psycopg.Connection", "pymysql": "pymysql.connections.Connection"}.get(module,
                                                                                         "sqlite3.Connection")
    lines.append((0, sig(fn, [("conn", conn_t), ("since", "datetime"), ("limit", "int = 100")],
                         lst("tuple", style), style)))
    lines.append((1, f'"""{e.plural.capitalize()} changed since ``since``, newest first."""'))
    lines += comment(1, "parameters, never f-strings: the driver quotes them", style)
    if module in ("psycopg", "pymysql"):
        lines.append((1, "with conn.cursor() as cur:"))
        lines.append((2, "cur.execute(SQL, (since, limit))"))
        lines.append((2, "rows = cur.fetchall()"))
    else:
        lines.append((1, "rows = conn.execute(SQL, (since.isoformat(), limit)).fetchall()"))
    lines += log_lines(1, f"fetched %d {e.plural}", style, "len(rows)")
    lines.append((1, "return rows"))
    return "python", lines


def endpoint(e: Entity, style: Style, rng: random.Random, framework: str) -> tuple[str, Lines]:
    lines: Lines = []
    if framework == "flask":
        lines += [(0, "from flask import Blueprint, abort, jsonify, request"), (0, "")]
        lines += [(0, "from .db import get_conn"), (0, f"from .{e.vars} import {e.vars}_since, insert_{e.var}")]
        lines += [*logger_header(style), (0, ""), (0, f'bp = Blueprint("{e.vars}", __name__)'), (0, ""), (0, "")]
        lines.append((0, f'@bp.get("/{e.vars.replace("_", "-")}")'))
        lines.append((0, sig(f"list_{e.vars}", [], "tuple", style)))
        lines.append((1, 'limit = min(int(request.args.get("limit", 50)), 500)'))
        lines += comment(1, "cap the limit: a client asking for everything should not stall the worker", style)
        lines.append((1, f"rows = {e.vars}_since(get_conn(), since=request.args.get(\"since\"), limit=limit)"))
        lines.append((1, 'return jsonify([dict(r) for r in rows]), 200'))
        lines.append((0, ""))
        lines.append((0, ""))
        lines.append((0, f'@bp.post("/{e.vars.replace("_", "-")}")'))
        lines.append((0, sig(f"create_{e.var}", [], "tuple", style)))
        lines.append((1, "data = request.get_json(silent=True) or {}"))
        lines.append((1, f"missing = [k for k in ({', '.join(repr(f) for f, _ in e.fields[:3])}) if k not in data]"))
        lines.append((1, "if missing:"))
        lines.append((2, 'abort(400, description=f"missing fields: {missing}")'))
        lines.append((1, f"new_id = insert_{e.var}(get_conn(), data)"))
        lines += log_lines(1, f"created {e.name} %s", style, "new_id")
        lines.append((1, 'return jsonify({"id": new_id}), 201'))
        return "python", lines
    lines += [(0, "from fastapi import APIRouter, Depends, HTTPException, Query"),
              (0, "from pydantic import BaseModel")]
    lines += [(0, dt_import(style)), *typing_import(style, "List", "Optional")]
    lines += [(0, ""), (0, "from .db import get_conn"), (0, f"from .{e.vars} import {e.vars}_since, insert_{e.var}")]
    lines += logger_header(style)
    prefix = e.vars.replace("_", "-")
    lines += [(0, ""), (0, f'router = APIRouter(prefix="/{prefix}", tags=["{e.vars}"])'), (0, ""), (0, "")]
    lines.append((0, f"class {e.cls}In(BaseModel):"))
    for name, kind in e.fields:
        lines.append((1, f"{name}: {PY_TYPES[kind]}"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, '@router.get("")'))
    lines.append((0, sig(f"list_{e.vars}", [("since", "datetime"), ("limit", "int = Query(50, le=500)"),
                                             ("conn", "object = Depends(get_conn)")], lst("dict", style), style,
                         prefix="async def")))
    lines += comment(1, "Query(le=500) rejects silly limits before we touch the database", style)
    lines.append((1, f"return {e.vars}_since(conn, since, limit)"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, '@router.post("", status_code=201)'))
    lines.append((0, sig(f"create_{e.var}", [("body", f"{e.cls}In"), ("conn", "object = Depends(get_conn)")],
                         "dict", style, prefix="async def")))
    lines.append((1, "try:"))
    lines.append((2, f"new_id = insert_{e.var}(conn, body.model_dump())"))
    lines.append((1, "except ValueError as exc:"))
    lines.append((2, "raise HTTPException(status_code=422, detail=str(exc)) from exc"))
    lines += log_lines(1, f"created {e.name} %s", style, "new_id")
    lines.append((1, 'return {"id": new_id}'))
    return "python", lines


def tests(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    fn = f"{e.vars}_since"
    lines: Lines = []
    if not style.unittest:
        lines += [(0, "import pytest"), (0, "from datetime import datetime, timedelta, timezone"), (0, "")]
        lines += [(0, f"from app.{e.vars} import {fn}, insert_{e.var}"), (0, ""), (0, "")]
        lines.append((0, "@pytest.fixture"))
        lines.append((0, sig(f"some_{e.vars}", [("conn", "")], lst("int", style), style)))
        lines += comment(1, "three rows a day apart, so the cut-off has something on each side", style)
        lines.append((1, "now = datetime.now(timezone.utc)"))
        lines.append((1, "ids = []"))
        lines.append((1, "for days in (0, 1, 2):"))
        row = ", ".join(f'"{f}": {SAMPLE.get(k, "now")}' if k != "date" else f'"{f}": now - timedelta(days=days)'
                        for f, k in e.fields)
        lines.append((2, f"ids.append(insert_{e.var}(conn, {{{row}}}))"))
        lines.append((1, "return ids"))
        lines.append((0, ""))
        lines.append((0, ""))
        lines.append((0, sig(f"test_{fn}_keeps_recent_rows", [("conn", ""), (f"some_{e.vars}", "")], "None", style)))
        lines.append((1, "cut = datetime.now(timezone.utc) - timedelta(hours=36)"))
        lines.append((1, f"rows = {fn}(conn, cut)"))
        lines.append((1, "assert len(rows) == 2"))
        lines.append((0, ""))
        lines.append((0, ""))
        lines.append((0, '@pytest.mark.parametrize("limit", [0, 1, 2])'))
        lines.append((0, sig(f"test_{fn}_respects_the_limit", [("conn", ""), (f"some_{e.vars}", ""), ("limit", "int")],
                             "None", style)))
        lines.append((1, f"assert len({fn}(conn, datetime(2000, 1, 1, tzinfo=timezone.utc), limit)) == limit"))
        return "python", lines
    lines += [(0, "import unittest"), (0, "from datetime import datetime, timedelta"), (0, "")]
    lines += [(0, "from app.db import connect"), (0, f"from app.{e.vars} import {fn}, insert_{e.var}"),
              (0, ""), (0, "")]
    lines.append((0, f"class {e.cls}SinceTest(unittest.TestCase):"))
    lines.append((1, sig("setUp", [("self", "")], "None", style)))
    lines.append((2, 'self.conn = connect(":memory:")'))
    lines.append((2, "now = datetime.now()"))
    lines.append((2, "for days in (0, 1, 2):"))
    row = ", ".join(f'"{f}": {SAMPLE.get(k, "now")}' if k != "date" else f'"{f}": now - timedelta(days=days)'
                    for f, k in e.fields)
    lines.append((3, f"insert_{e.var}(self.conn, {{{row}}})"))
    lines.append((0, ""))
    lines.append((1, sig("test_keeps_recent_rows", [("self", "")], "None", style)))
    lines.append((2, f"rows = {fn}(self.conn, datetime.now() - timedelta(hours=36))"))
    lines.append((2, "self.assertEqual(len(rows), 2)"))
    lines.append((0, ""))
    lines.append((1, sig("test_respects_the_limit", [("self", "")], "None", style)))
    lines.append((2, "for limit in (0, 1, 2):"))
    lines.append((3, "with self.subTest(limit=limit):"))
    lines.append((4, f"self.assertEqual(len({fn}(self.conn, datetime(2000, 1, 1), limit)), limit)"))
    return "python", lines


def csv_export(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    fn = f"export_{e.vars}"
    lines: Lines = []
    if not style.stdlib and style.polars:
        return polars_export(e, style)
    if not style.stdlib:
        lines += [(0, "import pandas as pd")]
        lines += [(0, "from pathlib import Path")] if style.pathlib else [(0, "import os")]
        lines += [*logger_header(style), (0, ""), (0, "")]
        path_t = "Path" if style.pathlib else "str"
        lines.append((0, sig(fn, [("conn", ""), ("out_dir", path_t)], path_t, style)))
        lines.append((1, f'df = pd.read_sql("SELECT * FROM {e.table} ORDER BY {e.date}", conn)'))
        lines.append((1, f'df["{e.date}"] = pd.to_datetime(df["{e.date}"])'))
        if e.has("money"):
            lines.append((1, f'df["{e.first("money")}"] = df["{e.first("money")}"] / 100'))
        tgt = f'out_dir / "{e.vars}.csv"' if style.pathlib else f'os.path.join(out_dir, "{e.vars}.csv")'
        lines.append((1, f"target = {tgt}"))
        lines.append((1, "df.to_csv(target, index=False)"))
        lines += log_lines(1, "wrote %d rows to %s", style, "len(df)", "target")
        lines.append((1, "return target"))
        return "python", lines
    lines += [(0, "import csv")]
    lines += [(0, "from pathlib import Path")] if style.pathlib else [(0, "import os")]
    lines += [*logger_header(style), (0, ""), (0, "")]
    cols = [f for f, _ in e.fields]
    lines.append((0, f"COLUMNS = ({', '.join(repr(c) for c in cols)})"))
    lines.append((0, ""))
    lines.append((0, ""))
    path_t = "Path" if style.pathlib else "str"
    lines.append((0, sig(fn, [("conn", ""), ("out_dir", path_t)], path_t, style)))
    lines.append((1, f'"""Write every {e.name} to ``{e.vars}.csv`` in ``out_dir``; returns the file written."""'))
    tgt = f'out_dir / "{e.vars}.csv"' if style.pathlib else f'os.path.join(out_dir, "{e.vars}.csv")'
    lines.append((1, f"target = {tgt}"))
    lines += comment(1, 'newline="" or Windows gets blank lines between the rows', style)
    opener = 'target.open("w", newline="", encoding="utf-8")' if style.pathlib else \
        'open(target, "w", newline="", encoding="utf-8")'
    lines.append((1, f"with {opener} as fh:"))
    lines.append((2, "writer = csv.writer(fh)"))
    lines.append((2, "writer.writerow(COLUMNS)"))
    lines.append((2, "count = 0"))
    lines.append((2, f'for row in conn.execute("SELECT {", ".join(cols)} FROM {e.table} ORDER BY {e.date}"):'))
    lines.append((3, "writer.writerow(row)"))
    lines.append((3, "count += 1"))
    lines += log_lines(1, "wrote %d rows to %s", style, "count", "target")
    lines.append((1, "return target"))
    return "python", lines


def polars_export(e: Entity, style: Style) -> tuple[str, Lines]:
    fn = f"export_{e.vars}"
    lines: Lines = [(0, "import polars as pl")]
    lines += [(0, "from pathlib import Path")] if style.pathlib else [(0, "import os")]
    lines += [*logger_header(style), (0, ""), (0, "")]
    path_t = "Path" if style.pathlib else "str"
    lines.append((0, sig(fn, [("conn", ""), ("out_dir", path_t)], path_t, style)))
    lines.append((1, f'df = pl.read_database("SELECT * FROM {e.table} ORDER BY {e.date}", connection=conn)'))
    if e.has("money"):
        lines.append((1, f'df = df.with_columns(pl.col("{e.first("money")}") / 100)'))
    tgt = f'out_dir / "{e.vars}.csv"' if style.pathlib else f'os.path.join(out_dir, "{e.vars}.csv")'
    lines.append((1, f"target = {tgt}"))
    lines.append((1, "df.write_csv(target)"))
    lines += log_lines(1, "wrote %d rows to %s", style, "df.height", "target")
    lines.append((1, "return target"))
    return "python", lines


def pydantic_validation(e: Entity, style: Style) -> tuple[str, Lines]:
    lines: Lines = [(0, "from pydantic import BaseModel, Field, field_validator"), (0, dt_import(style)),
                    (0, ""), (0, "")]
    lines.append((0, f"class {e.cls}In(BaseModel):"))
    lines.append((1, f'"""A {e.name} as submitted; pydantic rejects it with every problem listed."""'))
    lines.append((0, ""))
    kinds = {"str": "str = Field(min_length=1)", "int": "int = Field(ge=0)", "money": "int = Field(ge=0)",
             "float": "float = 0.0", "date": "datetime", "bool": "bool = False"}
    for name, kind in e.fields:
        lines.append((1, f"{name}: {kinds[kind]}"))
    lines.append((0, ""))
    lines.append((1, f'@field_validator("{e.key}")'))
    lines.append((1, "@classmethod"))
    lines.append((1, sig(f"strip_{e.key}", [("cls", ""), ("value", "str")], "str", style)))
    lines.append((2, "value = value.strip()"))
    lines.append((2, "if not value:"))
    lines.append((3, f'raise ValueError("{e.key} is empty")'))
    lines.append((2, "return value"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, sig(f"validate_{e.var}", [("data", "dict")], f"{e.cls}In", style)))
    lines.append((1, f'"""The checked {e.name}; raises pydantic.ValidationError."""'))
    lines.append((1, f"return {e.cls}In.model_validate(data)"))
    return "python", lines


def validation(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    if style.pydantic:
        return pydantic_validation(e, style)
    fn = f"validate_{e.var}"
    lines: Lines = [(0, dt_import(style)), *typing_import(style, "List"), (0, ""), (0, "")]
    lines.append((0, f"class {e.cls}Error(ValueError):"))
    lines.append((1, f'"""A {e.name} that cannot be saved, with every problem found."""'))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, sig(fn, [("data", "dict")], "dict", style)))
    lines.append((1, f'"""The cleaned {e.name}, or :class:`{e.cls}Error` listing what is wrong."""'))
    lines.append((1, "problems = []"))
    lines.append((1, "clean = {}"))
    for name, kind in e.fields:
        if kind == "str":
            lines.append((1, f'value = str(data.get("{name}", "")).strip()'))
            lines.append((1, "if not value:"))
            lines.append((2, f'problems.append("{name} is empty")'))
            lines.append((1, f'clean["{name}"] = value'))
        elif kind in ("int", "money"):
            lines += comment(1, f"{name}: whole numbers only, never negative", style)
            lines.append((1, "try:"))
            lines.append((2, f'clean["{name}"] = int(data["{name}"])'))
            lines.append((1, "except (KeyError, TypeError, ValueError):"))
            lines.append((2, f'problems.append("{name} must be a whole number")'))
            lines.append((1, "else:"))
            lines.append((2, f'if clean["{name}"] < 0:'))
            lines.append((3, f'problems.append("{name} cannot be negative")'))
        elif kind == "date":
            lines.append((1, "try:"))
            lines.append((2, f'clean["{name}"] = datetime.fromisoformat(data["{name}"])'))
            lines.append((1, "except (KeyError, TypeError, ValueError):"))
            lines.append((2, f'problems.append("{name} is not an ISO date")'))
        elif kind == "float":
            lines.append((1, f'clean["{name}"] = float(data.get("{name}") or 0)'))
        else:
            lines.append((1, f'clean["{name}"] = bool(data.get("{name}"))'))
    lines.append((1, "if problems:"))
    lines.append((2, f'raise {e.cls}Error("; ".join(problems))'))
    lines.append((1, "return clean"))
    return "python", lines


def retry_helper(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    client = "httpx" if style.httpx else "requests"
    lines: Lines = [(0, "import time"), (0, f"import {client}"), *typing_import(style, "Optional"),
                    *logger_header(style)]
    lines += [(0, ""), (0, "RETRIABLE = {429, 502, 503, 504}"), (0, ""), (0, "")]
    lines.append((0, sig("fetch_json", [("url", "str"), ("attempts", "int = 4"), ("timeout", "float = 10.0")],
                         "dict", style)))
    lines.append((1, '"""GET ``url`` as JSON, retrying transient failures with exponential backoff."""'))
    lines.append((1, f"last: {opt('Exception', style)} = None" if style.hints else "last = None"))
    lines.append((1, "for attempt in range(attempts):"))
    lines.append((2, "try:"))
    lines.append((3, f"response = {client}.get(url, timeout=timeout)"))
    lines.append((2, f"except {client}.{'TransportError' if style.httpx else 'ConnectionError'} as exc:"))
    lines.append((3, "last = exc"))
    lines.append((2, "else:"))
    lines.append((3, "if response.status_code not in RETRIABLE:"))
    lines.append((4, "response.raise_for_status()"))
    lines.append((4, "return response.json()"))
    lines.append((3, "last = RuntimeError(f\"HTTP {response.status_code}\")"))
    lines += comment(2, "1s, 2s, 4s: enough for a restart, short enough for a human waiting", style)
    lines.append((2, "delay = 2 ** attempt"))
    lines += log_lines(2, "attempt %d failed, retrying in %ds", style, "attempt + 1", "delay")
    lines.append((2, "time.sleep(delay)"))
    lines.append((1, 'raise RuntimeError(f"giving up on {url}") from last'))
    return "python", lines


def config_loader(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    lines: Lines = [(0, "import os"), (0, "from dataclasses import dataclass")]
    lines += [(0, "from pathlib import Path")] if style.pathlib else []
    lines += [*typing_import(style, "Optional"), (0, ""), (0, ""), (0, "@dataclass(frozen=True)"),
              (0, "class Settings:")]
    lines.append((1, "database_url: str"))
    lines.append((1, "page_size: int = 50"))
    lines.append((1, "debug: bool = False"))
    default = 'Path("exports")' if style.pathlib else '"exports"'
    lines.append((1, f"export_dir: {'Path' if style.pathlib else 'str'} = {default}"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, sig("load_settings", [("env", "dict = os.environ")], "Settings", style)))
    lines.append((1, '"""Settings from environment variables; fails early with a clear message."""'))
    lines.append((1, 'url = env.get("DATABASE_URL")'))
    lines.append((1, "if not url:"))
    lines += comment(2, "better to refuse to start than to write to the wrong database", style)
    lines.append((2, 'raise SystemExit("DATABASE_URL is not set (see .env.example)")'))
    lines.append((1, "return Settings("))
    lines.append((2, "database_url=url,"))
    lines.append((2, 'page_size=int(env.get("PAGE_SIZE", "50")),'))
    lines.append((2, 'debug=env.get("DEBUG", "").lower() in {"1", "true", "yes"},'))
    val = 'Path(env.get("EXPORT_DIR", "exports"))' if style.pathlib else 'env.get("EXPORT_DIR", "exports")'
    lines.append((2, f"export_dir={val},"))
    lines.append((1, ")"))
    return "python", lines


def json_logging_setup(style: Style) -> tuple[str, Lines]:
    lines: Lines = [(0, "import json"), (0, "import logging"), (0, "import sys"), (0, ""), (0, "")]
    lines.append((0, "class JsonLines(logging.Formatter):"))
    lines.append((1, sig("format", [("self", ""), ("record", "logging.LogRecord")], "str", style)))
    lines.append((2, "return json.dumps({"))
    lines += [(3, '"time": self.formatTime(record),'), (3, '"level": record.levelname,'),
              (3, '"logger": record.name,'), (3, '"message": record.getMessage(),')]
    lines.append((2, "})"))
    lines += [(0, ""), (0, "")]
    lines.append((0, sig("setup_logging", [("level", 'str = "INFO"')], "None", style)))
    lines.append((1, '"""One JSON object per line on stderr; call once, at start-up."""'))
    lines.append((1, "handler = logging.StreamHandler(sys.stderr)"))
    lines.append((1, "handler.setFormatter(JsonLines())"))
    lines.append((1, "root = logging.getLogger()"))
    lines.append((1, "root.setLevel(level)"))
    lines.append((1, "root.handlers[:] = [handler]"))
    return "python", lines


def logging_setup(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    if style.json_logs:
        return json_logging_setup(style)
    lines: Lines = [(0, "import logging"), (0, "import logging.handlers")]
    lines += [(0, "from pathlib import Path")] if style.pathlib else [(0, "import os")]
    lines += [(0, ""), (0, ""),
              (0, sig("setup_logging", [("log_dir", "str"), ("level", 'str = "INFO"')], "None", style))]
    lines.append((1, '"""Console plus a rotating file; call once, at start-up."""'))
    if style.pathlib:
        lines.append((1, "Path(log_dir).mkdir(parents=True, exist_ok=True)"))
        target = 'Path(log_dir) / "app.log"'
    else:
        lines.append((1, "os.makedirs(log_dir, exist_ok=True)"))
        target = 'os.path.join(log_dir, "app.log")'
    lines.append((1, 'fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")'))
    lines += comment(1, "5 files of 1 MB: bounded disk use even if something loops", style)
    lines.append((1, f"handler = logging.handlers.RotatingFileHandler({target}, maxBytes=1_000_000, backupCount=5)"))
    lines.append((1, "handler.setFormatter(fmt)"))
    lines.append((1, "console = logging.StreamHandler()"))
    lines.append((1, "console.setFormatter(fmt)"))
    lines.append((1, "root = logging.getLogger()"))
    lines.append((1, "root.setLevel(level)"))
    lines.append((1, "root.handlers[:] = [console, handler]"))
    lines.append((1, 'logging.getLogger("urllib3").setLevel(logging.WARNING)'))
    return "python", lines


def cache_helper(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    lines: Lines = [(0, "import time"), (0, "from functools import wraps"), *typing_import(style, "Dict", "Tuple")]
    lines += [(0, ""), (0, ""), (0, sig("ttl_cache", [("seconds", "float")], "object", style))]
    lines.append((1, '"""Cache a function\'s results for ``seconds`` (per argument tuple)."""'))
    lines.append((1, sig("decorate", [("fn", "")], "object", style)))
    lines.append((2, "store = {}"))
    lines.append((0, ""))
    lines.append((2, "@wraps(fn)"))
    lines.append((2, sig("wrapper", [("*args", "")], "object", style)))
    lines.append((3, "now = time.monotonic()"))
    lines.append((3, "hit = store.get(args)"))
    lines += comment(3, "monotonic: a clock change cannot make an entry live forever", style)
    lines.append((3, "if hit is not None and now - hit[0] < seconds:"))
    lines.append((4, "return hit[1]"))
    lines.append((3, "value = fn(*args)"))
    lines.append((3, "store[args] = (now, value)"))
    lines.append((3, "return value"))
    lines.append((0, ""))
    lines.append((2, "wrapper.cache_clear = store.clear"))
    lines.append((2, "return wrapper"))
    lines.append((1, "return decorate"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, "@ttl_cache(seconds=60)"))
    lines.append((0, sig(f"count_{e.vars}", [("day", "str")], "int", style)))
    lines.append((1, f'return db.scalar("SELECT count(*) FROM {e.table} WHERE date({e.date}) = ?", (day,))'))
    return "python", lines


def typer_cli(e: Entity, style: Style) -> tuple[str, Lines]:
    lines: Lines = [(0, "import typer")]
    lines += [(0, "from pathlib import Path")] if style.pathlib else []
    lines += [*logger_header(style), (0, ""), (0, "")]
    lines += [(0, f'app = typer.Typer(help="Manage {e.plural}.")'), (0, ""), (0, "")]
    lines.append((0, '@app.command("list")'))
    lines.append((0, sig("list_recent", [("days", "int = 7")], "None", style)))
    lines.append((1, f'"""Print the {e.plural} of the last ``days`` days."""'))
    lines.append((1, f"for row in {e.vars}_since(connect(), days_ago(days)):"))
    lines.append((2, 'typer.echo("\\t".join(map(str, row)))'))
    lines += [(0, ""), (0, "")]
    lines.append((0, '@app.command("export")'))
    lines.append((0, sig("export", [("out", "Path" if style.pathlib else "str")], "None", style)))
    lines.append((1, f'"""Write the {e.plural} to a CSV file."""'))
    lines.append((1, f"target = export_{e.vars}(connect(), out)"))
    lines += log_lines(1, "exported to %s", style, "target")
    lines += [(0, ""), (0, ""), (0, 'if __name__ == "__main__":'), (1, "app()")]
    return "python", lines


def cli(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    if style.typer:
        return typer_cli(e, style)
    lines: Lines = [(0, "import argparse"), (0, "import sys")]
    lines += [(0, "from pathlib import Path")] if style.pathlib else []
    lines += typing_import(style, "List", "Optional") + logger_header(style) + [(0, ""), (0, "")]
    argv_t = opt(lst("str", style), style)
    lines.append((0, sig("main", [("argv", f"{argv_t} = None")], "int", style)))
    lines.append((1, f'parser = argparse.ArgumentParser(description="Manage {e.plural}.")'))
    lines.append((1, 'sub = parser.add_subparsers(dest="command", required=True)'))
    lines.append((1, f'ls = sub.add_parser("list", help="list recent {e.plural}")'))
    lines.append((1, 'ls.add_argument("--days", type=int, default=7)'))
    lines.append((1, f'exp = sub.add_parser("export", help="write {e.plural} to CSV")'))
    lines.append((1, f'exp.add_argument("out", {"type=Path" if style.pathlib else "type=str"})'))
    lines.append((1, "args = parser.parse_args(argv)"))
    lines.append((1, "conn = connect()"))
    lines.append((1, 'if args.command == "list":'))
    lines.append((2, f"for row in {e.vars}_since(conn, days_ago(args.days)):"))
    lines.append((3, 'print("\\t".join(map(str, row)))'))
    lines.append((2, "return 0"))
    lines.append((1, f"target = export_{e.vars}(conn, args.out)"))
    lines += log_lines(1, "exported to %s", style, "target")
    lines.append((1, "return 0"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, 'if __name__ == "__main__":'))
    lines.append((1, "sys.exit(main())"))
    return "python", lines


def job(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    lines: Lines = [(0, "import time"), (0, "from datetime import timedelta"), (0, dt_import(style))]
    lines += typing_import(style, "Callable") + logger_header(style) + [(0, ""), (0, "")]
    lines.append((0, sig("run_every", [("interval", "timedelta"), ("task", "object")], "None", style)))
    lines.append((1, '"""Run ``task`` every ``interval``, forever; a failing run is logged, not fatal."""'))
    lines.append((1, "while True:"))
    lines.append((2, f"started = {now_expr(style)}"))
    lines.append((2, "try:"))
    lines.append((3, "task()"))
    lines.append((2, "except Exception:"))
    if style.logging:
        lines.append((3, 'logger.exception("scheduled task failed")'))
    else:
        lines.append((3, "import traceback"))
        lines.append((3, "traceback.print_exc()"))
    lines += comment(2, "sleep the rest of the interval, not a full one, so runs do not drift", style)
    lines.append((2, f"spent = ({now_expr(style)} - started).total_seconds()"))
    lines.append((2, "time.sleep(max(0.0, interval.total_seconds() - spent))"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, sig(f"archive_old_{e.vars}", [], "None", style)))
    lines.append((1, f"cut = {now_expr(style)} - timedelta(days=365)"))
    lines.append((1, "with connect() as conn:"))
    lines.append((2, f'moved = conn.execute("INSERT INTO {e.table}_archive SELECT * FROM {e.table} "'))
    lines.append((4, f'"WHERE {e.date} < ?", (cut,)).rowcount'))
    lines.append((2, f'conn.execute("DELETE FROM {e.table} WHERE {e.date} < ?", (cut,))'))
    lines += log_lines(1, f"archived %d {e.plural}", style, "moved")
    return "python", lines


def auth(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    lines: Lines = [(0, "import hashlib"), (0, "import hmac"), (0, "import secrets"), (0, ""), (0, "")]
    lines.append((0, sig("new_api_key", [], "tuple", style)))
    lines.append((1, '"""A fresh key and the hash to store (the key itself is shown once and never stored)."""'))
    lines.append((1, "key = secrets.token_urlsafe(32)"))
    lines.append((1, "return key, hashlib.sha256(key.encode()).hexdigest()"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, sig("check_api_key", [("presented", "str"), ("stored_hash", "str")], "bool", style)))
    lines += comment(1, "compare_digest: constant time, so the hash cannot be guessed byte by byte", style)
    lines.append((1, "digest = hashlib.sha256(presented.encode()).hexdigest()"))
    lines.append((1, "return hmac.compare_digest(digest, stored_hash)"))
    lines.append((0, ""))
    lines.append((0, ""))
    lines.append((0, sig("require_key", [("headers", "dict"), ("lookup", "object")], "str", style)))
    lines.append((1, 'presented = headers.get("X-Api-Key", "")'))
    lines.append((1, "owner = lookup(presented[:8])"))
    lines.append((1, "if owner is None or not check_api_key(presented, owner.key_hash):"))
    lines.append((2, 'raise PermissionError("invalid API key")'))
    lines.append((1, "return owner.name"))
    return "python", lines


def dockerfile(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    base = f"python:{style.py}-slim"
    lines: Lines = [(0, f"FROM --platform=linux/arm64 {base}" if style.arm else f"FROM {base}")]
    if style.comments:
        lines.append((0, "# slim: no compilers, a smaller image and fewer CVEs to track"))
    if style.uv:
        install = [(0, "COPY pyproject.toml uv.lock ."),
                   (0, "RUN pip install --no-cache-dir uv && uv sync --frozen --no-dev")]
    elif style.poetry:
        install = [(0, "COPY pyproject.toml poetry.lock ."),
                   (0, "RUN pip install --no-cache-dir poetry && poetry install --only main --no-root")]
    else:
        install = [(0, "COPY requirements.txt ."), (0, "RUN pip install --no-cache-dir -r requirements.txt")]
    lines += [(0, "ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1"), (0, "WORKDIR /app"), *install,
              (0, "COPY . ."), (0, "RUN useradd --create-home app && chown -R app /app"), (0, "USER app")]
    if style.small_memory:
        lines.append((0, 'CMD ["gunicorn", "--workers", "1", "--threads", "4", "--max-requests", "500", "app:app"]'))
    else:
        lines.append((0, 'CMD ["gunicorn", "--workers", "3", "app:app"]'))
    return "dockerfile", lines


def systemd_unit(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    workers = "1 --threads 4" if style.small_memory else "3"
    lines: Lines = [(0, "[Unit]"), (0, f"Description={e.plural} service"), (0, "After=network-online.target"),
                    (0, ""), (0, "[Service]"), (0, "User=app"), (0, "WorkingDirectory=/opt/app"),
                    (0, "EnvironmentFile=/etc/app/app.env"),
                    (0, f"ExecStart=/opt/app/.venv/bin/gunicorn --workers {workers} app:app"),
                    (0, "Restart=on-failure"), (0, "RestartSec=5")]
    if style.small_memory:
        lines.append((0, "MemoryMax=400M"))
    lines += [(0, ""), (0, "[Install]"), (0, "WantedBy=multi-user.target")]
    return "ini", lines


def ci_yaml(e: Entity, style: Style, rng: random.Random) -> tuple[str, Lines]:
    lines: Lines = [(0, "name: tests"), (0, "on: [push, pull_request]"), (0, "jobs:"), (1, "test:")]
    os_line = "runs-on: ${{ matrix.os }}" if style.windows else \
        "runs-on: ubuntu-24.04-arm" if style.arm else "runs-on: ubuntu-latest"
    lines.append((2, os_line))
    lines.append((2, "strategy:"))
    lines.append((3, "matrix:"))
    if style.windows:
        lines.append((4, "os: [ubuntu-latest, windows-latest]"))
    lines.append((4, f'python: ["{style.py}"]'))
    lines.append((2, "steps:"))
    lines.append((3, "- uses: actions/checkout@v4"))
    lines.append((3, "- uses: actions/setup-python@v5"))
    lines.append((4, "with:"))
    lines.append((5, "python-version: ${{ matrix.python }}"))
    if style.uv:
        lines.append((3, "- uses: astral-sh/setup-uv@v5"))
        lines.append((3, "- run: uv sync --frozen"))
    elif style.poetry:
        lines.append((3, "- run: pip install poetry && poetry install --no-interaction"))
    else:
        lines.append((3, "- run: pip install -r requirements-dev.txt"))
    run = "uv run " if style.uv else "poetry run " if style.poetry else ""
    if style.ruff:
        lines.append((3, f"- run: {run}ruff check ."))
        lines.append((3, f"- run: {run}ruff format --check ."))
    if style.offline_tests:
        lines.append((3, f"- run: {run}pytest -q -p no:cacheprovider --disable-socket"))
    else:
        lines.append((3, f"- run: {run}pytest -q"))
    return "yaml", lines


def traceback_text(e: Entity, rng: random.Random, style: Style) -> tuple[str, str, str]:
    """(pasted traceback, the error's name, a one-line cause)."""
    k = rng.randrange(4)
    if k == 0:
        fld = e.key
        tb = (f"Traceback (most recent call last):\n  File \"app/{e.vars}.py\", line 42, in insert_{e.var}\n"
              f"    conn.execute(SQL_INSERT, values)\n"
              f"sqlite3.IntegrityError: UNIQUE constraint failed: {e.table}.{fld}")
        return tb, "IntegrityError", f"a second {e.name} with the same {fld.replace('_', ' ')}"
    if k == 1:
        tb = (f"Traceback (most recent call last):\n  File \"app/{e.vars}.py\", line 17, in from_row\n"
              f"    {e.date}=datetime.fromisoformat(row[\"{e.date}\"]),\n"
              f"TypeError: fromisoformat: argument must be str")
        return tb, "TypeError", f"the driver already returns {e.date} as a datetime"
    if k == 2:
        tb = (f"Traceback (most recent call last):\n  File \"app/api.py\", line 88, in list_{e.vars}\n"
              f"    rows = {e.vars}_since(conn, since, limit)\n  File \"app/{e.vars}.py\", line 30, in {e.vars}_since\n"
              f"    return [dict(r) for r in rows]\nKeyError: '{e.num}'")
        return tb, "KeyError", f"the query's column list lost {e.num} in the last refactor"
    tb = (f"Traceback (most recent call last):\n  File \"app/jobs.py\", line 12, in archive_old_{e.vars}\n"
          f"    cut = datetime.now() - timedelta(days=365)\nNameError: name 'timedelta' is not defined")
    return tb, "NameError", "a missing import after the module was split"


def fix_snippet(e: Entity, err: str, style: Style) -> tuple[str, Lines]:
    lines: Lines = []
    if err == "IntegrityError":
        lines += [(0, sig(f"upsert_{e.var}", [("conn", ""), ("data", "dict")], "int", style))]
        lines += comment(1, "one statement: no race between the check and the insert", style)
        cols = [f for f, _ in e.fields]
        mark = "%s" if style.dialect == "postgres" or style.mariadb else "?"
        lines.append((1, "row = conn.execute("))
        lines.append((2, f'"INSERT INTO {e.table} ({", ".join(cols)}) VALUES ({", ".join([mark] * len(cols))}) "'))
        if style.mariadb:
            updates = ", ".join(f"{c} = VALUES({c})" for c in cols if c != e.key)
            lines.append((2, f'"ON DUPLICATE KEY UPDATE {updates} RETURNING id",'))
        else:
            updates = ", ".join(f"{c} = excluded.{c}" for c in cols if c != e.key)
            lines.append((2, f'"ON CONFLICT ({e.key}) DO UPDATE SET {updates} RETURNING id",'))
        lines.append((2, f"tuple(data[c] for c in ({', '.join(repr(c) for c in cols)})),"))
        lines.append((1, ").fetchone()"))
        lines.append((1, "return row[0]"))
    elif err == "TypeError":
        lines += [(0, sig("as_datetime", [("value", "object")], "datetime", style))]
        lines += comment(1, "sqlite gives text, psycopg gives datetime: accept both", style)
        lines.append((1, "if isinstance(value, datetime):"))
        lines.append((2, "return value"))
        lines.append((1, "return datetime.fromisoformat(str(value))"))
    elif err == "KeyError":
        lines.append((0, f"COLUMNS = ({', '.join(repr(f) for f, _ in e.fields)})"))
        lines.append((0, f'SQL = f"SELECT id, {{\', \'.join(COLUMNS)}} FROM {e.table} WHERE {e.date} >= ? LIMIT ?"'))
    else:
        lines.append((0, "from datetime import datetime, timedelta"))
    return "python", lines
