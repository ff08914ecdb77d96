"""``arcana trace list|show|replay|rebuild|export``: read, replay, rebuild and export recorded runs.

RUN is a run id (or a unique prefix of one, or ``latest``) or a path: a ``<run_id>.jsonl`` file, a
folder of traces (its latest run is used) or a notebook (``X.ipynb``: the runs its outputs recorded
— their ``trace_path`` — else the runs in ``X.arcana/``; the latest is used, ``--agent`` picks a
session's). A run id is looked up in ``--dir DIR`` when given; otherwise in every default folder:
``$ARCANA_TRACE_DIR``, the ``*.arcana/`` folders beside the current folder's notebooks (and the
folders their outputs recorded), and ``./traces``. ``arcana trace list [NOTEBOOK|FOLDER]`` lists
the same. Problems found in a file (a torn last line, a corrupt line, which is skipped) are printed
to stderr as warnings; ``--strict`` makes a corrupt line an error instead.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..context.decisions import ContextDecision
from ..exceptions import CorruptTraceError, TraceError
from ..schema.events import (
    METADATA_MODELS,
    CognitivePrimitiveMetadata,
    ContextActionMetadata,
    ContextDecisionMetadata,
    ErrorMetadata,
    LlmCallMetadata,
    MemoryReadMetadata,
    MemoryWriteMetadata,
    PromptSnapshotMetadata,
    Record,
    RunEndMetadata,
    RunStartMetadata,
    StateChangeMetadata,
    ToolCallMetadata,
    TurnEndMetadata,
    TurnStartMetadata,
    UserMessageMetadata,
)
from ..trace.events import TraceEvent
from ..trace.reader import TRACE_DIR_SUFFIX, RunInfo, TraceReader, notebook_trace_dir
from ..trace.recorded_prompt import (
    MessageDiff,
    format_context_decisions,
    format_replay,
    one_line,
)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "trace",
        help="list, show, replay and rebuild recorded runs",
        description="Inspect recorded runs: events, per-message context decisions, prompts, pins; rebuild a turn's "
        "prompt and verify its digest.",
    )
    sub = parser.add_subparsers(dest="trace_command", metavar="ACTION")

    def common(p: argparse.ArgumentParser, *, run: bool = True) -> None:
        if run:
            p.add_argument("run", metavar="RUN", help="run id (or unique prefix, or 'latest'), a .jsonl file, "
                                                      "a trace folder or a notebook")
        p.add_argument("--dir", type=Path, default=None,
                       help="trace folder (default: $ARCANA_TRACE_DIR, the *.arcana/ folders of this folder's "
                            "notebooks and ./traces)")
        p.add_argument("--strict", action="store_true", help="a corrupt line is an error (default: skip it, warn)")
        p.add_argument("--json", action="store_true", help="JSON output")

    p_list = sub.add_parser("list", help="list the runs in the trace folder(s)")
    p_list.add_argument("target", nargs="?", default=None, metavar="NOTEBOOK|FOLDER",
                        help="a notebook (its runs) or a trace folder (default: the default folders, see --dir)")
    common(p_list, run=False)
    p_list.set_defaults(func=_list)

    p_show = sub.add_parser("show", help="show a run's events (all, or only some kinds)")
    common(p_show)
    p_show.add_argument("--turn", type=int, default=None, help="only this turn")
    p_show.add_argument("--agent", default=None, help="only this pool member")
    p_show.add_argument("--cognitive", action="store_true", help="only cognitive primitive calls (recall, pin, unpin)")
    p_show.add_argument("--context", action="store_true", help="context decisions per message, pinned blocks as [PIN]")
    p_show.add_argument("--errors", action="store_true", help="only errors, failed tools and failed turns")
    p_show.set_defaults(func=_show)

    p_replay = sub.add_parser("replay", help="replay a turn: decision table, prompt, active pins")
    common(p_replay)
    p_replay.add_argument("--turn", type=int, default=None, help="the turn (without it: list turns with evidence)")
    p_replay.add_argument("--step", type=int, default=0, help="LLM call within the turn (tool loop), default 0")
    p_replay.add_argument("--agent", default=None, help="pool member (its own pins and decisions)")
    only = p_replay.add_mutually_exclusive_group()
    only.add_argument("--decision-only", action="store_true", help="decisions only, no prompt content (safe to share)")
    only.add_argument("--prompt-only", action="store_true", help="prompt and pins only")
    p_replay.set_defaults(func=_replay)

    p_rebuild = sub.add_parser("rebuild", help="rebuild a turn's prompt, verify its digest, try other settings")
    common(p_rebuild)
    p_rebuild.add_argument("--turn", type=int, required=True, help="the turn to rebuild")
    p_rebuild.add_argument("--step", type=int, default=0, help="LLM call within the turn, default 0")
    p_rebuild.add_argument("--agent", default=None, help="pool member")
    p_rebuild.add_argument("--strategy", default=None,
                           choices=["auto", "passthrough", "tail_preserve", "aggressive_truncate", "llm_summarize"],
                           help="counterfactual strategy")
    p_rebuild.add_argument("--window", type=int, default=None, help="counterfactual total_window (tokens)")
    p_rebuild.add_argument("--reserve", type=int, default=None, help="counterfactual response_reserve (tokens)")
    p_rebuild.add_argument("--mode", choices=["classic", "adaptive"], default=None,
                           help="counterfactual mode: classic (no adaptive-context sections, the whole transcript)")
    p_rebuild.add_argument("--relevance", choices=["lexical", "semantic"], default=None,
                           help="counterfactual relevance ranking: BM25 only, or with the embedding model")
    p_rebuild.set_defaults(func=_rebuild)

    p_export = sub.add_parser("export", help="send a recorded run elsewhere: --otlp (OpenTelemetry spans)")
    common(p_export)
    p_export.add_argument("--otlp", action="store_true",
                          help="as OpenTelemetry GenAI spans over OTLP/HTTP (needs pip install 'arcana-jupyter[otel]')")
    p_export.add_argument("--endpoint", default=None, metavar="URL",
                          help="collector base URL (http://host:4318; /v1/traces is added) or full traces URL "
                               "(default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT, else "
                               "http://localhost:4318)")
    p_export.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                          help="how long to wait for the collector to take every span (default 30)")
    p_export.set_defaults(func=_export)

    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


# -- opening ------------------------------------------------------------------------------------


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return str(path)


def default_folders(cwd: Path | None = None) -> list[Path]:
    """Where runs are looked for without ``--dir``: ``$ARCANA_TRACE_DIR``, the trace folders of the
    notebooks in ``cwd`` (recorded in their outputs, and ``X.arcana/`` beside ``X.ipynb``), any other
    ``*.arcana/`` folder there, and ``./traces``. Only folders that exist."""
    from ..report.sources import notebook_trace_files

    here = Path.cwd() if cwd is None else cwd
    found: list[Path] = []
    env = os.environ.get("ARCANA_TRACE_DIR")
    if env:
        found.append(Path(env))
    for notebook in sorted(here.glob("*.ipynb")):
        try:
            runs, guess = notebook_trace_files(notebook)
        except TraceError:
            runs, guess = [], notebook_trace_dir(notebook)
        found += [r.path.parent for r in runs if r.path is not None and r.source != "embedded"] + [guess]
    found += sorted(here.glob(f"*{TRACE_DIR_SUFFIX}"))
    found.append(here / "traces")
    out: list[Path] = []
    seen: set[Path] = set()
    for folder in found:
        if folder.is_dir() and folder.resolve() not in seen:
            seen.add(folder.resolve())
            out.append(folder if not folder.is_absolute() else Path(_shown(folder)))
    return out


def _no_folders() -> TraceError:
    return TraceError(
        f"no traces found from {Path.cwd()}: no *.arcana/ folder beside a notebook here, no ./traces, and "
        "ARCANA_TRACE_DIR is not set; pass --dir DIR, a notebook (X.ipynb) or a trace file"
    )


def _folders(args: argparse.Namespace) -> list[Path]:
    if args.dir is not None:
        if not args.dir.exists():
            raise TraceError(f"trace folder {args.dir} does not exist; pass --dir DIR or set ARCANA_TRACE_DIR")
        return [args.dir]
    return default_folders()


def _find(args: argparse.Namespace, run: str) -> tuple[TraceReader, str]:
    """The folder holding run id ``run`` (exact, unique prefix or ``latest``) among the folders searched."""
    folders = _folders(args)
    if not folders:
        raise _no_folders()
    if len(folders) == 1:
        reader = TraceReader(folders[0], strict=args.strict)
        return reader, reader.run_info(run).run_id
    readers = [TraceReader(f, strict=args.strict) for f in folders]
    if run == "latest":
        runs = [(info.started or info.run_id, info.run_id, r) for r in readers for info in r.list_runs()]
        if not runs:
            raise TraceError(f"no runs in {', '.join(_shown(f) for f in folders)}")
        _, run_id, reader = max(runs, key=lambda x: (x[0], x[1]))
        return reader, run_id
    for reader in readers:
        if run in reader.run_ids():
            return reader, run
    matches = [(r, run_id) for r in readers for run_id in r.run_ids() if run_id.startswith(run)]
    if len(matches) == 1:
        return matches[0]
    where = ", ".join(_shown(f) for f in folders)
    if matches:
        raise TraceError(f"run {run!r} is ambiguous in {where}: matches "
                         f"{', '.join(sorted(m[1] for m in matches)[:20])}; give more of the id")
    raise TraceError(f"unknown run {run!r} in {where} (see `arcana trace list`, or pass --dir DIR)")


def _open_notebook(args: argparse.Namespace, notebook: Path) -> tuple[TraceReader, str]:
    """A notebook as RUN: its latest recorded run (of ``--agent`` when given), else its folder's latest."""
    from ..report.sources import notebook_trace_files

    runs, guess = notebook_trace_files(notebook)
    if not notebook.is_file() and not guess.is_dir():
        raise TraceError(f"no notebook at {notebook} (and no trace folder {guess.name}/ beside it)")
    agent = getattr(args, "agent", None)
    usable = [r for r in runs if r.path is not None and r.source != "embedded" and (agent is None or r.agent == agent)]
    for r in runs:
        for problem in r.problems if r.path is None else []:
            print(f"warning: {notebook.name}: {problem}", file=sys.stderr)
    if usable:
        dated = sorted(usable, key=lambda r: (TraceReader(r.path).run_info(r.run_id).started or "", r.run_id))  # type: ignore[arg-type]
        chosen = dated[-1]
        if len({r.run_id for r in usable}) > 1:
            print(f"note: {notebook.name} shows {len(usable)} runs; using the latest, {chosen.run_id} "
                  f"(others: {', '.join(r.run_id for r in dated[:-1])})", file=sys.stderr)
        assert chosen.path is not None
        return TraceReader(chosen.path.parent, strict=args.strict), chosen.run_id
    if guess.is_dir():
        reader = TraceReader(guess, strict=args.strict)
        ids = reader.run_ids()
        if ids:
            return reader, reader.run_info("latest").run_id
    raise TraceError(f"notebook {notebook} has no recorded runs (no arcana output with a trace, no "
                     f"{guess.name}/ beside it); run a %%arcana cell there first")


