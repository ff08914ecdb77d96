"""The viewer reads the prompt as sent exactly as the Python does.

A real ``Runtime`` session (engine mode: shaped prompts, sections; a tool loop; a secret in a message;
more turns than a prompt_sent chain is long) is read by ``TraceReader.prompt_sent`` and by the compiled
``labextension/src/trace.ts`` (``sentPromptOf``) under node: every call's messages, tokens, recorded
digest and verification must be the same (the viewer computes its SHA-256 itself).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from scripted_chat import Script, call, say

from arcana_jupyter.providers.function import FunctionProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.prompt_sent import CHAIN_MAX
from arcana_jupyter.trace.reader import TraceReader

from .conftest import EXT, jlpm

NODE_SCRIPT = r"""
const fs = require('fs');
const trace = require(process.argv[1]);
const t = trace.parseTrace(fs.readFileSync(process.argv[2], 'utf8'));
const out = {};
for (const [agent, turns] of t.turnsByAgent) {
  for (const turn of turns) {
    for (const s of trace.getTurn(t, agent, turn).steps) {
      const p = trace.sentPromptOf(t, agent, turn, s.step);
      out[`${agent}/${turn}/${s.step}`] = p === null || typeof p === 'string' ? p : {
        messages: p.messages, tokens: p.tokens, recorded: p.recordedDigest, digest: p.digest, verified: p.verified,
        masked: p.masked, source: p.source };
    }
  }
}
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def compiled_trace(node_packages: Path) -> Path:
    proc = jlpm("build:test", timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = EXT / "lib" / "unit" / "src" / "trace.js"
    assert path.is_file()
    return path


def lookup(city: str) -> str:
    """Weather of a city."""
    return f"sunny in {city}"


async def test_runtime_prompts_resolve_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    turns = CHAIN_MAX + 6
    steps: list[Any] = [call("lookup", {"city": "Oslo"}), say("it is sunny")]
    steps += [say(f"answer {i} " + "more " * (i % 7)) for i in range(turns)]
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", context_engine=True, total_window=1200,
                                           response_reserve=200),
                      tools=(lookup,), provider=FunctionProvider(Script(*steps)))
    async with runtime.chat() as chat:
        await chat.send("weather in Oslo?")
        for i in range(turns):
            if i == 5:  # the pin goes to the head of the prompt: what followed it is the previous prompt's
                pin = chat.pin("the budget is 4,000 euros; " + "the venue seats 120 people, " * 12, label="budget")["pin_id"]
            if i == 8:  # a second pin: the head message changes a little (a line edit of the previous one)
                chat.pin("the date is 3 March", label="date")
            if i == 12:
                chat.unpin(str(pin))
            await chat.send(f"question {i} " + "word " * (i % 11))
        await chat.send("my token is sk-proj-" + "Zx9" * 8)
        path = Path(chat.trace_path)
    text = path.read_text(encoding="utf-8")
    assert text.count('"event_type":"prompt_sent"') >= turns + 2
    assert text.count('"prev":null,"keep":0') >= 2, "a keyframe again after CHAIN_MAX prompts"
    for form in ('{"h":[', '{"p":', '{"e":['):  # history runs, previous-prompt references, line edits
        assert form in text, form
    proc = subprocess.run(["node", "-e", NODE_SCRIPT, str(compiled_trace), str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    viewer = json.loads(proc.stdout)
    reader = TraceReader(path.parent)
    python: dict[str, Any] = {}
    for turn in reader.list_turns(path.stem):
        replay = reader.replay_prompt(path.stem, turn)
        for step in replay.steps if replay else []:
            p = reader.prompt_sent(path.stem, turn, step=step)
            assert p is not None
            python[f"main/{turn}/{step}"] = {"messages": p.messages, "tokens": p.tokens, "recorded": p.recorded_digest,
                                             "digest": p.digest, "verified": p.verified, "masked": p.masked,
                                             "source": p.source}
    assert viewer == python
    assert "main/1/1" in python, "the tool loop's second call has its prompt too"
    masked = [k for k, v in python.items() if v["masked"]]
    assert masked == [f"main/{turns + 2}/0"] and not python[masked[0]]["verified"], "a masked secret cannot verify"
    assert all(v["verified"] for k, v in python.items() if k not in masked), [k for k, v in python.items()
                                                                             if not v["verified"]]


def forecast(city: str, days: float = 1.0, threshold: float = 2.5e-07) -> str:
    """Forecast for a city (its schema holds floats: ``"default": 1.0``, ``2.5e-07``)."""
    return f"sunny in {city} for {days} days"


async def test_tool_specs_with_floats_verify_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:
    """Python writes the float default ``1.0`` as ``1.0``; ``JSON.parse`` reads it as ``1``. The viewer's
    digest must still be Python's: every call offered the tool verifies in both."""
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", context_engine=False, total_window=16_000,
                                           response_reserve=500),
                      tools=(forecast,), provider=FunctionProvider(Script(call("forecast", {"city": "Oslo"}),
                                                                          say("sunny"), say("still sunny"))))
    async with runtime.chat() as chat:
        await chat.send("forecast for Oslo?")
        await chat.send("and tomorrow?")
        path = Path(chat.trace_path)
    text = path.read_text(encoding="utf-8")
    decisions = [json.loads(line)["metadata"] for line in text.splitlines()
                 if '"event_type":"context_decision"' in line]
    offered = [d for d in decisions if any(t.get("name") == "forecast" for t in d.get("tools") or [])]
    assert offered, "the tool was offered (its spec is in a decision)"
    assert '"default":1.0' in text and '2.5e-07' in text
    proc = subprocess.run(["node", "-e", NODE_SCRIPT, str(compiled_trace), str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    viewer = json.loads(proc.stdout)
    assert len(viewer) >= 3, viewer.keys()  # the tool call, its follow-up, the second turn
    assert all(v["verified"] for v in viewer.values()), {k: (v["digest"], v["recorded"]) for k, v in viewer.items()}
    reader = TraceReader(path.parent)
    for key, v in viewer.items():
        _, turn, step = key.split("/")
        p = reader.prompt_sent(path.stem, int(turn), step=int(step))
        assert p is not None and p.verified and p.digest == v["digest"]


async def test_the_summarisers_prompt_is_recorded_and_verifies(compiled_trace: Path, tmp_path: Path) -> None:
    """``llm_summarize``'s own model call (step -1) writes a ``prompt_sent`` too: a standalone keyframe
    that names its model, verified by the Python reader and by the viewer alike; the turns' own chain
    of prompts is left as it was (each still verifies) and the report shows it as the summariser's."""
    from arcana_jupyter import render
    from arcana_jupyter.messages import Message
    from arcana_jupyter.providers.base import LLMRequest, LLMResponse, Usage

    def answer(request: LLMRequest) -> LLMResponse:
        if request.messages[0].content.startswith("Summarise the conversation"):
            return LLMResponse(message=Message(role="assistant", content="Summary: Ada asked about <b>venues</b>."),
                               usage=Usage(input_tokens=50, output_tokens=8))
        return LLMResponse(message=Message(role="assistant", content="Noted. " + "detail " * 40),
                           usage=Usage(input_tokens=50, output_tokens=40))

    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", context_engine=False, total_window=700,
                                           response_reserve=100, strategy="llm_summarize", embeddings="off"),
                      provider=FunctionProvider(answer))
    async with runtime.chat() as chat:
        for i in range(6):
            await chat.send(f"Question {i} about the venue: " + "words " * 40)
        path = Path(chat.trace_path)
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    summary_calls = [e for e in events if e["event_type"] == "llm_call" and e["metadata"].get("purpose") == "summarize"]
    sent = [e for e in events if e["event_type"] == "prompt_sent" and e["metadata"].get("purpose") == "summarize"]
    assert summary_calls and len(sent) == len(summary_calls)
    first = sent[0]["metadata"]
    assert first["step"] == -1 and first["prev"] is None and first["keep"] == 0 and first["model"]
    assert first["messages"][0]["content"].startswith("Summarise the conversation")
    turn_prompts = [e for e in events if e["event_type"] == "prompt_sent" and e["metadata"]["step"] >= 0]
    assert all(e["metadata"]["prev"] not in {s["event_id"] for s in sent} for e in turn_prompts), \
        "no turn prompt continues the summariser's"

    reader = TraceReader(path.parent)
    prompts = list(reader.prompts_sent(path.stem))
    assert all(p.verified for p in prompts), [(p.turn, p.step, p.digest, p.recorded_digest) for p in prompts]
    mine = [p for p in prompts if p.step == -1]
    assert len(mine) == len(sent) and mine[0].messages == first["messages"]
    html = render.sent_prompts_html([p.model_dump(mode="json") for p in prompts])
    assert "the summariser&#39;s call" in html or "the summariser's call" in html

    proc = subprocess.run(["node", "-e", NODE_SCRIPT, str(compiled_trace), str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    viewer = json.loads(proc.stdout)
    turn = sent[0]["turn"]
    shown = viewer[f"main/{turn}/-1"]
    assert shown["verified"] and shown["messages"] == first["messages"], shown
    assert all(v["verified"] for v in viewer.values() if v), {k: v and v["verified"] for k, v in viewer.items()}


async def _long_session(folder: Path, content: Any, turns: int) -> Path:
    """The benchmarks' default-mode workload (an 8k window, recalled requests merged into the input,
    a checkpoint that moves on, pins) — with a secret and a long number in some requests."""
    from benchmarks.bench_runtime import answer
    from benchmarks.bench_runtime import lookup as bench_lookup

    runtime = Runtime(config=RuntimeConfig(trace_dir=folder, total_window=8192, trace_content=content),
                      tools=[bench_lookup], provider=FunctionProvider(answer))
    async with runtime.chat() as chat:
        for i in range(1, turns + 1):
            if i % 25 == 5:
                chat.pin(f"fact {i}: region {i % 17} targets {i * 3}", label=f"f{i}")
            extra = {7: " my key is sk-proj-" + "Zx9" * 8, 13: " call 555-123-4567-890"}.get(i % 40, "")
            await chat.send((f"turn {i}: please lookup the figures for region {i % 17}" if i % 10 == 0
                             else f"turn {i}: what changed in region {i % 17} since last week?") + extra)
        assert chat.trace_path is not None
        return Path(chat.trace_path)


def _python_prompts(path: Path) -> dict[str, Any]:
    reader = TraceReader(path.parent, shared=False)
    return {f"main/{p.turn}/{p.step}": {"messages": p.messages, "tokens": p.tokens, "recorded": p.recorded_digest,
                                         "digest": p.digest, "verified": p.verified, "masked": p.masked,
                                         "source": p.source}
            for p in reader.prompts_sent(path.stem)}


def _viewer_prompts(compiled: Path, path: Path) -> dict[str, Any]:
    proc = subprocess.run(["node", "-e", NODE_SCRIPT, str(compiled), str(path)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return {k: v for k, v in json.loads(proc.stdout).items() if v is not None}


def _as_old_joined(path: Path) -> int:
    """Rewrite every ``{"J": ops}`` of the trace as the ``{"j": parts}`` written before it (absolute
    history indexes, from the resolved parts): what an older trace holds. Returns how many."""
    from arcana_jupyter.trace.prompt_sent import resolve_prompt_sent

    lines = path.read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    records = {e["metadata"]["history_index"]: e["metadata"]["message"] for e in events
               if isinstance(e.get("metadata"), dict) and isinstance(e["metadata"].get("history_index"), int)
               and isinstance(e["metadata"].get("message"), dict)}
    system = next(e["metadata"]["system_prompt"] for e in events if e["event_type"] == "run_start")
    records.setdefault(0, {"role": "system", "content": system})
    resolved: dict[str, Any] = {}
    changed = 0
    for n, e in enumerate(events):
        if e["event_type"] != "prompt_sent":
            continue
        meta = e["metadata"]
        base = resolved.get(meta["prev"]) if meta.get("prev") else None
        joined = list(base.get("joined") or []) if base else []
        for k, item in enumerate(meta["messages"]):
            if "J" not in item:
                continue
            one = resolve_prompt_sent({"prev": "x", "keep": 0, "messages": [item]},
                                      {"messages": [], "tokens": [], "joined": joined}, records.get)
            joined = one["joined"]
            absolute: list[Any] = []
            end = 0
            for part in joined[-1]:
                absolute.append(part if isinstance(part, str) else end + part)
                end = end if isinstance(part, str) else end + part + 1
            meta["messages"][k] = {"j": absolute}
            changed += 1
        resolved[e["event_id"]] = resolve_prompt_sent(meta, base, records.get)
        lines[n] = json.dumps(e)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed


@pytest.mark.parametrize("content", ["full", "redacted", "none"])
async def test_a_long_sessions_prompts_resolve_like_the_python(compiled_trace: Path, tmp_path: Path,
                                                               content: str) -> None:
    """A recorded default-mode session past its first keyframes, in each content mode: joined recalled
    requests as ``J`` ops, checkpoint edits quoting history messages and changing line middles — the
    viewer resolves every prompt as the Python does, every prompt verifies but those that held a
    masked secret, and the same trace with its ``J`` written as older traces' ``j`` reads the same."""
    path = await _long_session(tmp_path / "traces", content, 80)
    text = path.read_text(encoding="utf-8")
    if content == "none":  # no message text: no prompt_sent (nothing to resolve in either reader)
        assert '"event_type":"prompt_sent"' not in text
        assert _viewer_prompts(compiled_trace, path) == {} == _python_prompts(path)
        return
    for form in ('{"J":[', '{"h":', '{"e":[0,[[0,'):
        assert form in text, form
    assert any(len(op) == 4 for line in text.splitlines() if '"event_type":"prompt_sent"' in line
               for m in json.loads(line)["metadata"]["messages"] if "e" in m for op in m["e"][1]
               if isinstance(op, list)), "a line's middle changed in place"
    python = _python_prompts(path)
    assert len(python) > 80
    assert _viewer_prompts(compiled_trace, path) == python
    masked = {k for k, v in python.items() if v["masked"]}
    assert masked and all(not python[k]["verified"] for k in masked)
    assert all(v["verified"] for k, v in python.items() if k not in masked), [k for k, v in python.items()
                                                                             if not v["verified"]]
    assert _as_old_joined(path) >= 3
    assert '{"J":' not in path.read_text(encoding="utf-8")
    assert _python_prompts(path) == python
    assert _viewer_prompts(compiled_trace, path) == python
