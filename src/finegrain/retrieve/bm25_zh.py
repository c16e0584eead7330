"""BM25 variants for Chinese: ``bm25-okapi`` with another tokenizer, all else equal.

Each is :class:`~finegrain.retrieve.lexical.BM25Retriever` with the CapRetrieval
paper's BM25 (rank_bm25's BM25Okapi, k1=1.5, b=0.75, epsilon=0.25, scores >=
1e-3, stable sort) and one tokenizer preset of :mod:`finegrain.text.tokenizer`:

* ``bm25-okapi-search`` -- jieba search mode (``lcut_for_search``) on both
  sides (``bm25-okapi`` cuts queries in precise mode);
* ``bm25-okapi-precise`` -- jieba precise mode (``lcut``) on both sides;
* ``bm25-okapi-bigram`` -- overlapping character bigrams of CJK runs, other
  words whole, Lucene ``CJKAnalyzer`` style (:mod:`finegrain.text.bigrams`).

On ``en`` every preset is the English tokenizer, so these equal ``bm25-okapi``
there. The preset is recorded in the retriever's config and a BM25 index saved
with it restores the same tokenizer (:meth:`finegrain.retrieve.bm25.BM25.load`).

On capretrieval/zh, run once each (nothing tuned), nDCG@1/@5/@10 x100, with
``finegrain compare`` against ``bm25-okapi`` (74.40 / 69.30 / 66.54; Holm-adjusted
paired tests over 377 queries):

* ``bm25-okapi-search``  76.66 / 71.56 / 69.29 (+2.74 at @10, p < 0.001);
* ``bm25-okapi-precise`` 70.82 / 64.84 / 61.66 (-4.89, p < 0.001);
* ``bm25-okapi-bigram``  71.22 / 67.52 / 65.81 (-0.74, p = 0.54);
* ``bm25-jieba-bigram``  75.73 / 71.37 / 68.99 (+2.44, p = 0.004), the RRF of
  ``bm25-okapi`` and ``bm25-okapi-bigram`` (:mod:`finegrain.retrieve.fused`).

Search mode on the query side helps: its sub-words (中华人民共和国 also gives
中华, 人民, 共和国) match captions that jieba cut differently.
"""

from __future__ import annotations

from typing import Any

from finegrain.retrieve.lexical import BM25Retriever
from finegrain.retrieve.registry import RETRIEVERS

#: retriever name -> tokenizer preset
TOKENIZERS: dict[str, str] = {
    "bm25-okapi-search": "jieba-search",
    "bm25-okapi-precise": "jieba-precise",
    "bm25-okapi-bigram": "cjk-bigram",
}


def _make(name: str, options: dict[str, Any]) -> BM25Retriever:
    return BM25Retriever(name=name, **{"tokenizer": TOKENIZERS[name], **RETRIEVERS.check(name, options)})


def search_retriever(**options: Any) -> BM25Retriever:
    """``bm25-okapi-search``: jieba search mode for documents and queries."""
    return _make("bm25-okapi-search", options)


def precise_retriever(**options: Any) -> BM25Retriever:
    """``bm25-okapi-precise``: jieba precise mode for documents and queries."""
    return _make("bm25-okapi-precise", options)


def bigram_retriever(**options: Any) -> BM25Retriever:
    """``bm25-okapi-bigram``: CJK character bigrams (Lucene CJKAnalyzer style)."""
    return _make("bm25-okapi-bigram", options)
