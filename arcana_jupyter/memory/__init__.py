"""Cognitive memory across sessions (seed 004): store, scopes, ranking, digest, learnings, tools.

Quick tour::

    from arcana_jupyter.memory import MemoryStore, MemoryTools, Scope

    store = MemoryStore()                          # ~/.arcana/memory.sqlite3 (or $ARCANA_MEMORY_PATH)
    scope = Scope.for_project(notebook_dir)
    digest = store.start_session(session_id, scope)  # digest.markdown -> a prompt section
    tools = MemoryTools(store, scope, session_id=session_id)
    ...
    store.end_session(session_id, success=True)
    await store.extract_learnings(transcript, summarise, scope)
    store.close()
"""

from .digest import SECTION_NAME, Digest, DigestItem
from .embedding import Embedder
from .learnings import MAX_LEARNINGS, Learning, LearningsResult, parse_learnings
from .models import CONFIDENCE_LEVELS, KINDS, ConfidenceLevel, Kind, Level, MemoryEntry, Scope
from .store import (
    ENV_PATH,
    MemoryStore,
    RecallHit,
    RecallResult,
    SessionOutcome,
    default_memory_path,
    find_entry_ids,
)
from .tools import FORGET_SPEC, MEMORY_TOOL_NAMES, MEMORY_TOOL_SPECS, RECALL_SPEC, REMEMBER_SPEC, MemoryTools

__all__ = [
    "CONFIDENCE_LEVELS",
    "ENV_PATH",
    "FORGET_SPEC",
    "KINDS",
    "MAX_LEARNINGS",
    "MEMORY_TOOL_NAMES",
    "MEMORY_TOOL_SPECS",
    "RECALL_SPEC",
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
    "MemoryStore",
    "MemoryTools",
    "RecallHit",
    "RecallResult",
    "Scope",
    "SessionOutcome",
    "default_memory_path",
    "find_entry_ids",
    "parse_learnings",
]
