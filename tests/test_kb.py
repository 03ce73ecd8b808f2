"""The knowledge base with real parts: the MiniLM embedder, SQLite files in tmp_path, PDFs
written here byte by byte and read by pypdf, and ``fayd kb add`` as a second process."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from fayd.errors import StoreError
from fayd.kb import BadQuery, KnowledgeBase, UnknownSource, UnreadableDocument
from fayd.kb import chunks as chunking
from fayd.kb.tools import KB_LIST_SOURCES_SCHEMA, KB_SEARCH_SCHEMA, kb_list_sources, kb_search

pytestmark = pytest.mark.models
ROOT = Path(__file__).parents[1]

KETTLE = """# The Brightwell kettle

Fill the kettle through the lid, between the MIN and MAX marks.

## Descaling

When white crust forms inside, fill the kettle half with water and half with white vinegar,
leave it for one hour, then boil and rinse twice with clean water.
"""
GARDEN = """The garden tap is turned off for the winter on the first of November.
The stopcock for the garden tap is behind the blue panel in the garage."""


def make_pdf(lines: list[str]) -> bytes:
    """A one-page PDF with ``lines`` in Helvetica (an empty list: a page with no text)."""
    text = " ".join(f"({line}) Tj T*" for line in lines)
    content = f"BT /F1 12 Tf 14 TL 72 720 Td {text} ET".encode() if lines else b""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


@pytest.fixture
def kb(tmp_path: Path, embedder):
    with KnowledgeBase(tmp_path / "kb.sqlite", embedder) as opened:
        yield opened


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def texts(kb: KnowledgeBase, query: str, k: int = 5) -> list[str]:
    return [hit.text for hit in kb.search(query, k)]


def test_a_fact_only_in_an_added_document_is_found(kb: KnowledgeBase, tmp_path: Path) -> None:
    write(tmp_path / "garden.txt", GARDEN)
    report = kb.add(write(tmp_path / "kettle.md", KETTLE))
    assert (report.source, report.status) == ("kettle.md", "added")
    kb.add(tmp_path / "garden.txt")
    hits = kb.search("how do I get rid of the limescale in the kettle?", k=1)
    assert hits[0].source == "kettle.md"
    assert "white vinegar" in hits[0].text
    assert "#" not in hits[0].text  # Markdown's markup is not part of the text
    top = kb.search("where do I shut off the water to the outside tap", k=1)[0]
    assert (top.source, top.path) == ("garden.txt", str(tmp_path / "garden.txt"))


def test_a_changed_file_replaces_its_chunks(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = write(tmp_path / "garden.txt", GARDEN)
    kb.add(path)
    write(path, GARDEN.replace("blue panel in the garage", "green door of the shed"))
    report = kb.add(path)
    assert report.status == "replaced"
    found = texts(kb, "where is the stopcock for the garden tap")
    assert any("green door of the shed" in t for t in found)
    assert not any("blue panel" in t for t in found)
    assert [(s.name, s.chunks) for s in kb.sources()] == [("garden.txt", report.chunks)]


def test_an_unchanged_file_is_not_added_again(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = write(tmp_path / "kettle.md", KETTLE)
    first = kb.add(path)
    before = kb.sources()
    again = kb.add(path)
    assert again.status == "unchanged" and "nothing to do" in again.line()
    assert again.chunks == first.chunks
    assert kb.sources() == before  # same added_at: nothing was written


def test_a_failed_re_add_keeps_the_old_chunks(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = write(tmp_path / "garden.txt", GARDEN)
    kb.add(path)
    path.write_bytes(b"\x00\x9f\x92\x96" * 100)
    with pytest.raises(UnreadableDocument, match=r"garden\.txt"):
        kb.add(path)
    assert any("blue panel" in t for t in texts(kb, "stopcock"))


def test_remove_by_name_or_path(kb: KnowledgeBase, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    kb.add(write(tmp_path / "a" / "notes.txt", GARDEN))
    kb.add(write(tmp_path / "b" / "notes.txt", KETTLE))
    kb.add(write(tmp_path / "kettle.md", KETTLE))
    with pytest.raises(UnknownSource, match=r"several sources are called 'notes\.txt'"):
        kb.remove("notes.txt")
    assert kb.remove(str(tmp_path / "a" / "notes.txt")).path == str(tmp_path / "a" / "notes.txt")
    assert kb.remove("kettle.md").name == "kettle.md"
    assert [s.path for s in kb.sources()] == [str(tmp_path / "b" / "notes.txt")]
    assert all(hit.source == "notes.txt" for hit in kb.search("vinegar", 5))
    with pytest.raises(UnknownSource, match=r"no source 'kettle\.md'"):
        kb.remove("kettle.md")


UNREADABLE = {
    "broken.pdf": (b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog", "not a readable PDF"),
    "scan.pdf": (make_pdf([]), "no text layer"),
    "garbage.txt": (bytes(range(256)) * 40, "binary"),
    "random.md": (random.Random(7).randbytes(4096).replace(b"\x00", b"\x01"), "not text"),
    "empty.md": (b"", "has no text"),
    "blank.html": (b"<html><script>var x = 1;</script>  </html>", "has no text"),
    "letter.docx": (b"PK\x03\x04", "not a kind the knowledge base reads"),
}


@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_an_unreadable_file_is_refused_by_name(kb: KnowledgeBase, tmp_path: Path, name: str):
    data, reason = UNREADABLE[name]
    (tmp_path / name).write_bytes(data)
    with pytest.raises(UnreadableDocument, match=reason) as caught:
        kb.add(tmp_path / name)
    assert name in str(caught.value)
    assert kb.sources() == []


def test_missing_file_and_folder(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(UnreadableDocument, match="no such file"):
        kb.add(tmp_path / "gone.txt")
    with pytest.raises(UnreadableDocument, match="is a folder"):
        kb.add(tmp_path)
    with pytest.raises(UnreadableDocument, match="is not a folder"):
        kb.add_folder(tmp_path / "gone")


def test_a_ten_megabyte_file_is_refused(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    path.write_bytes(b"All work and no play. " * 480_000)  # 10.6 MB
    with pytest.raises(UnreadableDocument, match=r"huge\.txt: 10\.6 MB is more than"):
        kb.add(path)
    assert kb.sources() == []


def test_pdf_and_html_are_read(kb: KnowledgeBase, tmp_path: Path) -> None:
    pdf = tmp_path / "boiler.pdf"
    pdf.write_bytes(make_pdf(["Boiler service: every October.", "Engineer: Mr Okafor."]))
    html = tmp_path / "surgery.html"
    html.write_text(
        "<html><head><title>Surgery</title><style>p{color:red}</style></head><body>"
        "<p>The surgery is closed on Wednesday afternoons.</p>"
        "<script>track()</script><p>Repeat prescriptions take two working days.</p>"
        "</body></html>",
        encoding="utf-8",
    )
    assert kb.add(pdf).chunks == 1
    kb.add(html)
    boiler = kb.search("who is the heating engineer", 1)[0]
    assert boiler.source == "boiler.pdf" and "Okafor" in boiler.text
    surgery = kb.search("when is the doctor's practice shut", 1)[0]
    assert surgery.source == "surgery.html" and "Wednesday afternoons" in surgery.text
    assert "track()" not in surgery.text and "color" not in surgery.text


def test_add_folder_adds_what_it_can_and_names_the_rest(kb: KnowledgeBase, tmp_path: Path):
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    write(folder / "kettle.md", KETTLE)
    write(folder / "sub" / "garden.txt", GARDEN)
    write(folder / ".hidden.txt", "secret")
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 nonsense")
    report = kb.add_folder(folder)
    assert sorted(r.source for r in report.reports) == ["garden.txt", "kettle.md"]
    assert [Path(p).name for p, _ in report.refused] == ["broken.pdf"]
    assert "broken.pdf" in report.refused[0][1]
    assert {r.status for r in kb.add_folder(folder).reports} == {"unchanged"}


def test_chinese_is_searched_by_chinese(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.add(write(tmp_path / "kettle.md", KETTLE))
    kb.add(
        write(
            tmp_path / "社区通知.txt",
            "社区食堂每周三中午供应饺子，老人凭卡可以打八折。\n\n"
            "活动室开放时间是上午九点到下午五点，周一闭馆。\n\n"
            "量血压请到二楼的健康小屋，每天上午有医生值班。",
        )
    )
    hit = kb.search("哪天有饺子吃？", 1)[0]
    assert hit.source == "社区通知.txt" and "每周三" in hit.text
    assert "健康小屋" in kb.search("去哪里量血压", 1)[0].text


def test_chinese_chunks_end_at_sentence_ends() -> None:
    sentence = "老人每天应该喝足够的水，饭后散步半小时对身体有好处。"
    pieces = chunking.split(sentence * 40)
    assert len(pieces) > 1
    assert all(p.endswith("。") for p in pieces[:-1])
    assert all(chunking.weight(p) <= chunking.MAX_SIZE for p in pieces)


def test_chunks_lose_nothing_and_stay_bounded() -> None:
    sentences = [f"Fact number {i} says the key is in drawer {i}." for i in range(300)]
    text = "\n\n".join(" ".join(sentences[i : i + 7]) for i in range(0, 300, 7))
    text += "\n\n" + "x" * 5000  # one "word" bigger than any chunk
    pieces = chunking.split(text)
    assert all(chunking.weight(p) <= chunking.MAX_SIZE for p in pieces)
    joined = " ".join(pieces)
    assert all(s in joined for s in sentences)
    assert joined.count("x") == 5000


def test_hostile_queries_are_bounded_or_refused(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.add(write(tmp_path / "kettle.md", KETTLE))
    assert kb.search("vinegar \ud800 descale \udfff", 3)[0].source == "kettle.md"
    assert len(kb.search("kettle " * 20_000, 3)) == 1  # 140k characters
    assert len(kb.search("vinegar", 10**9)) == 1
    for empty in ("", "   \n\t", None, 42):
        with pytest.raises(BadQuery):
            kb.search(empty, 3)  # type: ignore[arg-type]
    with pytest.raises(BadQuery, match="at least 1"):
        kb.search("vinegar", 0)
    assert kb_search(kb, "\ud800")["results"] == []  # a lone surrogate is no query
    json.dumps(kb_search(kb, "\ud800 kettle"), ensure_ascii=False).encode("utf-8")


def test_the_tools_answer_in_fays_shape(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.add(write(tmp_path / "kettle.md", KETTLE))
    kb.add(write(tmp_path / "garden.txt", GARDEN))
    for schema in (KB_SEARCH_SCHEMA, KB_LIST_SOURCES_SCHEMA):
        jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate({"query": "课程A", "top_k": 3}, KB_SEARCH_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "x", "top_k": 99}, KB_SEARCH_SCHEMA)
    result = kb_search(kb, "descaling with vinegar", top_k=1)
    assert result["query"] == "descaling with vinegar"
    assert [r["source"] for r in result["results"]] == ["kettle.md"]
    assert set(result["results"][0]) == {"source", "chunk", "text", "score"}
    assert kb_search(kb, " ")["error"].startswith("the query is empty")
    listed = kb_list_sources(kb)
    assert listed["count"] == 2
    assert [s["name"] for s in listed["sources"]] == ["garden.txt", "kettle.md"]
    json.dumps(listed)


def test_another_process_adds_and_an_open_knowledge_base_sees_it(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    kb.add(write(tmp_path / "kettle.md", KETTLE))
    assert "Mrs Alvarez" not in " ".join(texts(kb, "who feeds the cat"))  # the cache is warm
    write(tmp_path / "cat.txt", "Mrs Alvarez from number 12 feeds the cat when we are away.")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")}
    env.pop("FAYD_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-m", "fayd", "kb", "--db", str(kb.store.path), "add", "cat.txt"],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "cat.txt: added, 1 chunk" in done.stdout
    hit = kb.search("who feeds the cat", 1)[0]
    assert hit.source == "cat.txt" and "Mrs Alvarez" in hit.text
    assert [s.name for s in kb.sources()] == ["cat.txt", "kettle.md"]


def test_a_damaged_database_file_is_a_clear_store_error(tmp_path: Path, embedder) -> None:
    path = tmp_path / "kb.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match=r"cannot open the knowledge base .*kb\.sqlite"):
        KnowledgeBase(path, embedder)
    assert path.read_bytes().startswith(b"this is not a database")  # left as it was


class Renamed:
    """The same MiniLM under another name: as if the household installed a new model."""

    def __init__(self, embedder) -> None:
        self.inner = embedder
        self.name = embedder.name + "+renamed"
        self.dim = embedder.dim

    def embed(self, texts: list[str]):
        return self.inner.embed(texts)


def test_a_new_embedder_embeds_an_unchanged_file_again(tmp_path: Path, embedder) -> None:
    path = write(tmp_path / "kettle.md", KETTLE)
    with KnowledgeBase(tmp_path / "kb.sqlite", embedder) as kb:
        kb.add(path)
    with KnowledgeBase(tmp_path / "kb.sqlite", Renamed(embedder)) as kb:
        assert kb.add(path).status == "replaced"  # its vectors were another model's
        assert kb.add(path).status == "unchanged"
        assert "white vinegar" in kb.search("getting rid of limescale", 1)[0].text
