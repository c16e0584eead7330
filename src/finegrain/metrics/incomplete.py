"""Measures for incomplete judgements: bpref and infAP, as trec_eval computes them.

Both read the qrels the way trec_eval's ``form_res_rels.c`` does. For one
query and relevance level ``rel``, a ranked item is

- *relevant*: judged with grade >= ``rel``;
- *judged non-relevant*: judged with ``0 <= grade < rel``;
- *pooled but unjudged*: judged with a negative grade (a sampled pool marks
  the documents it did not judge with -1, the convention trec_eval's
  ``infAP`` and ir_measures' ``infAP`` follow);
- *not pooled*: absent from the qrels.

``R`` is the number of relevant judgements and ``N`` the number of judged
non-relevant ones (grades ``0 .. rel-1``). A query with ``R = 0`` is excluded,
as from every ranking metric; a query absent from the run scores 0. Neither
measure takes a cutoff (trec_eval's have none).
"""

from __future__ import annotations

import numpy as np

from finegrain.metrics.join import Joined
from finegrain.metrics.spec import MetricSpec
from finegrain.metrics.values import QueryValues

#: trec_eval's ``INFAP_EPSILON``: keeps infAP's estimate of the precision above a relevant item finite.
INFAP_EPSILON = 1e-5


def _kinds(j: Joined, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per ranked entry: relevant, judged non-relevant, pooled but unjudged."""
    relevant = j.grade >= rel
    nonrel = j.judged & (j.grade >= 0) & ~relevant
    unjudged = j.judged & (j.grade < 0)
    return relevant, nonrel, unjudged


def bpref(j: Joined, spec: MetricSpec) -> QueryValues:
    """Binary preference (Buckley and Voorhees, SIGIR 2004; trec_eval ``bpref``, ``m_bpref.c``)::

        n_r    = judged non-relevant items ranked above the relevant item r
        bpref  = (1 / R) * sum_{r relevant, retrieved} (1 - min(n_r, R) / min(N, R))

    with the term 1 when ``n_r = 0``. Unjudged items (not pooled, or pooled
    but unjudged) are skipped: only judged items express a preference.
    """
    R = j.n_relevant(spec.rel)
    relevant, nonrel, _ = _kinds(j, spec.rel)
    keep = (j.judged_grade >= 0) & (j.judged_grade < spec.rel)
    N = np.bincount(j.judged_seg[keep], minlength=j.n_queries)
    above = j.before(nonrel).astype(np.float64)
    Rq, Nq = R[j.seg].astype(np.float64), N[j.seg].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(above > 0, 1.0 - np.minimum(above, Rq) / np.minimum(Nq, Rq), 1.0)
    return QueryValues(R > 0, j.count(relevant, term) / np.maximum(R, 1))


def infap(j: Joined, spec: MetricSpec) -> QueryValues:
    """Inferred average precision (Yilmaz and Aslam, CIKM 2006; trec_eval ``infAP``, ``m_infap.c``).

    For the relevant item at rank ``i`` (1-based) with, above it, ``r``
    relevant, ``n`` judged non-relevant and ``u`` pooled-but-unjudged items::

        P_i   = 1                                                  if i = 1
              = 1/i + ((i-1)/i) * ((r + n + u) / (i-1)) * ((r + e) / (r + n + 2e))   otherwise
        infAP = (1 / R) * sum_{relevant, retrieved} P_i            (e = 1e-5)

    Items not in the pool count as non-relevant through the rank ``i``; pooled
    but unjudged items are assumed relevant in the proportion of the judged
    ones. With a fully judged pool (no negative grade) and nothing unpooled
    above a relevant item, ``P_i`` is (up to ``e``) the precision at ``i``, and
    infAP is AP.
    """
    R = j.n_relevant(spec.rel)
    relevant, nonrel, unjudged = _kinds(j, spec.rel)
    r = j.before(relevant).astype(np.float64)
    n = j.before(nonrel).astype(np.float64)
    u = j.before(unjudged).astype(np.float64)
    i = j.rank.astype(np.float64)  # 0-based: the number of items above
    with np.errstate(divide="ignore", invalid="ignore"):
        later = (1.0 / (i + 1.0) + (i / (i + 1.0)) * ((r + n + u) / i)
                 * ((r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)))
    term = np.where(j.rank == 0, 1.0, later)
    return QueryValues(R > 0, j.count(relevant, term) / np.maximum(R, 1))
