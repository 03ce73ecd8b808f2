"""Memory search at 10k and 100k nodes: fayd's indexed retrieval vs Fay's full scan.

    .venv/bin/python benchmarks/memory_search.py [--sizes 10000 100000] [--queries 200]

Prints one JSON object keyed by size: search p50/p95 (end to end: embed the query with
MiniLM, rank, fetch the winners from SQLite), rank-only p50/p95, write throughput through the
real write path (MiniLM embeddings, one transaction per batch of 64, importance given), RSS,
and a faithful re-implementation of Fay's ``MemoryStream.retrieve`` (a Python loop over every
node with its embedding looked up by content as a JSON list, dict min-max, full sort) over the
same nodes and queries → speedup. Each size runs in its own process so RSS is its own.

Bulk nodes carry synthetic unit vectors with the spectrum MiniLM gives real sentences (the
top 32/64/96/128 of 384 axes hold ~0.48/0.67/0.77/0.83 of the energy, measured on 30k
sentences): from 20k rows a search reads a 96-dimension projection first and scores only a
shortlist exactly, so what it finds depends on that structure (isotropic random vectors,
which no embedding model produces, would defeat any projection). ``recall_at_10`` is the
share of the exact path's top 10 (``rank(..., shortlist=0)``) that the default path returns,
over queries drawn like the nodes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TOPICS = ["tea", "garden", "football", "doctor", "music", "weather", "cooking", "travel", "pills"]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def synthetic(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors with a MiniLM-like spectrum (as in tests/test_memory_index.py)."""
    scale = ((np.arange(dim) + 39.0) ** -0.96).astype(np.float32)
    rot = np.linalg.qr(rng.standard_normal((dim, dim)))[0].astype(np.float32)
    out = np.empty((n, dim), np.float32)
    for s in range(0, n, 10_000):
        e = min(n, s + 10_000)
        out[s:e] = (rng.standard_normal((e - s, dim)).astype(np.float32) * scale) @ rot
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def fay_retrieve(nodes, embeddings, focal_vec, n_count=10, hp=(0, 1, 0.5)):
    """Fay's retrieve (genagents memory_stream) as written: per-node loops and dicts."""

    def cos_sim(a, b):
        return np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))

    def normalize(d):
        lo, hi = min(d.values()), max(d.values())
        if hi - lo == 0:
            return {k: 0.5 for k in d}
        return {k: (v - lo) / (hi - lo) for k, v in d.items()}

    max_step = max(nd["last_retrieved"] for nd in nodes)
    recency = normalize({nd["node_id"]: 0.99 ** (max_step - nd["last_retrieved"]) for nd in nodes})
    importance = normalize({nd["node_id"]: nd["importance"] for nd in nodes})
    relevance = normalize(
        {nd["node_id"]: cos_sim(embeddings[nd["content"]], focal_vec) for nd in nodes}
    )
    master = {k: hp[0] * recency[k] + hp[1] * relevance[k] + hp[2] * importance[k] for k in recency}
    top = sorted(master.items(), key=lambda kv: kv[1], reverse=True)[:n_count]
    by_id = {nd["node_id"]: nd for nd in nodes}
    return sorted((by_id[k] for k, _ in top), key=lambda nd: nd["created"])


