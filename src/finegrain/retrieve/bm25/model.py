"""BM25 over token lists: an eager sparse score matrix, top-k and threshold search, plain-array save/load.

For a query q (a token list; a repeated token counts every time) and a
document d of length |d| in a corpus of N documents with average length avgdl,

    score(q, d) = sum_{t in q} idf(t) * tfc(tf(t, d), |d|)

Variants (Kamphuis, de Vries, Boytsov & Lin, 2020, "Which BM25 Do You Mean? A
Large-Scale Reproducibility Study of Scoring Variants", ECIR; formulas as in
bm25s, Lù 2024, and rank_bm25):

* ``okapi`` -- rank_bm25's ``BM25Okapi`` (Trotman, Puurula & Burgess 2014):
  idf(t) = ln(N - n_t + 0.5) - ln(n_t + 0.5); every negative idf (a token in
  more than half the documents) is replaced by epsilon * mean idf, the mean
  taken over the idfs of the whole vocabulary before the replacement;
  tfc = tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl)).
* ``lucene`` -- idf = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)),
  tfc = tf / (tf + k1 * (1 - b + b * |d| / avgdl)).
* ``robertson`` -- idf = ln(max(1, (N - n_t + 0.5) / (n_t + 0.5))), lucene's tfc.
* ``atire`` -- idf = ln(N / n_t), okapi's tfc.

``lucene``, ``robertson`` and ``atire`` give bm25s' scores (bm25s stores them
in float32 by default; here everything is float64). BM25L and BM25+ are not
offered: they give every document a non-zero score, which a threshold cannot
use.

The index is the term-by-document matrix of idf(t) * tfc (Lù 2024, "BM25S:
Orders of magnitude faster lexical search via eager sparse scoring"), stored
as CSR rows per term, so a batch of queries is one sparse product
``Q @ S`` (Q: queries by terms, one entry per query token, in query order).
Scores therefore add up in the same order as rank_bm25's ``get_scores``.

Only documents with a non-zero score are search candidates; all others score 0
and are never returned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import chain
from os import PathLike
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from finegrain.errors import DuplicateIdError, FinegrainError
from finegrain.ranking import string_ranks
from finegrain.types import Run

Variant = Literal["okapi", "lucene", "robertson", "atire"]
Ties = Literal["doc-id", "index-order"]
VARIANTS: tuple[str, ...] = ("okapi", "lucene", "robertson", "atire")
TIES: tuple[str, ...] = ("doc-id", "index-order")


# A batch of queries is scored at once; keep its postings (and so its result) near this size.
_BATCH_POSTINGS = 2_000_000
_BATCH_QUERIES = 2048


@dataclass(frozen=True)
class BM25Params:
    """The scoring parameters; ``epsilon`` (the idf floor factor) is used by ``okapi`` only."""

    variant: Variant = "okapi"
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise FinegrainError(
                f"unknown BM25 variant {self.variant!r}",
                f"use one of {', '.join(repr(v) for v in VARIANTS)}",
            )
        for name, value in (("k1", self.k1), ("epsilon", self.epsilon)):
            if not _finite(value) or value < 0:
                raise FinegrainError(f"BM25 {name}={value!r} is not a finite number >= 0", f"set {name}, e.g. 1.5")
        if not _finite(self.b) or not 0 <= self.b <= 1:
            raise FinegrainError(f"BM25 b={self.b!r} is outside [0, 1]", "set b between 0 and 1, e.g. 0.75")


@dataclass(frozen=True, eq=False)
class BM25Index:
    doc_ids: tuple[str, ...]
    terms: dict[str, int]  # token -> row of ``matrix``; private, never mutated
    matrix: sp.csr_array  # terms x documents, entries idf * tfc
    doc_lengths: np.ndarray
    idf: np.ndarray
    avgdl: float

    @property
    def n_docs(self) -> int:
        return len(self.doc_ids)


class BM25:
    """A BM25 scorer with fixed parameters; :meth:`index` gives it (or replaces) its index.

    >>> bm = BM25("okapi").index([["a", "b"], ["b", "c"], ["c"]], ["d1", "d2", "d3"])
    >>> run = bm.search([["c"]], ["q1"], k=10, show_progress=False)
    """

    __slots__ = ("_params", "_index")

    def __init__(self, variant: Variant = "okapi", *, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self._params = BM25Params(variant, float(k1), float(b), float(epsilon))
        self._index: BM25Index | None = None

    # -- parameters -------------------------------------------------------------

    @property
    def params(self) -> BM25Params:
        return self._params

    @property
    def variant(self) -> str:
        return self._params.variant

    @property
    def k1(self) -> float:
        return self._params.k1

    @property
    def b(self) -> float:
        return self._params.b

    @property
    def epsilon(self) -> float:
        return self._params.epsilon

    def config(self) -> dict[str, Any]:
        return asdict(self._params)

    def __repr__(self) -> str:
        p = self._params
        state = f"{self._index.n_docs} documents, {len(self._index.terms)} terms" if self._index else "not indexed"
        return f"BM25({p.variant!r}, k1={p.k1}, b={p.b}, epsilon={p.epsilon}; {state})"

    # -- indexing ---------------------------------------------------------------

    @property
    def is_indexed(self) -> bool:
        return self._index is not None

    @property
    def doc_ids(self) -> tuple[str, ...]:
        return self._require().doc_ids

    def index(self, tokenized_docs: Sequence[Sequence[str]], doc_ids: Sequence[str]) -> BM25:
        """Build the score matrix for ``tokenized_docs`` (one token list per id of ``doc_ids``); returns self."""
        self._index = _build(self._params, tokenized_docs, doc_ids)
        return self

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
        idx = self._require()
        terms, m = idx.terms, idx.matrix
        out = np.zeros(idx.n_docs, dtype=np.float64)
        indptr, indices, data = m.indptr, m.indices, m.data
        # Token by token, in query order: the additions of search() and of rank_bm25, in their order.
        for r in map(terms.get, query_tokens):
            if r is not None:
                a, b = indptr[r], indptr[r + 1]
                np.add.at(out, indices[a:b], data[a:b])
        return out

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
        if threshold is not None and not _finite(threshold):
            raise FinegrainError(f"threshold={threshold!r} is not a finite number", "pass threshold=1e-3, say")
        if ties not in TIES:
            raise FinegrainError(f"unknown ties rule {ties!r}", f"use one of {', '.join(repr(t) for t in TIES)}")
        if isinstance(queries_tokens, str) or len(queries_tokens) != len(qids):
            n = "a string" if isinstance(queries_tokens, str) else len(queries_tokens)
            raise FinegrainError(
                f"got {n} token lists for {len(qids)} query ids",
                "pass one token list per query id, in the same order",
            )
        return _search(idx, list(queries_tokens), list(qids), k, threshold, ties,
                       name or f"bm25-{self.variant}", show_progress)

    # -- persistence ------------------------------------------------------------

    def save(self, folder: str | PathLike[str]) -> Path:
        """Write the index as plain arrays (``arrays.npz``) and JSON; returns the folder."""
        from finegrain.retrieve.bm25_files import write_index

        return write_index(folder, self._require(), self.config())

    @classmethod
    def load(cls, folder: str | PathLike[str]) -> BM25:
        """Read an index written by :meth:`save`."""
        from finegrain.retrieve.bm25_files import read_index

        meta, index = read_index(folder)
        bm = cls(meta["variant"], k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"])
        bm._index = index
        return bm


# --------------------------------------------------------------------------- building


def _build(p: BM25Params, docs: Sequence[Sequence[str]], doc_ids: Sequence[str]) -> BM25Index:
    if isinstance(docs, str) or isinstance(doc_ids, str):
        raise FinegrainError("expected lists of token lists and of ids, got a string", "pass lists")
    n = len(docs)
    if n != len(doc_ids):
        raise FinegrainError(f"got {n} token lists for {len(doc_ids)} document ids", "pass one token list per id")
    if n == 0:
        raise FinegrainError("cannot index an empty corpus", "pass at least one document")
    seen: set[str] = set()
    for d in doc_ids:
        if not isinstance(d, str):
            raise FinegrainError(f"document id {d!r} is a {type(d).__name__}, not a string", "use string ids")
        if d in seen:
            raise DuplicateIdError(f"document id {d!r} appears twice", "every document id must appear once")
        seen.add(d)
    for i, toks in enumerate(docs):
        if isinstance(toks, str):
            raise FinegrainError(
                f"document {doc_ids[i]!r} is the string {toks[:40]!r}, not a token list",
                "tokenize the texts first, e.g. tokenizer.documents(texts)",
            )

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
    n_terms = len(terms)

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
    df = np.bincount(row, minlength=n_terms)
    index_dtype = np.int32 if max(len(col), n) < 2**31 - 1 else np.int64
    indptr = np.zeros(n_terms + 1, dtype=index_dtype)
    np.cumsum(df, out=indptr[1:])

    avgdl = total / n
    idf = _idf(p, df.astype(np.float64), n)
    data = idf[row]
    del row
    data *= _tfc(p, tf, lengths[col].astype(np.float64), avgdl)
    matrix = read_only_csr(sp.csr_array((data, col.astype(index_dtype), indptr), shape=(n_terms, n)))
    return BM25Index(
        doc_ids=tuple(doc_ids),
        terms=terms,
        matrix=matrix,
        doc_lengths=frozen_array(lengths),
        idf=frozen_array(idf),
        avgdl=avgdl,
    )


def _idf(p: BM25Params, df: np.ndarray, n: int) -> np.ndarray:
    # Evaluated with math.log once per distinct document frequency, as rank_bm25 and
    # bm25s do per term (numpy's log may differ from it in the last bit).
    values, inverse = np.unique(df, return_inverse=True)
    if p.variant == "okapi":
        fn = lambda f: math.log(n - f + 0.5) - math.log(f + 0.5)  # noqa: E731
    elif p.variant == "lucene":
        fn = lambda f: math.log(1 + (n - f + 0.5) / (f + 0.5))  # noqa: E731
    elif p.variant == "robertson":
        fn = lambda f: math.log(max(1.0, (n - f + 0.5) / (f + 0.5)))  # noqa: E731
    else:  # atire
        fn = lambda f: math.log(n / f)  # noqa: E731
    idf = np.array([fn(f) for f in values.tolist()], dtype=np.float64)[inverse]
    if p.variant == "okapi" and len(idf):
        # rank_bm25 averages with a running sum in vocabulary order; cumsum adds in the same order.
        floor = p.epsilon * (float(np.cumsum(idf)[-1]) / len(idf))
        idf[idf < 0] = floor
    return idf


def _tfc(p: BM25Params, tf: np.ndarray, dl: np.ndarray, avgdl: float) -> np.ndarray:
    k1, b = p.k1, p.b
    if p.variant in ("okapi", "atire"):
        # rank_bm25's expression, operation for operation.
        return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
    return tf / (k1 * ((1 - b) + b * dl / avgdl) + tf)


# --------------------------------------------------------------------------- searching


def _query_rows(idx: BM25Index, queries: list[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR rows of the queries x terms matrix (one entry per known query token, in query order)
    as ``(indptr, term columns, postings per query)``."""
    terms = idx.terms
    rows: list[list[int]] = []
    for i, q in enumerate(queries):
        if isinstance(q, str):
            raise FinegrainError(
                f"query {i} is the string {q[:40]!r}, not a token list",
                "tokenize the queries first, e.g. tokenizer.queries(texts)",
            )
        rows.append([t for t in map(terms.get, q) if t is not None])
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, rows), dtype=np.int64, count=len(rows)), out=indptr[1:])
    # The index's integer type, so that scipy does not widen (copy) the index's arrays per product.
    cols = np.fromiter(chain.from_iterable(rows), dtype=idx.matrix.indices.dtype, count=int(indptr[-1]))
    cum = np.zeros(len(cols) + 1, dtype=np.int64)
    np.cumsum(np.diff(idx.matrix.indptr)[cols], out=cum[1:])
    return indptr, cols, cum[indptr[1:]] - cum[indptr[:-1]]


