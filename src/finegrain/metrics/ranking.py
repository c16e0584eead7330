"""Ranking metrics, as trec_eval computes them.

Notation for one query: ranks ``i = 1, 2, ...`` come from the one ranking rule
(score descending, then document id descending); ``rel_i = 1`` when the item at
rank ``i`` has grade >= ``rel`` (default 1), else 0 (unjudged items are not
relevant); ``R`` is the number of judged items with grade >= ``rel``; ``k`` is
the cutoff (without ``@k``, the whole ranking).

Denominators: a query with ``R = 0`` is excluded (not scored) from every
metric here; a universe query absent from the run is scored with an empty
ranking (0, or "not found" for ``median_rank``).

Every function has the signature ``(joined, spec) -> QueryValues`` and works on
the columnar arrays of :class:`~finegrain.metrics.join.Joined` with numpy,
never per query in Python.
"""

from __future__ import annotations

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.metrics.join import Joined
from finegrain.metrics.spec import MetricSpec
from finegrain.metrics.values import QueryValues


def precision(j: Joined, spec: MetricSpec) -> QueryValues:
    """Precision at k (trec_eval ``P_k``)::

        P@k = sum_{i<=k} rel_i / k

    The denominator is ``k`` even when fewer than ``k`` items were returned.
    """
    R = j.n_relevant(spec.rel)
    assert spec.k is not None  # MetricSpec requires a cutoff for precision
    return QueryValues(R > 0, j.count(j.hit_entries(spec.rel, spec.k)) / spec.k)


def recall(j: Joined, spec: MetricSpec) -> QueryValues:
    """Recall at k (trec_eval ``recall_k``; without k, ``set_recall``)::

        R@k = sum_{i<=k} rel_i / R
    """
    R = j.n_relevant(spec.rel)
    return QueryValues(R > 0, j.count(j.hit_entries(spec.rel, spec.k)) / np.maximum(R, 1))


def hit_rate(j: Joined, spec: MetricSpec) -> QueryValues:
    """Hit rate at k (trec_eval ``success_k``; DuReader's and CLIP_benchmark's "recall@k")::

        hit@k = 1 if sum_{i<=k} rel_i > 0 else 0
    """
    R = j.n_relevant(spec.rel)
    return QueryValues(R > 0, (j.count(j.hit_entries(spec.rel, spec.k)) > 0).astype(np.float64))


def hits(j: Joined, spec: MetricSpec) -> QueryValues:
    """Hits at k (ranx ``hits@k``): the number of relevant items in the top k, a count, averaged over queries::

        hits@k = sum_{i<=k} rel_i

    Not ``hit_rate@k`` (0 or 1 per query); trec_eval's ``num_rel_ret`` is the same count without a cutoff,
    summed over queries.
    """
    R = j.n_relevant(spec.rel)
    return QueryValues(R > 0, j.count(j.hit_entries(spec.rel, spec.k)))


def fail_rate(j: Joined, spec: MetricSpec) -> QueryValues:
    """Fail rate at k: the first relevant item is not within the top k (``fail_rate`` = ``fail_rate@1``)::

        fail@k = 1 - hit@k

    With the default ``k = 1`` this is "the first relevant item is not at rank 1".
    """
    hit = hit_rate(j, spec)
    return QueryValues(hit.scored, 1.0 - hit.values)


def mrr(j: Joined, spec: MetricSpec) -> QueryValues:
    """Reciprocal rank of the first relevant item within the top k (trec_eval ``recip_rank`` on the run cut at k)::

        RR@k = 1 / min{i <= k : rel_i = 1}, or 0 if there is none
    """
    R = j.n_relevant(spec.rel)
    first = j.first_rank(j.hit_entries(spec.rel, spec.k))
    return QueryValues(R > 0, np.where(first >= 0, 1.0 / np.maximum(first + 1.0, 1.0), 0.0))


def median_rank(j: Joined, spec: MetricSpec) -> QueryValues:
    """Rank of the first relevant item, aggregated by the median::

        r = min{i <= k : rel_i = 1}, or +inf (reported as None) if there is none
        median_rank@k = median of r over the scored queries

    The median may be +inf when more than half of the queries never find a
    relevant item.
    """
    R = j.n_relevant(spec.rel)
    first = j.first_rank(j.hit_entries(spec.rel, spec.k))
    return QueryValues(R > 0, np.where(first >= 0, first + 1.0, np.inf), "median")


def r_precision(j: Joined, spec: MetricSpec) -> QueryValues:
    """Precision at R (trec_eval ``Rprec``)::

        R-prec = sum_{i<=R} rel_i / R
    """
    R = j.n_relevant(spec.rel)
    mask = (j.grade >= spec.rel) & (j.rank < R[j.seg])
    return QueryValues(R > 0, j.count(mask) / np.maximum(R, 1))


def average_precision(j: Joined, spec: MetricSpec) -> QueryValues:
    """Average precision at k (trec_eval ``map_cut_k``; without k, ``map``)::

        AP@k = (1 / R) * sum_{i<=k, rel_i=1} P@i,   P@i = sum_{j<=i} rel_j / i
    """
    R = j.n_relevant(spec.rel)
    hits = j.hit_entries(spec.rel, spec.k)
    seg, rank = j.located(hits)
    # Number of relevant items up to and including each hit: its position among its query's hits.
    n = len(seg)
    start = np.concatenate(([True], seg[1:] != seg[:-1])) if n else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(start)
    group = np.cumsum(start) - 1
    nth = np.arange(1, n + 1, dtype=np.float64) - starts[group] if n else np.zeros(0)
    prec = nth / (rank + 1.0)
    total = np.bincount(seg, weights=prec, minlength=j.n_queries)
    return QueryValues(R > 0, total / np.maximum(R, 1))


