"""``fayd kb add|list|remove|search``: the household's knowledge base, no daemon needed.

The file (``<state_dir>/kb.sqlite``) is opened directly: SQLite WAL lets this run beside the
daemon, whose next search sees what was added here. ``list`` and ``remove`` load no model;
``add`` and ``search`` load the embedder once per command.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from fayd.config import Config
from fayd.kb import KbError, KnowledgeBase
from fayd.kb.knowledge import FILE_NAME
from fayd.kb.tools import kb_list_sources, kb_search


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser("kb", help="the knowledge base: add, list, remove, search documents")
    p.add_argument("--db", help=f"knowledge-base file (default: the state folder's {FILE_NAME})")
    sub = p.add_subparsers(dest="kb_command", required=True, metavar="ACTION")

    a = sub.add_parser("add", help="add documents (.txt .md .html .pdf) or folders of them")
    a.add_argument("paths", nargs="+", metavar="PATH")
    a.set_defaults(func=cmd_add)

    ls = sub.add_parser("list", help="the documents in the knowledge base")
    ls.add_argument("--json", action="store_true", help="print JSON (kb_list_sources' result)")
    ls.set_defaults(func=cmd_list)

    r = sub.add_parser("remove", help="remove a document (its name, or the path it came from)")
    r.add_argument("source")
    r.set_defaults(func=cmd_remove)

    s = sub.add_parser("search", help="the passages that best match a question")
    s.add_argument("query")
    s.add_argument("-n", type=int, default=5, help="how many passages (default 5)")
    s.add_argument("--json", action="store_true", help="print JSON (kb_search's result)")
    s.set_defaults(func=cmd_search)
    return p


def _open(cfg: Config, args: argparse.Namespace, with_model: bool) -> KnowledgeBase:
    path = Path(args.db) if args.db else cfg.state_dir / FILE_NAME
    embedder = None
    if with_model:
        from fayd.memory.open import load_embedder

        embedder = load_embedder()
    return KnowledgeBase(path, embedder)


def cmd_add(cfg: Config, args: argparse.Namespace) -> int:
    refused: list[tuple[str, str]] = []
    with _open(cfg, args, with_model=True) as kb:
        for path in args.paths:
            if Path(path).is_dir():
                report = kb.add_folder(path)
                for one in report.reports:
                    print(one.line(), flush=True)
                refused += report.refused
                continue
            try:
                print(kb.add(path).line(), flush=True)
            except KbError as exc:
                refused.append((path, str(exc)))
    for _, reason in refused:
        print(f"fayd: {reason}", file=sys.stderr)
    return 1 if refused else 0


def cmd_list(cfg: Config, args: argparse.Namespace) -> int:
    with _open(cfg, args, with_model=False) as kb:
        sources = kb.sources()
        if args.json:
            print(json.dumps(kb_list_sources(kb), ensure_ascii=False))
            return 0
    if not sources:
        print("the knowledge base is empty: add documents with fayd kb add PATH")
    for s in sources:
        added = datetime.fromtimestamp(s.added_at).strftime("%Y-%m-%d %H:%M")
        print(f"{s.name}\t{s.chunks} chunks\t{s.chars:,} characters\tadded {added}\t{s.path}")
    return 0


def cmd_remove(cfg: Config, args: argparse.Namespace) -> int:
    with _open(cfg, args, with_model=False) as kb:
        gone = kb.remove(args.source)
    print(f"removed {gone.name} ({gone.chunks} chunks) from {gone.path}")
    return 0


def cmd_search(cfg: Config, args: argparse.Namespace) -> int:
    with _open(cfg, args, with_model=True) as kb:
        if args.json:
            result = kb_search(kb, args.query, args.n)
            print(json.dumps(result, ensure_ascii=False))
            return 1 if "error" in result else 0
        hits = kb.search(args.query, args.n)
    if not hits:
        print("nothing found (is the knowledge base empty? fayd kb list)")
    for rank, hit in enumerate(hits, start=1):
        print(f"{rank}. {hit.source} #{hit.chunk} (score {hit.score:.4f})")
        print("   " + hit.text.replace("\n", "\n   "))
    return 0
