"""What a metric returns: one value per universe query, and how those values aggregate.

A metric never averages. It returns :class:`QueryValues`: for every query of
the universe whether it is scored (a ranking metric excludes queries with no
relevant item), its value (NaN = undefined, e.g. precision of an empty
prediction) and the aggregation rule. Aggregation (:func:`aggregate`) only
consumes these values; slicing by query type reuses it on a subset.

Rules:

- ``mean``: mean of the defined values of the scored queries;
- ``median``: median of the scored values, where ``+inf`` stands for "never
  found" (``median_rank``);
- ``ratio``: ``sum(numerator) / sum(denominator)`` over the scored queries
  (micro averages: ``pair_*`` and ``reject_*``); a query's own value is its
  ``numerator / denominator``, undefined when its denominator is 0;
- ``sum``: the total of the scored queries' defined values (the counts
  ``num_ret``, ``num_rel``, ``num_rel_ret``, whose trec_eval summary is a sum);
- ``gmean``: the geometric mean of the scored queries' defined values, each
  raised to at least :data:`GMEAN_FLOOR` first (``gm_map``: trec_eval's
  ``m_gm_map.c`` averages ``log(max(AP, MIN_GEO_MEAN))`` and ``meas_avg.c``
  takes ``exp`` of that mean).

An aggregate over no value (0/0) is ``None``, never 0 and never an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Rule = Literal["mean", "median", "ratio", "sum", "gmean"]
#: Every aggregation rule; a saved result names one of these for each metric.
RULES: tuple[Rule, ...] = ("mean", "median", "ratio", "sum", "gmean")
#: The smallest value a geometric mean takes in (trec_eval's ``MIN_GEO_MEAN``), so one 0 does not make it 0.
GMEAN_FLOOR = 1e-5


@dataclass(frozen=True, eq=False)
class QueryValues:
    """Per-query outcome of one metric over a universe of ``U`` queries (arrays of length ``U``)."""

    scored: np.ndarray  # bool: the query enters this metric
    values: np.ndarray  # float64: NaN = undefined; +inf only for median_rank ("not found")
    rule: Rule = "mean"
    numerator: np.ndarray | None = None  # float64, for rule "ratio"
    denominator: np.ndarray | None = None

    @classmethod
    def ratio(cls, scored: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> QueryValues:
        """Values ``numerator / denominator`` per query (NaN where 0/0), aggregated as a ratio of sums."""
        num = np.asarray(numerator, dtype=np.float64)
        den = np.asarray(denominator, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            values = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        return cls(scored, values, "ratio", num, den)


def aggregate(qv: QueryValues, mask: np.ndarray | None = None) -> tuple[float | None, int]:
    """Aggregate value over the scored queries (within ``mask`` if given) and the number of values used.

    Returns ``(None, 0)`` when no value is defined.
    """
    sel = qv.scored if mask is None else qv.scored & mask
    if qv.rule == "ratio":
        assert qv.numerator is not None and qv.denominator is not None  # internal invariant
        den = float(qv.denominator[sel].sum())
        n = int((qv.denominator[sel] > 0).sum())
        return (float(qv.numerator[sel].sum()) / den if den > 0 else None), n
    vals = qv.values[sel]
    if qv.rule == "median":
        vals = vals[~np.isnan(vals)]
        return (float(np.median(vals)) if len(vals) else None), len(vals)
    vals = vals[~np.isnan(vals)]
    if not len(vals):
        return None, 0
    if qv.rule == "sum":
        return float(vals.sum()), len(vals)
    if qv.rule == "gmean":
        return float(np.exp(np.log(np.maximum(vals, GMEAN_FLOOR)).mean())), len(vals)
    return float(vals.mean()), len(vals)
