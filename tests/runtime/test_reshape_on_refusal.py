"""A server that refuses the prompt's shape: reshape, retry once, keep the shape, record it.

vLLM, TGI and LM Studio do not expose their chat template, and a model whose name we do not know (a
fine-tune) gets the portable shape. Rendered through Gemma 2's template that shape was refused on every
request ("System role not supported"), through Gemma 3's whenever a tool result was in it
("Conversation roles must alternate"): every turn failed. Here the server is a real one on 127.0.0.1
(tests/servers/templated.py) that renders each request through the real template as vLLM does and
answers a refusal with vLLM's 400. The session reshapes (strict: the system text folded into the first
user turn, roles alternating, tools as text), retries once, keeps that shape, and the trace says so.

Also here: Phi-4-mini's template, which writes a tool result with ``tojson``. Rendered with Jinja2's
own ``tojson`` (what the package's renderer did) the result came out HTML-escaped with its marker —
``&lt;|tool_response|&gt;"{\\"label\\": \\"A \\u0026 B\\"}"`` — and read as a tool result lost; rendered as
servers render it (transformers' plain ``json.dumps``), every result is there, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from servers.templated import TemplatedServer

from arcana_jupyter.context.rebuild import rebuild_turn
from arcana_jupyter.providers.chat_templates import render_template
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.reader import TraceReader

TEMPLATES = Path(__file__).resolve().parents[1] / "fixtures" / "chat_templates"


def template(name: str) -> str:
    return (TEMPLATES / f"{name}.jinja").read_text()


def lookup(city: str) -> str:
    """Weather of a city."""
    return f"{city}: 12 degrees & cloudy, it's windy"


def answer(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> str | dict[str, Any]:
    last = messages[-1]
    text = str(last.get("content") or "")
    names = {t["function"]["name"] for t in tools}
    after_tool = last.get("role") == "tool" or "<tool_result" in text
    if not after_tool and "weather" in text and "lookup" in names:
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_7", "type": "function", "function": {"name": "lookup", "arguments": '{"city": "Oslo"}'}}]}
    if not after_tool and "pin" in text.split("?")[0] and "pin" in names:
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_9", "type": "function", "function": {"name": "pin", "arguments": json.dumps(
                {"content": "Budget: 2,000 EUR for Zürich & Bern", "label": "user's budget"})}}]}
    return f"Noted ({len(messages)} messages)."


TURNS = ["Hello, I am planning a trip.", "What is the weather in Oslo?", "Please pin my budget of 2,000 EUR.",
         "And the museums?", "Thanks, one more question about trains."]


def runtime_for(server: TemplatedServer, tmp_path: Path, **config: Any) -> Runtime:
    settings: dict[str, Any] = {"model": "vllm:acme-finetune-7b", **config}
    cfg = RuntimeConfig(trace_dir=tmp_path / "traces", total_window=4096, response_reserve=256,
                        cognitive_primitives=["pin"], user_tools="on", primitive_tools="on", embeddings="off",
                        memory=False, **settings)
    return Runtime(providers={"vllm": {"base_url": f"{server.root_url}/v1"}}, config=cfg, tools=[lookup])


def nothing_lost(rendering: str, messages: list[dict[str, Any]]) -> list[str]:
    """The lines of the messages sent that are not in the rendering (as written, or JSON-escaped)."""
    missing = []
    for m in messages:
        for line in str(m.get("content") or "").splitlines():
            line = line.strip()
            if line and line not in rendering and json.dumps(line, ensure_ascii=False)[1:-1] not in rendering:
                missing.append(f"{m.get('role')}: {line[:60]}")
    return missing


@pytest.mark.parametrize("name, refused", [("gemma-2", "System role not supported"),
                                           ("gemma-3", "Conversation roles must alternate")])
async def test_a_refused_shape_is_reshaped_once_kept_and_recorded(tmp_path: Path, name: str, refused: str) -> None:
    with TemplatedServer(template(name), answer) as server:
        runtime = runtime_for(server, tmp_path)
        async with runtime.chat() as chat:
            for text in TURNS:
                reply = await chat.send(text, raise_errors=False)
                assert reply.status == "ok", reply.error
            run_id = chat.run_id
            events = [e for t in range(1, len(TURNS) + 1) for e in chat.turn_events(t)]
    # refused once, with the template's own words; never again in the session
    assert len(server.refusals) == 1 and refused in server.refusals[0].message
    for rendering, request in zip(server.renderings, [r for r in server.requests
                                                      if r["messages"] not in [x.messages for x in server.refusals]],
                                  strict=True):
        assert not nothing_lost(rendering, request["messages"])
    errors = [e for e in events if e.event_type == "error"]
    assert [(e.metadata["type"], e.metadata["recoverable"]) for e in errors] == [("TemplateRefusedError", True)]
    assert refused in errors[0].metadata["message"]
    decisions = [e for e in events if e.event_type == "context_decision"]
    shapes = [(d.metadata["shape"]["name"], d.metadata["shape"]["source"]) for d in decisions]
    first_strict = next(i for i, (n, _) in enumerate(shapes) if n == "strict")
    assert all(n == "portable" for n, _ in shapes[:first_strict])
    assert all(n == "strict" and s.startswith("refused by the server: ") and refused in s
               for n, s in shapes[first_strict:])
    retried = decisions[first_strict]
    assert (retried.turn, retried.metadata["step"]) == (errors[0].turn, decisions[first_strict - 1].metadata["step"])
    notes = retried.metadata["decision"]["notes"]
    assert any("refused the portable shape" in n and "keeps that shape" in n for n in notes), notes
    # the trace rebuilds both prompts: the refused one and the one sent again
    reader = TraceReader(tmp_path / "traces", shared=False)
    for turn in reader.replay_turns(run_id):
        for step in reader.replay_prompt(run_id, turn).steps:
            assert rebuild_turn(reader, run_id, turn, step=step).verified, (turn, step)


async def test_a_resumed_session_starts_with_the_shape_the_server_accepted(tmp_path: Path) -> None:
    with TemplatedServer(template("gemma-2"), answer, nested=True) as server:  # newer vLLM's {"error": {...}}
        runtime = runtime_for(server, tmp_path)
        async with runtime.chat() as chat:
            assert (await chat.send("Hello", raise_errors=False)).status == "ok"
            run_id = chat.run_id
        assert len(server.refusals) == 1
        async with runtime_for(server, tmp_path).chat(resume=run_id) as again:
            reply = await again.send("And now?", raise_errors=False)
            decision = next(e for e in again.turn_events(2) if e.event_type == "context_decision")
        assert reply.status == "ok" and len(server.refusals) == 1
    assert decision.metadata["shape"]["name"] == "strict"
    assert any("before the restart" in n for n in decision.metadata["decision"]["notes"])


ALWAYS_REFUSES = "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"


async def test_a_server_that_refuses_every_shape_fails_the_turn_after_one_retry(tmp_path: Path) -> None:
    with TemplatedServer(ALWAYS_REFUSES, answer) as server:
        runtime = runtime_for(server, tmp_path)
        async with runtime.chat() as chat:
            reply = await chat.send("Hello", raise_errors=False)
            second = await chat.send("Again", raise_errors=False)
    assert reply.status == "error" and "roles must alternate" in str(reply.error)
    assert type(reply.error).__name__ == "TemplateRefusedError"
    assert len(server.requests) == 3  # the first turn: portable, then strict; the second: strict once
    assert second.status == "error"


async def test_a_configured_shape_is_not_changed_and_other_400s_are_not_retried(tmp_path: Path) -> None:
    with TemplatedServer(template("gemma-2"), answer) as server:
        runtime = runtime_for(server, tmp_path, prompt_shape="portable")
        async with runtime.chat() as chat:
            reply = await chat.send("Hello", raise_errors=False)
    assert reply.status == "error" and type(reply.error).__name__ == "TemplateRefusedError"
    assert len(server.requests) == 1
    with TemplatedServer(template("gemma-2"), answer, bad_request="temperature must be between 0 and 2") as server:
        async with runtime_for(server, tmp_path).chat() as chat:
            reply = await chat.send("Hello", raise_errors=False)
    assert reply.status == "error" and type(reply.error).__name__ == "BadRequestError"
    assert len(server.requests) == 1


async def test_phi4_minis_tool_results_are_all_in_the_rendering(tmp_path: Path) -> None:
    """Every tool result of the session (a pin whose label holds an apostrophe and an ampersand, a tool
    result with ``&`` and ``'``), decoded from Phi-4-mini's ``<|tool_response|>"..."`` as the server
    rendered it, is the tool message sent — and the package's own renderer (the probe's) agrees."""
    phi = template("phi-4-mini")
    with TemplatedServer(phi, answer) as server:
        runtime = runtime_for(server, tmp_path, model="vllm:phi-4-mini-instruct")
        async with runtime.chat() as chat:
            for text in TURNS:
                assert (await chat.send(text, raise_errors=False)).status == "ok"
    assert server.refusals == []
    decoder = json.JSONDecoder()
    checked = 0
    results: list[str] = []
    for request, rendering in zip(server.requests, server.renderings, strict=True):
        sent = [m["content"] for m in request["messages"] if m["role"] == "tool"]
        found, at = [], 0
        while (at := rendering.find("<|tool_response|>", at)) >= 0:
            value, at = decoder.raw_decode(rendering, at + len("<|tool_response|>"))
            found.append(value)
        assert found == sent
        ours = render_template(phi, request["messages"], tools=request.get("tools"), bos_token=server.bos,
                               eos_token=server.eos)
        assert ours == rendering
        checked += len(sent)
        results.extend(found)
    assert checked >= 4
    assert any("user's budget" in r for r in results) and any("12 degrees & cloudy, it's" in r for r in results)


async def test_a_reshaped_run_replays_with_the_same_refusal_and_digests(tmp_path: Path) -> None:
    """``report --verify`` replays a run: the replay provider answers the refused request with the recorded
    TemplateRefusedError, the replayed session reshapes the same way, and every call's digest matches."""
    with TemplatedServer(template("gemma-2"), answer) as server:
        runtime = runtime_for(server, tmp_path)
        async with runtime.chat() as chat:
            for text in TURNS[:3]:
                assert (await chat.send(text, raise_errors=False)).status == "ok"
            run_id = chat.run_id
    replay = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", model=f"replay:{run_id}", total_window=4096,
                                          response_reserve=256, cognitive_primitives=["pin"], user_tools="on",
                                          primitive_tools="on", embeddings="off", memory=False), tools=[lookup])
    async with replay.chat() as again:
        for text in TURNS[:3]:
            assert (await again.send(text, raise_errors=False)).status == "ok"
        provider, new_run = again.provider, again.run_id
    assert provider.divergences == [] and provider.remaining == 0
    reader = TraceReader(tmp_path / "traces", shared=False)

    def digests(run: str) -> list[str]:
        return [e.metadata["request_digest"] for e in reader.events(run, event_types=["llm_call"])]

    assert digests(new_run) == digests(run_id)
    assert [e.metadata["type"] for e in reader.events(new_run, event_types=["error"])] == ["TemplateRefusedError"]
