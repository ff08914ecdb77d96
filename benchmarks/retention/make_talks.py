"""Writes ``data/talks_dev.json`` and ``data/talks_test.json``: long dated chats of two friends, asked in other words.

Run: ``python -m benchmarks.retention.make_talks``. Deterministic (seeded): the files in the repo are what this
script writes (``tests/benchmarks/test_make_talks.py`` regenerates them and compares bytes). No model is involved.
It ends with a self-check (:func:`check`), printed.

The hardest of the retention sets, shaped like the real held-out conversations (LoCoMo-like): two friends catch up
over 22-28 dated sessions spread over four to nine months, about 300 exchanges (a ``user`` turn, speaker A, and an
``assistant`` turn, speaker B) and 23-28k cl100k tokens per conversation. Every message starts like
``[1:56 pm on 8 May, 2023] Maya: `` (``"date_format": "message"``); in a quarter of the conversations only the first
message of a session carries the date and the others start ``Maya: `` (``"date_format": "session"``, messages
longer to keep the size): the date of a fact has to be found at the start of its session. Both friends have lives:
each owns some of the conversation's 14-16 life threads (a new job, running, the garden, a sister's wedding, a
podcast, ...; 18 threads are shared by the splits with different details, wordings and questions, 8 are dev-only
and 8 test-only) and three traits ("I get seasick just looking at boats"). A thread's events are planted in
different sessions, mostly in the first two thirds of the conversation, each fact inside a message of one to five
sentences: at its start, in its middle or at its end about equally often. How it is hard:

- small talk is put together from many parts (a mishap, a show, an errand, a neighbour's news, advice, a shared
  memory, ...); no sentence occurs more than twice in a conversation and no part more than three times (four in
  ``session`` conversations) while others are left, so no stock sentence marks a turn as chatter;
- the other friend reacts to news reusing its words without its fact (``The Harbour Half Marathon? In this
  weather?``), asks about it in later sessions (``How's the running going?``), and the owner talks about the topic
  without facts: lexical distractors;
- near misses: the other friend's similar event with other details (``I did the Maple Leaf 5k years ago and walked
  most of it``), a plan that did not happen (``We wanted to go to Yosemite but every campsite was booked``), the
  same kind of event at another time, a friend's news (``Jenna just moved to Seattle``);
- facts are updated (about three per conversation): a later session changes a value (``Becca's wedding got pushed
  to October``); the question asks the latest one and its evidence is both turns;
- dates are relative: ``yesterday``, ``on Friday``, ``last weekend``, ``two weeks ago``, ``this Saturday``,
  ``next month``, to be resolved against the message's (or its session's) date.

50-70 questions per conversation, asked after its last turn:

- ``single`` (~35%): one fact, updates included (``"updated": true``); at least 60% (in fact ~85-90%) asked in other
  words, no stemmed content word in common with the evidence turn(s) but the speakers' names (``What new role did
  Grant land?`` for ``Yesterday they called to offer me the job as a counsellor at the youth centre``);
- ``date`` (~25%, the temporal "when did ..." kind, named as in :mod:`.make_chats`): ``answer`` is the resolved date
  ``YYYY-MM-DD`` or a range ``YYYY-MM-DD/YYYY-MM-DD`` (a weekend, a week, a month); ``relative`` is the expression
  the evidence used (half of them) or null when the event was on the message's date (``this morning``, ``tonight``);
- ``multi`` (~25%): two or three facts of a thread, told in different sessions, most 10 or more sessions apart
  (``What sports has Celeste tried?``, ``Where did Maya travel and what did Maya bring back?``); ``answer`` joins
  the parts with ``"; "`` (the latest value of an updated one);
- ``open`` (~15%): an inference (``Would Grant want an espresso machine as a present?`` for ``I gave up coffee in
  January``), its evidence the one to three turns that support it, worded apart; ``answer`` a short reasoned one.

Every ``single`` answer and every ``"; "``-separated part of a ``multi`` answer occurs literally in one of its
evidence turns. ``lexical_overlap`` says whether the question shares a content word (stemmed, stop words out, the
speakers' names aside) with its evidence, as in :mod:`.make_chats`; ``session`` gives each evidence turn's session
(1-based) and a conversation's ``sessions`` their dates and first turns.

Dev and test use different seeds, people, places and details, partly different life threads, traits and wordings,
and the bigger small-talk lists are halved between them: tune on dev, report on test.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

from arcana_jupyter.context.relevance import stems

DATA = Path(__file__).parent / "data"
SEEDS = {"dev": 7101, "test": 8202}
N_CONVERSATIONS = 8
MAX_REPEAT = 2
"""No sentence occurs more than this many times in a conversation (the generator retries; the check counts)."""
CORE_LIMIT = 3
"""A small-talk item (an activity, a mishap, a show, ...) is used at most this many times in a conversation while
others are left."""
SPLITS = ("dev", "test")


def part(items: list[Any], split: str) -> list[Any]:
    """The split's half of a list: dev the even items, test the odd ones (a list of one is shared)."""
    if len(items) < 2:
        return list(items)
    return items[0::2] if split == "dev" else items[1::2]


_PREFIX = re.compile(r"^(\[[^\]]*\] )?[^:\[]+: ")
_SENT = re.compile(r"(?<=[.!?])\s+")


def body(content: str) -> str:
    """A message's text without its ``[date] Name: `` or ``Name: `` prefix."""
    return _PREFIX.sub("", content, count=1)


def body_name(content: str) -> str:
    """The speaker's name in a message's prefix."""
    return _PREFIX.match(content).group(0).rsplit("] ", 1)[-1][:-2]  # type: ignore[union-attr]


def sentences(text: str) -> list[str]:
    return [s for s in _SENT.split(text.strip()) if s]


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def low(s: str) -> str:
    """``s`` with a lower-case first letter, unless it starts with a day's name."""
    return s if s.split(" ")[0] in WEEKDAYS else s[:1].lower() + s[1:]


def overlap(question: str, evidence: list[str], names: tuple[str, ...]) -> bool:
    """Whether the question shares a content word with its evidence, the speakers' names aside (as make_chats)."""
    skip = {t for n in names for t in stems(n)}
    q = set(stems(question)) - skip
    e: set[str] = set()
    for t in evidence:
        e.update(stems(t))
    return bool(q & e)


# --------------------------------------------------------------------------------------------------------------
# dates

WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def stamp(t: dt.datetime) -> str:
    """``1:56 pm on 8 May, 2023``."""
    h = t.hour % 12 or 12
    return f"{h}:{t.minute:02d} {'am' if t.hour < 12 else 'pm'} on {t.day} {t.strftime('%B')}, {t.year}"


def _span(a: dt.date, b: dt.date) -> str:
    return a.isoformat() if a == b else f"{a.isoformat()}/{b.isoformat()}"


def _month(d: dt.date, delta: int) -> tuple[dt.date, dt.date]:
    y, m = d.year, d.month + delta
    while m < 1:
        y, m = y - 1, m + 12
    while m > 12:
        y, m = y + 1, m - 12
    first = dt.date(y, m, 1)
    nxt = dt.date(y + (m == 12), m % 12 + 1, 1)
    return first, nxt - dt.timedelta(days=1)


def past_expressions(d: dt.date, prev: dt.date) -> list[tuple[str, str, int]]:
    """(expression, resolved date or range, weight) of the past relative expressions that fall after ``prev``
    (the previous session's date: the news is new; a range may start on that day)."""
    out: list[tuple[str, str, int]] = []
    mon = d - dt.timedelta(days=d.weekday())

    def add(expr: str, a: dt.date, b: dt.date, w: int) -> None:
        if (a > prev) if a == b else (a >= prev):
            out.append((expr, _span(a, b), w))

    one = d - dt.timedelta(days=1)
    add("yesterday", one, one, 6)
    add("last night", one, one, 3)
    two = d - dt.timedelta(days=2)
    add("the day before yesterday", two, two, 2)
    add("two days ago", two, two, 1)
    three = d - dt.timedelta(days=3)
    add("three days ago", three, three, 1)
    for k in range(2, 7):
        x = d - dt.timedelta(days=k)
        add(f"on {WEEKDAYS[x.weekday()]}", x, x, 2)
        if x < mon:  # "last Friday": a day of the previous week
            add(f"last {WEEKDAYS[x.weekday()]}", x, x, 1)
    add("last weekend", mon - dt.timedelta(days=2), mon - dt.timedelta(days=1), 4)
    add("last week", mon - dt.timedelta(days=7), mon - dt.timedelta(days=1), 2)
    w2 = d - dt.timedelta(days=14)
    w2mon = w2 - dt.timedelta(days=w2.weekday())
    add("two weeks ago", w2mon, w2mon + dt.timedelta(days=6), 2)
    add("last month", *_month(d, -1), 1)
    return out


def future_expressions(d: dt.date) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    one = d + dt.timedelta(days=1)
    out.append(("tomorrow", _span(one, one), 4))
    for k in range(2, 7):
        x = d + dt.timedelta(days=k)
        if x.weekday() > d.weekday():  # still this week
            out.append((f"this {WEEKDAYS[x.weekday()]}", _span(x, x), 2))
        out.append((f"on {WEEKDAYS[x.weekday()]}", _span(x, x), 1))
    if d.weekday() < 5:
        sat = d + dt.timedelta(days=5 - d.weekday())
        out.append(("this weekend", _span(sat, sat + dt.timedelta(days=1)), 3))
    nmon = d + dt.timedelta(days=7 - d.weekday())
    out.append(("next week", _span(nmon, nmon + dt.timedelta(days=6)), 2))
    w2 = d + dt.timedelta(days=14)
    w2mon = w2 - dt.timedelta(days=w2.weekday())
    out.append(("in two weeks", _span(w2mon, w2mon + dt.timedelta(days=6)), 1))
    out.append(("next month", _span(*_month(d, 1)), 2))
    return out


def present_expressions(t: dt.datetime, tense: str) -> list[str]:
    """Expressions of the message's own date."""
    if tense == "future":
        return ["tonight", "later today", "this evening"] if t.hour < 17 else ["tonight", "later tonight"]
    if t.hour >= 14:
        return ["today", "this morning", "this afternoon", "earlier today"]
    if t.hour >= 11:
        return ["today", "this morning", "earlier today"]
    return ["this morning", "first thing this morning"]


# --------------------------------------------------------------------------------------------------------------
# small talk: sentences put together from parts (the big lists are halved between dev and test by ``part``)

TIME_BACK = ["This morning", "Yesterday", "On Sunday", "Earlier today", "Over the weekend", "The other day",
             "On Tuesday", "Last Thursday", "On Saturday", "At the weekend", "On Monday", "The day before yesterday"]
TIME_EVE = ["last night", "yesterday", "on Sunday", "on Friday", "on Tuesday", "at the weekend", "the other night",
            "on Wednesday"]
POS_ACT = [
    "tried the new bakery on the corner", "finally cleaned out the garage",
    "had a long lunch with an old school friend",
    "slept for ten hours straight", "found a twenty in an old coat pocket", "made pancakes for everyone",
    "walked along the river for an hour", "got through my whole to-do list", "rearranged all the bookshelves",
    "watched the sunrise from the balcony", "had the office completely to myself", "sat out on the porch until dark",
    "discovered a tiny café near the station", "napped in the hammock", "cleared out my entire inbox",
    "fixed the squeaky door all by myself", "bumped into a neighbour I hadn't seen in years",
    "treated myself to a fancy coffee", "spent an hour in a secondhand bookshop", "tried a new soup recipe",
    "had a proper lie-in", "went for a swim at the outdoor pool", "finished a thousand-piece jigsaw",
    "cleaned every window in the flat", "called my grandma for a long chat", "watered all the balcony plants",
    "took the long way home through the park", "ate dinner outside for the first time this year",
    "sorted out my whole wardrobe", "got a really good haircut", "played cards with the neighbours",
    "wandered around the farmers' market", "baked a batch of cookies", "deep-cleaned the kitchen",
    "picked blackberries along the lane", "went to a free lunchtime concert", "had a picnic in the park",
    "beat my cousin at chess", "watched an old film I loved as a kid", "finally framed some photos",
    "found the perfect birthday present for my dad", "cycled to work for once", "cooked a proper Sunday roast",
    "spent the afternoon at a friend's allotment", "finished a book in one sitting", "had breakfast in bed",
    "saw a double rainbow over the motorway", "got a thank-you card from a neighbour",
    "finally sorted out the spare room", "tried a yoga video in the living room", "made a proper cooked breakfast",
    "went to a car boot sale and found a lamp", "had a long bath with a book", "repotted all the houseplants",
    "went for coffee with my old boss", "cleaned out the fridge", "watched the football at the pub",
    "drove out to the coast for chips", "helped a neighbour move a sofa", "found my favourite earring behind the sofa",
    "tried the new Vietnamese place", "went to a pub quiz and came last", "fixed my bike chain",
    "organised all my photos", "wrote an actual letter to my aunt", "went to the cinema on my own",
    "bought myself flowers", "had a board game night with friends", "walked to work in the sunshine",
    "went to a life drawing taster at the library", "visited the new museum exhibition", "cooked a curry from scratch",
    "had a long video call with my cousin", "made a playlist for the car", "mended a pair of jeans",
    "got the good seats on the train", "found a new walking route by the canal", "tried paddle tennis with a friend",
    "had an early night with no phone", "met my friend's new baby", "spent an hour at the garden centre",
    "went to a street food market", "baked bread for the first time in months", "booked a weekend away",
    "finished my tax return early", "went stargazing in the back garden",
]
POS_COM = ["which felt amazing", "and it made my whole day", "best decision all week", "no regrets",
           "and honestly I needed it", "and I feel like a new person", "so small wins", "which I'm weirdly proud of",
           "and it was glorious", "which was exactly what I needed", "so the week is looking up",
           "and now I want to do it every day", "and nobody can take that away from me", "ten out of ten"]
NEG_EV = [
    "my car wouldn't start", "the washing machine leaked all over the floor", "I locked myself out of the house",
    "the wifi died for four hours", "I spilled coffee all over my bag", "the bus never showed up",
    "I got a parking ticket", "the upstairs neighbours had a party until two", "I burned dinner",
    "my phone fell in a puddle", "I missed my train by ten seconds", "I had a migraine all day",
    "the dishwasher broke", "I stubbed my toe on the bed frame", "a pipe burst under the sink",
    "my umbrella turned inside out", "I sat through a three-hour meeting", "the power went out during dinner",
    "I lost my keys again", "the printer jammed right before a deadline", "I slept through my alarm",
    "a pigeon got into the kitchen", "the fridge stopped working", "my laptop decided to update for an hour",
    "I got soaked walking home", "the neighbour's alarm went off for an hour", "I dropped a jar of pickles",
    "the shop was out of everything I needed", "I waited two hours for a delivery that never came",
    "the boiler packed in", "I cracked my phone screen", "I got stuck in traffic for ages",
    "I shrank my favourite jumper in the wash", "the car got a flat tyre", "the smoke alarm went off for no reason",
    "I left my lunch on the bus", "the website crashed as I was paying", "I got a splinter the size of a pencil",
    "the cat next door was sick on our doormat", "I double-booked myself", "my train was cancelled",
    "I sent an email to the wrong person", "the toilet wouldn't stop running", "a wasp chased me round the garden",
    "my headphones broke", "I put salt in my coffee instead of sugar", "the internet went down mid-call",
    "I lost a whole document I was working on", "I walked into a glass door", "my card got declined at the till",
    "the shower went cold halfway through", "I fell off my bike, just my pride hurt", "the heating broke",
    "I forgot a friend's birthday", "a delivery van blocked the drive all morning", "my tooth started aching",
]
NEG_COM = ["so that was fun", "classic", "I nearly cried", "what a day", "which was just perfect", "because of course",
           "and I'm still annoyed", "so I'm running on fumes", "and it all went downhill from there",
           "so the universe clearly hates me", "which set the tone", "and I'm choosing to laugh about it"]
WEATHER = ["It's been raining non-stop here", "It's been warm enough to leave the coat at home",
           "The wind has been wild", "It's been so humid I can barely think", "The sky has been grey and heavy",
           "It's been unusually sunny", "It's been freezing",
           "It's been that weird weather where you need sunglasses and an umbrella", "It's been drizzling",
           "The heating has been on full blast", "It's been properly spring-like", "The rain has been sideways",
           "It's been grey but mild", "It's been sticky and hot"]
WEATHER_T = ["since Tuesday", "all week", "all weekend", "for days", "since we last talked", "since Sunday"]
WEATHER_PT = ["We had the first proper frost", "It snowed a little", "There was a huge thunderstorm",
              "The fog was so thick I couldn't see the end of the street", "It hailed out of nowhere",
              "We had the most incredible sunset", "A tree came down in the wind", "It was t-shirt weather",
              "There was a rainbow over the whole town", "The river nearly burst its banks",
              "It was so windy the bins blew over", "We woke up to snow"]
WEATHER_PT_T = ["last night", "this morning", "on Sunday", "yesterday", "over the weekend", "on Friday"]
WEATHER_F = ["perfect excuse to stay in", "and I'm so ready for a change", "and I actually kind of love it",
             "and my hair has given up", "good soup weather at least", "so I've been living in my big jumper",
             "and the garden is loving it", "and I keep forgetting my umbrella", "which has been lovely for walks",
             "so the washing never dries"]
SHOWS = ["a baking competition", "a detective series set in Scotland", "a documentary about octopuses",
         "an old sitcom from the nineties", "a dating show I'm embarrassed about", "a cooking show from Mexico",
         "a drama set in a hospital", "a nature documentary about the Arctic", "the crime drama everyone talks about",
         "a quiz show from the seventies", "a fantasy series with dragons", "a travel show about Japan",
         "a comedy about a small-town newspaper", "a series about a family of lawyers",
         "a reality show about house flipping", "a documentary about deep-sea fishing",
         "a spy thriller set in Berlin", "a cartoon for adults about a dysfunctional family",
         "a period drama with ballgowns",
         "a show about people renovating castles", "a docuseries about a famous chef", "a sci-fi series on a spaceship",
         "a sitcom about a hotel", "a murder mystery on an island", "a gardening programme",
         "a documentary about the moon landings", "a singing competition", "a series about a village vet"]
SHOW_EVAL = ["and I'm completely hooked", "and it's way better than it sounds",
             "but the last episode made no sense at all", "and I stayed up far too late with it",
             "which is my new comfort show", "but I keep falling asleep halfway through",
             "and now I'm an expert apparently", "and I can't decide if I love it or hate it"]
DISHES = ["tacos", "leftover curry", "homemade pizza", "a giant salad", "soup and crusty bread", "takeaway noodles",
          "fish and chips", "pasta with pesto", "burgers on the grill", "a stir fry", "a mushroom risotto",
          "baked potatoes", "a veggie chilli", "a massive omelette", "dumplings from the freezer", "a tray bake",
          "cheese on toast", "a huge pot of ramen", "a roast chicken", "fajitas", "a fish curry", "mac and cheese",
          "a big Greek salad", "sausage and mash", "a homemade pie", "bibimbap", "shakshuka", "a pile of pancakes"]
FOOD_EVAL = ["and it was exactly right", "which was a mistake at eleven at night", "and I ate far too much",
             "and there's enough left for a week", "zero effort and very happy", "and nobody complained for once"]
WORK_BUSY = (["hectic", "a bit much", "nonstop", "chaotic", "all meetings", "intense", "relentless"],
             ["so I'm wiped", "and I'm counting down to Friday", "and my inbox is a nightmare",
              "so I've barely seen daylight", "and I keep forgetting to eat lunch", "but I'm managing",
              "and I've been dreaming about spreadsheets"])
WORK_CALM = (["oddly quiet", "surprisingly calm", "slow", "pretty relaxed", "weirdly peaceful"],
             ["which is a nice change", "so I've been sneaking out early", "so I've actually had lunch breaks",
              "which makes me suspicious", "and I'm not complaining"])
WORK_T = ["this week", "lately", "all month", "since Monday", "the last few days"]
FAM_EV = ["has decided to learn to juggle", "is obsessed with a podcast about space",
          "does the crossword every morning",
          "bought a bread machine and uses it every day", "is fixing up an old bike in the hallway",
          "is trying to grow a beard", "reorganised the spice rack alphabetically", "signed us up for a quiz night",
          "keeps buying plants we have no room for", "is on a smoothie kick", "has started watching chess videos",
          "fell asleep on the sofa at eight", "is learning card tricks from the internet",
          "rearranged the furniture while I was out", "booked us a table somewhere fancy",
          "wants to teach me to bake bagels", "has started learning the guitar, badly",
          "is training for a sponsored walk", "bought a kayak without telling me",
          "is growing chillies on the windowsill",
          "has become obsessed with sourdough", "started running at six in the morning",
          "is doing a jigsaw of the moon",
          "has taken over the spare room with a model railway", "is fostering a tomato plant like it's a baby",
          "wants to get chickens", "has started a very intense fantasy football league",
          "is learning Italian from an app", "built a bird box", "keeps rearranging the fridge"]
FAM_COM = ["send help", "and I'm not sure how I feel about it", "which is honestly adorable", "and it's a whole thing",
           "so that's our life now", "and I'm just going along with it"]
SIB_EV = ["called to complain about the landlord for an hour", "is thinking about moving closer to us",
          "sent me about a hundred photos of a sandwich", "got a new haircut and keeps sending selfies",
          "is coming to stay for a couple of nights", "started a sourdough starter and named it",
          "wants everyone to do a family holiday", "keeps texting me memes at two in the morning",
          "finally fixed the car", "has taken up birdwatching of all things", "borrowed my good suitcase again",
          "is redecorating and asking my opinion on every tile", "rang me in a panic about a tax form",
          "won a meat raffle at the pub", "is convinced the house is haunted", "bought a very loud motorbike",
          "wants me to help paint the nursery", "turned up with bright green hair",
          "got into a row with a parking warden",
          "has started a book about our family", "is running for the parish council", "adopted two very fat goldfish"]
SIB_COM = ["which is so typical", "so that's the family news", "bless", "don't ask", "I had to laugh",
           "and I'm staying out of it", "honestly"]
