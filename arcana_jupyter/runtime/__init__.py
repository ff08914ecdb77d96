"""The runtime: Runtime, RuntimeConfig, ChatSession, AgentPool, the tool loop, intercepted tools and capabilities."""

from ..adaptive.config import AdaptiveConfig
from ..compat import moved as _moved
from .capabilities import Capability
from .config import MemoryConfig, RuntimeConfig
from .intercept import InterceptedTool
from .pool import AgentPool
from .runtime import Runtime
from .session import ChatReply, ChatSession
from .tools import Tool

__all__ = [
    "AdaptiveConfig", "AgentPool", "Capability", "ChatReply", "ChatSession", "InterceptedTool",
    "MemoryConfig", "Runtime", "RuntimeConfig", "Tool",
]


# Names exported before 0.1's public surface (issue 25), answered for one more release with a warning.
_MOVED = {
    "CapabilityFactory": "arcana_jupyter.runtime.capabilities",
}
__getattr__ = _moved("arcana_jupyter.runtime", _MOVED)
