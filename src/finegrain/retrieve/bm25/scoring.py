"""BM25 scoring variants: a table ``name -> Scoring(idf, tfc, idf_floor)`` and the validated parameters.

For a query q (a token list; a repeated token counts every time) and a
document d of length |d| in a corpus of N documents with average length avgdl,

    score(q, d) = sum_{t in q} idf(t) * tfc(tf(t, d), |d|)

Variants (Kamphuis, de Vries, Boytsov & Lin, 2020, "Which BM25 Do You Mean? A
Large-Scale Reproducibility Study of Scoring Variants", ECIR; formulas as in
bm25s, Lù 2024, and rank_bm25):

* ``okapi`` -- rank_bm25's ``BM25Okapi`` (Trotman, Puurula & Burgess 2014):
  idf(t) = ln(N - n_t + 0.5) - ln(n_t + 0.5); every negative idf (a token in
  more than half the documents) is replaced by epsilon * mean idf, the mean
  taken over the idfs of the whole vocabulary before the replacement;
  tfc = tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl)).
* ``lucene`` -- idf = ln(1 + (N - n_t + 0.5) / (n_t + 0.5)),
  tfc = tf / (tf + k1 * (1 - b + b * |d| / avgdl)).
* ``robertson`` -- idf = ln(max(1, (N - n_t + 0.5) / (n_t + 0.5))), lucene's tfc.
* ``atire`` -- idf = ln(N / n_t), okapi's tfc.

``lucene``, ``robertson`` and ``atire`` give bm25s' scores (bm25s stores them
in float32 by default; here everything is float64). BM25L and BM25+ are not
offered: they give every document a non-zero score, which a threshold cannot
use. A new variant is one more row of :data:`SCORING`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.retrieve.registry import RETRIEVERS

Variant = Literal["okapi", "lucene", "robertson", "atire"]


@dataclass(frozen=True)
class BM25Params:
    """The scoring parameters; ``epsilon`` (the idf floor factor) is used by ``okapi`` only."""

    variant: Variant = "okapi"
    k1: float = 1.5
    b: float = 0.75
    epsilon: float = 0.25

    def __post_init__(self) -> None:
        if self.variant not in SCORING:
            raise FinegrainError(
                f"unknown BM25 variant {self.variant!r}",
                f"use one of {', '.join(repr(v) for v in VARIANTS)}",
            )
        for name, value in (("k1", self.k1), ("epsilon", self.epsilon)):
            if not finite(value) or value < 0:
                raise FinegrainError(f"BM25 {name}={value!r} is not a finite number >= 0", f"set {name}, e.g. 1.5")
        if not finite(self.b) or not 0 <= self.b <= 1:
            raise FinegrainError(f"BM25 b={self.b!r} is outside [0, 1]", "set b between 0 and 1, e.g. 0.75")
        declared = RETRIEVERS.params("bm25") or {}
        for name, value in (("k1", self.k1), ("epsilon", self.epsilon)):
            declared[name].convert(name, value, "BM25")  # the declared ranges


# --------------------------------------------------------------------------- idf (one document frequency f of N)


def _idf_okapi(f: float, n: int) -> float:
    return math.log(n - f + 0.5) - math.log(f + 0.5)


def _idf_lucene(f: float, n: int) -> float:
    return math.log(1 + (n - f + 0.5) / (f + 0.5))


def _idf_robertson(f: float, n: int) -> float:
    return math.log(max(1.0, (n - f + 0.5) / (f + 0.5)))


def _idf_atire(f: float, n: int) -> float:
    return math.log(n / f)


def _floor_negative_idf(idf: np.ndarray, p: BM25Params) -> np.ndarray:
    """rank_bm25's floor: negative idfs become epsilon * (mean idf of the vocabulary, before flooring).

    The sum is exact (``math.fsum``, then rounded once), so the floor does not depend on the
    vocabulary's order: a shard index built with merged statistics gets the single index's floor.
    rank_bm25 adds in vocabulary order, which may differ from it in the last bits of the mean.
    """
    if len(idf):
        floor = p.epsilon * (math.fsum(idf.tolist()) / len(idf))
        idf[idf < 0] = floor
    return idf


# --------------------------------------------------------------------------- term-frequency component


def _tfc_okapi(tf: np.ndarray, dl: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    # rank_bm25's expression, operation for operation.
    return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def _tfc_lucene(tf: np.ndarray, dl: np.ndarray, avgdl: float, k1: float, b: float) -> np.ndarray:
    out: np.ndarray = tf / (k1 * ((1 - b) + b * dl / avgdl) + tf)
    return out


@dataclass(frozen=True)
class Scoring:
    """One variant: ``idf(df, N)`` for one document frequency, ``tfc(tf, |d|, avgdl, k1, b)`` on arrays,
    and an optional ``idf_floor(idf, params)`` applied to the vocabulary's idf array."""

    idf: Callable[[float, int], float]
    tfc: Callable[[np.ndarray, np.ndarray, float, float, float], np.ndarray]
    idf_floor: Callable[[np.ndarray, BM25Params], np.ndarray] | None = None


SCORING: Mapping[str, Scoring] = MappingProxyType({
    "okapi": Scoring(_idf_okapi, _tfc_okapi, _floor_negative_idf),
    "lucene": Scoring(_idf_lucene, _tfc_lucene),
    "robertson": Scoring(_idf_robertson, _tfc_lucene),
    "atire": Scoring(_idf_atire, _tfc_okapi),
})
VARIANTS: tuple[str, ...] = tuple(SCORING)


def idf(p: BM25Params, df: np.ndarray, n: int) -> np.ndarray:
    """idf of every term from its document frequency ``df`` in ``n`` documents.

    Evaluated with ``math.log`` once per distinct document frequency, as rank_bm25
    and bm25s do per term (numpy's log may differ from it in the last bit).
    """
    s = SCORING[p.variant]
    values, inverse = np.unique(df, return_inverse=True)
    fn = s.idf
    out = np.array([fn(f, n) for f in values.tolist()], dtype=np.float64)[inverse]
    return s.idf_floor(out, p) if s.idf_floor is not None else out


def tfc(p: BM25Params, tf: np.ndarray, dl: np.ndarray, avgdl: float) -> np.ndarray:
    """The term-frequency component of every (term, document) entry."""
    return SCORING[p.variant].tfc(tf, dl, avgdl, p.k1, p.b)


def finite(x: object) -> bool:
    """Whether ``x`` is a real number (not a bool) and finite."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(float(x))
