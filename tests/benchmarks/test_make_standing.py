"""benchmarks/retention/make_standing.py and standing.py: the standing-instruction data in the repo is what the script
writes, it has the shape the benchmark relies on (items stated early, revised and revoked in the middle, probes late
whose dependencies are in force), and the benchmark's measure is computed from the runtime's own sections only.

The blind held-out split (``--holdout``, standing_holdout_items.py) is held to the same: written deterministically, the
same shape and self-check, and apart from dev and test (its own projects, people, wordings and user talk).
The second blind split (``--blind``, standing_blind_items.py) likewise, and apart from all three (no user sentence
of theirs, no paraphrase of their items, none of their acknowledgements); ``--blind`` writes its file only.
The third blind split, the test split (``--blind2``, standing_blind2_items.py), likewise and apart from all four.

The harness tests drive a few short turns through real sessions (no data file): a sentence in the verbatim history
is in the prompt but not held by the runtime's sections; a pinned one is (pins count as the runtime's sections: the
harness never pins, so a pin in a measured prompt is one the runtime made); quoted earlier messages and history rows
never count, whatever section carries them.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from arcana_jupyter.adaptive import standing as ack
from arcana_jupyter.context.decisions import ContextDecision, MessageDecision
from arcana_jupyter.context.relevance import stems
from arcana_jupyter.messages import RECALLED_NAME, Message
from benchmarks.retention import make_standing as ms
from benchmarks.retention import standing as st
from benchmarks.retention import standing_blind2_items as sb2
from benchmarks.retention import standing_blind_items as sb
from benchmarks.retention import standing_holdout_items as sh
from benchmarks.retention import standing_items as si
from benchmarks.retention import standing_prose as sp

ALL = (*ms.SPLITS, ms.HOLDOUT)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict]]:
    out = tmp_path_factory.mktemp("standing")
    report = ms.write(out)
    report[ms.HOLDOUT] = ms.write_holdout(out)
    return out, report


def _load(split: str) -> list[dict[str, Any]]:
    return json.loads((ms.DATA / f"standing_{split}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("split", ALL)
def test_the_files_in_the_repo_are_what_the_script_writes(written: tuple[Path, dict], split: str) -> None:
    out, _ = written
    name = f"standing_{split}.json"
    flag = " --holdout" if split == ms.HOLDOUT else ""
    assert (out / name).read_bytes() == (ms.DATA / name).read_bytes(), \
        f"run python -m benchmarks.retention.make_standing{flag}"


def test_the_holdout_is_deterministic_and_written_alone(tmp_path: Path) -> None:
    """Twice the same chats; ``--holdout`` writes its file only (dev and test are not regenerated)."""
    assert json.dumps(ms.make(ms.HOLDOUT)) == json.dumps(ms.make(ms.HOLDOUT))
    ms.write_holdout(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["standing_holdout.json"]


@pytest.mark.parametrize("split", ALL)
def test_the_self_check_holds(written: tuple[Path, dict], split: str) -> None:
    r = written[1][split]
    assert r["problems"] == []
    assert r["chats"] == ms.N_CHATS >= 8
    assert 100 <= ms.EXCHANGES[0] <= r["exchanges"][0] <= r["exchanges"][1] <= ms.EXCHANGES[1] <= 140
    assert 60_000 <= r["tokens"][0] <= r["tokens"][1] <= 120_000
    assert r["revisions"] == 2 * ms.N_CHATS and r["revocations"] == ms.N_CHATS
    kinds = {"chit_chat", "one_off", "question", "quoted", "assistant"}
    assert set(r["traps"]) == (kinds | {"third_party", "hypothetical"} if split == ms.HOLDOUT else kinds)
    assert r["coverage"] == 1.0
    assert all(r["dependencies"][k] >= 20 for k in ("instruction", "preference", "constraint"))


def _in_force(item: dict[str, Any], turn: int) -> bool:
    return item["turn"] < turn and (item["superseded_at"] or 10**9) > turn and (item["revoked_at"] or 10**9) > turn


@pytest.mark.parametrize("split", ALL)
def test_every_probe_depends_on_items_in_force_and_lists_what_is_gone(split: str) -> None:
    for chat in _load(split):
        n = len(chat["turns"]) // 2
        assert n >= 100
        items = {r["id"]: r for r in chat["items"]}
        assert chat["probes"]
        for p in chat["probes"]:
            assert n * 2 // 3 < p["turn"] <= n
            assert p["depends_on"], p
            for d in p["depends_on"]:
                assert d in items and _in_force(items[d], p["turn"]), (chat["id"], p["id"], d)
                # worded apart: the probe does not restate what it depends on
                assert ms.share(items[d]["sentence"], p["text"]) < st.HOLD
            gone = {r["id"] for r in chat["items"]
                    if (r["superseded_at"] or 10**9) <= p["turn"] or (r["revoked_at"] or 10**9) <= p["turn"]}
            assert set(p["must_not_hold"]) == gone
            user = chat["turns"][2 * (p["turn"] - 1)]
            assert user["id"] == p["message"] and user["role"] == "user" and user["content"] == p["text"]


@pytest.mark.parametrize("split", ALL)
def test_items_are_stated_early_revised_in_the_middle_and_said_in_the_users_words(split: str) -> None:
    item = ms.CATALOGUES[split].item
    for chat in _load(split):
        n = len(chat["turns"]) // 2
        by_id = {t["id"]: t for t in chat["turns"]}
        items = {r["id"]: r for r in chat["items"]}
        assert set(chat) == {"id", "project", "user", "sessions", "turns", "items", "traps", "probes"}
        assert chat["turns"][0]["content"].startswith(f"[{chat['sessions'][0]['date_time']}] ")
        for r in chat["items"]:
            assert set(r) == {"id", "key", "kind", "turn", "message", "sentence", "revises", "superseded_at",
                              "revoked_at", "revoked_by", "expect"}
            assert r["kind"] == item[r["key"]]["kind"] in ("instruction", "preference", "constraint")
            message = by_id[r["message"]]
            assert message["role"] == "user" and r["sentence"] in message["content"]
            assert message["id"] == chat["turns"][2 * (r["turn"] - 1)]["id"]
            if r["revises"] is None:
                assert r["turn"] <= n // 3
            else:
                old = items[r["revises"]]
                assert old["key"] == r["key"] and old["superseded_at"] == r["turn"] and n // 3 < r["turn"] <= 2 * n // 3
            if r["revoked_at"] is not None:
                assert r["revoked_by"] in chat["turns"][2 * (r["revoked_at"] - 1)]["content"]
        kinds = [r["kind"] for r in chat["items"] if r["revises"] is None]
        assert kinds.count("instruction") >= 3 and kinds.count("preference") >= 2 and kinds.count("constraint") >= 2
        for t in chat["traps"]:
            assert t["sentence"] in by_id[t["message"]]["content"] and by_id[t["message"]]["role"] == t["role"]


def test_dev_and_test_differ() -> None:
    dev, test = _load("dev"), _load("test")
    assert {c["project"] for c in dev} & {c["project"] for c in test} == set()
    assert {c["user"] for c in dev} & {c["user"] for c in test} == set()
    sentences = {s: {r["sentence"] for c in chats for r in c["items"]} for s, chats in (("dev", dev), ("test", test))}
    assert sentences["dev"] & sentences["test"] == set()
    traps = {s: {t["sentence"] for c in chats for t in c["traps"]} for s, chats in (("dev", dev), ("test", test))}
    assert traps["dev"] & traps["test"] == set()
    assert ms.SEEDS["dev"] != ms.SEEDS["test"]


def test_revisions_replace_rather_than_repeat() -> None:
    for split in ALL:
        for chat in _load(split):
            items = {r["id"]: r for r in chat["items"]}
            for r in chat["items"]:
                if r["revises"]:
                    old = items[r["revises"]]["sentence"]
                    assert ms.share(old, r["sentence"]) < 0.5 and ms.share(r["sentence"], old) < 0.5


def _plain(wording: Any) -> str:
    return wording[0] if isinstance(wording, tuple) else wording


def test_the_holdout_is_written_apart_from_dev_and_test() -> None:
    """Its own projects, people, dates and seed; none of its item, trap or probe sentences is one of dev's or test's,
    and none holds 60% of the content words of a dev or test item (no paraphrase of one); the user's side of the
    talk (requests, greetings, feedback, small talk, context, the pasted code) is its own too."""
    hold = _load(ms.HOLDOUT)
    seen = _load("dev") + _load("test")
    assert {c["project"] for c in hold} & {c["project"] for c in seen} == set()
    assert {c["user"] for c in hold} & {c["user"] for c in seen} == set()
    assert set(ms.MATES[ms.HOLDOUT]) & (set(ms.MATES["dev"]) | set(ms.MATES["test"])) == set()
    assert ms.SEEDS[ms.HOLDOUT] not in (ms.SEEDS["dev"], ms.SEEDS["test"])
    assert ms.START[ms.HOLDOUT] > max(ms.START["dev"], ms.START["test"])

    def sentences(chats: list[dict[str, Any]]) -> set[str]:
        out = {r["sentence"] for c in chats for r in c["items"]}
        out |= {r["revoked_by"] for c in chats for r in c["items"] if r["revoked_by"]}
        out |= {t["sentence"] for c in chats for t in c["traps"]}
        return out | {p["text"] for c in chats for p in c["probes"]}

    assert sentences(hold) & sentences(seen) == set()
    old = {r["sentence"] for c in seen for r in c["items"]}
    old |= {w for it in si.ITEMS for s in ms.SPLITS for w in it["say"][s] + it.get("revision", {}).get("say", {})
            .get(s, []) + it.get("revoke", {}).get("say", {}).get(s, [])}
    new = {_plain(w) for it in sh.ITEMS for w in it["say"][ms.HOLDOUT]}
    new |= {w for it in sh.ITEMS for w in it.get("revision", {}).get("say", {}).get(ms.HOLDOUT, [])}
    for a in new:
        for b in old:
            assert ms.share(a, b) < st.HOLD and ms.share(b, a) < st.HOLD, (a, b)
    user_side = (sh.GREETINGS, sh.FEEDBACK, sh.SMALL_TALK, sh.CONTEXT, sh.OPENING, [sh.REVIEW_CODE],
                 [a for asks in sh.ASKS.values() for a in asks])
    dev_test_side = {*sp.GREETINGS, *sp.FEEDBACK, *sp.SMALL_TALK, *sp.CONTEXT, sp.REVIEW_CODE,
                     *ms.OPENING["dev"], *ms.OPENING["test"], *(a for k in sp.KINDS.values() for a in k["ask"])}
    assert {x for xs in user_side for x in xs} & dev_test_side == set()
    assert set(sh.ASKS) == set(sp.KINDS)


def test_the_holdout_uses_its_forms() -> None:
    """Lists and pasted snippets around some statements, every revocation kind, the new trap kinds, and the replies
    follow what is in force (German between the switch and its revocation, numbered lists, SPDX headers, diffs)."""
    chats = _load(ms.HOLDOUT)
    by_id = {t["id"]: t for c in chats for t in c["turns"]}
    framed = [r for c in chats for r in c["items"] if "\n- " + r["sentence"] in by_id[r["message"]]["content"]
              or "```\n\n" + r["sentence"] in by_id[r["message"]]["content"]]
    assert framed
    revoked = {r["key"] for c in chats for r in c["items"] if r["revoked_at"]}
    assert revoked == set(sh.REVOKED) and len(revoked) >= 5
    for c in chats:
        for r in c["items"]:
            if r["key"] == "german":
                german = [c["turns"][2 * (k - 1) + 1]["content"] for k in range(r["turn"], r["revoked_at"])]
                assert german and all("Deutsch" in g or "Sag Bescheid" in g or "Bei Fragen" in g
                                      or "genauer erklären" in g for g in german)
                assert "Deutsch" not in c["turns"][2 * (r["revoked_at"] - 1) + 1]["content"]
    replies = "\n".join(t["content"] for c in chats for t in c["turns"] if t["role"] == "assistant")
    for mark in ("\n1. ", "SPDX-License-Identifier: Apache-2.0", "SPDX-License-Identifier: MPL-2.0", "\n--- a/app/"):
        assert mark in replies, mark


# ---- the harness -------------------------------------------------------------------------------------------

def test_the_chance_control_is_what_the_chat_never_states() -> None:
    chats = _load("dev")
    said = {r["key"] for r in chats[0]["items"]}
    controls = st.never_said(chats, chats[0])
    assert controls and not {r["sentence"] for r in chats[0]["items"]} & set(controls)
    keys = {r["sentence"]: r["key"] for c in chats for r in c["items"]}
    assert not {keys[c] for c in controls} & said


def test_holder_text_and_line_units() -> None:
    sentence = "Always format code with syntax highlighting, with the language named on the fence."
    assert len(set(stems(sentence))) >= 5
    spread = st.Holder([("a", "code format\nsyntax highlight language\nnamed fence")])
    assert spread.held(sentence, "text") and not spread.held(sentence, "line")
    one = st.Holder([("checkpoint", "Constraints:\n  - (turn 4) " + sentence)])
    assert one.held(sentence, "line") and one.where(sentence, "line") == "checkpoint"
    assert not st.Holder([("x", "nothing like it")]).held(sentence, "text")


def test_runtime_sections_take_section_and_pin_rows_and_added_system_messages_only() -> None:
    layout = [
        Message(role="system", content="You are a helpful assistant."),
        Message(role="system", content="Session checkpoint\nConstraints:\n  - (turn 2) keep it small",
                name="checkpoint"),
        Message(role="system", content="[Pinned p1]\nuse tabs", name="p1"),
        Message(role="system", content="Summary of the earlier conversation (4 messages):\nthey talked",
                name="summary"),
        Message(role="user", content="an old question"),
        Message(role="assistant", content="an old answer"),
        Message(role="system", content="(turn 1, user) a quoted earlier message", name=RECALLED_NAME),
        Message(role="user", content="the question now"),
    ]

    def row(index: int, source: str, position: int | None, **kw: Any) -> MessageDecision:
        return MessageDecision(index=index, role="system" if source in ("section", "pin") else "user", outcome="kept",
                               fidelity="L0", token_count_before=5, token_count_after=5, reason="r", source=source,
                               position=position, **kw)

    decision = ContextDecision(strategy="tail_preserve", requested_strategy="auto", utilization_before=1.0, decisions=[
        row(0, "history", 6, recalled=True, section="checkpoint"),  # recalled, even if a section carries its turn
        row(1, "history", 4), row(2, "history", 5),
        row(3, "history", None, section="checkpoint"),  # dropped, carried by the checkpoint: not a section
        row(4, "input", 7), row(5, "section", 1, section="checkpoint"), row(6, "pin", 2, section="p1"),
        row(7, "section", None, section="memory_digest"),  # dropped: not in the prompt
    ])
    sent = "\n".join(m.content for m in layout if m.name != "summary")
    found = st.runtime_sections(decision, layout, sent, count=lambda m: 7)
    assert [(s.name, s.sent) for s in found] == [("checkpoint", True), ("pin:p1", True), ("summary", False)]
    assert found[0].tokens == 5 and found[2].tokens == 7


def _chat(statement: str, filler: int = 6) -> dict[str, Any]:
    """A small chat: the statement at turn 2, a trap at turn 3, the probe last."""
    body = ("The export streams rows to disk so memory stays flat, and the header comes from the same column list as "
            "the query. ") * 4
    users = [f"[9:00 am on 4 March, 2024] Hi. Can you sketch the table for parcels? {body}",
             f"That worked, thanks. {statement} Now the parcels query, please.",
             "I always forget my keys when I leave in a hurry. What about the labels table?"]
    users += [f"Next part {k}: the pallets export. {body}" for k in range(filler)]
    users.append("Could you write the function that dumps all parcels into a CSV file for the accountant?")
    turns = []
    for k, u in enumerate(users):
        turns += [{"id": f"x_t{2 * k}", "role": "user", "content": u},
                  {"id": f"x_t{2 * k + 1}", "role": "assistant", "content": f"Answer {k}. {body}"}]
    n = len(users)
    return {"id": "x", "turns": turns,
            "items": [{"id": "x_i0", "key": "fences", "kind": "instruction", "turn": 2, "message": "x_t2",
                       "sentence": statement, "revises": None, "superseded_at": None, "revoked_at": None,
                       "revoked_by": None, "expect": ""}],
            "traps": [{"turn": 3, "message": "x_t4", "role": "user", "kind": "chit_chat",
                       "sentence": "I always forget my keys when I leave in a hurry."}],
            "probes": [{"id": "x_p0", "turn": n, "message": f"x_t{2 * (n - 1)}", "text": users[-1],
                        "depends_on": ["x_i0"], "must_not_hold": []}]}


STATEMENT = "Always format code with syntax highlighting, with the language named on the fence."


def test_an_instruction_in_the_verbatim_history_is_held_by_the_standing_section_not_classic_modes() -> None:
    """Everything fits verbatim: the prompt holds the statement either way; the default mode's own sections
    hold it too (the ``standing`` section, issue 39), classic mode's none; the trap is held by neither."""
    for engine, held in ((True, True), (False, False)):
        tally = st.Tally()
        details: list[dict[str, Any]] = []
        asyncio.run(st.drive(_chat(STATEMENT, filler=1), engine=engine, budget=16000, tally=tally, details=details,
                             controls=["I prefer httpx over requests for HTTP calls."]))
        assert tally.control == [(False, False)]
        assert tally.probes == 1
        (text, line, prompt), = tally.deps["instruction"]
        assert prompt and text == held and line == held, engine
        assert details[0]["depends_on"]["x_i0"]["section"] == ("standing" if held else None)
        assert tally.traps["chit_chat"] == [False]
        assert (tally.standing_share[0] > 0) == held


