"""AgentPool: several agents in one run, each an independent cognitive instance (seed 000).

Every member has its own history, pins, recall log and compression budget; nothing crosses between
members except what a collaboration pattern passes explicitly as a message. All members write to
one trace, each event tagged with its agent's name.

Patterns:
- :meth:`AgentPool.relay` — members take turns on a shared task; each gets the task and the previous
  member's answer, and the last answer is the result (draft → review → revise).
- :meth:`AgentPool.broadcast` — every member answers the same message independently.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..schema.events import RunEndMetadata
from ..trace.writer import new_run_id
from .config import PRIMITIVES
from .session import ChatReply, ChatSession

if TYPE_CHECKING:
    from .runtime import Runtime


@dataclass
class RelayStep:
    agent: str
    input: str
    reply: ChatReply


def _member(session: ChatSession) -> None:
    session.owns_run = False  # the pool writes run_end and closes the trace


class AgentPool:
    def __init__(self, runtime: Runtime, *, cognitive_primitives: list[str] | None = None,
                 trace_dir: str | Path | None = None, run_id: str | None = None) -> None:
        self.runtime = runtime
        self.default_primitives = list(cognitive_primitives) if cognitive_primitives is not None else list(
            runtime.config.cognitive_primitives)
        unknown = [p for p in self.default_primitives if p not in PRIMITIVES]
        if unknown:
            raise ValueError(f"unknown cognitive primitive(s) {unknown}; accepted: {list(PRIMITIVES)}")
        self.run_id = run_id or new_run_id()
        tdir = Path(trace_dir) if trace_dir is not None else runtime.config.trace_dir
        self.writer = runtime.open_writer(tdir, self.run_id, runtime.config)
        self.members: dict[str, ChatSession] = {}
        self.closed = False

    def add(self, name: str, *, cognitive_primitives: list[str] | None = None, system_prompt: str | None = None,
            **overrides: Any) -> ChatSession:
        """Add a member. ``cognitive_primitives=None`` inherits the pool's; ``[]`` opts out."""
        if name in self.members:
            raise ValueError(f"the pool already has a member named {name!r}")
        if not name or not name.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"member names are letters, digits, '-' and '_' (got {name!r})")
        from .config import RuntimeConfig, flatten_groups

        # a group overrides the flat values it spells
        update: dict[str, Any] = flatten_groups(overrides)  # JSON edge: settings by name
        update["cognitive_primitives"] = (
            self.default_primitives if cognitive_primitives is None else list(cognitive_primitives))
        if system_prompt is not None:
            update["system_prompt"] = system_prompt
        cfg = RuntimeConfig.model_validate(self.runtime.config.model_dump() | update)
        session = self.runtime.new_session(name, self.run_id, self.writer, cfg, ask_user=self.runtime.ask_user,
                                           prepare=_member)
        self.members[name] = session
        return session

    def __getitem__(self, name: str) -> ChatSession:
        return self.members[name]

    async def relay(self, task: str, order: list[str] | None = None, rounds: int = 1) -> list[RelayStep]:
        """Members take turns on ``task``; each sees the task and the previous member's answer."""
        names = order or list(self.members)
        missing = [n for n in names if n not in self.members]
        if missing:
            raise KeyError(f"no pool member(s) {missing}; members: {list(self.members)}")
        steps: list[RelayStep] = []
        previous: RelayStep | None = None
        for _ in range(rounds):
            for name in names:
                if previous is None:
                    text = task
                else:
                    text = f"Task: {task}\n\n{previous.agent} answered:\n{previous.reply.text}\n\nYour turn."
                reply = await self.members[name].send(text)
                previous = RelayStep(name, text, reply)
                steps.append(previous)
        return steps

    async def broadcast(self, message: str) -> dict[str, ChatReply]:
        """Every member answers ``message`` on its own (in member order)."""
        return {name: await member.send(message) for name, member in self.members.items()}

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        for member in self.members.values():
            await member.aclose()
        from ..providers.base import Usage

        usage = sum((m.usage for m in self.members.values()), Usage())
        extra: dict[str, Any] = {}  # JSON edge: run_end keys
        for member in self.members.values():  # e.g. otel_export (per run: every member has the same)
            extra.update(member.run_end_metadata)
        self.writer.emit(RunEndMetadata.build(
            **extra, turns=sum(m.turn for m in self.members.values()), usage=usage.model_dump(),
            cost_usd=sum(m.cost_usd for m in self.members.values()), agents=list(self.members),
        ), agent="pool")
        self.writer.close()

    async def __aenter__(self) -> AgentPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
