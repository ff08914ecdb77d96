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
from pathlib import Path
from typing import Any

from . import export, list_runs, rebuild, replay, show
from .opening import default_folders

__all__ = ["default_folders", "register"]


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
    p_list.set_defaults(func=list_runs.list_runs)

    p_show = sub.add_parser("show", help="show a run's events (all, or only some kinds)")
    common(p_show)
    p_show.add_argument("--turn", type=int, default=None, help="only this turn")
    p_show.add_argument("--agent", default=None, help="only this pool member")
    p_show.add_argument("--cognitive", action="store_true", help="only cognitive primitive calls (recall, pin, unpin)")
    p_show.add_argument("--context", action="store_true", help="context decisions per message, pinned blocks as [PIN]")
    p_show.add_argument("--errors", action="store_true", help="only errors, failed tools and failed turns")
    p_show.set_defaults(func=show.show)

    p_replay = sub.add_parser("replay", help="replay a turn: decision table, prompt, active pins")
    common(p_replay)
    p_replay.add_argument("--turn", type=int, default=None, help="the turn (without it: list turns with evidence)")
    p_replay.add_argument("--step", type=int, default=0, help="LLM call within the turn (tool loop), default 0")
    p_replay.add_argument("--agent", default=None, help="pool member (its own pins and decisions)")
    only = p_replay.add_mutually_exclusive_group()
    only.add_argument("--decision-only", action="store_true", help="decisions only, no prompt content (safe to share)")
    only.add_argument("--prompt-only", action="store_true", help="prompt and pins only")
    p_replay.set_defaults(func=replay.replay)

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
    p_rebuild.set_defaults(func=rebuild.rebuild)

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
    p_export.set_defaults(func=export.export)

    parser.set_defaults(func=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2
