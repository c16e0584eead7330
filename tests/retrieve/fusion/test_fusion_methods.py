"""CombSUM, CombMNZ, CombMAX, wsum and weighted RRF by hand; fuse()'s one table; the cross-validated weight search never fits on its test fold."""

from __future__ import annotations

import math
import weakref
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finegrain import Run, evaluate, fuse
from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.experiment.tuning import fusion_weights
from finegrain.experiment.tuning.fusion_weights import _grid, cv_weights
from finegrain.retrieve.fusion.methods import (
    combmax,
    combmnz,
    combsum,
    convex,
    normalize,
    wsum,
)
from finegrain.retrieve.registry import FUSIONS
from finegrain.types import Qrels

A = {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
B = {"q": {"d3": 5.0, "d4": 4.0}}
# min-max: A -> d1 1, d2 0.5, d3 0;  B -> d3 1, d4 0;  a document a run did not return gets 0 from it


def _runs() -> list[Run]:
    return [Run.from_dict(A, name="a"), Run.from_dict(B, name="b")]


def _approx(run: Run, want: dict[str, float]) -> None:
    assert dict(run["q"]) == pytest.approx(want, abs=1e-12)


def test_combsum_by_hand() -> None:
    # d1 1+0, d2 0.5+0, d3 0+1, d4 0+0
    _approx(combsum(_runs()), {"d1": 1.0, "d2": 0.5, "d3": 1.0, "d4": 0.0})
    assert fuse(_runs(), "combsum").name == "combsum-minmax(a,b)"


def test_combmnz_is_combsum_times_the_runs_that_returned_the_document() -> None:
    # d3 is in both runs: 1 x 2; the others in one: x 1
    _approx(combmnz(_runs()), {"d1": 1.0, "d2": 0.5, "d3": 2.0, "d4": 0.0})


def test_combmax_by_hand() -> None:
    # d3: max(0 from A, 1 from B) = 1
    _approx(combmax(_runs()), {"d1": 1.0, "d2": 0.5, "d3": 1.0, "d4": 0.0})
    # z-scores: A (3,2,1) mean 2, std sqrt(2/3) -> d3 = -1/sqrt(2/3) = -1.2247; B (5,4) -> d3 = +1, d4 = -1
    z = combmax(_runs(), norm="zscore")
    assert z["q"]["d3"] == pytest.approx(1.0) and z["q"]["d1"] == pytest.approx(1 / math.sqrt(2 / 3))
    assert z["q"]["d4"] == pytest.approx(-1.0)  # max over the runs that returned it only, not A's floor


def test_wsum_is_the_weighted_sum() -> None:
    # weights (1, 3): d1 1, d2 0.5, d3 0 + 3 x 1 = 3, d4 0
    _approx(wsum(_runs(), [1, 3]), {"d1": 1.0, "d2": 0.5, "d3": 3.0, "d4": 0.0})
    assert wsum(_runs(), [1, 3]).to_dict() == convex(_runs(), [1, 3]).to_dict()


def test_rrf_with_per_run_weights_by_hand() -> None:
    # ranks: A d1 1, d2 2, d3 3;  B d3 1, d4 2;  weights (2, 1), k = 60
    fused = fuse(_runs(), "rrf", weights=[2, 1])
    want = {"d1": Fraction(2, 61), "d2": Fraction(2, 62), "d3": Fraction(2, 63) + Fraction(1, 61), "d4": Fraction(1, 62)}
    _approx(fused, {d: float(v) for d, v in want.items()})
    assert fused.ranked("q") == ["d3", "d1", "d2", "d4"]  # 0.0481, 0.0328, 0.0323, 0.0161


def test_fuse_takes_dicts_and_refuses_parameters_a_method_does_not_take() -> None:
    assert fuse([A, B], "combmnz").to_dict() == combmnz(_runs()).to_dict()
    with pytest.raises(FinegrainError, match="fusion method 'combsum' takes no 'k'") as e:
        fuse(_runs(), "combsum", k=10)
    assert "k goes with rrf" in str(e.value.hint)
    with pytest.raises(FinegrainError, match="'combmnz' takes no 'weights'") as e:
        fuse(_runs(), "combmnz", weights=[1, 2])
    assert "rrf, convex, wsum" in str(e.value.hint)
    with pytest.raises(FinegrainError, match="'rrf' takes no 'norm'"):
        fuse(_runs(), "rrf", norm="zscore")
    with pytest.raises(UnknownNameError, match="unknown fusion method 'combmzn'") as u:
        fuse(_runs(), "combmzn")
    assert "combmnz" in u.value.suggestions
    assert set(FUSIONS) == {"rrf", "combsum", "combmnz", "combmax", "wsum", "convex"}


_scores = st.dictionaries(st.sampled_from(list("abcdefg")), st.floats(-5, 5, allow_nan=False), min_size=0, max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["q1", "q2"]), _scores, max_size=2), min_size=1, max_size=4),
       st.sampled_from(["minmax", "zscore", "none"]))
