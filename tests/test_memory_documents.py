"""MemoryFS documents (seed 002) in real SQLite: the injection order, the category aliases,
the timeline's selection and text, truncation of whole oldest entries under the seed's caps,
the CLI, and the documents inside context assembly's token budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from fayd.memory import BadInput, Memory, NewNode
from fayd.memory import documents as d
from fayd.memory.budget import estimate_tokens
from fayd.memory.context import assemble, collect, pack, section_headers
from fayd.store import Store

NOW = 1_790_000_000.0


def at(text: str) -> float:
    """A local ``YYYY-MM-DD HH:MM`` → epoch (as the documents write and read it)."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").timestamp()


@pytest.fixture
def store(tmp_path: Path):
    store = Store(tmp_path / "fayd.db")
    yield store
    store.close()


@pytest.fixture
def docs(store) -> d.Documents:
    return d.Documents(store)


# --- the seed's categories, order and aliases ---------------------------------------------


def test_categories_and_injection_order_are_the_seeds() -> None:
    assert d.ORDER == {
        "user_persona": 10,
        "character_persona": 20,
        "important_event": 30,
        "timeline": 35,
        "life_sim": 38,
        "recent_digest": 40,
    }
    assert list(d.CATEGORIES) == sorted(d.ORDER, key=d.ORDER.__getitem__)


@pytest.mark.parametrize(
    ("alias", "category"),
    [
        # the seed's normalize_memory_category examples
        ("user_preference", "user_persona"),
        ("relationship", "character_persona"),
        ("event", "important_event"),
        ("timeline_event", "timeline"),
        ("life_sim_event", "life_sim"),
        ("heartbeat_life", "life_sim"),
        ("diary", "recent_digest"),
        # the seed's alias table
        *[(a, "user_persona") for a in ("user", "user_profile", "persona_user")],
        *[(a, "character_persona") for a in ("character", "character_profile")],
        *[(a, "character_persona") for a in ("persona_character",)],
        *[(a, "important_event") for a in ("events", "plot", "plot_summary", "world_event")],
        ("timeline_event_other", "timeline"),
        ("life_event", "life_sim"),
        *[(a, "recent_digest") for a in ("digest", "summary", "dialogue_digest")],
        # the seed's Chinese labels and headers
        ("用户人格", "user_persona"),
        ("【用户人格记忆】", "user_persona"),
        ("角色人格", "character_persona"),
        ("重要事件", "important_event"),
        ("剧情节点", "important_event"),
        ("跨会话时间线", "timeline"),
        ("角色生活片段", "life_sim"),
        ("近期对话压缩摘要", "recent_digest"),
        # the names themselves, any case, - or space for _
        *[(c, c) for c in d.ORDER],
        (" User-Profile ", "user_persona"),
        ("Life Sim", "life_sim"),
    ],
)
def test_aliases_normalise_to_the_category(alias: str, category: str) -> None:
    assert d.normalize_category(alias) == category


@pytest.mark.parametrize(
    "value", ["something-else", "legacy", "", "   ", None, 3, "user persona x"]
)
def test_unknown_names_normalise_to_nothing(value) -> None:
    assert d.normalize_category(value) == ""


def test_an_alias_writes_to_the_category_and_a_bad_name_writes_nothing(docs) -> None:
    docs.append("u1", "user_preference", "Likes jazz.", now=NOW)
    docs.append("u1", "用户人格", "喜欢动漫", now=NOW + 1)
    assert [e.text for e in docs.read("u1", "user_persona").entries] == ["Likes jazz.", "喜欢动漫"]
    with pytest.raises(BadInput, match="unknown document category 'something-else'"):
        docs.append("u1", "something-else", "x", now=NOW)
    assert [x["category"] for x in docs.list_documents()] == ["user_persona"]