def _open(args: argparse.Namespace) -> tuple[TraceReader, str]:
    """The reader and the run id RUN names (see the module docstring)."""
    run: str = args.run
    if len(run) > 1000 or "\x00" in run:
        raise TraceError("RUN is too long or not a name; give a run id, a .jsonl file, a folder or a notebook")
    candidate = Path(run)
    if not _nameable(candidate):
        raise TraceError(f"no run, trace file, folder or notebook named {_clip(run)} (the name is too long for "
                         "this file system); give a run id, a .jsonl file, a folder or a notebook")
    if candidate.suffix == ".ipynb":
        return _open_notebook(args, candidate)
    if candidate.suffix == ".jsonl" and candidate.is_file():
        return TraceReader(candidate, strict=args.strict), candidate.stem
    if candidate.is_dir() and (args.dir is None or candidate.resolve() != Path(args.dir).resolve()):
        reader = TraceReader(candidate, strict=args.strict)
        runs = reader.run_ids()
        if not runs:
            raise TraceError(f"no trace files (*.jsonl) in {candidate}")
        if len(runs) > 1:
            print(f"note: {candidate} holds {len(runs)} runs; showing the latest, {runs[-1]}", file=sys.stderr)
        return reader, runs[-1]
    if candidate.suffix == ".jsonl":
        raise TraceError(f"trace file {candidate} does not exist")
    return _find(args, run)


