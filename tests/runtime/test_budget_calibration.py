"""The budget is kept in the model's own tokens: calibration against the prompt_tokens a real HTTP
server reports, and one shrink-and-retry when the provider refuses a prompt as too long.

The provider is the real OpenAI-compatible client talking to a loopback server of ours that
speaks the documented chat-completions wire format (tests/servers/fake_openai.py).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from servers import fake_openai as oa
from servers.scripted import Reply

from arcana_jupyter.exceptions import ContextLengthError
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.recorded import ReplayProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.runtime.calibration import MAX_RATIO, WINDOW, Calibration
from arcana_jupyter.trace.reader import TraceReader


def streamed(text: str, prompt_tokens: int) -> Reply:
    """A streamed answer whose usage chunk reports ``prompt_tokens``."""
    events = oa.text_stream([text])
    events = [(name, oa.usage_chunk(prompt=prompt_tokens) if isinstance(data, dict) and "usage" in data else data)
              for name, data in events]
    return Reply(events=events)


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def decisions_of(path: Path) -> list[dict[str, Any]]:
    """The run's decisions as read back (a chained decision records its budget as a patch of the
    previous one's: the raw line need not hold it)."""
    return [r.metadata for r in TraceReader(path.parent).decision_records(path.stem)]


def runtime_for(server: Any, tmp_path: Path, **config: Any) -> Runtime:
    settings: dict[str, Any] = {"model": "openai:gpt-4o-mini", "trace_dir": tmp_path, "context_engine": False,
                                "total_window": 4000, "response_reserve": 1000, **config}
    return Runtime(providers={"openai": {"api_key": "sk-test-calibration-0000", "base_url": server.base_url}},
                   config=RuntimeConfig(**settings))


async def test_reported_prompt_tokens_calibrate_the_next_budget(fake_openai, tmp_path: Path) -> None:
    async with runtime_for(fake_openai, tmp_path).chat() as chat:
        # the server "reports" 1.5x what the builder will count for the first prompt
        counted_first = chat.counter.count_messages([*chat.history, Message(role="user", content="hello there")])
        fake_openai.script(streamed("first", math.ceil(counted_first * 1.5)), streamed("second", 10))
        await chat.send("hello there")
        await chat.send("and again")
        path = chat.trace_path
        assert chat.counter.encoding_name == "o200k_base" and chat.counter.exact
    events = events_of(path)
    calls = [e["metadata"] for e in events if e["event_type"] == "llm_call"]
    decisions = decisions_of(path)
    assert calls[0]["counted_input_tokens"] == counted_first, "the builder's count is the whole prompt's"
    assert calls[0]["reported_input_tokens"] == math.ceil(counted_first * 1.5)
    ratio = calls[0]["calibration"]
    assert 1.5 <= ratio < 1.52 and calls[0]["count_ratio"] >= 1.5
    # turn 1 had the full budget; turn 2's is shrunk by the ratio, and says so
    assert decisions[0]["budget"]["total_window"] == 4000 and decisions[0]["calibration"]["ratio"] == 1.0
    assert decisions[1]["calibration"]["ratio"] == ratio
    assert decisions[1]["budget"]["total_window"] == 1000 + math.floor(3000 / ratio)
    assert decisions[1]["builder"]["total_window"] == decisions[1]["budget"]["total_window"]


async def test_the_inspector_says_how_a_step_was_counted(fake_openai, tmp_path: Path) -> None:
    """The bundle's step carries the tokenizer, both counts and the ratio; the HTML says them in one line."""
    from arcana_jupyter.render.turn import turn_html

    async with runtime_for(fake_openai, tmp_path).chat() as chat:
        counted_first = chat.counter.count_messages([*chat.history, Message(role="user", content="hello there")])
        fake_openai.script(streamed("first", counted_first + 61), streamed("second", 10))
        await chat.send("hello there")
        await chat.send("and again")
        first, second = chat.turn_bundle(1)["steps"][0], chat.turn_bundle(2)["steps"][0]
    assert first["counting"] == {"encoding": "o200k_base", "ratio": 1.0, "counted": counted_first,
                                 "reported": counted_first + 61, "cached": 0}
    assert second["counting"]["ratio"] > 1.0 and second["counting"]["reported"] == 10
    html = turn_html(chat.turn_bundle(1))
    assert f"counted with o200k_base · the model counted {counted_first + 61:,} for {counted_first:,}" in html
    assert "budget calibrated ×" in turn_html(chat.turn_bundle(2))


async def test_a_length_refusal_shrinks_the_budget_and_retries_once(fake_openai, tmp_path: Path) -> None:
    refusal = oa.error(400, "This model's maximum context length is 4000 tokens. However, your messages "
                            "resulted in 4600 tokens. Please reduce the length of the messages.",
                       kind="invalid_request_error")
    fake_openai.script(refusal, streamed("fits now", 10))
    async with runtime_for(fake_openai, tmp_path).chat() as chat:
        reply = await chat.send("a question")
        path = chat.trace_path
    assert reply.status == "ok" and reply.text == "fits now"
    assert len(fake_openai.requests) == 2
    events = events_of(path)
    decisions = [{"metadata": d} for d in decisions_of(path)]
    errors = [e["metadata"] for e in events if e["event_type"] == "error"]
    assert [d["metadata"]["step"] for d in decisions] == [0, 0], "the retry is the same step, rebuilt"
    assert errors[0]["type"] == "ContextLengthError" and errors[0]["where"] == "provider"
    assert errors[0]["reported_input_tokens"] == 4600 and errors[0]["counted_input_tokens"] > 0
    ratio = decisions[1]["metadata"]["calibration"]["ratio"]
    assert ratio >= min(4600 / errors[0]["counted_input_tokens"], MAX_RATIO)  # believed up to MAX_RATIO
    assert decisions[1]["metadata"]["budget"]["total_window"] < decisions[0]["metadata"]["budget"]["total_window"]
    assert reply.decision is not None and any("refused the previous prompt as too long" in n
                                              for n in reply.decision.notes)

    # strict replay reproduces the refusal and the retry: same digests, same answer
    replay = ReplayProvider(tmp_path, reply.run_id)
    rt = Runtime(config=RuntimeConfig(model="openai:gpt-4o-mini", trace_dir=tmp_path / "again", context_engine=False,
                                      total_window=4000, response_reserve=1000), provider=replay)
    async with rt.chat() as again:
        replayed = await again.send("a question")
    assert replayed.text == "fits now" and replay.remaining == 0


