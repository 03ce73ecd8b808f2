# ruff: noqa: E501  (the set's text: one line per utterance)
"""Small talk of the English pairs: greetings, reactions, and chatter around the facts,
some of it about the same people, pets and places without saying anything asked about.

Utterances are put together from parts (a topic, a detail, a tail), so that over months a
pair rarely says the very same sentence twice: a set where one filler line recurs verbatim
in every session tests de-duplication, not memory.
"""

from __future__ import annotations

import random

OPENERS = [
    ("Hey {you}! How's it going?", "Not bad at all, you?"),
    ("Hiya {you}, long time no chat!", "I know, it's been mad. Good to hear from you."),
    ("Hi {you}, got a minute?", "Always for you. What's up?"),
    ("{you}! There you are.", "Ha, here I am. How are things?"),
    ("Hey {you}, survived the week?", "Just about. Barely."),
    ("Oh hi {you}, perfect timing, I was about to message you.", "Great minds! How are you doing?"),
]
CLOSERS = [
    ("Right, I'd better go and make dinner.", "Go on then, speak soon!"),
    ("Anyway, I'll let you go. Take care.", "You too, bye!"),
    ("Oops, is that the time? Talk later.", "Later! Lovely chatting."),
    ("I need to get some sleep, night night.", "Night! Sleep well."),
    ("I've got to run, the washing machine is beeping at me.", "Ha, go! Chat soon."),
]
_LEAD = ["So", "Anyway", "Right", "Okay", "Enough about me", "But hey"]
_ASK = ["what's new with you?", "how are things your end?", "anything happening with you?",
        "tell me your news.", "how's your week been?", "what have you been up to?"]  # fmt: skip
_REACT = ["Oh wow, really?", "That's brilliant!", "Ha, I can imagine.", "No way!", "Good for you.",
          "Oh that's lovely.", "Honestly, same.", "Ugh, poor you.", "Fair enough.", "Wait, seriously?",
          "I love that.", "Makes sense.", "Bless.", "That's so you.", "Oh nice.", "Blimey.", "Ha!"]  # fmt: skip
_TAIL = ["", "", "", " You'll have to tell me more next time.", " Keep me posted.", " Honestly, life.",
         " Sounds like quite a week.", " Ha.", " Anyway.", " Oh well."]  # fmt: skip