def _nameable(path: Path) -> bool:
    """Whether the OS can look ``path`` up at all (no component over the file system's name limit)."""
    try:
        path.exists()
    except (OSError, ValueError):
        return False
    return True


def _clip(text: str, limit: int = 80) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"


_SHAPE_ERRORS = (AttributeError, TypeError, ValueError, KeyError, IndexError)
"""What formatting type-confused metadata can raise (pydantic's ValidationError is a ValueError)."""


def _shape_problem(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:160]}"


def _warn(reader: TraceReader, run_id: str | None = None) -> None:
    for warning in reader.warnings_for(run_id) if run_id is not None else reader.warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _corrupt(exc: CorruptTraceError) -> int:
    print(
        f"arcana: error: {exc.path}:{exc.line}: {exc.problem} — that line is not a valid trace event; "
        f"repair or delete it, or run without --strict to skip it",
        file=sys.stderr,
    )
    return 1


def _dump(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False))


def _ranges(values: Iterable[int]) -> str:
    """``[1, 2, 3, 5]`` -> ``1-3, 5``."""
    out: list[str] = []
    items = sorted(set(values))
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1] == items[j] + 1:
            j += 1
        out.append(str(items[i]) if i == j else f"{items[i]}-{items[j]}")
        i = j + 1
    return ", ".join(out) or "none"


def _seq(event: TraceEvent, fallback: int) -> int:
    try:
        return int(event.event_id.rsplit("_", 1)[-1])
    except ValueError:
        return fallback


# -- list ---------------------------------------------------------------------------------------


