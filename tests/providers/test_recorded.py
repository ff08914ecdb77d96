"""ReplayProvider: record real runs with the runtime, replay them, and catch divergences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arcana_jupyter.exceptions import ConfigError, ReplayDivergence
from arcana_jupyter.messages import Message, ToolSpec
from arcana_jupyter.providers.base import LLMRequest
from arcana_jupyter.providers.function import ScriptedProvider, tool_call
from arcana_jupyter.providers.recorded import ReplayProvider, diff_messages, diff_tools
from arcana_jupyter.providers.registry import create_provider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.reader import TraceReader


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18 C and sunny in {city}"


def get_time(city: str) -> str:
    """The local time in a city."""
    return f"12:00 in {city}"


INPUTS = ["Weather in Paris?", "Thanks!"]


async def record(trace_dir: Path, **config) -> tuple[str, list[str]]:
    script = ScriptedProvider([tool_call("get_weather", {"city": "Paris"}, id="call_1"), "It is sunny in Paris.",
                               "You're welcome."])
    runtime = Runtime(config=RuntimeConfig(trace_dir=trace_dir, **config), tools=[get_weather], provider=script)
    async with runtime.chat() as chat:
        replies = [str(await chat.send(text)) for text in INPUTS]
        return chat.run_id, replies


def llm_lines(trace_dir: Path, run_id: str) -> list[dict]:
    lines = (trace_dir / f"{run_id}.jsonl").read_text().splitlines()
    return [json.loads(line)["metadata"] for line in lines if '"event_type":"llm_call"' in line]


async def test_replay_reproduces_a_recorded_run_byte_for_byte(tmp_path):
    run_id, replies = await record(tmp_path)
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model=f"replay:{run_id}"), tools=[get_weather])
    async with runtime.chat() as chat:
        replayed = [str(await chat.send(text)) for text in INPUTS]
        new_run = chat.run_id
        provider = chat.provider
    assert isinstance(provider, ReplayProvider) and provider.remaining == 0 and provider.divergences == []
    assert replayed == replies
    original, again = llm_lines(tmp_path, run_id), llm_lines(tmp_path, new_run)
    assert len(original) == 3
    for a, b in zip(original, again, strict=True):
        assert json.dumps(a["message"], sort_keys=True) == json.dumps(b["message"], sort_keys=True)
        assert a["request_digest"] == b["request_digest"]
        assert a["gen_ai.usage.input_tokens"] == b["gen_ai.usage.input_tokens"]
        assert a["gen_ai.request.model"] == b["gen_ai.request.model"]


async def test_a_changed_system_prompt_is_reported_by_message(tmp_path):
    run_id, _ = await record(tmp_path)
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model=f"replay:{run_id}",
                                           system_prompt="You are a pirate. Answer in pirate speak."),
                      tools=[get_weather])
    async with runtime.chat() as chat:
        with pytest.raises(ReplayDivergence) as info:
            await chat.send(INPUTS[0])
    report = info.value.report
    assert f"run {run_id}, agent main, turn 1, step 0" in report
    assert "message 0 (system): content changed" in report
    assert "-You are a helpful assistant" in report and "+You are a pirate. Answer in pirate speak." in report
    assert "turn 1, step 0" in str(info.value)


async def test_lenient_mode_records_divergences_and_continues(tmp_path):
    run_id, replies = await record(tmp_path)
    runtime = Runtime(providers={"replay": {"strict": False}},
                      config=RuntimeConfig(trace_dir=tmp_path, model=f"replay:{run_id}"), tools=[get_weather])
    async with runtime.chat() as chat:
        first = str(await chat.send("Weather in Lyon?"))
        second = str(await chat.send(INPUTS[1]))
        provider = chat.provider
    assert [first, second] == replies
    assert isinstance(provider, ReplayProvider)
    assert provider.divergences and provider.divergences[0].turn == 1
    assert "message 1 (user): content changed" in provider.divergences[0].report
    assert "+Weather in Lyon?" in provider.divergences[0].report


async def test_snapshot_runs_compare_exactly_and_report_tool_changes(tmp_path):
    run_id, _ = await record(tmp_path, trace_include_prompt_snapshots=True)
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model=f"replay:{run_id}"), tools=[get_weather, get_time])
    async with runtime.chat() as chat:
        with pytest.raises(ReplayDivergence) as info:
            await chat.send(INPUTS[0])
    assert "compared with: the recorded prompt snapshot (exact)" in info.value.report
    assert "tool 'get_time' added" in info.value.report


async def test_running_past_the_recording_is_a_clear_error(tmp_path):
    run_id, _ = await record(tmp_path)
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model=f"replay:{run_id}"), tools=[get_weather])
    async with runtime.chat() as chat:
        for text in INPUTS:
            await chat.send(text)
        with pytest.raises(ReplayDivergence, match=r"call 4 asked, but the recording has only 3 LLM call"):
            await chat.send("One more thing")


async def test_replay_directly_streams_the_recording(tmp_path):
    run_id, _ = await record(tmp_path)
    provider = ReplayProvider(TraceReader(tmp_path), run_id, strict=False)
    request = LLMRequest(model=provider.model_name, messages=[Message(role="user", content="anything")])
    first = [c async for c in provider.stream(request)]
    assert first[-1].response is not None and first[-1].response.finish_reason == "tool_calls"
    assert [c.tool_call_delta.name for c in first if c.tool_call_delta] == ["get_weather"]
    second = [c async for c in provider.stream(request)]
    assert "".join(c.text for c in second) == "It is sunny in Paris."
    assert len(provider.divergences) == 2


def test_unknown_runs_and_missing_trace_dirs_are_config_errors(tmp_path):
    (tmp_path / "r_x.jsonl").write_text("")
    with pytest.raises(ConfigError, match="no recorded LLM calls"):
        ReplayProvider(tmp_path, "r_x")
    with pytest.raises(ConfigError, match="trace_dir"):
        create_provider("replay:r_x", {})
    with pytest.raises(ConfigError, match="run id"):
        create_provider("replay:", {}, trace_dir=tmp_path)


def test_message_and_tool_diffs_name_what_changed():
    old = [{"role": "system", "content": "A"}, {"role": "user", "content": "hi"}]
    new = [{"role": "system", "content": "A"}, {"role": "user", "content": "hi"}, {"role": "user", "content": "more"}]
    assert diff_messages(old, new) == ["message 2 added (new user: 'more')"]
    assert diff_messages(new, old) == ["message 2 removed (recorded user: 'more')"]
    assert diff_messages(old, [old[0], {"role": "assistant", "content": "hi"}])[0].startswith(
        "message 1: role changed from user to assistant")
    spec = ToolSpec(name="f", description="x").wire()
    changed = ToolSpec(name="f", description="y").wire()
    assert diff_tools([spec], [changed]) == ["tool 'f' changed (description)"]
    assert diff_tools([spec], []) == ["tool 'f' removed"]


@pytest.mark.slow
async def test_a_local_model_session_with_a_tool_replays_identically(tmp_path, local_provider):
    # one model call per turn (max_tool_steps=1): the 135M model would keep calling the tool
    # (context_engine off: its ten adaptive-context tools would make every prompt ~2k tokens)
    config = {"trace_dir": tmp_path, "user_tools": "on", "max_tokens": 12, "seed": 7, "total_window": 4096,
              "response_reserve": 256, "max_tool_steps": 1, "context_engine": False}
    runtime = Runtime(config=RuntimeConfig(**config), tools=[get_weather], provider=local_provider)
    async with runtime.chat() as chat:
        replies = [str(await chat.send(t)) for t in ("What is the weather in Paris? Use the tool.", "Thanks")]
        run_id = chat.run_id
    calls = llm_lines(tmp_path, run_id)
    assert any(c["message"].get("tool_calls") for c in calls)

    replay = Runtime(config=RuntimeConfig(**(config | {"model": f"replay:{run_id}"})), tools=[get_weather])
    async with replay.chat() as chat:
        replayed = [str(await chat.send(t)) for t in ("What is the weather in Paris? Use the tool.", "Thanks")]
        new_run = chat.run_id
    assert replayed == replies
    assert [c["message"] for c in llm_lines(tmp_path, new_run)] == [c["message"] for c in calls]


async def test_runs_without_snapshots_compare_with_the_prompt_as_sent(tmp_path):
    """No snapshots: the divergence report compares with the recorded prompt_sent (the prompt exactly as
    sent), not with an approximation from the transcript."""
    run_id, _ = await record(tmp_path)
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model=f"replay:{run_id}"), tools=[get_weather, get_time])
    async with runtime.chat() as chat:
        with pytest.raises(ReplayDivergence) as info:
            await chat.send(INPUTS[0])
    assert "compared with: the recorded prompt as sent (prompt_sent; secrets masked)" in info.value.report
    assert "tool 'get_time' added" in info.value.report


class Interruptible(ScriptedProvider):
    """Answers from a script; the call asked ``long`` streams slowly until it is cancelled."""

    async def stream(self, request: LLMRequest):  # type: ignore[override]
        import asyncio

        from arcana_jupyter.providers.base import StreamChunk

        if request.messages[-1].content == "long":
            for word in ("A ", "long ", "answer ", "that "):
                yield StreamChunk(text=word)
                await asyncio.sleep(0.01)
            self.cut = asyncio.Event()
            self.cut.set()
            await asyncio.sleep(30)
        async for chunk in super().stream(request):
            yield chunk


async def test_an_interrupted_turn_replays_as_cancelled_and_the_next_turns_line_up(tmp_path):
    import asyncio

    from arcana_jupyter.trace.reader import TraceReader

    provider = Interruptible(["first answer", "after the interrupt", "last answer"])
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), provider=provider)
    async with runtime.chat() as chat:
        await chat.send("one")
        task = asyncio.create_task(chat.send("long"))
        while not getattr(provider, "cut", None):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await chat.send("two")
        await chat.send("three")
        recorded = chat.run_id
    replay = ReplayProvider(tmp_path, recorded)
    assert [type(item).__name__ for item in replay.script] == ["LlmCall", "CancelledCall", "LlmCall", "LlmCall"]
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, model=f"replay:{recorded}"))
    async with runtime.chat() as chat:
        assert (await chat.send("one")).text == "first answer"
        tokens: list[str] = []
        with pytest.raises(asyncio.CancelledError):
            await chat.send("long", on_token=tokens.append)
        assert "".join(tokens) == "A long answer that "
        assert (await chat.send("two")).text == "after the interrupt"
        assert (await chat.send("three")).text == "last answer"
        again = chat.run_id
    reader = TraceReader(tmp_path)

    def digests(run: str) -> list[str]:
        return [e.metadata["request_digest"] for e in reader.events(run, event_types=["context_decision"])]

    def ends(run: str) -> list[tuple[str, str]]:
        return [(e.metadata["status"], e.metadata["reply"]) for e in reader.events(run, event_types=["turn_end"])]

    assert digests(again) == digests(recorded) and ends(again) == ends(recorded)
    assert ends(recorded)[1] == ("cancelled", "A long answer that ")


async def test_a_turn_that_fails_early_does_not_shift_the_turns_after_it(tmp_path):
    """The session tells the replay which turn it answers: a replayed turn that makes fewer calls
    than recorded (its first call diverges and fails the turn; the recording's turn 1 made two)
    leaves the next turn's call alone."""
    run_id, replies = await record(tmp_path)
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model=f"replay:{run_id}"), tools=[get_weather])
    async with runtime.chat() as chat:
        first = await chat.send("Weather in Rome?", raise_errors=False)
        assert first.status == "error" and isinstance(first.error, ReplayDivergence)  # after 1 of its 2 calls
        chat.provider.strict = False  # turn 2's history differs now; answer it as recorded
        second = await chat.send(INPUTS[1])
    assert str(second) == replies[1] == "You're welcome."


