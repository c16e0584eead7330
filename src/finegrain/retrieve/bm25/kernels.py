"""Compiled BM25 query loops (numba), used when numba is installed; the scipy path is the fallback.

One query at a time, token by token in query order, each posting's score is
added into a dense float64 accumulator of the documents (``0.0 + s1 + s2 ...``:
the additions of the sparse product ``Q @ S`` and of rank_bm25, in the same
order, so the scores are the same bits). The same postings are then read again:
each document's final score once (zeroed as it is read, which also leaves the
accumulator clean for the next query), so a query costs twice its postings, not
the corpus size. Candidates are the documents with a non-zero score (the
product's entries), cut by the threshold, then at k by a k-sized heap ordered by
(score, tie key) -- the entries :func:`finegrain.ranking.top_k_positions` keeps;
a score below the k-th best so far fails one comparison. ``scores()`` writes a
whole vector (zeros, then the additions) in one compiled call.

numba is optional: :func:`load_kernels` returns ``None`` when it is missing
(``FINEGRAIN_BM25_NUMBA=0`` also turns it off), and nothing is imported or
compiled before the first search. Compiled code is cached on disk by numba
(``cache=True``, next to the module), so the JIT cost (a few seconds) is paid
once per installation; loading it takes well under a second.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from functools import lru_cache
from typing import Any

#: the compiled loops; the module imports numba at its top, so it is loaded only when numba is installed
_NUMBA_MODULE = "finegrain.retrieve.bm25._numba"


class Kernels:
    """The compiled functions (see the module docstring)."""

    def __init__(self, module: Any) -> None:
        self.search_batch = module.search_batch
        self.dense_scores = module.dense_scores


@lru_cache(maxsize=1)
def _compiled() -> Kernels | None:
    if importlib.util.find_spec("numba") is None:
        return None

    return Kernels(importlib.import_module(_NUMBA_MODULE))


def load_kernels() -> Kernels | None:
    """The numba kernels, or None when numba is missing or ``FINEGRAIN_BM25_NUMBA=0``."""
    if os.environ.get("FINEGRAIN_BM25_NUMBA", "1").strip() in ("0", "false", "no"):
        return None
    return _compiled()