def test_a_pinned_instruction_counts_as_held_by_the_runtimes_sections() -> None:
    def pin(session: Any, turn: int) -> None:
        if turn == 3:
            session.pin(STATEMENT, label="standing")

    for engine in (True, False):
        tally = st.Tally()
        details: list[dict[str, Any]] = []
        asyncio.run(st.drive(_chat(STATEMENT), engine=engine, budget=1000, tally=tally, details=details,
                             before_turn=pin))
        assert tally.deps["instruction"] == [(True, True, True)], engine
        assert details[0]["depends_on"]["x_i0"]["section"].startswith("pin:")
        assert tally.by_section["pin"] == 1 and tally.present["pin"] == 1
        assert 0 < tally.share[0] < 1 and tally.prompt_tokens[0] <= 1000


def test_the_measure_runs_at_a_small_budget_in_both_modes() -> None:
    for engine in (True, False):
        tally = st.Tally()
        asyncio.run(st.drive(_chat(STATEMENT), engine=engine, budget=1000, tally=tally))
        assert tally.probes == 1 and len(tally.deps["instruction"]) == 1 and len(tally.live["instruction"]) == 1
        assert len(tally.traps["chit_chat"]) == 1 and tally.superseded_line == [False]
        assert (tally.share[0] > 0) == bool(tally.present)  # today's default mode may have none at 1k
    table = st.tables([(1000, "default", tally)])
    assert "| 1,000 | default |" in table