async def test_a_turn_interrupted_while_a_tool_ran_is_cancelled_again_at_that_tool(tmp_path):
    """Interrupted while a tool ran: the call is answered ``interrupted``, the turn closed; a replay is
    cancelled before running that tool, so the history and every later prompt are the same."""
    import asyncio

    from arcana_jupyter.trace.reader import TraceReader

    slow = {"on": True}
    started = asyncio.Event()

    async def lookup(city: str) -> str:
        """Look a city up."""
        if slow["on"]:
            started.set()
            await asyncio.sleep(30)
        return f"{city}: found"

    script = ScriptedProvider([tool_call("lookup", {"city": "Oslo"}, id="call_1"), "after the interrupt"])
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), tools=[lookup],
                      provider=script)
    async with runtime.chat() as chat:
        task = asyncio.create_task(chat.send("find Oslo"))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await chat.send("thanks")
        recorded = chat.run_id
    slow["on"] = False
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, model=f"replay:{recorded}"),
                      tools=[lookup])
    async with runtime.chat() as chat:
        with pytest.raises(asyncio.CancelledError):
            await chat.send("find Oslo")
        assert chat.history[-1].content == "[interrupted by the user]"
        assert (await chat.send("thanks")).text == "after the interrupt"
        again = chat.run_id
    reader = TraceReader(tmp_path)

    def digests(run: str) -> list[str]:
        return [e.metadata["request_digest"] for e in reader.events(run, event_types=["context_decision"])]

    def ends(run: str) -> list[str]:
        return [e.metadata["status"] for e in reader.events(run, event_types=["turn_end"])]

    assert ends(recorded) == ends(again) == ["cancelled", "ok"]
    assert len(digests(recorded)) == 2 and digests(again) == digests(recorded)
    # every tool call the model made has its result in the history (an API refuses a prompt without)
    history = reader.history(recorded, strict=True)
    assert [m.role for m in history] == ["system", "user", "assistant", "tool", "assistant", "user", "assistant"]
    assert '"error":"interrupted"' in history[3].content and history[3].tool_call_id == "call_1"
    assert history[4].content == "[interrupted by the user]"


