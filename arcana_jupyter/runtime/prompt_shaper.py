"""The built prompt as the model gets it: shaped for the model's template (providers/shaping.py) and
counted as sent, and the prefix it shares with the previous prompt sent (what a provider's prefix
cache reuses). One per session: the shape is chosen once, the previous prompt is remembered."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

from ..context.result import BuildResult, prefix_reuse
from ..exceptions import TemplateRefusedError
from ..messages import Message, ToolSpec
from ..providers.base import Provider
from ..providers.shaping import SHAPES, PromptShape, ShapedPrompt, named_shape
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
        self._problem_said = False
        self._reshaped_note: str | None = None
        self._previous_sent: list[Message] | None = None
        self._previous_tools: list[ToolSpec] = []

    def reshape(self, refusal: TemplateRefusedError) -> PromptShape | None:
        """The server's chat template refused the prompt: the shape to retry with — ``strict`` (the system
        text folded into the first user turn, roles alternating, tool calls and results as text) — kept for
        the rest of the session and said in the next decision's notes. None when there is nothing stricter
        to try (already strict) or the shape was configured (``prompt_shape`` is not ``auto``)."""
        current = self._rules
        if self.setting != "auto" or current is None or current.name == "strict":
            return None
        said = _quoted(str(refusal))
        self._rules = replace(SHAPES["strict"], source=f"refused by the server: {said}")
        self._reshaped_note = (f"the server's chat template refused the {current.name} shape ({said}): the prompt "
                               "was reshaped (strict: the system text folded into the first user turn, roles "
                               "alternating, tools as text) and sent again; this session keeps that shape")
        return self._rules

    def resume_refused(self, message: str) -> None:
        """A resumed session whose run was reshaped after a refusal (its recorded error) starts strict."""
        if self.setting == "auto":
            said = _quoted(message)
            self._rules = replace(SHAPES["strict"], source=f"refused by the server: {said}")
            self._reshaped_note = (f"the server's chat template refused this run's prompt shape before the restart "
                                   f"({said}): the session goes on with the strict shape")

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
        rules = await self.rules()
        if self._reshaped_note is not None:
            build.decision.notes.append(self._reshaped_note)
            self._reshaped_note = None
        if rules.problem is not None and not self._problem_said:  # said once, in the session's first decision
            self._problem_said = True
            build.decision.notes.append(f"the model's chat template could not say how to shape the prompt: "
                                        f"{rules.problem}; the {rules.name} shape is used ({rules.source})")
        shaped = shape_prompt(build.messages, rules)
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


def _quoted(message: str) -> str:
    """The template's own words from a refusal's message (what follows the last ": "), on one line, short."""
    text = " ".join(message.split())
    if "template refused the prompt: " in text:
        text = text.split("template refused the prompt: ", 1)[1]
    text = text.rstrip(".")
    return text if len(text) <= 160 else text[:159] + "…"
