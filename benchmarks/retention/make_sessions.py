"""Writes ``data/sessions_dev.json`` and ``data/sessions_test.json``: long notebook sessions where
facts are stated early and asked about late.

Run: ``python -m benchmarks.retention.make_sessions``. Deterministic (seeded; dev and test use
different seeds and different fact values), so the files in the repo are what this script writes.

Each session is ``turns`` user/assistant exchanges of notebook work (~100-200 tokens an exchange).
Every user turn states one fact among look-alikes: the same kinds of things (a bucket, a
threshold, a contact, a table) come back with other values in other turns, so a question about
one of them is answered by exactly one turn (a pair stated twice is never asked) and near-missed by
others. After the last exchange,
``questions`` questions ask about facts of the first third of the session, most in other words
than the fact (no shared value, few shared content words). The format is the one
:mod:`benchmarks.retention.run` reads, plus ``answer`` per question (the value that must reach the
prompt).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

KINDS = [
    # (fact template, question template, value maker)
    ("the {owner} team's staging bucket is {value}", "Which storage bucket did we say the {owner} team stages in?",
     lambda r: f"s3://{r.choice(['acme', 'orbit', 'delta', 'north'])}-{r.randrange(100, 999)}-stage"),
    ("the outlier threshold for the {owner} metrics is {value} standard deviations",
     "How many standard deviations did we pick as the cut-off for {owner}'s unusual values?",
     lambda r: f"{r.randrange(2, 9)}.{r.randrange(10, 99)}"),
    ("the person to ask about the {owner} pipeline is {value}", "Who was our contact for the {owner} pipeline?",
     lambda r: f"{r.choice(['Ines', 'Tomas', 'Priya', 'Olu', 'Mei', 'Sven', 'Dana', 'Kofi'])} "
               f"{r.choice(['Varga', 'Okafor', 'Lindqvist', 'Moreau', 'Tanaka', 'Reyes', 'Novak', 'Haddad'])}"),
    ("the {owner} results go into the table {value}", "Where are the {owner} numbers written when the job finishes?",
     lambda r: f"analytics.{r.choice(['fct', 'agg', 'dim'])}_{r.choice(['orders', 'visits', 'claims', 'trips'])}"
               f"_{r.randrange(10, 99)}"),
    ("the {owner} job must finish before {value} UTC", "What deadline does the {owner} job have to meet?",
     lambda r: f"{r.randrange(0, 24):02d}:{r.randrange(0, 60):02d}"),
    ("the {owner} dashboard refresh code is {value}", "What was the refresh code for the {owner} dashboard?",
     lambda r: f"{r.choice('KMRTXZ')}-{r.randrange(1000, 9999)}"),
    ("the random seed for the {owner} experiment is {value}", "Which seed did we fix for {owner}'s experiment?",
     lambda r: str(r.randrange(10_000, 99_999))),
    ("the {owner} forecast uses a window of {value} days",
     "How long a window does the {owner} forecast look back over?",
     lambda r: str(r.randrange(100, 999))),
]
OWNERS = ["billing", "logistics", "marketing", "support", "fraud", "pricing", "inventory", "growth", "payroll",
          "search", "ads", "risk"]
OPENERS = [
    "Quick note before I forget:", "One more thing for the record:", "For later,", "Please keep in mind that",
    "Heads up:", "Small detail, but", "I just checked and",
]
WORK = [
    "I loaded the weekly extract into a DataFrame and the dtypes look right except for the date column, "
    "which came in as object.",
    "The groupby over region and week is slow on the full table, so I sampled ten percent for the first pass.",
    "The merge with the calendar table produced a few duplicated rows where the holiday flag was set twice.",
    "I replaced the bar chart with a line chart because the weekly pattern is easier to see that way.",
    "Memory use went up to about two gigabytes when I pivoted the table, so I switched to categorical columns.",
    "The rolling mean looks smoother now, but the first few weeks are missing because of the window.",
    "I wrote a small helper that normalises column names to snake case and strips trailing spaces.",
    "The notebook kernel restarted once, so I re-ran the imports and the cleaning cells from the top.",
    "The scatter plot suggests a weak correlation, nothing we could put in a report yet.",
    "I added assertions after each cleaning step so that a bad export fails loudly instead of silently.",
]
REPLIES = [
    "Thanks, noted. Converting the date column with pd.to_datetime before the groupby will also make the "
    "resample step straightforward, and I would keep the sample only for exploration.",
    "Understood. Dropping the duplicated holiday rows with drop_duplicates on the key columns should fix the "
    "merge; it is worth checking the row count before and after.",
    "Good call on the line chart. Adding a light grid and labelling the axes in plain words will make it "
    "readable for the people who were not in the analysis.",
    "That makes sense. Categorical columns cut the memory a lot for repeated strings; keep an eye on "
    "operations that silently convert them back to object.",
    "Right. You can pass min_periods to the rolling call so the first weeks still get a value, clearly "
    "marked as computed from fewer points.",
    "Sounds good. Keeping the assertions next to the cleaning steps documents the assumptions as well, "
    "which helps whoever reruns the notebook next month.",
]


def session(r: random.Random, sid: str, turns: int, questions: int) -> dict[str, object]:
    used: set[str] = set()
    facts: list[tuple[int, str, str, str]] = []  # (turn index, question, answer, fact text)
    out_turns: list[dict[str, str]] = []
    for t in range(turns):
        kind = r.randrange(len(KINDS))
        fact_t, question_t, make = KINDS[kind]
        owner = r.choice(OWNERS)
        value = make(r)
        for _ in range(1000):  # every kind has hundreds of values: a fresh one is found quickly
            if value not in used:
                break
            value = make(r)
        used.add(value)
        fact = fact_t.format(owner=owner, value=value)
        work = " ".join(r.sample(WORK, 2))
        user = f"{work} {r.choice(OPENERS)} {fact}."
        out_turns.append({"id": f"{sid}_t{2 * t}", "role": "user", "content": user})
        out_turns.append({"id": f"{sid}_t{2 * t + 1}", "role": "assistant", "content": r.choice(REPLIES)})
        facts.append((t, question_t.format(owner=owner), value, fact))
    counts: dict[str, int] = {}
    for _, question, _, _ in facts:
        counts[question] = counts.get(question, 0) + 1
    # questions about the first third, one per (kind, owner) so each has one answer
    early = [f for f in facts[: max(questions, turns // 3)]]
    r.shuffle(early)
    seen: set[str] = set()
    qs = []
    for t, question, value, _ in early:
        if question in seen or counts[question] > 1:  # asked once, answered by one turn only
            continue
        seen.add(question)
        qs.append({"id": f"{sid}_q{len(qs)}", "question": question, "evidence": [f"{sid}_t{2 * t}"],
                   "answer": value, "kind": "early-fact"})
        if len(qs) == questions:
            break
    return {"id": sid, "system": "You are a data assistant working with the user in a Jupyter notebook.",
            "turns": out_turns, "questions": qs}


def main() -> None:
    here = Path(__file__).parent / "data"
    for split, seed in (("dev", 1201), ("test", 7717)):
        r = random.Random(seed)
        lengths = [41, 60, 60, 80, 120, 41, 60, 90, 240]
        sessions = [session(r, f"{split}{i}", turns, 8) for i, turns in enumerate(lengths)]
        path = here / f"sessions_{split}.json"
        path.write_text(json.dumps(sessions, indent=1) + "\n")
        print(f"wrote {path} ({len(sessions)} sessions)")


if __name__ == "__main__":
    main()
