"""Judgement coverage: how much of what a system retrieved the qrels judge.

For one query, with ``n`` results returned and cutoff ``k`` (without ``@k``,
``k = n``)::

    judged@k = |{i <= k : item i has a judgement}| / min(k, n)

A judgement of any grade counts, 0 and negative grades included: the metric
says whether the other metrics' numbers rest on judged items or on items
scored 0 because nobody looked at them (unjudged is not irrelevant: see
``finegrain pool``). This is ir_measures' ``Judged@k``
(``providers/judged_provider.py``):

- the denominator is ``k``, or the number of results when fewer came back;
- every universe query is scored, those without any judgement too (they
  score 0 when they retrieved anything, as ir_measures scores a qrels query
  whose judgements are empty);
- a query that retrieved nothing (absent from the run, or present with no
  result) scores 0: ir_measures gives an absent query its default 0, and
  finegrain treats an empty ranking as an absent one (ir_measures itself
  divides by zero on an empty ranking);
- the mean is over the scored queries, like the other metrics.

Ranks come from the one ranking rule (score descending, then document id
descending, as trec_eval); ir_measures' judged provider breaks score ties by
document id *ascending*, so the two differ only on a query where tied
scores straddle rank ``k``.

No ``rel``: every grade counts.
"""

from __future__ import annotations

import numpy as np

from finegrain.metrics.join import Joined
from finegrain.metrics.spec import MetricSpec
from finegrain.metrics.values import QueryValues


def judged(j: Joined, spec: MetricSpec) -> QueryValues:
    """Share of the top ``k`` (``min(k, returned)``) that has a judgement; 0 when nothing was returned."""
    top = j.judged if spec.k is None else j.judged & (j.rank < spec.k)
    n_top = j.n_returned if spec.k is None else np.minimum(j.n_returned, spec.k)
    values = j.count(top) / np.maximum(n_top, 1)
    return QueryValues(np.ones(j.n_queries, dtype=bool), values)
