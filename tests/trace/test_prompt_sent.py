"""The prompt as sent (``prompt_sent``, trace/prompt_sent.py): written for every call of a turn, encoded
against the previous prompt of the agent, and read back — by ``TraceReader.prompt_sent`` — as exactly the
messages the provider received (captured here at a loopback server speaking OpenAI's wire format),
digest-verified; secrets masked as in every other field; older traces fall back to the rebuild.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
from servers import fake_openai as oa
from servers.scripted import Reply

from arcana_jupyter.context.rebuild import NOT_RECORDED, prompt_as_sent
from arcana_jupyter.exceptions import TraceError
from arcana_jupyter.messages import Message
from arcana_jupyter.providers.shaping import MERGE_SEPARATOR
from arcana_jupyter.runtime import Runtime, RuntimeConfig
from arcana_jupyter.trace.events import TraceContent
from arcana_jupyter.trace.prompt_sent import PromptSentEncoder, resolve_prompt_sent
from arcana_jupyter.trace.reader import TraceReader
from arcana_jupyter.trace.redact import Redactor

KEY = "sk-test-promptsent-0000"


def events_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def runtime_for(server: Any, tmp_path: Path, **config: Any) -> Runtime:
    settings: dict[str, Any] = {"model": "openai:gpt-4o-mini", "trace_dir": tmp_path / "traces",
                                "total_window": 900, "response_reserve": 200, **config}
    return Runtime(providers={"openai": {"api_key": KEY, "base_url": server.base_url}},
                   config=RuntimeConfig(**settings))


def wire_of_request(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages as the server received them, in ``Message.wire()`` form (null content as "")."""
    return [{**m, "content": m.get("content") or ""} for m in body["messages"]]


async def run_turns(server: Any, tmp_path: Path, questions: list[str], **config: Any) -> Path:
    server.script(*[Reply(events=oa.text_stream([f"answer {i}: " + "words " * 30])) for i in range(len(questions))])
    async with runtime_for(server, tmp_path, **config).chat() as chat:
        for q in questions:
            await chat.send(q)
        return chat.trace_path


QUESTIONS = [f"question {i}: tell me about topic {i} " + "detail " * (10 + 7 * i) for i in range(8)]


async def test_every_prompt_is_recorded_as_the_server_received_it(fake_openai, tmp_path: Path) -> None:
    path = await run_turns(fake_openai, tmp_path, QUESTIONS)
    events = events_of(path)
    sent = [e for e in events if e["event_type"] == "prompt_sent"]
    decisions = {e["event_id"]: e for e in events if e["event_type"] == "context_decision"}
    assert len(sent) == len(QUESTIONS) == len(fake_openai.requests)
    assert all(e["parent_id"] in decisions for e in sent)
    assert sent[0]["metadata"]["prev"] is None and sent[0]["metadata"]["keep"] == 0, "the first is a keyframe"
    assert all(e["metadata"]["prev"] == p["event_id"] for p, e in itertools.pairwise(sent))
    assert any(e["metadata"]["keep"] > 0 for e in sent[1:]), "later prompts keep the previous one's prefix"
    refs = [m for e in sent for m in e["metadata"]["messages"] if "h" in m]
    assert refs, "messages equal to transcript messages are references"
    reader = TraceReader(path.parent)
    run = path.stem
    for turn, request in enumerate(fake_openai.requests, start=1):
        got = reader.prompt_sent(run, turn)
        assert got is not None and got.source == "prompt_sent"
        assert got.messages == wire_of_request(request.json), f"turn {turn}"
        assert got.verified and got.recorded_digest == decisions[sent[turn - 1]["parent_id"]]["metadata"][
            "request_digest"]
        assert len(got.tokens) == len(got.messages) and all(isinstance(t, int) for t in got.tokens)
    # a fresh reader reading the last turn first (random access, walks the chain back)
    fresh = TraceReader(path.parent, shared=False)
    last = fresh.prompt_sent(run, len(QUESTIONS))
    assert last is not None and last.verified and last.messages == wire_of_request(fake_openai.requests[-1].json)