async def test_a_turn_interrupted_before_its_first_call_is_cancelled_again_before_it_is_built(tmp_path):
    import asyncio

    from arcana_jupyter.trace.reader import TraceReader

    class SlowToShape(ScriptedProvider):
        """Looking up the chat template takes long the first time (a big GGUF opening)."""

        started = asyncio.Event()

        async def prompt_shape(self, model=None):  # type: ignore[override]
            if not self.started.is_set():
                self.started.set()
                await asyncio.sleep(30)
            return await super().prompt_shape(model)

    provider = SlowToShape(["the answer"])
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False), provider=provider)
    async with runtime.chat() as chat:
        task = asyncio.create_task(chat.send("first"))
        await provider.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await chat.send("second")
        recorded = chat.run_id
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, context_engine=False, model=f"replay:{recorded}"))
    async with runtime.chat() as chat:
        with pytest.raises(asyncio.CancelledError):
            await chat.send("first")
        assert (await chat.send("second")).text == "the answer"
        again = chat.run_id
    reader = TraceReader(tmp_path)
    for run in (recorded, again):
        decisions = reader.events(run, event_types=["context_decision"])
        assert [e.turn for e in decisions] == [2]
    assert (reader.events(again, event_types=["context_decision"])[0].metadata["request_digest"]
            == reader.events(recorded, event_types=["context_decision"])[0].metadata["request_digest"])
