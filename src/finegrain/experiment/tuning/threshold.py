"""Threshold retrieval with a cross-validated threshold (CapRetrieval's classification setting).

A threshold ``t`` turns a run into a set prediction: each query returns the
items whose (normalised) score is >= ``t``, and no item at all when none is,
which is a rejection. Set metrics (``pair_f1``, ``set_f1``, ``reject_f1``;
PhotoBench Appendix B.2) then score those sets. :func:`sweep_thresholds`
computes every metric at every threshold of ``START:STOP:STEP`` (the curve)
and chooses a threshold per metric by **k-fold cross-validation over
queries**: the queries are dealt into ``folds`` folds (a seeded shuffle);
fold ``f``'s threshold is the best one on the *other* folds, and fold ``f``
is scored at it; the threshold to use is the median of the folds' ones. The threshold is never chosen by looking at the queries it
is scored on. The cross-validated score pools those out-of-fold predictions:
each query is cut at its own fold's threshold and the metric aggregates over
all queries by its own rule (a ratio of sums for ``pair_*`` / ``reject_*``,
a mean for ``set_*``). The best threshold on all queries is reported too,
labelled in-sample (optimistic: chosen and scored on the same queries).

Ties: the best value is the largest (the smallest for ``median_rank`` and
``fail_rate``); among equal values the lowest threshold wins.

Score normalisation (``norm=``), fitted on the run alone, so the qrels never
enter it and it leaks nothing across folds:

- ``none``: raw scores (a BM25 threshold of 10 means a BM25 score of 10);
- ``minmax``: ``(s - min) / (max - min)`` over every score of the run, so 0
  is the run's lowest and 1 its highest score, whatever the retriever's scale;
- ``zscore``: ``(s - mean) / std`` over every score of the run.

Per-query normalisation is deliberately not offered: it gives every query's
first item the same score, so a threshold could never reject a query.

The run must hold every item a threshold could keep: a retriever cut at a top
``k`` (``default_k``) caps each set at ``k`` items; ``max_returned`` says how
long the longest result list was.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.evaluate.evaluate import evaluate
from finegrain.experiment.tuning.folds import fold_of
from finegrain.metrics.spec import parse_metric
from finegrain.metrics.values import QueryValues, aggregate
from finegrain.numbers import NumberError, parse_int
from finegrain.types import Run

SCHEMA = "finegrain.threshold_sweep/1"
NORMS = ("none", "minmax", "zscore")
LOWER_IS_BETTER = frozenset({"median_rank", "fail_rate"})
MAX_THRESHOLDS = 2001
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
# ASCII digits only: \d and float() would also read ٣ and １ (the one number grammar, finegrain.numbers)
_RANGE = re.compile(rf"\s*threshold\s*=\s*({_NUMBER})\s*:\s*({_NUMBER})\s*:\s*({_NUMBER})\s*", re.ASCII)
_EXAMPLE = "--sweep threshold=0:30:1 (raw scores) or --sweep threshold=0:1:0.05,norm=minmax,folds=5"


# --------------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class SweepSpec:
    """``threshold=START:STOP:STEP[,norm=none|minmax|zscore][,folds=K][,seed=S]`` parsed."""

    start: float
    stop: float
    step: float
    norm: str = "none"
    folds: int = 5
    seed: int = 0

    @property
    def count(self) -> float:
        """How many thresholds :meth:`thresholds` gives, counted without making them (it may be huge)."""
        q = (self.stop - self.start) / self.step + 1e-9
        return math.floor(q) + 1 if math.isfinite(q) else math.inf

    def thresholds(self) -> tuple[float, ...]:
        """``start, start + step, ...`` up to and including ``stop`` (within 1e-9 of a step)."""
        return tuple(round(self.start + i * self.step, 12) for i in range(int(self.count)))

    @property
    def key(self) -> str:
        return f"threshold={_g(self.start)}:{_g(self.stop)}:{_g(self.step)},norm={self.norm},folds={self.folds}," \
               f"seed={self.seed}"


def _g(x: float) -> str:
    return f"{x:g}"


def parse_sweep(text: str) -> SweepSpec:
    """Parse ``--sweep``; a bad spec is a :class:`FinegrainError` naming the part and an example."""
    head, *rest = [p for p in text.split(",")]
    m = _RANGE.fullmatch(head)
    if m is None:
        raise FinegrainError(f"--sweep {text!r}: expected threshold=START:STOP:STEP", f"e.g. {_EXAMPLE}")
    start, stop, step = (float(x) for x in m.groups())
    opts: dict[str, str] = {}
    for part in rest:
        k, sep, v = part.partition("=")
        k = k.strip().lower()
        if not sep or k not in ("norm", "folds", "seed"):
            raise FinegrainError(f"--sweep {text!r}: unknown part {part.strip()!r}",
                                 f"the parts after the range are norm=, folds= and seed=; e.g. {_EXAMPLE}")
        if k in opts:
            raise FinegrainError(f"--sweep {text!r}: {k}= is given twice", f"give {k}= once")
        opts[k] = v.strip()
    if not all(math.isfinite(x) for x in (start, stop, step)) or step <= 0:
        raise FinegrainError(f"--sweep {text!r}: STEP must be a positive number, got {_g(step)}",
                             f"e.g. {_EXAMPLE}")
    if stop < start:
        raise FinegrainError(f"--sweep {text!r}: STOP {_g(stop)} is below START {_g(start)}",
                             "write the range from low to high, e.g. threshold=0:30:1")
    norm = opts.get("norm", "none").lower()
    if norm not in NORMS:
        raise UnknownNameError("score normalisation", norm, NORMS)
    folds, seed = _int(opts.get("folds", "5"), "folds", text), _int(opts.get("seed", "0"), "seed", text)
    if folds < 2:
        raise FinegrainError(f"--sweep {text!r}: folds={folds}; cross-validation needs at least 2 folds",
                             "e.g. folds=5")
    if seed < 0:
        raise FinegrainError(f"--sweep {text!r}: seed={seed} is negative", "a seed is a whole number >= 0, "
                             "as --seed is; e.g. seed=0")
    spec = SweepSpec(start, stop, step, norm, folds, seed)
    n = spec.count  # counted, not made: threshold=0:1e20:1e-5 would be 1e25 of them
    if n > MAX_THRESHOLDS:
        raise FinegrainError(f"--sweep {text!r} gives {n:g} thresholds; at most {MAX_THRESHOLDS}",
                             "use a larger STEP or a narrower range")
    return spec


def _int(v: str, what: str, text: str) -> int:
    try:
        return parse_int(v)
    except NumberError as e:
        raise FinegrainError(f"--sweep {text!r}: {what}={v!r}: {e.reason}", f"e.g. {what}=5") from None


# --------------------------------------------------------------------------- normalisation


@dataclass(frozen=True)
class ScoreScale:
    """``normalised = (score - shift) / scale``, fitted on every score of one run."""

    method: str
    shift: float
    scale: float

    def apply(self, scores: np.ndarray) -> np.ndarray:
        return (np.asarray(scores, dtype=np.float64) - self.shift) / self.scale

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "shift": self.shift, "scale": self.scale}


def fit_scale(scores: np.ndarray, method: str) -> ScoreScale:
    """The :class:`ScoreScale` of ``method`` (see the module docstring) for these scores; an empty run or a
    constant one gets scale 1, so the transform stays defined."""
    if method not in NORMS:
        raise UnknownNameError("score normalisation", method, NORMS)
    s = np.asarray(scores, dtype=np.float64)
    s = s[np.isfinite(s)]
    if method == "none" or not len(s):
        return ScoreScale(method, 0.0, 1.0)
    if method == "minmax":
        lo, hi = float(s.min()), float(s.max())
        return ScoreScale(method, lo, hi - lo if hi > lo else 1.0)
    mean, std = float(s.mean()), float(s.std())
    return ScoreScale(method, mean, std if std > 0 else 1.0)


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class FoldFit:
    """One fold: the threshold fitted on the other folds (their value there) and the fold's own value at it."""

    fold: int
    n_queries: int
    threshold: float | None
    fitted_value: float | None
    held_out_value: float | None


