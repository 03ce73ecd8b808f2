# ruff: noqa: E501  (the set's text: one line per utterance or question)
"""English pairs of ``recall_dialogues``: who they are, and what they tell each other."""

from __future__ import annotations

import random

from benchmarks.data.dialogue_en_chat import CLOSERS, OPENERS, lead_in, react, small_talk
from benchmarks.data.recall_dialogues_types import Plan, pick

LANG = "en"
__all__ = ["CLOSERS", "LANG", "OPENERS", "lead_in", "people", "plans", "react", "small_talk"]

NAMES = ["Anna", "Priya", "Chloe", "Megan", "Fiona", "Hannah", "Rosie", "Leah", "Maya", "Jess",
         "Tom", "Ravi", "Owen", "Callum", "Danny", "Marcus", "Ben", "Liam", "Sam", "Jonah"]  # fmt: skip
PARTNERS = ["Rob", "Steve", "Kate", "Lucy", "Nadia", "Gareth", "Imogen", "Pete", "Alex", "Zoe"]
TOWNS = ["Whitstable", "Keswick", "Falmouth", "Tenby", "Whitby", "Oban", "Ludlow", "Hexham",
         "Bude", "Ilkley", "Frome", "Totnes"]  # fmt: skip
CITIES = ["Leeds", "Bristol", "Glasgow", "Cardiff", "Norwich", "York", "Brighton", "Sheffield",
          "Exeter", "Durham", "Bath", "Nottingham"]  # fmt: skip
# (job, where)
JOBS = [("nurse", "the Royal Infirmary"), ("accountant", "Hargreaves & Co"),
        ("graphic designer", "an architecture practice"), ("electrician", "a building firm"),
        ("pharmacist", "Boots on the high street"), ("paramedic", "the county ambulance service"),
        ("primary school teacher", "St Luke's primary"), ("software tester", "a start-up near the canal"),
        ("estate agent", "Foxtons"), ("physiotherapist", "a sports clinic")]  # fmt: skip
SIB_JOBS = ["midwife", "dentist", "airline pilot", "vet", "police officer", "chef", "solicitor",
            "plumber", "zookeeper", "journalist"]  # fmt: skip
SIBS = ["Rosa", "Ellie", "Kirsty", "Bea", "Gemma", "Tasha", "Holly", "Nina", "Polly", "Ciara"]
SUBJECTS = ["chemistry", "history", "French", "maths", "music", "geography", "PE", "art"]
# (what the speaker calls it, how a question puts it)
CLASSES = [("my pottery class", "the ceramics course"), ("salsa lessons", "the Latin dance classes"),
           ("the life drawing class", "the sketching group"), ("choir practice", "the singing group"),
           ("the woodwork course", "the carpentry workshop"), ("the climbing wall", "the bouldering gym"),
           ("my photography evening class", "the camera course"), ("the community garden", "the allotment volunteers")]  # fmt: skip
FRIENDS = [
    "Jo",
    "Marguerite",
    "Dev",
    "Isla",
    "Frank",
    "Suki",
    "Harriet",
    "Yusuf",
    "Carmen",
    "Ollie",
]
PLACES = ["Lyme Regis", "the Peak District", "Hay-on-Wye", "St Ives", "Durdle Door",
          "the Lake District", "Bamburgh castle", "Stratford", "Portmeirion", "Cheddar Gorge"]  # fmt: skip
# (restaurant, cuisine in its own words, cuisine as a question's answer)
RESTAURANTS = [("Luigi's", "Italian"), ("the Golden Lotus", "Cantonese"), ("Sabai", "Thai"),
               ("Casa Miguel", "Spanish tapas"), ("the Spice Route", "Keralan curry"),
               ("Yamato", "sushi"), ("Le Petit Coin", "French bistro"), ("Olympia", "Greek")]  # fmt: skip
# (country as said, nationality as asked, dish)
COLLEAGUES = ["Tiago", "Kenji", "Agnieszka", "Mehmet", "Lucía", "Arjun", "Ingrid", "Kofi"]
COUNTRIES = [("Portugal", "Portuguese", "bacalhau"), ("Japan", "Japanese", "gyoza"),
             ("Poland", "Polish", "pierogi"), ("Turkey", "Turkish", "lahmacun"),
             ("Mexico", "Mexican", "mole"), ("Ghana", "Ghanaian", "jollof rice"),
             ("Sweden", "Swedish", "cinnamon buns"), ("India", "Indian", "masala dosa")]  # fmt: skip
HOLIDAYS = ["Portugal", "Crete", "Iceland", "Croatia", "the Scottish Highlands", "Sicily",
            "Norway", "Cornwall", "Lake Garda", "Mallorca"]  # fmt: skip
PETS = ["Max", "Biscuit", "Luna", "Pickle", "Bramble", "Ziggy", "Mabel", "Otis", "Pepper", "Noodle",
        "Waffle", "Rolo"]  # fmt: skip
