"""A retriever's options tuned by k-fold cross-validation over queries: retrieve at every point of
the options' grids (:func:`~finegrain.experiment.tuning.cv.grid_points`) and at the a-priori default,
then choose on the other folds (:func:`~finegrain.experiment.tuning.cv.choose`, or the routed choice
of :mod:`~finegrain.experiment.tuning.routing` for a retriever that routes by query type)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from finegrain.errors import FinegrainError
from finegrain.experiment.tuning.cv import (
    MAX_POINTS,
    CrossValidation,
    CVSpec,
    choose,
    grid_points,
    nothing_to_tune,
    tunables,
)
from finegrain.experiment.tuning.routing import RoutesByQueryType, cross_validate_routed
from finegrain.retrieve.registry import RETRIEVERS


def cross_validate(retriever: str, options: Mapping[str, Any], corpus: Any, queries: Any, qrels: Any, *,
                   lang: str, metrics: Sequence[str], spec: CVSpec, top_k: int | None = None,
                   strata: Mapping[str, str | None] | None = None, show_progress: bool = False,
                   registry: Any = None) -> CrossValidation:
    """Run ``retriever`` (checked ``options`` fixed) at every grid point and at its default, then :func:`choose`."""
    if registry is None:
        registry = RETRIEVERS
    tuned = tunables(retriever, options, registry)
    if not tuned:
        raise nothing_to_tune(retriever, options, registry)
    points = grid_points(tuned)
    if len(points) > MAX_POINTS:
        raise FinegrainError(f"the grid of {retriever!r} has {len(points)} points; at most {MAX_POINTS}",
                             "fix some of its options with --set")
    default_setting = {t.key: t.default for t in tuned}
    base = registry.build(retriever, **options)
    settings = [*points, default_setting]
    kw = {"lang": lang, "top_k": top_k, "show_progress": show_progress}
    if isinstance(base, RoutesByQueryType):  # fused per predicted query type: the routed choice
        return cross_validate_routed(base, points, default_setting, tuned, corpus, queries, qrels,
                                     metrics=metrics, spec=spec, strata=strata, **kw)
    if hasattr(base, "retrieve_grid"):
        runs = base.retrieve_grid(settings, corpus, queries, **kw)
    else:
        runs = []
        for s in settings:
            same = next((j for j, p in enumerate(points[:len(runs)]) if p == s), None)
            runs.append(runs[same] if same is not None else
                        registry.build(retriever, **options, **{k: v for k, v in s.items() if v is not None})
                        .retrieve(corpus, queries, **kw))
    return choose(qrels, runs[:-1], runs[-1], metrics, spec, queries=list(queries), points=points, tuned=tuned,
                  default_setting=default_setting, strata=strata)
