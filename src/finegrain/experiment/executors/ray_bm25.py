"""Sharded BM25 on Ray: the same run as :class:`~finegrain.retrieve.bm25.retriever.BM25Retriever`, bit for bit.

1. The corpus is cut into contiguous shards (corpus order). One task per shard
   tokenizes it and returns its :class:`~finegrain.retrieve.bm25.shard.CorpusStats`;
   the token lists stay in Ray's object store.
2. The driver merges the statistics (N, total length, df per term) and
   tokenizes the queries once.
3. One task per shard indexes its token lists with the merged statistics, so
   each of its documents scores exactly what the single index gives it
   (:mod:`finegrain.retrieve.bm25.shard`); the shard indexes stay in the
   object store (:class:`ShardedBM25`).
4. One task per shard searches it and keeps per query the documents passing
   the threshold, with their raw scores, cut at k by the retriever's tie rule
   (for ``ties="index-order"`` the shard is indexed under :func:`position_keys`,
   so the search's own cut by id is the cut by corpus position).
5. The driver merges the shards' candidates per query: the top k of their
   union under the same total order (score, then the tie rule) is the single
   index's top k; ``ties="index-order"`` then separates equal scores as the
   single search does (:func:`finegrain.retrieve.bm25.search.search_index`),
   over global corpus positions (:func:`finegrain.experiment.executors.shards.merge_candidates`).

Shards are contiguous, so a shard's own id ranks and corpus positions order its
documents as the global ones do, and a cut inside a shard never drops a
document the global cut keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.experiment.executors.shards import Candidates, doc_text, merge_candidates, shard_bounds
from finegrain.ranking import string_ranks
from finegrain.retrieve.bm25 import BM25
from finegrain.retrieve.bm25.shard import corpus_stats, merge_stats
from finegrain.text.tokenizer import get_tokenizer

if TYPE_CHECKING:
    from finegrain.experiment.executors.engine import RayExecutor
    from finegrain.experiment.executors.shards import Candidates
    from finegrain.retrieve.bm25 import BM25
    from finegrain.retrieve.bm25.retriever import BM25Retriever
    from finegrain.retrieve.bm25.shard import CorpusStats
    from finegrain.types import Corpus, Queries, Run

_TOKENIZE_CHUNK = 4096


@dataclass(frozen=True, eq=False)
class ShardedBM25:
    """A BM25 index held as shards in Ray's object store (one :class:`~finegrain.retrieve.bm25.BM25` each,
    weighted with the corpus' merged statistics); :meth:`search` is the single index's search."""

    ex: RayExecutor
    retriever: BM25Retriever
    lang: str
    doc_ids: tuple[str, ...]
    bounds: tuple[tuple[int, int], ...]
    shards: tuple[Any, ...]  # ObjectRefs of the shards' BM25

    @classmethod
    def build(cls, ex: RayExecutor, r: BM25Retriever, corpus: Corpus, *, lang: str) -> ShardedBM25:
        """Tokenize and count per shard, merge the statistics, index each shard with them (steps 1-3)."""

        get_tokenizer(lang, r.tokenizer)  # a bad language fails here, before any task
        ids = corpus.ids
        if not ids:
            raise FinegrainError("cannot index an empty corpus", "pass at least one document")
        texts = [doc_text(d.title, d.text) for d in corpus.values()]
        ray = ex.ray
        bounds = shard_bounds(len(ids), ex.n_shards)
        tokenize = ray.remote(num_returns=2)(_tokenize_shard)
        token_refs, stat_refs = [], []
        for a, b in bounds:
            t_ref, s_ref = tokenize.remote(texts[a:b], lang, r.tokenizer)
            token_refs.append(t_ref)
            stat_refs.append(s_ref)
        del texts
        stats = ray.put(merge_stats(ex.gather(stat_refs, "BM25 tokenize")))
        index = ray.remote(_index_shard)
        params = (r.variant, r.k1, r.b, r.epsilon)
        keys = ids if r.ties == "doc-id" else position_keys(len(ids))
        shards = [index.remote(t_ref, keys[a:b], stats, params) for t_ref, (a, b) in zip(token_refs, bounds)]
        ex.gather(shards, "BM25 index")
        return cls(ex, r, lang, ids, tuple(bounds), tuple(shards))

    def search(self, queries: Queries, *, top_k: int | None) -> Run:
        """The retriever's run for ``queries`` (its threshold, ``top_k`` or its default_k, its tie rule)."""

        r, ex = self.retriever, self.ex
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
            raise FinegrainError(f"top_k={top_k!r} is not a whole number >= 1", "pass top_k=1000 or None")
        qids = list(queries.ids)
        q_ref = ex.ray.put(get_tokenizer(self.lang, r.tokenizer).queries(queries.texts))
        k = top_k if top_k is not None else r.default_k
        search = ex.ray.remote(_search_shard)
        refs = [search.remote(shard, a, q_ref, qids, k, r.threshold)
                for shard, (a, _) in zip(self.shards, self.bounds)]
        parts = ex.gather(refs, "BM25 search")
        ids = self.doc_ids
        tie_key = string_ranks(ids) if r.ties == "doc-id" else -np.arange(len(ids), dtype=np.int64)
        return merge_candidates(parts, qids, ids, k=k, tie_key=tie_key, separate_ties=r.ties == "index-order",
                                name=r.name)