async def test_a_key_inside_a_message_is_masked_in_the_recorded_prompt(fake_openai, tmp_path: Path) -> None:
    secret = "sk-live-" + "A1b2C3d4" * 4
    path = await run_turns(fake_openai, tmp_path, [f"my key is {secret}, keep it", "what did I say?"])
    text = path.read_text()
    assert secret not in text and KEY not in text
    assert secret in json.dumps(fake_openai.requests[1].json), "the provider did get it"
    got = TraceReader(path.parent).prompt_sent(path.stem, 2)
    assert got is not None and got.source == "prompt_sent"
    assert any("[REDACTED]" in m["content"] for m in got.messages)
    assert not got.verified and got.masked >= 1 and "masked" in got.status()


async def test_no_content_no_prompt_sent(fake_openai, tmp_path: Path) -> None:
    path = await run_turns(fake_openai, tmp_path, ["one", "two"], trace_content="none")
    assert not [e for e in events_of(path) if e["event_type"] == "prompt_sent"]
    assert TraceReader(path.parent).prompt_sent(path.stem, 2) is None


async def test_an_older_trace_falls_back_to_the_rebuild(fake_openai, tmp_path: Path) -> None:
    path = await run_turns(fake_openai, tmp_path, QUESTIONS[:4])
    old = [line for line in path.read_text().splitlines() if '"event_type":"prompt_sent"' not in line.replace(" ", "")]
    assert len(old) < len(path.read_text().splitlines())
    path.write_text("\n".join(old) + "\n")
    reader = TraceReader(path.parent, shared=False)
    assert reader.prompt_sent(path.stem, 3) is None
    got = prompt_as_sent(reader, path.stem, 3)
    assert got is not None and got.source == "rebuilt" and got.verified and got.note == NOT_RECORDED
    assert got.messages == wire_of_request(fake_openai.requests[2].json)
    assert prompt_as_sent(reader, path.stem, 3, rebuild=False) is None


def test_the_encoding_round_trips_with_bounded_chains() -> None:
    """Random prompts (prefixes kept, messages moved, dropped, added, from the history or not)
    resolve to themselves, with their token counts; keyframes come back every chain_max prompts;
    references come in runs; a long message that changed a little is a line edit of the previous one."""
    rng = random.Random(7)
    history = [Message(role="system", content="sys")]
    enc = PromptSentEncoder(chain_max=5)
    prompt: list[Message] = [history[0]]
    resolved: dict[str, dict[str, Any]] = {}
    prev_id = None
    runs = edits = 0
    lines = [f"line {k}: " + "words " * 8 for k in range(20)]
    for n in range(60):
        history.append(Message(role="user", content=f"u{n} " + "x" * rng.randint(0, 5)))
        history.append(Message(role="assistant", content=f"a{n}"))
        body = [m for m in prompt[2:] if rng.random() > 0.15 and not m.content.startswith("section")]
        if rng.random() < 0.3:
            rng.shuffle(body)
        body += [Message(role="user", content=f"context block {n}")] if rng.random() < 0.5 else []
        lines[rng.randrange(len(lines))] = f"line changed at {n}" + "!" * rng.randint(0, 3)
        section = Message(role="user", content="section\n" + "\n".join(lines) + ("\n" if n % 3 else ""))
        prompt = [history[0], section, *body, history[-2]]
        meta = enc.encode(step=0, digest=None, messages=prompt, history=history,
                          tokens=[len(m.content) for m in prompt])
        eid = f"e_{n:06d}"
        enc.written(eid)
        base = resolved[meta["prev"]] if meta["prev"] else None
        assert (meta["prev"] is None) == (n % 6 == 0), "a keyframe first and after every 5 deltas"
        out = resolve_prompt_sent(json.loads(json.dumps(meta)), base,
                                  lambda h: history[h].record() if 0 <= h < len(history) else None)
        assert out["messages"] == [m.wire() for m in prompt]
        assert out["tokens"] == [len(m.content) for m in prompt]
        resolved[eid] = out
        prev_id = eid
        runs += sum(1 for m in meta["messages"] for k, v in m.items() if k in "hp" and isinstance(v, list))
        edits += sum(1 for m in meta["messages"] if "e" in m)
    assert prev_id and runs and edits > 30


