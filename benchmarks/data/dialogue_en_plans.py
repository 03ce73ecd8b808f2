# ruff: noqa: E501  (the set's text: one line per utterance or question)
"""What an English speaker tells a friend over the months, and the questions on it."""

from __future__ import annotations

import random

from benchmarks.data.recall_dialogues_types import Line, Plan, one


def _a(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _at(rng: random.Random, lo: float = 0.05, hi: float = 0.9) -> float:
    return rng.uniform(lo, hi)


def singles(p: dict, rng: random.Random) -> list[Plan]:
    n, r = p["name"], rng
    allergen, _group = p["allergy"]
    facts = [
        (
            "partner",
            one(
                r,
                f"{p['partner']} says hi by the way, we've been together nine years this spring.",
                f"Sorry I was late, {p['partner']} had the car and I had to wait for the bus. We've been married four years and still can't share a car.",
            ),
            one(
                r,
                f"Who is {n}'s other half?",
                f"What is the name of {n}'s spouse?",
                f"Who does {n} share a home with as a couple?",
                f"What's the name of {n}'s partner?",
            ),
            p["partner"],
        ),
        (
            "town",
            one(
                r,
                f"I grew up in {p['town']}, tiny place, everybody knew your business.",
                f"Mum still lives in {p['town']} where I was a kid, it's so sleepy there.",
            ),
            one(
                r,
                f"Where was {n} raised?",
                f"Which town did {n} spend their childhood in?",
                f"Where did {n} grow up?",
            ),
            p["town"],
        ),
        (
            "allergy",
            one(
                r,
                f"I can't eat {allergen}, my throat swells right up, it's scary.",
                f"Careful with the starter, I'm allergic to {allergen}, ended up in A&E once.",
            ),
            one(
                r,
                f"What must {n} avoid eating for medical reasons?",
                f"Which food gives {n} a bad reaction?",
                f"What is {n} allergic to?",
            ),
            allergen,
        ),
        (
            "instrument",
            one(
                r,
                f"I've started lessons on the {p['instrument']}, my neighbours must hate me.",
                f"I bought a second-hand {p['instrument']} and I'm teaching myself from videos.",
            ),
            one(
                r,
                f"What is {n} learning to play?",
                f"Which musical hobby has {n} picked up?",
                f"Which instrument is {n} learning?",
            ),
            p["instrument"],
        ),
        (
            "car",
            one(
                r,
                f"We finally replaced the old car, we've got {p['car']} now.",
                f"I drove {p['car']} over, parking it was a nightmare.",
            ),
            one(
                r,
                f"What vehicle does {n} drive?",
                f"What kind of motor does {n} own?",
                f"What car does {n} have?",
            ),
            p["car"],
        ),
        (
            "film",
            one(
                r,
                f"When I'm feeling rubbish I put on {p['film']}, I must have seen it thirty times.",
                f"{p['film']} is my comfort film, I know every line.",
            ),
            one(
                r,
                f"Which movie does {n} rewatch to cheer up?",
                f"What is {n}'s go-to feel-good picture?",
                f"What's {n}'s favourite film for a bad day?",
            ),
            p["film"],
        ),
        (
            "language",
            one(
                r,
                f"I'm doing Duolingo in {p['lang']} every morning, 200 days in a row now.",
                f"I signed up for {p['lang']} classes at the adult college, Thursday nights.",
            ),
            one(
                r,
                f"Which foreign tongue is {n} studying?",
                f"What language is {n} trying to pick up?",
            ),
            p["lang"],
        ),
        (
            "kid",
            one(
                r,
                f"{p['kid']} started at nursery this week, cried for ten minutes then forgot about me.",
                f"Our little one {p['kid']} is teething, nobody is sleeping.",
            ),
            one(r, f"What is {n}'s child called?", f"What's the name of {n}'s toddler?"),
            p["kid"],
        ),
    ]
    return [
        Plan(f"s.{key}", [Line(text, _at(rng))], [("single", q, [0], a)])
        for key, text, q, a in facts
    ]


def updates(p: dict, rng: random.Random) -> list[Plan]:
    n, r = p["name"], rng
    old_sport, old_short, new_sport, new_answer = p["sport"]
    pet1, pet2 = p["pets"]
    hol1, hol2 = p["hol"]
    return [
        Plan(
            "u.job",
            [
                Line(
                    one(
                        r,
                        f"Still at {p['work1']}, still {_a(p['job1'])}, still underpaid.",
                        f"Work's fine, being {_a(p['job1'])} at {p['work1']} has its moments.",
                    ),
                    _at(r, 0.02, 0.3),
                ),
                Line(
                    one(
                        r,
                        f"Big news, I handed in my notice! I'm starting as {_a(p['job2'])} at {p['work2']}.",
                        f"I took the job offer, I'm going to be {_a(p['job2'])} at {p['work2']} from the first of the month.",
                    ),
                    _at(r, 0.45, 0.8),
                ),
            ],
            [
                (
                    "update",
                    one(
                        r,
                        f"What does {n} do for a living these days?",
                        f"What is {n}'s current occupation?",
                    ),
                    [1],
                    f"{p['job2']} at {p['work2']}",
                ),
                (
                    "single",
                    one(
                        r,
                        f"Where was {n} employed before changing careers?",
                        f"What was {n}'s previous line of work?",
                    ),
                    [0],
                    f"{p['job1']} at {p['work1']}",
                ),
            ],
        ),
        Plan(
            "u.home",
            [
                Line(
                    one(
                        r,
                        f"Our flat in {p['home1']} is freezing, the landlord still hasn't fixed the boiler.",
                        f"Rent in {p['home1']} went up again, we might have to look elsewhere.",
                    ),
                    _at(r, 0.02, 0.3),
                ),
                Line(
                    one(
                        r,
                        f"We got the keys! We're properly in {p['home2']} now, boxes everywhere.",
                        f"The move's done, we live in {p['home2']} now, it's so much quieter.",
                    ),
                    _at(r, 0.4, 0.75),
                ),
            ],
            [
                (
                    "update",
                    one(r, f"Which city is {n} living in at present?", f"Where is {n}'s home now?"),
                    [1],
                    p["home2"],
                ),
                (
                    "single",
                    one(
                        r,
                        f"Where was {n} renting before relocating?",
                        f"In which city was {n}'s former apartment?",
                    ),
                    [0],
                    p["home1"],
                ),
            ],
        ),
        Plan(
            "u.pet",
            [
                Line(
                    f"We picked up a {p['breed']} puppy {{when}}, we're calling him {pet1}.",
                    _at(r, 0.05, 0.35),
                    offset=-r.randint(1, 9),
                ),
                Line(
                    one(
                        r,
                        f"Our dog isn't {pet1} any more, the kids voted and now he's {pet2}.",
                        f"Funny story, we renamed the puppy, he answers to {pet2} now instead of {pet1}.",
                    ),
                    _at(r, 0.5, 0.9),
                ),
            ],
            [
                (
                    "update",
                    one(
                        r,
                        f"What is {n}'s dog called at the moment?",
                        f"What name does {n}'s hound go by nowadays?",
                    ),
                    [1],
                    pet2,
                ),
                (
                    "temporal",
                    one(
                        r,
                        f"On what date did {n} bring home a young dog?",
                        f"When did {n}'s family adopt their pup?",
                    ),
                    [0],
                    "{d0}",
                ),
            ],
        ),
        Plan(
            "u.holiday",
            [
                Line(
                    one(
                        r,
                        f"We've booked two weeks in {hol1} for the summer, I can't wait.",
                        f"Summer's sorted, we're off to {hol1}, flights booked.",
                    ),
                    _at(r, 0.05, 0.4),
                ),
                Line(
                    one(
                        r,
                        f"{hol1} fell through, the airline cancelled, so we're doing {hol2} instead.",
                        f"Change of plan, we scrapped {hol1} and booked {hol2}.",
                    ),
                    _at(r, 0.5, 0.85),
                ),
            ],
            [
                (
                    "update",
                    one(
                        r,
                        f"Where is {n} going on the summer break?",
                        f"What is the destination of {n}'s upcoming vacation?",
                    ),
                    [1],
                    hol2,
                ),
                (
                    "update",
                    one(
                        r,
                        f"Is {n} still travelling to {hol1} this summer?",
                        f"Are {n}'s {hol1} plans still on?",
                    ),
                    [1],
                    f"no: {hol2} instead",
                ),
            ],
        ),
        Plan(
            "u.sport",
            [
                Line(f"I've joined {old_sport}, keeps me sane.", _at(r, 0.02, 0.35)),
                Line(
                    f"I've given up {old_short}, my knees couldn't take it. It's {new_sport} now.",
                    _at(r, 0.45, 0.9),
                ),
            ],
            [
                (
                    "update",
                    one(
                        r,
                        f"How does {n} keep fit nowadays?",
                        f"Which exercise is {n} doing currently?",
                    ),
                    [1],
                    new_answer,
                )
            ],
        ),
    ]


# (said with {when}, how a question puts it)
EVENTS = [
    (
        "I ran the {city} half marathon {when}, two hours and six minutes!",
        "take part in a long-distance race",
    ),
    (
        "{when} we went to my cousin's wedding, the speeches went on forever.",
        "attend a relative's marriage ceremony",
    ),
    ("We saw {band} live {when}, I lost my voice from singing along.", "watch {band} perform"),
    ("I finally got my wisdom tooth pulled {when}, still all puffy.", "have a dental extraction"),
    ("We painted the whole kitchen yellow {when}, took all day.", "redecorate a room at home"),
    ("My nephew was born {when}! Seven pounds two.", "become an aunt or uncle"),
    ("I passed my driving test {when}, first go!", "get a licence for the road"),
    (
        "We went strawberry picking at a farm {when}, came back with four kilos.",
        "gather fruit in the countryside",
    ),
    ("I had my job appraisal {when} and got a pay rise.", "receive a salary increase"),
    ("I got my first tattoo {when}, a little swallow on my ankle.", "get inked"),
]
FUTURE = [
    ("I've got the optician {when}, my eyes are getting worse.", "have an eye test"),
    (
        "We're seeing the mortgage advisor {when}, fingers crossed.",
        "meet someone about a home loan",
    ),
    ("My brother's stag do is {when}, I'm dreading it.", "go to a bachelor party"),
]


def life_events(p: dict, rng: random.Random) -> list[Plan]:
    n, r = p["name"], rng
    out = []
    for i, (said, asked) in enumerate(r.sample(EVENTS, 4) + r.sample(FUTURE, 1)):
        future = i == 4
        text = said.replace("{city}", p["home2"]).replace("{band}", p["band"])
        asked = asked.replace("{band}", p["band"])
        offset = r.randint(1, 9) if future else -r.randint(1, 12)
        q = one(
            r,
            f"When did {n} {asked}?",
            f"On what date did {n} {asked}?",
            f"What day did {n} {asked}?",
        )
        if future:
            q = one(
                r, f"When is {n} due to {asked}?", f"On which date was {n} scheduled to {asked}?"
            )
        questions = [("temporal", q, [0], "{d0}")]
        if i == 0:  # the other way round: the date given, the event asked
            ask = one(r, f"What did {n} do on {{h0}}?", f"What happened in {n}'s life on {{h0}}?")
            questions.append(("temporal", ask, [0], asked))
        out.append(Plan(f"t.{i}", [Line(text, _at(r), offset=offset)], questions))
    activity = one(
        r,
        "camping by the lake",
        "a spa weekend in Harrogate",
        "a boat trip round the bay",
        "a wine tasting in the Cotswolds",
    )
    out.append(
        Plan(
            "t.bday",
            [
                Line(
                    one(
                        r,
                        "It's my birthday {when}, the big three-five, don't remind me.",
                        "{when} is my birthday, we're just doing a quiet dinner.",
                        "Guess whose birthday is {when}? Mine! Forty!",
                    ),
                    _at(r, 0.1, 0.6),
                    offset=r.randint(2, 5),
                ),
                Line(f"{{when}} we did {activity}, best weekend in ages.", 0, after=0),
            ],
            [
                (
                    "temporal",
                    one(
                        r,
                        f"What did {n} get up to the weekend following their birthday?",
                        f"How did {n} spend the weekend after turning a year older?",
                    ),
                    [0, 1],
                    f"{activity} ({{d1}})",
                ),
                (
                    "temporal",
                    one(
                        r,
                        f"When is {n}'s birthday?",
                        f"On what date was {n} born (day and month)?",
                        f"What day does {n} turn a year older?",
                    ),
                    [0],
                    "{d0}",
                ),
            ],
        )
    )
    return out


def multihop(p: dict, rng: random.Random) -> list[Plan]:
    n, r = p["name"], rng
    moved = r.randint(0, 1)
    said_class, asked_class = p["class"]
    rest, cuisine = p["rest"]
    country, nationality, dish = p["country"]
    s, j = p["sis"], p["sisjob"]
    return [
        Plan(
            "m.sister",
            [
                Line(
                    one(
                        r,
                        f"My big sister {s[0]} just qualified as {_a(j[0])}, we're all so proud.",
                        f"{s[0]}, my older sister, is {_a(j[0])}, she works crazy hours.",
                    ),
                    _at(r, 0.02, 0.3),
                ),
                Line(
                    one(
                        r,
                        f"My little sister {s[1]} is {_a(j[1])} now, can you believe it?",
                        f"{s[1]}, the youngest, is working as {_a(j[1])}.",
                    ),
                    _at(r, 0.02, 0.3),
                ),
                Line(
                    one(
                        r,
                        f"{s[moved]} has packed up and gone to {p['sib_city']}, she found a flat by the station.",
                        f"We helped {s[moved]} move to {p['sib_city']} at the weekend, my back is killing me.",
                    ),
                    _at(r, 0.55, 0.9),
                ),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"What is the profession of the sibling of {n} who relocated to {p['sib_city']}?",
                        f"What job does {n}'s sister in {p['sib_city']} have?",
                    ),
                    [moved, 2],
                    j[moved],
                )
            ],
        ),
        Plan(
            "m.friend",
            [
                Line(
                    f"At {said_class} I got chatting to someone called {p['friend']}, we're both hopeless at it.",
                    _at(r, 0.05, 0.4),
                ),
                Line(
                    one(
                        r,
                        f"{p['friend']} and I drove down to {p['place']} on Sunday, had chips by the sea.",
                        f"Me and {p['friend']} had a day out in {p['place']}, so pretty.",
                    ),
                    _at(r, 0.5, 0.9),
                ),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"Where did {n} travel with the pal from {asked_class}?",
                        f"Which place did {n} visit with the person met at {asked_class}?",
                    ),
                    [0, 1],
                    p["place"],
                )
            ],
        ),
        Plan(
            "m.rest",
            [
                Line(
                    one(
                        r,
                        f"If you ever fancy {cuisine} food, {rest} is the best, we go all the time.",
                        f"{rest} does the best {cuisine} in town, honestly.",
                    ),
                    _at(r, 0.05, 0.4),
                ),
                Line(
                    one(
                        r,
                        f"{p['partner']} and I celebrated ten years together at {rest}, they brought us a little cake.",
                        f"For our anniversary {p['partner']} booked a table at {rest}.",
                    ),
                    _at(r, 0.5, 0.9),
                ),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"What type of cuisine did {n} eat at the celebration with {p['partner']}?",
                        f"Which kind of food was served at {n}'s couple celebration dinner?",
                    ),
                    [0, 1],
                    cuisine,
                )
            ],
        ),
        Plan(
            "m.neighbour",
            [
                Line(
                    one(
                        r,
                        f"We've got new neighbours, {p['nb']} is {_a(p['nbjob'][0])}, seems nice.",
                        f"{p['nb']} next door works as {_a(p['nbjob'][0])}, I found out today.",
                    ),
                    _at(r, 0.05, 0.4),
                ),
                Line(f"{p['nb']} {p['favour']}, so kind.", _at(r, 0.5, 0.9)),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"What did the {p['nbjob'][1]} who lives beside {n} do for them?",
                        f"How did {n}'s neighbour, the {p['nbjob'][1]}, help out?",
                    ),
                    [0, 1],
                    p["favour"],
                )
            ],
        ),
        Plan(
            "m.colleague",
            [
                Line(
                    one(
                        r,
                        f"There's a new guy at work, {p['col']}, from {country}, really funny.",
                        f"{p['col']} from {country} joined my team, brings in cake every Friday.",
                    ),
                    _at(r, 0.05, 0.4),
                ),
                Line(
                    f"{p['col']} showed me how to make proper {dish}, it took all afternoon.",
                    _at(r, 0.5, 0.9),
                ),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"Which dish did {n} learn from the {nationality} coworker?",
                        f"What recipe did the {nationality} colleague teach {n}?",
                    ),
                    [0, 1],
                    dish,
                )
            ],
        ),
    ]


