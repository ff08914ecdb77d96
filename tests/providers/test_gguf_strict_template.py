"""A GGUF whose chat template is strict (Gemma 3's: roles must alternate, no tool role) answers the
README tour's turns through ``local:/path.gguf`` and through llama-cpp-python's server rendering
with the GGUF's own template — before prompt shaping, its first turn raised ``ValueError:
Conversation roles must alternate`` (the token counter rendered a lone message through it).

The copy is made here, in a temporary folder, from the bundled SmolLM2 GGUF with the ``gguf``
package's ``gguf_new_metadata`` script (nothing is downloaded). All eight ``%%arcana`` cells of
example-notebooks/tour.ipynb are played at the tour's 1,024-token window.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arcana_jupyter.runtime import Runtime, RuntimeConfig

pytest.importorskip("gguf")

ROOT = Path(__file__).resolve().parents[2]
GEMMA3 = ROOT / "tests" / "fixtures" / "chat_templates" / "gemma-3.jinja"
TOUR_TURNS = 8  # the whole README tour


def tour_turns() -> list[str]:
    nb = json.loads((ROOT / "example-notebooks" / "tour.ipynb").read_text())
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return [c.split("\n", 1)[1] for c in cells if c.startswith("%%arcana\n")][:TOUR_TURNS]


@pytest.fixture(scope="module")
def gemma3_gguf(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gguf") / "smollm2-gemma3-template.gguf"
    subprocess.run([sys.executable, "-m", "gguf.scripts.gguf_new_metadata", str(smollm2_path), str(out),
                    "--chat-template-file", str(GEMMA3), "--force"], check=True, capture_output=True, timeout=120)
    return out


def config(tmp_path: Path) -> RuntimeConfig:
    # the README tour's window (1,024 tokens), as `%arcana_chat --window 1024` starts it
    return RuntimeConfig(trace_dir=tmp_path / "traces", total_window=1024, response_reserve=64, max_tokens=24,
                         embeddings="off")


async def play(runtime: Runtime, source: str) -> list[str]:
    answers = []
    async with runtime.chat() as chat:
        for text in tour_turns():
            reply = await chat.send(text, raise_errors=False)
            assert reply.status == "ok", reply.error
            answers.append(reply.text)
        decision = next(e for e in chat.turn_events(chat.turn) if e.event_type == "context_decision")
        assert decision.metadata["shape"]["source"].startswith(source)
    return answers


async def test_a_strict_template_gguf_answers_every_turn_locally(gemma3_gguf: Path, tmp_path: Path) -> None:
    runtime = Runtime(config=config(tmp_path).model_copy(update={"model": f"local:{gemma3_gguf}"}))
    answers = await play(runtime, "template ")  # the GGUF's own template, probed
    assert len(answers) == TOUR_TURNS and all(a.strip() for a in answers)


async def test_a_strict_template_gguf_answers_every_turn_through_llama_cpp_server(gemma3_gguf: Path,
                                                                                  tmp_path: Path) -> None:
    from servers.llama_server import run_llama_server

    with run_llama_server(gemma3_gguf, n_ctx=2048, chat_format=None) as base_url:
        runtime = Runtime(providers={"myllama": {"base_url": base_url}},
                          config=config(tmp_path).model_copy(update={"model": "myllama:gemma-3-smollm2"}))
        # llama-cpp-python's server has no /props: the shape comes from the model's name, as for Ollama
        answers = await play(runtime, "model family gemma-3")
    assert len(answers) == TOUR_TURNS and all(a.strip() for a in answers)
