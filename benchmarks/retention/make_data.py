"""Writes ``data/notebook_qa.json``: 10 synthetic notebook conversations with planted facts and questions.

Run: ``python -m benchmarks.retention.make_data``. Deterministic (seeded), so the file in the repo is
what this script writes. Each conversation is a data-analysis chat of 40-80 turns on one theme:
facts the user or the assistant states once (a file path, a decision, a bug's cause, a number) are
planted at random points, the rest is realistic filler of varying length (plot tweaks, code
explanations, small talk) that creates token pressure. Each question asks about one or two facts
in different words; its ``evidence`` lists the turn ids that hold the answer. After each fact, up to
two user turns mention the same keywords without the answer (distractors), and two questions per
conversation ask about two facts at once.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

THEMES: list[dict[str, object]] = [
    {"name": "regional sales", "facts": [
        ("user", "The raw sales export lives at data/exports/sales_2024_q3.parquet and is partitioned by store_id.",
         "Where is the raw sales export stored and how is it partitioned?"),
        ("assistant", "I dropped 1,284 rows whose region was null; they were all from the test store TS-00.",
         "How many rows with a missing region were removed, and which store were they from?"),
        ("user", "Let's treat returns as negative revenue instead of removing them.",
         "What did we decide to do with returns in the revenue numbers?"),
        ("assistant", "The KeyError came from the column name 'Revenue ' which has a trailing space in the export.",
         "What caused the KeyError when computing revenue?"),
        ("user", "Use the fiscal calendar: our fiscal year starts on February 1st.",
         "When does the fiscal year start for this analysis?"),
        ("assistant", "Northwest grew fastest at 18.4% quarter over quarter, mostly from the Tacoma stores.",
         "Which region grew fastest quarter over quarter and by how much?"),
    ]},
    {"name": "customer churn", "facts": [
        ("user", "Churn means no login for 45 consecutive days, not a cancelled subscription.",
         "How is churn defined in this project?"),
        ("assistant", "The gradient boosting model reached an AUC of 0.871 on the March holdout set.",
         "What AUC did the gradient boosting model get on the holdout?"),
        ("user", "Exclude enterprise accounts, their contracts are negotiated separately.",
         "Which accounts should be excluded from the churn model?"),
        ("assistant", "The strongest churn signal is days_since_last_ticket above 30 combined with a plan downgrade.",
         "What was the strongest churn signal the model found?"),
        ("user", "The events table is in the warehouse schema analytics_prod under user_events_v2.",
         "Which schema and table hold the user events?"),
    ]},
    {"name": "sensor telemetry", "facts": [
        ("user", "The sensors report every 10 seconds but sensor S-17 reports every 60 seconds "
                 "because of a firmware bug.",
         "Which sensor reports at a different interval and why?"),
        ("assistant", "I resampled everything to 1-minute means and forward-filled gaps shorter than 5 minutes.",
         "How was the telemetry resampled and how were short gaps filled?"),
        ("user", "Temperatures above 85 degrees Celsius are physically impossible here; treat them as sensor faults.",
         "Which temperature readings should be treated as sensor faults?"),
        ("assistant", "The overnight drift on line B is 0.3 degrees per hour and starts around 02:00.",
         "How large is the overnight drift on line B and when does it start?"),
        ("user", "The maintenance log CSV uses semicolons as separators and a comma as decimal mark.",
         "What separators does the maintenance log CSV use?"),
    ]},
    {"name": "survey cleaning", "facts": [
        ("user", "Question 14 was reverse-coded, so flip its 1-5 scale before averaging.",
         "Which survey question was reverse-coded?"),
        ("assistant", "About 7.2% of respondents straight-lined the matrix questions; "
                      "I flagged them in a column called straightliner.",
         "What share of respondents straight-lined and where were they flagged?"),
        ("user", "Free-text answers in French should be kept; we will translate them later with the vendor.",
         "What should happen to the French free-text answers?"),
        ("assistant", "The weighting uses the 2021 census margins for age band and province.",
         "Which margins were used for the survey weighting?"),
        ("user", "The deadline for the cleaned file is the 14th and it goes to Priya on the research team.",
         "Who receives the cleaned survey file and when is it due?"),
    ]},
    {"name": "marketing attribution", "facts": [
        ("user", "We use a 7-day click and 1-day view attribution window, same as the ad platform.",
         "What attribution window are we using?"),
        ("assistant", "Paid search drove 41% of attributed conversions but only 23% of spend.",
         "What share of conversions and spend came from paid search?"),
        ("user", "Ignore the campaign called holiday_test_v3; it was a misconfigured experiment.",
         "Which campaign should be ignored and why?"),
        ("assistant", "UTM parameters were lowercased and the medium 'cpc ' with a trailing space "
                      "was merged into 'cpc'.",
         "How were the UTM medium values cleaned?"),
        ("user", "The budget for next quarter is capped at 250k euros across all channels.",
         "What is the budget cap for next quarter?"),
    ]},
    {"name": "inventory forecast", "facts": [
        ("user", "Lead time from the main supplier is 21 days, but 35 days for anything shipped from Shenzhen.",
         "What are the supplier lead times?"),
        ("assistant", "The Prophet model underestimates December demand by roughly 12% because of the promo calendar.",
         "By how much does the forecast underestimate December demand and why?"),
        ("user", "SKUs starting with DISC- are discontinued and must not get reorder suggestions.",
         "Which SKUs must not get reorder suggestions?"),
        ("assistant", "Safety stock is set to 1.65 standard deviations of weekly demand, a 95% service level.",
         "How is safety stock computed?"),
        ("user", "The warehouse in Lyon closes for stocktaking during the first week of January.",
         "Which warehouse closes for stocktaking and when?"),
    ]},
    {"name": "A/B test analysis", "facts": [
        ("user", "The experiment ran from May 3 to May 24 with a 50/50 split on new visitors only.",
         "When did the experiment run and who was in it?"),
        ("assistant", "The variant lifted checkout conversion from 3.10% to 3.42%, p = 0.018 with a two-sided test.",
         "What was the conversion lift and its p-value?"),
        ("user", "Bots were filtered using the is_bot flag plus sessions shorter than 2 seconds.",
         "How were bots filtered out of the experiment data?"),
        ("assistant", "Sample ratio mismatch check passed: 50.2% vs 49.8%, chi-square p = 0.41.",
         "Did the sample ratio mismatch check pass?"),
        ("user", "The primary metric is revenue per visitor; conversion is only a secondary metric.",
         "What is the primary metric of the experiment?"),
    ]},
    {"name": "hospital readmissions", "facts": [
        ("user", "Readmission means an unplanned admission within 30 days of discharge at any of our three sites.",
         "How is a readmission defined?"),
        ("assistant", "Patients with a length of stay over 9 days had a readmission rate of 21%, double the average.",
         "What readmission rate did long-stay patients have?"),
        ("user", "Never export patient names; use the pseudonymised patient_key everywhere.",
         "Which patient identifier must be used in exports?"),
        ("assistant", "The discharge_time column was in local time without timezone; "
                      "I localised it to Europe/Amsterdam.",
         "How was the discharge_time column's timezone handled?"),
        ("user", "The cardiology ward switched systems in April, so its March data is incomplete.",
         "Why is the cardiology ward's March data incomplete?"),
    ]},
    {"name": "energy prices", "facts": [
        ("user", "Prices are in EUR per MWh from the day-ahead market, hourly resolution.",
         "What unit and market are the energy prices from?"),
        ("assistant", "Negative prices occurred in 143 hours last year, mostly sunny Sunday afternoons in May.",
         "How often were prices negative and when?"),
        ("user", "Use the gas price from the TTF front-month contract as the fuel cost proxy.",
         "Which gas price is the fuel cost proxy?"),
        ("assistant", "The merit-order regression has an R-squared of 0.78 once wind output is included.",
         "What R-squared did the merit-order regression reach?"),
        ("user", "Leave out 2022 from the baseline because of the crisis spike.",
         "Which year is excluded from the baseline and why?"),
    ]},
    {"name": "support tickets", "facts": [
        ("user", "Tickets tagged billing_v2 were created by the new form and should be merged with billing.",
         "What should happen to tickets tagged billing_v2?"),
        ("assistant", "Median first-response time is 3h 40m, but 11h on weekends.",
         "What is the median first response time, and on weekends?"),
        ("user", "The SLA for priority P1 is 1 hour for first response and 8 hours for resolution.",
         "What is the SLA for P1 tickets?"),
        ("assistant", "The topic model found a cluster about password resets that makes up 17% of all tickets.",
         "How large is the password reset cluster?"),
        ("user", "Agent names must be replaced with team names before the report goes to the client.",
         "What must be done with agent names before the report goes out?"),
    ]},
]

FILLER_USER = [
    "Can you make the x-axis labels rotate 45 degrees so they don't overlap?",
    "Thanks. Now show me the first ten rows again.",
    "Why is this cell so slow? It takes almost a minute.",
    "Let's switch the color palette to something colorblind-friendly.",
    "Can you explain what groupby with transform does here, step by step?",
    "Please add a title and save the figure as a PNG at 200 dpi.",
    "Hmm, the legend covers the data. Move it outside the plot.",
    "Write a helper function for this so we can reuse it later.",
    "I'm getting a SettingWithCopyWarning, what does it mean?",
    "Okay, coffee break, back in five minutes.",
    "Can you summarise what we have so far in a few bullet points?",
    "Use f-strings instead of format in that snippet.",
    "Can you add type hints and a docstring to that function?",
    "The notebook kernel restarted, can you re-run the imports?",
]
FILLER_ASSISTANT = [
    "Here is the updated plotting code. I set `plt.xticks(rotation=45, ha='right')` and called "
    "`plt.tight_layout()` so the labels fit. {extra}",
    "The slowness comes from applying a Python function row by row with `apply`. Vectorising it with "
    "column arithmetic avoids the per-row interpreter overhead. {extra}",
    "`groupby(...).transform('mean')` returns a Series aligned with the original index, so every row gets "
    "its group's mean; that is why it can be assigned straight back as a new column. {extra}",
    "The warning means pandas cannot tell whether you are modifying a view or a copy. Selecting with "
    "`.loc[...]` and calling `.copy()` before assigning makes the intent explicit. {extra}",
    "I switched to the `viridis` palette, which is perceptually uniform and readable for the common forms "
    "of colour blindness. {extra}",
    "Done: the function now has type hints, a docstring with an example, and it raises a ValueError with a "
    "clear message when the input frame is empty. {extra}",
    "So far: we loaded the data, cleaned the obvious issues, and produced the first set of charts. The next "
    "step is to validate the numbers against last quarter's report. {extra}",
]
EXTRA = [
    "I also sorted the categories so the chart reads from largest to smallest.",
    "Let me know if you want the same style applied to the other figures.",
    "The code is idempotent, so you can re-run the cell safely.",
    "Memory use stays under 300 MB with this approach.",
    "I left the previous version commented out in case we need to compare.",
    "Note that this changes the index; call reset_index() if you need a clean RangeIndex.",
]


def _filler(rng: random.Random, role: str) -> str:
    if role == "user":
        return rng.choice(FILLER_USER)
    base = rng.choice(FILLER_ASSISTANT).format(extra=" ".join(rng.sample(EXTRA, rng.randint(1, 3))))
    if rng.random() < 0.3:  # a code block now and then: long turns create token pressure
        lines = [f"df['{rng.choice(['value', 'amount', 'score', 'count'])}_{k}'] = df['x'] * {rng.randint(2, 9)}"
                 for k in range(rng.randint(5, 25))]
        base += "\n```python\n" + "\n".join(lines) + "\n```"
    return base


STOP = {"what", "which", "where", "when", "how", "does", "did", "should", "with", "from", "that", "this", "were",
        "was", "the", "and", "for", "are", "much", "many", "why", "who", "its", "our", "use", "used", "get"}


def _distractor(rng: random.Random, question: str) -> str:
    """A filler turn that shares the question's keywords but holds no answer (competes in BM25)."""
    words = [w.strip("?,.'").lower() for w in question.split()]
    keys = [w for w in words if len(w) > 3 and w not in STOP]
    picked = rng.sample(keys, min(2, len(keys)))
    templates = [
        "Remind me later to double-check the {a} and the {b} against the documentation.",
        "I'm not sure about the {a} yet; let's not worry about the {b} for now.",
        "Could the {a} affect the {b}? No need to answer now, just a thought.",
        "Note to self: write a test for the {a} and {b} handling.",
    ]
    a, b = [*picked, "details", "results"][:2]
    return rng.choice(templates).format(a=a, b=b)


