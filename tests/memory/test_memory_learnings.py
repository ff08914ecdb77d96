"""Session-end learnings: the summariser's answer is validated, stored all-or-nothing."""

from __future__ import annotations

import json

import pytest

from arcana_jupyter.memory import MemoryStore, Scope
from arcana_jupyter.memory.learnings import MAX_LEARNINGS, parse_learnings

TRANSCRIPT = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Load sales.csv and find the fastest-growing region."},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": {"name": "run_code"}}]},
    {"role": "tool", "content": "EMEA +23%"},
    {"role": "assistant", "content": "EMEA grew fastest (+23%)."},
    {"role": "user", "content": "Always show percentages with one decimal."},
]


def answer(items, *, wrap=lambda s: s):
    return wrap(json.dumps({"learnings": items}))


GOOD = [
    {"kind": "fact", "content": "sales.csv has one row per region and month", "confidence": "high", "scope": "project"},
    {"kind": "preference", "content": "Show percentages with one decimal", "confidence": "medium", "scope": "global"},
]


class Summariser:
    def __init__(self, reply: str | Exception) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    async def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


async def test_valid_learnings_are_stored(store: MemoryStore, project_a: Scope, events) -> None:
    summarise = Summariser(answer(GOOD, wrap=lambda s: f"Here are the learnings:\n```json\n{s}\n```\nDone."))
    result = await store.extract_learnings(TRANSCRIPT, summarise, project_a)
    assert result.ok and not result.errors and len(result.stored) == 2
    fact, pref = result.stored
    assert fact.kind == "fact" and fact.confidence == 0.8 and fact.level == "project" and fact.source == "learning"
    assert pref.kind == "preference" and pref.confidence == 0.5 and pref.level == "global"
    assert result.report == "stored 2 learning(s)"
    prompt = summarise.prompts[0]
    assert "user: Load sales.csv" in prompt and "[calls: run_code]" in prompt and "at most 5" in prompt
    assert [m["entry"]["id"] for m in events.of("memory_write", op="learning")] == [fact.id, pref.id]
    again = await store.extract_learnings(TRANSCRIPT, summarise, project_a)
    assert again.ok and again.duplicates == 2 and store.count() == 2
    assert result.to_dict()["stored"][0]["id"] == fact.id


async def test_bare_list_and_empty_answers(store: MemoryStore, project_a: Scope) -> None:
    r = await store.extract_learnings(TRANSCRIPT, Summariser(json.dumps(GOOD[:1])), project_a)
    assert r.ok and len(r.stored) == 1
    r = await store.extract_learnings(TRANSCRIPT, Summariser('{"learnings": []}'), project_a)
    assert r.ok and r.stored == [] and store.count() == 1


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I could not find anything worth remembering.", "invalid JSON"),
        ('{"learnings": [{"kind": "fact", "content": "x", ', "invalid JSON"),
        ("", "answered nothing"),
        ("```json\n```", "invalid JSON"),
        ('{"items": []}', 'expected an object {"learnings"'),
        (answer([GOOD[0]] * (MAX_LEARNINGS + 1)), "too many learnings (at most 5)"),
        (answer([GOOD[0], {**GOOD[1], "kind": "opinion"}]), "learnings.1.kind"),
        (answer([GOOD[0], {**GOOD[1], "content": ""}]), "learnings.1.content"),
        (answer([GOOD[0], {**GOOD[1], "confidence": "certain"}]), "learnings.1.confidence"),
        (answer([GOOD[0], {**GOOD[1], "scope": "team"}]), "learnings.1.scope"),
        (answer([GOOD[0], {"kind": "fact"}]), "learnings.1.content: Field required"),
        (answer([GOOD[0], {**GOOD[1], "why": "extra"}]), "learnings.1.why"),
        (answer([GOOD[0], "just a string"]), "learnings.1"),
    ],
)
async def test_invalid_answers_store_nothing(store: MemoryStore, project_a: Scope, events, reply, problem) -> None:
    result = await store.extract_learnings(TRANSCRIPT, Summariser(reply), project_a)
    assert not result.ok and result.stored == []
    assert any(problem in e for e in result.errors), result.errors
    assert result.report.startswith("no learnings stored: ")
    assert store.count(include_retracted=True) == 0
    assert events.of("memory_write") == []


async def test_failing_summariser_is_reported(store: MemoryStore, project_a: Scope) -> None:
    result = await store.extract_learnings(TRANSCRIPT, Summariser(RuntimeError("rate limited")), project_a)
    assert not result.ok and "rate limited" in result.errors[0] and store.count() == 0

    async def not_text(prompt: str):
        return {"learnings": []}

    result = await store.extract_learnings(TRANSCRIPT, not_text, project_a)  # type: ignore[arg-type]
    assert not result.ok and "not text" in result.errors[0]


async def test_write_failure_leaves_nothing_half_written(store: MemoryStore, project_a: Scope) -> None:
    with store._lock:  # make the second insert fail inside the transaction
        if store.backend == "sqlite":
            store._conn.execute(
                "CREATE TRIGGER boom BEFORE INSERT ON entries WHEN new.content LIKE 'Show%' "
                "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
            )
        else:
            store._conn.execute(
                "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF new.content LIKE 'Show%' THEN RAISE EXCEPTION 'disk on fire'; END IF; RETURN new; END $$"
            )
            store._conn.execute("CREATE TRIGGER boom BEFORE INSERT ON entries FOR EACH ROW EXECUTE FUNCTION boom()")
    result = await store.extract_learnings(TRANSCRIPT, Summariser(answer(GOOD)), project_a)
    assert not result.ok and "disk on fire" in result.errors[0]
    assert store.count(include_retracted=True) == 0


async def test_long_transcripts_are_elided_in_the_middle(store: MemoryStore, project_a: Scope) -> None:
    long = [{"role": "user", "content": f"message {i} " + "filler " * 50} for i in range(200)]
    summarise = Summariser('{"learnings": []}')
    await store.extract_learnings(long, summarise, project_a, max_transcript_tokens=500)
    prompt = summarise.prompts[0]
    assert "message 0 " in prompt and "message 199 " in prompt and "middle of the session omitted" in prompt
    assert len(prompt) < 6000


def test_parse_learnings_tolerates_case_and_whitespace() -> None:
    items, errors = parse_learnings('{"learnings": [{"kind": " Fact ", "content": "  x  ", "confidence": "HIGH"}]}')
    assert errors == [] and items[0].kind == "fact" and items[0].content == "x" and items[0].scope == "project"
