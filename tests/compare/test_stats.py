"""finegrain.compare.stats against scipy, exact enumeration and hand computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hs

from finegrain.compare.stats import (
    Interval,
    WinTieLoss,
    batch_size,
    bootstrap_ci,
    holm,
    paired_t_test,
    randomization_test,
    win_tie_loss,
)
from finegrain.errors import FinegrainError


def _mean_diff(a, b, axis=-1):
    return np.mean(a - b, axis=axis)


# --------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("method", ["percentile", "basic"])
@pytest.mark.parametrize("n", [7, 377, 6000])  # 6000: several resampling batches
def test_bootstrap_equals_scipy_with_same_generator(method: str, n: int) -> None:
    x = np.random.default_rng(n).random(n) ** 2
    r = 3000
    got = bootstrap_ci(x, n_resamples=r, seed=11, method=method)
    ref = st.bootstrap((x,), np.mean, n_resamples=r, method=method, batch=batch_size(n, r),
                       rng=np.random.default_rng(11), vectorized=True).confidence_interval
    assert got == Interval(pytest.approx(ref.low, abs=1e-15), pytest.approx(ref.high, abs=1e-15))


def test_bootstrap_percentile_by_hand_reimplementation() -> None:
    # an independent, loop-based percentile bootstrap drawing the same indices
    x = np.array([0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75])
    rng = np.random.default_rng(3)
    idx = rng.integers(0, len(x), (500, len(x)))
    means = sorted(sum(x[i] for i in row) / len(x) for row in idx)

    def q(p: float) -> float:  # linear interpolation, numpy's default
        h = (len(means) - 1) * p
        lo = math.floor(h)
        return means[lo] + (h - lo) * (means[min(lo + 1, len(means) - 1)] - means[lo])

    got = bootstrap_ci(x, n_resamples=500, seed=3, confidence=0.9)
    assert got.low == pytest.approx(q(0.05), abs=1e-12)
    assert got.high == pytest.approx(q(0.95), abs=1e-12)


def test_bootstrap_bca_matches_scipy() -> None:
    x = np.random.default_rng(1).exponential(size=60)
    got = bootstrap_ci(x, n_resamples=2000, seed=5, method="bca")
    ref = st.bootstrap((x,), np.mean, n_resamples=2000, method="BCa", batch=batch_size(60, 2000),
                       rng=np.random.default_rng(5)).confidence_interval
    assert got.low == pytest.approx(ref.low) and got.high == pytest.approx(ref.high)


def test_bootstrap_is_deterministic_and_seed_sensitive() -> None:
    x = np.random.default_rng(0).random(50)
    assert bootstrap_ci(x, seed=1) == bootstrap_ci(x, seed=1)
    assert bootstrap_ci(x, seed=1) != bootstrap_ci(x, seed=2)


def test_bootstrap_degenerate_and_bad_input() -> None:
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5)
    assert bootstrap_ci([0.3]) == (0.3, 0.3)
    with pytest.raises(FinegrainError, match="empty"):
        bootstrap_ci([])
    with pytest.raises(FinegrainError, match="undefined"):
        bootstrap_ci([0.1, float("nan")])
    with pytest.raises(FinegrainError, match="unknown bootstrap method 'studentized'"):
        bootstrap_ci([0.1, 0.2], method="studentized")  # type: ignore[arg-type]
    with pytest.raises(FinegrainError, match="confidence"):
        bootstrap_ci([0.1, 0.2], confidence=95)


@settings(max_examples=40, deadline=None)
@given(hs.lists(hs.floats(0, 1, allow_nan=False), min_size=2, max_size=40))
def test_bootstrap_percentile_interval_is_ordered_and_within_range(xs: list[float]) -> None:
    lo, hi = bootstrap_ci(xs, n_resamples=200)
    assert min(xs) - 1e-12 <= lo <= hi <= max(xs) + 1e-12


# --------------------------------------------------------------------------- t-test


def test_paired_t_test_equals_scipy() -> None:
    rng = np.random.default_rng(4)
    a = rng.random(100)
    b = a + rng.normal(0.05, 0.2, 100)
    ref = st.ttest_rel(a, b)
    got = paired_t_test(a, b)
    assert got.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert got.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)


def test_paired_t_test_degenerate_cases() -> None:
    assert paired_t_test([0.2, 0.4], [0.2, 0.4]) == (0.0, 1.0)
    s, p = paired_t_test([0.3, 0.5], [0.2, 0.4])  # constant difference +0.1 (to rounding)
    assert (s, p) == (math.inf, 0.0) or p < 1e-6
    assert all(math.isnan(v) for v in paired_t_test([0.1], [0.2]))
    with pytest.raises(FinegrainError, match="differ in length: 2 vs 3"):
        paired_t_test([0.1, 0.2], [0.1, 0.2, 0.3])


# --------------------------------------------------------------------------- randomization test


def _enumerated_p(a: np.ndarray, b: np.ndarray) -> float:
    d = a - b
    t = abs(d.mean())
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        if abs((np.asarray(signs) * d).mean()) >= t - 1e-12:
            hits += 1
    return hits / 2 ** len(d)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 12])
def test_randomization_exact_equals_enumeration_and_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    grid = np.array([0.0, 0.25, 0.5, 1.0])  # coarse values: ties in the null and zero differences
    a, b = rng.choice(grid, n), rng.choice(grid, n)
    a[0], b[0] = 1.0, 0.0  # at least one non-zero difference
    got = randomization_test(a, b, n_resamples=4096)
    assert got.statistic == pytest.approx(float((a - b).mean()))
    assert got.p_value == pytest.approx(_enumerated_p(a, b), abs=1e-12)
    if n >= 2:  # scipy needs two observations
        ref = st.permutation_test((a, b), _mean_diff, permutation_type="samples", n_resamples=4096,
                                  vectorized=True, alternative="two-sided")
        assert got.p_value == pytest.approx(float(ref.pvalue), abs=1e-12)


def test_randomization_exact_hand_case() -> None:
    # d = (1, 1, 1): |mean| = 1 only for all-plus or all-minus signs: p = 2/8
    assert randomization_test([1, 1, 1], [0, 0, 0]).p_value == pytest.approx(0.25)
    # zeros do not matter: d = (1, 1, 1, 0, 0) gives the same exact p
    assert randomization_test([1, 1, 1, 0, 0], [0, 0, 0, 0, 0]).p_value == pytest.approx(0.25)


def test_randomization_sampled_is_close_to_scipy_and_corrected() -> None:
    rng = np.random.default_rng(9)
    a = rng.random(200)
    b = a - rng.normal(0.02, 0.15, 200)
    got = randomization_test(a, b, n_resamples=20000, seed=1)
    ref = st.permutation_test((a, b), _mean_diff, permutation_type="samples", n_resamples=20000,
                              vectorized=True, rng=np.random.default_rng(2))
    assert 0.0 < ref.pvalue < 1.0
    se = math.sqrt(ref.pvalue * (1 - ref.pvalue) / 20000)
    assert abs(got.p_value - ref.pvalue) < 6 * se + 2e-4
    assert randomization_test(a, b, n_resamples=20000, seed=1) == got  # deterministic


def test_randomization_plus_one_correction_never_zero() -> None:
    a = np.ones(100)
    b = np.zeros(100)
    got = randomization_test(a, b, n_resamples=999)
    assert got.p_value == pytest.approx(1 / 1000)


def test_randomization_no_difference_and_empty() -> None:
    assert randomization_test([0.1, 0.2], [0.1, 0.2]).p_value == 1.0
    assert math.isnan(randomization_test([], []).p_value)


# --------------------------------------------------------------------------- Holm


def test_holm_hand_computed() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    got = holm([0.01, 0.04, 0.03, 0.005])
    assert got.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_keeps_nan_out_of_the_family() -> None:
    assert holm([0.5, 0.6]).tolist() == [1.0, 1.0]
    got = holm([0.01, float("nan"), 0.02])  # m = 2
    assert got[0] == pytest.approx(0.02) and math.isnan(got[1]) and got[2] == pytest.approx(0.02)
    assert holm([]).tolist() == []
    with pytest.raises(FinegrainError, match=r"\[0, 1\]"):
        holm([0.2, 3.0])


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.floats(0, 1, allow_nan=False), min_size=1, max_size=12))
def test_holm_properties(ps: list[float]) -> None:
    p = np.asarray(ps)
    adj = holm(p)
    m = len(p)
    assert np.all(adj >= p - 1e-15)
    assert np.all(adj <= np.minimum(1.0, m * p) + 1e-15)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in p
    # step-down rejection at alpha equals Holm's procedure
    alpha = 0.05
    rejected = np.zeros(m, dtype=bool)
    for i, j in enumerate(order):
        if p[j] <= alpha / (m - i):
            rejected[j] = True
        else:
            break
    assert np.array_equal(adj <= alpha, rejected)


# --------------------------------------------------------------------------- win / tie / loss


def test_win_tie_loss() -> None:
    a = [0.5, 0.2, 0.3, 0.3 + 1e-12, 1.0]
    b = [0.4, 0.3, 0.3, 0.3, 0.0]
    w = win_tie_loss(a, b)
    assert w == WinTieLoss(2, 2, 1)
    assert w.n == 5 and w.ratios() == (0.4, 0.4, 0.2)
    assert win_tie_loss(a, b, tol=0.0) == WinTieLoss(3, 1, 1)
    assert WinTieLoss(0, 0, 0).ratios() is None
