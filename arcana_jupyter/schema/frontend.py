"""The messages between the kernel and a front end: the ``arcana`` comm and the turn widget.

Both carry the same JSON objects (``jupyter/comm.py`` answers them, for the comm of the JupyterLab
extension and for the custom messages of the anywidget, ``jupyter/widget.py``). Requests come from
the front end; each answer repeats the request's ``request_id``. The TypeScript side
(``labextension/src/schema.gen.ts``) is generated from these models by ``scripts/gen_ts_types.py``;
tests/jupyter/test_widget.py checks every real answer of the handlers against them.

Every string here can be user or model text: a front end renders it as text, never as HTML.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .bundle import StandingItem
from .trace_view import MAX_BATCH, RunView, TraceWhat, TurnDiffView, TurnPair, TurnView

LiveAction = Literal["unpin", "hydrate", "retract", "remember"]
"""What a person can do from the inspector (the same runtime calls the model's tools use; ``remember``
keeps a standing instruction in long-term memory)."""

RequestId = str | int | None


class StateRequest(BaseModel):
    """Is this run live in the kernel, and its pins and adaptive-context tiers now."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["state"]
    run_id: str | None = None
    agent: str | None = None
    request_id: RequestId = None


class ActionRequest(BaseModel):
    """Unpin a pin, hydrate or retract an adaptive-context object of a live run, or keep a standing
    instruction in long-term memory (traced as ``source: user``)."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["action"]
    action: LiveAction
    target: str
    """A pin id or a state-object id (at most ``comm.MAX_TARGET_CHARS`` printable characters)."""
    run_id: str | None = None
    agent: str | None = None
    request_id: RequestId = None


class TraceRequest(BaseModel):
    """A run's trace as a viewer shows it, resolved in Python (``trace/views.py``): its overview, one turn,
    or two turns compared. Asked of the kernel for a run open there (the turn widget, the replay widget),
    and of the Jupyter server extension (``GET /arcana/trace?path=...&what=...``, no kernel needed)."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["trace"] = "trace"
    what: TraceWhat = "run"
    run_id: str | None = None
    agent: str | None = None
    """``None``: ``main`` when it has turns, else the first agent that has some."""
    turn: int | None = None
    """The turn of a ``turn`` request. In a ``run`` request, the turn whose view comes with the overview
    (``-1``: the agent's last turn), so a viewer draws its first turn from one answer."""
    a: int | None = None
    """The first turn of a ``diff`` request."""
    b: int | None = None
    """The second turn of a ``diff`` request."""
    turns: list[int] | None = Field(default=None, max_length=MAX_BATCH)
    """The turns of a ``turns`` request (the reply's ``turn_views``; a turn the run does not have is left out)."""
    pairs: list[TurnPair] | None = Field(default=None, max_length=MAX_BATCH)
    """The pairs of turns a ``turns`` request compares (the reply's ``diffs``; a pair that cannot be compared
    because a turn is not in the run is left out)."""
    request_id: RequestId = None


class WhatIfRequest(BaseModel):
    """Rebuild a recorded turn with another window, reserve, strategy, mode (``classic`` / ``adaptive``) or
    relevance (``lexical`` / ``semantic``) (``None``: as recorded); read-only."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["whatif"]
    run_id: str
    agent: str | None = None
    turn: int
    step: int = 0
    window: int | str | None = None
    reserve: int | str | None = None
    strategy: str | None = None
    mode: str | None = None
    relevance: str | None = None
    request_id: RequestId = None


class PathRequest(BaseModel):
    """The notebook's path relative to the server's root (JupyterLab extension only), at start and after a rename."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["path"]
    path: str
    old_path: str | None = None
    old_paths: list[str] = []
    root: str | None = None
    request_id: RequestId = None


KernelRequest = Annotated[StateRequest | ActionRequest | TraceRequest | WhatIfRequest | PathRequest,
                          Field(discriminator="type")]
REQUEST_ADAPTER: TypeAdapter[Any] = TypeAdapter(KernelRequest)  # type: ignore[arg-type]


class LiveState(BaseModel):
    """The answer to a ``state`` request (``live: false`` and nothing else when the run is not open here)."""

    type: Literal["state"] = "state"
    live: bool
    session: str | None = None
    turn: int | None = None
    """The session's latest turn: the actions are offered under that turn's inspector only."""
    pins: list[dict[str, Any]] = []  # JSON edge: Pin.summary() dumps
    """The active pins, each ``Pin.summary()`` (``Pin`` in labextension/src/types.ts)."""
    tiers: dict[str, list[dict[str, Any]]] = {}  # JSON edge: StateObject dumps
    """Live adaptive-context objects by tier (``active``, ``soft``, ``hard``), as the turn bundle has them."""
    standing: list[StandingItem] = []
    """The standing instructions in force, as the turn bundle has them."""
    request_id: RequestId = None


