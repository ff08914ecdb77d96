"""Writes ``data/chats_dev.json`` and ``data/chats_test.json``: long multi-session chats asked about literally.

Run: ``python -m benchmarks.retention.make_chats``. Deterministic (seeded): the files in the repo are what
this script writes. No model is involved.

The counterpart of :mod:`.make_hard` (questions paraphrased away from their evidence): conversations
shaped like LoCoMo's real ones, where most questions share words with the turn they are about and the
difficulty is elsewhere — the same topics come back in many sessions, replies echo what was just
said, and names are everywhere. Each conversation is about 28k tokens: 24-30 sessions, each opened
with its date and time, between two friends (``Name: text`` turns, user and assistant roles) or a
user and an assistant (longer advice replies). Life threads (painting, running, a new job, a trip,
the kids, ...) each have two or three events planted in different sessions — a fact stated early
and asked about after many more sessions — among small talk and topical chatter that reuses the
thread's words without its facts, and near misses (the same kind of news about someone else, a plan,
another detail): distractors, lexical and semantic alike. Questions, after the
conversation:

The fact is usually one sentence of a longer turn (small talk before or after it), as in real chats.

- ``single``: one fact, asked with the words it was stated in (``What did Caroline paint for the
  hallway?`` for ``I finally finished the sunset over the lake, it's hanging in the hallway``);
  about one in five is asked in other words (the paraphrase share of real chats);
- ``date``: ``When did ...`` (the evidence turn's session has the date) and ``What came next for X
  after ...`` (two turns: the anchor event and the next one of the thread);
- ``multi``: a thread's events together (``What sports has Melanie taken part in?``);
- ``open``: an inference from a thread (``Would Melanie enjoy a weekend of outdoor activities?``),
  worded apart from its evidence.

``lexical_overlap`` says whether the question shares a content word (stemmed, stop words out) with
its evidence. Dev and test use different seeds, names, places and details; tune on dev only.
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

from arcana_jupyter.context.relevance import stems

DATA = Path(__file__).parent / "data"

PEOPLE = {
    "dev": ["Caroline", "Melanie", "Jolene", "Deborah", "Nate", "Joanna", "Gina", "Jon", "Andrew", "Audrey",
            "Evan", "Sam", "Calvin", "Dave", "Tim", "John"],
    "test": ["Maria", "Joseph", "Priya", "Omar", "Harriet", "Leon", "Beth", "Marcus", "Fiona", "Raj",
             "Lena", "Victor", "Nina", "Hugo", "Tessa", "Kofi"],
}
KIDS = {"dev": ["Ella", "Noah", "Lily", "Max"], "test": ["Ruby", "Oscar", "Mia", "Leo"]}
PLACES = {"dev": ["Lake Tahoe", "Boston", "Asheville", "the Catskills", "Portland", "Santa Fe"],
          "test": ["Lake Como", "Edinburgh", "Bruges", "the Dolomites", "Copenhagen", "Kyoto"]}

# A thread: events (each a fact turn with a detail, the question asked of it literally, the same
# question in other words, and the answer), chatter that reuses its words without the facts, a
# multi-hop question over all its events and an open (inference) question.
THREADS: list[dict[str, Any]] = [
    {"key": "painting",
     "events": [
         ("I finally finished {d}, it's hanging in the hallway now.", "What did {n} paint for the hallway?",
          "Which artwork now decorates {n}'s corridor?",
          {"dev": ["the sunset over the lake", "a portrait of my grandmother"],
           "test": ["the harbour at dawn", "a field of poppies"]}),
         ("My painting of {d} got accepted into the community art show!",
          "Which painting of {n}'s was accepted into the art show?", "What piece did the exhibition jury pick?",
          {"dev": ["two horses in the rain", "the old lighthouse"], "test": ["a fox in the snow", "the city bridge"]}),
         ("I signed up for a {d} painting class at the art centre, it starts next week.",
          "What kind of painting class did {n} sign up for?", "Which studio course did {n} enrol in?",
          {"dev": ["watercolour", "oil"], "test": ["acrylic", "gouache"]}),
     ],
     "chatter": ["Painting is how I unwind after a long day.", "I keep buying brushes I never use.",
                 "The art centre has a new café, it's nice.", "I haven't painted in a while, too busy.",
                 "Do you think I should frame my paintings or leave them as canvases?"],
     "multi": "What has {n} painted or done with painting?",
     "open": "Would {n} enjoy a day at a museum of modern art?"},
    {"key": "running",
     "events": [
         ("I ran the {d} charity race on Sunday, raised money for the children's hospital.",
          "Which charity race did {n} run?", "What fundraising event on foot did {n} complete?",
          {"dev": ["Riverside 10k", "Harbour Half"], "test": ["Castle 5k", "Sunrise 10 mile"]}),
         ("New personal best at parkrun this morning: {d}!", "What was {n}'s personal best at parkrun?",
          "How fast was {n}'s quickest Saturday-morning jog?",
          {"dev": ["22 minutes 40", "24 minutes 15"], "test": ["21 minutes 5", "25 minutes 30"]}),
         ("I joined the {d} running club, we meet on Tuesday evenings.", "Which running club did {n} join?",
          "What jogging group does {n} now belong to?",
          {"dev": ["Hillside Harriers", "Canal Striders"], "test": ["Northgate Pacers", "Old Mill Joggers"]}),
     ],
     "chatter": ["My knees are complaining after that run.", "Running in the rain is underrated.",
                 "I need new running shoes, mine are falling apart.", "Did you see the marathon on TV?",
                 "I skipped my run today, too cold."],
     "multi": "What running events has {n} taken part in?", "open": "Would {n} enjoy a weekend of outdoor activities?"},
    {"key": "job",
     "events": [
         ("I got the job! I start as {d} next month.", "What job did {n} get?", "Which position was {n} hired for?",
          {"dev": ["a counsellor at the youth centre", "a junior architect"],
           "test": ["a data analyst at the museum", "a nurse on the night ward"]}),
         ("My manager gave me the {d} project to lead, I'm nervous but excited.",
          "Which project does {n} lead at work?", "What did {n}'s boss put them in charge of?",
          {"dev": ["library renovation", "mentoring scheme"], "test": ["payroll migration", "volunteer portal"]}),
         ("I passed my {d} certification exam, all that studying paid off.",
          "Which certification exam did {n} pass?", "What professional qualification did {n} earn?",
          {"dev": ["counselling", "project management"], "test": ["first aid instructor", "accounting"]}),
     ],
     "chatter": ["Work has been hectic this week.", "My manager keeps scheduling meetings at five.",
                 "I'm thinking about asking for a raise.", "The office coffee machine is broken again.",
                 "I had a long day at work, too many emails."],
     "multi": "What has changed in {n}'s career?", "open": "Is {n} likely to stay in a helping profession?"},
    {"key": "trip",
     "events": [
         ("We just got back from a camping trip in {d}, we roasted marshmallows and saw the stars.",
          "Where did {n} go camping?", "Which place did {n} spend nights in a tent?",
          {"dev": ["Yosemite", "the Smoky Mountains"], "test": ["the Lake District", "Snowdonia"]}),
         ("We booked flights to {d} for the spring, my first time abroad!", "Where did {n} book flights to?",
          "What destination is {n} flying to?", {"dev": ["Lisbon", "Tokyo"], "test": ["Marrakech", "Reykjavik"]}),
         ("The road trip to {d} was amazing, we stopped at every diner on the way.",
          "Where did {n} go on a road trip?", "Which city did {n} drive to with stops along the way?",
          {"dev": ["Nashville", "Savannah"], "test": ["Galway", "Cornwall"]}),
     ],
     "chatter": ["I could really use a holiday.", "Camping gear is so expensive now.",
                 "Do you prefer the mountains or the beach?", "We should plan a trip together sometime.",
                 "Airports stress me out so much."],
     "multi": "Which places has {n} travelled to?", "open": "Would {n} enjoy a backpacking holiday?"},
    {"key": "kids",
     "events": [
         ("{k} started at {d} this week, she was so brave on the first day.", "Which school did {k} start at?",
          "Where does {n}'s daughter go to class now?",
          {"dev": ["Maple Grove Elementary", "Oakwood Primary"], "test": ["St Anne's Primary", "Brookside School"]}),
         ("{k} won a ribbon at the {d} science fair for her volcano.", "What did {k} win at the science fair?",
          "Which prize did {n}'s daughter get for her project?",
          {"dev": ["county", "school district"], "test": ["regional", "city"]}),
         ("We took the kids to {d} for the weekend, they loved the rides.",
          "Where did {n} take the kids for the weekend?",
          "Which attraction did {n}'s family visit?", {"dev": ["Six Flags", "the county fair"],
                                                      "test": ["Legoland", "the seaside pier"]}),
     ],
     "chatter": ["The kids have been a handful this week.", "School runs in the rain are the worst.",
                 "Homework is getting harder, I can't help with the maths anymore.",
                 "My kids want a trampoline now.", "Parenting is exhausting but I love it."],
     "multi": "What have {n}'s kids been up to?", "open": "Does {n} seem like a devoted parent?"},
    {"key": "pet",
     "events": [
         ("We adopted a {d} from the shelter, we named him Biscuit.", "What kind of dog did {n} adopt?",
          "Which breed is {n}'s new family animal?", {"dev": ["beagle", "border collie"],
                                                      "test": ["spaniel", "greyhound"]}),
         ("Biscuit ate {d} off the counter, we had to rush to the vet.", "What did Biscuit eat off the counter?",
          "Why did {n} go to the animal doctor in a hurry?", {"dev": ["a whole loaf of bread", "my birthday cake"],
                                                                "test": ["a bag of grapes", "the Sunday roast"]}),
         ("Biscuit passed his {d} training course, he can finally sit and stay.",
          "Which training course did Biscuit pass?", "What obedience lessons did {n}'s dog finish?",
          {"dev": ["puppy obedience", "agility"], "test": ["good citizen", "recall"]}),
     ],
     "chatter": ["The dog next door barked all night.", "Do you think cats are easier than dogs?",
                 "We walked past the shelter today, so many puppies.", "Dog hair everywhere, as usual.",
                 "I need to buy more dog food."],
     "multi": "What has happened with {n}'s dog?", "open": "Would {n} be a good person to pet-sit for a week?"},
    {"key": "music",
     "events": [
         ("I started {d} lessons, my teacher says I have a good ear.", "What instrument did {n} start lessons on?",
          "Which instrument is {n} learning to play?", {"dev": ["violin", "cello"], "test": ["clarinet", "banjo"]}),
         ("We saw {d} in concert last night, best show of my life.", "Which band did {n} see in concert?",
          "What live music did {n} attend?", {"dev": ["Matt Patterson", "the Lumineers"],
                                               "test": ["Florence and the Machine", "Arctic Monkeys"]}),
         ("I played {d} at the open mic night, my hands were shaking.", "What did {n} play at the open mic night?",
          "Which song did {n} perform on stage?", {"dev": ["Moon River", "Hallelujah"],
                                                   "test": ["Yesterday", "Blackbird"]}),
     ],
     "chatter": ["I've had the same album on repeat all week.", "Concert tickets are so expensive now.",
                 "Music always cheers me up.", "I should practise more, I've been lazy.",
                 "Do you still listen to the radio?"],
     "multi": "What has {n} done with music?", "open": "Would {n} like a jazz festival?"},
    {"key": "garden",
     "events": [
         ("The {d} I planted in the spring finally gave their first crop.", "What did {n} plant in the spring?",
          "Which plants in {n}'s plot produced their first harvest?",
          {"dev": ["tomatoes", "strawberries"], "test": ["courgettes", "raspberries"]}),
         ("I built a {d} in the back garden this weekend, my arms are sore.", "What did {n} build in the back garden?",
          "Which structure did {n} put up in the yard?", {"dev": ["greenhouse", "chicken coop"],
                                                         "test": ["pond", "potting shed"]}),
     ],
     "chatter": ["The slugs are eating everything in the garden.", "I spent the afternoon weeding.",
                 "It hasn't rained in weeks, the lawn is brown.", "Gardening is good for the soul.",
                 "The neighbour's tree blocks all our sun."],
     "multi": "What has {n} grown or built in the garden?", "open": "Would {n} enjoy a visit to a botanical garden?"},
    {"key": "volunteer",
     "events": [
         ("I volunteered at the {d} on Saturday, we served two hundred meals.", "Where did {n} volunteer on Saturday?",
          "Which charity did {n} help out at?", {"dev": ["food bank", "homeless shelter"],
                                                  "test": ["soup kitchen", "night shelter"]}),
         ("I went to a {d} support group yesterday, it was so powerful to hear everyone's stories.",
          "Which support group did {n} go to?", "What kind of peer meeting did {n} attend?",
          {"dev": ["LGBTQ", "grief"], "test": ["new parents", "carers"]}),
     ],
     "chatter": ["I want to give back more this year.", "Volunteering is harder to fit in than I thought.",
                 "The charity shop on the corner closed down.", "Support from friends means a lot.",
                 "I donated a bag of clothes today."],
     "multi": "How has {n} helped in the community?", "open": "Does {n} care about helping others?"},
    {"key": "cooking",
     "events": [
         ("I made {d} from scratch for the family dinner, it took all afternoon.", "What did {n} make from scratch?",
          "Which dish did {n} prepare for the family meal?", {"dev": ["lasagne", "dumplings"],
                                                              "test": ["paella", "ramen"]}),
         ("I entered my {d} in the bake-off at the fair and came second!", "What did {n} enter in the bake-off?",
          "Which baked good won {n} a runner-up place?", {"dev": ["lemon drizzle cake", "apple pie"],
                                                          "test": ["carrot cake", "cinnamon buns"]}),
     ],
     "chatter": ["I burnt the toast again this morning.", "We ordered takeaway, too tired to cook.",
                 "I bought a new frying pan, it's amazing.", "Cooking for picky eaters is hard.",
                 "Do you have a good recipe for soup?"],
     "multi": "What has {n} cooked or baked?", "open": "Would {n} enjoy a cookery course?"},
    {"key": "home",
     "events": [
         ("We're moving to {d}! We signed the lease on a flat near the park.", "Where is {n} moving to?",
          "Which city is {n} relocating to?", {"dev": ["Denver", "Seattle"], "test": ["Bristol", "Glasgow"]}),
         ("We painted the living room {d} and it feels like a new house.", "What colour did {n} paint the living room?",
          "How does {n}'s lounge look after redecorating?", {"dev": ["sage green", "navy blue"],
                                                             "test": ["terracotta", "pale yellow"]}),
     ],
     "chatter": ["Rent keeps going up everywhere.", "I spent the day packing boxes.",
                 "Our landlord still hasn't fixed the heating.", "Moving house is so stressful.",
                 "I love the light in our living room."],
     "multi": "What changes has {n} made to their home?", "open": "Is {n} settling into a new neighbourhood?"},
    {"key": "reading",
     "events": [
         ("I just finished {d}, I cried at the ending.", "Which book made {n} cry at the ending?",
          "What novel moved {n} to tears?", {"dev": ["Charlotte's Web", "The Kite Runner"],
                                              "test": ["Never Let Me Go", "A Little Life"]}),
         ("Our book club picked {d} for next month, I've already started it.",
          "Which book did {n}'s book club pick?", "What is the reading group's next title?",
          {"dev": ["Becoming", "Educated"], "test": ["Circe", "Piranesi"]}),
     ],
     "chatter": ["I need a good book for the holidays.", "The library closes early on Saturdays now.",
                 "Reading before bed helps me sleep.", "I have a pile of unread books on my nightstand.",
                 "Audiobooks are great for the commute."],
     "multi": "Which books has {n} been reading?", "open": "Would {n} enjoy a literary festival?"},
]
WHEN: dict[str, list[str]] = {
    "painting": ["When did {n} finish {d}?", "When was {n}'s painting accepted into the community art show?",
                 "When did {n} sign up for the {d} painting class?"],
    "running": ["When did {n} run the {d} charity race?", "When did {n} set a new personal best at parkrun?",
                "When did {n} join the {d} running club?"],
    "job": ["When did {n} get the job as {d}?", "When did {n}'s manager give them the {d} project?",
            "When did {n} pass the {d} certification exam?"],
    "trip": ["When did {n} go camping in {d}?", "When did {n} book flights to {d}?",
             "When did {n} go on the road trip to {d}?"],
    "kids": ["When did {k} start at {d}?", "When did {k} win a ribbon at the science fair?",
             "When did {n} take the kids to {d}?"],
    "pet": ["When did {n} adopt Biscuit?", "When did Biscuit eat {d} off the counter?",
            "When did Biscuit pass his {d} training course?"],
    "music": ["When did {n} start {d} lessons?", "When did {n} see {d} in concert?",
              "When did {n} play at the open mic night?"],
    "garden": ["When did {n}'s {d} give their first crop?", "When did {n} build the {d}?"],
    "volunteer": ["When did {n} volunteer at the {d}?", "When did {n} go to the {d} support group?"],
    "cooking": ["When did {n} make {d} from scratch?", "When did {n} enter the bake-off at the fair?"],
    "home": ["When did {n} sign the lease in {d}?", "When did {n} paint the living room {d}?"],
    "reading": ["When did {n} finish {d}?", "When did {n}'s book club pick {d}?"],
}
"""The temporal question of each thread's events, in their order."""
NEAR: dict[str, list[str]] = {
    "painting": ["I started a new painting of the view from our kitchen window, it's only half done.",
                 "My neighbour framed her watercolours and hung them by her front door, they look lovely.",
                 "I might paint something for the bedroom next, maybe a seascape.",
                 "The art show this year had so many paintings of animals, I loved it.",
                 "I tried painting outdoors on Sunday but the wind kept knocking the easel over.",
                 "My mum wants me to paint a picture of her garden for her birthday."],
    "running": ["I did a slow five kilometres along the river this evening, just to clear my head.",
                "A friend of mine is training for a half marathon, she runs every single morning.",
                "The charity shop is organising a fun run next month, I might sign up.",
                "My sister joined a cycling club, they ride on Sunday mornings.",
                "I ran with my neighbour today, she's much faster than me.",
                "I keep seeing the same group of runners in the park at dawn."],
    "job": ["A friend of mine just got promoted to team lead, I'm so happy for her.",
            "I had an interview for a job at the bank but I don't think it went well.",
            "My colleague is leaving to become a teacher, we're throwing her a party.",
            "I've been reading about careers in social work, it sounds meaningful.",
            "The hospital down the road is hiring, my cousin applied for a job there.",
            "We had a big team meeting about next year's projects."],
    "trip": ["My parents went camping by a lake last summer and loved it.",
             "We're thinking about a trip somewhere warm, maybe Spain or Portugal.",
             "A colleague just came back from a road trip along the coast.",
             "I looked at flights to Iceland but they were too expensive.",
             "The kids want to go camping in the garden this weekend.",
             "I found some old photos from our trip to the mountains years ago."],
    "kids": ["My friend's daughter started school this year too, she cried at the gate.",
             "The school sent home a letter about the science fair, the kids are excited.",
             "We're looking at schools for next year, there are so many forms.",
             "The kids spent the whole afternoon building a fort in the living room.",
             "My nephew won a medal at his swimming gala.",
             "We took the kids to the park and they fed the ducks."],
    "pet": ["My cousin adopted a cat from the shelter, she's very shy.",
            "Our neighbour's dog got out again and ran around the street.",
            "We're thinking about getting the dog a new bed, he chewed the old one.",
            "The vet bills this year have been crazy.",
            "I walked the dog by the river and he rolled in the mud.",
            "A puppy training class started at the community centre."],
    "music": ["My brother plays the guitar in a band, they have a gig on Friday.",
              "I've been listening to a lot of jazz lately while I cook.",
              "The open mic night at the café is every Thursday, it's always packed.",
              "I wish I had kept up with piano lessons as a kid.",
              "We heard a street musician play the violin at the station, it was beautiful.",
              "The concert hall is doing a season of film music."],
    "garden": ["My neighbour grows the best tomatoes on our street.",
               "I bought some seeds for the spring, I'm not sure what will grow.",
               "We're thinking of building a shed for all the garden tools.",
               "The allotment down the road has a waiting list of two years.",
               "Our apple tree had a terrible crop this year.",
               "I spent Saturday planting bulbs along the fence."],
    "volunteer": ["My friend runs a support group for young parents, she's amazing.",
                  "The food bank is asking for donations of tinned food.",
                  "I'd like to volunteer somewhere regularly but I never have time.",
                  "The community centre is looking for volunteers for the summer fair.",
                  "We donated some toys to the children's shelter.",
                  "I went to a talk about mental health at the library."],
    "cooking": ["I tried to make bread from scratch but it came out flat.",
                "My sister made a huge curry for the family dinner on Sunday.",
                "The bake-off at the fair is next month, everyone's practising.",
                "I bought a cookbook about Italian food, the pasta recipes look great.",
                "We had a barbecue with the neighbours, way too many sausages.",
                "My grandmother's apple crumble recipe is the best."],
    "home": ["Our friends are moving to a bigger flat across town.",
             "I'd love to paint the kitchen but we can't agree on a colour.",
             "We looked at a house near the park but it was too expensive.",
             "The flat above us is being renovated, it's very noisy.",
             "I rearranged the living room furniture again.",
             "My brother signed a lease on a new place last month."],
    "reading": ["My book club is arguing about whether to read more classics.",
                "I started a thriller but I couldn't get into it.",
                "My mum recommended a novel about a family in Ireland.",
                "I finished a short story collection on the train.",
                "The bookshop in town is having a sale, I bought three books.",
                "I reread one of my childhood favourites last night."],
}
"""Near misses: the thread's own kind of news, but about someone else, a plan, or another detail —
close in meaning to its events (and to the questions about them) without their facts."""
SMALL = [
    "Not much going on, just tired. The weather has been grey all week.",
    "Did you watch the match yesterday? The second half was chaos.",
    "I reorganised the kitchen cupboards and now I can't find anything.",
    "The train was delayed again this morning, forty minutes on the platform.",
    "I've been trying to get up earlier but it's not going well.",
    "We had friends over for dinner and stayed up way too late.",
    "I finally fixed the wobbly shelf in the hallway.",
    "My phone screen cracked, I need to get it repaired.",
    "Went for a long walk by the canal, the ducks were out.",
    "Honestly I just want a quiet weekend with nothing planned.",
    "I binge-watched a whole series on Sunday, no regrets.",
    "The neighbours are renovating again, drilling at eight in the morning.",
    "I've started drinking less coffee, it's been hard.",
    "My sister called, she's doing well.",
    "It was so hot today, I could barely sleep.",
    "I've been feeling a bit down lately, but talking helps.",
]
REACT = [
    "Wow, {echo}? That's amazing, I'm so happy for you!", "No way, {echo}! How did that feel?",
    "That sounds wonderful. {echo} — you must be proud.", "Oh nice, {echo}. Tell me more!",
    "{echo}? I love that for you.", "Ha, {echo}, of course. What's next?",
]
REPLY = [
    "That sounds like a lot. How are you holding up?", "I know exactly what you mean.",
    "Same here, honestly. It's been one of those weeks.", "Fingers crossed things settle down soon.",
    "Haha, that's so you.", "Oh no, that's annoying. Hope it gets better.", "I hear you. Take it easy this weekend.",
    "That's nice to hear. I've had a quiet few days myself.", "Good for you! I should do the same.",
]
ADVICE = [
    "It makes sense to feel that way. A few things that often help: keep a simple routine, set one small goal for "
    "the week, and make time for something you enjoy. Would you like me to suggest a plan?",
    "That's a common experience. It can help to break it down into smaller steps and to check in with yourself "
    "each evening about what went well. If it keeps bothering you, talking to someone you trust is a good idea.",
    "Good question. There isn't one right answer, but people in a similar situation usually find that being "
    "consistent matters more than being perfect. Start small and adjust as you go.",
    "Thanks for sharing that. It sounds like you've been juggling a lot. Remember to rest, drink water and give "
    "yourself credit for the progress you've already made.",
]
ASSIST_REACT = [
    "Congratulations — {echo} is a real milestone! If you like, I can help you plan the next steps.",
    "That's great news: {echo}. How are you feeling about it?",
    "Thanks for telling me about this: {echo}. I'll keep it in mind when we talk about your plans.",
]


