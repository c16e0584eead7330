"""Metrics: one grammar (:mod:`.spec`), pure per-query functions, no averaging.

- :mod:`.spec`      ``parse_metric("ndcg@10(rel=2)")`` -> :class:`MetricSpec`, canonical ``.key``
- :mod:`.join`      a run joined to qrels over a query universe (the arrays metrics read)
- :mod:`.ranking`   ndcg, precision, recall, hit_rate, hits, mrr, map, gm_map, r_precision, median_rank,
                    fail_rate, err
- :mod:`.incomplete` bpref, infap (judgements missing or sampled)
- :mod:`.iprec`     iprec_at_recall_0.00 .. _1.00 (trec_eval's 11-point interpolated precision)
- :mod:`.counts`    num_ret, num_rel, num_rel_ret (summed over queries)
- :mod:`.sets`      set_precision, set_recall, set_f1/f2/fbeta, pair_* (micro)
- :mod:`.rejection` reject_precision, reject_recall, reject_f1 (PhotoBench B.2)
- :mod:`.judged`    judged (share of the top k with a judgement; ir_measures' Judged@k)
- :mod:`.values`    :class:`QueryValues` and the aggregation rules

Aggregates live in :mod:`finegrain.evaluate`; this package only computes
per-query values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from finegrain.metrics.join import Joined, join
from finegrain.metrics.spec import (
    IPREC_NAMES,
    MetricSpec,
    metric_names,
    metric_params,
    parse_metric,
    parse_metrics,
)
from finegrain.metrics.values import QueryValues, aggregate
from finegrain.registry import Registry
from finegrain.types import Qrels, Run

MetricFn = Callable[[Joined, MetricSpec], QueryValues]

METRICS: Registry[MetricFn] = Registry("metric")
for _name, _target, _help in (
    ("ndcg", "ranking:ndcg", "normalised discounted cumulative gain (graded, log2 discount)"),
    ("precision", "ranking:precision", "relevant items in the top k / k"),
    ("recall", "ranking:recall", "relevant items in the top k / all relevant"),
    ("hit_rate", "ranking:hit_rate", "1 if any relevant item is in the top k"),
    ("mrr", "ranking:mrr", "1 / rank of the first relevant item"),
    ("map", "ranking:average_precision", "average precision"),
    ("r_precision", "ranking:r_precision", "precision at R, the number of relevant items"),
    ("median_rank", "ranking:median_rank", "rank of the first relevant item (median over queries)"),
    ("fail_rate", "ranking:fail_rate", "1 if no relevant item is in the top k (default k=1)"),
    ("set_precision", "sets:set_precision", "relevant returned / returned (the set, micro)"),
    ("set_recall", "sets:set_recall", "relevant returned / relevant (the set, micro)"),
    ("set_f1", "sets:set_f1", "F1 of set_precision and set_recall"),
    ("set_f2", "sets:set_f2", "F2 of set_precision and set_recall"),
    ("set_fbeta", "sets:set_fbeta", "F-beta of set precision and recall, beta required"),
    ("pair_precision", "sets:pair_precision", "precision over (query, item) pairs, micro"),
    ("pair_recall", "sets:pair_recall", "recall over (query, item) pairs, micro"),
    ("pair_f1", "sets:pair_f1", "F1 over (query, item) pairs, micro"),
    ("reject_precision", "rejection:reject_precision", "precision of answering nothing (PhotoBench B.2)"),
    ("reject_recall", "rejection:reject_recall", "recall of answering nothing (PhotoBench B.2)"),
    ("reject_f1", "rejection:reject_f1", "F1 of answering nothing (PhotoBench B.2)"),
    ("judged", "judged:judged", "share of the top k that has a judgement, any grade (ir_measures Judged@k)"),
    ("hits", "ranking:hits", "number of relevant items in the top k, averaged (ranx hits@k; not hit_rate)"),
    ("err", "ranking:err", "expected reciprocal rank, gains (2^g - 1) / 16 (gdeval, ir_measures ERR@k)"),
    ("bpref", "incomplete:bpref", "binary preference: relevant above judged non-relevant (trec_eval bpref)"),
    ("infap", "incomplete:infap", "inferred AP on a sampled pool, grade -1 = pooled, unjudged (trec_eval infAP)"),
    ("gm_map", "ranking:gm_map", "geometric mean of AP over queries, AP floored at 1e-5 (trec_eval gm_map)"),
    ("num_ret", "counts:num_ret", "items returned, summed over queries (trec_eval num_ret)"),
    ("num_rel", "counts:num_rel", "relevant judgements, summed over queries (trec_eval num_rel)"),
    ("num_rel_ret", "counts:num_rel_ret", "relevant items returned, summed over queries (trec_eval num_rel_ret)"),
    *((name, "iprec:iprec_at_recall", f"interpolated precision at recall {level:.1f} (trec_eval)")
      for name, level in IPREC_NAMES.items()),
):
    METRICS.register(_name, f"finegrain.metrics.{_target}", _help, params=metric_params(_name))
del _name, _target, _help


def compute(joined: Joined, spec: str | MetricSpec) -> QueryValues:
    """Per-query values of one metric on an already joined run."""
    spec = parse_metric(spec)
    return METRICS.get(spec.name)(joined, spec)


def metric_values(
    qrels: Qrels, run: Run, spec: str | MetricSpec, *, queries: Iterable[str] | None = None
) -> dict[str, float | None]:
    """``{qid: value}`` of one metric for the scored queries (None = undefined or, for median_rank, not found)."""
    joined = join(qrels, run, queries)
    return to_dict(joined.qids, compute(joined, spec))


def to_dict(qids: tuple[str, ...], qv: QueryValues) -> dict[str, float | None]:
    """Scored queries only, in universe order; non-finite values become None."""
    idx = np.flatnonzero(qv.scored)
    vals = qv.values[idx]
    finite = np.isfinite(vals)
    out: list[float | None] = vals.tolist()
    for i in np.flatnonzero(~finite).tolist():
        out[i] = None
    return dict(zip([qids[i] for i in idx.tolist()], out))


__all__ = [
    "METRICS",
    "Joined",
    "MetricSpec",
    "QueryValues",
    "aggregate",
    "compute",
    "join",
    "metric_values",
    "metric_names",
    "parse_metric",
    "parse_metrics",
    "to_dict",
]
