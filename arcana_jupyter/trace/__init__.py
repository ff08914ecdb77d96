"""Traces: one JSONL file per run, written as it happens, read back for replay and rebuild.

See docs/TRACE_FORMAT.md for the format. ``TraceWriter`` writes (thread-safe, flushed per
event, secrets redacted), ``TraceReader`` reads (indexed, incremental, tolerant of a torn last
line), ``PromptReplay`` is one replayed LLM call.
"""

from .events import TraceEvent
from .reader import TraceReader
from .recorded_prompt import PromptReplay
from .writer import TraceWriter, new_run_id

__all__ = ["PromptReplay", "TraceEvent", "TraceReader", "TraceWriter", "new_run_id"]
