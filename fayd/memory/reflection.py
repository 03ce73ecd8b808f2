"""Daily reflection (Fay's ``perform_daily_reflection``): insights from the day's memories.

For each user with new memories since the last run: one anchor topic (rotating daily over
seven, as in Fay), the most related nodes retrieved for it, the LLM asked for a few
first-person insights as ``{"reflection": [...]}`` under a JSON-schema grammar, each stored as
a ``reflection`` node with ``pointer_id`` = the source ids and Fay's tag inheritance.

The sources are packed into the model's context with its own tokenizer (whole nodes, best
first): the small default model has 2048 tokens, not the 120 nodes Fay sends to a cloud model.
A failed model call or an unusable answer writes nothing and is reported, never raised into
the scheduler as a crash; a written insight is screened like any other write.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime as dt
from typing import Any

from fayd.llm import ChatLlm
from fayd.logwords import words
from fayd.memory import hygiene
from fayd.memory.budget import context_size, counter
from fayd.memory.nodes import FAY_TIME, NewNode
from fayd.memory.per_user import for_each_user
from fayd.memory.port import MemoryPort
from fayd.memory.provenance import AGENT, looks_like_instruction
from fayd.memory.tags import reflection_tags

log = logging.getLogger(__name__)

#: Seven anchors, one per day of the year in turn: the companion's view of a person.
ANCHORS = (
    "{user}'s health, sleep and wellbeing",
    "{user}'s family, friends and the people they talk about",
    "{user}'s hobbies, interests and what they enjoy",
    "{user}'s daily routine, habits and plans",
    "{user}'s mood, worries and feelings",
    "what {user} wants from me and how I can help them better",
    "my relationship with {user} and how our conversations went",
)
MAX_SOURCES = 30
MAX_INSIGHTS = 5
#: A user needs this many new observation/conversation nodes to be reflected on.
MIN_NEW = 3
ANSWER_TOKENS = 320
RETRY_PENALTY = 1.15
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reflection": {
            "type": "array",
            "items": {"type": "string", "minLength": 20, "maxLength": 240},
            "minItems": 1,
            "maxItems": MAX_INSIGHTS,
        }
    },
    "required": ["reflection"],
}
SYSTEM = "You are {agent}, a caring companion. You write short insights about {user}."
PROMPT = (
    "Memories about {user}, oldest first:\n{memories}\n\nTopic: {anchor}.\n"
    "Write up to {k} insights as full sentences in the first person, based only on these "
    'memories, for example "I noticed {user} sleeps badly when their back hurts."\n'
    'Answer as JSON {{"reflection": ["...", "..."]}}.'
)


def anchor_for(now: float) -> str:
    return ANCHORS[dt.fromtimestamp(now).timetuple().tm_yday % len(ANCHORS)]


def new_nodes_since(memory: MemoryPort, username: str, since: float, now: float) -> int:
    def run(db) -> int:
        return db.execute(
            "SELECT COUNT(*) FROM memory_nodes WHERE username = ? AND created_at > ?"
            " AND created_at <= ? AND node_type != 'reflection'",
            [username, since, now],
        ).fetchone()[0]

    return memory.store.call(run)


def pack_sources(
    hits: list[dict[str, Any]], count_tokens: Any, budget: int
) -> list[dict[str, Any]]:
    """The best hits whose lines fit ``budget`` tokens (whole lines only), oldest first."""
    chosen, used = [], 0
    for hit in hits:
        cost = count_tokens(_line(hit)) + 1
        if used + cost > budget:
            continue  # a shorter, less relevant node may still fit
        chosen.append(hit)
        used += cost
    return sorted(chosen, key=lambda h: (h["created"], h["node_id"]))


def _line(hit: dict[str, Any]) -> str:
    stamp = f"[{hit['datetime']}] " if hit["datetime"] else ""
    return f"- {stamp}{' '.join(hit['content'].split())}"


def parse_insights(answer: str) -> list[str]:
    """The insights of ``{"reflection": [...]}``: stripped, de-duplicated, at most five;
    anything that is not such an object gives none (nothing is written)."""
    try:
        data = json.loads(answer, strict=False)
    except (json.JSONDecodeError, TypeError):
        return []
    items = data.get("reflection") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    out: list[str] = []
    for item in items:
        text = " ".join(item.split()) if isinstance(item, str) else ""
        if len(text) >= 8 and text.casefold() not in {o.casefold() for o in out}:
            out.append(text)
    return out[:MAX_INSIGHTS]


def reflect_user(
    memory: MemoryPort, llm: ChatLlm | None, username: str, now: float, agent_name: str = "Fay"
) -> dict[str, Any]:
    """Reflect on one user's memories; returns what was written (or why not)."""
    anchor = anchor_for(now).format(user=username)
    hits = memory.search(
        anchor, username, n=MAX_SOURCES, stateless=True, weights=memory.cfg.chat_weights, now=now
    )
    hits = [h for h in hits if h["node_type"] != "reflection"]  # reflect on events, not echoes
    if not hits:
        return {"user": username, "anchor": anchor, "written": [], "skipped": "no memories"}
    count = counter(llm)
    fields = {"agent": agent_name, "user": username, "anchor": anchor, "k": MAX_INSIGHTS}
    system = SYSTEM.format(**fields)
    overhead = count(system) + count(PROMPT.format(memories="", **fields))
    budget = context_size(llm) - overhead - ANSWER_TOKENS - 64  # 64: the chat template's tokens
    # fayd's own lines are no evidence about the person: reflect on what they said.
    hits = [{**h, "content": hygiene.users_side(h["content"], agent_name)} for h in hits]
    sources = pack_sources(hits, count, budget)
    lines = "\n".join(_line(h) for h in sources)
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": PROMPT.format(memories=lines, **fields)},
    ]
    for penalty in (None, RETRY_PENALTY):
        # A tiny model sometimes loops ("(2026/04/27 10:00:00) (2026/04/27 …") until the
        # answer is cut short: once more, with repeats penalised.
        options = {} if penalty is None else {"repeat_penalty": penalty}
        answer = llm.chat(
            messages,
            max_tokens=ANSWER_TOKENS,
            temperature=0.2,
            response_format={"type": "json_object", "schema": SCHEMA},
            background=True,  # a user's turn goes first (fayd.llm.local.PriorityGate)
            **options,
        )
        insights = [i for i in parse_insights(answer) if looks_like_instruction(i) is None]
        if insights:
            break
    if not insights:
        log.warning("reflection for %s gave no usable insight (%d chars)", username, len(answer))
        log.debug("reflection for %s: the answer: %s", username, words(answer))
        return {"user": username, "anchor": anchor, "written": [], "skipped": "no insight"}
    ids = [h["node_id"] for h in sources]
    tags = [t for t in reflection_tags(h["tags"] for h in sources) if not t.startswith("trust:")]
    stamp = dt.fromtimestamp(now).strftime(FAY_TIME)
    new = [
        NewNode(
            content=text,
            username=username,
            node_type="reflection",
            tags=[*tags, f"trust:{AGENT}"],
            pointer_id=ids,
            datetime=stamp,
        )
        for text in insights
    ]
    written = memory.add(new)
    return {"user": username, "anchor": anchor, "written": [n["node_id"] for n in written]}


def run_reflection(
    memory: MemoryPort,
    llm: ChatLlm | None,
    now: float,
    since: float | None,
    agent_name: str = "Fay",
) -> dict[str, Any]:
    """The job: every user with at least MIN_NEW new nodes since the last run."""
    return for_each_user(
        memory,
        "reflection",
        log,
        now,
        since,
        run_user=lambda user, _since: reflect_user(memory, llm, user, now, agent_name),
        wanted=lambda user, since: new_nodes_since(memory, user, since, now) >= MIN_NEW,
    )
