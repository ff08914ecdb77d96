"""The encodings that make a chained decision and a prompt_sent record cost what changed (issue 26):
``chain.patch``, ``chain.sections``, a shape whose ``moved`` alone changed, keyframe value tables,
unaligned changed rows (trace/decision_delta.py) and joined history messages (``{"j": parts}``,
trace/prompt_sent.py). Each round-trips on random and edge inputs, through the writer's redaction in
every content mode; traces without them (what main wrote before) still read, replay and verify."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from test_decision_chain import _check_reads, _record
from test_sparse_ops import without_sparse_ops as _without_sparse_ops

from arcana_jupyter.messages import Message
from arcana_jupyter.providers.shaping import MERGE_SEPARATOR
from arcana_jupyter.runtime import session as session_module
from arcana_jupyter.trace import prompt_sent
from arcana_jupyter.trace.chain import columns as chain_columns
from arcana_jupyter.trace.chain import encoder as chain_encoder
from arcana_jupyter.trace.decision_delta import (
    ChainEncoder,
    ChainResolver,
    apply_patch,
    decode_column,
    encode_column,
    encode_sections,
    make_patch,
    resolve_chain_metadata,
    resolve_sections,
)
from arcana_jupyter.trace.prompt_sent import JOIN_SEPARATOR, PromptSentEncoder, resolve_prompt_sent
from arcana_jupyter.trace.reader import TraceReader
from arcana_jupyter.trace.redact import Redactor


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.randrange(-5, 3000)
    if kind == 1:
        return round(rng.random(), 4)
    if kind == 2:
        return rng.choice([None, True, False, 0, 1, 1.0, 0.0])
    if kind in (3, 4, 5):
        return rng.choice(["", "x", "engine mode: 2605 earlier message(s) (turns 1–949)", "é😀 ok",
                           "mail me at a@b.example", "sk-" + "Ab3" * 8, "turn 12: region 4"])
    if kind == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {rng.choice(["a", "b", "notes", "content", "summary", "id", "args", "x_id"]) + str(rng.randrange(3)):
            _random_value(rng, depth + 1) for _ in range(rng.randrange(0, 5))}


def _mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    if isinstance(value, dict) and value and rng.random() < 0.8:
        out = dict(value)
        for k in rng.sample(sorted(out), k=rng.randrange(1, len(out) + 1)):
            r = rng.random()
            if r < 0.1:
                del out[k]
            else:
                out[k] = _mutate(rng, out[k], depth + 1)
        if rng.random() < 0.2:
            out["new" + str(rng.randrange(3))] = _random_value(rng, depth + 1)
        return out
    if isinstance(value, list) and value and rng.random() < 0.8:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        out_list[i] = _mutate(rng, out_list[i], depth + 1)
        return out_list
    if isinstance(value, str) and rng.random() < 0.7:
        cut = rng.randrange(len(value) + 1)
        return value[:cut] + rng.choice(["7", " more", "😀", "", "\n"]) + value[cut:]
    return _random_value(rng, depth)


def test_patches_round_trip_on_random_values() -> None:
    rng = random.Random(26)
    made = 0
    for _ in range(3000):
        base = {"k" + str(i): _random_value(rng) for i in range(rng.randrange(1, 6))}
        new = _mutate(rng, base)
        patch = make_patch(base, new)
        if patch is None:
            continue
        made += 1
        got = apply_patch(base, json.loads(json.dumps(patch)), "test")
        assert json.dumps(got) == json.dumps(new), (base, new, patch)
    assert made > 500


def test_patch_edge_cases() -> None:
    note = "engine mode: 2605 earlier message(s) that did not fit reach the prompt through the checkpoint"
    base = {"turn": 951, "notes": ["relevance: lexical only", note], "summary": None, "utilization_before": 12.0}
    new = {"turn": 952, "notes": ["relevance: lexical only", note.replace("2605", "2606")],
           "summary": None, "utilization_before": 12.5}
    patch = make_patch(base, new)
    assert patch is not None and patch["notes"] == {"1": [16, "6", len(note) - 17]}
    assert apply_patch(base, patch, "t") == new
    # numbers keep their JSON type (1 and 1.0, True and 1 are different values)
    assert make_patch({"a": 1, "b": "x" * 40}, {"a": 1.0, "b": "x" * 40}) == {"a": [1.0]}
    assert make_patch({"a": True, "b": "x" * 40}, {"a": 1, "b": "x" * 40}) == {"a": [1]}
    # a key that moved: not a patch (the resolved order would differ)
    assert make_patch({"a": 1, "b": 2, "c": "x" * 30}, {"b": 2, "a": 1, "c": "y" + "x" * 29}) is None
    # values under keys redaction treats by name are set whole, never edited piecewise
    long = "a long summary of what the user said " * 3
    patch = make_patch({"summary": long, "z": "q" * 50}, {"summary": long + "!", "z": "q" * 50})
    assert patch == {"summary": [long + "!"]}
    # a string holding something the redaction masks is set whole (its pieces would not be masked alike)
    secret = "key sk-" + "Ab3" * 8 + " and then some more words to make an edit pay"
    patch = make_patch({"n": secret, "z": "q" * 50}, {"n": secret + "!", "z": "q" * 50})
    assert patch == {"n": [secret + "!"]}
    with pytest.raises(ValueError, match="not \\[a, text, b\\]"):
        apply_patch({"a": "xyz"}, {"a": [1, 2, 3]}, "t")
    with pytest.raises(ValueError, match="at least"):
        apply_patch({"a": "xyz"}, {"a": [2, "q", 2]}, "t")
    with pytest.raises(ValueError, match="does not have"):
        apply_patch({"a": 1}, {"b": {"c": [1]}}, "t")
    with pytest.raises(ValueError, match="position"):
        apply_patch({"a": [1, 2]}, {"a": {"5": [1]}}, "t")


def _sections(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    lines = [f"  T{t}: turn {t}: what changed in region {t % 17} since last week?" for t in range(turn - 12, turn)]
    out = [{"name": "checkpoint", "content": f"Session checkpoint (after turn {turn})\n" + "\n".join(lines),
            "layer": "working", "role": "system", "placement": "head"}]
    if rng.random() < 0.8:
        out.append({"name": "model_claims", "content": "Model's earlier claims:\n" + "\n".join(
            f"  - (turn {t}) The analysis shows the numbers moved." for t in range(turn - 5, turn)),
            "layer": "working", "role": "system", "placement": "head"})
    if rng.random() < 0.7:
        out.append({"name": "turn_digests", "content": "Earlier turns, as digests\n" + "\n".join(
            f"T{t}:\n  request: turn {t}" for t in range(turn - 4, turn)), "layer": "working", "role": "system",
            "placement": "late"})
    if rng.random() < 0.1:
        out[0]["content"] += "\nmy password is hunter2-Zx9Zx9Zx9Zx9Zx9Zx9Zx9Zx9Zx9Zx9Zx9"
    rng.shuffle(out) if rng.random() < 0.1 else None
    return out


@pytest.mark.parametrize("mode", ["full", "redacted", "none"])
def test_sections_round_trip_through_the_writer(mode: str) -> None:
    """What a reader resolves from the record as written (redacted) is the redaction of the sections."""
    rng = random.Random(f"sections-{mode}")
    redactor = Redactor(mode)  # type: ignore[arg-type]
    prev: list[dict[str, Any]] = _sections(rng, 20)
    prev_written = redactor.clean(prev)
    forms: set[str] = set()
    for turn in range(21, 120):
        new = _sections(rng, turn) if rng.random() < 0.9 else prev
        items = encode_sections(new, prev)
        if items is None:
            prev, prev_written = new, redactor.clean(new)
            continue
        forms.update(k for item in items for k in item if k in ("p", "e"))
        written = redactor.clean(items)
        got = resolve_sections(json.loads(json.dumps(written)), prev_written, "t")
        assert got == redactor.clean(new), turn
        prev, prev_written = new, got
    assert forms == {"p", "e"}


def test_sections_corruptions_raise() -> None:
    prev = [{"name": "a", "content": "x\ny"}]
    for items, match in (([{"p": 3}], "do not exist"), ([{"p": [0, 2]}], "do not exist"),
                         ([{"e": 1, "content": [[0, 1]]}], "does not exist"),
                         ([{"e": 0, "content": [[1, 5]]}], "copies lines"), ([7], "not a section"),
                         ("x", "not a list")):
        with pytest.raises(ValueError, match=match):
            resolve_sections(items, prev, "t")


def test_chain_metadata_round_trips_with_patches_sections_and_moved_shapes() -> None:
    """ChainEncoder.pack -> resolve_chain_metadata gives every decision's metadata back (random runs)."""
    rng = random.Random(2026)
    for _ in range(40):
        enc = ChainEncoder()
        prev_full: dict[str, Any] | None = None
        moved = {str(k): ["kept", k] for k in range(1, 6)}
        for turn in range(1, 30):
            rows = [{"index": i, "source": "history", "outcome": rng.choice(["kept", "dropped"]),
                     "token_count_after": rng.randrange(5)} for i in range(turn + 2)]
            if rng.random() < 0.5:
                moved = {str(k): [rng.choice(["kept", "merged"]), k] for k in range(1, rng.randrange(3, 9))}
            meta = {"step": 0,
                    "decision": {"turn": turn, "strategy": "x", "decisions": None,
                                 "notes": [f"engine mode: {turn * 3} earlier message(s) (turns 1–{turn})"]},
                    "report": {"layers": [{"layer": "working", "messages": turn + 2, "tokens_after": turn * 7}],
                               "total_after": turn * 9},
                    "budget": {"used": turn * 11, "utilization": round(turn / 31, 4)},
                    "request_digest": f"{turn:016x}", "history_len": turn + 2, "tools": [],
                    "shape": {"name": "portable", "system": "leading", "moved": moved},
                    "inputs": {"pins": [], "sections": _sections(rng, turn + 20), "task": None, "overflow": {}}}
            packed = json.loads(json.dumps(enc.pack(meta, rows)))
            enc.written(f"e_{turn:06d}")
            full = resolve_chain_metadata(packed, prev_full, f"turn {turn}")
            want = json.loads(json.dumps(meta))
            assert {k: v for k, v in full.items() if k != "inputs"} == {k: v for k, v in want.items() if k != "inputs"}
            assert {k: full["inputs"][k] for k in want["inputs"]} == want["inputs"]
            prev_full = full


