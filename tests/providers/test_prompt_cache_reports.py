"""Caches measured, not predicted: what each provider says its prompt cache reused.

- the local provider (llama.cpp in process, the bundled model): the prompt tokens llama.cpp did not
  evaluate again, read off the model as it decides them;
- OpenAI-compatible servers: ``prompt_tokens_details.cached_tokens``, or llama.cpp's server's
  ``timings.cache_n``; OpenAI's own API gets the session's ``prompt_cache_key``.
"""

from __future__ import annotations

from servers import fake_openai as oa
from servers.fixtures import FakeServer, RecordedSleep
from servers.scripted import Reply

from arcana_jupyter.messages import Message
from arcana_jupyter.providers.base import LLMRequest
from arcana_jupyter.providers.local import LocalProvider
from arcana_jupyter.providers.openai_compat import OpenAICompatProvider
from arcana_jupyter.providers.registry import cache_key_field
from arcana_jupyter.runtime import Runtime, RuntimeConfig

SYSTEM = Message(role="system", content="You answer questions about a bakery chain's sales. " * 12)


async def streamed(provider, messages: list[Message]):
    response = None
    async for chunk in provider.stream(LLMRequest(model="m", messages=messages, max_tokens=4, temperature=0)):
        if chunk.response is not None:
            response = chunk.response
    assert response is not None
    return response


async def test_the_local_model_reports_the_prompt_tokens_llama_cpp_did_not_evaluate_again(
        local_provider: LocalProvider):
    first = await streamed(local_provider, [SYSTEM, Message(role="user", content="Which region grew fastest?")])
    again = await streamed(local_provider, [SYSTEM, Message(role="user", content="Which store had problems?")])
    # the system message and the template around it are evaluated once: the second prompt reuses them
    assert 0.8 * first.usage.input_tokens <= again.usage.cached_input_tokens < again.usage.input_tokens
    other = await streamed(local_provider, [Message(role="system", content="Something else entirely."),
                                            Message(role="user", content="Hello")])
    assert other.usage.cached_input_tokens <= 5  # only the template's opening tokens are shared
    complete = await local_provider.complete(
        LLMRequest(model="m", messages=[SYSTEM, Message(role="user", content="Hi")], max_tokens=4, temperature=0))
    assert complete.usage.cached_input_tokens <= 5  # little shared with the prompt before it ...
    complete = await local_provider.complete(
        LLMRequest(model="m", messages=[SYSTEM, Message(role="user", content="Hello")], max_tokens=4, temperature=0))
    assert complete.usage.cached_input_tokens >= 0.8 * complete.usage.input_tokens  # ... and then all but the end


async def test_a_local_session_records_the_reuse_llama_cpp_reports_beside_the_predicted_one(
        tmp_path, local_provider: LocalProvider):
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model="local", total_window=2048, max_tokens=8,
                                           temperature=0, embeddings="off"), provider=local_provider)
    calls, decisions = [], []
    async with runtime.chat() as chat:
        chat.subscribe(lambda e: (calls if e.event_type == "llm_call" else decisions).append(e.metadata)
                       if e.event_type in ("llm_call", "context_decision") else None)
        for text in ["Hi, I'm looking at our bakery's sales.", "Which region grew fastest in Q3?",
                     "And which one shrank?", "Thanks. Summarise in one line."]:
            assert (await chat.send(text)).status == "ok"
    reported = [c.get("gen_ai.usage.cached_input_tokens") or 0 for c in calls]
    predicted = [d["report"]["uncached_tokens"] for d in decisions]
    used = [d["budget"]["used"] for d in decisions]
    assert predicted[0] == used[0]  # the first call: nothing is cached yet
    for k in range(1, len(calls)):
        assert reported[k] > 0
        # the runtime's prediction and llama.cpp's count agree to a few tokens (where a message's
        # common start is cut mid-token, and the one token llama.cpp evaluates again)
        assert abs((used[k] - predicted[k]) - reported[k]) <= 12, (k, used[k], predicted[k], reported[k])


async def test_llama_cpp_servers_cache_n_and_cached_tokens_are_read(
        fake_openai: FakeServer, recorded_sleep: RecordedSleep):
    p = OpenAICompatProvider(base_url=fake_openai.base_url, name="llamacpp", retry=recorded_sleep.policy(1))
    body = oa.completion("ok").json
    body["timings"] = {"cache_n": 37, "prompt_n": 5}
    fake_openai.script(Reply(json=body))
    response = await p.complete(LLMRequest(model="m", messages=[Message(role="user", content="x")]))
    assert response.usage.cached_input_tokens == 37
    events = oa.text_stream(["o", "k"])
    events[-2] = (None, {**events[-2][1], "timings": {"cache_n": 12, "prompt_n": 3}})
    fake_openai.script(Reply(events=events))
    chunks = [c async for c in p.stream(LLMRequest(model="m", messages=[Message(role="user", content="x")]))]
    assert chunks[-1].response.usage.cached_input_tokens == 12
    fake_openai.script(oa.completion("ok", cached=20))  # prompt_tokens_details wins where both are given
    assert (await p.complete(LLMRequest(model="m", messages=[Message(role="user", content="x")]))
            ).usage.cached_input_tokens == 20
    await p.aclose()


async def test_openais_api_gets_the_sessions_prompt_cache_key_and_other_servers_do_not(
        tmp_path, fake_openai: FakeServer, recorded_sleep: RecordedSleep):
    assert cache_key_field("https://api.openai.com/v1") == "prompt_cache_key"
    assert cache_key_field("http://127.0.0.1:8000/v1") is None  # vLLM, llama.cpp, LM Studio: not documented
    keyed = OpenAICompatProvider(base_url=fake_openai.base_url, name="openai", retry=recorded_sleep.policy(1),
                                 cache_key_field="prompt_cache_key")
    fake_openai.script(Reply(events=oa.text_stream(["a"])), Reply(events=oa.text_stream(["b"])))
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model="openai:gpt-4o-mini", embeddings="off"),
                      provider=keyed)
    async with runtime.chat() as chat:
        await chat.send("one")
        await chat.send("two")
        run_id = chat.run_id
    keys = [r.json.get("prompt_cache_key") for r in fake_openai.requests]
    assert keys[0] and keys == [keys[0]] * 2  # one key for the conversation ...
    assert run_id not in keys[0]  # ... that is not the run id itself
    await keyed.aclose()
    plain = OpenAICompatProvider(base_url=fake_openai.base_url, name="vllm", retry=recorded_sleep.policy(1))
    fake_openai.script(oa.completion("ok"))
    await plain.complete(LLMRequest(model="m", messages=[Message(role="user", content="x")], cache_key="k"))
    assert "prompt_cache_key" not in fake_openai.requests[-1].json
    await plain.aclose()