async def test_the_cli_replay_shows_the_prompt_as_sent_without_snapshots(fake_openai, tmp_path: Path, capsys) -> None:
    from arcana_jupyter.cli import main as cli_main

    path = await run_turns(fake_openai, tmp_path, QUESTIONS[:3])
    assert cli_main(["trace", "replay", path.stem, "--dir", str(path.parent), "--turn", "3", "--prompt-only"]) == 0
    out = capsys.readouterr().out
    assert "Prompt as sent (" in out and "recorded as sent; verified (digest" in out
    assert "question 2: tell me about topic 2" in out and "no prompt snapshot" not in out
    # an older trace: rebuilt from the transcript, and said so
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if '"prompt_sent"' not in line))
    assert cli_main(["trace", "replay", path.stem, "--dir", str(path.parent), "--turn", "3", "--prompt-only"]) == 0
    out = capsys.readouterr().out
    assert "rebuilt from the transcript; verified (digest" in out and NOT_RECORDED in out


def _checkpoint(turn: int, history: list[Message]) -> str:
    """A checkpoint-like section: a header that names the turn, the last requests quoted verbatim."""
    requests = [m.content for m in history if m.role == "user"][-8:]
    return "\n".join([f"Session checkpoint (reconciled after turn {turn}; written from turn digests, not by a model)",
                      f"Active request (turn {turn}): {requests[-1]}",
                      f"  ({max(0, turn - 8)} earlier turn(s) not shown; search_turn_events(query) finds them)",
                      *(f"  T{turn - 7 + k}: {r}" for k, r in enumerate(requests)),
                      "Pinned facts stay as they were, line after line, from one call to the next."])


@pytest.mark.parametrize("content", ["full", "redacted"])
def test_edits_quote_history_messages_and_change_line_middles(content: TraceContent) -> None:
    """A section that moves on by a turn (the checkpoint) is written as line edits whose new lines
    quote the recent requests by reference (``{"h": i}``) and change a header's turn number in place
    (``[k, a, text, b]``); with a secret and a long number in some requests it still resolves to the
    prompt as the trace would hold it inline (the writer's redaction), and the joined recalled messages
    are ``J`` ops copying the last joined message's gaps."""
    rng = random.Random(content)
    redactor = Redactor(content)
    history = [Message(role="system", content="You are helpful.")]
    enc = PromptSentEncoder(chain_max=40, redact=redactor.redact_text)
    resolved: dict[str, Any] = {}
    forms: set[str] = set()
    previous = None
    for turn in range(1, 90):
        extra = rng.choice(["", "", " my key is sk-proj-" + "Zx9" * 8, " call 555-123-4567-890 é😀"])
        history.append(Message(role="user", content=f"turn {turn}: what changed in region {turn % 4} since last week?"
                                                    + extra))
        history.append(Message(role="assistant", content=f"The numbers moved in region {turn % 17} as expected."))
        asked = [m.content for m in history[:-2] if m.role == "user"]
        # the requests about the same region; every 7th call recalls another pattern (a tool turn's)
        recalled = [c for c in asked if f"region {turn % 4} " in c] if turn % 7 else asked[-40::3]
        merged = MERGE_SEPARATOR.join([*recalled[-rng.randrange(10, 16):], history[-2].content])
        system = Message(role="system", content="You are helpful.\n\n## checkpoint\n" + _checkpoint(turn, history))
        prompt = [system, *history[-6:-2], Message(role="user", content=merged) if len(recalled) > 1 else history[-2]]
        meta = json.loads(json.dumps(redactor.clean(enc.encode(step=0, digest=None, messages=prompt, history=history,
                                                               tokens=[len(m.content) for m in prompt]))))
        eid = f"e_{turn:06d}"
        enc.written(eid)
        records = {i: redactor.clean(m.record()) for i, m in enumerate(history)}
        previous = resolve_prompt_sent(meta, resolved.get(meta["prev"]) if meta["prev"] else None, records.get)
        assert previous["messages"] == [redactor.clean(m.wire()) for m in prompt], turn
        assert previous["tokens"] == [len(m.content) for m in prompt]
        resolved[eid] = previous
        for m in meta["messages"]:
            forms.update(k for k in ("J", "e", "b") if k in m)
            ops = m["e"][1] if "e" in m else []
            forms.update("quote" for op in ops if isinstance(op, dict))
            forms.update("middle" for op in ops if isinstance(op, list) and len(op) == 4)
    assert forms == {"J", "e", "b", "quote", "middle"}, forms