def test_sections_come_in_the_seeds_order_and_empty_ones_are_left_out(docs) -> None:
    # Written in reverse order, read back 10, 20, 30, 35, 38, 40.
    docs.set("u1", "recent_digest", "最近聊了动漫与游戏...", now=NOW)
    docs.append("u1", "life_sim", "[2026-07-08 14:30] 午后在窗边看了一会儿书", conversation=7)
    docs.append("u1", "timeline", "[2026-07-07 22:15] [conv:web_abc123] 收到生日礼物")
    docs.append("u1", "important_event", "用户第一次提到想去秋叶原...", conversation=7, now=NOW)
    docs.append("u1", "character_persona", "对用户保持温和耐心的态度...", now=NOW)
    docs.append("u1", "user_persona", "用户喜欢动漫，性格内向...", now=NOW)
    secs = docs.sections("u1", 7)
    assert [s.category for s in secs] == list(d.CATEGORIES)
    text = docs.render("u1", 7)
    heads = ["【用户人格记忆】", "【角色人格记忆】", "【重要事件】", "以下条目来自", "以下是该角色"]
    positions = [text.index(h) for h in [*heads, "【近期对话压缩摘要】"]]
    assert positions == sorted(positions)
    assert text.startswith("【用户人格记忆】\n用户喜欢动漫，性格内向...\n\n【角色人格记忆】\n")
    # Another conversation: no events or life moments of conversation 7, but its timeline.
    other = docs.sections("u1", 8)
    assert [s.category for s in other] == ["user_persona", "character_persona", "timeline",
                                           "recent_digest"]  # fmt: skip
    assert [s.category for s in docs.sections("nobody", 7)] == []


# --- timeline formatting ------------------------------------------------------------------

SEED_TIMELINE = """以下条目来自角色与该用户的**其他会话/场景**（非当前对话）的近期生活经历摘要。
格式：`[时间] [会话标识] 事件摘要`。每个其他会话最多展示最新 2 条，全局最多 10 条。
这些经历发生在当前对话之外；当前会话的具体事件由下方 events/plot 段承载，不在此处重复。
如果用户话题明确引用了某段过去经历，角色可以自然回忆/承认；
否则不要把这些事件当作'刚发生的事'叙述，也不要编造新细节。

- [2026-07-07 22:15] [web_abc123] 收到用户送的生日礼物，很开心
- [2026-07-08 09:30] [qq_private_10001] 早起给用户发了早安"""


def test_the_seeds_timeline_example_renders_exactly(docs) -> None:
    docs.set(
        "u1",
        "timeline",
        "[2026-07-08 09:30] [conv:qq_private_10001] 早起给用户发了早安\n\n"
        "[2026-07-07 22:15] [conv:web_abc123] 收到用户送的生日礼物，很开心\n\n"
        "[2026-07-08 10:00] [conv:current] 这一条属于当前会话",
        now=NOW,
    )
    assert docs.render("u1", "current") == SEED_TIMELINE  # the seed's example, exactly


def test_timeline_newest_two_per_other_conversation_at_most_ten_current_excluded(docs) -> None:
    # 7 other conversations with 3 entries each (day k, hours 8/9/10), and the current one.
    for k in range(1, 8):
        for hour in (8, 9, 10):
            docs.append(
                "u1",
                "timeline",
                f"conv {k} at {hour}",
                conversation=f"c{k}",
                at=at(f"2026-07-0{k} {hour:02}:00"),
            )
    docs.append("u1", "timeline", "now", conversation="42", at=at("2026-07-09 12:00"))
    (sec,) = docs.sections("u1", 42)
    shown = [e.text for e in sec.entries]
    # 14 candidates (2 per conversation: hours 9 and 10) → the newest 10, oldest first:
    # conversations 1 and 2 fall out, their hour-8 entries never were candidates.
    assert shown == [f"conv {k} at {h}" for k in range(3, 8) for h in (9, 10)]
    assert len(shown) == d.TIMELINE_MAX == 10
    assert "now" not in shown
    assert sec.lines[0] == "- [2026-07-03 09:00] [c3] conv 3 at 9"
    # Seen from conversation c7: c7's entries go, 42's come in; 13 candidates → newest 10.
    shown7 = [e.text for e in docs.sections("u1", "c7")[0].entries]
    others = [f"conv {k} at {h}" for k in range(3, 7) for h in (9, 10)]
    assert shown7 == ["conv 2 at 10", *others, "now"]


