"""The BM25 index: the term-by-document matrix of idf(t) * tfc, built from token lists.

The index is the term-by-document matrix of idf(t) * tfc (Lù 2024, "BM25S:
Orders of magnitude faster lexical search via eager sparse scoring"), stored
as CSR rows per term, so a batch of queries is one sparse product
``Q @ S`` (Q: queries by terms, one entry per query token, in query order).
Scores therefore add up in the same order as rank_bm25's ``get_scores``.
The scoring variant (:mod:`~finegrain.retrieve.bm25.scoring`) decides idf and tfc.

Building is two steps: :func:`postings` turns token lists into (term, document,
tf) entries and the corpus statistics; :func:`assemble` weighs them with idf
and tfc from statistics that may be the corpus' own or those of a larger corpus
the documents are one shard of (:mod:`~finegrain.retrieve.bm25.shard`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from finegrain.errors import FinegrainError, check_unique_ids
from finegrain.ranking import string_ranks
from finegrain.retrieve.bm25.scoring import BM25Params
from finegrain.retrieve.bm25.scoring import idf as _idf
from finegrain.retrieve.bm25.scoring import tfc as _tfc

if TYPE_CHECKING:
    from finegrain.retrieve.bm25.shard import CorpusStats


@dataclass(frozen=True, eq=False)
class BM25Index:
    """The arrays of one index; read-only."""

    doc_ids: tuple[str, ...]
    terms: dict[str, int]  # token -> row of ``matrix``; private, never mutated
    matrix: sp.csr_array  # terms x documents, entries idf * tfc
    doc_lengths: np.ndarray
    idf: np.ndarray
    avgdl: float

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)

    @cached_property
    def postings(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The matrix as plain arrays ``(indptr, indices, data)`` (views, not copies; memory maps stay maps)."""
        m = self.matrix
        return np.asarray(m.indptr), np.asarray(m.indices), np.asarray(m.data)

    @cached_property
    def id_ranks(self) -> np.ndarray:
        """Each document's rank in id order (the tie key of the one ranking rule), sorted once per index."""
        return string_ranks(self.doc_ids)


@dataclass(frozen=True, eq=False)
class Postings:
    """Unweighted postings of token lists: entry i is (term ``row[i]``, document ``col[i]``, ``tf[i]``),
    sorted by term then document; ``terms`` in order of first occurrence, ``df`` per term."""

    terms: dict[str, int]
    row: np.ndarray  # int64
    col: np.ndarray  # int64
    tf: np.ndarray  # float64
    df: np.ndarray  # int64, per term
    lengths: np.ndarray  # int64, per document

    @property
    def n_docs(self) -> int:
        return len(self.lengths)


def check_corpus(docs: Sequence[Sequence[str]], doc_ids: Sequence[str] | None) -> None:
    """Token lists (and ids, when given): lists, as many as ids, unique ids, no bare strings."""
    if isinstance(docs, str) or isinstance(doc_ids, str):
        raise FinegrainError("expected lists of token lists and of ids, got a string", "pass lists")
    n = len(docs)
    if doc_ids is not None:
        if n != len(doc_ids):
            raise FinegrainError(f"got {n} token lists for {len(doc_ids)} document ids", "pass one token list per id")
        check_unique_ids(doc_ids, "document id")
    if n == 0:
        raise FinegrainError("cannot index an empty corpus", "pass at least one document")
    for i, toks in enumerate(docs):
        if isinstance(toks, str):
            name = repr(doc_ids[i]) if doc_ids is not None else str(i)
            raise FinegrainError(
                f"document {name} is the string {toks[:40]!r}, not a token list",
                "tokenize the texts first, e.g. tokenizer.documents(texts)",
            )


