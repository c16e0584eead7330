"""The report's headline metric: the one the charts, the forest plot, win/tie/loss and the drill-down use.

:func:`headline_metric` is the one rule. Given (``--metric``, the first of
``-m``), the metric is that one, and it must be a metric every system has. Not
given, it is the first **ranking** metric (``ndcg``, ``recall``, ``mrr``, ... —
not a set, pair or rejection metric) at the **largest cutoff** every system
shares, preferring metrics whose saved aggregate is a mean (those the paired
tests can test; ``median_rank`` is a median). "First" is the saved order of
the first system. Without a ranking metric with a cutoff: the first ranking
metric; without any ranking metric: the first shared metric.

So ``-m ndcg@1,ndcg@10,recall@10`` heads the page with ``ndcg@10``, not ``ndcg@1``.
"""

from __future__ import annotations

from collections.abc import Sequence

from finegrain.errors import FinegrainError
from finegrain.metrics.spec import parse_metric
from finegrain.results.saved import SavedResults

__all__ = ["headline_metric", "shared_metrics"]


def shared_metrics(results: Sequence[SavedResults]) -> list[str]:
    """The metric keys every result has, in the first result's saved order."""
    if not results:
        return []
    return [k for k in results[0].metrics if all(k in r.metrics for r in results)]


def headline_metric(results: Sequence[SavedResults], metric: str | None = None) -> str:
    """The headline metric key of ``results`` (see the module docstring); ``metric`` is the one asked for."""

    keys = shared_metrics(results)
    if not keys:
        raise FinegrainError("the results folders share no metric",
                             "evaluate them with a common metric, e.g. 'finegrain eval -m ndcg@10'")
    if metric is not None:
        key = parse_metric(metric).key
        if key not in keys:
            raise FinegrainError(f"--metric {metric!r} is not in every results folder; shared metrics: {', '.join(keys)}",
                                 "pick one of those, or re-run 'finegrain eval' with it")
        return key
    specs = {}
    for k in keys:
        try:
            specs[k] = parse_metric(k)
        except FinegrainError:
            continue  # a key that is no finegrain metric (an MTEB score name) is never the headline by default
    ranking = [k for k in keys if k in specs and specs[k].family == "ranking"]
    means = [k for k in ranking if all(r.metrics[k].is_mean for r in results)]
    pool = means or ranking
    if not pool:
        return keys[0]
    cut = [k for k in pool if specs[k].k is not None]
    if not cut:
        return pool[0]
    largest = max(specs[k].k or 0 for k in cut)
    return next(k for k in cut if specs[k].k == largest)
