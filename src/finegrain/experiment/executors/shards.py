"""Shards and their merge: contiguous ranges, per-shard candidates, the exact top-k of their union.

A corpus is cut into contiguous ranges (:func:`shard_bounds`), so within a
shard both tie keys of finegrain order documents as they order them in the
whole corpus: document id rank (the one ranking rule, :mod:`finegrain.ranking`)
and corpus position (BM25's ``ties="index-order"``). Each shard keeps, per
query, its best ``k`` under (score, tie key); the best ``k`` of the union of
those lists under the same total order is the best ``k`` of the whole corpus
(:func:`merge_candidates`), because a document beaten by ``k`` documents of its
own shard is beaten by at least ``k`` in the corpus.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from finegrain.retrieve.bm25.search import _separate_ties
from finegrain.types import Run

if TYPE_CHECKING:
    from finegrain.types import Run


@dataclass(frozen=True, eq=False)
class Candidates:
    """One shard's kept documents per query: for query ``i``, ``docs[offsets[i]:offsets[i+1]]``
    (positions in the whole corpus) and their ``scores`` (as computed, no tie separation)."""

    offsets: np.ndarray  # int64, n_queries + 1
    docs: np.ndarray  # int64
    scores: np.ndarray  # float64

    @classmethod
    def from_run(cls, run: Run, offset: int) -> Candidates:
        """A shard's run (its vocabulary: the shard's ids in corpus order) as candidates at ``offset``."""
        return cls(np.asarray(run.offsets, dtype=np.int64), np.asarray(run.doc_codes, dtype=np.int64) + offset,
                   np.asarray(run.values, dtype=np.float64))


def shard_bounds(n: int, shards: int) -> list[tuple[int, int]]:
    """``shards`` contiguous ranges covering ``range(n)``, sizes differing by at most one (no empty range)."""
    k = max(1, min(shards, n))
    edges = [n * i // k for i in range(k + 1)]
    return [(edges[i], edges[i + 1]) for i in range(k) if edges[i + 1] > edges[i]]


def merge_candidates(parts: Sequence[Candidates], qids: Sequence[str], doc_ids: Sequence[str], *, k: int | None,
                     tie_key: np.ndarray, separate_ties: bool = False, name: str = "run") -> Run:
    """The run over the whole corpus from its shards' candidates.

    Per query: the top ``k`` of the union (score, then ``tie_key[doc]``, higher
    first; ``k=None``: all of them). ``separate_ties`` (BM25's
    ``ties="index-order"``) then lifts equal scores apart exactly as the single
    BM25 search does, with the earlier corpus position first.
    """

    n_q = len(qids)
    seg = np.concatenate([np.repeat(np.arange(n_q, dtype=np.int64), np.diff(p.offsets)) for p in parts]
                         + [np.empty(0, dtype=np.int64)])
    d = np.concatenate([np.asarray(p.docs, dtype=np.int64) for p in parts] + [np.empty(0, dtype=np.int64)])
    v = np.concatenate([np.asarray(p.scores, dtype=np.float64) for p in parts] + [np.empty(0)])
    # One sort: query, then score descending, then tie key descending; each query's first k are its top k.
    order = np.lexsort((-np.asarray(tie_key)[d], -v, seg))
    seg, d, v = seg[order], d[order], v[order]
    counts = np.bincount(seg, minlength=n_q).astype(np.int64)
    if k is not None and len(seg):
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        keep = np.arange(len(seg)) - starts[seg] < k
        seg, d, v = seg[keep], d[keep], v[keep]
        counts = np.minimum(counts, k)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if separate_ties and len(seg) > 1:
        tied = np.flatnonzero((v[1:] == v[:-1]) & (seg[1:] == seg[:-1]))
        for i in np.unique(seg[tied]).tolist():
            a, b = int(offsets[i]), int(offsets[i + 1])
            d[a:b], v[a:b] = _separate_ties(d[a:b], v[a:b])
    return Run(list(qids), offsets, d, tuple(doc_ids), v, name=name, check=False)


def doc_text(title: str, text: str) -> str:
    """A document's text for a text retriever: ``title + " " + text`` when it has a title."""
    return f"{title} {text}" if title else text