async def test_malformed_new_forms_raise_naming_the_event(fake_openai, tmp_path: Path) -> None:
    """A broken ``J`` or edit op makes the record unreadable: ValueError from the resolver, and the
    reader's TraceError names the event."""
    records = {1: {"role": "user", "content": "alpha"}, 2: {"role": "user", "content": "beta"}}
    base = {"messages": [{"role": "system", "content": "line one\nline two"}], "tokens": [3], "joined": [[1, 0]]}
    for item, match in (({"J": [[0, 3]]}, "not text, a gap or"), ({"J": [True]}, "not text, a gap or"),
                        ({"J": [5]}, "not recorded"), ({"J": [-2]}, "not recorded"), ({"J": ["x"]}, "no history"),
                        ({"J": []}, "not a list of parts"), ({"J": [0], "b": 1}, "base 1 is not one of the last 1"),
                        ({"J": [0], "b": True}, "base True is not"), ({"J": [0], "b": -1}, "base -1 is not"),
                        ({"e": [0, [[0, 1], [1, 5, "x", 5]]]}, "line change"),
                        ({"e": [0, [[0, 1], [2, 0, "x", 0]]]}, "line change"),
                        ({"e": [0, [[0, 1], [1, 1, 5, 1]]]}, "line change"),
                        ({"e": [0, [[0, 1], {"h": 9}, "\n"]]}, "not a recorded history message"),
                        ({"e": [0, [[0, 1], {"h": 1, "x": 2}, "\n"]]}, "not a recorded history message")):
        with pytest.raises(ValueError, match=match):
            resolve_prompt_sent({"prev": "e_1", "keep": 0, "messages": [item]}, base, records.get)
    # the same ops resolve where they are right: the base's parts copied, a line's middle changed, a quote
    got = resolve_prompt_sent({"prev": "e_1", "keep": 0, "messages": [
        {"J": [[0, 2], "text"]}, {"e": [0, [[1, 5, "ONE", 0], [1, 0, "-", 3], {"h": 2}, "\n"]]}]}, base, records.get)
    assert got["messages"] == [{"role": "user", "content": "alpha\n\n---\n\nbeta\n\n---\n\ntext"},
                               {"role": "system", "content": "line ONE\n-two\nbeta"}]
    # a chained decision's section edit does not read the prompt-only ops
    from arcana_jupyter.trace.line_edits import apply_line_edit
    with pytest.raises(ValueError, match="copies lines"):
        apply_line_edit("a\nb", [[0, 0, "x", 1]], "section 0")
    # in a trace: the reader names the record
    path = await run_turns(fake_openai, tmp_path, QUESTIONS[:3])
    lines = path.read_text().splitlines()
    at = max(i for i, line in enumerate(lines) if '"event_type":"prompt_sent"' in line)
    event = json.loads(lines[at])
    event["metadata"]["messages"].append({"J": [[0, 99]]})
    lines[at] = json.dumps(event)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match=rf"prompt_sent {event['event_id']} cannot be resolved \(message \d+: the "
                                         r"joined message's part \[0, 99\] is not text, a gap or \[k, n\]"):
        TraceReader(path.parent, shared=False).prompt_sent(path.stem, 3)
