"""``arcana trace export RUN --otlp``: a recorded run sent elsewhere (OpenTelemetry spans)."""

from __future__ import annotations

import argparse

from ...exceptions import CorruptTraceError, TraceError
from .opening import corrupt, dump, open_run, warn


def export(args: argparse.Namespace) -> int:
    """``arcana trace export RUN --otlp``: the run's events as spans (trace/otel/), sent and counted."""
    if not args.otlp:
        raise TraceError("choose what to export to: --otlp (OpenTelemetry spans over OTLP/HTTP)")
    from ...trace import otel

    otel.require_otel()  # one line naming the [otel] extra when it is missing
    try:
        reader, run_id = open_run(args)
        events = reader.events(run_id)
    except CorruptTraceError as exc:
        return corrupt(exc)
    warn(reader, run_id)
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
        dump({"run_id": run_id} | stats)
    if sent == total:
        if not args.json:
            print(f"exported run {run_id}: {sent} spans to {where}")
        return 0
    left = total - sent
    raise TraceError(f"could not export run {run_id} to {where}: {sent} of {total} spans delivered, {stats['failed']} "
                     f"failed, {stats['dropped']} dropped, {stats['pending']} still pending after {args.timeout:g} s "
                     f"({left} not delivered: is the collector running and reachable?)")
