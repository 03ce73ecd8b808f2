"""The user portrait (Fay's ``perform_user_portrait_analysis``): who this person is.

Daily, for each user who talked since the last run: the old portrait and the day's
conversation nodes (newest kept first when they do not all fit the model's context) go to
the LLM, which writes the new portrait. It is the stream's "index": a short profile read
before the details. At most 1000 characters, cut between sentences, never inside one.
A failed call or an empty answer keeps the old portrait.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fayd.llm import ChatLlm
from fayd.logwords import words
from fayd.memory import hygiene
from fayd.memory import nodes as db_nodes
from fayd.memory.budget import context_size, counter
from fayd.memory.per_user import for_each_user
from fayd.memory.port import MemoryPort

log = logging.getLogger(__name__)

MAX_CHARS = 1000
ANSWER_TOKENS = 300
#: Fay's six dimensions, the last being the relationship with the companion itself.
SYSTEM = (
    "You are {agent}, a caring companion. You keep a short profile of {user}: who they are, "
    "their personality, interests, daily habits, needs and worries, and their relationship "
    "with you. Write plain sentences, no lists, at most 150 words."
)
PROMPT = (
    "The current profile of {user}:\n{old}\n\nToday's conversations:\n{talk}\n\n"
    "Write the updated profile of {user}. Keep what is still true, add what is new."
)


def conversations(
    memory: MemoryPort, username: str, since: float, now: float
) -> list[dict[str, Any]]:
    """The user's conversation nodes written in (since, now], newest first."""

    def run(db) -> list[dict[str, Any]]:
        ids = db_nodes.select_ids(
            db,
            username,
            200,
            "conversation",
            order="n.created_at DESC, n.id DESC",
            where=f"n.created_at > {float(since)!r} AND n.created_at <= {float(now)!r}",
        )
        found = db_nodes.fetch_nodes(db, ids)
        return [found[i] for i in ids]

    return memory.store.call(run)


def fit_chars(text: str, limit: int = MAX_CHARS) -> str:
    """``text`` whitespace-normalised, cut after the last whole sentence within ``limit``
    (a single longer sentence: at the last word, with an ellipsis)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    sentences = re.split(r"(?<=[.!?。！？])\s*", text)
    out = ""
    for sentence in sentences:
        joined = f"{out} {sentence}".strip() if out else sentence
        if len(joined) > limit:
            break
        out = joined
    if out:
        return out
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def portrait_user(
    memory: MemoryPort,
    llm: ChatLlm | None,
    username: str,
    since: float,
    now: float,
    agent_name: str = "Fay",
) -> dict[str, Any]:
    talk = conversations(memory, username, since, now)
    if not talk:
        return {"user": username, "skipped": "no conversations"}
    old = memory.get_user_profile(username)["portrait"] or "(none yet)"
    count = counter(llm)
    fields = {"agent": agent_name, "user": username}
    system = SYSTEM.format(**fields)
    overhead = count(system) + count(PROMPT.format(old=old, talk="", **fields))
    budget = context_size(llm) - overhead - ANSWER_TOKENS - 64
    lines: list[str] = []
    for node in talk:  # newest first: the oldest are the ones left out
        said = hygiene.users_side(node["content"], agent_name)
        line = f"[{node['datetime']}] {' '.join(said.split())}"
        cost = count(line) + 1
        if cost > budget:
            break
        lines.append(line)
        budget -= cost
    talk_text = "\n".join(reversed(lines))  # oldest first, as it happened
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": PROMPT.format(old=old, talk=talk_text, **fields)},
    ]
    # background: a user's turn goes first (fayd.llm.local.PriorityGate)
    answer = llm.chat(messages, max_tokens=ANSWER_TOKENS, temperature=0.3, background=True)
    portrait = fit_chars(answer)
    if len(portrait) < 10:
        log.warning(
            "portrait for %s: unusable answer (%d chars), the old one is kept",
            username,
            len(answer),
        )
        log.debug("portrait for %s: the unusable answer: %s", username, words(answer))
        return {"user": username, "skipped": "unusable answer"}
    memory.set_user_profile(username, portrait)
    return {"user": username, "chars": len(portrait), "conversations": len(lines)}


def run_portrait(
    memory: MemoryPort,
    llm: ChatLlm | None,
    now: float,
    since: float | None,
    agent_name: str = "Fay",
) -> dict[str, Any]:
    """The job: every user with conversations since the last run (else the last day)."""

    def run_user(user: str, since: float) -> dict[str, Any]:
        return portrait_user(memory, llm, user, since, now, agent_name)

    return for_each_user(memory, "portrait", log, now, since, run_user)