def test_ack_noise_opens_only_replies_to_ordinary_turns_and_is_seeded() -> None:
    chats = json.loads((ms.DATA / "standing_holdout.json").read_text())[:2]
    noisy = st.with_ack_noise(chats)
    assert noisy == st.with_ack_noise(chats) and noisy != chats  # the same draw each time; the input is untouched
    assert chats == json.loads((ms.DATA / "standing_holdout.json").read_text())[:2]
    changed = 0
    for before, after in zip(chats, noisy, strict=True):
        stating = {rec["message"] for rec in before["items"]}
        for i, (a, b) in enumerate(zip(before["turns"], after["turns"], strict=True)):
            if a == b:
                continue
            changed += 1
            user = before["turns"][i - 1]
            assert a["role"] == "assistant" and user["role"] == "user" and user["id"] not in stating
            opening = b["content"][: len(b["content"]) - len(a["content"]) - 1]
            assert b["content"].endswith(a["content"]) and opening in st.NOISE_PLAIN + st.NOISE_LASTING
    replies = sum(t["role"] == "assistant" for c in chats for t in c["turns"])
    assert 0.3 * replies < changed < 0.5 * replies  # about 30% bare and 10% lasting


@pytest.mark.parametrize("style", ["none", "dev", "test"])
def test_acks_reopen_only_the_replies_to_item_turns_and_are_seeded(style: str) -> None:
    chats = json.loads((ms.DATA / "standing_holdout.json").read_text())[:2]
    again = json.loads((ms.DATA / "standing_holdout.json").read_text())[:2]
    out = st.with_acks(chats, style)
    assert out == st.with_acks(again, style) and chats == again  # seeded; the input is untouched
    pool = st.ACKS.get(style, {"lasting": (), "plain": (), "revise": ()})
    opened = 0
    for before, after in zip(chats, out, strict=True):
        stating = {rec["message"] for rec in before["items"]}
        for i, (a, b) in enumerate(zip(before["turns"], after["turns"], strict=True)):
            user = before["turns"][i - 1]
            if a["role"] != "assistant" or user["id"] not in stating:
                assert a == b  # user turns and the replies to ordinary turns stay as written
                continue
            opened += 1
            assert ack.acknowledgement(a["content"]) is not None  # the generated reply acknowledged it
            if style == "none":
                assert b["content"] and ack.acknowledgement(b["content"]) is None
            else:
                assert any(b["content"].startswith(o) for o in pool["lasting"] + pool["plain"] + pool["revise"])
    assert opened == sum(len({r["message"] for r in c["items"]}) for c in chats)
    assert st.with_acks(chats, "as-written") is chats
    assert not set(st.ACKS["dev"]["lasting"]) & set(st.ACKS["test"]["lasting"])  # the pools share no phrasing


