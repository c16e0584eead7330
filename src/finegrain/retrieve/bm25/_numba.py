"""The numba-compiled BM25 loops (see :mod:`~finegrain.retrieve.bm25.kernels`); imports numba.

Imported only by :func:`finegrain.retrieve.bm25.kernels.load_kernels`, on the first search.
"""

# mypy: ignore-errors
from __future__ import annotations

import numpy as np
from numba import njit

_jit = njit(cache=True, nogil=True)
_inline = njit(cache=True, nogil=True, inline="always")


@_inline
def _worse(v, d, w, e, tie_key):
    """Whether (score v, document d) ranks below (w, e): lower score, or equal and lower tie key."""
    return v < w or (v == w and tie_key[d] < tie_key[e])


@_inline
def _heap_offer(heap_v, heap_d, h, k, v, d, tie_key):
    """Offer (v, d) to the min-heap of the best k (``h`` entries so far); returns the new size."""
    if h < k:  # sift up
        c = h
        while c > 0:
            par = (c - 1) >> 1
            if _worse(v, d, heap_v[par], heap_d[par], tie_key):
                heap_v[c], heap_d[c] = heap_v[par], heap_d[par]
                c = par
            else:
                break
        heap_v[c], heap_d[c] = v, d
        return h + 1
    if not _worse(heap_v[0], heap_d[0], v, d, tie_key):
        return h
    c = 0  # replace the root, sift down
    while True:
        ch = 2 * c + 1
        if ch >= k:
            break
        if ch + 1 < k and _worse(heap_v[ch + 1], heap_d[ch + 1], heap_v[ch], heap_d[ch], tie_key):
            ch += 1
        if _worse(heap_v[ch], heap_d[ch], v, d, tie_key):
            heap_v[c], heap_d[c] = heap_v[ch], heap_d[ch]
            c = ch
        else:
            break
    heap_v[c], heap_d[c] = v, d
    return h


@_jit
def search_batch(q_ptr, q_cols, indptr, indices, data, n_docs, k, threshold, use_threshold, tie_key, acc):
    """Scores of each query's candidates, cut: ``(counts per query, documents, scores)``.

    ``k <= 0`` means no cut at k; ``use_threshold`` keeps scores >= ``threshold``. ``acc`` is a
    float64 array of ``n_docs`` zeros, left all zero again.
    """
    n_q = len(q_ptr) - 1
    counts = np.zeros(n_q, dtype=np.int64)
    cap = n_q * k if k > 0 else 1 << 16
    out_d = np.empty(cap, dtype=np.int64)
    out_v = np.empty(cap, dtype=np.float64)
    heap_d = np.empty(max(k, 1), dtype=np.int64)
    heap_v = np.empty(max(k, 1), dtype=np.float64)
    n_out = 0
    for qi in range(n_q):
        a, b = q_ptr[qi], q_ptr[qi + 1]
        n_post = 0
        for j in range(a, b):  # token by token, in query order
            t = q_cols[j]
            n_post += indptr[t + 1] - indptr[t]
            for p in range(indptr[t], indptr[t + 1]):
                acc[indices[p]] += data[p]
        if k <= 0 and n_out + n_post > cap:
            cap = max(2 * cap, n_out + n_post)
            grown_d = np.empty(cap, dtype=np.int64)
            grown_v = np.empty(cap, dtype=np.float64)
            grown_d[:n_out] = out_d[:n_out]
            grown_v[:n_out] = out_v[:n_out]
            out_d, out_v = grown_d, grown_v
        # The same postings again: each document's final score once (zeroed as read, so a second
        # visit reads 0.0 and is skipped, as is a score that summed to exactly 0.0).
        h = 0
        start = n_out
        # Scores below ``gate`` cannot be kept: the threshold, then also the k-th best so far
        # (most candidates fail this one comparison).
        gate = threshold if use_threshold else -np.inf
        for j in range(a, b):
            t = q_cols[j]
            for p in range(indptr[t], indptr[t + 1]):
                d = indices[p]
                v = acc[d]
                acc[d] = 0.0
                if v >= gate and v != 0.0:
                    if k <= 0:
                        out_d[n_out] = d
                        out_v[n_out] = v
                        n_out += 1
                    elif h < k or v > heap_v[0] or (v == heap_v[0] and tie_key[d] > tie_key[heap_d[0]]):
                        h = _heap_offer(heap_v, heap_d, h, k, v, d, tie_key)
                        if h == k and heap_v[0] > gate:
                            gate = heap_v[0]
        if k > 0:
            out_d[n_out : n_out + h] = heap_d[:h]
            out_v[n_out : n_out + h] = heap_v[:h]
            n_out += h
        counts[qi] = n_out - start
    return counts, out_d[:n_out], out_v[:n_out]


@_jit
def dense_scores(q_cols, indptr, indices, data, out):
    """One query's score of every document into ``out`` (any contents before; all are written)."""
    for i in range(len(out)):
        out[i] = 0.0
    for j in range(len(q_cols)):
        t = q_cols[j]
        for p in range(indptr[t], indptr[t + 1]):
            out[indices[p]] += data[p]
    return out
