"""The :class:`BM25` scorer: parameters, an optional tokenizer, an index (in memory, or built on disk
in bounded memory and memory-mapped), search, save and load.

Only documents with a non-zero score are search candidates; all others score 0
and are never returned. See :mod:`~finegrain.retrieve.bm25.scoring` for the
formulas, :mod:`~finegrain.retrieve.bm25.index` for the matrix,
:mod:`~finegrain.retrieve.bm25.files` for the format on disk.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.retrieve.bm25.files import read_index, write_index
from finegrain.retrieve.bm25.index import BM25Index, build_index
from finegrain.retrieve.bm25.scoring import BM25Params, Variant, finite
from finegrain.retrieve.bm25.search import cut_scores, dense_scores, search_index
from finegrain.retrieve.bm25.stream import build_on_disk, finish_on_disk
from finegrain.text.tokenizer import Tokenizer
from finegrain.types import Run

if TYPE_CHECKING:
    from finegrain.retrieve.bm25.shard import CorpusStats
    from finegrain.retrieve.bm25.stream import Spill

Ties = Literal["doc-id", "index-order"]
TIES: tuple[str, ...] = ("doc-id", "index-order")


class BM25:
    """A BM25 scorer with fixed parameters; :meth:`index` gives it (or replaces) its index.

    >>> bm = BM25("okapi").index([["a", "b"], ["b", "c"], ["c"]], ["d1", "d2", "d3"])
    >>> run = bm.search([["c"]], ["q1"], k=10, show_progress=False)

    With a ``tokenizer`` (a :class:`~finegrain.text.Tokenizer`) it also takes
    texts (:meth:`index_texts`, :meth:`search_texts`), and :meth:`save` records
    the tokenizer so that :meth:`load` restores it.
    """

    __slots__ = ("_index", "_params", "_tokenizer")

    def __init__(
        self,
        variant: Variant = "okapi",
        *,
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self._params = BM25Params(variant, float(k1), float(b), float(epsilon))
        self._index: BM25Index | None = None
        if tokenizer is not None and not isinstance(tokenizer, Tokenizer):
            raise FinegrainError(f"tokenizer {tokenizer!r} is not a finegrain Tokenizer",
                                 "pass finegrain.text.get_tokenizer('zh'), Tokenizer(splitter, ...), or None")
        self._tokenizer = tokenizer

    # -- parameters -------------------------------------------------------------

    @property
    def params(self) -> BM25Params:
        """The scoring variant and its parameters (``variant``, ``k1``, ``b``, ``epsilon``)."""
        return self._params

    @property
    def tokenizer(self) -> Tokenizer | None:
        """The tokenizer of the texts this index holds (None: token lists were given, tokenizer unknown)."""
        return self._tokenizer

    def config(self) -> dict[str, Any]:
        return asdict(self._params)

    def __repr__(self) -> str:
        p = self._params
        state = f"{self._index.n_docs} documents, {len(self._index.terms)} terms" if self._index else "not indexed"
        tok = f", tokenizer={self._tokenizer.kind}" if self._tokenizer is not None else ""
        return f"BM25({p.variant!r}, k1={p.k1}, b={p.b}, epsilon={p.epsilon}{tok}; {state})"

    # -- indexing ---------------------------------------------------------------

    @property
    def is_indexed(self) -> bool:
        return self._index is not None

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return self._require().doc_ids

    def index(
        self, tokenized_docs: Sequence[Sequence[str]], doc_ids: Sequence[str], *, stats: CorpusStats | None = None
    ) -> BM25:
        """Build the score matrix for ``tokenized_docs`` (one token list per id of ``doc_ids``); returns self.

        ``stats`` (:func:`~finegrain.retrieve.bm25.shard.merge_stats` of every shard's
        :func:`~finegrain.retrieve.bm25.shard.corpus_stats`) makes this a shard of a larger corpus: its
        documents then score exactly as in the index of the whole corpus.
        """
        self._index = build_index(self._params, tokenized_docs, doc_ids, stats=stats)
        return self

    def index_on_disk(
        self, folder: str | PathLike[str], docs: Iterable[tuple[str, Sequence[str]]], *,
        chunk_size: int = 100_000, stats: CorpusStats | None = None,
    ) -> BM25:
        """Build the index of ``docs`` (``(doc_id, tokens)`` pairs, any iterable, e.g. a generator) into
        ``folder`` in bounded memory, then serve it from there memory-mapped; returns self.

        Documents are read ``chunk_size`` at a time; see :mod:`~finegrain.retrieve.bm25.stream`. The
        folder is a saved index (:meth:`load` reads it); ``stats`` as in :meth:`index`.
        """

        tok = self._tokenizer.config() if self._tokenizer is not None else None
        build_on_disk(folder, self._params, docs, self.config(), tokenizer=tok, chunk_size=chunk_size, stats=stats)
        self._index = read_index(folder, mmap=True)[1]
        return self

    def index_texts_on_disk(
        self, folder: str | PathLike[str], docs: Iterable[tuple[str, str]], *,
        chunk_size: int = 100_000, stats: CorpusStats | None = None,
    ) -> BM25:
        """:meth:`index_on_disk` for ``(doc_id, text)`` pairs, tokenized a chunk at a time with this
        BM25's tokenizer (so the corpus' token lists are never all in memory); returns self."""

        tokenizer = self._require_tokenizer()
        build_on_disk(folder, self._params, docs, self.config(), tokenize=tokenizer.documents,
                      tokenizer=tokenizer.config(), chunk_size=chunk_size, stats=stats)
        self._index = read_index(folder, mmap=True)[1]
        return self

    def index_spilled(self, spilled: Spill, *, stats: CorpusStats | None = None) -> BM25:
        """Finish a folder spilled by :func:`~finegrain.retrieve.bm25.stream.spill_on_disk` (its postings
        weighted with ``stats``, default its own) and serve it memory-mapped; returns self.

        A sharded build spills every shard, merges their ``Spill.stats`` and finishes each with the
        merged statistics: tokenization runs once, and the shards score exactly as one index.
        """

        tok = self._tokenizer.config() if self._tokenizer is not None else None
        finish_on_disk(spilled, self._params, self.config(), tokenizer=tok, stats=stats)
        self._index = read_index(spilled.folder, mmap=True)[1]
        return self

    def index_texts(self, texts: Sequence[str], doc_ids: Sequence[str]) -> BM25:
        """Tokenize ``texts`` as documents with this BM25's tokenizer and index them; returns self."""
        return self.index(self._require_tokenizer().documents(texts), doc_ids)

    def search_texts(self, texts: Sequence[str], qids: Sequence[str], **options: Any) -> Run:
        """Tokenize ``texts`` as queries with this BM25's tokenizer and :meth:`search` (same options)."""
        return self.search(self._require_tokenizer().queries(texts), qids, **options)

    def _require_tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            raise FinegrainError("this BM25 has no tokenizer", "create it with BM25(..., tokenizer=get_tokenizer('zh')), "
                                 "or pass token lists to index() / search()")
        return self._tokenizer

    def _require(self) -> BM25Index:
        if self._index is None:
            raise FinegrainError("this BM25 has no index yet", "call .index(tokenized_docs, doc_ids) or BM25.load(folder)")
        return self._index

    # -- scoring ----------------------------------------------------------------

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Scores of every document (index order) for one token list; equals rank_bm25's get_scores for okapi."""
        if isinstance(query_tokens, str):
            raise FinegrainError(
                f"expected a token list, got the string {query_tokens[:40]!r}",
                "tokenize the query first, e.g. tokenizer.queries([text])[0]",
            )
        # Token by token, in query order: the additions of search() and of rank_bm25, in their order.
        return dense_scores(self._require(), query_tokens)

    def cut(
        self, docs: np.ndarray, scores: np.ndarray, *, k: int | None, threshold: float | None, ties: Ties = "doc-id",
    ) -> tuple[np.ndarray, np.ndarray]:
        """One query's ``(document positions, scores)`` cut as :meth:`search` cuts a query (threshold, ``k``,
        ``ties``); for scores one search cannot compute, e.g. a sum of :meth:`scores` with weights."""
        return cut_scores(self._require(), docs, scores, k, threshold, ties)

    def search(
        self,
        queries_tokens: Sequence[Sequence[str]],
        qids: Sequence[str],
        *,
        k: int | None = None,
        threshold: float | None = None,
        ties: Ties = "doc-id",
        name: str | None = None,
        show_progress: bool = True,
    ) -> Run:
        """Rank the documents for every query into a :class:`~finegrain.types.Run`.

        ``threshold`` keeps the documents scoring >= threshold; ``k`` keeps the
        best k (after the threshold when both are given); at least one is needed.
        ``ties`` decides which of equally scored documents win a cut at k and how
        the run orders them:

        * ``"doc-id"``: scores are returned as computed; the Run's one rule
          (document id descending) breaks ties.
        * ``"index-order"``: the document indexed first wins, as with a stable
          sort on scores (the CapRetrieval reference code, rank_bm25 users). To
          carry this order in a Run, tied scores are raised by the fewest ulps
          (units in the last place) that make them distinct: a score changes by
          at most (ties below it) ulps, under 1e-10 relative for fewer than 400,000
          tied documents, and never drops below a threshold it passed.
        """
        idx = self._require()
        if k is None and threshold is None:
            raise FinegrainError("search needs k, threshold or both", "pass k=10 (top-k), threshold=1e-3, or both")
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise FinegrainError(f"k={k!r} is not a whole number >= 1", "pass k=10, say, or k=None for no cut")
        if threshold is not None and not finite(threshold):
            raise FinegrainError(f"threshold={threshold!r} is not a finite number", "pass threshold=1e-3, say")
        if ties not in TIES:
            raise FinegrainError(f"unknown ties rule {ties!r}", f"use one of {', '.join(repr(t) for t in TIES)}")
        if isinstance(queries_tokens, str) or len(queries_tokens) != len(qids):
            n = "a string" if isinstance(queries_tokens, str) else len(queries_tokens)
            raise FinegrainError(
                f"got {n} token lists for {len(qids)} query ids",
                "pass one token list per query id, in the same order",
            )
        return search_index(idx, list(queries_tokens), list(qids), k, threshold, ties,
                       name or f"bm25-{self._params.variant}", show_progress)

    # -- persistence ------------------------------------------------------------

    def save(self, folder: str | PathLike[str]) -> Path:
        """Write the index as plain arrays (``.npy`` files) and JSON, with the tokenizer's config; returns the folder."""

        tok = self._tokenizer.config() if self._tokenizer is not None else None
        return write_index(folder, self._require(), self.config(), tokenizer=tok)

    @classmethod
    def load(cls, folder: str | PathLike[str], *, tokenizer: Tokenizer | None = None, mmap: bool = True) -> BM25:
        """Read an index written by :meth:`save` (or :meth:`index_on_disk`), with the tokenizer it recorded.

        ``tokenizer`` replaces the recorded one (needed when it was built from
        functions, which a config cannot rebuild). An index of format version 1
        recorded no tokenizer: it loads with ``tokenizer`` (None when not given).
        ``mmap`` (default) maps the postings read-only: the OS pages them in as
        queries need them; ``mmap=False`` reads them into memory.
        """

        meta, index = read_index(folder, mmap=mmap)
        if tokenizer is None and meta.get("tokenizer") is not None:
            tokenizer = Tokenizer.from_config(meta["tokenizer"])
        bm = cls(meta["variant"], k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"], tokenizer=tokenizer)
        bm._index = index
        return bm