class ActionReply(BaseModel):
    """The answer to an ``action`` request: what happened, and the state after it (when the run is live)."""

    type: Literal["action"] = "action"
    ok: bool
    message: str
    result: dict[str, Any] | None = None  # JSON edge: the runtime call's result
    """The runtime call's own structured result."""
    live: bool | None = None
    session: str | None = None
    turn: int | None = None
    pins: list[dict[str, Any]] = []  # JSON edge: Pin.summary() dumps
    tiers: dict[str, list[dict[str, Any]]] = {}  # JSON edge: StateObject dumps
    standing: list[StandingItem] = []
    request_id: RequestId = None


class TraceReply(BaseModel):
    """The answer to a ``trace`` request: the part of the trace it asked for, resolved (``ok: false`` and
    the reader's message when the trace cannot be read: the same errors as ``arcana trace``)."""

    type: Literal["trace"] = "trace"
    ok: bool
    message: str | None = None
    path: str | None = None
    """The trace file, relative to the notebook's folder (the comm) or the server's root (the server)."""
    what: TraceWhat | None = None
    version: str | None = None
    """The file's version (size and modification time) the answer was read from."""
    run: RunView | None = None
    turn_view: TurnView | None = None
    """The turn a ``turn`` request asked for (or the one a ``run`` request asked to come with the overview)."""
    diff: TurnDiffView | None = None
    turn_views: list[TurnView] | None = None
    """A ``turns`` request's turns, in the order asked."""
    diffs: list[TurnDiffView] | None = None
    """A ``turns`` request's pairs compared, in the order asked."""
    request_id: RequestId = None


class WhatIfChange(BaseModel):
    """One row of the rebuilt turn whose outcome differs from the recorded one (``replay_view.changed_rows``)."""

    index: int
    role: str
    source: str | None = None
    change: Literal["new", "gone", "changed"]
    before: dict[str, Any] | None = None  # JSON edge: the row as sent
    """``{outcome, fidelity, tokens, reason?, where?}`` as sent (``where``: the section that carries a
    dropped message, where its evidence went), or ``None`` for a row only the rebuild has."""
    after: dict[str, Any] | None = None  # JSON edge: the row as rebuilt


class WhatIfReply(BaseModel):
    """The answer to a ``whatif`` request: the turn as sent and as rebuilt (``comm.what_if_answer``)."""

    type: Literal["whatif"] = "whatif"
    ok: bool
    message: str | None = None
    run_id: str | None = None
    agent: str | None = None
    turn: int | None = None
    step: int | None = None
    verified: bool | None = None
    """The recorded prompt was reproduced (digest) before the settings were changed."""
    counterfactual: bool | None = None
    """Some setting differs from the recorded ones."""
    recorded_settings: dict[str, Any] | None = None  # JSON edge: settings by name
    settings: dict[str, Any] | None = None  # JSON edge: settings by name
    """``strategy``, ``total_window``, ``response_reserve``, ``mode``, ``relevance`` of the rebuild."""
    recorded_tokens: int | None = None
    """The prompt's tokens as sent (the recorded ``budget.used``)."""
    tokens: int | None = None
    """The rebuilt prompt's, counted the same way (shaped for the model, counted exactly)."""
    tokens_line: str | None = None
    """Both, and where the difference went: ``652 tokens sent → 1,154 rebuilt (+502: the 5 rows
    changed +501, the prompt's framing (roles, the context block) +1)``."""
    changes: list[WhatIfChange] = []
    messages: list[dict[str, str]] = []
    """The rebuilt prompt, ``{role, content}``, each content clipped."""
    messages_left_out: int = 0
    notes: list[str] = []
    request_id: RequestId = None


class PathReply(BaseModel):
    """The answer to a ``path`` request."""

    type: Literal["path"] = "path"
    ok: bool
    message: str | None = None
    notebook: str | None = None
    source: str | None = None
    trace_dir: str | None = None
    moved: list[dict[str, str]] = []
    request_id: RequestId = None


class ErrorReply(BaseModel):
    """A request that could not be answered (not a JSON object, or it failed): nothing changed."""

    type: str | None = None
    ok: Literal[False] = False
    message: str
    request_id: RequestId = None


KernelReply = LiveState | ActionReply | TraceReply | WhatIfReply | PathReply | ErrorReply


def parse_reply(data: Any) -> KernelReply:
    """The model of one answer of the handlers (``ok: false`` first, then by ``type``); raises on a bad one."""
    if isinstance(data, dict) and data.get("ok") is False and data.get("type") not in ("action", "trace", "whatif",
                                                                                     "path"):
        return ErrorReply.model_validate(data)
    kind = data.get("type") if isinstance(data, dict) else None
    models: dict[str, type[BaseModel]] = {
        "state": LiveState, "action": ActionReply, "trace": TraceReply, "whatif": WhatIfReply, "path": PathReply}
    model = models.get(kind) if isinstance(kind, str) else None
    return model.model_validate(data) if model is not None else ErrorReply.model_validate(data)  # type: ignore[return-value]


__all__ = [
    "REQUEST_ADAPTER",
    "ActionReply",
    "ActionRequest",
    "ErrorReply",
    "KernelReply",
    "KernelRequest",
    "LiveAction",
    "LiveState",
    "PathReply",
    "PathRequest",
    "StateRequest",
    "TraceReply",
    "TraceRequest",
    "WhatIfChange",
    "WhatIfReply",
    "WhatIfRequest",
    "parse_reply",
]
