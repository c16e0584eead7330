"""Compiled BM25 query loops (numba), used when numba is installed; the scipy path is the fallback.

One query at a time, token by token in query order, each posting's score is
added into a dense accumulator of the documents (``0.0 + s1 + s2 ...``: the
additions of the sparse product ``Q @ S`` and of rank_bm25, in the same order,
so the scores are the same bits). The documents touched are remembered, so a
query costs its postings, not the corpus size: the candidates are the touched
documents with a non-zero score (the product's entries), cut by the threshold,
then at k with a k-sized heap ordered by (score, tie key) -- the same entries
:func:`finegrain.ranking.top_k_positions` keeps.

numba is optional: :func:`load_kernels` returns ``None`` when it is missing
(``FINEGRAIN_BM25_NUMBA=0`` also turns it off), and nothing is imported or
compiled before the first search. Compiled code is cached on disk by numba
(``cache=True``), so the JIT cost (about a second) is paid once per machine.
"""

from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from typing import Any


class Kernels:
    """The compiled functions (see the module docstring)."""

    def __init__(self, module: Any) -> None:
        self.search_batch = module.search_batch
        self.dense_scores = module.dense_scores


@lru_cache(maxsize=1)
def _compiled() -> Kernels | None:
    if importlib.util.find_spec("numba") is None:
        return None
    from finegrain.retrieve.bm25 import _numba

    return Kernels(_numba)


def load_kernels() -> Kernels | None:
    """The numba kernels, or None when numba is missing or ``FINEGRAIN_BM25_NUMBA=0``."""
    if os.environ.get("FINEGRAIN_BM25_NUMBA", "1").strip() in ("0", "false", "no"):
        return None
    return _compiled()
