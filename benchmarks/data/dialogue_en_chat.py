# ruff: noqa: E501  (the set's text: one line per utterance)
"""Small talk of the English pairs: greetings, reactions, and chatter around the facts,
some of it about the same people, pets and places without saying anything asked about."""

from __future__ import annotations

import random

OPENERS = [
    ("Hey {you}! How's it going?", "Not bad at all, you?"),
    ("Hiya {you}, long time no chat!", "I know, it's been mad. Good to hear from you."),
    ("Hi {you}, got a minute?", "Always for you. What's up?"),
    ("{you}! There you are.", "Ha, here I am. How are things?"),
    ("Hey {you}, survived the week?", "Just about. Barely."),
]
CLOSERS = [
    ("Right, I'd better go and make dinner.", "Go on then, speak soon!"),
    ("Anyway, I'll let you go. Take care.", "You too, bye!"),
    ("Oops, is that the time? Talk later.", "Later! Lovely chatting."),
    ("I need to get some sleep, night night.", "Night! Sleep well."),
]
LEADINS = [
    "So what's new with you?",
    "Anyway, enough about me. How are you?",
    "And you? Anything happening?",
    "How's everything your end?",
    "Go on, tell me your news.",
    "What else is going on?",
]
REACTIONS = [
    "Oh wow, really?",
    "That's brilliant!",
    "Ha, I can imagine.",
    "No way!",
    "Good for you.",
    "Oh that's lovely.",
    "Honestly, same.",
    "Ugh, poor you.",
    "Fair enough.",
    "Wait, seriously?",
    "I love that.",
    "Ooh, tell me more next time.",
    "Makes sense.",
    "Bless.",
    "That's so you.",
]

WEATHER = ["drizzly", "boiling", "freezing", "grey", "windy", "gorgeous"]
SHOWS = ["that baking programme", "the new detective series", "the snooker", "Gardeners' World",
         "a documentary about octopuses", "some terrible reality show"]  # fmt: skip
FOODS = [
    "beans on toast",
    "a takeaway pizza",
    "leftover curry",
    "cheese on crackers",
    "a jacket potato",
]
GENERIC = [
    ("It's been so {w} here all week.", "Same here, typical."),
    ("I watched {s} last night, couldn't stop.", "Ha, I've heard it's addictive."),
    ("Dinner tonight is {f}, living the dream.", "Honestly, nothing wrong with that."),
    ("The traffic this morning was unreal.", "Tell me about it, I sat on the ring road for ages."),
    ("I'm so tired, I could sleep for a week.", "Early night for you then."),
    (
        "Did you see that video of the goat on the trampoline?",
        "Yes! I've watched it about ten times.",
    ),
    ("My phone screen cracked again.", "Oh no, not again."),
    ("I've been trying to drink more water.", "Good plan, I always forget."),
    ("The bins didn't get collected again.", "Ours neither, it's a joke."),
    ("I'm thinking of cutting my hair short.", "Do it, it'd suit you."),
    ("Have you tried that new coffee place?", "Not yet, is it any good?"),
    ("I spent the whole evening on the sofa.", "Sounds perfect to be honest."),
    ("My mum rang to tell me about her neighbour's hedge.", "Ha, the big news."),
    ("I keep meaning to clear out the loft.", "Same, it's a disaster up there."),
    ("Work's been full on this week.", "It always seems to come at once."),
    ("I burnt the toast this morning and set off the alarm.", "Classic."),
]
# About the speaker's own people and places, without the facts asked about.
NEAR = [
    (
        "{partner} is on nights this week so I've hardly seen them.",
        "That's hard, hope it's over soon.",
    ),
    ("{sis0} sent me about forty memes today.", "Ha, she sounds like a laugh."),
    ("{sis1} and I had a bit of a row on the phone.", "Oh no, hopefully it blows over."),
    ("The puppy chewed one of my shoes this morning.", "They always go for the good ones."),
    ("{friend} is coming round for a cup of tea later.", "Nice, say hi from me."),
    ("I went past {rest} yesterday, it was packed.", "It's always busy there."),
    ("{col} at work keeps stealing my stapler.", "Ha, hide it."),
    ("It's been raining nonstop in {home1} and {home2} lately.", "Same everywhere I think."),
    ("I haven't been to {town} in ages.", "You should go back some time."),
    ("{kid} drew a picture of me with six arms.", "That's accurate, you do a lot."),
]


def chatter(people: list[dict], rng: random.Random) -> list[tuple[int | None, str, str]]:
    """Exchanges of small talk: (whose life it is or None, what is said, the reply)."""
    out: list[tuple[int | None, str, str]] = []
    for a, b in GENERIC:
        for _ in range(2):
            text = a.format(w=rng.choice(WEATHER), s=rng.choice(SHOWS), f=rng.choice(FOODS))
            out.append((None, text, b))
    for who, p in enumerate(people):
        slots = {
            "partner": p["partner"], "sis0": p["sis"][0], "sis1": p["sis"][1], "friend": p["friend"],
            "rest": p["rest"][0], "col": p["col"], "home1": p["home1"], "home2": p["home2"],
            "town": p["town"], "kid": p["kid"],
        }  # fmt: skip
        out += [(who, a.format(**slots), b) for a, b in NEAR]
    return out
