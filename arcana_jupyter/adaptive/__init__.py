"""Adaptive context: tiered working memory, session checkpoint, artifacts.

Pure and runtime-free: the runtime drives an :class:`AdaptiveEngine` per chat session (see
``engine.py`` for the per-turn calls, and the modules it is made of) and registers the
:class:`AdaptiveTool` s of ``tools.py`` as intercepted tools. Settings: :class:`AdaptiveConfig`
(``RuntimeConfig(adaptive=AdaptiveConfig(...))``); the turn bundle's ``tiers`` hold
:class:`StateObject` s.

Names: the feature is "adaptive context" and its object the adaptive engine; ``context_engine`` is
the user's switch for it (``RuntimeConfig.context_engine``, ``%arcana_chat --engine``) and keeps its
name. The public names are the ones below; everything else is imported from its module.
"""

from .config import AdaptiveConfig
from .engine import AdaptiveEngine
from .state import StateObject
from .tools import AdaptiveTool

__all__ = ["AdaptiveConfig", "AdaptiveEngine", "AdaptiveTool", "StateObject"]
