"""What a Mandarin speaker tells a friend over the months, and the questions on it."""

from __future__ import annotations

import random

from benchmarks.data.recall_dialogues_types import Line, Plan, one


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
                f"{p['partner']}让我跟你问声好，我们在一起都九年了。",
                f"刚才{p['partner']}把车开走了，我只好等公交，结婚四年了还抢车开。",
            ),
            one(r, f"{n}的另一半叫什么？", f"{n}的爱人是谁？"),
            p["partner"],
        ),
        (
            "town",
            one(
                r,
                f"我是在{p['town']}长大的，小地方，谁家有点事全知道。",
                f"我妈还住在{p['town']}老家，那边节奏特别慢。",
            ),
            one(r, f"{n}小时候是在哪儿度过的？", f"{n}的故乡是哪座城？"),
            p["town"],
        ),
        (
            "allergy",
            one(
                r,
                f"我一吃{allergen}嗓子就肿，特别吓人。",
                f"那个菜我不能碰，我对{allergen}过敏，上次进了急诊。",
            ),
            one(r, f"{n}因为身体原因不能吃哪样东西？", f"哪种食物会让{n}出问题？"),
            allergen,
        ),
        (
            "instrument",
            one(
                r,
                f"我报了{p['instrument']}课，邻居估计恨死我了。",
                f"我买了一把二手{p['instrument']}，跟着视频自学。",
            ),
            one(r, f"{n}最近在学哪种乐器？", f"{n}新培养的音乐爱好是什么？"),
            p["instrument"],
        ),
        (
            "car",
            one(
                r,
                f"家里那辆老车终于换了，现在开{p['car']}。",
                f"我开着{p['car']}过来的，停车太难了。",
            ),
            one(r, f"{n}平时开什么车？", f"{n}家现在的座驾是哪款？", f"{n}开的是什么车？"),
            p["car"],
        ),
        (
            "film",
            one(
                r,
                f"心情不好我就看{p['film']}，都刷了三十遍了。",
                f"{p['film']}是我的下饭神剧，台词都背得出来。",
            ),
            one(r, f"{n}不开心时会反复看哪部作品？", f"哪部片子最能让{n}高兴起来？"),
            p["film"],
        ),
        (
            "language",
            one(
                r,
                f"我每天早上在App上学{p['lang']}，连续打卡两百天了。",
                f"我报了个{p['lang']}夜校，每周四晚上上课。",
            ),
            one(r, f"{n}在自学哪门外语？", f"{n}想掌握哪种外国话？"),
            p["lang"],
        ),
        (
            "kid",
            one(
                r,
                f"{p['kid']}这周开始上幼儿园了，哭了十分钟就把我忘了。",
                f"我们家{p['kid']}在长牙，全家都睡不好。",
            ),
            one(r, f"{n}家的小朋友叫什么名字？", f"{n}的孩子小名是什么？"),
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
                        f"还在{p['work1']}当{p['job1']}呢，工资还是那么点。",
                        f"工作还行吧，在{p['work1']}做{p['job1']}，有苦有甜。",
                    ),
                    _at(r, 0.02, 0.3),
                ),
                Line(
                    one(
                        r,
                        f"告诉你个大消息，我辞职了！下个月去{p['work2']}当{p['job2']}。",
                        f"那个offer我接了，月初开始在{p['work2']}做{p['job2']}。",
                    ),
                    _at(r, 0.45, 0.8),
                ),
            ],
            [
                (
                    "update",
                    one(r, f"{n}现在从事什么职业？", f"{n}目前的工作是什么？"),
                    [1],
                    f"{p['job2']}（{p['work2']}）",
                ),
                (
                    "single",
                    one(r, f"{n}换行之前在哪里上班？", f"{n}以前干的是哪一行？"),
                    [0],
                    f"{p['job1']}（{p['work1']}）",
                ),
            ],
        ),
        Plan(
            "u.home",
            [
                Line(
                    one(
                        r,
                        f"我们在{p['home1']}租的房子冷死了，房东一直不修暖气。",
                        f"{p['home1']}的房租又涨了，可能得另找地方。",
                    ),
                    _at(r, 0.02, 0.3),
                ),
                Line(
                    one(
                        r,
                        f"钥匙拿到了！我们正式搬到{p['home2']}了，到处都是箱子。",
                        f"搬家总算搞定了，现在住{p['home2']}，安静多了。",
                    ),
                    _at(r, 0.4, 0.75),
                ),
            ],
            [
                (
                    "update",
                    one(r, f"{n}眼下住在哪座城市？", f"{n}如今的家在哪儿？"),
                    [1],
                    p["home2"],
                ),
                (
                    "single",
                    one(r, f"{n}之前租房是在哪个城市？", f"{n}原来的住处在哪？"),
                    [0],
                    p["home1"],
                ),
            ],
        ),
        Plan(
            "u.pet",
            [
                Line(
                    f"我们{{when}}抱回来一只{p['breed']}小狗，叫它{pet1}。",
                    _at(r, 0.05, 0.35),
                    offset=-r.randint(1, 9),
                ),
                Line(
                    one(
                        r,
                        f"我家狗已经不叫{pet1}了，孩子们投票，现在叫{pet2}。",
                        f"跟你说个好笑的，小狗改名了，现在只认{pet2}，不认{pet1}了。",
                    ),
                    _at(r, 0.5, 0.9),
                ),
            ],
            [
                (
                    "update",
                    one(r, f"{n}家的狗现在叫啥？", f"{n}养的汪星人如今的名字是什么？"),
                    [1],
                    pet2,
                ),
                (
                    "temporal",
                    one(r, f"{n}是哪天领养了幼犬？", f"{n}家什么日子多了一只狗宝宝？"),
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
                        f"暑假我们订好了去{hol1}玩两周，好期待。",
                        f"夏天的行程定了，去{hol1}，机票都买了。",
                    ),
                    _at(r, 0.05, 0.4),
                ),
                Line(
                    one(
                        r,
                        f"{hol1}去不成了，航班取消了，改去{hol2}。",
                        f"计划变了，{hol1}退了，订了{hol2}。",
                    ),
                    _at(r, 0.5, 0.85),
                ),
            ],
            [
                (
                    "update",
                    one(r, f"{n}这个夏天打算去哪儿度假？", f"{n}接下来的旅行目的地是哪里？"),
                    [1],
                    hol2,
                ),
                (
                    "update",
                    one(r, f"{n}今年夏天还去{hol1}吗？", f"{n}的{hol1}之行还作数吗？"),
                    [1],
                    f"不去了，改去{hol2}",
                ),
            ],
        ),
        Plan(
            "u.sport",
            [
                Line(f"我加入了{old_sport}，不然要憋疯了。", _at(r, 0.02, 0.35)),
                Line(f"{old_short}我不搞了，膝盖受不了，现在改成{new_sport}。", _at(r, 0.45, 0.9)),
            ],
            [
                (
                    "update",
                    one(r, f"{n}如今靠什么锻炼身体？", f"{n}目前坚持的运动是哪项？"),
                    [1],
                    new_answer,
                )
            ],
        ),
    ]