def test_timeline_entries_need_a_conversation_and_a_valid_time(docs) -> None:
    with pytest.raises(BadInput, match="names its conversation"):
        docs.append("u1", "timeline", "[2026-07-07 22:15] 没有会话标识")
    with pytest.raises(BadInput, match="bad time"):
        docs.append("u1", "timeline", "[2026-13-07 22:15] [conv:a] x")
    with pytest.raises(BadInput, match="conversation id"):
        docs.append("u1", "timeline", "x", conversation="two words")
    assert docs.list_documents() == []


SEED_LIFE_SIM_HEADER = """以下是该角色在**当前会话/对话之外**的近期生活片段（由静默心跳持续生成）。
这些片段描述的是**用户不在场时**，角色独自进行的生活活动（思考、行动、情绪、状态等）。
最多展示最新 5 条；更早的片段已自动归档丢弃。
当前会话的具体对话事件由下方 events/plot 段承载，不在此处重复。
如果当前对话话题与某段生活片段自然相关，角色可以回忆/承认；
否则不要把这些活动当作'刚发生的事'叙述，也不要编造新细节。"""


def test_life_sim_shows_the_newest_five_and_keeps_ten(docs) -> None:
    for i in range(12):
        docs.append("u1", "life_sim", f"片段 {i}", conversation=7, at=at(f"2026-07-08 {i:02}:30"))
    doc = docs.read("u1", "life_sim", 7)
    assert [e.text for e in doc.entries] == [f"片段 {i}" for i in range(2, 12)]  # 10 kept
    (sec,) = docs.sections("u1", 7)
    assert sec.lines == [f"- [2026-07-08 {i:02}:30] 片段 {i}" for i in range(7, 12)]
    assert docs.render("u1", 7) == SEED_LIFE_SIM_HEADER + "\n\n" + "\n".join(sec.lines)
    assert docs.sections("u1", 8) == []  # strictly per conversation


# --- truncation: whole oldest entries, the seed's caps ----------------------------------


def test_truncate_drops_whole_oldest_entries_at_the_char_cap() -> None:
    entries = [d.Entry("甲" * 998 + f"{i:02}", NOW + i) for i in range(5)]  # 1000 chars each
    # 4 entries: 4000 + 3 blank-line separators (6) = 4006 > 4000 → the oldest goes.
    kept, dropped = d.truncate("user_persona", entries[:4])
    assert [e.text[-2:] for e in kept] == ["01", "02", "03"] and dropped == entries[:1]
    exact = [d.Entry("x" * 1998, NOW), d.Entry("y" * 2000, NOW + 1)]  # 1998 + 2 + 2000
    assert d.truncate("recent_digest", exact) == (exact, [])
    exact[0].text += "x"  # 4001
    assert d.truncate("recent_digest", exact) == (exact[1:], exact[:1])
    for e in kept:
        assert len(e.text) == 1000  # never cut


def test_entry_caps_are_the_seeds() -> None:
    assert d.MAX_CHARS == 4000
    assert d.MAX_ENTRIES == {"life_sim": 10, "timeline": 80}  # 其他: 不限
    many = [d.Entry(f"e{i}", NOW + i, "c") for i in range(100)]
    assert len(d.truncate("timeline", many)[0]) == 80
    assert len(d.truncate("life_sim", many)[0]) == 10
    assert len(d.truncate("important_event", many)[0]) == 100
    assert d.truncate("timeline", many)[0][0].text == "e20"


