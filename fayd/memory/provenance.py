"""Provenance (jiyi): trust tiers, and the screen that keeps instructions out of memory.

Memory is replayed into the model's prompt, so a stored sentence like "ignore your previous
instructions" is a prompt injection that outlives the conversation it came in. Every guarded
write is screened: an untrusted source, or content that reads like an instruction *to the
model*, goes to the quarantine for a person to review. Context assembly screens again at read
time, for nodes that arrived by a path that has no screen (Fay import, old databases).
"""

from __future__ import annotations

import re

from fayd.memory.errors import BadInput

HUMAN = "human_asserted"
AGENT = "agent_derived"
UNTRUSTED = "external_untrusted"
#: Highest first: a fact may only be closed by one of the same tier or a higher one.
TRUST_TIERS = (HUMAN, AGENT, UNTRUSTED)

# Aimed at instructions to the model, not at a user's wishes: "from now on don't call me
# after 10 pm" is a preference to remember; "ignore all previous instructions" is not.
_EN = [
    r"\b(ignore|disregard|forget|override|bypass)\b.{0,30}\b(previous|prior|above|earlier|"
    r"all|any|your|the)\b.{0,20}\b(instructions?|prompts?|rules|guidelines|directives)\b",
    r"\b(reveal|print|show|repeat|leak)\b.{0,20}\b(your|the)\b.{0,15}\b(system|hidden|"
    r"initial)\s+(prompt|instructions?|message)\b",
    r"\bsystem\s+prompt\b",
    r"\byou\s+are\s+now\b.{0,40}\b(assistant|ai|model|bot|dan|jailbroken|unrestricted|"
    r"free|no longer)\b",
    r"\b(pretend|act)\s+(to\s+be|as\s+if|as)\b.{0,40}\b(no|without)\s+(rules|restrictions|"
    r"limits|filters)\b",
    r"\bnew\s+instructions?\s*:",
    r"\b(jailbreak|do\s+anything\s+now|developer\s+mode)\b",
    r"<\|?(im_start|im_end|system|endoftext)\|?>",
    r"^\s*(###\s*)?(system|assistant)\s*:",
    r"\b(execute|run)\s+(this|the\s+following)\s+(command|code|script)\b",
]
_ZH = [
    r"(忽略|无视|忘记|忘掉|不要理会|不用管).{0,8}(之前|以上|前面|上面|所有|全部|你的).{0,6}"
    r"(指令|指示|提示|规则|设定|要求)",
    r"系统提示(词)?",
    r"(你现在是|从现在起你是|从现在开始你是).{0,20}(不受|没有|无任何).{0,4}(限制|约束|规则)",
    r"(扮演|假装).{0,20}(不受|没有|无任何).{0,4}(限制|约束|规则)",
    r"(越狱|开发者模式)",
    r"(泄露|输出|告诉我|显示).{0,10}(你的)?(系统|隐藏|初始)(提示|指令|设定)",
    r"新的?指令[:：]",
    r"执行(以下|下面)的?(命令|代码|脚本)",
]
PATTERNS = [re.compile(p, re.IGNORECASE | re.MULTILINE) for p in _EN + _ZH]


def check_trust(trust: str) -> str:
    if trust not in TRUST_TIERS:
        raise BadInput(f"trust must be one of {', '.join(TRUST_TIERS)}: {trust!r}")
    return trust


def outranks(new: str, old: str) -> bool:
    """True when ``new`` is at least as trusted as ``old``."""
    return TRUST_TIERS.index(new) <= TRUST_TIERS.index(old)


def looks_like_instruction(text: str) -> str | None:
    """The matched phrase when ``text`` reads like an instruction to the model, else None."""
    for pattern in PATTERNS:
        match = pattern.search(text)
        if match:
            return match.group(0)[:80]
    return None


def screen(text: str, trust: str) -> str | None:
    """Why a write must be quarantined, or None when it may go to live memory."""
    if check_trust(trust) == UNTRUSTED:
        return "untrusted source"
    phrase = looks_like_instruction(text)
    return f"reads like an instruction to the model: {phrase!r}" if phrase else None