EVENTS = [
    ("我{when}跑了{city}半程马拉松，两小时六分！", "参加长跑比赛"),
    ("{when}去参加了表妹的婚礼，致辞讲了一个小时。", "去亲戚的喜宴"),
    ("{when}去看了{band}的演唱会，嗓子都喊哑了。", "现场听{band}唱歌"),
    ("我{when}终于把智齿拔了，脸还肿着。", "去做口腔手术"),
    ("我们{when}把厨房刷成了黄色，弄了一整天。", "重新装饰家里的房间"),
    ("我外甥{when}出生了！七斤二两。", "当上舅舅或姨妈"),
    ("我{when}考过驾照了，一次过！", "拿到开车的资格"),
    ("我们{when}去农场摘草莓，摘了八斤回来。", "去乡下采水果"),
    ("我{when}做了年度考核，涨工资了！", "获得加薪"),
]
FUTURE = [
    ("我{when}去配眼镜，视力又下降了。", "验光"),
    ("我们{when}去银行谈房贷，祝我好运。", "跟人商量买房借款的事"),
    ("我哥{when}订婚，我得回去一趟。", "出席兄长的定亲仪式"),
]


def life_events(p: dict, rng: random.Random) -> list[Plan]:
    n, r = p["name"], rng
    out = []
    for i, (said, asked) in enumerate(r.sample(EVENTS, 4) + r.sample(FUTURE, 1)):
        future = i == 4
        text = said.replace("{city}", p["home2"]).replace("{band}", p["band"])
        asked = asked.replace("{band}", p["band"])
        offset = r.randint(1, 9) if future else -r.randint(1, 12)
        q = one(r, f"{n}是哪天{asked}的？", f"{n}{asked}是在几月几号？", f"{n}什么时候{asked}的？")
        if future:
            q = one(r, f"{n}约在哪天{asked}？", f"{n}计划几号{asked}？")
        questions = [("temporal", q, [0], "{d0}")]
        if i == 0:  # the other way round: the date given, the event asked
            ask = one(r, f"{n}{{h0}}那天做了什么？", f"{{h0}}那天{n}经历了什么事？")
            questions.append(("temporal", ask, [0], asked))
        out.append(Plan(f"t.{i}", [Line(text, _at(r), offset=offset)], questions))
    activity = one(r, "去湖边露营", "去泡温泉", "坐船出海", "去茶园采茶")
    out.append(
        Plan(
            "t.bday",
            [
                Line(
                    one(
                        r, "{when}是我生日，三十五了，别提了。", "猜猜{when}谁过生日？我！四十了！"
                    ),
                    _at(r, 0.1, 0.6),
                    offset=r.randint(2, 5),
                ),
                Line(f"{{when}}我们{activity}了，好久没这么开心。", 0, after=0),
            ],
            [
                (
                    "temporal",
                    one(
                        r,
                        f"{n}过完寿辰之后的那个周末做了什么？",
                        f"{n}长一岁后的第一个周末是怎么过的？",
                    ),
                    [0, 1],
                    f"{activity}（{{d1}}）",
                ),
                ("temporal", one(r, f"{n}的出生日是几月几号？", f"{n}哪天庆祝诞辰？"), [0], "{d0}"),
            ],
        )
    )
    return out