def test_writes_truncate_and_report_what_they_dropped(docs) -> None:
    for i in range(85):
        out = docs.append("u1", "timeline", f"event {i}", conversation=f"c{i % 3}", at=NOW + i)
    assert out["entries"] == 80 and out["dropped"] == 1 and out["version"] == 85
    texts = [e.text for e in docs.read("u1", "timeline").entries]
    assert texts[0] == "event 5" and texts[-1] == "event 84"
    # Characters: each 1500-character Chinese entry stays whole; the oldest go.
    for i in range(4):
        out = docs.append("u1", "important_event", f"{i}" + "事" * 1499, conversation=7, now=NOW)
    assert out["entries"] == 2 and out["chars"] == 3002 and out["dropped"] == 1
    assert [e.text[0] for e in docs.read("u1", "event", 7).entries] == ["2", "3"]


def test_a_backdated_entry_is_the_oldest_and_goes_first(docs) -> None:
    for i in range(10):
        docs.append("u1", "life_sim", f"new {i}", conversation=1, at=NOW + i)
    out = docs.append("u1", "life_sim", "old", conversation=1, at=NOW - 100)
    assert out["dropped"] == 1
    assert "old" not in [e.text for e in docs.read("u1", "life_sim", 1).entries]


def test_an_entry_over_the_cap_is_refused_never_cut(docs) -> None:
    docs.set("u1", "recent_digest", "before", now=NOW)
    with pytest.raises(BadInput, match="at most 4000 characters"):
        docs.append("u1", "recent_digest", "长" * 4001, now=NOW)
    with pytest.raises(BadInput, match="at most 4000 characters"):
        docs.set("u1", "recent_digest", "ok\n\n" + "长" * 4001, now=NOW)
    assert docs.read("u1", "summary").text() == "before"  # nothing half-written
    docs.append("u1", "recent_digest", "长" * 4000, now=NOW + 1)  # exactly the cap: kept alone
    assert docs.read("u1", "digest").text() == "长" * 4000


def test_set_replaces_and_truncates_the_file_form(docs) -> None:
    text = "\n\n".join(f"第{i}段\n第二行" for i in range(3)) + "\n\n\n   \n\nlast"
    out = docs.set("u1", "character_persona", text, now=NOW)
    assert out["entries"] == 4 and out["version"] == 1
    doc = docs.read("u1", "relationship")
    assert doc.text() == "第0段\n第二行\n\n第1段\n第二行\n\n第2段\n第二行\n\nlast"
    assert docs.set("u1", "character", doc.text(), now=NOW)["entries"] == 4  # round trip
    big = "\n\n".join(f"{i:03}" + "a" * 996 for i in range(6))  # 6 × 999
    out = docs.set("u1", "character_persona", big, now=NOW)
    assert out == {**out, "entries": 3, "dropped": 3, "chars": 3001, "version": 3}
    assert [e.text[:3] for e in docs.read("u1", "character").entries] == ["003", "004", "005"]
    with pytest.raises(BadInput, match="empty"):
        docs.set("u1", "character", "  \n\n ", now=NOW)


def test_blank_lines_inside_an_appended_entry_keep_it_one_entry(docs) -> None:
    docs.append("u1", "user_persona", "Likes tea.\n\n\nPrefers green tea.", now=NOW)
    doc = docs.read("u1", "user_persona")
    assert [e.text for e in doc.entries] == ["Likes tea.\nPrefers green tea."]


