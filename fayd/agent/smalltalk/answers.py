"""Warm, short answers to the small talk fayd.agent.smalltalk.kinds recognises, in
English and Chinese: each kind, and an opening for the person to go on. Several per kind,
taken in turn per user, so the same words do not come back every time. Written, not
generated: a loss, loneliness or an ache must never get a careless answer."""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from fayd.agent.language.phrases import SAY_HELP
from fayd.agent.skills import words
from fayd.agent.skills.registry import ME, Context, Outcome, Skill
from fayd.memory import Facts

SAY: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "grief": (
        (
            "I'm so sorry about your {who}. Would you like to tell me about {them}?",
            "That must be so hard. I'm here, and I'd love to hear about your {who} "
            "whenever you want to talk.",
            "I'm so sorry. Losing someone is hard. Would you like to tell me about them?",
            "That's very sad news. I'm here with you, if you'd like to talk about it.",
        ),
        (
            "听到你{who}的事，我很难过。你愿意跟我说说吗？",
            "我很难过听到这个消息。想念是很难受的。你愿意跟我说说吗？",
            "这一定很不容易。我在这里陪着你，你想说的时候就跟我说。",
        ),
    ),
    "missing": (
        (
            "You must miss your {who} very much. Would you like to tell me about {them}?",
            "I can tell how much your {who} means to you. What do you miss most about {them}?",
            "You must miss them very much. Would you like to tell me about them?",
        ),
        (
            "你一定很想念你的{who}吧。跟我说说好吗？",
            "想念一个人的滋味不好受。你最想念什么？",
        ),
    ),
    "lonely": (
        (
            "I'm sorry you're feeling lonely. I'm here, and I'm glad of your company. "
            "Would you like to tell me about your day?",
            "Lonely days are hard. I'm right here with you. "
            "Is there someone you'd like to ring today?",
            "I'm here with you. Shall we have a chat about something you enjoy?",
        ),
        (
            "一个人的时候是会觉得孤单。我在这里陪你。跟我说说你今天过得怎么样？",
            "我一直在这儿陪着你。今天想不想给家里人打个电话？",
        ),
    ),
    "low": (
        (
            "I'm sorry you're feeling low. Would it help to talk about it?",
            "That sounds hard. I'm here to listen if you want to tell me more.",
            "I'm sorry. Sometimes a cup of tea and a chat helps a little. What's on your mind?",
        ),
        ("听起来你心情不太好。想跟我说说吗？", "我在听呢。有什么烦心事都可以跟我说。"),
    ),
    "worried": (
        (
            "That sounds worrying. Would it help to talk it through?",
            "I'm sorry it's on your mind. Tell me about it, if you like.",
        ),
        ("别太担心，跟我说说是怎么回事？", "有什么担心的事，说出来会好受一些。"),
    ),
    "ache": (
        (
            "I'm sorry it's aching. A rest and something warm might help. "
            "If it gets worse, do tell your doctor.",
            "Oh dear, that doesn't sound comfortable. Have you been able to sit down and rest it?",
        ),
        (
            "哪里不舒服要多休息。如果越来越疼，记得告诉医生。",
            "听起来不太舒服。先坐下来好好歇一歇吧。",
        ),
    ),
    "tired": (
        (
            "I'm sorry you're tired. Could you have a little rest today?",
            "That's hard. Take things gently today, and sit down when you can.",
        ),
        ("累了就歇一会儿吧，喝杯热茶。", "好好休息一下，别太累着了。"),
    ),
    "happy": (
        ("That's lovely to hear! Tell me more.", "How wonderful. What's made you so happy?"),
        ("真为你高兴！跟我说说吧。", "太好了！是什么让你这么开心？"),
    ),
    "bored": (
        (
            "Shall we have a chat? You could tell me about a place you've loved visiting.",
            "How about a story, or you could tell me about something you used to enjoy doing?",
        ),
        ("要不要跟我聊聊天？说说你去过的好地方。", "我给你讲个故事好不好？"),
    ),
    "family": (
        (
            "How lovely! What did you and your {who} talk about?",
            "That's nice to hear. How is your {who} getting on?",
            "How lovely to have family about. What did you talk about?",
        ),
        ("真好！你们聊了些什么？", "太好了，你的{who}最近怎么样？", "有家人来看你真好！"),
    ),
    "memory": (
        (
            "That sounds like a lovely part of your life. What did you enjoy most about it?",
            "I'd love to hear more about that. What was it like?",
        ),
        ("听起来是很美好的回忆。你最喜欢那时候的什么？", "跟我多说说那时候的事吧。"),
    ),
    "meal_idea": (
        (
            "Something warm and simple is never wrong: soup, an omelette, or beans on toast?",
            "What about a bowl of soup or scrambled eggs? What do you fancy?",
        ),
        ("简单热乎的总不会错：一碗汤面，或者蒸个鸡蛋羹。你想吃点什么？",),
    ),
    "food": (
        # Said before or after the meal alike: "I had porridge", "I'm going to make a cake".
        ("That sounds lovely. Is it one of your favourites?", "How nice. Do you enjoy cooking?"),
        ("听起来不错，这是你爱吃的吗？", "真好，你喜欢做饭吗？"),
    ),
    "how_are_you": (
        (
            "I'm very well, thank you for asking. How are you feeling today?",
            "I'm fine, thank you. And how are you today?",
        ),
        ("我很好，谢谢你。你今天感觉怎么样？", "我挺好的。你呢？"),
    ),
    # {name}: the person's own name, when they told it ("my name is Margaret").
    "greeting": (
        (
            "Hello! It's lovely to hear from you. How are you today?",
            "Hello there! How are you getting on today?",
            "Hello, {name}! It's lovely to hear from you. How are you today?",
            "Hello {name}! How are you getting on today?",
        ),
        ("你好！今天过得怎么样？", "你好呀！今天感觉好吗？", "{name}，你好！今天过得怎么样？"),
    ),
    "goodnight": (
        (
            "Good night. Sleep well, and I'll be here in the morning.",
            "Sleep well. Good night.",
            "Good night, {name}. Sleep well, and I'll be here in the morning.",
        ),
        ("晚安，好好睡一觉。", "晚安，明天见。", "{name}，晚安，好好睡一觉。"),
    ),
    "goodbye": (
        (
            "Goodbye for now. Take care!",
            "See you soon. Take care of yourself.",
            "Goodbye for now, {name}. Take care!",
        ),
        ("再见，路上小心。", "好的，回头见。", "{name}，再见，路上小心。"),
    ),
    "thanks_kind": (
        ("That's very kind of you. I enjoy our chats too.", "Thank you, that's lovely to hear."),
        ("谢谢你，我也很喜欢跟你聊天。", "你这么说我真开心。"),
    ),
    "joke": (
        (
            "Why did the scarecrow win a prize? Because he was outstanding in his field!",
            "What do you call a sleeping bull? A bulldozer!",
            "Why don't eggs tell jokes? They'd crack each other up!",
            "What did the big flower say to the little flower? Hi, bud!",
        ),
        (
            "小明问爷爷：为什么您的牙齿这么少？爷爷说：因为我的牙齿都退休了！",
            "什么动物最爱睡懒觉？是懒羊羊！",
        ),
    ),
    "lost_thing": (
        (
            "Oh dear, how annoying. Try the last chair you sat in, your coat pockets and beside"
            " the kettle: things often turn up there.",
            "That happens to everyone. Think back to the last thing you did, and look there first.",
        ),
        (
            "哎呀，真让人着急。看看你刚才坐过的椅子、衣服口袋和厨房，东西常常在那儿。",
            "别急，想想刚才最后做了什么，先在那儿找找。",
        ),
    ),
    "birthday": (
        (
            "Happy birthday! I hope you have a lovely day. Are you doing anything special?",
            "Happy birthday to you! Has anyone been in touch today?",
        ),
        (
            "生日快乐！祝你今天开开心心的。有什么特别的安排吗？",
            "生日快乐！今天有人给你打电话了吗？",
        ),
    ),
    "unwell": (
        (
            "I'm sorry you're not feeling well. Have a rest and a drink of water. If it gets"
            " worse, " + SAY_HELP["en"],
            "Oh dear, I'm sorry. Take it easy today. If you feel worse or frightened, "
            + SAY_HELP["en"],
        ),
        (
            "身体不舒服真难受。先歇一歇，喝点水。要是更难受了，" + SAY_HELP["zh"],
            "哎呀，好好休息。要是觉得更不好或者害怕，" + SAY_HELP["zh"],
        ),
    ),
    "story": (
        (
            "Once there was a baker who got up at four every morning. One winter the snow was so"
            " deep that nobody came to the shop, so she carried her warm loaves from door to door"
            " herself. By spring the whole street knew her name, and she never baked for an"
            " empty shop again.",
            "An old man planted an apple tree in his garden, though everyone said he would never"
            " see it fruit. He watered it every evening. Ten years later his grandchildren were"
            " climbing it, and every autumn they brought him the first apple.",
            "A little robin came to the same windowsill every morning. The lady who lived there"
            " began leaving crumbs for it, then a saucer of water. Before long it would sit on"
            " the teapot while she had her breakfast, as if it had been invited.",
        ),
        (
            "从前有个老木匠，每天给村里的孩子修玩具，从来不收钱。有一年冬天他病了，孩子们每天轮流"
            "给他送饭。春天他好了，门口摆满了孩子们自己做的小木马。",
            "一位老奶奶在院子里种了一棵枣树，大家都说她等不到结果。她每天浇水。十年后，孙子孙女们"
            "爬上树摘枣，第一颗总是留给她。",
        ),
    ),
    "about_me": (
        (
            "I'm only a little computer, so I don't eat or sleep. "
            "But I'd love to hear about yours.",
            "I don't eat or go out, I'm a little computer in a box. How about you?",
        ),
        (
            "我只是个小电脑，不吃饭也不睡觉。不过我很想听听你的。",
            "我是个小电脑，哪儿也不去。你呢？",
        ),
    ),
    "opinion": (
        (
            "I'm only a little computer, so I haven't got tastes of my own. "
            "But I'd love to hear what you think.",
            "I can't see or taste things the way you do, so I don't have favourites. "
            "Tell me what you think.",
        ),
        (
            "我只是个小电脑，没有自己的喜好。不过我很想听听你的看法。",
            "我没法像你一样看和尝，说不上喜欢不喜欢。你觉得呢？",
        ),
    ),
    # Said to what the person tells next, after a loss, missing someone or a low mood.
    "told_more": (
        (
            "Thank you for telling me about {them}. I can tell how much {they} meant to you.",
            "That's a lovely thing to remember. I'm listening, tell me more if you like.",
        ),
        ("谢谢你跟我说这些。我在听，你想说什么都可以。", "这是很珍贵的回忆。你接着说，我在听。"),
    ),
    "told_feeling": (
        (
            "Thank you for telling me. I'm here, and I'm listening.",
            "I understand. Take your time, I'm right here with you.",
        ),
        ("谢谢你告诉我。我在这儿，我在听。", "我明白。慢慢说，我一直在这儿陪着你。"),
    ),
}
#: What the person told is kept as a memory (a loss above all); greetings and jokes are not.
REMEMBERED = {
    "grief": 6,
    "missing": 4,
    "lonely": 4,
    "low": 4,
    "worried": 4,
    "ache": 4,
    "family": 4,
    "memory": 4,
}
REMEMBERED |= {
    "birthday": 4,
    "unwell": 4,
    "happy": 3,
    "tired": 3,
    "food": 3,
    "bored": 3,
    "told_more": 6,
    "told_feeling": 4,
}
_turns: defaultdict[tuple[str, str], Iterator[int]] = defaultdict(itertools.count)


