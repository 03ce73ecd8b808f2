"""The memory stream of every user: writes, retrieval and Fay's read tools.

Compute first, lock last: importance (the LLM) and embeddings are computed outside the
lock; the lock is held only to commit the rows (one transaction) and mirror them into the
in-memory index, so a slow model never blocks readers. A write is acknowledged only after
its transaction committed (WAL: it survives a kill -9 of the process).
All methods block: call them from a worker thread in async code.

Scope: a ``household`` node (a family rule, a carer's visit) is seen by every user, a
``user`` node only by its writer. A user's index holds the user's own rows and a mirror of
every household row that others wrote, so one ``rank`` scores both together (one min-max,
one fusion) and a user without household nodes searches exactly as before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from fayd.embedding import EmbedderLike
from fayd.memory import dates, extract, hop, lifts, neighbours, speakers
from fayd.memory import facts as db_facts
from fayd.memory import nodes as db_nodes
from fayd.memory.config import MemoryConfig
from fayd.memory.errors import BadInput
from fayd.memory.folds import Change, Folds, Observed
from fayd.memory.importance import ImportanceScorer
from fayd.memory.index import APPROX_MIN_ROWS, Row, UserIndex
from fayd.memory.nodes import NewNode
from fayd.memory.port import HeldWriter
from fayd.memory.reembed import BATCH, ReembedProgress, reembed_all, write_vectors
from fayd.memory.retrieve import Fusion, distinct, rank
from fayd.memory.seen import OtherWriters, catch_up
from fayd.memory.seen import mirror as _mirror
from fayd.memory.tags import NODE_TYPES, clean_tag, normalize_tags
from fayd.store import Store
from fayd.store import lexical as db_lexical

MAX_N = 1000
EMBED_CHUNK = 1024
Progress = Callable[[str], None]
#: How an approved quarantine item is written, per kind (``quarantine.approve``): the
#: quarantine knows no writer itself, so facts and extraction may hold items there.
HELD_WRITERS: Mapping[str, HeldWriter] = {
    "fact": db_facts.write_held,
    "document": extract.write_held,
}


class Memory:
    store: Store
    embedder: EmbedderLike
    cfg: MemoryConfig
    held_writers: Mapping[str, HeldWriter]

    def __init__(
        self,
        store: Store,
        embedder: EmbedderLike,
        scorer: ImportanceScorer | None = None,
        cfg: MemoryConfig | None = None,
        days_named: dates.DaysNamed | None = None,
    ) -> None:
        """``days_named``: reads the days a turn names, for ``when:`` tags and a question's
        day lift (fayd.agent.clock.days.named; None: no days read)."""
        self.store = store
        self.embedder = embedder
        self.days_named = days_named
        self.scorer = scorer or ImportanceScorer(None)
        self.cfg = cfg or MemoryConfig()
        self.held_writers = HELD_WRITERS
        self._lock = threading.RLock()
        self._indexes: dict[str, UserIndex] = {}
        c = self.cfg
        self.fusion = Fusion(c.lexical_fusion, c.lexical_weight, c.rrf_k, c.lexical_depth)
        #: (db, query, username, limit) -> [(node id, BM25 score)], best first.
        self.lexical_search = db_lexical.search
        #: Routine observations folded into one node per source, kind and hour.
        self.folds = Folds()
        #: What other processes write meanwhile (fayd.memory.seen), seen from now on.
        self.others = OtherWriters()
        if embedder is not None:  # without one there is no search, so nothing to catch up on
            self.store.call(self.others.look, embedder.name, embedder.dim)

    # --- writes ------------------------------------------------------------------------
    def remember(
        self,
        content: str,
        username: str | None = None,
        kind: str | None = "observation",
        source: str | None = None,
        persistent: bool = False,
        extra_tags: Sequence[str] | None = None,
        node_type: str = "observation",
        importance: float | None = None,
        scope: str = "user",
    ) -> dict[str, Any]:
        """One node with Fay's tag rules; returns it (Fay's node shape). Every write path
        tags its source: without one, the node is fayd's own (``source:fay_self``).
        ``scope="household"``: every user sees it (written by ``username``)."""
        tags = normalize_tags(kind, source or "fay_self", persistent, list(extra_tags or []))
        node = NewNode(
            content=content,
            username=self.resolve_user(username),
            node_type=node_type,
            tags=tags,
            importance=importance,
            scope=scope,
        )
        return self.add([node])[0]

    def add(self, new: list[NewNode], progress: Progress | None = None) -> list[dict[str, Any]]:
        """Write a batch (already validated) in one transaction: all or nothing."""
        if not new:
            return []
        for n in new:  # the days a turn names, its speaker, as tags (not on Fay imports:
            if n.fay_node_id is not None:  # those go back out as they came in)
                continue
            said = datetime.fromtimestamp(n.created_at)
            found = dates.tags(n.content, said, self.days_named) + speakers.tags(n.content)
            n.tags = sorted(set(n.tags) | set(found))
        importances = [
            n.importance if n.importance is not None else self.scorer.score(n.content) for n in new
        ]
        parts = []
        for start in range(0, len(new), EMBED_CHUNK):
            texts = [speakers.without(n.content) for n in new[start : start + EMBED_CHUNK]]
            parts.append(self.embedder.embed(texts))
            if progress and len(new) > EMBED_CHUNK:
                progress(f"embedded {start + len(texts)}/{len(new)}")
        vectors = np.concatenate(parts)
        with self._lock:
            for n in new:
                self._index(n.username)  # load before the insert, so rows are not doubled
            rows = self.store.call(
                db_nodes.insert_nodes, new, importances, vectors, self.embedder.name
            )
            self.others.wrote([row.id for row in rows])
            for n, row in zip(new, rows, strict=True):
                self._indexes[n.username].extend([row])
            # A household row also goes into every other loaded index (unloaded ones read
            # it from the database when they load).
            shared = [
                (n.username, r) for n, r in zip(new, rows, strict=True) if n.scope == "household"
            ]
            if shared:
                for user, index in self._indexes.items():
                    _mirror(index, [r for writer, r in shared if writer != user])
        return [
            fay_node(
                {
                    "id": r.id,
                    "node_type": n.node_type,
                    "content": n.content,
                    "importance": r.importance,
                    "datetime": n.datetime,
                    "step": r.step,
                    "pointer_id": n.pointer_id,
                    "tags": n.tags,
                }
            )
            for n, r in zip(new, rows, strict=True)
        ]

    def fold(self, events: list[Observed], also: Callable[[Any], None] | None = None) -> None:
        """Fold routine events into their folds' nodes (``fayd.memory.folds``): a new node
        for a fold not yet written, else its node rewritten (content, vector, lexical row).
        ``also(db)`` runs in the same transaction (the caller marks its events done)."""
        if not events:
            return
        changes = self.folds.changes(events)
        vectors = self.embedder.embed([speakers.without(c.tally.content()) for c in changes])
        new = [(c, v) for c, v in zip(changes, vectors, strict=True) if c.tally.node_id is None]
        old = [(c, v) for c, v in zip(changes, vectors, strict=True) if c.tally.node_id is not None]
        nodes = [_fold_node(c) for c, _ in new]

        def write(db: Any) -> list[Row]:
            rows = []
            if nodes:
                new_vectors = np.stack([v for _, v in new])
                importances = [float(n.importance or 0.0) for n in nodes]
                model = self.embedder.name
                rows = db_nodes.insert_nodes(db, nodes, importances, new_vectors, model)
            rewrites = [(c.tally.node_id, c.tally.content()) for c, _ in old]
            db_nodes.rewrite_contents(db, rewrites, [v for _, v in old], self.embedder.name)
            if also is not None:
                also(db)
            return rows

        with self._lock:
            for c in changes:
                self._index(c.tally.username)  # loaded before the insert: rows not doubled
            rows = self.store.call(write)
            self.others.wrote([row.id for row in rows])
            for (c, _), row in zip(new, rows, strict=True):
                c.tally.node_id = row.id
                self._indexes[c.tally.username].extend([row])
            for c, vector in old:
                index = self._indexes[c.tally.username]
                if c.tally.node_id in index.pos:
                    index.set_vectors(np.array([index.pos[c.tally.node_id]]), vector[None])
        self.folds.committed(changes)

    # --- retrieval ---------------------------------------------------------------------
    def search(
        self,
        query: str,
        username: str | None = None,
        n: int = 10,
        node_type: str = "all",
        filter_tags_all: list[str] | None = None,
        filter_tags_any: list[str] | None = None,
        stateless: bool = True,
        weights: tuple[float, float, float] | None = None,
        now: float | None = None,
    ) -> list[dict[str, Any]]:
        """The best ``n`` nodes for ``query`` among the user's own and the household nodes,
        best first, each with its ``score``."""
        if not isinstance(query, str) or not query.strip():
            raise BadInput("query must be a non-empty string")
        n = _check_n(n)
        _check_type(node_type)
        tags_all = [clean_tag(t) for t in filter_tags_all or []]
        tags_any = [clean_tag(t) for t in filter_tags_any or []]
        now = time.time() if now is None else now
        user = self.resolve_user(username)
        fusion = self.fusion
        # BM25 on the store's thread while MiniLM embeds the query here (both release the
        # GIL): the lexical search costs no time of its own.
        pending = None
        if fusion.mode != "off":
            pending = self.store.submit(self.lexical_search, query, user, max(fusion.depth, n))
        qvec = self.embedder.embed([query])[0]
        hits = pending.result() if pending is not None else []
        with self._lock:
            catch_up(self.store, self.embedder, self.others, self._indexes)
            index = self._index(user)
            mask = index.mask(node_type, tags_all, tags_any)
            found_pos = [(index.pos[i], s) for i, s in hits if i in index.pos]
            lexical = (
                np.array([p for p, _ in found_pos], np.int64),
                np.array([s for _, s in found_pos], np.float64),
            )
            c = self.cfg
            boost = lifts.named_rows(c, index, query, now, self.days_named)
            expand = c.neighbour_weight > 0 and c.neighbour_radius > 0
            pool = max(n, c.neighbour_pool) if expand else n
            if c.distinct:
                pool = max(pool, 2 * n)  # room for the repeats left out
            positions, scores = rank(
                index,
                qvec,
                pool,
                weights or self.cfg.weights,
                now,
                self.cfg.recency_half_life_h * 3600,
                self.cfg.recency_floor,
                mask,
                lexical,
                fusion,
                boost=boost,
            )
            if expand:
                positions, scores = neighbours.expand(
                    index, positions, scores, pool, c.neighbour_weight, c.neighbour_radius, mask
                )
            if c.hop_weight > 0 and fusion.mode != "off" and positions.size:
                lift = c.hop_weight * (sum(c.weights) or 1.0)
                positions, scores = hop.second(
                    index,
                    query,
                    (positions, scores),
                    mask,
                    lambda ids: self.store.call(db_nodes.fetch_nodes, ids),
                    lambda q: self.store.call(self.lexical_search, q, user, 20),
                    lift,
                )
            if c.distinct:
                positions, scores = distinct(index, positions, scores, n)
            positions, scores = positions[:n], scores[:n]
            ids = [int(i) for i in index.ids[positions]]
            if not stateless and ids:
                self.store.call(db_nodes.touch, ids, now, index.max_step, user)
                self._touch(ids, now)
            found = self.store.call(db_nodes.fetch_nodes, ids)
        return [
            {**fay_node(found[i]), "score": round(float(s), 6)}
            for i, s in zip(ids, scores, strict=True)
        ]

    def mark_retrieved(
        self, username: str | None, ids: Sequence[int], now: float | None = None
    ) -> None:
        """Count nodes as retrieved now (context assembly searches stateless, then marks
        only the nodes that made it into the prompt)."""
        now = time.time() if now is None else now
        user = self.resolve_user(username)
        with self._lock:
            index = self._index(user)
            known = [int(i) for i in ids if int(i) in index.pos]
            if known:
                self.store.call(db_nodes.touch, known, now, index.max_step, user)
                self._touch(known, now)

    def _touch(self, ids: list[int], now: float) -> None:
        """Mirror a touch into every loaded index that holds the nodes (a household node is
        in each user's; the database has one ``last_retrieved_at`` per node)."""
        for index in self._indexes.values():
            positions = [index.pos[i] for i in ids if i in index.pos]
            if positions:
                index.touch(np.array(positions, np.int64), now)

    # --- re-embedding after a model change (fayd/memory/reembed.py) -------------------
    def reembed(self, batch: int = BATCH, progress: ReembedProgress | None = None) -> int:
        """Embed again every node (all users, both scopes) that has no vector of the current
        model, ``batch`` nodes per transaction; returns how many. ``progress(done, total)``
        is called after each batch. Interrupted, it keeps the batches done: a rerun goes on."""
        return reembed_all(self, batch, progress)

    def replace_vectors(
        self, ids: list[int], vectors: np.ndarray, model: str
    ) -> tuple[list[int], dict[str, int]]:
        """Commit new vectors (one transaction) and set them in every loaded index that holds
        the nodes (a household node is in each user's). Returns the ids written and the
        rows changed per loaded index."""
        with self._lock:  # held across commit and mirror, so no index loads in between
            written = self.store.call(write_vectors, ids, vectors, model)
            row = {node_id: k for k, node_id in enumerate(ids)}
            changed = {}
            for user, index in self._indexes.items():
                found = [(index.pos[i], row[i]) for i in written if i in index.pos]
                if found:
                    positions = np.array([p for p, _ in found], np.int64)
                    index.set_vectors(positions, vectors[[r for _, r in found]])
                    changed[user] = len(found)
        return written, changed

    def refit_projections(self, changed: dict[str, int]) -> None:
        """Refit the projection of a large loaded index when most of its vectors are new:
        it was fitted on the few current vectors the index had when it loaded (or on none),
        and such axes would make its shortlist miss. ~0.1 s at 100k rows, once per pass."""
        with self._lock:
            for user, n in changed.items():
                index = self._indexes.get(user)
                if index is None or index.n < APPROX_MIN_ROWS:
                    continue
                if index.proj is None or 4 * n >= index.n_vec:
                    index.fit_projection()

    def get_recent(
        self,
        username: str | None = None,
        n: int = 20,
        filter_tags_all: list[str] | None = None,
        node_type: str = "all",
        filter_tags_any: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """The user's newest nodes (and the household's), with all of ``filter_tags_all``
        and one of ``filter_tags_any`` when given."""
        _check_type(node_type)
        tags = [clean_tag(t) for t in filter_tags_all or []]
        any_of = [clean_tag(t) for t in filter_tags_any or []]
        order = "n.created_at DESC, n.id DESC"
        return self._select(username, _check_n(n), node_type, tags, order, tags_any=any_of)

    def get_active_rules(self, username: str | None = None, n: int = 50) -> list[dict[str, Any]]:
        tags = ["kind:rule", "persistent:true"]
        return self._select(username, _check_n(n), "all", tags, "n.importance DESC, n.step DESC")

    def get_reflections(self, username: str | None = None, n: int = 10) -> list[dict[str, Any]]:
        where = (
            "n.node_type = 'reflection' OR EXISTS (SELECT 1 FROM memory_tags t"
            " WHERE t.node_id = n.id AND t.tag = 'kind:insight')"
        )
        order = "n.created_at DESC, n.id DESC"
        return self._select(username, _check_n(n), "all", [], order, where)

    def _select(
        self,
        username: str | None,
        n: int,
        node_type: str,
        tags: list[str],
        order: str,
        where: str = "",
        tags_any: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        def run(db):
            user = self.resolve_user(username)
            ids = db_nodes.select_ids(
                db, user, n, node_type, tags, order, where, household=True, tags_any=tags_any
            )
            found = db_nodes.fetch_nodes(db, ids)
            return [fay_node(found[i]) for i in ids]

        return self.store.call(run)

    # --- portrait, schema, stats -------------------------------------------------------
    def get_user_profile(self, username: str | None = None) -> dict[str, str]:
        return self.store.call(db_nodes.get_profile, self.resolve_user(username))

    def set_user_profile(
        self, username: str | None, portrait: str | None = None, extra_info: str | None = None
    ) -> None:
        if portrait is not None and len(portrait) > 1000:
            raise BadInput("a portrait is at most 1000 characters")
        self.store.call(db_nodes.set_profile, self.resolve_user(username), portrait, extra_info)

    def stats(self) -> dict[str, Any]:
        out = self.store.call(db_nodes.stats, self.embedder.name, self.embedder.dim)
        with self._lock:
            out["index_mb"] = round(
                sum(i.memory_bytes() for i in self._indexes.values()) / 2**20, 1
            )
        return out

    # --- helpers -----------------------------------------------------------------------
    def resolve_user(self, username: str | None) -> str:
        """The user a call is for: ``username``, or the default user when none is named."""
        if username is None or username == "":
            return self.cfg.default_user
        if not isinstance(username, str) or not username.strip():
            raise BadInput("username must be a non-empty string")
        return username

    def _index(self, username: str) -> UserIndex:
        """The user's index (own rows, then the household rows others wrote), loaded from the
        database on first use (call under the lock)."""
        index = self._indexes.get(username)
        if index is None:
            model, dim = self.embedder.name, self.embedder.dim
            rows = self.store.call(db_nodes.load_rows, username, model, dim)
            shared = self.store.call(db_nodes.load_household_rows, username, model, dim)
            index = UserIndex(dim, capacity=max(1024, len(rows) + len(shared)))
            index.extend(rows)
            _mirror(index, shared)
            self._indexes[username] = index
        return index

    def forget_cache(self) -> None:
        """Drop the in-memory indexes (they reload from the database on next use)."""
        with self._lock:
            self._indexes.clear()


def _fold_node(change: Change) -> NewNode:
    first = change.first
    return NewNode(
        content=change.tally.content(),
        username=change.tally.username,
        tags=change.tags,
        importance=change.tally.importance,
        datetime=datetime.fromtimestamp(first.at).strftime(db_nodes.FAY_TIME),
    )


def fay_node(node: dict[str, Any]) -> dict[str, Any]:
    """Fay's returned-node shape; ``created`` is the node's time step, as in Fay."""
    imp = node["importance"]
    return {
        "node_id": node["id"],
        "node_type": node["node_type"],
        "content": node["content"],
        "importance": int(imp) if float(imp).is_integer() else imp,
        "datetime": node["datetime"],
        "created": node["step"],
        "pointer_id": node["pointer_id"],
        "tags": list(node["tags"]),
    }


def _check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise BadInput(f"n must be an integer from 1 to {MAX_N}: {n!r}")
    return n


def _check_type(node_type: str) -> None:
    if node_type != "all" and node_type not in NODE_TYPES:
        raise BadInput(f"node_type must be all, {', '.join(NODE_TYPES)}: {node_type!r}")


__all__ = ["Memory", "NewNode", "fay_node"]
