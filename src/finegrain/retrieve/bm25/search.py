"""Searching a BM25 index: threshold and top-k cuts, the two tie rules, on one of two backends.

* ``numba`` (when installed): compiled per-query loops over the postings
  (:mod:`~finegrain.retrieve.bm25.kernels`);
* ``scipy``: batched sparse products ``Q @ S``.

Both add each document's contributions in query-token order, so they give the
same scores, bit for bit, and the same entries (tests check this).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np
import scipy.sparse as sp
from tqdm.auto import tqdm

from finegrain.errors import FinegrainError
from finegrain.ranking import cut_depth, top_k_positions
from finegrain.retrieve.bm25.index import BM25Index
from finegrain.retrieve.bm25.kernels import Kernels, load_kernels
from finegrain.types import Run

# A batch of queries is scored at once; keep its postings (and so its result) near this size.
_BATCH_POSTINGS = 2_000_000
_BATCH_QUERIES = 2048


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


BACKENDS = ("auto", "numba", "scipy")


def search_index(
    idx: BM25Index, queries: list[Sequence[str]], qids: list[str], k: int | None, threshold: float | None,
    ties: str, name: str, show_progress: bool, backend: str = "auto",
) -> Run:
    if backend not in BACKENDS:
        raise FinegrainError(f"unknown BM25 backend {backend!r}", f"use one of {', '.join(map(repr, BACKENDS))}")
    kernels = load_kernels() if backend != "scipy" else None
    if backend == "numba" and kernels is None:
        raise FinegrainError("the numba BM25 backend needs numba", "pip install numba, or use backend='scipy'")
    k = cut_depth(k, idx.n_docs)  # before anything is allocated for k results per query
    # Higher wins among equal scores.
    tie_key = idx.id_ranks if ties == "doc-id" else -np.arange(idx.n_docs, dtype=np.int64)
    q_ptr, q_cols, postings = _query_rows(idx, queries)
    if kernels is not None:
        return _search_numba(kernels, idx, q_ptr, q_cols, postings, qids, k, threshold, ties, tie_key, name,
                             show_progress)
    return _search_scipy(idx, q_ptr, q_cols, postings, qids, k, threshold, ties, tie_key, name, show_progress)


def _search_numba(
    kernels: Kernels, idx: BM25Index, q_ptr: np.ndarray, q_cols: np.ndarray, postings: np.ndarray, qids: list[str],
    k: int | None, threshold: float | None, ties: str, tie_key: np.ndarray, name: str, show_progress: bool,
) -> Run:
    indptr, indices, data = idx.postings
    n_q = len(qids)
    counts = np.zeros(n_q, dtype=np.int64)
    docs_out: list[np.ndarray] = []
    vals_out: list[np.ndarray] = []
    acc = np.zeros(idx.n_docs, dtype=np.float64)
    with tqdm(total=n_q, desc="BM25 search", unit="query", disable=not show_progress, leave=False) as bar:
        for a, b in _batches(postings):
            c, d, v = kernels.search_batch(
                q_ptr[a : b + 1], q_cols, indptr, indices, data, idx.n_docs, int(k or 0),
                float(threshold if threshold is not None else 0.0), threshold is not None, tie_key, acc,
            )
            counts[a:b] = c
            docs_out.append(d)
            vals_out.append(v)
            bar.update(b - a)
    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    doc_codes = np.concatenate(docs_out) if docs_out else np.empty(0, dtype=np.int64)
    values = np.concatenate(vals_out) if vals_out else np.empty(0, dtype=np.float64)
    if ties == "index-order":
        for i in np.flatnonzero(counts > 1).tolist():
            s, e = int(offsets[i]), int(offsets[i + 1])
            doc_codes[s:e], values[s:e] = _separate_ties(doc_codes[s:e], values[s:e])
    return Run(qids, offsets, doc_codes, idx.doc_ids, values, name=name, check=False)


def dense_scores(idx: BM25Index, query_tokens: Sequence[str]) -> np.ndarray:
    """Scores of every document (index order) for one token list, token by token in query order."""
    rows = np.fromiter((r for r in map(idx.terms.get, query_tokens) if r is not None), dtype=np.int64)
    # np.empty, then zeros written, not np.zeros: calloc maps fresh pages for a large array, and
    # their page faults cost several times the scoring; a freed block is reused instead.
    out = np.empty(idx.n_docs, dtype=np.float64)
    indptr, indices, data = idx.postings
    kernels = load_kernels()
    if kernels is not None:
        return kernels.dense_scores(rows, indptr, indices, data, out)  # type: ignore[no-any-return]
    out.fill(0.0)
    for r in rows.tolist():
        a, b = indptr[r], indptr[r + 1]
        out[indices[a:b]] += data[a:b]  # a term's documents are distinct: no repeated index
    return out


def _search_scipy(
    idx: BM25Index, q_ptr: np.ndarray, q_cols: np.ndarray, postings: np.ndarray, qids: list[str],
    k: int | None, threshold: float | None, ties: str, tie_key: np.ndarray, name: str, show_progress: bool,
) -> Run:
    n_q = len(qids)
    dtype = idx.matrix.indices.dtype

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
                d, v = _cut(cols[s:e], vals[s:e], k, ties, tie_key)
                docs_out.append(d)
                vals_out.append(v)
                counts[a + r] = len(d)
            bar.update(b - a)

    offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    doc_codes = np.concatenate(docs_out).astype(np.int64) if docs_out else np.empty(0, dtype=np.int64)
    values = np.concatenate(vals_out) if vals_out else np.empty(0, dtype=np.float64)
    return Run(qids, offsets, doc_codes, idx.doc_ids, values, name=name, check=False)


def _cut(d: np.ndarray, v: np.ndarray, k: int | None, ties: str, tie_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if k is not None and len(v) > k:
        sel = top_k_positions(v, d, k, tie_key)
        d, v = d[sel], v[sel]
    if ties == "index-order" and len(v) > 1:
        d, v = _separate_ties(d, v)
    return d, v


def cut_scores(
    idx: BM25Index, docs: np.ndarray, scores: np.ndarray, k: int | None, threshold: float | None, ties: str,
) -> tuple[np.ndarray, np.ndarray]:
    """One query's candidates ``(document positions, scores)`` cut as :func:`search_index` cuts a query:
    scores >= ``threshold``, the best ``k`` by the ``ties`` rule (``index-order``: ties lifted by ulps).
    For scores a search cannot compute in one pass (weighted query terms, :mod:`finegrain.retrieve.query.expand`)."""
    if threshold is not None:
        keep = scores >= threshold
        docs, scores = docs[keep], scores[keep]
    tie_key = idx.id_ranks if ties == "doc-id" else -np.arange(idx.n_docs, dtype=np.int64)
    return _cut(docs.astype(np.int64), scores.astype(np.float64), k, ties, tie_key)


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
