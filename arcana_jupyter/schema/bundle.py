"""The turn bundle (``application/vnd.arcana.turn+json``, docs/TURN_BUNDLE.md) as models.

``runtime/bundle.py`` assembles the bundle as a plain dict from a turn's events (and the notebook's
compact copy from it); these models are its contract: tests/schema/test_bundle_model.py validates
the bundles of a real session against :class:`TurnBundle`, and ``labextension/src/schema.gen.ts`` is
generated from these models (``scripts/gen_ts_types.py``; tests/labextension/test_ts_schema_gen.py).
Unknown keys are kept, so an older frontend reading a newer bundle keeps working.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .decisions import BudgetSnapshot, ContextReport
from .events import UsageRecord

BUNDLE_VERSION = 1
MIME_TYPE = "application/vnd.arcana.turn+json"


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")


class StepCounting(_Part):
    """How a step's prompt was counted: the tokenizer, the calibration ratio, our count and the provider's."""

    encoding: str | None = None
    ratio: float | None = None
    counted: int | None = None
    reported: int | None = None
    cached: int | None = None
    """The prompt tokens the provider said it read from its cache (``None``: not reported)."""


class TurnStep(_Part):
    """One LLM call of the turn."""

    step: int
    decision: dict[str, Any] | None = None  # JSON edge: the recorded decision, passed through
    """The ContextDecision dump (the compact copy leaves out its rows' empty fields)."""
    report: ContextReport | None = None
    budget: BudgetSnapshot | None = None
    request_digest: str | None = None
    messages: list[dict[str, Any]] | None = None  # JSON edge: wire messages
    counting: StepCounting | None = None
    explain: list[str] | None = None
    """What the budget went to and what it cost, in sentences the front ends show as they are:
    uncached tokens (predicted) beside the provider's cache reads, a drop of the verbatim window and
    what came back, and why room stayed free (runtime/bundle.py ``explain_step``)."""


class BundleToolCall(_Part):
    name: str | None = None
    arguments: Any = None
    ok: bool | None = None
    result: Any = None
    intercepted: bool | None = None


class PrimitiveCall(_Part):
    primitive: str | None = None
    args: Any = None
    result: Any = None


class TurnError(_Part):
    type: str | None = None
    message: str | None = None
    where: str | None = None


class SessionUsage(_Part):
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cost_usd: float = 0.0


class StandingItem(_Part):
    """One standing instruction, preference or constraint in force (the ``standing`` section: adaptive/standing.py)."""

    id: str
    kind: str
    """``instruction``, ``preference`` or ``constraint``."""
    text: str | None = None
    """In the user's words (the model's for ``by: model``); ``None`` under ``trace_content="none"``."""
    turn: int
    """The turn it was given (or added) in."""
    by: str
    """``said`` (recognised in the user's message), ``added`` (by the user, by hand) or ``model`` (its tool)."""
    learned: bool | None = None
    """``True``: recognised by the learned reader (adaptive/standing_model.py), not by a rule — less sure, so the
    inspector says so (retract it if it is not one); ``None`` otherwise."""
    acknowledged: bool | None = None
    """``True``: kept because the assistant's reply took it up as lasting ("Understood; I'll keep to that from now
    on."), where the rules alone left it as a request for one turn (adaptive/standing.py ``acknowledged``) — the
    inspector says so (retract it if it is not one); ``None`` otherwise."""
    shown: str | None = None
    """How the latest prompt showed it: ``full``, ``short`` (its first clause), ``cut`` (its first words),
    ``folded`` (its id only), to keep the section within its share of the budget; ``None``: not sent yet."""
    revises: str | None = None
    """The standing object it replaced."""
    memory_id: str | None = None
    """The long-term memory entry it was kept as (``%arcana_standing remember``)."""
    offer_memory: bool = False
    """Memory is on and it is not kept yet: the inspector offers to keep it for the next notebook."""


class TurnBundle(_Part):
    """Everything the inspector shows about one turn."""

    version: int = BUNDLE_VERSION
    run_id: str
    agent: str
    turn: int
    trace_path: str | None = None
    model: str | None = None
    status: str = "running"
    """``running`` / ``ok`` / ``error`` / ``cancelled``."""
    input: str | None = None
    reply: str | None = None
    steps: list[TurnStep] = Field(default_factory=list)
    tool_calls: list[BundleToolCall] = Field(default_factory=list)
    primitives: list[PrimitiveCall] = Field(default_factory=list)
    pins: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: Pin.summary() dumps
    """``Pin.summary()`` of each active pin."""
    tiers: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)  # JSON edge: StateObject dumps
    """Adaptive-context objects by tier (``StateObject`` dumps)."""
    standing: list[StandingItem] = Field(default_factory=list)
    """The standing instructions in force after the turn, oldest first."""
    memories: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: memory briefs
    usage: UsageRecord | None = None
    cost_usd: float | None = None
    latency_ms: float | None = None
    """The whole turn, from its start to its end."""
    model_latency_ms: float | None = None
    """The model's share of it: the turn's LLM calls' ``latency_ms`` summed (``None``: no call answered).
    The rest is the runtime's: building and recording each prompt, the tools, the hooks."""
    errors: list[TurnError] = Field(default_factory=list)
    state_changes: list[dict[str, Any]] = Field(default_factory=list)  # JSON edge: the events' metadata
    """The turn's ``state_change`` and ``context_action`` metadata, each with its ``event_type``."""
    compact: bool | None = None
    """The notebook's copy: prompt texts the trace holds are left out."""
    session: SessionUsage | None = None
    """Tokens and cost of the session so far (added by the display)."""
    progress: str | None = None
    """While the turn runs: what it is doing (added by the display)."""
