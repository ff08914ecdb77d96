"""The viewer reads issue 26's compact encodings exactly as the Python does: a chained decision's
``chain.patch`` (decision, report, budget), ``chain.sections`` (references and line edits), a shape in
``same`` with ``chain.moved``, keyframe value tables and unaligned rows (trace/decision_delta.py), and a
``prompt_sent`` message of joined history messages (``{"j": parts}``, trace/prompt_sent.py) — on traces
written by the Python encoders, corrupted ones included (the same records fail in both)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

from arcana_jupyter.messages import Message
from arcana_jupyter.providers.shaping import MERGE_SEPARATOR
from arcana_jupyter.trace.decision_delta import ChainEncoder
from arcana_jupyter.trace.prompt_sent import PromptSentEncoder, resolve_prompt_sent
from arcana_jupyter.trace.redact import Redactor

from .test_delta_parity import _mutate_chain, check_same, compiled_trace  # noqa: F401 (a fixture)


def _sections(rng: random.Random, turn: int) -> list[dict[str, Any]]:
    lines = "\n".join(f"  T{t}: turn {t}: what changed in region {t % 17}?" for t in range(max(1, turn - 9), turn))
    out = [{"name": "checkpoint", "content": f"Session checkpoint (after turn {turn})\n{lines}", "layer": "working",
            "role": "system", "placement": "head"},
           {"name": "turn_digests", "content": "\n".join(f"T{t}: request {t}" for t in range(turn, turn + 3)),
            "layer": "working", "role": "system", "placement": "late"}]
    return out if rng.random() < 0.85 else out[:1]


def _corrupt_metadata(rng: random.Random, packed: dict[str, Any]) -> None:
    chain = packed["chain"]
    kind = rng.randrange(6)
    if kind == 0 and "patch" in chain:
        key = rng.choice(sorted(chain["patch"]))
        chain["patch"][key] = rng.choice([{"nope": {"x": [1]}}, {"turn": [1, 2, 3]}, [1], {"notes": {"9": [1]}}])
    elif kind == 1:
        chain["patch"] = rng.choice([{"tools": {}}, "x", {"budget": {"used": ["a", "b"]}}])
    elif kind == 2 and "sections" in chain:
        chain["sections"].append(rng.choice([{"p": 9}, {"e": 5, "content": []}, {"e": 0, "content": [[0, 99]]}, 3]))
    elif kind == 3:
        chain["sections"] = rng.choice(["x", [{"p": [0, 7]}]])
    else:
        _mutate_chain(rng, packed, [])


def test_random_chained_metadata_resolves_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:  # noqa: F811
    rng = random.Random(26)
    lines: list[str] = []
    seq = 0
    forms: set[str] = set()
    for chain_no in range(24):
        enc = ChainEncoder(max_chain=rng.choice([4, 512]))
        rows: list[dict[str, Any]] = []
        redactor = Redactor(rng.choice(["full", "redacted", "none"]))
        for step in range(rng.randrange(3, 16)):
            n = len(rows) + rng.randrange(1, 4)
            rows = [{"index": i, "role": rng.choice(["user", "assistant"]), "source": "history",
                     "outcome": rng.choice(["kept", "dropped"]) if rng.random() < 0.2 else "dropped",
                     "reason": rng.choice(["block_dropped", "relevant_bm25", "stale_tool_result"]),
                     "recalled": rng.random() < 0.1, "token_count_after": rng.randrange(30)} for i in range(n)]
            rows.append({"index": n, "role": "user", "source": "input", "outcome": "kept", "reason": "input",
                         "recalled": False, "token_count_after": rng.randrange(5, 40)})
            turn = chain_no * 20 + step
            moved = {str(k): [rng.choice(["kept", "merged"]), k] for k in range(1, rng.randrange(3, 8))}
            meta = {"step": 0,
                    "decision": {"turn": turn, "strategy": "x", "decisions": None, "summary": None,
                                 "notes": ["relevance: lexical", f"engine mode: {turn * 3} earlier message(s) reach"
                                           " the prompt through the checkpoint section"]},
                    "report": {"layers": [{"layer": "working", "messages": n, "tokens_after": turn * 7}],
                               "total_after": turn * 9, "prefix_share": round(rng.random(), 4)},
                    "budget": {"used": turn * 11, "remaining": 300 - turn, "utilization": round(rng.random(), 4)},
                    "tools": [], "builder": {"total_window": 8192},
                    "shape": {"name": "portable", "system": "leading", "moved": moved},
                    "inputs": {"pins": [], "sections": _sections(rng, turn), "task": None, "overflow": {}}}
            packed = json.loads(json.dumps(redactor.clean(enc.pack(meta, rows))))
            seq += 1
            eid = f"e_{seq:06d}"
            enc.written(eid)
            forms.update(k for k in ("patch", "sections", "moved") if k in packed["chain"])
            if rng.random() < 0.12:
                _corrupt_metadata(rng, packed)
            lines.append(json.dumps({"v": 1, "event_id": eid, "run_id": "r_x", "agent": "main", "turn": turn,
                                     "ts": "", "event_type": "context_decision", "parent_id": None,
                                     "metadata": packed}))
    assert forms == {"patch", "sections", "moved"}
    got = check_same(compiled_trace, tmp_path, "\n".join(lines) + "\n")
    resolved = sum(1 for v in got["decisions"].values() if v["problem"] is None)
    assert seq / 3 < resolved < seq, (resolved, seq)


def _absolute(parts: list[Any]) -> list[Any]:
    """Join parts (texts, history messages as gaps) as a ``{"j": parts}`` holds them: absolute indexes."""
    out: list[Any] = []
    end = 0
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        else:
            out.append(end + part)
            end = end + part + 1
    return out


NODE_SENT = r"""
const fs = require('fs');
const trace = require(process.argv[1]);
const data = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const history = h => Object.prototype.hasOwnProperty.call(data.history, String(h)) ? data.history[String(h)] : null;
let previous = null;
const out = [];
for (const meta of data.records) {
  try {
    previous = trace.resolvePromptSent(meta, previous, history);
    out.push({ messages: previous.messages, tokens: previous.tokens });
  } catch (err) {
    out.push(null);
    previous = null;
  }
}
process.stdout.write(JSON.stringify(out));
"""


def test_joined_prompt_messages_resolve_like_the_python(compiled_trace: Path, tmp_path: Path) -> None:  # noqa: F811
    rng = random.Random(7)
    history = [Message(role="system", content="You are helpful.")]
    for t in range(1, 300):
        history.append(Message(role="user", content=f"turn {t}: what changed in region {t % 17}? é😀"))
        history.append(Message(role="assistant", content=f"answer {t}"))
    redactor = Redactor("full")
    enc = PromptSentEncoder(redact=redactor.redact_text)
    hist = {str(i): redactor.clean(m.record()) for i, m in enumerate(history)}
    records: list[dict[str, Any]] = []
    written: Any = None
    for turn in range(1, 60):
        region = turn % 17
        parts = [m.content for m in history if f"region {region}?" in m.content][-rng.randrange(2, 12):]
        if rng.random() < 0.3:
            parts.insert(rng.randrange(len(parts)), "a text of its own, not in the history")
        messages = [history[0], *history[-3:], Message(role="user", content=MERGE_SEPARATOR.join(parts))]
        meta = json.loads(json.dumps(redactor.clean(enc.encode(step=0, digest=None, messages=messages,
                                                                history=history))))
        enc.written(f"e_{turn}")
        written = resolve_prompt_sent(meta, written, lambda h: hist.get(str(h)))
        if rng.random() < 0.1:  # a broken part: both readers refuse the record
            for m in meta["messages"]:
                if "J" in m and rng.random() < 0.3:
                    m["b"] = rng.choice([7, -1, True, "1"])
                elif "J" in m:
                    m["J"].append(rng.choice([10_000, -5_000, [3, 0], [0, 999], True, None, 2.5]))
        elif rng.random() < 0.2 and sum("J" in m for m in meta["messages"]) == 1:
            # as traces before "J" hold it: absolute history indexes (both readers read it, and what follows)
            for m in meta["messages"]:
                if "J" in m:
                    del m["J"]
                    m["j"] = _absolute(written["joined"][-1])
        records.append(meta)
    assert sum(any("J" in m for m in r["messages"]) for r in records) > 30
    assert any("b" in m for r in records for m in r["messages"]), "a J copying an earlier joined message"
    assert any(any("j" in m for m in r["messages"]) for r in records)
    path = tmp_path / "sent.json"
    path.write_text(json.dumps({"records": records, "history": hist}), encoding="utf-8")
    proc = subprocess.run(["node", "-e", NODE_SENT, str(compiled_trace), str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    viewer = json.loads(proc.stdout)
    python: list[Any] = []
    previous = None
    for meta in records:
        try:
            previous = resolve_prompt_sent(meta, previous, lambda h: hist.get(str(h)))
            python.append({"messages": previous["messages"], "tokens": previous["tokens"]})
        except ValueError:
            python.append(None)
            previous = None
    assert viewer == python
    assert 0 < python.count(None) < len(python)