def _overlap(question: str, evidence: list[str], names: tuple[str, ...]) -> bool:
    """Whether the question shares a content word with its evidence, the speakers' names aside (they
    are in every turn)."""
    skip = {t for n in names for t in stems(n)}
    q = set(stems(question)) - skip
    e: set[str] = set()
    for t in evidence:
        e.update(stems(t))
    return bool(q & e)


def _chatter(rng: random.Random, threads: list[dict[str, Any]]) -> str:
    """Small talk, or talk about a topic without its facts: one to three sentences, none twice."""
    pool = threads if rng.random() < 0.7 else THREADS
    out: list[str] = []
    for _ in range(rng.choice((1, 2, 2, 3))):
        r = rng.random()
        th = rng.choice(pool)
        s = rng.choice(NEAR[th["key"]]) if r < 0.3 else rng.choice(th["chatter"]) if r < 0.6 else rng.choice(SMALL)
        if s not in out:
            out.append(s)
    return " ".join(out)


def _conversation(rng: random.Random, split: str, c: int, assistant: bool) -> dict[str, Any]:
    a, b = rng.sample(PEOPLE[split], 2)
    kid = rng.choice(KIDS[split])
    label = {"user": "", "assistant": ""} if assistant else {"user": f"{a}: ", "assistant": f"{b}: "}
    threads = rng.sample(THREADS, 9)
    # who a thread is about: the user (a user-assistant chat), else either friend
    owner = {th["key"]: ("user" if assistant or rng.random() < 0.5 else "assistant") for th in threads}
    name_of = {"user": "the user" if assistant else a, "assistant": b}
    n_sessions = rng.randint(25, 29)
    # events: each thread's events in distinct sessions, in order, spread over the conversation
    plan: dict[int, list[tuple[dict[str, Any], int, str]]] = {}
    for th in threads:
        k = len(th["events"]) if rng.random() < 0.6 else 2
        sessions = sorted(rng.sample(range(1, n_sessions - 3), k))
        for j, sess in enumerate(sessions):
            detail = rng.choice(th["events"][j][3][split])
            plan.setdefault(sess, []).append((th, j, detail))
    turns: list[dict[str, str]] = []
    facts: dict[tuple[str, int], dict[str, Any]] = {}
    when = dt.datetime(2023, 1, 2, 9, 0) + dt.timedelta(days=rng.randrange(0, 120))
    for sess in range(n_sessions):
        when += dt.timedelta(days=rng.randint(4, 18), minutes=rng.randrange(0, 600))
        stamp = f"({when.strftime('%I:%M %p').lstrip('0').lower()} on {when.day} {when.strftime('%B, %Y')}) "
        n_ex = rng.randint(12, 16)
        events = plan.get(sess, [])
        slots = sorted(rng.sample(range(1, n_ex - 1), min(len(events), n_ex - 2)))
        at = dict(zip(slots, events, strict=False))
        echo: str | None = None  # a fact the other side said last: the next turn reacts to it
        for x in range(n_ex):
            item = at.get(x)
            side: dict[str, str] = {}
            for role in ("user", "assistant"):
                tid = f"c{c}_t{len(turns) + (role == 'assistant')}"
                if item is not None and owner[item[0]["key"]] == role:
                    th, j, detail = item
                    text = th["events"][j][0].format(d=detail, k=kid)
                    # as in real chats, the fact is one sentence of a longer turn
                    if rng.random() < 0.8:
                        text = _chatter(rng, threads) + " " + text
                    if rng.random() < 0.6:
                        text += " " + _chatter(rng, threads)
                    facts[(th["key"], j)] = {"id": tid, "date": when.date().isoformat(), "detail": detail}
                    if echo is not None:
                        text = rng.choice(REACT).format(echo=echo) + " " + text
                    echo = detail
                elif echo is not None and rng.random() < 0.75:
                    react = ASSIST_REACT if assistant and role == "assistant" else REACT
                    text = rng.choice(react).format(echo=echo)
                    echo = None
                elif assistant and role == "assistant":
                    text, echo = rng.choice(ADVICE), None
                else:
                    text, echo = (_chatter(rng, threads) if role == "user" or rng.random() < 0.5
                                  else rng.choice(REPLY) + " " + _chatter(rng, threads)), None
                if x == 0 and role == "user":
                    text = stamp + rng.choice(["Hey! ", "Hi! ", "Morning! ", "Hello again! ", ""]) + text
                side[role] = text
            turns.append({"id": f"c{c}_t{len(turns)}", "role": "user", "content": label["user"] + side["user"]})
            turns.append({"id": f"c{c}_t{len(turns)}", "role": "assistant",
                          "content": label["assistant"] + side["assistant"]})
    questions: list[dict[str, Any]] = []
    for th in threads:
        name = name_of[owner[th["key"]]]

        def fmt(t: str, d: str = "", name: str = name) -> str:
            return t.format(n=name, k=kid, d=d)

        got = [facts[(th["key"], j)] for j in range(3) if (th["key"], j) in facts]
        for j, f in enumerate(got):
            _, literal, paraphrase, _ = th["events"][j]
            # every event: a single-hop question (one in five in other words); about half: when
            questions.append({"kind": "single", "question": fmt(paraphrase if rng.random() < 0.2 else literal),
                              "evidence": [f["id"]], "answer": f["detail"]})
            if rng.random() < 0.5:
                questions.append({"kind": "date", "question": fmt(WHEN[th["key"]][j], f["detail"]),
                                  "evidence": [f["id"]], "answer": f["date"]})
        if len(got) >= 2:
            questions.append({"kind": "multi", "question": fmt(th["multi"]), "evidence": [f["id"] for f in got],
                              "answer": "; ".join(f["detail"] for f in got)})
            first, second = got[0], got[1]
            questions.append({"kind": "date", "question": f"What came next for {name} after {first['detail']}?",
                              "evidence": [first["id"], second["id"]], "answer": second["detail"]})
            questions.append({"kind": "open", "question": fmt(th["open"]), "evidence": [f["id"] for f in got],
                              "answer": None})
    by_id = {t["id"]: t["content"] for t in turns}
    for k, q in enumerate(questions):
        q["id"] = f"c{c}_q{k}"
        q["lexical_overlap"] = _overlap(q["question"], [by_id[e] for e in q["evidence"]], (a, b))
    system = ("A user chats with an assistant over many sessions." if assistant
              else f"{a} and {b} are friends who catch up over many sessions of chat.")
    return {"id": f"chat_{split}{c}", "system": system, "turns": turns, "questions": questions}


def make(split: str, n_conversations: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [_conversation(rng, split, c, assistant=c % 3 == 2) for c in range(n_conversations)]


def main() -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    for split, seed in (("dev", 303), ("test", 404)):
        convs = make(split, 6, seed)
        path = DATA / f"chats_{split}.json"
        path.write_text(json.dumps(convs, indent=0, ensure_ascii=False) + "\n")
        qs = [q for c in convs for q in c["questions"]]
        no_overlap = sum(not q["lexical_overlap"] for q in qs)
        kinds = {k: sum(q["kind"] == k for q in qs) for k in ("single", "date", "multi", "open")}
        print(f"wrote {path}: {len(convs)} conversations, {len(qs)} questions {kinds}, "
              f"{no_overlap} share no content word")


if __name__ == "__main__":
    main()
