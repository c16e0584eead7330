"""Retrieval: tokenizers, BM25, and the named retrievers the evaluator runs.

Import what you need from the submodules; this package imports nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["BM25", "Retriever", "get_retriever", "get_tokenizer"]

if TYPE_CHECKING:
    from finegrain.retrieve.base import Retriever
    from finegrain.retrieve.bm25 import BM25
    from finegrain.retrieve.registry import get_retriever
    from finegrain.retrieve.tokenize import get_tokenizer

_LAZY = {
    "BM25": "finegrain.retrieve.bm25",
    "Retriever": "finegrain.retrieve.base",
    "get_retriever": "finegrain.retrieve.registry",
    "get_tokenizer": "finegrain.retrieve.tokenize",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'finegrain.retrieve' has no attribute {name!r}")
