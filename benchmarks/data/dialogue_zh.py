# ruff: noqa: E501  (the set's text: one line per utterance, Chinese punctuation)
"""Mandarin pairs of ``recall_dialogues``: who they are, and their small talk."""

from __future__ import annotations

import random

from benchmarks.data.recall_dialogues_types import pick

LANG = "zh"

NAMES = [
    "王丽",
    "陈静",
    "刘芳",
    "张敏",
    "李娜",
    "赵雪",
    "周强",
    "吴磊",
    "孙浩",
    "黄伟",
    "杨洋",
    "郑凯",
]
PARTNERS = ["老刘", "阿明", "小赵", "建国", "晓燕", "志刚", "美玲", "国栋"]
TOWNS = ["绍兴", "桂林", "大理", "丽江", "景德镇", "泉州", "乐山", "婺源"]
CITIES = [
    "成都",
    "杭州",
    "南京",
    "武汉",
    "西安",
    "青岛",
    "厦门",
    "长沙",
    "苏州",
    "昆明",
    "重庆",
    "天津",
]
JOBS = ["护士", "会计", "平面设计师", "电工", "药剂师", "小学老师", "程序员", "房产中介", "理疗师"]
WORKS = [
    "市一医院",
    "一家外贸公司",
    "区政府",
    "一家创业公司",
    "连锁药房",
    "一所实验小学",
    "物流公司",
    "设计院",
]
SIB_JOBS = ["助产士", "牙医", "飞行员", "兽医", "警察", "厨师", "律师", "记者"]
SIBS = ["小梅", "小兰", "小芸", "小娟", "小玲", "小琴", "小霞", "小燕"]
# (说法, 问法)
CLASSES = [("陶艺课", "捏泥巴做陶器的班"), ("拉丁舞班", "跳舞的课程"), ("合唱团", "唱歌的团体"),
           ("木工坊", "做木头家具的课"), ("摄影夜校", "学拍照的班"), ("攀岩馆", "爬墙运动的场馆")]  # fmt: skip
FRIENDS = ["阿珍", "老周", "小何", "晓琳", "大伟", "阿杰", "思思", "小方"]
PLACES = ["千岛湖", "乌镇", "黄山", "周庄", "莫干山", "鼓浪屿", "普陀山", "西塘"]
RESTAURANTS = [("老王川菜馆", "川菜"), ("粤香楼", "粤菜"), ("外婆家", "杭帮菜"), ("海底捞", "火锅"),
               ("鼎泰丰", "台湾小吃"), ("新疆饭庄", "新疆菜"), ("一风堂", "日式拉面")]  # fmt: skip
COLLEAGUES = ["小林", "阿强", "婷婷", "老马", "小宋", "阿飞"]
# (家乡, 问法, 菜)
HOMETOWNS = [("东北", "东北籍", "锅包肉"), ("广东", "广东籍", "白切鸡"), ("湖南", "湖南籍", "剁椒鱼头"),
             ("山西", "山西籍", "刀削面"), ("云南", "云南籍", "过桥米线"), ("上海", "上海籍", "红烧肉")]  # fmt: skip
HOLIDAYS = ["三亚", "西双版纳", "日本", "新疆", "海南", "泰国", "青海湖", "北海道"]
PETS = ["旺财", "豆豆", "球球", "花花", "可乐", "布丁", "团子", "馒头", "元宝", "芝麻"]
BREEDS = ["柯基", "柴犬", "泰迪", "金毛", "边牧", "比熊"]
# (旧运动, 简称, 新运动, 答案)
SPORTS = [("跑步群，每周二周四跑", "跑步", "每周三次游泳", "游泳"), ("羽毛球队，周三晚上打", "羽毛球", "练瑜伽", "瑜伽"),
          ("广场舞队", "广场舞", "骑自行车", "骑车"), ("健身房的动感单车课", "单车课", "打太极拳", "太极")]  # fmt: skip
INSTRUMENTS = ["古筝", "二胡", "尤克里里", "钢琴", "架子鼓", "萨克斯"]
CARS = ["一辆白色的比亚迪", "一辆二手大众", "一辆小五菱", "一辆特斯拉", "一辆丰田卡罗拉"]
FILMS = ["《大话西游》", "《你好，李焕英》", "《千与千寻》", "《甄嬛传》", "《武林外传》"]
ALLERGIES = [("芒果", "水果"), ("花生", "坚果"), ("虾", "海鲜"), ("海鲜", "海产"), ("鸡蛋", "蛋类")]
LANGS = ["日语", "英语", "韩语", "法语", "西班牙语", "德语"]
KIDS = ["乐乐", "果果", "天天", "朵朵", "豆包", "安安"]
BANDS = ["五月天", "周杰伦", "苏打绿", "李健", "陈奕迅"]