def test_keyframe_value_tables_decode() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randrange(1, 400)
        values = ["kept", "dropped", "block_dropped", None, True, False, "L0", "x" * 30]
        table = rng.sample(values, k=rng.randrange(1, 8))
        col = [rng.choice(table) if rng.random() < 0.9 else table[0] for _ in range(n)]
        ops = encode_column(col, None)
        assert decode_column(json.loads(json.dumps(ops)), None, n, "t")[0] == col
    # ints and floats keep their own ops (True == 1 must not share a table entry)
    col: list[Any] = [True, 1, 1.0, False, 0, None] * 20
    assert decode_column(encode_column(col, None), None, len(col), "t")[0] == col


def test_changed_rows_left_unaligned_resolve() -> None:
    """Rows other than history messages whose tokens changed may be left unaligned: the chain still
    resolves to every decision's rows."""
    rng = random.Random(11)
    enc = ChainEncoder()
    written: dict[str, dict[str, Any]] = {}
    want: dict[str, list[dict[str, Any]]] = {}
    unaligned = 0
    for turn in range(1, 80):
        n = 40 + turn * 2
        rows = [{"index": i, "source": "history", "outcome": "kept" if (i * turn) % 7 < 2 else "dropped",
                 "reason": "r" if (i * turn) % 7 < 2 else "d", "token_count_after": 18 if (i * turn) % 7 < 2 else 0,
                 "position": i} for i in range(n)]
        rows += [{"index": n, "source": "input", "outcome": "kept", "reason": "input",
                  "token_count_after": rng.randrange(5, 50), "position": n},
                 {"index": n + 1, "source": "section", "outcome": "kept", "reason": "section",
                  "token_count_after": 100 + turn, "position": n + 1}]
        meta = {"step": 0, "decision": {"turn": turn, "decisions": None}}
        packed = json.loads(json.dumps(enc.pack(meta, rows)))
        eid = f"e_{turn:06d}"
        enc.written(eid)
        written[eid] = packed
        want[eid] = rows
        align = packed["chain"]["rows"]["align"]
        covered = sum(seg[1] for seg in align)
        unaligned += bool(align) and covered < len(rows) - 2  # more than the two new history rows
    resolver = ChainResolver(written.get)
    for eid, meta in written.items():
        assert resolver.resolve(eid, meta)["decision"]["decisions"] == want[eid], eid
    assert unaligned > 10