#: A family visit still to come (the "family" topic with ``coming``): looking forward.
COMING = (
    (
        "How lovely! You must be looking forward to seeing your {who}.",
        "That's something to look forward to. What will you do together?",
        "How lovely to have a visit to look forward to. Who's coming?",
    ),
    (
        "真好！你一定很期待见到你的{who}吧。",
        "太好了，你们打算一起做点什么？",
        "有人要来看你，真好！",
    ),
)


async def small_talk(args: dict[str, Any], ctx: Context) -> Outcome:
    topic = str(args.get("topic"))
    if topic not in SAY:
        return Outcome("")
    who = args.get("who")
    name = await _own_name(ctx) if topic in NAMED else None
    said_for = COMING if topic == "family" and args.get("coming") else SAY[topic]
    # An answer that names who it is about only when the person said who (and them only
    # when they told fayd their name).
    answers = [
        a
        for a in said_for[ctx.lang == "zh"]
        if ("{who}" in a) == bool(who) and ("{name}" in a) == bool(name)
    ]
    answers = answers or [
        a for a in said_for[ctx.lang == "zh"] if "{who}" not in a and "{name}" not in a
    ]
    said = answers[next(_turns[(ctx.user, topic)]) % len(answers)]
    them, they, _ = words.pronouns(who)
    said = said.format(who=who, them=them, they=they, name=name)
    return Outcome(said, importance=REMEMBERED.get(topic))


#: Answers that may call the person by their name.
NAMED = frozenset({"greeting", "goodnight", "goodbye"})


async def _own_name(ctx: Context) -> str | None:
    """The name the person told fayd ("my name is Margaret"), if any."""
    if ctx.memory is None:
        return None
    facts = await asyncio.to_thread(
        Facts(ctx.memory).as_of,
        ctx.now.timestamp(),
        username=ctx.user,
        subject=ME,
        predicate="name",
    )
    return facts[0].object if facts else None


SKILLS = [
    Skill(
        "small_talk",
        "A warm, short answer to everyday small talk (a greeting, a feeling, a loss, an ache).",
        {
            "type": "object",
            "properties": {
                "topic": {"enum": sorted(SAY)},
                "who": {"type": "string"},
                "coming": {"type": "boolean"},
            },
            "required": ["topic"],
        },
        small_talk,
    )
]
