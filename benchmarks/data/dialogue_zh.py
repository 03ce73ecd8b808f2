# ruff: noqa: E501  (the set's text: one line per utterance, Chinese punctuation)
"""Mandarin pairs of ``recall_dialogues``: who they are, and their small talk."""

from __future__ import annotations

import random

from benchmarks.data.dialogue_zh_chat import CLOSERS, OPENERS, lead_in, react, small_talk
from benchmarks.data.recall_dialogues_types import pick

LANG = "zh"
__all__ = ["CLOSERS", "LANG", "OPENERS", "lead_in", "people", "plans", "react", "small_talk"]

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
# (职业, 单位)
JOBS = [("护士", "市一医院"), ("会计", "一家外贸公司"), ("平面设计师", "一家广告公司"), ("电工", "物业公司"),
        ("药剂师", "连锁药房"), ("小学老师", "一所实验小学"), ("程序员", "一家创业公司"),
        ("房产中介", "链家"), ("理疗师", "康复中心")]  # fmt: skip
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
NEIGHBOURS = ["老孙", "王阿姨", "小吕", "刘叔", "陈姐", "老高"]
# (职业, 问法)
NB_JOBS = [("木匠", "做木工活的师傅"), ("退休护士", "以前在医院上班的人"), ("面包师", "靠烤面包谋生的人"),
           ("钢琴老师", "教乐器的老师"), ("汽车修理工", "修车的师傅"), ("园艺师", "打理花木的师傅")]  # fmt: skip
FAVOURS = ["帮我们修好了院门", "周五帮忙看了孩子", "在门口给我们放了一盒月饼", "借给我们一把梯子",
           "我们出门时帮忙浇了花", "帮我们搭电把车打着了"]  # fmt: skip
BANDS = ["五月天", "周杰伦", "苏打绿", "李健", "陈奕迅"]


def people(rng: random.Random, used: set[str]) -> list[dict]:
    out = []
    for _ in range(2):
        p: dict = {"name": pick(rng, NAMES, used)}
        p["partner"], p["town"] = pick(rng, PARTNERS, used), pick(rng, TOWNS, used)
        p["home1"], p["home2"] = pick(rng, CITIES, used), pick(rng, CITIES, used)
        (p["job1"], p["work1"]), (p["job2"], p["work2"]) = rng.sample(JOBS, 2)
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
        p["nb"], p["nbjob"] = pick(rng, NEIGHBOURS, used), pick(rng, NB_JOBS, used)
        p["favour"] = rng.choice(FAVOURS)
        out.append(p)
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
