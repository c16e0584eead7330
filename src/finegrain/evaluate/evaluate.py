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

Leaving zero-answer queries out is where finegrain's numbers differ from
trec_eval's and pytrec_eval's (which average them as 0), so a strict call that
leaves some out says so once: an :class:`ExcludedQueriesWarning` naming how
many and which metrics (``warn=False`` or a warnings filter silences it). The
evaluation's ``repr`` shows the same denominators. finegrain's own verbs pass
``warn=False``: they print the denominators in their tables.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from types import MappingProxyType

import numpy as np

import finegrain.evaluate.compat as _compat
from finegrain.errors import FinegrainError, FinegrainWarning
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
    warn: bool = True,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` on ``metrics``: per-query values, aggregates and their denominators.

    ``qrels`` and ``run`` are finegrain objects or anything ``finegrain.interop.as_qrels`` /
    ``finegrain.interop.as_run`` read: ``{qid: {doc_id: grade|score}}`` dicts, pandas DataFrames
    (``q_id, doc_id, relevance|score``), ranx ``Qrels``/``Run``, ir_measures records, or file paths (TREC,
    BEIR ``.tsv``, ``run.jsonl``, ranx ``.json``, ``.parquet``). Rankings break score ties by document id
    descending, as trec_eval does. Duplicate metrics (same canonical key) are computed once.

    Strict mode (the default) leaves queries without a relevant item out of ranking metrics and scores
    qrels queries missing from the run 0; ``compat="trec_eval"`` gives the numbers the trec_eval binary
    prints instead (``complete=True`` is its ``-c``, ``level_for_rel=N`` its ``-l N``).

    Args:
        qrels: The judgements, ``{qid: {doc_id: grade}}`` or any qrels-like value above.
        run: The ranked results, ``{qid: {doc_id: score}}`` or any run-like value above.
        metrics: One metric or a list: strings such as ``"ndcg@10"`` or ``"P(rel=2)@5"``, ``MetricSpec``
            objects or ir_measures measures (``ir_measures.nDCG@10``). A name that would mean another
            measure is refused.
        queries: The query universe (default: the qrels' queries); listed queries absent from the run
            score as empty rankings. Refused in trec_eval mode, which has no such universe.
        query_types: ``{qid: type}``, kept on the result for ``Evaluation.by_group`` and the ``by_type``
            section of ``Evaluation.to_json_dict``.
        compat: ``None`` or ``"strict"`` (default), or ``"trec_eval"``.
        complete: trec_eval's ``-c``: average over every qrels query (trec_eval mode only).
        level_for_rel: trec_eval's ``-l N``: the lowest relevant grade for every metric but ndcg
            (trec_eval mode only).
        warn: When strict ranking metrics leave out queries without a relevant item, say so in one
            ``ExcludedQueriesWarning``.

    Returns:
        An ``Evaluation``: ``ev.mean("ndcg@10")``, ``ev.per_query("ndcg@10")``, ``ev.to_dict()``,
        ``ev.denominators()``, ``ev.to_dataframe()``, ``ev.save(folder)``; ``print(ev)`` shows the values
        and the denominators.

    Raises:
        FinegrainError: An unknown or ambiguous metric, no metric, an unreadable qrels or run (naming the
            file, line and value), or an option the mode does not take.

    Examples:
        >>> from finegrain import evaluate
        >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
        >>> run = {"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d3": 2.0, "d2": 1.0}}
        >>> evaluate(qrels, run, ["mrr@10", "recall@1"]).to_dict()
        {'mrr@10': 0.75, 'recall@1': 0.5}
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
    evaluation = Evaluation(MappingProxyType(results), types, run.name, opts)
    if warn:
        warn_excluded(evaluation, stacklevel=2)
    return evaluation


class ExcludedQueriesWarning(FinegrainWarning):
    """A strict evaluation left out queries without a relevant item (trec_eval counts them as 0)."""


def warn_excluded(evaluation: Evaluation, *, stacklevel: int = 2) -> None:
    """One :class:`ExcludedQueriesWarning` when some metric of ``evaluation`` left out queries for having no
    relevant item; ``stacklevel`` as the caller would give it to :func:`warnings.warn` (2: the caller's caller)."""
    excluded = {k: r for k, r in evaluation.items() if r.denominators.n_excluded_no_relevant}
    if not excluded:
        return
    worst = max(excluded.values(), key=lambda r: r.denominators.n_excluded_no_relevant)
    d = worst.denominators
    qids = [worst.universe[i] for i in np.flatnonzero(~worst.outcome.scored)[:3].tolist()]
    shown = ", ".join(qids) + (", ..." if d.n_excluded_no_relevant > len(qids) else "")
    many = d.n_excluded_no_relevant > 1
    warnings.warn(
        f"{d.n_excluded_no_relevant} of {d.n_universe} queries ({shown}) {'have' if many else 'has'} no relevant "
        f"item and {'are' if many else 'is'} left out of {', '.join(excluded)} (strict: the mean is over "
        f"{d.n_scored} {'query' if d.n_scored == 1 else 'queries'}); trec_eval and pytrec_eval count {'them' if many else 'it'} as 0, as "
        "compat='trec_eval' does. Silence with warn=False.",
        ExcludedQueriesWarning,
        stacklevel=stacklevel + 1,
    )