def test_comb_properties_against_a_naive_reference(datas: list[dict], norm: str) -> None:
    runs = [Run.from_dict(d, name=f"r{i}") for i, d in enumerate(datas)]
    normed = [normalize(r, norm).to_dict() for r in runs]
    s, mnz, mx = combsum(runs, norm=norm), combmnz(runs, norm=norm), combmax(runs, norm=norm)
    for q in s:
        for d, v in s[q].items():
            hits = [n[q][d] for n in normed if q in n and d in n[q]]
            assert mnz[q][d] == pytest.approx(v * len(hits), abs=1e-9)
            assert mx[q][d] == pytest.approx(max(hits), abs=1e-12)


# --------------------------------------------------------------------------- the cross-validated weight search


def _cv_case() -> tuple[list[Run], Qrels]:
    """10 queries; run "good" ranks the relevant document first, "bad" last, "mid" in the middle."""
    qrels, good, bad = {}, {}, {}
    for i in range(10):
        q = f"q{i}"
        qrels[q] = {f"{q}-a": 1}  # the relevant id sorts below the others: it loses every tie (id descending)
        docs = [f"{q}-a"] + [f"{q}-n{j}" for j in range(4)]
        good[q] = {d: float(5 - r) for r, d in enumerate(docs)}
        bad[q] = {d: float(r) for r, d in enumerate(docs)}
    return [Run.from_dict(good, name="good"), Run.from_dict(bad, name="bad")], Qrels.from_dict(qrels)


def test_cv_picks_the_good_run_and_prints_weights_per_fold() -> None:
    runs, qrels = _cv_case()
    search = cv_weights(runs, qrels, metric="ndcg@1", method="wsum", folds=5, step=0.5)
    # grid (0,1), (.5,.5), (1,0): only (1,0) puts the relevant document first; (.5,.5) gives every document
    # 1 (good's min-max + bad's mirror image) and the tie goes to the largest id, a non-relevant one
    assert search.weights_per_fold() == [(1.0, 0.0)] * 5
    assert search.held_out == 1.0 and all(f.test_value == 1.0 for f in search.folds)
    assert sorted(q for f in search.folds for q in f.test_qids) == sorted(qrels)  # each query held out once
    text = str(search)
    assert "fold 1: weights (1, 0)" in text and "held-out ndcg@1 over all queries: 1.0000" in text
    assert search.to_dict()["folds"][0]["weights"] == [1.0, 0.0]


@pytest.mark.parametrize(("folds", "seed", "method"), [(2, 0, "wsum"), (3, 1, "rrf"), (5, 7, "wsum"), (10, 2, "rrf")])
def test_cv_never_fits_on_the_fold_it_scores(folds: int, seed: int, method: str) -> None:
    runs, qrels = _cv_case()
    calls: list[tuple[frozenset[str], frozenset[str], float]] = []

    def objective(run: Run, qids: frozenset[str]) -> float:
        # an instrumented objective that also rewards a different vector per query set, so the choice depends on it
        value = (hash((tuple(sorted(qids)), run.to_dict().__repr__())) % 1000) / 1000
        calls.append((frozenset(run), qids, value))
        return value

    search = cv_weights(runs, qrels, method=method, folds=folds, seed=seed, step=0.25, objective=objective)
    grid = _grid(2, 0.25)
    n = len(grid)
    # each vector's fusion is scored on every fold's training queries (vector by vector), then each fold's
    # chosen fusion on its held-out queries, then the assembled run on all
    assert len(calls) == n * folds + folds + 1
    everything = frozenset(qrels)
    for f, fold in enumerate(search.folds):
        test = frozenset(fold.test_qids)
        fit = calls[f:n * folds:folds]
        scored = calls[n * folds + f]
        for run_qids, qids, _ in fit:
            assert qids == everything - test  # fitted on the other folds only
            assert not run_qids & test  # the objective never even sees a test query's ranking
        assert scored[1] == test and scored[0] <= test
        best = max(range(n), key=lambda i: (fit[i][2], -i))  # first best in grid order
        assert fold.weights == grid[best]
        assert fold.train_value == fit[best][2] and fold.test_value == scored[2]
    assert calls[-1][1] == everything


