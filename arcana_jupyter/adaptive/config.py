"""The adaptive engine's knobs, read from a RuntimeConfig (or anything with the same attributes)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

STANDING_SHARE = 0.15
"""The default ``standing_share``: the most of the prompt budget the ``standing`` section may take. 15% (it was
10%): in long chats written apart (``standing_blind.json``, a development split) a 4k prompt's section hit the
10% cap at 45 probes, shortening items to their first clause, and held 0.76 of the items; at 15% it held 0.82,
used 10.1% of the budget on average and 12% at most, and shortened none (20%: the same); the holdout split,
whose section stays small, held 0.92 either way (``python -m benchmarks.retention.standing ... --budgets 4000
--set standing_share=0.15``, benchmarks/results/standing.md). The room is only taken when that many items are
in force: in conversations with few the section is as small as before."""


class AdaptiveConfig(BaseModel):
    """Settings of one :class:`~arcana_jupyter.adaptive.engine.AdaptiveEngine`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    idle_soft_after_turns: int = Field(default=3, ge=1)
    """An active object untouched for this many turns is demoted to a one-line stub."""
    idle_hard_after_turns: int = Field(default=8, ge=1)
    """An object untouched for this many turns is demoted to an id + kind anchor."""
    bm25_threshold: float = Field(default=0.15, ge=0, le=1)
    """Normalised BM25 score at or above which a peripheral object is promoted."""
    verbatim_turns: int = Field(default=3, ge=1)
    """Turns kept verbatim, counting the current one (distance 0 .. verbatim_turns - 1)."""
    digest_turns: int = Field(default=4, ge=0)
    """Turns after the verbatim band that appear as scored digests."""
    artifact_min_tokens: int = Field(default=1000, ge=1)
    """Tool outputs longer than this many tokens are stored whole and replaced by a card."""
    artifact_card_tokens: int = Field(default=400, ge=64)
    """Upper bound of a card's size in tokens."""
    retrieve_default_chars: int = Field(default=4000, ge=1)
    retrieve_max_chars: int = Field(default=16000, ge=1)
    max_payload_chars: int = Field(default=4000, ge=100)
    """Longest payload a tool may store in one object (longer text belongs in an artifact)."""
    search_limit: int = Field(default=5, ge=1)
    standing_share: float = Field(default=STANDING_SHARE, gt=0, le=0.5)
    """The most of the prompt budget (the available tokens) the ``standing`` section may take; more
    standing instructions than fit are shortened, oldest first (benchmarks/results/standing.md)."""
    standing_instructions: bool = True
    """Recognise the user's standing instructions, preferences and constraints in their messages and keep
    them in the ``standing`` section (issue 39). Off: the engine as it was before — no recognition, and
    the checkpoint's and digests' constraints are the user's sentences with a cue word ("must", "never"
    ...). A run recorded before this setting existed resumes and replays with it off
    (:func:`~arcana_jupyter.runtime.resume.recorded_standing`)."""
    narrative_lines: int = Field(default=12, ge=1)
    """How many per-turn narrative lines the checkpoint shows (older ones are counted)."""
    trace_content: Literal["full", "redacted", "none"] = "full"
    """The run's trace mode: under ``none`` the engine's events carry ids, kinds, tiers and turns
    but no text (payloads, digests, artifact contents), so a replay restores structure only."""

    @model_validator(mode="after")
    def _ordered(self) -> AdaptiveConfig:
        if self.idle_hard_after_turns <= self.idle_soft_after_turns:
            raise ValueError(
                f"idle_hard_after_turns ({self.idle_hard_after_turns}) must be greater than "
                f"idle_soft_after_turns ({self.idle_soft_after_turns})"
            )
        return self

    @classmethod
    def from_runtime(cls, config: Any) -> AdaptiveConfig:
        """Read the knobs a RuntimeConfig (or any object / mapping) has; defaults for the rest."""
        values: dict[str, Any] = {}
        for name in cls.model_fields:
            if isinstance(config, dict):
                if name in config:
                    values[name] = config[name]
            elif hasattr(config, name):
                values[name] = getattr(config, name)
        return cls(**values)
