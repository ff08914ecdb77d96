"""Cognitive memory across sessions (seed 004): store, scopes, ranking, digest, learnings, tools.

Quick tour::

    from arcana_jupyter.memory import MemoryStore, MemoryTools, Scope

    store = MemoryStore(on_event=trace_hook)       # $ARCANA_MEMORY_URL (PostgreSQL), else ~/.arcana/memory.sqlite3
                                                   # (or $ARCANA_MEMORY_PATH); MemoryStore("postgresql://...")
    mem = MemorySession(store, Scope.for_project(notebook_dir), session_id)
    digest = mem.start()                           # digest.markdown -> the "memory_digest" section
    mem.specs, mem.handle_tool(name, arguments)    # the intercepted tools
    mem.note_reply(reply_text)                     # cited [m_…] ids count as acted on
    await mem.end(success=None, transcript=messages, summarise=summarise)
    store.close()
"""

from .digest import SECTION_NAME, Digest, DigestItem
from .embedding import Embedder
from .learnings import MAX_LEARNINGS, Learning, LearningsResult, parse_learnings
from .models import CONFIDENCE_LEVELS, KINDS, ConfidenceLevel, Kind, Level, MemoryEntry, Scope
from .session import MemorySession, SessionEnd
from .store import (
    ENV_PATH,
    ENV_URL,
    MemoryStore,
    RecallHit,
    RecallResult,
    SessionOutcome,
    default_memory_path,
    find_entry_ids,
)
from .tools import (
    FORGET_MEMORY_SPEC,
    MEMORY_TOOL_NAMES,
    MEMORY_TOOL_SPECS,
    RECALL_MEMORY_SPEC,
    REMEMBER_SPEC,
    MemoryTools,
)

__all__ = [
    "CONFIDENCE_LEVELS",
    "ENV_PATH",
    "ENV_URL",
    "FORGET_MEMORY_SPEC",
    "KINDS",
    "MAX_LEARNINGS",
    "MEMORY_TOOL_NAMES",
    "MEMORY_TOOL_SPECS",
    "RECALL_MEMORY_SPEC",
    "REMEMBER_SPEC",
    "SECTION_NAME",
    "ConfidenceLevel",
    "Digest",
    "DigestItem",
    "Embedder",
    "Kind",
    "Learning",
    "LearningsResult",
    "Level",
    "MemoryEntry",
    "MemorySession",
    "MemoryStore",
    "MemoryTools",
    "RecallHit",
    "RecallResult",
    "Scope",
    "SessionEnd",
    "SessionOutcome",
    "default_memory_path",
    "find_entry_ids",
    "parse_learnings",
]