# ---- the second blind split (--blind, standing_blind_items.py) ---------------------------------------------

_SAID_ELSEWHERE = (  # the acknowledgements the blind split must not reuse (besides the other splits' own)
    "Got it! I'll keep that in mind going forward.", "Absolutely — I'll stick to that from here on out.",
    "Understood. I'll follow that for the rest of our conversation.", "You got it! I'll keep that in mind from now on.",
    "Certainly — I'll follow that going forward.", "Noted — I'll apply that to everything that follows.")


@pytest.fixture(scope="module")
def blind(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("blind")
    return out, ms.write_blind(out)


def test_the_blind_split_is_deterministic_and_the_file_in_the_repo(blind: tuple[Path, dict], tmp_path: Path) -> None:
    """Twice the same chats; the file in the repo is what ``--blind`` writes, and it writes that file only."""
    out, _ = blind
    assert json.dumps(ms.make(ms.BLIND)) == json.dumps(ms.make(ms.BLIND))
    assert [p.name for p in out.iterdir()] == ["standing_blind.json"]
    assert (out / "standing_blind.json").read_bytes() == (ms.DATA / "standing_blind.json").read_bytes(), \
        "run python -m benchmarks.retention.make_standing --blind"


def test_the_blind_self_check_holds(blind: tuple[Path, dict]) -> None:
    r = blind[1]
    assert r["problems"] == []
    assert r["chats"] == ms.N_CHATS
    assert ms.EXCHANGES[0] <= r["exchanges"][0] <= r["exchanges"][1] <= ms.EXCHANGES[1]
    assert ms.TOKENS[0] <= r["tokens"][0] <= r["tokens"][1] <= ms.TOKENS[1]
    assert r["revisions"] == 2 * ms.N_CHATS and r["revocations"] == ms.N_CHATS
    assert set(r["traps"]) == {"chit_chat", "one_off", "question", "quoted", "assistant", "third_party",
                               "hypothetical"}
    assert r["coverage"] == 1.0
    assert all(r["dependencies"][k] >= 20 for k in ("instruction", "preference", "constraint"))
    # and the shape checks the other splits are held to
    test_every_probe_depends_on_items_in_force_and_lists_what_is_gone(ms.BLIND)
    test_items_are_stated_early_revised_in_the_middle_and_said_in_the_users_words(ms.BLIND)


def test_blind_writes_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--blind`` regenerates neither dev and test nor the held-out split; the files in the repo stay as they are."""
    before = {p.name: p.read_bytes() for p in ms.DATA.glob("standing_*.json") if p.name != "standing_blind.json"}

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("--blind wrote another split")

    monkeypatch.setattr(ms, "write", refuse)
    monkeypatch.setattr(ms, "write_holdout", refuse)
    monkeypatch.setattr(ms.write_blind, "__defaults__", (tmp_path,))
    ms.main(["--blind"])
    assert [p.name for p in tmp_path.iterdir()] == ["standing_blind.json"]
    after = {p.name: p.read_bytes() for p in ms.DATA.glob("standing_*.json") if p.name != "standing_blind.json"}
    assert after == before
    with pytest.raises(SystemExit):
        ms.main(["--blind", "--holdout"])


def _user_side(mod: Any, split: str) -> set[str]:
    """Every sentence a module of its own puts in the user's mouth (items, revisions, revocations, reasons, traps,
    probes, requests, greetings, feedback, small talk, context, openings)."""
    out: set[str] = set()
    for it in mod.ITEMS:
        out |= {_plain(w) for w in it["say"][split]} | set(it["why"][split]) | {t for _, t in it["probes"][split]}
        for extra in ("revision", "revoke"):
            out |= set(it.get(extra, {}).get("say", {}).get(split, []))
        out |= {t for _, t in it.get("revision", {}).get("probes", {}).get(split, [])}
    out |= {t for traps in mod.TRAPS.values() for t in traps[split]}
    out |= {a for asks in mod.ASKS.values() for a in asks}
    return out | {*mod.GREETINGS, *mod.FEEDBACK, *mod.SMALL_TALK, *mod.CONTEXT, *mod.OPENING, mod.REVIEW_CODE}


def test_the_blind_split_is_written_apart_from_the_others() -> None:
    """Its own projects, people, dates and seed; no sentence of the user's side is one of dev's, test's or the
    held-out split's, and none of its items, revisions or revocations holds 60% of the content words of one of
    theirs (no paraphrase); the data shares no item, trap or probe sentence with theirs either."""
    blind_chats = _load(ms.BLIND)
    others = {s: _load(s) for s in ALL}
    assert ms.SEEDS[ms.BLIND] not in [ms.SEEDS[s] for s in ALL]
    assert ms.START[ms.BLIND] > max(ms.START[s] for s in ALL)
    for s in ALL:
        assert {c["project"] for c in blind_chats} & {c["project"] for c in others[s]} == set()
        assert {c["user"] for c in blind_chats} & {c["user"] for c in others[s]} == set()
        assert set(ms.MATES[ms.BLIND]) & set(ms.MATES[s]) == set()
        assert {p["key"] for p in ms.PROJECTS[ms.BLIND]} & {p["key"] for p in ms.PROJECTS[s]} == set()

    def sentences(chats: list[dict[str, Any]]) -> set[str]:
        out = {r["sentence"] for c in chats for r in c["items"]}
        out |= {r["revoked_by"] for c in chats for r in c["items"] if r["revoked_by"]}
        out |= {t["sentence"] for c in chats for t in c["traps"]}
        return out | {p["text"] for c in chats for p in c["probes"]}

    assert sentences(blind_chats) & set().union(*(sentences(chats) for chats in others.values())) == set()
    mine = _user_side(sb, ms.BLIND)
    theirs = _user_side(sh, ms.HOLDOUT) | {*sp.GREETINGS, *sp.FEEDBACK, *sp.SMALL_TALK, *sp.CONTEXT, sp.REVIEW_CODE,
                                            *ms.OPENING["dev"], *ms.OPENING["test"],
                                            *(a for k in sp.KINDS.values() for a in k["ask"])}
    for s in ms.SPLITS:
        theirs |= {w for it in si.ITEMS for w in it["say"][s] + it.get("revision", {}).get("say", {}).get(s, [])
                   + it.get("revoke", {}).get("say", {}).get(s, [])}
        theirs |= {t for traps in si.TRAPS.values() for t in traps.get(s, [])}
    assert mine & theirs == set()
    old = {w for it in si.ITEMS for s in ms.SPLITS for w in it["say"][s] + it.get("revision", {}).get("say", {})
           .get(s, []) + it.get("revoke", {}).get("say", {}).get(s, [])}
    old |= {_plain(w) for it in sh.ITEMS for w in it["say"][ms.HOLDOUT]}
    old |= {w for it in sh.ITEMS for extra in ("revision", "revoke")
            for w in it.get(extra, {}).get("say", {}).get(ms.HOLDOUT, [])}
    new = {_plain(w) for it in sb.ITEMS for w in it["say"][ms.BLIND]}
    new |= {w for it in sb.ITEMS for extra in ("revision", "revoke")
            for w in it.get(extra, {}).get("say", {}).get(ms.BLIND, [])}
    for a in new:
        for b in old:
            assert ms.share(a, b) < st.HOLD and ms.share(b, a) < st.HOLD, (a, b)
    assert set(sb.ASKS) == set(sp.KINDS)
    assert {it["key"] for it in sb.ITEMS} & ({it["key"] for it in si.ITEMS} | {it["key"] for it in sh.ITEMS}) == set()


def test_the_blind_acknowledgements_are_its_own() -> None:
    """At least 12 acknowledgements and 5 for revisions, none of them one of the other splits' or of the pools the
    benchmark swaps in, nor of the phrasings the brief ruled out; the language switch is acknowledged in Spanish."""
    mine = [*sb.ACKS, *sb.ACK_REVISE, *sb.ACKS_ES, *sb.ACK_STATED.values(),
            *(a for it in sb.ITEMS for a in it.get("revoke", {}).get("ack", []))]
    assert len(sb.ACKS) >= 12 and len(sb.ACK_REVISE) >= 5 and len(set(mine)) == len(mine)
    used = {*ms.ACKS, *ms.ACK_REVISE, *ms.ACK_BACK, *ms.ACK_DROP, ms.ACK_FR, *sh.ACKS, *sh.ACK_REVISE,
            *sh.ACK_STATED.values(), *(a for it in sh.ITEMS for a in it.get("revoke", {}).get("ack", [])),
            *_SAID_ELSEWHERE, *(o for pools in st.ACKS.values() for opening in pools.values() for o in opening)}

    def norm(text: str) -> str:
        return text.lower().rstrip(".!")

    assert {norm(a) for a in mine} & {norm(a) for a in used} == set()
    assert "español" in sb.ACK_STATED["spanish"]


def test_the_blind_split_uses_its_forms() -> None:
    """Lists and pasted snippets around some statements, every revocation, the new trap kinds, Spanish replies
    between the switch and its revocation (and English again after it)."""
    _uses_its_forms(ms.BLIND, sb, "spanish", sb.SPANISH)


def _uses_its_forms(split: str, mod: Any, language: str, prose: dict[str, Any]) -> None:
    """A blind split's frames, revocations, new trap kinds, and replies in ``language`` (``prose``) only while it
    is in force."""
    chats = _load(split)
    by_id = {t["id"]: t for c in chats for t in c["turns"]}
    framed = [r for c in chats for r in c["items"] if "\n- " + r["sentence"] in by_id[r["message"]]["content"]
              or "\n2. " + r["sentence"] in by_id[r["message"]]["content"]
              or "```\n\n" + r["sentence"] in by_id[r["message"]]["content"]]
    assert len(framed) >= 3
    assert {r["key"] for c in chats for r in c["items"] if r["revoked_at"]} == set(mod.REVOKED)
    assert {t["kind"] for c in chats for t in c["traps"]} >= {"third_party", "hypothetical"}
    switches = [r for c in chats for r in c["items"] if r["key"] == language]
    assert len(switches) == mod.REVOKED.count(language)
    for c in chats:
        for r in c["items"]:
            if r["key"] == language:
                replies = [c["turns"][2 * (k - 1) + 1]["content"] for k in range(r["turn"], r["revoked_at"])]
                assert replies and all(any(x in reply for x in prose["close"]) for reply in replies)
                after = c["turns"][2 * (r["revoked_at"] - 1) + 1]["content"]
                assert not any(x in after for x in prose["close"])


# ---- the third blind split, the test split (--blind2, standing_blind2_items.py) ----------------------------

@pytest.fixture(scope="module")
def blind2(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("blind2")
    return out, ms.write_blind2(out)


def test_the_blind2_split_is_deterministic_and_the_file_in_the_repo(blind2: tuple[Path, dict]) -> None:
    """Twice the same chats; the file in the repo is what ``--blind2`` writes, and it writes that file only."""
    out, _ = blind2
    assert json.dumps(ms.make(ms.BLIND2)) == json.dumps(ms.make(ms.BLIND2))
    assert [p.name for p in out.iterdir()] == ["standing_blind2.json"]
    assert (out / "standing_blind2.json").read_bytes() == (ms.DATA / "standing_blind2.json").read_bytes(), \
        "run python -m benchmarks.retention.make_standing --blind2"


def test_the_blind2_self_check_holds(blind2: tuple[Path, dict]) -> None:
    r = blind2[1]
    assert r["problems"] == []
    assert r["chats"] == ms.N_CHATS
    assert ms.EXCHANGES[0] <= r["exchanges"][0] <= r["exchanges"][1] <= ms.EXCHANGES[1]
    assert ms.TOKENS[0] <= r["tokens"][0] <= r["tokens"][1] <= ms.TOKENS[1]
    assert r["revisions"] == 2 * ms.N_CHATS and r["revocations"] == ms.N_CHATS
    assert set(r["traps"]) == {"chit_chat", "one_off", "question", "quoted", "assistant", "third_party",
                               "hypothetical"}
    assert r["coverage"] == 1.0
    assert all(r["dependencies"][k] >= 20 for k in ("instruction", "preference", "constraint"))
    test_every_probe_depends_on_items_in_force_and_lists_what_is_gone(ms.BLIND2)
    test_items_are_stated_early_revised_in_the_middle_and_said_in_the_users_words(ms.BLIND2)


def test_blind2_writes_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--blind2`` regenerates none of the other splits; the files in the repo stay as they are; it cannot be given
    with ``--blind`` or ``--holdout``."""
    before = {p.name: p.read_bytes() for p in ms.DATA.glob("standing_*.json") if p.name != "standing_blind2.json"}

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("--blind2 wrote another split")

    monkeypatch.setattr(ms, "write", refuse)
    monkeypatch.setattr(ms, "write_holdout", refuse)
    monkeypatch.setattr(ms, "write_blind", refuse)
    monkeypatch.setattr(ms.write_blind2, "__defaults__", (tmp_path,))
    ms.main(["--blind2"])
    assert [p.name for p in tmp_path.iterdir()] == ["standing_blind2.json"]
    after = {p.name: p.read_bytes() for p in ms.DATA.glob("standing_*.json") if p.name != "standing_blind2.json"}
    assert after == before
    for other in ("--blind", "--holdout"):
        with pytest.raises(SystemExit):
            ms.main(["--blind2", other])


