"""A trouble said to be over: "my chest pain has gone", "I'm much better, the dizziness has
passed", "my breathing is much better now", 胸口不疼了, 我好多了. Such words name a symptom
and must raise no emergency and record no symptom, yet the rest of the sentence still
counts ("the dizziness has passed but now I can't breathe").

The sentence is cut into clauses (commas, "but", "and then", 但是 …); a clause that says
its trouble has passed, eased or improved, or is not there ("my chest doesn't hurt"), is
blanked out. "Can't" never counts as better: "I can't breathe any more" stays whole."""

from __future__ import annotations

import re

# Clause edges: punctuation, "but"/"though", "and" (a clause after "and" may be new
# trouble: "I felt better and then my chest started hurting"; not inside "tossing and
# turning", "hot and cold"), Chinese 但是/不过/可是.
_EDGE = re.compile(
    r"([,.;!?，。；！？]+\s*|\s+(?:but|though|although|whereas|then)\s+"
    r"|(?<!tossing)(?<!tossed)(?<!hot)(?<!sick)(?<!stiff)(?<!aches)(?<!sore)\s+and\s+"
    r"(?!(?:turning|turned|cold|tired|sore|pains)\b)|但是|不过|可是|但)"
)
# What a trouble is called, or "it"/"that" standing for it.
_TROUBLE = (
    r"(pain|pains|ache|aches|aching|hurt|hurting|soreness|tightness|pressure|dizziness|dizzy "
    r"(spell|feeling|turn)|spinning|giddiness|wooziness|nausea|sickness|bleeding|swelling|"
    r"headache|migraine|cough|breathlessness|wheeze|wheezing|funny turn|turn|wobbles|"
    r"wobbliness|shakes|shaking|muddle|fog|it|that|the worst)"
)
_ENDED = (
    r"(gone|passed|passed off|passed over|eased|eased off|eased up|settled|settled down|"
    r"cleared|cleared up|stopped|worn off|wore off|gone away|went away|gone off|subsided|"
    r"calmed down|died down|lifted|finished|disappeared|vanished|passing|passing off|"
    r"wearing off|easing|easing off|going off|going away|settling|settling down|clearing)"
)
_PASSED_EN = [
    # "the pain has gone", "the dizziness passed", "it's eased off now"
    rf"\b{_TROUBLE}\b.{{0,30}}\b(has|have|had|is|'s|are|was|were|'ve)?\s*(all |completely |"
    rf"finally |just |now |mostly |largely )?{_ENDED}( (now|again|at last|completely|"
    r"thank goodness|thank god|thankfully))*$",
    # "much better", "I feel better", "my breathing is easier now"; not "I'd better",
    # "better call", "no better"
    r"(?<!'d )(?<!had )(?<!no )(?<!not )(?<!any )\b(better|improved|improving|easier|recovered)\b"
    r"(?! (call|ring|phone|get|go|send|fetch|tell|lie|sit|not|than|at|off|known|half|still)\b)",
    # "I'm fine now", "right as rain", "back to normal", "myself again"
    r"\b(fine|ok|okay|alright|all right|grand|champion|steady) (now|again)\b|"
    r"\b(the worst|it)('s| is) over\b|"
    r"\b(right as rain|back to normal|back to my old self|myself again|back on my feet|over the "
    r"worst|on the mend)\b",
    # "my chest doesn't hurt", "no pain now", "I'm not dizzy any more"
    r"\b(doesn't|does not|don't|do not|isn't|is not|aren't|are not|not|no longer|never|"
    r"wasn't|weren't)( \w+)? (hurt|hurting|hurts|ache|aching|sore|tight|painful|dizzy|giddy|"
    r"spinning|wobbly|bleeding|sick|nauseous|woozy|light-?headed|muddled|confused)\b",
    r"\b(not|no longer|never|isn't|aren't)( \w+)? (short of breath|out of breath|breathless|"
    r"wheezy|wheezing|gasping)\b",
    r"\bno (more )?(pain|pains|aches?|dizziness|tightness|pressure|bleeding|nausea)\b",
    # "I can breathe again now", "I can stand up now"
    r"\bcan (breathe|stand|walk|get up|move|see|think)( \w+){0,4} (now|again|properly now)\b",
]
_PASSED_ZH = [
    r"((?<![不没])(好多了|好些了|好一些了|好点了|好了)|没事了|没事儿了|缓过来了|(?<![晕昏死])过去了|消了|退了|停了|止住了|"
    r"恢复了|舒服多了|舒服些了|轻松多了|顺畅多了|不要紧了)",
    r"(不|没|没有|不再)(怎么|那么|太)?(疼|痛|晕|闷|喘|流血|难受|恶心|发晕|头晕|晃)了",
    r"(能|可以)(喘上气|喘气|呼吸|站起来|站稳|走路)了",
]
_PASSED = [re.compile(p) for p in _PASSED_EN + _PASSED_ZH]
# Words that say the trouble is not over, whatever else the clause says.
_STILL = re.compile(
    r"\b(worse|can't|cannot|can not|couldn't|won't|still|came back|come back|coming back|"
    r"back again)\b|更(厉害|严重|疼|难受)|又(开始|疼|晕)|还是|越来越"
)


def clauses(text: str) -> list[str]:
    """The clauses and the edges between them, in order (joined, the text again)."""
    return _EDGE.split(text)


def said_passed(clause: str) -> bool:
    """The clause says its trouble is over or better."""
    words = clause.strip()
    if not words or _STILL.search(words):
        return False
    return any(p.search(words) for p in _PASSED)


# "It has gone" speaks of the clause before it when that one is told in the past: "my heart
# was racing but it's calmed down". A present one stays ("my chest hurts but it's eased").
_IT = re.compile(r"^\s*(it|that|this|they|those|them|all that)\b|^\s*(这会儿|现在|后来)")
_PAST = re.compile(
    r"\b(was|were|had|'d|felt|got|went|came|did|earlier|this morning|last night|yesterday)\b"
    r"|刚才|早上|昨天|之前|前面|那会儿"
)


def without_passed(text: str) -> str:
    """``text`` (normalized) with every clause saying a trouble has passed blanked out; the
    same string when there is none."""
    parts = clauses(text)
    kept = list(parts)
    for i in range(0, len(parts), 2):  # even: clauses, odd: the edges between them
        if not said_passed(parts[i]):
            continue
        kept[i] = " "
        if i >= 2 and _IT.search(parts[i]) and _PAST.search(parts[i - 2]):
            kept[i - 2] = " "
    out = "".join(kept)
    return text if out == "".join(parts) else out
