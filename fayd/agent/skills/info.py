"""What an offline box cannot know (the weather, the news), said honestly."""

from __future__ import annotations

from typing import Any

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
}
OTHER = (
    "I can't find that out: I'm not connected to the internet.",
    "我没有连接互联网，查不到这个。",
)


async def offline_info(args: dict[str, Any], ctx: Context) -> Outcome:
    said = OFFLINE.get(str(args.get("topic")), OTHER)
    return Outcome(said[ctx.lang == "zh"])


SKILLS = [
    Skill(
        "offline_info",
        "Say honestly that the weather, news and the like cannot be known offline.",
        {"type": "object", "properties": {"topic": {"type": "string"}}},
        offline_info,
    ),
]