def _history(n: int) -> list[Message]:
    out = [Message(role="system", content="You are helpful.")]
    for t in range(1, n):
        out.append(Message(role="user", content=f"turn {t}: what changed in region {t % 17} since last week?"))
        out.append(Message(role="assistant", content=f"answer {t}"))
    return out


@pytest.mark.parametrize("secret", [False, True])
def test_joined_messages_round_trip(secret: bool) -> None:
    assert JOIN_SEPARATOR == MERGE_SEPARATOR
    history = _history(200)
    if secret:
        history.append(Message(role="user", content="my key is sk-proj-" + "Zx9" * 8))
    redactor = Redactor("full")
    enc = PromptSentEncoder(redact=redactor.redact_text)
    records = {i: redactor.clean(m.record()) for i, m in enumerate(history)}
    previous = None
    joined = 0
    for turn in range(1, 40):
        region = turn % 17
        recalled = [m.content for m in history if f"region {region} " in m.content][-9:]
        parts = recalled + (["an extra text that is not in the history"] if turn % 3 == 0 else [])
        if secret and turn % 5 == 0:
            parts.append(history[-1].content)
        messages = [history[0], *history[-4:-1], Message(role="user", content=MERGE_SEPARATOR.join(parts))]
        meta = redactor.clean(enc.encode(step=0, digest=None, messages=messages, history=history))
        enc.written(f"e_{turn}")
        joined += sum("J" in m for m in meta["messages"])
        got = resolve_prompt_sent(json.loads(json.dumps(meta)), previous, records.get)
        assert got["messages"] == [redactor.clean(m.wire()) for m in messages], turn
        previous = got
    assert joined >= 30