PLANS = ["redoing the bathroom tiles", "taking a day off just to sleep", "getting a new mattress",
         "trying that new Thai place", "clearing out the attic", "getting a vegetable box delivered",
         "having people over for a barbecue", "learning to make proper coffee", "getting my bike serviced",
         "repainting the front door", "doing a digital detox", "booking a massage", "going through old photos",
         "joining a library again", "selling some stuff online", "making a proper budget",
         "taking a pottery taster", "doing a big clear-out of the shed", "getting a haircut that isn't a trim",
         "going to the coast for a day", "learning to do my own bike repairs", "booking a spa day",
         "finally getting blinds for the bedroom", "going to the theatre", "starting a walking group",
         "hosting a film night", "fixing the garden fence", "having a proper lazy Sunday", "visiting my grandparents",
         "trying a cold swim", "buying a better desk chair", "signing up for a first aid course"]
WHO = ["My neighbour", "A colleague of mine", "The guy at the corner shop", "My boss", "Someone at work",
       "My old flatmate", "My cousin", "Our postman", "My dentist", "A friend from school", "The woman next door",
       "My hairdresser"]
WHO_EV = ["just got back from six weeks in Peru", "is training to be a pilot", "won a pie-eating contest",
          "has started keeping quails", "quit to open a surf shop", "is walking the whole coast path",
          "got engaged on a ferry", "found a fossil on the beach", "has been on the local news twice",
          "is building a boat in the garage", "ran into a famous actor at the station",
          "learned sign language in a year",
          "grows pumpkins the size of armchairs", "is moving to a houseboat", "passed a driving test on the seventh go",
          "has twins on the way", "is convinced aliens visited the park", "knits jumpers for penguins",
          "has a parrot that swears", "just retired after forty years", "is writing a crime novel",
          "got a tattoo of a sandwich", "swims in the sea every morning, even in winter", "collects old radios"]
WHO_COM = ["which is amazing", "as you do", "I'm not even joking", "no idea how", "good for them", "the legend",
           "apparently"]
OPINIONS = ["oat milk is overrated", "a proper nap is the best thing in life", "I'm a bath person, not a shower person",
            "pineapple on pizza is fine actually", "I'm done with hot summers", "autumn is the best season",
            "audiobooks count as reading", "I need a hobby that doesn't involve a screen",
            "I'm never buying white trainers again",
            "board games ruin friendships", "breakfast is the best meal", "the best holidays are the quiet ones",
            "phones should be banned at dinner", "I'll never understand golf", "cold pizza is a perfect breakfast",
            "I want to live somewhere with a sea view one day", "I'm finally a morning coffee person",
            "nothing beats a rainy Sunday", "I should write more letters",
            "everyone should learn to cook one good dish"]
OPINION_PRE = ["I've decided that", "Hot take:", "Honestly, I think", "I've come round to the idea that",
               "Unpopular opinion, but", "I'm more and more sure that"]
ERRANDS = [("the post office", ["send a parcel to my aunt", "return a jacket", "pick up a package"]),
           ("the pharmacy", ["get hay fever tablets", "pick up a prescription", "buy plasters"]),
           ("the bank", ["sort out a new card", "close an old account"]),
           ("the hardware shop", ["buy a new hose", "get screws for a shelf", "find a replacement bulb",
            "buy paint samples"]),
           ("the dentist", ["get a filling", "have a check-up"]),
           ("the garage", ["get the brakes looked at", "have the tyres changed"]),
           ("the library", ["return a pile of overdue books", "print some forms"]),
           ("the council office", ["complain about the bins", "sort out a parking permit"]),
           ("the optician", ["get my eyes tested", "pick up new glasses"]),
           ("the market", ["buy vegetables for the week", "get fresh flowers"]),
           ("the furniture store", ["buy one lamp", "return a wobbly table"]),
           ("the recycling centre", ["drop off an old mattress", "get rid of a mountain of boxes"]),
           ("the key cutter", ["get a spare key made"]), ("the tailor", ["get some trousers taken up"]),
           ("the phone shop", ["sort out my contract", "get a new charger"]),
           ("the supermarket", ["do the big weekly shop", "buy one thing and left with forty"])]
ERRAND_COM = ["which took all morning", "and the queue was out the door", "and of course it was shut",
              "so that's one job done",
              "and it was weirdly fun", "and I forgot half of what I went for",
              "and bumped into half the neighbourhood"]
ADVICE = ["take a proper day off", "treat yourself to something nice", "have an early night", "book a massage",
          "get out in the fresh air", "put your feet up this weekend", "write it all down", "ask for help",
          "turn your phone off for an evening", "call your mum", "go for a long walk", "make a list",
          "just say no next time", "give yourself a break", "get a second opinion", "run yourself a bath",
          "complain, honestly", "order takeaway tonight", "laugh it off", "sleep on it"]
ADVICE_WHY = ["honestly", "you deserve it", "trust me", "it always helps me", "seriously", "no arguments",
              "doctor's orders"]
CELEBRATE = ["you should celebrate properly", "we need to toast this next time", "you should frame that",
             "you should tell everyone", "you should be so proud", "you need to treat yourself",
             "that deserves cake", "you should do a little victory dance"]
MEMORIES = ["the time we got lost on that school trip", "when we stayed up all night before your exam",
            "your terrible first car", "when we tried to bake a cake for your mum's birthday",
            "that holiday where it rained for a week", "your old flat with the purple carpet",
            "when we queued six hours for concert tickets", "the time we missed the last train home",
            "when you dyed your hair blue", "our disastrous pub quiz team",
            "that wedding where the band never showed up",
            "the summer we worked at the ice cream van", "when we got stuck on the Ferris wheel",
            "that karaoke night we don't talk about", "your famous burnt lasagne", "when we tried to learn to skate",
            "the time the taxi took us to the wrong town", "our first terrible flat-share",
            "when we adopted that stray duck",
            "the night we waited for the meteor shower in the rain"]
MEMORY_PRE = ["That reminds me of", "Ha, that takes me back to", "Remember", "It's like",
              "That's giving me flashbacks to"]
RECS = ["the new ramen place by the station", "that podcast about shipwrecks", "the walking trail behind the reservoir",
        "the bakery on Mill Street", "a sleep app with rain sounds", "the Sunday market in the old square",
        "that board game with the trains", "the outdoor cinema in the park", "the farm shop out of town",
        "the Thai place with the red door", "the swimming pond on the common", "a meal kit, the good kind",
        "that new bookshop café", "cold brew, honestly", "the museum late nights", "the cheap matinees at the cinema",
        "the little Greek place near the bridge", "a weighted blanket", "the bike path along the river",
        "the comedy night at the arts centre"]
REC_PRE = ["You have to try", "You'd love", "I keep meaning to tell you about", "Someone at work swears by",
           "Have a look at"]
REC_COM = ["it's so good", "I think you'd love it", "it's my new favourite", "it changed my life, slightly",
           "you won't regret it", "I keep going back"]
REPORT_KINDS: dict[str, tuple[int, tuple[str, ...]]] = {
    "pos": (5, ("POS_ACT",)), "neg": (4, ("NEG_EV",)), "weather": (2, ("WEATHER", "WEATHER_PT")),
    "show": (2, ("SHOWS",)), "food": (2, ("DISHES",)), "work": (2, ()), "fam": (2, ("FAM_EV",)),
    "sib": (1, ("SIB_EV",)), "plan": (2, ("PLANS",)), "who": (2, ("WHO_EV",)), "opinion": (1, ("OPINIONS",)),
    "errand": (3, ("ERRANDS",)), "rec": (1, ("RECS",))}
"""Small-talk kinds: (weight, the pools whose items are capped per conversation)."""
ONCE = {"work", "weather", "sib", "fam", "show"}
"""Kinds a friend brings up at most once a session (unless asked)."""
PLAN_T = ["this weekend", "next week", "soon", "before the end of the month", "at some point", "once things calm down"]
ASK_OTHER = [("how's your week going", "gen"), ("any fun plans coming up", "plan"), ("how's {op} doing", "fam"),
             ("how's work treating you", "work"), ("what have you been up to", "gen"),
             ("how's your {osr} doing", "sib"), ("anything exciting happen since we last talked", "gen"),
             ("how are you holding up", "gen"), ("how's {op} these days", "fam"), ("how's the job", "work"),
             ("what are you watching at the moment", "show"), ("how's the weather over there", "weather"),
             ("are you keeping busy", "gen"), ("have you had any time to yourself lately", "gen"),
             ("what did you have for dinner", "food"), ("how's {osn} getting on", "sib"),
             ("how was your weekend", "gen"), ("any good telly lately", "show"), ("what's the plan for the week",
              "plan"),
             ("how's life at home", "fam"), ("how's everything", "gen"), ("what's the latest with you", "gen"),
             ("how are things at your end", "gen"), ("what's been keeping you busy", "gen"), ("any news", "gen"),
             ("tell me something good", "gen"), ("how's life", "gen"), ("what did you get up to this week", "gen"),
             ("how's your day been", "gen"), ("anything fun happen lately", "gen"), ("how's the week treating you",
              "gen"),
             ("what's been happening", "gen"), ("how did the week go", "gen"), ("what's new", "gen")]
ASK_PRE = ["So ", "Anyway, ", "Okay, ", "But tell me, ", "Oh, and ", "Enough about me, ", "Right, ", "Hey, "]
REACT_POS = (["Ooh", "Oh nice", "Aw", "Love that", "Ha", "Oh lovely", "Yes", "Honestly", "Oh wow", "Nice"],
             ["that sounds lovely", "I'm jealous", "good for you", "you deserve it", "I need to do that more",
              "that's the dream", "what a good day", "I love that for you", "that's so nice to hear",
              "sounds perfect", "that made me smile", "you've earned that"])
REACT_NEG = (["Oh no", "Ugh", "Oof", "Argh", "Oh dear", "Yikes", "Noooo", "Oh man"],
             ["that's the worst", "sorry, that sounds awful", "I'd have lost it", "what a pain",
              "hope tomorrow is kinder", "that's so annoying", "that would drive me mad", "poor you",
              "some days are just like that", "I'm sending sympathy"])
REACT_NEU = (["Ha", "Haha", "Oh", "Hm", "Ah", "Huh", "Ooh", "Oh really"],
             ["that's funny", "I can totally picture that", "fair enough", "I know the feeling",
              "that sounds about right", "interesting", "I didn't know that", "same here honestly", "makes sense",
              "that's so typical", "I love that", "classic"])
CHEER = (["Oh wow", "No way", "Amazing", "Wait, really", "Ahh", "Oh my gosh", "Yay", "That's huge", "Wow",
          "Hold on", "Whoa"],
         ["I'm so happy for you!", "that's brilliant news!", "you must be thrilled!", "best news all week!",
          "I love that!", "well done you!", "how exciting!", "good for you!", "you deserve it!", "that's so cool!",
          "congratulations!", "that's fantastic!"])
SYMPATHY = (["Oh no", "Oh dear", "Yikes", "Oh man", "Ouch", "Oof"],
            ["that sounds stressful!", "I'm sorry!", "what a week!", "that's rough!", "poor you!",
             "I hope it's sorted now!"])
FOLLOW_POS = ["How are you feeling about it", "Tell me everything", "What made you go for it", "What did {p} say",
              "Are you pleased", "Is that what you were hoping for", "Has it sunk in yet", "Did you tell everyone",
              "How did {p} react", "Are you celebrating"]
FOLLOW_NEG = ["Is everything okay now", "How bad was it", "Are you alright", "What happened next",
              "Did you manage to sort it", "How did {p} take it"]
FOLLOW_PRE = ["", "So ", "Okay, but ", "Wait, ", "Ooh, ", "And "]
LEAD_POS = (["Okay so", "Right, so", "Oh", "Well", "Funny you should ask,", "Honestly,", "Ha,", "So,"],
            ["I have news.", "big week over here.", "I've been dying to tell you something.",
             "you'll never guess what happened.", "things have been busy in a good way.", "I've got a story for you.",
             "it's been a good one.", "something fun happened."])
LEAD_NEG = (["Okay so", "Well", "Honestly,", "Ugh,", "Oh man,", "So,"],
            ["it's been a rough few days.", "I've had a bit of a week.", "don't laugh, but something silly happened.",
             "things have been chaotic.", "I have a slightly embarrassing story."])
FEEL_POS = (["I'm still", "Honestly I'm still", "Still", "I'm genuinely", "I am still"],
            ["buzzing about it.", "grinning like an idiot.", "on a bit of a high.", "pinching myself.",
             "smiling about it.", "a bit giddy."])
FEEL_NEG = (["I'm still", "Honestly I'm", "I'm", "I'm mostly"],
            ["a bit shaken.", "laughing about it now.", "recovering.", "over it, mostly.", "not proud of it."])
THANKS = ["Thanks, ", "Ha, thanks, ", "Aw, thank you, ", "Haha, ", "Honestly, ", "Thank you, ", "Oh, ", "", "", ""]
STATUS = (["Slowly but surely", "Really well actually", "Up and down", "Better than I expected",
           "A bit stalled, honestly",
           "Pretty good", "Still going", "Honestly great", "Getting there", "Not bad at all"],
          [", thanks for asking.", ", I'll tell you more next time.", ", though I haven't had much time lately.",
           ", it's keeping me sane.", "!", ", I'm enjoying it.", ", fingers crossed it stays that way."])
CB_PRE = ["", "By the way, ", "Oh, ", "Random, but ", "Before I forget, ", "Wait, ", "Oh hey, "]
HI = ["Hey", "Hi", "Hiya", "Heyy", "Hello", "Hey hey"]
OPEN = ["how's your week been?", "how are things?", "how's life treating you?", "good to catch you!",
        "got a minute to catch up?", "how did the rest of your week go?", "what's new with you?",
        "are you surviving the week?", "how have you been?", "I was just thinking about you!",
        "hope your day's going okay!", "how's everything on your end?", "fancy a catch-up?",
        "happy almost-weekend!", "are you free for a chat?", "how's it going?"]
OPEN_LONG = ["sorry it's been so long!", "it feels like ages since we talked!", "it's been forever, how are you?",
             "I've missed our chats!",
             "where did the last month go?", "I feel like I vanished, sorry!"]
STATUS_HI = ["pretty good, just a busy week", "not bad at all, thanks for asking", "honestly a bit tired but okay",
             "all good here", "surviving, mostly", "better now that it's nearly the weekend",
             "good, it's been a strange few days",
             "really good actually", "can't complain", "doing alright, the week flew by", "great timing, I was bored",
             "so glad you messaged", "hanging in there", "pretty chilled today", "a bit frazzled but fine",
             "good, I just got home", "not too bad", "busy but happy", "oh, you know, the usual",
             "much better than last week"]
GO_REASON = ["go start dinner", "get some sleep", "pick something up from the shop", "head out",
             "jump on a call", "take the bins out", "get ready for work", "finish some chores",
             "get to the shops before they close", "go rescue dinner", "call my mum back", "catch my bus"]
GO_PRE = ["Okay, I have to", "Right, I'd better", "Ah, I need to", "Sorry, I should", "Oops, I have to",
          "I'm going to have to"]
GO_END = ["talk soon!", "speak later!", "catch up properly soon!", "let's chat again soon!", "more soon!",
          "bye for now!"]
BYE = (["Bye", "Okay", "No worries", "Go go", "Sure thing", "Of course", "Aw okay", "Speak soon"],
       ["take care!", "have a good evening!", "good luck with everything!", "talk soon!", "say hi to everyone!",
        "enjoy the rest of your day!", "miss you already!", "message me later!", "don't be a stranger!"])


# --------------------------------------------------------------------------------------------------------------
# life threads
#
# An event: ``s`` its wordings (``{d}`` the detail asked about, ``{when}``/``{When}`` the time expression, profile
# slots such as ``{partner}``, ``{kid}``, ``{pet}``, ``{sib}``, ``{d0}`` another event's detail), ``d`` the
# details per split (or ``"@k"``: event k's pool, another value), ``q`` questions in other words, ``l`` the
# literal question, ``w`` the "when" question, ``r`` the other friend's reactions, ``m`` the owner's follow-ups,
# ``t`` past or future, ``v`` "+" or "-", ``opt`` the chance the event happens, ``upd`` the event it updates
# (its ``q`` then asks the latest value). In threads shared by both splits, dev takes the even wordings and
# questions, test the odd ones. ``near``: (who, event, template with ``{o}``, another detail): "x" said by the
# other friend about themself, "o" by the owner (a plan, another time), "a" by either (someone else's news).


def E(s: list[str], d: Any, q: list[str] | None = None, l: str | None = None, w: str | None = None,  # noqa: E741
      r: list[str] | None = None, m: list[str] | None = None, t: str = "past", v: str = "+", opt: float = 1.0,
      upd: int | None = None) -> dict[str, Any]:
    return {"s": s, "d": d, "q": q or [], "l": l, "w": w, "r": r or [], "m": m or [], "t": t, "v": v, "opt": opt,
            "upd": upd}


def T(key: str, split: str, events: list[dict[str, Any]], multi: list[tuple[Any, tuple[int, ...]]] | None = None,
      open_: list[tuple[Any, tuple[int, ...], str]] | None = None,
      near: list[tuple[str, int, str]] | None = None, talk: list[str] | None = None, cb: list[str] | None = None,
      ask: list[str] | None = None, needs: str | None = None, gap: int = 10) -> dict[str, Any]:
    return {"key": key, "split": split, "events": events, "multi": multi or [], "open": open_ or [],
            "near": near or [], "talk": talk or [], "cb": cb or [], "ask": ask or [], "needs": needs, "gap": gap}


def D(dev: list[str], test: list[str]) -> dict[str, list[str]]:
    return {"dev": dev, "test": test}


