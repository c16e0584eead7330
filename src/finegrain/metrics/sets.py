"""Set metrics for systems that return a variable-length result set.

For one query: the prediction ``P`` is the whole returned set (its top ``k``
by the one ranking rule with ``@k``); an absent query predicts the empty set.
``G`` is the set of judged items with grade >= ``rel``. With
``TP = |P & G|``, ``FP = |P| - TP``, ``FN = |G| - TP``:

- ``set_precision = TP / |P|``, undefined (None) when ``P`` is empty;
- ``set_recall = TP / |G|``, undefined when ``G`` is empty;
- ``set_f1``, ``set_f2``, ``set_fbeta(beta=b)``::

      F_b = (1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP)

  the harmonic mean of precision and recall where both exist, and 0 when only
  one of them exists (an empty prediction for a query with answers, or a
  non-empty prediction for a query without any); undefined when ``P`` and
  ``G`` are both empty (a correct rejection: see :mod:`finegrain.metrics.rejection`).

Every universe query is scored (none is excluded); the aggregate is the mean
of the defined values and the number of undefined ones is reported.

The ``pair_*`` metrics are their micro averages over (query, item) pairs, as
CapRetrieval reports them: ``pair_precision = sum TP / sum |P|``,
``pair_recall = sum TP / sum |G|``, ``pair_f1 = 2 sum TP / (sum |P| + sum |G|)``.
Their per-query values are the per-query ratios; only the aggregate differs.
"""

from __future__ import annotations

import numpy as np

from finegrain.metrics.join import Joined
from finegrain.metrics.spec import MetricSpec
from finegrain.metrics.values import QueryValues


def _counts(j: Joined, spec: MetricSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query: TP, |P| and |G| as float arrays."""
    tp = j.count(j.hit_entries(spec.rel, spec.k))
    n_pred = j.n_returned if spec.k is None else np.minimum(j.n_returned, spec.k)
    return tp, n_pred.astype(np.float64), j.n_relevant(spec.rel).astype(np.float64)


def _all(j: Joined) -> np.ndarray:
    return np.ones(j.n_queries, dtype=bool)


def set_precision(j: Joined, spec: MetricSpec) -> QueryValues:
    """``TP / |P|``; undefined for an empty prediction."""
    tp, n_pred, _ = _counts(j, spec)
    return QueryValues(_all(j), QueryValues.ratio(_all(j), tp, n_pred).values)


def set_recall(j: Joined, spec: MetricSpec) -> QueryValues:
    """``TP / |G|``; undefined for a query without relevant item."""
    tp, _, n_rel = _counts(j, spec)
    return QueryValues(_all(j), QueryValues.ratio(_all(j), tp, n_rel).values)


def f_beta(j: Joined, spec: MetricSpec, beta: float) -> QueryValues:
    """``(1 + b^2) TP / ((1 + b^2) TP + b^2 FN + FP)``; undefined when ``P`` and ``G`` are both empty."""
    tp, n_pred, n_rel = _counts(j, spec)
    b2 = beta * beta
    num = (1 + b2) * tp
    den = num + b2 * (n_rel - tp) + (n_pred - tp)
    return QueryValues(_all(j), QueryValues.ratio(_all(j), num, den).values)


def set_f1(j: Joined, spec: MetricSpec) -> QueryValues:
    """F1 = ``2 TP / (2 TP + FN + FP)`` = ``2 TP / (|P| + |G|)``."""
    return f_beta(j, spec, 1.0)


def set_f2(j: Joined, spec: MetricSpec) -> QueryValues:
    """F2 = ``5 TP / (5 TP + 4 FN + FP)`` (recall weighted 2x)."""
    return f_beta(j, spec, 2.0)


def set_fbeta(j: Joined, spec: MetricSpec) -> QueryValues:
    """F-beta with the spec's ``beta``."""
    assert spec.beta is not None  # MetricSpec requires beta for set_fbeta
    return f_beta(j, spec, spec.beta)


def pair_precision(j: Joined, spec: MetricSpec) -> QueryValues:
    """Micro precision ``sum TP / sum |P|`` over all queries."""
    tp, n_pred, _ = _counts(j, spec)
    return QueryValues.ratio(_all(j), tp, n_pred)


def pair_recall(j: Joined, spec: MetricSpec) -> QueryValues:
    """Micro recall ``sum TP / sum |G|`` over all queries."""
    tp, _, n_rel = _counts(j, spec)
    return QueryValues.ratio(_all(j), tp, n_rel)


def pair_f1(j: Joined, spec: MetricSpec) -> QueryValues:
    """Micro F1 ``2 sum TP / (sum |P| + sum |G|)`` (harmonic mean of pair precision and recall)."""
    tp, n_pred, n_rel = _counts(j, spec)
    return QueryValues.ratio(_all(j), 2 * tp, n_pred + n_rel)