def _item_wordings(mod: Any, split: str) -> set[str]:
    """A module's item statements, revisions and revocations (the sentences without their frames)."""
    out = {_plain(w) for it in mod.ITEMS for w in it["say"][split]}
    return out | {w for it in mod.ITEMS for extra in ("revision", "revoke")
                  for w in it.get(extra, {}).get("say", {}).get(split, [])}


def test_the_blind2_split_is_written_apart_from_the_others() -> None:
    """Its own projects, people, dates, seed and chat ids; no sentence of the user's side is one of dev's, test's,
    the held-out or the blind split's, and none of its items, revisions or revocations holds 60% of the content
    words of one of theirs (no paraphrase); the data shares no item, trap or probe sentence with theirs either."""
    earlier = (*ALL, ms.BLIND)
    mine_chats = _load(ms.BLIND2)
    others = {s: _load(s) for s in earlier}
    assert ms.SEEDS[ms.BLIND2] not in [ms.SEEDS[s] for s in earlier]
    assert ms.START[ms.BLIND2] > max(ms.START[s] for s in earlier)
    for s in earlier:
        assert {c["id"] for c in mine_chats} & {c["id"] for c in others[s]} == set()
        assert {c["project"] for c in mine_chats} & {c["project"] for c in others[s]} == set()
        assert {c["user"] for c in mine_chats} & {c["user"] for c in others[s]} == set()
        assert set(ms.MATES[ms.BLIND2]) & set(ms.MATES[s]) == set()
        assert set(ms.USERS[ms.BLIND2]) & (set(ms.USERS[s]) | set(ms.MATES[s])) == set()
        assert {p["key"] for p in ms.PROJECTS[ms.BLIND2]} & {p["key"] for p in ms.PROJECTS[s]} == set()

    def sentences(chats: list[dict[str, Any]]) -> set[str]:
        out = {r["sentence"] for c in chats for r in c["items"]}
        out |= {r["revoked_by"] for c in chats for r in c["items"] if r["revoked_by"]}
        out |= {t["sentence"] for c in chats for t in c["traps"]}
        return out | {p["text"] for c in chats for p in c["probes"]}

    assert sentences(mine_chats) & set().union(*(sentences(chats) for chats in others.values())) == set()
    mine = _user_side(sb2, ms.BLIND2)
    theirs = _user_side(sh, ms.HOLDOUT) | _user_side(sb, ms.BLIND)
    theirs |= {*sp.GREETINGS, *sp.FEEDBACK, *sp.SMALL_TALK, *sp.CONTEXT, sp.REVIEW_CODE, *ms.OPENING["dev"],
               *ms.OPENING["test"], *(a for k in sp.KINDS.values() for a in k["ask"])}
    for s in ms.SPLITS:
        theirs |= {w for it in si.ITEMS for w in it["say"][s] + it.get("revision", {}).get("say", {}).get(s, [])
                   + it.get("revoke", {}).get("say", {}).get(s, [])}
        theirs |= {t for traps in si.TRAPS.values() for t in traps.get(s, [])}
    assert mine & theirs == set()
    old = {w for it in si.ITEMS for s in ms.SPLITS for w in it["say"][s] + it.get("revision", {}).get("say", {})
           .get(s, []) + it.get("revoke", {}).get("say", {}).get(s, [])}
    old |= _item_wordings(sh, ms.HOLDOUT) | _item_wordings(sb, ms.BLIND)
    for a in _item_wordings(sb2, ms.BLIND2):
        for b in old:
            assert ms.share(a, b) < st.HOLD and ms.share(b, a) < st.HOLD, (a, b)
    assert set(sb2.ASKS) == set(sp.KINDS)
    earlier_keys = {it["key"] for mod in (si, sh, sb) for it in mod.ITEMS}
    assert {it["key"] for it in sb2.ITEMS} & earlier_keys == set()