def multihop(p: dict, rng: random.Random) -> list[Plan]:
    n, r = p["name"], rng
    moved = r.randint(0, 1)
    said_class, asked_class = p["class"]
    rest, cuisine = p["rest"]
    home, native, dish = p["country"]
    s, j = p["sis"], p["sisjob"]
    return [
        Plan(
            "m.sister",
            [
                Line(
                    one(
                        r,
                        f"我姐{s[0]}刚考下{j[0]}的证，全家都很骄傲。",
                        f"{s[0]}是我姐，当{j[0]}的，天天加班。",
                    ),
                    _at(r, 0.02, 0.3),
                ),
                Line(
                    one(r, f"我妹{s[1]}现在当{j[1]}了，你敢信？", f"最小的{s[1]}在做{j[1]}。"),
                    _at(r, 0.02, 0.3),
                ),
                Line(
                    one(
                        r,
                        f"{s[moved]}收拾东西去{p['sib_city']}了，在火车站附近租了房。",
                        f"周末帮{s[moved]}搬去{p['sib_city']}，腰都快断了。",
                    ),
                    _at(r, 0.55, 0.9),
                ),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"{n}那位迁居到{p['sib_city']}的姐妹是做什么工作的？",
                        f"{n}在{p['sib_city']}的那个姊妹干哪行？",
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
                    f"我在{said_class}认识了一个叫{p['friend']}的，我俩都学得很烂。",
                    _at(r, 0.05, 0.4),
                ),
                Line(
                    one(
                        r,
                        f"{p['friend']}和我周日开车去了{p['place']}，玩得很开心。",
                        f"我跟{p['friend']}去{p['place']}玩了一天，太美了。",
                    ),
                    _at(r, 0.5, 0.9),
                ),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"{n}和{asked_class}上结识的朋友一起去了哪里？",
                        f"{n}跟在{asked_class}交到的伙伴出游去了什么地方？",
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
                        f"想吃{cuisine}的话，{rest}最好吃，我们老去。",
                        f"{rest}的{cuisine}是全城最正宗的。",
                    ),
                    _at(r, 0.05, 0.4),
                ),
                Line(
                    one(
                        r,
                        f"{p['partner']}和我在{rest}庆祝了十周年，店里还送了个小蛋糕。",
                        f"结婚纪念日{p['partner']}在{rest}订了位子。",
                    ),
                    _at(r, 0.5, 0.9),
                ),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"{n}和{p['partner']}纪念日那顿吃的是哪类菜系？",
                        f"{n}夫妻俩庆祝那天吃了什么风味？",
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
                        f"隔壁新搬来一户，{p['nb']}是{p['nbjob'][0]}，人挺好。",
                        f"今天才知道隔壁的{p['nb']}是做{p['nbjob'][0]}的。",
                    ),
                    _at(r, 0.05, 0.4),
                ),
                Line(f"{p['nb']}{p['favour']}，太热心了。", _at(r, 0.5, 0.9)),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"住在{n}旁边的那位{p['nbjob'][1]}帮了什么忙？",
                        f"{n}的邻居，那个{p['nbjob'][1]}，为{n}做了什么？",
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
                        f"我们组来了个新同事叫{p['col']}，{home}人，特别逗。",
                        f"{p['col']}是{home}来的，刚进我们部门，每周五带零食。",
                    ),
                    _at(r, 0.05, 0.4),
                ),
                Line(f"{p['col']}教我做了正宗的{dish}，忙了一下午。", _at(r, 0.5, 0.9)),
            ],
            [
                (
                    "multihop",
                    one(
                        r,
                        f"{n}跟那位{native}的同事学会了哪道菜？",
                        f"那个{native}同事教了{n}什么菜？",
                    ),
                    [0, 1],
                    dish,
                )
            ],
        ),
    ]


