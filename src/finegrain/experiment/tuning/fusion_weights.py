"""Fusion weights chosen by k-fold cross-validation over queries; never fitted on the fold they are scored on.

The queries (those of the qrels) are dealt into ``folds`` folds at random
(``seed``). For each fold *f*:

1. every weight vector of the grid fuses the runs, and is scored on the
   queries of the *other* folds only (the fused run handed to the objective
   holds only those queries);
2. the best vector (ties: the first in grid order) is kept for fold *f*;
3. the run fused with it is scored on fold *f*'s queries (held out).

The held-out mean is the metric over all queries of the run assembled from
each fold's held-out part: every query is scored with weights that never saw
it. The grid is every vector of non-negative multiples of ``step`` summing to
1 (the ranking of ``wsum`` and ``rrf`` depends on the ratios of the weights
only), or the vectors given. Each vector's fusion is made once, scored on every fold's training
queries (with the default objective, from one evaluation: the metric's aggregate over each fold's
queries) and dropped, so memory holds one fused run whatever the grid's size; the folds' chosen
vectors are fused again at the end.

>>> search = cv_weights([bm25, e5], qrels, metric="ndcg@10", method="wsum", folds=5)  # doctest: +SKIP
>>> print(search)                                                                  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm.auto import tqdm

from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.experiment.tuning.folds import assemble, fold_members, select_queries
from finegrain.interop import as_qrels, as_run
from finegrain.metrics.spec import parse_metric
from finegrain.retrieve.fusion.methods import fuse
from finegrain.retrieve.registry import FUSIONS
from finegrain.types import Qrels, Run

Objective = Callable[[Run, frozenset[str]], "float | None"]


@dataclass(frozen=True)
class Fold:
    """One fold: its held-out queries, the weights chosen on the other folds, and both scores."""

    index: int
    test_qids: tuple[str, ...]
    weights: tuple[float, ...]
    train_value: float | None
    test_value: float | None


@dataclass(frozen=True)
class WeightSearch:
    """The outcome of :func:`cv_weights`; ``str()`` prints the chosen weights per fold."""

    method: str
    metric: str
    run_names: tuple[str, ...]
    folds: tuple[Fold, ...]
    held_out: float | None  # the metric over every query, each scored with its fold's weights
    run: Run  # the assembled held-out run

    def weights_per_fold(self) -> list[tuple[float, ...]]:
        return [f.weights for f in self.folds]

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "metric": self.metric,
            "runs": list(self.run_names),
            "folds": [
                {"fold": f.index + 1, "n_test": len(f.test_qids), "weights": list(f.weights),
                 "train": f.train_value, "test": f.test_value}
                for f in self.folds
            ],
            "held_out": self.held_out,
        }

    def __str__(self) -> str:
        head = f"{self.method} weights for {', '.join(self.run_names)} by {len(self.folds)}-fold CV on {self.metric}"
        lines = [head]
        for f in self.folds:
            w = ", ".join(f"{x:g}" for x in f.weights)
            lines.append(f"  fold {f.index + 1}: weights ({w})  train {_fmt(f.train_value)}  "
                         f"held-out {_fmt(f.test_value)}  ({len(f.test_qids)} queries)")
        lines.append(f"  held-out {self.metric} over all queries: {_fmt(self.held_out)}")
        return "\n".join(lines)


def cv_weights(
    runs: Sequence[Any],
    qrels: Any,
    *,
    metric: str = "ndcg@10",
    method: str = "wsum",
    folds: int = 5,
    step: float = 0.1,
    grid: Sequence[Sequence[float]] | None = None,
    seed: int = 0,
    norm: str | None = None,
    k: float | None = None,
    depth: int | None = None,
    objective: Objective | None = None,
    show_progress: bool = True,
) -> WeightSearch:
    """Choose fusion weights per fold by grid search on the other folds (see the module docstring).

    ``method`` is a fusion method taking ``weights`` (:data:`~finegrain.retrieve.registry.FUSIONS`)
    (``wsum``/``convex`` or ``rrf``); ``norm`` / ``k`` / ``depth`` are passed to
    :func:`~finegrain.retrieve.fusion.methods.fuse`. ``objective(run, qids)`` scores a
    fused run on a set of queries (default: ``metric``'s aggregate from
    :func:`finegrain.evaluate` over ``qids``); the run it is given holds only
    those queries. ``show_progress``: a progress bar over the weight vectors (grids of 50 or more).
    """

    if method not in FUSIONS or "weights" not in (FUSIONS.params(method) or {}):
        weighted = [e.name for e in FUSIONS.entries() if "weights" in (e.params or {})]
        raise FinegrainError(f"fusion method {method!r} takes no weights to search", f"use one of {', '.join(weighted)}")
    run_list = [as_run(r, what=f"run {i}") for i, r in enumerate(runs)]
    if len(run_list) < 2:
        raise FinegrainError(f"{len(run_list)} run(s) to fuse; a weight search needs at least 2", "pass two runs or more")
    qrels_t = as_qrels(qrels)
    qids = list(qrels_t)
    if isinstance(folds, bool) or not isinstance(folds, int) or not 2 <= folds <= len(qids):
        raise FinegrainError(f"folds={folds!r} for {len(qids)} queries", f"use a whole number from 2 to {len(qids)}")
    vectors = _grid(len(run_list), step) if grid is None else _check_grid(grid, len(run_list))
    parts = fold_members(qids, folds, seed)
    trains = [frozenset(qids) - frozenset(test) for test in parts]
    fit = _fit_scorer(qrels_t, metric) if objective is None else _each_set(objective)

    def score(run: Run, qids: frozenset[str]) -> float | None:
        return fit(run, [qids])[0]

    def fused(w: Sequence[float]) -> Run:
        return fuse(run_list, method, weights=list(w), norm=norm, k=k, depth=depth)

    # one fusion at a time, scored on every fold's training queries and dropped: memory stays one run
    # whatever the grid's size
    best: list[tuple[int, float | None]] = [(0, None)] * len(parts)
    shown = tqdm(vectors, desc="weight vectors", unit="vector", disable=not show_progress or len(vectors) < 50)
    for i, w in enumerate(shown):
        for f, v in enumerate(fit(fused(w), trains)):
            kept = best[f][1]
            if v is not None and (kept is None or v > kept):  # ties: the first in grid order
                best[f] = (i, v)
    chosen_runs = {i: fused(vectors[i]) for i in dict.fromkeys(i for i, _ in best)}
    chosen: list[Fold] = []
    source: dict[str, Run] = {}  # each held-out query's run: the fusion chosen without its fold
    for f, (test, (i, v)) in enumerate(zip(parts, best)):
        chosen.append(Fold(f, tuple(test), tuple(float(x) for x in vectors[i]), v, score(chosen_runs[i], frozenset(test))))
        source.update(dict.fromkeys(test, chosen_runs[i]))
    order = [q for test in parts for q in test]
    assembled = assemble([source[q] for q in order], order, name=f"cv-{method}({','.join(r.name for r in run_list)})")
    return WeightSearch(method, metric, tuple(r.name for r in run_list), tuple(chosen),
                        score(assembled, frozenset(qids)), assembled)


# --------------------------------------------------------------------------- internals


def _fit_scorer(qrels: Qrels, metric: str) -> Callable[[Run, Sequence[frozenset[str]]], list[float | None]]:
    """``metric`` on each query set, from one evaluation of the run: each value is the metric's own
    aggregate over that set's scored queries, as an evaluation of the run cut to the set gives it."""
    key = parse_metric(metric).key  # a bad metric fails before any fusion

    def scores(run: Run, sets: Sequence[frozenset[str]]) -> list[float | None]:
        result = evaluate(qrels, run, key, queries=list(qrels), warn=False)[key]
        return [result.value_over(qids)[0] for qids in sets]

    return scores


