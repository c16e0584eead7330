"""A retriever's tunable settings chosen by k-fold cross-validation over queries (``finegrain eval --cv K``).

The protocol: a weight, constant or switch is never scored on the
queries it was chosen on.

1. The **grid** is declared once, with the retriever's parameters: a
   :class:`~finegrain.registry.Param` with a ``grid`` is tunable (hybrid:
   ``weights`` and RRF ``k``; BM25: ``k1`` and ``b``). A parameter given with
   ``--set`` is fixed, not tuned. A fusion's parts keep their settings unless the spec says
   ``parts=tuned`` (``--cv-parts``): then they are tuned inside each fold
   (:mod:`~finegrain.experiment.tuning.nested`). The grid is the cross product of the tunable
   parameters' values; each point is one run (a hybrid's parts retrieve once and
   are fused per point: :meth:`~finegrain.retrieve.fusion.hybrid.HybridRetriever.retrieve_grid`).
2. The queries are dealt into ``K`` **folds**, seeded and stratified by query
   type (:func:`finegrain.experiment.tuning.folds.fold_of`, the one fold maker).
3. For each fold *f*, the point with the best **objective** (``metric=``,
   default ``ndcg@10``) on the queries of the *other* folds is chosen (ties: the
   a-priori default when it is a grid point, else the first point in grid order), and fold *f*'s queries take their results from
   that point's run. Choosing looks only at the other folds' qrels, so changing
   fold *f*'s judgements never changes fold *f*'s choice.
4. The **out-of-fold run** (every query from its own fold's choice) is what
   ``finegrain eval --cv`` saves and scores: ``results.json``'s metrics are its
   per-query values, so ``finegrain compare`` tests it against any other run,
   paired over queries. Each metric is reported as the mean of those
   per-query values with a bootstrap CI, next to the **a-priori default**
   (the retriever as registered, on the same queries, with its CI) and the
   paired difference (bootstrap CI, Fisher randomization test).
5. The **consensus** setting to ship is the point most folds chose (ties: the
   first in grid order). The best point on all queries is saved too, labelled
   in-sample (optimistic: chosen and scored on the same queries).

Every metric is reported on the settings chosen for the one objective (a
metric other than the objective is not re-tuned for itself).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from finegrain.compare.stats import bootstrap_ci, randomization_test
from finegrain.errors import FinegrainError
from finegrain.evaluate.evaluate import evaluate
from finegrain.experiment.tuning.folds import assemble, fold_of
from finegrain.metrics.spec import parse_metric
from finegrain.numbers import NumberError, parse_int
from finegrain.retrieve.fusion.hybrid import split_options
from finegrain.retrieve.registry import RETRIEVERS

SCHEMA = "finegrain.cv/1"
DEFAULT_OBJECTIVE = "ndcg@10"
MAX_POINTS = 2000
_EXAMPLE = "--cv 5, or --cv 5,metric=ndcg@10,seed=0,parts=tuned"
PARTS = ("fixed", "tuned")


# --------------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class CVSpec:
    """``K[,metric=M][,seed=S][,parts=tuned]`` parsed; ``metric`` None: ``ndcg@10`` if evaluated, else the first
    metric; ``parts`` ``tuned``: a fusion's parts are tuned too, inside each fold (:mod:`.nested`)."""

    folds: int = 5
    seed: int = 0
    metric: str | None = None
    parts: str = "fixed"

    @property
    def key(self) -> str:
        return f"{self.folds},metric={self.metric},seed={self.seed}" + (",parts=tuned" if self.tune_parts else "")

    @property
    def tune_parts(self) -> bool:
        return self.parts == "tuned"


