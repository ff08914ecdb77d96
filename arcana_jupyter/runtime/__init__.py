"""The runtime: Runtime, RuntimeConfig, ChatSession, AgentPool, the tool loop and intercepted tools."""

from ..adaptive.config import AdaptiveConfig
from .config import MemoryConfig, RuntimeConfig
from .intercept import InterceptedTool
from .pool import AgentPool
from .runtime import Runtime
from .session import ChatReply, ChatSession
from .tools import Tool

__all__ = [
    "AdaptiveConfig", "AgentPool", "ChatReply", "ChatSession", "InterceptedTool", "MemoryConfig", "Runtime",
    "RuntimeConfig", "Tool",
]
