"""Adaptive context (seed 004): tiered working memory, session checkpoint, artifacts.

Pure and runtime-free: the runtime drives an :class:`AdaptiveEngine` per chat session (see
``engine.py`` for the per-turn calls) and registers :func:`adaptive_tools` as intercepted tools.
"""

from .artifacts import Artifact, ArtifactStore
from .checkpoint import SessionCheckpoint
from .config import AdaptiveConfig
from .distillers import Distilled, distill
from .engine import ADAPTIVE_TOOL_NAMES, SECTION_NAMES, AdaptiveEngine, engine_or_none
from .promotion import Promotion
from .state import StateObject
from .tools import AdaptiveTool, adaptive_tools, handle, tool_specs
from .turn_summary import TurnSummary, summarise_turn

__all__ = [
    "ADAPTIVE_TOOL_NAMES",
    "SECTION_NAMES",
    "AdaptiveConfig",
    "AdaptiveEngine",
    "AdaptiveTool",
    "Artifact",
    "ArtifactStore",
    "Distilled",
    "Promotion",
    "SessionCheckpoint",
    "StateObject",
    "TurnSummary",
    "adaptive_tools",
    "distill",
    "engine_or_none",
    "handle",
    "summarise_turn",
    "tool_specs",
]
