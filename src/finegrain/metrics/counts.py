"""Counts per query, summed over queries: trec_eval's ``num_ret``, ``num_rel`` and ``num_rel_ret``.

For one query::

    num_ret      = items the run returned
    num_rel      = judged items with grade >= rel (whether returned or not)
    num_rel_ret  = returned items with grade >= rel

Their aggregate is the **sum** over the scored queries (trec_eval's summary
line: "Summary figure is sum of individual topics, not average"; ir_measures'
``NumRet``, ``NumRel`` and ``NumRet(rel=N)`` aggregate the same way). Every
universe query is scored, those without a relevant item too (they add 0 to
``num_rel``), and a query absent from the run returned nothing. ``num_ret``
takes no ``rel``. ranx's ``hits@k`` is ``num_rel_ret`` in the top ``k``,
averaged instead (:func:`finegrain.metrics.ranking.hits`).
"""

from __future__ import annotations

import numpy as np

from finegrain.metrics.join import Joined
from finegrain.metrics.spec import MetricSpec
from finegrain.metrics.values import QueryValues


def _all(j: Joined) -> np.ndarray:
    return np.ones(j.n_queries, dtype=bool)


def num_ret(j: Joined, spec: MetricSpec) -> QueryValues:
    """Items returned (trec_eval ``num_ret``, ir_measures ``NumRet``)."""
    return QueryValues(_all(j), j.n_returned.astype(np.float64), "sum")


def num_rel(j: Joined, spec: MetricSpec) -> QueryValues:
    """Judged items with grade >= rel (trec_eval ``num_rel``, ir_measures ``NumRel``)."""
    return QueryValues(_all(j), j.n_relevant(spec.rel).astype(np.float64), "sum")


def num_rel_ret(j: Joined, spec: MetricSpec) -> QueryValues:
    """Returned items with grade >= rel (trec_eval ``num_rel_ret``, ir_measures ``NumRet(rel=N)``)."""
    return QueryValues(_all(j), j.count(j.hit_entries(spec.rel)), "sum")
