"""The runtime: Runtime, RuntimeConfig, ChatSession, AgentPool, the tool loop and intercepted tools."""

from .config import RuntimeConfig
from .intercept import InterceptedTool
from .pool import AgentPool
from .runtime import Runtime
from .session import ChatReply, ChatSession
from .tools import Tool

__all__ = ["AgentPool", "ChatReply", "ChatSession", "InterceptedTool", "Runtime", "RuntimeConfig", "Tool"]