def _list_sources(args: argparse.Namespace) -> list[tuple[TraceReader, list[str] | None]]:
    """(reader, the run ids to list or ``None`` for all) for ``arcana trace list [TARGET]``."""
    target = Path(args.target) if args.target else None
    if target is not None and not _nameable(target):
        raise TraceError(f"no notebook or trace folder named {_clip(str(args.target))} (the name is too long)")
    if target is not None and target.suffix == ".ipynb":
        from ..report.sources import notebook_trace_files

        if not target.is_file():
            raise TraceError(f"no notebook at {target}")
        runs, guess = notebook_trace_files(target)
        for r in runs:
            for problem in r.problems if r.path is None else []:
                print(f"warning: {target.name}: {problem}", file=sys.stderr)
        sources: list[tuple[TraceReader, list[str] | None]] = []
        if guess.is_dir():
            sources.append((TraceReader(guess, strict=args.strict), None))
        outside = [r for r in runs if r.path is not None and r.source != "embedded"
                   and r.path.parent.resolve() != guess.resolve()]
        for r in outside:
            assert r.path is not None
            sources.append((TraceReader(r.path.parent, strict=args.strict), [r.run_id]))
        if not sources:
            raise TraceError(f"notebook {target} has no recorded runs (no arcana output with a trace, no "
                             f"{guess.name}/ beside it)")
        return sources
    if target is not None:
        if not target.is_dir():
            raise TraceError(f"{target} is neither a notebook (.ipynb) nor a trace folder")
        return [(TraceReader(target, strict=args.strict), None)]
    folders = _folders(args)
    if not folders:
        raise _no_folders()
    return [(TraceReader(f, strict=args.strict), None) for f in folders]


def _list(args: argparse.Namespace) -> int:
    sources = _list_sources(args)
    rows: list[tuple[RunInfo, TraceReader]] = []
    try:
        for reader, only in sources:
            for info in reader.list_runs():
                if only is None or info.run_id in only:
                    rows.append((info, reader))
    except CorruptTraceError as exc:
        return _corrupt(exc)
    except _SHAPE_ERRORS as exc:
        raise TraceError(f"cannot list the runs: a trace holds metadata of an unexpected shape "
                         f"({_shape_problem(exc)})") from None
    folders = list(dict.fromkeys(_shown(r.trace_dir) for r, _ in sources))
    if args.json:
        _dump([{**info.model_dump(mode="json"), "folder": _shown(reader.trace_dir)} for info, reader in rows])
    elif not rows:
        print(f"no runs in {', '.join(folders)} (pass --dir DIR or set ARCANA_TRACE_DIR)")
    else:
        many = len(folders) > 1
        print(f"{'run':<26}  {'started':<16}  {'model':<24}  {'turns':>5}  {'agents':<16}  {'status':<8}  errors"
              + ("  folder" if many else ""))
        for r, reader in rows:
            started = (r.started or "")[:16]
            agents = ",".join(r.agents) or "-"
            line = (f"{r.run_id:<26}  {started:<16}  {(r.model or '-'):<24}  {r.turns:>5}  {agents:<16}  "
                    f"{r.status:<8}  {r.errors:<6}" + (f"  {_shown(reader.trace_dir)}" if many else ""))
            print(line.rstrip())
    for reader, _ in sources:
        _warn(reader)
    return 0


# -- show ---------------------------------------------------------------------------------------


def _primitive_detail(md: CognitivePrimitiveMetadata) -> str:
    prim = md.primitive
    # args and result are each primitive's own free-form dicts (docs/TRACE_FORMAT.md)
    args = md.args if isinstance(md.args, dict) else {}
    result = md.result if isinstance(md.result, dict) else {}
    if prim == "recall":
        turn = args.get("turn", result.get("turn"))
        if result.get("found"):
            n = len(result.get("messages") or [])
            return f"turn={turn} → {n} message{'s' if n != 1 else ''}"
        return f"turn={turn} → not found ({one_line(str(result.get('note') or ''), 60)})"
    if prim == "pin":
        if result.get("pinned"):
            label = result.get("label", args.get("label"))
            text = (
                f"pin_id={result.get('pin_id')} label={label!r}"
                if label is not None
                else f"pin_id={result.get('pin_id')}"
            )
            if result.get("until_turn") is not None:
                text += f" until_turn={result['until_turn']}"
            return text + (" (already pinned)" if result.get("already_pinned") else "")
        return f"rejected: {result.get('reason') or result.get('error', 'unknown')}"
    if prim == "unpin":
        pin_id = result.get("pin_id", args.get("pin_id"))
        if result.get("unpinned", result.get("ok")):
            return f"pin_id={pin_id} ok"
        return f"pin_id={pin_id} failed: {result.get('reason') or result.get('error', 'unknown')}"
    return one_line(json.dumps(args, ensure_ascii=False), 60)