THREADS: list[dict[str, Any]] = [
    T("painting", "both", [
        E(["I finally finished {d} {when}, it's hanging above the sofa now.",
           "{When} I put the last brushstrokes on {d} and hung it over the fireplace.",
           "Guess who finished {d} {when}? It's framed and on the living room wall!",
           "{When} I signed the corner of {d}, so that one's officially done and up on the wall."],
          D(["a sunset over the lake", "a portrait of my grandmother", "a field of sunflowers", "the old pier at dusk"],
            ["a stormy harbour", "a bowl of lemons", "the mill by the river", "a night sky full of stars"]),
          ["What artwork did {n} complete recently?", "Which picture of {n}'s is now on display at home?"],
          "What did {n} paint for the living room?", "When did {n} finish painting {d}?",
          ["{D}? I need to see a photo!", "Wait, it's done already? You work so fast.", "Framed and everything, fancy!",
           "I bet it looks incredible up there."],
          ["It took about three months, on and off.", "I almost gave up on it twice, the colours kept going muddy.",
           "{partner} says it's the best thing I've done.", "I'm already itching to start the next one."]),
        E(["Someone bought {d} at the craft market {when}, my first sale ever!",
           "{When} a woman at the craft fair paid actual money for {d}, I'm still in shock.",
           "{When} a stranger at the Sunday market handed me cash for {d}, can you believe it?",
           "I sold {d} {when} at the craft fair, to a lovely retired teacher."],
          D(["my little fox painting", "the blue heron canvas", "my watercolour of the bridge",
             "the lighthouse canvas"],
            ["my owl sketch", "the tulip canvas", "my watercolour of the bay", "the little boat painting"]),
          ["Which of {n}'s pieces found a buyer?", "What work of {n}'s did somebody purchase?"],
          "What did {n} sell at the craft market?", "When did {n} sell {d}?",
          ["Your first sale! That's a huge deal.", "Someone paid for it? Of course they did, your stuff is gorgeous.",
           "A real customer! How much did you charge?"],
          ["I priced it way too low, but I didn't care.", "She said it reminded her of her childhood.",
           "I might do a stall every month now."]),
        E(["I signed up for a {d} class at the community centre, it starts {when}.",
           "I've booked a spot on a {d} workshop series, the first session is {when}.",
           "I'm doing a {d} evening class at the college, we begin {when}.",
           "There's a {d} group at the library and I start {when}."],
          D(["watercolour", "portrait painting", "life drawing"], ["paint pouring", "charcoal drawing", "printmaking"]),
          ["What sort of art lessons is {n} about to take?", "Which kind of art course has {n} enrolled in?"],
          "What class did {n} sign up for?", "When does {n}'s {d} class start?",
          ["Oh fun, {d}! Is it a beginners' group?", "You'll probably end up teaching it.",
           "{D}, that's perfect for you."],
          ["It's eight weeks, every Tuesday.", "The teacher is apparently quite strict.",
           "I'm nervous I'll be the worst one there."], t="future"),
        E(["Small change: the {d2} class was full, so I've switched to {d} instead, starting {when}.",
           "I'm not doing {d2} after all, I swapped to {d}, which begins {when}.",
           "The {d2} group got cancelled, so {when} I start {d} instead.",
           "Update on the classes: {d} instead of {d2}, first one is {when}."],
          "@2", ["What sort of art lessons is {n} taking in the end?",
          "Which kind of art course is {n} doing after all?"],
          None, "When does {n}'s {d} class start?",
          ["Honestly {d} sounds even better.", "Ooh, {d}! Good swap."], ["The teacher for this one is lovely."],
          t="future", opt=0.5, upd=2),
    ], multi=[(["What has {n} painted?", "Which paintings of {n}'s have come up?"], (0, 1))],
        open_=[(["Would {n} enjoy an afternoon at a gallery?", "Would {n} like a museum visit full of landscapes?"],
                (0, 1), "Likely yes: {n} paints ({d0}) and has even sold a piece ({d1}).")],
        near=[("x", 0, "I tried painting {o} once and it looked like a potato."),
              ("a", 0, "{fr} is painting {o} for a competition, it's stunning already."),
              ("o", 2, "I nearly took {o} lessons years ago but chickened out.")],
        talk=["My brushes are a disaster, I really need to clean them properly.",
              "I've run out of white paint again, it goes so fast.", "Some days I stare at a blank canvas for an hour.",
              "The evening light is perfect for painting right now.",
              "I carry a sketchbook everywhere now, just in case."],
        cb=["How's the painting going?", "Have you started anything new on the canvas front?",
            "Are you still painting in the evenings?"],
        ask=["Have you had any time to paint?", "How's the art going?"]),
    T("running", "both", [
        E(["I ran the {d} {when} and raised money for the children's hospital.",
           "{When} I did the {d}, all for the children's hospital.",
           "So I actually finished the {d} {when}, we raised a load for the children's hospital!",
           "{When} was the {d}, and I crossed the line for the children's hospital."],
          D(["Riverside 10k", "Harbour Half Marathon", "Maple Leaf 5k", "Lakeshore 10 miler"],
            ["Castle Hill 10k", "Sunrise Half Marathon", "Old Town 5k", "Bayfront 10 miler"]),
          ["Which charity event on foot did {n} complete?", "What fundraising race did {n} take part in?"],
          "Which race did {n} run for the children's hospital?", "When did {n} run the {d}?",
          ["The {d}? In this weather? You're a machine.", "You did it! How are your legs?",
           "For the children's hospital, that's so lovely."],
          ["My legs are still aching.", "The last stretch nearly killed me.",
           "{partner} was at the finish with a homemade sign, I cried a bit.", "We raised way more than I expected."]),
        E(["New personal best at parkrun {when}: {d}!",
           "I knocked my parkrun time down to {d} {when}, can you believe it?",
           "{When} I got a parkrun PB, {d}!", "My watch says {d} for parkrun {when}, a new best."],
          D(["24 minutes 10 seconds", "26 minutes 45 seconds", "25 minutes flat", "24 minutes 40 seconds"],
            ["25 minutes 5 seconds", "27 minutes 20 seconds", "26 minutes 30 seconds", "28 minutes flat"]),
          ["How quick was {n}'s fastest timed jog?", "What's {n}'s record over five kilometres?"],
          "What was {n}'s new parkrun personal best?", "When did {n} set the {d} parkrun personal best?",
          ["That's so fast! I'd be walking by the second kilometre.", "A personal best, get in!",
           "You've been training hard, it shows."],
          ["I nearly threw up at the end, but worth it.", "The trick was not starting too fast.",
           "I've been doing intervals twice a week."]),
        E(["I joined the {d} {when}, we meet on Tuesday evenings.",
           "{When} I went along to the {d} for the first time and signed up on the spot.",
           "I'm officially in the {d}, I paid the fee {when}.",
           "{When} I finally joined the {d}, they do hill sprints on Thursdays."],
          D(["Hillside Harriers", "Canal Striders", "Northside Road Runners"],
            ["Northgate Pacers", "Old Mill Joggers", "Riverbank Flyers"]),
          ["Which group does {n} now train with?", "What athletics crew did {n} become part of?"],
          "Which running club did {n} join?", "When did {n} join the {d}?",
          ["The {d}! Are they serious runners or the chatty kind?", "A club, look at you!",
           "Tuesday evenings, that's a commitment."],
          ["They go for pizza afterwards, which sealed the deal.",
           "Half of them are retired and twice as fast as me."]),
        E(["Smashed my parkrun record again {when}, it's {d} now!",
           "Another parkrun PB {when}: {d}. I'm getting addicted.",
           "{When} I beat my parkrun best again, {d}!", "I went under my old parkrun best {when}, {d} this time."],
          D(["22 minutes 55 seconds", "23 minutes 5 seconds", "21 minutes 40 seconds", "23 minutes 50 seconds"],
            ["23 minutes 40 seconds", "24 minutes 15 seconds", "22 minutes 50 seconds", "24 minutes 55 seconds"]),
          ["What is {n}'s quickest timed jog these days?", "What is {n}'s current record over five kilometres?"],
          None, "When did {n} improve the parkrun record again?",
          ["Again? You're unstoppable.", "Another one! What's your secret?"],
          ["I think the new shoes are helping.", "I'm aiming for a round number next."], opt=0.6, upd=1),
    ], multi=[(["Which races and clubs has {n} been involved with?",
                "What running events and teams has {n} been part of?"],
               (0, 2))],
        open_=[(["Would {n} be up for a sponsored mountain trek?", "Would {n} enjoy a weekend hiking trip?"], (0, 2),
                "Likely yes: {n} runs races ({d0}) and trains with a club ({d2}).")],
        near=[("x", 0, "I did the {o} years ago and walked most of it."),
              ("a", 0, "{fr} is training for the {o} and talks about nothing else."),
              ("o", 2, "I almost joined the {o} last year, but they meet at six in the morning.")],
        talk=["My knees are complaining after all the miles.", "I need new trainers, mine are falling apart.",
              "Running in the rain is weirdly underrated.", "I skipped my run this morning, it was too cold.",
              "I've started stretching properly, it helps."],
        cb=["How's the running going?", "Are you still getting up early to run?", "Have you been out running much?"],
        ask=["Have you been running much?", "How's the training going?"]),
    T("job", "both", [
        E(["{When} they called to offer me the job as {d}, and I said yes on the spot!",
           "I had the final interview {when} and they offered me the position, I'm going to be {d}!",
           "So {when} I accepted an offer to work as {d}.",
           "The letter came {when}: I'm officially {d} from next month."],
          D(["a counsellor at the youth centre", "a junior architect", "a pharmacist at the hospital",
             "an editor at a travel magazine"],
            ["a data analyst at the museum", "a nurse on the children's ward", "a sound engineer at the theatre",
             "a surveyor for the council"]),
          ["What new role did {n} land?", "What is {n}'s new line of employment?"],
          "What job was {n} offered?", "When did {n} get the offer to work as {d}?",
          ["{D}! That's perfect for you.", "Wait, the job you were nervous about? Amazing!", "I knew they'd pick you."],
          ["The pay is better and the commute is shorter.", "I have to hand in my notice on Monday, eek.",
           "{partner} opened a bottle of something fizzy when I told them.",
           "I start after a two-week break, which I really need."]),
        E(["My manager put me in charge of the {d} {when}, which is terrifying.",
           "{When} my boss handed me the {d} to lead.",
           "They announced {when} that I'm leading the {d}.",
           "{When} I found out I'm heading the {d}, so that's my next six months."],
          D(["library renovation project", "new mentoring scheme", "spring conference", "website redesign"],
            ["payroll migration", "volunteer portal", "summer exhibition", "office move"]),
          ["What has {n} been asked to head up at work?", "Which work initiative is {n} now responsible for?"],
          "What is {n} leading at work?", "When was {n} put in charge of the {d}?",
          ["Leading the {d}? They clearly trust you.", "Terrifying but exciting, right?",
           "That's a big vote of confidence."],
          ["I have a team of four, two of them older than me.",
           "The first meeting is on Thursday and I've rewritten my notes five times.",
           "If it goes well it could mean a promotion."]),
        E(["I passed my {d} exam {when}, all those late nights paid off.",
           "{When} I got the results: I passed the {d} exam!",
           "{When} the email came through, I passed the {d} exam first time.",
           "I found out {when} that I passed the {d} exam, I screamed in the car park."],
          D(["counselling", "project management", "first aid instructor", "advanced spreadsheet"],
            ["accounting", "health and safety", "food hygiene", "coaching"]),
          ["Which professional qualification did {n} earn?", "What test did {n} get through at last?"],
          "Which exam did {n} pass?", "When did {n} pass the {d} exam?",
          ["You passed! Never doubted it.", "All that studying, it paid off!", "Certified! That calls for cake."],
          ["I got the highest mark in my group, which shocked me.",
           "I'm framing the certificate, I don't care if that's cheesy."]),
        E(["The {d1} got shelved {when}, so now I'm leading the {d} instead.",
           "Work news: {when} they moved me off the {d1} and onto the {d}.",
           "{When} my boss scrapped the {d1}, and I've been handed the {d} instead.",
           "So the {d1} is dead, and {when} I started running the {d}."],
          "@1", ["What has {n} been asked to head up at work now?",
          "Which work initiative is {n} responsible for now?"],
          None, "When did {n} switch to leading the {d}?",
          ["The {d}? Their loss on the other one.", "All change! Are you okay with it?"],
          ["Honestly the {d1} was a mess anyway.", "New project, new spreadsheet."], opt=0.5, upd=1),
    ], multi=[(["What has changed in {n}'s working life?", "What's new in {n}'s career?"], (0, 1)),
              (["What has {n} achieved at work?", "What work milestones has {n} reached?"], (1, 2))],
        open_=[(["Is {n} ambitious about {pos} career?", "Is {n} likely to go for a promotion soon?"], (0, 1, 2),
                "Likely yes: {n} took a new job as {d0}, leads the {d1} and passed an exam.")],
        near=[("x", 0, "I applied to be {o} once and they never even replied."),
              ("a", 0, "{fr} just started as {o} and already hates the hours."),
              ("o", 1, "They almost gave me the {o} instead, thank goodness they didn't.")],
        talk=["Work has been a lot this month.", "My manager keeps scheduling meetings at five, it drives me mad.",
              "The office coffee machine is broken again.", "I'm trying not to check emails after seven."],
        cb=["How's work going?", "Are you settling in at work?", "How's the new role treating you?"],
        ask=["How's work?", "Any news on the job front?"]),
    T("camping", "both", [
        E(["We went camping at {d} {when}, the stars were unreal.",
           "{When} we pitched the tent at {d} and toasted marshmallows until midnight.",
           "We slept in a tent at {d} {when}, freezing but magical.",
           "{When} we camped by the water at {d}, and {partner} caught a fish!"],
          D(["Big Sur", "Lake Tahoe", "Yosemite", "the Blue Ridge Mountains"],
            ["the Lake District", "Snowdonia", "the Cairngorms", "Loch Lomond"]),
          ["Where did {n} first sleep outdoors?", "Where did {n} go under canvas earliest?"],
          "Where did {n} go camping first?", "When did {n} go camping at {d}?",
          ["{D}! I've always wanted to go there.", "Camping in this weather? Brave.",
           "Marshmallows and stars, that sounds perfect."],
          ["We forgot the tent pegs and had to use rocks.", "{partner} snored so loudly I think the owls left.",
           "I woke up with frost on my sleeping bag."]),
        E(["We took the tent up to {d} {when} and woke up to deer right outside.",
           "{When} we drove up to {d} with the tent, no phone signal for two whole days.",
           "Our second camping trip of the year was at {d} {when}, much warmer this time.",
           "We slept by a campfire at {d} {when}, I still smell of smoke."],
          "@0", None, None, "When did {n} take the tent to {d}?",
          ["Deer! That's so magical.", "No signal sounds like heaven honestly.", "You two are such outdoorsy people."],
          ["We're already talking about the next one.", "I didn't miss my phone at all, which scared me."]),
        E(["We bought {d} for the camping trips, best money I've spent in ages.",
           "I finally got {d} for camping, it arrived {when}.",
           "{partner} surprised me with {d} for our camping trips.",
           "{When} I splurged on {d}, camping is about to get luxurious."],
          D(["a two-person tent", "a camping stove", "a pair of hiking poles"],
            ["a folding kayak", "a solar lantern", "a hammock with a mosquito net"]),
          ["What outdoor equipment did {n} pick up?", "What new outdoor equipment does {n} own?"],
          "What did {n} buy for camping?", None,
          ["Ooh, fancy! You're going pro.", "That's going to make such a difference."],
          ["I've set it up in the living room twice already.", "The reviews were amazing, so fingers crossed."],
          opt=0.5),
    ], multi=[(["Where has {n} camped?", "Which places has {n} gone camping?"], (0, 1))],
        open_=[(["Would {n} enjoy a week in a remote cabin with no wifi?", "Is {n} the outdoorsy type?"], (0, 1),
                "Likely yes: {n} goes camping ({d0}, {d1}).")],
        near=[("x", 0, "We used to camp at {o} when I was little, it rained every single time."),
              ("o", 0, "We wanted to go to {o} but every campsite was booked."),
              ("a", 0, "{fr} just got back from {o} and won't stop posting photos.")],
        talk=["Camping gear is so expensive now.", "I still have sand in the car from the last trip.",
              "Sleeping on the ground is harder than it used to be.",
              "I could really use a weekend away from screens."],
        cb=["Any more camping trips planned?", "Have you dried the tent out yet?"],
        ask=["Did you get away at all?", "Been anywhere nice lately?"]),
    T("school", "both", [
        E(["{kid} started at {d} {when}, {kid_pr} was so brave at the gate.",
           "{When} was {kid}'s first day at {d}, I cried more than {kid_pr} did.",
           "{kid} began at {d} {when} and came home full of stories.",
           "{When} I dropped {kid} off at {d} for the first time, {kid_pr} didn't even look back."],
          D(["Maple Grove Elementary", "Oakwood Primary", "Cedar Hill School", "Brookfield Academy"],
            ["St Anne's Primary", "Brookside School", "Hollybank Primary", "Elmwood Academy"]),
          ["Which place does {n}'s {kid_rel} attend for lessons now?", "Where is {n}'s {kid_rel} being taught now?"],
          "Which school did {n}'s {kid_rel} start at?", "When did {n}'s {kid_rel} start at {d}?",
          ["Aw, first day! Did {kid_pr} like the teacher?", "{D}, that's the one with the big playground, right?",
           "Bless, {kid_pr}'s growing up so fast."],
          ["{Kid_pr} made a friend called Sam on day one.", "The uniform is enormous on {kid_obj}.",
           "{Kid_pr} already wants to be class monitor."]),
        E(["{kid} came home with a blue ribbon for {kid_pos} {d} {when}!",
           "{When} {kid}'s {d} took the top spot at the science fair, {kid_pr} was over the moon.",
           "The judges picked {kid}'s {d} as the best in the year {when}.",
           "{kid} won the science fair with {kid_pos} {d} {when}, we're framing the certificate."],
          D(["volcano model", "solar system mobile", "potato battery", "bridge made of lolly sticks"],
            ["wind turbine model", "working lemon clock", "model ant farm", "homemade rain gauge"]),
          ["What did {n}'s {kid_rel} get an award for?", "Which project brought {n}'s {kid_rel} a prize?"],
          "What did {n}'s {kid_rel} win at the science fair with?", "When did {n}'s {kid_rel} win with the {d}?",
          ["A {d}? That's genius.", "A ribbon, tell {kid_obj} I said well done!", "Future scientist right there."],
          ["We spent three evenings on it, the kitchen is still a mess.",
           "{Kid_pr} explained it to the judges like a tiny professor.",
           "{Kid_pr}'s insisting on doing another one next year."]),
        E(["{kid} joined the {d} {when}, {kid_pr} loves it already.",
           "{When} {kid} had {kid_pos} first {d} session, now {kid_pr} won't stop talking about it.",
           "We signed {kid} up for the {d} {when}, it's Saturday mornings.",
           "{When} {kid} went to {kid_pos} first {d} practice and came home exhausted."],
          D(["junior swim squad", "chess club", "kids' choir", "junior football team"],
            ["gymnastics club", "drama group", "junior rugby team", "coding club"]),
          ["What after-school activity has {n}'s {kid_rel} taken up?",
           "Which hobby has {n}'s {kid_rel} started doing?"],
          "What did {n}'s {kid_rel} join?", "When did {n}'s {kid_rel} start the {d}?",
          ["The {d}! Is {kid_pr} any good?", "Aw, that's so sweet.", "That'll tire {kid_obj} out nicely."],
          ["The coach says {kid_pr} has real potential, though maybe they say that to everyone.",
           "{Kid_pr} practises in the living room every night."]),
        E(["{kid} quit the {d2} {when} and joined the {d} instead.",
           "{When} {kid} swapped the {d2} for the {d}, no looking back.",
           "{kid} has had enough of the {d2}, so {when} {kid_pr} started the {d} instead.",
           "No more {d2} for {kid}, {kid_pr} switched to the {d} {when}."],
          "@2", ["What after-school activity does {n}'s {kid_rel} do now?",
                 "Which hobby has {n}'s {kid_rel} moved on to?"],
          None, "When did {n}'s {kid_rel} switch to the {d}?",
          ["Kids change their minds so fast.", "The {d}, that sounds more fun anyway."],
          ["{Kid_pr}'s much happier, so that's what matters."], opt=0.5, upd=2),
    ], multi=[(["What has {n}'s {kid_rel} been up to?", "What's been going on with {n}'s {kid_rel}?"], (0, 1, 2)),
              (["What has {n}'s {kid_rel} achieved or joined?", "What has {n}'s {kid_rel} won or signed up for?"],
               (1, 2))],
        open_=[(["Does {n} seem like a proud, involved parent?",
                 "Is {n} closely involved in the child's life?"], (0, 1),
                "Yes: {n} follows {kid}'s start at {d0} and the science fair ({d1}) closely.")],
        near=[("x", 0, "My nephew started at {o} this year and hated the first week."),
              ("a", 1, "{fr}'s son built a {o} for the fair too, it fell apart in the car."),
              ("o", 2, "We nearly signed {kid} up for the {o} instead, but the times didn't work.")],
        talk=["School runs in the rain are the worst.",
              "Homework is getting harder, I can't help with the maths anymore.",
              "{kid} wants a trampoline now.", "Parenting is exhausting but I love it."],
        cb=["How's {kid} getting on at school?", "Is {kid} still loving school?"],
        ask=["How are the kids?", "How's {kid} doing?"], needs="kid"),
    T("pet", "both", [
        E(["We adopted a {d} from the shelter {when}, we named {pet_obj} {pet}.",
           "{When} we brought home a {d} from the rescue centre, meet {pet}!",
           "Big news: {when} we picked up a {d} puppy called {pet}.",
           "{When} {pet} the {d} came home with us from the shelter."],
          D(["beagle", "border collie", "golden retriever", "dachshund"], ["spaniel", "greyhound", "whippet", "corgi"]),
          ["What kind of dog does {n} have now?", "Which breed did {n}'s household welcome?"],
          "What dog did {n} adopt from the shelter?", "When did {n} adopt {pet}?",
          ["A {d}! Send pictures immediately.", "{pet} is the perfect name.", "Oh my heart, a rescue dog."],
          ["{Pet_pr} slept on my feet the whole first night.", "{Pet_pr}'s already chewed one of {partner}'s slippers.",
           "The shelter said {pet_pr} was there for eight months and nobody wanted {pet_obj}."]),
        E(["{pet} ate {d} off the counter {when}, we had to rush to the vet.",
           "{When} {pet} got hold of {d} and we spent the evening at the emergency vet.",
           "So {when} {pet} wolfed down {d} while we weren't looking, cue a very expensive vet visit.",
           "{When} I turned my back for a second and {pet} swallowed {d}, the vet was not impressed."],
          D(["a whole loaf of bread", "my birthday cake", "a sock", "a bar of dark chocolate"],
            ["a bag of grapes", "the Sunday roast", "a tennis ball", "half a packet of butter"]),
          ["Why did {n}'s dog need urgent medical attention?", "What did {n}'s dog eat that caused a scare?"],
          "What did {pet} eat off the counter?", "When did {pet} end up at the vet?",
          ["Oh no, poor {pet}! Is {pet_pr} okay?", "{D}? That dog has no shame.", "The vet bills must be brutal."],
          ["{Pet_pr}'s fine now, totally unbothered.", "We've put a lock on the kitchen cupboard.",
           "The vet said we were lucky."], v="-"),
        E(["{pet} passed {pet_pos} {d} course {when}, {pet_pr} can finally sit and stay!",
           "{When} {pet} graduated from {d} classes, there was a tiny certificate.",
           "{pet} finished the {d} course {when}, top of the class apparently.",
           "{When} was {pet}'s last {d} lesson and {pet_pr} actually behaved."],
          D(["puppy obedience", "agility", "basic manners"], ["recall training", "good citizen", "scent work"]),
          ["Which lessons did {n}'s dog complete?", "Which schooling did {n}'s dog get through?"],
          "Which training course did {pet} pass?", "When did {pet} finish the {d} course?",
          ["Sit and stay, impressive!", "{pet} the scholar.", "A certificate for a dog, I love it."],
          ["Now if only {pet_pr} would stop barking at the postman.", "The treats bill was enormous."]),
    ], multi=[(["What has happened with {n}'s dog?", "What do we know about {n}'s dog?"], (0, 1, 2))],
        open_=[(["Would {n} be a good person to look after an animal for a week?", "Is {n} patient with animals?"],
                (0, 2), "Likely yes: {n} adopted a {d0} and got it through {d2} training.")],
        near=[("x", 0, "My cousin got a {o} last year and it's the naughtiest thing alive."),
              ("o", 0, "We almost went for a {o}, but {pet} picked us."),
              ("a", 1, "{fr}'s dog once ate {o}, so {pet} is in good company.")],
        talk=["Dog hair everywhere, as usual.", "We walk past the park every morning, it's our routine now.",
              "I need to buy more dog food.", "{pet} has decided the sofa belongs to {pet_obj} now."],
        cb=["How's {pet} doing?", "Is {pet} behaving?"], ask=["How's the dog?"]),
    T("music", "both", [
        E(["I started {d} lessons {when}, my teacher says I have a good ear.",
           "{When} I had my first {d} lesson, my fingers hurt so much.",
           "I've taken up the {d}, my first lesson was {when}.",
           "{When} I finally bought a secondhand {d} and booked lessons."],
          D(["violin", "cello", "piano", "saxophone"], ["clarinet", "banjo", "ukulele", "trumpet"]),
          ["Which instrument is {n} learning to play?", "What is {n} being taught to play?"],
          "What instrument did {n} start lessons on?", "When did {n} start {d} lessons?",
          ["The {d}! I didn't know you were musical.", "A good ear, I'm not surprised.",
           "Will you play me something next time?"],
          ["I practise after dinner, the neighbours haven't complained yet.",
           "It sounds like a dying goose at the moment.", "My teacher is about eighty and terrifying."]),
        E(["We saw {d} live {when}, best show of my life.",
           "{When} we went to see {d} at the arena, I've lost my voice from singing.",
           "I finally saw {d} in concert {when}, front row!",
           "{When} {partner} surprised me with tickets to {d}, we danced all night."],
          D(["the Lumineers", "Fleetwood Mac's tribute band", "Norah Jones", "the Black Keys"],
            ["Florence and the Machine", "Arctic Monkeys", "Coldplay", "the Proclaimers"]),
          ["Which act did {n} watch perform?", "What gig did {n} attend?"],
          "Which band did {n} see in concert?", "When did {n} see {d}?",
          ["{D}? So jealous!", "Best show of your life, that's a big claim.", "Did they play all the old ones?"],
          ["My ears are still ringing.", "We queued for an hour for merch and it was worth it.",
           "I cried during the encore, no shame."]),
        E(["I played {d} at the open mic night {when}, my hands were shaking.",
           "{When} I got up at the café open mic and did {d}.",
           "I performed {d} in front of actual people {when}, at the open mic!",
           "{When} I did {d} at the pub's open mic, someone even clapped along."],
          D(["Moon River", "Hallelujah", "Blackbird", "Landslide"], ["Wonderwall", "Fast Car", "Jolene", "Vincent"]),
          ["Which tune did {n} share with an audience?", "What number did {n} sing for strangers?"],
          "What did {n} play at the open mic night?", "When did {n} play at the open mic?",
          ["{D}! Bold choice.", "Shaking hands but you did it, that's what counts.",
           "Was there a video? Please say there's a video."],
          ["I forgot the second verse and just hummed.", "The barman gave me a free drink afterwards.",
           "I'm already thinking about next month's."]),
        E(["I've given up on the {d0}, {when} I switched to {d} lessons instead.",
           "{When} I swapped the {d0} for the {d}, my teacher says it suits me better.",
           "Confession: the {d0} wasn't for me, so {when} I started on the {d}.",
           "{When} I sold the {d0} and started {d} lessons, much happier now."],
          "@0", ["Which instrument is {n} learning to play now?", "What is {n} being taught to play these days?"],
          None, "When did {n} switch to the {d}?",
          ["The {d}? That's a big switch.", "Honestly, good call."], ["My fingers are relieved."], opt=0.5, upd=0),
    ], multi=[(["What has {n} done with music lately?", "What musical things has {n} been up to?"], (0, 1, 2)),
              (["Which live music has {n} seen or played?", "What live music has {n} been part of?"], (1, 2))],
        open_=[(["Would {n} like a ticket to a jazz festival?", "Would {n} enjoy a weekend of live bands?"], (0, 1),
                "Likely yes: {n} is learning the {d0} and loved seeing {d1} live.")],
        near=[("x", 0, "I did {o} lessons as a kid and quit after a month."),
              ("a", 1, "{fr} saw {o} last year and hasn't shut up about it."),
              ("o", 1, "We nearly got tickets for {o} but they sold out in minutes.")],
        talk=["I've had the same album on repeat all week.", "Concert tickets are so expensive now.",
              "Music is the only thing that gets me through the commute.", "I should practise more, I've been lazy."],
        cb=["How are the music lessons going?", "Are you still practising every day?"]),
    T("garden", "both", [
        E(["The {d} I planted in spring finally gave their first crop {when}.",
           "{When} I picked the first {d} from the garden, they taste amazing.",
           "We had our own {d} for dinner {when}, grown in the back garden!",
           "{When} the first {d} were ready, I was out there at dawn picking them."],
          D(["tomatoes", "strawberries", "green beans", "courgettes"],
            ["raspberries", "runner beans", "cucumbers", "peppers"]),
          ["What has {n} been harvesting at home?", "Which produce has {n} been growing?"],
          "What did {n} plant in the spring?", "When did {n} pick the first {d}?",
          ["Homegrown {d}! Save me some.", "Nothing tastes better than your own.", "You've got proper green fingers."],
          ["The slugs got a few, but we won the war.", "We've got so many I'm giving them to the neighbours."]),
        E(["I built a {d} in the back garden {when}, my arms are killing me.",
           "{When} {partner} and I finished putting up a {d}, it only took three weekends.",
           "We put together a {d} at the bottom of the garden {when}.",
           "{When} the {d} finally went up in the garden, I'm so proud of it."],
          D(["greenhouse", "chicken coop", "raised vegetable bed", "garden shed"],
            ["pond", "potting shed", "pergola", "compost bay"]),
          ["What did {n} construct in the yard?", "What new addition did {n} make behind the house?"],
          "What did {n} build in the back garden?", "When did {n} finish building the {d}?",
          ["A {d}? You're basically a farmer now.", "Well spent, I'd say!", "Can I come and see it?"],
          ["I've never used a drill so much in my life.", "The neighbours keep peeking over the fence."]),
    ], multi=[(["What has {n} grown and built in the garden?", "What has {n} done in the garden?"], (0, 1))],
        open_=[(["Would {n} enjoy a visit to a botanical garden?", "Would {n} like a trip to a flower show?"], (0, 1),
                "Likely yes: {n} grows {d0} and built a {d1}.")],
        near=[("x", 0, "I tried growing {o} on the balcony and got exactly three."),
              ("o", 1, "We talked about a {o} too, maybe next year."),
              ("a", 0, "My neighbour grows the best {o} on our street.")],
        talk=["The slugs are eating everything.", "I spent the afternoon weeding.",
              "It hasn't rained in weeks, the lawn is brown.",
              "Gardening is the only thing that switches my brain off."],
        cb=["How's the garden looking?", "Is the garden surviving the weather?"]),
    T("volunteer", "both", [
        E(["I volunteered at the {d} {when}, we served two hundred meals.",
           "{When} I did a shift at the {d}, my feet are destroyed.",
           "I helped out at the {d} {when}, it was humbling.",
           "{When} I signed up for a shift at the {d} and I'm going back next week."],
          D(["food bank", "homeless shelter", "animal rescue", "community kitchen"],
            ["soup kitchen", "night shelter", "refugee centre", "hospice shop"]),
          ["Where has {n} been giving time for free?", "Which charity did {n} lend a hand at?"],
          "Where did {n} volunteer?", "When did {n} volunteer at the {d}?",
          ["That's so good of you.", "The {d} is lucky to have you.", "You always make time for other people."],
          ["Everyone there was so kind.", "I'm going to try to do it once a month."]),
        E(["I went to the {d} support group {when}, it was so powerful hearing everyone's stories.",
           "{When} I finally went to the {d} support group, I cried, but in a good way.",
           "I sat in on the {d} support meeting {when}, I'm going again.",
           "{When} was my first {d} support group, everyone was so welcoming."],
          D(["LGBTQ", "grief", "new parents", "anxiety"], ["carers", "bereavement", "chronic pain", "sobriety"]),
          ["What kind of peer circle did {n} join?", "Which sort of gathering has {n} been attending for help?"],
          "Which support group did {n} go to?", "When did {n} go to the {d} support group?",
          ["I'm really glad you went.", "That takes courage.", "It helps to hear other people's stories, doesn't it?"],
          ["It made me feel a lot less alone.", "There's a meeting every other Thursday."]),
        E(["Our bake sale for the {d0} raised {d} {when}!",
           "{When} we counted the money from the quiz night: {d} for the {d0}!",
           "The sponsored walk for the {d0} brought in {d}, we finished {when}.",
           "{When} the raffle for the {d0} closed, {d} in total!"],
          D(["four hundred dollars", "six hundred dollars", "nine hundred dollars"],
            ["three hundred pounds", "five hundred pounds", "eight hundred pounds"]),
          ["How much did {n}'s fundraiser bring in?", "What total did {n}'s charity evening collect?"],
          "How much did {n}'s fundraiser raise?", "When did {n}'s fundraiser finish?",
          ["{D}! That's amazing.", "All that effort paid off."],
          ["My feet hurt from standing all day.", "We've already been asked to do another one."], opt=0.6),
    ], multi=[(["How has {n} helped in the community?", "What has {n} done to give back?"], (0, 1)),
              (["What has {n} done for the {d0}?", "How has {n} supported the {d0}?"], (0, 2))],
        open_=[(["Does {n} care about helping others?", "Would {n} sign up to mentor a teenager?"], (0, 1),
                "Likely yes: {n} volunteers at the {d0} and goes to a {d1} support group.")],
        near=[("x", 0, "I keep meaning to volunteer at the {o} but I never have time."),
              ("a", 0, "{fr} runs the {o} on our street, what a legend."),
              ("o", 1, "Someone suggested the {o} group too, but one is enough for now.")],
        talk=["I want to give back more this year.", "Volunteering is harder to fit in than I thought.",
              "I donated a bag of clothes today.", "Support from friends means a lot right now."],
        cb=["Are you still volunteering?", "How are the group meetings going?"]),
    T("cooking", "both", [
        E(["I made {d} from scratch for the family dinner {when}, it took all afternoon.",
           "{When} I attempted {d} from scratch and it actually worked!",
           "I cooked {d} completely from scratch {when}, everyone had seconds.",
           "{When} I spent hours making {d} by hand and nobody left a crumb."],
          D(["lasagne", "dumplings", "a beef wellington", "fresh pasta"], ["paella", "ramen", "a chicken pie",
             "gnocchi"]),
          ["What dish did {n} prepare for the whole table?", "Which meal did {n} manage to pull off?"],
          "What did {n} make from scratch?", "When did {n} make {d} from scratch?",
          ["{D} from scratch? Who are you?", "Save me a plate next time!", "That's the best kind of review."],
          ["The kitchen looked like a bomb went off.", "I used my grandmother's recipe, with a few shortcuts.",
           "I'm never doing it again, probably."]),
        E(["I entered my {d} in the bake-off at the fair {when} and came second!",
           "{When} my {d} won a rosette at the village bake-off.",
           "I took my {d} to the bake-off {when}, second place!",
           "{When} the judges at the bake-off tasted my {d} and gave me a ribbon."],
          D(["lemon drizzle cake", "apple pie", "chocolate babka", "cherry tart"],
            ["carrot cake", "cinnamon buns", "Victoria sponge", "treacle tart"]),
          ["Which dessert earned {n} recognition at the contest?", "Which dessert brought {n} an award?"],
          "What did {n} enter in the bake-off?", "When did {n} enter the bake-off?",
          ["Second place? Robbed, probably.", "{D}? I'd have given you first.", "A rosette! Frame it."],
          ["The winner was a ninety-year-old man, so no shame.", "I'm already planning next year's entry."]),
        E(["{partner} and I did a {d} cooking class {when}, so much chopping.",
           "{When} I took a {d} cookery class and learned to fold things properly.",
           "We went to a {d} cooking workshop {when}, I can finally make a decent sauce.",
           "{When} was the {d} cookery evening {partner} booked for us."],
          D(["Thai", "Mexican", "Lebanese"], ["Korean", "Sicilian", "Vietnamese"]),
          ["Which cuisine did {n} get lessons in?", "What style of food did {n} study with a chef?"],
          "What cooking class did {n} take?", "When did {n} do the {d} cooking class?",
          ["{D} food is my favourite!", "Ooh, you'll have to cook for me."],
          ["The chef was hilarious.", "We came home with a bag of spices we'll never use."]),
    ], multi=[(["What has {n} cooked or baked?", "What dishes and bakes has {n} made?"], (0, 1)),
              (["What food adventures has {n} had?", "What has {n} done in the kitchen lately?"], (0, 2))],
        open_=[(["Would {n} enjoy a food festival?", "Would {n} like a recipe book as a gift?"], (0, 1),
                "Likely yes: {n} cooks {d0} from scratch and enters bake-offs ({d1}).")],
        near=[("x", 0, "I tried making {o} once and set off the smoke alarm."),
              ("a", 1, "{fr}'s {o} won the bake-off last year, it was unreal."),
              ("o", 0, "I was going to make {o} but ran out of time and ordered pizza.")],
        talk=["I burnt the toast again this morning.", "Cooking for picky eaters is hard.",
              "I bought a new frying pan and I'm obsessed.", "I need a good soup recipe, any ideas?"],
        cb=["Cooked anything good lately?", "Have you been baking much?"]),
    T("move", "both", [
        E(["We're moving to {d}, we signed the lease {when}!",
           "{When} we put down a deposit on a place in {d}, we're moving!",
           "It's official, we signed for a flat in {d} {when}.",
           "{When} we agreed on a house in {d}, the move is next month."],
          D(["Denver", "Seattle", "Austin", "Minneapolis"], ["Bristol", "Glasgow", "Leeds", "Cardiff"]),
          ["Which city is {n} relocating to?", "Where will {n} be living from now on?"],
          "Where is {n} moving to?", "When did {n} sign for the place in {d}?",
          ["{D}! That's a big change.", "Wait, you're actually leaving? I'm so happy for you, and sad.",
           "New city, new life!"],
          ["It's closer to {partner}'s family, which helps.", "I'm already stressing about the packing."]),
        E(["The {d0} flat fell through {when}, so we're moving to {d} instead.",
           "Change of plan: {when} we pulled out of {d0}, it's going to be {d} now.",
           "{When} the {d0} deal collapsed, so we're going to {d} after all.",
           "We're not doing {d0} any more, {when} we found a better place in {d}."],
          "@0", ["Which city is {n} relocating to in the end?", "Where will {n} end up living?"],
          None, "When did {n}'s plans change to {d}?",
          ["{D}? That's a big switch!", "Wait, so no more {d0}?", "Honestly that sounds better."],
          ["Honestly I think it's for the best.", "The new place has a garden, so I'm happy."], opt=0.6, upd=0),
        E(["We painted the living room {d} {when}, it feels like a new house.",
           "{When} I finally painted the bedroom {d}, and I love waking up in it.",
           "The kitchen is {d} now, we finished painting it {when}.",
           "{When} we covered the hallway in {d}, it's so much brighter."],
          D(["sage green", "navy blue", "terracotta"], ["pale yellow", "dusty pink", "forest green"]),
          ["What shade did {n} choose for the walls?", "Which colour are {n}'s walls now?"],
          "What colour did {n} paint the room?", "When did {n} paint the room {d}?",
          ["{D}! Very trendy.", "Send me a before and after.", "I've been wanting to do ours for ages."],
          ["Three coats, never again.", "There's paint in my hair still."]),
    ], multi=[(["What changes has {n} made at home?", "What's new with {n}'s home?"], (0, 2))],
        near=[("x", 0, "We looked at flats in {o} once, way too expensive."),
              ("a", 0, "{fr} just moved to {o} and loves it."),
              ("o", 0, "For a while we thought about {o}, but the jobs weren't there.")],
        talk=["Rent keeps going up everywhere.", "I spent the whole evening packing boxes.",
              "Our landlord still hasn't fixed the heating.", "Moving is so stressful."],
        cb=["How's the house stuff going?", "Have you started packing yet?"]),
    T("reading", "both", [
        E(["I finished {d} {when} and cried at the ending.",
           "I stayed up until two {when} finishing {d}.",
           "{When} I read the last page of {d} and just sat there.",
           "Finally done with {d}, finished it {when} on the train."],
          D(["The Kite Runner", "Charlotte's Web", "Educated", "Pachinko", "The Night Circus"],
            ["Never Let Me Go", "A Little Life", "Piranesi", "Circe", "The Remains of the Day"]),
          ["Which book did {n} recently get through?", "What title has {n} completed lately?"],
          "Which book did {n} finish?", "When did {n} finish {d}?",
          ["{D}? I loved that one.", "Ugh, that ending, I know.", "Okay, adding it to my list."],
          ["I need a few days before I start anything else.", "I've already lent it to {partner}."]),
        E(["Our book club picked {d} {when}, and I've already started it.",
           "{When} the book club voted for {d}, not my choice but I'll give it a go.",
           "The book club chose {d} {when}, I'm already a third of the way in.",
           "{When} at book club we settled on {d} for the next meeting."],
          "@0", ["Which title is {n}'s reading group tackling?", "Which title will {n}'s reading circle discuss?"],
          "Which book did {n}'s book club pick?", "When did {n}'s book club choose {d}?",
          ["{D}! Good choice.", "Book club drama, I love it.", "Let me know if it's any good."],
          ["The meeting is at a wine bar, so that's the real draw.", "Half the club never finishes the book anyway."]),
        E(["I started {d} as an audiobook {when}, perfect for the commute.",
           "{When} I downloaded {d} on audio and I'm hooked.",
           "I'm listening to {d} on my commute now, I started it {when}.",
           "{When} I began {d} as an audiobook, the narrator is brilliant."],
          "@0", ["What is {n} hearing on the way to work?", "What story is playing in {n}'s headphones?"],
          "Which audiobook is {n} listening to?", "When did {n} start the audiobook of {d}?",
          ["Audiobooks are a lifesaver.", "{D} on audio sounds perfect."],
          ["I've started walking the long way just to listen more.", "I keep missing my stop."]),
        E(["The book club changed its mind {when}, we're doing {d} instead of {d1}.",
           "{When} the club ditched {d1} for {d}, half of us hadn't started anyway.",
           "Book club drama: {when} we swapped {d1} for {d}.",
           "{When} somebody vetoed {d1}, so the club's reading {d} now."],
          "@0", ["Which title is {n}'s reading group tackling in the end?",
                 "Which title will {n}'s reading circle discuss after all?"],
          None, "When did {n}'s book club switch to {d}?",
          ["Book club politics, I love it.", "{D} is a better pick anyway."], ["I'd already bought the other one."],
          opt=0.5, upd=1),
    ], multi=[(["Which books has {n} been reading or listening to?", "What books have come up in {n}'s life lately?"],
               (0, 1, 2)),
              (["Which books has {n} finished or picked for the club?", "What books has {n} read or chosen to read?"],
               (0, 1))],
        open_=[(["Would {n} enjoy a literary festival?", "Would {n} appreciate a gift card for a bookshop?"], (0, 1),
                "Likely yes: {n} reads a lot ({d0}) and is in a book club.")],
        near=[("x", 0, "I started {o} years ago and never finished it."),
              ("a", 0, "{fr} keeps telling me to read {o}."),
              ("o", 1, "I wanted the club to do {o}, but I got outvoted.")],
        talk=["I need a good book for the holidays.", "The library closes early on Saturdays now.",
              "Reading before bed is the only thing that helps me sleep.",
              "My pile of unread books is getting embarrassing."],
        cb=["Reading anything good?", "How's book club going?"]),
    T("wedding", "both", [
        E(["My {sib_rel} {sib} is getting married in {d}, they set the date {when}!",
           "{When} {sib} called to say the wedding is booked for {d}!",
           "Big family news: {sib}'s wedding is going to be in {d}, they booked it {when}.",
           "{When} {sib} finally picked a date, the wedding's in {d}."],
          D(["September", "October", "April", "August"], ["July", "November", "March", "June"]),
          ["When is {n}'s {sib_rel} tying the knot?", "When will {n}'s {sib_rel} walk down the aisle?"],
          None, None,
          ["Aw, a wedding! Are you excited?", "{D} is a lovely time for a wedding.",
           "Finally! I'm so happy for {sib}."],
          ["I need to start saving for the outfit.", "The guest list is already a battlefield."]),
        E(["Update on {sib}'s wedding: they moved it to {d} because the venue double-booked.",
           "{sib}'s wedding got pushed to {d}, the venue had a flood {when}.",
           "So the wedding's now in {d}, {sib} changed it to fit the honeymoon.",
           "{When} {sib} told me they've moved the wedding to {d}, which messes up my holiday."],
          "@0", ["When is {n}'s {sib_rel} tying the knot now?",
          "When will {n}'s {sib_rel} walk down the aisle in the end?"],
          None, None,
          ["Oh no, what a hassle.", "{D} might be even nicer though.", "Poor {sib}, that's so stressful."],
          ["At least the new date works for everyone.", "I've had to rebook everything."], opt=0.7, upd=0),
        E(["{sib} asked me {when}: I'm going to be the {d} at the wedding, I'm terrified.",
           "{sib} asked me {when} to be the {d} at the wedding!",
           "Guess who's the {d} at {sib}'s wedding? Me! {sib} asked {when}.",
           "{When} {sib} made it official: I'm the {d} for the big day."],
          D(["one giving the speech", "official photographer", "one doing the flowers", "DJ"],
            ["ring bearer", "master of ceremonies", "one baking the cake", "chief usher"]),
          ["What part will {n} play at the ceremony?", "What duty has {n} been given for the celebration?"],
          "What will {n} be at {sib}'s wedding?", "When did {sib} ask {n} to be the {d}?",
          ["The {d}! That's such an honour.", "No pressure then!", "You'll be brilliant at that."],
          ["I've already started making notes.", "I'm both honoured and panicking."]),
    ], multi=[(["What do we know about {n}'s {sib_rel}'s wedding?", "What are the wedding plans in {n}'s family?"],
               (0, 2))],
        near=[("x", 0, "My cousin got married in {o} and it poured all day."),
              ("a", 0, "{fr} is getting married in {o} too, it's wedding season."),
              ("o", 0, "{sib} nearly went for {o}, but the venue was booked.")],
        talk=["Wedding planning sounds exhausting.", "I need to find something to wear for the wedding.",
              "The wedding group chat is out of control."],
        cb=["How are the wedding plans going?", "Is {sib} stressed about the wedding?"], gap=6),
    T("sports", "both", [
        E(["I tried {d} for the first time {when}, I'm sore in places I didn't know existed.",
           "{When} I went to a {d} taster session, I'm hooked.",
           "{partner} dragged me to {d} {when} and I actually loved it.",
           "{When} I had a go at {d}, so much harder than it looks."],
          D(["rock climbing", "yoga", "paddleboarding", "kickboxing", "archery"],
            ["fencing", "pilates", "kayaking", "squash", "bouldering"]),
          ["Which new sport did {n} take up earliest?", "What was the first of {n}'s new physical activities?"],
          "Which sport did {n} try first?", "When did {n} first try {d}?",
          ["{D}! You're braver than me.", "Sore in new places, that's the sign of a good workout.",
           "Are you going back?"],
          ["I've booked a second session already.", "The instructor made it look effortless.",
           "I fell over more than once."]),
        E(["{When} I did my first {d} class, new hobby unlocked.",
           "I signed up for {d} {when}, the instructor is brilliant.",
           "{When} {fr} talked me into {d}, we're going again next week.",
           "I started {d} {when}, it's a proper workout."],
          "@0", None, None, "When did {n} start {d}?",
          ["{D} too? You're on a roll.", "Another new sport, I can't keep up!"],
          ["I'm terrible, but I'm having fun.", "My whole body aches, in a good way."]),
        E(["My latest thing is {d}, I went {when} and my arms are jelly.",
           "{When} I tried {d}, which is my new obsession.",
           "Newest sport: {d}, my first go was {when}.",
           "{When} I had my first proper {d} lesson."],
          "@0", None, None, "When did {n} try {d}?",
          ["Is there anything you won't try?", "{D}, now that I'd watch."],
          ["I'm not sure I'll stick with it, but it was fun.", "I need a nap after every session."], opt=0.6),
    ], multi=[(["What sports has {n} tried?", "Which physical activities has {n} taken up?"], (0, 1, 2))],
        open_=[(["Would {n} enjoy an adventure weekend with lots of activities?", "Is {n} adventurous about exercise?"],
                (0, 1), "Likely yes: {n} keeps trying new sports ({d0}, {d1}).")],
        near=[("x", 0, "I did {o} once on holiday and sprained my wrist."),
              ("a", 0, "{fr} is really into {o} now."),
              ("o", 0, "I was going to try {o} too, but the class was cancelled.")],
        talk=["I'm trying to move more this year.", "My gym membership is basically a donation at this point.",
              "I need a sport I actually enjoy.", "Everything hurts, but in a good way."],
        cb=["Still trying all the new sports?", "What's the latest sport?"], gap=6),
    T("sibling", "both", [
        E(["{sib} had the baby {when}, a little girl called {d}!",
           "{When} my niece {d} arrived, {sib} is exhausted but glowing.",
           "{sib}'s daughter was born {when}, her name is {d}.",
           "{When} {sib} sent me the first photo of baby {d}, I cried."],
          D(["Rosie", "Isla", "Poppy", "Hazel"], ["Edie", "Wilhelmina", "Maisie", "Thea"]),
          ["Who is the newest member of {n}'s family?", "What did {n}'s {sib_rel} call the newborn?"],
          "What is the name of {sib}'s baby?", "When was {sib}'s baby born?",
          ["{D}! What a gorgeous name.", "A new baby in the family, that's wonderful!", "How's {sib} doing?"],
          ["I'm visiting soon with far too many presents.", "Everyone says she looks exactly like {sib}."]),
        E(["{When} {sib} announced a move to {d} for work.",
           "My {sib_rel} is off to {d}, {sib} got the transfer {when}.",
           "{When} {sib} accepted a transfer to {d}, so we'll have somewhere to visit.",
           "{sib} is relocating to {d}, it was confirmed {when}."],
          D(["Chicago", "San Diego", "Boston"], ["Edinburgh", "Manchester", "Belfast"]),
          ["Where is {n}'s {sib_rel} heading to live?", "Which city will {n}'s {sib_rel} call home?"],
          "Where is {sib} moving to?", "When did {sib} announce the move to {d}?",
          ["{D}! That's so far.", "You'll have a free place to stay there now."],
          ["I'm going to miss {sib} a lot.", "It's a great opportunity though."]),
        E(["{sib}'s transfer changed {when}, it's {d} now, not {d1}.",
           "{When} {sib} found out the job is in {d} after all, not {d1}.",
           "Plot twist: {when} {sib}'s company switched the move to {d}.",
           "{sib} isn't going to {d1} any more, {when} it got changed to {d}."],
          "@1", ["Where is {n}'s {sib_rel} heading to live in the end?",
                 "Which city will {n}'s {sib_rel} call home after all?"],
          None, "When did {sib}'s move change to {d}?",
          ["{D}! Is that better or worse?", "Poor {sib}, what a rollercoaster."], ["At least it's decided now."],
          opt=0.5, upd=1),
    ], multi=[(["What's new with {n}'s {sib_rel}?", "What has been happening in {n}'s {sib_rel}'s life?"], (0, 1))],
        near=[("x", 0, "My cousin just called her baby {o}, it's everywhere this year."),
              ("a", 1, "{fr}'s brother moved to {o} last year.")],
        talk=["Family group chats are a full-time job.", "I should call {sib} more often."],
        cb=["How's {sib} doing?", "Any news from {sib}?"]),
    T("travel", "both", [
        E(["We're flying to {d} {when}, I can't wait!",
           "{When} we head off to {d} for a week!",
           "We booked it: {d}, leaving {when}.",
           "{When} we're off to {d}, my first proper holiday in years."],
          D(["Lisbon", "Tokyo", "Mexico City", "Rome"], ["Marrakech", "Reykjavik", "Istanbul", "Vienna"]),
          ["Which foreign destination was {n} getting ready to visit?", "Where was {n} going abroad?"],
          "Where did {n} fly to?", "When does {n} leave for {d}?",
          ["{D}! Bring me back something.", "So jealous, I need a holiday.", "Have you packed yet?"],
          ["I've made a list of about forty restaurants.", "{partner} has planned every hour, it's exhausting."],
          t="future"),
        E(["I bought {d} at a market in {d0}, it's my favourite thing now.",
           "The best thing I brought back from {d0} is {d}.",
           "In {d0} I found {d} in a tiny shop, I nearly missed my flight for it.",
           "I came home from {d0} with {d}, worth every penny."],
          D(["a hand-painted tile", "a leather jacket", "a set of ceramic bowls", "a little silver ring"],
            ["a woven rug", "a wool blanket", "a brass lantern", "a box of spices"]),
          ["What souvenir did {n} pick up on the trip?", "What keepsake did {n} return with?"],
          "What did {n} buy in {d0}?", None,
          ["{D}, I love that!", "Worth missing a flight for, obviously.", "You have the best taste."],
          ["It's on the shelf by the door so I see it every day.", "I should have bought two."]),
    ], multi=[(["Where did {n} travel and what did {n} bring back?",
                "Where did {n} go abroad and what did {n} buy there?"],
               (0, 1))],
        open_=[(["Would {n} enjoy exploring markets in another country?", "Does {n} enjoy travelling abroad?"], (0, 1),
                "Likely yes: {n} travelled to {d0} and loved shopping there ({d1}).")],
        near=[("x", 0, "We went to {o} years ago and I got food poisoning."),
              ("o", 0, "We almost booked {o} instead, maybe next year."),
              ("a", 0, "{fr} is going to {o} soon, we should compare notes.")],
        talk=["I could really use a holiday.", "Airports stress me out so much.",
              "I've been looking at flights way too much.",
              "Packing is the worst part of any trip."],
        cb=["Any more trips planned?", "Have you recovered from the trip?"], gap=3),
    T("crafts", "both", [
        E(["I made {d} at my pottery class {when}, it's a bit wonky but I love it.",
           "{When} I got {d} back from the kiln, it survived!",
           "At the pottery studio {when} I finished {d}.",
           "{When} I glazed {d} at pottery, my first one that doesn't leak."],
          D(["a blue mug", "a little bowl for keys", "a plant pot", "a set of coasters"],
            ["a green vase", "a tiny teapot", "a soap dish", "a speckled jug"]),
          ["What has {n} created out of clay?", "What did {n} shape by hand recently?"],
          "What did {n} make at pottery?", "When did {n} finish {d} at pottery?",
          ["{D}! You made that yourself?", "Wonky is charming.", "I want one!"],
          ["It's not perfectly round but it's mine.", "The kiln is terrifying, everything could crack."]),
        E(["I knitted {d} for {partner} {when}, took me two months.",
           "{When} I finally finished knitting {d} for {partner}'s birthday.",
           "{partner} got {d} I knitted myself, I finished it {when}.",
           "{When} I cast off the last row of {d}, it's for {partner}."],
          D(["a striped scarf", "a woolly hat", "a pair of mittens"],
            ["a chunky jumper", "a pair of thick socks", "a cabled beanie"]),
          ["What did {n} give {pos} {partner_rel} that was homemade?",
           "What present did {n} make for {pos} {partner_rel} with needles and yarn?"],
          "What did {n} knit for {partner}?", "When did {n} finish knitting {d}?",
          ["{D}! {partner} is so lucky.", "Two months? That's dedication.", "Handmade presents are the best."],
          ["I dropped about a hundred stitches but you can't tell.",
           "{partner} wore it straight away even though it was warm."]),
    ], multi=[(["What has {n} made by hand?", "What handmade things has {n} finished?"], (0, 1))],
        open_=[(["Would {n} enjoy a craft fair?", "Would {n} like a weekend crafts retreat?"], (0, 1),
                "Likely yes: {n} does pottery ({d0}) and knits ({d1}).")],
        near=[("x", 0, "I made {o} at a pottery party once and it exploded in the kiln."),
              ("o", 1, "I started {o} last winter and it's still half done."),
              ("a", 0, "{fr} sells things like {o} online.")],
        talk=["There's yarn all over the sofa.", "The pottery studio smells like wet earth, I love it.",
              "My hands are always covered in clay these days."],
        cb=["Made anything new lately?", "How's pottery going?"]),
    T("home", "both", [
        E(["We finally bought {d} {when}, the flat feels like a grown-up home now.",
           "{When} we picked up {d} from a lady on the next street, a total bargain.",
           "{When} {d} finally arrived and I'm in love with it.",
           "We got {d} secondhand {when}, it cost almost nothing."],
          D(["a green velvet sofa", "a big oak dining table", "a vintage record cabinet"],
            ["a leather armchair", "a pine bookcase", "a mid-century sideboard"]),
          ["What piece of furniture did {n} get for the house?", "Which new item of furniture does {n} have?"],
          "What did {n} buy for the flat?", "When did {n} get {d}?",
          ["{D}, that sounds gorgeous.", "A bargain! I love a bargain.", "Photos, please."],
          ["It barely fit up the stairs.", "We sat on it all evening just admiring it."]),
        E(["We ripped out the old {d} {when}, the dust is everywhere.",
           "{When} we finished redoing the {d}, it looks like a different house.",
           "The {d} is finally done, the builders left {when}.",
           "{When} I tiled the {d} myself, with a lot of swearing."],
          D(["bathroom", "kitchen", "utility room"], ["downstairs toilet", "hallway floor", "back porch"]),
          ["Which part of {n}'s place got renovated?", "What area has {n} been doing up?"],
          "What did {n} redo at home?", "When did {n} finish the {d}?",
          ["Renovations are brutal, well done for surviving.", "A new {d}, that's exciting.",
           "Before and after photos?"],
          ["I never want to see a builder again.", "We're eating takeaway until the dust settles."]),
    ], multi=[(["What has {n} changed at home?", "What home improvements has {n} made?"], (0, 1))],
        open_=[(["Does {n} enjoy DIY?", "Would {n} like a toolbox as a present?"], (1,),
                "Likely yes: {n} has been redoing the {d1} at home.")],
        near=[("x", 0, "We nearly bought {o} but it didn't fit through the door."),
              ("a", 1, "{fr} is redoing the {o} and it's taking forever.")],
        talk=["There's always one more thing to fix in this place.", "I've watched so many DIY videos this month.",
              "The hardware shop knows me by name now."],
        cb=["How's the house coming along?", "Is the renovation done yet?"]),
    # dev only
    T("photo", "dev", [
        E(["I finally bought {d} {when}, I've been saving for it all year.",
           "{When} I treated myself to {d}, my phone photos are officially retired."],
          D(["a secondhand Nikon", "a little Fujifilm", "a Canon with a zoom lens"], []),
          ["What gear did {n} splash out on?"], "What camera did {n} buy?", "When did {n} buy {d}?",
          ["{D}! Fancy.", "You're going to be unstoppable now."],
          ["The manual is about three hundred pages.", "I've taken six hundred pictures of leaves already."]),
        E(["One of my photos of {d} got printed in the local paper {when}!",
           "{When} the newspaper ran my picture of {d}, page seven!"],
          D(["the frozen river", "the harvest festival", "a heron at dawn", "the old railway bridge"], []),
          ["Which shot of {n}'s appeared in the press?"], "Which of {n}'s photos was in the paper?",
          "When was {n}'s photo of {d} in the paper?",
          ["In the paper! You're famous.", "Page seven is prime real estate."],
          ["My mum bought ten copies.", "They even spelled my name right."]),
        E(["I led a photo walk around {d} {when}, twelve people came!",
           "{When} I took a group round {d} for a photo walk, nobody got lost."],
          D(["the harbour", "the old town", "the botanical gardens"], []),
          ["Where did {n} guide a group with cameras?"], "Where did {n} lead the photo walk?",
          "When did {n} lead the photo walk around {d}?",
          ["Twelve people! That's a real following.", "Look at you, a tour guide."],
          ["I'm thinking of doing one every season."], opt=0.7),
    ], multi=[("What has {n} done with photography?", (0, 1, 2))],
        open_=[("Would {n} enjoy a wildlife safari?",
                (0, 1), "Likely yes: {n} is a keen photographer (published a photo of {d1}).")],
        near=[("x", 1, "I took a photo of {o} once, it was completely blurry."),
              ("a", 0, "{fr} just bought {o} and keeps photographing the cat.")],
        talk=["The light this time of year is perfect for photos.", "My memory cards are always full.",
              "I edit photos on the bus now."],
        cb=["Taken any good photos lately?", "How's the camera treating you?"]),
    T("podcast", "dev", [
        E(["{When} we launched our podcast, it's all about {d}!",
           "My podcast about {d} went live {when}, episode one is out."],
          D(["urban gardening", "true crime in small towns", "nineties cartoons", "local history"], []),
          ["What topic does {n}'s show cover?"], "What is {n}'s podcast about?", "When did {n}'s podcast launch?",
          ["A podcast! I'm subscribing right now.", "{D}? That's so niche, I love it."],
          ["We recorded it in a wardrobe for the sound.", "Eleven people have listened, mostly family."]),
        E(["We had {d} on the podcast {when} as our first guest!",
           "{When} we recorded an episode with {d}, I was so nervous."],
          D(["the town's oldest firefighter", "a local beekeeper", "my old art teacher"], []),
          ["Who did {n} interview?"], "Who was the guest on {n}'s podcast?", "When did {n} record with {d}?",
          ["What a great guest.", "Were you nervous?"],
          ["The stories were incredible, we went an hour over."]),
        E(["We hit {d} downloads {when}, I can't believe people actually listen!",
           "{When} the podcast passed {d} downloads."],
          D(["a thousand", "five hundred", "two thousand"], []),
          ["How big has {n}'s audience grown?"], "How many downloads has {n}'s podcast had?",
          "When did {n}'s podcast reach {d} downloads?",
          ["That's a lot of ears!", "Next stop, sponsorship."], ["We celebrated with cheap champagne."], opt=0.7),
    ], multi=[("What has happened with {n}'s podcast?", (0, 1, 2))],
        open_=[("Would {n} be comfortable speaking on a radio show?", (0, 1),
                "Likely yes: {n} hosts a podcast and interviews guests.")],
        near=[("x", 0, "I nearly started a podcast about {o} once."),
              ("a", 0, "{fr} listens to a podcast about {o} every night.")],
        talk=["Editing audio takes forever.", "I've been listening to other podcasts for ideas."],
        cb=["How's the podcast going?", "Any new episodes out?"]),
    T("band", "dev", [
        E(["I joined a band {when}, I'm the {d}!", "{When} a local band asked me to be their {d}."],
          D(["bassist", "drummer", "backing singer"], []),
          ["What role does {n} have in the group?"], "What does {n} do in the band?", "When did {n} join the band?",
          ["A band! Rock star.", "The {d}, of course you are."], ["We practise in a garage that smells of oil."]),
        E(["The band is called {d}, we finally decided {when}.", "{When} we finally picked a band name: {d}."],
          D(["The Velvet Kettles", "Static Orchard", "Paper Lanterns"], []),
          ["What do {n} and the others perform as?"], "What is {n}'s band called?", "When did {n}'s band pick a name?",
          ["{D}, that's brilliant.", "Very indie, I approve."], ["It took three weeks of arguing."]),
        E(["We renamed the band {when}, we're {d} now.",
           "{When} we changed the band name to {d}, the old one was taken."],
          "@1", ["What do {n} and the others perform as now?"], None, "When did {n}'s band change its name?",
          ["{D} is better, honestly.", "A rebrand!"], ["We had to reprint all the stickers."], opt=0.6, upd=1),
        E(["Our first gig was at {d} {when}, about forty people came!", "{When} we played our first show at {d}."],
          D(["the Rusty Anchor pub", "the student union bar", "a wedding in the park"], []),
          ["Where did {n}'s group debut?"], "Where was the band's first gig?", "When was {n}'s first gig?",
          ["Forty people, that's a crowd!", "How were the nerves?"], ["I nearly dropped my sticks, twice."]),
    ], multi=[("What do we know about {n}'s band?", (0, 1, 2))],
        open_=[("Would {n} enjoy a music festival?", (0, 2), "Likely yes: {n} plays in a band ({d0}) and gigs.")],
        near=[("x", 0, "I was a {o} in a school band for about a week."),
              ("a", 2, "{fr}'s band played at {o} last month.")],
        talk=["Band practice ran late again.", "My ears are still ringing from rehearsal."],
        cb=["How's the band?", "Any more gigs coming up?"]),
    T("hiking", "dev", [
        E(["We hiked up {d} {when}, the view from the top was worth every step.",
           "{When} I made it to the summit of {d}, my legs are jelly."],
          D(["Mount Tam", "Old Rag", "Mount Washington", "Half Dome", "Camelback Mountain"], []),
          [], "Which mountain did {n} hike first?", "When did {n} hike {d}?",
          ["{D}! I'd never make it.", "Worth every step, I believe it."], ["We started at five to beat the heat."]),
        E(["{When} we did {d}, the hardest hike yet.", "We climbed {d} {when}, the last mile was brutal."],
          "@0", [], None, "When did {n} climb {d}?",
          ["Another summit!", "You two are mountain goats."], ["My boots finally gave up on the way down."]),
    ], multi=[("Which mountains has {n} hiked?", (0, 1))],
        open_=[("Would {n} enjoy a trekking holiday in the Alps?", (0, 1),
                "Likely yes: {n} hikes mountains ({d0}, {d1}).")],
        near=[("x", 0, "I tried {o} once and turned back halfway."),
              ("o", 0, "We almost did {o} but the weather turned.")],
        talk=["My hiking boots are held together with tape.", "I've been looking at trail maps all week."],
        cb=["Any hikes lately?", "Been up any mountains?"], gap=8),
    T("kittens", "dev", [
        E(["We're fostering {d} kittens from the shelter, they arrived {when}.",
           "{When} the shelter dropped off {d} tiny kittens for us to foster."],
          D(["three", "four", "five"], []),
          ["How many young cats is {n} looking after?"], "How many kittens is {n} fostering?",
          "When did the foster kittens arrive at {n}'s?",
          ["Kittens! Can I come over?", "{D} kittens? You're brave."], ["They climb the curtains like tiny ninjas."]),
        E(["{When} the first kitten got adopted, a family took {d} home.",
           "Our little {d} went to her forever home {when}."],
          D(["Mittens", "Pumpkin", "Socks"], []),
          ["Which of the animals {n} was minding got a new owner?"], "Which kitten was adopted first?",
          "When was {d} adopted?", ["Aw, bittersweet!", "{D} will be so loved."], ["I cried a bit, not going to lie."]),
    ], multi=[("What do we know about the kittens {n} fostered?", (0, 1))],
        open_=[("Would {n} consider adopting a cat?", (0, 1), "Likely yes: {n} fosters kittens and loves them.")],
        near=[("x", 0, "We had {o} cats growing up, total chaos.")],
        talk=["There's cat litter everywhere.", "I haven't slept properly since the kittens came."],
        cb=["How are the kittens?", "Still fostering?"]),
    T("language", "dev", [
        E(["I started learning {d} {when}, just twenty minutes a day on the app.",
           "{When} I signed up for {d} evening classes."],
          D(["Spanish", "Japanese", "Italian", "Portuguese"], []),
          ["Which foreign tongue is {n} studying?"], "What language is {n} learning?",
          "When did {n} start learning {d}?", ["{D}! Dime algo.", "That's so useful."],
          ["My pronunciation is terrible.", "I talk to myself in the car to practise."]),
        E(["{When} I passed my {d} language exam!", "I got my {d} certificate {when}, all those flashcards paid off."],
          D(["A2 level", "B1 level", "beginner level"], []),
          ["What grade has {n} reached with the new tongue?"], "Which exam level did {n} pass?",
          "When did {n} pass the {d} exam?", ["Certified!", "All those flashcards, worth it."],
          ["Next is B2, if I survive."]),
    ], multi=[("What has {n} achieved with language learning?", (0, 1))],
        open_=[("Would {n} enjoy a film night with subtitles in another tongue?", (0,),
                "Likely yes: {n} is learning {d0}.")],
        near=[("x", 0, "I did {o} at school and only remember how to order coffee."),
              ("a", 0, "{fr} speaks fluent {o}, it's annoying.")],
        talk=["My language app keeps guilt-tripping me.", "I've been watching cartoons to practise."],
        cb=["How's the language learning?", "Still doing your lessons?"]),
    T("chess", "dev", [
        E(["I came {d} in the chess tournament {when}, out of thirty players!",
           "{When} was the chess tournament at the library, I finished {d}."],
          D(["third", "second", "fifth"], []),
          ["Where did {n} place in the competition?"], "What place did {n} get in the chess tournament?",
          "When was {n}'s chess tournament?", ["{D}! That's amazing.", "Out of thirty, wow."],
          ["My brain hurt for a day afterwards."]),
        E(["I beat {d} at chess {when}, I've been trying for months.", "{When} I finally won a game against {d}."],
          D(["my old maths teacher", "a twelve-year-old prodigy", "the club champion"], []),
          ["Who did {n} defeat over the board?"], "Who did {n} beat at chess?", "When did {n} beat {d}?",
          ["Finally! Revenge.", "That must have felt so good."], ["I did a little dance in the car park."]),
    ], multi=[("What has {n} achieved at chess?", (0, 1))],
        open_=[("Would {n} enjoy a strategy game evening?", (0, 1), "Likely yes: {n} competes at chess.")],
        near=[("x", 1, "I once lost to {o} in about four moves.")],
        talk=["I've been doing chess puzzles on my lunch break.", "My chess app is ruining my sleep."],
        cb=["How's the chess going?", "Any more tournaments?"]),
    T("bakery", "dev", [
        E(["I've started selling {d} at the Saturday market, my first stall was {when}.",
           "{When} I had my first stall at the farmers' market, selling {d}."],
          D(["sourdough loaves", "cinnamon rolls", "decorated cookies"], []),
          ["What goods is {n} offering to the public?"], "What does {n} sell at the market?",
          "When was {n}'s first market stall?", ["A stall! You're a business owner now.", "{D}, I'd buy all of them."],
          ["I sold out by eleven.", "I was up at four baking."]),
        E(["Someone ordered {d} for a wedding {when}, my biggest order ever!",
           "{When} I got an order for {d} for a wedding."],
          D(["two hundred cupcakes", "a three-tier cake", "sixty cookies"], []),
          ["What's the biggest request {n} has had from a buyer?"], "What was {n}'s biggest order?",
          "When did {n} get the wedding order?", ["{D}? That's huge.", "A wedding, no pressure."],
          ["My oven is going to explode."]),
    ], multi=[("How is {n}'s baking business going?", (0, 1))],
        open_=[("Would {n} enjoy running a café one day?",
                (0, 1), "Likely yes: {n} sells bakes at a market and takes big orders.")],
        near=[("x", 0, "I tried selling {o} at a school fair once, nobody bought any.")],
        talk=["Flour gets everywhere.", "I'm thinking about a logo for the stall."],
        cb=["How's the stall going?", "Still baking for the market?"]),
    # test only
    T("sailing", "test", [
        E(["I had my first sailing lesson at {d} {when}, I only fell in once.",
           "{When} I started sailing lessons down at {d}, my hands are rope-burned."],
          D([], ["Whitstable harbour", "the reservoir club", "Poole quay"]),
          ["Where does {n} go to learn to handle a boat?"], "Where is {n} taking sailing lessons?",
          "When did {n} start sailing lessons?", ["Sailing! Very glamorous.", "Only fell in once, that's a win."],
          ["The instructor shouts a lot, but kindly.", "I smell of seaweed permanently."]),
        E(["We bought a tiny old dinghy {when}, she's called {d}.", "{When} we got our own little boat, named {d}."],
          D([], ["Puffin", "Sea Biscuit", "Mabel Rose"]),
          ["What is the name of {n}'s vessel?"], "What is {n}'s boat called?", "When did {n} buy the dinghy?",
          ["{D}! The perfect name.", "A boat! You've changed."], ["She leaks a bit, but so do I."]),
        E(["We came {d} in the club regatta {when}!", "{When} was the regatta, and we finished {d}."],
          D([], ["fourth", "second", "sixth"]),
          ["Where did {n} place in the race on the water?"], "What place did {n} get in the regatta?",
          "When was {n}'s regatta?", ["{D}! Amazing.",
          "On your first regatta?"], ["We nearly capsized at the last buoy."],
          opt=0.7),
    ], multi=[("What has {n} done with sailing?", (0, 1, 2))],
        open_=[("Would {n} enjoy a holiday on the coast?", (0, 1), "Likely yes: {n} sails and owns a dinghy ({d1}).")],
        near=[("x", 0, "I went out on a boat at {o} once and was sick the whole time."),
              ("a", 0, "{fr} keeps a boat at {o}.")],
        talk=["The wind was all wrong at the weekend.", "I've been learning knots on the sofa."],
        cb=["How's the sailing?", "Been out on the water?"]),
    T("bees", "test", [
        E(["We've got {d} beehives in the garden now, they arrived {when}.",
           "{When} the bees arrived, {d} hives at the bottom of the garden."],
          D([], ["two", "three", "four"]),
          ["How many colonies is {n} keeping?"], "How many beehives does {n} have?", "When did {n}'s bees arrive?",
          ["Bees! Are you brave or mad?",
           "{D} hives, that's a lot of bees."], ["I've got the full suit and everything."]),
        E(["We harvested {d} of honey {when}, it's so dark and good.", "{When} we took {d} of honey from the hives."],
          D([], ["twelve jars", "twenty jars", "eight jars"]),
          ["What was the yield from {n}'s first collection?"], "How much honey did {n} harvest?",
          "When did {n} harvest the honey?", ["I'll take a jar!", "{D}? That's loads."], ["Everything is sticky."]),
        E(["I got stung {d} times {when}, my hand looks like a glove.",
           "{When} the bees got me {d} times through the suit."],
          D([], ["three", "five", "seven"]), ["How many stings did {n} suffer?"], "How many times was {n} stung?",
          "When did {n} get stung?", ["Ouch! Are you okay?", "The bees have spoken."], ["I'm fine, just puffy."],
          v="-", opt=0.7),
    ], multi=[("What has happened with {n}'s bees?", (0, 1, 2))],
        open_=[("Would {n} enjoy a nature reserve visit?", (0, 1), "Likely yes: {n} keeps bees and harvests honey.")],
        near=[("x", 0, "My uncle kept {o} hives once, they all flew off."),
              ("a", 1, "{fr} sells {o} of honey at the market.")],
        talk=["The bees are very grumpy when it rains.", "I've been reading about bee diseases, terrifying."],
        cb=["How are the bees?", "Any more honey?"]),
    T("theatre", "test", [
        E(["I got cast as {d} in the community play {when}!", "{When} the director called, I'm playing {d}!"],
          D([], ["Lady Macbeth", "the wicked stepmother", "Mr Darcy's aunt", "the ghost"]),
          ["Which character will {n} portray?"], "Who is {n} playing in the play?", "When was {n} cast in the play?",
          ["{D}! Perfect casting.", "A lead role!"], ["I have so many lines to learn."]),
        E(["{When} the director recast me, I'm playing {d} now instead of {d0}.",
           "Change of part: {when} I got moved to {d}."],
          "@0", ["Which character will {n} portray in the end?"], None, "When was {n} recast as {d}?",
          ["{D}! Even better.", "Recast? Drama within the drama."], ["Fewer lines, more singing."], opt=0.6, upd=0),
        E(["The play is {d} and we open {when}.", "{When} is opening night of {d}, I'm terrified."],
          D([], ["The Importance of Being Earnest", "Blithe Spirit", "Our Town"]),
          ["Which production is {n} appearing in?"], "What play is {n} in?", "When does {n}'s play open?",
          ["I'll be in the front row.", "Break a leg!"], ["The set is held together with hope."], t="future"),
        E(["{When} I forgot my lines in the {d}, I just made something up.",
           "I completely blanked in the {d} {when}, nobody noticed."],
          D([], ["second act", "dress rehearsal", "final scene"]),
          ["When in the show did {n} go blank?"], "Where did {n} forget their lines?",
           "When did {n} forget their lines?",
          ["That happens to everyone.", "Improvising is a skill!"], ["I'm still cringing."], v="-", opt=0.7),
    ], multi=[("What do we know about {n}'s acting?", (0, 1, 2))],
        open_=[("Would {n} enjoy a night at the theatre?", (0, 1), "Likely yes: {n} acts in community plays.")],
        near=[("x", 0, "I played {o} in a school play once, badly."),
              ("o", 0, "I auditioned for {o} first but didn't get it.")],
        talk=["Rehearsals are taking over my life.", "I've been practising accents in the shower."],
        cb=["How are rehearsals?", "How's the play going?"]),
    T("cycling", "test", [
        E(["I bought {d} {when}, I'm officially a cyclist now.", "{When} I picked up {d} from the shop."],
          D([], ["a secondhand road bike", "a folding bike", "an electric bike"]),
          ["What did {n} get to ride?"], "What bike did {n} buy?", "When did {n} buy {d}?",
          ["{D}! Lycra next?", "You'll be flying around."], ["The saddle is a nightmare."]),
        E(["I did the {d} sportive {when}, my legs are gone.", "{When} I rode {d} in the sportive."],
          D([], ["sixty mile", "hundred kilometre", "forty mile"]),
          ["How far did {n} pedal in the organised event?"], "How long was {n}'s sportive?",
          "When did {n} ride the sportive?", ["{D}? That's huge.", "Your poor legs."], ["I ate six flapjacks."]),
    ], multi=[("What has {n} done with cycling?", (0, 1))],
        open_=[("Would {n} enjoy a touring holiday on two wheels?", (0, 1), "Likely yes: {n} cycles sportives.")],
        near=[("x", 0, "I had {o} once and it got stolen in a week."),
              ("a", 1, "{fr} did a {o} ride and fainted at the end.")],
        talk=["Drivers here are terrifying.", "I got a puncture on the way to work."],
        cb=["How's the cycling?", "Still on the bike?"]),
    T("candles", "test", [
        E(["I opened my little online candle shop {when}, it's called {d}.", "{When} my candle shop went live, {d}!"],
          D([], ["Wick and Whimsy", "Ember Lane", "Small Flame"]), ["What's the name of {n}'s business?"],
          "What is {n}'s candle shop called?", "When did {n}'s shop open?",
          ["{D}, what a name.",
           "An online shop, you're an entrepreneur!"], ["I've had three orders, two from my mum."]),
        E(["My bestseller is the {d} one, it sold out {when}.", "{When} the {d} candle sold out completely."],
          D([], ["fig and cedar", "sea salt", "burnt orange"]), ["Which scent of {n}'s is most popular?"],
          "What is {n}'s bestselling candle?", "When did the {d} candle sell out?",
          ["{D} sounds amazing.", "Sold out! Make more!"], ["I'm pouring wax until midnight."]),
    ], multi=[("How is {n}'s candle business doing?", (0, 1))],
        open_=[("Would {n} enjoy running a stall at a Christmas market?", (0, 1),
                "Likely yes: {n} runs a candle shop.")],
        near=[("x", 1, "I bought a {o} candle once and it smelled like feet.")],
        talk=["Everything smells of wax.", "Shipping costs are killing me."],
        cb=["How's the shop doing?", "Sold many candles?"]),
    T("dance", "test", [
        E(["I started {d} classes {when}, I have two left feet.", "{When} I went to my first {d} class."],
          D([], ["salsa", "tango", "swing", "flamenco"]), ["Which style is {n} learning on the dance floor?"],
          "What dance is {n} learning?", "When did {n} start {d} classes?",
          ["{D}! So glamorous.", "Two left feet, I doubt it."], ["My partner in class is a retired dentist."]),
        E(["We came {d} in the {d0} competition {when}!", "{When} was the competition and we got {d}."],
          D([], ["third", "second", "fifth"]), ["Where did {n} place at the contest?"],
          "What place did {n} get in the dance competition?", "When was {n}'s dance competition?",
          ["{D}! You're a pro.", "A competition already?"], ["I spun the wrong way once."]),
    ], multi=[("What has {n} done with dancing?", (0, 1))],
        open_=[("Would {n} enjoy a night at a Latin music club?",
                (0, 1), "Likely yes: {n} dances ({d0}) competitively.")],
        near=[("x", 0, "I tried {o} once and trod on everyone.")],
        talk=["My feet are covered in blisters.", "I keep practising steps in the kitchen."],
        cb=["How's dancing?", "Still going to classes?"]),
    T("van", "test", [
        E(["We bought {d} to turn into a camper {when}!", "{When} we picked up {d}, it's going to be our camper."],
          D([], ["an old Transit van", "a rusty VW bus", "a former ambulance"]),
          ["What vehicle is {n} converting?"], "What van did {n} buy?", "When did {n} buy the van?",
          ["A camper! Road trips forever.", "{D}? Bold."], ["It smells of old carpet, but it's ours."]),
        E(["The first trip in the van was to {d} {when}, nothing broke!", "{When} we drove the van to {d}."],
          D([], ["the Gower", "the Norfolk coast", "the Peak District"]),
          ["Where did {n} go on the maiden voyage?"], "Where was the van's first trip?",
          "When was the van's first trip?", ["{D}! Lovely.", "Nothing broke, that's a miracle."],
          ["We slept really well in it."]),
    ], multi=[("What do we know about {n}'s van?", (0, 1))],
        open_=[("Would {n} enjoy a road trip holiday?",
                (0, 1), "Likely yes: {n} converted a van and takes it on trips.")],
        near=[("x", 1, "We drove to {o} once and the car broke down.")],
        talk=["I've spent every weekend in the van with a screwdriver.", "Van life videos are my new obsession."],
        cb=["How's the van coming along?", "Been away in the van?"]),
    T("birds", "test", [
        E(["I saw {d} by the canal {when}, first one I've ever spotted!", "{When} {d} landed on our fence."],
          D([], ["a kingfisher", "a barn owl", "a red kite", "a heron"]),
          ["What wildlife did {n} spot?"], "What bird did {n} see?", "When did {n} see {d}?",
          ["{D}! Lucky.", "Did you get a photo?"], ["I stood there for twenty minutes."]),
        E(["I joined the {d} {when}, we go out at dawn.", "{When} I signed up with the {d}."],
          D([], ["local RSPB group", "Wetlands Watchers", "Dawn Chorus Club"]),
          ["What nature society does {n} belong to?"], "Which birding group did {n} join?",
          "When did {n} join the {d}?", ["Dawn? Brave.",
          "A proper birder now."], ["They all have enormous binoculars."]),
    ], multi=[("What has {n} done with birdwatching?", (0, 1))],
        open_=[("Would {n} enjoy a trip to a nature reserve?", (0, 1), "Likely yes: {n} is a keen birdwatcher.")],
        near=[("x", 0, "I thought I saw {o} once but it was a pigeon.")],
        talk=["I've been leaving seeds out for the birds.", "Binoculars are expensive."],
        cb=["Seen any good birds?", "How's the birdwatching?"]),
]