# (trait, two supporting lines, a question, the answer)
TRAITS = [
    (
        "outdoors",
        "Spent all Sunday up on the fells, eighteen kilometres, my calves are screaming.",
        "Honestly the best sleep I ever get is in a tent.",
        "Would {n} enjoy a trekking holiday in the Alps?",
        "yes",
    ),
    (
        "animals",
        "I do Saturday mornings at the cat rescue now, cleaning litter trays, I love it.",
        "I can't walk past a dog in the street without saying hello.",
        "Would {n} be happy volunteering at a wildlife sanctuary?",
        "yes",
    ),
    (
        "introvert",
        "Big parties wear me out, I'd rather have two people round for dinner.",
        "I slipped out of the office do after half an hour, too loud.",
        "Would {n} want a huge surprise bash with all their colleagues?",
        "no",
    ),
    (
        "flying",
        "I get the shakes even thinking about planes.",
        "We're going to Italy by train, twenty-six hours, no way I'm getting on a plane.",
        "Would {n} be up for a long-haul trip to Australia by air?",
        "no",
    ),
    (
        "vegetarian",
        "I haven't touched meat for six years now.",
        "I made a massive chickpea and spinach stew for the week.",
        "Would {n} order a steak at a barbecue?",
        "no",
    ),
    (
        "music",
        "I went to three gigs this month, my ears are still ringing.",
        "I spent my bonus on a turntable and a stack of old records.",
        "Would {n} appreciate tickets to a festival like Glastonbury?",
        "yes",
    ),
    (
        "heat",
        "I can't stand the cold, I've had the heating on since September.",
        "Give me thirty degrees and a beach any day.",
        "Would {n} enjoy a skiing week in Lapland in January?",
        "no",
    ),
    (
        "cooking",
        "I spent all Saturday making fresh pasta from scratch.",
        "I think I own about forty cookbooks at this point.",
        "Would {n} like a voucher for a chef's masterclass?",
        "yes",
    ),
    (
        "luddite",
        "I still don't have a smartphone, my old flip phone does me fine.",
        "I pay my bills at the post office, I don't trust those apps.",
        "Would {n} be pleased with a smartwatch as a gift?",
        "no",
    ),
    (
        "garden",
        "My tomatoes are finally ripening on the allotment.",
        "I spent the whole weekend weeding and putting in bulbs.",
        "Would {n} enjoy a day at the Chelsea Flower Show?",
        "yes",
    ),
]


def traits(p: dict, rng: random.Random, other: dict) -> list[Plan]:
    """Four traits, none shared with the friend (a question names whose it is)."""
    used = p.setdefault("_traits", set())
    taken = other.get("_traits", set())
    out = []
    for key, a, b, q, answer in rng.sample([t for t in TRAITS if t[0] not in taken], 4):
        used.add(key)
        lo = rng.uniform(0.02, 0.45)
        lines = [Line(a, lo), Line(b, rng.uniform(lo + 0.15, 0.95))]
        out.append(Plan(f"i.{key}", lines, [("inference", q.format(n=p["name"]), [0, 1], answer)]))
    return out
