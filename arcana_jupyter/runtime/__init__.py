"""The runtime: Runtime, RuntimeConfig, ChatSession, AgentPool, the tool loop, intercepted tools and capabilities."""

from ..adaptive.config import AdaptiveConfig
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
