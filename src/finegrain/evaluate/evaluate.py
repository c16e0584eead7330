"""``evaluate(qrels, run, metrics)``: the one entry point from a run to an :class:`Evaluation`.

The run is ranked and joined to the qrels once (:func:`finegrain.metrics.join`),
then every metric computes its per-query values on the shared arrays.

The universe of queries is the qrels' queries, or ``queries`` when given:

- a universe query absent from the run has an empty ranking / prediction
  (ranking metrics score it 0; it is counted in ``n_missing_from_run``);
- a query with no item of grade >= rel is a zero-answer query: ranking metrics
  exclude it (``n_excluded_no_relevant``); set and rejection metrics score it;
- a run query outside the universe is ignored (``n_ignored_run_queries``).

``compat="trec_eval"`` follows the trec_eval binary instead (queries in both
the qrels and the run, no-relevant queries averaged as 0, 0 for 0/0, ``-c``
and ``-l``): every rule is in :mod:`finegrain.evaluate.compat`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

import finegrain.evaluate.compat as _compat
from finegrain.errors import FinegrainError
from finegrain.evaluate.compat import Compat
from finegrain.evaluate.result import Evaluation, MetricResult
from finegrain.interop.coerce import QrelsLike, RunLike, as_qrels, as_run
from finegrain.metrics import compute, join, parse_metrics
from finegrain.metrics.spec import MetricSpec


def evaluate(
    qrels: QrelsLike,
    run: RunLike,
    metrics: str | MetricSpec | Iterable[str | MetricSpec] | object,
    *,
    queries: Iterable[str] | None = None,
    query_types: Mapping[str, str | None] | None = None,
    compat: Compat | str | None = None,
    complete: bool = False,
    level_for_rel: int | None = None,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` on ``metrics``: one metric or a list of them, each a string such as
    ``"ndcg@10"`` or ``"P(rel=2)@5"``, a :class:`~finegrain.metrics.spec.MetricSpec` or an ir_measures measure
    object (``ir_measures.nDCG@10``); a name that would mean another measure is refused.

    ``qrels`` and ``run`` are finegrain objects or anything
    :func:`finegrain.interop.as_qrels` / :func:`~finegrain.interop.as_run` read:
    ``{qid: {doc_id: grade|score}}`` dicts, pandas DataFrames (``q_id, doc_id,
    relevance|score``), ranx ``Qrels``/``Run``, ir_measures records, or file
    paths (TREC, BEIR ``.tsv``, ``run.jsonl``, ranx ``.json``, ``.parquet``).

    Duplicate metrics (same canonical key) are computed once. ``query_types``
    (``{qid: type}``) is kept on the result for :meth:`Evaluation.by_group`
    and the ``by_type`` section of :meth:`Evaluation.to_json_dict`.

    ``compat``: None or ``"strict"`` (default), or ``"trec_eval"`` for the
    numbers the trec_eval binary prints; then ``complete=True`` is its ``-c``
    and ``level_for_rel=N`` its ``-l N``. ``queries`` is finegrain's own
    universe and is refused in ``trec_eval`` mode (trec_eval has none).
    """
    opts = _compat.options(compat, complete=complete, level_for_rel=level_for_rel)
    qrels = as_qrels(qrels, compat=compat)
    run = as_run(run, compat=compat)
    if opts.trec_eval and queries is not None:
        raise FinegrainError(
            "a query list (--queries) is finegrain's universe; trec_eval has none",
            "drop --queries: --compat trec_eval averages the queries in both qrels and run, or every qrels "
            "query with --complete (trec_eval's -c)",
        )
    specs = _compat.prepare_specs(parse_metrics(metrics, trec_eval=opts.trec_eval), opts)
    if not specs:
        raise FinegrainError("no metric to compute", "give at least one metric, e.g. ndcg@10")
    joined = join(qrels, run, queries)
    scored = _compat.scored_queries(joined, opts)
    results = {}
    for s in specs:
        outcome = _compat.apply(compute(joined, s), scored)
        no_relevant = None if scored is None else joined.n_relevant(s.rel) == 0
        results[s.key] = MetricResult.build(
            s.key, joined.qids, outcome, joined.in_run, joined.n_ignored_run_queries, no_relevant=no_relevant
        )
    types = None if query_types is None else MappingProxyType(dict(query_types))
    return Evaluation(MappingProxyType(results), types, run.name, opts)