def test_the_blind2_split_has_at_least_the_blind_splits_range() -> None:
    """As many items of each kind, revisions, revocations and traps of each kind as the blind split, each item
    with two or three wordings."""
    for kind in ("instruction", "preference", "constraint"):
        assert sum(it["kind"] == kind for it in sb2.ITEMS) >= sum(it["kind"] == kind for it in sb.ITEMS)
    for extra in ("revision", "revoke"):
        assert sum(extra in it for it in sb2.ITEMS) >= sum(extra in it for it in sb.ITEMS)
    for kind, traps in sb.TRAPS.items():
        assert len(sb2.TRAPS[kind][ms.BLIND2]) >= len(traps[ms.BLIND])
    assert all(2 <= len(it["say"][ms.BLIND2]) <= 3 for it in sb2.ITEMS)


def test_the_blind2_acknowledgements_are_its_own() -> None:
    """At least 12 acknowledgements and 5 for revisions, none of them one of the other splits' (the blind one's
    included) or of the pools the benchmark swaps in; the language switch is acknowledged in Italian."""
    mine = [*sb2.ACKS, *sb2.ACK_REVISE, *sb2.ACKS_IT, *sb2.ACK_STATED.values(),
            *(a for it in sb2.ITEMS for a in it.get("revoke", {}).get("ack", []))]
    assert len(sb2.ACKS) >= 12 and len(sb2.ACK_REVISE) >= 5 and len(set(mine)) == len(mine)
    used = {*ms.ACKS, *ms.ACK_REVISE, *ms.ACK_BACK, *ms.ACK_DROP, ms.ACK_FR, *_SAID_ELSEWHERE,
            *(o for pools in st.ACKS.values() for opening in pools.values() for o in opening)}
    for mod in (sh, sb):
        used |= {*mod.ACKS, *mod.ACK_REVISE, *mod.ACK_STATED.values(),
                 *(a for it in mod.ITEMS for a in it.get("revoke", {}).get("ack", []))}
    used |= set(sb.ACKS_ES)

    def norm(text: str) -> str:
        return text.lower().rstrip(".!")

    assert {norm(a) for a in mine} & {norm(a) for a in used} == set()
    assert "italiano" in sb2.ACK_STATED["italian"]


def test_the_blind2_split_uses_its_forms() -> None:
    """Lists and pasted snippets around some statements, every revocation, the new trap kinds, Italian replies
    between the switch and its revocation (and English again after it)."""
    _uses_its_forms(ms.BLIND2, sb2, "italian", sb2.ITALIAN)


def test_the_openings_table_counts_each_class() -> None:
    table = st.openings_table({"lasting": ["Understood, I'll keep to that from now on.", "Will do.", "Here it is."],
                               "ordinary": ["From now on the function returns None instead of raising."]})
    assert "| lasting | 3 | 1 | 1 | 1 |" in table and "| ordinary | 1 | 0 | 0 | 1 |" in table
    data = json.loads((ms.DATA / "reply_openings.json").read_text())
    assert len(data["lasting"]) == 150 and len(data["ordinary"]) == 250
