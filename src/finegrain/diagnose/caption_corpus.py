"""The caption-corpus retrieval protocol of the explainable-ranking paper (Sections 3.2-3.3, 4).

Text-to-image retrieval is played out with text only: every image ``i`` has a
query ``q_i`` (one of its captions) and a corpus entry ``c_i`` (its *other*
captions, or its region descriptions). Each sentence of ``c_i`` is embedded on
its own and the entry is their average, ``u_ci = (1/l_c) sum_j v_j``; the
paper ranks by cosine similarity, which is the inner product of the
re-normalised average (``renormalise=True``, the default, so scores are
cosines). Every query is scored against all ``N`` entries; the one relevant
item is the query's own image. From the rank ``r_i`` of that image::

    Recall@k  = mean(r_i <= k)                   k = 1, 5, 10
    MRR@k     = mean(1/r_i if r_i <= k else 0)   k = 5, 10; MRR@all = mean(1/r_i)
    median rank = median(r_i)                    (numpy median: x.5 for an even tie)
    fails %   = 100 * mean(r_i != 1)             a failure (I_g, I_r): another image I_r ranked first

Ties are broken by the one rule of :mod:`finegrain.ranking` (score
descending, then item id descending), so the ranks agree with
:func:`finegrain.evaluate.evaluate` on the equivalent :class:`~finegrain.types.Run`
(:func:`top_k_run`), which the tests check.

Everything here is a pure function of texts and vectors except
:func:`run_caption_corpus`, which calls the encoder.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from finegrain.diagnose.concepts.visual_genome import load_vg_regions
from finegrain.errors import DuplicateIdError, FinegrainError
from finegrain.io.flickr8k import load_flickr8k
from finegrain.ranking import string_ranks
from finegrain.retrieve.dense.encoders.cache import CachedEncoder
from finegrain.types import Qrels, Run

RECALL_KS = (1, 5, 10)
MRR_KS = (5, 10)
#: Canonical metric keys (as :mod:`finegrain.metrics.spec` spells them) and the paper's column names.
METRIC_KEYS = ("recall@1", "recall@5", "recall@10", "mrr@5", "mrr@10", "mrr", "median_rank", "fail_rate@1")
PAPER_NAMES = {
    "recall@1": "R@1", "recall@5": "R@5", "recall@10": "R@10", "mrr@5": "MRR@5", "mrr@10": "MRR@10",
    "mrr": "MRR@all", "median_rank": "Median rank", "fail_rate@1": "Fails %",
}
BLOCK = 512  # queries scored at once: a (BLOCK x N) float32 score block


def describe_protocol(*, query_index: int, corpus_unit: str = "caption", renormalise: bool = True) -> str:
    """One paragraph stating the protocol exactly as run (saved in results.json and printed)."""
    avg = ("the mean of their unit embeddings, re-normalised to unit length, so scores are cosine similarities "
           "as in the paper" if renormalise else
           "the plain mean of their unit embeddings (not re-normalised), scored by raw inner product")
    return (
        f"Caption-corpus protocol (explainable-ranking paper, Sec. 3.2-3.3): each item's query is its {corpus_unit} "
        f"#{query_index} (the paper does not say which caption it used); its corpus entry is its remaining "
        f"{corpus_unit}s, each embedded separately, combined as {avg}. Texts are embedded as the dataset writes "
        f"them (not lower-cased, unlike the CapRetrieval protocol's dense retrievers). Every query is scored against every corpus "
        f"entry by inner product; the only relevant entry is the query's own item. Ties: score descending, then "
        f"item id descending. Recall@k = share of queries whose item is within the top k; MRR@k = mean of 1/rank "
        f"counting 0 beyond k (MRR@all: no cut); median rank over all queries; fails % = share of queries whose "
        f"item is not at rank 1 (a failure pairs the ground-truth item with the item ranked first)."
    )


# --------------------------------------------------------------------------- texts


@dataclass(frozen=True, eq=False)
class CaptionCorpus:
    """The texts of the protocol: one query and a group of corpus sentences per item.

    Item ``i``'s corpus sentences are ``sentences[offsets[i]:offsets[i + 1]]``.
    """

    item_ids: tuple[str, ...]
    queries: tuple[str, ...]
    sentences: tuple[str, ...]
    offsets: np.ndarray = field(repr=False)
    query_index: int = 0

    def __len__(self) -> int:
        return len(self.item_ids)

    def group(self, i: int) -> tuple[str, ...]:
        return self.sentences[int(self.offsets[i]) : int(self.offsets[i + 1])]


def build_caption_corpus(items: Iterable[tuple[str, Sequence[str]]], query_index: int = 0) -> CaptionCorpus:
    """Split each item's texts into the query (text ``query_index``) and the corpus group (the others).

    An item needs at least two texts and a text number ``query_index``; ids
    must be unique. Negative ``query_index`` counts from the end (``-1``: last).
    """
    if isinstance(query_index, bool) or not isinstance(query_index, int):
        raise FinegrainError(f"query caption index {query_index!r} is not a whole number", "pass 0 for the first caption")
    ids: list[str] = []
    queries: list[str] = []
    sentences: list[str] = []
    offsets = [0]
    seen: set[str] = set()
    for item_id, texts in items:
        texts = list(texts)
        if item_id in seen:
            raise DuplicateIdError(f"item {item_id!r} appears twice", "give each image once")
        seen.add(item_id)
        if len(texts) < 2:
            raise FinegrainError(f"item {item_id!r} has {len(texts)} text(s); the protocol needs a query and at "
                                 "least one corpus sentence", "drop items with fewer than two captions/regions")
        if not -len(texts) <= query_index < len(texts):
            raise FinegrainError(f"item {item_id!r} has {len(texts)} texts, so it has no text #{query_index}",
                                 f"choose --query-caption between 0 and {len(texts) - 1}")
        q = query_index % len(texts)
        ids.append(item_id)
        queries.append(texts[q])
        sentences.extend(t for j, t in enumerate(texts) if j != q)
        offsets.append(len(sentences))
    if not ids:
        raise FinegrainError("no items to evaluate", "check the dataset and split")
    off = np.asarray(offsets, dtype=np.int64)
    off.setflags(write=False)
    return CaptionCorpus(tuple(ids), tuple(queries), tuple(sentences), off, query_index)


#: Caption-corpus sources and their folder under the data root.
SOURCES = {"flickr8k": "flickr8k", "vg100": "visual_genome_100"}


def load_items(source: str, root: Any, split: str) -> tuple[list[tuple[str, tuple[str, ...]]], str, dict[str, Any]]:
    """``(items, corpus unit, meta)`` of a source's folder ``root``: Flickr8k captions of ``split``, or the
    Visual Genome 100 region descriptions (one split, ``all``)."""
    if source not in SOURCES:
        raise FinegrainError(f"unknown caption-corpus dataset {source!r}", f"use one of {', '.join(SOURCES)}")
    if source == "flickr8k":
        data = load_flickr8k(root, split)
        meta: dict[str, Any] = {"split": split, "n_images": len(data.images),
                                "quirks": [f"line {n}: id {a!r} read as {b!r}" for n, a, b in data.source.renamed]}
        return data.items(), "caption", meta
    if split not in ("all", "test"):
        raise FinegrainError(f"vg100 has no split {split!r}", "use --split all (its 100 images)")

    regions = load_vg_regions(root)
    items = [(str(i), tuple(r)) for i, r in regions.items()]
    return items, "region description", {"split": "all", "n_images": len(items),
                                         "note": "queries are region phrases: the 100-image sample has no COCO captions"}


# --------------------------------------------------------------------------- vectors


def average_groups(vectors: np.ndarray, offsets: np.ndarray, *, renormalise: bool = True) -> np.ndarray:
    """Row ``i``: mean of ``vectors[offsets[i]:offsets[i+1]]``, re-normalised to unit length when asked.

    Every group must be non-empty. The result is float32 ``(len(offsets) - 1, dim)``.
    """
    vectors = np.asarray(vectors, dtype=np.float32)
    offsets = np.asarray(offsets, dtype=np.int64)
    counts = np.diff(offsets)
    if len(counts) == 0 or (counts <= 0).any() or offsets[0] != 0 or offsets[-1] != len(vectors):
        raise FinegrainError("corpus groups must be non-empty and cover every sentence vector exactly once",
                             "build the groups with build_caption_corpus")
    sums = np.add.reduceat(vectors.astype(np.float64), offsets[:-1], axis=0)
    mean = sums / counts[:, None]
    if renormalise:
        norms = np.linalg.norm(mean, axis=1, keepdims=True)
        if (norms == 0).any():
            i = int(np.flatnonzero(norms[:, 0] == 0)[0])
            raise FinegrainError(f"the mean embedding of corpus group {i} is the zero vector", "it cannot be normalised")
        mean = mean / norms
    return np.ascontiguousarray(mean, dtype=np.float32)


def relevant_ranks(
    query_vecs: np.ndarray,
    corpus_vecs: np.ndarray,
    relevant: np.ndarray,
    item_ids: Sequence[str],
    *,
    block: int = BLOCK,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For each query: the 1-based rank of its relevant entry, the entry ranked first, and both scores.

    ``rank = 1 + #(score > s_rel) + #(score == s_rel and id > id_rel)``: the
    one tie rule (score descending, then id descending). Returns ``(ranks,
    top, rel_scores, top_scores)``; ``top`` indexes ``item_ids``.
    """
    q = np.asarray(query_vecs, dtype=np.float32)
    c = np.asarray(corpus_vecs, dtype=np.float32)
    rel = np.asarray(relevant, dtype=np.int64)
    if q.ndim != 2 or c.ndim != 2 or q.shape[1] != c.shape[1] or len(rel) != len(q) or len(item_ids) != len(c):
        raise FinegrainError(f"shapes do not fit: queries {q.shape}, corpus {c.shape}, {len(rel)} relevant, "
                             f"{len(item_ids)} ids", "one relevant index per query and one id per corpus row")
    tie = string_ranks(item_ids)  # larger = wins a tie
    n = len(q)
    ranks = np.empty(n, dtype=np.int64)
    top = np.empty(n, dtype=np.int64)
    rel_scores = np.empty(n, dtype=np.float32)
    top_scores = np.empty(n, dtype=np.float32)
    for a in range(0, n, block):
        b = min(a + block, n)
        s = q[a:b] @ c.T
        r = rel[a:b]
        s_rel = s[np.arange(b - a), r][:, None]
        higher = (s > s_rel).sum(axis=1)
        tied_ahead = ((s == s_rel) & (tie[None, :] > tie[r][:, None])).sum(axis=1)
        ranks[a:b] = 1 + higher + tied_ahead
        best = s.max(axis=1, keepdims=True)
        top[a:b] = np.argmax(np.where(s == best, tie[None, :], -1), axis=1)
        rel_scores[a:b] = s_rel[:, 0]
        top_scores[a:b] = best[:, 0]
    return ranks, top, rel_scores, top_scores


