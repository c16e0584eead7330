"""Statistics on aligned per-query values: confidence intervals, paired tests, Holm, win/tie/loss.

Every function here is pure and takes per-query values that were computed once
(``results["per_query"]``); nothing recomputes a metric. Two systems are
compared on *aligned* arrays: ``a[i]`` and ``b[i]`` are the values of the same
query. Arrays must be finite (undefined values are removed, or refused, by the
caller: :mod:`finegrain.compare.comparison` refuses differing universes).

- :func:`bootstrap_ci` -- percentile (default), basic or BCa bootstrap interval
  of the mean (Efron & Tibshirani, 1993). ``"percentile"`` and ``"basic"`` use
  numpy vectorised resampling that draws exactly what
  :func:`scipy.stats.bootstrap` draws for the same generator and batch size
  (``np.random.default_rng(seed).integers(0, n, (batch, n))`` per batch;
  quantiles by linear interpolation), so the two agree to the last bit (a test
  checks this); ``"bca"`` delegates to :func:`scipy.stats.bootstrap`.
- :func:`paired_t_test` -- Student's paired t-test, two-sided
  (:func:`scipy.stats.ttest_rel`).
- :func:`randomization_test` -- Fisher's paired randomization (sign-flip) test
  of the mean difference, two-sided (Smucker, Allan & Carterette, 2007):
  exact over all ``2**n`` sign vectors when ``2**n <= n_resamples``, else
  ``n_resamples`` random sign vectors and the +1 correction
  ``p = (1 + #{|T*| >= |T|}) / (1 + n_resamples)`` (Phipson & Smyth, 2010).
- :func:`holm` -- Holm's (1979) step-down adjustment of a family of p-values.
- :func:`win_tie_loss` -- per-query wins, ties and losses of ``a`` against ``b``
  (the E>B / E<B / E=B of the CapRetrieval paper, Table 3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from finegrain.errors import FinegrainError


def finite(x: float | None) -> float | None:
    """``x``, or None when it is None, NaN or infinite (what a saved or shown value holds for undefined)."""
    return x if x is not None and math.isfinite(x) else None


CIMethod = Literal["percentile", "basic", "bca"]
CI_METHODS: tuple[str, ...] = ("percentile", "basic", "bca")

# Resamples are drawn in batches of at most this many values (rows x queries), to bound memory.
_BATCH_VALUES = 1 << 22


class Interval(NamedTuple):
    """A confidence interval ``(low, high)``."""

    low: float
    high: float


class TestResult(NamedTuple):
    """A test statistic and its two-sided p-value (``nan`` when the test is undefined, e.g. n < 2)."""

    statistic: float
    p_value: float


@dataclass(frozen=True)
class WinTieLoss:
    """Queries where ``a`` beats ``b`` (win), equals it within ``tol`` (tie) or loses."""

    win: int
    tie: int
    loss: int

    @property
    def n(self) -> int:
        return self.win + self.tie + self.loss

    def ratios(self) -> tuple[float, float, float] | None:
        """``(win, tie, loss) / n``; None for no query."""
        n = self.n
        return None if n == 0 else (self.win / n, self.tie / n, self.loss / n)

    def to_dict(self) -> dict[str, int]:
        return {"win": self.win, "tie": self.tie, "loss": self.loss}


# --------------------------------------------------------------------------- helpers


def _values(x: Sequence[float] | np.ndarray, what: str = "values") -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise FinegrainError(f"{what} must be one-dimensional, got shape {a.shape}", "pass one value per query")
    if not np.all(np.isfinite(a)):
        bad = int((~np.isfinite(a)).sum())
        raise FinegrainError(
            f"{what} contain {bad} undefined (nan/inf) value(s)",
            "drop queries with undefined values from every system before testing",
        )
    return a


def _paired(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x, y = _values(a, "a"), _values(b, "b")
    if x.shape != y.shape:
        raise FinegrainError(
            f"paired values differ in length: {len(x)} vs {len(y)}",
            "align both systems on the same queries (one value per query, same order)",
        )
    return x, y


def _seed(seed: int | None) -> np.random.Generator:
    return np.random.default_rng(seed)


def batch_size(n: int, n_resamples: int) -> int:
    """Rows per resampling batch for ``n`` values (the ``batch`` to give scipy to draw the same)."""
    return max(1, min(n_resamples, _BATCH_VALUES // max(n, 1)))


# --------------------------------------------------------------------------- bootstrap


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
    method: CIMethod = "percentile",
) -> Interval:
    """Bootstrap confidence interval of the mean of ``values``.

    ``method``: ``"percentile"`` (quantiles ``(1-c)/2`` and ``(1+c)/2`` of the
    resampled means), ``"basic"`` (``2*mean - `` those quantiles, swapped) or
    ``"bca"`` (bias-corrected and accelerated, via :func:`scipy.stats.bootstrap`).
    For ``"percentile"``/``"basic"`` the result equals
    ``scipy.stats.bootstrap((values,), np.mean, method=..., n_resamples=...,
    batch=batch_size(n, n_resamples), rng=np.random.default_rng(seed))``.
    A constant sample gives ``(v, v)``; one value gives ``(v, v)``.
    """
    x = _values(values)
    if len(x) == 0:
        raise FinegrainError("cannot bootstrap an empty sample", "give at least one value")
    if method not in CI_METHODS:
        raise FinegrainError(f"unknown bootstrap method {method!r}", f"use one of {', '.join(CI_METHODS)}")
    if not 0.0 < confidence < 1.0:
        raise FinegrainError(f"confidence must be in (0, 1), got {confidence!r}", "e.g. confidence=0.95")
    if n_resamples < 1:
        raise FinegrainError(f"n_resamples must be >= 1, got {n_resamples!r}", "e.g. n_resamples=10000")
    if np.all(x == x[0]):
        v = float(x[0])
        return Interval(v, v)
    n = len(x)
    rng = _seed(seed)
    if method == "bca":
        from scipy.stats import bootstrap

        res = bootstrap((x,), np.mean, n_resamples=n_resamples, confidence_level=confidence, method="BCa",
                        batch=batch_size(n, n_resamples), rng=rng, vectorized=True)
        return Interval(float(res.confidence_interval.low), float(res.confidence_interval.high))
    step = batch_size(n, n_resamples)
    means = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        idx = rng.integers(0, n, (rows, n))
        means[start:start + rows] = x[idx].mean(axis=-1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    if method == "basic":
        m = float(x.mean())
        low, high = 2.0 * m - high, 2.0 * m - low
    return Interval(float(low), float(high))


# --------------------------------------------------------------------------- paired tests


def paired_t_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> TestResult:
    """Two-sided paired t-test of ``mean(a - b) == 0`` (:func:`scipy.stats.ttest_rel`).

    Degenerate cases scipy leaves as nan get a defined answer when one exists:
    all differences zero -> ``(0.0, 1.0)``; all differences equal and non-zero
    -> ``(±inf, 0.0)``. Fewer than 2 pairs -> ``(nan, nan)``.
    """
    x, y = _paired(a, b)
    if len(x) < 2:
        return TestResult(math.nan, math.nan)
    d = x - y
    if np.all(d == d[0]):
        if d[0] == 0:
            return TestResult(0.0, 1.0)
        return TestResult(math.copysign(math.inf, float(d[0])), 0.0)
    from scipy.stats import ttest_rel

    res = ttest_rel(x, y)
    return TestResult(float(res.statistic), float(res.pvalue))


def randomization_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 10000,
    seed: int | None = 0,
) -> TestResult:
    """Fisher's paired randomization test (sign flips) of the mean difference, two-sided.

    Under the null each per-query difference ``d_i = a_i - b_i`` is equally
    likely to have either sign. The statistic is ``T = mean(d)``; the p-value
    is the share of sign vectors ``s`` with ``|mean(s*d)| >= |T|`` (up to a
    relative tolerance of 1e-9 of ``sum|d|``, so that ties in floating point
    count as ties):

    - exact over all ``2**m`` sign vectors of the ``m`` non-zero differences
      when ``2**m <= n_resamples`` (the observed one included, no correction;
      zero differences do not change the statistic under any sign, so leaving
      them out gives the same exact p-value);
    - otherwise ``n_resamples`` random sign vectors (numpy, ``seed``) and
      ``p = (1 + count) / (1 + n_resamples)``, never 0.

    No pair -> ``(nan, nan)``. Equals ``scipy.stats.permutation_test`` with
    ``permutation_type="samples"`` on the mean difference in the exact case.
    """
    x, y = _paired(a, b)
    n = len(x)
    if n == 0:
        return TestResult(math.nan, math.nan)
    if n_resamples < 1:
        raise FinegrainError(f"n_resamples must be >= 1, got {n_resamples!r}", "e.g. n_resamples=10000")
    d = x - y
    observed = float(d.mean())
    d = d[d != 0]  # a zero difference is the same under both signs: it changes neither T nor its null
    n = len(d)
    total = abs(float(np.dot(np.ones(n), d)))
    tol = 1e-9 * float(np.abs(d).sum())
    if n == 0 or total <= tol:  # mean difference 0: every sign vector is at least as extreme
        return TestResult(observed, 1.0)
    exact = n < 63 and (1 << n) <= n_resamples
    count = 0
    if exact:
        n_total = 1 << n
        step = max(1, _BATCH_VALUES // n)
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, n_total, step):
            codes = np.arange(start, min(n_total, start + step), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            count += int((np.abs(signs @ d) >= total - tol).sum())
        return TestResult(observed, count / n_total)
    rng = _seed(seed)
    step = batch_size(n, n_resamples)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, (rows, n))
        count += int((np.abs(signs @ d) >= total - tol).sum())
    return TestResult(observed, (1 + count) / (1 + n_resamples))


# --------------------------------------------------------------------------- multiple testing


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the input order.

    With the ``m`` p-values sorted ascending ``p(1) <= ... <= p(m)``:
    ``adj(i) = max_{j <= i} min(1, (m - j + 1) * p(j))`` -- monotone, and
    ``adj <= alpha`` rejects exactly what Holm's procedure rejects at ``alpha``
    (the same as statsmodels' ``multipletests(method="holm")``). A ``nan``
    p-value (an undefined test) is not part of the family: it stays ``nan`` and
    does not count in ``m``.
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise FinegrainError(f"p-values must be one-dimensional, got shape {p.shape}", "pass a flat list")
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise FinegrainError(f"p-values must lie in [0, 1], got {p[ok][(p[ok] < 0) | (p[ok] > 1)][:3].tolist()}",
                             "pass p-values, not statistics")
    out = np.full_like(p, np.nan)
    idx = np.flatnonzero(ok)
    m = len(idx)
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


# --------------------------------------------------------------------------- win / tie / loss


def win_tie_loss(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, *, tol: float = 1e-9) -> WinTieLoss:
    """Count queries with ``a - b > tol`` (win), ``|a - b| <= tol`` (tie), ``a - b < -tol`` (loss)."""
    x, y = _paired(a, b)
    if tol < 0:
        raise FinegrainError(f"tol must be >= 0, got {tol!r}", "e.g. tol=1e-9")
    d = x - y
    return WinTieLoss(int((d > tol).sum()), int((np.abs(d) <= tol).sum()), int((d < -tol).sum()))
