"""Writes ``data/hard_dev.json`` and ``data/hard_test.json``: long two-person chats asked about in other words.

Run: ``python -m benchmarks.retention.make_hard``. Deterministic (seeded): the files in the repo are what
this script writes. No model is involved: templated but varied language, paraphrased through synonym
tables written here.

Each conversation is a multi-session chat between two friends (``user`` and ``assistant`` roles) of
about 600 turns and 25-30k tokens: sessions open with their date, people (family, friends,
colleagues) come and go, and life events are planted at random points among small talk that reuses
the same topics (distractors: the dog, the sister, the job, the trip — without the fact). Questions
come after the conversation, in other words, of four kinds:

- ``single``: one fact (``What breed is the new family pet?`` for ``we brought home a corgi puppy``);
- ``date``: when something happened (the evidence turn names the day);
- ``multi``: two or three turns together (a plan and how it turned out; a move, the job that
  caused it and the city);
- ``open``: a question about a theme whose answer is spread over two or three turns.

Question and evidence texts come from separate vocabularies (a synonym table per event): at least
a third of the questions share no content word — after stop words and stemming — with their
evidence turns (``lexical_overlap: false``, checked here and by the tests). Dev and test use
different seeds, names, cities and event values; tune on dev only.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

from arcana_jupyter.context.relevance import stems

DATA = Path(__file__).parent / "data"

NAMES = {
    "dev": ["Maria", "Tomas", "Aisha", "Bernard", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiroshi",
            "Ines", "Jonah", "Kwame", "Lucia", "Mateo", "Nadia"],
    "test": ["Olga", "Pavel", "Quinn", "Rosa", "Samir", "Talia", "Ulrich", "Vera", "Wendell", "Ximena",
             "Yusuf", "Zara", "Anton", "Beatriz", "Caleb", "Dalia"],
}
CITIES = {"dev": ["Lisbon", "Rotterdam", "Krakow", "Valencia", "Porto", "Ghent"],
          "test": ["Tallinn", "Bologna", "Leipzig", "Seville", "Gdansk", "Utrecht"]}
RELATIONS = ["sister", "brother", "cousin", "neighbour", "colleague", "flatmate", "aunt", "uncle"]

# event types: (evidence templates, question templates, values, kind); each value is
# (evidence words, question words, answer). Evidence and question words come from different
# vocabularies on purpose: the question is a paraphrase.
EVENTS: list[dict[str, Any]] = [
    {"key": "pet", "say": ["We finally brought home a {e} puppy, the kids are over the moon.",
                           "Big news at home: a little {e} puppy joined the family this weekend."],
     "ask": ["What breed is the new family animal?", "Which sort of dog did they adopt?"],
     "values": {"dev": [("corgi", "Welsh herding", "corgi"), ("beagle", "scent hound", "beagle"),
                        ("dachshund", "sausage-shaped", "dachshund")],
                "test": [("poodle", "curly-coated", "poodle"), ("labrador", "retriever", "labrador"),
                         ("husky", "sled", "husky")]}},
    {"key": "hobby", "say": ["I signed up for {e} classes on Thursday evenings, first lesson went great.",
                             "Started {e} lessons at the community centre, I am hooked already."],
     "ask": ["Which pastime did the speaker take up recently?", "What new leisure activity began lately?"],
     "values": {"dev": [("pottery", "", "pottery"), ("salsa dancing", "", "salsa"),
                        ("watercolour painting", "", "watercolour")],
                "test": [("ceramics", "", "ceramics"), ("tango", "", "tango"), ("sketching", "", "sketching")]},
     "open": "hobbies"},
    {"key": "job", "say": ["I accepted the offer — I start as {e} at the hospital next month.",
                           "Signed the contract today: I'll be working as {e} from the first of the month."],
     "ask": ["What position was the speaker hired for?", "Which role will this person fill at the new employer?"],
     "values": {"dev": [("a pharmacist", "", "pharmacist"), ("a radiographer", "", "radiographer")],
                "test": [("a physiotherapist", "", "physiotherapist"), ("a lab technician", "", "lab technician")]},
     "open": "work"},
    {"key": "injury", "say": ["Ugh, I twisted my {e} playing football, the doctor says six weeks of rest.",
                              "Bad luck: sprained my {e} on the stairs, so no running for a while."],
     "ask": ["Which body part got hurt?", "Where was the speaker injured?"],
     "values": {"dev": [("ankle", "", "ankle"), ("wrist", "", "wrist")],
                "test": [("knee", "", "knee"), ("shoulder", "", "shoulder")]}},
    {"key": "car", "say": ["Traded the old hatchback for a {e} — electric, quiet, and it charges overnight.",
                           "Picked up our {e} from the dealer, first fully electric vehicle for us."],
     "ask": ["Which automobile model was purchased?", "What did they replace the previous motor with?"],
     "values": {"dev": [("Renault Zoe", "", "Renault Zoe"), ("Kia Niro", "", "Kia Niro")],
                "test": [("Nissan Leaf", "", "Nissan Leaf"), ("Fiat 500e", "", "Fiat 500e")]}},
    {"key": "book", "say": ["Just finished reading {e}, I couldn't put it down.",
                            "Stayed up until 2am to finish {e}. What a story."],
     "ask": ["Which novel kept the speaker awake?", "What title did this person devour lately?"],
     "values": {"dev": [("The Remains of the Day", "", "The Remains of the Day"), ("Middlemarch", "", "Middlemarch")],
                "test": [("Rebecca", "", "Rebecca"), ("Stoner", "", "Stoner")]},
     "open": "hobbies"},
    {"key": "allergy", "say": ["Turns out I'm allergic to {e}, the test came back positive.",
                               "The results are in: {e} allergy. No more of that for me."],
     "ask": ["Which food intolerance was diagnosed?", "What must the speaker now avoid eating?"],
     "values": {"dev": [("peanuts", "", "peanuts"), ("shellfish", "", "shellfish")],
                "test": [("sesame", "", "sesame"), ("hazelnuts", "", "hazelnuts")]}},
    {"key": "concert", "say": ["We went to see {e} live last night, best gig in years.",
                               "Got tickets for {e} and the show was amazing, we sang along to everything."],
     "ask": ["Which band or artist performed for them?", "Whose music event did they attend?"],
     "values": {"dev": [("Radiohead", "", "Radiohead"), ("Fleetwood Mac", "", "Fleetwood Mac")],
                "test": [("Coldplay", "", "Coldplay"), ("Massive Attack", "", "Massive Attack")]}},
]
# two- and three-turn chains: (plan, outcome[, detail]) and the paraphrased question
CHAINS: list[dict[str, Any]] = [
    {"key": "race", "turns": ["I registered for the {city} marathon, training starts now.",
                              "Crossed the finish line in {v} — legs are destroyed but I did it!"],
     "ask": "How long did the long-distance footrace take the speaker?",
     "values": ["4 hours 12 minutes", "3 hours 58 minutes", "4 hours 40 minutes"]},
    {"key": "move", "turns": ["My company is opening an office abroad and they asked me to relocate.",
                              "We found a flat in {city}, two bedrooms near the river.",
                              "Moving day is set: the van comes on {v}."],
     "ask": "Which town is the family resettling in, and when do the removals happen?",
     "values": ["the 3rd of June", "the 19th of August", "the 7th of October"]},
    {"key": "wedding", "turns": ["{person} got engaged! The ring is gorgeous.",
                                 "The ceremony is booked for {v} at a vineyard outside {city}."],
     "ask": "When and where will the speaker's relative tie the knot?",
     "values": ["the 14th of May", "the 2nd of September", "the 21st of July"]},
    {"key": "exam", "turns": ["Three weeks until my driving test, I keep stalling on hill starts.",
                              "I passed! {v} minor faults, the examiner said my parking was perfect."],
     "ask": "How did the road test for a motorist's permit go?", "values": ["Four", "Two", "Six"]},
]
DATE_EVENTS = [
    ("my grandmother turned ninety and we threw a party", "When was the elderly relative's birthday celebration?"),
    ("the roof started leaking and we had to call a builder", "When did water begin coming through the ceiling?"),
    ("I gave the keynote at the regional conference",
     "On what day did the speaker present the main talk at the industry meeting?"),
    ("our son lost his first tooth", "When did the child's baby tooth fall out?"),
    ("we planted the apple trees in the back garden", "When did they put fruit saplings in the yard?"),
]
OPEN = {
    "hobbies": "What has the speaker been doing for fun?",
    "work": "How has the speaker's career changed?",
}
TOPICS = {
    "pet": ["The dog next door barked all night again.", "Do you think a cat would be easier than a dog?",
            "We walked past the animal shelter today, so many puppies."],
    "hobby": ["I keep meaning to find a hobby that gets me off screens.", "My evenings are so empty lately.",
              "Classes at the community centre are cheap this term."],
    "job": ["Work was exhausting this week.", "My manager keeps scheduling meetings at 5pm.",
            "I've been updating my CV just in case."],
    "injury": ["My back is sore from gardening.", "Football on Sunday was brutal, everyone was limping.",
               "I should really stretch before running."],
    "car": ["Petrol prices are ridiculous right now.", "The hatchback's brakes are squeaking again.",
            "Traffic on the ring road was awful."],
    "book": ["I need a good book for the holidays.", "The library is closing early on Saturdays now.",
             "Reading before bed helps me sleep."],
    "allergy": ["I've been sneezing all week, maybe it's the pollen.", "The doctor wants to run some tests.",
                "We tried the new Thai place, a bit too spicy."],
    "concert": ["The festival line-up was announced today.", "Tickets sell out in minutes these days.",
                "I've had the same album on repeat all week."],
    "race": ["Running in the rain is underrated.", "My trainers are falling apart."],
    "move": ["Rents keep going up everywhere.", "I spent the afternoon packing old boxes in the attic."],
    "wedding": ["Weddings are so expensive these days.", "I need a new suit for the summer."],
    "exam": ["My instructor is very patient.", "Parallel parking is my nemesis."],
}
OPENERS = ["Hey! How was your weekend?", "Morning! Long time no chat.", "Hi there, got a minute?",
           "Evening! What's new with you?", "Hello again, it's been a busy week."]
SMALL_USER = [
    "Not much, just tired. The weather has been grey all week and I keep drinking too much coffee.",
    "I tried a new recipe for lentil soup, it was decent but needed more salt.",
    "Did you watch the match yesterday? The second half was chaos.",
    "I reorganised the kitchen cupboards, now I can't find anything.",
    "The train was delayed again this morning, forty minutes standing on the platform.",
    "I've been trying to get up earlier but it is not going well.",
    "We had friends over for dinner and stayed up way too late talking about old times.",
    "I finally fixed the wobbly shelf in the hallway.",
    "Thinking about repainting the living room, maybe a pale green.",
    "My phone screen cracked, I need to get it repaired this week.",
    "Went for a long walk by the canal, the ducks were out in force.",
    "Honestly I just want a quiet weekend with nothing planned.",
]
SMALL_BOT = [
    "Ha, that sounds like a lot. {r} Anyway, how are you feeling about the rest of the month?",
    "Oh no, that's annoying. {r} Let me know if you want to grab a coffee and talk it through.",
    "That's nice to hear. {r} I've had a quiet few days myself, mostly catching up on chores.",
    "I know exactly what you mean. {r} Maybe this weekend will be calmer for both of us.",
    "Sounds about right for this time of year. {r} Fingers crossed things settle down soon.",
]
REMARKS = ["My week was mostly spreadsheets and meetings.", "I baked bread on Sunday, it came out flat.",
           "The neighbours are renovating again, drilling at 8am.", "I've started cycling to work when it's dry.",
           "We're thinking about a short trip in the spring.", "My plants are finally growing back."]


def _words_overlap(question: str, evidence: list[str]) -> bool:
    q = set(stems(question))
    e: set[str] = set()
    for t in evidence:
        e.update(stems(t))
    return bool(q & e)


def _conversation(rng: random.Random, split: str, c: int, n_turns: int) -> dict[str, Any]:
    names = rng.sample(NAMES[split], 8)
    people = dict(zip(rng.sample(RELATIONS, 8), names, strict=True))
    city = rng.choice(CITIES[split])
    start = dt.date(2023, 1, 9) + dt.timedelta(days=rng.randrange(0, 200))
    # plan: events placed at distinct exchange slots (an exchange = user turn + reply)
    n_ex = n_turns // 2
    slots = list(range(3, n_ex - 8))
    rng.shuffle(slots)
    plan: dict[int, tuple[str, Any]] = {}
    events = rng.sample(EVENTS, 6)
    for ev in events:
        plan[slots.pop()] = ("event", ev)
    for ch in rng.sample(CHAINS, 3):
        k = len(ch["turns"])
        positions = sorted(slots.pop() for _ in range(k))
        for j, p in enumerate(positions):
            plan[p] = ("chain", (ch, j))
    for de in rng.sample(DATE_EVENTS, 3):
        plan[slots.pop()] = ("date", de)
    chain_values = {ch["key"]: rng.choice(ch["values"]) for ch in CHAINS}
    value_of = {ev["key"]: rng.choice(ev["values"][split]) for ev in EVENTS}
    turns: list[dict[str, str]] = []
    questions: list[dict[str, Any]] = []
    evidence: dict[str, list[str]] = {}
    open_evidence: dict[str, list[str]] = {}
    day = start
    topic_keys = list(TOPICS)
    ex = 0
    while len(turns) < n_turns:
        tid = f"c{c}_t{len(turns)}"
        new_session = ex % rng.choice((18, 24, 30)) == 0
        if new_session:
            day += dt.timedelta(days=rng.randint(3, 12))
        item = plan.get(ex)
        stamp = f"({day.strftime('%A %d %B %Y')}) " if new_session else ""
        if item is None:
            if rng.random() < 0.35:
                topic = rng.choice(topic_keys)
                text = rng.choice(TOPICS[topic])
                if rng.random() < 0.5:
                    rel = rng.choice(list(people))
                    text += f" My {rel} {people[rel]} says hi, by the way."
            else:
                text = rng.choice(SMALL_USER)
                if rng.random() < 0.4:
                    text += " " + rng.choice(SMALL_USER)
            user = stamp + (rng.choice(OPENERS) + " " if new_session else "") + text
        elif item[0] == "event":
            ev = item[1]
            e_words, _, answer = value_of[ev["key"]]
            user = stamp + rng.choice(ev["say"]).format(e=e_words)
            evidence.setdefault(ev["key"], []).append(tid)
            if ev.get("open"):
                open_evidence.setdefault(ev["open"], []).append(tid)
            questions.append({"kind": "single", "key": ev["key"], "question": rng.choice(ev["ask"]), "answer": answer})
        elif item[0] == "chain":
            ch, j = item[1]
            rel = rng.choice(["sister", "brother", "cousin"])
            user = stamp + ch["turns"][j].format(city=city, v=chain_values[ch["key"]],
                                                 person=f"My {rel} {people.get(rel, 'Sam')}")
            evidence.setdefault(ch["key"], []).append(tid)
            if j == 0:
                questions.append({"kind": "multi", "key": ch["key"], "question": ch["ask"],
                                  "answer": chain_values[ch["key"]]})
        else:
            what, ask = item[1]
            user = stamp + f"Quick update: on {day.strftime('%A the %d of %B')} {what}."
            key = f"date{len(evidence)}"
            evidence[key] = [tid]
            questions.append({"kind": "date", "key": key, "question": ask, "answer": day.isoformat()})
        turns.append({"id": tid, "role": "user", "content": user})
        reply = rng.choice(SMALL_BOT).format(r=rng.choice(REMARKS))
        if item is not None and rng.random() < 0.5:
            reply = "Wow, really? " + reply
        turns.append({"id": f"c{c}_t{len(turns)}", "role": "assistant", "content": reply})
        ex += 1
    out_q: list[dict[str, Any]] = []
    for q in questions:
        ev_ids = evidence[q.pop("key")]
        out_q.append({**q, "evidence": ev_ids})
    for theme, ids in open_evidence.items():
        if len(ids) >= 2:
            out_q.append({"kind": "open", "question": OPEN[theme], "evidence": ids[:3], "answer": None})
    by_id = {t["id"]: t["content"] for t in turns}
    for k, q in enumerate(out_q):
        q["id"] = f"c{c}_q{k}"
        q["lexical_overlap"] = _words_overlap(q["question"], [by_id[e] for e in q["evidence"]])
    return {"id": f"{split}{c}", "system": "Two friends catch up over many sessions of chat.",
            "turns": turns, "questions": out_q}


def make(split: str, n_conversations: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [_conversation(rng, split, c, rng.randrange(560, 640, 2)) for c in range(n_conversations)]


def main() -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    for split, seed in (("dev", 101), ("test", 202)):
        convs = make(split, 6, seed)
        path = DATA / f"hard_{split}.json"
        path.write_text(json.dumps(convs, indent=0, ensure_ascii=False) + "\n")
        qs = [q for c in convs for q in c["questions"]]
        no_overlap = sum(not q["lexical_overlap"] for q in qs)
        print(f"wrote {path}: {len(convs)} conversations, {len(qs)} questions, {no_overlap} share no content word")




if __name__ == "__main__":
    main()