def parse_cv(text: str | int) -> CVSpec:
    """Parse ``--cv``; a bad spec is a :class:`FinegrainError` naming the part and an example."""
    head, *rest = str(text).split(",")
    folds = _int(head.strip(), "the number of folds", text)
    opts: dict[str, str] = {}
    for part in rest:
        k, sep, v = part.partition("=")
        k = k.strip().lower()
        if not sep or k not in ("metric", "seed", "parts"):
            raise FinegrainError(f"--cv {text!r}: unknown part {part.strip()!r}",
                                 f"the parts after K are metric=, seed= and parts=; e.g. {_EXAMPLE}")
        if k in opts:
            raise FinegrainError(f"--cv {text!r}: {k}= is given twice", f"give {k}= once")
        opts[k] = v.strip()
    if folds < 2:
        raise FinegrainError(f"--cv {text!r}: {folds} fold(s); cross-validation needs at least 2", f"e.g. {_EXAMPLE}")
    metric = opts.get("metric")
    if metric is not None:
        metric = parse_metric(metric).key
    seed = _int(opts.get("seed", "0"), "seed", text)
    if seed < 0:
        raise FinegrainError(f"--cv {text!r}: seed {seed} is negative", f"a seed is a whole number >= 0; e.g. {_EXAMPLE}")
    parts = opts.get("parts", "fixed").lower()
    if parts not in PARTS:
        raise FinegrainError(f"--cv {text!r}: parts={parts!r}", f"parts= is {' or '.join(PARTS)}; e.g. {_EXAMPLE}")
    return CVSpec(folds, seed, metric, parts)


def _int(v: str, what: str, text: str | int) -> int:
    try:
        return parse_int(v)
    except NumberError as e:
        raise FinegrainError(f"--cv {text!r}: {what} {v!r}: {e.reason}", f"e.g. {_EXAMPLE}") from None


# --------------------------------------------------------------------------- the grid


@dataclass(frozen=True)
class Tunable:
    """One tunable parameter: its name, the values tried and its a-priori default."""

    key: str
    values: tuple[Any, ...]
    default: Any


def tunables(retriever: str, options: Mapping[str, Any], registry: Any = None) -> tuple[Tunable, ...]:
    """The parameters of ``retriever`` that declare a grid and are not fixed in ``options`` (checked options)."""
    if registry is None:
        registry = RETRIEVERS
    params = registry.params(retriever) or {}
    # a grid may depend on other options (hybrid's weights on its parts): give it the effective ones,
    # the retriever's declared defaults under what was set
    effective = {**{k: p.default for k, p in params.items() if p.default is not None}, **options}
    out = []
    for key, p in params.items():
        if key in options:
            continue
        values = tuple(p.convert(key, v, f"retriever {retriever!r}") for v in p.grid_values(effective))
        if values:
            out.append(Tunable(key, tuple(dict.fromkeys(values)), p.default))
    return tuple(out)


def part_tunables(retriever: str, options: Mapping[str, Any],
                  registry: Any = None) -> dict[str, tuple[Tunable, ...]]:
    """Each part of the fusion ``retriever`` (checked ``options``): the options of its own that declare a grid
    and that no ``PART.KEY`` option fixes, by part name."""
    if registry is None:
        registry = RETRIEVERS
    params = registry.params(retriever) or {}
    if "parts" not in params:
        raise FinegrainError(f"retriever {retriever!r} has no parts to tune",
                             "drop --cv-parts (parts=tuned), or use a fusion (hybrid, hybrid-use, ...)")
    own, per_part = split_options(options)
    names = own.get("parts", params["parts"].default)
    return {name: tunables(name, per_part.get(name, {}), registry) for name in names}


def grid_points(tuned: Sequence[Tunable]) -> list[dict[str, Any]]:
    """The cross product of the tunables' values, first parameter slowest (grid order)."""
    return [dict(zip([t.key for t in tuned], combo)) for combo in itertools.product(*(t.values for t in tuned))]


def nothing_to_tune(retriever: str, options: Mapping[str, Any], registry: Any = None) -> FinegrainError:
    if registry is None:
        registry = RETRIEVERS
    tunable = [n for n in registry.names() if any(p.grid is not None for p in (registry.params(n) or {}).values())]
    fixed = [k for k, p in (registry.params(retriever) or {}).items() if p.grid is not None and k in options]
    why = f" (its tunable options {', '.join(fixed)} are fixed by --set)" if fixed else ""
    return FinegrainError(f"retriever {retriever!r} has nothing to tune{why}",
                          f"drop --cv, or use a retriever with tunable options: {', '.join(tunable)}")


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class FoldChoice:
    """One fold: the setting fitted on the other folds (its objective there) and the objective on the fold."""

    fold: int
    n_queries: int
    setting: Mapping[str, Any]
    point: int
    fitted_value: float | None
    held_out_value: float | None