def test_documents_are_per_user_and_per_conversation(tmp_path: Path) -> None:
    store = Store(tmp_path / "own.db")
    docs = d.Documents(store)
    docs.append("ann", "user_persona", "Ann gardens.", now=NOW)
    docs.append("bob", "user_persona", "Bob plays chess.", now=NOW)
    docs.append("ann", "important_event", "Ann's grandson visited.", conversation=3, now=NOW)
    with pytest.raises(BadInput, match="per conversation"):
        docs.append("ann", "important_event", "no conversation", now=NOW)
    assert docs.render("bob", 3) == "【用户人格记忆】\nBob plays chess."
    assert "grandson" in docs.render("ann", 3) and "grandson" not in docs.render("ann", 4)
    assert docs.delete("ann", "event", 3) and not docs.delete("ann", "event", 3)
    store.close()
    again = Store(tmp_path / "own.db")  # written means committed
    try:
        rows = d.Documents(again).list_documents()
        assert [(r["username"], r["category"]) for r in rows] == [
            ("ann", "user_persona"),
            ("bob", "user_persona"),
        ]
        sql = "SELECT count(*) FROM memory_document_entries"
        # The deleted document's entry went with it.
        assert again.call(lambda db: db.execute(sql).fetchone()[0]) == 2
    finally:
        again.close()


def test_english_headers_name_the_user(docs) -> None:
    docs.append("ann", "user_persona", "Ann gardens.", now=NOW)
    docs.append("ann", "timeline", "Planted tomatoes.", conversation=1, at=at("2026-05-01 10:00"))
    text = docs.render("ann", 2, lang="en")
    assert text.startswith("Who ann is (persona notes):\nAnn gardens.\n\n")
    assert "with ann (not the current one)" in text
    assert text.endswith("- [2026-05-01 10:00] [1] Planted tomatoes.")
    with pytest.raises(BadInput):
        docs.render("ann", 2, lang="fr")


# --- in context assembly -----------------------------------------------------------------


def _doc_lines(docs: d.Documents, user: str, session: str) -> dict[str, list[str]]:
    return {s.category: s.lines for s in docs.sections(user, session)}


def test_context_injects_documents_in_order_and_drops_oldest_entries_first(store, docs) -> None:
    memory = Memory(store, embedder=None)  # no question: no search, no model needed
    memory.set_user_profile("ann", "Ann is 82 and loves her garden.")
    for i in range(4):
        docs.append("ann", "user_persona", f"Ann persona note {i}.", at=NOW + i, now=NOW)
        docs.append("ann", "timeline", f"In the kitchen {i}.", conversation=f"k{i}", at=NOW + i)
        docs.append("ann", "life_sim", f"独自浇花 {i}", conversation=9, at=NOW + i)
    docs.append("ann", "important_event", "Ann's hip surgery is on Friday.", conversation=9)
    docs.set("ann", "recent_digest", "We talked about tomatoes.\n\nAnd about her cat.")
    expected = _doc_lines(docs, "ann", "9")
    whole = {ln for lines in expected.values() for ln in lines}
    count = estimate_tokens
    full = assemble(memory, "ann", "", 9, 4000, count, now=NOW)
    heads = ["About ann:", "Who ann is", "Important events", "The entries below", "Below are",
             "Recent conversations with ann"]  # fmt: skip
    assert [full.index(h) for h in heads] == sorted(full.index(h) for h in heads)
    by_value = sorted(collect(memory, "ann", "", "9", NOW), key=lambda e: e.value)
    assert [e.section[4:] for e in by_value][:5] == ["life_sim"] * 4 + ["timeline"]
    sizes, partial = [], set()
    for budget in range(20, 600, 4):
        text = assemble(memory, "ann", "", 9, budget, count, now=NOW, stateless=True)
        assert count(text) <= budget
        lines = set(text.split("\n"))
        for category, shown in expected.items():
            kept = [ln for ln in shown if ln in lines]
            assert kept == shown[len(shown) - len(kept) :], (budget, category)  # newest kept
            if 0 < len(kept) < len(shown):
                partial.add(category)
        # Dropped strictly cheapest first: life moments, timeline, digest, events, personas.
        kept_values = [e.text in lines for e in by_value]
        assert kept_values == sorted(kept_values), budget
        sizes.append(len(text))
    assert partial >= {"user_persona", "timeline", "life_sim", "recent_digest"}
    assert sizes == sorted(sizes)
    body = [ln for ln in full.split("\n") if ln.startswith(("- ", "Ann", "We", "And"))]
    assert set(body) - {"Ann is 82 and loves her garden."} <= whole  # nothing cut
    zh = assemble(memory, "ann", "", 9, 4000, count, now=NOW, docs_lang="zh")
    assert "【用户人格记忆】\nAnn persona note 0." in zh and "【近期对话压缩摘要】" in zh