def _detail(ev: TraceEvent) -> str:
    m = METADATA_MODELS.get(ev.event_type, Record).read(ev.metadata)
    if isinstance(m, RunStartMetadata):
        extra = f" resumed_from={m.resumed_from}" if m.resumed_from else ""
        return f"model={m.model}{extra}"
    if isinstance(m, TurnStartMetadata):
        return f"input_tokens={m.input_tokens}"
    if isinstance(m, UserMessageMetadata):
        return f"#{m.history_index} {one_line(m.message.content if m.message else None, 60)}"
    if isinstance(m, ContextDecisionMetadata):
        d, b = m.decision, m.budget
        outcomes: dict[str, int] = {}
        for x in (d.decisions if d else None) or []:
            outcomes[x.outcome] = outcomes.get(x.outcome, 0) + 1
        counts = " ".join(f"{k}={v}" for k, v in sorted(outcomes.items()))
        return (f"step={m.step} strategy={d.strategy if d else None} {counts} "
                f"used={b.used if b else None}/{b.available if b else None} digest={m.request_digest}")
    if isinstance(m, PromptSnapshotMetadata):
        return f"step={m.step} {len(m.messages)} messages model={m.model}"
    if isinstance(m, LlmCallMetadata):
        msg = m.message
        calls = [
            c.get("name") or (c.get("function") or {}).get("name")
            for c in (msg.tool_calls if msg else None) or []
        ]
        what = f"→ {', '.join(map(str, calls))}()" if calls else one_line(msg.content if msg else None, 40)
        finish = ",".join(r for r in m.finish_reasons or [] if r is not None)
        usage = "".join(
            f" {label}={n}" for label, n in (("in", m.input_tokens), ("out", m.output_tokens)) if n is not None
        )
        return f"step={m.step}{usage}{' finish=' + finish if finish else ''} #{m.history_index} {what}"
    if isinstance(m, ToolCallMetadata):
        ok = "ok" if m.ok is not False else f"error {(m.error.type if m.error else None) or ''}".rstrip()
        return f"{m.name} {ok} #{m.history_index}{' (intercepted)' if m.intercepted else ''}"
    if isinstance(m, CognitivePrimitiveMetadata):
        return f"{m.primitive!s:<10}{_primitive_detail(m)}"
    if isinstance(m, StateChangeMetadata):
        return f"{m.object_id} {m.kind} {m.from_tier}→{m.to_tier} ({m.cause})"
    if isinstance(m, ContextActionMetadata):
        return f"{m.action} {m.object_id or ''}".rstrip()
    if isinstance(m, MemoryReadMetadata):
        return f"{m.purpose} {len(m.results)} results for {one_line(m.query, 40)!s}"
    if isinstance(m, MemoryWriteMetadata):
        return f"{m.op} {m.entry.kind if m.entry else None} {m.entry.id if m.entry else None}"
    if isinstance(m, ErrorMetadata):
        return f"{m.where} {m.type}: {one_line(m.message, 80)}"
    if isinstance(m, TurnEndMetadata):
        return f"status={m.status} steps={m.steps} {one_line(m.reply, 50)}"
    if isinstance(m, RunEndMetadata):
        return f"turns={m.turns}"
    return one_line(json.dumps(ev.metadata, ensure_ascii=False, default=str), 80)


def _safe_detail(ev: TraceEvent) -> str:
    """:func:`_detail`, or what is wrong with the event's metadata: one odd event never hides the run."""
    try:
        return _detail(ev)
    except _SHAPE_ERRORS as exc:
        return f"(metadata of an unexpected shape: {_shape_problem(exc)})"


def _event_line(ev: TraceEvent, n: int, *, with_turn: bool, with_agent: bool) -> str:
    head = f"{n:>3}. {ev.event_type:<22}{ev.ts[:16]}  "
    if with_turn:
        head += f"{('t' + str(ev.turn)) if ev.turn is not None else '-':<5}"
    if with_agent:
        head += f"{ev.agent:<8}"
    return (head + _safe_detail(ev)).rstrip()


def _cognitive_line(ev: TraceEvent, n: int, with_agent: bool) -> str:
    """Seed 000: `` 15. cognitive_primitive   2026-04-18T12:34  recall    turn=3 → 2 messages``."""
    md = CognitivePrimitiveMetadata.read(ev.metadata)
    try:
        detail = _primitive_detail(md)
    except _SHAPE_ERRORS as exc:
        detail = f"(metadata of an unexpected shape: {_shape_problem(exc)})"
    line = f"{n:>3}. {ev.event_type:<22}{ev.ts[:16]}  {md.primitive!s:<10}{detail}"
    return line + (f"  (agent {ev.agent})" if with_agent else "")


def _is_error(ev: TraceEvent) -> bool:
    return (
        ev.event_type == "error"
        or (ev.event_type == "turn_end" and TurnEndMetadata.read(ev.metadata).status not in (None, "ok"))
        or (ev.event_type == "tool_call" and ToolCallMetadata.read(ev.metadata).ok is False)
    )


def _show(args: argparse.Namespace) -> int:
    try:
        reader, run_id = _open(args)
        return _show_run(args, reader, run_id)
    except CorruptTraceError as exc:
        return _corrupt(exc)
    except _SHAPE_ERRORS as exc:
        raise TraceError(f"cannot show run {_clip(args.run)}: the trace holds metadata of an unexpected shape "
                         f"({_shape_problem(exc)}); `arcana trace show RUN --json` prints it as recorded") from None