CLASH = [{"sports", "running", "hiking", "cycling", "dance", "sailing"}, {"painting", "crafts"}, {"cooking", "bakery"},
         {"music", "band"}, {"move", "home"}, {"camping", "van"}, {"garden", "bees"}]
"""Threads a friend owns at most one of: their questions would overlap (``What sports has Maya tried?`` while she
also runs races)."""

TRAITS: dict[str, list[dict[str, Any]]] = {
    "dev": [
        {"s": "I can't stand big crowds, honestly, I'd rather have a quiet night in with a few friends.",
         "q": "Would {n} enjoy a packed stadium concert?",
         "a": "Probably not: {n} dislikes crowds and prefers quiet nights in.", "not": ("music", "band", "running")},
        {"s": "I get seasick just looking at boats, it's ridiculous.",
         "q": "Would {n} like a week-long cruise?", "a": "Probably not: {n} gets seasick.", "not": ("sailing",)},
        {"s": "Ladders make my palms sweat, I've never been good with heights.",
         "q": "Would {n} enjoy a hot-air balloon ride?", "a": "Probably not: {n} is afraid of heights.",
         "not": ("sports", "hiking")},
        {"s": "I've been vegetarian since college, so barbecues are mostly corn for me.",
         "q": "Would {n} appreciate a voucher for a steakhouse?", "a": "No: {n} is vegetarian.", "not": ("cooking",
         "bakery")},
        {"s": "I'm up at five most days, I love the house when it's still quiet.",
         "q": "Is {n} more of a lark or a night owl?", "a": "A lark: {n} gets up at five most days."},
        {"s": "I'm allergic to cats, I sneezed for two days after staying at my aunt's.",
         "q": "Would {n} be comfortable minding a kitten for a week?", "a": "Probably not: {n} is allergic to cats.",
         "not": ("kittens",)},
        {"s": "I grew up two streets from the beach, I basically lived in the water as a kid.",
         "q": "Is {n} a confident swimmer?", "a": "Likely yes: {n} grew up by the beach, always in the water."},
        {"s": "Speaking in front of people terrifies me, my voice goes all shaky.",
         "q": "Would {n} volunteer to give the toast at a wedding?",
         "a": "Probably not: {n} is terrified of public speaking.", "not": ("music", "band", "podcast", "wedding",
         "theatre")},
        {"s": "I put hot sauce on everything, the spicier the better.",
         "q": "Would {n} enjoy a Sichuan restaurant?", "a": "Likely yes: {n} loves spicy food."},
        {"s": "I never learned to drive, I take the bus everywhere.",
         "q": "Could {n} give someone a lift to the airport?", "a": "Probably not: {n} doesn't drive.",
         "not": ("camping", "van", "cycling")},
        {"s": "I gave up coffee in January and honestly I sleep so much better.",
         "q": "Would {n} want an espresso machine as a present?", "a": "Probably not: {n} quit coffee."},
        {"s": "I hate the cold, anything under fifteen degrees and I'm wearing three jumpers.",
         "q": "Would {n} enjoy a winter holiday in Lapland?", "a": "Probably not: {n} hates the cold.",
         "not": ("camping", "hiking")},
    ],
    "test": [
        {"s": "I do my best thinking after midnight, mornings are not my thing.",
         "q": "Would {n} enjoy a six o'clock yoga session?", "a": "Probably not: {n} is a night owl.",
         "not": ("running",)},
        {"s": "Big dogs make me nervous ever since one knocked me over as a kid.",
         "q": "Would {n} feel relaxed looking after a friend's Great Dane?",
         "a": "Probably not: {n} is nervous around big dogs.", "not": ("pet",)},
        {"s": "Lifts freak me out, I always take the stairs, even to the ninth floor.",
         "q": "Would {n} enjoy a guided cave tour?", "a": "Probably not: {n} is claustrophobic (avoids lifts)."},
        {"s": "I have the worst sweet tooth, there's always chocolate in my desk drawer.",
         "q": "Would {n} like a box of pastries as a thank-you?", "a": "Likely yes: {n} has a sweet tooth."},
        {"s": "I grew up speaking Portuguese at home and English at school.",
         "q": "Could {n} help translate a letter from Brazil?", "a": "Likely yes: {n} speaks Portuguese."},
        {"s": "I get so anxious on planes that I take the train whenever I can.",
         "q": "Would {n} pick a holiday that needs a long-haul flight?",
         "a": "Probably not: {n} is anxious about flying.", "not": ("travel",)},
        {"s": "I found out I'm coeliac last year, so bread is off the menu.",
         "q": "Would {n} enjoy a pizza-making evening?", "a": "Probably not as is: {n} is coeliac and avoids gluten.",
         "not": ("cooking", "bakery")},
        {"s": "I label everything, even the shelves in the fridge have labels.",
         "q": "Is {n} a tidy, organised person?", "a": "Yes: {n} labels everything."},
        {"s": "I read before bed every night, I get grumpy if I skip it.",
         "q": "Would {n} appreciate a bookshop gift card?", "a": "Likely yes: {n} reads every night."},
        {"s": "I'm a total gamer, I play strategy games most nights.",
         "q": "Would {n} like an evening at a tabletop café?", "a": "Likely yes: {n} loves strategy games."},
        {"s": "My hay fever is brutal, from May to July I can barely go outside.",
         "q": "Would {n} enjoy a picnic in a meadow in June?",
         "a": "Probably not: {n} has bad hay fever in early summer.", "not": ("garden", "camping", "bees", "birds")},
        {"s": "I never learned to swim, pools make me a bit nervous.",
         "q": "Would {n} enjoy a snorkelling trip?", "a": "Probably not: {n} can't swim.", "not": ("sailing",
         "sports")},
    ],
}
"""One-message facts about a person (no date), each asked as an open question worded apart; ``not``: threads
whose owner cannot have the trait (a friend who is scared of heights does not go rock climbing)."""
TRAIT_REACT = ["Really? I had no idea.", "Ha, that explains a lot.", "Same, honestly.",
               "Oh, I'm the complete opposite.",
               "Fair enough!", "I'll remember that.", "That's so you.", "No way, since when?"]

