"""Histories for the builder tests: realistic turns, tool calls with results, deterministic."""

from __future__ import annotations

from arcana_jupyter.context.result import BuildResult
from arcana_jupyter.messages import Message, ToolCall

SYSTEM = Message(role="system", content="You are a careful data assistant working in a Jupyter notebook.")

TOPICS = [
    "the weather in Lisbon this weekend",
    "a good name for my cat",
    "how to brew pour-over coffee",
    "the plot of a detective novel",
    "which running shoes to buy",
    "a birthday gift for my sister",
    "a vegetarian lasagna recipe",
    "learning the guitar as an adult",
]


FACTS = ["the bucket is s3://acme-1", "the seed is 4711", "the contact is Ines Varga", "the deadline is 06:30",
         "the table is fct_orders_12", "the window is 180 days", "the code is K-7459", "the cut-off is 3.5"]
"""Look-alike facts (each a name and a value), one per turn of :func:`fact_session`."""


def fact_session(turns: int, lead: str) -> list[Message]:
    """``turns`` exchanges of about 90 tokens, each user message stating one of :data:`FACTS` after ``lead``
    (``{t}`` in it: the turn), each reply the same advice."""
    history = [Message(role="system", content="You are a data assistant.")]
    for t in range(1, turns + 1):
        history += [
            Message(role="user", content=lead.format(t=t) + f"Note that {FACTS[t % len(FACTS)]} for team {t}.",
                    turn=t),
            Message(role="assistant", content=f"Noted for team {t}. Converting the date column first keeps the "
                                              "resample step simple; check the row counts after the merge.", turn=t),
        ]
    return history


def chat(turns: int, *, reply_words: int = 40, tool_every: int = 0, system: bool = True) -> list[Message]:
    """``turns`` user/assistant exchanges of small talk; every ``tool_every``-th one uses a tool."""
    out: list[Message] = [SYSTEM] if system else []
    for t in range(1, turns + 1):
        topic = TOPICS[t % len(TOPICS)]
        out.append(Message(role="user", content=f"Can you tell me about {topic}? (turn {t})", turn=t))
        if tool_every and t % tool_every == 0:
            call = ToolCall(id=f"call_{t}", name="run_cell", arguments=f'{{"code": "print({t})"}}')
            out.append(Message(role="assistant", content="", tool_calls=(call,), turn=t))
            out.append(Message(role="tool", content=f"output {t}\n" + "value,count\n" + "x,1\n" * 120,
                               tool_call_id=f"call_{t}", turn=t))
        words = " ".join(f"{topic.split()[-1]}{k % 7}" for k in range(reply_words))
        out.append(Message(role="assistant", content=f"About {topic}: {words}.", turn=t))
    return out


def decision_of(result: BuildResult, index: int):
    return next(d for d in result.decision.decisions if d.index == index)


def check_invariants(result: BuildResult, n_inputs: int) -> None:
    """What every build must satisfy: complete decisions, positions matching messages, budget, pairing."""
    decisions = result.decision.decisions
    assert [d.index for d in decisions] == list(range(n_inputs))
    if not result.budget.overflow:
        assert result.budget.used <= result.budget.available
    assert result.budget.used == result.report.total_after + result.report.tools_tokens + 3
    sent = sum(d.token_count_after for d in decisions) + result.report.summary_tokens
    assert sent == result.report.total_after
    for lr in result.report.layers:
        mine = [d for d in decisions if d.layer == lr.layer]
        assert lr.messages == len(mine)
        assert lr.tokens_before == sum(d.token_count_before for d in mine)
        extra = result.report.summary_tokens if lr.layer == "working" else 0
        assert lr.tokens_after == sum(d.token_count_after for d in mine) + extra
    assert result.report.total_before == sum(d.token_count_before for d in decisions)
    for d in decisions:
        if d.outcome in ("dropped", "summarized"):
            assert d.position is None and d.token_count_after == 0
        else:
            assert d.position is not None and 0 <= d.position < len(result.messages)
            assert result.messages[d.position].role == d.role
    # every tool result sent follows the assistant message that called it (pairing never split)
    open_ids: set[str] = set()
    for m in result.messages:
        if m.role == "tool":
            assert m.tool_call_id in open_ids, f"orphan tool result {m.tool_call_id}"
        elif m.role == "assistant" and m.tool_calls:
            open_ids = {c.id for c in m.tool_calls}
        else:
            open_ids = set()
    called = [c.id for m in result.messages if m.role == "assistant" for c in m.tool_calls]
    answered = {m.tool_call_id for m in result.messages if m.role == "tool"}
    assert all(c in answered for c in called), "a tool call was sent without its result"