def postings(docs: Sequence[Sequence[str]]) -> Postings:
    """The (term, document, tf) entries of ``docs`` (checked with :func:`check_corpus` first)."""
    n = len(docs)
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=n)
    total = int(lengths.sum())
    try:
        unique = dict.fromkeys(chain.from_iterable(docs))
    except TypeError as e:
        raise FinegrainError(f"a token is not hashable ({e})", "tokens must be strings") from None
    bad = next((t for t in unique if not isinstance(t, str)), None)
    if bad is not None:
        raise FinegrainError(f"token {bad!r} is a {type(bad).__name__}, not a string", "tokens must be strings")
    terms = dict(zip(unique, range(len(unique))))
    del unique

    # One sortable key per token, term * N + document; sorted, equal keys are one (term, document)
    # entry with tf = their count, in CSR order (by term, then document).
    key = np.fromiter(map(terms.__getitem__, chain.from_iterable(docs)), dtype=np.int64, count=total)
    key *= n
    key += np.repeat(np.arange(n, dtype=np.int64), lengths)
    key.sort()
    first = np.ones(total, dtype=bool)
    np.not_equal(key[1:], key[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    del first
    tf = np.diff(starts, append=total).astype(np.float64)
    key = key[starts]
    del starts
    row, col = np.divmod(key, n)
    del key
    df = np.bincount(row, minlength=len(terms))
    return Postings(terms, row, col, tf, df, lengths)


def assemble(
    p: BM25Params, post: Postings, doc_ids: Sequence[str], *, stats: CorpusStats | None = None
) -> BM25Index:
    """Weigh ``post`` into an index: idf from ``stats`` (default: the postings' own corpus), tfc
    with avgdl = stats' total length / stats' documents."""
    n = post.n_docs
    n_terms = len(post.terms)
    if stats is None:
        n_all, total = n, int(post.lengths.sum())
        idf = _idf(p, post.df.astype(np.float64), n)
    else:
        n_all, total = stats.n_docs, stats.total_length
        idf = stats.idf(p)[stats.positions(post.terms, post.df)]
    avgdl = total / n_all
    index_dtype = np.int32 if max(len(post.col), n) < 2**31 - 1 else np.int64
    indptr = np.zeros(n_terms + 1, dtype=index_dtype)
    np.cumsum(post.df, out=indptr[1:])
    data = idf[post.row]
    data *= _tfc(p, post.tf, post.lengths[post.col].astype(np.float64), avgdl)
    _check_weights(p, post, doc_ids, data)
    matrix = read_only_csr(sp.csr_array((data, post.col.astype(index_dtype), indptr), shape=(n_terms, n)))
    return BM25Index(
        doc_ids=tuple(doc_ids),
        terms=post.terms,
        matrix=matrix,
        doc_lengths=frozen_array(post.lengths),
        idf=frozen_array(np.ascontiguousarray(idf)),
        avgdl=avgdl,
    )


def _check_weights(p: BM25Params, post: Postings, doc_ids: Sequence[str], data: np.ndarray) -> None:
    """Every weight finite: a search sums them into the scores it ranks."""
    bad = np.flatnonzero(~np.isfinite(data))
    if len(bad):
        i = int(bad[0])
        term = next(t for t, r in post.terms.items() if r == int(post.row[i]))
        raise FinegrainError(
            f"BM25 {p.variant} (k1={p.k1}, b={p.b}, epsilon={p.epsilon}) weighs term {term!r} in document "
            f"{doc_ids[int(post.col[i])]!r} {float(data[i])}, which cannot be ranked",
            "keep k1, b and epsilon in their declared ranges (finegrain list retrievers)",
        )


def build_index(
    p: BM25Params, docs: Sequence[Sequence[str]], doc_ids: Sequence[str], *, stats: CorpusStats | None = None
) -> BM25Index:
    """The index of ``docs``; with ``stats`` (of a corpus ``docs`` is part of), weighted as that corpus' index."""
    check_corpus(docs, doc_ids)
    return assemble(p, postings(docs), doc_ids, stats=stats)


def read_only_csr(m: sp.csr_array) -> sp.csr_array:
    for a in (m.data, m.indices, m.indptr):
        a.setflags(write=False)
    return m


def frozen_array(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
