"""``fayd memory``: add, search, stats, reembed, import-fay, export-fay, quarantine, docs — no
daemon needed.

The database is opened directly (SQLite WAL lets this run beside the daemon: writes wait for
each other's transactions). Models load once per command, so a batch search of a thousand
queries costs one model load.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fayd.agent.clock import days
from fayd.cli.failures import UsageError
from fayd.config import Config
from fayd.memory import BadInput, Memory, NewNode, documents, normalize_tags, quarantine
from fayd.memory.fay_io import export_fay, import_fay
from fayd.memory.open import open_memory
from fayd.store import Store


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "memory", help="the memory stream: add, search, reembed, import/export"
    )
    p.add_argument("--db", help="database file (default: the state folder's fayd.db)")
    sub = p.add_subparsers(dest="memory_command", required=True, metavar="ACTION")

    a = sub.add_parser("add", help="add nodes from JSON lines (content, node_type, tags, scope…)")
    a.add_argument("--jsonl", required=True, help="file of JSON objects, one per line ('-': stdin)")
    a.add_argument("--user", help="username for lines without one")
    a.add_argument("--no-llm", action="store_true", help="don't score importance with the LLM")
    a.set_defaults(func=cmd_add)

    s = sub.add_parser(
        "search",
        help="retrieve nodes for a query (or a file of queries); with only tag filters, "
        "the newest matching nodes",
    )
    s.add_argument("query", nargs="?", help="the text to search for (none: newest first)")
    s.add_argument("--queries", help="JSON lines {query, user?, n?, …}: one result line each")
    s.add_argument("--user", help="whose memory (default: agent.default_user)")
    s.add_argument("-n", type=int, default=10, help="how many nodes (default 10)")
    s.add_argument("--node-type", default="all", help="all, observation, conversation, reflection")
    s.add_argument("--tags-all", nargs="+", default=[], help="nodes must have all these tags")
    s.add_argument("--tags-any", nargs="+", default=[], help="...and at least one of these")
    s.add_argument("--weights", help="recency,relevance,importance (default: memory config)")
    s.add_argument("--stateless", action="store_true", help="don't update last_retrieved")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=cmd_search)

    st = sub.add_parser("stats", help="node counts per user and type, embedding model")
    st.set_defaults(func=cmd_stats)

    r = sub.add_parser("reembed", help="embed again the nodes without a current-model vector")
    r.add_argument("--batch", type=int, default=64, help="nodes per transaction (default 64)")
    r.set_defaults(func=cmd_reembed)

    i = sub.add_parser("import-fay", help="import a Fay memory folder (nodes.json, …)")
    i.add_argument("dir")
    i.add_argument("--user", help="username for a single-user folder")
    i.set_defaults(func=cmd_import)

    e = sub.add_parser("export-fay", help="write Fay's memory files")
    e.add_argument("dir")
    e.add_argument("--user", help="only this user, flat into DIR")
    e.set_defaults(func=cmd_export)

    q = sub.add_parser("quarantine", help="review writes held out of live memory")
    qsub = q.add_subparsers(dest="quarantine_command", required=True, metavar="ACTION")
    ql = qsub.add_parser("list", help="held items (pending unless --status)")
    ql.add_argument(
        "--status", default="pending", choices=["pending", "approved", "rejected", "all"]
    )
    ql.add_argument("--json", action="store_true", help="one JSON object per line")
    ql.set_defaults(func=cmd_quarantine_list)
    for name, helptext in (
        ("approve", "write the held item to live memory"),
        ("reject", "discard the held item (the record stays)"),
    ):
        qa = qsub.add_parser(name, help=helptext)
        qa.add_argument("id", type=int)
        qa.set_defaults(func=cmd_quarantine_decide, decision=name)
    add_docs_parser(sub)
    return p


@contextlib.contextmanager
def _opened(cfg: Config, args: argparse.Namespace, with_llm: bool = False) -> Iterator[Memory]:
    """The memory of ``--db`` (or the state folder's), closed when the command is done."""
    memory = open_memory(cfg, args.db, with_llm=with_llm, days_named=days.named)
    try:
        yield memory
    finally:
        memory.store.close()


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def read_jsonl(path: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line; a bad line is an error naming it."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise BadInput(f"no such file: {path}") from exc
    except IsADirectoryError as exc:
        raise BadInput(f"{path} is a folder; give a file of JSON lines") from exc
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path} is not UTF-8 text (JSON lines are): {exc.reason}") from exc
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except RecursionError as exc:  # not a ValueError: it failed as a bug
            raise BadInput(f"{path}:{number}: nested too deeply") from exc
        except ValueError as exc:  # not JSON, or an integer of over 4,300 digits
            raise BadInput(f"{path}:{number}: not JSON: {exc}") from exc
        if not isinstance(obj, dict):
            raise BadInput(f"{path}:{number}: expected a JSON object")
        out.append((number, obj))
    return out


ADD_KEYS = {
    "content",
    "node_type",
    "datetime",
    "tags",
    "username",
    "user",
    "importance",
    "kind",
    "source",
    "persistent",
    "pointer_id",
    "id",
    "scope",
}


def node_from_line(obj: dict[str, Any], default_user: str) -> NewNode:
    """A line → a node tagged like every write path: ``kind:`` and ``source:`` always."""
    unknown = set(obj) - ADD_KEYS
    if unknown:
        raise BadInput(f"unknown keys {sorted(unknown)} (known: {sorted(ADD_KEYS)})")
    extra = obj.get("tags") or []
    if not isinstance(extra, list):
        raise BadInput("tags must be a list of strings")
    kinds = [t for t in extra if isinstance(t, str) and t.startswith("kind:")]
    sources = [t for t in extra if isinstance(t, str) and t.startswith("source:")]
    kind = obj.get("kind") or (None if kinds else "observation")
    tags = normalize_tags(
        kind, obj.get("source") or (None if sources else "cli"), bool(obj.get("persistent")), extra
    )
    if kinds and not obj.get("kind"):  # the line's own kind tags, without a default kind
        tags = sorted(set(tags) - {"kind:observation"} | set(kinds))
    return NewNode(
        content=obj.get("content"),  # type: ignore[arg-type]  (validated by NewNode)
        username=obj.get("username") or obj.get("user") or default_user,
        node_type=obj.get("node_type") or "observation",
        tags=tags,
        importance=obj.get("importance"),
        datetime=obj.get("datetime") or "",
        scope=obj.get("scope") or "user",  # household: every user sees it
    )


def cmd_add(cfg: Config, args: argparse.Namespace) -> int:
    default_user = args.user or cfg.agent.default_user
    nodes = []
    for number, obj in read_jsonl(args.jsonl):  # every line checked before any write
        try:
            nodes.append(node_from_line(obj, default_user))
        except BadInput as exc:
            raise BadInput(f"{args.jsonl}:{number}: {exc}") from exc
    need_llm = not args.no_llm and any(n.importance is None for n in nodes)
    with _opened(cfg, args, with_llm=need_llm) as memory:
        added = memory.add(nodes, progress=_progress)
    for node in added:
        print(
            json.dumps(
                {
                    "ok": True,
                    "node_id": node["node_id"],
                    "tags": node["tags"],
                    "importance": node["importance"],
                },
                ensure_ascii=False,
            )
        )
    _progress(f"added {len(added)} nodes")
    return 0


def _weights(text: str | None) -> tuple[float, float, float] | None:
    if not text:
        return None
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError as exc:
        raise BadInput(f"--weights must be three numbers: {text!r}") from exc
    if len(values) != 3:
        raise BadInput(f"--weights must be three numbers: {text!r}")
    return values  # type: ignore[return-value]


def _search(memory: Memory, spec: dict[str, Any]) -> list[dict[str, Any]]:
    return memory.search(
        spec.get("query"),  # type: ignore[arg-type]
        username=spec.get("user") or spec.get("username"),
        n=spec.get("n", 10),
        node_type=spec.get("node_type", "all"),
        filter_tags_all=spec.get("tags_all") or spec.get("filter_tags_all"),
        filter_tags_any=spec.get("tags_any") or spec.get("filter_tags_any"),
        stateless=bool(spec.get("stateless", True)),
        weights=_weights(spec["weights"])
        if isinstance(spec.get("weights"), str)
        else spec.get("weights"),
    )


def cmd_search(cfg: Config, args: argparse.Namespace) -> int:
    if args.query and args.queries:
        raise UsageError("give either a query or --queries FILE, not both")
    if not args.query and not args.queries:
        if not (args.tags_all or args.tags_any):
            raise UsageError("give a query, --queries FILE, or tag filters (--tags-all/--tags-any)")
        return _list_tagged(cfg, args)
    specs = (
        [obj for _, obj in read_jsonl(args.queries)]
        if args.queries
        else [
            {
                "query": args.query,
                "user": args.user,
                "n": args.n,
                "node_type": args.node_type,
                "tags_all": args.tags_all,
                "tags_any": args.tags_any,
                "stateless": args.stateless,
                "weights": args.weights,
            }
        ]
    )
    with _opened(cfg, args) as memory:
        for spec in specs:
            if args.queries:
                spec.setdefault("user", args.user)
                spec.setdefault("n", args.n)
            try:
                hits = _search(memory, spec)
            except BadInput as exc:
                if not args.queries:
                    raise
                print(json.dumps({"query": spec.get("query"), "error": str(exc)}))
                continue
            if not hits and not args.queries:
                _no_hits(memory, spec.get("user"))
            if args.json or args.queries:
                line = {"query": spec["query"], "id": spec.get("id"), "results": hits}
                print(json.dumps(line if args.queries else hits, ensure_ascii=False))
            else:
                _print_nodes(hits)
    return 0


def _list_tagged(cfg: Config, args: argparse.Namespace) -> int:
    """``memory search --tags-all …`` with no query: the newest matching nodes first."""
    with _opened(cfg, args) as memory:
        nodes = memory.get_recent(
            args.user, args.n, args.tags_all, args.node_type, filter_tags_any=args.tags_any
        )
        if not nodes:
            _no_hits(memory, args.user)
    if args.json:
        print(json.dumps(nodes, ensure_ascii=False))
    else:
        _print_nodes(nodes)
    return 0


def _print_nodes(nodes: list[dict[str, Any]]) -> None:
    for h in nodes:
        score = f"{h['score']:.3f} " if "score" in h else ""
        print(f"{score}[{h['datetime']}] #{h['node_id']} {h['content']}")
        print(f"      {' '.join(h['tags'])}")


def _no_hits(memory: Memory, user: str | None) -> None:
    """Nothing found: an error when the user has no memories at all (a typo, most likely),
    else a note on stderr (stdout stays empty, or ``[]`` with ``--json``)."""
    name = memory.resolve_user(user)
    users = memory.stats()["users"]
    if name not in users:
        known = ", ".join(repr(u) for u in users) or "none yet"
        raise BadInput(f"no memories for user {name!r} (users: {known})")
    _progress("no memories match")


def cmd_stats(cfg: Config, args: argparse.Namespace) -> int:
    with _opened(cfg, args) as memory:
        print(json.dumps(memory.stats(), indent=2, ensure_ascii=False))
    return 0


def cmd_reembed(cfg: Config, args: argparse.Namespace) -> int:
    """What the daemon does at start, by hand: after a model change (or with the daemon
    off), bring every node's vector to the current embedding model."""
    if args.batch < 1:
        raise BadInput(f"--batch must be at least 1: {args.batch}")
    with _opened(cfg, args) as memory:
        done = memory.reembed(
            args.batch, progress=lambda n, total: _progress(f"re-embedded {n}/{total}")
        )
        model = memory.embedder.name
    print(json.dumps({"reembedded": done, "embedding_model": model}, ensure_ascii=False))
    return 0


def cmd_import(cfg: Config, args: argparse.Namespace) -> int:
    with _opened(cfg, args) as memory:
        report = import_fay(memory, args.dir, args.user, progress=_progress)
    print(json.dumps(report, ensure_ascii=False))
    return 0


def cmd_export(cfg: Config, args: argparse.Namespace) -> int:
    with _opened(cfg, args) as memory:
        report = export_fay(memory, args.dir, args.user, progress=_progress)
    print(json.dumps(report, ensure_ascii=False))
    return 0


def cmd_quarantine_list(cfg: Config, args: argparse.Namespace) -> int:
    with _opened(cfg, args) as memory:
        items = quarantine.list_items(memory, None if args.status == "all" else args.status)
    for item in items:
        if args.json:
            print(json.dumps(item, ensure_ascii=False))
            continue
        p = item["payload"]
        what = p.get("content") or f"{p.get('subject')} {p.get('predicate')} {p.get('object')}"
        print(
            f"#{item['id']} {item['status']} {item['item']} user={item['username']}"
            f" trust={item['trust']} source={item['source'] or '-'}"
        )
        print(f"      {' '.join(str(what).split())}")
        print(f"      why: {item['reason']}")
    if not args.json:
        _progress(f"{len(items)} items")
    return 0


def cmd_quarantine_decide(cfg: Config, args: argparse.Namespace) -> int:
    # Approving a node scores its importance: load the LLM only then.
    with _opened(cfg, args, with_llm=args.decision == "approve") as memory:
        decide = quarantine.approve if args.decision == "approve" else quarantine.reject
        item = decide(memory, args.id)
    out = {"ok": True, "id": item["id"], "status": item["status"]}
    result = item.get("result")
    if isinstance(result, dict):
        out["node_id" if "node_id" in result else "fact_id"] = result.get(
            "node_id", result.get("fact", {}).get("id")
        )
    print(json.dumps(out, ensure_ascii=False))
    return 0


# --- fayd memory docs: MemoryFS documents (fayd/memory/documents.py) ----------------------


def add_docs_parser(sub: Any) -> None:
    d = sub.add_parser("docs", help="MemoryFS documents: personas, events, timeline, digest")
    dsub = d.add_subparsers(dest="docs_command", required=True, metavar="ACTION")
    cats = ", ".join(documents.CATEGORIES) + " (or an alias)"

    def common(parser: Any) -> None:
        parser.add_argument("--user", help="whose documents (default: agent.default_user)")

    dl = dsub.add_parser("list", help="the documents (of one user with --user)")
    dl.add_argument("--user", help="only this user")
    dl.add_argument("--json", action="store_true", help="one JSON object per line")
    dl.set_defaults(func=cmd_docs_list)

    ds = dsub.add_parser("show", help="a document's text, or with --prompt what is injected")
    ds.add_argument("category", nargs="?", help=cats)
    common(ds)
    ds.add_argument("--conversation", default="", help="for important_event and life_sim")
    ds.add_argument("--json", action="store_true", help="the document and its entries as JSON")
    ds.add_argument("--prompt", action="store_true", help="the injection text for --session")
    ds.add_argument("--session", default="", help="the current conversation (with --prompt)")
    ds.add_argument("--lang", default="zh", choices=sorted(documents.HEADERS))
    ds.set_defaults(func=cmd_docs_show)

    dset = dsub.add_parser("set", help="replace a document (entries between blank lines)")
    dset.add_argument("category", help=cats)
    common(dset)
    src = dset.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", help="the new text")
    src.add_argument("--file", help="a file with the new text ('-': stdin)")
    dset.add_argument("--conversation", default="", help=_CONV_HELP)
    dset.set_defaults(func=cmd_docs_set)

    da = dsub.add_parser("append", help="add one entry (the oldest go past the caps)")
    da.add_argument("category", help=cats)
    da.add_argument("text")
    common(da)
    da.add_argument("--conversation", default="", help=_CONV_HELP)
    da.add_argument("--at", help="the entry's local time, YYYY-MM-DD HH:MM (default: now)")
    da.set_defaults(func=cmd_docs_append)


_CONV_HELP = "the conversation (required for important_event, life_sim and timeline entries)"


def _docs(cfg: Config, args: argparse.Namespace) -> documents.Documents:
    """Documents need no models: the database alone."""
    return documents.Documents(Store(args.db or cfg.db_path))


def _docs_user(cfg: Config, args: argparse.Namespace) -> str:
    return args.user or cfg.agent.default_user


def cmd_docs_list(cfg: Config, args: argparse.Namespace) -> int:
    docs = _docs(cfg, args)
    try:
        rows = docs.list_documents(args.user)
    finally:
        docs.store.close()
    for row in rows:
        if args.json:
            print(json.dumps(row, ensure_ascii=False))
        else:
            conv = f" conversation={row['conversation']}" if row["conversation"] else ""
            print(
                f"{row['order']:>3} {row['category']:<17} user={row['username']}{conv}"
                f" entries={row['entries']} chars={row['chars']} v{row['version']}"
            )
    if not args.json:
        _progress(f"{len(rows)} documents")
    return 0


def cmd_docs_show(cfg: Config, args: argparse.Namespace) -> int:
    if bool(args.prompt) == bool(args.category):
        raise BadInput("give either a CATEGORY or --prompt")
    docs = _docs(cfg, args)
    try:
        if args.prompt:
            print(docs.render(_docs_user(cfg, args), args.session, args.lang))
            return 0
        doc = docs.read(_docs_user(cfg, args), args.category, args.conversation)
    finally:
        docs.store.close()
    if doc is None:
        raise BadInput(f"no {documents.category(args.category)} document for that user")
    if args.json:
        entries = [
            {"id": e.id, "at": e.at, "stamp": e.stamp(), "conversation": e.conversation,
             "text": e.text}
            for e in doc.entries
        ]  # fmt: skip
        print(json.dumps({**doc.summary(), "items": entries}, ensure_ascii=False))
    else:
        print(doc.text())
    return 0


def cmd_docs_set(cfg: Config, args: argparse.Namespace) -> int:
    if args.file:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text("utf-8")
    else:
        text = args.text
    docs = _docs(cfg, args)
    try:
        out = docs.set(_docs_user(cfg, args), args.category, text, args.conversation)
    finally:
        docs.store.close()
    print(json.dumps({"ok": True, **out}, ensure_ascii=False))
    return 0


def cmd_docs_append(cfg: Config, args: argparse.Namespace) -> int:
    at = documents.parse_stamp(args.at) if args.at else None
    docs = _docs(cfg, args)
    try:
        out = docs.append(_docs_user(cfg, args), args.category, args.text, args.conversation, at)
    finally:
        docs.store.close()
    print(json.dumps({"ok": True, **out}, ensure_ascii=False))
    return 0
