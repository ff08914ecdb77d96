"""ChatSession end to end on a scripted model: the turn loop, the tool loop, errors, accounting."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from scripted_chat import call, events_of, say

from arcana_jupyter.exceptions import RateLimitError
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Provider, StreamChunk
from arcana_jupyter.runtime import Runtime, RuntimeConfig


async def test_a_turn_is_recorded_event_by_event(make_runtime) -> None:
    runtime, script = make_runtime(say("Hi there"))
    async with runtime.chat() as chat:
        reply = await chat.send("Hello")
        assert reply.text == "Hi there" and str(reply) == "Hi there"
        assert reply.turn == 1 and reply.status == "ok" and reply.run_id == chat.run_id
        path = chat.trace_path
    types = [e["event_type"] for e in events_of(path)]
    assert types == ["run_start", "turn_start", "user_message", "context_decision", "prompt_sent", "llm_call",
                     "turn_end", "run_end"]
    request = script.requests[0]
    assert [m.role for m in request.messages] == ["system", "user"]
    assert request.messages[-1].content == "Hello"


async def test_the_digest_recorded_is_the_request_sent(make_runtime) -> None:
    from arcana_jupyter.messages import request_digest

    runtime, script = make_runtime(say("a"), say("b"))
    async with runtime.chat() as chat:
        await chat.send("one")
        await chat.send("two")
        path = chat.trace_path
    decisions = [e for e in events_of(path) if e["event_type"] == "context_decision"]
    for event, request in zip(decisions, script.requests, strict=True):
        assert event["metadata"]["request_digest"] == request_digest(request.messages, request.tools, request.model)


async def test_tool_loop_runs_python_functions(make_runtime) -> None:
    def area(width: float, height: float) -> float:
        """Area of a rectangle.

        Args:
            width: in metres.
            height: in metres.
        """
        return width * height

    runtime, script = make_runtime(call("area", {"width": 2, "height": 3.5}), say("7 square metres"), tools=(area,))
    async with runtime.chat() as chat:
        reply = await chat.send("How big is it?")
    assert reply.text == "7 square metres" and reply.steps == 2
    assert reply.tool_calls == [{"name": "area", "arguments": {"width": 2, "height": 3.5}, "ok": True,
                                 "result": "7.0", "intercepted": False}]
    spec = script.requests[0].tools[0]
    assert spec.name == "area" and spec.description == "Area of a rectangle."
    assert spec.parameters["required"] == ["width", "height"]
    assert spec.parameters["properties"]["width"] == {"type": "number", "description": "in metres."}
    second = script.requests[1].messages
    assert [m.role for m in second[-2:]] == ["assistant", "tool"] and second[-1].content == "7.0"


@pytest.mark.parametrize(
    ("tool_call", "error"),
    [
        (call("area", {"width": "wide", "height": 1}), "bad_arguments"),
        (call("area", {"width": 1}), "bad_arguments"),
        (call("area", "{not json"), "bad_arguments"),
        (call("volume", {"x": 1}), "unknown_tool"),
        (call("area", {"width": -1, "height": 1}), "ValueError"),
    ],
)
async def test_bad_tool_calls_become_structured_results(make_runtime, tool_call, error) -> None:
    import json

    def area(width: float, height: float) -> float:
        if width < 0:
            raise ValueError("width must be positive")
        return width * height

    runtime, script = make_runtime(tool_call, say("sorry"), tools=(area,))
    async with runtime.chat() as chat:
        reply = await chat.send("area?")
    assert reply.status == "ok" and reply.text == "sorry"
    result = json.loads(script.requests[1].messages[-1].content)
    assert result["ok"] is False and result["error"] == error
    assert reply.tool_calls[0]["ok"] is False


async def test_large_tool_output_is_bounded_with_a_marker(make_runtime) -> None:
    def dump() -> str:
        return "line of log output\n" * 5000

    runtime, script = make_runtime(call("dump", {}), say("done"), tools=(dump,), tool_output_max_tokens=200)
    async with runtime.chat() as chat:
        await chat.send("dump it")
    content = script.requests[1].messages[-1].content
    assert "tokens of tool output cut" in content
    assert chat.counter.count_text(content) <= 230
    assert content.startswith("line of log output") and content.rstrip().endswith("line of log output")


async def test_async_tools_and_tool_steps_limit(make_runtime) -> None:
    async def ping(n: int) -> str:
        await asyncio.sleep(0)
        return f"pong {n}"

    runtime, script = make_runtime(*[call("ping", {"n": i}, call_id=f"c{i}") for i in range(3)], say("pong it is"),
                                   tools=(ping,), max_tool_steps=3)
    async with runtime.chat() as chat:
        reply = await chat.send("ping forever")
        path = chat.trace_path
    assert reply.steps == 4 and reply.text == "pong it is" and reply.status == "ok"
    assert script.requests[-1].tools == [] and all(r.tools for r in script.requests[:-1])
    errors = [e for e in events_of(path) if e["event_type"] == "error"]
    assert errors and errors[0]["metadata"]["type"] == "max_tool_steps"
    last = [e for e in events_of(path) if e["event_type"] == "context_decision"][-1]["metadata"]
    assert last["tool_loop"]["reason"] == "max_tool_steps" and last["tools"] == []


async def test_a_repeated_tool_call_stops_the_loop_with_its_decision(make_runtime) -> None:
    runs: list[str] = []

    def lookup(city: str) -> str:
        runs.append(city)
        return f"{city}: 12 degrees"

    # key order and spacing do not make a call new
    runtime, script = make_runtime(call("lookup", {"city": "Oslo"}, call_id="a"),
                                   call("lookup", '{ "city" :  "Oslo" }', call_id="b"),
                                   say("It is 12 degrees in Oslo."), tools=(lookup,), max_tool_steps=8)
    async with runtime.chat() as chat:
        reply = await chat.send("weather in Oslo?")
        path = chat.trace_path
    assert runs == ["Oslo"], "the repeated call must not run twice"
    assert reply.text == "It is 12 degrees in Oslo." and reply.steps == 3 and reply.status == "ok"
    assert reply.tool_calls[1]["ok"] is False and '"repeated_call"' in reply.tool_calls[1]["result"]
    assert script.requests[-1].tools == [], "the last call is made without tools"
    events = events_of(path)
    decisions = [e["metadata"] for e in events if e["event_type"] == "context_decision"]
    assert decisions[-1]["tool_loop"] == {"stopped": True, "reason": "repeated_call",
                                          "detail": "lookup called again with the same arguments (first at step 0)"}
    assert reply.decision is not None
    assert any(n.startswith("tools withheld for this call: repeated_call") for n in reply.decision.notes)
    assert [e["metadata"]["type"] for e in events if e["event_type"] == "error"] == ["repeated_call"]


async def test_steps_without_progress_stop_the_loop(make_runtime) -> None:
    def broken(x: int) -> str:
        raise RuntimeError("backend down")

    runtime, _script = make_runtime(call("broken", {"x": 1}), call("broken", {"x": 2}),
                                   say("Sorry, the backend is down."),
                                   tools=(broken,), max_tool_steps=8, tool_no_progress_steps=2)
    async with runtime.chat() as chat:
        reply = await chat.send("try it")
        path = chat.trace_path
    assert reply.steps == 3 and reply.text == "Sorry, the backend is down."
    last = [e for e in events_of(path) if e["event_type"] == "context_decision"][-1]["metadata"]
    assert last["tool_loop"]["reason"] == "no_progress"


async def test_the_tool_loop_has_a_wall_clock_budget(make_runtime) -> None:
    async def slow(n: int) -> str:
        await asyncio.sleep(0.3)
        return f"done {n}"

    runtime, script = make_runtime(call("slow", {"n": 1}), say("finished"),
                                   tools=(slow,), max_tool_steps=8, max_tool_seconds=0.2)
    async with runtime.chat() as chat:
        reply = await chat.send("go")
        path = chat.trace_path
    assert reply.text == "finished" and reply.steps == 2 and script.requests[-1].tools == [], "no more tools"
    last = [e for e in events_of(path) if e["event_type"] == "context_decision"][-1]["metadata"]
    assert last["tool_loop"]["reason"] == "max_tool_seconds"


async def test_ask_user_is_intercepted(make_runtime, tmp_path: Path) -> None:
    script_steps = (call("ask_user", {"question": "Which region?"}), say("EMEA it is"))
    from scripted_chat import Script

    from arcana_jupyter.providers.function import FunctionProvider

    script = Script(*script_steps)
    asked: list[str] = []
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path), provider=FunctionProvider(script),
                      ask_user=lambda q: asked.append(q) or "EMEA")
    async with runtime.chat() as chat:
        reply = await chat.send("Sales by region?")
    assert asked == ["Which region?"]
    assert reply.tool_calls[0]["intercepted"] is True
    assert '"answer": "EMEA"' in script.requests[1].messages[-1].content


class FailingProvider(Provider):
    name = "failing"

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.calls += 1
        if self.calls <= 2:
            raise RateLimitError("rate limited by test (429) after 4 retries; wait and try again", provider="x",
                                 status=429)
        return say("recovered")


async def test_provider_errors_end_the_turn_cleanly_and_the_session_survives(tmp_path: Path) -> None:
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path), provider=FailingProvider())
    async with runtime.chat() as chat:
        reply = await chat.send("first", raise_errors=False)
        assert reply.status == "error" and isinstance(reply.error, RateLimitError)
        with pytest.raises(RateLimitError):
            await chat.send("raise please")  # raise_errors defaults to True for scripts
        ok = await chat.send("second")
        assert ok.text == "recovered" and ok.turn == 3
        path = chat.trace_path
    events = events_of(path)
    ends = [e["metadata"]["status"] for e in events if e["event_type"] == "turn_end"]
    assert ends == ["error", "error", "ok"]
    user_messages = [e for e in events if e["event_type"] == "user_message"]
    assert len(user_messages) == 3  # nothing already recorded is lost


class SlowStream(Provider):
    name = "slow"

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return say("unused")

    async def stream(self, request: LLMRequest):  # type: ignore[override]
        for word in ["partial ", "answer ", "that ", "never ", "ends"]:
            yield StreamChunk(text=word)
            self.started.set()
            await asyncio.sleep(0.05 if word != "that " else 30)


async def test_cancellation_records_what_was_received(tmp_path: Path) -> None:
    provider = SlowStream()
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path), provider=provider)
    chat = runtime.chat()
    tokens: list[str] = []
    task = asyncio.create_task(chat.send("tell me", on_token=tokens.append))
    await provider.started.wait()
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    events = events_of(chat.trace_path)
    end = [e for e in events if e["event_type"] == "turn_end"][-1]
    assert end["metadata"]["status"] == "cancelled"
    err = [e for e in events if e["event_type"] == "error"][-1]
    # the partial reply is recorded once: in turn_end.reply; the error says how much
    assert end["metadata"]["reply"] == "partial answer that "
    assert "received" not in err["metadata"] and err["metadata"]["received_chars"] == len("partial answer that ")
    # the partial reply and a note close the turn in the history, recorded as a history message
    assert chat.history[-1].content == "partial answer that\n\n[interrupted by the user]"
    assert end["metadata"]["message"]["content"] == chat.history[-1].content
    assert end["metadata"]["history_index"] == len(chat.history) - 1
    assert tokens == ["partial ", "answer ", "that "]
    # the tokens received are counted (no final usage came): the inspector no longer says 0 out tokens
    assert end["metadata"]["usage"]["output_tokens"] == chat.counter.count_text("partial answer that ") > 0
    assert chat.usage.output_tokens >= end["metadata"]["usage"]["output_tokens"]
    await chat.aclose()


def test_a_session_that_cannot_start_leaves_no_empty_trace(tmp_path: Path) -> None:
    from arcana_jupyter.exceptions import ArcanaError

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model="nonexistent:model"))
    with pytest.raises(ArcanaError):
        runtime.chat()
    assert list(tmp_path.glob("*.jsonl")) == []


async def test_usage_and_cost_accounting(tmp_path: Path) -> None:
    from scripted_chat import Script

    from arcana_jupyter.providers.function import FunctionProvider

    script = Script(say("a", usage=(1000, 100)), say("b", usage=(2000, 50)))
    provider = FunctionProvider(script, model_name="house-model", name="house")
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, prices={"house-model": (1.0, 2.0)}), provider=provider)
    async with runtime.chat() as chat:
        r1 = await chat.send("one")
        r2 = await chat.send("two")
        assert r1.usage.input_tokens == 1000 and r2.usage.output_tokens == 50
        assert chat.usage.input_tokens == 3000 and chat.usage.output_tokens == 150
        assert r1.cost_usd == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)
        assert chat.cost_usd == pytest.approx((3000 * 1.0 + 150 * 2.0) / 1e6)
        path = chat.trace_path
    run_end = events_of(path)[-1]
    assert run_end["event_type"] == "run_end" and run_end["metadata"]["usage"]["input_tokens"] == 3000
    assert run_end["metadata"]["cost_usd"] == pytest.approx(chat.cost_usd)


def test_sync_use_from_plain_code_and_from_inside_a_running_loop(make_runtime) -> None:
    runtime, _ = make_runtime(say("sync one"), say("sync two"))
    with runtime.chat() as chat:
        assert chat.send_sync("hi").text == "sync one"

        async def inside_a_loop() -> str:  # what a notebook cell is
            return chat.send_sync("again").text

        assert asyncio.run(inside_a_loop()) == "sync two"
    runtime.close()


async def test_streaming_tokens_reach_the_callback(make_runtime) -> None:
    runtime, _ = make_runtime(say("streamed words"))
    seen: list[str] = []
    async with runtime.chat() as chat:
        await chat.send("go", on_token=seen.append)
    assert "".join(seen) == "streamed words"


async def test_subscribers_see_every_event_live(make_runtime) -> None:
    runtime, _ = make_runtime(say("x"))
    seen: list[str] = []
    async with runtime.chat() as chat:
        chat.subscribe(lambda e: seen.append(e.event_type))
        chat.subscribe(lambda e: 1 / 0)  # a broken subscriber must not break the turn
        await chat.send("hello")
    assert seen[:6] == ["turn_start", "user_message", "context_decision", "prompt_sent", "llm_call", "turn_end"]


async def test_session_tools_do_not_leak_into_other_sessions(make_runtime) -> None:
    def shared() -> str:
        return "s"

    def private() -> str:
        return "p"

    runtime, script = make_runtime(say("a"), say("b"), tools=(shared,))
    async with runtime.chat() as one, runtime.chat() as two:
        one.add_tool(private)
        await one.send("hi")
        await two.send("hi")
    assert [t.name for t in script.requests[0].tools] == ["shared", "private"]
    assert [t.name for t in script.requests[1].tools] == ["shared"]


def test_ctrl_c_during_a_sync_send_cancels_and_records_the_turn(tmp_path: Path) -> None:
    import signal
    import threading

    provider = SlowStream()
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), provider=provider)
    chat = runtime.chat()
    timer = threading.Timer(1.0, lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        chat.send_sync("tell me")  # what a notebook cell does; Ctrl-C arrives as SIGINT
    timer.join()
    end = [e for e in events_of(chat.trace_path) if e["event_type"] == "turn_end"][-1]
    assert end["metadata"]["status"] == "cancelled"
    assert chat.send_sync  # the session is still usable
    chat.close()
    runtime.close()


async def test_an_unexpected_exception_still_closes_the_turn_in_the_trace(tmp_path: Path) -> None:
    class Broken(Provider):
        name = "broken"

        async def complete(self, request: LLMRequest) -> LLMResponse:
            raise RuntimeError("provider bug")

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), provider=Broken())
    async with runtime.chat() as chat:
        with pytest.raises(RuntimeError, match="provider bug"):
            await chat.send("hello")
        path = chat.trace_path
    events = events_of(path)
    end = next(e for e in events if e["event_type"] == "turn_end")
    assert end["metadata"]["status"] == "error"
    err = next(e for e in events if e["event_type"] == "error")
    assert err["metadata"]["recoverable"] is False and "provider bug" in err["metadata"]["message"]


class HangsFirst(Provider):
    """The second call hangs before its first token (a long prompt evaluating); the others answer
    with what the last user message says."""

    name = "hangs"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.calls = 0
        self.prompts: list[list[Message]] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return say("unused")

    async def stream(self, request: LLMRequest):  # type: ignore[override]
        self.calls += 1
        self.prompts.append(list(request.messages))
        if self.calls == 2:
            self.started.set()
            await asyncio.sleep(30)
        last = [m for m in request.messages if m.role == "user"][-1].content
        yield StreamChunk(response=say(f"answer to: {last}"))


async def test_after_an_interrupt_the_next_turn_answers_the_next_input(tmp_path: Path) -> None:
    """Interrupted before its first token, a turn used to leave its question unanswered in the
    history: the next prompt held two user messages in a row, which chat templates join, so the
    model answered the interrupted question. The turn now ends with a closing assistant message
    (recorded, so resume and rebuild see the same history) and the next input stands alone."""
    from arcana_jupyter.trace.reader import TraceReader

    provider = HangsFirst()
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), provider=provider)
    chat = runtime.chat()
    await chat.send("first question")
    task = asyncio.create_task(chat.send("explain photosynthesis in detail"))
    await provider.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    reply = await chat.send("What is the capital of France?")
    sent = provider.prompts[-1]
    assert [m.role for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert sent[-2].content == "[interrupted by the user]" and sent[-1].content == "What is the capital of France?"
    assert reply.text == "answer to: What is the capital of France?"
    recorded = TraceReader(tmp_path, strict=True).history(chat.run_id)
    assert [(m.role, m.content) for m in recorded] == [(m.role, m.content) for m in chat.history]
    await chat.aclose()
