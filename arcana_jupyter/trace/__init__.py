"""Traces: one JSONL file per run, written as it happens, read back for replay and rebuild.

See docs/TRACE_FORMAT.md for the format. ``TraceWriter`` writes (thread-safe, flushed per
event, secrets redacted), ``TraceReader`` reads (indexed, incremental, tolerant of a torn last
line), ``PromptReplay`` is one replayed LLM call.
"""

from ..compat import moved as _moved
from .events import TraceEvent
from .reader import TraceReader
from .recorded_prompt import PromptReplay
from .writer import TraceWriter, new_run_id

__all__ = ["PromptReplay", "TraceEvent", "TraceReader", "TraceWriter", "new_run_id"]


# Names exported before 0.1's public surface (issue 25), answered for one more release with a warning.
_MOVED = {
    "EVENT_TYPES": "arcana_jupyter.trace.events",
    "EventType": "arcana_jupyter.trace.events",
    "MessageDiff": "arcana_jupyter.trace.recorded_prompt",
    "PromptSnapshot": "arcana_jupyter.trace.recorded_prompt",
    "REDACTED": "arcana_jupyter.trace.redact",
    "ReaderStats": "arcana_jupyter.trace.reader",
    "Redactor": "arcana_jupyter.trace.redact",
    "RunInfo": "arcana_jupyter.trace.reader",
    "TRACE_DIR_SUFFIX": "arcana_jupyter.trace.reader",
    "TRACE_FORMAT_VERSION": "arcana_jupyter.trace.events",
    "TraceContent": "arcana_jupyter.trace.events",
    "decision_key": "arcana_jupyter.trace.recorded_prompt",
    "diff_decisions": "arcana_jupyter.trace.recorded_prompt",
    "env_trace_dir": "arcana_jupyter.trace.reader",
    "notebook_trace_dir": "arcana_jupyter.trace.reader",
    "redact_text": "arcana_jupyter.trace.redact",
    "trace_dir_for_notebook": "arcana_jupyter.trace.reader",
    "utc_timestamp": "arcana_jupyter.trace.writer",
}
__getattr__ = _moved("arcana_jupyter.trace", _MOVED)
