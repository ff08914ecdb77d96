"""The chat-template probe is bounded: a template from a model hub or a server is code, and one that
loops, allocates or computes without end must not stop the session (it ran in the kernel, holding
the GIL: the first turn still ran after 20 s). The probe runs out of process, bounded in memory, CPU
and wall-clock time; past a bound the session gets the model family's shape and one line says so.

Also the ``/props`` answer itself: a total deadline (a server sending its headers and then a byte
every two seconds), a size cap, and a template that is not text (a lone surrogate)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers.fake_openai import completion
from servers.scripted import Reply, ScriptedServer

from arcana_jupyter.providers import chat_templates
from arcana_jupyter.providers.chat_templates import detect_shape, probe_template, shape_for_model
from arcana_jupyter.providers.openai_compat import OpenAICompatProvider
from arcana_jupyter.runtime import Runtime, RuntimeConfig

TEMPLATES = Path(__file__).resolve().parents[1] / "fixtures" / "chat_templates"
GEMMA2 = (TEMPLATES / "gemma-2.jinja").read_text()

LOOPS = "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}"
LIPSUM = "{{ lipsum(n=10**8) }}{% for m in messages %}{{ m.content }}{% endfor %}"
POWER = "{{ 7 ** 1000000000 }}{% for m in messages %}{{ m.content }}{% endfor %}"
HOSTILE = {"loops": LOOPS, "lipsum": LIPSUM, "power": POWER}


@pytest.fixture(autouse=True)
def _short_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chat_templates, "PROBE_SECONDS", 4.0)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_template_gets_the_family_shape_and_says_why(name: str) -> None:
    template = HOSTILE[name] + f"{{# {name} #}}"  # a template of its own: not a cached probe
    family = shape_for_model("gemma-2-9b-it")
    shape = detect_shape(template, family)
    assert shape.name == "strict" and shape.rules() == family.rules()
    assert shape.source == "model family gemma (template not probed)"
    assert shape.problem is not None and "\n" not in shape.problem
    expected = {"loops": ("did not finish within 4 s", "signal", "MB"), "lipsum": ("MB", "signal", "within"),
                "power": ("too large a number",)}[name]
    assert any(word in shape.problem for word in expected), shape.problem
    assert probe_template(template) is probe_template(template)  # probed once per template


def test_real_templates_still_probe_to_their_own_shape_out_of_process() -> None:
    found = detect_shape(GEMMA2, shape_for_model("unknown-fine-tune"))
    assert found.name == "strict" and found.source.startswith("template ") and found.problem is None


def _drip() -> Iterator[bytes]:
    yield b'{"chat_template": "'
    while True:
        yield b"x"


async def test_a_dripping_props_server_leaves_the_shape_to_the_name(monkeypatch: pytest.MonkeyPatch) -> None:
    from arcana_jupyter.providers import connection

    """Headers at once, then a byte every two seconds: each read is within httpx's timeout, the answer
    never ends (it was still running after 20 s). The probe gives up at its total deadline and the name
    decides."""
    assert connection.PROBE_SECONDS == 5.0
    monkeypatch.setattr(connection, "PROBE_SECONDS", 3.0)
    with ScriptedServer() as server:
        server.script(Reply(frames=_drip(), frame_interval=2.0))
        provider = OpenAICompatProvider(base_url=f"{server.root_url}/v1", name="llamacpp")
        shape = await provider.prompt_shape("gemma-2-9b-it")
        await provider.aclose()
    assert shape.name == "strict" and shape.source == "model family gemma"


async def test_props_larger_than_the_cap_say_nothing() -> None:
    with ScriptedServer() as server:
        server.script(Reply(json={"chat_template": "x" * (5 << 20)}))
        provider = OpenAICompatProvider(base_url=f"{server.root_url}/v1", name="llamacpp")
        shape = await provider.prompt_shape("gemma-2-9b-it")
        await provider.aclose()
    assert shape.source == "model family gemma"


async def test_a_template_with_a_lone_surrogate_gets_a_fallback_shape(tmp_path: Path) -> None:
    """``chat_template`` holding ``"\\ud800"`` (valid JSON, not valid text): the session runs its turn
    with the family's shape (the raw ``UnicodeEncodeError`` came out of ``send(raise_errors=False)``)."""
    body = b'{"chat_template": "{{ bos_token }}\\ud800{% for m in messages %}{{ m.content }}{% endfor %}"}'
    with ScriptedServer() as server:
        server.script(Reply(raw=body, headers={"Content-Type": "application/json"}),
                      completion("Fine."))
        runtime = Runtime(providers={"llamacpp": {"base_url": f"{server.root_url}/v1"}},
                          config=RuntimeConfig(trace_dir=tmp_path, model="llamacpp:gemma-2-9b-it", embeddings="off"))
        async with runtime.chat() as chat:
            reply = await chat.send("Hello", raise_errors=False)
            decision = next(e for e in chat.turn_events(1) if e.event_type == "context_decision")
    assert reply.status == "ok", reply.error
    assert decision.metadata["shape"]["name"] == "strict"
    assert decision.metadata["shape"]["source"] == "model family gemma (template not probed)"
    notes = decision.metadata["decision"]["notes"]
    [line] = [n for n in notes if "chat template" in n]
    assert "not valid Unicode text" in line and "strict shape" in line


