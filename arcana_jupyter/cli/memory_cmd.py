"""``arcana memory list|search|add|forget|export|import``: look into, fill and tidy the cognitive-memory store.

Which store: ``--url postgresql://...`` (or ``$ARCANA_MEMORY_URL``) for a PostgreSQL server,
``--db FILE`` (or ``$ARCANA_MEMORY_PATH``, else ``~/.arcana/memory.sqlite3``) for a SQLite file.
Moving a store: ``arcana memory export -o all.jsonl --db old.sqlite3`` then
``arcana memory import all.jsonl --url postgresql://...`` (same ids, scores and tombstones).

Scope selection (list, search, export): by default the current folder's project memories plus the
user's global ones (what a notebook session here would see); ``--project DIR`` for another folder,
``--global`` for global memories only, ``--all`` for every scope in the database.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..exceptions import MemoryStoreError
from ..memory.backend import ENV_URL, env_url, is_url
from ..memory.models import CONFIDENCE_LEVELS, KINDS, Level, MemoryEntry, Scope
from ..memory.ranking import effective_confidence
from ..memory.store import MemoryStore, default_memory_path
from ..trace.redact import mask_secrets


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "memory",
        help="list, search, add, forget, export and import cognitive memories",
        description="Inspect the cognitive-memory store: a PostgreSQL server (--url or $ARCANA_MEMORY_URL) or a "
        "SQLite file (--db, $ARCANA_MEMORY_PATH, default ~/.arcana/memory.sqlite3).",
    )
    sub = parser.add_subparsers(dest="memory_command", metavar="ACTION")

    def common(p: argparse.ArgumentParser, *, scoped: bool = True) -> None:
        where = p.add_mutually_exclusive_group()
        where.add_argument(
            "--db",
            type=Path,
            default=None,
            help="memory database file (default: $ARCANA_MEMORY_PATH or ~/.arcana/memory.sqlite3)",
        )
        where.add_argument(
            "--url",
            default=None,
            help=f"PostgreSQL connection string, postgresql://user@host/db (default: ${ENV_URL} when set)",
        )
        if scoped:
            g = p.add_mutually_exclusive_group()
            g.add_argument("--project", type=Path, default=None, help="project folder (default: the current folder)")
            g.add_argument("--global", dest="global_only", action="store_true", help="global memories only")
            g.add_argument("--all", dest="all_scopes", action="store_true", help="every scope in the database")
            p.add_argument("--kind", action="append", choices=KINDS, help="only this kind (repeatable)")
            p.add_argument("--json", action="store_true", help="JSON output")

    p_list = sub.add_parser("list", help="list memories (pinned first, newest first)")
    common(p_list)
    p_list.add_argument("--limit", type=int, default=50, help="at most N entries (default 50; 0 = all)")
    p_list.add_argument("--retracted", action="store_true", help="include forgotten (tombstoned) entries")
    p_list.set_defaults(func=_list)

    p_search = sub.add_parser("search", help="ranked search, as recall_memory sees it")
    common(p_search)
    p_search.add_argument("query", help="keywords")
    p_search.add_argument("--limit", type=int, default=10, help="at most N results (default 10)")
    p_search.set_defaults(func=_search)

    p_forget = sub.add_parser("forget", help="retract a memory (tombstone; kept for audit)")
    common(p_forget, scoped=False)
    p_forget.add_argument("id", help="memory id, e.g. m_0123456789abcdef")
    p_forget.add_argument("--json", action="store_true", help="JSON output")
    p_forget.set_defaults(func=_forget)

    p_add = sub.add_parser("add", help="remember something (as the remember tool would)")
    common(p_add, scoped=False)
    p_add.add_argument("kind", choices=KINDS, help="kind of memory")
    p_add.add_argument("text", help="the memory: one self-contained sentence")
    p_add.add_argument(
        "--scope", choices=("project", "global"), default="project",
        help="project (default: the current folder's, or --project DIR) or global",
    )
    p_add.add_argument("--project", type=Path, default=None, help="project folder (default: the current folder)")
    p_add.add_argument("--confidence", choices=tuple(CONFIDENCE_LEVELS), default="high", help="default high")
    p_add.add_argument("--pin", action="store_true", help="pin it (always in the digest)")
    p_add.add_argument("--json", action="store_true", help="JSON output")
    p_add.set_defaults(func=_add)

    p_import = sub.add_parser("import", help="add the memories of an export file (JSON lines) to this store")
    common(p_import, scoped=False)
    p_import.add_argument("file", type=Path, help="a file written by `arcana memory export` (- for stdin)")
    p_import.set_defaults(func=_import)

    p_export = sub.add_parser("export", help="export memories as JSON lines (tombstones included)")
    common(p_export)
    p_export.add_argument("-o", "--output", type=Path, default=None, help="file to write (default: stdout)")
    p_export.add_argument("--live-only", action="store_true", help="leave out forgotten entries")
    p_export.set_defaults(func=_export)

    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _open(args: argparse.Namespace, *, create: bool = False) -> MemoryStore:
    """The store ``--url`` / ``--db`` / the environment name; a SQLite file must exist unless ``create``."""
    url = getattr(args, "url", None)
    if url is not None or (args.db is None and env_url()):
        target = url if url is not None else env_url()
        assert target is not None
        if not is_url(target):
            source = "--url" if url is not None else ENV_URL
            raise MemoryStoreError(f"{source} must be a postgresql://... connection string")
        return MemoryStore(target)
    if args.db is not None and is_url(str(args.db)):
        return MemoryStore(str(args.db))
    path = args.db.expanduser() if args.db is not None else default_memory_path()
    if create and not path.is_dir():
        return MemoryStore(path)
    if not path.exists():
        raise MemoryStoreError(
            f"no memory database at {path} (nothing remembered yet?); pass --db PATH or --url, "
            "or set ARCANA_MEMORY_PATH or ARCANA_MEMORY_URL"
        )
    if path.is_dir():
        raise MemoryStoreError(f"{path} is a folder, not a memory database file")
    return MemoryStore(path)


def _scope(args: argparse.Namespace) -> tuple[Scope | None, Level | None, str]:
    if getattr(args, "all_scopes", False):
        return None, None, "all scopes"
    if getattr(args, "global_only", False):
        return Scope.for_global(), "global", "global memories"
    project = args.project if args.project is not None else Path.cwd()
    if not project.exists():
        raise MemoryStoreError(f"project folder {project} does not exist")
    scope = Scope.for_project(project)
    return scope, None, f"project {scope.project_dir} + global"


def _dump(entry: MemoryEntry, **extra: Any) -> dict[str, Any]:
    # content masked on the way out too: entries stored before masking existed may hold keys
    return entry.model_dump(mode="json") | {"scope": entry.level, "content": mask_secrets(entry.content)} | extra


def _table(rows: list[list[str]], headers: list[str]) -> str:
    width = shutil.get_terminal_size((120, 20)).columns
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    fixed = sum(widths[:-1]) + 2 * (len(headers) - 1)
    widths[-1] = max(20, min(widths[-1], width - fixed))

    def fmt(cells: list[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            if i == len(cells) - 1:
                out.append(cell if len(cell) <= widths[i] else cell[: widths[i] - 1] + "…")
            else:
                out.append(cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    return "\n".join([fmt(headers), fmt(["-" * w for w in widths]), *(fmt(r) for r in rows)])


def _row(entry: MemoryEntry, now: float, score: float | None = None) -> list[str]:
    eff = effective_confidence(entry.confidence, entry.kind, entry.layer, entry.reinforced_at.timestamp(), now)
    flags = ("P" if entry.pinned else "") + ("x" if entry.retracted else "")
    cells = [entry.id, entry.kind, entry.level, f"{eff:.2f}", str(entry.layer), flags or "-"]
    if score is not None:
        cells.insert(0, f"{score:.3f}")
    cells.append(" ".join(mask_secrets(entry.content).split()))
    return cells


HEADERS = ["ID", "KIND", "SCOPE", "CONF", "L", "FLAGS", "CONTENT"]


def _list(args: argparse.Namespace) -> int:
    scope, level, label = _scope(args)
    with _open(args) as store:
        entries = store.list_entries(
            scope, level=level, kinds=args.kind, include_retracted=args.retracted, limit=args.limit or None
        )
        total = store.count(scope, level=level, include_retracted=args.retracted)
    if args.json:
        for e in entries:
            print(json.dumps(_dump(e), ensure_ascii=False))
        return 0
    if not entries:
        print(f"no memories ({label})")
        return 0
    now = datetime.now(UTC).timestamp()
    print(_table([_row(e, now) for e in entries], HEADERS))
    more = f" of {total}" if total > len(entries) and not args.kind else ""
    print(
        f"\n{len(entries)}{more} memories ({label}); "
        "CONF = confidence after decay, L = layer, P = pinned, x = forgotten"
    )
    return 0


def _search(args: argparse.Namespace) -> int:
    scope, level, label = _scope(args)
    if scope is None:
        raise MemoryStoreError("search needs a scope: drop --all, or use --global / --project DIR")
    if args.limit < 1:
        raise MemoryStoreError("--limit must be at least 1")
    with _open(args) as store:
        try:
            result = store.search(args.query, scope, kinds=args.kind, limit=args.limit, level=level)
        except ValueError as exc:
            raise MemoryStoreError(str(exc)) from exc
    if args.json:
        for h in result.hits:
            print(json.dumps(_dump(h.entry, score=round(h.score, 4), mode=result.mode), ensure_ascii=False))
        return 0
    if not result.hits:
        print(f"nothing matched {args.query!r} ({label}; {result.mode} search)")
        return 0
    now = datetime.now(UTC).timestamp()
    print(_table([_row(h.entry, now, h.score) for h in result.hits], ["SCORE", *HEADERS]))
    print(f"\n{len(result.hits)} result(s) ({label}; {result.mode} search)")
    return 0


def _forget(args: argparse.Namespace) -> int:
    from ..memory.manual import check_id, forget_memory

    check_id(args.id)  # before opening a store
    with _open(args) as store:
        entry, already = forget_memory(store, args.id)
    if args.json:
        print(json.dumps(_dump(entry, already_retracted=already), ensure_ascii=False))
    elif already:
        print(f"{entry.id} was already forgotten: {mask_secrets(entry.content)}")
    else:
        print(f"forgot {entry.id} ({entry.kind}, {entry.level}): {mask_secrets(entry.content)}")
    return 0


def _export(args: argparse.Namespace) -> int:
    scope, level, label = _scope(args) if (args.project or args.global_only) else (None, None, "all scopes")
    with _open(args) as store:
        entries = store.list_entries(scope, level=level, kinds=args.kind, include_retracted=not args.live_only)
    entries.sort(key=lambda e: (e.created_at, e.id))
    lines = [json.dumps(_dump(e), ensure_ascii=False) for e in entries]
    if args.output is None:
        for line in lines:
            print(line)
    else:
        try:
            args.output.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        except OSError as exc:
            raise MemoryStoreError(f"cannot write {args.output}: {exc}") from exc
        print(f"exported {len(lines)} memories ({label}) to {args.output}", file=sys.stderr)
    return 0


def _add(args: argparse.Namespace) -> int:
    from ..memory.manual import add_memory

    project = args.project if args.project is not None else Path.cwd()
    if not project.is_dir():
        raise MemoryStoreError(f"project folder {project} does not exist")
    scope = Scope.for_project(project) if args.scope == "project" else Scope.for_global()
    with _open(args, create=True) as store:
        entry, created = add_memory(store, args.kind, args.text, scope, level=args.scope,
                                    confidence=args.confidence, pinned=args.pin, source="cli")
    if args.json:
        print(json.dumps(_dump(entry, created=created), ensure_ascii=False))
    else:
        verb = "remembered" if created else "already known, reinforced"
        print(f"{verb} {entry.id} ({entry.kind}, {entry.level}): {mask_secrets(entry.content)}")
    return 0


def _import(args: argparse.Namespace) -> int:
    if str(args.file) == "-":
        lines = sys.stdin.read().splitlines()
    else:
        try:
            lines = args.file.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise MemoryStoreError(f"cannot read {args.file}: {exc.strerror or exc}") from exc
        except UnicodeDecodeError as exc:
            raise MemoryStoreError(f"{args.file} is not UTF-8 text: {exc.reason}") from exc
    with _open(args, create=True) as store:
        try:
            added, skipped = store.import_jsonl(lines)
        except ValueError as exc:
            raise MemoryStoreError(f"{args.file}: {exc}; nothing was imported") from exc
        where = store.path
    more = f" ({skipped} already there)" if skipped else ""
    print(f"imported {added} memories{more} into {where}")
    return 0
