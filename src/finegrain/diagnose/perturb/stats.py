"""Rank-change statistics (the paper's Table 4) and metric deltas with confidence intervals (Table 5).

Table 4: for each perturbed query, the rank of its *best relevant item* (the
highest-ranked document of grade >= ``rel``) under the original query and
under the perturbed one; the perturbation moved it **lower** (rank* > rank),
**higher** (rank* < rank) or left it the **same**. A relevant item not
retrieved at all has rank infinity (two such ranks are the same). Queries
without any relevant item are not counted (``n_no_relevant``).

Table 5: per metric, the mean over the perturbed queries of the original and
the perturbed value (both scored with the *original* qrels), their difference
and a bootstrap confidence interval of the mean paired difference
(:func:`finegrain.compare.stats.bootstrap_ci`); and, as in the paper, the
dataset-level value when the perturbed queries replace their originals and the
other queries keep theirs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

import numpy as np

from finegrain.compare.stats import WinTieLoss, bootstrap_ci
from finegrain.results.probes import MetricDeltaCell, RankChangeCounts, RankPercents
from finegrain.types import Qrels, Run


@dataclass(frozen=True)
class RankChange:
    """Counts of Table 4 for one family: the perturbation against the original query as a
    win/tie/loss count (higher / same / lower rank of the best relevant item)."""

    n_perturbed: int
    moves: WinTieLoss
    n_no_relevant: int

    lower = property(lambda self: self.moves.loss, doc="The best relevant item ranks lower after the perturbation.")
    higher = property(lambda self: self.moves.win, doc="It ranks higher.")
    same = property(lambda self: self.moves.tie, doc="Its rank is unchanged (or it is retrieved by neither).")

    @property
    def n(self) -> int:
        """Perturbed queries that have a relevant item (the denominator of the percentages)."""
        return self.moves.n

    def percents(self) -> dict[str, float | None]:
        shares = self.moves.ratios()
        win, tie, loss = shares if shares is not None else (None, None, None)
        return {k: (None if v is None else 100.0 * v) for k, v in (("lower", loss), ("higher", win), ("same", tie))}

    def saved(self) -> RankChangeCounts:
        """As saved in ``results.json``."""
        return RankChangeCounts(n_perturbed=self.n_perturbed, lower=self.lower, higher=self.higher, same=self.same,
                                n_no_relevant=self.n_no_relevant, n=self.n, percent=RankPercents(**self.percents()))


@dataclass(frozen=True)
class MetricDelta:
    """One cell of Table 5: means over the ``n`` paired queries, their difference and its CI."""

    metric: str
    n: int
    original: float | None
    perturbed: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    dataset_original: float | None
    dataset_perturbed: float | None

    def saved(self) -> MetricDeltaCell:
        """As saved in ``results.json``."""
        return MetricDeltaCell(**asdict(self))


def best_relevant_ranks(run: Run, qrels: Qrels, pairs: Iterable[tuple[str, str]], rel: int = 1) -> np.ndarray:
    """Rank (1-based) of the best relevant item for each ``(run_qid, qrels_qid)``; inf if not retrieved, nan if none is relevant."""
    out: list[float] = []
    for run_qid, qrels_qid in pairs:
        relevant = qrels.relevant(qrels_qid, rel)
        if not relevant:
            out.append(math.nan)
            continue
        ranked = run.ranked(run_qid) if run_qid in run else []
        out.append(next((float(i + 1) for i, d in enumerate(ranked) if d in relevant), math.inf))
    return np.asarray(out, dtype=np.float64)


def rank_changes(original: np.ndarray, perturbed: np.ndarray) -> RankChange:
    """Table-4 counts from aligned best-relevant ranks (nan = no relevant item, inf = not retrieved)."""
    a = np.asarray(original, dtype=np.float64)
    b = np.asarray(perturbed, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"rank arrays differ in length: {a.shape} vs {b.shape}")
    ok = ~(np.isnan(a) | np.isnan(b))
    a, b = a[ok], b[ok]
    moves = WinTieLoss(win=int((b < a).sum()), tie=int((b == a).sum()),  # inf == inf: both not retrieved
                       loss=int((b > a).sum()))
    return RankChange(n_perturbed=len(ok), moves=moves, n_no_relevant=int((~ok).sum()))


def metric_delta(
    metric: str,
    original: Mapping[str, float | None],
    perturbed: Mapping[str, float | None],
    *,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
) -> MetricDelta:
    """Table-5 cell for one metric.

    ``original`` holds the per-query values of *all* queries (original texts);
    ``perturbed`` those of the perturbed queries (keyed by their original qid).
    Queries whose value is undefined (None) on either side are left out of the pairs.
    """
    qids = [q for q, v in perturbed.items() if v is not None and original.get(q) is not None]
    x = np.asarray([original[q] for q in qids], dtype=np.float64)
    y = np.asarray([perturbed[q] for q in qids], dtype=np.float64)
    everyone = {q: v for q, v in original.items() if v is not None}
    dataset_original: float | None
    dataset_perturbed: float | None
    if everyone:
        base = np.asarray(list(everyone.values()), dtype=np.float64)
        dataset_original = float(base.mean())
        dataset_perturbed = float(base.mean() + (y - x).sum() / len(base)) if qids else dataset_original
    else:
        dataset_original = dataset_perturbed = None
    if not qids:
        return MetricDelta(metric, 0, None, None, None, None, None, dataset_original, dataset_perturbed)
    d = y - x
    ci = bootstrap_ci(d, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return MetricDelta(metric, len(qids), float(x.mean()), float(y.mean()), float(d.mean()), ci.low, ci.high,
                       dataset_original, dataset_perturbed)
