"""Keep the token budget in the model's own tokens: compare counts with what the provider reports.

The builder counts with the provider's counter (exact for the bundled model and for OpenAI models,
``cl100k_base`` for the rest). After every call the runtime hands :meth:`Calibration.observe` the
prompt tokens it counted and the ``prompt_tokens`` the provider reported. The ratio between them
(at least 1.0, the largest of the last few calls, rounded up to a thousandth so it is the same on
every machine) shrinks the budget the builder works with: a window of ``W`` tokens with a reply
reserve ``R`` leaves ``(W - R) / ratio`` counted tokens for the prompt. Both figures, and the
ratio, are recorded in the trace (``llm_call`` and ``context_decision``), so a drift is visible and
a rebuild uses the budget the turn had.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from ..context.decisions import TokenBudget

WINDOW = 8
"""How many recent calls the ratio looks at."""


class Calibration:
    """Model tokens per counted token, learned from the provider's reports (never below 1.0)."""

    def __init__(self, ratio: float = 1.0, *, slack: float = 1.0) -> None:
        self.ratio = max(1.0, float(ratio))
        self.slack = slack
        """Extra room on top of the worst observed ratio (1.0 for an exact counter)."""
        self.floor = 1.0
        self.samples: deque[tuple[int, int]] = deque(maxlen=WINDOW)
        """(counted, reported) of the most recent calls."""

    def observe(self, counted: int, reported: int) -> float | None:
        """Record one call; returns that call's ratio (``None`` when there is nothing to compare)."""
        if counted <= 0 or reported <= 0:
            return None
        self.samples.append((counted, reported))
        worst = max(r / c for c, r in self.samples) * (self.slack if reported != counted else 1.0)
        self.ratio = max(self.floor, math.ceil(worst * 1000) / 1000)
        return round(reported / counted, 4)

    def require(self, ratio: float) -> None:
        """At least ``ratio`` from now on (after a provider refused a prompt as too long)."""
        self.ratio = max(self.ratio, math.ceil(ratio * 1000) / 1000)
        self.floor = self.ratio

    def budget(self, window: int, reserve: int) -> TokenBudget:
        """The builder's budget, in counted tokens, for a window and reserve in model tokens."""
        available = max(0, window - reserve)
        return TokenBudget(total_window=reserve + math.floor(available / self.ratio), response_reserve=reserve)

    def record(self) -> dict[str, Any]:
        return {"ratio": self.ratio, "samples": len(self.samples)}