def _each_set(objective: Objective) -> Callable[[Run, Sequence[frozenset[str]]], list[float | None]]:
    """A given objective on each query set, handed the run cut to that set (it never sees other queries)."""

    def scores(run: Run, sets: Sequence[frozenset[str]]) -> list[float | None]:
        return [objective(select_queries(run, qids), qids) for qids in sets]

    return scores


def _grid(n: int, step: float) -> list[tuple[float, ...]]:
    if isinstance(step, bool) or not isinstance(step, int | float) or not 0 < step <= 1:
        raise FinegrainError(f"step={step!r} is not a number in (0, 1]", "use e.g. step=0.1")
    units = round(1 / step)
    if abs(units * step - 1) > 1e-9:
        raise FinegrainError(f"step={step!r} does not divide 1", "use 0.5, 0.25, 0.2, 0.1, 0.05 ...")
    if units + n > 40 and n > 3:
        raise FinegrainError(f"a grid of step {step} over {n} runs is too large", "use a coarser step or pass grid=")
    out = []
    for cut in itertools.combinations(range(units + n - 1), n - 1):  # stars and bars, in lexicographic order
        bounds = (-1, *cut, units + n - 1)
        out.append(tuple(round((bounds[i + 1] - bounds[i] - 1) * step, 12) for i in range(n)))
    return out


def _check_grid(grid: Sequence[Sequence[float]], n: int) -> list[tuple[float, ...]]:
    out = [tuple(float(x) for x in w) for w in grid]
    if not out:
        raise FinegrainError("the grid of weights is empty", "pass at least one weight vector")
    for w in out:
        if len(w) != n or any(x < 0 for x in w) or not any(x > 0 for x in w):
            raise FinegrainError(f"grid vector {w!r} is not {n} weights >= 0 with one > 0", f"e.g. {(1.0,) * n}")
    return out


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.4f}"
