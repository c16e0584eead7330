"""Vector PRF on dense retrieval: the moved query is Rocchio's (or the average's) of the first search's top
passages, off by default, one encoding for every grid point, and tunable by ``--cv``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dense_fakes import BagOfWordsEncoder
from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import tunables
from finegrain.retrieve.dense.prf import Feedback, moved_queries
from finegrain.retrieve.dense.retriever import DenseRetriever
from finegrain.retrieve.registry import get_retriever
from finegrain.types import Corpus, Document, Queries, Query

CORPUS = Corpus([
    Document("d1", "red car red road"),
    Document("d2", "red car blue sky"),
    Document("d3", "blue sky sea"),
    Document("d4", "blue sea boat"),
    Document("d5", "two dogs running"),
])
QUERIES = Queries([Query("q1", "red car"), Query("q2", "dogs"), Query("q3", "zebra")])


def _retriever(tmp_path: Path, **kw) -> tuple[DenseRetriever, BagOfWordsEncoder]:  # type: ignore[no-untyped-def]
    enc = BagOfWordsEncoder()
    return DenseRetriever(name="fake", encoder=enc, cache_dir=str(tmp_path / "cache"), **kw), enc


def _vectors(enc: BagOfWordsEncoder, texts: list[str], kind: str) -> np.ndarray:
    return np.asarray(enc.encode(texts, kind=kind), dtype=np.float32)


def test_prf_scores_are_the_moved_query_against_every_passage(tmp_path: Path) -> None:
    """Protects the formula: q' = alpha q + beta mean(first top-depth passages), scored by inner product."""
    r, enc = _retriever(tmp_path, prf_depth=2, rocchio_alpha=0.5, rocchio_beta=1.5)
    run = r.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    base, _ = _retriever(tmp_path)
    first = base.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    docs = _vectors(enc, [d.text for d in CORPUS.values()], "passage")
    qs = _vectors(enc, QUERIES.texts, "query")
    row = {d: i for i, d in enumerate(CORPUS.ids)}
    for i, q in enumerate(QUERIES.ids):
        top = [row[d] for d in first.ranked(q)[:2]]
        moved = 0.5 * qs[i] + 1.5 * docs[top].mean(axis=0) if top else qs[i]
        want = {d: float(docs[row[d]] @ moved) for d in CORPUS.ids}
        got = dict(run[q])
        assert got.keys() <= want.keys()
        for d, s in got.items():
            assert s == pytest.approx(want[d], abs=1e-5)
    # feedback reaches d3 ("blue sky") through d2: the plain search scores it 0 for "red car"
    assert dict(first["q1"]).get("d3", 0.0) == pytest.approx(0.0, abs=1e-6)
    assert dict(run["q1"])["d3"] > 0.1


def test_prf_is_off_by_default_and_depth_zero_is_the_plain_search(tmp_path: Path) -> None:
    plain, _ = _retriever(tmp_path)
    zero, _ = _retriever(tmp_path, prf_depth=0, rocchio_beta=5.0)
    a = plain.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    b = zero.retrieve(CORPUS, QUERIES, lang="en", top_k=None, show_progress=False)
    assert {q: dict(a[q]) for q in a} == {q: dict(b[q]) for q in b}
    assert "prf" not in plain.config()
    on, _ = _retriever(tmp_path, prf_depth=3)
    assert on.config()["prf"] == {"prf_depth": 3, "prf_method": "rocchio", "rocchio_alpha": 0.4, "rocchio_beta": 0.6}


def test_feedback_refuses_weights_that_are_not_finite_and_non_negative() -> None:
    for w in (float("nan"), float("inf"), -1.0, True):
        with pytest.raises(FinegrainError, match="rocchio_beta"):
            Feedback(depth=2, beta=w)  # type: ignore[arg-type]


def test_average_prf_is_the_mean_of_query_and_passages() -> None:
    q = np.array([[1.0, 0.0, 0.0]], dtype=np.float32)
    docs = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]], dtype=np.float32)
    got = moved_queries(q, docs, [np.array([0, 1, 2])], Feedback(depth=2, method="average"))
    np.testing.assert_allclose(got[0], [1 / 3, 1 / 3, 1 / 3], rtol=1e-6)  # q, d0 and d1; d2 is past the depth
    rocchio = moved_queries(q, docs, [np.array([0, 1])], Feedback(depth=2, alpha=1.0, beta=2.0))
    np.testing.assert_allclose(rocchio[0], [1.0, 1.0, 1.0], rtol=1e-6)
    none = moved_queries(q, docs, [np.empty(0, dtype=np.int64)], Feedback(depth=2))
    np.testing.assert_array_equal(none, q)


def test_grid_encodes_once_and_equals_one_retriever_per_point(tmp_path: Path) -> None:
    r, enc = _retriever(tmp_path, cache=False)
    settings = [{"prf_depth": 0}, {"prf_depth": 1, "rocchio_beta": 0.2}, {"prf_depth": 3, "rocchio_beta": 0.8}]
    runs = r.retrieve_grid(settings, CORPUS, QUERIES, lang="en", top_k=4)
    assert enc.n_encoded == len(CORPUS) + len(QUERIES)
    for s, run in zip(settings, runs):
        one, _ = _retriever(tmp_path, cache=False, **s)
        want = one.retrieve(CORPUS, QUERIES, lang="en", top_k=4, show_progress=False)
        assert {q: dict(run[q]) for q in run} == {q: dict(want[q]) for q in want}
    with pytest.raises(FinegrainError, match="cannot vary 'threshold'"):
        r.retrieve_grid([{"threshold": 0.5}], CORPUS, QUERIES, lang="en", top_k=4)


def test_grid_points_without_feedback_share_one_search(tmp_path: Path) -> None:
    """Depth 0 ignores the Rocchio weights: those points are one search (and one run in memory), not one each."""
    r, _ = _retriever(tmp_path, cache=False)
    settings = [{"prf_depth": 0, "rocchio_beta": b} for b in (0.2, 0.8)] + [{"prf_depth": 1, "rocchio_beta": 0.2},
                                                                          {"prf_depth": 1, "rocchio_beta": 0.8}]
    runs = r.retrieve_grid(settings, CORPUS, QUERIES, lang="en", top_k=4)
    assert runs[0] is runs[1] and runs[2] is not runs[3]


def test_cv_tunes_depth_with_zero_and_beta_only_for_rocchio() -> None:
    tuned = {t.key: t.values for t in tunables("e5", {})}
    assert tuned == {"prf_depth": (0, 3, 5, 10), "rocchio_beta": (0.2, 0.4, 0.6, 0.8)}
    assert {t.key for t in tunables("e5", {"prf_method": "average"})} == {"prf_depth"}
    assert tunables("dense", {"prf_depth": 0, "rocchio_beta": 0.6}) == ()


@pytest.mark.parametrize("opts, words", [
    ({"prf_depth": -1}, "prf_depth"),
    ({"prf_depth": 2.5}, "prf_depth"),
    ({"prf_method": "ance"}, "PRF method"),
    ({"rocchio_beta": -0.1}, "rocchio_beta"),
    ({"rocchio_alpha": float("nan")}, "rocchio_alpha"),
    ({"prf_depth": 3, "rocchio_alpha": 0, "rocchio_beta": 0}, "every score ties"),
])
def test_bad_prf_options_are_refused_before_encoding(opts: dict[str, object], words: str) -> None:
    with pytest.raises(FinegrainError, match=words):
        get_retriever("e5", **opts)
