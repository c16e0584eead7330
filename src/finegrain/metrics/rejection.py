"""Rejection metrics, exactly as PhotoBench (Appendix B.2) defines them.

An empty prediction is a rejection. Over every query of the universe (a query
absent from the run predicts the empty set; ``G`` is the set of judged items
with grade >= ``rel``)::

    A = #{G empty and P empty}      correct rejection
    B = #{G non-empty and P empty}  false rejection
    C = #{G empty and P non-empty}  missed rejection

    reject_precision = A / (A + B)
    reject_recall    = A / (A + C)
    reject_f1        = 2A / (2A + B + C)

Each is undefined (None) when its denominator is 0, e.g. reject_precision when
the system never rejects. Per query, the value is the query's own share of the
ratio: reject_precision is 1 for A, 0 for B and undefined otherwise;
reject_recall is 1 for A, 0 for C; reject_f1 is 1 for A, 0 for B or C; and the
aggregate is the ratio of the sums, not a mean of the per-query values.
"""

from __future__ import annotations

import numpy as np

from finegrain.metrics.join import Joined
from finegrain.metrics.spec import MetricSpec
from finegrain.metrics.values import QueryValues


def rejection_counts(j: Joined, spec: MetricSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-query indicators (float64) of A (correct), B (false) and C (missed) rejection."""
    gt_empty = j.n_relevant(spec.rel) == 0
    pred_empty = j.n_returned == 0
    a = (gt_empty & pred_empty).astype(np.float64)
    b = (~gt_empty & pred_empty).astype(np.float64)
    c = (gt_empty & ~pred_empty).astype(np.float64)
    return a, b, c


def reject_precision(j: Joined, spec: MetricSpec) -> QueryValues:
    """``A / (A + B)``: how often a rejection was right."""
    a, b, _ = rejection_counts(j, spec)
    return QueryValues.ratio(np.ones(j.n_queries, dtype=bool), a, a + b)


def reject_recall(j: Joined, spec: MetricSpec) -> QueryValues:
    """``A / (A + C)``: how many zero-answer queries were rejected."""
    a, _, c = rejection_counts(j, spec)
    return QueryValues.ratio(np.ones(j.n_queries, dtype=bool), a, a + c)


def reject_f1(j: Joined, spec: MetricSpec) -> QueryValues:
    """``2A / (2A + B + C)``: harmonic mean of reject precision and recall."""
    a, b, c = rejection_counts(j, spec)
    return QueryValues.ratio(np.ones(j.n_queries, dtype=bool), 2 * a, 2 * a + b + c)
