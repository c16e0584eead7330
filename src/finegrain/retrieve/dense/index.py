"""Inner-product search over document vectors: exact in numpy or FAISS, top-k and threshold; results are a Run.

:class:`DenseIndex` holds the corpus vectors (float32, one row per document)
and answers a block of queries at a time:

* ``backend="numpy"`` — one matrix product per block of queries, then
  ``argpartition`` for the top k. Above :data:`DOC_TILE` documents the
  documents are scored a tile at a time and each query keeps a running top k.
  Blocks are sized so a block's score tile and candidates stay under about
  256 MB (``block_size``, queries per block, overrides it).
* ``backend="faiss"`` — ``faiss.IndexFlatIP`` (exact, the default
  ``faiss_kind="flat"``), or approximate ``"ivf"`` (IndexIVFFlat, ``nlist``
  cells, ``nprobe`` searched, trained on ``train_size`` vectors) and ``"hnsw"``
  (IndexHNSWFlat, ``hnsw_m`` links, ``ef_search``). Thresholds use
  ``range_search``. ``search(..., nprobe=, ef_search=)`` overrides the search
  setting for one call, so one built index can be swept.
  ``benchmarks/dense_scale.py`` measures IVF on 1M 384-d vectors (build time,
  memory, queries/s, recall@10 against exact search).
* ``backend="auto"`` (default) — FAISS for the approximate kinds; for exact
  search, numpy below :data:`AUTO_FAISS_MIN_DOCS` documents and FAISS flat from
  there on (when faiss-cpu is installed). The cut is ``None`` (numpy always)
  because on the shared 2-core machine it was chosen on, numpy's tiled search
  was as fast as ``IndexFlatIP`` or faster at every size from 10k to 1M
  documents (``benchmarks/dense_throughput.py``; figures in
  ``docs/results/scale.md``): FAISS's OpenMP threads suffer most when the
  cores are shared, and its flat index holds a second copy of the vectors. Set
  the constant (or pass ``backend="faiss"``) where FAISS wins.

Search semantics (the same in every exact backend):

* ``threshold`` keeps documents scoring >= it; ``k`` keeps the best k (after
  the threshold when both are given); at least one is needed.
* A cut at k never splits ties arbitrarily: among documents scoring exactly
  the k-th score, those with the higher document id win, which is the order in
  which the :class:`~finegrain.types.Run` ranks them (:mod:`finegrain.ranking`).
  So numpy and FAISS return the same documents whenever they compute the same
  scores. Scores are the float32 inner products, stored as float64.
* Approximate FAISS kinds return what the index finds (no tie repair); they
  exist for corpora too large for exact search and are never chosen by
  ``"auto"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from importlib.util import find_spec
from typing import Any, Literal

import numpy as np
from tqdm.auto import tqdm

from finegrain._lazy import require
from finegrain.errors import (
    FinegrainError,
    UnknownNameError,
    check_unique_ids,
)
from finegrain.ranking import string_ranks, top_k_positions
from finegrain.types import Run

Backend = Literal["auto", "numpy", "faiss"]
BACKENDS: tuple[str, ...] = ("auto", "numpy", "faiss")
FAISS_KINDS: tuple[str, ...] = ("flat", "ivf", "hnsw")

#: ``backend="auto"`` uses FAISS (flat) from this many documents on; None: never (see the module docstring).
AUTO_FAISS_MIN_DOCS: int | None = None
#: Target size of one block's score matrix (numpy backend).
BLOCK_BYTES = 256 << 20
MAX_BLOCK = 1024
#: Documents scored at a time for larger corpora (numpy backend): bounds memory, keeps the matrix product fast.
DOC_TILE = 65_536
_FAISS_BLOCK = 1024


class DenseIndex:
    """Document vectors and their ids, searchable by inner product (see the module docstring).

    ``vectors`` is ``(n_docs, dim)``, any real dtype (stored as C-contiguous
    float32); ``doc_ids`` are unique strings in row order.
    """

    def __init__(
        self,
        vectors: np.ndarray,
        doc_ids: Sequence[str],
        *,
        backend: Backend = "auto",
        faiss_kind: str = "flat",
        nlist: int | None = None,
        nprobe: int = 16,
        hnsw_m: int = 32,
        ef_search: int = 128,
        train_size: int | None = None,
        block_size: int | None = None,
    ) -> None:
        v = np.asarray(vectors)
        if v.ndim != 2 or not np.issubdtype(v.dtype, np.number) or np.iscomplexobj(v):
            raise FinegrainError(
                f"document vectors must be a 2-D real array, got {v.dtype} of shape {v.shape}",
                "pass an (n_docs, dim) float32 array",
            )
        v = np.ascontiguousarray(v, dtype=np.float32)
        if len(doc_ids) != len(v):
            raise FinegrainError(
                f"got {len(v)} document vectors for {len(doc_ids)} document ids",
                "pass one id per row, in row order",
            )
        if not np.isfinite(v).all():
            row = int(np.flatnonzero(~np.isfinite(v).all(axis=1))[0])
            raise FinegrainError(f"the vector of document {doc_ids[row]!r} has NaN or infinite values",
                                 "check the encoder output")
        ids = tuple(doc_ids)
        check_unique_ids(ids, "document id", " in the index")
        if backend not in BACKENDS:
            raise UnknownNameError("dense search backend", str(backend), BACKENDS)
        if faiss_kind not in FAISS_KINDS:
            raise UnknownNameError("faiss index kind", str(faiss_kind), FAISS_KINDS)
        for name, val, low in (("nprobe", nprobe, 1), ("hnsw_m", hnsw_m, 2), ("ef_search", ef_search, 1)):
            _check_int(name, val, low)
        if nlist is not None:
            _check_int("nlist", nlist, 1)
            if faiss_kind == "ivf" and len(v) and nlist > len(v):
                raise FinegrainError(
                    f"nlist={nlist} is more than the {len(v)} documents: IVF needs a training vector per cell",
                    f"pass nlist <= {len(v)} (about 4*sqrt(n_docs) = {max(1, round(4 * np.sqrt(len(v))))} is usual), "
                    "or leave nlist out",
                )
        if train_size is not None:
            _check_int("train_size", train_size, 1)
        if block_size is not None:
            _check_int("block_size", block_size, 1)
        v = v.view()  # read-only view: the caller's array stays writable
        v.setflags(write=False)
        self.vectors = v
        self.doc_ids = ids
        self.faiss_kind = faiss_kind
        self.nlist = nlist
        self.nprobe = nprobe
        self.hnsw_m = hnsw_m
        self.ef_search = ef_search
        self.train_size = train_size
        self.block_size = block_size
        self.requested_backend = backend
        if backend == "auto":
            if faiss_kind != "flat":
                backend = "faiss"  # approximate search exists only there
            elif AUTO_FAISS_MIN_DOCS is not None and len(v) >= AUTO_FAISS_MIN_DOCS and _has_faiss():
                backend = "faiss"
            else:
                backend = "numpy"
        elif backend == "numpy" and faiss_kind != "flat":
            raise FinegrainError(f"faiss_kind={faiss_kind!r} needs backend='faiss'", "set backend=faiss")
        self.backend: str = backend
        self._faiss: Any = self._build_faiss() if backend == "faiss" else None  # faiss ships no type stubs

    # -- description -------------------------------------------------------------

    @property
    def n_docs(self) -> int:
        return len(self.vectors)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __repr__(self) -> str:
        kind = f", {self.faiss_kind}" if self.backend == "faiss" else ""
        return f"DenseIndex({self.n_docs} x {self.dim}, {self.backend}{kind})"

    def config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {"backend": self.backend, "requested_backend": self.requested_backend,
                               "n_docs": self.n_docs, "dim": self.dim, "exact": self.exact}
        if self.backend == "faiss":
            cfg["faiss_kind"] = self.faiss_kind
            if self.faiss_kind == "ivf":
                cfg.update(nlist=self._nlist, nprobe=min(self.nprobe, self._nlist), train_size=self._train_size)
            elif self.faiss_kind == "hnsw":
                cfg.update(hnsw_m=self.hnsw_m, ef_search=self.ef_search)
        return cfg

    @property
    def exact(self) -> bool:
        return self.backend == "numpy" or self.faiss_kind == "flat"

    @cached_property
    def _tie_key(self) -> np.ndarray:
        """Higher wins among equal scores: the rank of each document id (the Run rule: id descending)."""
        return string_ranks(self.doc_ids)

    # -- search -------------------------------------------------------------------

    def search(
        self,
        queries: np.ndarray,
        qids: Sequence[str],
        *,
        k: int | None = None,
        threshold: float | None = None,
        name: str = "dense",
        show_progress: bool = False,
        nprobe: int | None = None,
        ef_search: int | None = None,
    ) -> Run:
        """Rank the documents for each query vector; one Run entry per query id (possibly empty).

        ``nprobe`` (IVF) and ``ef_search`` (HNSW) override the index's setting for this call only.
        """

        for label, value, kind in (("nprobe", nprobe, "ivf"), ("ef_search", ef_search, "hnsw")):
            if value is None:
                continue
            _check_int(label, value, 1)
            if self.backend != "faiss" or self.faiss_kind != kind:
                raise FinegrainError(f"{label} is a setting of the faiss {kind} index, not of {self!r}",
                                     f"build DenseIndex(..., backend='faiss', faiss_kind='{kind}') or drop {label}")
        if nprobe is not None or ef_search is not None:
            saved = self._search_params()
            self._set_search_params(nprobe, ef_search)
            try:
                return self.search(queries, qids, k=k, threshold=threshold, name=name, show_progress=show_progress)
            finally:
                self._set_search_params(*saved)

        q = np.asarray(queries)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise FinegrainError(
                f"query vectors have shape {q.shape}, the index holds {self.dim}-d vectors",
                f"pass an (n_queries, {self.dim}) array from the same encoder as the documents",
            )
        q = np.ascontiguousarray(q, dtype=np.float32)
        if len(qids) != len(q):
            raise FinegrainError(f"got {len(q)} query vectors for {len(qids)} query ids",
                                 "pass one id per row, in row order")
        if k is None and threshold is None:
            raise FinegrainError("dense search needs k, threshold or both", "pass k=1000, threshold=0.8, or both")
        if k is not None:
            _check_int("k", k, 1)
        if threshold is not None and not (isinstance(threshold, (int, float, np.floating))
                                          and not isinstance(threshold, bool) and np.isfinite(threshold)):
            raise FinegrainError(f"threshold={threshold!r} is not a finite number", "pass threshold=0.8, say")
        if not np.isfinite(q).all():
            row = int(np.flatnonzero(~np.isfinite(q).all(axis=1))[0])
            raise FinegrainError(f"the vector of query {qids[row]!r} has NaN or infinite values",
                                 "check the encoder output")

        n_q, n = len(q), self.n_docs
        kk = None if k is None else min(int(k), n)
        thr = None if threshold is None else float(threshold)
        counts: list[np.ndarray] = []
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        if n and n_q:
            step = self._block(n, kk) if self.backend == "numpy" else _FAISS_BLOCK
            with tqdm(total=n_q, desc="dense search", unit="query", disable=not show_progress, leave=False) as bar:
                for a in range(0, n_q, step):
                    qb = q[a : a + step]
                    if self.backend == "numpy":
                        c, d, s = self._numpy_block(qb, kk, thr)
                    else:
                        c, d, s = self._faiss_block(qb, kk, thr)
                    counts.append(c)
                    cols.append(d)
                    vals.append(s)
                    bar.update(len(qb))
        offsets = np.zeros(n_q + 1, dtype=np.int64)
        if counts:
            np.cumsum(np.concatenate(counts), out=offsets[1:])
        doc_codes = np.concatenate(cols).astype(np.int64, copy=False) if cols else np.empty(0, dtype=np.int64)
        scores = np.concatenate(vals).astype(np.float64) if vals else np.empty(0, dtype=np.float64)
        return Run(tuple(qids), offsets, doc_codes, self.doc_ids, scores, name=name, check=False)

    def _block(self, n: int, k: int | None) -> int:
        """Queries per block: a block's score tile (and its top-k candidates) stays near :data:`BLOCK_BYTES`."""
        if self.block_size is not None:
            return self.block_size
        # per cell: score (4 bytes) + argpartition index (8) + a comparison mask (1), with room to spare
        return int(max(1, min(MAX_BLOCK, BLOCK_BYTES // (16 * (min(n, DOC_TILE) + (k or 0))))))

    # -- numpy --------------------------------------------------------------------

    def _numpy_block(self, qb: np.ndarray, k: int | None, thr: float | None) -> tuple[np.ndarray, ...]:
        if self.n_docs > DOC_TILE:
            return self._tiled_block(qb, k, thr)
        S = qb @ self.vectors.T  # (b, n) float32
        b, n = S.shape
        if thr is None:
            assert k is not None  # search() checked that one is given
            if k >= n:
                return np.full(b, n, dtype=np.int64), np.tile(np.arange(n), b), S.reshape(-1)
            top = self._top_k_rows(S, k)
            return np.full(b, k, dtype=np.int64), top.reshape(-1), np.take_along_axis(S, top, 1).reshape(-1)
        mask = S >= thr
        cnt = mask.sum(axis=1)
        big = np.zeros(b, dtype=bool) if k is None or k >= n else cnt > k
        if big.any():
            mask[big] = False
        rows, cs = np.nonzero(mask)
        counts = np.where(big, k or 0, cnt).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)])
        out = np.empty(int(offsets[-1]), dtype=np.int64)
        if len(rows):
            within = np.arange(len(rows)) - np.searchsorted(rows, rows, side="left")
            out[offsets[rows] + within] = cs
        if big.any():
            assert k is not None
            brows = np.flatnonzero(big)
            top = self._top_k_rows(S[brows], k)
            out[(offsets[brows][:, None] + np.arange(k)).reshape(-1)] = top.reshape(-1)
        seg = np.repeat(np.arange(b), counts)
        return counts, out, S[seg, out]

    def _top_k_rows(self, S: np.ndarray, k: int) -> np.ndarray:
        """Column indices ``(b, k)`` of each row's k best, boundary ties broken by the Run rule."""
        n = S.shape[1]
        top = np.argpartition(S, n - k, axis=1)[:, n - k :]
        kth = np.take_along_axis(S, top, 1).min(axis=1)
        tied_rows = np.flatnonzero((S >= kth[:, None]).sum(axis=1) > k)
        for r in tied_rows.tolist():
            top[r] = top_k_positions(S[r], np.arange(n), k, self._tie_key)
        return top

    def _tiled_block(self, qb: np.ndarray, k: int | None, thr: float | None) -> tuple[np.ndarray, ...]:
        """Large corpora: score :data:`DOC_TILE` documents at a time, keep a running top k per query.

        A document dropped at a tile or merge step with a score equal to the
        step's k-th score marks its query: if that score turns out to be the
        final k-th score, the query is searched again for every document near
        that score and cut by the Run rule, as in the one-tile case.
        """
        b, n = len(qb), self.n_docs
        if thr is not None or k is None or k >= n:
            rows = self._tiled_collect(qb, np.full(b, -np.inf if thr is None else thr, dtype=np.float32))
            if k is not None:
                rows = [(d[sel], v[sel]) for d, v in rows for sel in [top_k_positions(v, d, k, self._tie_key)]]
            return _pack(rows)
        best_v = np.empty((b, 0), dtype=np.float32)
        best_i = np.empty((b, 0), dtype=np.int64)
        tie_val = np.full(b, -np.inf, dtype=np.float32)
        for c0 in range(0, n, DOC_TILE):
            S = qb @ self.vectors[c0 : c0 + DOC_TILE].T
            m = S.shape[1]
            if m > k:
                p = np.argpartition(S, m - k, axis=1)[:, m - k :]
                pv = np.take_along_axis(S, p, 1)
                tie_val = _note_dropped_ties(S, pv, k, tie_val)
            else:
                p, pv = np.broadcast_to(np.arange(m), (b, m)), S
            cv = np.concatenate([best_v, pv], axis=1)
            ci = np.concatenate([best_i, p + c0], axis=1)
            if cv.shape[1] > k:
                sel = np.argpartition(cv, cv.shape[1] - k, axis=1)[:, cv.shape[1] - k :]
                best_v = np.take_along_axis(cv, sel, 1)
                best_i = np.take_along_axis(ci, sel, 1)
                tie_val = _note_dropped_ties(cv, best_v, k, tie_val)
            else:
                best_v, best_i = cv, ci
        kth = best_v.min(axis=1)
        fix = np.flatnonzero(tie_val >= kth)
        if len(fix):
            # every document within rounding of the k-th score, scored in one pass per query
            margin = 1e-5 * np.maximum(1.0, np.abs(kth[fix]))
            again = self._tiled_collect(qb[fix], (kth[fix] - margin).astype(np.float32))
            for r, (d, v) in zip(fix.tolist(), again):
                sel = top_k_positions(v, d, k, self._tie_key)
                best_i[r], best_v[r] = d[sel], v[sel]
        return np.full(b, k, dtype=np.int64), best_i.reshape(-1), best_v.reshape(-1)

    def _tiled_collect(self, qb: np.ndarray, thr: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each query, every ``(doc, score)`` with score >= its threshold, tile by tile."""
        b = len(qb)
        docs: list[list[np.ndarray]] = [[] for _ in range(b)]
        vals: list[list[np.ndarray]] = [[] for _ in range(b)]
        for c0 in range(0, self.n_docs, DOC_TILE):
            S = qb @ self.vectors[c0 : c0 + DOC_TILE].T
            rows, cs = np.nonzero(S >= thr[:, None])
            v = S[rows, cs]
            bounds = np.searchsorted(rows, np.arange(b + 1))
            for r in np.flatnonzero(np.diff(bounds)).tolist():
                docs[r].append(cs[bounds[r] : bounds[r + 1]] + c0)
                vals[r].append(v[bounds[r] : bounds[r + 1]])
        return [(_cat(d, np.int64), _cat(v, np.float32)) for d, v in zip(docs, vals)]

    # -- faiss --------------------------------------------------------------------

    def _search_params(self) -> tuple[int | None, int | None]:
        if self.faiss_kind == "ivf":
            return int(self._faiss.nprobe), None
        if self.faiss_kind == "hnsw":
            return None, int(self._faiss.hnsw.efSearch)
        return None, None

    def _set_search_params(self, nprobe: int | None, ef_search: int | None) -> None:
        if nprobe is not None:
            self._faiss.nprobe = min(nprobe, self._nlist)
        if ef_search is not None:
            self._faiss.hnsw.efSearch = ef_search

    def _build_faiss(self) -> Any:
        faiss = _import_faiss()
        n, d = self.vectors.shape
        if self.faiss_kind == "flat":
            index = faiss.IndexFlatIP(d)
        elif self.faiss_kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efSearch = self.ef_search
        else:
            nlist = self._nlist
            quantizer = faiss.IndexFlatIP(d)
            index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
            if n:
                index.train(self._training_vectors())
            index.nprobe = min(self.nprobe, nlist)
            self._quantizer = quantizer  # the IVF index does not own it: keep it alive
        if n:
            index.add(self.vectors)
        return index

    @cached_property
    def _train_size(self) -> int:
        """Vectors the IVF cells are trained on: ``train_size`` (at least one per cell, at most all), else all
        (FAISS then samples 256 per cell itself)."""
        n = self.n_docs
        if self.train_size is None:
            return n
        if self.train_size < self._nlist:
            raise FinegrainError(
                f"train_size={self.train_size} is less than nlist={self._nlist}: IVF needs a training vector per cell",
                f"pass train_size >= {self._nlist} (39 per cell or more trains well), or leave it out",
            )
        return min(self.train_size, n)

    def _training_vectors(self) -> np.ndarray:
        """A seeded sample of ``_train_size`` rows (all rows when it is every document)."""
        n, m = self.n_docs, self._train_size
        if m >= n:
            return self.vectors
        rows = np.sort(np.random.default_rng(0).choice(n, size=m, replace=False))
        return np.ascontiguousarray(self.vectors[rows])

    @cached_property
    def _nlist(self) -> int:
        if self.nlist is not None:
            return self.nlist
        n = self.n_docs
        return int(max(1, min(round(4 * np.sqrt(max(n, 1))), n // 39 or 1)))

    def _faiss_block(self, qb: np.ndarray, k: int | None, thr: float | None) -> tuple[np.ndarray, ...]:
        index, n = self._faiss, self.n_docs
        if thr is not None:
            return self._faiss_range(qb, k, thr)
        assert k is not None
        exact = self.exact
        ask = min(n, k + 1) if exact and k < n else k
        D, ids = index.search(qb, ask)
        counts = np.empty(len(qb), dtype=np.int64)
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        for r in range(len(qb)):
            d, i = D[r, :k], ids[r, :k]
            if exact and ask > k and D[r, k] == D[r, k - 1]:
                # a tie crosses the cut: fetch every document near the k-th score and apply the Run rule
                kth = float(D[r, k - 1])
                lims, rd, ri = index.range_search(qb[r : r + 1], kth - 1e-5 * max(1.0, abs(kth)))
                sel = top_k_positions(rd, ri, k, self._tie_key)
                d, i = rd[sel], ri[sel]
            keep = i >= 0
            counts[r] = int(keep.sum())
            cols.append(i[keep])
            vals.append(d[keep])
        return counts, np.concatenate(cols), np.concatenate(vals)

    def _faiss_range(self, qb: np.ndarray, k: int | None, thr: float) -> tuple[np.ndarray, ...]:
        radius = float(np.nextafter(np.float32(thr), np.float32(-np.inf)))  # faiss keeps score > radius
        try:
            lims, D, ids = self._faiss.range_search(qb, radius)
        except RuntimeError as e:
            raise FinegrainError(
                f"faiss index kind {self.faiss_kind!r} cannot do threshold search ({str(e).splitlines()[0]})",
                "use faiss_kind=flat or ivf, or backend=numpy, for thresholds",
            ) from None
        counts = np.empty(len(qb), dtype=np.int64)
        cols: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        for r in range(len(qb)):
            d, i = D[lims[r] : lims[r + 1]], ids[lims[r] : lims[r + 1]]
            keep = d >= thr
            d, i = d[keep], i[keep]
            if k is not None and len(d) > k:
                sel = top_k_positions(d, i, k, self._tie_key)
                d, i = d[sel], i[sel]
            counts[r] = len(d)
            cols.append(i)
            vals.append(d)
        return counts, np.concatenate(cols), np.concatenate(vals)


def _note_dropped_ties(cand: np.ndarray, kept: np.ndarray, k: int, tie_val: np.ndarray) -> np.ndarray:
    """Raise ``tie_val`` of the rows where a candidate equal to the kept k-th score was dropped."""
    kth = kept.min(axis=1)
    dropped_tie = (cand >= kth[:, None]).sum(axis=1) > k
    return np.where(dropped_tie, np.maximum(tie_val, kth), tie_val)


def _pack(rows: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = np.array([len(d) for d, _ in rows], dtype=np.int64)
    return counts, _cat([d for d, _ in rows], np.int64), _cat([v for _, v in rows], np.float32)


def _cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.empty(0, dtype=dtype)


def _check_int(name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise FinegrainError(f"{name}={value!r} is not a whole number >= {low}", f"pass {name} as a whole number")


def _has_faiss() -> bool:
    return find_spec("faiss") is not None


def _import_faiss() -> Any:
    return require("faiss", "dense", "faiss-cpu")
