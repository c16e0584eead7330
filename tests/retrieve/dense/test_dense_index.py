"""DenseIndex: numpy and FAISS agree, ties follow the Run rule, thresholds, blocks, errors."""

from __future__ import annotations

import numpy as np
import pytest

from finegrain.errors import DuplicateIdError, FinegrainError, UnknownNameError
from finegrain.ranking import rank_docs
from finegrain.retrieve.dense import index as dense_index
from finegrain.retrieve.dense.index import DenseIndex

faiss = pytest.importorskip("faiss")

N_DOCS, N_Q, DIM = 300, 25, 6


def _exact_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """Vectors of small multiples of 1/4: every inner product is exact in float32, so all
    backends compute identical scores, and there are many ties."""
    rng = np.random.default_rng(seed)
    docs = rng.integers(-2, 3, size=(N_DOCS, DIM)).astype(np.float32) / 4
    queries = rng.integers(-2, 3, size=(N_Q, DIM)).astype(np.float32) / 4
    doc_ids = [f"d{i:03d}" for i in rng.permutation(N_DOCS)]
    return docs, queries, doc_ids, [f"q{i}" for i in range(N_Q)]


def _reference(docs, queries, doc_ids, qids, k=None, threshold=None) -> dict[str, dict[str, float]]:
    """Score everything in float64 and rank with finegrain's pure-Python rule, then cut."""
    scores = queries.astype(np.float64) @ docs.astype(np.float64).T
    out = {}
    for r, q in enumerate(qids):
        row = {d: float(s) for d, s in zip(doc_ids, scores[r]) if threshold is None or s >= threshold}
        ranked = rank_docs(row)[: k if k is not None else None]
        out[q] = {d: row[d] for d in ranked}
    return out