def _search(
    idx: BM25Index, queries: list[Sequence[str]], qids: list[str], k: int | None, threshold: float | None,
    ties: str, name: str, show_progress: bool,
) -> Run:
    from tqdm.auto import tqdm

    n_q = len(queries)
    q_ptr, q_cols, postings = _query_rows(idx, queries)
    dtype = idx.matrix.indices.dtype
    # Higher wins among equal scores.
    tie_key = string_ranks(idx.doc_ids) if ties == "doc-id" else -np.arange(idx.n_docs, dtype=np.int64)

    docs_out: list[np.ndarray] = []
    vals_out: list[np.ndarray] = []
    counts = np.zeros(n_q, dtype=np.int64)
    with tqdm(total=n_q, desc="BM25 search", unit="query", disable=not show_progress, leave=False) as bar:
        for a, b in _batches(postings):
            s, e = int(q_ptr[a]), int(q_ptr[b])
            qm = sp.csr_array(
                (np.ones(e - s), q_cols[s:e], (q_ptr[a : b + 1] - s).astype(dtype)), shape=(b - a, len(idx.terms))
            )
            prod = qm @ idx.matrix
            ptr, cols, vals = prod.indptr, prod.indices, prod.data
            if threshold is not None:
                keep = vals >= threshold
                if not keep.all():
                    row_of = np.repeat(np.arange(b - a), np.diff(ptr))
                    ptr = np.zeros(b - a + 1, dtype=np.int64)
                    np.cumsum(np.bincount(row_of[keep], minlength=b - a), out=ptr[1:])
                    cols, vals = cols[keep], vals[keep]
            for r in range(b - a):
                s, e = int(ptr[r]), int(ptr[r + 1])
                d, v = cols[s:e], vals[s:e]
                if k is not None and e - s > k:
                    sel = _top_k(v, d, k, tie_key)
                    d, v = d[sel], v[sel]
                if ties == "index-order" and len(v) > 1:
                    d, v = _separate_ties(d, v)
                docs_out.append(d)
                vals_out.append(v)
                counts[a + r] = len(d)
            bar.update(b - a)

    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    doc_codes = np.concatenate(docs_out).astype(np.int64) if docs_out else np.empty(0, dtype=np.int64)
    values = np.concatenate(vals_out) if vals_out else np.empty(0, dtype=np.float64)
    return Run(qids, offsets, doc_codes, idx.doc_ids, values, name=name, check=False)