# --------------------------------------------------------------------------- metrics


def per_query_metrics(ranks: np.ndarray) -> dict[str, np.ndarray]:
    """``{metric key: per-query values}`` from the 1-based ranks of the relevant items (see the module doc)."""
    r = np.asarray(ranks, dtype=np.int64)
    if r.ndim != 1 or (r < 1).any():
        raise FinegrainError("ranks must be a 1-d array of whole numbers >= 1", "ranks are 1-based")
    rr = 1.0 / r
    out: dict[str, np.ndarray] = {f"recall@{k}": (r <= k).astype(np.float64) for k in RECALL_KS}
    out.update({f"mrr@{k}": np.where(r <= k, rr, 0.0) for k in MRR_KS})
    out["mrr"] = rr
    out["median_rank"] = r.astype(np.float64)
    out["fail_rate@1"] = (r != 1).astype(np.float64)
    return out


def rank_metrics(ranks: np.ndarray) -> dict[str, float]:
    """The aggregates: means of :func:`per_query_metrics`, except ``median_rank`` (a median)."""
    pq = per_query_metrics(ranks)
    if not len(ranks):
        raise FinegrainError("no ranks to aggregate", "evaluate at least one query")
    return {k: float(np.median(v)) if k == "median_rank" else float(np.mean(v)) for k, v in pq.items()}


