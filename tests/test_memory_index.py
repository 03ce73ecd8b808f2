"""The projected first pass of large indexes (fayd.memory.index / retrieve): the shortlist
finds the exact top 10, scores are exact, and the projection follows writes."""

from __future__ import annotations

import numpy as np
import pytest

from fayd.memory.index import APPROX_MIN_ROWS, LOW_STEP, PROJ_DIM, Row, UserIndex
from fayd.memory.int8dot import QUERY_MAX, int8_dot, to_rows
from fayd.memory.retrieve import Fusion, rank

DIM = 384
NOW = 1e9
HALF_LIFE = 168 * 3600.0
N = APPROX_MIN_ROWS + 10_000


def synthetic(n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit vectors with a spectrum like MiniLM's on real sentences (the top 32/64/96/128
    axes hold ~0.48/0.67/0.77/0.83 of the energy, as measured on 30k sentences)."""
    scale = ((np.arange(DIM) + 39.0) ** -0.96).astype(np.float32)
    rot = np.linalg.qr(rng.standard_normal((DIM, DIM)))[0].astype(np.float32)
    x = (rng.standard_normal((n, DIM)).astype(np.float32) * scale) @ rot
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def rows(vecs: np.ndarray, start: int = 0) -> list[Row]:
    return [
        Row(
            start + i + 1,
            ("observation", "conversation", "reflection")[(start + i) % 3],
            float((start + i) % 10 + 1),
            NOW - (start + i) * 97.0,
            start + i,
            [f"t:{(start + i) % 7}"],
            v,
        )
        for i, v in enumerate(vecs)
    ]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    vecs = synthetic(N + 2000, rng)
    index = UserIndex(DIM)
    index.extend(rows(vecs[:N]))
    return index, vecs[N:]


def test_projection_is_built_above_the_threshold_only() -> None:
    rng = np.random.default_rng(1)
    small = UserIndex(DIM)
    small.extend(rows(synthetic(1000, rng)))
    assert small.low is None and small.approx_relevance(np.ones(DIM, np.float32)) is None


@pytest.mark.parametrize(
    "weights, kw, count",
    [
        ((0.0, 1.0, 0.0), {}, 2000),  # the search default
        ((0.2, 1.0, 0.0), {}, 2000),  # the chat default
        ((0.0, 1.0, 0.5), {}, 300),
        ((0.5, 1.0, 0.5), {"node_type": "conversation"}, 300),
        ((0.0, 1.0, 0.0), {"tags_any": ["t:3"]}, 300),  # a seventh: gathered, exact
    ],
)
def test_shortlist_recall_of_the_exact_top_10(data, weights, kw, count) -> None:
    index, queries = data
    queries = queries[:count]
    mask = index.mask(kw.get("node_type", "all"), None, kw.get("tags_any"))
    found, identical = [], 0
    for q in queries:
        fast, fast_scores = rank(index, q, 10, weights, NOW, HALF_LIFE, 0.1, mask)
        exact, exact_scores = rank(index, q, 10, weights, NOW, HALF_LIFE, 0.1, mask, shortlist=0)
        found.append(len(set(fast.tolist()) & set(exact.tolist())) / 10)
        identical += fast.tolist() == exact.tolist()
        # A node in both is scored exactly: the same score as on the exact path (up to
        # float32 rounding and a relevance minimum that may come from the first pass).
        common = np.isin(fast, exact)
        want = dict(zip(exact.tolist(), exact_scores.tolist(), strict=True))
        got = [want[p] for p in fast[common].tolist()]
        assert np.allclose(fast_scores[common], got, atol=1e-4)
    assert np.mean(found) >= 0.99
    assert identical / len(queries) >= 0.95


def test_lexical_hits_are_scored_even_when_far_from_the_query(data) -> None:
    index, queries = data
    fusion = Fusion("score", 2.0)
    rng = np.random.default_rng(3)
    for q in queries[:200]:
        far = np.argsort(index.vecs[: index.n] @ q)[:5]  # the least relevant rows
        bm25 = np.sort(rng.uniform(1, 10, far.size))[::-1]
        lexical = (far, bm25)
        args = (index, q, 10, (0.0, 1.0, 0.0), NOW, HALF_LIFE, 0.1, None, lexical, fusion)
        fast, fast_scores = rank(*args)
        exact, exact_scores = rank(*args, shortlist=0)
        assert far[0] in fast.tolist()  # the best BM25 hit, least relevant by its vector
        assert set(fast.tolist()) == set(exact.tolist())
        assert np.allclose(fast_scores, exact_scores, atol=1e-4)  # near-ties may swap


def test_writes_keep_the_projection_in_step() -> None:
    rng = np.random.default_rng(5)
    vecs = synthetic(2 * APPROX_MIN_ROWS + 100, rng)
    index = UserIndex(DIM)
    index.extend(rows(vecs[: APPROX_MIN_ROWS - 1]))
    assert index.low is None
    index.extend(rows(vecs[APPROX_MIN_ROWS - 1 : APPROX_MIN_ROWS + 50], APPROX_MIN_ROWS - 1))
    assert index.low is not None and index.proj is not None
    first = index.proj.copy()
    # Appended rows are projected on the current axes as they come.
    extra = vecs[APPROX_MIN_ROWS + 50 : APPROX_MIN_ROWS + 60]
    index.extend(rows(extra, APPROX_MIN_ROWS + 50))
    assert np.array_equal(index.proj, first)
    assert _close(index, slice(index.n - 10, index.n), extra @ first)
    # A node written now is found first for its own vector.
    pos, _ = rank(index, extra[-1], 1, (0.0, 1.0, 0.0), NOW, HALF_LIFE, 0.1)
    assert int(index.ids[pos[0]]) == APPROX_MIN_ROWS + 60
    # Doubling refits the axes over all rows.
    index.extend(rows(vecs[APPROX_MIN_ROWS + 60 :], APPROX_MIN_ROWS + 60))
    assert index.n == 2 * APPROX_MIN_ROWS + 100
    assert not np.array_equal(index.proj, first)
    assert _close(index, slice(0, index.n), index.vecs[: index.n] @ index.proj)
    assert index.memory_bytes() >= index.low.nbytes + index.vecs.nbytes


def test_touch_and_missing_vectors_on_the_shortlist_path(data) -> None:
    index, queries = data
    q = queries[0]
    exact, _ = rank(index, q, 20, (0.0, 1.0, 0.0), NOW, HALF_LIFE, 0.1, shortlist=0)
    # Recency: rows touched now outrank the others when recency dominates.
    saved = index.last_retrieved[: index.n].copy()
    try:
        index.touch(exact[10:20], NOW)
        weights = (5.0, 1.0, 0.0)
        fast, fs = rank(index, q, 10, weights, NOW, HALF_LIFE, 0.1)
        slow, ss = rank(index, q, 10, weights, NOW, HALF_LIFE, 0.1, shortlist=0)
        assert set(fast.tolist()) == set(slow.tolist()) == set(exact[10:20].tolist())
        assert np.allclose(fs, ss, atol=1e-4)  # near-ties may swap
    finally:
        index.last_retrieved[: index.n] = saved
    # A node without a vector of the current model scores relevance 0.5 on both paths.
    store = index.has_vec[exact[0]]
    index.has_vec[exact[0]] = False
    try:
        fast, fs = rank(index, q, 10, (0.0, 1.0, 0.0), NOW, HALF_LIFE, 0.1)
        slow, ss = rank(index, q, 10, (0.0, 1.0, 0.0), NOW, HALF_LIFE, 0.1, shortlist=0)
        assert fast.tolist() == slow.tolist() and np.allclose(fs, ss, atol=1e-4)
    finally:
        index.has_vec[exact[0]] = store


def _close(index: UserIndex, rows: slice, want: np.ndarray) -> bool:
    """The int8 projections are within half a step of the float ones on every axis."""
    return bool(np.all(np.abs(index.projected(rows) - want) <= LOW_STEP / 2 + 1e-6))


def test_the_int8_first_pass_is_the_projected_product_to_a_step() -> None:
    rng = np.random.default_rng(11)
    vecs = synthetic(APPROX_MIN_ROWS + 550, rng)  # one draw: queries like the rows
    index = UserIndex(DIM)
    index.extend(rows(vecs[:-50]))
    assert index.low is not None and index.low.dtype == np.uint8
    assert index.low.nbytes == len(index.ids) * PROJ_DIM  # a byte an axis
    for q in vecs[-50:]:
        approx = index.approx_relevance(q)
        exact_projected = index.projected(slice(0, index.n)) @ (q @ index.proj)
        # Only the query's own rounding to int8 is left (the rows' is in ``projected``).
        assert np.abs(approx - exact_projected).max() < 0.01
        # And the best true product is near the top of the first pass.
        true = index.vecs[: index.n] @ q
        assert np.argmax(true) in np.argsort(approx)[-50:]


def test_int8_dot_is_exact() -> None:
    rng = np.random.default_rng(2)
    values = rng.integers(-127, 128, (1000, 96))
    q = rng.integers(-QUERY_MAX, QUERY_MAX + 1, 96).astype(np.int8)
    q[:2] = (QUERY_MAX, -QUERY_MAX)  # the extremes, against rows of 127s: no saturation
    values[0], values[1] = 127, -127
    got = int8_dot(to_rows(values), q)
    assert got.dtype == np.int32 and np.array_equal(got, values @ q.astype(np.int64))
    assert int8_dot(to_rows(values[:0]), q).shape == (0,)
