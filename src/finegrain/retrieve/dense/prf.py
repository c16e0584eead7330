"""Vector pseudo-relevance feedback for dense retrieval: the query vector moved toward its first top passages.

Rocchio on embeddings (Li et al. 2022, "Pseudo Relevance Feedback with Deep Language Models and Dense
Retrievers: Successes and Pitfalls"; Pyserini's ``--prf-depth``, ``--prf-method``, ``--rocchio-alpha``,
``--rocchio-beta``): after a first search, each query vector becomes

    q' = alpha * q + beta * mean(top prf_depth passage vectors of the first search)

and is searched again. ``method="average"`` is Pyserini's Average PRF, the plain mean of the query and
its ``prf_depth`` passages: ``alpha = 1 / (depth + 1)``, ``beta = depth / (depth + 1)``. ``q'`` is
not re-normalised: rankings by inner product do not depend on its length. ``prf_depth=0`` is no
feedback: the first search is the result. Label-free: only the first search's ranks are read.

The first search ignores the retriever's ``threshold``; a query with fewer results than ``prf_depth``
(a corpus that small) takes the ones it has, and with none keeps its vector.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from finegrain.errors import FinegrainError
from finegrain.types import Run

METHODS: tuple[str, ...] = ("rocchio", "average")
BETA_GRID: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)


def beta_grid(options: Mapping[str, Any]) -> tuple[float, ...]:
    """``rocchio_beta`` values ``--cv`` tries; none for average PRF, which has no beta."""
    return BETA_GRID if options.get("prf_method", "rocchio") == "rocchio" else ()


@dataclass(frozen=True)
class Feedback:
    """One PRF setting: how many first-pass passages, and how query and passages are weighed."""

    depth: int = 0
    method: str = "rocchio"
    alpha: float = 0.4
    beta: float = 0.6

    def __post_init__(self) -> None:
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 0:
            raise FinegrainError(f"prf_depth={self.depth!r} is not a whole number >= 0",
                                 "pass prf_depth=0 (no feedback) or e.g. 3")
        if self.method not in METHODS:
            raise FinegrainError(f"prf_method={self.method!r} is not one of {', '.join(METHODS)}",
                                 "pass prf_method=rocchio or average")
        for name, w in (("rocchio_alpha", self.alpha), ("rocchio_beta", self.beta)):
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 <= w < float("inf"):
                raise FinegrainError(f"{name}={w!r} is not a finite number >= 0", f"pass {name}=0.5, say")
        if self.method == "rocchio" and self.depth and self.alpha == 0 and self.beta == 0:
            raise FinegrainError("rocchio_alpha=0 and rocchio_beta=0 make every query vector zero (every score ties)",
                                 "give the query or the passages a weight > 0")

    def weights(self, n: int) -> tuple[float, float]:
        """(query weight, passages' mean weight) for a query with ``n`` feedback passages."""
        if self.method == "average":
            return 1.0 / (n + 1), n / (n + 1)
        return float(self.alpha), float(self.beta)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"prf_depth": self.depth, "prf_method": self.method}
        if self.method == "rocchio":
            out.update(rocchio_alpha=self.alpha, rocchio_beta=self.beta)
        return out


def feedback_rows(first: Run, qids: Sequence[str], doc_ids: Sequence[str], depth: int) -> list[np.ndarray]:
    """Per query (in ``qids`` order), the rows (positions in ``doc_ids``) of its first ``depth`` results in
    ``first``."""
    row_of = {d: i for i, d in enumerate(doc_ids)}
    return [np.fromiter((row_of[d] for d in first.ranked(q)[:depth]), dtype=np.int64) if q in first
            else np.empty(0, dtype=np.int64) for q in qids]


def moved_queries(query_vecs: np.ndarray, doc_vecs: np.ndarray, rows: Sequence[np.ndarray],
                  feedback: Feedback) -> np.ndarray:
    """Each query vector moved toward the mean of its feedback rows (unchanged with none)."""
    q = np.asarray(query_vecs, dtype=np.float32)
    if feedback.depth == 0:
        return q
    out = q.copy()
    for i, r in enumerate(rows):
        r = r[: feedback.depth]
        if len(r):
            alpha, beta = feedback.weights(len(r))
            out[i] = alpha * q[i] + beta * doc_vecs[r].mean(axis=0)
    return out
