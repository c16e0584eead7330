"""A retriever's options tuned by k-fold cross-validation over queries: retrieve at every point of
the options' grids (:func:`~finegrain.experiment.tuning.cv.grid_points`) and at the a-priori default,
then choose on the other folds (:func:`~finegrain.experiment.tuning.cv.choose`, the routed choice
of :mod:`~finegrain.experiment.tuning.routing` for a retriever that routes by query type, or, with the
parts tuned too, the nested choice of :mod:`~finegrain.experiment.tuning.nested` for a fusion)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import (
    MAX_POINTS,
    CrossValidation,
    CVSpec,
    Tunable,
    choose,
    fold_sets,
    grid_points,
    metric_keys,
    nothing_to_tune,
    objective_of,
    part_tunables,
    tunables,
)
from finegrain.experiment.tuning.nested import PartGrid, choose_part, choose_with_parts, score_fusions
from finegrain.experiment.tuning.routing import RoutesByQueryType, choose_routed_with_parts, cross_validate_routed
from finegrain.retrieve.fusion.hybrid import HybridRetriever, split_options
from finegrain.retrieve.registry import RETRIEVERS
from finegrain.types import Run


def cross_validate(retriever: str, options: Mapping[str, Any], corpus: Any, queries: Any, qrels: Any, *,
                   lang: str, metrics: Sequence[str], spec: CVSpec, top_k: int | None = None,
                   strata: Mapping[str, str | None] | None = None, show_progress: bool = False,
                   registry: Any = None) -> CrossValidation:
    """Run ``retriever`` (checked ``options`` fixed) at every grid point and at its default, then :func:`choose`."""
    if registry is None:
        registry = RETRIEVERS
    if spec.tune_parts:
        return _cross_validate_parts(retriever, options, corpus, queries, qrels, lang=lang, metrics=metrics,
                                     spec=spec, top_k=top_k, strata=strata, show_progress=show_progress,
                                     registry=registry)
    tuned = tunables(retriever, options, registry)
    if not tuned:
        raise nothing_to_tune(retriever, options, registry)
    points = _points(retriever, tuned)
    default_setting = {t.key: t.default for t in tuned}
    base = registry.build(retriever, **options)
    kw: dict[str, Any] = {"lang": lang, "top_k": top_k, "show_progress": show_progress}
    if isinstance(base, RoutesByQueryType):  # fused per predicted query type: the routed choice
        return cross_validate_routed(base, points, default_setting, tuned, corpus, queries, qrels,
                                     metrics=metrics, spec=spec, strata=strata, **kw)
    runs = _runs(base, retriever, options, [*points, default_setting], corpus, queries, registry=registry, **kw)
    return choose(qrels, runs[:-1], runs[-1], metrics, spec, queries=list(queries), points=points, tuned=tuned,
                  default_setting=default_setting, strata=strata)


def _points(retriever: str, tuned: Sequence[Tunable]) -> list[dict[str, Any]]:
    points = grid_points(tuned)
    if len(points) > MAX_POINTS:
        raise FinegrainError(f"the grid of {retriever!r} has {len(points)} points; at most {MAX_POINTS}",
                             "fix some of its options with --set")
    return points


def _runs(base: Any, retriever: str, options: Mapping[str, Any], settings: Sequence[Mapping[str, Any]], corpus: Any,
          queries: Any, *, registry: Any, **kw: Any) -> Sequence[Run]:
    """``retriever``'s run at each setting: one ``retrieve_grid`` call when it has one (a sequence that may
    make each run when it is read), else a build per distinct setting."""
    if hasattr(base, "retrieve_grid"):
        return base.retrieve_grid(settings, corpus, queries, **kw)  # type: ignore[no-any-return]
    runs: list[Run] = []
    for s in settings:
        same = next((j for j, p in enumerate(settings[:len(runs)]) if p == s), None)
        runs.append(runs[same] if same is not None else
                    registry.build(retriever, **options, **{k: v for k, v in s.items() if v is not None})
                    .retrieve(corpus, queries, **kw))
    return runs


def _cross_validate_parts(retriever: str, options: Mapping[str, Any], corpus: Any, queries: Any, qrels: Any, *,
                          lang: str, metrics: Sequence[str], spec: CVSpec, top_k: int | None,
                          strata: Mapping[str, str | None] | None, show_progress: bool,
                          registry: Any) -> CrossValidation:
    """Each part of the fusion at every point of its own grid, then the nested choice
    (:func:`~finegrain.experiment.tuning.nested.choose_with_parts`)."""
    by_part = part_tunables(retriever, options, registry)
    fusion_tuned = tunables(retriever, options, registry)
    if not fusion_tuned and not any(by_part.values()):
        raise nothing_to_tune(retriever, options, registry)
    built = registry.build(retriever, **options)
    routed = built if isinstance(built, RoutesByQueryType) else None
    base = getattr(built, "base", None) if routed is not None else built
    if not isinstance(base, HybridRetriever):
        raise FinegrainError(f"retriever {retriever!r} cannot have its parts tuned by --cv",
                             "tune the parts of hybrid, hybrid-use, hybrid-sparse, hybrid-routed or "
                             "bm25-jieba-bigram, or drop --cv-parts (parts=tuned)")
    _, per_part = split_options(options)
    kw: dict[str, Any] = {"lang": lang, "top_k": base.depth, "show_progress": show_progress}
    universe = list(dict.fromkeys(queries))
    _, trains = fold_sets(universe, spec, strata)
    objective = objective_of(spec, metric_keys(metrics))
    parts = []
    for part, name in zip(base.parts, by_part):  # one part's grid in memory at a time: its choice keeps its picks
        tuned = by_part[name]
        if not tuned:
            run = part.retrieve(corpus, queries, **kw)
            grid = PartGrid(name=name, tuned=(), points=({},), default_run=run, runs=(run,))
        else:
            points = _points(name, tuned)
            default = {t.key: t.default for t in tuned}
            runs = _runs(part, name, per_part.get(name, {}), [*points, default], corpus, queries, registry=registry,
                         **kw)
            grid = PartGrid(name=name, tuned=tuned, points=tuple(points), default_run=runs[-1], runs=runs[:-1])
        parts.append(choose_part(qrels, grid, objective, universe, trains))
        del grid
    cut = top_k if top_k is not None else base.depth

    def fuse(setting: Mapping[str, Any], runs: Sequence[Run]) -> Run:
        fused = replace(base, **setting).fuse_runs(list(runs))
        return fused.cut(cut) if cut is not None else fused

    default = {t.key: t.default for t in fusion_tuned}
    if routed is None:
        return choose_with_parts(qrels, parts, fuse, fusion_tuned, default, metrics, spec, queries=universe,
                                 strata=strata, show_progress=show_progress)
    scores = score_fusions(qrels, parts, fuse, fusion_tuned, default, metrics, spec, queries=universe, strata=strata,
                           show_progress=show_progress)
    return choose_routed_with_parts(qrels, scores, metrics, spec, texts={q.id: q.text for q in queries.values()},
                                    gold={q.id: q.type for q in queries.values()}, strata=strata,
                                    routes=routed.routes, min_queries=routed.min_queries)
