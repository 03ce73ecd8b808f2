# ruff: noqa: E501  (the development set: one line per fact, turn or question)
"""The recall benchmark's development set: a small household's companion conversations.

``build(seed)`` returns the same set for the same seed (nothing is downloaded, nothing
checked in but this file): dated sessions of turns (one turn = one Fay conversation node,
``"<speaker>：<utterance>\\nFay：<reply>"``) mixing chit-chat filler, near-miss distractors
(pills, the doctor, the dog, family, without the facts) and fact-bearing turns, and
questions with the ids of their evidence turns.

The household: Margaret Hale (78, English, lives with her beagle Biscuit; daughter Helen,
son-in-law Tom, grandchildren Lily and Sam; son David in Leeds) and Tom's mother Lin Xiuying
(林阿姨, Mandarin, moved in with Helen and Tom). Facts change over the weeks (doses,
appointments, preferences), so some questions want the latest version, some the first one.

Question categories: ``single`` (one evidence turn), ``multi`` (two evidence turns, each
needed), ``temporal`` (the latest of a changing fact, the original one, or a time relative to
"now", an hour after the last session).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

AGENT = "Fay"


@dataclass
class Turn:
    id: str  # "m03t17": user initial, session, turn
    user: str
    session: int
    datetime: str  # Fay's "YYYY/MM/DD HH:MM:SS", local time
    content: str
    fact: str | None = None  # the fact key this turn carries


@dataclass
class Question:
    id: str
    user: str
    lang: str
    category: str  # single | multi | temporal
    query: str
    evidence: list[str] = field(default_factory=list)  # turn ids


@dataclass
class DevSet:
    turns: list[Turn]
    questions: list[Question]
    now: datetime  # an hour after the last session


# --- Margaret's world -------------------------------------------------------------------
# Sessions: every 2-3 days from Monday 3 March 2025 for eight weeks (fixed, so relative
# phrases such as "last week" stay true whatever the seed).
M_GAPS = [0, 2, 2, 3, 2, 2, 3, 2, 2, 3, 2, 2, 3, 2, 2, 3, 2, 2, 3, 2, 2, 3, 2, 2]
M_START = datetime(2025, 3, 3)
M_HOURS = [9, 10, 15, 19, 11, 16, 9, 20]

# (session, key, what Margaret says, Fay's reply)
M_FACTS: list[tuple[int, str, str, str]] = [
    (
        0,
        "dog",
        "This is Biscuit, my beagle. He's seven and snores like a tractor.",
        "Hello Biscuit! Seven is a lovely age for a beagle.",
    ),
    (
        0,
        "daughter",
        "My daughter Helen lives ten minutes away, she's married to Tom.",
        "It's nice to have Helen so close by.",
    ),
    (
        0,
        "grandkids",
        "Helen and Tom have two children, Lily is nine and Sam is six.",
        "Lily and Sam, I'll remember their names.",
    ),
    (
        0,
        "metformin1",
        "The doctor has me on metformin, 500 milligrams twice a day with meals.",
        "Understood, metformin twice a day with breakfast and dinner.",
    ),
    (
        0,
        "tea",
        "I take my Earl Grey with a slice of lemon, never sugar.",
        "Earl Grey with lemon and no sugar, noted.",
    ),
    (
        1,
        "gp",
        "My GP is Dr Okafor at the Elm Street surgery, she's very patient with me.",
        "Dr Okafor sounds like a good doctor to have.",
    ),
    (
        1,
        "son",
        "My son David lives up in Leeds, he rings me on Sunday evenings.",
        "Sunday evening calls with David, how nice.",
    ),
    (
        1,
        "allergy",
        "Remember I'm allergic to penicillin, I came out in a terrible rash once.",
        "I'll keep in mind that penicillin gives you a rash.",
    ),
    (
        1,
        "amlodipine",
        "For my blood pressure I take amlodipine, 5 milligrams each morning.",
        "Amlodipine in the morning, got it.",
    ),
    (
        2,
        "dentist1",
        "I've booked the dentist, Mr Brennan, for Friday the 14th at half past ten.",
        "Mr Brennan on the 14th at 10:30, I'll remind you.",
    ),
    (
        2,
        "roses",
        "My favourite rose is Gertrude Jekyll, pink and it smells heavenly.",
        "Gertrude Jekyll roses, what a beautiful scent.",
    ),
    (
        2,
        "statin",
        "I take atorvastatin at night, 20 milligrams, for the cholesterol.",
        "Atorvastatin at bedtime, noted.",
    ),
    (
        3,
        "neighbour",
        "Joyce from next door popped round, she's my oldest friend on the street.",
        "Joyce sounds like a wonderful neighbour.",
    ),
    (
        3,
        "physio",
        "The physiotherapist for my knee is Karen, I see her on Tuesday mornings.",
        "Tuesday mornings with Karen for the knee.",
    ),
    (
        3,
        "radio",
        "I listen to Radio 4 all morning, and Nat King Cole when I'm cooking.",
        "Nat King Cole while cooking sounds perfect.",
    ),
    (
        4,
        "fall",
        "I had a fall in the garden yesterday, tripped on the hose and bruised my hip.",
        "Oh dear, I'm sorry. Is the hip very sore?",
    ),
    (
        4,
        "dentist2",
        "Mr Brennan's office rang, the dentist is moved to Friday the 21st, same time.",
        "So the dentist is now the 21st at 10:30.",
    ),
    (
        5,
        "glaucoma",
        "The optician found early glaucoma, I've started latanoprost eye drops at bedtime.",
        "Latanoprost drops every night, I'll remind you.",
    ),
    (
        5,
        "violin",
        "Lily has started learning the violin at school, she practises every evening.",
        "How lovely that Lily is learning the violin.",
    ),
    (
        5,
        "coriander",
        "I can't stand coriander, it tastes like soap to me.",
        "No coriander for you then.",
    ),
    (
        6,
        "bookclub1",
        "Our book club is reading The Remains of the Day this month.",
        "The Remains of the Day is a moving book.",
    ),
    (
        6,
        "arthur",
        "Arthur from the bowls club won the spring tournament, he's over the moon.",
        "Congratulations to Arthur!",
    ),
    (
        7,
        "vet1",
        "Biscuit has an ear infection, the vet Dr Patel at Riverside Vets gave him drops.",
        "Poor Biscuit, I hope the drops work quickly.",
    ),
    (
        7,
        "biscuitdrops",
        "Biscuit's ear drops are called Otomax, three drops in each ear twice daily.",
        "Otomax twice a day for Biscuit's ears.",
    ),
    (
        8,
        "metformin2",
        "Dr Okafor says my sugar is still high, so metformin goes up to 1000 milligrams twice a day.",
        "Metformin is now 1000 mg twice daily.",
    ),
    (
        8,
        "bloodtest1",
        "I have a fasting blood test with nurse Fiona on Wednesday at ten past eight.",
        "A fasting blood test with Fiona at 8:10, no breakfast before.",
    ),
    (
        9,
        "scarf",
        "I'm knitting a scarf for Sam in blue and green stripes, his football colours.",
        "A striped scarf, Sam will love it.",
    ),
    (
        9,
        "recital",
        "Lily's violin recital is on Saturday the 12th of April at St Mary's hall.",
        "I'll note Lily's recital at St Mary's hall.",
    ),
    (
        10,
        "powercut",
        "We had a power cut last night for three hours, I sat with candles and the radio.",
        "That must have been eerie. Are the lights back now?",
    ),
    (
        10,
        "coffee",
        "I've gone off coffee completely, it's Earl Grey or decaf from now on.",
        "No more coffee, Earl Grey or decaf.",
    ),
    (
        11,
        "helenbday",
        "Helen's birthday is the 2nd of April, we're taking her to Luigi's, the Italian.",
        "A birthday dinner at Luigi's, lovely.",
    ),
    (
        11,
        "davidjob",
        "David has a new job as a surveyor for the council in Leeds.",
        "Good news for David.",
    ),
    (
        12,
        "joyceop",
        "Joyce has gone into hospital for her hip replacement, I'm feeding her cat Marmalade.",
        "Kind of you to look after Marmalade.",
    ),
    (
        12,
        "tomcar",
        "Tom's car broke down on the bypass, the clutch went, so Helen's doing all the driving.",
        "Hopefully the clutch is a quick repair.",
    ),
    (
        13,
        "ramipril",
        "Dr Okafor stopped the amlodipine because my ankles swelled, I'm on ramipril 2.5 milligrams now.",
        "So amlodipine is stopped and ramipril 2.5 mg started.",
    ),
    (
        13,
        "samtooth",
        "Sam lost his first front tooth at school, the tooth fairy left him a pound.",
        "A pound from the tooth fairy!",
    ),
    (
        14,
        "bookclub2",
        "Book club finished The Remains of the Day, next we're reading Rebecca.",
        "Rebecca is a wonderful choice.",
    ),
    (
        14,
        "physio2",
        "Karen moved physio to Thursday afternoons because of her new hours.",
        "Physio is now Thursday afternoons.",
    ),
    (
        15,
        "fete",
        "The church fete is on Easter Monday, I'm running the cake stall with Joyce's sister.",
        "Running the cake stall sounds fun.",
    ),
    (
        15,
        "hearing",
        "I've got a hearing test at Specsavers on the 23rd of April at two o'clock.",
        "Hearing test on the 23rd at 2 pm.",
    ),
    (
        16,
        "vet2",
        "Dr Patel says Biscuit's ears are clear now, he can stop the drops.",
        "Great news that Biscuit's ears have cleared up.",
    ),
    (
        16,
        "biscuitfood",
        "Biscuit has to go on a light diet food, he's put on two kilos.",
        "A diet for Biscuit then.",
    ),
    (
        17,
        "bloodtest2",
        "Fiona phoned with my results, my HbA1c came down to 52, Dr Okafor is pleased.",
        "An HbA1c of 52, that's real progress.",
    ),
    (
        17,
        "garden2",
        "I planted sweet peas along the back fence this afternoon.",
        "Sweet peas will look lovely along the fence.",
    ),
    (
        18,
        "helenvisit",
        "Helen and the kids came for Sunday lunch, I made roast chicken and apple crumble.",
        "Roast chicken and crumble, what a treat.",
    ),
    (
        16,
        "metformin3",
        "The metformin upset my stomach so Dr Okafor switched me to the slow-release kind, same 1000 milligrams.",
        "Slow-release metformin, 1000 mg, should be gentler.",
    ),
    (
        19,
        "joycehome",
        "Joyce is home from hospital and walking with a frame, Marmalade went back to her.",
        "I'm glad Joyce is home.",
    ),
    (
        19,
        "tv",
        "My favourite programme is Gardeners' World on Friday nights.",
        "Gardeners' World is a Friday treat.",
    ),
    (
        20,
        "ramipril2",
        "The doctor increased the ramipril to 5 milligrams because my pressure is still 150 over 90.",
        "Ramipril is now 5 mg.",
    ),
    (
        20,
        "eyedrops2",
        "The optician said the latanoprost is working, pressure in my eyes is down.",
        "That's good news about your eyes.",
    ),
    (
        21,
        "samscarf",
        "I finished Sam's scarf and gave it to him, he wore it to the match.",
        "He must have been delighted.",
    ),
    (
        21,
        "bowls",
        "Arthur asked me to join the bowls club's Thursday ladies' team.",
        "Will you join the team?",
    ),
    (
        22,
        "callrule",
        "Please don't call me or ring any reminders before nine in the morning.",
        "Understood, nothing before 9 am.",
    ),
    (
        22,
        "dentist3",
        "The dentist said I need a crown on my back tooth, that's booked for the 9th of May.",
        "A crown on the 9th of May, noted.",
    ),
    (
        23,
        "davidvisit",
        "David is coming down from Leeds for the bank holiday weekend in May.",
        "How lovely, David for the bank holiday.",
    ),
    (
        23,
        "biscuitwalk",
        "Biscuit and I walk round the park lake every morning now, for his diet.",
        "Morning walks round the lake, good for you both.",
    ),
]

# (category, question, evidence fact keys)
M_QUESTIONS: list[tuple[str, str, list[str]]] = [
    # single-hop
    ("single", "What kind of dog does Margaret have?", ["dog"]),
    ("single", "How old is Biscuit?", ["dog"]),
    ("single", "Who is Helen married to?", ["daughter"]),
    ("single", "How old are Margaret's grandchildren?", ["grandkids"]),
    ("single", "How does Margaret like her tea?", ["tea"]),
    ("single", "Does Margaret take sugar in her tea?", ["tea"]),
    ("single", "Who is Margaret's family doctor?", ["gp"]),
    ("single", "Which surgery does Margaret go to?", ["gp"]),
    ("single", "When does David usually phone his mother?", ["son"]),
    ("single", "Where does Margaret's son live?", ["son"]),
    ("single", "Is Margaret allergic to any medicine?", ["allergy"]),
    ("single", "What reaction did Margaret have to an antibiotic?", ["allergy"]),
    ("single", "What is Margaret's favourite rose?", ["roses"]),
    ("single", "What does she take for her cholesterol?", ["statin"]),
    ("single", "When does Margaret take the atorvastatin?", ["statin"]),
    ("single", "Who is Joyce?", ["neighbour"]),
    ("single", "Who is Margaret's physiotherapist?", ["physio"]),
    ("single", "What does Margaret listen to while cooking?", ["radio"]),
    ("single", "Which radio station does Margaret like in the morning?", ["radio"]),
    ("single", "How did Margaret hurt her hip?", ["fall"]),
    ("single", "What did she trip over in the garden?", ["fall"]),
    ("single", "What eye condition was Margaret diagnosed with?", ["glaucoma"]),
    ("single", "Which eye drops does Margaret use?", ["glaucoma"]),
    ("single", "What instrument is Lily learning?", ["violin"]),
    ("single", "Which herb does Margaret hate?", ["coriander"]),
    ("single", "Who won the bowls tournament?", ["arthur"]),
    ("single", "Who is Biscuit's vet?", ["vet1"]),
    ("single", "What was wrong with Biscuit's ears?", ["vet1"]),
    ("single", "What is the name of the dog's ear medicine?", ["biscuitdrops"]),
    ("single", "How often does Biscuit get his ear drops?", ["biscuitdrops"]),
    ("single", "Who takes Margaret's blood samples?", ["bloodtest1"]),
    ("single", "What colours is Sam's scarf?", ["scarf"]),
    ("single", "Why is the scarf blue and green?", ["scarf"]),
    ("single", "Where is Lily's recital?", ["recital"]),
    ("single", "How long did the power cut last?", ["powercut"]),
    ("single", "What did Margaret do during the blackout?", ["powercut"]),
    ("single", "Does Margaret still drink coffee?", ["coffee"]),
    ("single", "When is Helen's birthday?", ["helenbday"]),
    ("single", "Where are they taking Helen for her birthday?", ["helenbday"]),
    ("single", "What is David's new job?", ["davidjob"]),
    ("single", "Why is Joyce in hospital?", ["joyceop"]),
    ("single", "What is the name of Joyce's cat?", ["joyceop"]),
    ("single", "What happened to Tom's car?", ["tomcar"]),
    ("single", "What happened to Sam's tooth?", ["samtooth"]),
    ("single", "How much did the tooth fairy leave?", ["samtooth"]),
    ("single", "When is the church fete?", ["fete"]),
    ("single", "What is Margaret doing at the fete?", ["fete"]),
    ("single", "Where is Margaret's hearing test?", ["hearing"]),
    ("single", "Why does Biscuit need diet food?", ["biscuitfood"]),
    ("single", "What was Margaret's HbA1c result?", ["bloodtest2"]),
    ("single", "What did Margaret plant along the back fence?", ["garden2"]),
    ("single", "What did Margaret cook for Sunday lunch?", ["helenvisit"]),
    ("single", "Is Joyce back home yet?", ["joycehome"]),
    ("single", "What is Margaret's favourite TV programme?", ["tv"]),
    ("single", "When is Gardeners' World on?", ["tv"]),
    ("single", "What did the optician say about the eye drops working?", ["eyedrops2"]),
    ("single", "Did Sam like the scarf?", ["samscarf"]),
    ("single", "Which team did Arthur invite Margaret to join?", ["bowls"]),
    ("single", "What time is too early to ring Margaret?", ["callrule"]),
    ("single", "What dental work does Margaret need?", ["dentist3"]),
    ("single", "When is David visiting?", ["davidvisit"]),
    ("single", "Where does Margaret walk the dog?", ["biscuitwalk"]),
    ("single", "What was Margaret's blood pressure reading?", ["ramipril2"]),
    ("single", "Why did the metformin get changed to slow release?", ["metformin3"]),
    ("single", "Why was the amlodipine stopped?", ["ramipril"]),
    ("single", "How long has Joyce been Margaret's friend?", ["neighbour"]),
    ("single", "How often does Lily practise?", ["violin"]),
    ("single", "What book is the book club reading next?", ["bookclub2"]),
    ("single", "Which pharmacy drug does Margaret take for her diabetes?", ["metformin1"]),
    ("single", "Is Margaret on Otomax?", ["biscuitdrops"]),
    ("single", "Who is feeding Marmalade?", ["joyceop"]),
    ("single", "Who is driving while Tom's car is broken?", ["tomcar"]),
    ("single", "What does Margaret take for her blood pressure in the morning?", ["amlodipine"]),
    ("single", "Who is running the cake stall with Margaret?", ["fete"]),
    ("single", "What did the tooth fairy bring Sam?", ["samtooth"]),
    # multi-hop: two evidence turns
    (
        "multi",
        "Where is the recital of the grandchild who plays the violin?",
        ["violin", "recital"],
    ),
    ("multi", "What is the name of the vet who treats the beagle?", ["dog", "vet1"]),
    (
        "multi",
        "Which medication did the vet give Biscuit and who is the vet?",
        ["vet1", "biscuitdrops"],
    ),
    ("multi", "What job does the son who rings on Sundays have now?", ["son", "davidjob"]),
    (
        "multi",
        "Which hospital operation did Margaret's oldest friend on the street have?",
        ["neighbour", "joyceop"],
    ),
    (
        "multi",
        "Is Joyce home from her hip replacement and who has Marmalade?",
        ["joyceop", "joycehome"],
    ),
    (
        "multi",
        "What blood pressure tablets has Margaret taken, before and after the swollen ankles?",
        ["amlodipine", "ramipril"],
    ),
    (
        "multi",
        "How has Margaret's metformin dose changed since she started?",
        ["metformin1", "metformin2"],
    ),
    ("multi", "What did the fasting blood test with Fiona show?", ["bloodtest1", "bloodtest2"]),
    ("multi", "What day was physio originally and what day is it now?", ["physio", "physio2"]),
    (
        "multi",
        "What was the dentist's original date and what was it moved to?",
        ["dentist1", "dentist2"],
    ),
    ("multi", "Which books has the book club read this spring?", ["bookclub1", "bookclub2"]),
    ("multi", "What happened with Biscuit's ear infection in the end?", ["vet1", "vet2"]),
    ("multi", "Did Sam get the scarf Margaret was knitting him?", ["scarf", "samscarf"]),
    ("multi", "How are the eye drops for Margaret's glaucoma working?", ["glaucoma", "eyedrops2"]),
    ("multi", "What did Arthur win and what has he invited Margaret to?", ["arthur", "bowls"]),
    (
        "multi",
        "Why is Biscuit on a diet and how is Margaret helping him lose weight?",
        ["biscuitfood", "biscuitwalk"],
    ),
    ("multi", "Who are Helen's husband and children?", ["daughter", "grandkids"]),
    (
        "multi",
        "What are all of Margaret's tablets in the morning and at night?",
        ["amlodipine", "statin"],
    ),
    (
        "multi",
        "What does Margaret drink now that she has given up coffee, and how does she take it?",
        ["tea", "coffee"],
    ),
    ("multi", "Which drug is Margaret allergic to and who is her GP?", ["allergy", "gp"]),
    (
        "multi",
        "What happened to the dentist appointment and what treatment is next?",
        ["dentist2", "dentist3"],
    ),
    ("multi", "What ramipril doses has Margaret been on?", ["ramipril", "ramipril2"]),
    (
        "multi",
        "What two changes did Dr Okafor make to the metformin?",
        ["metformin2", "metformin3"],
    ),
    ("multi", "What flowers has Margaret got in the garden?", ["roses", "garden2"]),
    (
        "multi",
        "Which family events are coming up for Lily and Helen in April?",
        ["recital", "helenbday"],
    ),
    (
        "multi",
        "When do David's calls happen and when is he visiting in person?",
        ["son", "davidvisit"],
    ),
    ("multi", "What does Margaret listen to and watch for entertainment?", ["radio", "tv"]),
    (
        "multi",
        "Which appointments does Margaret have in late April and May?",
        ["hearing", "dentist3"],
    ),
    (
        "multi",
        "What accidents has Margaret had at home, in the garden and with the electricity?",
        ["fall", "powercut"],
    ),
    (
        "multi",
        "What has happened to the grandson lately, his tooth and his scarf?",
        ["samtooth", "samscarf"],
    ),
    ("multi", "Who is Tom and why is Helen doing the driving?", ["daughter", "tomcar"]),
    ("multi", "What does Margaret refuse to eat or take?", ["coriander", "allergy"]),
    (
        "multi",
        "What did Margaret and Joyce's sister plan, and how is Joyce?",
        ["fete", "joycehome"],
    ),
    (
        "multi",
        "Which of Margaret's medicines are for her eyes and her heart?",
        ["glaucoma", "statin"],
    ),
    # temporal: latest of a changing fact, the original, or relative to now
    ("temporal", "What dose of metformin is Margaret on now?", ["metformin3"]),
    ("temporal", "What was Margaret's first metformin dose?", ["metformin1"]),
    ("temporal", "What is Margaret's current blood pressure medicine and dose?", ["ramipril2"]),
    ("temporal", "What blood pressure tablet was Margaret on at the start?", ["amlodipine"]),
    ("temporal", "What did the doctor change last week?", ["ramipril2"]),
    ("temporal", "What did Dr Okafor change about two weeks ago?", ["metformin3"]),
    ("temporal", "What did the doctor change about the metformin in March?", ["metformin2"]),
    ("temporal", "When is the dentist appointment now?", ["dentist2"]),
    ("temporal", "When was the dentist first booked for?", ["dentist1"]),
    ("temporal", "What day is physio now?", ["physio2"]),
    ("temporal", "What day did Margaret first go to physio?", ["physio"]),
    ("temporal", "Is Biscuit still on his ear drops?", ["vet2"]),
    ("temporal", "What is the book club reading at the moment?", ["bookclub2"]),
    ("temporal", "What was the first book the book club read?", ["bookclub1"]),
    ("temporal", "What did Margaret drink before she gave up coffee?", ["coffee"]),
    ("temporal", "Is Joyce still in hospital?", ["joycehome"]),
    ("temporal", "What happened in the garden in mid March?", ["fall"]),
    ("temporal", "What did Margaret say at our last chat about the dog?", ["biscuitwalk"]),
    ("temporal", "What did Margaret tell me most recently about David?", ["davidvisit"]),
    ("temporal", "What did she say about the dentist in our latest conversations?", ["dentist3"]),
    ("temporal", "What was Margaret's most recent eye check news?", ["eyedrops2"]),
    ("temporal", "What happened to the ramipril dose most recently?", ["ramipril2"]),
    ("temporal", "What was the latest news from the vet?", ["vet2"]),
    ("temporal", "What did Margaret plant a couple of weeks ago?", ["garden2"]),
    ("temporal", "Who came for Sunday lunch in mid April?", ["helenvisit"]),
    ("temporal", "What rule did Margaret give me a few days ago?", ["callrule"]),
    ("temporal", "What was the first thing Margaret told me about her dog?", ["dog"]),
    ("temporal", "What were the latest blood test results?", ["bloodtest2"]),
    ("temporal", "When is the next dentist visit after the crown was recommended?", ["dentist3"]),
    ("temporal", "What happened with the electricity back in March?", ["powercut"]),
    (
        "temporal",
        "What did Margaret say about her sugar at the appointment in March?",
        ["metformin2"],
    ),
    ("temporal", "What has changed with Biscuit's weight recently?", ["biscuitfood"]),
    ("temporal", "What medicine did Margaret start for her eyes in March?", ["glaucoma"]),
    ("temporal", "What was the news about Sam's scarf this week?", ["samscarf"]),
    ("temporal", "What did Margaret do for Helen's birthday plans?", ["helenbday"]),
    ("temporal", "What is the latest on Joyce's cat?", ["joycehome"]),
    ("temporal", "What did Tom's car problem mean for driving at the end of March?", ["tomcar"]),
    ("temporal", "Where is Margaret walking Biscuit these days?", ["biscuitwalk"]),
    (
        "temporal",
        "What appointment did Margaret make earlier this month about her hearing?",
        ["hearing"],
    ),
    ("temporal", "What is the current plan for physio after Karen's hours changed?", ["physio2"]),
    ("temporal", "What did Arthur ask most recently?", ["bowls"]),
    ("temporal", "Which metformin does Margaret take since her stomach was upset?", ["metformin3"]),
    ("temporal", "What was Margaret's first blood pressure pill before ramipril?", ["amlodipine"]),
    ("temporal", "How did the dentist date change in early March?", ["dentist2"]),
    (
        "temporal",
        "What did the doctor decide about the pressure reading of 150 over 90?",
        ["ramipril2"],
    ),
]

# Filler: chit-chat and near-miss distractors (the topics of the facts, without the facts).
M_FILLER: list[tuple[str, list[str]]] = [
    (
        "Good morning, Fay.",
        ["Good morning, Margaret! Did you sleep well?", "Morning! It's a fresh one today."],
    ),
    ("I slept {sleep} last night.", ["I'm glad to hear it.", "Shall we take it easy today?"]),
    (
        "What's the weather doing today?",
        ["It looks {weather} this morning.", "The forecast says {weather}."],
    ),
    ("It's {weather} out there.", ["Best to wrap up warm.", "Perfect for a cup of tea indoors."]),
    (
        "Have I taken my pills this morning?",
        ["You said you took them after breakfast.", "I think so, check your pill box to be sure."],
    ),
    (
        "Remind me to take my tablets after lunch.",
        ["I'll remind you after lunch.", "Reminder set for after lunch."],
    ),
    (
        "I need to pick up my prescription sometime.",
        ["Would you like me to remind you tomorrow?", "The pharmacy opens at nine."],
    ),
    (
        "Biscuit is barking at the postman again.",
        ["He takes his job seriously!", "Maybe a treat will distract him."],
    ),
    ("Biscuit wants his breakfast.", ["He always knows the time.", "Better not keep him waiting."]),
    (
        "The dog's been asleep on the sofa all afternoon.",
        ["Beagles love a comfy sofa.", "Sounds like a lazy day for him."],
    ),
    ("Helen rang, just for a chat.", ["That's nice of her.", "How is she keeping?"]),
    (
        "The kids are coming round at some point this week.",
        ["That will be lively!", "You'll enjoy seeing them."],
    ),
    ("I should ring David at the weekend.", ["I can remind you on Sunday.", "He'd like that."]),
    ("What shall I have for {meal}?", ["How about {food}?", "Maybe {food}, it's quick."]),
    ("I had {food} for {meal}.", ["That sounds tasty.", "A good choice."]),
    (
        "Can you tell me a joke?",
        [
            "Why don't eggs tell jokes? They'd crack each other up.",
            "What do you call a sleeping dinosaur? A dino-snore.",
        ],
    ),
    ("What day is it today?", ["It's {weekday}.", "Today is {weekday}."]),
    ("What time is it?", ["It's just gone {clock}.", "It's about {clock}."]),
    (
        "I'm doing the crossword, what's a seven letter word for {clue}?",
        ["How about '{answer}'?", "Maybe '{answer}'."],
    ),
    ("Put the radio on, would you?", ["Here you are.", "Radio on."]),
    ("Turn it down a bit.", ["Is that better?", "Volume down."]),
    ("I'm going to have a little nap.", ["Rest well, Margaret.", "Sleep tight, I'll be here."]),
    (
        "My knee is a bit stiff today.",
        ["Gentle exercise might help.", "Maybe a warm flannel on it?"],
    ),
    ("I feel a bit tired this afternoon.", ["Would a cup of tea help?", "Take it easy."]),
    (
        "The garden needs weeding.",
        ["Perhaps a little at a time.", "The weeds do grow fast in spring."],
    ),
    ("The birds are busy at the feeder.", ["Which birds can you see?", "They must be hungry."]),
    ("I saw a robin on the fence.", ["Robins are so cheerful.", "How lovely."]),
    ("There's nothing on the telly tonight.", ["Shall I find a film?", "Maybe a book instead?"]),
    (
        "I watched the news, it's all doom and gloom.",
        ["Maybe something lighter next.", "It can be a lot."],
    ),
    ("I need to write a shopping list.", ["What do you need?", "I can keep the list for you."]),
    ("Add {item} to the shopping list.", ["Added {item}.", "{item} is on the list."]),
    ("I'm off to the shops.", ["Mind how you go.", "Don't forget your list."]),
    (
        "I'm back from the shops, it was busy.",
        ["Welcome back. Did you get everything?", "Sit down and rest."],
    ),
    ("Thank you, Fay.", ["You're welcome, Margaret.", "Any time."]),
    ("Goodnight, Fay.", ["Goodnight, sleep well.", "Goodnight Margaret."]),
    (
        "I've got the doctor's number somewhere.",
        ["I can read it out if you need it.", "It's on the fridge, you said."],
    ),
    (
        "These tablets are so big to swallow.",
        ["A glass of water helps.", "Maybe ask the pharmacist about that."],
    ),
    (
        "I must book an appointment sometime.",
        ["Which one would you like to book?", "I can remind you to ring."],
    ),
    ("Did I leave the back door open?", ["Maybe check it before bed.", "Better to check."]),
    (
        "My glasses are missing again.",
        ["Have you looked on your head?", "Try next to the armchair."],
    ),
    ("I'm making a cup of tea.", ["Enjoy it.", "Lovely."]),
    (
        "The heating's making that noise again.",
        ["Maybe the radiator needs bleeding.", "Shall I remind you to call someone?"],
    ),
    ("I finished a chapter of my book.", ["Is it good so far?", "Well done."]),
    ("What's a good film for this evening?", ["How about an old Hitchcock?", "Maybe a musical?"]),
    ("I'm going to sit in the garden for a bit.", ["Enjoy the fresh air.", "Take a cardigan."]),
    ("The grandchildren drew me a picture.", ["That's so sweet.", "Put it on the fridge!"]),
    ("Play some music please.", ["Here's something gentle.", "Playing your favourites."]),
    ("I talked to the lady at the post office.", ["Was she well?", "Nice to have a chat."]),
    (
        "I can't remember where I put my keys.",
        ["Try the hook by the door.", "Check your coat pocket."],
    ),
    ("The washing is out on the line.", ["Let's hope the rain holds off.", "Good drying weather."]),
]
M_SLOTS = {
    "sleep": ["well", "badly", "on and off", "like a log", "not too bad"],
    "weather": ["grey and drizzly", "bright and sunny", "windy", "cold", "mild", "cloudy"],
    "meal": ["lunch", "tea", "breakfast", "supper"],
    "food": [
        "beans on toast",
        "a boiled egg",
        "soup",
        "a cheese sandwich",
        "fish pie",
        "porridge",
        "an omelette",
    ],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "clock": ["ten", "half past two", "four", "eleven", "quarter to six"],
    "clue": ["a sea bird", "a kind of cloth", "a big cat", "a painter's stand"],
    "answer": ["penguin", "worsted", "leopard", "trestle"],
    "item": ["milk", "bread", "eggs", "teabags", "bananas", "dog biscuits", "butter", "tissues"],
}


# --- 林阿姨's world (Mandarin) ---------------------------------------------------------------
L_START = datetime(2025, 3, 25)
L_GAPS = [0, 4, 4, 5, 4, 4, 5, 4]
L_FACTS: list[tuple[int, str, str, str]] = [
    (0, "l_home", "我老家在杭州，退休前是小学语文老师。", "杭州是个好地方，您教了一辈子书。"),
    (0, "l_bp1", "医生给我开的降压药是氨氯地平，每天早上一片。", "好的，氨氯地平每天早上一片。"),
    (0, "l_tea", "我最喜欢喝普洱茶，不喜欢英国的红茶加牛奶。", "记住了，您喜欢普洱。"),
    (1, "l_cat", "我从杭州带来一只猫，叫咪咪，是只橘猫。", "咪咪一定很可爱。"),
    (1, "l_dance", "每个星期二晚上我去社区中心跳广场舞。", "星期二晚上跳广场舞，真好。"),
    (1, "l_grandson", "孙子Sam的中文名叫小山，孙女Lily叫小莉。", "小山和小莉，好听的名字。"),
    (2, "l_sugar", "我买了一个血糖仪，每天早饭前测一次血糖。", "早饭前测血糖，好习惯。"),
    (2, "l_taichi", "星期六早上我在公园教几个邻居打太极拳。", "您还教太极拳，真厉害。"),
    (
        3,
        "l_bp2",
        "医生说我脚踝肿了，把氨氯地平换成了缬沙坦，八十毫克。",
        "好的，现在吃缬沙坦八十毫克。",
    ),
    (3, "l_dentist", "我约了牙医，五月六号下午三点，要补一颗牙。", "五月六号下午三点看牙医。"),
    (4, "l_daughter", "我女儿在上海当护士，每个月给我寄一次茶叶。", "女儿在上海当护士，真孝顺。"),
    (4, "l_food", "我不吃辣，也不吃香菜，一吃就难受。", "记住了，不辣也不放香菜。"),
    (5, "l_fall", "昨天下雨，我在门口滑了一跤，手腕扭伤了。", "您要小心，手腕还疼吗？"),
    (5, "l_birthday", "我的生日是农历八月十五，中秋节那天。", "中秋节生日，很特别。"),
    (6, "l_dentist2", "牙医诊所打电话来，把补牙改到了五月十三号。", "补牙改到五月十三号了。"),
    (
        6,
        "l_english",
        "我在图书馆上英语课，老师叫Mary，每周四上午。",
        "每周四上午和Mary老师学英语。",
    ),
    (
        7,
        "l_bp3",
        "这周量血压是一百三十五，医生说缬沙坦不用加量了。",
        "血压一百三十五，缬沙坦不变。",
    ),
    (7, "l_trip", "六月我要回杭州看我妹妹，机票已经订好了。", "六月回杭州，真好。"),
]
L_QUESTIONS: list[tuple[str, str, list[str]]] = [
    ("single", "林阿姨的老家在哪里？", ["l_home"]),
    ("single", "林阿姨退休前做什么工作？", ["l_home"]),
    ("single", "林阿姨喜欢喝什么茶？", ["l_tea"]),
    ("single", "林阿姨的猫叫什么名字？", ["l_cat"]),
    ("single", "林阿姨什么时候去跳广场舞？", ["l_dance"]),
    ("single", "Sam的中文名字是什么？", ["l_grandson"]),
    ("single", "林阿姨每天什么时候测血糖？", ["l_sugar"]),
    ("single", "林阿姨在公园教什么？", ["l_taichi"]),
    ("single", "林阿姨的女儿在哪里工作？", ["l_daughter"]),
    ("single", "林阿姨有什么忌口？", ["l_food"]),
    ("single", "林阿姨的手腕怎么受伤的？", ["l_fall"]),
    ("single", "林阿姨的生日是哪天？", ["l_birthday"]),
    ("single", "林阿姨的英语老师是谁？", ["l_english"]),
    ("single", "林阿姨六月要去哪里？", ["l_trip"]),
    ("single", "咪咪是什么猫？", ["l_cat"]),
    ("multi", "林阿姨的降压药换过几次，分别是什么？", ["l_bp1", "l_bp2"]),
    ("multi", "补牙原来约在哪天，后来改到哪天？", ["l_dentist", "l_dentist2"]),
    ("multi", "林阿姨的女儿寄来的是什么茶，她喜欢喝什么？", ["l_daughter", "l_tea"]),
    ("multi", "林阿姨的两个孙辈叫什么中文名，她每周的活动有哪些？", ["l_grandson", "l_dance"]),
    ("multi", "林阿姨从杭州来，六月回杭州看谁？", ["l_home", "l_trip"]),
    ("multi", "缬沙坦是什么时候开始吃的，现在血压怎么样？", ["l_bp2", "l_bp3"]),
    ("multi", "林阿姨每周二和周四分别做什么？", ["l_dance", "l_english"]),
    ("temporal", "林阿姨现在吃什么降压药？", ["l_bp2"]),
    ("temporal", "林阿姨最开始吃的降压药是什么？", ["l_bp1"]),
    ("temporal", "补牙现在约在哪天？", ["l_dentist2"]),
    ("temporal", "上次量的血压是多少？", ["l_bp3"]),
    ("temporal", "医生最近对缬沙坦说了什么？", ["l_bp3"]),
    ("temporal", "上周林阿姨摔跤是怎么回事？", ["l_fall"]),
    ("temporal", "最近一次聊天林阿姨说了什么旅行计划？", ["l_trip"]),
    ("temporal", "医生为什么换了降压药？", ["l_bp2"]),
]
L_FILLER: list[tuple[str, list[str]]] = [
    ("早上好，Fay。", ["早上好，林阿姨！昨晚睡得好吗？", "早上好！今天天气{weather}。"]),
    ("今天天气怎么样？", ["今天{weather}。", "预报说{weather}。"]),
    ("我今天有点累。", ["那您多休息一下。", "要不要喝杯茶？"]),
    ("我吃过药了吗？", ["您早饭后说吃过了。", "看看药盒就知道了。"]),
    ("提醒我下午吃药。", ["好的，下午提醒您。", "已经设好提醒了。"]),
    ("医生的电话号码在哪里？", ["贴在冰箱上。", "需要我念给您听吗？"]),
    ("孩子们放学回来了。", ["家里热闹了。", "他们今天开心吗？"]),
    ("小猫在沙发上睡觉。", ["它睡得真香。", "猫最会享受了。"]),
    ("午饭吃什么好呢？", ["做个{food}怎么样？", "{food}比较简单。"]),
    ("我做了{food}。", ["听起来很好吃。", "真香。"]),
    (
        "给我讲个笑话吧。",
        ["为什么海水是咸的？因为鱼在里面哭。", "小明说他不怕冷，结果穿了三件毛衣。"],
    ),
    ("现在几点了？", ["现在{clock}。", "大概{clock}。"]),
    ("今天星期几？", ["今天是{weekday}。", "{weekday}。"]),
    ("放点音乐吧。", ["给您放一首邓丽君。", "来点轻音乐。"]),
    ("声音小一点。", ["好的，调小了。", "这样可以吗？"]),
    ("我去睡个午觉。", ["好好休息。", "睡个好觉。"]),
    ("我的眼镜又找不到了。", ["看看是不是在头上。", "在沙发旁边找找。"]),
    ("英国的天气总是下雨。", ["确实，出门记得带伞。", "杭州的春天也多雨。"]),
    ("我给妹妹打了个视频电话。", ["她还好吗？", "聊得开心吗？"]),
    ("超市里东西好贵。", ["最近物价确实涨了。", "下次可以列个清单。"]),
    ("把{item}加到购物单上。", ["已经加上{item}了。", "{item}记下了。"]),
    ("谢谢你，Fay。", ["不客气，林阿姨。", "随时找我。"]),
    ("晚安。", ["晚安，林阿姨。", "晚安，睡个好觉。"]),
    ("我的膝盖有点疼。", ["要不要热敷一下？", "今天少走点路。"]),
    ("电视上没什么好看的。", ["要不要看个电影？", "听听广播也不错。"]),
]
L_SLOTS = {
    "weather": ["阴天", "下小雨", "晴天", "刮风", "有点冷"],
    "food": ["西红柿炒蛋", "饺子", "面条", "粥", "炒青菜"],
    "clock": ["十点", "下午两点半", "四点", "十一点"],
    "weekday": ["星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期天"],
    "item": ["牛奶", "鸡蛋", "面包", "酱油", "大米"],
}


def _fill(
    text: str, slots: dict[str, list[str]], rng: random.Random, chosen: dict[str, str]
) -> str:
    for name, values in slots.items():
        key = "{" + name + "}"
        if key in text:
            chosen.setdefault(name, rng.choice(values))
            text = text.replace(key, chosen[name])
    return text


def _sessions(
    user: str,
    initial: str,
    speaker: str,
    start: datetime,
    gaps: list[int],
    per_session: int,
    facts: list[tuple[int, str, str, str]],
    filler: list[tuple[str, list[str]]],
    slots: dict[str, list[str]],
    rng: random.Random,
) -> tuple[list[Turn], dict[str, str]]:
    turns: list[Turn] = []
    fact_turn: dict[str, str] = {}
    day = start
    for s, gap in enumerate(gaps):
        day = day + timedelta(days=gap)
        when = day.replace(hour=rng.choice(M_HOURS), minute=rng.randrange(60))
        mine = [f for f in facts if f[0] == s]
        n = per_session + rng.randrange(-4, 5)
        slots_at = sorted(rng.sample(range(1, n - 1), len(mine)))  # never first or last
        script: list[tuple[str, str, str | None]] = []
        for i in range(n):
            if i in slots_at:
                _, key, said, reply = mine[slots_at.index(i)]
                script.append((said, reply, key))
            elif i == 0:
                script.append((filler[0][0], rng.choice(filler[0][1]), None))
            else:
                said, replies = rng.choice(filler[1:])
                chosen: dict[str, str] = {}
                said = _fill(said, slots, rng, chosen)
                script.append((said, _fill(rng.choice(replies), slots, rng, chosen), None))
        for i, (said, reply, key) in enumerate(script):
            when += timedelta(seconds=rng.randrange(20, 150))
            tid = f"{initial}{s:02d}t{i:02d}"
            turns.append(
                Turn(
                    tid,
                    user,
                    s,
                    when.strftime("%Y/%m/%d %H:%M:%S"),
                    f"{speaker}：{said}\n{AGENT}：{reply}",
                    key,
                )
            )
            if key:
                fact_turn[key] = tid
    return turns, fact_turn


def build(seed: int = 4) -> DevSet:
    rng = random.Random(seed)
    m_turns, m_keys = _sessions(
        "margaret", "m", "Margaret", M_START, M_GAPS, 44, M_FACTS, M_FILLER, M_SLOTS, rng
    )
    l_turns, l_keys = _sessions(
        "lin", "l", "林阿姨", L_START, L_GAPS, 32, L_FACTS, L_FILLER, L_SLOTS, rng
    )
    questions = []
    for user, lang, keys, qs in (
        ("margaret", "en", m_keys, M_QUESTIONS),
        ("lin", "zh", l_keys, L_QUESTIONS),
    ):
        for i, (cat, query, ev) in enumerate(qs):
            questions.append(
                Question(f"{user}-{i:03d}", user, lang, cat, query, [keys[k] for k in ev])
            )
    turns = m_turns + l_turns
    last = max(datetime.strptime(t.datetime, "%Y/%m/%d %H:%M:%S") for t in turns)
    return DevSet(turns, questions, last + timedelta(hours=1))