def _batches(postings: np.ndarray) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    a, total = 0, 0
    for i, p in enumerate(postings.tolist()):
        if i > a and (total + p > _BATCH_POSTINGS or i - a >= _BATCH_QUERIES):
            out.append((a, i))
            a, total = i, 0
        total += p
    if a < len(postings):
        out.append((a, len(postings)))
    return out


def _top_k(v: np.ndarray, d: np.ndarray, k: int, tie_key: np.ndarray) -> np.ndarray:
    """Positions of the k best entries: higher score first, then higher ``tie_key[doc]``."""
    kth = v[np.argpartition(-v, k - 1)[k - 1]]
    above = np.flatnonzero(v > kth)
    tied = np.flatnonzero(v == kth)
    need = k - len(above)
    if len(tied) > need:
        tied = tied[np.argsort(-tie_key[d[tied]], kind="stable")[:need]]
    return np.concatenate([above, tied])


_SIGN = np.int64(np.iinfo(np.int64).min)
_MAGNITUDE = np.int64(np.iinfo(np.int64).max)


def _separate_ties(d: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort by (score desc, index asc) and lift tied scores by the fewest ulps that make them strictly decrease.

    Works on the integer image of the floats (monotone in the float order):
    going from the last entry up, each key becomes max(own key, next key + 1).
    """
    order = np.lexsort((d, -v))
    d, v = d[order], v[order]
    if not (v[1:] == v[:-1]).any():
        return d, v
    bits = v.view(np.int64)
    keys = np.where(bits < 0, -(bits & _MAGNITUDE), bits)
    rev = keys[::-1]
    steps = np.arange(len(rev), dtype=np.int64)
    lifted = (np.maximum.accumulate(rev - steps) + steps)[::-1]
    out_bits = np.where(lifted < 0, (-lifted) | _SIGN, lifted)
    return d, out_bits.view(np.float64)


# --------------------------------------------------------------------------- helpers


def _finite(x: object) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(float(x))


def read_only_csr(m: sp.csr_array) -> sp.csr_array:
    for a in (m.data, m.indices, m.indptr):
        a.setflags(write=False)
    return m


def frozen_array(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a