def run_size(size: int, queries: int) -> dict[str, float]:
    from fayd.memory import Memory, NewNode
    from fayd.memory import nodes as db_nodes
    from fayd.memory.open import load_embedder
    from fayd.memory.retrieve import rank
    from fayd.store import Store

    embedder = load_embedder()
    rng = np.random.default_rng(size)
    folder = Path(tempfile.mkdtemp(prefix="fayd-bench-"))
    store = Store(folder / "fayd.db")
    memory = Memory(store, embedder)

    # Bulk: the real insert path with random unit vectors, in transactions of 5000.
    vecs = synthetic(size + 200, embedder.dim, rng)
    vecs, probes = vecs[:size], vecs[size:]
    contents = [f"ann said something about {TOPICS[i % 9]} (note {i})" for i in range(size)]
    for start in range(0, size, 5000):
        batch = [
            NewNode(
                contents[i],
                "ann",
                tags=[f"kind:{'fact' if i % 3 else 'event'}", f"domain:{TOPICS[i % 9]}"],
                importance=float(i % 10 + 1),
                datetime=f"2025/{i % 12 + 1:02d}/{i % 28 + 1:02d} 10:00:00",
            )
            for i in range(start, min(size, start + 5000))
        ]
        store.call(
            db_nodes.insert_nodes,
            batch,
            [b.importance for b in batch],
            vecs[start : start + len(batch)],
            embedder.name,
        )
    memory.forget_cache()

    # Writes through the full path (MiniLM + one transaction per batch of 64).
    texts = [f"Ann mentioned her {TOPICS[i % 9]} again, time {i}" for i in range(512)]
    t0 = time.perf_counter()
    for start in range(0, len(texts), 64):
        memory.add(
            [
                NewNode(t, "ann", tags=["kind:fact", "source:bench"], importance=5.0)
                for t in texts[start : start + 64]
            ]
        )
    writes_per_s = len(texts) / (time.perf_counter() - t0)

    qtexts = [f"what did Ann say about {TOPICS[i % 9]} {i}" for i in range(queries)]
    qvecs = embedder.embed(qtexts)
    memory.search(qtexts[0], "ann")  # warm: loads the index
    index = memory._indexes["ann"]
    e2e, ranked = [], []
    for q, v in zip(qtexts, qvecs, strict=True):
        t = time.perf_counter()
        memory.search(q, "ann", n=10)
        e2e.append(time.perf_counter() - t)
        t = time.perf_counter()
        rank(index, v, 10, (0.0, 1.0, 0.5), time.time(), 72 * 3600, 0.1)
        ranked.append(time.perf_counter() - t)

    found = []
    for v in probes:
        fast, _ = rank(index, v, 10, (0.0, 1.0, 0.0), time.time(), 168 * 3600, 0.1)
        exact, _ = rank(index, v, 10, (0.0, 1.0, 0.0), time.time(), 168 * 3600, 0.1, shortlist=0)
        found.append(len(set(fast.tolist()) & set(exact.tolist())) / 10)

    rss = rss_mb()  # before Fay's structures below (its list-of-floats vectors are huge)
    # Fay's full scan over the same nodes: nodes as dicts, embeddings as JSON lists by content.
    fay_nodes = [
        {
            "node_id": i,
            "content": contents[i],
            "importance": i % 10 + 1,
            "created": i,
            "last_retrieved": i,
        }
        for i in range(size)
    ]
    embeddings = {contents[i]: vecs[i].tolist() for i in range(size)}
    fay = []
    for v in qvecs[: max(3, min(20, 200_000 // size))]:
        t = time.perf_counter()
        fay_retrieve(fay_nodes, embeddings, v.tolist())
        fay.append(time.perf_counter() - t)
    del embeddings, fay_nodes
    p = lambda xs, q: round(float(np.percentile(xs, q)) * 1000, 2)  # noqa: E731
    result = {
        "p50_ms": p(e2e, 50),
        "p95_ms": p(e2e, 95),
        "rank_p50_ms": p(ranked, 50),
        "rank_p95_ms": p(ranked, 95),
        "writes_per_s": round(writes_per_s, 1),
        "rss_mb": round(rss, 1),
        "index_mb": round(index.memory_bytes() / 2**20, 1),
        "recall_at_10": round(float(np.mean(found)), 4),
        "fullscan_p50_ms": p(fay, 50),
        "fullscan_p95_ms": p(fay, 95),
        "speedup": round(float(np.percentile(fay, 95) / np.percentile(e2e, 95)), 1),
    }
    store.close()
    for f in folder.iterdir():
        f.unlink()
    folder.rmdir()
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args.queries)))
        return
    out = {}
    for size in args.sizes:
        child = subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--queries", str(args.queries)],
            capture_output=True,
            text=True,
            check=True,
        )
        out[str(size)] = json.loads(child.stdout.strip().splitlines()[-1])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
