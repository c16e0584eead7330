"""BM25 search backends: the numba loops and the scipy products give the same runs and scores, bit for bit."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import finegrain.retrieve.bm25.search as search
from finegrain.errors import FinegrainError
from finegrain.retrieve.bm25 import BM25, VARIANTS
from finegrain.retrieve.bm25.kernels import load_kernels
from finegrain.retrieve.bm25.search import dense_scores, search_index

pytestmark = pytest.mark.skipif(load_kernels() is None, reason="numba is not installed")


def _corpus(n: int, vocab: int, seed: int) -> tuple[list[list[str]], list[str]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    docs = [[rng.choice(words[: rng.randint(1, vocab)]) for _ in range(rng.randint(0, 9))] for _ in range(n)]
    ids = [f"d{rng.randrange(10**6)}-{i}" for i in range(n)]  # id order differs from index order
    return docs, ids


def _run(bm: BM25, queries: list[list[str]], backend: str, **kw: object):  # type: ignore[no-untyped-def]
    qids = [f"q{i}" for i in range(len(queries))]
    idx = bm._require()
    return search_index(idx, queries, qids, kw.get("k"), kw.get("threshold"), kw.get("ties", "doc-id"),  # type: ignore[arg-type]
                        "x", False, backend)


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.qids == b.qids
    for q in a.qids:
        got, want = dict(a[q]), dict(b[q])
        assert got.keys() == want.keys(), q
        for d in got:  # same bits, not just close
            assert np.float64(got[d]).tobytes() == np.float64(want[d]).tobytes(), (q, d)


CUTS = [dict(k=1), dict(k=3), dict(k=10), dict(k=1000), dict(threshold=0.5), dict(threshold=-1e9), dict(k=4, threshold=0.8),
        dict(k=2, ties="index-order"), dict(threshold=0.1, ties="index-order"), dict(k=5, threshold=0.2, ties="index-order")]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("cut", CUTS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_numba_and_scipy_give_the_same_run(variant: str, cut: dict) -> None:
    # A small vocabulary: many tied scores at every cut, terms in most documents (negative okapi idf).
    docs, ids = _corpus(300, 12, seed=7)
    bm = BM25(variant).index(docs, ids)
    rng = random.Random(1)
    queries = [[f"w{rng.randrange(14)}" for _ in range(rng.randint(0, 6))] for _ in range(60)]
    _same(_run(bm, queries, "numba", **cut), _run(bm, queries, "scipy", **cut))


@pytest.mark.parametrize("variant", VARIANTS)
def test_scores_are_the_same_bits_with_and_without_numba(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, ids = _corpus(200, 10, seed=3)
    idx = BM25(variant).index(docs, ids)._require()
    queries = [["w0"], ["w1", "w1", "w2"], ["w3", "nope", "w9", "w0"], []]
    fast = [dense_scores(idx, q) for q in queries]
    monkeypatch.setenv("FINEGRAIN_BM25_NUMBA", "0")
    assert load_kernels() is None
    slow = [dense_scores(idx, q) for q in queries]
    for a, b in zip(fast, slow):
        assert a.tobytes() == b.tobytes()
    assert not fast[-1].any() and any(f.any() for f in fast)


def test_okapi_negative_scores_are_kept_and_zero_sums_dropped() -> None:
    # Both terms are in 4 of 5 documents: negative idfs, negative mean, so a negative floor and scores.
    docs = [["x", "y"], ["x", "y"], ["x", "y"], ["x"], ["y"]]
    bm = BM25("okapi").index(docs, [f"d{i}" for i in range(5)])
    s = bm.scores(["x"])
    assert (s[:4] < 0).all() and s[4] == 0
    for backend in ("numba", "scipy"):
        run = _run(bm, [["x"], ["x", "x"]], backend, k=3)
        assert len(run["q0"]) == 3 and all(v < 0 for v in run["q0"].values())
    _same(_run(bm, [["x"]], "numba", k=3), _run(bm, [["x"]], "scipy", k=3))
    # robertson: idf 0 for a term in more than half the documents; its postings sum to 0.0 and
    # are no candidates (as the sparse product drops them).
    rob = BM25("robertson").index(docs, [f"d{i}" for i in range(5)])
    assert not rob.scores(["x"]).any()
    for backend in ("numba", "scipy"):
        assert len(_run(rob, [["x"]], backend, k=3)["q0"]) == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from("abcde"), max_size=5), min_size=1, max_size=30),
       st.lists(st.lists(st.sampled_from("abcdef"), max_size=4), min_size=1, max_size=5),
       st.sampled_from(VARIANTS), st.integers(1, 6), st.sampled_from(["doc-id", "index-order"]))
def test_random_corpora(docs: list[list[str]], queries: list[list[str]], variant: str, k: int, ties: str) -> None:
    bm = BM25(variant).index(docs, [f"d{i}" for i in range(len(docs))])
    _same(_run(bm, queries, "numba", k=k, ties=ties), _run(bm, queries, "scipy", k=k, ties=ties))
    _same(_run(bm, queries, "numba", threshold=0.3), _run(bm, queries, "scipy", threshold=0.3))


def test_batches_and_unknown_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    docs, ids = _corpus(400, 30, seed=11)
    bm = BM25("lucene").index(docs, ids)
    queries = [[f"w{i % 30}", f"w{(i * 7) % 30}"] for i in range(50)]
    whole = _run(bm, queries, "numba", threshold=0.0)
    monkeypatch.setattr(search, "_BATCH_QUERIES", 3)  # many small batches, same result
    _same(_run(bm, queries, "numba", threshold=0.0), whole)
    _same(whole, _run(bm, queries, "scipy", threshold=0.0))
    with pytest.raises(FinegrainError, match="unknown BM25 backend"):
        _run(bm, queries, "cuda", k=1)