_S = {
    "weather": ["drizzly", "boiling", "freezing", "grey", "windy", "gorgeous", "muggy", "foggy"],
    "period": ["week", "weekend", "day", "morning"],
    "show": [
        "that baking programme",
        "the new detective series",
        "the snooker",
        "Gardeners' World",
        "a documentary about octopuses",
        "some terrible reality show",
        "an old episode of Frasier",
        "a quiz show",
        "the darts",
    ],
    "food": [
        "beans on toast",
        "a takeaway pizza",
        "leftover curry",
        "cheese on crackers",
        "a jacket potato",
        "fish fingers",
        "a sad salad",
        "soup from a tin",
    ],
    "transport": ["traffic", "train", "bus", "school run", "ring road"],
    "bad": ["unreal", "a nightmare", "forty minutes late", "rammed", "chaos"],
    "animal": ["a goat", "a cat", "a parrot", "a duck", "a horse", "a hedgehog"],
    "doing": [
        "on a trampoline",
        "stealing a sandwich",
        "playing the piano",
        "in a tiny hat",
        "chasing a hoover",
        "opening a fridge",
    ],
    "gadget": [
        "phone screen",
        "laptop charger",
        "kettle",
        "washing machine",
        "headphones",
        "toaster",
    ],
    "broke": ["packed in", "died", "cracked", "started making a weird noise"],
    "habit": ["drink water", "stretch", "go to bed early", "read before sleep", "walk at lunch"],
    "service": ["bins", "recycling", "post", "parcel"],
    "shop": ["coffee place", "bakery", "bookshop", "noodle bar", "charity shop", "deli"],
    "street": ["the high street", "the corner", "Market Street", "by the station"],
    "thing": ["hedge", "new conservatory", "cat", "car alarm", "Christmas lights", "extension"],
    "room": ["loft", "garage", "spare room", "kitchen drawers", "wardrobe", "shed"],
    "busy": ["full on", "mad", "relentless", "weirdly quiet", "so slow"],
    "fail": [
        "burnt the toast and set off the alarm",
        "spilt coffee down my shirt",
        "locked myself out",
        "put salt in my tea",
        "missed the bus by seconds",
    ],
    "noise": ["drilling", "playing the trumpet", "mowing the lawn", "hammering", "singing opera"],
    "found": ["a fiver", "a cinema ticket", "a conker", "half a biscuit", "a lip balm"],
    "plan": [
        "a proper lie-in",
        "sorting the garden",
        "a car boot sale",
        "batch cooking",
        "a film marathon",
        "doing absolutely nothing",
    ],
    "price": ["butter", "coffee", "cheddar", "olive oil", "a loaf of bread"],
    "genre": ["a crime novel", "a memoir", "some sci-fi", "a cosy mystery", "a history book"],
}
_TOPICS = [
    (
        "It's been so {weather} here all {period}.",
        ["Same here, typical.", "We've had the same.", "I'm over it."],
    ),
    (
        "I watched {show} last night, couldn't stop.",
        ["Ha, I've heard it's addictive.", "Oh I love that.", "No judgement here."],
    ),
    (
        "Dinner tonight is {food}, living the dream.",
        ["Nothing wrong with that.", "Honestly, sounds great.", "Classic."],
    ),
    (
        "The {transport} this morning was {bad}.",
        ["Tell me about it.", "Every single day.", "Nightmare."],
    ),
    (
        "Did you see that video of {animal} {doing}?",
        ["Yes! I've watched it ten times.", "No, send it!", "Ha, the internet."],
    ),
    ("My {gadget} {broke} again.", ["Oh no, not again.", "Everything breaks at once.", "Typical."]),
    (
        "I've been trying to {habit} more.",
        ["Good plan, I always forget.", "How's it going?", "Teach me your ways."],
    ),
    ("The {service} didn't come again.", ["Ours neither.", "It's a joke.", "Ring the council."]),
    (
        "Have you tried that new {shop} on {street}?",
        ["Not yet, is it any good?", "Yes, it's lovely.", "I keep walking past it."],
    ),
    (
        "Mum rang to tell me all about her neighbour's {thing}.",
        ["Ha, the big news.", "Riveting.", "Mums, honestly."],
    ),
    (
        "I keep meaning to clear out the {room}.",
        ["Same, it's a disaster.", "One day.", "Just bin everything."],
    ),
    ("Work's been {busy} this week.", ["It always comes at once.", "Hang in there.", "Same here."]),
    ("I {fail} this morning.", ["Classic.", "Oh no, ha!", "One of those days."]),
    (
        "The man over the road has started {noise} at seven in the morning.",
        ["That would drive me mad.", "Earplugs!", "People!"],
    ),
    (
        "I found {found} in my coat pocket from last winter.",
        ["Bonus!", "Ha, treasure.", "The best feeling."],
    ),
    ("Thinking of {plan} this weekend.", ["Sounds ideal.", "Do it.", "Living the dream."]),
    (
        "Have you seen the price of {price} lately?",
        ["It's criminal.", "Don't get me started.", "I nearly fainted."],
    ),
    (
        "I'm reading {genre} at the moment, can't put it down.",
        ["Ooh, lend it me after.", "Love that.", "I need a new book."],
    ),
]
# About the speaker's own people and places, without the facts asked about.
_S |= {
    "place": ["the supermarket", "the park", "the post office", "the chemist", "the garden centre"],
    "person": [
        "the postman",
        "an old school friend",
        "my cousin",
        "our old teacher",
        "the man from the chippy",
    ],
    "snack": [
        "salt and vinegar crisps",
        "jaffa cakes",
        "dark chocolate",
        "pork scratchings",
        "flapjacks",
    ],
    "chore": [
        "cleaning the windows",
        "defrosting the freezer",
        "ironing",
        "sorting the sock drawer",
    ],
    "app": ["that word game", "the news", "property listings", "cat videos", "recipe blogs"],
    "small": ["keys", "reading glasses", "umbrella", "bus pass", "headphones"],
    "hour": ["five", "half six", "three in the morning", "seven"],
    "sound": [
        "seagulls",
        "the bin lorry",
        "a dog barking",
        "someone's alarm",
        "a pigeon on the roof",
    ],
}
_TOPICS += [
    (
        "Bumped into {person} at {place}, we talked for ages.",
        ["Ha, what about?", "Small world.", "They do love a chat."],
    ),
    (
        "I've become addicted to {snack} again.",
        ["Dangerous.", "Same, they're my weakness.", "Save me some."],
    ),
    (
        "Spent the afternoon {chore}, my back's killing me.",
        ["Worth it though.", "I should do mine.", "Rather you than me."],
    ),
    (
        "I lost a whole evening scrolling {app}.",
        ["Too real.", "Happens to the best of us.", "Put the phone down!"],
    ),
    (
        "Forgot my {small} again and had to go back home.",
        ["Classic you.", "I do that all the time.", "Leave them by the door."],
    ),
    ("I was woken up at {hour} by {sound}.", ["Nightmare.", "Nap later.", "Earplugs, honestly."]),
    (
        "{place} was heaving today, queues everywhere.",
        ["Weekends, eh.", "Go early next time.", "Brave of you."],
    ),
    ("{person} recommended a new place to eat.", ["Any good?", "We should try it.", "Ooh, where?"]),
]
_NEAR = [
    (
        "{partner} is on {shift} this week so I've hardly seen them.",
        ["That's hard.", "Hope it's over soon."],
    ),
    ("{sis} sent me about forty memes today.", ["Ha, she sounds like a laugh.", "Sisters!"]),
    (
        "{sis} and I had a bit of a row on the phone about {petty}.",
        ["Oh no, it'll blow over.", "Families."],
    ),
    ("The puppy chewed my {shoe} this morning.", ["They always go for the good ones.", "Naughty!"]),
    ("{friend} might pop round for a cup of tea later.", ["Nice, say hi from me.", "Lovely."]),
    ("I went past {rest} yesterday, it was packed.", ["It's always busy there.", "No surprise."]),
    ("{col} at work keeps borrowing my {stationery}.", ["Ha, hide it.", "Cheek!"]),
    ("It's been raining nonstop in {home} lately.", ["Same everywhere I think.", "Grim."]),
    (
        "I haven't been back to {town} in ages.",
        ["You should go some time.", "Bet it hasn't changed."],
    ),
    ("{kid} drew a picture of me with {arms} arms.", ["Accurate, you do a lot.", "Frame it!"]),
]
_NEAR_SLOTS = {
    "shift": ["nights", "earlies", "a course", "a work trip"],
    "petty": ["Mum's birthday present", "who forgot to call", "a TV show", "the group chat"],
    "shoe": ["slipper", "trainer", "best boot", "sandal"],
    "stationery": ["stapler", "good pen", "charger", "mug"],
    "arms": ["six", "eight", "four", "twelve"],
}


