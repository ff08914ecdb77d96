"""The cognitive primitives (``recall``, ``pin``, ``unpin``) as a capability: the tools a session
opts into with ``cognitive_primitives``, or their names as withheld when ``primitive_tools`` says
this model is not offered tools.

Pins themselves stay the session's (``ChatSession.pins``, a :class:`~arcana_jupyter.primitives.pin.PinState`):
the user pins and unpins from the notebook whether or not the model has the tools, resume restores
them, and the builder renders them as pin blocks — so the capability only offers the tools.
"""

from __future__ import annotations

from .builtin_tools import offers_tools, primitive_tools
from .capabilities import Capability
from .context import SessionContext
from .intercept import InterceptedTool


class PrimitivesCapability(Capability):
    name = "primitives"

    def __init__(self, tools: list[InterceptedTool], offered: bool) -> None:
        self._tools = tools
        self.offered = offered

    def tools(self) -> list[InterceptedTool]:
        return list(self._tools) if self.offered else []

    def withheld(self) -> list[str]:
        return [] if self.offered else [t.name for t in self._tools]


def primitives_capability(ctx: SessionContext) -> PrimitivesCapability | None:
    tools = primitive_tools(ctx.config.cognitive_primitives)
    if not tools:
        return None
    return PrimitivesCapability(tools, offers_tools(ctx.config.primitive_tools, ctx.provider, ctx.provider_model))
