"""What an offline box cannot know (the weather, the news) or do (switch the lights), said
honestly."""

from __future__ import annotations

from typing import Any

from fayd.agent.language.phrases import SAY_HELP
from fayd.agent.skills.registry import Context, Outcome, Skill

OFFLINE = {
    "weather": (
        "I can't see the weather from here: I'm not connected to the internet. "
        "The radio or a look out of the window will know better than me.",
        "我没有连接互联网，看不到天气预报。听听收音机或者看看窗外会更准。",
    ),
    "news": (
        "I don't get the news: I'm not connected to the internet. The radio or the television "
        "will have it.",
        "我没有连接互联网，听不到新闻。可以打开收音机或电视看看。",
    ),
    # The world today, which the model would invent (issue 21: the gate before the model).
    "tv": (
        "I can't see what's on television: I'm not connected to the internet. The TV guide"
        " in the paper, or the telly's own guide button, will have it.",
        "我没有连接互联网，查不到电视节目。可以看看报纸上的节目表，或者电视上的节目指南。",
    ),
    "sport": (
        "I don't know the results: I'm not connected to the internet. The radio or the"
        " television will have the scores.",
        "我没有连接互联网，不知道比赛结果。听听收音机或者看看电视就知道了。",
    ),
    "prices": (
        "I don't know today's prices: I'm not connected to the internet. The shop, or"
        " someone in the family, could tell you.",
        "我没有连接互联网，不知道现在的价格。可以问问商店或者家里人。",
    ),
}
OFFLINE["stocks"] = OFFLINE["prices"]
CANNOT = {
    "music": (
        "I'm sorry, I can't play music: I haven't got any to play. The radio might be nice.",
        "对不起，我不会放音乐。可以打开收音机听听。",
    ),
    "call": (
        "I'm sorry, I can't make phone calls. If you need help, " + SAY_HELP["en"],
        "对不起，我不会打电话。如果需要帮助，" + SAY_HELP["zh"],
    ),
}
OTHER = (
    "I can't find that out: I'm not connected to the internet.",
    "我没有连接互联网，查不到这个。",
)


async def offline_info(args: dict[str, Any], ctx: Context) -> Outcome:
    said = OFFLINE.get(str(args.get("topic")), OTHER)
    return Outcome(said[ctx.lang == "zh"])


async def cannot(args: dict[str, Any], ctx: Context) -> Outcome:
    return Outcome(CANNOT.get(str(args.get("what")), CANNOT["call"])[ctx.lang == "zh"])


async def radio_listings(args: dict[str, Any], ctx: Context) -> Outcome:
    if ctx.lang == "zh":
        return Outcome("我没有连接互联网，查不到收音机的节目。报纸上的节目表会有。")
    station = str(args.get("station") or "the radio")
    return Outcome(
        f"I can't see what's on {station}: I'm not connected to the internet. The listings"
        " in the paper will have it, or just switch it on and have a listen."
    )


async def home_control(args: dict[str, Any], ctx: Context) -> Outcome:
    if ctx.lang == "zh":
        return Outcome("对不起，我没有连接家里的灯和电器，没法帮你开关。")
    thing, switch = str(args.get("thing") or "that"), str(args.get("switch") or "")
    if thing.startswith("my "):
        thing = "your " + thing.removeprefix("my ")
    elif thing != "that" and not thing.startswith(("the ", "all the ")):
        thing = f"the {thing}"
    if switch in ("open", "close", "shut", "draw"):
        doing = f"{switch} {thing}"
    else:  # "switch the light on", "turn the heating up"
        doing = f"{'turn' if switch in ('up', 'down') else 'switch'} {thing} {switch}".rstrip()
    return Outcome(
        f"I'm sorry, I can't {doing}: I'm not connected to the lights or appliances in your home."
    )


SKILLS = [
    Skill(
        "offline_info",
        "Say honestly that the weather, news and the like cannot be known offline.",
        {"type": "object", "properties": {"topic": {"type": "string"}}},
        offline_info,
    ),
    Skill(
        "cannot",
        "Say honestly that fayd cannot play music or make phone calls.",
        {"type": "object", "properties": {"what": {"enum": sorted(CANNOT)}}},
        cannot,
    ),
    Skill(
        "radio_listings",
        "Say honestly that what is on the radio cannot be known offline.",
        {"type": "object", "properties": {"station": {"type": "string", "maxLength": 40}}},
        radio_listings,
    ),
    Skill(
        "home_control",
        "Say honestly that lights and appliances are not connected, so cannot be switched.",
        {
            "type": "object",
            "properties": {
                "thing": {"type": "string", "maxLength": 200},
                "switch": {"type": "string", "maxLength": 20},
            },
        },
        home_control,
    ),
]