def lead_in(rng: random.Random) -> str:
    return f"{rng.choice(_LEAD)}, {rng.choice(_ASK)}"


# What a friend adds after the first "oh wow" (most replies in chat are more than a word).
_FOLLOW = [
    "How are you feeling about it all?",
    "I remember you saying something like that a while back.",
    "We should have a proper catch-up over coffee soon.",
    "That reminds me, I need to ring my mum back tonight.",
    "I'll want the full story next time I see you.",
    "It's funny how things turn out, isn't it?",
    "I was only thinking about you this morning, actually.",
    "You deserve a bit of good news after the month you've had.",
    "My week has been nowhere near as exciting, trust me.",
    "Let me know if you need a hand with anything.",
    "Honestly, that sounds about right for you.",
    "I can just picture your face.",
    "Did everyone else take it well?",
    "Was that a surprise or had you been planning it?",
    "I'd have done exactly the same in your shoes.",
    "Life never slows down, does it.",
    "Tell me everything when there's more time.",
    "Sounds like you've got a lot on your plate.",
]


# After small talk: what fits after most replies (not "how do you feel about it").
_CHAT_FOLLOW = [
    "My week has been nowhere near as exciting, trust me.", "Life never slows down, does it.",
    "We should have a proper catch-up over coffee soon.", "That reminds me, I need to ring my mum back tonight.",
]  # fmt: skip


def react(rng: random.Random) -> str:
    if rng.random() < 0.65:
        return f"{rng.choice(_REACT)} {rng.choice(_FOLLOW)}"
    return rng.choice(_REACT) + rng.choice(_TAIL)


def small_talk(people: list[dict], rng: random.Random) -> tuple[int | None, str, str]:
    """One exchange: (whose life it is, or None if anyone's), what is said, the reply."""
    if rng.random() < 0.3:
        who = rng.randint(0, 1)
        p = people[who]
        text, replies = rng.choice(_NEAR)
        slots = {k: rng.choice(v) for k, v in _NEAR_SLOTS.items()}
        slots |= {"partner": p["partner"], "sis": rng.choice(p["sis"]), "friend": p["friend"],
                  "rest": p["rest"][0], "col": p["col"], "home": rng.choice([p["home1"], p["home2"]]),
                  "town": p["town"], "kid": p["kid"]}  # fmt: skip
        return who, text.format(**slots), _reply(replies, rng)
    text, replies = rng.choice(_TOPICS)
    text = text.format(**{k: rng.choice(v) for k, v in _S.items()})
    return None, text, _reply(replies, rng)


def _reply(replies: list[str], rng: random.Random) -> str:
    if rng.random() < 0.3:
        return f"{rng.choice(replies)} {rng.choice(_CHAT_FOLLOW)}"
    return rng.choice(replies) + rng.choice(_TAIL)
