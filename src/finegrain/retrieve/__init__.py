"""Retrieval: tokenizers, BM25, and the named retrievers the evaluator runs.

Import what you need from the submodules; this package imports nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finegrain._lazy import lazy_exports

__all__ = ["BM25", "Retriever", "get_retriever", "get_tokenizer"]

if TYPE_CHECKING:
    from finegrain.retrieve.base import Retriever
    from finegrain.retrieve.bm25 import BM25
    from finegrain.retrieve.registry import get_retriever
    from finegrain.text.tokenizer import get_tokenizer

__getattr__, __dir__ = lazy_exports(
    __name__, {".bm25": "BM25", ".base": "Retriever", ".registry": "get_retriever", "finegrain.text.tokenizer": "get_tokenizer"}
)