CASES = [
    {"k": 1}, {"k": 10}, {"k": 37}, {"k": N_DOCS}, {"k": 5000},
    {"threshold": 0.5}, {"threshold": -10.0}, {"threshold": 0.25, "k": 7}, {"threshold": 0.75, "k": 1},
    {"threshold": 99.0, "k": 3},
]


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
@pytest.mark.parametrize("backend", ["numpy", "numpy-tiled", "faiss"])
@pytest.mark.parametrize("block", [None, 1, 7])
def test_exact_backends_match_the_reference_including_ties(
    case: dict, backend: str, block: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if backend == "numpy-tiled":  # documents scored 64 at a time, with a running top k
        monkeypatch.setattr(dense_index, "DOC_TILE", 64)
        backend = "numpy"
    docs, queries, doc_ids, qids = _exact_data()
    ref = _reference(docs, queries, doc_ids, qids, case.get("k"), case.get("threshold"))
    run = DenseIndex(docs, doc_ids, backend=backend, block_size=block).search(queries, qids, **case)
    assert run.to_dict() == ref
    assert list(run) == qids


def test_the_data_really_has_ties_at_the_cut() -> None:
    docs, queries, doc_ids, qids = _exact_data()
    s = np.sort(queries @ docs.T, axis=1)[:, ::-1]
    assert (s[:, 9] == s[:, 10]).sum() > N_Q // 2, "the tie tests would prove nothing"


@pytest.mark.parametrize("tile", [None, 1, 2])
def test_tie_at_the_cut_keeps_the_highest_document_ids(tile: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if tile:
        monkeypatch.setattr(dense_index, "DOC_TILE", tile)
    docs = np.ones((5, 2), dtype=np.float32) / np.sqrt(2)
    ids = ["b", "e", "a", "d", "c"]
    for backend in ("numpy", "faiss"):
        run = DenseIndex(docs, ids, backend=backend).search(docs[:1], ["q"], k=2)
        assert run.ranked("q") == ["e", "d"], backend


def test_document_order_does_not_change_the_result() -> None:
    docs, queries, doc_ids, qids = _exact_data(1)
    perm = np.random.default_rng(5).permutation(N_DOCS)
    for backend in ("numpy", "faiss"):
        a = DenseIndex(docs, doc_ids, backend=backend).search(queries, qids, k=10)
        b = DenseIndex(docs[perm], [doc_ids[i] for i in perm], backend=backend).search(queries, qids, k=10)
        assert a.to_dict() == b.to_dict()


def test_random_unit_vectors_numpy_and_faiss_agree() -> None:
    rng = np.random.default_rng(3)
    docs = rng.standard_normal((5000, 64)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = rng.standard_normal((50, 64)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    ids, qids = [f"doc{i}" for i in range(5000)], [f"q{i}" for i in range(50)]
    a = DenseIndex(docs, ids, backend="numpy").search(queries, qids, k=20)
    b = DenseIndex(docs, ids, backend="faiss").search(queries, qids, k=20)
    for q in qids:
        assert a.ranked(q) == b.ranked(q)
        np.testing.assert_allclose([a[q][d] for d in a.ranked(q)], [b[q][d] for d in b.ranked(q)], atol=1e-6)
    # scores are inner products
    d0 = a.ranked("q0")[0]
    assert a["q0"][d0] == pytest.approx(float(queries[0] @ docs[int(d0[3:])]), abs=1e-6)


def test_tiled_numpy_search_equals_one_tile_on_random_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    docs = rng.standard_normal((3000, 32)).astype(np.float32)
    docs[1500:1600] = docs[:100]  # duplicates: exact ties
    queries = docs[:40] + 0.3 * rng.standard_normal((40, 32)).astype(np.float32)
    ids, qids = [f"d{i:04d}" for i in range(3000)], [f"q{i}" for i in range(40)]
    one = DenseIndex(docs, ids, backend="numpy").search(queries, qids, k=25)
    monkeypatch.setattr(dense_index, "DOC_TILE", 500)
    tiled = DenseIndex(docs, ids, backend="numpy").search(queries, qids, k=25)
    for q in qids:
        assert set(tiled[q]) == set(one[q])
        np.testing.assert_allclose([tiled[q][d] for d in one[q]], [one[q][d] for d in one[q]], rtol=1e-5)


def test_range_search_keeps_exactly_the_documents_at_or_above_the_threshold() -> None:
    docs = np.array([[1, 0], [0.6, 0.8], [0.5, 0.5], [0, 1], [-1, 0]], dtype=np.float32)
    ids = ["a", "b", "c", "d", "e"]
    q = np.array([[1, 0]], dtype=np.float32)
    for backend in ("numpy", "faiss"):
        run = DenseIndex(docs, ids, backend=backend).search(q, ["q"], threshold=0.5)
        assert run.to_dict() == {"q": {"a": 1.0, "b": pytest.approx(0.6), "c": 0.5}}, backend
        cut = DenseIndex(docs, ids, backend=backend).search(q, ["q"], threshold=0.5, k=2)
        assert cut.ranked("q") == ["a", "b"]
        none = DenseIndex(docs, ids, backend=backend).search(q, ["q"], threshold=1.5)
        assert none.to_dict() == {"q": {}}


def test_the_index_is_read_only_and_leaves_the_callers_array_writable() -> None:
    docs = np.eye(3, dtype=np.float32)
    idx = DenseIndex(docs, list("abc"))
    assert docs.flags.writeable and not idx.vectors.flags.writeable
    with pytest.raises(ValueError):
        idx.vectors[0, 0] = 2.0


def test_empty_corpus_and_no_queries() -> None:
    empty = DenseIndex(np.zeros((0, 4), dtype=np.float32), [])
    run = empty.search(np.ones((2, 4), dtype=np.float32), ["q1", "q2"], k=10)
    assert run.to_dict() == {"q1": {}, "q2": {}}
    idx = DenseIndex(np.eye(4, dtype=np.float32), list("abcd"))
    assert len(idx.search(np.zeros((0, 4), dtype=np.float32), [], k=3)) == 0


def test_auto_backend_by_corpus_size(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = np.eye(8, dtype=np.float32)
    assert DenseIndex(docs, list("abcdefgh")).backend == "numpy"
    assert DenseIndex(docs, list("abcdefgh"), faiss_kind="hnsw").backend == "faiss"
    monkeypatch.setattr(dense_index, "AUTO_FAISS_MIN_DOCS", 9)
    assert DenseIndex(docs, list("abcdefgh")).backend == "numpy"
    monkeypatch.setattr(dense_index, "AUTO_FAISS_MIN_DOCS", 8)
    auto = DenseIndex(docs, list("abcdefgh"))
    assert auto.backend == "faiss" and auto.config()["requested_backend"] == "auto"
    assert DenseIndex(docs, list("abcdefgh"), backend="numpy").backend == "numpy"


def test_block_size_bounds_the_score_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    idx = DenseIndex(np.eye(4, dtype=np.float32), list("abcd"))
    monkeypatch.setattr(dense_index, "BLOCK_BYTES", 16 * (4 + 2) * 3)
    assert idx._block(4, 2) == 3  # 3 queries x (4 documents + 2 candidates) cells
    monkeypatch.setattr(dense_index, "DOC_TILE", 2)
    assert idx._block(4, 2) == 4  # tiles of 2 documents: 4 queries fit
    seen: list[int] = []
    real = DenseIndex._numpy_block

    def spy(self, qb, k, thr):  # type: ignore[no-untyped-def]
        seen.append(len(qb))
        return real(self, qb, k, thr)

    monkeypatch.setattr(DenseIndex, "_numpy_block", spy)
    monkeypatch.setattr(dense_index, "DOC_TILE", 65_536)
    idx.search(np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 0, 1, 2]], [f"q{i}" for i in range(7)], k=2)
    assert seen == [3, 3, 1]


def test_ivf_with_every_cell_probed_is_exact_and_hnsw_finds_most() -> None:
    rng = np.random.default_rng(7)
    docs = rng.standard_normal((2000, 32)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = docs[:20] + 0.05 * rng.standard_normal((20, 32)).astype(np.float32)
    ids, qids = [f"d{i}" for i in range(2000)], [f"q{i}" for i in range(20)]
    exact = DenseIndex(docs, ids, backend="numpy").search(queries, qids, k=10)
    ivf = DenseIndex(docs, ids, backend="faiss", faiss_kind="ivf", nlist=16, nprobe=16)
    assert ivf.config()["nlist"] == 16 and not ivf.exact
    assert ivf.search(queries, qids, k=10).to_dict().keys() == exact.to_dict().keys()
    for q in qids:
        assert set(ivf.search(queries, qids, k=10).ranked(q)) == set(exact.ranked(q))
    hnsw = DenseIndex(docs, ids, backend="faiss", faiss_kind="hnsw").search(queries, qids, k=10)
    recall = np.mean([len(set(hnsw.ranked(q)) & set(exact.ranked(q))) / 10 for q in qids])
    assert recall >= 0.9
    assert all(hnsw.ranked(f"q{i}")[0] == f"d{i}" for i in range(20))


def test_bad_input_is_refused_with_the_fix() -> None:
    docs = np.eye(3, dtype=np.float32)
    with pytest.raises(FinegrainError, match="3 document vectors for 2 document ids"):
        DenseIndex(docs, ["a", "b"])
    with pytest.raises(DuplicateIdError, match="'a'"):
        DenseIndex(docs, ["a", "b", "a"])
    with pytest.raises(FinegrainError, match="document 'b'"):
        DenseIndex(np.array([[1, 0], [np.nan, 0]], dtype=np.float32), ["a", "b"])
    with pytest.raises(UnknownNameError, match="did you mean 'faiss'"):
        DenseIndex(docs, list("abc"), backend="fais")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="needs backend='faiss'"):
        DenseIndex(docs, list("abc"), backend="numpy", faiss_kind="hnsw")
    idx = DenseIndex(docs, list("abc"))
    with pytest.raises(FinegrainError, match="3-d vectors"):
        idx.search(np.ones((1, 4), dtype=np.float32), ["q"], k=1)
    with pytest.raises(FinegrainError, match="needs k, threshold or both"):
        idx.search(docs, ["q1", "q2", "q3"])
    with pytest.raises(FinegrainError, match="k=0"):
        idx.search(docs, ["q1", "q2", "q3"], k=0)
    with pytest.raises(FinegrainError, match="threshold=nan"):
        idx.search(docs, ["q1", "q2", "q3"], threshold=float("nan"))
    with pytest.raises(FinegrainError, match="2 query ids"):
        idx.search(docs, ["q1", "q2"], k=1)


def _clustered(n: int = 3000, dim: int = 16, seed: int = 3) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((30, dim)).astype(np.float32)
    docs = centres[rng.integers(0, 30, n)] + 0.5 * rng.standard_normal((n, dim)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = centres[rng.integers(0, 30, 40)] + 0.5 * rng.standard_normal((40, dim)).astype(np.float32)
    return docs, queries, [f"d{i}" for i in range(n)], [f"q{i}" for i in range(40)]


def test_ivf_recall_is_one_at_nprobe_nlist_and_grows_with_nprobe() -> None:
    docs, queries, ids, qids = _clustered()
    exact = DenseIndex(docs, ids, backend="numpy").search(queries, qids, k=10)
    ivf = DenseIndex(docs, ids, backend="faiss", faiss_kind="ivf", nlist=32, nprobe=1, train_size=32 * 39)
    assert ivf.config()["train_size"] == 32 * 39 and ivf.config()["nprobe"] == 1

    def recall(run) -> float:
        return float(np.mean([len(set(run.ranked(q)) & set(exact.ranked(q))) / 10 for q in qids]))

    full = ivf.search(queries, qids, k=10, nprobe=32)  # every cell probed: exact
    assert recall(full) == 1.0
    assert all(full.ranked(q) == exact.ranked(q) for q in qids)
    recalls = [recall(ivf.search(queries, qids, k=10, nprobe=p)) for p in (1, 4, 32)]
    assert recalls[0] < 1.0 and recalls[0] <= recalls[1] <= recalls[2] == 1.0
    # the override is for one call: the index searches with its own nprobe again
    assert ivf._faiss.nprobe == 1 and recall(ivf.search(queries, qids, k=10)) == recalls[0]
    # nprobe above nlist probes every cell
    assert recall(ivf.search(queries, qids, k=10, nprobe=1000)) == 1.0


def test_hnsw_ef_search_override_and_recall() -> None:
    docs, queries, ids, qids = _clustered(n=1500)
    exact = DenseIndex(docs, ids, backend="numpy").search(queries, qids, k=10)
    hnsw = DenseIndex(docs, ids, backend="faiss", faiss_kind="hnsw", hnsw_m=16, ef_search=16)
    wide = hnsw.search(queries, qids, k=10, ef_search=1500)
    assert np.mean([len(set(wide.ranked(q)) & set(exact.ranked(q))) / 10 for q in qids]) >= 0.99
    assert hnsw._faiss.hnsw.efSearch == 16


def test_bad_ivf_and_search_parameters_name_the_fix() -> None:
    docs, queries, ids, qids = _clustered(n=200)
    with pytest.raises(FinegrainError, match=r"nlist=500 is more than the 200 documents") as e:
        DenseIndex(docs, ids, backend="faiss", faiss_kind="ivf", nlist=500)
    assert "nlist <= 200" in e.value.hint
    with pytest.raises(FinegrainError, match=r"train_size=10 is less than nlist=20"):
        DenseIndex(docs, ids, backend="faiss", faiss_kind="ivf", nlist=20, train_size=10)
    for bad in ({"nlist": 0}, {"nprobe": 0}, {"train_size": 0}, {"nlist": 2.5}, {"ef_search": True}):
        with pytest.raises(FinegrainError, match=f"{next(iter(bad))}="):
            DenseIndex(docs, ids, backend="faiss", faiss_kind="ivf", **bad)  # type: ignore[arg-type]
    exact = DenseIndex(docs, ids, backend="numpy")
    with pytest.raises(FinegrainError, match="nprobe is a setting of the faiss ivf index") as e:
        exact.search(queries, qids, k=5, nprobe=4)
    assert "faiss_kind='ivf'" in e.value.hint
    ivf = DenseIndex(docs, ids, backend="faiss", faiss_kind="ivf", nlist=4)
    with pytest.raises(FinegrainError, match="ef_search is a setting of the faiss hnsw index"):
        ivf.search(queries, qids, k=5, ef_search=64)
    with pytest.raises(FinegrainError, match="nprobe=0"):
        ivf.search(queries, qids, k=5, nprobe=0)
