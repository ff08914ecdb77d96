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

from ..compat import moved as _moved
from .config import AdaptiveConfig
from .engine import AdaptiveEngine
from .state import StateObject
from .tools import AdaptiveTool

__all__ = ["AdaptiveConfig", "AdaptiveEngine", "AdaptiveTool", "StateObject"]


# Names exported before 0.1's public surface (issue 25), answered for one more release with a warning.
_MOVED = {
    "ADAPTIVE_TOOL_NAMES": "arcana_jupyter.adaptive.engine",
    "Artifact": "arcana_jupyter.adaptive.artifacts",
    "ArtifactStore": "arcana_jupyter.adaptive.artifacts",
    "Distilled": "arcana_jupyter.adaptive.distillers",
    "Promotion": "arcana_jupyter.adaptive.promotion",
    "SECTION_NAMES": "arcana_jupyter.adaptive.engine",
    "SessionCheckpoint": "arcana_jupyter.adaptive.checkpoint",
    "TurnSummary": "arcana_jupyter.adaptive.turn_summary",
    "adaptive_tools": "arcana_jupyter.adaptive.tools",
    "distill": "arcana_jupyter.adaptive.distillers",
    "engine_or_none": "arcana_jupyter.adaptive.engine",
    "handle": "arcana_jupyter.adaptive.tools",
    "summarise_turn": "arcana_jupyter.adaptive.turn_summary",
    "tool_specs": "arcana_jupyter.adaptive.tools",
}
__getattr__ = _moved("arcana_jupyter.adaptive", _MOVED)
