"""Per-query metric values on Ray: the query universe in contiguous shards, one task per shard.

A metric's value for a query depends on that query's ranked list and
judgements only (:mod:`finegrain.metrics`), so each task joins its slice of
the run to its slice of the qrels and computes every metric's per-query
values; the driver concatenates them in universe order and forms every
aggregate, denominator and group slice from the concatenated values, exactly
as :func:`finegrain.evaluate.evaluate` does from its own. The saved numbers are
therefore identical to a single-process evaluation (strict mode; ``--compat
trec_eval`` stays in :func:`~finegrain.evaluate.evaluate`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.evaluate.compat import CompatOptions
from finegrain.evaluate.result import Evaluation, MetricResult
from finegrain.experiment.executors.shards import shard_bounds
from finegrain.interop.coerce import as_qrels, as_run
from finegrain.metrics import compute, join, parse_metrics
from finegrain.metrics.join import universe_of
from finegrain.metrics.values import QueryValues

if TYPE_CHECKING:
    from finegrain.evaluate.result import Evaluation
    from finegrain.experiment.executors.engine import RayExecutor
    from finegrain.metrics.spec import MetricSpec
    from finegrain.metrics.values import QueryValues
    from finegrain.types import Qrels, Run

T = TypeVar("T", "Qrels", "Run")


def evaluate_sharded(
    ex: RayExecutor,
    qrels: Any,
    run: Any,
    metrics: Any,
    *,
    queries: Iterable[str] | None = None,
    query_types: Mapping[str, str | None] | None = None,
) -> Evaluation:
    """:func:`finegrain.evaluate.evaluate` (strict mode) with the per-query values computed on Ray."""

    qrels, run = as_qrels(qrels), as_run(run)
    items = [metrics] if isinstance(metrics, str) or not isinstance(metrics, Iterable) else list(metrics)
    specs = list({s.key: s for s in parse_metrics(items)}.values())  # each key once, in first-seen order
    if not specs:
        raise FinegrainError("no metric to compute", "give at least one metric, e.g. ndcg@10")
    universe = universe_of(qrels, queries)
    bounds = shard_bounds(len(universe), ex.n_shards)
    task = ex.ray.remote(_shard_values)
    refs = []
    for a, b in bounds:
        part = universe[a:b]
        refs.append(task.remote(subset(qrels, part), subset(run, part), part, specs))
    parts = ex.gather(refs, "metrics")
    in_run = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=bool)
    inside = set(universe)
    n_ignored = sum(1 for q in run.qids if q not in inside)
    results = {}
    for i, s in enumerate(specs):
        outcome = concat_values([p[1][i] for p in parts], len(universe))
        results[s.key] = MetricResult.build(s.key, universe, outcome, in_run, n_ignored)
    types = None if query_types is None else MappingProxyType(dict(query_types))
    return Evaluation(MappingProxyType(results), types, run.name, CompatOptions())


def _shard_values(qrels: Qrels, run: Run, part: tuple[str, ...], specs: list[MetricSpec]
                  ) -> tuple[np.ndarray, list[QueryValues]]:
    """One shard: whether each query is in the run, and every metric's values (the Ray task)."""

    joined = join(qrels, run, part)
    return np.array(joined.in_run), [compute(joined, s) for s in specs]


def subset(table: T, qids: Sequence[str]) -> T:
    """The rows of ``qids`` that ``table`` (a Qrels or Run) has, in ``qids`` order; same vocabulary."""
    keep = [q for q in qids if q in table]
    rows = np.fromiter((table.index_of(q) for q in keep), dtype=np.int64, count=len(keep))
    starts, ends = table.offsets[rows], table.offsets[rows + 1]
    counts = ends - starts
    offsets = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    pos = np.arange(int(offsets[-1]), dtype=np.int64) - np.repeat(offsets[:-1] - starts, counts)
    extra = {"name": table.name} if hasattr(table, "name") else {}
    return type(table)(keep, offsets, table.doc_codes[pos], table.vocab, table.values[pos], check=False, **extra)


def concat_values(parts: list[QueryValues], n: int) -> QueryValues:
    """The per-query values of consecutive shards as one :class:`QueryValues` over their universe."""

    if not parts:
        return QueryValues(np.zeros(n, dtype=bool), np.zeros(n, dtype=np.float64))
    rule = parts[0].rule

    def cat(name: str) -> Any:
        arrays = [getattr(p, name) for p in parts]
        return None if arrays[0] is None else np.concatenate(arrays)

    out = QueryValues(cat("scored"), cat("values"), rule, cat("numerator"), cat("denominator"))
    if len(out.scored) != n:
        raise FinegrainError(f"metric shards hold {len(out.scored)} queries, the universe {n}",
                             "this is a bug in finegrain.experiment.executors; run with --engine local")
    return out