# --------------------------------------------------------------------------- run / qrels views


def qrels_for(item_ids: Sequence[str]) -> Qrels:
    """Query ``i`` (named like its item) has exactly one relevant item: itself."""
    return Qrels.from_dict({i: {i: 1} for i in item_ids})


def top_k_run(query_vecs: np.ndarray, corpus_vecs: np.ndarray, item_ids: Sequence[str], *, k: int | None = 100,
              name: str = "caption-corpus", block: int = BLOCK) -> Run:
    """The top ``k`` entries (all with ``k=None``) of every query as a :class:`Run`; query ``i`` is ``item_ids[i]``."""
    q = np.asarray(query_vecs, dtype=np.float32)
    c = np.asarray(corpus_vecs, dtype=np.float32)
    n, m = len(q), len(c)
    kk = m if k is None else min(int(k), m)
    codes, values = [], []
    for a in range(0, n, block):
        s = q[a : a + block] @ c.T
        idx = np.argpartition(-s, kk - 1, axis=1)[:, :kk] if kk < m else np.broadcast_to(np.arange(m), s.shape)
        codes.append(np.asarray(idx, dtype=np.int64))
        values.append(np.take_along_axis(s, idx, axis=1).astype(np.float64))
    offsets = np.arange(n + 1, dtype=np.int64) * kk
    # argpartition may split a tie at the cut; the top-kk set is still a valid top-kk up to ties at rank kk.
    return Run(list(item_ids), offsets, np.concatenate(codes).reshape(-1), list(item_ids),
               np.concatenate(values).reshape(-1), name=name)