BREEDS = ["cockapoo", "beagle", "border collie", "dachshund", "labrador", "whippet", "spaniel"]
# (old sport as said, new sport as said, new sport as an answer)
SPORTS = [("a running club, Tuesdays and Thursdays", "the running", "swimming three mornings a week", "swimming"),
          ("five-a-side on Wednesday nights", "the football", "yoga twice a week", "yoga"),
          ("tennis lessons at the park", "the tennis", "cycling with a club on Sundays", "cycling"),
          ("spin classes at the gym", "the spin classes", "rowing on the river", "rowing"),
          ("netball on Mondays", "the netball", "indoor climbing", "climbing")]  # fmt: skip
INSTRUMENTS = ["cello", "ukulele", "saxophone", "piano", "drums", "violin", "harp", "trumpet"]
CARS = ["a little red Fiat 500", "a second-hand Skoda estate", "an old Volvo", "a Nissan Leaf",
        "a Mini Cooper", "a Toyota Yaris", "a camper van"]  # fmt: skip
FILMS = ["Paddington 2", "The Princess Bride", "Amélie", "Spirited Away", "Back to the Future",
         "Mamma Mia", "Jaws", "Notting Hill"]  # fmt: skip
ALLERGIES = [("prawns", "shellfish"), ("peanuts", "nuts"), ("kiwi", "fruit"), ("wasps", "insect stings"),
             ("sesame", "seeds")]  # fmt: skip
LANGS = ["Italian", "Welsh", "Japanese", "Portuguese", "Korean", "Dutch", "Greek", "German"]
KIDS = ["Poppy", "Arlo", "Edie", "Finn", "Ivy", "Reuben", "Nell", "Theo"]
NEIGHBOURS = ["Graham", "Bernadette", "Ade", "Moira", "Clive", "Shona", "Pavel", "Lorraine"]
# (job as said, as a question puts it)
NB_JOBS = [("carpenter", "woodworker"), ("retired nurse", "former hospital worker"),
           ("baker", "one who bakes bread for a living"), ("piano teacher", "music tutor"),
           ("mechanic", "car repair expert"), ("gardener", "landscaper")]  # fmt: skip
FAVOURS = ["fixed our wobbly gate", "looked after the kids on Friday", "left a lemon cake on our doorstep",
           "lent us a ladder", "watered our plants while we were away", "jump-started the car"]  # fmt: skip
BANDS = ["Elbow", "the Kooks", "Arctic Monkeys", "Florence and the Machine", "Coldplay", "Blur"]


def people(rng: random.Random, used: set[str]) -> list[dict]:
    out = []
    for _ in range(2):
        p: dict = {"name": pick(rng, NAMES, used)}
        p["partner"], p["town"] = pick(rng, PARTNERS, used), pick(rng, TOWNS, used)
        p["home1"], p["home2"] = pick(rng, CITIES, used), pick(rng, CITIES, used)
        (p["job1"], p["work1"]), (p["job2"], p["work2"]) = rng.sample(JOBS, 2)
        p["sis"] = [pick(rng, SIBS, used), pick(rng, SIBS, used)]
        p["sisjob"] = rng.sample(SIB_JOBS, 2)
        p["subject"], p["sib_city"] = rng.choice(SUBJECTS), pick(rng, CITIES, used)
        p["class"], p["friend"] = pick(rng, CLASSES, used), pick(rng, FRIENDS, used)
        p["place"], p["rest"] = pick(rng, PLACES, used), pick(rng, RESTAURANTS, used)
        p["col"], p["country"] = pick(rng, COLLEAGUES, used), pick(rng, COUNTRIES, used)
        p["hol"] = [pick(rng, HOLIDAYS, used), pick(rng, HOLIDAYS, used)]
        p["pets"], p["breed"] = [pick(rng, PETS, used), pick(rng, PETS, used)], rng.choice(BREEDS)
        p["sport"], p["instrument"] = pick(rng, SPORTS, used), pick(rng, INSTRUMENTS, used)
        p["car"], p["film"] = pick(rng, CARS, used), pick(rng, FILMS, used)
        p["allergy"], p["lang"] = pick(rng, ALLERGIES, used), pick(rng, LANGS, used)
        p["kid"], p["band"] = pick(rng, KIDS, used), rng.choice(BANDS)
        p["nb"], p["nbjob"] = pick(rng, NEIGHBOURS, used), pick(rng, NB_JOBS, used)
        p["favour"] = rng.choice(FAVOURS)
        out.append(p)
    return out


def plans(me: dict, you: dict, rng: random.Random) -> list[Plan]:
    from benchmarks.data.dialogue_en_plans import life_events, multihop, singles, traits, updates

    return (
        singles(me, rng)
        + updates(me, rng)
        + life_events(me, rng)
        + multihop(me, rng)
        + traits(me, rng, you)
    )