def make(seed: int = 2026) -> list[dict[str, object]]:
    rng = random.Random(seed)
    conversations = []
    for c, theme in enumerate(THEMES):
        n_turns = rng.randint(40, 80)
        facts = list(theme["facts"])  # type: ignore[call-overload]
        # plant facts at distinct positions, mostly in the first two thirds
        slots = sorted(rng.sample(range(2, int(n_turns * 0.8)), len(facts)))
        planted = dict(zip(slots, facts, strict=True))
        # user turns that share a fact's keywords without its answer, placed after the fact
        distract: dict[int, str] = {}
        for slot, (_, _, question) in zip(slots, facts, strict=True):
            for _ in range(2):
                at = rng.randrange(slot + 1, n_turns)
                distract.setdefault(at, _distractor(rng, question))
        turns = []
        questions = []
        role = "user"
        k = 0
        while len(turns) < n_turns:
            tid = f"c{c}_t{len(turns)}"
            if k in planted and planted[k][0] == role:
                who, text, question = planted.pop(k)
                turns.append({"id": tid, "role": who, "content": text})
                questions.append({"id": f"c{c}_q{len(questions)}", "question": question, "evidence": [tid]})
            else:
                if k in planted:  # fact belongs to the other role: shift it to the next free turn
                    nxt = k + 1
                    while nxt in planted:
                        nxt += 1
                    planted[nxt] = planted.pop(k)
                text = distract[k] if role == "user" and k in distract else _filler(rng, role)
                turns.append({"id": tid, "role": role, "content": text})
            role = "assistant" if role == "user" else "user"
            k += 1
        # two questions that need two facts at once
        for a, b in ((0, 2), (1, 3)):
            qa, qb = questions[a], questions[b]
            questions.append({"id": f"c{c}_q{len(questions)}",
                              "question": f"Two things: {str(qa['question']).rstrip('?')}, "
                                          f"and {str(qb['question'])[0].lower()}"
                                          f"{str(qb['question'])[1:]}",
                              "evidence": [*qa["evidence"], *qb["evidence"]]})  # type: ignore[misc]
        conversations.append({
            "id": f"c{c}",
            "system": f"You are a data assistant helping with a {theme['name']} analysis in a Jupyter notebook.",
            "turns": turns,
            "questions": questions,
        })
    return conversations


def main() -> None:
    out = Path(__file__).parent / "data" / "notebook_qa.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(make(), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