PEOPLE: dict[str, list[tuple[str, str]]] = {
    "dev": [("Maya", "f"), ("Theo", "m"), ("Rosalind", "f"), ("Grant", "m"), ("Nadia", "f"), ("Elliot", "m"),
            ("Bianca", "f"), ("Dominic", "m"), ("Harper", "f"), ("Felix", "m"), ("Imogen", "f"), ("Rafael", "m"),
            ("Celeste", "f"), ("Wesley", "m"), ("June", "f"), ("Malcolm", "m")],
    "test": [("Annika", "f"), ("Declan", "m"), ("Yasmin", "f"), ("Oliver", "m"), ("Paloma", "f"), ("Stellan", "m"),
             ("Freya", "f"), ("Tobias", "m"), ("Ingrid", "f"), ("Jasper", "m"), ("Noor", "f"), ("Callum", "m"),
             ("Esther", "f"), ("Mateus", "m"), ("Delphine", "f"), ("Rowan", "m")],
}
PARTNERS = {"dev": {"f": ["Sarah", "Leah", "Jessica", "Hannah", "Claire", "Megan"],
                    "m": ["Daniel", "Ryan", "Marcus", "Kevin", "Adam", "Luke"]},
            "test": {"f": ["Alice", "Charlotte", "Sofia", "Amelia", "Laura", "Zoe"],
                     "m": ["George", "Patrick", "Henrik", "Samuel", "Edward", "Nikolai"]}}
