"""The fast paths of the one ranking rule and of building tables from dicts, against slow references.

``rank_order`` sorts each query's row on its own when queries are contiguous
(``_rank_rows``, a block of rows at a time) and falls back to one global sort (``_rank_global``); both
must equal a three-key lexsort (score descending, doc id descending by code
point, input order for exact duplicates) on ragged rows, ties, signed zeros,
infinities and vocabularies much larger than the tied documents.
"""

from __future__ import annotations

import numpy as np
import pytest

from finegrain import ranking
from finegrain.errors import FinegrainError
from finegrain.ranking import _rank_global, cut_depth, rank_docs, rank_order, string_ranks, top_k_positions
from finegrain.types import Qrels, Run
from native_paths import both_paths

path = both_paths(ranking)  # which row sort ranks: the compiled tie pass, or numpy's second sort

VOCAB = ["a", "b", "ab", "B", "é", "10", "9", "zz", "a\x00", "", "Z", "aa"] + [f"d{i}" for i in range(40)]


def _reference(seg: np.ndarray, sc: np.ndarray, codes: np.ndarray, vocab: list[str]) -> list[int]:
    if len(seg) == 0:
        return []
    return np.lexsort((-string_ranks(vocab)[codes], -sc, seg)).tolist()


@pytest.mark.parametrize("seed", range(6))
def test_row_and_global_paths_equal_the_lexsort_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for trial in range(300):
        n_seg = int(rng.integers(1, 7))
        counts = rng.integers(0, 14, n_seg)
        if trial % 3 == 0:
            counts[:] = rng.integers(1, 9)  # rectangular: the no-padding path
        seg = np.repeat(np.arange(n_seg), counts)
        n = len(seg)
        pool = [0.0, -0.0, 1.0, 2.5, np.inf, -np.inf, 0.3]
        sc = rng.choice(pool, n) if trial % 2 else rng.random(n)
        codes = rng.integers(0, len(VOCAB) if trial % 5 else 6, n)  # few codes: duplicate entries
        want = _reference(seg, sc, codes, VOCAB)
        assert rank_order(seg, sc, codes, VOCAB).tolist() == want
        assert rank_order(seg, sc, codes, VOCAB, offsets=np.concatenate([[0], np.cumsum(counts)])).tolist() == want
        if n:
            assert _rank_global(seg, sc, codes, VOCAB).tolist() == want


