"""Interpolated precision at trec_eval's 11 recall levels (``iprec_at_recall_0.00`` .. ``_1.00``).

For one query with ``R`` relevant judgements (grade >= rel) of which ``M``
were returned, the ``m``-th relevant item returned at rank ``r_m`` has
precision ``m / r_m``. At recall level ``x`` trec_eval (``m_iprec_at_recall.c``)
first turns ``x`` into a number of relevant items::

    c(x)     = floor(x * R + 0.9)                    (in double precision, as the C code)
    iprec(x) = max_{m >= max(c, 1)} m / r_m          if c <= M
             = 0                                     if c > M (the level is never reached)

the largest precision at or after the point where the level is reached. The
``+ 0.9`` is trec_eval 9.0.7's rounding, which pytrec_eval uses; later trec_eval
versions round ``x * R`` to the nearest integer, which differs when its
fraction is below 0.5 (e.g. ``0.3 * 4``). A query that returned no relevant
item scores 0 at every level; a query without relevant judgements is excluded,
as from every ranking metric.
"""

from __future__ import annotations

import numpy as np

from finegrain.metrics.join import Joined
from finegrain.metrics.spec import IPREC_NAMES, MetricSpec
from finegrain.metrics.values import QueryValues


def iprec_at_recall(j: Joined, spec: MetricSpec) -> QueryValues:
    """Interpolated precision at the recall level named by ``spec.name`` (``iprec_at_recall_0.50``: 0.5)."""
    level = IPREC_NAMES[spec.name]
    R = j.n_relevant(spec.rel)
    relevant = j.hits(spec.rel)
    m = j.before(relevant)[relevant] + 1  # the m of each relevant item returned
    seg, rank = j.located(relevant)
    precision = m / (rank + 1.0)
    c = np.floor(level * R.astype(np.float64) + 0.9).astype(np.int64)  # per query
    out = np.zeros(j.n_queries, dtype=np.float64)
    after = m >= np.maximum(c[seg], 1)
    np.maximum.at(out, seg[after], precision[after])  # no m >= c when c > M: 0
    return QueryValues(R > 0, out)
