"""The runtime's own tools within their share of the prompt budget.

The tools the runtime offers besides the user's (``ask_user``, the primitives, the memory tools,
the adaptive-context tools) are sent with every call, ahead of the conversation: on a small window
their specs would take the room the conversation needs (the adaptive tools alone are ~930 tokens,
46% of a 2k budget). :func:`offer` keeps them within :func:`tool_cap` — a tenth of the budget past its
first 1,000 tokens: in full when they all fit, else in a compact form (each description's first sentence, no argument
descriptions), and when even that is too much, the most useful first (:data:`PRIORITY`) while they
fit. The choice is made once per session, from its configured window, so the tool list — the start
of every prompt — never changes between calls (a changed list would re-bill the whole prompt).
What is held back is said in the session's banner and the first decision's notes.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..messages import ToolSpec
from ..tokens import TokenCounter

RUNTIME_TOOLS_SHARE = 0.1
"""The most of the prompt budget past its first :data:`CONVERSATION_FIRST` tokens the runtime's own tool specs
may take."""
CONVERSATION_FIRST = 1000
"""The first tokens of every prompt budget belong to the conversation: the tools take a tenth of the rest. The
specs are sent with every call, ahead of the conversation; on small windows their room is the room of the
earlier messages a question needs. A tenth of the whole budget (what it was) offered 74 tokens of them at a 1k
budget and 189 at 2k; now none at 1k and `search_turn_events` (74) at 2k, a tenth less 100 tokens from there
(all of them, in full, from ~10k). On the dev splits of benchmarks/retention/conversations.py at 1k / 2k: 0.68 /
0.78 (talks) and 0.68 / 0.78 (chats) of the evidence against 0.67 / 0.76 and 0.66 / 0.78 with a tenth of the
whole budget (classic mode, offered no tools: 0.67 / 0.77 and 0.65 / 0.77)."""


def tool_cap(available: int, share: float = RUNTIME_TOOLS_SHARE) -> int:
    """The most tokens the runtime's tool specs may take of a prompt budget of ``available`` tokens."""
    return max(0, int((available - CONVERSATION_FIRST) * share))


PRIORITY = (
    "ask_user", "recall", "pin", "unpin", "remember", "recall_memory", "forget_memory", "search_turn_events",
    "note", "add_constraint", "decide", "create_task", "update_task", "retrieve_artifact", "hydrate",
    "retract_task", "focus",
)
"""Which runtime tools stay when not all fit, first to last: the user's own channel; the primitives
(the user opted into them); memory (opted into with ``--memory``); then the adaptive tools, reading
the session's own history first (it is what a small window loses), then keeping what matters, then
managing tasks and the tiers. Tools not named here come after, in their order."""


@dataclass(frozen=True)
class ToolOffer:
    """The runtime tools a session offers: their specs (in the order given), and what was held back."""

    specs: list[ToolSpec]
    held_back: list[str] = field(default_factory=list)
    compact: bool = False
    """The specs are in their compact form (descriptions cut to their first sentence)."""
    tokens: int = 0
    cap: int = 0

    def note(self) -> str | None:
        """One line for the first decision's notes (``None``: every tool offered in full)."""
        if not self.compact and not self.held_back:
            return None
        form = "in compact form " if self.compact else ""
        line = (f"the runtime's tools are offered {form}within {RUNTIME_TOOLS_SHARE:.0%} of the prompt budget past "
                f"its first {CONVERSATION_FIRST:,} tokens "
                f"({self.tokens} of at most {self.cap} tokens)")
        if self.held_back:
            line += f"; held back: {', '.join(self.held_back)} (a larger --window offers them)"
        return line


def compact_spec(spec: ToolSpec) -> ToolSpec:
    """``spec`` with its description cut to the first sentence and no argument descriptions."""
    first = spec.description.split(". ", 1)[0].strip()
    description = first if first.endswith((".", "?", "!")) else first + "."
    parameters = copy.deepcopy(spec.parameters)
    for prop in (parameters.get("properties") or {}).values():
        if isinstance(prop, dict):
            prop.pop("description", None)
    return spec.model_copy(update={"description": description, "parameters": parameters})


def offer(specs: Sequence[ToolSpec], available: int, counter: TokenCounter,
          share: float = RUNTIME_TOOLS_SHARE, required: frozenset[str] = frozenset()) -> ToolOffer:
    """The runtime tools among ``specs`` that fit ``share`` of ``available`` prompt tokens (see the
    module docstring). ``required``: names the user asked for explicitly (their group set to ``on``,
    ``--force``): always offered, compact when the rest is, the others in the room they leave."""
    cap = tool_cap(available, share)
    full = counter.count_tools(specs)
    if full <= cap:
        return ToolOffer(list(specs), tokens=full, cap=cap)
    small = [compact_spec(s) for s in specs]
    rank = {name: k for k, name in enumerate(PRIORITY)}
    order = sorted(range(len(small)), key=lambda k: (small[k].name not in required,
                                                     rank.get(small[k].name, len(PRIORITY)), k))
    kept: set[int] = set()
    for k in order:  # a strict prefix of the priorities: no unpin without its pin
        if small[k].name not in required and counter.count_tools([small[j] for j in sorted({*kept, k})]) > cap:
            break
        kept.add(k)
    used = counter.count_tools([small[k] for k in sorted(kept)])
    return ToolOffer([small[k] for k in range(len(small)) if k in kept],
                     held_back=[small[k].name for k in order if k not in kept], compact=True, tokens=used, cap=cap)
