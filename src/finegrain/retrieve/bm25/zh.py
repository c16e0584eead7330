"""BM25 variants for Chinese: ``bm25-okapi`` with another tokenizer, all else equal.

Each is :class:`~finegrain.retrieve.bm25.retriever.BM25Retriever` with the CapRetrieval
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

Why search mode on the query side can help: its sub-words (中华人民共和国 also gives
中华, 人民, 共和国) match captions that jieba cut differently; bigrams match any
two-character overlap, at the price of spurious ones. Measured figures on
capretrieval/zh, each against ``bm25-okapi``: ``docs/results/retrieval.md`` (and the
rows "BM25, jieba ..." of ``docs/results/levers.md``).
"""

from __future__ import annotations

from typing import Any

from finegrain.retrieve.bm25.retriever import BM25Retriever
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