def gm_map(j: Joined, spec: MetricSpec) -> QueryValues:
    """Geometric mean average precision (trec_eval ``gm_map``): per query the AP of :func:`average_precision`,
    aggregated by the geometric mean of ``max(AP, 1e-5)`` (:data:`~finegrain.metrics.values.GMEAN_FLOOR`,
    trec_eval's ``MIN_GEO_MEAN``), which rewards systems that do not fail on any query.

    (trec_eval stores ``log(max(AP, 1e-5))`` per query and prints no per-query line for it.)
    """
    ap = average_precision(j, spec)
    return QueryValues(ap.scored, ap.values, "gmean")


#: gdeval's (TREC Web track) largest grade; ERR's stopping probability of a grade g is (2^g - 1) / 2^4.
ERR_MAX_GRADE = 4


def err(j: Joined, spec: MetricSpec) -> QueryValues:
    """Expected reciprocal rank at k (Chapelle et al., CIKM 2009), as gdeval computes it (ir_measures ``ERR@k``)::

        R(g)   = (2^g - 1) / 2^4            for g > 0, else 0 (gdeval's MAX_JUDGMENT = 4)
        ERR@k  = sum_{i<=k} R(g_i) / i * prod_{j<i} (1 - R(g_j))

    A user scans down the ranking and stops at rank ``i`` with probability
    ``R(g_i)``. Grades above 4 have no stopping probability on this scale and
    are refused (gdeval refuses them too). No ``rel``: the gains are the
    grades. Queries without an item of grade >= 1 are excluded, as gdeval
    scores only topics with a positive judgement.
    """
    if len(j.judged_grade) and int(j.judged_grade.max()) > ERR_MAX_GRADE:
        bad = int(j.judged_grade.max())
        raise FinegrainError(
            f"metric {spec.key!r}: the qrels hold grade {bad}, above ERR's scale 0..{ERR_MAX_GRADE} "
            "(gdeval's, whose stopping probability is (2^g - 1) / 2^4)",
            f"map the grades onto 0..{ERR_MAX_GRADE} first, or use ndcg@k, which takes any grade",
        )
    R = j.n_relevant(1)
    top = j.hits(1, spec.k)
    stop = np.where(top, (np.exp2(np.minimum(j.grade, ERR_MAX_GRADE)) - 1.0) / 2.0**ERR_MAX_GRADE, 0.0)
    reach = np.exp(j.before(np.log1p(-stop)))  # prod_{j<i} (1 - R_j) within the query
    return QueryValues(R > 0, j.count(top, stop * reach / (j.rank + 1.0)))


def _discount(rank: np.ndarray) -> np.ndarray:
    """nDCG's discount of a 0-based rank: ``1 / log2(rank + 2)``."""
    out: np.ndarray = 1.0 / np.log2(rank + 2.0)
    return out


def _ideal_dcg(j: Joined, rel: int, k: int | None) -> np.ndarray:
    """Per query, the DCG@k of its judged grades >= ``rel`` sorted descending (float64[U]).

    From the count of each grade per query: the grade ``g`` fills ideal ranks
    ``start .. end`` (after the higher grades), worth ``g`` times the sum of
    their discounts, a difference of cumulative discounts. Without a compact
    count table (many distinct grades), from the sorted judgements.
    """
    counted = j.grade_counts(rel)
    if counted is None:
        jseg, jgrade, pos = j.ideal(rel)  # by query, grade descending
        keep = pos < k if k is not None else np.ones(len(jseg), dtype=bool)
        return np.bincount(jseg[keep], weights=jgrade[keep] * _discount(pos[keep]), minlength=j.n_queries)
    counts, grades = counted
    end = np.cumsum(counts, axis=1)
    start = end - counts
    depth = int(end[:, -1].max()) if counts.size else 0
    if k is not None:
        depth = min(depth, k)
        np.minimum(start, depth, out=start)
        np.minimum(end, depth, out=end)
    upto = np.concatenate(([0.0], np.cumsum(_discount(np.arange(depth)))))  # discounts of ranks < m
    out: np.ndarray = (upto[end] - upto[start]) @ grades
    return out


def ndcg(j: Joined, spec: MetricSpec) -> QueryValues:
    """Normalised discounted cumulative gain at k (trec_eval ``ndcg_cut_k``; without k, ``ndcg``)::

        gain(g)  = g if g >= rel else 0          (linear; grades <= 0 never gain)
        DCG@k    = sum_{i<=k} gain(g_i) / log2(i + 1)
        IDCG@k   = the same over all judged grades of the query sorted descending
        nDCG@k   = DCG@k / IDCG@k

    With the default ``rel = 1`` this is trec_eval's definition (which ignores its
    relevance level for nDCG). With ``rel = N`` grades below ``N`` count as 0
    gain, in DCG and in IDCG alike.
    """
    R = j.n_relevant(spec.rel)
    k = spec.k
    hits = j.hit_entries(spec.rel, k)
    seg, rank = j.located(hits)
    dcg = np.bincount(seg, weights=j.grade[hits] * _discount(rank), minlength=j.n_queries)
    idcg = _ideal_dcg(j, spec.rel, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), 0.0)
    return QueryValues(R > 0, values)