OPENERS = [
    ("{you}，在吗？最近怎么样？", "还行还行，你呢？"),
    ("{you}！好久没聊了。", "是啊，最近忙疯了。"),
    ("嗨{you}，吃了吗？", "刚吃完，你呢？"),
    ("{you}，忙完了没？", "刚忙完，今天累死了。"),
]
CLOSERS = [
    ("好啦，我去做饭了。", "去吧，回头聊！"),
    ("不早了，我先睡了。", "晚安，早点休息。"),
    ("我得去接孩子了，改天再聊。", "好的，拜拜！"),
]
LEADINS = ["你呢？最近有啥新鲜事？", "说说你吧，最近咋样？", "你那边怎么样？", "还有啥别的事吗？"]
REACTIONS = ["真的假的？", "太好了！", "哈哈，可以想象。", "不会吧！", "挺好的呀。", "哎，辛苦了。",
             "那挺不错。", "我也是！", "有意思。", "下次细说！", "厉害厉害。"]  # fmt: skip
WEATHER = ["下了一整天雨", "热得要命", "冷得不行", "雾霾好重", "风特别大"]
SHOWS = ["那个综艺", "新出的悬疑剧", "一个讲海洋的纪录片", "一部老电影"]
GENERIC = [
    ("今天{w}。", "我们这边也是。"),
    ("昨晚追{s}到两点。", "哈哈，太上头了吧。"),
    ("早上堵车堵了一个小时。", "我也是，烦死了。"),
    ("最近老是睡不好。", "早点睡吧，别刷手机了。"),
    ("你看到那个小猫弹钢琴的视频没？", "看了！笑死我了。"),
    ("手机屏又摔碎了。", "又碎了？"),
    ("我妈又给我寄了一大箱吃的。", "好羡慕。"),
    ("楼下又在装修，吵死了。", "太折磨了。"),
    ("这周工作特别多。", "都是赶一块儿来的。"),
    ("我想去剪个短发。", "剪吧，肯定好看。"),
    ("新开的那家奶茶店你去过没？", "还没，好喝吗？"),
    ("晚饭就吃了碗泡面。", "也挺好，省事。"),
]
NEAR = [
    ("{partner}这周上夜班，我都见不着人。", "那挺辛苦的。"),
    ("{sis0}今天给我发了一堆表情包。", "哈哈，她真逗。"),
    ("小狗今天早上又把拖鞋咬坏了。", "小狗都这样。"),
    ("{friend}待会儿来我家喝茶。", "替我问好。"),
    ("昨天路过{rest}，排了好长的队。", "那家一直很火。"),
    ("{col}老拿我的订书机。", "藏起来哈哈。"),
    ("{home1}最近一直下雨。", "到处都在下。"),
    ("好久没回{town}了。", "有空回去看看。"),
    ("{kid}画了一张我，画了六只手。", "挺像的，你忙嘛。"),
]


def people(rng: random.Random, used: set[str]) -> list[dict]:
    out = []
    for _ in range(2):
        p: dict = {"name": pick(rng, NAMES, used)}
        p["partner"], p["town"] = pick(rng, PARTNERS, used), pick(rng, TOWNS, used)
        p["home1"], p["home2"] = pick(rng, CITIES, used), pick(rng, CITIES, used)
        p["job1"], p["job2"] = rng.sample(JOBS, 2)
        p["work1"], p["work2"] = rng.sample(WORKS, 2)
        p["sis"] = [pick(rng, SIBS, used), pick(rng, SIBS, used)]
        p["sisjob"], p["sib_city"] = rng.sample(SIB_JOBS, 2), pick(rng, CITIES, used)
        p["class"], p["friend"] = pick(rng, CLASSES, used), pick(rng, FRIENDS, used)
        p["place"], p["rest"] = pick(rng, PLACES, used), pick(rng, RESTAURANTS, used)
        p["col"], p["country"] = pick(rng, COLLEAGUES, used), pick(rng, HOMETOWNS, used)
        p["hol"] = [pick(rng, HOLIDAYS, used), pick(rng, HOLIDAYS, used)]
        p["pets"], p["breed"] = [pick(rng, PETS, used), pick(rng, PETS, used)], rng.choice(BREEDS)
        p["sport"], p["instrument"] = pick(rng, SPORTS, used), pick(rng, INSTRUMENTS, used)
        p["car"], p["film"] = pick(rng, CARS, used), pick(rng, FILMS, used)
        p["allergy"], p["lang"] = pick(rng, ALLERGIES, used), pick(rng, LANGS, used)
        p["kid"], p["band"] = pick(rng, KIDS, used), rng.choice(BANDS)
        out.append(p)
    return out


def chatter(people: list[dict], rng: random.Random) -> list[tuple[int | None, str, str]]:
    out: list[tuple[int | None, str, str]] = []
    for a, b in GENERIC:
        for _ in range(2):
            out.append((None, a.format(w=rng.choice(WEATHER), s=rng.choice(SHOWS)), b))
    for who, p in enumerate(people):
        slots = {
            "partner": p["partner"], "sis0": p["sis"][0], "friend": p["friend"], "rest": p["rest"][0],
            "col": p["col"], "home1": p["home1"], "town": p["town"], "kid": p["kid"],
        }  # fmt: skip
        out += [(who, a.format(**slots), b) for a, b in NEAR]
    return out


def plans(me: dict, you: dict, rng: random.Random) -> list:
    from benchmarks.data.dialogue_zh_plans import life_events, multihop, singles, traits, updates

    return (
        singles(me, rng)
        + updates(me, rng)
        + life_events(me, rng)
        + multihop(me, rng)
        + traits(me, rng, you)
    )
