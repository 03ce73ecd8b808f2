"""Documents → plain text: text, Markdown, HTML and PDF.

Anything that is not one of these, or that has no text, is refused with
:class:`UnreadableDocument` naming the file and the reason, before anything is written: a
household member who adds a scanned PDF should hear "no text layer", not find later that the
knowledge base silently knows nothing of it.

HTML goes through the standard library's ``html.parser`` rather than ``html2text``: the
knowledge base needs the words and where paragraphs end, not Markdown rendering of tables or
links, and the parser tolerates broken markup. PDF goes through ``pypdf`` (pure Python, no
system library to install on the board).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from html.parser import HTMLParser
from pathlib import Path

from fayd.kb.errors import UnreadableDocument

log = logging.getLogger(__name__)

TEXT_SUFFIXES = frozenset({".txt", ".text", ".md", ".markdown", ".rst"})
HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
PDF_SUFFIXES = frozenset({".pdf"})
SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES

#: A text or HTML file larger than this is refused (a whole encyclopedia is not a household
#: document, and embedding it on the board would take hours); a PDF may be larger, its images
#: take room, but its text is held to :data:`MAX_TEXT_CHARS` like every other kind.
MAX_TEXT_FILE_BYTES = 4 * 1024 * 1024
MAX_PDF_FILE_BYTES = 64 * 1024 * 1024
#: About a 500-page book: ~1,500 chunks, some minutes of embedding on a Raspberry Pi.
MAX_TEXT_CHARS = 1_000_000
#: More control characters than this share means the bytes are not text.
MAX_CONTROL_SHARE = 0.01


def kinds() -> str:
    return ", ".join(sorted(SUFFIXES))


def read_bytes(path: Path) -> bytes:
    """The bytes of a document the knowledge base reads (refused by kind and size first)."""
    suffix = path.suffix.lower()
    if path.is_dir():
        raise UnreadableDocument(path, "is a folder (add a folder with add_folder)")
    if suffix not in SUFFIXES:
        raise UnreadableDocument(path, f"is not a kind the knowledge base reads ({kinds()})")
    try:
        size = path.stat().st_size
        limit = MAX_PDF_FILE_BYTES if suffix in PDF_SUFFIXES else MAX_TEXT_FILE_BYTES
        if size > limit:
            raise UnreadableDocument(
                path, f"{size / 1e6:.1f} MB is more than the {limit / 1e6:.0f} MB allowed"
            )
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise UnreadableDocument(path, "no such file") from exc
    except OSError as exc:
        raise UnreadableDocument(path, f"cannot be read: {exc.strerror or exc}") from exc


def document_text(path: Path, data: bytes) -> str:
    """The text of the document ``data`` read from ``path`` (paragraphs separated by blank
    lines); ``path`` names its kind and is named in a refusal."""
    suffix = path.suffix.lower()
    if suffix in PDF_SUFFIXES:
        text = pdf_text(path, data)
    else:
        text = decode_text(path, data)
        if suffix in HTML_SUFFIXES:
            text = html_text(text)
        elif suffix in {".md", ".markdown"}:
            text = markdown_text(text)
    text = tidy(text)
    if not text:
        raise UnreadableDocument(path, "has no text")
    if len(text) > MAX_TEXT_CHARS:
        raise UnreadableDocument(
            path, f"{len(text):,} characters of text is more than the {MAX_TEXT_CHARS:,} allowed"
        )
    return text


def read_document(path: Path) -> str:
    """The text of the document at ``path``."""
    return document_text(path, read_bytes(path))


def decode_text(path: Path, data: bytes) -> str:
    """UTF-8 (with or without a BOM), UTF-16 with a BOM, or GB18030 (older Chinese Windows
    files); bytes that are none of these, or that hold NULs or many control characters, are
    not text."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        candidates = ["utf-16"]
    elif b"\x00" in data:
        raise UnreadableDocument(path, "is binary, not text (it holds NUL bytes)")
    else:
        candidates = ["utf-8-sig", "gb18030"]
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _control_share(text) <= MAX_CONTROL_SHARE:
            return text
    raise UnreadableDocument(path, "is not text (neither UTF-8 nor GB18030, or binary)")


def _control_share(text: str) -> float:
    if not text:
        return 0.0
    odd = sum(
        1 for c in text if c not in "\n\r\t\f" and unicodedata.category(c) in ("Cc", "Cs", "Co")
    )
    return odd / len(text)


def pdf_text(path: Path, data: bytes) -> str:
    """The text layer of every page, a blank line between pages."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings on odd files are noise
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableDocument(path, "is a password-protected PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
    except UnreadableDocument:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise UnreadableDocument(path, f"is not a readable PDF ({exc})") from exc
    except Exception as exc:  # pypdf raises many kinds on a damaged file; all mean the same
        raise UnreadableDocument(path, f"is not a readable PDF ({type(exc).__name__})") from exc
    text = "\n\n".join(pages)
    if not text.strip():
        raise UnreadableDocument(path, "has no text layer (a scanned PDF needs OCR first)")
    return text


_BLOCK = frozenset(
    "p div br li ul ol h1 h2 h3 h4 h5 h6 tr table section article header footer blockquote"
    " pre dt dd hr title".split()
)
_SKIP = frozenset({"script", "style", "noscript", "template", "svg"})


class _HtmlText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skipping += 1
        elif tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_text(markup: str) -> str:
    """The visible words of an HTML page, a paragraph per block element; the ``<title>`` is
    kept (it names the page), scripts and styles are not."""
    parser = _HtmlText()
    parser.feed(markup)
    parser.close()
    return "".join(parser.parts)


_MD_RULES = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images: their alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links: their words
    (re.compile(r"^[ \t]{0,3}#{1,6}[ \t]*(.*?)[ \t]*#*[ \t]*$", re.M), r"\1"),  # headings
    (re.compile(r"^[ \t]{0,3}(?:[-*_][ \t]*){3,}$", re.M), ""),  # rules
    (re.compile(r"^[ \t]{0,3}>[ \t]?", re.M), ""),  # quotes
    (re.compile(r"^[ \t]*```.*$", re.M), ""),  # fences (their contents stay)
    (re.compile(r"(\*\*|__)(.+?)\1"), r"\2"),  # bold
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?!\w)"), r"\1"),  # italics
    (re.compile(r"`([^`]+)`"), r"\1"),  # inline code
]


def markdown_text(text: str) -> str:
    """Markdown without its markup: the words a reader hears, paragraphs kept."""
    for pattern, replacement in _MD_RULES:
        text = pattern.sub(replacement, text)
    return text


def tidy(text: str) -> str:
    """One newline style, no trailing spaces, at most one blank line between paragraphs, no
    lone surrogates (they cannot be stored as UTF-8)."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    text = "\n".join(line.strip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()
