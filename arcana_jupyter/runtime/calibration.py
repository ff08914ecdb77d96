"""Keep the token budget in the model's own tokens: compare counts with what the provider reports.

The builder counts with the provider's counter (exact for the bundled model and for OpenAI models,
``cl100k_base`` for the rest). After every call the runtime hands :meth:`Calibration.observe` the
prompt tokens it counted and the ``prompt_tokens`` the provider reported. The ratio between them
(at least 1.0, the largest of the last few calls, rounded up to a thousandth so it is the same on
every machine) shrinks the budget the builder works with: a window of ``W`` tokens with a reply
reserve ``R`` leaves ``(W - R) / ratio`` counted tokens for the prompt. Both figures, and the
ratio, are recorded in the trace (``llm_call`` and ``context_decision``), so a drift is visible and
a rebuild uses the budget the turn had.

What a provider reports is not trusted blindly (docs/SECURITY.md): a call whose reported count is
more than :data:`MAX_RATIO` times ours is not a tokenizer difference but a wrong report, and is
left out of the ratio; a length refusal (:meth:`Calibration.require`) counts as one more sample,
at most :data:`MAX_RATIO`, and ages out of the window like any other, so one bogus refusal cannot
starve every later prompt of its history.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from ..context.decisions import TokenBudget

WINDOW = 8
"""How many recent calls the ratio looks at."""
MAX_RATIO = 4.0
"""The largest ratio believed: tokenizers differ by tens of percent, not by 89x (a wrong report)."""


class Calibration:
    """Model tokens per counted token, learned from the provider's reports (between 1.0 and :data:`MAX_RATIO`)."""

    def __init__(self, ratio: float = 1.0, *, slack: float = 1.0) -> None:
        self.ratio = min(MAX_RATIO, max(1.0, float(ratio)))
        self.slack = slack
        """Extra room on top of the worst observed ratio (1.0 for an exact counter)."""
        self.start = self.ratio
        self.samples: deque[float | None] = deque(maxlen=WINDOW)
        """The ratios of the most recent calls (and length refusals), each at most :data:`MAX_RATIO`;
        ``None`` for a call with nothing to compare or a report not believed (it still ages the window)."""

    def _update(self) -> None:
        known = [r for r in self.samples if r is not None]
        worst = max(known) if known else self.start
        self.ratio = min(MAX_RATIO, max(1.0, math.ceil(worst * 1000) / 1000))

    def observe(self, counted: int, reported: int) -> float | None:
        """Record one call; returns that call's ratio (``None`` when there is nothing to compare).

        A report more than :data:`MAX_RATIO` times the count is returned (capped at 10⁶, so it is
        visible in the trace) but not learned from."""
        if counted <= 0 or reported <= 0:
            self._age()
            return None
        if reported > counted * 1_000_000:
            self._age()
            return 1_000_000.0
        observed = reported / counted
        if observed <= MAX_RATIO:
            self.samples.append(observed * (self.slack if reported != counted else 1.0))
            self._update()
        else:
            self._age()
        return round(observed, 4)

    def _age(self) -> None:
        """A call that teaches nothing still pushes the oldest sample (a refusal's) towards the door."""
        if any(r is not None for r in self.samples):
            self.samples.append(None)
            self._update()

    def require(self, ratio: float) -> None:
        """At least ``ratio`` (at most :data:`MAX_RATIO`) for the next calls, after a provider refused a
        prompt as too long: one sample of the window, so it lapses after :data:`WINDOW` calls."""
        try:
            wanted = float(ratio)
        except (OverflowError, TypeError, ValueError):
            wanted = MAX_RATIO
        if wanted != wanted:  # NaN
            wanted = MAX_RATIO
        self.samples.append(min(MAX_RATIO, max(1.0, wanted)))
        self._update()

    def budget(self, window: int, reserve: int) -> TokenBudget:
        """The builder's budget, in counted tokens, for a window and reserve in model tokens."""
        available = max(0, window - reserve)
        return TokenBudget(total_window=reserve + math.floor(available / self.ratio), response_reserve=reserve)

    def record(self) -> dict[str, Any]:  # JSON edge: context_decision.calibration
        return {"ratio": self.ratio, "samples": sum(r is not None for r in self.samples)}
