"""Sharded BM25: per-shard corpus statistics, their merge, and shard indexes that score as one index.

A BM25 score depends on the whole corpus through three numbers per term and
two per corpus: the number of documents N, their total length (avgdl = total / N)
and each term's document frequency df -- and, for ``okapi``, the mean idf over
the whole vocabulary (its floor for negative idfs). Split a corpus into shards
(any split: contiguous ranges, hashes of ids, ...), then::

    from finegrain.retrieve.bm25 import BM25
    from finegrain.retrieve.bm25.shard import corpus_stats, merge_stats

    parts = [corpus_stats(tokens) for tokens in shard_tokens]  # on each worker
    stats = merge_stats(parts)                                 # once, small
    shard = BM25("okapi").index(tokens, ids, stats=stats)     # on each worker

(on disk, with one tokenization per shard: :func:`~finegrain.retrieve.bm25.stream.spill_on_disk`
gives each shard's statistics as ``Spill.stats``, and :meth:`BM25.index_spilled
<finegrain.retrieve.bm25.BM25.index_spilled>` finishes it with the merged ones),
and every shard index gives each of its documents exactly (bit for bit) the
score the single index over the whole corpus gives it, for every variant:
idf is evaluated per document frequency with the same expression, the idf
floor is the mean over the *global* vocabulary summed exactly (``math.fsum``,
so independent of the vocabulary's order), and avgdl is the same quotient of
two integers. Merging top-k lists of the shards (by score, then the one tie
rule on document ids) therefore gives the single index's top-k.

:class:`CorpusStats` is small (its vocabulary and one integer per term),
picklable, and frozen; :func:`merge_stats` is associative, so statistics can be
merged in a tree. Statistics must count every document exactly once: merging a
shard twice inflates N and df silently (a shard index checks only that its
terms are counted at least as often as in the shard itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.retrieve.bm25.index import check_corpus, postings
from finegrain.retrieve.bm25.scoring import BM25Params
from finegrain.retrieve.bm25.scoring import idf as _idf

__all__ = ["CorpusStats", "corpus_stats", "merge_stats"]


@dataclass(frozen=True, eq=False)
class CorpusStats:
    """What BM25 needs to know of a corpus: documents, total length, each term's document frequency.

    ``terms`` and ``df`` are parallel (``df[i]`` documents hold ``terms[i]``); ``df`` is read-only.
    """

    n_docs: int
    total_length: int
    terms: tuple[str, ...]
    df: np.ndarray  # int64, one per term

    def __post_init__(self) -> None:
        if len(self.terms) != len(self.df):
            raise FinegrainError(f"CorpusStats has {len(self.terms)} terms but {len(self.df)} document frequencies",
                                 "build statistics with corpus_stats() and merge_stats()")
        if self.n_docs < 0 or self.total_length < 0:
            raise FinegrainError(f"CorpusStats has n_docs={self.n_docs}, total_length={self.total_length}",
                                 "counts are >= 0; build statistics with corpus_stats()")
        df = np.asarray(self.df, dtype=np.int64)
        df.setflags(write=False)
        object.__setattr__(self, "df", df)

    @property
    def avgdl(self) -> float:
        return self.total_length / self.n_docs if self.n_docs else 0.0

    @cached_property
    def term_ids(self) -> Mapping[str, int]:
        """term -> position in ``terms``."""
        return dict(zip(self.terms, range(len(self.terms))))

    def idf(self, p: BM25Params) -> np.ndarray:
        """idf of every term of ``terms`` for the scoring ``p`` (floors included, over this vocabulary)."""
        if self.n_docs == 0:
            raise FinegrainError("the corpus statistics count no document", "merge the statistics of every shard")
        return _idf(p, self.df.astype(np.float64), self.n_docs)

    def positions(self, terms: Iterable[str], df: np.ndarray | None = None) -> np.ndarray:
        """Positions of ``terms`` in this vocabulary; ``df``, when given, is checked not to exceed ours."""
        ids = self.term_ids
        try:
            pos = np.fromiter((ids[t] for t in terms), dtype=np.int64)
        except KeyError as e:
            raise FinegrainError(
                f"term {e.args[0]!r} of the shard is not in the corpus statistics",
                "build the statistics from every shard (merge_stats of each shard's corpus_stats)",
            ) from None
        if df is not None and len(pos) and (self.df[pos] < df).any():
            worst = int(np.argmax(df - self.df[pos]))
            raise FinegrainError(
                f"term {list(terms)[worst]!r} is in {int(df[worst])} documents of the shard but "
                f"{int(self.df[pos[worst]])} of the corpus statistics",
                "build the statistics from every shard (merge_stats of each shard's corpus_stats)",
            )
        return pos

    def __repr__(self) -> str:
        return f"CorpusStats({self.n_docs} documents, {self.total_length} tokens, {len(self.terms)} terms)"


def corpus_stats(tokenized_docs: Sequence[Sequence[str]]) -> CorpusStats:
    """The statistics of one shard's token lists (terms in order of first occurrence)."""
    check_corpus(tokenized_docs, None)
    post = postings(tokenized_docs)
    return CorpusStats(len(tokenized_docs), int(post.lengths.sum()), tuple(post.terms), post.df)


def merge_stats(stats: Iterable[CorpusStats]) -> CorpusStats:
    """The statistics of the union of disjoint corpora (terms in order of first appearance)."""
    parts = list(stats)
    if not parts:
        raise FinegrainError("merge_stats got no statistics", "pass the corpus_stats() of every shard")
    bad = next((s for s in parts if not isinstance(s, CorpusStats)), None)
    if bad is not None:
        raise FinegrainError(f"merge_stats got a {type(bad).__name__}, not CorpusStats", "pass corpus_stats() results")
    if len(parts) == 1:
        return parts[0]
    ids: dict[str, int] = {}
    for s in parts:
        for t in s.terms:
            if t not in ids:
                ids[t] = len(ids)
    df = np.zeros(len(ids), dtype=np.int64)
    for s in parts:
        df[np.fromiter(map(ids.__getitem__, s.terms), dtype=np.int64, count=len(s.terms))] += s.df
    return CorpusStats(sum(s.n_docs for s in parts), sum(s.total_length for s in parts), tuple(ids), df)
