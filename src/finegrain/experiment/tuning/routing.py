"""Fusion routed by query type, chosen on the other folds: for a retriever that routes
(:class:`RoutesByQueryType`, e.g. ``hybrid-routed``), the fusion setting per predicted query type.

With the folds of ``--cv`` (seeded, stratified by gold query type), for each fold *f*, using the other
folds only:

1. a query-type predictor (:class:`~finegrain.retrieve.query.types.QueryTypePredictor`,
   naive Bayes over text features) is fitted on the other folds' texts and gold types;
2. every query's type is predicted from its text and mapped to a route
   (:func:`~finegrain.retrieve.query.types.route_of`);
3. per route, the grid point with the best objective over the other folds'
   queries *predicted* into that route is chosen (ties: the a-priori default,
   else the first in grid order); a route with fewer than ``min_queries``
   scored training queries takes the point chosen on all the other folds'
   queries (the un-routed choice);
4. each query of fold *f* takes its results from the point of its predicted route.

No gold type is read for a query of fold *f* while fold *f* is scored: its
route comes from its text and a predictor fitted without it. The un-routed CV
(:func:`finegrain.experiment.tuning.cv.choose`, same folds, same grid) runs alongside:
``results["cv"]["routing"]`` holds routed minus un-routed per metric (paired
bootstrap CI, randomization p), the predictor's out-of-fold accuracy against
the gold types (and per route), and each query's out-of-fold predicted type;
``provenance["cv"]`` holds each fold's per-route choice.

With the parts tuned too (``--cv-parts``, :func:`choose_routed_with_parts`), step 3
chooses among the fusion's points over the parts at the points fold *f* chose for
each part alone (:mod:`finegrain.experiment.tuning.nested`'s stage 1, on the same
folds), and the un-routed side is the nested choice.

The predictor is trained on the dataset's own gold query types (the training
folds' only), so a routed figure is cross-validated, not zero-shot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import (
    CrossValidation,
    CVSpec,
    FoldChoice,
    MetricCV,
    Tunable,
    choose,
    metric_keys,
    objective_of,
    point_of,
    score_points,
    summarize,
)
from finegrain.experiment.tuning.folds import assemble
from finegrain.experiment.tuning.nested import FusionScores, choose_with_parts
from finegrain.retrieve.fusion.routed import DEFAULT_MIN_QUERIES, DEFAULT_ROUTES
from finegrain.retrieve.query.types import Accuracy, QueryTypePredictor, accuracy, route_of
from finegrain.types import Corpus, Queries, Run


@runtime_checkable
class RoutesByQueryType(Protocol):
    """A retriever whose fusion setting is chosen per predicted query type under cross-validation."""

    routes: str
    min_queries: int

    def retrieve_grid(self, settings: Sequence[Mapping[str, Any]], corpus: Corpus, queries: Queries, *, lang: str,
                      top_k: int | None, show_progress: bool = True) -> list[Run]: ...


@dataclass(frozen=True, eq=False)
class RoutedCrossValidation(CrossValidation):
    """:class:`~finegrain.experiment.tuning.cv.CrossValidation` of a routed fusion, with the un-routed CV beside it."""

    routes: str = DEFAULT_ROUTES
    min_queries: int = DEFAULT_MIN_QUERIES
    #: per fold: route -> (grid point, scored training queries in the route, fell back to the un-routed point)
    route_choices: tuple[Mapping[str, tuple[int, int, bool]], ...] = ()
    predicted: Mapping[str, str] = field(default_factory=dict)  # each query's out-of-fold predicted type
    accuracy: Accuracy | None = None
    unrouted: CrossValidation | None = None
    vs_unrouted: Mapping[str, MetricCV] = field(default_factory=dict)  # routed (mean) vs un-routed (default_mean)

    def provenance(self) -> dict[str, Any]:
        out = super().provenance()
        out["method"] = routed_method_note(self.spec, self.objective, self.routes, self.min_queries,
                                           nested=self.note is not None)
        out["routing"] = {
            "routes": self.routes, "min_queries": self.min_queries,
            "predictor": "naive Bayes over query-text features (finegrain.retrieve.query.types), fitted per fold "
                         "on the other folds' texts and gold types",
            "per_fold": [{r: {"setting": _plain(self.points[i]), "n_train": n, "fallback": fb}
                          for r, (i, n, fb) in c.items()} for c in self.route_choices],
        }
        if self.unrouted is not None:
            flat = self.unrouted.provenance()
            out["unrouted"] = {"per_fold": flat["per_fold"], "consensus": flat["consensus"]}
        return out

    def to_json_dict(self) -> dict[str, Any]:
        out = super().to_json_dict()
        out["routing"] = {
            "routes": self.routes,
            "predictor_accuracy": None if self.accuracy is None else self.accuracy.to_json_dict(),
            "predicted_type": dict(self.predicted),
            "vs_unrouted": {m: {"routed": c.mean, "unrouted": c.default_mean, "diff": c.diff,
                                "diff_ci": None if c.diff_ci is None else list(c.diff_ci), "p_rand": c.p_rand}
                            for m, c in self.vs_unrouted.items()},
        }
        return out


def routed_method_note(spec: CVSpec, objective: str, routes: str, min_queries: int, *, nested: bool = False) -> str:
    parts = ("each part's own options are first the point of its grid with the best "
             f"{objective} for the part alone on the other folds; " if nested else "")
    return (f"{spec.folds}-fold cross-validation over queries (seed {spec.seed}, stratified by query type), "
            f"{'nested and ' if nested else ''}routed: in each fold {parts}a naive Bayes query-type predictor is "
            "fitted on the other folds' texts and gold types, "
            f"every query's type is predicted from its text and grouped into routes ({routes}); per route the grid "
            f"point with the best {objective} on the other folds' queries predicted into it is chosen (fewer than "
            f"{min_queries} scored: the point chosen on all the other folds); each held-out query takes its "
            "predicted route's point; no held-out query's gold type or qrels enter its fold's choices")


def _plain(setting: Mapping[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in setting.items()}


def _label(setting: Mapping[str, Any]) -> str:
    """``{"weights": (0.25, 0.75), "k": 10.0}`` -> ``"0.25:0.75 k10"`` (a per-route setting as one string)."""
    def one(key: str, v: Any) -> str:
        if isinstance(v, (list, tuple)):
            return ":".join(f"{x:g}" for x in v)
        shown = "equal" if v is None else f"{v:g}" if isinstance(v, float) else str(v)
        return f"k{shown}" if key == "k" else f"{key}={shown}"

    return " ".join(one(key, v) for key, v in setting.items())


# --------------------------------------------------------------------------- the routed choice (pure)


def choose_routed(qrels: Any, runs: Sequence[Run], default_run: Run, metrics: Sequence[str], spec: CVSpec, *,
                  texts: Mapping[str, str], gold: Mapping[str, str | None], points: Sequence[Mapping[str, Any]],
                  tuned: Sequence[Tunable] = (), default_setting: Mapping[str, Any] | None = None,
                  strata: Mapping[str, str | None] | None = None, routes: str = DEFAULT_ROUTES,
                  min_queries: int = DEFAULT_MIN_QUERIES, n_resamples: int = 10000,
                  assignment: Mapping[str, int] | None = None) -> RoutedCrossValidation:
    """Routed cross-validation over ready runs (``runs[i]`` is ``points[i]``'s); see the module docstring.

    ``texts`` and ``gold`` (``{qid: text}``, ``{qid: type or None}``) give the predictor its training data; a
    held-out query's gold type is never read. ``assignment`` (``{qid: fold}``) replaces the seeded deal."""
    if isinstance(min_queries, bool) or not isinstance(min_queries, int) or min_queries < 1:
        raise FinegrainError(f"min_queries={min_queries!r} is not a whole number >= 1", "pass min_queries=30")
    route_of(None, routes)  # a bad routes= fails before any work
    universe = list(dict.fromkeys(texts))
    missing = [q for q in universe if q not in gold]
    if missing:
        raise FinegrainError(f"query {missing[0]!r} has a text but no entry in gold", "give every query a type or None")
    objective = objective_of(spec, metric_keys(metrics))
    scored = score_points(qrels, runs, objective, universe)  # once: both choices read them
    flat = choose(qrels, runs, default_run, metrics, spec, queries=universe, points=points, tuned=tuned,
                  default_setting=default_setting, strata=strata, n_resamples=n_resamples, assignment=assignment,
                  scored=scored)
    folds = dict(flat.fold_of)  # the very folds of the un-routed CV
    values = per_query_values(scored, universe)
    preferred = point_of(points, default_setting)
    fold_arr = np.asarray([folds[q] for q in universe])
    per_query_point: dict[str, int] = {}
    oof_predicted: dict[str, str] = {}
    route_choices: list[Mapping[str, tuple[int, int, bool]]] = []
    fitted: list[float | None] = []
    for f in range(spec.folds):
        train = fold_arr != f
        predicted, route = predict_routes(texts, gold, universe, train, routes)
        picks, fit = route_picks(values, train, route, preferred, min_queries)
        route_choices.append(MappingProxyType(picks))
        fitted.append(fit)
        for j in np.flatnonzero(~train):
            per_query_point[universe[j]] = picks[route[j]][0]
            oof_predicted[universe[j]] = predicted[j]
    picked = {i: runs[i] for i in dict.fromkeys(per_query_point[q] for q in universe)}  # each read once
    oof = assemble([picked[per_query_point[q]] for q in universe], universe,
                   name=f"cv-routed-{flat.run.name.removeprefix('cv-')}")
    labels = [_label(p) for p in points]
    return _routed_record(qrels, oof, default_run, flat, spec, universe=universe, strata=strata,
                          n_resamples=n_resamples, points=flat.points, labels=labels, route_choices=route_choices,
                          fitted=fitted, predicted=oof_predicted, gold=gold, routes=routes, min_queries=min_queries)


def per_query_values(scored: Sequence[Any], universe: Sequence[str]) -> np.ndarray:
    """``values[i, j]``: point ``i``'s objective on query ``universe[j]`` (NaN where it has none)."""
    values = np.full((len(scored), len(universe)), np.nan)
    for i, res in enumerate(scored):
        for j, q in enumerate(universe):
            v = res.per_query.get(q)
            if v is not None:
                values[i, j] = v
    return values


def predict_routes(texts: Mapping[str, str], gold: Mapping[str, str | None], universe: Sequence[str],
                   train: np.ndarray, routes: str) -> tuple[list[str], np.ndarray]:
    """Every query's type predicted from its text by a predictor fitted on the ``train`` queries' texts and gold
    types, and its route."""
    train_q = [q for q, t in zip(universe, train) if t]
    predictor = QueryTypePredictor.fit([texts[q] for q in train_q], [gold[q] for q in train_q])
    predicted = predictor.predict([texts[q] for q in universe])  # from text only
    return predicted, np.asarray([str(route_of(p, routes)) for p in predicted])


def route_picks(values: np.ndarray, train: np.ndarray, route: np.ndarray, preferred: int | None,
                min_queries: int) -> tuple[dict[str, tuple[int, int, bool]], float | None]:
    """Per route, the point best over the ``train`` queries predicted into it (``(point, scored queries,
    fell back)``; fewer than ``min_queries`` scored: the point best over every ``train`` query), and the mean
    objective of those picks over the ``train`` queries."""

    def best(cols: np.ndarray) -> tuple[int, int]:
        """The best point over the query columns ``cols`` (ties: the default, else the first) and how many scored."""
        sub = values[:, cols]
        n = int(np.sum(~np.isnan(sub[0]))) if len(values) else 0
        if not cols.any() or n == 0:
            return (preferred if preferred is not None else 0), 0
        means = np.nanmean(sub, axis=1)
        top = float(np.max(means))
        return (preferred if preferred is not None and means[preferred] == top else int(np.argmax(means))), n

    global_pick, _ = best(train)
    picks: dict[str, tuple[int, int, bool]] = {}
    for r in sorted(set(route.tolist())):
        pick, n = best(train & (route == r))
        picks[r] = (pick, n, False) if n >= min_queries else (global_pick, n, True)
    kept = [v for v in (values[picks[route[j]][0], j] for j in np.flatnonzero(train)) if not np.isnan(v)]
    return picks, (float(np.mean(kept)) if kept else None)


def _routed_record(qrels: Any, oof: Run, default_run: Run, flat: CrossValidation, spec: CVSpec, *,
                   universe: Sequence[str], strata: Mapping[str, str | None] | None, n_resamples: int,
                   points: Sequence[Mapping[str, Any]], labels: Sequence[str],
                   route_choices: Sequence[Mapping[str, tuple[int, int, bool]]], fitted: Sequence[float | None],
                   predicted: Mapping[str, str], gold: Mapping[str, str | None], routes: str,
                   min_queries: int, fold_parts: Sequence[str] | None = None) -> RoutedCrossValidation:
    """The routed record of an out-of-fold run: ``route_choices`` index ``points`` (shown as ``labels``);
    ``flat`` is the un-routed CV on the same folds; ``universe``: the queries in their given order;
    ``fold_parts``: each fold's parts' settings, shown once per fold (``labels`` then show the fusion's alone)."""
    members = [frozenset(q for q in universe if flat.fold_of[q] == f) for f in range(spec.folds)]
    keys = tuple(flat.metrics)
    ev, dev, per_metric = summarize(qrels, oof, default_run, keys, spec, queries=universe, members=members,
                                    strata=strata, n_resamples=n_resamples)
    _, _, vs_flat = summarize(qrels, oof, flat.run, keys, spec, queries=universe, members=members, strata=strata,
                              n_resamples=n_resamples)

    def shown(f: int) -> dict[str, str]:
        routed = {r: labels[i] + (" (fallback)" if fb else "") for r, (i, _, fb) in route_choices[f].items()}
        return {"parts": fold_parts[f], **routed} if fold_parts is not None else routed

    fold_choices = tuple(
        FoldChoice(f, len(members[f]), MappingProxyType(shown(f)), flat.folds[f].point, fitted[f],
                   ev[flat.objective].value_over(members[f])[0])
        for f in range(spec.folds))
    consensus: dict[str, str] = {"parts": _most_folds(fold_parts)} if fold_parts is not None else {}
    for r in sorted({r for c in route_choices for r in c}):
        consensus[r] = _most_folds([labels[c[r][0]] for c in route_choices if r in c], order=labels)
    return RoutedCrossValidation(
        spec=spec, objective=flat.objective, tuned=flat.tuned, points=tuple(MappingProxyType(dict(p)) for p in points),
        default_setting=flat.default_setting, folds=fold_choices, consensus=MappingProxyType(consensus),
        in_sample=flat.in_sample, in_sample_value=flat.in_sample_value, fold_of=flat.fold_of,
        metrics=MappingProxyType(per_metric), run=oof, evaluation=ev, default_evaluation=dev, strata=flat.strata,
        routes=routes, min_queries=min_queries, route_choices=tuple(route_choices),
        predicted=MappingProxyType(dict(predicted)), accuracy=accuracy(gold, predicted, routes),
        unrouted=flat, vs_unrouted=MappingProxyType(vs_flat), note=flat.note,
        searched=flat.searched)


def _most_folds(chosen: Sequence[str], order: Sequence[str] | None = None) -> str:
    """The label most folds chose; ties: the first in ``order`` (grid order), else the first chosen."""
    counts = Counter(chosen)
    top = max(counts.values())
    rank = {label: i for i, label in reversed(list(enumerate(order if order is not None else chosen)))}
    return min((label for label, n in counts.items() if n == top), key=lambda label: rank[label])


def choose_routed_with_parts(qrels: Any, scores: FusionScores, metrics: Sequence[str], spec: CVSpec, *,
                             texts: Mapping[str, str], gold: Mapping[str, str | None],
                             strata: Mapping[str, str | None] | None = None, routes: str = DEFAULT_ROUTES,
                             min_queries: int = DEFAULT_MIN_QUERIES, n_resamples: int = 10000
                             ) -> RoutedCrossValidation:
    """Routed cross-validation of a fusion whose parts are tuned too: in each fold the parts at their stage-1
    points (``scores``, :func:`~finegrain.experiment.tuning.nested.score_fusions` on the same folds), then per
    predicted route the fusion point best over the other folds' queries in that route. The un-routed nested
    choice (:func:`~finegrain.experiment.tuning.nested.choose_with_parts`) runs beside it, from the same scores."""
    if isinstance(min_queries, bool) or not isinstance(min_queries, int) or min_queries < 1:
        raise FinegrainError(f"min_queries={min_queries!r} is not a whole number >= 1", "pass min_queries=30")
    route_of(None, routes)
    universe = list(scores.universe)
    missing = [q for q in universe if q not in texts or q not in gold]
    if missing:
        raise FinegrainError(f"query {missing[0]!r} has no text or no entry in gold", "give every query a type or None")
    flat = choose_with_parts(qrels, list(scores.chosen), scores.fuse, scores.fusion_tuned, scores.fusion_setting,
                             metrics, spec, queries=universe, strata=strata, n_resamples=n_resamples, scored=scores)
    fold_arr = np.asarray([scores.folds[q] for q in universe])
    values = {combo: per_query_values(sc, universe) for combo, sc in scores.scores.items()}
    settings: dict[tuple[tuple[int, ...], int], int] = {}  # (combination, fusion point) -> index in points
    per_query: dict[str, tuple[tuple[int, ...], int]] = {}
    oof_predicted: dict[str, str] = {}
    route_choices: list[Mapping[str, tuple[int, int, bool]]] = []
    fitted: list[float | None] = []
    for f in range(spec.folds):
        train, combo = fold_arr != f, scores.combos[f]
        predicted, route = predict_routes(texts, gold, universe, train, routes)
        picks, fit = route_picks(values[combo], train, route, scores.preferred, min_queries)
        route_choices.append(MappingProxyType({r: (settings.setdefault((combo, j), len(settings)), n, fb)
                                               for r, (j, n, fb) in picks.items()}))
        fitted.append(fit)
        for k in np.flatnonzero(~train):
            per_query[universe[k]] = (combo, picks[route[k]][0])
            oof_predicted[universe[k]] = predicted[k]
    runs = {key: scores.fused(*key) for key in dict.fromkeys(per_query[q] for q in universe)}  # each fused once
    default_run = scores.default_run
    oof = assemble([runs[per_query[q]] for q in universe], universe, name=f"cv-routed-{default_run.name}")
    points = [scores.setting(combo, j) for combo, j in settings]
    fusion = [_label(scores.fusion_points[j]) for _, j in settings]
    fold_parts = [_label({k: v for k, v in scores.setting(combo, 0).items() if k not in scores.fusion_points[0]})
                  for combo in scores.combos]
    return _routed_record(qrels, oof, default_run, flat, spec, universe=universe, strata=strata,
                          n_resamples=n_resamples, points=points, labels=fusion, route_choices=route_choices,
                          fitted=fitted, predicted=oof_predicted, gold=gold, routes=routes, min_queries=min_queries,
                          fold_parts=fold_parts)


def cross_validate_routed(retriever: RoutesByQueryType, points: Sequence[Mapping[str, Any]],
                          default_setting: Mapping[str, Any], tuned: Sequence[Tunable], corpus: Corpus,
                          queries: Queries, qrels: Any, *, metrics: Sequence[str], spec: CVSpec,
                          strata: Mapping[str, str | None] | None, lang: str, top_k: int | None,
                          show_progress: bool = False) -> RoutedCrossValidation:
    """The parts retrieve once, every grid point is fused, then :func:`choose_routed` (gold types for
    training come from ``Query.type``)."""
    runs = retriever.retrieve_grid([*points, default_setting], corpus, queries, lang=lang, top_k=top_k,
                                   show_progress=show_progress)
    return choose_routed(qrels, runs[:-1], runs[-1], metrics, spec,
                         texts={q.id: q.text for q in queries.values()},
                         gold={q.id: q.type for q in queries.values()}, points=points, tuned=tuned,
                         default_setting=default_setting, strata=strata, routes=retriever.routes,
                         min_queries=retriever.min_queries)