# --------------------------------------------------------------------------- the whole protocol


@dataclass(frozen=True, eq=False)
class CaptionCorpusResult:
    """Ranks, scores and aggregates of one protocol run (per-query arrays follow ``corpus.item_ids``)."""

    corpus: CaptionCorpus
    ranks: np.ndarray = field(repr=False)
    top: np.ndarray = field(repr=False)
    rel_scores: np.ndarray = field(repr=False)
    top_scores: np.ndarray = field(repr=False)
    metrics: Mapping[str, float]
    renormalise: bool = True
    encoder: Mapping[str, Any] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    query_vecs: np.ndarray | None = field(default=None, repr=False)
    corpus_vecs: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_failures(self) -> int:
        return int((self.ranks != 1).sum())

    def per_query(self) -> dict[str, dict[str, float]]:
        ids = self.corpus.item_ids
        return {k: dict(zip(ids, v.tolist())) for k, v in per_query_metrics(self.ranks).items()}

    def failures(self) -> list[dict[str, Any]]:
        """Every query whose item is not ranked first, with the item that was (the pair (I_g, I_r))."""
        ids, out = self.corpus.item_ids, []
        for i in np.flatnonzero(self.ranks != 1).tolist():
            out.append({
                "query_id": ids[i], "query": self.corpus.queries[i], "ground_truth": ids[i],
                "rank": int(self.ranks[i]), "retrieved": ids[int(self.top[i])],
                "score_ground_truth": round(float(self.rel_scores[i]), 6),
                "score_retrieved": round(float(self.top_scores[i]), 6),
            })
        return out

    def run(self, k: int | None = 100, name: str = "caption-corpus") -> Run:
        if self.query_vecs is None or self.corpus_vecs is None:
            raise FinegrainError("this result kept no vectors", "run it with keep_vectors=True")
        return top_k_run(self.query_vecs, self.corpus_vecs, self.corpus.item_ids, k=k, name=name)

    def qrels(self) -> Qrels:
        return qrels_for(self.corpus.item_ids)