def test_joined_message_corruptions_raise() -> None:
    records = {1: {"role": "user", "content": "a"}}
    for parts, match in (([], "not a list of parts"), (["x"], "no history message"), ([5], "not recorded"),
                         ([[1, 0]], "not text"), ([True], "not text")):
        with pytest.raises(ValueError, match=match):
            resolve_prompt_sent({"prev": None, "keep": 0, "messages": [{"j": parts}]}, None, records.get)


async def test_traces_without_the_new_encodings_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace as main wrote it before these encodings (no patch, sections, value tables, unaligned rows,
    joined messages) still reads on every path, replays and verifies."""
    monkeypatch.setattr(chain_encoder, "make_patch", lambda base, new: None)
    monkeypatch.setattr(chain_encoder, "encode_sections", lambda new, prev: None)
    monkeypatch.setattr(chain_columns, "_table_op", lambda values, ints=False: None)
    _without_sparse_ops(monkeypatch)
    monkeypatch.setattr(chain_encoder, "_unalign_changed", lambda align, new, prev: None)
    monkeypatch.setattr(chain_encoder, "_shape_moved_only", lambda new, prev: None)
    monkeypatch.setattr(prompt_sent.PromptSentEncoder, "_joined", lambda self, wire: None)
    assert session_module.ChainEncoder is ChainEncoder
    run_id, path, live = await _record(tmp_path, 24)
    text = path.read_text()
    assert '"patch"' not in text and '"sections":[{"p"' not in text and '{"J":' not in text
    _check_reads(run_id, path, live)


async def test_new_traces_use_the_new_encodings_and_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real session's decisions, as the runtime handed them to the encoder, are what every reader
    path gives back (the live view resolves with the same function, so it is not the reference here)."""
    packed: list[dict[str, Any]] = []
    original = ChainEncoder.pack

    def pack(self: ChainEncoder, metadata: dict[str, Any], rows: Any) -> dict[str, Any]:
        packed.append(json.loads(json.dumps(metadata)))
        return original(self, metadata, rows)

    monkeypatch.setattr(ChainEncoder, "pack", pack)
    run_id, path, live = await _record(tmp_path, 40)
    metas = [json.loads(line)["metadata"] for line in path.read_text().splitlines()
             if '"event_type":"context_decision"' in line]
    assert sum("patch" in m["chain"] for m in metas) > len(metas) / 2
    assert any("sections" in m["chain"] for m in metas)
    _check_reads(run_id, path, live)
    reader = TraceReader(path.parent, shared=False)
    got = [json.loads(json.dumps(r.metadata)) for r in reader.decision_records(run_id)]
    assert len(got) == len(packed)
    for want, have in zip(packed, got, strict=True):
        for key in ("report", "budget", "shape", "tools", "builder", "request_digest"):
            assert have.get(key) == want.get(key), key
        assert {k: v for k, v in have["decision"].items() if k != "decisions"} == \
            {k: v for k, v in want["decision"].items() if k != "decisions"}
        assert {k: have["inputs"].get(k) for k in want["inputs"]} == want["inputs"]