SIBS = {"dev": {"f": ["Becca", "Tara", "Nicole"], "m": ["Josh", "Kyle", "Brandon"]},
        "test": {"f": ["Agnes", "Maeve", "Ida"], "m": ["Finn", "Rory", "Anton"]}}
KIDS = {"dev": {"f": ["Lily", "Ava", "Chloe"], "m": ["Noah", "Ethan", "Caleb"]},
        "test": {"f": ["Elsie", "Matilda", "Greta"], "m": ["Arlo", "Hugo", "Otto"]}}
FRIENDS = {"dev": ["Jenna", "Marco", "Tasha", "Luis", "Priscilla", "Dwayne"],
           "test": ["Wren", "Kasper", "Ottilie", "Bruno", "Saoirse", "Emeka"]}
PETS = {"dev": [("Biscuit", "m"), ("Pepper", "f"), ("Waffles", "m"), ("Luna", "f")],
        "test": [("Pickle", "m"), ("Mabel", "f"), ("Turnip", "m"), ("Clementine", "f")]}


# --------------------------------------------------------------------------------------------------------------
# the generator


def _other(role: str) -> str:
    return "B" if role == "A" else "A"


class Talk:
    """One conversation: its cast, calendar, threads, planned questions and rendered sessions."""

    def __init__(self, split: str, c: int, rng: random.Random, pair: list[tuple[str, str]]) -> None:
        self.split, self.c, self.rng = split, c, rng
        self.fmt = "session" if c % 4 == 3 else "message"
        self.verb = 4.2 if self.fmt == "session" else 1.6
        """Longer messages where the date prefix is not repeated (about the same tokens either way)."""
        self.seen: Counter[str] = Counter()
        self.misses = 0
        self.pools = {name: part(globals()[name], split) for name in (
            "POS_ACT", "NEG_EV", "SHOWS", "DISHES", "FAM_EV", "SIB_EV", "PLANS", "WEATHER", "OPEN", "STATUS_HI",
            "ASK_OTHER", "GO_REASON", "WEATHER_PT", "WHO_EV", "OPINIONS")}
        self.core: Counter[str] = Counter()
        self.core_limit = CORE_LIMIT + (self.fmt == "session")
        self.today: set[str] = set()
        """Small-talk items and (speaker, kind) pairs of the current session: not used twice in it."""
        self._pending: list[str] = []
        self._cast(pair)
        self._calendar()
        self._threads()
        self._plan_questions()

    # ---- setup ------------------------------------------------------------------------------------------------

    def _cast(self, pair: list[tuple[str, str]]) -> None:
        rng, split = self.rng, self.split
        used: set[str] = {n for n, _ in pair}

        def take(names: list[str]) -> str:
            name = rng.choice([n for n in names if n not in used])
            used.add(name)
            return name

        self.people: dict[str, dict[str, str]] = {}
        kids = rng.sample([True, rng.random() < 0.5], 2)
        for role, (name, _g) in zip("AB", pair, strict=True):
            pg, sg, kg = rng.choice("fm"), rng.choice("fm"), rng.choice("fm")
            p = {"name": name, "pos": "her" if _g == "f" else "his", "partner": take(PARTNERS[split][pg]),
                 "partner_rel": rng.choice(["wife", "girlfriend"] if pg == "f" else ["husband", "boyfriend"]),
                 "sib": take(SIBS[split][sg]), "sib_rel": "sister" if sg == "f" else "brother",
                 "fr": take(FRIENDS[split])}
            pet, petg = rng.choice([x for x in PETS[split] if x[0] not in used])
            used.add(pet)
            p.update(pet=pet, pet_pr="she" if petg == "f" else "he", Pet_pr="She" if petg == "f" else "He",
                     pet_obj="her" if petg == "f" else "him", pet_pos="her" if petg == "f" else "his")
            if kids[role == "B"]:
                p.update(kid=take(KIDS[split][kg]), kid_rel="daughter" if kg == "f" else "son",
                         kid_pr="she" if kg == "f" else "he", Kid_pr="She" if kg == "f" else "He",
                         kid_obj="her" if kg == "f" else "him", kid_pos="her" if kg == "f" else "his")
            self.people[role] = p
        self.names = (self.people["A"]["name"], self.people["B"]["name"])
        self.skip = {t for n in self.names for t in stems(n)}

    def _calendar(self) -> None:
        rng = self.rng
        self.n_sessions = rng.randint(22, 28)
        t = dt.datetime(rng.choice([2022, 2023, 2024]), rng.randint(1, 7), rng.randint(1, 28))
        self.times: list[dt.datetime] = []
        for k in range(self.n_sessions):
            if k:
                t += dt.timedelta(days=rng.randint(20, 32) if rng.random() < 0.1 else rng.randint(3, 11))
            self.times.append(t.replace(hour=rng.randint(8, 21), minute=rng.randrange(60)))
        total = rng.randint(265, 300)
        weights = [rng.uniform(0.6, 1.4) for _ in range(self.n_sessions)]
        self.n_ex = [max(6, round(total * w / sum(weights))) for w in weights]

    def _threads(self) -> None:
        rng, split, S = self.rng, self.split, self.n_sessions
        pool = [th for th in THREADS if th["split"] in ("both", split)]
        rng.shuffle(pool)
        kid_roles = [r for r in "AB" if "kid" in self.people[r]]
        groups: Counter[tuple[str, int]] = Counter()
        chosen: list[tuple[dict[str, Any], str]] = []
        turn = rng.choice("AB")
        n_threads = rng.randint(14, 16)
        for th in pool:
            if len(chosen) >= n_threads:
                break
            owner = turn
            if th["needs"] == "kid":
                if not kid_roles:
                    continue
                owner = turn if turn in kid_roles else kid_roles[0]
            clash = [g for g, keys in enumerate(CLASH) if th["key"] in keys]
            if any(groups[(owner, g)] for g in clash):
                owner = _other(owner)
                if any(groups[(owner, g)] for g in clash) or (th["needs"] == "kid" and owner not in kid_roles):
                    continue
            groups.update((owner, g) for g in clash)
            chosen.append((th, owner))
            turn = _other(owner)
        self.facts: list[dict[str, Any]] = []
        self.by_thread: dict[str, dict[int, dict[str, Any]]] = {}
        load = Counter[int]()
        self.units: dict[int, list[tuple[str, Any]]] = {k: [] for k in range(S)}
        two3 = (2 * S) // 3
        for th, owner in chosen:
            present = [i for i, ev in enumerate(th["events"]) if rng.random() < ev["opt"]]
            present = [i for i in present if th["events"][i]["upd"] is None or th["events"][i]["upd"] in present]
            sess = self._slots(len(present), th["gap"], load)
            values: dict[int, list[str]] = {}
            mine: dict[int, dict[str, Any]] = {}
            for i, k in zip(present, sess, strict=True):
                ev = th["events"][i]
                src = ev["d"]
                home = int(src[1:]) if isinstance(src, str) else i
                pool_vals = self._pool(th, home)
                taken = values.setdefault(home, [])
                val = rng.choice([v for v in pool_vals if v not in taken])
                taken.append(val)
                f = {"th": th, "i": i, "ev": ev, "owner": owner, "k": k, "d": val, "avoid": set(), "hard": set(),
                     "mode": "rel" if rng.random() < 0.5 else "abs"}
                mine[i] = f
                self.facts.append(f)
                self.units[k].append(("event", f))
                load[k] += 1
            self.by_thread[th["key"]] = mine
            first = min(sess)
            for who, i, tmpl in th["near"]:
                if rng.random() < 0.75:
                    home = i
                    src = th["events"][i]["d"]
                    if isinstance(src, str):
                        home = int(src[1:])
                    left = [v for v in self._pool(th, home) if v not in values.get(home, [])]
                    if left:
                        # the owner's own near miss ("we almost went for a spaniel, but Biscuit picked us") comes
                        # after the event it refers to
                        after = mine[i]["k"] if who == "o" and i in mine else -1
                        k = rng.randrange(min(after + 1, S - 1), S)
                        self.units[k].append(("near", (th, owner, who, tmpl, rng.choice(left))))
            for f in mine.values():
                if th["cb"] and rng.random() < 0.5 and f["k"] < S - 1:
                    self.units[rng.randrange(f["k"] + 1, S)].append(("cb", (th, owner)))
            if th["talk"]:
                for _ in range(2):
                    self.units[rng.randrange(first, S)].append(("talk", (th, owner)))
        self.traits: list[dict[str, Any]] = []
        for role in "AB":
            mine = {th["key"] for th, owner in chosen if owner == role}
            fits = [tr for tr in TRAITS[split] if not mine & set(tr.get("not", ()))]
            for tr in rng.sample(fits, 3):
                k = rng.randrange(0, two3)
                t = {"tr": tr, "owner": role, "k": k, "avoid": set()}
                self.traits.append(t)
                self.units[k].append(("trait", t))
        self.chosen = chosen

    def _pool(self, th: dict[str, Any], i: int) -> list[str]:
        return th["events"][i]["d"][self.split]

    def _slots(self, n: int, gap: int, load: Counter[int]) -> list[int]:
        """Sessions for a thread's n events: in order, the first early, the last ``gap`` or more sessions later,
        mostly within the first two thirds."""
        rng, S = self.rng, self.n_sessions
        two3 = (2 * S) // 3
        best: list[int] = []
        for _ in range(200):
            if n == 1:
                out = [rng.randrange(0, two3)]
            else:
                first = rng.randrange(0, max(1, S // 3))
                if gap < 10:
                    lo, hi = first + gap, first + gap + 4
                else:
                    lo, hi = first + gap, (two3 + 1 if rng.random() < 0.75 else S - 2)
                hi = min(hi, S - 2)
                lo = min(lo, hi)
                last = rng.randint(lo, hi)
                inner = list(range(first + 1, last))
                if len(inner) < n - 2:
                    continue
                out = [first, *sorted(rng.sample(inner, n - 2)), last]
            best = out
            if all(load[k] < 3 for k in out):
                break
        return best

    # ---- questions --------------------------------------------------------------------------------------------

    def _variants(self, th: dict[str, Any], items: Any) -> list[str]:
        if isinstance(items, str):
            return [items]
        return part(items, self.split) if th["split"] == "both" else list(items)

    def _slot_map(self, role: str, **extra: str) -> dict[str, str]:
        m = dict(self.people[role])
        m.update(n=self.people[role]["name"], m=self.people[_other(role)]["name"],
                 p=self.people[role]["partner"])
        m.update(extra)
        return m

    def _fill(self, template: str, role: str, **extra: str) -> str:
        return template.format_map(self._slot_map(role, **extra))

    def _dvals(self, th: dict[str, Any], before: int | None = None) -> dict[str, str]:
        """``d0``, ``d1``, ... of a thread: each event's detail, the latest value where one was updated (only by
        events before event ``before``, if given: what was true when it was told)."""
        mine = self.by_thread[th["key"]]
        out = {f"d{i}": f["d"] for i, f in mine.items()}
        for i, f in sorted(mine.items()):
            if f["ev"]["upd"] is not None and (before is None or i < before):
                out[f"d{f['ev']['upd']}"] = f["d"]
        return out

    def _superseded(self, th: dict[str, Any], i: int) -> dict[str, Any] | None:
        for f in self.by_thread[th["key"]].values():
            if f["ev"]["upd"] == i:
                return f
        return None

    def _avoid(self, text: str) -> set[str]:
        return set(stems(text)) - self.skip

    def _plan_questions(self) -> None:
        rng, S = self.rng, self.n_sessions
        two3 = (2 * S) // 3
        cands: dict[str, list[dict[str, Any]]] = {"single": [], "date": [], "multi": [], "open": []}
        for f in self.facts:
            th, ev = f["th"], f["ev"]
            role = f["owner"]
            if ev["upd"] is not None:
                old = self.by_thread[th["key"]][ev["upd"]]
                q = self._fill(rng.choice(self._variants(th, ev["q"])), role, **self._dvals(th))
                cands["single"].append({"kind": "single", "question": q, "facts": [old, f], "answer": f["d"],
                                        "updated": True, "hard": self._avoid(q), "prio": 2})
            elif (ev["q"] or ev["l"]) and self._superseded(th, f["i"]) is None:
                para = bool(ev["q"]) and (rng.random() < 0.85 or not ev["l"])
                q = self._fill(rng.choice(self._variants(th, ev["q"])) if para else ev["l"], role, d=f["d"],
                               **self._dvals(th))
                cands["single"].append({"kind": "single", "question": q, "facts": [f], "answer": f["d"],
                                        "hard": self._avoid(q) if para else set(), "prio": 1})
            if ev["w"]:
                q = self._fill(ev["w"], role, d=f["d"], **self._dvals(th))
                cands["date"].append({"kind": "date", "question": q, "facts": [f], "prio": 1})
        for th, role in self.chosen:
            mine = self.by_thread[th["key"]]
            for qs, idxs in th["multi"]:
                got = [i for i in idxs if i in mine]
                if len(got) < 2:
                    continue
                facts: list[dict[str, Any]] = []
                parts: list[str] = []
                for i in got:
                    new = self._superseded(th, i)
                    facts.append(mine[i])
                    if new is not None:
                        facts.append(new)
                    parts.append((new or mine[i])["d"])
                q = self._fill(rng.choice(self._variants(th, qs)), role, **self._dvals(th))
                cands["multi"].append({"kind": "multi", "question": q, "facts": facts, "answer": "; ".join(parts),
                                       "prio": 1})
            for qs, idxs, ans in th["open"]:
                if not all(i in mine for i in idxs):
                    continue
                q = self._fill(rng.choice(self._variants(th, qs)), role, **self._dvals(th))
                cands["open"].append({"kind": "open", "question": q, "facts": [mine[i] for i in idxs],
                                      "answer": self._fill(ans, role, **self._dvals(th)), "soft": self._avoid(q),
                                      "prio": 1})
        for t in self.traits:
            q = self._fill(t["tr"]["q"], t["owner"])
            cands["open"].append({"kind": "open",
                  "question": q, "facts": [t], "answer": self._fill(t["tr"]["a"], t["owner"]),
                                  "soft": self._avoid(q), "prio": 1})
        total = rng.randint(54, 66)
        want = {"single": round(0.35 * total), "date": round(0.25 * total), "multi": round(0.25 * total)}
        want["open"] = total - sum(want.values())
        chosen: dict[str, list[dict[str, Any]]] = {}
        used: Counter[int] = Counter()
        for kind in ("single", "date", "multi", "open"):
            def weight(c: dict[str, Any], kind: str = kind) -> float:
                w = 1.0 if all(f["k"] < two3 for f in c["facts"]) else 0.2
                if kind == "multi":
                    span = max(f["k"] for f in c["facts"]) - min(f["k"] for f in c["facts"])
                    w *= 1.0 if span >= 10 else 0.4
                if kind == "date" and any(used[id(f)] for f in c["facts"]):
                    w *= 0.5
                return w * c["prio"] * 4

            keyed = sorted(cands[kind], key=lambda c: -(rng.random() ** (1.0 / weight(c))))
            keyed.sort(key=lambda c: not c.get("updated"))  # every update is asked
            chosen[kind] = keyed[:want[kind]]
            for c in chosen[kind]:
                for f in c["facts"]:
                    used[id(f)] += 1
        dates = chosen["date"][:]
        rng.shuffle(dates)
        for j, c in enumerate(dates):
            c["facts"][0]["mode"] = "rel" if j % 2 == 0 else "abs"
            c["facts"][0]["dated"] = True
        for c in chosen["single"]:
            for f in c["facts"]:
                f["hard"] |= c["hard"]
        for c in chosen["open"]:
            for f in c["facts"]:
                f["avoid"] |= c["soft"]
        self.questions = [c for kind in ("single", "date", "multi", "open") for c in chosen[kind]]

    # ---- sentences --------------------------------------------------------------------------------------------

    def fresh(self, make: Any, avoid: set[str] | None = None, must: bool = True, tries: int = 40) -> str | None:
        """A text from ``make()`` none of whose sentences has been used ``MAX_REPEAT`` times (and, given
        ``avoid``, sharing no stem with it); ``None`` if none was found and ``must`` is false."""
        text = ""
        for _ in range(tries):
            self._pending = []
            text = make()
            ss = sentences(text)
            if any(self.seen[s] >= MAX_REPEAT for s in ss):
                continue
            if avoid and set(stems(text)) & avoid:
                continue
            self.seen.update(ss)
            self.core.update(self._pending)
            self.today.update(self._pending)
            return text
        if not must:
            return None
        self.misses += 1
        self.seen.update(sentences(text))
        self.core.update(self._pending)
        self.today.update(self._pending)
        return text

    def p(self, x: float) -> bool:
        """True with probability ``x``, scaled by the conversation's verbosity."""
        return self.rng.random() < min(0.95, x * self.verb)

    def extras(self, role: str, x: float) -> list[str | None]:
        """About ``x`` (scaled by verbosity) small-talk sentences of ``role``, at most 2 (3 in ``session``
        conversations)."""
        e = x * self.verb
        n = min(3 if self.verb > 2 else 2, int(e) + (self.rng.random() < e - int(e)))
        return [self.say_report(role)[0] for _ in range(n)]

    def back(self) -> str:
        """A time in the recent past, fitting the session's hour (no "earlier today" at 8 am)."""
        early = ("This morning", "Earlier today")
        return self.rng.choice([t for t in TIME_BACK if self.hour >= 11 or t not in early])

    def _room(self, names: tuple[str, ...]) -> bool:
        """Whether one of these pools has an item used fewer than ``core_limit`` times."""
        if not names:
            return True
        for name in names:
            if name == "ERRANDS":
                if any(self.core[f"{a}|{b}"] < self.core_limit for a, bs in ERRANDS for b in bs):
                    return True
            elif any(self.core[x] < self.core_limit for x in self.pools.get(name, globals()[name])):
                return True
        return False

    def _pk_pair(self, name: str) -> tuple[str, str]:
        """A (place, purpose) of a list of places with purposes, as :meth:`_pk`."""
        pool = [f"{a}|{b}" for a, bs in globals()[name] for b in bs]
        left = ([x for x in pool if self.core[x] < self.core_limit and x not in self.today]
                or [x for x in pool if x not in self.today] or pool)
        item = self.rng.choice(left)
        self._pending.append(item)
        a, b = item.split("|")
        return a, b

    def comment(self, v: str) -> str | None:
        """What a friend adds after reacting: advice after bad news, a shared memory or a tip otherwise."""
        rng = self.rng
        if v == "-":
            return self.fresh(lambda: f"You should {self._pk('ADVICE')}, {rng.choice(ADVICE_WHY)}.", must=False)
        if v == "+" and rng.random() < 0.5:
            return self.fresh(lambda: f"{cap(self._pk('CELEBRATE'))}!", must=False)
        if rng.random() < 0.6:
            return self.fresh(lambda: f"{rng.choice(MEMORY_PRE)} {self._pk('MEMORIES')}.", must=False)
        return self.fresh(lambda: f"{rng.choice(REC_PRE)} {self._pk('RECS')}, {rng.choice(REC_COM)}.", must=False)

    def _pk(self, name: str) -> str:
        """An item of a small-talk pool used fewer than ``CORE_LIMIT`` times in the conversation (counted when the
        sentence it goes into is accepted by :meth:`fresh`)."""
        pool = self.pools[name] if name in self.pools else globals()[name]
        left = ([x for x in pool if self.core[x] < self.core_limit and x not in self.today]
                or [x for x in pool if x not in self.today] or pool)
        item = self.rng.choice(left)
        self._pending.append(item)
        return item

    def report(self, role: str, kind: str | None = None) -> tuple[Any, str]:
        """A small-talk sentence maker for ``role`` (of a kind, or any) and its valence ("+", "-", "=")."""
        rng, me = self.rng, self.people[role]
        if kind == "gen":
            kind = rng.choice(["pos", "pos", "neg"])
        if kind is None:
            kinds = [k for k in REPORT_KINDS if self._room(REPORT_KINDS[k][1])
                     and not (k in ONCE and f"{role}:{k}" in self.today)] or list(REPORT_KINDS)
            kind = rng.choices(kinds, [REPORT_KINDS[k][0] for k in kinds])[0]
        if kind in ONCE:
            self.today.add(f"{role}:{kind}")
        if kind == "errand":
            def make_errand() -> str:
                place, why = self._pk_pair("ERRANDS")
                return f"{self.back()} I went to {place} to {why}, {rng.choice(ERRAND_COM)}."
            return make_errand, "="
        if kind == "rec":
            return (lambda: f"{rng.choice(REC_PRE)} {self._pk('RECS')}, {rng.choice(REC_COM)}."), "="
        if kind == "who":
            return (lambda: f"{rng.choice(WHO)} {self._pk('WHO_EV')}, {rng.choice(WHO_COM)}."), "="
        if kind == "opinion":
            return (lambda: f"{rng.choice(OPINION_PRE)} {self._pk('OPINIONS')}."), "="
        if kind == "pos":
            def make() -> str:
                if rng.random() < 0.5:
                    return f"{self.back()} I {self._pk('POS_ACT')}, {rng.choice(POS_COM)}."
                return f"I {self._pk('POS_ACT')} {low(self.back())}, {rng.choice(POS_COM)}."
            return make, "+"
        if kind == "neg":
            return (lambda: f"{self.back()} {self._pk('NEG_EV')}, {rng.choice(NEG_COM)}."), "-"
        if kind == "weather":
            def make_weather() -> str:
                if self._room(("WEATHER",)) and (rng.random() < 0.5 or not self._room(("WEATHER_PT",))):
                    return f"{self._pk('WEATHER')} {rng.choice(WEATHER_T)}, {rng.choice(WEATHER_F)}."
                return f"{self._pk('WEATHER_PT')} {rng.choice(WEATHER_PT_T)}, {rng.choice(WEATHER_F)}."
            return make_weather, "="
        if kind == "show":
            def make_show() -> str:
                who = rng.choice(["I've been watching", "We've been watching", f"{me['partner']} got me into",
                                  f"{me['partner']} and I started"])
                return f"{who} {self._pk('SHOWS')}, {rng.choice(SHOW_EVAL)}."
            return make_show, "="
        if kind == "food":
            def make_food() -> str:
                who = rng.choice(["We had", f"{me['partner']} made", "I made"])
                return f"{who} {self._pk('DISHES')} for dinner {rng.choice(TIME_EVE)}, {rng.choice(FOOD_EVAL)}."
            return make_food, "="
        if kind == "work":
            adj, con = WORK_BUSY if rng.random() < 0.6 else WORK_CALM
            return (lambda: f"Work has been {rng.choice(adj)} {rng.choice(WORK_T)}, {rng.choice(con)}."), "="
        if kind == "fam":
            return (lambda: f"{me['partner']} {self._pk('FAM_EV')}, {rng.choice(FAM_COM)}."), "="
        if kind == "sib":
            return (lambda: f"My {me['sib_rel']} {me['sib']} {self._pk('SIB_EV')}, {rng.choice(SIB_COM)}."), "="
        def make_plan() -> str:
            if rng.random() < 0.5:
                return f"I'm thinking of {self._pk('PLANS')} {rng.choice(PLAN_T)}."
            return f"{me['partner']} and I keep talking about {self._pk('PLANS')} {rng.choice(PLAN_T)}."
        return make_plan, "="

    def say_report(self, role: str, avoid: set[str] | None = None, must: bool = True,
                   kind: str | None = None) -> tuple[str | None, str]:
        make, v = self.report(role, kind)
        return self.fresh(make, avoid, must), v

    def ask(self, role: str, avoid: set[str] | None = None, must: bool = True, generic: bool = False) -> str | None:
        """A question ``role`` asks the other friend (``generic``: what's new); ``self.asked`` is the kind of
        answer it wants."""
        rng, you = self.rng, self.people[_other(role)]
        pool = [x for x in self.pools["ASK_OTHER"] if x[1] == "gen"] if generic else self.pools["ASK_OTHER"]
        chosen: list[str] = []

        def make() -> str:
            q, kind = rng.choice(pool)
            chosen[:] = [kind]
            q = q.format(op=you["partner"], osr=you["sib_rel"], osn=you["sib"])
            pre = rng.choice(ASK_PRE)
            return f"{pre}{q}?" if pre else f"{cap(q)}?"
        text = self.fresh(make, avoid, must)
        self.asked = chosen[0] if chosen else "gen"
        return text

    def react(self, v: str) -> str:
        rng = self.rng
        a, b = {"+": REACT_POS, "-": REACT_NEG}.get(v, REACT_NEU)
        return self.fresh(lambda: f"{rng.choice(a)}, {rng.choice(b)}{rng.choice('!.') if v != '-' else '.'}") or ""

    def pair(self, parts: tuple[list[str], list[str]], sep: str = ", ") -> str:
        a, b = parts
        return self.fresh(lambda: f"{self.rng.choice(a)}{sep}{self.rng.choice(b)}") or ""

    # ---- units ------------------------------------------------------------------------------------------------

    def say(self, role: str, parts: list[str | None], facts: list[dict[str, Any]] | None = None,
            core: str | None = None) -> None:
        """Add a message of the given parts; at most 5 sentences (dropping parts from the start, but never
        ``core`` nor a closing question)."""
        kept = [p for p in parts if p]
        while sum(len(sentences(p)) for p in kept) > 5:
            drop = [j for j, p in enumerate(kept) if p != core and not (j == len(kept) - 1 and p.endswith("?"))]
            if not drop:
                break
            del kept[drop[0]]
        text = " ".join(kept)
        assert text and (not self.msgs or self.msgs[-1][0] != role), (role, text)
        self.msgs.append((role, text, facts or []))

    def last(self) -> str | None:
        return self.msgs[-1][0] if self.msgs else None

    def lead_to(self, role: str) -> None:
        """Make ``role`` the next speaker: if they spoke last, the other friend says something first."""
        if self.last() == role:
            other = _other(role)
            if self.rng.random() < 0.5:
                self.say(other, [*self.extras(other, 0.3), self.ask(other, generic=True)])
            else:
                self.say(other, [self.say_report(other)[0], *self.extras(other, 0.3)])

    def u_opener(self, k: int) -> None:
        rng, a, b = self.rng, self.people["A"], self.people["B"]
        gap = (self.times[k] - self.times[k - 1]).days if k else 0
        opens = OPEN_LONG if gap >= 20 else self.pools["OPEN"]
        first = self.fresh(lambda: f"{rng.choice(HI)} {b['name']}, {rng.choice(opens)}")
        self.say("A", [first, *self.extras("A", 0.3)])
        reply = self.fresh(lambda: f"{rng.choice(HI)} {a['name']}, {self._pk('STATUS_HI')}.")
        more: list[str | None] = self.extras("B", 0.45)
        if rng.random() < 0.4:
            more.append(self.ask("B", generic=True))
        self.say("B", [reply, *more])

    def u_fill(self) -> None:
        rng = self.rng
        s = _other(self.last() or "B")
        r = _other(s)
        first, v = self.say_report(s)
        parts = [first, *self.extras(s, 0.4)]
        asked = rng.random() < 0.35
        if asked:
            parts.append(self.ask(s))
        self.say(s, parts)
        if asked:
            ans, v2 = self.say_report(r, kind=self.asked)
            self.say(r, [ans, *self.extras(r, 0.3)])
            if rng.random() < 0.5:
                self.say(s, [self.react(v2), *self.extras(s, 0.3)])
        else:
            tip = self.comment(v) if self.p(0.25) else None
            self.say(r, [self.react(v), tip, *self.extras(r, 0.5 if tip else 0.6)])

    def u_talk(self, th: dict[str, Any], owner: str) -> None:
        rng = self.rng
        self.lead_to(owner)
        opts = [self._fill(t, owner) for t in th["talk"]]
        line = self.fresh(lambda: rng.choice(opts), must=False)
        if line is None:
            return self.u_fill()
        extra = self.extras(owner, 0.4)
        self.say(owner, [line, *extra] if rng.random() < 0.5 else [*extra, line])
        self.say(_other(owner), [self.react("="), *self.extras(_other(owner), 0.4)])

    def u_near(self, th: dict[str, Any], owner: str, who: str, tmpl: str, o: str) -> None:
        rng = self.rng
        spk = owner if who == "o" else _other(owner) if who == "x" else rng.choice("AB")
        self.lead_to(spk)
        m = self._slot_map(owner, o=o)
        m["fr"] = self.people[spk]["fr"]
        line = tmpl.format_map(m)
        self.seen.update(sentences(line))
        pre = self.say_report(spk)[0] if self.p(0.35) else None
        post = self.say_report(spk)[0] if self.p(0.3) else None
        self.say(spk, [pre, line, post])
        tip = self.comment("=") if self.p(0.2) else None
        self.say(_other(spk), [self.react("="), tip, *self.extras(_other(spk), 0.4)])

    def u_cb(self, th: dict[str, Any], owner: str) -> None:
        rng, y = self.rng, _other(owner)
        if self.last() == y:
            self.say(owner, [self.react("="), *self.extras(owner, 0.45)])
        opts = [self._fill(t, owner) for t in th["cb"]]

        def make() -> str:
            pre = rng.choice(CB_PRE)
            q = rng.choice(opts)
            return pre + (q[0].lower() + q[1:] if pre and not q.startswith(("I ", "I'", "{")) and q[:1] not in
                          "".join(self.people[owner][k][:1] for k in ("kid", "pet", "sib") if k in self.people[owner])
                          else q)
        self.say(y, [*self.extras(y, 0.3), self.fresh(make)])
        status = self.pair(STATUS, sep="")
        extra = None
        if th["talk"] and self.p(0.45):
            opts2 = [self._fill(t, owner) for t in th["talk"]]
            extra = self.fresh(lambda: rng.choice(opts2), must=False)
        self.say(owner, [status, extra])

    def u_trait(self, t: dict[str, Any]) -> None:
        rng, x = self.rng, t["owner"]
        self.lead_to(x)
        line = t["tr"]["s"]
        self.seen.update(sentences(line))
        pre = self.say_report(x, t["avoid"], must=False)[0] if self.p(0.4) else None
        post = self.say_report(x, t["avoid"], must=False)[0] if self.p(0.3) else None
        self.say(x, [pre, line, post], facts=[t], core=line)
        self.say(_other(x), [self.fresh(lambda: rng.choice(TRAIT_REACT)), *self.extras(_other(x), 0.4)])

    def _when(self, f: dict[str, Any], k: int) -> tuple[str, str, bool]:
        """The time expression of a fact told in session k: (expression, resolved date or range, relative)."""
        rng, t = self.rng, self.times[k]
        prev = self.times[k - 1].date() if k else t.date() - dt.timedelta(days=30)
        if f["mode"] == "rel":
            opts = past_expressions(t.date(), prev) if f["ev"]["t"] == "past" else future_expressions(t.date())
            expr, ans, _ = rng.choices(opts, [w for _, _, w in opts])[0]
            return expr, ans, True
        return rng.choice(present_expressions(t, f["ev"]["t"])), t.date().isoformat(), False

    def u_event(self, f: dict[str, Any]) -> None:
        rng, th, ev, x = self.rng, f["th"], f["ev"], f["owner"]
        y = _other(x)
        k = len(self.rendered)
        if self.last() == x:  # the other friend asks (about the topic, or just what's new)
            if th["ask"] and rng.random() < 0.5:
                opts = [self._fill(a, x) for a in th["ask"]]
                prompt = self.fresh(lambda: rng.choice(opts), must=False) or self.ask(y, generic=True)
            else:
                prompt = self.ask(y, generic=True)
            self.say(y, [*self.extras(y, 0.35), prompt])
        expr, ans, rel = self._when(f, k)
        f.update(expr=expr, date=ans, rel=rel)
        dv = self._dvals(th, before=f["i"])
        dv[f"d{f['i']}"] = f["d"]
        fill = self._slot_map(x, d=f["d"], D=cap(f["d"]), when=expr, When=cap(expr), **{k2: v2 for k2, v2 in dv.items()
                                                                                        if k2 != "d"})
        wordings = self._variants(th, ev["s"])
        order = rng.sample(wordings, len(wordings))
        line = order[0].format_map(fill)
        for w in order:
            cand = w.format_map(fill)
            if not (self._avoid(cand) & f["hard"]):
                line = cand
                break
        self.seen.update(sentences(line))
        avoid = f["hard"] | f["avoid"]
        pos = rng.choices(["alone", "start", "middle", "end"], [1, 3, 3, 3])[0]
        more = [1, 2, 2] if self.verb > 2 else [1, 1, 2]
        n_pre = 0 if pos in ("alone", "start") else rng.choice(more)
        n_post = 0 if pos in ("alone", "end") else rng.choice(more)
        pre: list[str | None] = []
        lead = LEAD_POS if ev["v"] == "+" else LEAD_NEG
        for j in range(n_pre):
            if j == 0 and rng.random() < 0.45:
                pre.append(self.fresh(lambda lead=lead: f"{rng.choice(lead[0])} {rng.choice(lead[1])}", avoid, False))
            else:
                pre.append(self.say_report(x, avoid, must=False)[0])
        post: list[str | None] = []
        feel = FEEL_POS if ev["v"] == "+" else FEEL_NEG
        for j in range(n_post):
            r = rng.random()
            if r < 0.4 and j == 0:
                post.append(self.fresh(lambda feel=feel: f"{rng.choice(feel[0])} {rng.choice(feel[1])}", avoid, False))
            else:
                post.append(self.say_report(x, avoid, must=False)[0])
        f["pos"] = pos if any(pre) or any(post) else "alone"
        if f["pos"] != "alone" and not any(pre):
            f["pos"] = "start"
        elif f["pos"] != "alone" and not any(post):
            f["pos"] = "end"
        self.say(x, [*pre, line, *post], facts=[f], core=line)
        # the other friend reacts, reusing the news' words without restating it
        yfill = self._slot_map(x, d=f["d"], D=cap(f["d"]), **{k2: v2 for k2, v2 in dv.items() if k2 != "d"})
        reacts = [r.format_map(yfill) for r in ev["r"]]
        cheer = CHEER if ev["v"] == "+" else SYMPATHY
        first = (self.fresh(lambda: rng.choice(reacts), must=False) if reacts and rng.random() < 0.65 else None) \
            or self.pair(cheer)
        follow = None
        if rng.random() < 0.65:
            fol = FOLLOW_POS if ev["v"] == "+" else FOLLOW_NEG
            p = self.people[x]["partner"]
            def make_follow() -> str:
                pre, q = rng.choice(FOLLOW_PRE), rng.choice(fol).format(p=p)
                return f"{pre}{q[0].lower() + q[1:] if pre else q}?"
            follow = self.fresh(make_follow, must=False)
        self.say(y, [first, follow])
        if rng.random() < 0.85:
            opts = [self._fill(m, x, **dv) for m in ev["m"]]
            more = self.fresh(lambda: rng.choice(opts), must=False) if opts else None
            if more is None:
                more = self.say_report(x)[0]
            else:
                pre_t = rng.choice(THANKS)
                if pre_t and pre_t.endswith(", ") and more.startswith(("The ", "It", "We", "My", "There", "Now",
                                                                        "Half", "Everyone", "Honestly", "Three",
                                                                        "If", "At", "Next", "She", "They", "Two")):
                    more = pre_t + more[0].lower() + more[1:]
                elif pre_t and not pre_t.endswith(", "):
                    more = pre_t + more
            self.say(x, [more, *self.extras(x, 0.3)])
            if rng.random() < 0.4:
                tip = self.comment(ev["v"]) if self.p(0.3) else None
                self.say(y, [self.react("+" if ev["v"] == "+" else "-"), tip, *self.extras(y, 0.3 if tip else 0.4)])

    def u_close(self) -> None:
        rng = self.rng
        if self.last() == "B":
            go = self.fresh(lambda: f"{rng.choice(GO_PRE)} {rng.choice(self.pools['GO_REASON'])}, {rng.choice(GO_END)}")
            self.say("A", [*self.extras("A", 0.3), go])
            self.say("B", [self.pair(BYE)])
        else:
            go = self.fresh(lambda: f"{rng.choice(GO_PRE)} {rng.choice(self.pools['GO_REASON'])}, {rng.choice(GO_END)}")
            self.say("B", [self.react("="), go] if rng.random() < 0.5 else [go])

    # ---- sessions -----------------------------------------------------------------------------------------------

    def render(self) -> dict[str, Any]:
        rng = self.rng
        self.rendered: list[list[tuple[str, str, list[dict[str, Any]]]]] = []
        for k in range(self.n_sessions):
            self.msgs: list[tuple[str, str, list[dict[str, Any]]]] = []
            self.today = set()
            self.hour = self.times[k].hour
            self.u_opener(k)
            units = list(self.units[k])
            rng.shuffle(units)
            est = sum(4 if u[0] == "event" else 2 for u in units)
            n_fill = max(1, round((2 * self.n_ex[k] - 4 - est) / 2.4))
            seq: list[tuple[str, Any]] = units + [("fill", None)] * n_fill
            rng.shuffle(seq)
            if seq[0][0] != "fill" and rng.random() < 0.7:
                seq.insert(0, ("fill", None))
            for kind, arg in seq:
                if kind == "fill":
                    self.u_fill()
                elif kind == "event":
                    self.u_event(arg)
                elif kind == "trait":
                    self.u_trait(arg)
                elif kind == "near":
                    self.u_near(*arg)
                elif kind == "cb":
                    self.u_cb(*arg)
                elif kind == "talk":
                    self.u_talk(*arg)
            self.u_close()
            self.rendered.append(self.msgs)
        return self._output()

    def _output(self) -> dict[str, Any]:
        c = self.c
        turns: list[dict[str, str]] = []
        sessions: list[dict[str, Any]] = []
        for k, msgs in enumerate(self.rendered):
            when = stamp(self.times[k])
            sessions.append({"session": k + 1, "date_time": when, "first_turn": f"c{c}_t{len(turns)}"})
            for j, (role, text, facts) in enumerate(msgs):
                tid = f"c{c}_t{len(turns)}"
                assert role == ("A" if len(turns) % 2 == 0 else "B")
                name = self.people[role]["name"]
                head = f"[{when}] {name}: " if self.fmt == "message" or j == 0 else f"{name}: "
                turns.append({"id": tid, "role": "user" if role == "A" else "assistant", "content": head + text})
                for f in facts:
                    f["tid"], f["session"] = tid, k + 1
        by_id = {t["id"]: t["content"] for t in turns}
        questions: list[dict[str, Any]] = []
        position = {t["id"]: i for i, t in enumerate(turns)}
        for n, q in enumerate(self.questions):
            q["facts"] = sorted(q["facts"], key=lambda f: position[f["tid"]])
            ev_ids = [f["tid"] for f in q["facts"]]
            item: dict[str, Any] = {"id": f"c{c}_q{n}", "kind": q["kind"], "question": q["question"],
                                    "evidence": ev_ids}
            if q["kind"] == "date":
                f = q["facts"][0]
                item["answer"] = f["date"]
                item["relative"] = f["expr"] if f["rel"] else None
            else:
                item["answer"] = q["answer"]
            item["lexical_overlap"] = overlap(q["question"], [by_id[e] for e in ev_ids], self.names)
            item["session"] = [f["session"] for f in q["facts"]]
            if q.get("updated"):
                item["updated"] = True
            questions.append(item)
        a, b = self.names
        return {"id": f"talk_{self.split}{c}", "date_format": self.fmt,
                "system": f"{a} and {b} are friends who catch up over many sessions of chat.",
                "sessions": sessions, "turns": turns, "questions": questions}


def make(split: str, n_conversations: int = N_CONVERSATIONS) -> list[dict[str, Any]]:
    rng = random.Random(SEEDS[split])
    names = PEOPLE[split][:]
    rng.shuffle(names)
    return [Talk(split, c, rng, names[2 * c:2 * c + 2]).render() for c in range(n_conversations)]


# --------------------------------------------------------------------------------------------------------------
# self-check

_STAMP = re.compile(r"^\[\d{1,2}:\d\d [ap]m on \d{1,2} [A-Z][a-z]+, \d{4}\] [A-Z][a-z]+: \S")
_NAME = re.compile(r"^[A-Z][a-z]+: \S")


def check(convs: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures and invariants of one split's conversations; ``problems`` lists what is wrong (empty: all good)."""
    from arcana_jupyter.tokens import TokenCounter

    counter = TokenCounter()
    problems: list[str] = []
    kinds: Counter[str] = Counter()
    tokens: list[int] = []
    exchanges: list[int] = []
    n_sessions: list[int] = []
    per_conv: list[int] = []
    max_rep = 0
    para = {"single": [0, 0], "multi": [0, 0], "open": [0, 0], "date": [0, 0]}
    rel = [0, 0]
    spans = [0, 0]
    early = [0, 0]
    fmts: Counter[str] = Counter()
    position: Counter[str] = Counter()
    updated = 0
    for conv in convs:
        turns = conv["turns"]
        by_id = {t["id"]: t for t in turns}
        index = {t["id"]: i for i, t in enumerate(turns)}
        fmts[conv["date_format"]] += 1
        speakers = tuple(body_name(t["content"]) for t in turns[:2])
        n_sessions.append(len(conv["sessions"]))
        firsts = {s["first_turn"] for s in conv["sessions"]}
        if len(turns) % 2 or any(t["role"] != ("user" if i % 2 == 0 else "assistant") for i, t in enumerate(turns)):
            problems.append(f"{conv['id']}: turns do not alternate user/assistant")
        exchanges.append(len(turns) // 2)
        tokens.append(sum(counter.count_text(t["content"]) for t in turns))
        reps: Counter[str] = Counter()
        for t in turns:
            dated = conv["date_format"] == "message" or t["id"] in firsts
            if not (_STAMP if dated else _NAME).match(t["content"]):
                problems.append(f"{conv['id']}: {t['id']} has no proper prefix: {t['content'][:60]!r}")
            n = len(sentences(body(t["content"])))
            if not 1 <= n <= 5:
                problems.append(f"{conv['id']}: {t['id']} has {n} sentences")
            reps.update(sentences(body(t["content"])))
        max_rep = max(max_rep, max(reps.values()))
        per_conv.append(len(conv["questions"]))
        last_session = len(conv["sessions"])
        for q in conv["questions"]:
            kinds[q["kind"]] += 1
            missing = [e for e in q["evidence"] if e not in by_id]
            if missing:
                problems.append(f"{q['id']}: unknown evidence {missing}")
                continue
            texts = [by_id[e]["content"] for e in q["evidence"]]
            para[q["kind"]][0] += 1
            para[q["kind"]][1] += not q["lexical_overlap"]
            if q["lexical_overlap"] != overlap(q["question"], texts, speakers):
                problems.append(f"{q['id']}: lexical_overlap is not what the question and evidence say")
            if q["kind"] in ("single", "multi"):
                for piece in q["answer"].split("; "):
                    if not any(piece in t for t in texts):
                        problems.append(f"{q['id']}: answer {piece!r} is not in its evidence")
            updated += bool(q.get("updated"))
            if q["kind"] == "single" and len(texts) == 1:
                ss = sentences(body(texts[0]))
                at = next(i for i, x in enumerate(ss) if q["answer"] in x)
                position["alone" if len(ss) == 1 else "start" if at == 0 else "end" if at == len(ss) - 1
                         else "middle"] += 1
            if q["kind"] == "multi":
                ss = q["session"]
                spans[0] += 1
                spans[1] += max(ss) - min(ss) >= 10
                if len(set(ss)) < 2:
                    problems.append(f"{q['id']}: multi evidence in one session")
            if q["kind"] == "date":
                rel[0] += 1
                rel[1] += q["relative"] is not None
                if not re.fullmatch(r"\d{4}-\d\d-\d\d(/\d{4}-\d\d-\d\d)?", q["answer"]):
                    problems.append(f"{q['id']}: date answer {q['answer']!r}")
            early[0] += len(q["session"])
            early[1] += sum(s <= (2 * last_session) // 3 for s in q["session"])
            if sorted(q["evidence"], key=index.__getitem__) != q["evidence"]:
                problems.append(f"{q['id']}: evidence out of order")
    single_para = para["single"][1] / max(1, para["single"][0])
    if single_para < 0.6:
        problems.append(f"only {single_para:.0%} of single questions are paraphrased")
    if max_rep > MAX_REPEAT + 1:
        problems.append(f"a sentence occurs {max_rep} times in a conversation")
    return {"conversations": len(convs), "date_format": dict(fmts), "sessions": (min(n_sessions), max(n_sessions)),
            "exchanges": (min(exchanges), max(exchanges)), "tokens": (min(tokens), max(tokens)),
            "questions": (min(per_conv), max(per_conv), sum(per_conv)), "by_kind": dict(kinds),
            "paraphrased": {k: round(v[1] / max(1, v[0]), 2) for k, v in para.items()},
            "date_relative": round(rel[1] / max(1, rel[0]), 2), "multi_10_apart": round(spans[1] / max(1, spans[0]), 2),
            "evidence_in_first_two_thirds": round(early[1] / max(1, early[0]), 2), "max_sentence_repeats": max_rep,
            "updated": updated, "fact_position": {k: round(v / max(1, sum(position.values())), 2)
                                                   for k, v in sorted(position.items())},
            "problems": problems}


def write(out: Path = DATA) -> dict[str, dict[str, Any]]:
    """Generate both splits into ``out``; returns each split's :func:`check`."""
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, dict[str, Any]] = {}
    for split in SPLITS:
        convs = make(split)
        (out / f"talks_{split}.json").write_text(json.dumps(convs, indent=0, ensure_ascii=False) + "\n",
                                                 encoding="utf-8")
        report[split] = check(convs)
    return report


def main() -> None:
    for split, r in write().items():
        print(f"talks_{split}.json: {r['conversations']} conversations ({r['date_format']}), sessions {r['sessions']}, "
              f"exchanges {r['exchanges']}, tokens {r['tokens']}")
        print(f"  questions per conversation {r['questions'][:2]}, {r['questions'][2]} in all: {r['by_kind']}")
        print(f"  paraphrased (no content word in common with the evidence): {r['paraphrased']}")
        print(f"  date questions needing a relative expression: {r['date_relative']:.0%}; multi 10+ sessions apart: "
              f"{r['multi_10_apart']:.0%}; evidence in the first two thirds: {r['evidence_in_first_two_thirds']:.0%}")
        print(f"  updated facts asked (single, evidence old and new): {r['updated']}; where a single fact sits in its "
              f"message: {r['fact_position']}")
        print(f"  max repetitions of a sentence in a conversation: {r['max_sentence_repeats']}")
        print(f"  evidence ids exist, single/multi answers in their evidence, formats: "
              f"{'ok' if not r['problems'] else '; '.join(r['problems'][:10])}")


if __name__ == "__main__":
    main()
