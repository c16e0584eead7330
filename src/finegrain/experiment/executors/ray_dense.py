"""Dense retrieval on Ray: encoding on Ray Data (cached), search over document shards, exact top-k merge.

The texts are those of :class:`~finegrain.retrieve.dense.retriever.DenseRetriever`
(normalised, templated, same cache keys). The document vectors are cut into
contiguous shards; one task per shard searches its rows with a
:class:`~finegrain.retrieve.dense.index.DenseIndex` (threshold, then top k,
boundary ties to the higher document id), and the driver keeps per query the
top k of the union (:func:`finegrain.experiment.executors.shards.merge_candidates`), which is
the top k of the whole corpus for the scores the shards computed.

About "the same scores": a score is a float32 inner product from a BLAS matrix
product, whose summation order depends on the shapes it is given; the local
search itself blocks queries by corpus size. A shard's product can therefore
differ from the single-process product in the last bits (about 1e-7 relative),
and documents whose scores are that close may swap. Where the products are
exact (vectors of small dyadic fractions, as in the tests) the sharded run
equals the single-process run bit for bit.

Vector PRF (``prf_depth`` > 0) searches twice the same way: the first search's top passages move each
query vector (:mod:`finegrain.retrieve.dense.prf`), and the moved vectors are searched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.experiment.executors.ray_encode import encode_cached
from finegrain.experiment.executors.shards import Candidates, doc_text, merge_candidates, shard_bounds
from finegrain.ranking import string_ranks
from finegrain.retrieve.dense.index import DenseIndex
from finegrain.retrieve.dense.prf import feedback_rows, moved_queries

if TYPE_CHECKING:
    from finegrain.experiment.executors.engine import RayExecutor
    from finegrain.experiment.executors.shards import Candidates
    from finegrain.retrieve.dense.retriever import DenseRetriever
    from finegrain.types import Corpus, Queries, Run


def retrieve_dense(ex: RayExecutor, r: DenseRetriever, corpus: Corpus, queries: Queries, *, lang: str,
                   top_k: int | None) -> Run:
    """``r.retrieve(corpus, queries, lang=lang, top_k=top_k)`` with encoding and search on Ray."""

    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise FinegrainError(f"top_k={top_k!r} is not a whole number >= 1", "pass top_k=1000 or None")
    prompting = r.prompting(lang)
    workers = ex.n_workers
    p_texts = prompting.templates.apply(r.normalise([doc_text(d.title, d.text) for d in corpus.values()]), "passage")
    doc_vecs, p_stats = encode_cached(ex.ray, r, p_texts, kind="passage", workers=workers,
                                      show_progress=ex.show_progress)
    q_texts = prompting.templates.apply(r.normalise(queries.texts), "query")
    q_vecs, q_stats = encode_cached(ex.ray, r, q_texts, kind="query", workers=workers, show_progress=ex.show_progress)
    ex.stats["texts"] = {k: p_stats[k] + q_stats[k] for k in p_stats}
    index_options = {"backend": r.backend, "faiss_kind": r.faiss_kind, "nprobe": r.nprobe, "ef_search": r.ef_search}
    feedback = r.feedback()
    if feedback.depth:
        first = search_sharded(ex, doc_vecs, corpus.ids, q_vecs, queries.ids, k=feedback.depth, threshold=None,
                               name=r.name, index_options=index_options)
        rows = feedback_rows(first, queries.ids, corpus.ids, feedback.depth)
        q_vecs = moved_queries(q_vecs, doc_vecs, rows, feedback)
    return search_sharded(ex, doc_vecs, corpus.ids, q_vecs, queries.ids, k=top_k if top_k is not None else r.default_k,
                          threshold=r.threshold, name=r.name, index_options=index_options)


def search_sharded(ex: RayExecutor, doc_vecs: np.ndarray, doc_ids: Sequence[str], q_vecs: np.ndarray,
                   qids: Sequence[str], *, k: int | None, threshold: float | None, name: str = "dense",
                   index_options: dict[str, Any] | None = None) -> Run:
    """:meth:`DenseIndex.search <finegrain.retrieve.dense.index.DenseIndex.search>` over document shards on Ray,
    merged exactly (see the module docstring)."""

    v = np.asarray(doc_vecs)
    if v.ndim != 2 or len(v) != len(doc_ids):
        raise FinegrainError(f"got document vectors of shape {v.shape} for {len(doc_ids)} document ids",
                             "pass one row per document id")
    if k is None and threshold is None:
        raise FinegrainError("dense search needs k, threshold or both", "pass k=1000, threshold=0.8, or both")
    ids = tuple(doc_ids)
    ray = ex.ray
    q_ref = ray.put(np.ascontiguousarray(q_vecs, dtype=np.float32))
    task = ray.remote(_search_shard)
    refs = [task.remote(ray.put(np.ascontiguousarray(v[a:b], dtype=np.float32)), ids[a:b], a, q_ref, list(qids), k,
                        threshold, dict(index_options or {}))
            for a, b in shard_bounds(len(ids), ex.n_shards)]
    parts = ex.gather(refs, "dense search")
    return merge_candidates(parts, list(qids), ids, k=k, tie_key=string_ranks(ids), name=name)


def _search_shard(vecs: np.ndarray, ids: tuple[str, ...], offset: int, q_vecs: np.ndarray, qids: list[str],
                  k: int | None, threshold: float | None, index_options: dict[str, Any]) -> Candidates:
    """One shard's top k per query, boundary ties to the higher id (the Ray task)."""

    run = DenseIndex(vecs, ids, **index_options).search(q_vecs, qids, k=k, threshold=threshold, show_progress=False)
    return Candidates.from_run(run, offset)
