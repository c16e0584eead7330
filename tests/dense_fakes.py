"""Deterministic fake encoders for the dense tests (no model, no randomness, no network)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np


class BagOfWordsEncoder:
    """Hashes each whitespace token into one of ``dim`` buckets; rows are L2-normalised counts.

    Texts sharing words get a high inner product, so rankings are predictable
    by hand. Queries and passages are encoded alike, except that ``kind_salt``
    adds a kind-specific bucket so tests can see that ``kind`` reached the
    encoder. Every call is recorded in ``calls`` as ``(kind, texts)``.
    """

    builtin_prefixes = False

    def __init__(self, dim: int = 256, *, model_id: str = "fake/bow-256", kind_salt: bool = False,
                 batch_size: int = 4) -> None:
        self.dim = dim
        self.model_id = model_id
        self.kind_salt = kind_salt
        self.batch_size = batch_size
        self.calls: list[tuple[str, list[str]]] = []

    @property
    def n_encoded(self) -> int:
        return sum(len(t) for _, t in self.calls)

    def config(self) -> dict[str, Any]:
        return {"adapter": "fake", "model_id": self.model_id, "dim": self.dim}

    def encode(self, texts: Sequence[str], *, kind: str) -> np.ndarray:
        texts = list(texts)
        self.calls.append((kind, texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for tok in t.split() or ["<empty>"]:
                out[i, _bucket(tok, self.dim)] += 1.0
            if self.kind_salt:
                out[i, _bucket("<" + kind + ">", self.dim)] += 0.5
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def _bucket(token: str, dim: int) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest(), "little") % dim


class BagOfWordsSparseEncoder:
    """A sparse encoder: each whitespace token's weight is its count, in the feature ``vocab[token]``.

    Features come from a fixed ``vocab`` (unknown words are dropped), so dot
    products are counts of shared words, computable by hand. ``max_terms``
    caps the non-zeros per text (the first distinct words win). Every call is
    recorded in ``calls``.
    """

    def __init__(self, vocab: Sequence[str], *, max_terms: int = 8, model_id: str = "fake/sparse-bow") -> None:
        self.vocab = {w: i for i, w in enumerate(vocab)}
        self.dim = len(vocab)
        self.max_terms = max_terms
        self.model_id = model_id
        self.calls: list[list[str]] = []

    @property
    def n_encoded(self) -> int:
        return sum(len(t) for t in self.calls)

    def config(self) -> dict[str, Any]:
        return {"adapter": "fake-sparse", "model_id": self.model_id, "dim": self.dim}

    def encode_sparse(self, texts: Sequence[str]) -> Any:
        from scipy.sparse import csr_matrix

        texts = list(texts)
        self.calls.append(texts)
        rows, cols, vals = [], [], []
        for i, t in enumerate(texts):
            counts: dict[int, float] = {}
            for tok in t.split():
                if tok in self.vocab and (self.vocab[tok] in counts or len(counts) < self.max_terms):
                    counts[self.vocab[tok]] = counts.get(self.vocab[tok], 0.0) + 1.0
            for c, v in counts.items():
                rows.append(i)
                cols.append(c)
                vals.append(v)
        return csr_matrix((np.asarray(vals, dtype=np.float32), (rows, cols)), shape=(len(texts), self.dim))