TRAITS = [
    (
        "outdoors",
        "周日爬了一整天山，走了十八公里，腿都废了。",
        "说真的，我在帐篷里睡得最香。",
        "{n}会喜欢去阿尔卑斯徒步旅行吗？",
        "会",
    ),
    (
        "animals",
        "我现在每周六上午去流浪猫救助站帮忙，铲屎也开心。",
        "路上看到狗我都忍不住要摸一摸。",
        "{n}愿意去野生动物保护区做义工吗？",
        "愿意",
    ),
    (
        "introvert",
        "人多的聚会我受不了，宁愿请两三个朋友来家吃饭。",
        "公司年会我待了半小时就溜了，太吵。",
        "给{n}办一个全公司参加的惊喜派对合适吗？",
        "不合适",
    ),
    (
        "flying",
        "一想到坐飞机我就手抖。",
        "我们坐二十六个小时火车去云南，打死我也不坐飞机。",
        "{n}会接受搭航班飞去澳大利亚吗？",
        "不会",
    ),
    (
        "vegetarian",
        "我已经六年没吃肉了。",
        "我炖了一大锅鹰嘴豆菠菜，够吃一周。",
        "烧烤时{n}会点牛排吗？",
        "不会",
    ),
    (
        "music",
        "这个月我看了三场现场，耳朵还在嗡嗡响。",
        "年终奖全花在黑胶唱机和一堆老唱片上了。",
        "送{n}音乐节门票，{n}会高兴吗？",
        "会",
    ),
    (
        "heat",
        "我最怕冷，九月就开暖气了。",
        "给我三十度加沙滩就行。",
        "一月去哈尔滨滑雪，{n}会喜欢吗？",
        "不会",
    ),
    (
        "cooking",
        "周六一整天我都在家手擀面条。",
        "我家菜谱书大概有四十本。",
        "送{n}一张大厨烹饪课的券合适吗？",
        "合适",
    ),
    (
        "luddite",
        "我到现在还用老年机，不用智能手机。",
        "水电费我都去营业厅交，不信那些App。",
        "{n}会喜欢智能手表当礼物吗？",
        "不会",
    ),
    (
        "garden",
        "阳台上的西红柿终于红了。",
        "整个周末都在拔草、种花球。",
        "{n}会喜欢逛花卉博览会吗？",
        "会",
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