async def test_a_second_refusal_fails_the_turn_and_keeps_what_was_recorded(fake_openai, tmp_path: Path) -> None:
    refusal = oa.error(400, "maximum context length is 4000 tokens; your messages resulted in 9000 tokens")
    fake_openai.script(streamed("turn one", 10), refusal, refusal)
    async with runtime_for(fake_openai, tmp_path).chat() as chat:
        first = await chat.send("first")
        reply = await chat.send("second", raise_errors=False)
        path = chat.trace_path
    assert first.status == "ok" and reply.status == "error" and isinstance(reply.error, ContextLengthError)
    events = events_of(path)
    ends = [e["metadata"]["status"] for e in events if e["event_type"] == "turn_end"]
    assert ends == ["ok", "error"]
    users = [e["metadata"]["message"]["content"] for e in events if e["event_type"] == "user_message"]
    assert users == ["first", "second"], "nothing recorded before the failure is lost"
    assert events[-1]["event_type"] == "run_end"


def test_calibration_only_shrinks_and_is_machine_independent() -> None:
    c = Calibration()
    assert c.budget(1024, 256).total_window == 1024
    assert c.observe(100, 90) == 0.9 and c.ratio == 1.0, "a count above the model's never grows the budget"
    c.observe(300, 400)
    assert c.ratio == 1.334  # rounded up to a thousandth
    assert c.budget(1024, 256).total_window == 256 + math.floor(768 / 1.334)
    c.require(2.0)
    for _ in range(WINDOW - 1):
        c.observe(100, 100)
    assert c.ratio == 2.0, "after a refusal the ratio stays at what was required for the window"
    c.observe(100, 100)
    assert c.ratio == 1.0, "... then the refusal ages out like any sample (hostile pass, defect 3)"


# ---- hostile pass, defects 2 and 3: what a provider reports is bounded ---------------------------

def test_hostile_3_calibration_is_bounded_and_a_refusal_lapses() -> None:
    c = Calibration()
    assert c.observe(1_000, 100_000) == 100.0 and c.ratio == 1.0, "a report 100x ours is not learned from"
    assert c.observe(1_000, 10**20) == 1_000_000.0 and c.ratio == 1.0
    c.observe(1_000, 1_300)
    assert c.ratio == 1.3
    c.require(9_999_999 / 1_261)  # an HTTP 400 quoting 9,999,999 tokens
    assert c.ratio == MAX_RATIO
    for _ in range(WINDOW):
        c.observe(1_000, 1_000)
    assert c.ratio == 1.0
    for bad in (float("nan"), float("inf"), 10**400):
        c.require(bad)
        assert c.ratio == MAX_RATIO
    assert Calibration(1e17).ratio == MAX_RATIO


async def test_hostile_2_a_400_digit_prompt_tokens_is_ignored(fake_openai, tmp_path: Path) -> None:
    fake_openai.script(streamed("first", 10**400 - 1), streamed("second", 10**20))
    async with runtime_for(fake_openai, tmp_path).chat() as chat:
        first = await chat.send("hello", raise_errors=False)
        second = await chat.send("again", raise_errors=False)
        path = chat.trace_path
    assert (first.status, second.status) == ("ok", "ok"), (first.error, second.error)
    assert first.usage.input_tokens == 0 and second.usage.input_tokens == 0  # not believed
    calls = [e["metadata"] for e in events_of(path) if e["event_type"] == "llm_call"]
    assert [c["calibration"] for c in calls] == [1.0, 1.0]


async def test_hostile_3_a_refusal_quoting_millions_of_tokens_does_not_starve_later_turns(
        fake_openai, tmp_path: Path) -> None:
    refusal = oa.error(400, "This model's maximum context length is 4000 tokens. However, your messages "
                            "resulted in 9999999 tokens.", kind="invalid_request_error")
    turns = WINDOW + 2
    fake_openai.script(refusal, *[streamed(f"answer {i}", 0 if i % 2 else 10) for i in range(turns)])
    async with runtime_for(fake_openai, tmp_path).chat() as chat:
        for i in range(turns):
            reply = await chat.send(f"question {i} " + "words " * 20)
            assert reply.status == "ok"
        path = chat.trace_path
    # through the reader: a decision whose calibration did not change refers to the previous one's (chain.same)
    decisions = [e.metadata for e in TraceReader(path).events(path.stem, event_types=["context_decision"])]
    ratios = [d["calibration"]["ratio"] for d in decisions]
    assert max(ratios) == MAX_RATIO, "the refusal shrinks the budget, but only so far"
    assert ratios[-1] == 1.0 and decisions[-1]["budget"]["total_window"] == 4000, "... and lapses"
    sent = fake_openai.requests[-1].json["messages"]
    assert any("question 0" in str(m.get("content")) for m in sent), "history is sent again"
