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

from ..compat import moved as _moved
from .models import Scope
from .session import MemorySession
from .store import MemoryStore
from .tools import MemoryTools

__all__ = ["MemorySession", "MemoryStore", "MemoryTools", "Scope"]


# Names exported before 0.1's public surface (issue 25), answered for one more release with a warning.
_MOVED = {
    "CONFIDENCE_LEVELS": "arcana_jupyter.memory.models",
    "ConfidenceLevel": "arcana_jupyter.memory.models",
    "Digest": "arcana_jupyter.memory.digest",
    "DigestItem": "arcana_jupyter.memory.digest",
    "ENV_PATH": "arcana_jupyter.memory.store",
    "ENV_URL": "arcana_jupyter.memory.store",
    "Embedder": "arcana_jupyter.memory.embedding",
    "FORGET_MEMORY_SPEC": "arcana_jupyter.memory.tools",
    "KINDS": "arcana_jupyter.memory.models",
    "Kind": "arcana_jupyter.memory.models",
    "Learning": "arcana_jupyter.memory.learnings",
    "LearningsResult": "arcana_jupyter.memory.learnings",
    "Level": "arcana_jupyter.memory.models",
    "MAX_LEARNINGS": "arcana_jupyter.memory.learnings",
    "MEMORY_TOOL_NAMES": "arcana_jupyter.memory.tools",
    "MEMORY_TOOL_SPECS": "arcana_jupyter.memory.tools",
    "MemoryEntry": "arcana_jupyter.memory.models",
    "RECALL_MEMORY_SPEC": "arcana_jupyter.memory.tools",
    "REMEMBER_SPEC": "arcana_jupyter.memory.tools",
    "RecallHit": "arcana_jupyter.memory.store",
    "RecallResult": "arcana_jupyter.memory.store",
    "SECTION_NAME": "arcana_jupyter.memory.digest",
    "SessionEnd": "arcana_jupyter.memory.session",
    "SessionOutcome": "arcana_jupyter.memory.store",
    "default_memory_path": "arcana_jupyter.memory.store",
    "find_entry_ids": "arcana_jupyter.memory.store",
    "parse_learnings": "arcana_jupyter.memory.learnings",
}
__getattr__ = _moved("arcana_jupyter.memory", _MOVED)
