"""trec_eval compatibility: the one place for every rule ``--compat trec_eval`` changes.

finegrain's default (``Compat.STRICT``) scores exactly what trec_eval scores
per query, and is explicit where trec_eval is lenient. ``Compat.TREC_EVAL``
reproduces what the trec_eval binary prints (``trec_eval [-c] [-l N] -m ...
QRELS RUN``), rule by rule, each from its trec_eval source file:

==========================  =======================================  =========================================
rule                        strict (default)                         ``trec_eval`` (source)
==========================  =======================================  =========================================
reading                     every non-blank line is a record;        qrels: a line whose first character is
                            ``#`` lines and extra fields refused     ``#`` is skipped (``get_qrels.c``); run:
                                                                     ``#`` lines skipped, fields after the tag
                                                                     ignored (``get_trec_results.c``)
queries averaged            the qrels' queries (``--queries``);      queries in the qrels *and* the run
                            a query missing from the run scores 0    (``trec_eval.c``); ``complete`` (``-c``):
                                                                     every qrels query, a missing one scores 0
                                                                     (``meas_avg.c`` divides by
                                                                     ``num_q_rels``)
no relevant item            excluded from ranking metrics            averaged as 0 (every measure computes 0
                                                                     when ``num_rel == 0``)
``set_precision`` of an     undefined (left out of the mean)         0 (``m_set_P.c`` sets a value only when
empty prediction                                                     ``num_ret > 0``)
``set_recall`` / ``set_f*`` undefined (left out)                     0 (``m_set_recall.c``, ``m_set_F.c``)
with nothing to divide by
relevance level             per metric: ``ndcg@10(rel=2)``           one level ``-l N`` for every measure but
                                                                     ``ndcg``/``ndcg_cut``, whose gains are the
                                                                     grades (``m_ndcg.c``, ``m_ndcg_cut.c``)
``set_F.x``                 refused (ambiguous)                      ``(x+1)PR/(xP+R)``: ``x = beta**2``
                                                                     (``m_set_F.c``), so ``set_F.4`` =
                                                                     ``set_f2``
==========================  =======================================  =========================================

Per-query values of queries that both modes score are the same. Metrics
without a trec_eval measure (``median_rank``, ``fail_rate``, ``hits``,
``err``, ``judged``, ``pair_*``, ``reject_*``) are refused in ``trec_eval``
mode rather than mixed with its rules. The names trec_eval prints are in
:mod:`finegrain.evaluate.trec_format`. The file-reading rules are applied by :mod:`finegrain.io.trec` (its
``compat=`` keyword); everything else is applied here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.io.trec import Compat as Compat  # the mode itself (re-exported); its reading rules are applied there
from finegrain.metrics.join import Joined
from finegrain.metrics.spec import IPREC_NAMES, MetricSpec, metric_params
from finegrain.metrics.values import QueryValues

#: finegrain metric name -> the trec_eval measure it equals (``@k`` on a measure without
#: cutoffs is trec_eval's ``-M k``).
TREC_EVAL_MEASURES: dict[str, str] = {
    "ndcg": "ndcg / ndcg_cut.k",
    "precision": "P.k",
    "recall": "recall.k (set_recall without @k)",
    "hit_rate": "success.k",
    "mrr": "recip_rank (-M k for @k)",
    "map": "map / map_cut.k",
    "r_precision": "Rprec",
    "set_precision": "set_P",
    "set_recall": "set_recall",
    "set_f1": "set_F (= set_F.1)",
    "set_f2": "set_F.4",
    "set_fbeta": "set_F.x with x = beta**2",
    "bpref": "bpref",
    "infap": "infAP",
    "gm_map": "gm_map",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    **{name: name for name in IPREC_NAMES},
}


@dataclass(frozen=True)
class CompatOptions:
    """The rules of one evaluation: the mode and, for ``trec_eval``, its ``-c`` and ``-l``.

    ``complete`` is trec_eval's ``-c`` (average over every qrels query);
    ``level_for_rel`` is its ``-l N`` (the lowest relevant grade for every
    measure except ``ndcg``). Both exist only in ``trec_eval`` mode: strict
    mode already averages over every qrels query and takes the level per
    metric (``(rel=N)``).
    """

    mode: Compat = Compat.STRICT
    complete: bool = False
    level_for_rel: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Compat.parse(self.mode))
        if self.mode is Compat.STRICT:
            if self.complete:
                raise FinegrainError(
                    "complete (trec_eval's -c) is an option of --compat trec_eval",
                    "strict mode already averages over every qrels query; drop --complete or add --compat trec_eval",
                )
            if self.level_for_rel is not None:
                raise FinegrainError(
                    "a relevance level for all metrics (trec_eval's -l) is an option of --compat trec_eval",
                    "in strict mode write the level on each metric, e.g. precision@10(rel=2), "
                    "or add --compat trec_eval",
                )
        lvl = self.level_for_rel
        if lvl is not None and (isinstance(lvl, bool) or not isinstance(lvl, int) or lvl < 1):
            raise FinegrainError(
                f"relevance level {lvl!r} is not an integer >= 1",
                "the level is the lowest grade that counts as relevant, e.g. -l 2",
            )

    @property
    def trec_eval(self) -> bool:
        return self.mode is Compat.TREC_EVAL

    def to_dict(self) -> dict[str, Any]:
        """``{"mode", "complete", "level_for_rel"}`` for results and provenance."""
        return {"mode": self.mode.value, "complete": self.complete, "level_for_rel": self.level_for_rel}


def options(
    compat: Compat | str | None = None, *, complete: bool = False, level_for_rel: int | None = None
) -> CompatOptions:
    """Build (and check) the options of one evaluation."""
    return CompatOptions(Compat.parse(compat), bool(complete), level_for_rel)


def prepare_specs(specs: Iterable[MetricSpec], opts: CompatOptions) -> list[MetricSpec]:
    """The specs as the mode computes them: unchanged in strict mode.

    ``trec_eval``: a metric with no trec_eval measure is refused; ``ndcg`` with
    its own ``rel`` is refused (trec_eval's nDCG gains are the grades, whatever
    the level); ``level_for_rel`` becomes the ``rel`` of every other metric
    (a metric may not name a different level itself). Duplicates that
    result are dropped.
    """
    specs = list(specs)
    if not opts.trec_eval:
        return specs
    out: dict[str, MetricSpec] = {}
    for s in specs:
        if s.name not in TREC_EVAL_MEASURES:
            raise FinegrainError(
                f"metric {s.key!r} has no trec_eval measure, so --compat trec_eval cannot compute it",
                f"use it in strict mode; trec_eval mode computes {', '.join(TREC_EVAL_MEASURES)}",
            )
        if s.name == "ndcg":
            if s.rel != 1:
                raise FinegrainError(
                    f"metric {s.key!r}: trec_eval's ndcg ignores relevance levels (its gains are the grades)",
                    f"write ndcg{'' if s.k is None else f'@{s.k}'} in --compat trec_eval, or use strict mode for "
                    "finegrain's ndcg(rel=N)",
                )
        elif opts.level_for_rel is not None and "rel" in metric_params(s.name):
            if s.rel not in (1, opts.level_for_rel):
                raise FinegrainError(
                    f"metric {s.key!r} names relevance level {s.rel}, but --level-for-rel sets {opts.level_for_rel} for all metrics",
                    "trec_eval has one level per evaluation: drop (rel=...) or change -l",
                )
            s = replace(s, rel=opts.level_for_rel)
        out.setdefault(s.key, s)
    return list(out.values())


def scored_queries(joined: Joined, opts: CompatOptions) -> np.ndarray | None:
    """Which universe queries the ``trec_eval`` mode averages (None in strict mode: each metric decides).

    Without ``complete``: the queries that are both in the qrels and in the
    run (trec_eval.c evaluates a query only when it has results; "Queries for
    which there is no relevance information are ignored"). With ``complete``:
    every universe query. An empty selection is an error, as in trec_eval
    ("No queries with both results and relevance info").
    """
    if not opts.trec_eval:
        return None
    sel = np.ones(joined.n_queries, dtype=bool) if opts.complete else joined.in_run.copy()
    if not sel.any():
        raise FinegrainError(
            "no query is in both the qrels and the run",
            "trec_eval stops here too ('No queries with both results and relevance info'): check that the "
            "query ids match, or pass --complete (trec_eval's -c) to score every qrels query as missing",
        )
    sel.setflags(write=False)
    return sel


def apply(qv: QueryValues, scored: np.ndarray | None) -> QueryValues:
    """One metric's values under the mode: unchanged in strict mode (``scored`` None).

    ``trec_eval``: exactly the ``scored`` queries enter the aggregate (a mean,
    the sum of ``num_*``, the geometric mean of ``gm_map``), and a value
    strict mode leaves undefined (0/0: set precision of an empty prediction,
    set recall or F with no relevant item) is 0, as trec_eval leaves a
    measure at 0 when its denominator is 0. Ranking metrics already give 0
    to a query without relevant items (nothing can be found); they are now
    averaged instead of excluded.
    """
    if scored is None:
        return qv
    if qv.rule not in ("mean", "sum", "gmean"):  # prepare_specs lets only trec_eval's rules through
        raise FinegrainError(f"aggregation rule {qv.rule!r} has no trec_eval counterpart")
    values = np.where(np.isnan(qv.values), 0.0, qv.values)
    values.setflags(write=False)
    return QueryValues(scored, values, qv.rule)