@pytest.mark.parametrize("block", [1, 7, 20])
def test_rows_ranked_a_block_at_a_time_equal_the_reference(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """Large runs are ranked a block of rows at a time; every block boundary keeps the one rule."""
    monkeypatch.setattr(ranking, "ROW_BLOCK_ENTRIES", block)
    rng = np.random.default_rng(block)
    for trial in range(100):
        counts = rng.integers(0, 9, int(rng.integers(1, 12)))
        seg = np.repeat(np.arange(len(counts)), counts)
        sc = rng.choice([0.0, 1.0, 0.5, -np.inf], len(seg)) if trial % 2 else rng.random(len(seg))
        codes = rng.integers(0, len(VOCAB) if trial % 3 else 5, len(seg))
        offsets = np.concatenate([[0], np.cumsum(counts)])
        assert rank_order(seg, sc, codes, VOCAB, offsets=offsets).tolist() == _reference(seg, sc, codes, VOCAB)


def test_non_contiguous_segments_fall_back_to_the_global_sort() -> None:
    seg = np.array([1, 0, 1, 0, 2])
    sc = np.array([1.0, 1.0, 2.0, 3.0, 0.0])
    codes = np.array([0, 1, 2, 3, 4])
    assert rank_order(seg, sc, codes, VOCAB).tolist() == _reference(seg, sc, codes, VOCAB)


def test_very_ragged_rows_use_the_global_sort_and_agree() -> None:
    rng = np.random.default_rng(5)
    counts = np.array([3000] + [1] * 50)  # padding would be 50x the entries
    seg = np.repeat(np.arange(len(counts)), counts)
    sc = np.round(rng.random(len(seg)) * 4) / 4
    codes = rng.permutation(len(seg))
    vocab = [f"x{i}" for i in range(len(seg))]
    assert rank_order(seg, sc, codes, vocab).tolist() == _reference(seg, sc, codes, vocab)


@pytest.mark.parametrize("counts", [[3000] + [1] * 50, [4, 0, 7, 7, 1]])
def test_offsets_alone_give_the_same_order_on_either_path(counts: list[int]) -> None:
    """Given offsets and no segment column (as ``Run.order`` calls it), the row path and the global sort (very
    ragged rows) make the segments they need and give the order the segment column gives."""
    rng = np.random.default_rng(len(counts))
    seg = np.repeat(np.arange(len(counts)), counts)
    sc = np.round(rng.random(len(seg)) * 4) / 4
    codes = rng.permutation(len(seg))
    vocab = [f"x{i}" for i in range(len(seg))]
    offsets = np.concatenate([[0], np.cumsum(counts)])
    assert rank_order(None, sc, codes, vocab, offsets=offsets).tolist() == _reference(seg, sc, codes, vocab)
    with pytest.raises(ValueError):
        rank_order(None, sc, codes, vocab)


def test_ties_among_few_documents_of_a_large_vocabulary() -> None:
    """Doc ids are compared only among the tied rows' documents (a dense index's whole corpus as vocabulary)."""
    rng = np.random.default_rng(2)
    vocab = [f"doc{i}" for i in rng.permutation(20_000)]  # unsorted ids
    seg = np.repeat(np.arange(30), 5)
    sc = rng.random(len(seg))
    sc[[0, 1, 2, 40, 41]] = 0.5  # two tied groups, the rest distinct
    codes = rng.choice(20_000, size=len(seg), replace=False)
    assert rank_order(seg, sc, codes, vocab).tolist() == _reference(seg, sc, codes, vocab)


def test_run_order_is_the_same_whatever_the_input_order() -> None:
    rng = np.random.default_rng(9)
    data = {f"q{i}": {f"d{j}": float(rng.integers(0, 3)) for j in rng.choice(50, 12, replace=False)} for i in range(20)}
    base = Run.from_dict(data)
    for seed in range(5):
        r = np.random.default_rng(seed)
        shuffled = {q: dict(sorted(docs.items(), key=lambda _: r.random())) for q, docs in data.items()}
        other = Run.from_dict(shuffled)
        assert all(other.ranked(q) == base.ranked(q) for q in data)
    for q, docs in data.items():
        assert base.ranked(q) == [d for d, _ in sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def test_from_dict_equals_from_records_and_round_trips() -> None:
    run_data = {"q1": {"a": 1.5, "b": 2, "c": np.float32(0.25)}, "q2": {}, "q3": {"b": -1.0, "z": 1e300}}
    run = Run.from_dict(run_data, name="sys")
    assert run.name == "sys" and run.to_dict() == {q: {d: float(v) for d, v in ds.items()} for q, ds in run_data.items()}
    records = [(q, d, v) for q, ds in run_data.items() for d, v in ds.items()]
    assert run == Run.from_records(records).with_queries(["q1", "q2", "q3"])
    assert run.vocab == ("a", "b", "c", "z")  # first occurrence
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0}, "q2": {"a": 2}})
    assert qrels.to_dict() == {"q1": {"a": 1, "b": 0}, "q2": {"a": 2}} and qrels.values.dtype == np.int64
    assert Qrels.from_dict({}).n_entries == 0 and Run.from_dict({"q": {"only": 1.0}}).ranked("q") == ["only"]


def test_from_dict_refuses_bad_values_with_the_reason() -> None:
    with pytest.raises(FinegrainError, match="is NaN"):
        Run.from_dict({"q": {"a": float("nan")}})
    with pytest.raises(FinegrainError, match="must be numbers"):
        Run.from_dict({"q": {"a": "high"}})
    with pytest.raises(FinegrainError, match="not an integer grade"):
        Qrels.from_dict({"q": {"a": 1.5}})
    with pytest.raises(FinegrainError, match="out of range"):
        Qrels.from_dict({"q": {"a": 2**64}})