def _encode(encoder: Any, texts: Sequence[str], kind: str, desc: str) -> np.ndarray:
    if isinstance(encoder, CachedEncoder):
        return encoder.encode(texts, kind=kind, desc=desc)  # type: ignore[arg-type]
    return np.asarray(encoder.encode(list(texts), kind=kind), dtype=np.float32)


def evaluate_vectors(corpus: CaptionCorpus, query_vecs: np.ndarray, sentence_vecs: np.ndarray, *,
                     renormalise: bool = True, keep_vectors: bool = True) -> CaptionCorpusResult:
    """The protocol from already-encoded queries and corpus sentences (no model involved)."""
    if len(query_vecs) != len(corpus) or len(sentence_vecs) != len(corpus.sentences):
        raise FinegrainError(f"got {len(query_vecs)} query and {len(sentence_vecs)} sentence vectors for "
                             f"{len(corpus)} queries and {len(corpus.sentences)} sentences", "encode every text once")
    t0 = time.perf_counter()
    entries = average_groups(sentence_vecs, corpus.offsets, renormalise=renormalise)
    ranks, top, rel_s, top_s = relevant_ranks(query_vecs, entries, np.arange(len(corpus)), corpus.item_ids)
    return CaptionCorpusResult(
        corpus, ranks, top, rel_s, top_s, rank_metrics(ranks), renormalise,
        timings={"rank_seconds": round(time.perf_counter() - t0, 3)},
        query_vecs=np.asarray(query_vecs, dtype=np.float32) if keep_vectors else None,
        corpus_vecs=entries if keep_vectors else None,
    )


def run_caption_corpus(corpus: CaptionCorpus, encoder: Any, *, renormalise: bool = True,
                       keep_vectors: bool = True) -> CaptionCorpusResult:
    """Encode the queries (kind ``query``) and corpus sentences (kind ``passage``), then rank and score.

    ``encoder`` is any :class:`~finegrain.retrieve.dense.encoders.base.Encoder`; wrap
    it in a :class:`~finegrain.retrieve.dense.encoders.cache.CachedEncoder` to use the
    on-disk embedding cache (its hit/miss counts are then recorded).
    """
    t0 = time.perf_counter()
    qv = _encode(encoder, corpus.queries, "query", "encode queries")
    sv = _encode(encoder, corpus.sentences, "passage", "encode corpus sentences")
    encode_s = time.perf_counter() - t0
    res = evaluate_vectors(corpus, qv, sv, renormalise=renormalise, keep_vectors=keep_vectors)
    stats = getattr(encoder, "stats", None)
    info: dict[str, Any] = {"model_id": getattr(encoder, "model_id", None), "dim": int(qv.shape[1])}
    config = getattr(encoder, "config", None)
    if callable(config):
        info["config"] = config()
    if stats is not None and hasattr(stats, "to_dict"):
        info["texts"] = stats.to_dict()
    timings = {"encode_seconds": round(encode_s, 3), **res.timings}
    return CaptionCorpusResult(res.corpus, res.ranks, res.top, res.rel_scores, res.top_scores, res.metrics,
                               renormalise, info, timings, res.query_vecs, res.corpus_vecs)


def diagnose_failures(
    failures: Sequence[Mapping[str, Any]],
    objects: Mapping[str, Any],
    concept_scores: Callable[..., Any],
    *,
    query_informed: bool = False,
) -> list[dict[str, Any]]:
    """Each failure with the concept scores of its ground-truth objects against the retrieved image's.

    ``objects`` maps item id to what ``concept_scores(gt, retrieved, query=...)``
    takes (e.g. a Visual Genome object list); the query text is passed when
    ``query_informed``. A failure whose images lack objects gets ``concepts: None``.
    """
    out = []
    for f in failures:
        gt, ret = objects.get(f["ground_truth"]), objects.get(f["retrieved"])
        scores = None
        if gt is not None and ret is not None:
            scores = _as_dict(concept_scores(gt, ret, query=f["query"] if query_informed else None))
        out.append({**f, "concepts": scores})
    return out


def _as_dict(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _as_dict(v) for k, v in value.items()}
    if hasattr(value, "to_dict"):
        return value.to_dict()

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, np.generic):
        return value.item()
    return value