def _show_run(args: argparse.Namespace, reader: TraceReader, run_id: str) -> int:
    info = reader.run_info(run_id)
    if args.agent is not None and args.agent not in info.agents:
        raise TraceError(f"run {run_id} has no agent {args.agent!r}; agents: {', '.join(info.agents) or 'none'}")
    if args.turn is not None:
        turns = reader.list_turns(run_id, args.agent)
        if args.turn not in turns:
            raise TraceError(f"run {run_id} has no turn {args.turn}{_of_agent(args.agent)}; turns: {_ranges(turns)}")
    filtered = args.cognitive or args.context or args.errors
    types: list[str] | None = None
    if filtered:
        types = []
        if args.cognitive:
            types.append("cognitive_primitive")
        if args.context:
            types.append("context_decision")
        if args.errors:
            types += ["error", "turn_end", "tool_call"]
    events = reader.events(run_id, event_types=types, turn=args.turn, agent=args.agent)
    numbered = [(_seq(ev, i + 1), ev) for i, ev in enumerate(events)]
    if args.errors:
        numbered = [(n, ev) for n, ev in numbered if ev.event_type not in ("turn_end", "tool_call") or _is_error(ev)]
    multi_agent = len([a for a in info.agents if a != "pool"]) > 1 and args.agent is None
    if args.json:
        _dump([ev.model_dump(mode="json") for _, ev in numbered])
        _warn(reader, run_id)
        return 0
    print(
        f"Run {run_id}  model={info.model or '-'}  status={info.status}  turns={info.turns}  "
        f"agents={','.join(info.agents) or '-'}  events={info.events}"
    )
    if not filtered:
        for n, ev in numbered:
            print(_event_line(ev, n, with_turn=True, with_agent=multi_agent))
    sections = [flag for flag in ("cognitive", "context", "errors") if getattr(args, flag)]
    for flag in sections:
        if len(sections) > 1:
            print(f"\n[{flag}]")
        if flag == "cognitive":
            rows = [(n, ev) for n, ev in numbered if ev.event_type == "cognitive_primitive"]
            if not rows:
                print("no cognitive primitive calls recorded")
            for n, ev in rows:
                print(_cognitive_line(ev, n, multi_agent))
        elif flag == "context":
            rows = [(n, ev) for n, ev in numbered if ev.event_type == "context_decision"]
            if not rows:
                print("no context decisions recorded")
            for _, ev in rows:
                _print_context(ev, multi_agent)
        else:
            rows = [(n, ev) for n, ev in numbered if _is_error(ev)]
            warnings = reader.warnings_for(run_id)
            if not rows and not warnings:
                print("no errors recorded")
            for n, ev in rows:
                print(_event_line(ev, n, with_turn=True, with_agent=multi_agent))
            for w in warnings:
                print(f"  file: {w}")
    _warn(reader, run_id)
    return 0


def _of_agent(agent: str | None) -> str:
    return f" for agent {agent}" if agent else ""


