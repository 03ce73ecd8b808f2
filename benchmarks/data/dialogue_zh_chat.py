# ruff: noqa: E501  (the set's text: one line per utterance)
"""Small talk of the Mandarin pairs, put together from parts like ``dialogue_en_chat``."""

from __future__ import annotations

import random

OPENERS = [
    ("{you}，在吗？最近怎么样？", "还行还行，你呢？"),
    ("{you}！好久没聊了。", "是啊，最近忙疯了。"),
    ("嗨{you}，吃了吗？", "刚吃完，你呢？"),
    ("{you}，忙完了没？", "刚忙完，今天累死了。"),
    ("{you}，正想找你聊聊呢。", "巧了，我也是！"),
]
CLOSERS = [
    ("好啦，我去做饭了。", "去吧，回头聊！"),
    ("不早了，我先睡了。", "晚安，早点休息。"),
    ("我得去接孩子了，改天再聊。", "好的，拜拜！"),
    ("洗衣机响了，我先去晾衣服。", "快去吧，回聊。"),
]
_LEAD = ["对了", "话说", "好了不说我了", "哎", "那个"]
_ASK = ["你最近咋样？", "你那边有啥新鲜事？", "你这周过得怎么样？", "说说你吧。", "你最近忙啥呢？"]
_REACT = ["真的假的？", "太好了！", "哈哈，可以想象。", "不会吧！", "挺好的呀。", "哎，辛苦了。", "那挺不错。",
          "我也是！", "有意思。", "厉害厉害。", "天哪。", "哈哈哈。", "羡慕了。", "也是。"]  # fmt: skip
_TAIL = [
    "",
    "",
    "",
    "下次细说！",
    "替你高兴。",
    "听着就开心。",
    "这周够折腾的。",
    "有进展告诉我。",
    "真没想到。",
    "生活嘛。",
]

_S = {
    "weather": [
        "下了一整天雨",
        "热得要命",
        "冷得不行",
        "雾霾好重",
        "风特别大",
        "闷得慌",
        "突然降温了",
    ],
    "show": [
        "那个综艺",
        "新出的悬疑剧",
        "一个讲海洋的纪录片",
        "一部老电影",
        "春晚重播",
        "一个美食节目",
    ],
    "food": ["泡面", "外卖麻辣烫", "剩饭炒一炒", "一个烤红薯", "速冻饺子", "白粥配咸菜"],
    "traffic": ["高架", "地铁", "公交", "学校门口"],
    "animal": ["一只猫", "一只鹦鹉", "一只鸭子", "一只柴犬", "一只仓鼠"],
    "doing": ["弹钢琴", "偷吃包子", "戴小帽子", "追扫地机器人", "开冰箱门"],
    "gadget": ["手机屏", "充电器", "电水壶", "洗衣机", "耳机", "电饭煲"],
    "habit": ["多喝水", "早点睡", "饭后散步", "少刷手机", "每天拉伸"],
    "shop": ["奶茶店", "面包房", "书店", "面馆", "咖啡馆"],
    "noise": ["装修", "练钢琴", "剁肉", "跳绳", "唱K"],
    "plan": ["睡个懒觉", "收拾阳台", "逛早市", "在家包饺子", "看一天电影"],
    "price": ["猪肉", "鸡蛋", "菜", "水果", "牛奶"],
}
_TOPICS = [
    ("今天{weather}。", ["我们这边也是。", "受不了。", "这天气真是。"]),
    ("昨晚追{show}追到两点。", ["哈哈，太上头了吧。", "我也在看！", "注意身体啊。"]),
    ("晚饭就吃了{food}。", ["也挺好，省事。", "哈哈，朴实。", "我也差不多。"]),
    ("早上{traffic}堵了一个小时。", ["我也是，烦死了。", "天天这样。", "太惨了。"]),
    ("你看到那个{animal}{doing}的视频没？", ["看了！笑死我了。", "没看，发我！", "网友太有才了。"]),
    ("{gadget}又坏了。", ["又坏了？", "东西都是一起坏的。", "换个新的吧。"]),
    ("我最近在努力{habit}。", ["好习惯，我总忘。", "坚持住！", "教教我。"]),
    ("新开的那家{shop}你去过没？", ["还没，好吃吗？", "去过，还不错。", "每次路过都排队。"]),
    ("楼上最近天天{noise}，吵死了。", ["太折磨了。", "去敲门说说吧。", "买个耳塞。"]),
    ("这周末打算{plan}。", ["听着不错。", "安排上！", "神仙日子。"]),
    ("{price}又涨价了，你发现没？", ["别提了。", "我昨天也吓一跳。", "什么都贵。"]),
    ("我妈又给我寄了一大箱吃的。", ["好羡慕。", "妈妈最好了。", "分我点！"]),
]
_NEAR = [
    ("{partner}这周{shift}，我都见不着人。", ["那挺辛苦的。", "熬过这周就好了。"]),
    ("{sis}今天给我发了一堆表情包。", ["哈哈，她真逗。", "姐妹就是这样。"]),
    ("小狗今天早上又把{shoe}咬坏了。", ["小狗都这样。", "太调皮了。"]),
    ("{friend}待会儿可能来我家喝茶。", ["替我问好。", "挺好。"]),
    ("昨天路过{rest}，排了好长的队。", ["那家一直很火。", "不意外。"]),
    ("{col}老借我的{stationery}不还。", ["藏起来哈哈。", "太过分了。"]),
    ("{home}最近一直下雨。", ["到处都在下。", "烦人。"]),
    ("好久没回{town}了。", ["有空回去看看。", "肯定变化很大。"]),
    ("{kid}画了一张我，画了{arms}只手。", ["挺像的，你忙嘛。", "裱起来！"]),
]
_NEAR_SLOTS = {
    "shift": ["上夜班", "出差", "去培训", "加班"],
    "shoe": ["拖鞋", "球鞋", "皮鞋"],
    "stationery": ["订书机", "充电宝", "好用的笔", "杯子"],
    "arms": ["六", "八", "四"],
}


def lead_in(rng: random.Random) -> str:
    return f"{rng.choice(_LEAD)}，{rng.choice(_ASK)}"


# 朋友接话时常多说一句（聊天里一个字的回复并不多）。
_FOLLOW = [
    "你现在心里感觉怎么样？",
    "我记得你之前好像提过一嘴。",
    "改天找个时间好好喝杯咖啡聊聊。",
    "说起来我晚上还得给我妈回个电话。",
    "下次见面你得跟我好好讲讲。",
    "事情总是这么出人意料。",
    "我今天早上还想到你了呢。",
    "这个月你也该有点好消息了。",
    "我这周可没你这么精彩。",
    "需要帮忙随时说一声。",
    "这很像你的风格。",
    "我都能想象你当时的表情。",
    "家里人都怎么说？",
    "是早就计划好的还是临时决定的？",
    "换我也会这么做。",
    "日子过得真快啊。",
]


def react(rng: random.Random) -> str:
    if rng.random() < 0.65:
        return rng.choice(_REACT) + rng.choice(_FOLLOW)
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
    if rng.random() < 0.5:
        return rng.choice(replies) + rng.choice(_FOLLOW)
    return rng.choice(replies) + rng.choice(_TAIL)
