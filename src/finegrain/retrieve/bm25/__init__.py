"""BM25 over token lists: an eager sparse score matrix, top-k and threshold search, plain-array save/load.

* :mod:`~finegrain.retrieve.bm25.scoring` -- the formulas, a table of variants
  (``okapi`` = rank_bm25's BM25Okapi, ``lucene``, ``robertson``, ``atire``);
* :mod:`~finegrain.retrieve.bm25.index` -- the term-by-document score matrix;
* :mod:`~finegrain.retrieve.bm25.search` -- search, cuts, tie rules (numba loops in
  :mod:`~finegrain.retrieve.bm25.kernels` when installed, else scipy products);
* :mod:`~finegrain.retrieve.bm25.model` -- :class:`BM25`, the public scorer;
* :mod:`~finegrain.retrieve.bm25.files` -- the on-disk format (records the tokenizer; memory-mapped);
* :mod:`~finegrain.retrieve.bm25.stream` -- building an on-disk index in bounded memory;
* :mod:`~finegrain.retrieve.bm25.shard` -- corpus statistics per shard, merged, for shard indexes
  that score exactly as one index.
"""

from __future__ import annotations

from finegrain.retrieve.bm25.index import BM25Index, frozen_array, read_only_csr
from finegrain.retrieve.bm25.model import BM25, TIES, Ties
from finegrain.retrieve.bm25.scoring import SCORING, VARIANTS, BM25Params, Scoring, Variant, finite
from finegrain.retrieve.bm25.shard import CorpusStats, corpus_stats, merge_stats

__all__ = [
    "BM25", "SCORING", "TIES", "VARIANTS", "BM25Index", "BM25Params", "CorpusStats", "Scoring", "Ties", "Variant",
    "corpus_stats", "finite", "frozen_array", "merge_stats", "read_only_csr",
]
