"""Anthropic requests carry cache_control at the stable prefix, within the API's documented rules,
checked on a loopback Messages API that applies those rules (servers/anthropic_cache.py)."""

from __future__ import annotations

import copy

from servers.anthropic_cache import PromptCache
from servers.scripted import ScriptedServer

from arcana_jupyter.providers.anthropic import MAX_BREAKPOINTS, AnthropicProvider, cache_breakpoints
from arcana_jupyter.runtime import Runtime, RuntimeConfig

CACHE = {"type": "ephemeral"}


def marked(body: dict) -> list[str]:
    """Where ``cache_control`` went, as short paths."""
    out = [f"tools[{k}]" for k, t in enumerate(body.get("tools") or []) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        out += [f"system[{k}]" for k, b in enumerate(system) if "cache_control" in b]
    for k, m in enumerate(body["messages"]):
        out += [f"messages[{k}][{j}]" for j, b in enumerate(m["content"]) if "cache_control" in b]
    return out


def test_breakpoints_mark_tools_system_the_conversation_and_the_input_before_its_context_block():
    body = {
        "tools": [{"name": "a"}, {"name": "b"}],
        "system": "You are brief.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "first"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "reply"}]},
            {"role": "user", "content": [{"type": "text", "text": "the question\n\n<system-context>\n## earlier in "
                                                                  "this conversation\n(turn 1, user) first\n"
                                                                  "</system-context>"}]},
        ],
    }
    assert cache_breakpoints(body) == 4
    assert marked(body) == ["tools[1]", "system[0]", "messages[1][0]", "messages[2][0]"]
    last = body["messages"][2]["content"]
    # the per-turn context block is a block of its own, after the mark: it changes with every question
    assert last[0] == {"type": "text", "text": "the question", "cache_control": CACHE}
    assert last[1]["text"].startswith("<system-context>") and "cache_control" not in last[1]
    assert last[0]["text"] + "\n\n" + last[1]["text"] == (
        "the question\n\n<system-context>\n## earlier in this conversation\n(turn 1, user) first\n</system-context>")


def test_breakpoints_skip_empty_text_and_never_exceed_the_limit():
    body = {"system": "", "messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}
    assert cache_breakpoints(body) == 0
    assert marked(body) == []
    many = {"tools": [{"name": "t"}], "system": "s", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "u"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "t", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}]}]}
    assert cache_breakpoints(copy.deepcopy(many)) <= MAX_BREAKPOINTS
    cache_breakpoints(many)
    assert marked(many) == ["tools[0]", "system[0]", "messages[1][0]", "messages[2][0]"]


async def test_a_session_reads_its_stable_prefix_back_from_the_cache_and_records_it(tmp_path):
    cache = PromptCache()
    with ScriptedServer("anthropic-cache", responder=cache) as server:
        provider = AnthropicProvider(api_key="sk-ant-test-0000", base_url=server.root_url, timeout=10)
        config = RuntimeConfig(trace_dir=tmp_path, model="anthropic:claude-sonnet-4-5", total_window=6000,
                               system_prompt="You are a careful analyst. " * 60, embeddings="off")
        runtime = Runtime(config=config, provider=provider)
        calls = []
        async with runtime.chat() as chat:
            chat.subscribe(lambda e: calls.append(e.metadata) if e.event_type == "llm_call" else None)
            for k in range(8):
                reply = await chat.send(f"Turn {k}: here is more of the quarterly data. " + "Revenue rose. " * 40,
                                        raise_errors=True)
                assert reply.status == "ok"
        await provider.aclose()
    assert cache.refusals == []  # every request was one the API accepts
    for request in server.requests:
        assert 1 <= len(marked(request.json)) <= MAX_BREAKPOINTS
    reads = [u["cache_read_input_tokens"] for u in cache.usages]
    writes = [u["cache_creation_input_tokens"] for u in cache.usages]
    assert reads[:2] == [0, 0] and writes[1] > 0  # the first prompt is under the minimum; the second is written
    assert all(r > 0 for r in reads[2:])  # from then on the stable prefix comes back from the cache
    totals = [sum(u[k] for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
              for u in cache.usages]
    assert sum(reads[2:]) >= 0.7 * sum(totals[2:])
    # what the provider reported is what the trace holds, beside the runtime's own prediction
    assert [c.get("gen_ai.usage.cached_input_tokens") or 0 for c in calls] == reads
    assert all(c["gen_ai.usage.input_tokens"] >= c.get("gen_ai.usage.cached_input_tokens") or 0 for c in calls)


async def test_without_prompt_caching_no_cache_control_is_sent(tmp_path):
    cache = PromptCache()
    with ScriptedServer("anthropic-cache", responder=cache) as server:
        provider = AnthropicProvider(api_key="sk-ant-test-0000", base_url=server.root_url, timeout=10,
                                     prompt_caching=False)
        runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path, model="anthropic:claude-sonnet-4-5",
                                               embeddings="off"), provider=provider)
        async with runtime.chat() as chat:
            await chat.send("Hello", raise_errors=True)
        await provider.aclose()
    assert marked(server.requests[0].json) == []
    assert cache.usages[0]["cache_read_input_tokens"] == 0