def _print_context(ev: TraceEvent, with_agent: bool) -> None:
    md = ContextDecisionMetadata.read(ev.metadata)
    who = f"  (agent {ev.agent})" if with_agent else ""
    try:
        # validated on its own (not through md) so the message names the decision's own problem
        decision = ContextDecision.model_validate(ev.metadata.get("decision") or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "decision"
        print(f"\nTurn {ev.turn} step {md.step}  event {ev.event_id}: decision not readable "
              f"({exc.error_count()} problems, first: {first['msg']} at {where}){who}")
        return
    util = md.budget.utilization if md.budget is not None else decision.utilization_before
    print(f"\nTurn {ev.turn} step {md.step}  strategy={decision.strategy}  utilization={util:.2f}  "
          f"digest={md.request_digest}{who}")
    for line in format_context_decisions(decision):
        print(line)


# -- replay -------------------------------------------------------------------------------------


def _replay(args: argparse.Namespace) -> int:
    try:
        reader, run_id = _open(args)
        return _replay_run(args, reader, run_id)
    except CorruptTraceError as exc:
        return _corrupt(exc)
    except _SHAPE_ERRORS as exc:
        raise TraceError(f"cannot replay run {_clip(args.run)}: the trace holds metadata of an unexpected shape "
                         f"({_shape_problem(exc)}); `arcana trace show RUN --json` prints it as recorded") from None


def _replay_run(args: argparse.Namespace, reader: TraceReader, run_id: str) -> int:
    if args.turn is None:
        return _replay_list(args, reader, run_id)
    replay = reader.replay_prompt(run_id, args.turn, args.agent, step=args.step)
    if replay is None:
        agent = args.agent
        turns = reader.list_turns(run_id, agent)
        evidence = reader.replay_turns(run_id, agent)
        if args.turn not in turns:
            raise TraceError(
                f"run {run_id} has no turn {args.turn}{_of_agent(agent)}; turns: {_ranges(turns)}"
                f" (with replay evidence: {_ranges(evidence)})"
            )
        if args.turn in evidence:
            steps = reader.replay_prompt(run_id, args.turn, agent).steps  # type: ignore[union-attr]
            raise TraceError(f"turn {args.turn} of run {run_id} has no step {args.step}; steps: {_ranges(steps)}")
        raise TraceError(
            f"turn {args.turn} of run {run_id} has no recorded context decision; turns with replay evidence: "
            f"{_ranges(evidence)}"
        )
    sent = None
    if not args.decision_only:
        from ..context.rebuild import prompt_as_sent

        sent = prompt_as_sent(reader, run_id, args.turn, args.agent, step=args.step)
    if args.json:
        data = replay.model_dump(mode="json")
        data["prompt_sent"] = sent.model_dump(mode="json") if sent is not None else None
        if args.decision_only:  # no model or user text: safe to share
            data = {k: data[k] for k in ("run_id", "agent", "turn", "step", "steps", "context_decision",
                                         "context_report", "budget_snapshot", "request_digest", "history_len")}
            if data["context_decision"].get("summary") is not None:
                data["context_decision"]["summary"] = "[left out of a decision-only replay]"
        elif args.prompt_only:
            data = {k: data[k] for k in ("run_id", "agent", "turn", "step", "prompt_snapshot", "prompt_sent",
                                         "active_pins", "request_digest")}
        _dump(data)
    else:
        lines = format_replay(replay, decision=not args.prompt_only, prompt=not args.decision_only, sent=sent)
        for line in lines:
            print(line)
    _warn(reader, run_id)
    return 0


def _replay_list(args: argparse.Namespace, reader: TraceReader, run_id: str) -> int:
    agents = [args.agent] if args.agent else [a for a in reader.agents(run_id) if reader.replay_turns(run_id, a)]
    rows: list[dict[str, Any]] = []
    for agent in agents:
        events = reader.events(run_id, event_types=["context_decision", "prompt_snapshot"], agent=agent)
        snaps = {(e.turn, PromptSnapshotMetadata.read(e.metadata).step) for e in events
                 if e.event_type == "prompt_snapshot"}
        by_turn: dict[int, list[TraceEvent]] = {}
        for e in events:
            if e.event_type == "context_decision" and e.turn is not None:
                by_turn.setdefault(e.turn, []).append(e)
        for turn, decs in sorted(by_turn.items()):
            first = ContextDecisionMetadata.read(decs[0].metadata)
            d = first.decision
            outcomes: list[str] = [x.outcome for x in (d.decisions if d else None) or []]
            rows.append({
                "agent": agent, "turn": turn, "steps": len(decs), "strategy": d.strategy if d else None,
                "utilization": first.budget.utilization if first.budget else None,
                "messages": len(outcomes),
                **{k: outcomes.count(k) for k in ("kept", "compressed", "dropped", "summarized")},
                "snapshot": (turn, first.step) in snaps, "digest": first.request_digest,
            })
    if args.json:
        _dump(rows)
        _warn(reader, run_id)
        return 0
    who = f" (agent {args.agent})" if args.agent else ""
    across = f" across agents {', '.join(agents)}" if len(agents) > 1 else ""
    print(f"Run {run_id}{who}: {len(rows)} turn{'s' if len(rows) != 1 else ''} with replay evidence{across}")
    if rows:
        show_agent = len(agents) > 1
        head = f"  {'agent':<10}" if show_agent else ""
        print(f"{head}  {'turn':>4}  {'steps':>5}  {'strategy':<20}  {'util':>5}  {'msgs':>4}  {'kept':>4}  "
              f"{'compr':>5}  {'drop':>4}  {'summ':>4}  {'snapshot':<8}  digest")
        for r in rows:
            util = f"{r['utilization']:.2f}" if isinstance(r["utilization"], int | float) else "-"
            lead = f"  {r['agent']:<10}" if show_agent else ""
            print(f"{lead}  {r['turn']:>4}  {r['steps']:>5}  {r['strategy'] or '-':<20}  "
                  f"{util:>5}  {r['messages']:>4}  "
                  f"{r['kept']:>4}  {r['compressed']:>5}  {r['dropped']:>4}  {r['summarized']:>4}  "
                  f"{'yes' if r['snapshot'] else 'no':<8}  {r['digest'] or '-'}")
        print(f"\nReplay one: arcana trace replay {run_id} --turn N{' --agent NAME' if len(agents) > 1 else ''}")
    _warn(reader, run_id)
    return 0


# -- rebuild ------------------------------------------------------------------------------------


def _rebuild(args: argparse.Namespace) -> int:
    try:
        reader, run_id = _open(args)
        return _rebuild_run(args, reader, run_id)
    except CorruptTraceError as exc:
        return _corrupt(exc)
    except _SHAPE_ERRORS as exc:
        raise TraceError(f"cannot rebuild run {_clip(args.run)}: the trace holds metadata of an unexpected shape "
                         f"({_shape_problem(exc)}); `arcana trace show RUN --json` prints it as recorded") from None


def _diff_rows(diff: Sequence[MessageDiff]) -> list[str]:
    def side(outcome: str | None, fidelity: str | None) -> str:
        if outcome is None:
            return "(absent)"
        return f"{outcome} {fidelity}" if outcome == "compressed" and fidelity else outcome

    lines = [f"  {'idx':>3}  {'role':<10}  {'recorded':<16}  {'counterfactual':<16}  tokens"]
    for c in diff:
        tag = "" if c.source == "history" else f"  [{c.source}]"
        lines.append(
            f"  {c.index:>3}  {c.role:<10}  {side(c.recorded_outcome, c.recorded_fidelity):<16}  "
            f"{side(c.other_outcome, c.other_fidelity):<16}  {c.recorded_tokens or 0}→{c.other_tokens or 0}{tag}"
        )
    return lines


def _rebuild_run(args: argparse.Namespace, reader: TraceReader, run_id: str) -> int:
    from ..context.rebuild import rebuild_turn

    if args.window is not None and args.window <= 0:
        raise TraceError("--window must be a positive number of tokens")
    if args.reserve is not None and args.reserve < 0:
        raise TraceError("--reserve must be 0 or more tokens")
    result = rebuild_turn(
        reader, run_id, args.turn, args.agent, args.step,
        strategy=args.strategy, total_window=args.window, response_reserve=args.reserve,
        mode=args.mode, relevance=args.relevance,
    )
    if args.json:
        _dump(result.model_dump(mode="json"))
        _warn(reader, run_id)
        return 0 if result.verified else 3
    rec = result.recorded_settings
    print(f"Rebuild of run {run_id} turn {result.turn} step {result.step} (agent {result.agent})  "
          f"history={result.history_len} messages  model={result.model or '-'}")
    print(f"  recorded settings: strategy={rec['strategy']} window={rec['total_window']} "
          f"reserve={rec['response_reserve']}"
          f"  → {result.recorded_decision.strategy}")
    print(f"  recorded digest:   {result.recorded_digest or '-'}")
    print(f"  rebuilt digest:    {result.rebuilt_digest}  "
          f"{'verified: the recorded prompt is reproduced exactly' if result.verified else 'NOT VERIFIED'}")
    if result.counterfactual:
        s = result.settings
        b = result.budget
        print(f"\nCounterfactual: strategy={s['strategy']} window={s['total_window']} reserve={s['response_reserve']}"
              + (f" mode={result.mode} (recorded {result.recorded_mode})"
                 if result.mode != result.recorded_mode else "")
              + (f" relevance={result.relevance} (recorded {result.recorded_relevance})"
                 if result.relevance != result.recorded_relevance else "")
              + f"  → {result.decision.strategy}  utilization={b.utilization:.2f}")
        if result.diff:
            for line in _diff_rows(result.diff):
                print(line)
        else:
            print("  every message gets the same decision as recorded")
        delta = result.tokens - result.recorded_tokens
        print(f"  {len(result.diff)} message{'s' if len(result.diff) != 1 else ''} changed; prompt tokens "
              f"{result.recorded_tokens} → {result.tokens} ({delta:+d})")
    for note in result.notes:
        print(f"  note: {note}")
    _warn(reader, run_id)
    return 0 if result.verified else 3



# -- export -------------------------------------------------------------------------------------


def _export(args: argparse.Namespace) -> int:
    """``arcana trace export RUN --otlp``: the run's events as spans (trace/otel.py), sent and counted."""
    if not args.otlp:
        raise TraceError("choose what to export to: --otlp (OpenTelemetry spans over OTLP/HTTP)")
    from ..trace import otel

    otel.require_otel()  # one line naming the [otel] extra when it is missing
    try:
        reader, run_id = _open(args)
        events = reader.events(run_id)
    except CorruptTraceError as exc:
        return _corrupt(exc)
    _warn(reader, run_id)
    if not events:
        raise TraceError(f"run {run_id} has no events to export")
    pipeline = otel.OtelPipeline(args.endpoint)
    try:
        stats = otel.export_events(events, pipeline, timeout=max(0.1, args.timeout))
    finally:
        pipeline.shutdown(timeout=1.0)
    sent, total = stats["exported"], stats["spans"]
    where = stats["endpoint"]
    if args.json:
        _dump({"run_id": run_id} | stats)
    if sent == total:
        if not args.json:
            print(f"exported run {run_id}: {sent} spans to {where}")
        return 0
    left = total - sent
    raise TraceError(f"could not export run {run_id} to {where}: {sent} of {total} spans delivered, {stats['failed']} "
                     f"failed, {stats['dropped']} dropped, {stats['pending']} still pending after {args.timeout:g} s "
                     f"({left} not delivered: is the collector running and reachable?)")
