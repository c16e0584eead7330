"""FG-CDA (CCD Eq. 1) of a slice with its pair bootstrap interval, and the per-slice report of a direction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from finegrain.compare.stats import Interval, batch_size
from finegrain.diagnose.contrastive.categories import (
    CCD_CATEGORIES,
    CCD_GROUPS,
    GROUP_ORDER,
)
from finegrain.diagnose.contrastive.records import Direction
from finegrain.diagnose.contrastive.scoring import ContrastScores
from finegrain.errors import FinegrainError
from finegrain.results.probes import DirectionResults, SliceAccuracy


@dataclass(frozen=True)
class Accuracy:
    """FG-CDA of one slice: counts, the share correct, its bootstrap interval, FG-CDE = 1 - FG-CDA.

    ``n`` counts (pair, query) units, ``n_pairs`` distinct pairs; ``ties``
    units where both scores are equal (counted as failures);
    ``mean_margin`` the mean of target minus contrastive similarity.
    """

    name: str
    n_pairs: int
    n: int
    correct: int
    ties: int
    accuracy: float
    ci: Interval
    mean_margin: float

    @property
    def fg_cde(self) -> float:
        return 1.0 - self.accuracy

    def saved(self) -> SliceAccuracy:
        """As saved in ``results.json``."""
        return SliceAccuracy(name=self.name, n_pairs=self.n_pairs, n=self.n, correct=self.correct, ties=self.ties,
                             fg_cda=self.accuracy, fg_cda_ci=(self.ci.low, self.ci.high), fg_cde=self.fg_cde,
                             mean_margin=self.mean_margin)


def pair_bootstrap_ci(
    correct: np.ndarray,
    pair_ids: Sequence[str] | np.ndarray,
    *,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Interval:
    """Percentile bootstrap interval of FG-CDA, resampling pairs (clusters) with replacement.

    A resample draws ``P`` pairs out of ``P`` and takes
    ``sum(correct of drawn pairs) / sum(units of drawn pairs)``. When every
    pair has one unit this is the ordinary bootstrap of the mean, and draws
    exactly what :func:`finegrain.compare.stats.bootstrap_ci` draws for the
    same seed (same generator calls, same batches; pairs are numbered in
    order of first appearance); a constant sample gives ``(v, v)``.
    """
    c = np.asarray(correct, dtype=np.float64)
    if c.ndim != 1 or len(c) != len(pair_ids):
        raise FinegrainError(f"{len(c)} outcomes for {len(pair_ids)} pair ids", "give one pair id per outcome")
    if len(c) == 0:
        raise FinegrainError("cannot bootstrap an empty sample", "give at least one record")
    if not 0.0 < confidence < 1.0:
        raise FinegrainError(f"confidence must be in (0, 1), got {confidence!r}", "e.g. confidence=0.95")
    if n_resamples < 1:
        raise FinegrainError(f"n_resamples must be >= 1, got {n_resamples!r}", "e.g. n_resamples=10000")
    if np.all(c == c[0]):
        return Interval(float(c[0]), float(c[0]))
    code: dict[Any, int] = {}
    inverse = np.fromiter((code.setdefault(p, len(code)) for p in pair_ids), dtype=np.int64, count=len(c))
    hits = np.bincount(inverse, weights=c)
    sizes = np.bincount(inverse).astype(np.float64)
    n_pairs = len(hits)
    rng = np.random.default_rng(seed)
    step = batch_size(n_pairs, n_resamples)
    acc = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        idx = rng.integers(0, n_pairs, (rows, n_pairs))
        acc[start:start + rows] = hits[idx].sum(axis=-1) / sizes[idx].sum(axis=-1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(acc, [alpha, 1.0 - alpha])
    return Interval(float(low), float(high))


def accuracy(
    scores: ContrastScores,
    name: str = "overall",
    mask: np.ndarray | None = None,
    *,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> Accuracy:
    """FG-CDA of the records selected by ``mask`` (all when None)."""
    sel = np.ones(len(scores.records), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    ok = scores.correct[sel]
    pid = np.array([r.pair_id for r in scores.records], dtype=object)[sel]
    margin = (scores.target - scores.contrastive)[sel]
    n = int(sel.sum())
    if n == 0:
        raise FinegrainError(f"slice {name!r} has no records", "drop empty slices before computing FG-CDA")
    return Accuracy(
        name=name,
        n_pairs=len(set(pid.tolist())),
        n=n,
        correct=int(ok.sum()),
        ties=int((scores.target[sel] == scores.contrastive[sel]).sum()),
        accuracy=float(ok.mean()),
        ci=pair_bootstrap_ci(ok, pid.astype(str), n_resamples=n_resamples, confidence=confidence, seed=seed),
        mean_margin=float(margin.mean()),
    )


@dataclass(frozen=True)
class DirectionReport:
    """FG-CDA of one direction: overall, per category, per CCD category and per CCD group."""

    direction: Direction
    overall: Accuracy
    by_category: tuple[Accuracy, ...]
    by_ccd: tuple[Accuracy, ...]
    by_group: tuple[Accuracy, ...]
    unmapped: int  # (pair, query) units whose category has no CCD counterpart

    def saved(self) -> DirectionResults:
        """As saved in ``results.json``."""
        return DirectionResults(direction=self.direction, overall=self.overall.saved(),
                                by_category=[a.saved() for a in self.by_category],
                                by_ccd_category=[a.saved() for a in self.by_ccd],
                                by_ccd_group=[a.saved() for a in self.by_group], unmapped_units=self.unmapped)


def report(
    scores: ContrastScores,
    *,
    category_order: Sequence[str] | None = None,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> DirectionReport:
    """FG-CDA overall and per slice; categories in ``category_order`` (then the rest, sorted)."""
    kw: dict[str, Any] = {"n_resamples": n_resamples, "confidence": confidence, "seed": seed}
    cats = np.array([r.category for r in scores.records], dtype=object)
    ccds = np.array([r.ccd_category or "" for r in scores.records], dtype=object)
    groups = np.array([CCD_GROUPS.get(c, "") for c in ccds], dtype=object)
    present = set(cats.tolist())
    order = [c for c in (category_order or ()) if c in present] + sorted(present - set(category_order or ()))
    return DirectionReport(
        direction=scores.direction,
        overall=accuracy(scores, "overall", **kw),
        by_category=tuple(accuracy(scores, c, cats == c, **kw) for c in order),
        by_ccd=tuple(accuracy(scores, c, ccds == c, **kw) for c in CCD_CATEGORIES if (ccds == c).any()),
        by_group=tuple(accuracy(scores, g, groups == g, **kw) for g in GROUP_ORDER if (groups == g).any()),
        unmapped=int((ccds == "").sum()),
    )