@dataclass(frozen=True)
class MetricCV:
    """One metric: the out-of-fold mean with its CI, the a-priori default's, and the paired difference."""

    metric: str
    n: int
    mean: float | None
    ci: tuple[float, float] | None
    default_mean: float | None
    default_ci: tuple[float, float] | None
    diff_ci: tuple[float, float] | None
    p_rand: float | None
    fold_values: tuple[float | None, ...]

    @property
    def diff(self) -> float | None:
        return None if self.mean is None or self.default_mean is None else self.mean - self.default_mean


@dataclass(frozen=True, eq=False)
class CrossValidation:
    """Everything ``--cv`` chose and measured; ``run`` is the out-of-fold run, ``evaluation`` its scores."""

    spec: CVSpec
    objective: str
    tuned: tuple[Tunable, ...]
    points: tuple[Mapping[str, Any], ...]
    default_setting: Mapping[str, Any]
    folds: tuple[FoldChoice, ...]
    consensus: Mapping[str, Any]
    in_sample: Mapping[str, Any]
    in_sample_value: float | None
    fold_of: Mapping[str, int]
    metrics: Mapping[str, MetricCV]
    run: Any  # finegrain.types.Run: every query from its own fold's choice
    evaluation: Any  # finegrain.evaluate.result.Evaluation of ``run``
    default_evaluation: Any  # the a-priori default's Evaluation on the same queries
    strata: str = "query type"
    note: str | None = None  # how the settings were chosen, when not by method_note's one-stage rule
    searched: int | None = None  # runs scored, when not one per point of ``points`` (the nested choice)

    def provenance(self) -> dict[str, Any]:
        """``provenance["cv"]``: how the settings were chosen (per-fold choices, consensus)."""
        return {
            "schema": SCHEMA,
            "spec": f"{self.spec.folds},metric={self.objective},seed={self.spec.seed}"
                    + (",parts=tuned" if self.spec.tune_parts else ""),
            "folds": self.spec.folds, "seed": self.spec.seed, "stratified_by": self.strata,
            "objective": self.objective,
            "grid": {t.key: [_jsonable(v) for v in t.values] for t in self.tuned},
            "n_points": len(self.points) if self.searched is None else self.searched,
            "default": {k: _jsonable(v) for k, v in self.default_setting.items()},
            "per_fold": [{"fold": f.fold, "n_queries": f.n_queries,
                          "setting": {k: _jsonable(v) for k, v in f.setting.items()},
                          "fitted_value": f.fitted_value, "held_out_value": f.held_out_value} for f in self.folds],
            "consensus": {k: _jsonable(v) for k, v in self.consensus.items()},
            "in_sample": {"setting": {k: _jsonable(v) for k, v in self.in_sample.items()},
                          "value": self.in_sample_value,
                          "note": "chosen and scored on all queries: optimistic, never a reported score"},
            "method": self.note or method_note(self.spec, self.objective),
        }

    def to_json_dict(self) -> dict[str, Any]:
        """``results["cv"]``: per metric the CV mean and CI, the default's, the difference; per-query values of
        the default; each query's fold. (The out-of-fold per-query values are results.json's metrics.)"""
        return {
            "schema": SCHEMA,
            "objective": self.objective,
            "metrics": {
                m: {"n": c.n, "mean": c.mean, "ci": _pair(c.ci), "default_mean": c.default_mean,
                    "default_ci": _pair(c.default_ci), "diff": c.diff, "diff_ci": _pair(c.diff_ci),
                    "p_rand": c.p_rand, "fold_values": list(c.fold_values)}
                for m, c in self.metrics.items()
            },
            "default_per_query": {m: dict(self.default_evaluation[m].per_query) for m in self.metrics},
            "fold_of": dict(self.fold_of),
        }


