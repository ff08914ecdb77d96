"""The built prompt as the model gets it: shaped for the model's template (providers/shaping.py) and
counted as sent, and the prefix it shares with the previous prompt sent (what a provider's prefix
cache reuses). One per session: the shape is chosen once, the previous prompt is remembered."""

from __future__ import annotations

import dataclasses

from ..context.result import BuildResult, prefix_reuse
from ..messages import Message, ToolSpec
from ..providers.base import Provider
from ..providers.shaping import PromptShape, ShapedPrompt, named_shape
from ..providers.shaping import shape as shape_prompt
from ..tokens import TokenCounter


class PromptShaper:
    """Shapes one session's prompts and reports their prefix reuse."""

    def __init__(self, provider: Provider, model: str, counter: TokenCounter, setting: str) -> None:
        self.provider = provider
        self.model = model
        self.counter = counter
        self.setting = setting
        """``config.prompt_shape``: a shape's name, or ``auto``."""
        self._rules: PromptShape | None = None
        self._previous_sent: list[Message] | None = None
        self._previous_tools: list[ToolSpec] = []

    async def rules(self) -> PromptShape:
        """The shape of this session's prompts, chosen once (config, a replay's recording, the
        model's own template, its family, else portable)."""
        if self._rules is None:
            if self.setting != "auto":
                self._rules = named_shape(self.setting)
            else:
                self._rules = await self.provider.prompt_shape(self.model)
        return self._rules

    async def shape(self, build: BuildResult, tools: list[ToolSpec]) -> tuple[BuildResult, ShapedPrompt]:
        """The builder's messages shaped for the model, counted exactly as sent: ``build`` with the
        shaped messages and a budget whose ``used`` is the shaped prompt's."""
        shaped = shape_prompt(build.messages, await self.rules())
        if not shaped.shape.shapes:
            return build, shaped
        used = self.counter.count_prompt(shaped.messages, tools)
        b = build.budget
        budget = b.model_copy(update={
            "used": used, "remaining": max(0, b.available - used),
            "utilization": round(used / b.available, 4) if b.available > 0 else float(used),
        })
        if shaped.changed:
            build.decision.notes.append(shaped.summary())
        return dataclasses.replace(build, messages=shaped.messages, budget=budget), shaped

    def report_prefix(self, build: BuildResult) -> None:
        """Prefix reuse of the prompt about to be sent against the previous one sent, in tokens and
        share, as a provider's prefix cache sees it (context/result.py ``prefix_reuse``), and the
        prompt tokens past that prefix (``uncached_tokens``: tool specs come first in every
        rendering, so an unchanged tool list is part of the prefix), written into ``build.report``."""
        previous, self._previous_sent = self._previous_sent, build.messages
        previous_tools, self._previous_tools = self._previous_tools, build.tools
        report = build.report
        used = build.budget.used
        if previous is None:
            report.uncached_tokens = used
            return
        same, tokens, before = prefix_reuse(previous, build.messages, self.counter.count_text,
                                            self.counter.count_message)
        report.prefix_messages_reused = same
        report.prefix_tokens_reused = tokens
        report.prefix_share = round(tokens / before, 4) if before else None
        tools = report.tools_tokens if build.tools and previous_tools == build.tools else 0
        report.uncached_tokens = max(0, used - tokens - tools)
