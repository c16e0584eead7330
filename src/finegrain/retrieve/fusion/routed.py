"""``hybrid-routed``: fusion weights per query type, the type predicted from the query's text.

Why: the CapRetrieval paper (Xu et al., 2025, Sec. 3, Table 3) finds BM25 ahead of a dense encoder
on entity-centric queries and behind it on more abstract ones (Complex Condition above all), so one
set of fusion weights for every query may be a compromise; routing lets each group of types take its own.

The fusion is ``hybrid-use``'s (``bm25-okapi`` + ``e5`` + ``e5-sparse`` +
``use-m3`` by RRF; any ``hybrid`` option applies, ``--set parts=...`` too);
what is routed is the choice of ``weights`` and ``k`` from hybrid's CV grid
(:func:`~finegrain.retrieve.fusion.hybrid.weight_grid`, :func:`~finegrain.retrieve.fusion.hybrid.k_grid`).
Routes: ``routes=paper`` splits ``plain`` singleton entities and events from
``constrained`` conjunctions and conditions (the CapRetrieval paper's own split);
``routes=types`` routes each type on its own.

Under ``finegrain eval -r hybrid-routed --cv K`` a query-type predictor and the
per-route weights are fitted on the other folds
(:mod:`finegrain.experiment.tuning.routing`); with ``--cv-parts`` the parts' own
options are chosen first, alone, on the same folds
(:mod:`finegrain.experiment.tuning.nested`). Without ``--cv`` there is no
fitted predictor or routed setting, and every query gets the a-priori fusion
(= ``hybrid-use``); the config says so. Measured figures: docs/results/levers.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from finegrain.retrieve.fusion.hybrid import HybridRetriever, hybrid_retriever
from finegrain.retrieve.registry import RETRIEVERS
from finegrain.types import Corpus, Queries, Run

DEFAULT_PARTS: tuple[str, ...] = ("bm25-okapi", "e5", "e5-sparse", "use-m3")
DEFAULT_ROUTES = "paper"
#: a route with fewer scored training queries falls back to the un-routed choice (fixed a priori)
DEFAULT_MIN_QUERIES = 30


# --------------------------------------------------------------------------- the retriever


@dataclass(frozen=True)
class RoutedHybrid:
    """A :class:`~finegrain.retrieve.fusion.hybrid.HybridRetriever` whose fusion is routed by predicted query type
    under ``--cv``; ``retrieve`` alone is the a-priori fusion for every query.

    ``routes`` and ``min_queries`` declare the routing; the cross-validation that fits a predictor and
    per-route weights on the other folds (:mod:`finegrain.experiment.tuning.routing`) reads them."""

    base: HybridRetriever
    routes: str = DEFAULT_ROUTES
    min_queries: int = DEFAULT_MIN_QUERIES
    name: str = "hybrid-routed"

    def config(self) -> dict[str, Any]:
        return {**self.base.config(), "routing": {
            "routes": self.routes, "min_queries": self.min_queries,
            "note": "routed only under --cv (a predictor and per-route weights fitted per fold); without --cv "
                    "every query gets the fusion above"}}

    def retrieve(self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None,
                 show_progress: bool = True) -> Run:
        return self.base.retrieve(corpus, queries, lang=lang, top_k=top_k, show_progress=show_progress)

    def retrieve_grid(self, settings: Sequence[Mapping[str, Any]], corpus: Corpus, queries: Queries, *, lang: str,
                      top_k: int | None, show_progress: bool = True) -> Sequence[Run]:
        return self.base.retrieve_grid(settings, corpus, queries, lang=lang, top_k=top_k, show_progress=show_progress)



def routed_retriever(**options: Any) -> RoutedHybrid:
    """``hybrid-routed``: hybrid-use's fusion, routed by predicted query type under ``--cv``."""
    checked = dict(RETRIEVERS.check("hybrid-routed", options))
    routes = checked.pop("routes", DEFAULT_ROUTES)
    min_queries = checked.pop("min_queries", DEFAULT_MIN_QUERIES)
    base = hybrid_retriever(**{"parts": DEFAULT_PARTS, **checked})
    return RoutedHybrid(replace(base, name="hybrid-routed"), routes=routes, min_queries=min_queries)
