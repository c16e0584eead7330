"""The one fold maker of finegrain's cross-validation over queries.

With the two run operations every chooser needs: a run's results for a set of queries
(:func:`select_queries`) and one run assembled query by query from several (:func:`assemble`).
Used by the threshold sweep (:mod:`finegrain.experiment.tuning.threshold`), ``eval --cv``
(:mod:`finegrain.experiment.tuning.cv`) and fusion weights by CV
(:mod:`finegrain.experiment.tuning.fusion_weights`): seeded, optionally stratified by query type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from finegrain.evaluate.groups import group_of, order_groups
from finegrain.types import Run


def fold_of(queries: Sequence[str], folds: int, seed: int,
            strata: Mapping[str, str | None] | None = None) -> dict[str, int]:
    """Each query's fold: the queries in a seeded random order, dealt round-robin (fold sizes differ by <= 1).

    ``strata`` (``{qid: query type}``; a missing or None type is one stratum of its own) deals each
    stratum in turn (sorted by name, each shuffled by the same seeded generator), continuing the
    round-robin across strata: every fold gets each type's queries in proportion (within one query)
    and fold sizes still differ by at most one. Without ``strata`` the queries are dealt in one seeded order.
    """
    if strata is None:
        order = np.random.default_rng(seed).permutation(len(queries))
        return {queries[int(i)]: j % folds for j, i in enumerate(order)}

    rng = np.random.default_rng(seed)
    groups: dict[str, list[str]] = {}
    for q in queries:
        groups.setdefault(group_of(strata.get(q)), []).append(q)
    out: dict[str, int] = {}
    j = 0
    for g in order_groups(groups):
        members = groups[g]
        for i in rng.permutation(len(members)):
            out[members[int(i)]] = j % folds
            j += 1
    return out


def fold_members(qids: list[str], folds: int, seed: int) -> list[list[str]]:
    """The queries of each fold (sorted ids dealt by :func:`fold_of`), fold by fold."""

    order = sorted(qids)
    assigned = fold_of(order, folds, seed)
    return [[q for q in order if assigned[q] == f] for f in range(folds)]


def select_queries(run: Run, qids: frozenset[str]) -> Run:
    """The queries of ``run`` that are in ``qids`` (in run order)."""
    keep = [i for i, q in enumerate(run.qids) if q in qids]
    offsets = run.offsets
    idx = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in keep]) if keep else np.zeros(0, np.int64)
    counts = offsets[1:][keep] - offsets[:-1][keep] if keep else np.zeros(0, np.int64)
    new_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Run([run.qids[i] for i in keep], new_offsets, run.doc_codes[idx], run.vocab, run.values[idx],
               name=run.name, check=False)


def assemble(sources: Sequence[Run], qids: Sequence[str], *, name: str) -> Run:
    """One run taking query ``qids[j]``'s results from ``sources[j]`` (a query a source lacks: no results)."""

    vocab: dict[str, int] = {}
    tables: dict[int, np.ndarray] = {}
    docs: list[np.ndarray] = []
    values: list[np.ndarray] = []
    counts: list[int] = []
    for q, run in zip(qids, sources):
        if id(run) not in tables:
            tables[id(run)] = np.asarray([vocab.setdefault(d, len(vocab)) for d in run.vocab], dtype=np.int64)
        if q in run:
            i = run.index_of(q)
            lo, hi = int(run.offsets[i]), int(run.offsets[i + 1])
            docs.append(tables[id(run)][run.doc_codes[lo:hi]])
            values.append(np.asarray(run.values[lo:hi], dtype=np.float64))
            counts.append(hi - lo)
        else:
            counts.append(0)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Run(tuple(qids), offsets, np.concatenate(docs) if docs else np.zeros(0, np.int64), tuple(vocab),
               np.concatenate(values) if values else np.zeros(0, np.float64), name=name)
