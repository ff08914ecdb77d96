"""benchmarks/retention/make_talks.py: the talks data in the repo is what the script writes, and it has the shape
the benchmark relies on (dates on messages, paraphrased questions, evidence that exists and holds the answer)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from benchmarks.retention import make_talks as mt


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict]]:
    out = tmp_path_factory.mktemp("talks")
    return out, mt.write(out)


@pytest.mark.parametrize("split", mt.SPLITS)
def test_the_files_in_the_repo_are_what_the_script_writes(written: tuple[Path, dict], split: str) -> None:
    out, _ = written
    name = f"talks_{split}.json"
    assert (out / name).read_bytes() == (mt.DATA / name).read_bytes(), "run python -m benchmarks.retention.make_talks"


@pytest.mark.parametrize("split", mt.SPLITS)
def test_the_self_check_holds(written: tuple[Path, dict], split: str) -> None:
    r = written[1][split]
    assert r["problems"] == []
    assert r["conversations"] == 8 and r["date_format"] == {"message": 6, "session": 2}
    assert 20 <= r["sessions"][0] <= r["sessions"][1] <= 30
    assert 250 <= r["exchanges"][0] <= r["exchanges"][1] <= 350
    assert 22_000 <= r["tokens"][0] <= r["tokens"][1] <= 30_000
    assert 50 <= r["questions"][0] <= r["questions"][1] <= 70
    n = r["questions"][2]
    share = {k: v / n for k, v in r["by_kind"].items()}
    assert 0.30 <= share["single"] <= 0.40 and 0.20 <= share["date"] <= 0.30
    assert 0.20 <= share["multi"] <= 0.30 and 0.10 <= share["open"] <= 0.20
    assert r["paraphrased"]["single"] >= 0.6 and r["paraphrased"]["open"] >= 0.6
    assert 0.4 <= r["date_relative"] <= 0.6
    assert r["multi_10_apart"] >= 0.55
    assert r["evidence_in_first_two_thirds"] >= 0.8
    assert r["max_sentence_repeats"] <= mt.MAX_REPEAT


def _load(split: str) -> list[dict]:
    return json.loads((mt.DATA / f"talks_{split}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("split", mt.SPLITS)
def test_the_format_is_make_chats_format_with_dates_and_sessions(split: str) -> None:
    for conv in _load(split):
        assert set(conv) == {"id", "system", "date_format", "sessions", "turns", "questions"}
        ids = [t["id"] for t in conv["turns"]]
        assert len(set(ids)) == len(ids)
        for t in conv["turns"]:
            assert set(t) == {"id", "role", "content"} and t["role"] in ("user", "assistant")
        index = {t: i for i, t in enumerate(ids)}
        starts = [index[s["first_turn"]] for s in conv["sessions"]]
        assert starts[0] == 0 and starts == sorted(starts)
        for k, q in enumerate(conv["questions"]):
            assert q["id"] == f"{ids[0].split('_')[0]}_q{k}"
            assert q["kind"] in ("single", "date", "multi", "open") and q["question"].endswith("?")
            assert q["evidence"] and isinstance(q["lexical_overlap"], bool) and isinstance(q["answer"], str)
            # each evidence turn's session, 1-based
            for e, s in zip(q["evidence"], q["session"], strict=True):
                assert starts[s - 1] <= index[e] < (starts[s] if s < len(starts) else len(ids))
            if q["kind"] == "date":
                # a message-dated conversation's evidence carries the date the answer is resolved against
                stamp = conv["sessions"][q["session"][0] - 1]["date_time"]
                day = dt.datetime.strptime(stamp.split(" on ")[1], "%d %B, %Y").date()
                first = dt.date.fromisoformat(q["answer"].split("/")[0])
                assert (first == day) == (q["relative"] is None) or q["relative"] in ("this weekend",)
                if conv["date_format"] == "message":
                    assert f"[{stamp}]" in next(t["content"] for t in conv["turns"] if t["id"] == q["evidence"][0])
            if q.get("updated"):
                assert q["kind"] == "single" and len(q["evidence"]) == 2


def test_dev_and_test_share_no_people_and_few_answers() -> None:
    dev, test = _load("dev"), _load("test")

    def speakers(convs: list[dict]) -> set[str]:
        return {re.sub(r"^\[[^\]]*\] ", "", t["content"]).split(":")[0] for c in convs for t in c["turns"]}

    assert speakers(dev) & speakers(test) == set()
    answers = {s: {p for c in convs for q in c["questions"] if q["kind"] in ("single", "multi")
                   for p in q["answer"].split("; ")} for s, convs in (("dev", dev), ("test", test))}
    shared = answers["dev"] & answers["test"]
    assert len(shared) <= 0.05 * len(answers["test"]), sorted(shared)


def test_relative_dates_resolve_against_the_message_date() -> None:
    monday = dt.date(2023, 5, 8)
    past = {e: a for e, a, _ in mt.past_expressions(monday, monday - dt.timedelta(days=40))}
    assert past["yesterday"] == "2023-05-07" and past["last night"] == "2023-05-07"
    assert past["the day before yesterday"] == "2023-05-06" and past["on Friday"] == "2023-05-05"
    assert past["last Friday"] == "2023-05-05"
    assert past["last weekend"] == "2023-05-06/2023-05-07" and past["last week"] == "2023-05-01/2023-05-07"
    assert past["two weeks ago"] == "2023-04-24/2023-04-30" and past["last month"] == "2023-04-01/2023-04-30"
    wednesday = dt.date(2023, 5, 10)
    assert "last Tuesday" not in {e for e, _, _ in mt.past_expressions(wednesday, monday - dt.timedelta(days=40))}
    # only what happened after the previous session (here on Saturday) is news
    after_saturday = {e for e, _, _ in mt.past_expressions(monday, monday - dt.timedelta(days=2))}
    assert after_saturday == {"yesterday", "last night", "last weekend"}
    future = {e: a for e, a, _ in mt.future_expressions(monday)}
    assert future["tomorrow"] == "2023-05-09" and future["this Friday"] == "2023-05-12"
    assert future["this weekend"] == "2023-05-13/2023-05-14" and future["next week"] == "2023-05-15/2023-05-21"
    assert future["in two weeks"] == "2023-05-22/2023-05-28" and future["next month"] == "2023-06-01/2023-06-30"


def test_every_template_fills_and_every_dated_event_has_a_time_in_each_wording() -> None:
    slots = {"n": "Maya", "m": "Theo", "pos": "her", "partner": "Dan", "partner_rel": "husband", "sib": "Tara",
             "sib_rel": "sister", "kid": "Lily", "kid_rel": "daughter", "kid_pr": "she", "Kid_pr": "She",
             "kid_obj": "her", "kid_pos": "her", "fr": "Jenna", "pet": "Rex", "pet_pr": "he", "Pet_pr": "He",
             "pet_obj": "him", "pet_pos": "his", "p": "Dan", "o": "x", "d": "x", "D": "X", "when": "yesterday",
             "When": "Yesterday", **{f"d{i}": "x" for i in range(4)}}
    for th in mt.THREADS:
        for i, ev in enumerate(th["events"]):
            for w in ev["s"]:
                assert "{d}" in w, (th["key"], i, w)
                if ev["w"]:
                    assert "{when}" in w or "{When}" in w, (th["key"], i, w)
                w.format(**slots)
            for t in [*ev["q"], *([ev["l"]] if ev["l"] else []), *([ev["w"]] if ev["w"] else []), *ev["r"], *ev["m"]]:
                t.format(**slots)
            if isinstance(ev["d"], str):
                assert int(ev["d"][1:]) < i
            else:
                for split in mt.SPLITS:
                    if th["split"] in ("both", split):
                        assert len(ev["d"][split]) >= 3, (th["key"], i, split)
        for _, i, t in th["near"]:
            assert i < len(th["events"])
            t.format(**slots)
        for t in [*th["talk"], *th["cb"], *th["ask"]]:
            t.format(**slots)