def retrieve_bm25(ex: RayExecutor, r: BM25Retriever, corpus: Corpus, queries: Queries, *, lang: str,
                  top_k: int | None) -> Run:
    """``r.retrieve(corpus, queries, lang=lang, top_k=top_k)`` computed over shards on Ray."""
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise FinegrainError(f"top_k={top_k!r} is not a whole number >= 1", "pass top_k=1000 or None")
    return ShardedBM25.build(ex, r, corpus, lang=lang).search(queries, top_k=top_k)


def position_keys(n: int) -> tuple[str, ...]:
    """Stand-in document ids whose order is the reverse of corpus order: a shard indexed under them cuts
    its top k with the earlier document first among equal scores (``ties="index-order"``) by the id rule,
    in the search's own partial selection, with raw scores. Candidates name documents by position, so
    these ids never reach the run."""
    width = len(str(max(n - 1, 0)))
    return tuple(f"{n - 1 - i:0{width}d}" for i in range(n))


def _tokenize_shard(texts: list[str], lang: str, preset: str) -> tuple[list[list[str]], CorpusStats]:
    """A shard's token lists and corpus statistics (the Ray task of step 1)."""

    tok = get_tokenizer(lang, preset)
    tokens: list[list[str]] = []
    for i in range(0, len(texts), _TOKENIZE_CHUNK):
        tokens.extend(tok.documents(texts[i : i + _TOKENIZE_CHUNK]))
    return tokens, corpus_stats(tokens)


def _index_shard(tokens: list[list[str]], ids: Sequence[str], stats: CorpusStats,
                 params: tuple[str, float, float, float]) -> BM25:
    """One shard's index, weighted with the corpus' statistics (the Ray task of step 3)."""

    variant, k1, b, epsilon = params
    return BM25(variant, k1=k1, b=b, epsilon=epsilon).index(tokens, ids, stats=stats)  # type: ignore[arg-type]


def _search_shard(bm: BM25, offset: int, q_tokens: list[list[str]], qids: list[str], k: int | None,
                  threshold: float | None) -> Candidates:
    """One shard's candidates per query (the Ray task of step 4): raw scores, cut at k by the tie rule."""

    # The search's own cut, by the id rule: real ids ("doc-id"; a shard's id ranks keep the global order) or
    # position_keys ("index-order"); scores stay raw (the driver separates ties after the merge).
    run = bm.search(q_tokens, qids, k=k, threshold=threshold, ties="doc-id", show_progress=False)
    return Candidates.from_run(run, offset)


__all__ = ["ShardedBM25", "retrieve_bm25"]