# --------------------------------------------------------------------------- scores the rule cannot rank


def test_a_nan_score_is_refused_not_ranked() -> None:
    with pytest.raises(FinegrainError, match="cannot rank a NaN score"):
        rank_order(np.zeros(3, dtype=np.int64), np.array([1.0, np.nan, 0.5]), np.arange(3), VOCAB)
    with pytest.raises(FinegrainError, match="NaN score of document 'b'"):
        rank_docs({"a": 1.0, "b": float("nan")})
    # a run built unchecked (as the retrievers build theirs) names the query and the document
    run = Run(("q1", "q2"), np.array([0, 1, 3]), np.array([0, 1, 2]), ("a", "b", "c"), np.array([1.0, 2.0, np.nan]),
              check=False)
    with pytest.raises(FinegrainError, match="score of document 'c' for query 'q2' is NaN"):
        run.ranked("q2")


def test_the_top_k_cut_refuses_nan_and_plus_infinity_and_keeps_minus_infinity_last() -> None:
    docs, tie = np.arange(4), np.arange(4)
    for bad in (np.nan, np.inf):
        with pytest.raises(FinegrainError, match="cannot be ranked"):
            top_k_positions(np.array([1.0, bad, 0.5, 0.2]), docs, 2, tie)
    got = top_k_positions(np.array([1.0, -np.inf, 0.5, 0.2]), docs, 3, tie)
    assert sorted(got.tolist()) == [0, 2, 3]


def test_require_finite_names_the_retriever_the_query_and_the_document() -> None:
    ok = Run.from_dict({"q": {"a": 1.0, "b": -2.5}})
    assert ok.require_finite("retriever 'x'") is ok
    for bad in (np.inf, -np.inf, np.nan):
        run = Run(("q1", "q2"), np.array([0, 1, 2]), np.array([0, 1]), ("a", "b"), np.array([1.0, bad]), check=False)
        with pytest.raises(FinegrainError, match=r"retriever 'x' scored document 'b' for query 'q2' (inf|-inf|nan)"):
            run.require_finite("retriever 'x'")


def test_a_cut_deeper_than_the_results_keeps_them_all_and_absurd_depths_are_refused() -> None:
    assert cut_depth(None, 5) is None and cut_depth(3, 5) == 3 and cut_depth(99999999999, 5) == 5
    assert cut_depth(np.int64(7), 5) == 5 and cut_depth(2**63 - 1, 0) == 0
    for bad in (0, -1, 2**63, 1.5, True, "10"):
        with pytest.raises(FinegrainError, match="is not a whole number >= 1"):
            cut_depth(bad, 5)  # type: ignore[arg-type]
    run = Run.from_dict({"q": {"a": 1.0, "b": 2.0}, "r": {"c": 0.5}})
    assert run.cut(10**12) == run and run.cut(1).to_dict() == {"q": {"b": 2.0}, "r": {"c": 0.5}}
    with pytest.raises(FinegrainError, match="at most 2\\^63-1"):
        run.cut(10**30)


@pytest.mark.parametrize("width", [17, 40, 130])
def test_long_runs_of_equal_scores_keep_the_rule(width: int) -> None:
    """Runs of equal scores longer than the counting sort takes (and whole rows of one score) go through
    the other sort; ragged rows of those widths, with exact duplicate entries, keep the rule."""
    rng = np.random.default_rng(width)
    vocab = [f"d{i}" for i in range(3 * width)]
    for trial in range(20):
        counts = rng.integers(width // 2, width + 1, 5)
        seg = np.repeat(np.arange(5), counts)
        sc = rng.choice([0.0, 1.0] if trial % 2 else [0.5], len(seg))
        codes = rng.integers(0, len(vocab) if trial % 3 else 4, len(seg))
        offsets = np.concatenate([[0], np.cumsum(counts)])
        assert rank_order(seg, sc, codes, vocab, offsets=offsets).tolist() == _reference(seg, sc, codes, vocab)