def test_cv_choice_equals_scoring_each_cut_run() -> None:
    """The default objective evaluates each fusion once and takes every fold's aggregate from it; the
    choices and values equal those of the metric computed on the run cut to each fold's training queries."""
    rng = np.random.default_rng(3)
    docs = [f"d{j}" for j in range(15)]
    # graded judgements, one query without a relevant document, one missing from every run
    qrels = Qrels.from_dict({f"q{i}": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 5, replace=False)}
                             for i in range(24)} | {"none": {"d1": 0}, "absent": {"d2": 1}})
    members = [Run.from_dict({f"q{i}": {d: float(rng.normal()) for d in rng.choice(docs, 10, replace=False)}
                              for i in range(24)} | {"none": {"d1": 1.0}}, name=f"r{m}") for m in range(3)]

    def cut_metric(run: Run, qids: frozenset[str]) -> float | None:
        return evaluate(qrels, run, "ndcg@3", queries=[q for q in qrels if q in qids], warn=False)["ndcg@3"].value

    for method in ("wsum", "rrf"):
        fast = cv_weights(members, qrels, metric="ndcg@3", method=method, folds=4, step=0.25, seed=1)
        slow = cv_weights(members, qrels, metric="ndcg@3", method=method, folds=4, step=0.25, seed=1,
                          objective=cut_metric)
        assert fast.folds == slow.folds and fast.held_out == slow.held_out
        assert fast.run.to_dict() == slow.run.to_dict()


def test_cv_keeps_one_fusion_in_memory_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A grid of thousands of vectors must not hold thousands of fused runs: each is scored and dropped."""
    runs, qrels = _cv_case()
    alive: list[weakref.ref[Run]] = []
    most = 0
    real = fusion_weights.fuse

    def tracked(*args: object, **kw: object) -> Run:
        nonlocal most
        run = real(*args, **kw)
        alive.append(weakref.ref(run))
        most = max(most, sum(r() is not None for r in alive))
        return run

    monkeypatch.setattr(fusion_weights, "fuse", tracked)
    cv_weights([runs[0], runs[1], runs[0]], qrels, method="wsum", folds=3, step=0.1, show_progress=False)
    assert len(alive) >= len(_grid(3, 0.1))
    assert most <= 2 + 3  # the fusion being scored, the one before it awaiting collection, the folds' choices


def test_cv_arguments_are_checked() -> None:
    runs, qrels = _cv_case()
    with pytest.raises(FinegrainError, match="'combmnz' takes no weights to search"):
        cv_weights(runs, qrels, method="combmnz")
    with pytest.raises(FinegrainError, match="folds=11 for 10 queries"):
        cv_weights(runs, qrels, folds=11)
    with pytest.raises(FinegrainError, match="at least 2"):
        cv_weights(runs[:1], qrels)
    with pytest.raises(FinegrainError, match="step=0.3 does not divide 1"):
        cv_weights(runs, qrels, step=0.3)
    # three runs, step 0.5: the 6 vectors of halves summing to 1
    assert _grid(3, 0.5) == [(0.0, 0.0, 1.0), (0.0, 0.5, 0.5), (0.0, 1.0, 0.0), (0.5, 0.0, 0.5), (0.5, 0.5, 0.0),
                             (1.0, 0.0, 0.0)]