@dataclass(frozen=True)
class CrossValidated:
    """A metric's threshold chosen by k-fold cross-validation over queries."""

    metric: str
    folds: tuple[FoldFit, ...]
    value: float | None  # pooled over every query's out-of-fold prediction
    in_sample_threshold: float | None
    in_sample_value: float | None

    @property
    def thresholds(self) -> tuple[float | None, ...]:
        return tuple(f.threshold for f in self.folds)

    @property
    def threshold(self) -> float | None:
        """The threshold to use: the (lower) median of the folds' thresholds, a value of the grid."""
        ts = sorted(t for t in self.thresholds if t is not None)
        return ts[(len(ts) - 1) // 2] if ts else None


@dataclass(frozen=True, eq=False)
class ThresholdSweep:
    """Every metric at every threshold, and each metric's cross-validated threshold and score."""

    spec: SweepSpec
    scale: ScoreScale
    thresholds: tuple[float, ...]
    metrics: tuple[str, ...]
    curve: Mapping[str, tuple[float | None, ...]]  # metric -> value per threshold
    mean_returned: tuple[float, ...]  # mean set size per threshold
    rejected: tuple[int, ...]  # queries with an empty set per threshold
    cv: Mapping[str, CrossValidated]
    n_queries: int
    max_returned: int
    stratified_by: str = "none"  # "query type": folds dealt per type (fold_of)

    def to_json_dict(self) -> dict[str, Any]:
        """The ``"threshold_sweep"`` section of ``results.json`` (schema ``finegrain.threshold_sweep/1``)."""
        return {
            "schema": SCHEMA,
            "spec": self.spec.key,
            "normalisation": self.scale.to_dict(),
            "folds": self.spec.folds, "seed": self.spec.seed, "stratified_by": self.stratified_by,
            "n_queries": self.n_queries, "max_returned": self.max_returned,
            "thresholds": list(self.thresholds),
            "metrics": list(self.metrics),
            "curve": {m: list(v) for m, v in self.curve.items()},
            "mean_returned": list(self.mean_returned),
            "rejected": list(self.rejected),
            "cross_validation": {
                m: {"threshold": c.threshold, "value": c.value, "thresholds": list(c.thresholds),
                    "folds": [{"fold": f.fold, "n_queries": f.n_queries, "threshold": f.threshold,
                               "fitted_value": f.fitted_value, "held_out_value": f.held_out_value} for f in c.folds],
                    "in_sample_threshold": c.in_sample_threshold, "in_sample_value": c.in_sample_value}
                for m, c in self.cv.items()
            },
            "method": method_note(self.spec),
        }


def method_note(spec: SweepSpec) -> str:
    return (f"{spec.folds}-fold cross-validation over queries (seeded shuffle, seed {spec.seed}): each fold's "
            "threshold is the best on the other folds and never looks at the fold it is scored on; the "
            "cross-validated score pools every query's out-of-fold prediction; ties go to the lowest threshold; "
            f"scores normalised: {spec.norm} (fitted on the run's scores, not on the qrels)")


# --------------------------------------------------------------------------- the sweep


def cut_at(run: Any, normalised: np.ndarray, threshold: float) -> Any:
    """The run keeping, per query, the items whose normalised score is >= ``threshold`` (scores replaced by the
    normalised ones; an affine map with a positive scale keeps the ranking)."""

    keep = normalised >= threshold
    counts = np.add.reduceat(keep.astype(np.int64), run.offsets[:-1]) if run.n_entries else np.zeros(0, np.int64)
    counts = np.where(np.diff(run.offsets) > 0, counts, 0)  # reduceat repeats a value for an empty segment
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(run.offsets.dtype)
    return Run(run.qids, offsets, run.doc_codes[keep], run.vocab, normalised[keep], name=run.name, check=False)


def sweep_thresholds(qrels: Any, run: Any, metrics: Sequence[str], spec: SweepSpec, *,
                     queries: Sequence[str], strata: Mapping[str, str | None] | None = None) -> ThresholdSweep:
    """The curve of every metric over ``spec``'s thresholds and its cross-validated threshold (module docstring);
    ``strata`` (``{qid: query type}``) stratifies the folds by type (:func:`fold_of`)."""

    specs = [parse_metric(m) for m in metrics]
    keys = tuple(dict.fromkeys(s.key for s in specs))
    lower = {s.key for s in specs if s.name in LOWER_IS_BETTER}
    universe = list(dict.fromkeys(queries))
    if len(universe) < spec.folds:
        raise FinegrainError(f"{len(universe)} queries cannot be dealt into {spec.folds} folds",
                             f"use folds={max(2, len(universe))} or fewer in --sweep")
    run = run.with_queries(universe)
    scale = fit_scale(run.values, spec.norm)
    normalised = scale.apply(run.values)
    thresholds = spec.thresholds()
    results = []
    returned, rejected = [], []
    for t in thresholds:
        cut = cut_at(run, normalised, t)
        ev = evaluate(qrels, cut, keys, queries=universe, warn=False)
        results.append(ev)
        n_of = dict(zip(cut.qids, cut.counts().tolist()))
        sizes = np.asarray([n_of.get(q, 0) for q in universe])
        returned.append(float(sizes.mean()) if len(sizes) else 0.0)
        rejected.append(int((sizes == 0).sum()))
    folds = fold_of(universe, spec.folds, spec.seed, strata)
    order = results[0][keys[0]].universe if keys else tuple(universe)
    fold_ids = np.asarray([folds[q] for q in order])
    curve: dict[str, tuple[float | None, ...]] = {}
    cv: dict[str, CrossValidated] = {}
    for key in keys:
        outcomes = [r[key].outcome for r in results]
        curve[key] = tuple(aggregate(o)[0] for o in outcomes)
        sign = -1.0 if key in lower else 1.0

        def best(mask: np.ndarray | None, outcomes: list[Any] = outcomes,
                 sign: float = sign) -> tuple[int | None, float | None]:
            """The best threshold index on the queries of ``mask`` (all: None) and its value; ties: lowest."""
            pick: tuple[int | None, float | None] = (None, None)
            for i, o in enumerate(outcomes):
                v = aggregate(o, mask)[0]
                if v is not None and (pick[1] is None or sign * v > sign * pick[1]):
                    pick = (i, v)
            return pick

        fits, chosen = [], np.zeros(len(order), dtype=np.int64)
        for f in range(spec.folds):
            held = fold_ids == f
            i, fitted = best(~held)
            if i is not None:
                chosen[held] = i
            fits.append(FoldFit(f, int(held.sum()), None if i is None else thresholds[i], fitted,
                                None if i is None else aggregate(outcomes[i], held)[0]))
        pooled = _pooled(outcomes, chosen, QueryValues) if all(x.threshold is not None for x in fits) else None
        i_all, v_all = best(None)
        cv[key] = CrossValidated(key, tuple(fits), None if pooled is None else aggregate(pooled)[0],
                                 None if i_all is None else thresholds[i_all], v_all)
    return ThresholdSweep(spec, scale, thresholds, keys, MappingProxyType(curve), tuple(returned), tuple(rejected),
                          MappingProxyType(cv), len(universe), int(np.diff(run.offsets).max(initial=0)),
                          "none" if strata is None else "query type")


def _pooled(outcomes: Sequence[Any], chosen: np.ndarray, cls: Any) -> Any:
    """One QueryValues taking each query's entries from the outcome at its fold's threshold."""
    rows = np.arange(len(chosen))

    def pick(name: str) -> np.ndarray | None:
        arrays = [getattr(o, name) for o in outcomes]
        if any(a is None for a in arrays):
            return None
        picked: np.ndarray = np.stack(arrays)[chosen, rows]
        return picked

    first = outcomes[0]
    return cls(pick("scored"), pick("values"), first.rule, pick("numerator"), pick("denominator"))