async def test_a_session_whose_server_template_never_finishes_runs_its_turn(tmp_path: Path) -> None:
    """The nested loops through ``/props``: the turn runs with the family's shape, and while the probe
    ran the kernel's event loop went on (the big power held the GIL: nothing else ran)."""
    with ScriptedServer() as server:
        server.script(Reply(json={"chat_template": LOOPS + "{# session #}"}), completion("Fine."))
        runtime = Runtime(providers={"llamacpp": {"base_url": f"{server.root_url}/v1"}},
                          config=RuntimeConfig(trace_dir=tmp_path, model="llamacpp:gemma-2-9b-it", embeddings="off"))
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        task = asyncio.create_task(ticker())
        async with runtime.chat() as chat:
            reply = await chat.send("Hello", raise_errors=False)
            decision = next(e for e in chat.turn_events(1) if e.event_type == "context_decision")
        task.cancel()
    assert reply.status == "ok", reply.error
    assert ticks > 10  # the loop kept running during the probe's seconds
    assert decision.metadata["shape"]["source"] == "model family gemma (template not probed)"
    assert any("chat template could not say" in n and ("within 4 s" in n or "signal" in n or "MB" in n)
               for n in decision.metadata["decision"]["notes"])
    sent = server.requests[-1].json["messages"]
    assert sent[0]["role"] == "user"  # Gemma's shape: no system role


@pytest.mark.slow
async def test_a_gguf_whose_template_never_finishes_answers_locally(smollm2_path: Path, tmp_path: Path) -> None:
    """A GGUF from a hub with the nested loops as its chat template: the probe stops at its bound, the
    template is never rendered in this process (the token counter and llama-cpp-python format the chat
    as ChatML instead), and the first turn answers."""
    import subprocess
    import sys

    pytest.importorskip("gguf")
    template = tmp_path / "loops.jinja"
    template.write_text(LOOPS + "{# gguf #}")
    gguf = tmp_path / "smollm2-loops.gguf"
    subprocess.run([sys.executable, "-m", "gguf.scripts.gguf_new_metadata", str(smollm2_path), str(gguf),
                    "--chat-template-file", str(template), "--force"], check=True, capture_output=True, timeout=120)
    runtime = Runtime(config=RuntimeConfig(trace_dir=tmp_path / "traces", model=f"local:{gguf}", total_window=1024,
                                           response_reserve=64, max_tokens=16, embeddings="off"))
    async with runtime.chat() as chat:
        reply = await chat.send("Say hello.", raise_errors=False)
        decision = next(e for e in chat.turn_events(1) if e.event_type == "context_decision")
    assert reply.status == "ok", reply.error
    assert reply.text.strip()
    assert decision.metadata["shape"]["source"].endswith("(template not probed)")
    assert any("chat template could not say" in n for n in decision.metadata["decision"]["notes"])
