"""Traces: one JSONL file per run, written as it happens, read back for replay and rebuild.

See docs/TRACE_FORMAT.md for the format. ``TraceWriter`` writes (thread-safe, flushed per
event, secrets redacted), ``TraceReader`` reads (indexed, incremental, tolerant of a torn last
line), ``PromptReplay`` is one replayed LLM call.
"""

from .events import EVENT_TYPES, TRACE_FORMAT_VERSION, EventType, TraceContent, TraceEvent
from .reader import (
    TRACE_DIR_SUFFIX,
    ReaderStats,
    RunInfo,
    TraceReader,
    env_trace_dir,
    notebook_trace_dir,
    trace_dir_for_notebook,
)
from .recorded_prompt import MessageDiff, PromptReplay, PromptSnapshot, decision_key, diff_decisions
from .redact import REDACTED, Redactor, redact_text
from .writer import TraceWriter, new_run_id, utc_timestamp

__all__ = [
    "EVENT_TYPES",
    "REDACTED",
    "TRACE_DIR_SUFFIX",
    "TRACE_FORMAT_VERSION",
    "EventType",
    "MessageDiff",
    "PromptReplay",
    "PromptSnapshot",
    "ReaderStats",
    "Redactor",
    "RunInfo",
    "TraceContent",
    "TraceEvent",
    "TraceReader",
    "TraceWriter",
    "decision_key",
    "diff_decisions",
    "env_trace_dir",
    "new_run_id",
    "notebook_trace_dir",
    "redact_text",
    "trace_dir_for_notebook",
    "utc_timestamp",
]