def method_note(spec: CVSpec, objective: str) -> str:
    return (f"{spec.folds}-fold cross-validation over queries (seed {spec.seed}, stratified by query type): each "
            f"fold's setting is the grid point with the best {objective} on the other folds (ties: the default, "
            "else first in grid order) and never looks at the fold it is scored on; reported values are means over every query's "
            "out-of-fold value with a bootstrap 95% CI, next to the a-priori default on the same queries; the "
            "consensus is the setting most folds chose")


def _pair(x: tuple[float, float] | None) -> list[float] | None:
    return None if x is None else [x[0], x[1]]


def _jsonable(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


# --------------------------------------------------------------------------- the choice (pure)


def metric_keys(metrics: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(parse_metric(m).key for m in metrics))


def objective_of(spec: CVSpec, keys: Sequence[str]) -> str:
    """The metric the choice maximises: the spec's, else ``ndcg@10`` when evaluated, else the first."""
    return spec.metric or (DEFAULT_OBJECTIVE if DEFAULT_OBJECTIVE in keys else keys[0])


def deal(universe: Sequence[str], spec: CVSpec, strata: Mapping[str, str | None] | None = None,
         assignment: Mapping[str, int] | None = None) -> dict[str, int]:
    """Each query's fold: seeded and stratified (:func:`~finegrain.experiment.tuning.folds.fold_of`), or
    ``assignment``'s."""
    if len(universe) < spec.folds:
        raise FinegrainError(f"{len(universe)} queries cannot be dealt into {spec.folds} folds",
                             f"use --cv {max(2, len(universe))} or fewer")
    if assignment is None:
        return fold_of(list(universe), spec.folds, spec.seed, strata if strata is not None else {})
    return {q: int(assignment[q]) for q in universe}


def fold_sets(universe: Sequence[str], spec: CVSpec, strata: Mapping[str, str | None] | None = None,
              assignment: Mapping[str, int] | None = None) -> tuple[dict[str, int], list[frozenset[str]]]:
    """Each query's fold (:func:`deal`) and each fold's training queries."""
    folds = deal(universe, spec, strata, assignment)
    return folds, [frozenset(q for q in universe if folds[q] != f) for f in range(spec.folds)]


def point_of(points: Sequence[Mapping[str, Any]], setting: Mapping[str, Any] | None) -> int | None:
    """The index of ``setting`` among ``points``, or None (then no point is preferred on ties)."""
    return next((i for i, p in enumerate(points) if setting is not None and dict(p) == dict(setting)), None)


def score_points(qrels: Any, runs: Sequence[Any], objective: str, queries: Sequence[str]) -> list[Any]:
    """Each run's evaluation of ``objective`` on ``queries`` (its per-query values and means over any subset)."""
    return [evaluate(qrels, r, objective, queries=list(queries), warn=False)[objective] for r in runs]


def best_point(scored: Sequence[Any], qids: frozenset[str], preferred: int | None) -> tuple[int, float | None]:
    """The point whose evaluation (``scored[i]``, one metric) is best on ``qids``, and its value; ties: the
    ``preferred`` point (the a-priori default when it is a grid point), else the first."""
    pick, value = 0, None
    for i, res in enumerate(scored):
        v = res.value_over(qids)[0]
        if v is not None and (value is None or v > value):
            pick, value = i, v
    if preferred is not None and value is not None and scored[preferred].value_over(qids)[0] == value:
        pick = preferred
    return pick, value


def choose(qrels: Any, runs: Sequence[Any], default_run: Any, metrics: Sequence[str], spec: CVSpec, *,
           queries: Sequence[str], points: Sequence[Mapping[str, Any]], tuned: Sequence[Tunable] = (),
           default_setting: Mapping[str, Any] | None = None,
           strata: Mapping[str, str | None] | None = None, n_resamples: int = 10000,
           assignment: Mapping[str, int] | None = None, scored: Sequence[Any] | None = None) -> CrossValidation:
    """Cross-validate over ready runs: ``runs[i]`` is the run of ``points[i]`` (see the module docstring).

    ``assignment`` (``{qid: fold}``, folds ``0..K-1``) replaces the seeded stratified deal (tests, replays).
    ``scored`` (:func:`score_points`, made by a caller that needs them too) spares scoring each run again: a
    grid that fuses each run when it is read would fuse it twice."""

    keys = metric_keys(metrics)
    objective = objective_of(spec, keys)
    if len(runs) != len(points) or not runs:
        raise FinegrainError(f"{len(runs)} runs for {len(points)} grid points", "give one run per grid point")
    universe = list(dict.fromkeys(queries))
    folds, trains = fold_sets(universe, spec, strata, assignment)
    members = [frozenset(q for q in universe if folds[q] == f) for f in range(spec.folds)]
    if scored is None:
        scored = score_points(qrels, runs, objective, universe)
    elif len(scored) != len(runs):
        raise FinegrainError(f"{len(scored)} scored runs for {len(runs)} runs", "score every run once")
    preferred = point_of(points, default_setting)

    def best(qids: frozenset[str]) -> tuple[int, float | None]:
        return best_point(scored, qids, preferred)

    chosen: list[tuple[int, float | None]] = []
    for train in trains:
        chosen.append(best(train))
    picked = {i: runs[i] for i in dict.fromkeys(i for i, _ in chosen)}  # each chosen run read once
    oof = assemble([picked[chosen[folds[q]][0]] for q in universe], universe,
                   name=f"cv-{next(iter(picked.values())).name}")
    ev, dev, per_metric = summarize(qrels, oof, default_run, keys, spec, queries=universe, members=members,
                                    strata=strata, n_resamples=n_resamples)
    fold_choices = tuple(
        FoldChoice(f, len(members[f]), MappingProxyType(dict(points[i])), i, fitted,
                   scored[i].value_over(members[f])[0])
        for f, (i, fitted) in enumerate(chosen))
    counts = np.bincount([i for i, _ in chosen], minlength=len(points))
    consensus = int(np.argmax(counts))  # most folds; ties: first in grid order
    i_all, v_all = best(frozenset(universe))
    return CrossValidation(
        spec=spec, objective=objective, tuned=tuple(tuned), points=tuple(MappingProxyType(dict(p)) for p in points),
        default_setting=MappingProxyType(dict(default_setting or {})), folds=fold_choices,
        consensus=MappingProxyType(dict(points[consensus])), in_sample=MappingProxyType(dict(points[i_all])),
        in_sample_value=v_all, fold_of=MappingProxyType(folds), metrics=MappingProxyType(per_metric),
        run=oof, evaluation=ev, default_evaluation=dev,
        strata="query type" if strata is not None else "none")


def summarize(qrels: Any, oof: Any, default_run: Any, keys: Sequence[str], spec: CVSpec, *, queries: Sequence[str],
              members: Sequence[frozenset[str]], strata: Mapping[str, str | None] | None = None,
              n_resamples: int = 10000) -> tuple[Any, Any, dict[str, MetricCV]]:
    """Score an out-of-fold run and the a-priori default on ``queries``: both evaluations and, per metric,
    the means with bootstrap CIs, the paired difference and its randomization p, the value on each fold
    (``members[f]``: fold f's queries). Shared by :func:`choose` and routed CV (:mod:`finegrain.retrieve.fusion.routed`)."""

    ev = evaluate(qrels, oof, keys, queries=list(queries), query_types=strata, warn=False)
    dev = evaluate(qrels, default_run, keys, queries=list(queries), query_types=strata, warn=False)
    per_metric: dict[str, MetricCV] = {}
    for m in keys:
        a_map, b_map = ev[m].per_query, dev[m].per_query
        both = [q for q in ev[m].universe if a_map.get(q) is not None and b_map.get(q) is not None]
        a = np.asarray([a_map[q] for q in both], dtype=np.float64)
        b = np.asarray([b_map[q] for q in both], dtype=np.float64)
        def ci(x: np.ndarray) -> tuple[float, float] | None:
            if not len(x):
                return None
            low, high = bootstrap_ci(x, n_resamples=n_resamples, seed=spec.seed)
            return (low, high)

        p = float(randomization_test(a, b, n_resamples=n_resamples, seed=spec.seed).p_value) if len(a) else None
        per_metric[m] = MetricCV(m, len(both), ev[m].value, ci(a), dev[m].value, ci(b), ci(a - b),
                                 None if p is None or p != p else p,
                                 tuple(ev[m].value_over(f)[0] for f in members))
    return ev, dev, per_metric
