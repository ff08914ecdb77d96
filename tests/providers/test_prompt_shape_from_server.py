"""The shape of an OpenAI-compatible server's model, from what the server says about it: llama.cpp's
``GET /props`` (its chat template, probed) and Ollama's ``POST /api/show`` (its model family), asked
with the provider's own headers (a llama.cpp server started with ``--api-key`` wants them). A server
that says nothing useful — 404, garbage, down — leaves the shape to the model's name."""

from __future__ import annotations

from pathlib import Path

from servers.scripted import Reply, ScriptedServer

from arcana_jupyter.providers.openai_compat import OpenAICompatProvider

GEMMA3 = (Path(__file__).resolve().parents[1] / "fixtures" / "chat_templates" / "gemma-3.jinja").read_text()


async def test_llama_cpp_props_give_the_templates_own_shape_asked_with_the_key() -> None:
    with ScriptedServer() as server:
        server.script(Reply(json={"chat_template": GEMMA3, "total_slots": 1}))
        provider = OpenAICompatProvider(base_url=f"{server.root_url}/v1", api_key="sk-local-1234", name="llamacpp")
        shape = await provider.prompt_shape("some-model.gguf")  # the name says nothing
        await provider.aclose()
        [asked] = server.requests
    assert asked.path == "/props" and asked.headers["authorization"] == "Bearer sk-local-1234"
    assert shape.name == "text_tools"  # Gemma 3: strict alternation, no tool role


async def test_ollama_show_gives_the_family_and_silence_falls_back_to_the_name() -> None:
    with ScriptedServer() as server:
        server.script(Reply(json={"details": {"family": "gemma3", "families": ["gemma3"]}}),
                      Reply(status=404, json={"error": "not found"}),
                      Reply(raw=b"<html>not json</html>"))
        ollama = OpenAICompatProvider(base_url=f"{server.root_url}/v1", name="ollama")
        by_family = await ollama.prompt_shape("my-custom-tag")
        missing = await ollama.prompt_shape("mistral-small3.1")  # 404: by its name
        garbage = await ollama.prompt_shape("qwen2.5")  # not JSON: by its name
        await ollama.aclose()
        assert [r.path for r in server.requests] == ["/api/show"] * 3
        assert server.requests[0].json == {"model": "my-custom-tag"}
    assert by_family.name == "text_tools"
    assert missing.name == "mistral" and garbage.name == "portable"
    down = OpenAICompatProvider(base_url="http://127.0.0.1:9/v1", name="llamacpp")  # nothing listens
    assert (await down.prompt_shape("gemma-2-9b-it")).name == "strict"
    await down.aclose()
