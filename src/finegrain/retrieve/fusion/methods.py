"""Fusion of any runs: reciprocal rank fusion and convex combination of normalised scores.

All functions are pure: they take frozen :class:`~finegrain.types.Run` objects
and return a new one. They work on the columnar arrays (one ``np.unique`` over
the union of (query, document) pairs, then array arithmetic), so fusing runs of
100k queries takes seconds, not minutes.

**Which queries and documents.** The fused run holds every query of any input
run (in order of first appearance) and, for each query, every document that
any input run returned for it (within ``depth``, when given). A query missing
from one run is treated as that run returning nothing for it.

**Reciprocal rank fusion** (Cormack, Clarke & Büttcher, SIGIR 2009)::

    rrf(d) = sum_i  w_i / (k + rank_i(d))

``rank_i(d)`` is the 1-based rank of ``d`` in run ``i`` under finegrain's one
ranking rule (score descending, then document id descending; see
:mod:`finegrain.ranking`), so ties inside an input run are broken the same way
everywhere. A document missing from run ``i`` contributes 0 (it has rank
infinity). ``k=60`` and equal weights are the values of the original paper.

**Convex combination** (Bruch, Gai & Ingber, "An Analysis of Fusion Functions
for Hybrid Retrieval", TOIS 2023)::

    convex(d) = sum_i  w_i * norm_i(d)

with each run's scores first normalised per query by :func:`normalize`. A
document missing from run ``i`` gets that run's *floor* for the query:

* ``minmax``: 0, the bottom of the [0, 1] scale;
* ``zscore``: the lowest z-score of that query in run ``i``;
* ``none``: the lowest raw score of that query in run ``i``

(0 when run ``i`` returned nothing for the query: a constant for all documents
of the query, so it cannot change the ranking). The reasoning: a run that did
not return a document scored it no better than the worst document it did
return (true of a top-k cut and of a threshold such as ``bm25-okapi``'s
``score >= 1e-3``).

**CombSUM, CombMNZ, CombMAX** (Fox & Shaw, TREC-2 1994; Lee, SIGIR 1997), on
the same normalised scores and floors as the convex combination::

    combsum(d) = sum_i norm_i(d)                       (= convex with equal weights)
    combmnz(d) = combsum(d) * |{i : run i returned d}|
    combmax(d) = max over the runs i that returned d of norm_i(d)

``wsum`` is the convex combination by its ranx name (weights need not sum
to 1). The registry (:data:`finegrain.retrieve.registry.FUSIONS`) is the one
table of methods and their parameters; :func:`fuse` picks one by name and
refuses a parameter the method does not take. The weight search
with cross-validation over queries is :mod:`finegrain.experiment.tuning.fusion_weights`.

**Ties.** Fused scores are plain numbers in a :class:`~finegrain.types.Run`;
equal fused scores are ordered by the Run's rule (document id descending), never
by input order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from finegrain.errors import FinegrainError, UnknownNameError
from finegrain.interop import as_run
from finegrain.registry import Param
from finegrain.retrieve.registry import FUSIONS
from finegrain.types import Run

Norm = Literal["minmax", "zscore", "none"]
NORMS: tuple[str, ...] = ("minmax", "zscore", "none")
HYBRID_FUSIONS: tuple[str, ...] = ("rrf", "convex")  # what the hybrid retriever offers; fuse() takes every registered one


# --------------------------------------------------------------------------- normalisation


def normalize(run: Run, method: Norm | str = "minmax") -> Run:
    """Per-query normalisation of ``run``'s scores; same queries, documents and name.

    * ``minmax``: ``(s - min) / (max - min)`` onto [0, 1]. A query whose scores
      are all equal (a single result included) maps every score to 1: each is
      the best that run found for the query (as OpenSearch's min-max normaliser
      does); there is no division by zero.
    * ``zscore``: ``(s - mean) / std`` with the population standard deviation;
      a query whose scores are all equal maps to 0.
    * ``none``: the scores unchanged.

    Non-finite scores (``inf``) are refused: they would make every other score
    of their query meaningless after normalisation.
    """
    _check_norm(method)
    if method == "none" or run.n_entries == 0:
        return run
    values = run.values
    if not np.all(np.isfinite(values)):
        i = int(np.flatnonzero(~np.isfinite(values))[0])
        q = run.qids[int(run.segments[i])]
        raise FinegrainError(
            f"run {run.name!r} has the non-finite score {float(values[i])!r} "
            f"for document {run.vocab[run.doc_codes[i]]!r} of query {q!r}",
            "normalisation needs finite scores; use norm='none' or fusion='rrf', or clip the scores",
        )
    seg = run.segments
    if method == "minmax":
        lo, hi = _segment_min(run), _segment_max(run)
        spread = (hi - lo)[seg]
        flat = spread == 0
        out = np.divide(values - lo[seg], np.where(flat, 1.0, spread))
        out[flat] = 1.0
    else:  # zscore
        counts = np.maximum(run.counts(), 1).astype(np.float64)
        mean = np.bincount(seg, weights=values, minlength=len(run)) / counts
        dev = values - mean[seg]
        std = np.sqrt(np.bincount(seg, weights=dev * dev, minlength=len(run)) / counts)[seg]
        flat = std == 0
        out = np.divide(dev, np.where(flat, 1.0, std))
        out[flat] = 0.0
    return Run(run.qids, run.offsets, run.doc_codes, run.vocab, out, name=run.name, check=False)


# --------------------------------------------------------------------------- fusion


def rrf(
    runs: Sequence[Run],
    *,
    k: float = 60,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
    name: str | None = None,
) -> Run:
    """Reciprocal rank fusion: ``sum_i w_i / (k + rank_i(d))`` (see the module docstring).

    ``k`` >= 0 damps the weight of the very top ranks (60 in Cormack et al.);
    ``weights`` default to 1 for every run; ``depth`` keeps only the top
    ``depth`` of each run before fusing (a document below it counts as missing).
    """
    runs = _check_runs(runs)
    w = _check_weights(weights, len(runs))
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k < 0:
        raise FinegrainError(f"RRF k={k!r} is not a finite number >= 0", "use the standard k=60")
    _declared("rrf", "k").convert("k", k, "RRF")  # its declared range
    runs = _cut(runs, depth)
    contributions = [np.float64(wi) / (np.float64(k) + _ranks(r)) for wi, r in zip(w, runs)]
    return _fuse(runs, contributions, [None] * len(runs), name or _name("rrf", runs))


def convex(
    runs: Sequence[Run],
    weights: Sequence[float] | None = None,
    *,
    norm: Norm | str = "minmax",
    depth: int | None = None,
    name: str | None = None,
) -> Run:
    """Convex combination ``sum_i w_i * norm_i(d)`` of per-query normalised scores.

    ``weights`` default to equal weights; they need not sum to 1 (only their
    ratios change the ranking). ``norm`` is a :func:`normalize` method. A
    document missing from a run gets that run's floor for the query (see the
    module docstring). ``depth`` keeps the top ``depth`` of each run first, and
    normalisation sees only those.
    """
    runs = _check_runs(runs)
    w = _check_weights(weights, len(runs))
    runs = _normalised(runs, norm, depth)
    contributions = [np.float64(wi) * r.values for wi, r in zip(w, runs)]
    floors = [np.float64(wi) * _floor(r, norm) for wi, r in zip(w, runs)]
    return _fuse(runs, contributions, floors, name or _name(f"convex-{norm}", runs))


def combsum(
    runs: Sequence[Run], *, norm: Norm | str = "minmax", depth: int | None = None, name: str | None = None
) -> Run:
    """CombSUM: ``sum_i norm_i(d)``, the convex combination with equal weights (a missing document gets the floor)."""
    runs = _check_runs(runs)
    return convex(runs, None, norm=norm, depth=depth, name=name or _name(f"combsum-{norm}", runs))


def wsum(runs: Sequence[Run], weights: Sequence[float] | None = None, *, norm: Norm | str = "minmax",
         depth: int | None = None, name: str | None = None) -> Run:
    """Weighted sum ``sum_i w_i * norm_i(d)`` (ranx's ``wsum``): :func:`convex` under its other name."""
    runs = _check_runs(runs)
    return convex(runs, weights, norm=norm, depth=depth, name=name or _name(f"wsum-{norm}", runs))


def combmnz(
    runs: Sequence[Run], *, norm: Norm | str = "minmax", depth: int | None = None, name: str | None = None
) -> Run:
    """CombMNZ: CombSUM times the number of runs that returned the document (within ``depth``)."""
    runs = _normalised(_check_runs(runs), norm, depth)
    union = _Union.of(runs)
    scores = union.sum([r.values for r in runs], [_floor(r, norm) for r in runs])
    return union.run(scores * union.hits(), name or _name(f"combmnz-{norm}", runs))


def combmax(
    runs: Sequence[Run], *, norm: Norm | str = "minmax", depth: int | None = None, name: str | None = None
) -> Run:
    """CombMAX: the largest normalised score a run gave the document, over the runs that returned it."""
    runs = _normalised(_check_runs(runs), norm, depth)
    union = _Union.of(runs)
    scores = np.full(union.size, -np.inf)
    for pos, r in zip(union.positions, runs):
        scores[pos] = np.maximum(scores[pos], r.values)
    return union.run(scores, name or _name(f"combmax-{norm}", runs))


def _normalised(runs: list[Run], norm: Norm | str, depth: int | None) -> list[Run]:
    """Each run cut to its top ``depth`` and normalised per query by ``norm`` (checked)."""
    _check_norm(norm)
    return [normalize(r, norm) for r in _cut(runs, depth)]


def _floor(run: Run, norm: Norm | str) -> np.ndarray:
    """The score a normalised run gives a document it did not return: 0 after min-max, else its query's minimum."""
    return np.zeros(len(run)) if norm == "minmax" else _segment_min(run)


def fuse(
    runs: Sequence[Any],
    method: str = "rrf",
    *,
    weights: Sequence[float] | None = None,
    norm: Norm | str | None = None,
    k: float | None = None,
    depth: int | None = None,
    name: str | None = None,
) -> Run:
    """Fuse several runs of the same queries into one run.

    A parameter the method does not take is refused rather than ignored; values are checked against the
    method's declared parameters (``finegrain list fusion`` shows them).

    Args:
        runs: Two or more runs: finegrain or ranx runs, ``{qid: {doc_id: score}}`` dicts, DataFrames or
            file paths (anything ``finegrain.interop.as_run`` reads).
        method: A fusion method of the registry: ``rrf`` (reciprocal rank fusion), ``combsum``,
            ``combmnz``, ``combmax`` or ``wsum`` (= ``convex``, a weighted sum of normalised scores).
        weights: One weight per run, >= 0 (``rrf`` and ``wsum``).
        norm: The score normalisation of the score-based methods: ``minmax`` (default), ``zscore`` or
            ``none``.
        k: The constant of ``rrf`` (default 60).
        depth: Fuse only each run's top ``depth``.
        name: The fused run's name (default: the method and the runs' names).

    Returns:
        The fused ``Run``, ranked by the one tie rule (score descending, then document id descending).

    Raises:
        FinegrainError: An unknown method, a parameter the method does not take or a bad value, fewer
            than two runs, or weights that do not match the runs.

    Examples:
        >>> from finegrain import fuse
        >>> bm25 = {"q1": {"d1": 9.0, "d2": 3.0}}
        >>> dense = {"q1": {"d2": 0.9, "d3": 0.5}}
        >>> fused = fuse([bm25, dense], method="rrf", k=60)
        >>> fused.ranked("q1")
        ['d2', 'd1', 'd3']
    """

    given = {key: v for key, v in (("weights", weights), ("norm", norm), ("k", k), ("depth", depth)) if v is not None}
    options = fusion_options(method, given)
    if isinstance(runs, str | bytes) or not isinstance(runs, Sequence):
        raise FinegrainError(f"runs is a {type(runs).__name__}, not a list of runs", "pass a list: fuse([run_a, run_b])")
    coerced = [as_run(r, what=f"run {i}") for i, r in enumerate(runs)]
    run: Run = FUSIONS.get(method)(coerced, **options, name=name)
    return run


def fusion_options(method: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` checked and converted against the declared parameters of the fusion method ``method``
    (``finegrain list fusion``; ``fuse --set KEY=VALUE``): an unknown method suggests near names, a parameter
    the method does not take names the methods that take it, a bad value what is allowed."""
    if not isinstance(method, str):
        raise UnknownNameError("fusion method", str(method), FUSIONS.names())
    params = FUSIONS.params(method) or {}
    stray = sorted(set(given) - set(params))
    if stray:
        takers = [e.name for e in FUSIONS.entries() if stray[0] in (e.params or {})]
        raise FinegrainError(
            f"fusion method {method!r} takes no {stray[0]!r}",
            f"its parameters are {', '.join(sorted(params))}"
            + (f"; {stray[0]} goes with {', '.join(takers)}" if takers else ""),
        )
    return FUSIONS.check(method, given)


# --------------------------------------------------------------------------- internals


def _fuse(
    runs: list[Run], contributions: Sequence[np.ndarray], floors: Sequence[np.ndarray | None], name: str
) -> Run:
    """Sum per-entry ``contributions`` over the union of (query, document) pairs (see :meth:`_Union.sum`)."""
    union = _Union.of(runs)
    return union.run(union.sum(contributions, floors), name)


@dataclass(frozen=True)
class _Union:
    """The union of the (query, document) pairs of several runs, and where each run's entries fall in it."""

    qids: list[str]
    vocab: list[str]
    union_q: np.ndarray  # query index of each union pair
    union_d: np.ndarray  # document code of each union pair
    qmaps: list[np.ndarray]  # per run: its query index -> union query index
    positions: list[np.ndarray]  # per run: each entry's position in the union

    @classmethod
    def of(cls, runs: list[Run]) -> _Union:
        qindex: dict[str, int] = {}
        vindex: dict[str, int] = {}
        qmaps: list[np.ndarray] = []
        q_of_entry: list[np.ndarray] = []
        d_of_entry: list[np.ndarray] = []
        for r in runs:
            qmap = np.fromiter((qindex.setdefault(q, len(qindex)) for q in r.qids), dtype=np.int64, count=len(r))
            vmap = np.fromiter((vindex.setdefault(v, len(vindex)) for v in r.vocab), dtype=np.int64, count=len(r.vocab))
            qmaps.append(qmap)
            q_of_entry.append(qmap[r.segments])
            d_of_entry.append(vmap[r.doc_codes])
        n_v = max(len(vindex), 1)
        keys = np.concatenate(q_of_entry) * n_v + np.concatenate(d_of_entry)
        union, where = np.unique(keys, return_inverse=True)
        bounds = np.cumsum([0] + [r.n_entries for r in runs])
        positions = [where[a:b] for a, b in itertools.pairwise(bounds)]
        return cls(list(qindex), list(vindex), union // n_v, union % n_v, qmaps, positions)

    @property
    def size(self) -> int:
        return len(self.union_q)

    def sum(self, contributions: Sequence[np.ndarray], floors: Sequence[np.ndarray | None]) -> np.ndarray:
        """Sum per-entry ``contributions`` of each run over the union.

        ``floors[i]`` (one value per query of run ``i``, or None for 0) is what a
        document of the union that run ``i`` did not return gets from run ``i``.
        """
        n_q = len(self.qids)
        scores = np.zeros(self.size, dtype=np.float64)
        for pos, qmap, contrib, floor in zip(self.positions, self.qmaps, contributions, floors):
            if floor is None:
                scores[pos] += contrib  # pairs are unique within a run: no repeated positions
                continue
            per_query = np.zeros(n_q, dtype=np.float64)
            per_query[qmap] = floor
            part = per_query[self.union_q]
            part[pos] = contrib
            scores += part
        return scores

    def hits(self) -> np.ndarray:
        """How many runs returned each union pair."""
        out = np.zeros(self.size, dtype=np.float64)
        for pos in self.positions:
            out[pos] += 1.0
        return out

    def run(self, scores: np.ndarray, name: str) -> Run:
        n_q = len(self.qids)
        offsets = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.union_q, minlength=n_q), out=offsets[1:])
        return Run(self.qids, offsets, self.union_d, self.vocab, scores, name=name, check=False)


def _ranks(run: Run) -> np.ndarray:
    """1-based rank of every entry within its query, by the one ranking rule."""
    order = run.order
    ranks = np.empty(run.n_entries, dtype=np.float64)
    ranks[order] = np.arange(run.n_entries) - run.offsets[run.segments[order]] + 1
    return ranks


def _segment_min(run: Run) -> np.ndarray:
    return _segment_reduce(run, np.minimum)


def _segment_max(run: Run) -> np.ndarray:
    return _segment_reduce(run, np.maximum)


def _segment_reduce(run: Run, ufunc: np.ufunc) -> np.ndarray:
    """Per-query reduction of the values; 0 for a query with no entries."""
    out = np.zeros(len(run), dtype=np.float64)
    nonempty = np.flatnonzero(run.counts() > 0)
    if len(nonempty):
        out[nonempty] = ufunc.reduceat(run.values, run.offsets[nonempty])
    return out


def _cut(runs: list[Run], depth: int | None) -> list[Run]:
    if depth is None:
        return runs
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise FinegrainError(f"depth={depth!r} is not a whole number >= 1", "pass depth=1000, or None for whole runs")
    return [r.cut(int(depth)) for r in runs]


def _check_runs(runs: Sequence[Run]) -> list[Run]:
    runs = list(runs)
    if not runs:
        raise FinegrainError("no runs to fuse", "pass at least one Run")
    for i, r in enumerate(runs):
        if not isinstance(r, Run):
            raise FinegrainError(f"item {i} of the runs to fuse is a {type(r).__name__}, not a Run", "pass finegrain.types.Run objects")
    return runs


def _check_weights(weights: Sequence[float] | None, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n, dtype=np.float64)
    if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence | np.ndarray):
        raise FinegrainError(f"weights={weights!r} is not a sequence of numbers", f"pass {n} numbers, e.g. {[1.0] * n}")
    w = list(weights)
    if len(w) != n:
        raise FinegrainError(
            f"{len(w)} weight{'s' if len(w) != 1 else ''} {w!r} for {n} run{'s' if n != 1 else ''}",
            f"pass one weight per run, e.g. {[1.0] * n}",
        )
    for x in w:
        if isinstance(x, bool) or not isinstance(x, (int, float, np.number)) or not math.isfinite(float(x)):
            raise FinegrainError(f"weight {x!r} in {w!r} is not a finite number", "weights are numbers >= 0")
        if x < 0:
            raise FinegrainError(f"weight {x!r} in {w!r} is negative", "weights are numbers >= 0 (0 ignores a run)")
    if not any(float(x) > 0 for x in w):
        raise FinegrainError(f"all weights {w!r} are 0", "give at least one run a weight > 0")
    _declared("rrf", "weights").convert("weights", [float(x) for x in w])  # their declared range
    return np.asarray(w, dtype=np.float64)


def _declared(method: str, key: str) -> Param:
    """The declared parameter ``key`` of the fusion ``method`` (its range is checked in one place)."""
    return (FUSIONS.params(method) or {})[key]


def _check_norm(method: str) -> None:
    if method not in NORMS:
        raise FinegrainError(f"unknown normalisation {method!r}", f"use one of {', '.join(map(repr, NORMS))}")


def _name(method: str, runs: list[Run]) -> str:
    return f"{method}({','.join(r.name for r in runs)})"
