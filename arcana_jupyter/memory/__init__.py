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

from .models import Scope
from .session import MemorySession
from .store import MemoryStore
from .tools import MemoryTools

__all__ = ["MemorySession", "MemoryStore", "MemoryTools", "Scope"]