@pytest.mark.models
def test_with_recalled_nodes_the_real_tokenizer_counts_documents_too(
    store, docs, embedder, local_llm
) -> None:
    memory = Memory(store, embedder)
    memory.add(
        [
            NewNode("Ann's cat Miso is afraid of the vacuum cleaner.", "ann", importance=4),
            NewNode("Ann planted tomatoes in the garden.", "ann", importance=3),
        ]
    )
    docs.append("ann", "user_persona", "安妮喜欢园艺，性格温和。", now=NOW)
    docs.append("ann", "timeline", "Miso hid under the bed.", conversation="3", at=NOW - 60)
    question, count = "Is Miso ok?", local_llm.count_tokens
    entries = collect(memory, "ann", question, "9", NOW)
    sections = [e.section for e in entries]
    assert sections.index("doc:user_persona") < sections.index("observation")
    text = assemble(memory, "ann", question, 9, 2000, count, now=NOW, stateless=True)
    assert text.index("安妮喜欢园艺") < text.index("Miso hid") < text.index("vacuum cleaner")
    # Just room for the documents: the recalled nodes go first, the documents stay whole.
    documents_only = pack(
        [e for e in entries if e.section.startswith("doc:")], 2000, count, "ann",
        section_headers(),
    )  # fmt: skip
    budget = count(documents_only) + 3
    small = assemble(memory, "ann", question, 9, budget, count, now=NOW, stateless=True)
    assert small == documents_only
    assert count(small) <= budget < count(text)


# --- the CLI ------------------------------------------------------------------------------


def fayd_docs(tmp_path: Path, *args: str, stdin: str | None = None):
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("FAYD_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "fayd", "memory", "docs", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_cli_set_append_list_show(tmp_path: Path) -> None:
    run = fayd_docs(tmp_path, "set", "用户人格", "--user", "u1", "--file", "-",
                    stdin="用户喜欢动漫\n\n性格内向")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) | {"updated_at": 0} == {
        "ok": True, "username": "u1", "category": "user_persona", "order": 10,
        "conversation": "", "entries": 2, "chars": 12, "version": 1, "updated_at": 0,
        "dropped": 0,
    }  # fmt: skip
    gift = "收到用户送的生日礼物，很开心"
    run = fayd_docs(tmp_path, "append", "timeline_event", gift, "--user", "u1",
                    "--conversation", "web_abc123", "--at", "2026-07-07 22:15")  # fmt: skip
    assert run.returncode == 0, run.stderr
    listed = fayd_docs(tmp_path, "list", "--json")
    assert [json.loads(x)["category"] for x in listed.stdout.splitlines()] == [
        "user_persona",
        "timeline",
    ]
    shown = fayd_docs(tmp_path, "show", "timeline", "--user", "u1")
    assert shown.stdout == "[2026-07-07 22:15] [conv:web_abc123] 收到用户送的生日礼物，很开心\n"
    prompt = fayd_docs(tmp_path, "show", "--prompt", "--session", "qq_1", "--user", "u1")
    assert prompt.stdout.startswith("【用户人格记忆】\n用户喜欢动漫\n性格内向\n\n以下条目来自")
    assert prompt.stdout.endswith(f"- [2026-07-07 22:15] [web_abc123] {gift}\n")
    bad = fayd_docs(tmp_path, "append", "something-else", "x", "--user", "u1")
    assert bad.returncode == 1 and "unknown document category" in bad.stderr
    missing = fayd_docs(tmp_path, "show", "important_event", "--user", "u1", "--conversation", "1")
    assert missing.returncode == 1 and "no important_event document" in missing.stderr
